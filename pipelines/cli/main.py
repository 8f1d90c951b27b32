"""The swemine command line: run a job, or inspect, report, publish and train on finished runs.

Every command is imported only when it runs: :mod:`swemine.pipelines.cli.registry` holds each command's module and
help line, so
``swemine --help`` and ``swemine run --help`` load no Beam. A ``run <job>`` command's flags are generated from
the job's config dataclass (:mod:`swemine.pipelines.configs`); a command module provides ``add_arguments(parser)``
and ``main(args)``.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import signal
import sys
import threading
from collections.abc import Callable, Iterator

from swemine.failures import CommandError, environment_failure
from swemine.pipelines.cli.registry import COMMANDS
from swemine.pipelines.configs import JOBS
from swemine.pipelines.options import bounded
from swemine.runtime import stop_child_processes


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


class _QuietBeam(logging.Filter):
    """Hide Beam's import-time notice about optional GCP libraries, its workers' start-up chatter and the trace
    a step logs when Ctrl-C, SIGTERM or the machine (:mod:`~swemine.failures`) stops the run."""
    NOISE = ("apitools not found", "No semi_persistent_directory found")

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if error is not None and (isinstance(error, KeyboardInterrupt) or environment_failure(error, "")):
            return False                 # a step logging what stops the run (Ctrl-C, a full disk): main says it
        return not any(n in record.getMessage() for n in self.NOISE)


#: Libraries that install a stderr handler of their own when imported (their records printed twice otherwise).
SELF_LOGGING = ("huggingface_hub", "datasets")


class _OneLineLibraries(logging.Filter):
    """Without ``-v``, a library's log record (Beam, gcsfs, huggingface_hub retrying a request) keeps its message
    line but not its trace: what stops a run is said once, by swemine, and a bug's trace still ends the output."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and not record.name.startswith("swemine"):
            record.exc_info, record.exc_text = None, None
        return True


def setup_logging(verbose: bool) -> None:
    """swemine progress at INFO; Beam at WARNING (INFO with ``-v``), without its known noise; other libraries'
    traces only with ``-v``."""
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, force=True,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    for handler in logging.getLogger().handlers:
        handler.addFilter(_QuietBeam())
        if not verbose:
            handler.addFilter(_OneLineLibraries())
    for library in SELF_LOGGING:        # they print through a stderr handler of their own: once is enough
        logging.getLogger(library).propagate = False
    logging.getLogger("swemine").setLevel(logging.INFO)


class Stopped(KeyboardInterrupt):
    """Ctrl-C or SIGTERM, raised in the main thread with the signal's name as its text (a Beam step that sees it
    re-raises the same type with the step's name appended, so it still reaches :func:`main`)."""


@contextlib.contextmanager
def _stop_on_signals() -> Iterator[None]:
    """While the block lasts, SIGINT and SIGTERM (a scheduler's stop, ``timeout``, ``kill``) raise :class:`Stopped`,
    so a run cleans up (Beam's worker processes stopped, parts removed, the output lock released) instead of
    vanishing or printing a trace."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    hook = threading.excepthook

    def stop(signum, _frame):
        threading.excepthook = lambda _args: None     # Beam's threads that lose their worker: the run is over
        logging.getLogger("apache_beam").setLevel(logging.CRITICAL + 1)   # and what they log about it is noise
        stop_child_processes()          # Beam's --workers: its threads waiting on them then end
        raise Stopped(signal.Signals(signum).name)
    before = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)
              if signal.getsignal(sig) is not signal.SIG_IGN}
    try:
        yield
    finally:
        threading.excepthook = hook
        for sig, handler in before.items():
            signal.signal(sig, handler)


def main(argv: list[str] | None = None) -> int:
    """Run the command in ``argv``; its exit status. A :class:`~swemine.failures.CommandError`, Ctrl-C or SIGTERM
    stop it with one line (Ctrl-C and SIGTERM: status 128 + the signal's number)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        with _stop_on_signals():
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
    main_fn: Callable = args._main
    return int(main_fn(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
