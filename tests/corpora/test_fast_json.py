"""orjson parses what it parses exactly as ``json.loads`` does; everything else still goes through ``json``.

The oracle in every test is ``json.loads`` itself (the decoder the reader used before orjson), applied to the
same bytes, after the lone-surrogate repair where the text has one."""
from __future__ import annotations

import json
import math

import pytest

from swemine.corpora.inputs import _SLOW, _fast_loads, expand_inputs, iter_documents, read_bytes, repair_surrogates
from swemine.corpora.records import Reject

#: Texts where orjson alone would differ from json (big integers become floats) or refuses (json decides).
TRICKY = [
    '{"n": 18446744073709551616}',                # past 64 bits: orjson would give a float
    '{"n": -9223372036854775809}',
    '{"n": 1234567890123456789012345}',
    '{"f": NaN, "g": Infinity, "h": -Infinity}',  # not JSON, but json.loads accepts them
    '{"f": 1E400}',                               # overflows to inf in json
    '{"s": "\\ud800 lone", "t": "\\udc00\\ud800"}',  # lone surrogate escapes: repaired, then json
    '{"a": 1, "b": 2, "a": 3}',                   # duplicate key: the last value, the first position
    '{"e": "\\ud83d\\ude00", "z": -0, "y": -0.0, "x": 0.1, "w": 1e-320, "v": 9223372036854775807}',
    '[{"id": 1}, {"id": 2}]',
]


def _json_oracle(text: str):
    fixed, repaired = repair_surrogates(text)
    return json.loads(fixed), repaired


def _same(a, b) -> bool:
    """Equal including types and float signs / NaN (``==`` would call ``1 == 1.0`` and ``-0.0 == 0.0`` equal)."""
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


@pytest.mark.parametrize("text", TRICKY)
@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
def test_tricky_documents_decode_as_json_loads_does(tmp_path, text, suffix):
    want, repaired = _json_oracle(text)
    out = list(iter_documents(str(tmp_path / f"x{suffix}"), (text + "\n").encode(), split_lists=False))
    assert len(out) == 1 and not isinstance(out[0], Reject)
    src, doc = out[0]
    assert _same(doc, want) and src.repaired == repaired


def test_big_integer_stays_an_exact_int():
    assert _fast_loads(b'{"n": 18446744073709551616}') is _SLOW
    assert _fast_loads(b'{"n": 123456789012345678}') == {"n": 123456789012345678}   # 18 digits: orjson's int


@pytest.mark.parametrize("raw", [b'"\xed\xa0\x80"', b'"\xff"', b"\xef\xbb\xbf{}", b"{\"a\": 1,}", b'"a\x01b"',
                                 b"[" * 1025 + b"]" * 1025])
def test_what_orjson_refuses_is_left_to_json(raw):
    # invalid UTF-8 (a UTF-8 encoded surrogate, a stray byte), a BOM, a trailing comma, a control character,
    # nesting past orjson's 1024 levels: json decides the document or the reject
    assert _fast_loads(raw) is _SLOW


def test_corpus_files_parse_the_same_with_orjson(corpora_dir):
    checked = 0
    for unit in expand_inputs([str(corpora_dir / "swe-agent"), str(corpora_dir / "openhands")]):
        if unit.kind != "file" or not unit.uri.endswith((".json", ".traj", ".jsonl")):
            continue
        data = read_bytes(unit.uri)
        texts = data.splitlines() if unit.uri.endswith(".jsonl") else [data]
        for raw in texts:
            fast = _fast_loads(raw)
            if fast is not _SLOW:
                assert _same(fast, _json_oracle(raw.decode("utf-8"))[0]), unit.uri
                checked += 1
    assert checked > 50
