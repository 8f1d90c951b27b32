"""Decontamination against benchmark references, with evidence (methods.md §5.3, levels applied in order).

0. repo canonicalization (:mod:`swemine.filters.canon`) — every repo comparison uses canonical names;
1. ``instance`` — the record's instance id, or its ``(canonical repo, PR/issue number)``, is an eval item;
2. ``repo`` — the record's canonical repo is an eval repo (``eval_repo``) or on the grey list (``grey_repo``);
3. ``temporal`` — the record's date is on or after the cutoff (``temporal``; undated records are kept unless
   ``undated="drop"``, then ``temporal_undated``);
4. ``content`` — bigcode exact case-insensitive substring of benchmark prompts/solutions
   (``content_substring``); word n-gram overlap with problem statements (``content_ngram``); at least
   ``min_patch_lines`` added lines of a gold/test patch (``content_patch_lines``); MinHash near-duplicate of a
   benchmark item confirmed by exact identifier-token Jaccard (``content_minhash``).

Benchmark n-grams and patch lines that prove nothing are never indexed: lines every Python run prints
(traceback frames, exception chaining, test-runner chatter: :data:`swemine.filters.text.GENERIC_LINE`) are removed from
statements first, and an n-gram needs ``min_distinct_words`` distinct words (at most half numbers or single
characters), a patch line ``min_line_words``. The first rule that fires decides; the ``Filtered`` record's evidence names the level, rule, benchmark, item id
and the matched span / n-grams / lines. N-grams and lines frequent in the corpus (boilerplate) are excluded: see
:func:`boilerplate_features`; their document frequency counts distinct instances (several runs of one instance
count once), so many leaked copies of one problem statement do not make it "boilerplate".
"""
from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from swemine.corpora.records import Filtered
from swemine.filters.benchmarks import BenchmarkItem, BenchmarkSet
from swemine.filters.canon import RepoCanon, parse_instance_id
from swemine.filters.fields import FieldSpec, first_value, get_path, iter_texts, spec_for
from swemine.filters.minhash import band_keys, jaccard, optimal_bands, signature
from swemine.filters.text import (
    added_lines,
    identifier_tokens,
    informative,
    strip_generic_lines,
    text_lines,
    word_ngrams,
    words,
)
from swemine.filters.verdict import Verdict, filter_stage

STAGE = "decontam"
LEVELS = ("instance", "repo", "temporal", "content")
MAX_LISTED = 5
ANCHOR_N = 3


@dataclass(frozen=True)
class DecontamConfig:
    """Decontamination switches and thresholds (defaults follow methods.md §5.3)."""
    levels: tuple[str, ...] = LEVELS
    cutoff_date: str = ""                     # ISO date; records dated on/after it are dropped
    undated: str = "keep"                     # keep | drop, for the temporal level
    grey_repos: tuple[str, ...] = ()
    ngram_n: int = 10
    min_ngram_matches: int = 1
    min_patch_lines: int = 3
    min_line_chars: int = 20
    min_substring_chars: int = 40
    min_distinct_words: int = 5               # an indexed n-gram needs this many distinct words ...
    min_line_words: int = 3                   # ... and an indexed patch line this many distinct words
    strip_generic: bool = True                # drop traceback / test-runner lines from benchmark statements
    minhash_threshold: float = 0.58
    num_perm: int = 128
    minhash_min_tokens: int = 10
    boilerplate_fraction: float = 0.001       # n-grams/lines in more than this share of corpus documents ...
    boilerplate_min_docs: int = 10            # ... and in more than this many are boilerplate

    def __post_init__(self):
        unknown = set(self.levels) - set(LEVELS)
        if unknown:
            raise ValueError(f"unknown decontamination level(s) {sorted(unknown)}; choose from {LEVELS}")


