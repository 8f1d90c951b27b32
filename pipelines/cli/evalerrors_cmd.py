"""``swemine eval-errors``: score a finished ``run errors`` output against human step labels."""
from __future__ import annotations

import json

from swemine.failures import CommandError
from swemine.manifests.manifest import ManifestError, finished_run
from swemine.manifests.shards import read_rows
from swemine.miners.errors.evaluate import format_scores, parse_labels, predictions_of, score
from swemine.pipelines.engine.runner import FILTERED_PREFIX
from swemine.pipelines.outputs import ERRORS as RECORDS
from swemine.pipelines.outputs import NOT_DIAGNOSED


def add_arguments(parser) -> None:
    parser.add_argument("--labels", required=True,
                        help="JSONL: instance_id, step (0-based) or action_index (1-based), optional category, phase")
    parser.add_argument("--run", required=True, help="output directory of `swemine run errors`")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")


def main(args) -> int:
    try:
        finished_run(args.run, "errors")
        with open(args.labels, encoding="utf-8") as fh:
            labels, bad = parse_labels(fh)
    except (ManifestError, OSError, UnicodeDecodeError) as exc:
        raise CommandError(str(exc)) from None
    if not labels:
        raise CommandError(f"{args.labels}: no usable label row ({bad['bad_row']} unusable; each needs "
                           "instance_id and step or action_index)")
    preds = predictions_of(read_rows(args.run, RECORDS) + read_rows(args.run, NOT_DIAGNOSED),
                           read_rows(args.run, FILTERED_PREFIX))
    results = {**score(labels, preds), **bad}
    if args.json:
        print(json.dumps(results, indent=2, sort_keys=True))
        return 0
    print(format_scores(results) + (f"\nunusable label rows: {bad['bad_row']}" if bad["bad_row"] else ""))
    return 0
