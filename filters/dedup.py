"""Exact and near-duplicate removal: the plain-Python pieces the Beam stages (:mod:`swemine.pipelines.steps.dedup_stage`) wire.

- **Exact**: records whose dedup text (configurable paths per record type, e.g. FIM by file content,
  trajectories by what the agent did: every step's tool name, arguments and action text, whatever the reader)
  has the same normalized content hash (:func:`swemine.filters.text.exact_key`).
- **Near**: MinHash over word ``shingle_size``-gram shingles of the dedup text → LSH band keys → records sharing
  a band key are candidate pairs → connected components → one record kept per component.

A record whose dedup text has fewer than ``min_key_words`` words (an empty or trivial key: a trajectory with no
action, a file of a few tokens) is never a duplicate: it is kept and counted as ``dedup_key_empty``, so records
that merely lack the key's fields are not collapsed into one hash.

Tie-break everywhere: the smallest ``record_id`` is kept, the component id is its smallest member id; so the
result does not depend on input order or on the runner's parallelism. :func:`dedup_records` is the same
algorithm over a list, for tests and small jobs.
"""
from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from swemine.corpora.records import Filtered, make_filtered
from swemine.filters.fields import FieldSpec, get_path, iter_texts, spec_for
from swemine.filters.minhash import band_keys, optimal_bands, text_signature
from swemine.filters.text import collapse_ws, exact_key, has_words, words

EXACT_STAGE = "dedup_exact"
NEAR_STAGE = "dedup_near"
EMPTY_KEY = "empty:"


@dataclass(frozen=True)
class DedupConfig:
    """Which dedup passes run and the MinHash-LSH parameters (datatrove-like defaults: 5-word shingles)."""
    exact: bool = True
    near: bool = True
    shingle_size: int = 5
    min_key_words: int = 5    # a shorter dedup text is no key: the record is never a duplicate
    num_perm: int = 128
    threshold: float = 0.8
    bands: int = 0            # 0: derived from threshold and num_perm
    rows: int = 0
    seed: int = 42

    def band_shape(self) -> tuple[int, int]:
        if self.bands and self.rows:
            return self.bands, self.rows
        return optimal_bands(self.threshold, self.num_perm)


def dedup_text(record: Mapping[str, Any], spec: FieldSpec) -> str:
    """The text a record is deduplicated on: its ``dedup_key`` values joined by NUL ("" when the record has
    none of them); a spec without a dedup key uses its text paths (every string field for an unknown type)."""
    if not spec.dedup_key:
        return "\n".join(text for _, text in iter_texts(record, spec))
    # NUL between values: not whitespace, so where one action ends and the next begins survives normalization
    return "\x00".join(collapse_ws(v) for path in spec.dedup_key for _, v in get_path(record, path)
                       if isinstance(v, str) and v)


def has_key(text: str, min_words: int) -> bool:
    """A dedup text long enough to identify a record (at least ``min_words`` words)."""
    return has_words(text, min_words)


def shingles(text: str, n: int) -> set[str]:
    """Word ``n``-gram shingles (a text shorter than ``n`` words is one shingle)."""
    ws = words(text)
    if len(ws) < n:
        return {" ".join(ws)} if ws else set()
    return {" ".join(ws[i:i + n]) for i in range(len(ws) - n + 1)}


def exact_group_key(record: Mapping[str, Any], spec: FieldSpec, cfg: DedupConfig, text: str | None = None) -> str:
    """The exact-dedup group of a record: its normalized content hash, or ``EMPTY_KEY`` + its id when it has no
    key (a group of its own). ``text``: its :func:`dedup_text`, when already made."""
    text = dedup_text(record, spec) if text is None else text
    return exact_key(text) if has_key(text, cfg.min_key_words) else EMPTY_KEY + str(record.get("record_id") or "")


def record_bands(record: Mapping[str, Any], spec: FieldSpec, cfg: DedupConfig, text: str | None = None) -> list[str]:
    """LSH band keys of a record (none without a key: it cannot be a near duplicate). ``text``: its
    :func:`dedup_text`, when already made."""
    text = dedup_text(record, spec) if text is None else text
    if not has_key(text, cfg.min_key_words):
        return []
    bands, rows = cfg.band_shape()
    return band_keys(text_signature(words(text), cfg.shingle_size, cfg.num_perm, cfg.seed), bands, rows)


def bucket_edges(ids: Iterable[str]) -> list[tuple[str, str]]:
    """Candidate pairs of one LSH bucket as a star from its smallest id (enough for connected components)."""
    ids = sorted(set(ids))
    return [(ids[0], other) for other in ids[1:]]


def connected_components(edges: Iterable[tuple[str, str]]) -> dict[str, str]:
    """``{node: component id}`` where the component id is the smallest node of the component."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        root = x
        while parent.setdefault(root, root) != root:
            root = parent[root]
        while parent[x] != root:
            parent[x], x = root, parent[x]
        return root

    for a, b in edges:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    return {node: find(node) for node in parent}


def component_sizes(edges: Iterable[tuple[str, str]]) -> list[tuple[str, tuple[str, int]]]:
    """``(node, (component id, component size))`` for every node of ``edges``, sorted (:func:`connected_components`)."""
    comp = connected_components(edges)
    sizes = Counter(comp.values())
    return sorted((node, (cid, sizes[cid])) for node, cid in comp.items())


def keep_one(records: Iterable[dict], stage: str, reason: str, record_type: str,
             evidence: Mapping[str, Any]) -> list[dict | Filtered]:
    """Keep the record with the smallest ``record_id``; the others become ``Filtered`` naming the kept one. Copies
    that share an id are ordered by a hash of their content, which is taken only for them."""
    recs = sorted(records, key=lambda r: r.get("record_id") or "")
    ids = [r.get("record_id") or "" for r in recs]
    if len(set(ids)) < len(ids):
        recs.sort(key=lambda r: (r.get("record_id") or "", exact_key(repr(sorted(r.items())))))
    kept = recs[0]
    ev = {**evidence, "kept_record_id": kept.get("record_id"), "group_size": len(recs)}
    return [kept] + [make_filtered(stage, reason, r, record_type, ev) for r in recs[1:]]


Copy = tuple[str, str, str]
"""A record's stand-in in a shuffle: (record id, normalized content hash, exact content hash)."""
Outcome = tuple[str, dict[str, Any]] | None
"""A copy's fate: ``None`` (kept), or ``(reason, evidence)`` of its ``Filtered`` row."""


