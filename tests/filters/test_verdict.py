"""The one adapter from a filter's verdict to a stage result."""
from __future__ import annotations

import json

from swemine.filters.verdict import Verdict, filter_stage


def test_kept_and_removed_records():
    def judge(record):
        if record["n"] > 2:
            return Verdict({**record, "checked": True}, "too_big", {"n": record["n"], "limit": 2})
        return Verdict({**record, "checked": True})

    fn = filter_stage("size", "thing", judge)
    assert fn({"record_id": "a", "n": 1}) == [{"record_id": "a", "n": 1, "checked": True}]
    (f,) = fn({"record_id": "b", "n": 3, "source_uri": "u"})
    assert (f["record_id"], f["stage"], f["reason"], f["record_type"], f["source_uri"]) == ("b", "size", "too_big",
                                                                                         "thing", "u")
    assert json.loads(f["evidence_json"]) == {"n": 3, "limit": 2}
    assert json.loads(f["record_json"]) == {"record_id": "b", "n": 3, "source_uri": "u", "checked": True}
    assert Verdict({}).keep and not Verdict({}, "x").keep
