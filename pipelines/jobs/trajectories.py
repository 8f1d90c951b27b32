"""``swemine run trajectories``: read any supported dump, normalize, join run labels and tasks, write shards."""
from __future__ import annotations

from swemine.corpora.inputs import expand_inputs
from swemine.corpora.records import TRAJECTORY_SCHEMA
from swemine.pipelines.configs import TrajectoriesJob
from swemine.pipelines.engine.runner import Built, PipelineSpec
from swemine.pipelines.outputs import TRAJECTORIES
from swemine.pipelines.steps.filtering import apply_filters
from swemine.pipelines.steps.fronts import read_trajectory_records


def build_spec(job: TrajectoriesJob) -> PipelineSpec:
    """The ``trajectories`` job: the shared front over ``job.inputs`` (joined with ``job.tasks``), then the
    configured filters."""
    config = job.resolve()

    def build(p):
        trajs, rejects, _, _ = read_trajectory_records(p, job)
        kept, filtered = apply_filters(trajs, "trajectory", config.filters)
        return Built(outputs={TRAJECTORIES: kept}, rejects=rejects, filtered=[filtered])

    return PipelineSpec(name="trajectories", config=config, outputs={TRAJECTORIES: TRAJECTORY_SCHEMA}, build=build,
                        input_uris=[u.uri for u in expand_inputs(list(job.inputs)) if u.kind == "file"],
                        num_buckets=job.shards)
