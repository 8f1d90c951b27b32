"""Beam stages for exact and near-duplicate removal (the algorithm lives in :mod:`swemine.filters.dedup`).

``Dedup(record_type, cfg, spec)`` maps a PCollection of records to ``(kept, filtered)``:

Only keys and small tuples are shuffled: a record stands in as its :func:`swemine.filters.dedup.copy_of`
``(id, normalized content hash, exact content hash)`` (the hashes only where another record bears its id); the decisions come back as a side input
``{(group key, copy): (kept, copies dropped, kept id, group size)}`` (groups of two or more only), and each
record is kept or dropped where it is. Byte-identical copies are interchangeable: when some of them are dropped
and one is kept, a combiner takes any one of them (at most one per worker crosses the shuffle) and the dropped
ones are written from it.

exact:  (normalized dedup-text hash, copy) → GroupByKey → keep the smallest copy per hash (a record without a
        key is a group of its own);
near:   (band key, id) per LSH band → GroupByKey → star edges from the smallest id per bucket → Distinct → all
        edges to one worker → connected components (union-find; the memory ceiling, as in datatrove's stage 3)
        → ``{id: (component, size)}`` side input → keep the records whose id is their component's id (the
        smallest member: the same tie-break as :func:`swemine.filters.dedup.keep_one`), and among records that
        share that id the smallest copy ((id, copy) → GroupByKey, as for exact).

Counters: ``dedup_exact.*`` and ``dedup_near.*`` (in / out / filtered.<reason>), balanced per stage, and
``info.dedup_key_empty`` on the first stage that runs: records kept because their key is empty or trivial.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import apache_beam as beam

from swemine.corpora.records import make_filtered
from swemine.filters.dedup import (
    EMPTY_KEY,
    EXACT_STAGE,
    NEAR_STAGE,
    DedupConfig,
    bucket_edges,
    connected_components,
    copy_decisions,
    copy_of,
    dedup_text,
    exact_group_key,
    near_evidence,
    record_bands,
    resolve_near,
)
from swemine.filters.fields import FieldSpec, spec_for
from swemine.pipelines.engine.stage import FILTERED, Counters, route

COPIES = "copies"


def _decide(counters: Counters, decision, record: dict, text, copy, evidence: dict, stage: str, reason: str,
            record_type: str, key=None):
    """One record's side of a :func:`swemine.filters.dedup.copy_decisions` entry (``None``: not in a group of
    two or more): kept ``(record, text, copy)``, ``Filtered``, or — a kept copy whose identical copies are
    dropped — ``((key, copy), (record, text))`` to :class:`_Copies`, which keeps one of them."""
    if decision is None:
        counters.inc("out")
        yield record, text, copy
        return
    kept, dropped, kept_id, size = decision
    if not kept:
        yield from route(counters, [make_filtered(stage, reason, record, record_type,
                                                  {**evidence, "kept_record_id": kept_id, "group_size": size})])
    elif dropped:
        yield beam.pvalue.TaggedOutput(COPIES, ((key, copy), (record, text)))
    else:
        counters.inc("out")
        yield record, text, copy


class AnyCopy(beam.CombineFn):
    """One of the values of a key: they are byte-identical copies, so which one does not matter."""

    def create_accumulator(self):
        return None

    def add_input(self, acc, value):
        return value if acc is None else acc

    def merge_accumulators(self, accs):
        return next((a for a in accs if a is not None), None)

    def extract_output(self, acc):
        return acc


class _Copies(beam.DoFn):
    """``((group key, copy), (record, text))`` of a kept copy → the record kept once and its dropped identical
    copies ``Filtered``, counted."""

    def __init__(self, stage: str, reason: str, record_type: str, evidence: Callable[[str], dict[str, Any]]):
        self.stage, self.reason, self.record_type, self.evidence = stage, reason, record_type, evidence

    def setup(self):
        self.counters = Counters(self.stage)

    def process(self, kv, decisions):
        (key, copy), (record, text) = kv
        _, dropped, kept_id, size = decisions[(key, copy)]
        ev = {**self.evidence(key), "kept_record_id": kept_id, "group_size": size}
        self.counters.inc("out")
        yield record, text, copy
        yield from route(self.counters, [make_filtered(self.stage, self.reason, record, self.record_type, ev)
                                         for _ in range(dropped)])


class _ExactKeep(beam.DoFn):
    """``(key, copy, record, text)`` with the exact decisions as a side input → :func:`_decide`, counted."""

    def __init__(self, record_type: str):
        self.record_type = record_type

    def setup(self):
        self.counters = Counters(EXACT_STAGE)

    def process(self, item, decisions):
        key, copy, record, text = item
        self.counters.inc("in")
        if key.startswith(EMPTY_KEY):
            self.counters.inc("info.dedup_key_empty")
        yield from _decide(self.counters, decisions.get((key, copy)), record, text, copy, _exact_evidence(key),
                           EXACT_STAGE, "exact_duplicate", self.record_type, key)


def _exact_evidence(key: str) -> dict[str, Any]:
    return {"rule": "exact", "content_hash": key[:16]}


def _components_with_sizes(edges):
    comp = connected_components(edges)
    sizes: dict[str, int] = {}
    for cid in comp.values():
        sizes[cid] = sizes.get(cid, 0) + 1
    return sorted((node, (cid, sizes[cid])) for node, cid in comp.items())


class _NearKeep(beam.DoFn):
    """``(record, text, copy)`` with the components and the per-id copy decisions as side inputs: a record whose
    id is not its component's id is dropped (:func:`swemine.filters.dedup.resolve_near`; the component id is
    the smallest member id, also the keep-one tie-break); the copies of a component's id → :func:`_decide`."""

    def __init__(self, record_type: str, cfg: DedupConfig):
        self.record_type, self.cfg = record_type, cfg

    def setup(self):
        self.counters = Counters(NEAR_STAGE)

    def process(self, item, comps, decisions):
        record, text, copy = item
        rid = copy[0]
        self.counters.inc("in")
        comp = comps.get(rid)
        if comp is not None and comp[0] != rid:
            yield from route(self.counters, resolve_near(rid, [record], comp, self.cfg, self.record_type))
            return
        yield from _decide(self.counters, decisions.get((rid, copy)), record, text, copy,
                           near_evidence(rid, self.cfg), NEAR_STAGE, "near_duplicate", self.record_type, rid)


