"""Mined content holding special-token strings: counted, neutralised (or dropped); raw groups' middles located."""
import pathlib
import sysconfig

import pytest

from swemine.miners.fim import formats
from swemine.miners.fim.formats import FAMILIES, NEUTRALISER, count_special, layout
from swemine.miners.fim.mine import SPECIAL_IN_CONTENT, mine_files
from swemine.miners.fim.scoring import FimConfig
from tests.miners.fim.special_file import source, special_file

N_STRINGS = sum(len(f.strings()) for f in FAMILIES.values())


def test_special_file_holds_every_family_string():
    assert count_special(special_file()) == N_STRINGS + 1        # one literal per family + the comment
    assert all(s in special_file() for s in formats.SPECIAL_STRINGS)


@pytest.mark.parametrize(("fmt", "family"), [("psm", "qwen2.5-coder"), ("spm", "deepseek-coder"),
                                             ("repo", "starcoder"), ("chat", "qwen2.5-coder")])
def test_rows_are_counted_and_neutralised(fmt, family):
    content = special_file()
    helper = source("def helper(x):\n    return '<|im_end|>' + x\n", "h.py")       # a context file for repo
    files = [source(content.replace("def run_all(x):\n", "from h import helper\n\n\ndef run_all(x):\n    helper(x)\n")),
             helper] if fmt == "repo" else [source(content)]
    res = mine_files(files, FimConfig(mixture=()), fmt=fmt, family=family)
    assert [r["func_name"] for r in res.rows] == ["work_0", "work_1", "work_2"]
    assert res.stats[SPECIAL_IN_CONTENT] == 3 and res.rejects == []
    assert [f["reason"] for f in res.filtered] == ["file_too_short"] * (fmt == "repo")     # h.py: context only
    for r in res.rows:
        if fmt == "chat":
            assert not any(count_special(m["content"]) for m in r["messages"])
            continue
        original = files[0]["content"]
        assert (r["prefix"] + r["middle"] + r["suffix"]).replace(NEUTRALISER, "") == original
        assert not any(count_special(r[k]) for k in ("prefix", "middle", "suffix"))
        # the only special strings left in text are the layout's own sentinels
        n_files = len(r["context"] or [])
        sentinels = sum(s.special for s in layout(fmt, family, "", "", "", context=[("a", "")] * n_files))
        assert count_special(r["text"]) == sentinels
        span = r["middle_spans"]
        assert span == [{"start": 0, "end": len(r["middle"])}] and r["middle_between_lines"] == 0
        if fmt == "repo":
            assert [c["path"] for c in r["context"]] == ["h.py"]
            assert r["context"][0]["content"] == f"def helper(x):\n    return '<{NEUTRALISER}|im_end|>' + x\n"


def test_drop_policy_filters_with_the_reason():
    res = mine_files([source(special_file())], FimConfig(mixture=()), fmt="psm", special_tokens="drop")
    assert res.rows == [] and len(res.filtered) == 3
    assert {f["reason"] for f in res.filtered} == {SPECIAL_IN_CONTENT}
    with pytest.raises(ValueError, match="special-token policy"):
        mine_files([], fmt="psm", special_tokens="keep")


def test_group_middle_spans_locate_each_body():
    """shlex.push_source + shlex.get_token: one hole from the first body to the end of the second; the spans
    are the two bodies, the lines between them (the end of push_source .. get_token's def line) are counted."""
    content = (pathlib.Path(sysconfig.get_paths()["stdlib"]) / "shlex.py").read_text()
    rows = mine_files([source(content, "shlex.py")], FimConfig(mixture=()), fmt="psm").rows
    pair = next(r for r in rows if r["fim_split"] == "function_pair")
    first, second = pair["targets"]
    lines = content.split("\n")
    mid, (a, b) = pair["middle"], pair["middle_spans"]
    assert a["start"] == 0 and b["end"] == len(mid)
    between = mid[a["end"]:b["start"]]
    # between = the lines after the first target through the second's (one-line) signature
    assert between == "\n".join(lines[first["end_line"]:second["start_line"]]) + "\n"
    assert lines[second["start_line"] - 1].lstrip().startswith(f"def {second['func_name'].split('.')[-1]}(")
    assert pair["middle_between_lines"] == between.count("\n") == second["start_line"] - first["end_line"]
    assert mid[:a["end"]] == "\n".join(lines[first["start_line"]:first["end_line"]]) + "\n"   # one-line def
