"""Speed-up of ``--workers N`` over one worker, for ingest (the ``trajectories`` pipeline on the real corpus,
replicated to ``--mb``) and for FIM (the standard library), with identical shards checked on every run.

The floor is the one-worker run measured in the same process, alternating with the N-worker runs (1, N, 1, N,
...) so that load from other users of the machine hits both alike. Wall-clock is what parallelism buys, so
wall seconds are compared; each side runs ``--repeat`` times and the report gives the best and the median
speed-up plus the spread (min–max of the paired ratios). On a machine other work keeps busy, wall time says how
many cores were free more than what the mechanism does, so the CPU critical path is printed too: the one-worker
run's CPU seconds over (the launching process's CPU + the workers' CPU / N), the speed-up with N idle cores.

    python benchmarks/workers.py [--mb 80] [--repeat 3] [--workers 2] [--only ingest|fim] [--fim-source SPEC ...]
"""
from __future__ import annotations

import argparse
import os
import pathlib
import resource
import statistics
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from benchmarks.ingest import default_corpora, replicate  # noqa: E402
from swemine.pipelines import fim, runner, trajectories  # noqa: E402
from swemine.pipelines.configs import FimJob, TrajectoriesJob  # noqa: E402
from swemine.runtime import release_freed_memory, usable_cores  # noqa: E402

TARGET = 1.6


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def timed_runs(spec, out: str, n: int, repeat: int) -> tuple[dict[int, list[float]], dict[int, list[float]]]:
    """Wall seconds and CPU critical paths of ``repeat`` alternating runs with 1 and ``n`` workers; shards must
    match every time."""
    walls: dict[int, list[float]] = {1: [], n: []}
    paths: dict[int, list[float]] = {1: [], n: []}
    reference = None
    for _ in range(repeat):
        for workers in (1, n):
            release_freed_memory()
            t0, c0, k0 = time.perf_counter(), time.process_time(), _children_cpu()
            manifest = runner.execute(spec, out, force=True, workers=workers)
            walls[workers].append(time.perf_counter() - t0)
            paths[workers].append(time.process_time() - c0 + (_children_cpu() - k0) / workers)
            shas = [(o["path"], o["sha256"]) for o in manifest["outputs"]]
            if reference is None:
                reference = shas
            elif shas != reference:
                raise SystemExit(f"shards differ with {workers} workers: {shas} != {reference}")
    return walls, paths


def report(name: str, walls: dict[int, list[float]], paths: dict[int, list[float]], n: int) -> None:
    one, many = walls[1], walls[n]
    paired = [a / b for a, b in zip(one, many)]
    print(f"{name}: 1 worker {min(one):.2f}s best / {statistics.median(one):.2f}s median; "
          f"{n} workers {min(many):.2f}s best / {statistics.median(many):.2f}s median")
    print(f"{name}: speed-up best {min(one) / min(many):.2f}x, median {statistics.median(one) / statistics.median(many):.2f}x, "
          f"paired spread {min(paired):.2f}-{max(paired):.2f}x over {len(paired)} pairs (target >= {TARGET}x); "
          f"shards identical")
    print(f"{name}: CPU critical path 1 worker {min(paths[1]):.2f}s, {n} workers {min(paths[n]):.2f}s: "
          f"{min(paths[1]) / min(paths[n]):.2f}x with {n} idle cores")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=80.0, help="ingest corpus size (the real corpus, replicated)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--workers", type=int, default=max(2, usable_cores()))
    ap.add_argument("--only", choices=("ingest", "fim"), default=None)
    ap.add_argument("--fim-source", action="append", default=None,
                    help="repository to mine in the FIM run (repeatable; default: stdlib)")
    args = ap.parse_args(argv)
    print(f"machine: {usable_cores()} usable cores, load average {os.getloadavg()[0]:.1f} at start")
    with tempfile.TemporaryDirectory(prefix="swemine-bench-workers-") as tmp:
        if args.only in (None, "ingest"):
            data = pathlib.Path(tmp) / "in"
            mb = replicate(default_corpora(), data, args.mb) / 1e6
            walls, paths = timed_runs(trajectories.build_spec(TrajectoriesJob(inputs=(str(data),))), os.path.join(tmp, "ingest"),
                                      args.workers, args.repeat)
            report(f"ingest ({mb:.0f} MB)", walls, paths, args.workers)
        if args.only in (None, "fim"):
            sources = tuple(args.fim_source or ("stdlib",))
            walls, paths = timed_runs(fim.build_spec(FimJob(sources=sources)), os.path.join(tmp, "fim"), args.workers,
                                      args.repeat)
            report(f"fim ({', '.join(sources)})", walls, paths, args.workers)
    print(f"load average at end {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
