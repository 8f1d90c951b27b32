"""The thin Beam adapters around plain Python (docs/architecture.md, rule 1). A stage function (:func:`apply_stage`)
yields records, ``Reject``s and ``Filtered`` records (:mod:`swemine.corpora.records`) for one record; a group
decision (:class:`Decide`) keeps or drops records by what a function decides over their groups' small stand-ins.
Results go to the main, ``rejects`` and ``filtered`` outputs, counted as Beam metrics (``<stage>.in``, ``.out``,
``.rejected.<reason>``, ``.filtered.<reason>``). An exception of one record is a reject ``exception:<Type>``."""
from __future__ import annotations

import logging
import pickle
import time
from collections.abc import Callable, Iterable
from typing import Any

import apache_beam as beam
from apache_beam.metrics import Metrics

from swemine.corpora.records import Filtered, Info, Reject, exception_reject, make_filtered
from swemine.manifests.manifest import COUNTER_NAMESPACE
from swemine.runtime import paused_gc

REJECTS = "rejects"
FILTERED = "filtered"
COPIES = "copies"
StageFn = Callable[..., Iterable[Any]]

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

    def process(self, element, **side):
        c = self._counters
        c.inc("in", self.in_weight(element) if self.in_weight else 1)
        if self.fanout and self._seen == 0:
            c.inc("info.fanout")
        self._seen += 1
        if self.progress_every and self._seen % self.progress_every == 0:
            log.info("%s: %d inputs in %.1fs", self.stage, self._seen, time.time() - self._t0)
        try:
            produced = False
            for result in route(c, self._fn(element, **side)):
                produced = True
                yield result
            if self.fanout and not produced:
                c.inc("info.empty")
        except Exception as exc:  # noqa: BLE001 - any failure of one record becomes a counted reject
            reject = exception_reject(self.stage, exc, element)
            c.inc(f"rejected.{reject['reason']}")
            yield beam.pvalue.TaggedOutput(REJECTS, dict(reject))


def apply_stage(pcoll, stage: str, factory: Callable[[], StageFn], *, fanout: bool = False,
                progress_every: int = 0, in_weight: Callable[[Any], int] | None = None, **side):
    """Apply a stage (its function gets the side inputs ``side`` as keyword arguments); returns ``(main, rejects,
    filtered)`` PCollections."""
    res = pcoll | stage >> beam.ParDo(StageDoFn(stage, factory, fanout=fanout, progress_every=progress_every,
                                                in_weight=in_weight), **side
                                      ).with_outputs(REJECTS, FILTERED, main="main")
    return res.main, res[REJECTS], res[FILTERED]


class AnyCopy(beam.CombineFn):
    """One of the values of a key: they are identical copies, so which one does not matter."""

    def create_accumulator(self):
        return None

    def add_input(self, acc, value):
        return value if acc is None else acc

    def merge_accumulators(self, accs):
        return next((a for a in accs if a is not None), None)

    def extract_output(self, acc):
        return acc


class _Apply(beam.DoFn):
    """``(key, payload)`` + the decisions → the payload kept or ``Filtered`` as its outcome says, counted; a key
    whose copies' outcomes differ goes on ``copies``. ``copies=True``: the one copy of such a key takes them all."""

    def __init__(self, stage: str, record_type: str, record_of: Callable[[Any], dict], copies: bool = False):
        self.stage, self.record_type, self.record_of, self.copies = stage, record_type, record_of, copies

    def setup(self):
        self.counters = Counters(self.stage)

    def process(self, item, decisions):
        key, payload = item
        outcomes = decisions.get(key, (None,))
        if not self.copies:
            self.counters.inc("in")
            if any(o != outcomes[0] for o in outcomes):
                yield beam.pvalue.TaggedOutput(COPIES, item)
                return
            outcomes = outcomes[:1]
        yield from route(self.counters, [payload if o is None else make_filtered(
            self.stage, o[0], self.record_of(payload), self.record_type, o[1]) for o in outcomes])


class Decide(beam.PTransform):
    """Stage ``stage`` over ``((group, stand-in), payload)`` items → ``(kept payloads, filtered)``. Only the keys
    are grouped: ``decide(group, stand-ins, *side)`` (plain Python) returns ``(stand-in, outcomes)`` for the
    stand-ins not simply kept, one outcome per copy (``None``: kept; ``(reason, evidence)``: a ``Filtered`` row of
    ``record_of(payload)``). The decisions come back as a side input and each payload is kept or dropped where it
    is; the copies of a stand-in whose outcomes differ, identical records, meet in a combiner."""

    def __init__(self, stage: str, record_type: str, decide: Callable[..., Iterable[tuple[Any, tuple]]], *side,
                 record_of: Callable[[Any], dict] = lambda payload: payload):
        super().__init__()
        self.stage, self.record_type, self.decide, self.side, self.record_of = stage, record_type, decide, side, record_of

    def expand(self, items):
        decide, apply = self.decide, (self.stage, self.record_type, self.record_of)
        decisions = beam.pvalue.AsDict(
            items | "Keys" >> beam.Keys() | "Group" >> beam.GroupByKey()
            | "Decide" >> beam.FlatMap(lambda kv, *side: (((kv[0], s), o) for s, o in decide(kv[0], kv[1], *side)),
                                       *self.side))
        res = items | "Apply" >> beam.ParDo(_Apply(*apply), decisions).with_outputs(FILTERED, COPIES, main="main")
        copies = (res[COPIES]
                  | "AnyCopy" >> beam.CombinePerKey(AnyCopy())
                  | "ApplyCopies" >> beam.ParDo(_Apply(*apply, copies=True), decisions).with_outputs(FILTERED, main="main"))
        return ((res.main, copies.main) | "Kept" >> beam.Flatten(),
                (res[FILTERED], copies[FILTERED]) | "Dropped" >> beam.Flatten())
