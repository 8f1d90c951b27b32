"""``swemine launch midtrain`` / ``swemine launch sft``: print or start a training job (local, torchrun, Slurm);
``launch sft`` trains on the ``sft/`` rows of a ``swemine run sft`` output (docs/sft.md)."""
from __future__ import annotations

from swemine.failures import CommandError
from swemine.launchers.data import DataMismatch
from swemine.launchers.launch import add_launch_arguments, launch, sft_data


def add_arguments(parser) -> None:
    sub = parser.add_subparsers(dest="job", required=True)
    midtrain = sub.add_parser("midtrain", help="tokenize + pack the shards and mid-train a model on them")
    add_launch_arguments(midtrain)
    sft = sub.add_parser("sft", help="fine-tune a model on the sft/ rows of a swemine run sft output")
    add_launch_arguments(sft)
    sft.set_defaults(job_name="swemine-sft")


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
