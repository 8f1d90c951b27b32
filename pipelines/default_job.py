"""The no-argument ``swemine run``: the whole job on the embedded sample corpus.

Each step is an ordinary pipeline run into its own folder under the output directory, so every step has
its own shards, rejects, filtered records and manifest, and a re-run skips the steps that are already
complete. The trajectory steps decontaminate against the embedded SAMPLE benchmark (which lists
``samples__calc-2`` as an evaluation instance), so the run shows what a removal looks like; the FIM step mines
the running interpreter's standard library under the license and exact-dedup filters; the job ends
with the HTML report.
"""
from __future__ import annotations

import argparse
import os
from collections.abc import Callable

from swemine.corpora.samples import sample_root
from swemine.manifests.report import write_report
from swemine.pipelines import runner
from swemine.pipelines.filtering import add_filter_arguments, filter_config_from_args
from swemine.pipelines.runner import PipelineSpec


def filter_config(flags: list[str]) -> dict:
    """The filter config the CLI would build from ``flags`` (e.g. ``["--benchmark", path]``)."""
    parser = argparse.ArgumentParser()
    add_filter_arguments(parser)
    return filter_config_from_args(parser.parse_args(flags))


def default_steps(root: str) -> list[tuple[str, Callable[[], PipelineSpec]]]:
    """``(folder, spec factory)`` for every step of the default job, in order."""
    from swemine.pipelines import errors, fim, localization, trajectories

    trajs = [os.path.join(root, "trajectories")]
    tasks = [os.path.join(root, "tasks")]
    filters = filter_config(["--benchmark", f"sample-eval={os.path.join(root, 'benchmarks', 'sample_eval.jsonl')}",
                             "--decontam-levels", "instance,content", "--scrub-secrets", "scrub"])
    return [
        ("trajectories", lambda: trajectories.build_spec(trajs, tasks, filters=filters)),
        ("localization", lambda: localization.build_spec(trajs, tasks, filters=filters)),
        ("errors", lambda: errors.build_spec(trajs, tasks, filters=filters)),
        ("fim", lambda: fim.build_spec(["stdlib"], filters=filter_config(
            ["--license-allow", "permissive", "--dedup", "exact"]))),
    ]


def run_default(output: str, beam_args: list[str], force: bool) -> int:
    """Run every step of the default job into ``output/<step>``; print each step's summary."""
    from swemine.pipelines.cli import summarize

    status = 0
    for folder, make_spec in default_steps(sample_root()):
        manifest = runner.execute(make_spec(), os.path.join(output, folder), beam_args, force=force)
        print(f"\n## {folder}")
        summarize(manifest)
        status |= 1 if manifest.get("balance_problems") else 0
    path, report = write_report(output)
    print(f"\nreport: {path} ({', '.join(report.plot_names)})")
    print(f"output: {output}")
    return status
