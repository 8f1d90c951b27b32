"""The per-step and per-run label rules of ``miners/localization/mine.py`` on small inputs whose expected values
are written out from the rule each docstring states (A²Agent's viewed / mentioned, the majority patch, UTC
dates, the explicit answer, the repository filter, the module references, the no-task rejects)."""
import datetime as dt
import json

from swemine.miners.localization import mine as lm
from swemine.miners.localization.summary import summarize
from swemine.miners.localization.views import View

LEVELS = {"file": ["pkg/a.py"], "module": ["pkg/a.py:Cls"], "entity": ["pkg/a.py:Cls.run", "pkg/a.py:helper"]}


def _step(text: str, idx: int = 0) -> dict:
    return {"idx": idx, "role": "assistant", "thought": text, "action_text": "", "tool_args_json": "",
            "observation": "", "tool_name": ""}


def test_an_entity_is_mentioned_by_its_exact_qualified_name():
    _, mentioned, _ = lm.step_gold_hits(_step("the bug is in pkg/a.py:Cls.run"), LEVELS, {})
    # Cls.run names the entity exactly, and its class part names the module Cls; helper is not named
    assert mentioned == {"pkg/a.py", "pkg/a.py:Cls", "pkg/a.py:Cls.run"}


def test_a_longer_or_shorter_name_is_not_the_entity():
    _, mentioned, _ = lm.step_gold_hits(_step("see pkg/a.py:Cls.run_all and pkg/a.py:help"), LEVELS, {})
    # Cls.run_all: module Cls (its first part) but not the entity Cls.run; help is not helper
    assert mentioned == {"pkg/a.py", "pkg/a.py:Cls"}
    _, mentioned, _ = lm.step_gold_hits(_step("see pkg/a.py:Cls"), LEVELS, {})
    assert mentioned == {"pkg/a.py", "pkg/a.py:Cls"}           # a class names its module, not its methods
    _, mentioned, _ = lm.step_gold_hits(_step("see pkg/b.py:Cls.run"), LEVELS, {})
    assert mentioned == set()                                  # the same name in another file


def test_a_module_is_mentioned_by_any_entity_under_it():
    _, mentioned, _ = lm.step_gold_hits(_step("pkg/a.py:Cls.other.inner"), LEVELS, {})
    assert mentioned == {"pkg/a.py", "pkg/a.py:Cls"}


def test_a_region_is_viewed_by_its_span_a_span_under_or_over_it_or_overlapping_lines():
    run, cls = "pkg/a.py:Cls.run", "pkg/a.py:Cls"
    spans = {run: (10, 20)}
    assert lm._region_viewed(run, [View("pkg/a.py", spans=["Cls.run"])], spans)
    assert lm._region_viewed(run, [View("pkg/a.py", spans=["Cls"])], spans)              # the class holds it
    assert lm._region_viewed(cls, [View("pkg/a.py", spans=["Cls.run"])], spans)          # a method of the class
    assert not lm._region_viewed(run, [View("pkg/a.py", spans=["Cls.runner"])], spans)   # a prefix, not a part
    assert not lm._region_viewed(run, [View("pkg/a.py", spans=["Cl"])], spans)
    assert lm._region_viewed(run, [View("pkg/a.py", spans=["Z", "Cls.run.inner"])], {})  # a part of the method
    # displayed lines 1-10 and 20-30 touch the span 10-20 at one line each; 1-9 and 21-30 do not
    assert lm._region_viewed(run, [View("pkg/a.py", ranges=[(1, 10)])], spans)
    assert lm._region_viewed(run, [View("pkg/a.py", ranges=[(20, 30)])], spans)
    assert not lm._region_viewed(run, [View("pkg/a.py", ranges=[(1, 9), (21, 30)])], spans)
    # a view of another file is skipped, not the end of the search
    assert lm._region_viewed(run, [View("pkg/b.py", whole=True), View("pkg/a.py", ranges=[(15, 15)])], spans)
    assert not lm._region_viewed(run, [View("pkg/b.py", whole=True)], spans)


def test_recall_of_an_empty_gold_list_is_zero():
    assert lm._recall({"a"}, []) == 0.0 and lm._recall({"a"}, ["a", "b"]) == 0.5


