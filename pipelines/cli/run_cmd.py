"""``swemine run [job]``: build the job's config dataclass from ``--config`` and the flags, run it, print its
per-stage table. With no job: the default job (:mod:`swemine.pipelines.jobs.default_job`)."""
from __future__ import annotations

import argparse
import importlib
import os

from swemine.failures import CommandError, described, first_line
from swemine.manifests.summary import lost_everything, print_summary
from swemine.pipelines import options
from swemine.pipelines.configs import JOBS

DEFAULT_OUTPUT_ROOT = "swemine-output"


def add_job_arguments(parser: argparse.ArgumentParser, name: str) -> None:
    """``--config`` and one flag per field of the job's config dataclass."""
    parser.add_argument("--config", default=None, metavar="RUN.YAML",
                        help="settings from a YAML file (field names as keys); flags given here win")
    options.add_arguments(parser, JOBS[name].config)


def job_from_args(name: str, args: argparse.Namespace):
    """The job's config dataclass: defaults, then the ``--config`` file, then the flags given."""
    cls = JOBS[name].config
    base = options.from_dict(cls, options.load_yaml(args.config)) if getattr(args, "config", None) else cls()
    return options.from_namespace(cls, args, base)


def run_job(name: str, job, output: str, beam_args: list[str], force: bool, workers: int = 1) -> dict:
    """Run one job (its config dataclass ``job``) into ``output`` with ``workers`` local processes; return the
    manifest."""
    from swemine.pipelines.engine import runner

    spec = importlib.import_module(JOBS[name].module).build_spec(job)
    return runner.execute(spec, output, beam_args, force=force, workers=workers)


def check_inputs(name: str, job) -> None:
    """Refuse a job's inputs in one line: a ``--tasks`` Hub dataset that cannot be loaded, no ``--input`` where the
    job reads nothing else, inputs that cannot be listed, a pattern matching no file (unless ``--allow-empty``)."""
    from swemine.corpora.inputs import expand_inputs
    from swemine.corpora.tasks import hub_problem, is_local_or_url

    for spec in getattr(job, "tasks", ()):
        problem = "" if is_local_or_url(spec) else hub_problem(spec)
        if problem:
            raise CommandError(problem)
    inputs = list(getattr(job, "inputs", ()))
    if getattr(job, "requires_input", False) and not inputs:
        raise CommandError(f"`swemine run {name}` needs --input (a file, directory, glob or URL)")
    if not inputs:
        return
    try:
        units = expand_inputs(inputs, getattr(job, "follow_symlinks", False))
    except ImportError as exc:          # a filesystem without its fsspec package (s3:// without s3fs)
        raise CommandError(f"--input {' '.join(inputs)}: {exc}") from None
    except Exception as exc:            # a store that does not answer; anything else is a bug
        from swemine.manifests.publish import is_transient
        if not (isinstance(exc, OSError) or is_transient(exc)):
            raise
        raise CommandError(f"--input {' '.join(inputs)}: cannot be listed ({described(exc)})") from None
    if not units and not getattr(job, "allow_empty", True):
        raise CommandError(f"--input {' '.join(inputs)} matches no file (pass --allow-empty to run anyway)")


def main(args: argparse.Namespace, beam_args: list[str]) -> int:
    from swemine.manifests.lock import LockError
    from swemine.pipelines.engine.runner import beam_args_problem

    problem = beam_args_problem(beam_args)
    if problem:
        raise CommandError(problem)
    workers = getattr(args, "workers", None) or 1
    output_arg, force = getattr(args, "output", None), getattr(args, "force", False)
    if not args.pipeline:
        return _run_default(output_arg or os.path.join(DEFAULT_OUTPUT_ROOT, "default"), beam_args, force, workers)
    output = output_arg or os.path.join(DEFAULT_OUTPUT_ROOT, args.pipeline)
    try:
        job = job_from_args(args.pipeline, args)
        check_inputs(args.pipeline, job)
        manifest = run_job(args.pipeline, job, output, beam_args, force, workers)
    except (LockError, FileNotFoundError) as err:
        raise CommandError(first_line(err)) from None
    except Exception as err:            # the Dataflow service (auth, buckets, submission): one line, not a trace
        from swemine.pipelines.engine.dataflow import uses_dataflow
        if isinstance(err, CommandError) or not uses_dataflow(beam_args):
            raise
        raise CommandError(f"Dataflow could not take the job: {described(err)}", 1) from None
    if manifest.get("dry_run"):
        print(f"dry run {manifest['run_id']}: job built, state {manifest['state']}; nothing was submitted")
        return 0
    print_summary(manifest)
    print(f"output: {output}")
    failure = lost_everything(manifest)
    if failure:
        raise CommandError(failure, 1)
    return 0 if not manifest.get("balance_problems") else 1


def _run_default(output: str, beam_args: list[str], force: bool, workers: int = 1) -> int:
    from swemine.manifests.report import write_report
    from swemine.pipelines.jobs.default_job import default_jobs

    status = 0
    for name, job in default_jobs():
        manifest = run_job(name, job, os.path.join(output, name), beam_args, force, workers)
        print(f"\n## {name}")
        print_summary(manifest)
        status |= 1 if manifest.get("balance_problems") else 0
    path, report = write_report(output)
    print(f"\nreport: {path} ({', '.join(report.plot_names)})")
    print(f"output: {output}")
    return status