@dataclass
class ContentIndex:
    """Benchmark texts indexed for the content level."""
    items: list[BenchmarkItem]
    substrings: list[tuple[str, int]] = field(default_factory=list)
    anchors: dict[str, list[int]] = field(default_factory=dict)      # interior word 3-gram -> substring indexes
    unanchored: list[int] = field(default_factory=list)              # substrings too short to anchor
    ngrams: dict[str, list[int]] = field(default_factory=dict)
    ngram_totals: dict[int, int] = field(default_factory=dict)
    lines: dict[str, list[int]] = field(default_factory=dict)
    buckets: dict[str, list[int]] = field(default_factory=dict)
    tokens: dict[int, set[str]] = field(default_factory=dict)
    bands: tuple[int, int] = (1, 1)

    @classmethod
    def build(cls, items: list[BenchmarkItem], cfg: DecontamConfig) -> ContentIndex:
        idx = cls(items)
        bands, rows = optimal_bands(cfg.minhash_threshold, cfg.num_perm)
        seen_sub = set()
        for i, item in enumerate(items):
            for sub in item.substrings:
                low = sub.strip().lower()
                if len(low) >= cfg.min_substring_chars and low not in seen_sub:
                    seen_sub.add(low)
                    idx.add_substring(low, i)
            grams = set()
            for st in item.statements:
                grams |= word_ngrams(strip_generic_lines(st) if cfg.strip_generic else st, cfg.ngram_n)
            grams = {g for g in grams if informative(g.split(" "), cfg.min_distinct_words)}
            idx.ngram_totals[i] = len(grams)
            for g in grams:
                idx.ngrams.setdefault(g, []).append(i)
            for patch in item.patches:
                for line in added_lines(patch, cfg.min_line_chars):
                    if not informative(words(line), cfg.min_line_words):
                        continue
                    owners = idx.lines.setdefault(line, [])
                    if not owners or owners[-1] != i:
                        owners.append(i)
            toks = identifier_tokens(item.document)
            if len(toks) >= cfg.minhash_min_tokens:
                idx.tokens[i] = toks
                for key in band_keys(signature(toks, cfg.num_perm), bands, rows):
                    idx.buckets.setdefault(key, []).append(i)
        idx.bands = (bands, rows)
        return idx

    def add_substring(self, low: str, item: int) -> None:
        """Index a lower-cased substring under one word 3-gram from its interior (edge words may be partial)."""
        pos = len(self.substrings)
        self.substrings.append((low, item))
        inner = words(low)[1:-1]
        if len(inner) >= ANCHOR_N:
            mid = (len(inner) - ANCHOR_N) // 2
            self.anchors.setdefault(" ".join(inner[mid:mid + ANCHOR_N]), []).append(pos)
        else:
            self.unanchored.append(pos)

    def substring_candidates(self, low_text: str) -> list[int]:
        """Substrings that may occur in ``low_text``: their anchor occurs in it as whole words (or they have none)."""
        grams = word_ngrams(low_text, ANCHOR_N)
        found = {p for g in grams for p in self.anchors.get(g, ())}
        return sorted(found.union(self.unanchored))

    def features(self, texts: Iterable[tuple[str, str]], cfg: DecontamConfig) -> set[str]:
        """Index n-grams (``n:``) and patch lines (``l:``) present in ``texts``: input to boilerplate counting."""
        out = set()
        for _, text in texts:
            out.update("n:" + g for g in word_ngrams(text, cfg.ngram_n) if g in self.ngrams)
            out.update("l:" + ln for ln in text_lines(text, cfg.min_line_chars) if ln in self.lines)
        return out


def boilerplate_features(doc_counts: Mapping[str, int], n_docs: int, cfg: DecontamConfig) -> set[str]:
    """Features whose document frequency exceeds both ``boilerplate_fraction * n_docs`` and ``boilerplate_min_docs``."""
    limit = max(cfg.boilerplate_fraction * n_docs, cfg.boilerplate_min_docs)
    return {f for f, c in doc_counts.items() if c > limit}


def doc_key(record: Mapping[str, Any], spec: FieldSpec) -> str:
    """What counts as one document for boilerplate frequency: the instance when known, else the record."""
    _, inst = first_value(record, spec.instance)
    return f"instance:{inst}" if inst else f"record:{record.get('record_id', '')}"


def _date10(value: Any) -> str:
    text = str(value).strip()
    return text[:10] if len(text) >= 10 and text[4] == "-" else ""


