"""Beam stages for exact and near-duplicate removal (the algorithm lives in :mod:`swemine.filters.dedup`), each a
:class:`~swemine.pipelines.engine.stage.Decide` over a record's :func:`~swemine.filters.dedup.copy_of` ``(id,
normalized content hash, exact content hash)`` (the hashes only where another record bears its id): only keys and
copies are shuffled, and each record is kept or dropped where it is.

exact:  (normalized dedup-text hash, copy) → keep the smallest copy per hash (a record without a key is a group of
        its own);
near:   (band key, id) per LSH band → GroupByKey → star edges from the smallest id per bucket → Distinct → all
        edges to one worker → connected components (union-find; the memory ceiling, as in datatrove's stage 3)
        → ``{id: (component, size)}`` side input → (id, copy) → keep the records whose id is their component's id
        (the smallest member) and among them the smallest copy (:func:`swemine.filters.dedup.near_decisions`).

Counters: ``dedup_exact.*`` and ``dedup_near.*`` (in / out / filtered.<reason>), balanced per stage, and
``info.dedup_key_empty`` on the first stage that runs: records kept because their key is empty or trivial.
"""
from __future__ import annotations

import apache_beam as beam

from swemine.filters.dedup import (
    EMPTY_KEY,
    EXACT_STAGE,
    NEAR_STAGE,
    DedupConfig,
    bucket_edges,
    component_sizes,
    copy_decisions,
    copy_of,
    dedup_text,
    exact_evidence,
    exact_group_key,
    near_decisions,
    record_bands,
)
from swemine.filters.fields import FieldSpec, spec_for
from swemine.pipelines.engine.stage import Counters, Decide


def _rid(record: dict) -> str:
    return record.get("record_id") or ""


def _shared_ids(pcoll):
    """``{id: count}`` of the ids more than one record bears, as a side input: only those records need content
    hashes in their copies."""
    return beam.pvalue.AsDict(pcoll
                              | "Ids" >> beam.Map(lambda r: (_rid(r), 1))
                              | "IdCount" >> beam.CombinePerKey(sum)
                              | "SharedIds" >> beam.Filter(lambda kv: kv[1] > 1))


class _ExactKey(beam.DoFn):
    """A record → ``((exact key, copy), (record, dedup text or None, copy))``; counts records without a key. The
    text is kept for the near pass, so each record's dedup text is made once."""

    def __init__(self, spec: FieldSpec, cfg: DedupConfig):
        self.spec, self.cfg = spec, cfg

    def setup(self):
        self.counters = Counters(EXACT_STAGE)

    def process(self, record, shared):
        text = dedup_text(record, self.spec)
        key = exact_group_key(record, self.spec, self.cfg, text)
        if key.startswith(EMPTY_KEY):
            self.counters.inc("info.dedup_key_empty")
        copy = copy_of(record, _rid(record) in shared)
        yield (key, copy), (record, text if self.cfg.near else None, copy)


class _Bands(beam.DoFn):
    """``(record, dedup text or None, copy)`` → ``(band key, id)`` per LSH band; counts records without a key when
    no exact stage did."""

    def __init__(self, spec: FieldSpec, cfg: DedupConfig, count_empty: bool):
        self.spec, self.cfg, self.count_empty = spec, cfg, count_empty

    def setup(self):
        self.counters = Counters(NEAR_STAGE)

    def process(self, triple):
        record, text, _ = triple
        keys = record_bands(record, self.spec, self.cfg, text)
        if not keys and self.count_empty:
            self.counters.inc("info.dedup_key_empty")
        for k in keys:
            yield k, record["record_id"]


def _record(triple) -> dict:
    return triple[0]


class Dedup(beam.PTransform):
    """Exact then near-duplicate removal for one record type; returns ``(kept, filtered)`` (at least one pass on)."""

    def __init__(self, record_type: str, cfg: DedupConfig | None = None):
        super().__init__()
        self.record_type, self.cfg, self.spec = record_type, cfg or DedupConfig(), spec_for(record_type)

    def expand(self, pcoll):
        cfg, spec, rtype = self.cfg, self.spec, self.record_type
        if not (cfg.exact or cfg.near):
            raise ValueError("Dedup needs exact and/or near enabled")
        filtered = []
        if cfg.exact:
            triples, dropped = (pcoll | "ExactKey" >> beam.ParDo(_ExactKey(spec, cfg), _shared_ids(pcoll))
                                | "Exact" >> Decide(EXACT_STAGE, rtype, lambda key, copies: copy_decisions(
                                    copies, "exact_duplicate", exact_evidence(key)), record_of=_record))
            filtered.append(dropped)
        else:
            triples = pcoll | "NoText" >> beam.Map(lambda r, shared: (r, None, copy_of(r, _rid(r) in shared)),
                                                   _shared_ids(pcoll))
        if cfg.near:
            edges = (triples
                     | "Bands" >> beam.ParDo(_Bands(spec, cfg, count_empty=not cfg.exact))
                     | "BandGroup" >> beam.GroupByKey()
                     | "Edges" >> beam.FlatMap(lambda kv: bucket_edges(kv[1]))
                     | "DistinctEdges" >> beam.Distinct())
            comps = beam.pvalue.AsDict(edges
                                       | "AllEdges" >> beam.combiners.ToList()
                                       | "Components" >> beam.FlatMap(component_sizes))
            triples, dropped = (triples
                                | "IdCopies" >> beam.Map(lambda t: ((t[2][0], t[2]), t))
                                | "Near" >> Decide(NEAR_STAGE, rtype, lambda rid, copies, comps: near_decisions(
                                    rid, copies, comps, cfg), comps, record_of=_record))
            filtered.append(dropped)
        kept = triples | "Records" >> beam.Map(_record)
        return kept, tuple(filtered) | "DedupFiltered" >> beam.Flatten()
