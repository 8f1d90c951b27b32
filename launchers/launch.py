"""Turn ``swemine launch midtrain`` options into the exact job: a local process, a ``torchrun`` command for one
node, or an ``sbatch`` script that runs ``srun torchrun`` on every node with a c10d rendezvous.

Each target runs the same worker, ``python -m swemine.launchers.train`` (see :mod:`swemine.launchers.train`), with the
training options forwarded verbatim; a requeued or restarted job resumes from its last complete checkpoint.
"""
from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys

from swemine.launchers.train import add_train_arguments

LAUNCHERS = ("local", "torchrun", "slurm")
WORKER = ["-m", "swemine.launchers.train"]
RDZV_PORT = 29500
ALWAYS_RENDERED = ("format", "loss_on")   # shown even at their defaults: a printed command says what it trains on


def add_launch_arguments(parser: argparse.ArgumentParser) -> None:
    """Training options (forwarded to the worker) plus where and how to start it."""
    add_train_arguments(parser)
    g = parser.add_argument_group("launch")
    g.add_argument("--launcher", choices=LAUNCHERS, default="torchrun",
                   help="local: one process (CPU ok); torchrun: one node, N GPUs; slurm: sbatch, N nodes")
    g.add_argument("--nodes", type=int, default=1)
    g.add_argument("--gpus-per-node", type=int, default=8)
    g.add_argument("--dry-run", action="store_true", help="print the command or sbatch script, start nothing")
    g.add_argument("--job-name", default="swemine-midtrain")
    g.add_argument("--partition", default=None)
    g.add_argument("--account", default=None)
    g.add_argument("--time", default=None, help="Slurm time limit, e.g. 48:00:00")
    g.add_argument("--cpus-per-task", type=int, default=None, help="Slurm CPUs per node task (default: 8 per GPU)")
    g.add_argument("--script", default=None, help="where to write the sbatch script (default: <output>/midtrain.sbatch)")


def sft_data(values: list[str]) -> list[str]:
    """``--data`` of ``launch sft``: a run folder means its ``sft/`` shards; every source is the part ``sft``
    unless it names its part (``NAME=SOURCE``)."""
    out = []
    for v in values:
        name, sep, source = v.partition("=")
        if not sep or os.path.exists(v):
            name, source = "sft", v
        if os.path.isdir(os.path.join(source, "sft")):
            source = os.path.join(source, "sft")
        out.append(f"{name}={source}")
    return out


def worker_arguments(args: argparse.Namespace) -> list[str]:
    """The training options of ``args`` as worker argv: required ones always, the others when not default."""
    reference = argparse.ArgumentParser(add_help=False)
    add_train_arguments(reference)
    argv = []
    for action in reference._actions:
        value = getattr(args, action.dest, None)
        flag = action.option_strings[0]
        if action.required or action.dest in ALWAYS_RENDERED:
            values = value if isinstance(value, list) else [value]
            argv += [x for v in values for x in (flag, str(v))]
        elif value == action.default or value is None:
            continue
        elif isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction)):
            argv.append(flag)
        else:
            argv += [flag, str(value)]
    return argv


def local_command(worker: list[str], python: str = sys.executable) -> list[str]:
    """One process on this machine (CPU or one GPU)."""
    return [python, *WORKER, *worker]


def torchrun_command(worker: list[str], gpus_per_node: int) -> list[str]:
    """One node, one process per GPU, standalone rendezvous."""
    return ["torchrun", "--standalone", "--nnodes=1", f"--nproc-per-node={gpus_per_node}", *WORKER, *worker]


