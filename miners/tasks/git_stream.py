"""Task mining at git's speed: a whole history's git work in a few long-lived git processes.

Mining one fix candidate used to cost up to four git processes (``merge-base``, ``diff``, ``read-tree``,
``apply --check``). :func:`prepare` does the work of every candidate of a history up front:

- one ``git log --topo-order --format='%H %T %P'``: the commit graph, with trees and generation numbers;
- merge bases of pull-request merges computed on that graph (git's paint-down-to-common walk, by generation);
  a pair with several best common ancestors, or none, asks ``git merge-base`` as before;
- one ``git diff-tree --stdin -r -p`` fed ``<base tree> <tip tree>`` lines: the same patch text as
  ``git diff base tip`` (same options), one section per pair;
- the apply check, batched: every touched file's blob at the base and at the tip through one
  ``git cat-file --batch``; the hunks are applied in Python exactly (no offsets, no fuzz) and must give the tip
  blob, so ``git apply --check`` at the base would pass. Anything else (a submodule, a missing blob, a mode-only
  change, a mismatch) leaves the check to ``git apply`` for that commit, as before.

Commits go in batches (bounded memory). They come back with ``base``, ``diff`` (raw bytes) and, when the check
passed, ``applies``; ``mine_commit`` uses them instead of calling git (see :mod:`swemine.miners.tasks.history`).
The processes come from :mod:`swemine.corpora.git` (``git`` for the log, ``popen`` for the two fed on stdin).
"""
from __future__ import annotations

import heapq
import re
import subprocess
import threading
from collections.abc import Callable, Iterable, Iterator

from swemine.corpora.git import RepoError, git, popen

DIFF_OPTS = ("-c", "core.quotepath=off", "diff-tree", "--stdin", "-r", "-p", "--no-color", "--no-ext-diff",
             "--no-renames", "--src-prefix=a/", "--dst-prefix=b/")
_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_FOUND = re.compile(rb"^[0-9a-f]{40,64} (\w+) (\d+)$")
_P1, _P2, _STALE = 1, 2, 4
BATCH = 2000


def _feed(proc: subprocess.Popen, lines: Iterable[bytes]) -> threading.Thread:
    """Write ``lines`` to the process's stdin from a thread (so a full stdout pipe cannot deadlock us)."""
    def run():
        try:
            for line in lines:
                proc.stdin.write(line)
        except BrokenPipeError:
            pass
        finally:
            proc.stdin.close()
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def _finish(proc: subprocess.Popen, feeder: threading.Thread, what: str) -> None:
    feeder.join()
    err = proc.stderr.read()
    if proc.wait() != 0:
        raise RepoError(f"git {what} failed: {err.decode(errors='replace')[:300]}")


def commit_graph(repo_path: str, rev: str) -> tuple[dict[str, str], dict[str, list[str]], dict[str, int]]:
    """``(trees, parents, generation)`` of every commit reachable from ``rev`` (one ``git log``)."""
    trees, parents = {}, {}
    order = []
    for line in git(repo_path, "log", "--topo-order", "--format=%H %T %P", rev, "--").decode().splitlines():
        sha, tree, *ps = line.split()
        trees[sha], parents[sha] = tree, ps
        order.append(sha)
    gen: dict[str, int] = {}
    for sha in reversed(order):           # topo order lists children first: parents are numbered before
        gen[sha] = 1 + max((gen.get(p, 0) for p in parents[sha]), default=0)
    return trees, parents, gen


def merge_base(a: str, b: str, parents: dict[str, list[str]], gen: dict[str, int]) -> str | None:
    """The single best common ancestor of ``a`` and ``b``, or ``None`` when there is not exactly one candidate
    (or the graph is incomplete): the caller then asks git. Git's paint-down walk, highest generation first."""
    if a == b:
        return a
    if a not in gen or b not in gen:
        return None
    flags = {a: _P1, b: _P2}
    heap = [(-gen[a], a), (-gen[b], b)]
    found: list[str] = []
    while heap and any(not flags[c] & _STALE for _, c in heap):
        _, c = heapq.heappop(heap)
        f = flags[c] & (_P1 | _P2 | _STALE)
        if f == _P1 | _P2:
            if c not in found:
                found.append(c)
            f |= _STALE
        for p in parents.get(c, ()):
            if p not in gen:
                return None
            if flags.get(p, 0) & f != f:
                flags[p] = flags.get(p, 0) | f
                heapq.heappush(heap, (-gen[p], p))
    return found[0] if len(found) == 1 else None


