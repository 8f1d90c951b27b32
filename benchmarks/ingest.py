"""Normalize throughput on the real corpus against the bare-parse floor measured in the same run.

The trajectory folders of the shared corpora are copied into a temporary directory as many times as needed
to reach ``--mb`` megabytes (each copy under its own ``copy-NNN/`` folder), then

- floor: every file read and decoded with bare ``json.loads`` (one document per file, per line for JSONL),
- pipeline: the real ``trajectories`` Beam pipeline (read, detect, parse, join, Parquet shards, manifest)
  on the in-process FnApiRunner with one worker,

and prints MB/s and trajectories/s for both, and the ratio pipeline / floor (target >= 0.5).

    python benchmarks/ingest.py [--mb 200] [--corpora ../shared/corpora] [--profile out.prof]
"""
from __future__ import annotations

import argparse
import cProfile
import json
import os
import pathlib
import pstats
import shutil
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from corpora.inputs import expand_inputs, read_bytes  # noqa: E402
from pipelines import runner, trajectories  # noqa: E402

TRAJECTORY_FOLDERS = ("moatless", "swe-agent", "mini-swe-agent", "openhands", "autocoderover", "who-and-when")
TARGET = 0.5


def default_corpora() -> pathlib.Path:
    here = pathlib.Path(__file__).resolve().parent.parent
    for cand in (os.environ.get("SWEMINE_CORPORA"), here.parent / "shared" / "corpora", "/work/shared/corpora"):
        if cand and pathlib.Path(cand).is_dir():
            return pathlib.Path(cand)
    raise SystemExit("shared corpora not found; pass --corpora")


def folder_bytes(path: pathlib.Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def replicate(corpora: pathlib.Path, dest: pathlib.Path, mb: float) -> int:
    """Copy the trajectory folders into ``dest/copy-NNN/`` until they hold at least ``mb`` MB; returns bytes."""
    sources = [corpora / name for name in TRAJECTORY_FOLDERS if (corpora / name).is_dir()]
    one = sum(folder_bytes(s) for s in sources)
    copies = max(1, -(-int(mb * 1e6) // one))
    for k in range(copies):
        for src in sources:
            shutil.copytree(src, dest / f"copy-{k:03d}" / src.name)
    return one * copies


def floor(root: pathlib.Path) -> tuple[float, int]:
    """Seconds to read and ``json.loads`` every file (and JSONL line) under ``root``; count of documents."""
    t0 = time.perf_counter()
    docs = 0
    for unit in expand_inputs([str(root)]):
        paths = [unit.uri] if unit.kind == "file" else [str(p) for p in sorted(pathlib.Path(unit.uri).iterdir())]
        for uri in paths:
            data = read_bytes(uri)
            try:
                if uri.endswith((".jsonl", ".ndjson")):
                    for line in data.splitlines():
                        if line.strip():
                            json.loads(line)
                            docs += 1
                else:
                    json.loads(data)
                    docs += 1
            except ValueError:
                continue
    return time.perf_counter() - t0, docs


def pipeline(root: pathlib.Path, out: pathlib.Path) -> tuple[float, dict]:
    spec = trajectories.build_spec([str(root)])
    t0 = time.perf_counter()
    manifest = runner.execute(spec, str(out), ["--direct_num_workers=1"], force=True)
    return time.perf_counter() - t0, manifest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=200.0, help="replicate the corpus to at least this many MB")
    ap.add_argument("--corpora", type=pathlib.Path, default=None)
    ap.add_argument("--profile", default="", help="write a cProfile of the pipeline run to this file")
    args = ap.parse_args(argv)
    corpora = args.corpora or default_corpora()
    with tempfile.TemporaryDirectory(prefix="swemine-bench-") as tmp:
        data, out = pathlib.Path(tmp) / "in", pathlib.Path(tmp) / "out"
        total = replicate(corpora, data, args.mb)
        mb = total / 1e6
        floor_s, docs = floor(data)
        floor_s = min(floor_s, floor(data)[0])           # warm cache: best of two
        if args.profile:
            prof = cProfile.Profile()
            prof.enable()
        pipe_s, manifest = pipeline(data, out)
        if args.profile:
            prof.disable()
            prof.dump_stats(args.profile)
            pstats.Stats(args.profile).sort_stats("cumulative").print_stats(25)
    join = manifest["stages"].get("join", {})
    read = manifest["stages"].get("read", {})
    n_traj = join.get("out", 0)
    ratio = (mb / pipe_s) / (mb / floor_s)
    print(f"input: {mb:.1f} MB, {read.get('in', 0)} units, {docs} JSON documents; "
          f"{n_traj} trajectories, {sum(read.get('rejected', {}).values())} rejects")
    print(f"floor (bare json.loads, 1 core):      {mb / floor_s:8.1f} MB/s  {docs / floor_s:9.1f} docs/s")
    print(f"pipeline (FnApiRunner, 1 worker):     {mb / pipe_s:8.1f} MB/s  {n_traj / pipe_s:9.1f} trajectories/s")
    print(f"ratio pipeline/floor: {ratio:.3f} (target >= {TARGET})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