def copy_of(record: Mapping[str, Any], shared: bool = True) -> Copy:
    """The :data:`Copy` of a record. The normalized hash is :func:`keep_one`'s tie-break between records that
    share an id; the exact one tells byte-identical copies (interchangeable: which one is kept cannot change the
    output) from records that merely share an id. A record whose id no other record bears (``shared=False``)
    needs neither: ``(id, "", "")``."""
    if not shared:
        return record.get("record_id") or "", "", ""
    text = repr(sorted(record.items()))
    return record.get("record_id") or "", exact_key(text), hashlib.sha256(text.encode("utf-8")).hexdigest()


def copy_decisions(copies: Iterable[Copy], reason: str, evidence: Mapping[str, Any]
                   ) -> list[tuple[Copy, tuple[Outcome, ...]]]:
    """:func:`keep_one` over the :data:`Copy` tuples of one group: each distinct copy of a group of two or more,
    with one outcome per copy of it: ``None`` for the one copy of the smallest that is kept, ``(reason, evidence
    naming the kept id and the group size)`` for the others."""
    copies = sorted(copies)
    if len(copies) < 2:
        return []
    kept = copies[0]
    drop = (reason, {**evidence, "kept_record_id": kept[0], "group_size": len(copies)})
    return [(c, (None,) * (c == kept) + (drop,) * (n - (c == kept))) for c, n in sorted(Counter(copies).items())]


def near_decisions(record_id: str, copies: Iterable[Copy], components: Mapping[str, tuple[str, int]],
                   cfg: DedupConfig) -> list[tuple[Copy, tuple[Outcome, ...]]]:
    """The near-dup outcomes of the copies of one record id, given ``{id: (component id, size)}`` (no entry: a
    singleton). The component id is the smallest member id, so the record whose id it is wins (:func:`keep_one`
    among its copies); every other member is dropped naming the kept id."""
    cid, size = components.get(record_id, (record_id, 1))
    if record_id == cid:
        return copy_decisions(copies, "near_duplicate", near_evidence(record_id, cfg))
    drop = ("near_duplicate", {**near_evidence(cid, cfg), "kept_record_id": cid, "group_size": size})
    return [(c, (drop,) * n) for c, n in sorted(Counter(copies).items())]


def dedup_records(records: Iterable[dict], record_type: str, cfg: DedupConfig | None = None,
                  spec: FieldSpec | None = None, stats: dict[str, int] | None = None
                  ) -> tuple[list[dict], list[Filtered]]:
    """Exact then near dedup over a list (the Beam stages' plain-Python twin); kept records sorted by id.
    ``stats`` (when given) receives ``dedup_key_empty``: the records kept because they have no key."""
    cfg = cfg or DedupConfig()
    spec = spec or spec_for(record_type)
    kept: list[dict] = list(records)
    dropped: list[Filtered] = []
    if stats is not None:
        stats["dedup_key_empty"] = sum(not has_key(dedup_text(r, spec), cfg.min_key_words) for r in kept)
    if cfg.exact:
        groups: dict[str, list[dict]] = {}
        for r in kept:
            groups.setdefault(exact_group_key(r, spec, cfg), []).append(r)
        kept = []
        for key, group in groups.items():
            first, *rest = keep_one(group, EXACT_STAGE, "exact_duplicate", record_type, exact_evidence(key))
            kept.append(first)
            dropped.extend(rest)
    if cfg.near:
        buckets: dict[str, list[str]] = {}
        for r in kept:
            for key in record_bands(r, spec, cfg):
                buckets.setdefault(key, []).append(r["record_id"])
        comp = connected_components(e for ids in buckets.values() for e in bucket_edges(ids))
        clusters: dict[str, list[dict]] = {}
        for r in kept:
            clusters.setdefault(comp.get(r["record_id"], r["record_id"]), []).append(r)
        kept = []
        for cid, group in clusters.items():
            first, *rest = keep_one(group, NEAR_STAGE, "near_duplicate", record_type,
                                    near_evidence(cid, cfg))
            kept.append(first)
            dropped.extend(rest)
    return sorted(kept, key=lambda r: r["record_id"]), dropped


def exact_evidence(key: str) -> dict[str, Any]:
    """Evidence for an exact-duplicate drop: the group's content hash."""
    return {"rule": "exact", "content_hash": key[:16]}


def near_evidence(cluster_id: str, cfg: DedupConfig) -> dict[str, Any]:
    """Evidence for a near-duplicate drop: the cluster and the LSH parameters that formed it."""
    bands, rows = cfg.band_shape()
    return {"rule": "minhash_lsh", "cluster_id": cluster_id, "threshold": cfg.threshold, "num_perm": cfg.num_perm,
            "bands": bands, "rows": rows, "shingle_size": cfg.shingle_size}
