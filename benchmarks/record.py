"""Run benchmarks and record their figures in ``benchmarks/RESULTS.md``, with the date, commit and machine.

    python benchmarks/record.py                    # every benchmark, in name order (what `make bench` runs)
    python benchmarks/record.py tasks dedup        # the ones named
    python benchmarks/record.py tasks -- --commits 2000   # one benchmark with its own arguments

Each benchmark is run as its own process with its output shown as it comes, then its section of RESULTS.md
(between ``<!-- begin NAME -->`` and ``<!-- end NAME -->``) is rewritten with what it printed; the other
sections and any text outside them are kept as they are. A benchmark that fails is recorded with its exit
status, and the run goes on to the next one; the exit status is 1 when any failed.
"""
from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "RESULTS.md"
#: The arguments a benchmark needs to run unattended (the others run with their defaults).
DEFAULT_ARGS = {"fim_loss_share": ["swemine-output/bench/fim-psm"]}
#: What must exist before such a benchmark runs: path → the swemine arguments that make it.
PREPARE = {"swemine-output/bench/fim-psm": ["run", "fim", "--format", "psm", "--output", "swemine-output/bench/fim-psm"]}
PACKAGES = ("apache-beam", "pyarrow", "orjson", "tree-sitter", "datasketch", "detect-secrets", "ahocorasick-rs",
            "torch", "transformers")
#: Sections are kept above this line; what follows it (notes, earlier figures) is left as it is.
END_OF_RUNS = "<!-- end of recorded runs -->"
HEADER = """# Benchmark results

Written by `make bench` (`benchmarks/record.py`): one section per benchmark, its latest run, with the date, the
commit and the machine it ran on. Each benchmark prints its throughput beside a floor measured in the same run;
compare ratios, not absolute times, across machines. Rerun one with `python benchmarks/record.py NAME`.
"""


def benchmarks() -> list[str]:
    """Every benchmark script's name (``benchmarks/*.py`` but this one), sorted."""
    return sorted(p.stem for p in HERE.glob("*.py") if p.name != Path(__file__).name and not p.stem.startswith("_"))


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _memory_gib() -> str:
    try:
        kb = int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text()).group(1))
        return f"{kb / 2**20:.1f} GiB"
    except (OSError, AttributeError):
        return "unknown memory"


def _gpu() -> str | None:
    if not shutil.which("nvidia-smi"):
        return None
    done = subprocess.run(["nvidia-smi", "--query-gpu=name,memory.total", "--format=csv,noheader"],
                          capture_output=True, text=True)
    return "; ".join(done.stdout.split("\n")).strip("; ") if done.returncode == 0 else None


def machine() -> dict[str, str]:
    """What the figures depend on: cores (and how busy they were), memory, CPU and GPU model, OS, Python and the
    key packages."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    versions = []
    for name in PACKAGES:
        try:
            versions.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            continue
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "unknown"
    out = {"cores": f"{cores} usable of {os.cpu_count()}; load average {load} when it ended",
           "memory": _memory_gib(), "cpu": _cpu_model(),
           "os": platform.platform(), "python": platform.python_version(), "packages": ", ".join(versions)}
    gpu = _gpu()
    if gpu:
        out["gpu"] = gpu
    return out


def _commit() -> str:
    def git(*args):
        return subprocess.run(["git", "-C", str(HERE), *args], capture_output=True, text=True).stdout.strip()
    head = git("rev-parse", "--short", "HEAD") or "unknown"
    return head + (" (with uncommitted changes)" if git("status", "--porcelain", "--untracked-files=no") else "")


def section(name: str, command: str, rc: int, wall_s: float, output: str, when: datetime.datetime,
            info: dict[str, str], commit: str) -> str:
    """The Markdown section of one benchmark run, between its begin/end markers."""
    lines = [f"<!-- begin {name} -->", f"## {name}", "",
             f"- date: {when:%Y-%m-%d %H:%M} UTC; commit {commit}",
             f"- command: `{command}` — exit {rc}, {wall_s:.1f} s wall"]
    lines += [f"- {key}: {value}" for key, value in info.items()]
    lines += ["", "```text", output.rstrip("\n"), "```", f"<!-- end {name} -->"]
    return "\n".join(lines)


def replace_section(text: str, name: str, new: str) -> str:
    """``text`` with ``name``'s section replaced by ``new``, or ``new`` added in name order among the sections
    (before :data:`END_OF_RUNS` when the file has it)."""
    pattern = re.compile(rf"<!-- begin {re.escape(name)} -->.*?<!-- end {re.escape(name)} -->", re.S)
    if pattern.search(text):
        return pattern.sub(lambda _m: new, text, count=1)
    if not text.strip():
        text = HEADER
    later = [m.start() for m in re.finditer(r"<!-- begin (\S+) -->", text) if m.group(1) > name]
    at = later[0] if later else text.find(END_OF_RUNS)
    if at >= 0:
        return text[:at] + new + "\n\n" + text[at:]
    return text.rstrip("\n") + "\n\n" + new + "\n"


def run_one(name: str, args: list[str], results: Path = RESULTS, folder: Path = HERE) -> int:
    """Run ``<folder>/<name>.py`` with ``args`` (echoing its output), record it in ``results``; its exit status."""
    for path, make in PREPARE.items():
        if path in args and not (HERE.parent / path / "manifest.json").exists():
            subprocess.run([str(Path(sys.executable).parent / "swemine"), *make], cwd=HERE.parent, check=False)
    argv = [sys.executable, str(folder / f"{name}.py"), *args]
    when = datetime.datetime.now(datetime.UTC)
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            cwd=HERE.parent)
    captured = []
    for line in proc.stdout:
        sys.stdout.write(line)
        captured.append(line)
    rc = proc.wait()
    command = " ".join(["python", f"benchmarks/{name}.py", *args])
    new = section(name, command, rc, time.perf_counter() - start, "".join(captured), when, machine(), _commit())
    text = results.read_text() if results.exists() else ""
    results.write_text(replace_section(text, name, new))
    return rc


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    extra: list[str] = []
    if "--" in argv:
        at = argv.index("--")
        argv, extra = argv[:at], argv[at + 1:]
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help=f"benchmarks to run (default: all of {', '.join(benchmarks())})")
    args = ap.parse_args(argv)
    unknown = sorted(set(args.names) - set(benchmarks()))
    if unknown:
        ap.error(f"no such benchmark: {', '.join(unknown)}")
    if extra and len(args.names) != 1:
        ap.error("arguments after -- need exactly one benchmark name")
    failed = []
    for name in args.names or benchmarks():
        if run_one(name, extra or DEFAULT_ARGS.get(name, [])) != 0:
            failed.append(name)
    if failed:
        print(f"failed: {', '.join(failed)} (recorded in {RESULTS.relative_to(HERE.parent)})", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