def stream_diffs(repo_path: str, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], bytes]:
    """``git diff`` text of every ``(base tree, tip tree)`` pair through one ``git diff-tree --stdin``."""
    wanted = {f"{a} {b}".encode(): (a, b) for a, b in pairs}
    out: dict[tuple[str, str], bytes] = {pair: b"" for pair in pairs}
    proc = popen(repo_path, *DIFF_OPTS)
    feeder = _feed(proc, (f"{a} {b}\n".encode() for a, b in wanted.values()))
    current, parts = None, []
    for line in proc.stdout:
        key = wanted.get(line.rstrip(b"\n"))
        if key is not None:
            if current is not None:
                out[current] = b"".join(parts)
            current, parts = key, []
        elif current is not None:
            parts.append(line)
    if current is not None:
        out[current] = b"".join(parts)
    _finish(proc, feeder, "diff-tree --stdin")
    return out


def read_blobs(repo_path: str, names: list[str]) -> dict[str, bytes | None]:
    """Contents of ``<rev>:<path>`` names through one ``git cat-file --batch`` (``None``: missing or not a blob)."""
    out: dict[str, bytes | None] = {n: None for n in names if "\n" in n}   # not expressible in the protocol
    names = [n for n in names if n not in out]
    proc = popen(repo_path, "cat-file", "--batch")
    feeder = _feed(proc, (f"{n}\n".encode("utf-8", "surrogateescape") for n in names))
    for name in names:
        m = _FOUND.match(proc.stdout.readline())
        if m:
            data = proc.stdout.read(int(m.group(2)))
            proc.stdout.read(1)
            out[name] = data if m.group(1) == b"blob" else None
        else:
            out[name] = None                               # "<name> missing" / "ambiguous"

    _finish(proc, feeder, "cat-file --batch")
    return out


def file_chunks(diff: bytes) -> Iterator[tuple[bytes, bytes]]:
    """``(header line, chunk)`` per file of a ``git diff`` text."""
    starts = [m.start() for m in re.finditer(rb"^diff --git ", diff, re.M)]
    for i, s in enumerate(starts):
        chunk = diff[s:starts[i + 1] if i + 1 < len(starts) else len(diff)]
        yield chunk.split(b"\n", 1)[0], chunk


def chunk_sides(chunk: bytes) -> tuple[str | None, str | None]:
    """The old and new paths of a chunk from its ``---``/``+++`` lines (``None`` for /dev/null); no hunks
    (mode change only, binary) gives ``("", "")``."""
    old = new = ""
    for line in chunk.split(b"\n@@", 1)[0].split(b"\n"):
        if line.startswith(b"--- "):
            old = None if line == b"--- /dev/null" else line[6:].decode("utf-8", "surrogateescape")
        elif line.startswith(b"+++ "):
            new = None if line == b"+++ /dev/null" else line[6:].decode("utf-8", "surrogateescape")
    return old, new


