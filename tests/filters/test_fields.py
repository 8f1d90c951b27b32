"""Field specs: text paths per record type, JSON-string containers, generic fallback, nested writes."""
from __future__ import annotations

import json

from swemine.filters.fields import first_value, iter_texts, set_path, spec_for


def test_paths_per_type_and_fallback():
    fim = {"record_id": "f", "prefix": "a", "middle": "b", "suffix": "",
           "messages": [{"role": "user", "content": "u"}, {"role": "assistant", "content": "m"}]}
    assert iter_texts(fim, spec_for("fim")) == [("prefix", "a"), ("middle", "b"), ("messages[0].content", "u"),
                                                ("messages[1].content", "m")]
    as_string = {"record_id": "f", "messages": json.dumps([{"role": "user", "content": "u"}])}
    assert iter_texts(as_string, spec_for("fim")) == [("messages", as_string["messages"])]
    odd = {"record_id": "x", "source_uri": "/p", "note": "hello", "nested": {"deep": ["a", "b"]}}
    assert iter_texts(odd, spec_for("mystery_type")) == [("nested.deep[0]", "a"), ("nested.deep[1]", "b"),
                                                         ("note", "hello")]
    assert first_value({"extra_json": json.dumps({"created_at": "2024-02-02"})}, spec_for("task").dates) == (
        "extra_json.created_at", "2024-02-02")


def test_set_path_copies_and_reserializes():
    rec = {"steps": [{"observation": "a"}, {"observation": "b"}], "messages": json.dumps([{"content": "x"}])}
    out = set_path(rec, "steps[1].observation", "B")
    assert out["steps"][1]["observation"] == "B" and rec["steps"][1]["observation"] == "b"
    out = set_path(rec, "messages[0].content", "X")
    assert json.loads(out["messages"]) == [{"content": "X"}]
