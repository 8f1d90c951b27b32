"""Hard negatives: dwell ranking, searched files, BM25 over the repository at the base commit."""
from __future__ import annotations

import collections
import math

import pytest

from swemine.corpora.formats.base import make_step
from swemine.corpora.repos import GitRepo
from swemine.miners.code_structure import StructureParser
from swemine.miners.localization.mine import mine_instance
from swemine.miners.localization.negatives import (
    bm25_negatives,
    bm25_rank,
    searched_paths,
    step_look,
    terms,
    trajectory_negatives,
)
from tests.gitutil import ScratchRepo


def test_terms_split_identifiers():
    # the word itself, then its "_" chunks split at camelCase; one-letter "x" is dropped
    assert sorted(terms("parseDate_value x")) == ["date", "parse", "parsedate_value", "value"]


def test_bm25_by_hand():
    docs = {"a": collections.Counter({"parse": 2, "date": 1}), "b": collections.Counter({"date": 2, "time": 2}),
            "c": collections.Counter({"other": 1})}
    # N = 3, lengths 3/4/1, avgdl = 8/3; idf = ln(1 + (N - df + .5) / (df + .5)): parse (df 1) ln(8/3),
    # date (df 2) ln(1.6); per term idf * tf * 2.2 / (tf + 1.2 * (.25 + .75 * dl / avgdl))
    norm_a, norm_b = 1.2 * (0.25 + 0.75 * 3 / (8 / 3)), 1.2 * (0.25 + 0.75 * 4 / (8 / 3))
    a = math.log(8 / 3) * 2 * 2.2 / (2 + norm_a) + math.log(1.6) * 1 * 2.2 / (1 + norm_a)
    b = math.log(1.6) * 2 * 2.2 / (2 + norm_b)
    ranked = bm25_rank("Parse the date", docs)          # "the" matches nothing; c shares no term: left out
    assert [p for p, _ in ranked] == ["a", "b"]
    assert [s for _, s in ranked] == pytest.approx([a, b])


def test_dwell_ranking_and_searched():
    def view(i, path, rng):
        return make_step(i, tool_name="str_replace_editor",
                         tool_args={"command": "view", "path": f"/testbed/{path}", "view_range": rng})
    grep = make_step(3, tool_name="execute_bash", tool_args={"command": "grep -rn parse ."},
                     observation="./pkg/b.py:3:def parse():\n./pkg/c.py:9:    parse()\ndata/x.csv:1:parse\n"
                                 "./pkg/a.py:1:import os.path\n")
    steps = [view(0, "pkg/a.py", [1, 10]), view(1, "pkg/b.py", [1, 50]), view(2, "pkg/a.py", [11, 20]), grep]
    assert searched_paths(grep) == ["./pkg/b.py", "./pkg/c.py", "data/x.csv", "./pkg/a.py"]
    negs = trajectory_negatives([[step_look(s) for s in steps]], keep=lambda p: True, gold_files=["pkg/gold.py"])
    # a.py: 2 steps (20 lines) > b.py: 1 step (50 lines); c.py only searched; x.csv is not a .py like the gold file
    assert [(n.path, n.source, n.weight) for n in negs] == [
        ("pkg/a.py", "viewed", 2.0), ("pkg/b.py", "viewed", 1.0), ("pkg/c.py", "searched", 1.0)]


WORDS = ["date", "parse", "time", "zone", "format", "cache", "http", "json", "token", "queue", "graph", "image"]


def test_repository_negatives_reach_k(tmp_path):
    repo = ScratchRepo(tmp_path / "acme__dates")
    files = {f"pkg/{w}.py": f"def {w}_parse_date(x):\n    return x  # {w}\n" for w in WORDS}
    files["pkg/gold.py"] = "def parse_date(s):\n    return s\n"
    files["README.md"] = "parse date " * 50                     # not a .py file: never a negative
    base, patch = repo.change(files, {"pkg/gold.py": "def parse_date(s):\n    return s.strip()\n"})
    task = {"instance_id": "acme__dates-1", "repo": "acme/dates", "base_commit": base, "patch": patch,
            "problem_statement": "parse_date fails on a date with a time zone"}
    steps = [make_step(0, tool_name="execute_bash", tool_args={"command": "cat > /testbed/repro.py <<EOF\nx\nEOF"}),
             make_step(1, tool_name="execute_bash", tool_args={"command": "cat /testbed/repro.py pkg/cache.py"}),
             make_step(2, tool_name="execute_bash", tool_args={"command": "python /tmp/t.py > pkg/out.txt"})]
    traj = {"record_id": "t1", "trajectory_id": "t1", "harness": "openhands", "steps": steps, "final_patch": ""}
    (rec,) = mine_instance(task, [traj], GitRepo(str(repo.root)), StructureParser(), negatives=8)
    assert rec["scratch_files"] == ["pkg/out.txt", "repro.py"]
    negs, sources = rec["retrieval_hard_negatives"], rec["retrieval_hard_negative_sources"]
    assert len(negs) == 8 and negs[0] == "pkg/cache.py" and sources == ["viewed"] + ["bm25"] * 7
    assert set(negs) <= set(files) - {"pkg/gold.py", "README.md"}
    # every file holds "parse" and "date" (low idf); "time" and "zone" occur in one file each (high idf), so those two
    # lead (equal scores: by path), then date.py, whose extra "date"s weigh little
    assert negs[1:4] == ["pkg/time.py", "pkg/zone.py", "pkg/date.py"]
    (few,) = mine_instance(task, [traj], GitRepo(str(repo.root)), StructureParser(), negatives=2)
    assert few["retrieval_hard_negatives"] == ["pkg/cache.py", "pkg/time.py"]


def test_zero_score_files_fill_up_nearest_first():
    docs = {"a.py": collections.Counter({"token": 1}), "x/b.py": collections.Counter({"y": 1}),
            "pkg/sub/d.py": collections.Counter({"y": 1}), "pkg/c.py": collections.Counter({"y": 1})}
    negs = bm25_negatives("token", docs, exclude=set(), n=3, near=["pkg/gold.py"])
    # a.py shares "token"; the others score 0: pkg/c.py and pkg/sub/d.py share "pkg/" with the gold file (by path)
    assert [(n.path, n.source) for n in negs] == [("a.py", "bm25"), ("pkg/c.py", "bm25"), ("pkg/sub/d.py", "bm25")]
    assert negs[1].weight == 0.0 and negs[0].weight > 0
