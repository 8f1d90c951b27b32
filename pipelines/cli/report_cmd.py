"""``swemine report <run-dir>``: a static offline HTML page with plots of a finished run (or folder of runs)."""
from __future__ import annotations

import argparse

from swemine.failures import CommandError
from swemine.manifests.report import write_report
from swemine.manifests.runs import RunError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir", help="a finished run directory, or a folder of run directories")
    parser.add_argument("--output", default=None, help="HTML file to write (default: <run-dir>/report.html)")


def main(args) -> int:
    try:
        path, report = write_report(args.run_dir, args.output)
    except RunError as err:
        raise CommandError(str(err), prefix="cannot report: ") from None
    except OSError as err:              # the page could not be written where --output says
        raise CommandError(f"cannot write {err.filename or args.output}: {err.strerror or err}",
                           prefix="cannot report: ") from None
    print(f"{path}: {len(report.plots)} plot(s): {', '.join(report.plot_names) or 'none'}")
    return 0
