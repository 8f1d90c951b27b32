"""``swemine launch midtrain``: print or start a mid-training job (local, torchrun, or Slurm)."""
from __future__ import annotations

from swemine.launchers.launch import add_launch_arguments, launch


def add_arguments(parser) -> None:
    sub = parser.add_subparsers(dest="job", required=True)
    midtrain = sub.add_parser("midtrain", help="tokenize + pack the shards and mid-train a model on them")
    add_launch_arguments(midtrain)


def main(args) -> int:
    return launch(args)