def _decisions(label: str, keyed_copies):
    """``(group key, copy)`` pairs → ``{(group key, copy): decision}`` (:func:`swemine.filters.dedup.copy_decisions`,
    groups of two or more only), for a side input."""
    return (keyed_copies
            | f"{label}Group" >> beam.GroupByKey()
            | f"{label}Decide" >> beam.FlatMap(lambda kv: (((kv[0], c), d) for c, d in copy_decisions(kv[1]))))


def _keep_copies(label: str, copies, decisions, stage: str, reason: str, record_type: str, evidence):
    return (copies
            | f"{label}AnyCopy" >> beam.CombinePerKey(AnyCopy())
            | f"{label}CopyKeep" >> beam.ParDo(_Copies(stage, reason, record_type, evidence), decisions
                                                ).with_outputs(FILTERED, main="main"))


def _rid(record: dict) -> str:
    return record.get("record_id") or ""


def _shared_ids(pcoll):
    """``{id: count}`` of the ids more than one record bears, as a side input: only those records need content
    hashes in their copies."""
    return beam.pvalue.AsDict(pcoll
                              | "Ids" >> beam.Map(lambda r: (_rid(r), 1))
                              | "IdCount" >> beam.CombinePerKey(sum)
                              | "SharedIds" >> beam.Filter(lambda kv: kv[1] > 1))