def slurm_script(worker: list[str], args: argparse.Namespace) -> str:
    """An ``sbatch`` script: one task per node, each running ``torchrun`` with a c10d rendezvous on node 0.

    ``--requeue`` lets the scheduler restart a preempted job; the worker then resumes from the last complete
    checkpoint under ``--output`` (which must be on a filesystem all nodes share).
    """
    if any(c.isspace() for c in args.output):
        raise ValueError(f"--output {args.output!r}: #SBATCH lines cannot hold a path with whitespace")
    output, worker = os.path.abspath(args.output), absolute_paths(worker)
    cpus = args.cpus_per_task or 8 * args.gpus_per_node
    lines = ["#!/bin/bash", f"#SBATCH --job-name={args.job_name}", f"#SBATCH --nodes={args.nodes}",
             "#SBATCH --ntasks-per-node=1", f"#SBATCH --gpus-per-node={args.gpus_per_node}",
             f"#SBATCH --cpus-per-task={cpus}", "#SBATCH --exclusive", "#SBATCH --requeue",
             f"#SBATCH --output={os.path.join(output, 'slurm-%j.out')}"]
    for flag, value in (("partition", args.partition), ("account", args.account), ("time", args.time)):
        if value:
            lines.append(f"#SBATCH --{flag}={value}")
    torchrun = ["torchrun", '--nnodes="$SLURM_NNODES"', f"--nproc-per-node={args.gpus_per_node}",
                '--rdzv-id="$SLURM_JOB_ID"', "--rdzv-backend=c10d", '--rdzv-endpoint="$MASTER_ADDR:$MASTER_PORT"',
                " ".join(WORKER), *_option_lines(worker)]
    lines += ["", "set -euo pipefail",
              "# the environment this script was written from: its folder and its Python",
              f"cd {shlex.quote(os.getcwd())}", activation_line(),
              "# rendezvous on the first node of the allocation",
              'export MASTER_ADDR="$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)"',
              f"export MASTER_PORT={RDZV_PORT}",
              "export TOKENIZERS_PARALLELISM=false",
              "srun --kill-on-bad-exit=1 " + " \\\n    ".join(torchrun), ""]
    return "\n".join(lines)


def activation_line(prefix: str = sys.prefix, base_prefix: str = sys.base_prefix) -> str:
    """The shell line that puts this Python first on the nodes: the virtual environment's ``activate`` when
    there is one, else the interpreter's folder on ``PATH``."""
    if prefix != base_prefix:
        return f"source {shlex.quote(os.path.join(prefix, 'bin', 'activate'))}"
    return f"export PATH={shlex.quote(os.path.dirname(sys.executable))}:\"$PATH\""


def absolute_paths(worker: list[str]) -> list[str]:
    """Worker arguments with ``--output`` and every ``--data`` that names a local path made absolute (the job
    starts in another shell, maybe on another node); Hub ids and URLs stay as given."""
    out = list(worker)
    for i in range(1, len(out)):
        flag, value = out[i - 1], out[i]
        if flag == "--output":
            out[i] = os.path.abspath(value)
        elif flag == "--data":
            name, sep, path = value.rpartition("=") if "=" in value else ("", "", value)
            if os.path.exists(path):
                out[i] = f"{name}{sep}{os.path.abspath(path)}"
    return out


def _option_lines(argv: list[str]) -> list[str]:
    """Shell-quoted ``--flag value`` pairs, one per line of the script."""
    lines = []
    for a in argv:
        if lines and not a.startswith("--") and " " not in lines[-1]:
            lines[-1] += " " + shlex.quote(a)
        else:
            lines.append(shlex.quote(a))
    return lines


def plan(args: argparse.Namespace) -> tuple[str, list[str] | str]:
    """``(launcher, command argv or sbatch script text)`` for the parsed options."""
    worker = worker_arguments(args)
    if args.launcher == "local":
        return "local", local_command(worker)
    if args.nodes < 1 or args.gpus_per_node < 1:
        raise ValueError("--nodes and --gpus-per-node must be >= 1")
    if args.launcher == "torchrun":
        if args.nodes != 1:
            raise ValueError("--launcher torchrun is single-node; use --launcher slurm for --nodes > 1")
        return "torchrun", torchrun_command(worker, args.gpus_per_node)
    return "slurm", slurm_script(worker, args)


def launch(args: argparse.Namespace, out=None) -> int:
    """Print (``--dry-run``) or start the job; return the exit status of the started command.

    Local shards whose rows declare another format or model family than ``--format`` / ``--model-family`` are
    refused first (:class:`swemine.launchers.data.DataMismatch`), dry run or not."""
    from swemine.launchers.data import check_shards, loss_weight
    from swemine.launchers.train import parse_data

    out = out or sys.stdout
    loss_weight(args.loss_on, args.context_weight)
    check_shards(parse_data(args.data), args.format, args.fim_family)
    kind, job = plan(args)
    if kind == "slurm":
        if args.dry_run:
            out.write(job)
            return 0
        path = args.script or os.path.join(args.output, "midtrain.sbatch")
        os.makedirs(args.output, exist_ok=True)          # Slurm opens the job log there before the job starts
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(path, "w") as f:
            f.write(job)
        print(f"wrote {path}", file=out)
        return subprocess.call(["sbatch", path])
    print(shlex.join(job), file=out)
    if args.dry_run:
        return 0
    out.flush()
    return subprocess.call(job)
