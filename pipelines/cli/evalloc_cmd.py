"""``swemine eval-loc``: score localization predictions against gold, one table per level."""
from __future__ import annotations

import json

from swemine.corpora.repos import repo_for
from swemine.failures import CommandError, first_line
from swemine.miners.localization.evaluate import evaluate, format_table, load_gold, load_predictions


def add_arguments(parser) -> None:
    parser.add_argument("--predictions", action="append", required=True,
                        help="predictions file(s): Agentless loc_outputs.jsonl or found_files/modules/entities rows")
    parser.add_argument("--gold", action="append", required=True,
                        help="gold: a localization run dir / shards, A²Agent gt_location.jsonl, or task files")
    parser.add_argument("--repos", default="", help="git repositories (owner__name) to compute entity gold from tasks")
    parser.add_argument("--json", action="store_true", help="print the results as JSON instead of tables")


def main(args) -> int:
    try:
        gold, info = load_gold(args.gold, (lambda name: repo_for(args.repos, name)) if args.repos else None)
        predictions = load_predictions(args.predictions)
    except (ValueError, OSError) as exc:      # the loaders' one-line complaints about a file
        raise CommandError(first_line(exc)) from None
    for what, found, flag, files in (("gold instance", gold, "--gold", args.gold),
                                     ("prediction", predictions, "--predictions", args.predictions)):
        if not found:
            raise CommandError(f"no {what} read from {flag} {' '.join(files)}")
    results = evaluate(predictions, gold)
    if args.json:
        print(json.dumps({**results, "gold": info}, indent=2, sort_keys=True))
        return 0
    print(f"gold: {len(gold)} instances, quality {info['quality']}, unusable {len(info['errors'])}")
    print(format_table(results))
    return 0
