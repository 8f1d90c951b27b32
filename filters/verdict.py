"""What every filter returns for one record, and the one adapter that turns it into a stage result.

A filter's judge maps a record to a :class:`Verdict`: the record to pass on (possibly scrubbed or annotated)
and, when it is removed, the rule (``reason``) and the ``evidence`` that matched. :func:`filter_stage` makes the
stage function the Beam adapter runs: kept records go on, removed ones become ``Filtered`` records.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from swemine.corpora.records import Filtered, make_filtered


class Verdict(NamedTuple):
    record: dict
    reason: str = ""                                # "" keeps the record
    evidence: Mapping[str, Any] | None = None

    @property
    def keep(self) -> bool:
        return not self.reason


def filter_stage(stage: str, record_type: str, judge: Callable[..., Verdict]):
    """A stage function ``record -> [record | Filtered]`` from a judge (extra arguments go to the judge)."""
    def fn(record: dict, *args: Any) -> list[dict | Filtered]:
        v = judge(record, *args)
        if v.keep:
            return [v.record]
        return [make_filtered(stage, v.reason, v.record, record_type, v.evidence)]
    return fn