class _Bands(beam.DoFn):
    """``(record, dedup text or None)`` → ``(band key, id)`` per LSH band; counts records without a key when no
    exact stage did."""

    def __init__(self, spec: FieldSpec, cfg: DedupConfig, count_empty: bool):
        self.spec, self.cfg, self.count_empty = spec, cfg, count_empty

    def setup(self):
        self.counters = Counters(NEAR_STAGE)

    def process(self, pair):
        record, text = pair[0], pair[1]
        keys = record_bands(record, self.spec, self.cfg, text)
        if not keys and self.count_empty:
            self.counters.inc("info.dedup_key_empty")
        for k in keys:
            yield k, record["record_id"]


class Dedup(beam.PTransform):
    """Exact then near-duplicate removal for one record type; returns ``(kept, filtered)`` (at least one pass on)."""

    def __init__(self, record_type: str, cfg: DedupConfig | None = None, spec: FieldSpec | None = None):
        super().__init__()
        self.record_type = record_type
        self.cfg = cfg or DedupConfig()
        self.spec = spec or spec_for(record_type)

    def expand(self, pcoll):
        cfg, spec, rtype = self.cfg, self.spec, self.record_type
        filtered = []
        if cfg.exact:                   # each record's dedup text is made once: the near pass reuses it
            def keyed(record, shared):
                text = dedup_text(record, spec)
                return (exact_group_key(record, spec, cfg, text), copy_of(record, _rid(record) in shared), record,
                        text if cfg.near else None)
            items = pcoll | "ExactKey" >> beam.Map(keyed, _shared_ids(pcoll))
            decisions = beam.pvalue.AsDict(_decisions("Exact", items | "ExactTuples" >> beam.Map(
                lambda t: (t[0], t[1]))))
            res = items | "ExactKeep" >> beam.ParDo(_ExactKeep(rtype), decisions).with_outputs(
                FILTERED, COPIES, main="main")
            copies = _keep_copies("Exact", res[COPIES], decisions, EXACT_STAGE, "exact_duplicate", rtype,
                                  _exact_evidence)
            triples = (res.main, copies.main) | "ExactKept" >> beam.Flatten()
            filtered = filtered + [res[FILTERED], copies[FILTERED]]
        else:
            triples = pcoll | "NoText" >> beam.Map(lambda r, shared: (r, None, copy_of(r, _rid(r) in shared)),
                                                   _shared_ids(pcoll))
        if cfg.near:
            bands = triples | "Bands" >> beam.ParDo(_Bands(spec, cfg, count_empty=not cfg.exact))
            edges = (bands
                     | "BandGroup" >> beam.GroupByKey()
                     | "Edges" >> beam.FlatMap(lambda kv: bucket_edges(kv[1]))
                     | "DistinctEdges" >> beam.Distinct())
            comps = beam.pvalue.AsDict(edges
                                       | "AllEdges" >> beam.combiners.ToList()
                                       | "Components" >> beam.FlatMap(_components_with_sizes))
            decisions = beam.pvalue.AsDict(_decisions("Id", triples | "IdTuples" >> beam.Map(
                lambda t: (t[2][0], t[2]))))
            res = triples | "NearKeep" >> beam.ParDo(_NearKeep(rtype, cfg), comps, decisions).with_outputs(
                FILTERED, COPIES, main="main")
            copies = _keep_copies("Near", res[COPIES], decisions, NEAR_STAGE, "near_duplicate", rtype,
                                  lambda rid: near_evidence(rid, cfg))
            triples = (res.main, copies.main) | "NearKept" >> beam.Flatten()
            filtered = filtered + [res[FILTERED], copies[FILTERED]]
        if not filtered:
            raise ValueError("Dedup needs exact and/or near enabled")
        kept = triples | "Records" >> beam.Map(lambda t: t[0])
        return kept, tuple(filtered) | "DedupFiltered" >> beam.Flatten()
