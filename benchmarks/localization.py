"""Localization miner throughput: records/s per core, and the share of time spent in tree-sitter parsing.

Setup (all local, nothing from the network): a git repository made of standard-library modules; one task per
module whose gold patch changes a line inside one function; one SWE-agent-style trajectory per task (search,
open the file at the function, edit). ``mine_instance`` runs with ``repo`` gold (base contents read through git,
old and new files parsed by tree-sitter) and the agent's patch as committed regions.

Printed: records/s per core (CPU time of this process and its git subprocesses), the shares of mining time in
tree-sitter (parse + query), in git reads and in the rest, and the ratio of mining time to the floor measured
in the same run — a bare tree-sitter parse of the same old and new file contents. ``--instances`` sets the size
(default 150).
"""
from __future__ import annotations

import argparse
import difflib
import os
import subprocess
import sys
import sysconfig
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from swemine.corpora.formats.base import make_step  # noqa: E402
from swemine.corpora.repos import GitRepo  # noqa: E402
from swemine.miners.code_structure import StructureParser  # noqa: E402
from swemine.miners.localization.mine import mine_instance  # noqa: E402

GIT_ENV = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.com", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@example.com"}


def stdlib_files(n: int) -> list[tuple[str, str]]:
    """``n`` standard-library modules (relative path, text) of 2-60 KB that have a function, in a fixed order."""
    root = sysconfig.get_paths()["stdlib"]
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in ("test", "tests", "idlelib", "site-packages"))
        for f in sorted(filenames):
            if not f.endswith(".py"):
                continue
            full = os.path.join(dirpath, f)
            if not 2_000 <= os.path.getsize(full) <= 60_000:
                continue
            with open(full, encoding="utf-8", errors="surrogateescape") as fh:
                text = fh.read()
            if "\n    def " in text or "\ndef " in text:
                out.append((os.path.relpath(full, root), text))
            if len(out) == n:
                return out
    return out


def make_case(sp: StructureParser, path: str, text: str) -> tuple[str, dict] | None:
    """(patched text, trajectory steps) changing the last line of the file's first multi-line function."""
    st = sp.parse(text.encode("utf-8", "surrogateescape"))
    lines = text.split("\n")
    for ent in st.entities:
        if ent.kind != "class" and ent.end - ent.start >= 2 and lines[ent.end - 1].strip():
            new_lines = list(lines)
            new_lines[ent.end - 1] = new_lines[ent.end - 1] + "  # changed"
            lo = max(1, ent.start - 20)
            window = "\n".join(f"{i}:{lines[i - 1]}" for i in range(lo, min(len(lines), lo + 99) + 1))
            steps = [
                make_step(0, tool_name="search_dir", tool_args={"args": ent.qualname.split(".")[-1]},
                          observation=f"Found 1 matches in /repo:\n/repo/{path} (1 matches)"),
                make_step(1, tool_name="open", tool_args={"args": f"{path} {ent.start}"},
                          observation=f"[File: /repo/{path} ({len(lines)} lines total)]\n{window}"),
                make_step(2, tool_name="edit", tool_args={"args": f"{ent.end}:{ent.end}"}, observation="edited"),
            ]
            return "\n".join(new_lines), steps
    return None


def unified(path: str, old: str, new: str) -> str:
    body = difflib.unified_diff(old.splitlines(True), new.splitlines(True), f"a/{path}", f"b/{path}")
    return f"diff --git a/{path} b/{path}\n" + "".join(body)


def _cpu() -> float:
    """CPU seconds of this process and its finished children (git reads run as subprocesses)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instances", type=int, default=150)
    args = ap.parse_args(argv)
    sp = StructureParser()
    with tempfile.TemporaryDirectory() as tmp:
        files = stdlib_files(args.instances)
        for rel, text in files:
            full = os.path.join(tmp, rel)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w", encoding="utf-8", errors="surrogateescape") as fh:
                fh.write(text)
        for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "base"]):
            subprocess.run(["git", "-C", tmp, *cmd], check=True, env=GIT_ENV, capture_output=True)
        base = subprocess.run(["git", "-C", tmp, "rev-parse", "HEAD"], check=True, capture_output=True,
                              text=True).stdout.strip()
        repo = GitRepo(tmp)
        cases = []
        for i, (rel, text) in enumerate(files):
            made = make_case(sp, rel, text)
            if made is None:
                continue
            new, steps = made
            patch = unified(rel, text, new)
            task = {"instance_id": f"bench__stdlib-{i}", "repo": "bench/stdlib", "base_commit": base, "patch": patch}
            traj = {"record_id": f"t{i}", "trajectory_id": f"t{i}", "harness": "swe-agent", "resolved": True,
                    "final_patch": patch, "steps": steps}
            cases.append((task, traj, text, new))

        spent = {"parse": 0.0, "git": 0.0}

        def timed(key, fn):
            def wrapper(*a, **kw):
                t0 = time.perf_counter()
                try:
                    return fn(*a, **kw)
                finally:
                    spent[key] += time.perf_counter() - t0
            return wrapper

        sp._parse = timed("parse", sp._parse)
        repo.read = timed("git", repo.read)
        repo.has_commit = timed("git", repo.has_commit)
        cpu0, wall0 = _cpu(), time.perf_counter()
        records = rejects = 0
        for task, traj, _, _ in cases:
            for rec in mine_instance(task, [traj], repo, sp):
                if "reason" in rec:
                    rejects += 1
                else:
                    records += 1
        cpu, wall = _cpu() - cpu0, time.perf_counter() - wall0
        bare = StructureParser(cache_size=0)
        t0 = time.perf_counter()
        for _, _, old, new in cases:
            bare.parse(old.encode("utf-8", "surrogateescape"))
            bare.parse(new.encode("utf-8", "surrogateescape"))
        floor = time.perf_counter() - t0
    print(f"instances: {len(cases)}  records: {records}  rejects: {rejects}")
    print(f"records/s per core: {records / cpu:.1f}  (cpu incl. git subprocesses {cpu:.2f}s, wall {wall:.2f}s)")
    parse, git = spent["parse"], spent["git"]
    print(f"share of mining wall time: tree-sitter parse+query {parse / wall:.1%}, git reads (incl. license "
          f"lookup) {git / wall:.1%}, the rest (patch apply, labels, records) {(wall - parse - git) / wall:.1%}")
    print(f"mining wall / bare parse floor (old+new files once each): {wall / floor:.2f}x  (floor {floor:.2f}s)")
    return 0 if records == len(cases) and not rejects else 1


if __name__ == "__main__":
    sys.exit(main())
