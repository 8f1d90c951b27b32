"""The ``swemine`` command line: ``run``, ``formats``, ``inspect`` (and the commands later modules add)."""
from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Callable

from swemine.pipelines.registry import PIPELINES

DEFAULT_OUTPUT_ROOT = "swemine-output"

#: Extra top-level commands: name -> (module, help). A module provides ``add_arguments`` and ``main(args)``.
COMMANDS: dict[str, tuple[str, str]] = {
    "formats": ("swemine.pipelines.formats_cmd", "list the trajectory readers and what they detect"),
    "inspect": ("swemine.pipelines.inspect_cmd", "schema, counts, a sample row and rejects by reason of a run"),
    "eval-loc": ("swemine.pipelines.evalloc_cmd", "score localization predictions against gold (LocAgent metrics)"),
    "fetch-issues": ("swemine.pipelines.fetch_issues_cmd", "dump a GitHub repo's issues as JSONL for `run tasks --issues`"),
    "publish": ("swemine.pipelines.publish_cmd", "upload a finished run to the Hugging Face Hub with a dataset card"),
    "report": ("swemine.pipelines.report_cmd", "write a static HTML quality report with plots of a finished run"),
    "launch": ("swemine.pipelines.launch_cmd", "print or start a mid-training job: local, torchrun or Slurm"),
}


def _add_run_parser(sub) -> None:
    run = sub.add_parser("run", help="run a pipeline (no pipeline: the whole job on the embedded sample data)")
    run_sub = run.add_subparsers(dest="pipeline")
    for name, module in PIPELINES.items():
        mod = importlib.import_module(module)
        p = run_sub.add_parser(name, help=(mod.__doc__ or "").strip().splitlines()[0])
        add_common_run_arguments(p)
        mod.add_arguments(p)
    add_common_run_arguments(run, defaults_only=True)


def add_common_run_arguments(p: argparse.ArgumentParser, defaults_only: bool = False) -> None:
    """Options every ``swemine run <pipeline>`` takes; unknown ``--options`` go to Beam."""
    p.add_argument("--output", default=None, help="run directory (local path or fsspec URL)")
    p.add_argument("--force", action="store_true", help="recompute even if the output holds the same finished run")
    if defaults_only:
        return
    p.add_argument("--input", action="append", default=[], help="file, directory, glob or URL (repeatable)")
    p.add_argument("--tasks", action="append", default=[], help="task file or Hub dataset name (repeatable)")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                   help="local processes (default: the machine's cores); shards are the same for any N")


def summarize(manifest: dict, out=None) -> None:
    """Print the per-stage table and the outputs of a run."""
    out = out or sys.stdout
    if manifest.get("noop"):
        print(f"up to date: {manifest['run_id']} (use --force to recompute)", file=out)
    print(f"run {manifest['run_id']}  ({manifest['wall_seconds']}s)", file=out)
    print(f"{'stage':<28}{'in':>9}{'out':>9}{'rejected':>10}{'filtered':>10}", file=out)
    for name, s in manifest["stages"].items():
        print(f"{name:<28}{s['in']:>9}{s['out']:>9}{sum(s['rejected'].values()):>10}"
              f"{sum(s['filtered'].values()):>10}", file=out)
    for name, s in manifest["stages"].items():
        for reason, n in sorted(s["rejected"].items(), key=lambda kv: -kv[1])[:8]:
            print(f"  {name} rejected {reason}: {n}", file=out)
    for o in manifest["outputs"]:
        print(f"  {o['path']}: {o['rows']} rows, {o['bytes']} bytes", file=out)
    for problem in manifest.get("balance_problems", []):
        print(f"  COUNTS DO NOT BALANCE: {problem}", file=out)


def _run(args, beam_args: list[str]) -> int:
    from swemine.pipelines import runner

    if not args.pipeline:
        from swemine.pipelines.default_job import run_default
        return run_default(args.output or os.path.join(DEFAULT_OUTPUT_ROOT, "default"), beam_args, args.force)
    mod = importlib.import_module(PIPELINES[args.pipeline])
    spec = mod.spec_from_args(args)
    output = args.output or os.path.join(DEFAULT_OUTPUT_ROOT, args.pipeline)
    manifest = runner.execute(spec, output, beam_args, force=args.force, workers=args.workers)
    if manifest.get("dry_run"):
        print(f"dry run {manifest['run_id']}: job built, state {manifest['state']}; nothing was submitted")
        return 0
    summarize(manifest)
    print(f"output: {output}")
    return 0 if not manifest.get("balance_problems") else 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="swemine", description=__doc__)
    parser.add_argument("-v", "--verbose", action="store_true")
    sub = parser.add_subparsers(dest="command")
    _add_run_parser(sub)
    for name, (module, help_text) in COMMANDS.items():
        mod = importlib.import_module(module)
        p = sub.add_parser(name, help=help_text)
        mod.add_arguments(p)
        p.set_defaults(_main=mod.main)
    return parser


class _QuietBeam(logging.Filter):
    """Hide Beam's import-time notice about optional GCP libraries and its workers' start-up chatter."""
    NOISE = ("apitools not found", "No semi_persistent_directory found")

    def filter(self, record: logging.LogRecord) -> bool:
        return not any(n in record.getMessage() for n in self.NOISE)


def setup_logging(verbose: bool) -> None:
    """swemine progress at INFO; Beam at WARNING (INFO with ``-v``), without its known noise."""
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, force=True,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    for handler in logging.getLogger().handlers:
        handler.addFilter(_QuietBeam())
    logging.getLogger("swemine").setLevel(logging.INFO)


def main(argv: list[str] | None = None) -> int:
    setup_logging("-v" in (argv or sys.argv) or "--verbose" in (argv or sys.argv))
    parser = build_parser()
    args, beam_args = parser.parse_known_args(argv)
    if args.command == "run" or args.command is None:
        if args.command is None:
            args = parser.parse_args(["run"])
        return _run(args, beam_args)
    if beam_args:
        parser.error(f"unrecognized arguments: {' '.join(beam_args)}")
    main_fn: Callable = args._main
    return int(main_fn(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
