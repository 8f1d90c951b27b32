"""The swemine command line: run a job, or inspect, report, publish and train on finished runs.

A command is imported only when it runs (``--help`` loads no Beam): :data:`COMMANDS` names its module, which
provides ``add_arguments(parser)`` and ``main(args)``; a job's flags are its config dataclass's.
"""
from __future__ import annotations

import argparse
import importlib
import logging
import signal
import sys

from swemine.failures import CommandError, environment_failure
from swemine.pipelines.configs import JOBS
from swemine.pipelines.options import bounded
from swemine.runtime import Stopped, stop_on_signals

#: The commands besides ``run`` (whose jobs are :data:`~swemine.pipelines.configs.JOBS`): name -> (module, help).
COMMANDS: dict[str, tuple[str, str]] = {
    "formats": ("swemine.pipelines.cli.formats_cmd", "list the trajectory readers and what they detect"),
    "inspect": ("swemine.pipelines.cli.inspect_cmd", "schema, counts, a sample row and rejects by reason of a run"),
    "eval-loc": ("swemine.pipelines.cli.evalloc_cmd", "score localization predictions against gold (LocAgent metrics)"),
    "eval-errors": ("swemine.pipelines.cli.evalerrors_cmd", "score an errors run's decisive steps against human step labels"),
    "fetch-issues": ("swemine.pipelines.cli.fetch_issues_cmd", "dump a GitHub repo's issues as JSONL for run tasks --issues"),
    "publish": ("swemine.pipelines.cli.publish_cmd", "upload a finished run to the Hugging Face Hub with a dataset card"),
    "report": ("swemine.pipelines.cli.report_cmd", "write a static HTML quality report with plots of a finished run"),
    "launch": ("swemine.pipelines.cli.launch_cmd", "print or start a mid-training job: local, torchrun or Slurm"),
    "export": ("swemine.pipelines.cli.export_cmd", "write a trajectories run as interchange files (ATIF), validated"),
    "decontam-calibrate": ("swemine.pipelines.cli.calibrate_cmd",
                           "plant benchmark text into clean runs: recall per plant kind, false-drop rate"),
}


def _chosen(argv: list[str]) -> tuple[str | None, str | None]:
    """The command and (for ``run``) the job named in ``argv``, found without parsing it."""
    words = [a for a in argv if not a.startswith("-")]
    command = words[0] if words else None
    job = next((w for w in words[1:] if w in JOBS), None) if command == "run" else None
    return command, job


def _add_output_arguments(p: argparse.ArgumentParser) -> None:
    # defaults suppressed: given before or after the job name, a value is never reset by the other parser
    p.add_argument("--output", default=argparse.SUPPRESS, help="run directory, a local path or fsspec URL "
                                                               "(default: swemine-output/<job>)")
    p.add_argument("--force", action="store_true", default=argparse.SUPPRESS,
                   help="recompute even if the output holds the same finished run")
    p.add_argument("--workers", type=bounded(int, 1), default=argparse.SUPPRESS,   # before or after the job name
                   help="local Beam worker processes (default: 1, the run in this process; N > 1: Beam's "
                        "multi-processing mode); the shards are the same for any number")


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser, with the arguments of the command (and job) named in ``argv`` only."""
    command, job = _chosen(list(sys.argv[1:] if argv is None else argv))
    parser = argparse.ArgumentParser(prog="swemine", description=__doc__.split("\n\n")[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress and Beam's messages")
    sub = parser.add_subparsers(dest="command")
    run = sub.add_parser("run", help="run a job (no job: the whole job on the embedded sample data)",
                         description="Run a job; unknown --options go to Beam. With no job: the whole job on the "
                                     "embedded sample data.")
    _add_output_arguments(run)
    run_sub = run.add_subparsers(dest="pipeline")
    for name, entry in JOBS.items():
        p = run_sub.add_parser(name, help=entry.help, description=entry.help)
        if name == job:
            from swemine.pipelines.cli.run_cmd import add_job_arguments
            _add_output_arguments(p)
            add_job_arguments(p, name)
    for name, (module, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        if name == command:
            mod = importlib.import_module(module)
            mod.add_arguments(p)
            p.set_defaults(_main=mod.main)
    return parser


class _LogFilter(logging.Filter):
    """Hide Beam's notice about optional GCP libraries, its workers' start-up chatter and the trace a step logs when
    Ctrl-C, SIGTERM or the machine stops the run (main says it); without ``-v``, a library's record keeps its
    message line but not its trace, so a bug's trace still ends the output."""
    NOISE = ("apitools not found", "No semi_persistent_directory found")

    def __init__(self, verbose: bool):
        super().__init__()
        self.verbose = verbose

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if error is not None and (isinstance(error, KeyboardInterrupt) or environment_failure(error, "")):
            return False
        if record.exc_info and not self.verbose and not record.name.startswith("swemine"):
            record.exc_info, record.exc_text = None, None
        return not any(n in record.getMessage() for n in self.NOISE)


#: Libraries that install a stderr handler of their own when imported (their records printed twice otherwise).
SELF_LOGGING = ("huggingface_hub", "datasets")


def setup_logging(verbose: bool) -> None:
    """swemine progress at INFO; Beam at WARNING (INFO with ``-v``), without its known noise."""
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, force=True,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    for handler in logging.getLogger().handlers:
        handler.addFilter(_LogFilter(verbose))
    for library in SELF_LOGGING:
        logging.getLogger(library).propagate = False
    logging.getLogger("swemine").setLevel(logging.INFO)


def main(argv: list[str] | None = None) -> int:
    """Run the command in ``argv``; its exit status. A :class:`~swemine.failures.CommandError`, Ctrl-C or SIGTERM
    stop it with one line (Ctrl-C and SIGTERM: status 128 + the signal's number)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        with stop_on_signals():
            return _main(argv)
    except CommandError as err:
        print(f"{err.prefix}{err}", file=sys.stderr)
        return err.status
    except KeyboardInterrupt as stop:
        name = str(stop).split(" ", 1)[0] if isinstance(stop, Stopped) else "SIGINT"
        run = _chosen(argv)[0] in ("run", None)
        what = ": no new manifest was written (the output folder keeps its last complete run, if any)" if run else ""
        print(f"swemine: stopped by {name}{what}; run the same command again to redo it", file=sys.stderr)
        return 128 + signal.Signals[name]


def _main(argv: list[str]) -> int:
    setup_logging("-v" in argv or "--verbose" in argv)
    parser = build_parser(argv)
    args, beam_args = parser.parse_known_args(argv)
    if args.command in ("run", None):
        from swemine.pipelines.cli.run_cmd import main as run_main
        if args.command is None:
            args = parser.parse_args(["run"])
        return run_main(args, beam_args)
    if beam_args:
        parser.error(f"unrecognized arguments: {' '.join(beam_args)}")
    return int(args._main(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