def _lines(data: bytes) -> list[bytes]:
    """``data`` split after each ``\n`` only (``bytes.splitlines`` also splits at a lone ``\r``)."""
    parts = data.split(b"\n")
    return [p + b"\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def apply_hunks(old: bytes, chunk: bytes) -> bytes | None:
    """``old`` with the chunk's hunks applied at exactly their stated lines; ``None`` when a context or removed
    line does not match."""
    lines = _lines(old)
    out: list[bytes] = []
    pos, last = 0, b""
    body = chunk.split(b"\n@@", 1)
    if len(body) < 2:
        return old
    for hunk in re.split(rb"\n(?=@@ )", b"@@" + body[1]):
        head, _, text = hunk.partition(b"\n")
        m = _HUNK.match(head)
        if not m:
            return None
        start, count = int(m.group(1)), int(m.group(2) if m.group(2) is not None else 1)
        start = start - 1 if count else start
        if start < pos or start > len(lines):
            return None
        out.extend(lines[pos:start])
        pos = start
        for line in text.split(b"\n"):
            if not line:
                continue
            tag, rest = line[:1], line[1:] + b"\n"
            if tag == b"\\":                # "\ No newline at end of file": an added line loses its newline
                if last == b"+":
                    out[-1] = out[-1][:-1]
                continue
            last = tag
            if tag in (b" ", b"-"):
                if pos >= len(lines) or lines[pos].rstrip(b"\n") != rest[:-1]:
                    return None
                if tag == b" ":
                    out.append(lines[pos])
                pos += 1
            elif tag == b"+":
                out.append(rest)
            else:
                return None
    out.extend(lines[pos:])
    return b"".join(out)


def applies_exactly(diff: bytes, base: str, tip: str, blobs: dict[str, bytes | None]) -> bool:
    """True when every file chunk turns the base blob into the tip blob exactly; False when that cannot be
    shown here (a mode-only or binary chunk, a missing blob, a mismatch): then ``git apply`` decides."""
    for _, chunk in file_chunks(diff):
        old_path, new_path = chunk_sides(chunk)
        if old_path == "" and new_path == "":
            return False
        old = b"" if old_path is None else blobs.get(f"{base}:{old_path}")
        new = b"" if new_path is None else blobs.get(f"{tip}:{new_path}")
        if old is None or new is None or apply_hunks(old, chunk) != new:
            return False
    return True


def blob_names(diff: bytes, base: str, tip: str) -> list[str]:
    names = []
    for _, chunk in file_chunks(diff):
        old_path, new_path = chunk_sides(chunk)
        names += [f"{base}:{old_path}"] if old_path else []
        names += [f"{tip}:{new_path}"] if new_path else []
    return names


def prepare(commits: Iterable[dict], classify: Callable[[dict], str | None], rev: str,
            check_apply: bool = True, batch: int = BATCH) -> Iterator[dict]:
    """``commits`` of one repository (as ``list_commits`` lists ``rev``) with ``base`` and ``diff`` attached to each
    fix candidate (``classify(commit)`` gives its kind or ``None``), and ``applies=True`` when the apply check
    passed here. Candidates go to git ``batch`` at a time (bounded memory, a few processes per batch)."""
    graph = None
    pending: list[dict] = []
    for commit in commits:
        if graph is None:
            graph = commit_graph(commit["repo_path"], rev)
        pending.append(commit)
        if len(pending) >= batch:
            yield from _prepare_batch(pending, classify, graph, check_apply)
            pending = []
    if pending:
        yield from _prepare_batch(pending, classify, graph, check_apply)


def _prepare_batch(commits: list[dict], classify, graph, check_apply: bool) -> list[dict]:
    trees, parents, gen = graph
    repo_path = commits[0]["repo_path"]
    todo: list[tuple[dict, str, str]] = []
    for commit in commits:
        kind = classify(commit)
        if kind is None:
            continue
        if kind == "pr_merge":
            p1, tip = commit["parents"]
            base = merge_base(p1, tip, parents, gen)
        else:
            base, tip = commit["parents"][0], commit["sha"]
        if base in trees and tip in trees:                 # else mine_commit asks git, as before
            todo.append((commit, base, tip))
    if not todo:
        return commits
    diffs = stream_diffs(repo_path, sorted({(trees[b], trees[t]) for _, b, t in todo}))
    for commit, base, tip in todo:
        commit["base"], commit["diff"] = base, diffs[(trees[base], trees[tip])]
    if check_apply:
        blobs = read_blobs(repo_path, sorted({n for c, b, t in todo for n in blob_names(c["diff"], b, t)}))
        for commit, base, tip in todo:
            if applies_exactly(commit["diff"], base, tip, blobs):
                commit["applies"] = True
    return commits
