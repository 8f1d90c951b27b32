"""``swemine run localization``: gold regions, discovery/commit labels, rewards and retrieval pairs per trajectory.

``--input`` trajectories are read and joined with ``--tasks`` by the shared front; only their summaries
(:mod:`swemine.miners.localization.summary`) are grouped by instance with the tasks. Stage ``localization``
(counted per instance) makes each instance's context (or its rejects) once; the contexts reach the trajectories,
which stay where they are, as a side input keyed by instance (:class:`swemine.miners.localization.mine.Localizer`).
Without ``--input`` every task yields one gold-location record. ``--repos DIR`` holds one git repository per
GitHub repo (``owner__name``, bare or not): instances whose repo is there get ``repo`` gold (tree-sitter over the
base commit), repository files decided by the base commit and BM25 hard negatives up to ``--negatives`` per
instance; the others ``patch_only`` gold.
"""
from __future__ import annotations

import os
from functools import partial

import apache_beam as beam

from swemine.corpora.inputs import expand_inputs
from swemine.manifests.shards import read_rows
from swemine.miners.localization.mine import (
    LOCALIZATION_SCHEMA,
    STAGE,
    InstanceContext,
    Localizer,
    gold_quality_counts,
)
from swemine.miners.localization.summary import summarize
from swemine.pipelines.configs import LocalizationJob
from swemine.pipelines.engine.runner import Built, PipelineSpec
from swemine.pipelines.engine.stage import FILTERED, REJECTS, StageDoFn, apply_stage, pack, unpack
from swemine.pipelines.outputs import LOCALIZATION
from swemine.pipelines.steps.filtering import apply_filters
from swemine.pipelines.steps.fronts import group_by_instance, read_trajectory_records, with_task

CONTEXTS = "contexts"


def _instance(localizer: Localizer, kv):
    """``(instance, {"trajs": summaries, "tasks"})`` → rejects, the gold-only record, or ``(instance, context)``
    on ``contexts``."""
    for item in localizer.instance(kv[1]["tasks"], kv[1]["trajs"]):
        yield beam.pvalue.TaggedOutput(CONTEXTS, (kv[0], item)) if isinstance(item, InstanceContext) else item


def build_spec(job: LocalizationJob) -> PipelineSpec:
    """The ``localization`` job (see the module docstring)."""
    if not job.tasks:
        raise ValueError("localization needs --tasks (the gold patches come from the task rows)")
    config = job.resolve()

    def build(p):
        trajs, rejects, tasks, task_side = read_trajectory_records(p, job, unused_tasks=False)
        repos_dir, reward, k, with_inputs = config.repos, config.reward, config.negatives, bool(job.inputs)
        # a trajectory without a task is only rejected (its summary: its ids); trajectories wait packed (see pack)
        summed = with_task(trajs, task_side) | "Summarize" >> beam.Map(
            lambda tt: (summarize(tt[0], mined=tt[1] is not None), pack(tt[0])))
        grouped = group_by_instance(summed | "RunsByInstance" >> beam.Map(lambda st: (st[0].instance_id, st[0])),
                                    tasks | "TasksByInstance" >> beam.Map(lambda t: (t["instance_id"], t)), with_inputs)
        instances = grouped | "Instances" >> beam.Filter(
            lambda kv: kv[1]["trajs"] or (not with_inputs and kv[1]["tasks"]))
        res = instances | "LocalizeInstances" >> beam.ParDo(StageDoFn(
            STAGE, lambda: partial(_instance, Localizer(repos_dir, reward, k)), fanout=True)).with_outputs(
            REJECTS, FILTERED, CONTEXTS, main="main")
        items = summed | "WithContext" >> beam.FlatMap(lambda st, contexts: [
            (contexts[st[0].instance_id], st[0].created, unpack(st[1]))] if st[0].instance_id in contexts else [],
            beam.pvalue.AsDict(res[CONTEXTS]))
        # counted per instance above: a trajectory adds its record (or the reject of an exception) only
        records, traj_rejects, _ = apply_stage(items, STAGE, lambda: Localizer(repos_dir, reward, k).trajectory,
                                               in_weight=lambda _: 0)
        kept, filtered = apply_filters((res.main, records) | "Records" >> beam.Flatten(), "localization",
                                       config.filters, label="Loc")
        return Built(outputs={LOCALIZATION: kept}, rejects=[*rejects, res[REJECTS], traj_rejects],
                     filtered=[filtered])

    input_uris = [u.uri for u in expand_inputs(list(job.inputs) + [t for t in job.tasks if os.path.exists(t)])
                  if u.kind == "file"]
    return PipelineSpec(name="localization", config=config, outputs={LOCALIZATION: LOCALIZATION_SCHEMA}, build=build,
                        input_uris=input_uris, num_buckets=job.shards,
                        summarize=lambda output, stages: {"gold_quality": gold_quality_counts(
                            read_rows(output, LOCALIZATION), bool(config.repos))})
