"""Pipelines known to ``swemine run``: name -> module. A module provides ``add_arguments(parser)`` and
``spec_from_args(args) -> PipelineSpec`` (see :mod:`pipelines.runner`)."""

PIPELINES: dict[str, str] = {
    "trajectories": "pipelines.trajectories",
    "localization": "pipelines.localization",
    "tasks": "pipelines.tasks_mining",
}
