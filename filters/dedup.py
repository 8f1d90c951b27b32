"""Exact and near-duplicate removal: the plain-Python pieces the Beam stages (:mod:`swemine.pipelines.dedup_stage`) wire.

- **Exact**: records whose dedup text (configurable paths per record type, e.g. FIM by file content,
  trajectories by action sequence) has the same normalized content hash (:func:`swemine.filters.text.exact_key`).
- **Near**: MinHash over word ``shingle_size``-gram shingles of the dedup text → LSH band keys → records sharing
  a band key are candidate pairs → connected components → one record kept per component.

Tie-break everywhere: the smallest ``record_id`` is kept, the component id is its smallest member id; so the
result does not depend on input order or on the runner's parallelism. :func:`dedup_records` is the same
algorithm over a list, for tests and small jobs.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from swemine.corpora.records import Filtered, make_filtered
from swemine.filters.fields import FieldSpec, iter_texts, spec_for
from swemine.filters.minhash import band_keys, optimal_bands, text_signature
from swemine.filters.text import exact_key, words

EXACT_STAGE = "dedup_exact"
NEAR_STAGE = "dedup_near"


@dataclass(frozen=True)
class DedupConfig:
    """Which dedup passes run and the MinHash-LSH parameters (datatrove-like defaults: 5-word shingles)."""
    exact: bool = True
    near: bool = True
    shingle_size: int = 5
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
    """The text a record is deduplicated on: its ``dedup_key`` paths (or text paths) joined by newlines."""
    paths = spec.dedup_key or spec.texts
    return "\n".join(text for _, text in iter_texts(record, spec, paths))


def shingles(text: str, n: int) -> set[str]:
    """Word ``n``-gram shingles (a text shorter than ``n`` words is one shingle)."""
    ws = words(text)
    if len(ws) < n:
        return {" ".join(ws)} if ws else set()
    return {" ".join(ws[i:i + n]) for i in range(len(ws) - n + 1)}


def record_bands(record: Mapping[str, Any], spec: FieldSpec, cfg: DedupConfig) -> list[str]:
    """LSH band keys of a record (none for an empty dedup text: it cannot be a near duplicate)."""
    ws = words(dedup_text(record, spec))
    if not ws:
        return []
    bands, rows = cfg.band_shape()
    return band_keys(text_signature(ws, cfg.shingle_size, cfg.num_perm, cfg.seed), bands, rows)


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


def keep_one(records: Iterable[dict], stage: str, reason: str, record_type: str,
             evidence: Mapping[str, Any]) -> list[dict | Filtered]:
    """Keep the record with the smallest ``record_id``; the others become ``Filtered`` naming the kept one."""
    recs = sorted(records, key=lambda r: (r.get("record_id") or "", exact_key(repr(sorted(r.items())))))
    kept = recs[0]
    ev = {**evidence, "kept_record_id": kept.get("record_id"), "group_size": len(recs)}
    return [kept] + [make_filtered(stage, reason, r, record_type, ev) for r in recs[1:]]


def dedup_records(records: Iterable[dict], record_type: str, cfg: DedupConfig | None = None,
                  spec: FieldSpec | None = None) -> tuple[list[dict], list[Filtered]]:
    """Exact then near dedup over a list (the Beam stages' plain-Python twin); kept records sorted by id."""
    cfg = cfg or DedupConfig()
    spec = spec or spec_for(record_type)
    kept: list[dict] = list(records)
    dropped: list[Filtered] = []
    if cfg.exact:
        groups: dict[str, list[dict]] = {}
        for r in kept:
            groups.setdefault(exact_key(dedup_text(r, spec)), []).append(r)
        kept = []
        for key, group in groups.items():
            first, *rest = keep_one(group, EXACT_STAGE, "exact_duplicate", record_type,
                                    {"rule": "exact", "content_hash": key[:16]})
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


def near_evidence(cluster_id: str, cfg: DedupConfig) -> dict[str, Any]:
    """Evidence for a near-duplicate drop: the cluster and the LSH parameters that formed it."""
    bands, rows = cfg.band_shape()
    return {"rule": "minhash_lsh", "cluster_id": cluster_id, "threshold": cfg.threshold, "num_perm": cfg.num_perm,
            "bands": bands, "rows": rows, "shingle_size": cfg.shingle_size}
