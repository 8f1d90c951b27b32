"""``swemine decontam-calibrate``: plant benchmark text into clean runs; print recall per plant kind and false drops
(the calibration itself: :mod:`swemine.filters.calibration`)."""
from __future__ import annotations

import json

from swemine.corpora.tasks import tasks_by_instance
from swemine.failures import CommandError, first_line
from swemine.filters.benchmark_sets import fill_patches, load_benchmarks
from swemine.filters.calibration import calibrate, clean_runs, format_report
from swemine.filters.decontam import LEVELS, DecontamConfig
from swemine.pipelines.configs import threshold_arg


def add_arguments(parser) -> None:
    parser.add_argument("--benchmark", action="append", required=True, metavar="[NAME=]PATH_OR_HUB_ID",
                        help="benchmark reference (repeatable), as for `swemine run --benchmark`")
    parser.add_argument("--join-tasks", action="append", default=[],
                        help="task file(s) whose patch / test_patch fill benchmark items that lack them (same id)")
    parser.add_argument("--clean", action="append", required=True, help="trajectory inputs: the clean runs")
    parser.add_argument("--clean-tasks", action="append", default=[],
                        help="task file(s): keep only clean runs of these instances (e.g. Lite)")
    parser.add_argument("--per-kind", type=int, default=100, help="plants per kind (0: every item that has the text)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--levels", default="instance,content", help="decontamination levels to calibrate")
    parser.add_argument("--threshold", action="append", default=[], metavar="NAME=VALUE", type=threshold_arg,
                        help="content-level threshold to try (repeatable), as `swemine run --decontam-threshold`")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")


def main(args) -> int:
    levels = tuple(x.strip() for x in args.levels.split(",") if x.strip())
    try:
        bench = load_benchmarks(args.benchmark)
        if args.join_tasks:
            bench = fill_patches(bench, tasks_by_instance(args.join_tasks)[0])
    except (OSError, ValueError) as err:     # a benchmark or task file that is not there or not readable
        raise CommandError(first_line(err)) from None
    clean = clean_runs(args.clean, bench, args.clean_tasks)
    if not clean:
        print("no clean runs: check --clean / --clean-tasks")
        return 2
    res = calibrate(bench, clean, DecontamConfig(levels=levels or LEVELS, **dict(args.threshold)), args.per_kind,
                    args.seed)
    print(json.dumps(res, indent=2, sort_keys=True) if args.json else format_report(res))
    return 0
