"""``swemine launch midtrain`` / ``swemine launch sft``: print or start a training job (local, torchrun, Slurm).

``launch sft --data <run>`` trains on the ``sft/`` rows of a ``swemine run sft`` output: the same worker as
mid-training with the rows as the chat part ``sft`` (the model's chat template with the rows' tools and tool
calls, loss on the turns the rows' ``loss_mask`` marks, packed without attention across documents)."""
from __future__ import annotations

import os

from swemine.failures import CommandError
from swemine.launchers.data import DataMismatch
from swemine.launchers.launch import add_launch_arguments, launch


def add_arguments(parser) -> None:
    sub = parser.add_subparsers(dest="job", required=True)
    midtrain = sub.add_parser("midtrain", help="tokenize + pack the shards and mid-train a model on them")
    add_launch_arguments(midtrain)
    sft = sub.add_parser("sft", help="fine-tune a model on the sft/ rows of a swemine run sft output")
    add_launch_arguments(sft)
    sft.set_defaults(job_name="swemine-sft")


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


def main(args) -> int:
    prefix = f"swemine launch {args.job}: error: "
    if args.job == "sft":
        if args.format != "chat":
            raise CommandError("SFT rows are chat rows (--format chat)", prefix=prefix)
        args.data = sft_data(args.data)
    try:
        return launch(args)
    except (DataMismatch, ValueError) as exc:        # the data or the options do not fit: one line
        raise CommandError(str(exc), prefix=prefix) from None