class Decontaminator:
    """Apply the configured levels to records of any type; ``check`` returns ``(reason, evidence)`` or ``None``."""

    def __init__(self, bench: BenchmarkSet, cfg: DecontamConfig | None = None, canon: RepoCanon | None = None,
                 boilerplate: Iterable[str] = ()):
        self.cfg = cfg = cfg or DecontamConfig()
        self.bench = bench
        self.canon = canon or RepoCanon(preferred=bench.eval_repos)
        self.items = bench.items
        self.instances: dict[str, int] = {}
        self.numbers: dict[tuple[str, int], int] = {}
        self.eval_repos: dict[str, list[int]] = {}
        for i, item in enumerate(self.items):
            if item.instance_id:
                self.instances.setdefault(item.instance_id.lower(), i)
            repo = self.canon.canonical(item.repo or parse_instance_id(item.instance_id)[0])
            if repo:
                self.eval_repos.setdefault(repo, []).append(i)
                if item.number is not None:
                    self.numbers.setdefault((repo, int(item.number)), i)
        self.grey = {self.canon.canonical(r) for r in cfg.grey_repos}
        self.index = ContentIndex.build(self.items, cfg) if "content" in cfg.levels else None
        self.boilerplate = frozenset(boilerplate)

    def with_boilerplate(self, features: Iterable[str]) -> Decontaminator:
        """This decontaminator (sharing its indexes) with ``features`` as the corpus boilerplate to ignore."""
        other = copy.copy(self)
        other.boilerplate = frozenset(features)
        return other

    # -- evidence helpers -------------------------------------------------------------------------------
    def _item_ev(self, i: int) -> dict[str, Any]:
        item = self.items[i]
        return {"benchmark": item.benchmark, "item_id": item.item_id}

    def _record_repo(self, record: Mapping[str, Any], spec: FieldSpec) -> tuple[str, str]:
        _, repo = first_value(record, spec.repo)
        if not repo:
            _, inst = first_value(record, spec.instance)
            repo = parse_instance_id(str(inst or ""))[0]
        return str(repo or ""), self.canon.canonical(str(repo or ""))

    # -- levels -----------------------------------------------------------------------------------------
    def _instance(self, record, spec):
        _, inst = first_value(record, spec.instance)
        inst = str(inst or "")
        if inst and inst.lower() in self.instances:
            i = self.instances[inst.lower()]
            return "instance", {"rule": "instance_id", "instance_id": inst, **self._item_ev(i)}
        raw, repo = self._record_repo(record, spec)
        candidates = []
        inst_repo, inst_num = parse_instance_id(inst)
        if inst_num is not None:
            candidates.append((self.canon.canonical(inst_repo) or repo, inst_num, "instance_id"))
        for path in spec.numbers:
            for concrete, value in get_path(record, path):
                if value not in (None, "") and str(value).isdigit():
                    candidates.append((repo, int(value), concrete))
        for crepo, num, where in candidates:
            i = self.numbers.get((crepo, num))
            if i is not None:
                return "instance_number", {"rule": "repo_number", "canonical_repo": crepo, "number": num,
                                           "field": where, "record_repo": raw, "instance_id": inst,
                                           "canonicalized_by": self.canon.how(inst_repo or raw),
                                           **self._item_ev(i)}
        return None

    def _repo(self, record, spec):
        raw, repo = self._record_repo(record, spec)
        if not repo:
            return None
        if repo in self.eval_repos:
            idxs = self.eval_repos[repo]
            return "eval_repo", {"rule": "eval_repo", "record_repo": raw, "canonical_repo": repo,
                                 "canonicalized_by": self.canon.how(raw),
                                 "benchmarks": sorted({self.items[i].benchmark for i in idxs}),
                                 "n_items": len(idxs), **self._item_ev(min(idxs, key=lambda j: self.items[j].item_id))}
        if repo in self.grey:
            return "grey_repo", {"rule": "grey_repo", "record_repo": raw, "canonical_repo": repo,
                                 "canonicalized_by": self.canon.how(raw)}
        return None

    def _temporal(self, record, spec):
        cutoff = self.cfg.cutoff_date
        if not cutoff:
            return None
        where, value = first_value(record, spec.dates)
        date = _date10(value) if value is not None else ""
        if not date:
            if self.cfg.undated == "drop":
                return "temporal_undated", {"rule": "undated", "cutoff_date": cutoff, "fields": list(spec.dates)}
            return None
        if date >= cutoff[:10]:
            return "temporal", {"rule": "after_cutoff", "field": where, "date": str(value), "cutoff_date": cutoff}
        return None

    def _content(self, record, spec):
        idx, cfg = self.index, self.cfg
        texts = iter_texts(record, spec)
        for path, text in texts:
            low = text.lower()
            for cand in idx.substring_candidates(low):
                sub, i = idx.substrings[cand]
                pos = low.find(sub)
                if pos >= 0:
                    return "content_substring", {"rule": "substring", "field": path, "offset": pos,
                                                 "span": text[pos:pos + len(sub)][:500], **self._item_ev(i)}
        matched: dict[int, dict[str, str]] = {}
        for path, text in texts:
            for g in word_ngrams(text, cfg.ngram_n):
                owners = idx.ngrams.get(g)
                if owners and "n:" + g not in self.boilerplate:
                    for i in owners:
                        matched.setdefault(i, {}).setdefault(g, path)
        best = self._best(matched)
        if best is not None and len(matched[best]) >= cfg.min_ngram_matches:
            grams = matched[best]
            first = sorted(grams)[:MAX_LISTED]
            return "content_ngram", {"rule": f"word_{cfg.ngram_n}gram", "n_matched": len(grams),
                                     "n_item_ngrams": idx.ngram_totals[best], "ngrams": first,
                                     "fields": sorted({grams[g] for g in first}), **self._item_ev(best)}
        lines: dict[int, dict[str, str]] = {}
        for path, text in texts:
            for ln in text_lines(text, cfg.min_line_chars):
                owners = idx.lines.get(ln)
                if owners and "l:" + ln not in self.boilerplate:
                    for i in owners:
                        lines.setdefault(i, {}).setdefault(ln, path)
        best = self._best(lines)
        if best is not None and len(lines[best]) >= cfg.min_patch_lines:
            found = sorted(lines[best])[:MAX_LISTED]
            return "content_patch_lines", {"rule": "patch_added_lines", "n_matched": len(lines[best]),
                                           "lines": found, "fields": sorted({lines[best][x] for x in found}),
                                           **self._item_ev(best)}
        bands, rows = idx.bands
        for path, text in texts:
            toks = identifier_tokens(text)
            if len(toks) < cfg.minhash_min_tokens:
                continue
            cands = set()
            for key in band_keys(signature(toks, cfg.num_perm), bands, rows):
                cands.update(idx.buckets.get(key, ()))
            for i in sorted(cands):
                sim = jaccard(toks, idx.tokens[i])
                if sim >= cfg.minhash_threshold:
                    return "content_minhash", {"rule": "minhash_jaccard", "field": path, "jaccard": round(sim, 4),
                                               "threshold": cfg.minhash_threshold, **self._item_ev(i)}
        return None

    @staticmethod
    def _best(matched: dict[int, dict]) -> int | None:
        if not matched:
            return None
        return min(matched, key=lambda i: (-len(matched[i]), i))

    # -- public -----------------------------------------------------------------------------------------
    def check(self, record: Mapping[str, Any], spec: FieldSpec) -> tuple[str, dict[str, Any]] | None:
        """The first rule that fires on ``record`` as ``(reason, evidence)``, or ``None`` when it is clean."""
        for level in LEVELS:
            if level not in self.cfg.levels:
                continue
            hit = getattr(self, f"_{level}")(record, spec)
            if hit:
                reason, ev = hit
                return reason, {"level": level, **ev}
        return None

    def features(self, record: Mapping[str, Any], spec: FieldSpec) -> set[str]:
        """Content features of ``record`` for boilerplate counting (empty when the content level is off)."""
        if self.index is None:
            return set()
        return self.index.features(iter_texts(record, spec), self.cfg)

    def annotate(self, record: dict, spec: FieldSpec) -> dict:
        """Fill a kept record's ``decontam`` struct when its schema has one (the localization records do):
        ``repo_in_eval`` is true for a record of an eval repo kept because the repo level was off."""
        if "decontam" not in record:
            return record
        _, repo = self._record_repo(record, spec)
        return {**record, "decontam": {"repo_in_eval": repo in self.eval_repos, "instance_in_eval": False,
                                       "ngram_hits": 0, "passed": True}}

    def stage_fn(self, record_type: str, spec: FieldSpec | None = None):
        """A stage function ``record -> [record | Filtered]`` for :func:`swemine.pipelines.stage.apply_stage`."""
        spec = spec or spec_for(record_type)

        def judge(record: dict) -> Verdict:
            hit = self.check(record, spec)
            return Verdict(self.annotate(record, spec)) if hit is None else Verdict(record, *hit)

        return filter_stage(STAGE, record_type, judge)


def decontaminate(records: Iterable[dict], record_type: str, bench: BenchmarkSet, cfg: DecontamConfig | None = None,
                  canon: RepoCanon | None = None, spec: FieldSpec | None = None) -> tuple[list[dict], list[Filtered]]:
    """Plain-Python run over a list: boilerplate counted on ``records``, then every record checked."""
    records = list(records)
    spec = spec or spec_for(record_type)
    probe = Decontaminator(bench, cfg, canon)
    counts: dict[str, int] = {}
    docs: dict[str, set[str]] = {}
    for rec in records:
        docs.setdefault(doc_key(rec, spec), set()).update(probe.features(rec, spec))
    for feats in docs.values():
        for f in feats:
            counts[f] = counts.get(f, 0) + 1
    probe = probe.with_boilerplate(boilerplate_features(counts, len(docs), probe.cfg))
    fn = probe.stage_fn(record_type, spec)
    kept, dropped = [], []
    for rec in records:
        for out in fn(rec):
            (dropped if isinstance(out, Filtered) else kept).append(out)
    return kept, dropped

