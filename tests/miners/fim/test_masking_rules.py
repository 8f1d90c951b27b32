"""Masking at its edges: the last line of a file with and without a final newline, a file opening with a blank
line, targets that touch, a changed span whatever its hash, bodies that open with a blank line, mixed line
endings, line numbers past the small-int cache, and the split check itself. Each expected value is written out
from the rule in the module docstring (the hole runs from the line after the signature through the target's
last line; the mask line takes the body's indentation)."""
import dataclasses

import pytest

from swemine.miners.fim.masking import MASK, MaskError, _splits, mask
from swemine.miners.fim.parse import FileParser

TWO = "def f(x):\n    y = x + 1\n    return y * 2\n\n\ndef g(z):\n    return z - 1\n"


def _functions(src: str):
    return FileParser()({"path": "m.py", "content": src}).functions


@pytest.mark.parametrize("src", [TWO, TWO[:-1]])
def test_a_target_on_the_last_line_masks_with_or_without_a_final_newline(src):
    _, g = _functions(src)
    m = mask(src, [g])
    # g is lines 6-7: the hole is line 7 with its newline when the file has one
    assert (m.prefix, m.middle, m.suffix) == (src[:src.index("    return z")], src[src.index("    return z"):], "")
    assert m.masked_text.endswith(f"def g(z):\n    {MASK}" + ("\n" if src.endswith("\n") else ""))
    assert m.functions == [src[src.index("def g"):]]


def test_a_target_past_the_last_line_or_with_its_body_on_the_signature_line_is_refused():
    f, g = _functions(TWO)
    for bad in (dataclasses.replace(g, end_line=8, text_sha=""),           # TWO has 7 lines (+ the final newline)
                dataclasses.replace(f, body_line=1, text_sha="")):         # body on the signature line
        with pytest.raises(MaskError) as err:
            mask(TWO, [bad])
        assert err.value.reason == "span_out_of_file"
    assert mask(TWO, [dataclasses.replace(g, text_sha="")]).middle == "    return z - 1\n"   # line 7 itself is in


@pytest.mark.parametrize("sha", ["0" * 40, "f" * 40])
def test_a_changed_span_is_refused_whatever_its_hash_sorts_as(sha):
    f, _ = _functions(TWO)
    with pytest.raises(MaskError) as err:
        mask(TWO, [dataclasses.replace(f, text_sha=sha)])
    assert err.value.reason == "span_mismatch"


def test_targets_that_share_a_line_overlap():
    f, g = _functions(TWO)
    touching = dataclasses.replace(g, start_line=3, text_sha="")              # starts on f's last line
    with pytest.raises(MaskError) as err:
        mask(TWO, [f, touching])
    assert err.value.reason == "overlapping_targets"


def test_a_file_opening_with_a_blank_line_and_a_def_on_line_2():
    src = "\n" + TWO
    f, _ = _functions(src)
    assert (f.start_line, f.sig_end_line) == (2, 2)
    m = mask(src, [f])
    assert m.prefix == "\ndef f(x):\n" and m.middle == "    y = x + 1\n    return y * 2\n"
    assert m.functions == ["def f(x):\n    y = x + 1\n    return y * 2\n"]


def test_the_first_function_of_the_file_is_cut_from_offset_zero():
    f, g = _functions(TWO)
    assert mask(TWO, [f]).functions == ["def f(x):\n    y = x + 1\n    return y * 2\n"]
    assert mask(TWO, [f, g]).functions[1] == "def g(z):\n    return z - 1\n"


def test_the_mask_line_takes_the_indentation_of_the_first_non_blank_body_line():
    src = "def f(x):\n\n        y = x\n        return y\n"
    (f,) = _functions(src)
    assert mask(src, [f]).masked_text == f"def f(x):\n        {MASK}\n"


def test_the_mask_line_ends_like_the_last_body_line():
    # a file whose line endings were mixed by an editor: the last body line is CRLF, the first is not
    src = "def f(x):\n    y = x\n    return y\r\n"
    (f,) = _functions(src)
    assert mask(src, [f]).masked_text == f"def f(x):\n    {MASK}\r\n"
    src = "def f(x):\n    y = x\r\n    return y\n"             # and the other way round
    (f,) = _functions(src)
    assert mask(src, [f]).masked_text == f"def f(x):\n    {MASK}\n"


def test_line_numbers_past_256_compare_by_value():
    src = "x = 0\n" * 300 + TWO
    f, g = _functions(src)
    assert (f.start_line, g.end_line) == (301, 307)
    m = mask(src, [f, g])
    assert m.prefix + m.middle + m.suffix == src and m.prefix.count("\n") == 301


def test_splits_needs_all_three_parts_in_place():
    assert _splits("abc", "a", "b", "c")
    assert not _splits("abc", "a", "x", "c")          # right lengths, prefix and suffix, wrong middle
    assert not _splits("abc", "x", "b", "c")          # wrong prefix
    assert not _splits("abc", "a", "b", "x")          # wrong suffix
    assert not _splits("abc", "a", "b", "cd")         # one character too many
    assert not _splits("abc", "a", "b", "")           # one too few
