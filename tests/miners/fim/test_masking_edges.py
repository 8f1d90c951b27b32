"""Masking rules on tiny files: body spans in the hole, the mask line's indentation, what each check refuses."""
from __future__ import annotations

import dataclasses

import pytest

from swemine.miners.fim.masking import MASK, FileText, MaskError, mask
from swemine.miners.fim.parse import FileParser

SRC = "def f(x):\n    y = x + 1\n    return y * 2\n\n\ndef g(z):\n    return z - 1\n"


def _functions(src):
    return FileParser()({"path": "n.py", "content": src}).functions


def test_group_hole_and_body_spans():
    f, g = _functions(SRC)
    m = mask(SRC, [g, f], with_masked_text=False)          # any order: sorted by line
    # the hole runs from f's body (after "def f(x):\n") to the end of g; each body located in it
    assert m.prefix == "def f(x):\n" and m.suffix == "" and m.middle == SRC[len("def f(x):\n"):]
    f_body, g_body = "    y = x + 1\n    return y * 2\n", "    return z - 1\n"
    g_at = m.middle.index(g_body)
    assert m.spans == [(0, len(f_body)), (g_at, g_at + len(g_body))]
    assert (m.masked_text, m.functions) == ("", [])
    full = mask(SRC, [f, g])
    assert full.masked_text == f"def f(x):\n    {MASK}\n\n\ndef g(z):\n    {MASK}\n"
    assert full.functions == ["def f(x):\n" + f_body, "def g(z):\n" + g_body]


def test_file_without_final_newline():
    src = "def f():\n    return 1"
    (h,) = _functions(src)
    m = mask(src, [h])
    assert (m.prefix, m.middle, m.suffix, m.spans) == ("def f():\n", "    return 1", "", [(0, 12)])
    assert m.masked_text == f"def f():\n    {MASK}" and m.functions == [src]


def test_file_starting_with_a_blank_line():
    src = "\ndef f():\n    return 1\n"
    (h,) = _functions(src)
    m = mask(src, [h])
    assert (m.prefix, m.middle, m.suffix) == ("\ndef f():\n", "    return 1\n", "")


def test_mask_line_takes_the_first_code_line_indentation():
    src = "@dec\ndef k(a):\n\n\tx = 1\n\treturn x\n"               # a blank first body line, tab indentation
    (k,) = _functions(src)
    m = mask(src, [k])
    assert m.masked_text == f"@dec\ndef k(a):\n\t{MASK}\n" and m.prefix == "@dec\ndef k(a):\n"   # decorator kept
    assert m.functions == ["def k(a):\n\n\tx = 1\n\treturn x\n"]


@pytest.mark.parametrize("change,reason", [
    ({"end_line": 8}, "span_out_of_file"),                 # SRC has 7 lines
    ({"body_line": 1}, "span_out_of_file"),                # a body that starts on the signature line ...
    ({"body_line": 0}, "span_out_of_file"),                # ... or before it
    ({"end_line": 7}, "span_mismatch"),                    # lines 1-7 are not the text hashed at parse time
])
def test_checks_refuse_a_drifted_target(change, reason):
    f, _ = _functions(SRC)
    with pytest.raises(MaskError) as err:
        mask(SRC, [dataclasses.replace(f, **change)])
    assert err.value.reason == reason


def test_no_hash_no_text_check_and_touching_targets():
    f, g = _functions(SRC)
    assert mask(SRC.replace("x + 1", "x + 9"), [dataclasses.replace(f, text_sha="")]).middle.startswith("    y = x + 9")
    # a target starting on the line after another's last line is fine; on that last line it overlaps
    assert mask(SRC, [f, dataclasses.replace(g, start_line=4, text_sha="")]).prefix == "def f(x):\n"
    with pytest.raises(MaskError) as err:
        mask(SRC, [f, dataclasses.replace(g, start_line=3, text_sha="")])
    assert err.value.reason == "overlapping_targets"


def test_offsets_after_a_line():
    # "ab\n" ends at 3; a last line without newline ends at the end of the text
    assert FileText("ab\ncd\n").offset_after(1) == 3 and FileText("ab\ncd").offset_after(2) == 5
