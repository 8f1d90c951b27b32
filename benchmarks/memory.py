"""Peak memory of reading one large JSONL file: bounded by its largest line, not by the file.

    python benchmarks/memory.py [--mb 200] [--big-line-mb 20] [--gz]

Builds a ``--mb`` MB JSONL of real trajectory lines from the shared corpora (each real JSON document of the
trajectory folders as one line, repeated), with one line padded to ``--big-line-mb`` MB, then reads it in a fresh
subprocess with the ``read`` stage's function (``read_unit``: stream, decode, detect, parse). It prints the peak
RSS (VmHWM), the RSS after imports, the largest line, and the growth over the RSS after imports as a multiple of
the largest line. ``json.loads`` alone needs about 3x a line that is one huge string (the text, the result, and
its string builder's over-allocation), so that is the floor for a padded line; the growth does not depend on
the file's size (compare ``--mb 100`` and ``--mb 400``).
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import pathlib
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from fim import _status_mb  # noqa: E402  (VmRSS / VmHWM from /proc/self/status)

FOLDERS = ("swe-agent", "openhands", "mini-swe-agent", "moatless")


def measure(path: str) -> dict:
    """Read ``path`` with ``read_unit`` (in this process); RSS figures in MB."""
    from swemine.corpora.inputs import Unit
    from swemine.corpora.normalize import read_unit

    base = _status_mb("VmRSS")
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")                                  # reset the peak to the current RSS
    records = rejects = 0
    for rec in read_unit(Unit(path)):
        if rec.get("reason"):
            rejects += 1
        else:
            records += 1
    return {"records": records, "rejects": rejects, "rss_after_imports_mb": round(base, 1),
            "peak_rss_mb": round(_status_mb("VmHWM"), 1)}


def corpus_lines(corpora: pathlib.Path) -> list[bytes]:
    """Every JSON document of the trajectory folders as one compact line."""
    lines = []
    for folder in FOLDERS:
        for p in sorted((corpora / folder).rglob("*")):
            if not p.is_file() or not p.name.endswith((".traj", ".json", ".jsonl")):
                continue
            texts = p.read_text(errors="replace").splitlines() if p.name.endswith(".jsonl") else [p.read_text()]
            for t in texts:
                try:
                    lines.append(json.dumps(json.loads(t)).encode())
                except ValueError:
                    continue
    return lines


def build(dest: pathlib.Path, corpora: pathlib.Path, mb: float, big_line_mb: float, gz: bool) -> tuple[int, int]:
    """Write the JSONL; returns (file bytes, largest line bytes)."""
    lines = [ln for ln in corpus_lines(corpora) if b'"trajectory"' in ln or b'"history"' in ln]
    big_line = max(lines, key=len)                   # the longest real line, padded to --big-line-mb
    if big_line_mb:
        big_line = json.dumps({**json.loads(big_line), "padding": "x" * int(big_line_mb * 1e6)}).encode()
    total, largest = 0, len(big_line)
    opener = gzip.open if gz else open
    with opener(dest, "wb") as fh:
        i = 0
        while total < mb * 1e6:
            line = lines[i % len(lines)] if i != len(lines) // 2 else big_line
            fh.write(line + b"\n")
            total += len(line) + 1
            largest = max(largest, len(line))
            i += 1
    return total, largest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=200.0)
    ap.add_argument("--big-line-mb", type=float, default=20.0)
    ap.add_argument("--gz", action="store_true", help="write the file gzip-compressed")
    ap.add_argument("--corpora", type=pathlib.Path, default=pathlib.Path("/work/shared/corpora"))
    ap.add_argument("--measure", default="", help=argparse.SUPPRESS)      # internal: one measurement
    args = ap.parse_args(argv)
    if args.measure:
        print(json.dumps(measure(args.measure)))
        return 0
    with tempfile.TemporaryDirectory(prefix="swemine-mem-") as tmp:
        path = pathlib.Path(tmp) / ("big.jsonl.gz" if args.gz else "big.jsonl")
        size, largest = build(path, args.corpora, args.mb, args.big_line_mb, args.gz)
        out = subprocess.run([sys.executable, __file__, "--measure", str(path)], capture_output=True, text=True,
                             check=True, env={**os.environ})
        r = json.loads(out.stdout.strip().splitlines()[-1])
        on_disk = path.stat().st_size
    largest_mb, const = largest / 1e6 / 1.048576, r["rss_after_imports_mb"]
    bound = 2 * largest_mb + const
    print(f"file: {size / 1e6:.1f} MB decoded ({on_disk / 1e6:.1f} MB on disk{', gzip' if args.gz else ''}), "
          f"{r['records']} records, {r['rejects']} rejects; largest line {largest_mb:.1f} MiB")
    print(f"peak RSS {r['peak_rss_mb']} MiB; after imports {const} MiB; growth {r['peak_rss_mb'] - const:.1f} MiB "
          f"= {(r['peak_rss_mb'] - const) / largest_mb:.2f} x largest line")
    print(f"peak <= 2 x largest line + RSS after imports ({bound:.1f} MiB): {r['peak_rss_mb'] <= bound}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
