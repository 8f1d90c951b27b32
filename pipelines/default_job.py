"""The no-argument ``swemine run``: the whole job on the embedded sample corpus."""
from __future__ import annotations

import os

from corpora.samples import sample_root
from pipelines import runner, trajectories


def run_default(output: str, beam_args: list[str], force: bool) -> int:
    """Normalize the embedded samples (and, as the miners land, mine them) into ``output``."""
    from pipelines.cli import summarize

    root = sample_root()
    spec = trajectories.build_spec([os.path.join(root, "trajectories")], [os.path.join(root, "tasks")])
    manifest = runner.execute(spec, os.path.join(output, "trajectories"), beam_args, force=force)
    summarize(manifest)
    print(f"output: {output}")
    return 0 if not manifest.get("balance_problems") else 1
