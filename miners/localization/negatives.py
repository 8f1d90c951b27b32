"""Retrieval hard negatives: repository files the agents dwelt on and did not need, then BM25 lexical negatives.

- ``viewed``: files whose content a trajectory of the instance displayed, ranked by how long the agents stayed on
  them (steps that displayed them, then lines displayed, then the first such step);
- ``searched``: files a search step listed (``grep``/``rg``/``find``/``git grep`` output, SWE-agent
  ``search_dir``/``find_file``) that no step displayed, ranked by the number of such steps;
- ``bm25``: with the repository at hand, the files at the base commit that score highest under Okapi BM25
  (k1 = 1.2, b = 0.75) for the problem statement, over files with the gold files' extensions (path and content;
  identifiers split at ``_`` and camelCase), until the instance has ``k`` negatives; files scoring 0 (a short
  statement shares few terms) fill the rest, nearest to the gold files first.

Callers exclude gold files, useful context, scratch files and (with the repository) paths absent at the base
commit.
"""
from __future__ import annotations

import collections
import math
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import NamedTuple

from swemine.corpora.records import Reject
from swemine.miners.actions import command_text
from swemine.miners.localization.views import repo_relative, step_views

BM25_K1, BM25_B = 1.2, 0.75
MAX_SEARCH_HITS = 30
_SEARCH_PROGRAMS = re.compile(r"(?:^|[\s;&|(])(?:grep|egrep|fgrep|rg|ag|ack|find|fd|git\s+grep)\s")
_SEARCH_TOOLS = ("search", "find", "grep")
_LISTED_PATH = re.compile(r"^((?:\.{0,2}/)?[\w.@+-]+(?:/[\w.@+-]+)+\.\w+|\./[\w.@+-]+\.\w+)(?=$|[\s:(])", re.M)
_WORD = re.compile(r"[A-Za-z0-9_]+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


@dataclass(frozen=True)
class Negative:
    path: str
    source: str           # "viewed" | "searched" | "bm25"
    weight: float         # steps (viewed, searched) or BM25 score


def is_search_step(step: dict) -> bool:
    """The step searched the repository (a search tool, or grep/rg/find/git grep in its command)."""
    tool = (step.get("tool_name") or "").lower()
    return any(t in tool for t in _SEARCH_TOOLS) or bool(_SEARCH_PROGRAMS.search(" " + command_text(step)))


def searched_paths(step: dict) -> list[str]:
    """Paths a search step listed at the start of an output line (``a/b.py:12:``, ``./a/b.py``, ``/r/a.py (2
    matches)``); none when it listed more than :data:`MAX_SEARCH_HITS` (a listing, not a search)."""
    if not is_search_step(step):
        return []
    hits = list(dict.fromkeys(_LISTED_PATH.findall(step.get("observation") or "")))
    return hits if len(hits) <= MAX_SEARCH_HITS else []


class Look(NamedTuple):
    """What one step showed of the repository, paths as the run named them: each file it displayed with the
    number of lines displayed (open-ended ranges count none), and the paths a search listed
    (:func:`searched_paths`)."""
    step: int
    shown: tuple[tuple[str, int], ...]
    searched: tuple[str, ...]


def step_look(step: dict) -> Look:
    """The :class:`Look` of one step."""
    shown = tuple((v.path, sum(b - a + 1 for a, b in v.ranges if b < 10 ** 8)) for v in step_views(step))
    return Look(step["idx"], shown, tuple(searched_paths(step)))


def trajectory_negatives(looks: Iterable[Iterable[Look]], keep: Callable[[str], bool], gold_files: Iterable[str] = ()
                         ) -> list[Negative]:
    """Viewed, then searched-only files of the instance's trajectories (the :class:`Look` of their steps, one
    sequence per trajectory) that ``keep`` accepts, ranked (see the module docstring); a shown path that ends
    with a gold file's path is that gold file. Searched files count only with an extension of the gold files (a
    search lists build output and data files too)."""
    gold_files = list(gold_files)
    suffixes = extensions(gold_files)
    view_steps: collections.Counter = collections.Counter()
    lines: collections.Counter = collections.Counter()
    search_steps: collections.Counter = collections.Counter()
    first: dict[str, tuple[int, int]] = {}
    for ti, traj_looks in enumerate(looks):
        for look in traj_looks:
            at = (look.step, ti)
            shown = {}
            for path, n in look.shown:
                rel = repo_relative(path, gold_files)
                if rel and keep(rel):
                    shown[rel] = shown.get(rel, 0) + n
            for rel, n in shown.items():
                view_steps[rel] += 1
                lines[rel] += n
                first.setdefault(rel, at)
            for path in look.searched:
                rel = repo_relative(path, gold_files)
                if rel and rel not in shown and rel.endswith(suffixes) and keep(rel):
                    search_steps[rel] += 1
                    first.setdefault(rel, at)
    viewed = sorted(view_steps, key=lambda p: (-view_steps[p], -lines[p], first[p], p))
    searched = sorted((p for p in search_steps if p not in view_steps),
                      key=lambda p: (-search_steps[p], first[p], p))
    return ([Negative(p, "viewed", float(view_steps[p])) for p in viewed]
            + [Negative(p, "searched", float(search_steps[p])) for p in searched])


def extensions(paths: Iterable[str]) -> tuple[str, ...]:
    """The file extensions of ``paths`` (``(".py",)`` when they have none): the kind of file a negative must be."""
    return tuple(sorted({os.path.splitext(p)[1] for p in paths} - {""})) or (".py",)


def terms(text: str) -> list[str]:
    """BM25 terms: words, lower-cased, plus their ``_`` / camelCase parts (terms of one character dropped)."""
    out = []
    for word in _WORD.findall(text):
        parts = [p for chunk in word.split("_") for p in _CAMEL.findall(chunk)]
        for t in {word.lower(), *(p.lower() for p in parts)}:
            if len(t) > 1:
                out.append(t)
    return out


def bm25_rank(query: str, docs: dict[str, collections.Counter]) -> list[tuple[str, float]]:
    """Documents (``{path: term counts}``) by descending Okapi BM25 score for ``query`` (ties by path); documents
    sharing no term with the query are left out."""
    if not docs:
        return []
    q = set(terms(query))
    lengths = {p: sum(c.values()) for p, c in docs.items()}
    avg = sum(lengths.values()) / len(docs) or 1.0
    df = collections.Counter(t for c in docs.values() for t in q if t in c)
    n = len(docs)
    idf = {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in df}
    scores = []
    for path, counts in docs.items():
        norm = BM25_K1 * (1 - BM25_B + BM25_B * lengths[path] / avg)
        s = sum(idf[t] * counts[t] * (BM25_K1 + 1) / (counts[t] + norm) for t in idf if t in counts)
        if s > 0:
            scores.append((path, s))
    return sorted(scores, key=lambda kv: (-kv[1], kv[0]))


def _shared_dirs(path: str, others: Iterable[str]) -> int:
    """Leading directories ``path`` shares with the nearest of ``others``."""
    dirs = path.split("/")[:-1]
    return max((len(os.path.commonprefix([dirs, o.split("/")[:-1]])) for o in others), default=0)


def bm25_negatives(query: str, docs: dict[str, collections.Counter], exclude: set[str], n: int,
                   near: Iterable[str] = ()) -> list[Negative]:
    """The ``n`` best BM25 documents not in ``exclude``; when fewer than ``n`` share a term with the query (a short
    statement), the rest (score 0) follow nearest to the ``near`` files first (shared leading directories), then
    by path."""
    if n <= 0:
        return []
    pool = {p: c for p, c in docs.items() if p not in exclude}
    ranked = bm25_rank(query, pool)
    scored = {p for p, _ in ranked}
    near = list(near)
    rest = sorted((p for p in pool if p not in scored), key=lambda p: (-_shared_dirs(p, near), p))
    return [Negative(p, "bm25", round(s, 4)) for p, s in ranked[:n]] + [Negative(p, "bm25", 0.0)
                                                                         for p in rest[:max(0, n - len(ranked))]]


_TERMS_CACHE: dict[str, collections.Counter] = {}
_TERMS_CACHE_MAX = 50_000


def _doc_terms(sha: str, path: str, content: str) -> collections.Counter:
    key = f"{sha}:{path}"
    if key not in _TERMS_CACHE:
        if len(_TERMS_CACHE) >= _TERMS_CACHE_MAX:
            _TERMS_CACHE.clear()
        _TERMS_CACHE[key] = collections.Counter(terms(path.replace("/", " ").replace(".", " ") + "\n" + content))
    return _TERMS_CACHE[key]


def repo_documents(repo, commit: str, suffixes: tuple[str, ...], max_bytes: int = 1 << 20
                   ) -> dict[str, collections.Counter]:
    """``{path: term counts}`` of the UTF-8 text files with ``suffixes`` at ``commit`` of a
    :class:`swemine.corpora.repos.RepoSource` (larger, binary and undecodable files are left out: they are no
    candidate negatives). Term counts are cached by content hash across commits."""
    return {f["path"]: _doc_terms(f["content_sha256"], f["path"], f["content"])
            for f in repo.iter_source_files(commit, suffixes, max_bytes) if not isinstance(f, Reject)}
