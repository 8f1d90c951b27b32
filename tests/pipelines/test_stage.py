"""The stage adapter: routing, counters, exceptions as rejects, weighted and fan-out stages, the balance check."""
from __future__ import annotations

import json

import apache_beam as beam

from swemine.corpora.records import (
    FILTERED_SCHEMA,
    REJECT_SCHEMA,
    exception_reject,
    make_filtered,
    make_reject,
    reject_as_filtered,
)
from swemine.manifests.manifest import balance_problems
from swemine.manifests.shards import read_rows
from swemine.pipelines.engine.runner import Built, PipelineSpec, execute
from swemine.pipelines.engine.stage import apply_stage

SCHEMA = FILTERED_SCHEMA   # any schema with record_id + config_hash will do for the main output


def _row(i: int) -> dict:
    return {"record_id": f"r{i}", "stage": "", "reason": "", "record_type": "", "evidence_json": "",
            "record_json": "", "source_uri": f"u{i}", "source_locator": "", "source_sha256": "", "config_hash": ""}


def _one(i: int):
    """Per input: 0 → a reject, 1 → filtered, 2 → raises, else the record."""
    if i == 0:
        yield make_reject("one", "bad", "zero", uri="u0")
    elif i == 1:
        yield make_filtered("one", "odd", _row(1), "test")
    elif i == 2:
        raise KeyError("boom")
    else:
        yield _row(i)


def _many(group: list[int]):
    """A fan-out stage: one record per member; an empty group yields nothing."""
    for i in group:
        yield _row(100 + i)


def test_stage_routes_counts_and_balances(tmp_path):
    def build(p):
        main, rej, filt = apply_stage(p | "Ints" >> beam.Create([0, 1, 2, 3, 4]), "one", lambda: _one)
        groups = p | "Groups" >> beam.Create([[1, 2, 3], [], [4]])
        fan, _, _ = apply_stage(groups, "many", lambda: _many, fanout=True)
        weighted, _, _ = apply_stage(p | "G2" >> beam.Create([[1, 2], [3]]), "weighted", lambda: _many,
                                     in_weight=len)
        out = (main, fan, weighted) | beam.Flatten()
        return Built(outputs={"test/train": out}, rejects=[rej], filtered=[filt])

    spec = PipelineSpec(name="stage-test", config={}, outputs={"test/train": SCHEMA}, build=build, num_buckets=1)
    m = execute(spec, str(tmp_path / "o"))
    st = m["stages"]
    assert (st["one"]["in"], st["one"]["out"], st["one"]["rejected"], st["one"]["filtered"]) == (
        5, 2, {"bad": 1, "exception:KeyError": 1}, {"odd": 1})
    assert (st["many"]["in"], st["many"]["out"], st["many"]["info"]) == (3, 4, {"fanout": 1, "empty": 1})
    assert (st["weighted"]["in"], st["weighted"]["out"]) == (3, 3)     # counted per member, so it balances
    assert m["balance_problems"] == [] and m["stage_order"] == ["one", "many", "weighted"]
    rejects = read_rows(str(tmp_path / "o"), "rejects/rejects")
    assert sorted(r["reason"] for r in rejects) == ["bad", "exception:KeyError"]
    raised = next(r for r in rejects if r["reason"] == "exception:KeyError")
    assert raised["message"].startswith("'boom'\nTraceback (most recent call last):") and "raise KeyError" in (
        raised["message"]) and raised["excerpt"] == "2"
    assert {r["config_hash"] for r in rejects} == {m["config_hash"]}    # stamped once, at the writer
    assert set(REJECT_SCHEMA.names) <= set(rejects[0])
    kept = read_rows(str(tmp_path / "o"), "test/train")
    # r3, r4 from "one"; 101..104 from "many"; 101..103 from "weighted"
    assert sorted(r["record_id"] for r in kept) == ["r101", "r101", "r102", "r102", "r103", "r103", "r104", "r3",
                                                    "r4"]


def test_balance_problems():
    ok = {"in": 3, "out": 1, "rejected": {"a": 1}, "filtered": {"b": 1}, "info": {}}
    short = {"in": 3, "out": 1, "rejected": {}, "filtered": {}, "info": {}}
    fan_ok = {"in": 3, "out": 7, "rejected": {}, "filtered": {}, "info": {"fanout": 1}}
    fan_empty = {"in": 3, "out": 1, "rejected": {}, "filtered": {}, "info": {"fanout": 1, "empty": 2}}
    fan_lost = {"in": 3, "out": 1, "rejected": {}, "filtered": {}, "info": {"fanout": 1}}
    assert balance_problems({"a": ok, "b": fan_ok, "c": fan_empty}) == []
    assert balance_problems({"s": short, "f": fan_lost}) == ["s: in=3 != out+rejected+filtered=1",
                                                             "f: in=3 > out+rejected+filtered+empty=1"]


def test_a_filter_that_raised_is_a_filtered_row_of_the_record():
    rec = {"record_id": "r1", "source_uri": "a/b.json", "source_locator": "3", "source_sha256": "s"}
    row = reject_as_filtered(exception_reject("license", ValueError("no such license"), rec))
    assert list(row) == FILTERED_SCHEMA.names and (row["record_id"], row["stage"], row["reason"]) == (
        "r1", "license", "filter_error:exception:ValueError")
    assert (row["source_uri"], row["source_locator"], row["source_sha256"], row["record_type"]) == ("a/b.json", "3", "s", "")
    assert json.loads(row["evidence_json"]) == {"message": "no such license\nValueError: no such license\n"}