def _run(rid: str, files: list[str], resolved=True):
    patch = "".join(f"diff --git a/{f} b/{f}\n--- a/{f}\n+++ b/{f}\n@@ -1 +1 @@\n-x = 1\n+x = 2\n" for f in files)
    return summarize({"record_id": rid, "resolved": resolved, "final_patch": patch, "steps": []})


def test_the_majority_patch_counts_every_resolved_vote():
    # 2 resolved runs edit a.py, 1 resolved run edits b.py: a.py wins 2 to 1
    runs = [_run("r1", ["b.py"]), _run("r2", ["a.py"]), _run("r3", ["a.py"])]
    assert "a/a.py" in lm.majority_patch(runs)
    # a tie is broken by the larger file tuple, whatever the order of the runs: ("b.py",) > ("a.py",)
    assert "a/b.py" in lm.majority_patch([_run("r1", ["a.py"]), _run("r2", ["b.py"])])
    assert "a/b.py" in lm.majority_patch([_run("r2", ["a.py"]), _run("r1", ["b.py"])])
    # a run whose patch cannot be read is skipped, not the end of the vote
    truncated = "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1,5 +1,5 @@\n-x\n"    # 1 of 5 lines
    broken = summarize({"record_id": "r0", "resolved": True, "final_patch": truncated, "steps": []})
    assert "a/a.py" in lm.majority_patch([broken, _run("r5", ["a.py"])])
    assert lm.majority_patch([_run("r1", ["a.py"], resolved=False)]) == ""


def test_dates_become_aware_utc():
    utc = dt.timezone.utc
    assert lm.parse_time("2023-01-01T05:00:00+02:00") == dt.datetime(2023, 1, 1, 3, tzinfo=utc)
    assert lm.parse_time("2023-01-01T05:00:00Z") == dt.datetime(2023, 1, 1, 5, tzinfo=utc)
    naive = lm.parse_time("2023-01-01 05:00:00")
    assert naive == dt.datetime(2023, 1, 1, 5, tzinfo=utc) and naive.tzinfo is utc
    assert lm.parse_time("yesterday") is None and lm.parse_time("") is None


def test_the_explicit_answer_is_the_last_step_that_gives_one():
    def step(args) -> dict:
        return {"tool_args_json": args if isinstance(args, str) else json.dumps(args)}
    steps = [step({"found_files": ["a.py"]}), step({"found_files": ["b.py"], "found_entities": ["b.py:f"]}),
             step('{"found_files": [broken'), step({"query": "found_nothing"})]
    assert lm.explicit_answer({"steps": steps}) == {"file": ["b.py"], "module": [], "entity": ["b.py:f"]}
    assert lm.explicit_answer({"steps": [step({"found_x": 1})]}) is None
    assert lm.explicit_answer({"steps": [step(["found_files"])]}) is None      # not an argument mapping


def test_the_repository_filter():
    keep = lm.repository_filter(owned={"new.py"}, scratch={"repro.py"}, base_files={"a.py", "repro.py"})
    # in the repository: files at the base commit and files the gold patches add; never scratch
    assert [keep(p) for p in ("a.py", "new.py", "repro.py", "other.py")] == [True, True, False, False]
    loose = lm.repository_filter(owned=(), scratch={"repro.py"}, base_files=None)
    assert [loose(p) for p in ("a.py", "repro.py")] == [True, False]


def test_references_name_a_module_by_dotted_path_or_import():
    assert lm.references("pkg/util.py", ["see pkg.util for details"])
    assert lm.references("pkg/util.py", ["+from pkg import util\n"])
    assert lm.references("pkg/util.py", ["+from pkg.util import x\n"])
    assert not lm.references("pkg/util.py", ["+x = utility()\n", ""])
    assert not lm.references("pkg/util.txt", ["pkg.util"])              # only Python modules are referenced
    assert lm.references("util.py", ["+import util\n"])                 # a top-level module: its stem is its path


def test_an_instance_without_a_task_rejects_each_trajectory():
    trajs = [{"instance_id": "o__r-1", "record_id": f"t{i}", "source_uri": f"u{i}", "source_locator": "",
              "source_sha256": "s"} for i in range(2)]
    rejects = list(lm.localize_instance(None, [summarize(t) for t in trajs], None, None))
    assert [(r["reason"], r["subject_id"], r["source_uri"]) for r in rejects] == [("no_task", "t0", "u0"),
                                                                                ("no_task", "t1", "u1")]
