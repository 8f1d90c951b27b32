"""Pipelines known to ``swemine run``: name -> module. A module provides ``add_arguments(parser)`` and
``spec_from_args(args) -> PipelineSpec`` (see :mod:`swemine.pipelines.runner`)."""

PIPELINES: dict[str, str] = {
    "trajectories": "swemine.pipelines.trajectories",
    "localization": "swemine.pipelines.localization",
    "tasks": "swemine.pipelines.tasks_mining",
    "errors": "swemine.pipelines.errors",
    "fim": "swemine.pipelines.fim",
}
