"""Raw FIM layouts pinned per family against the published forms, and special-token strings in content.

Published forms (written out by hand here, not built with the code under test):
- Qwen2.5-Coder README: ``<|fim_prefix|>{pre}<|fim_suffix|>{suf}<|fim_middle|>{mid}`` and the repo-level
  ``<|repo_name|>{name}\\n<|file_sep|>{path}\\n{code}\\n…<|file_sep|>{path}\\n<|fim_prefix|>…``;
- StarCoder2 paper §5.1: ``<repo_name>reponame<file_sep>filepath0\\ncode0<file_sep><fim_prefix>filepath1\\n
  code1_pre<fim_suffix>code1_suf<fim_middle>code1_mid…<|endoftext|>``;
- DeepSeek-Coder: ``<｜fim▁begin｜>{pre}<｜fim▁hole｜>{suf}<｜fim▁end｜>{mid}`` (full-width bars), no repo tokens.
"""
import pytest

from swemine.miners.fim import formats
from swemine.miners.fim.formats import FAMILIES, layout, render


def _text(fmt, family, **kw):
    return render(layout(fmt, family, "PRE", "MID", "SUF", **kw))


def test_qwen_layouts():
    assert _text("psm", "qwen2.5-coder") == "<|fim_prefix|>PRE<|fim_suffix|>SUF<|fim_middle|>MID<|endoftext|>"
    assert _text("spm", "qwen2.5-coder") == "<|fim_prefix|><|fim_suffix|>SUF<|fim_middle|>PREMID<|endoftext|>"
    assert _text("repo", "qwen2.5-coder", repo="o/r", path="b.py", context=[("a.py", "x = 1"), ("c.py", "y")]) == (
        "<|repo_name|>o/r\n<|file_sep|>a.py\nx = 1\n<|file_sep|>c.py\ny\n<|file_sep|>b.py\n"
        "<|fim_prefix|>PRE<|fim_suffix|>SUF<|fim_middle|>MID<|endoftext|>")


def test_starcoder2_layouts():
    assert _text("psm", "starcoder") == "<fim_prefix>PRE<fim_suffix>SUF<fim_middle>MID<|endoftext|>"
    assert _text("spm", "starcoder") == "<fim_prefix><fim_suffix>SUF<fim_middle>PREMID<|endoftext|>"
    # no newline after the repo name nor after a context file; the target's path follows <fim_prefix>
    assert _text("repo", "starcoder", repo="o/r", path="b.py", context=[("a.py", "x = 1\n"), ("c.py", "y")]) == (
        "<repo_name>o/r<file_sep>a.py\nx = 1\n<file_sep>c.py\ny"
        "<file_sep><fim_prefix>b.py\nPRE<fim_suffix>SUF<fim_middle>MID<|endoftext|>")


def test_deepseek_layouts():
    assert _text("psm", "deepseek-coder") == ("<\uff5cfim\u2581begin\uff5c>PRE<\uff5cfim\u2581hole\uff5c>SUF"
                                               "<\uff5cfim\u2581end\uff5c>MID<\uff5cend\u2581of\u2581sentence\uff5c>")
    assert _text("spm", "deepseek-coder").startswith("<｜fim▁begin｜><｜fim▁hole｜>SUF<｜fim▁end｜>PREMID")
    with pytest.raises(ValueError, match="no repo-level tokens"):
        layout("repo", "deepseek-coder", "P", "M", "S")


def test_segment_roles_put_only_middle_and_eos_on_the_middle():
    for family in ("qwen2.5-coder", "starcoder"):
        segs = layout("repo", family, "PRE", "MID", "SUF", repo="o/r", path="b.py", context=[("a.py", "A")])
        assert [s.text for s in segs if s.role == "middle"] == ["MID", FAMILIES[family].eos]
        assert [s.text for s in segs if s.role == "file" and not s.special] in (["a.py\nA\n"], ["a.py\nA"])
        assert all(s.special == (s.text in FAMILIES[family].strings()) for s in segs)


def test_fit_context_keeps_leading_files_within_budget():
    ctx = [("a", 10), ("b", 10), ("c", 1), ("d", 0)]
    assert formats.fit_context(ctx, 20) == ["a", "b"] and formats.fit_context(ctx, 21) == ["a", "b", "c", "d"]
    assert formats.fit_context(ctx, 5) == [] and formats.fit_context(ctx, None) == ["a", "b", "c", "d"]


def test_every_family_string_is_neutralised():
    strings = set(formats.SPECIAL_STRINGS)
    assert {"<|im_end|>", "<|EOT|>", "<file_sep>", "<｜fim▁hole｜>", "<|endoftext|>", "<|repo_name|>"} <= strings
    text = "s = '" + "' + '".join(sorted(strings)) + "'\n"
    assert formats.count_special(text) == len(strings)
    out = formats.neutralise(text)
    assert formats.count_special(out) == 0 and not any(t in out for t in strings)
    assert out.replace(formats.NEUTRALISER, "") == text          # only the zero-width space was added
    assert out.count(formats.NEUTRALISER) == len(strings)
