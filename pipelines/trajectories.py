"""``swemine run trajectories``: read any supported dump, normalize, join run labels and tasks, write shards."""
from __future__ import annotations

import argparse

import apache_beam as beam

from swemine.corpora.inputs import expand_inputs
from swemine.corpora.normalize import apply_labels, apply_task, read_unit
from swemine.corpora.records import TRAJECTORY_SCHEMA
from swemine.pipelines.filtering import (
    add_filter_arguments,
    apply_filters,
    contamination_summarizer,
    filter_config_from_args,
)
from swemine.pipelines.runner import Built, PipelineSpec, RunContext
from swemine.pipelines.stage import Counters, apply_stage
from swemine.pipelines.workers import broadcast, file_weight, share

OUTPUT = "data/train"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--max-file-bytes", type=int, default=1 << 30,
                        help="files larger than this (after decompression) are rejected as too_large")
    add_filter_arguments(parser)


class _SplitKinds(beam.DoFn):
    """Reader output → ``(instance_id, trajectory)`` on the main output, ``(instance_id, label)`` on ``labels``."""

    def process(self, rec):
        if rec.get("kind") == "label":
            yield beam.pvalue.TaggedOutput("labels", (rec["instance_id"], rec))
        else:
            yield rec["instance_id"], rec


def task_context(task: dict) -> tuple[str, dict]:
    """The few task fields a trajectory join needs, keyed by instance (keeps the shuffle small)."""
    return task["instance_id"], {k: task.get(k) for k in ("record_id", "repo", "base_commit", "problem_statement")}


class _JoinLabels(beam.DoFn):
    """CoGroupByKey result → trajectories with labels (and tasks) applied; counts every trajectory."""

    def __init__(self, config_hash: str):
        self.config_hash = config_hash

    def setup(self):
        self.counters = Counters("join")

    def process(self, kv):
        _, grouped = kv
        labels = list(grouped["labels"])
        tasks = list(grouped.get("tasks", []))
        task = min(tasks, key=lambda t: t["record_id"]) if tasks else None   # several task files: pick stably
        for traj in grouped["trajs"]:
            self.counters.inc("in")
            out = apply_task(apply_labels(traj, labels), task)
            out["config_hash"] = self.config_hash
            if out["resolved"] is not None:
                self.counters.inc("info.labelled")
            self.counters.inc("out")
            yield out


def read_and_join(p: beam.Pipeline, ctx: RunContext, tasks_pcoll=None):
    """The shared front of every trajectory-consuming pipeline: returns ``(trajectories, rejects)``."""
    cfg = ctx.config
    units = share(expand_inputs(cfg["inputs"]), weight=lambda u: file_weight(u.uri))
    max_bytes = cfg.get("max_file_bytes", 1 << 30)
    recs, rejects, _ = apply_stage(
        p | "Units" >> beam.Create(units, reshuffle=True), "read",
        lambda: (lambda unit: read_unit(unit, max_bytes)), fanout=True, progress_every=100)
    split = recs | "SplitKinds" >> beam.ParDo(_SplitKinds()).with_outputs("labels", main="trajs")
    keyed = {"trajs": split.trajs, "labels": broadcast(split.labels, "AllLabels")}
    if tasks_pcoll is not None:
        keyed["tasks"] = broadcast(tasks_pcoll | "KeyTasks" >> beam.Map(task_context), "AllTasks")
    joined = keyed | "CoGroup" >> beam.CoGroupByKey() | "Join" >> beam.ParDo(_JoinLabels(ctx.config_hash))
    stamped_rejects = rejects | "StampRejects" >> beam.Map(lambda r: {**r, "config_hash": ctx.config_hash})
    return joined, stamped_rejects


def build_spec(inputs: list[str], tasks: list[str] | None = None, max_file_bytes: int = 1 << 30,
               num_buckets: int | None = None, filters: dict | None = None) -> PipelineSpec:
    """The ``trajectories`` pipeline over ``inputs`` (optionally joined with task files), then the filters
    configured in ``filters`` (see :func:`swemine.pipelines.filtering.filter_config_from_args`)."""
    config = {"inputs": list(inputs), "tasks": list(tasks or []), "max_file_bytes": max_file_bytes,
              "filters": dict(filters or {})}

    def build(p, ctx):
        tasks_pcoll = None
        if ctx.config["tasks"]:
            from swemine.pipelines.tasks_input import read_tasks
            tasks_pcoll, task_rejects = read_tasks(p, ctx)
        trajs, rejects = read_and_join(p, ctx, tasks_pcoll)
        kept, filtered = apply_filters(trajs, "trajectory", ctx.config["filters"], ctx)
        return Built(outputs={OUTPUT: kept}, rejects=[rejects] + ([task_rejects] if tasks_pcoll is not None else []),
                     filtered=[filtered])

    return PipelineSpec(name="trajectories", config=config, outputs={OUTPUT: TRAJECTORY_SCHEMA}, build=build,
                        input_uris=[u.uri for u in expand_inputs(inputs) if u.kind == "file"], num_buckets=num_buckets,
                        summarize=contamination_summarizer(config["filters"]), partitionable=True)


def spec_from_args(args: argparse.Namespace) -> PipelineSpec:
    return build_spec(args.input, args.tasks, args.max_file_bytes, filters=filter_config_from_args(args))



