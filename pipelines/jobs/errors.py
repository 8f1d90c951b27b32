"""``swemine run errors``: trajectories → verified error–diagnosis records and training views (AET stages 1–5).

The shared front reads and joins the trajectories (with the task each instance uses, looked up in a side input);
the filters run on the trajectories, so nothing is mined from a removed one; the kept ones are paired with their
task's patch (the gold of stage 1, from the same side input) before ``detect`` → ``diagnose`` → ``verify`` →
``views``.
"""
from __future__ import annotations

import apache_beam as beam

from swemine.corpora.inputs import expand_inputs
from swemine.manifests.shards import read_rows
from swemine.miners.errors import mine as em
from swemine.miners.errors.diagnosis import ERROR_DIAGNOSIS_SCHEMA, STATUS_VERIFIED, RuleDiagnoser
from swemine.miners.errors.views import VIEW_SCHEMA, VIEWS, build_views
from swemine.pipelines.configs import ErrorsJob
from swemine.pipelines.engine.runner import Built, PipelineSpec
from swemine.pipelines.engine.stage import apply_stage
from swemine.pipelines.outputs import ERRORS, NOT_DIAGNOSED, view
from swemine.pipelines.steps.filtering import apply_filters
from swemine.pipelines.steps.fronts import TASK_CONTEXT, read_trajectory_records, with_gold


def make_diagnoser(job: ErrorsJob):
    """The configured diagnoser (built inside each worker's ``setup``)."""
    if job.diagnoser == "rules":
        return RuleDiagnoser()
    from swemine.miners.errors.llm_diagnoser import LLMDiagnoser
    return LLMDiagnoser(job.llm.make_client())


def build_spec(job: ErrorsJob) -> PipelineSpec:
    """The ``errors`` job (see the module docstring)."""
    config = job.resolve()

    def build(p):
        joined, rejects, _, task_side = read_trajectory_records(p, job, task_fields=(*TASK_CONTEXT, "patch"))
        trajs, traj_filtered = apply_filters(joined, "trajectory", config.filters, label="Traj")
        items, _, filtered = apply_stage(with_gold(trajs, task_side), "detect", lambda: em.detect_fn)
        diagnosed, diag_rejects, _ = apply_stage(items, "diagnose", lambda: em.diagnose_fn(make_diagnoser(job),
                                                                                         job.min_confidence))
        verified, verify_rejects, _ = apply_stage(diagnosed, "verify", lambda: em.verify_fn())
        views, _, _ = apply_stage(verified, "views", lambda: build_views, fanout=True)
        records = verified | "Records" >> beam.Map(lambda it: it["record"])
        ok, not_diag = records | "SplitStatus" >> beam.Partition(
            lambda r, n: 0 if r["status"] == STATUS_VERIFIED else 1, 2)
        by_view = views | "SplitViews" >> beam.Partition(lambda v, n: VIEWS.index(v["view"]), len(VIEWS))
        outputs = {ERRORS: ok, NOT_DIAGNOSED: not_diag, **{view(v): by_view[i] for i, v in enumerate(VIEWS)}}
        return Built(outputs=outputs, rejects=rejects + [diag_rejects, verify_rejects],
                     filtered=[traj_filtered, filtered])

    schemas = {ERRORS: ERROR_DIAGNOSIS_SCHEMA, NOT_DIAGNOSED: ERROR_DIAGNOSIS_SCHEMA,
               **{view(v): VIEW_SCHEMA for v in VIEWS}}
    return PipelineSpec(name="errors", config=config, outputs=schemas, build=build,
                        input_uris=[u.uri for u in expand_inputs(list(job.inputs)) if u.kind == "file"],
                        num_buckets=job.shards,
                        summarize=lambda output, stages: em.correction_counts(
                            read_rows(output, ERRORS), read_rows(output, NOT_DIAGNOSED)))
