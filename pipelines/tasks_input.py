"""Beam front for task files: ``read_tasks(p, ctx)`` → ``(tasks, rejects)`` from ``ctx.config["tasks"]``."""
from __future__ import annotations

import apache_beam as beam

from swemine.corpora.tasks import load_tasks
from swemine.pipelines.stage import apply_stage
from swemine.pipelines.workers import file_weight, share


def read_tasks(p: beam.Pipeline, ctx, key: str = "tasks", label: str = "Tasks"):
    """Read every task spec listed under ``ctx.config[key]`` as one stage named ``tasks``."""
    specs = share(ctx.config.get(key) or [], weight=file_weight)
    tasks, rejects, _ = apply_stage(p | f"{label}Specs" >> beam.Create(specs), "tasks",
                                    lambda: (lambda spec: load_tasks([spec])), fanout=True)
    stamp = ctx.config_hash
    return (tasks | f"{label}Stamp" >> beam.Map(lambda t: {**t, "config_hash": stamp}),
            rejects | f"{label}StampRejects" >> beam.Map(lambda r: {**r, "config_hash": stamp}))
