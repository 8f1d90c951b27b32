"""The thin Beam adapter around plain-Python stage functions (docs/architecture.md, rule 1): a stage function
yields records, ``Reject``s and ``Filtered`` records (:mod:`swemine.corpora.records`) for one record; they go to
the main, ``rejects`` and ``filtered`` outputs, counted as Beam metrics (``<stage>.in``, ``.out``,
``.rejected.<reason>``, ``.filtered.<reason>``). An exception of one record is a reject ``exception:<Type>``."""
from __future__ import annotations

import logging
import pickle
import time
from collections.abc import Callable, Iterable
from typing import Any

import apache_beam as beam
from apache_beam.metrics import Metrics

from swemine.corpora.records import Filtered, Info, Reject, exception_reject
from swemine.manifests.manifest import COUNTER_NAMESPACE
from swemine.runtime import paused_gc

REJECTS = "rejects"
FILTERED = "filtered"
StageFn = Callable[[Any], Iterable[Any]]

log = logging.getLogger("swemine")


def pack(record: Any) -> bytes:
    """``record`` as one opaque ``bytes`` element for a shuffle (pickle costs a fraction of Beam's element coder on
    nested dicts)."""
    return pickle.dumps(record, protocol=pickle.HIGHEST_PROTOCOL)


def unpack(blob: bytes) -> Any:
    """The record :func:`pack` packed."""
    return pickle.loads(blob)  # noqa: S301 - our own records, never input data


def gather(pcoll, name: str, key: Callable[[Any], Any]):
    """``(key, packed records)`` groups of ``pcoll``, labelled ``name``. The records stay packed until
    :func:`unpack_group`: Beam sizes a sample of elements by encoding them, and a group is a whole repository."""
    return pcoll | f"{name}Key" >> beam.Map(lambda r: (key(r), pack(r))) | name >> beam.GroupByKey()


def unpack_group(blobs: Iterable[bytes]) -> list:
    """The records of one :func:`gather` group, loaded with the cyclic collector paused (4x as fast on a
    repository's many small FIM structures)."""
    with paused_gc():
        return [unpack(b) for b in blobs]


class Counters:
    """Lazily created Beam counters named ``<stage>.<kind>[.<reason>]``."""

    def __init__(self, stage: str):
        self.stage = stage
        self._cache: dict[str, Any] = {}

    def inc(self, name: str, n: int = 1) -> None:
        counter = self._cache.get(name)
        if counter is None:
            counter = self._cache[name] = Metrics.counter(COUNTER_NAMESPACE, f"{self.stage}.{name}")
        counter.inc(n)


def route(counters: Counters, results: Iterable[Any]):
    """Send each result to its output (``Reject`` → ``rejects``, ``Filtered`` → ``filtered``, else main), counted;
    an ``Info`` only adds to ``info.<name>``; a ``TaggedOutput`` (a step's own side output) passes uncounted."""
    for result in results:
        if isinstance(result, beam.pvalue.TaggedOutput):
            yield result
        elif isinstance(result, Info):
            for name, n in result.items():
                counters.inc(f"info.{name}", n)
        elif isinstance(result, Reject):
            counters.inc(f"rejected.{result['reason']}")
            yield beam.pvalue.TaggedOutput(REJECTS, dict(result))
        elif isinstance(result, Filtered):
            counters.inc(f"filtered.{result['reason']}")
            yield beam.pvalue.TaggedOutput(FILTERED, dict(result))
        else:
            counters.inc("out")
            yield result


class StageDoFn(beam.DoFn):
    """Run the stage function ``factory`` builds in ``setup()`` (it may hold unpicklable resources). A ``fanout``
    stage may emit several results per input (it balances with ``info.empty``, the inputs that yielded nothing:
    :func:`swemine.manifests.manifest.balance_problems`); ``in_weight`` counts an element as that many inputs."""

    def __init__(self, stage: str, factory: Callable[[], StageFn], *, fanout: bool = False,
                 progress_every: int = 0, in_weight: Callable[[Any], int] | None = None):
        self.stage = stage
        self.factory = factory
        self.fanout = fanout
        self.progress_every = progress_every
        self.in_weight = in_weight
        self._fn: StageFn | None = None

    def setup(self):
        self._fn = self.factory()
        self._counters = Counters(self.stage)
        self._seen = 0
        self._t0 = time.time()

    def process(self, element):
        c = self._counters
        c.inc("in", self.in_weight(element) if self.in_weight else 1)
        if self.fanout and self._seen == 0:
            c.inc("info.fanout")
        self._seen += 1
        if self.progress_every and self._seen % self.progress_every == 0:
            log.info("%s: %d inputs in %.1fs", self.stage, self._seen, time.time() - self._t0)
        try:
            produced = False
            for result in route(c, self._fn(element)):
                produced = True
                yield result
            if self.fanout and not produced:
                c.inc("info.empty")
        except Exception as exc:  # noqa: BLE001 - any failure of one record becomes a counted reject
            reject = exception_reject(self.stage, exc, element)
            c.inc(f"rejected.{reject['reason']}")
            yield beam.pvalue.TaggedOutput(REJECTS, dict(reject))


def apply_stage(pcoll, stage: str, factory: Callable[[], StageFn], *, fanout: bool = False,
                progress_every: int = 0, in_weight: Callable[[Any], int] | None = None):
    """Apply a stage; returns ``(main, rejects, filtered)`` PCollections."""
    res = pcoll | stage >> beam.ParDo(StageDoFn(stage, factory, fanout=fanout, progress_every=progress_every,
                                                in_weight=in_weight)
                                      ).with_outputs(REJECTS, FILTERED, main="main")
    return res.main, res[REJECTS], res[FILTERED]
