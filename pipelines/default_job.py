"""The no-argument ``swemine run``: the whole job on the embedded sample corpus.

Each step is an ordinary pipeline run into its own folder under the output directory, so every step has
its own shards, rejects and manifest, and a re-run skips the steps that are already complete.
"""
from __future__ import annotations

import os
from typing import Callable

from corpora.samples import sample_root
from pipelines import runner
from pipelines.runner import PipelineSpec


def default_steps(root: str) -> list[tuple[str, Callable[[], PipelineSpec]]]:
    """``(folder, spec factory)`` for every step of the default job, in order."""
    from pipelines import localization, trajectories

    trajs = [os.path.join(root, "trajectories")]
    tasks = [os.path.join(root, "tasks")]
    return [
        ("trajectories", lambda: trajectories.build_spec(trajs, tasks)),
        ("localization", lambda: localization.build_spec(trajs, tasks)),
    ]


def run_default(output: str, beam_args: list[str], force: bool) -> int:
    """Run every step of the default job into ``output/<step>``; print each step's summary."""
    from pipelines.cli import summarize

    status = 0
    for folder, make_spec in default_steps(sample_root()):
        manifest = runner.execute(make_spec(), os.path.join(output, folder), beam_args, force=force)
        print(f"\n## {folder}")
        summarize(manifest)
        status |= 1 if manifest.get("balance_problems") else 0
    print(f"\noutput: {output}")
    return status
