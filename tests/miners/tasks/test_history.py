import json
from collections import Counter

import pytest

from swemine.corpora.records import TASK_SCHEMA, Filtered, Reject
from swemine.corpora.repos import GitRepo
from swemine.miners.actions import patch_files
from swemine.miners.code_structure import StructureParser
from swemine.miners.localization.mine import mine_instance
from swemine.miners.tasks import history
from swemine.miners.tasks.issue_links import IssueIndex, closing_refs, read_issues
from tests.gitutil import build_history, build_shapes, commit_files, git, init_repo, write_issues


@pytest.fixture(scope="module")
def hist(tmp_path_factory):
    return build_history(str(tmp_path_factory.mktemp("hist")))


def _mine(hist, issues=None, cfg=None):
    out = list(history.mine_repo(hist["repo"], "acme/calc", cfg or history.MineConfig(), issues))
    tasks = {t["merged_commit"]: t for t in out if not isinstance(t, (Filtered, Reject))}
    filtered = {json.loads(f["record_json"]).get("sha") or json.loads(f["record_json"])["merged_commit"]: f
                for f in out if isinstance(f, Filtered)}
    return out, tasks, filtered


def test_is_test_path_rules():
    yes = ["tests/test_a.py", "pkg/tests/helpers.py", "test_x.py", "pkg/x_test.py", "src/testing/util.py",
           "conftest.py", "pkg/sub/conftest.py", "test/data.json"]
    no = ["pkg/calc.py", "pkg/testsuite.py", "contest.py", "pkg/latest/x.py", "docs/testing.md"]
    assert [p for p in yes if not history.is_test_path(p)] == []
    assert [p for p in no if history.is_test_path(p)] == []
    assert history.is_test_path("spec/a.rb", ("spec/",)) and not history.is_test_path("tests/a.py", ("spec/",))


def test_doc_rules():
    # SWE-bench convention: changelogs, news fragments, release notes, authors lists and documentation are no code
    yes = ["CHANGES", "CHANGES.rst", "ChangeLog", "doc/whatsnew/2.1.rst", "changelog/123.bugfix.rst", "AUTHORS",
           "CONTRIBUTORS.txt", "docs/conf.py", "README.md", "news/8.feature", "pkg/HISTORY.rst", "THANKS"]
    no = ["pkg/calc.py", "setup.cfg", "requirements.txt", "pkg/changes.py", "pkg/docstring.py", "pkg/autodoc/x.py"]
    assert [p for p in yes if not history.is_doc_path(p)] == []
    assert [p for p in no if history.is_doc_path(p)] == []
    assert history.is_doc_path("manual/a.txt", ("manual/",)) and not history.is_doc_path("CHANGES", ("manual/",))


def test_odd_paths_split_by_real_diff_headers(tmp_path):
    repo = init_repo(str(tmp_path / "odd"))
    base = commit_files(repo, {"README": "x\n"}, "init")
    tip = commit_files(repo, {"src/a b.py": "x = 1\n", "tests/tab\there.py": "t = 1\n", "src/é.py": "y = 2\n",
                              "src/b b/test_c.py": "z = 3\n"}, "odd names (#3)")
    diff = history.split_diff(repo, base, tip)
    assert diff.code_files == ["src/a b.py", "src/é.py"]
    assert diff.test_files == ["src/b b/test_c.py", "tests/tab\there.py"]
    assert history.chunk_path('diff --git "a/x\\303\\251\\ty" "b/x\\303\\251\\ty"') == "x\u00e9\ty"
    assert history.patch_applies(repo, base, diff.patch + diff.test_patch)


def test_closing_refs_any_case():
    assert closing_refs("FIXES #9, closes: #10 and Resolved #3; fixes #9 again; see #4; prefix#5") == [9, 10, 3]
    assert closing_refs("fixing #3 / fixed#2") == []


def test_list_commits_fields(hist):
    commits = history.list_commits(hist["repo"], "acme/calc")
    assert len(commits) == 16
    by_sha = {c["sha"]: c for c in commits}
    merge = by_sha[hist["pr_merge"]]
    assert merge["parents"] == [hist["main_moved"], hist["pr_b"]]
    assert merge["message"] == ("Merge pull request #5 from dev/fix-add\n\n"
                                "add() should accept numeric strings, fixes #4")
    assert by_sha[hist["bot"]]["author_name"] == "dependabot[bot]"
    assert by_sha[hist["root"]]["parents"] == [] and merge["authored_at"] == "2026-01-01T00:00:00+00:00"


def test_every_kind_of_commit(hist):
    out, tasks, filtered = _mine(hist)
    assert sorted(tasks) == sorted([hist["pr_merge"], hist["squash"], hist["issue_commit"]])
    reasons = {role: filtered[hist[role]]["reason"] for role in
               ("root", "docs", "revert", "bot", "tests_only", "binary", "branch_merge", "short")}
    assert reasons == {"root": "root_commit", "docs": "not_a_fix", "revert": "revert", "bot": "bot_author",
                       "tests_only": "no_code_change", "binary": "binary_diff", "branch_merge": "branch_merge",
                       "short": "statement_too_short"}
    assert Counter(f["reason"] for f in out if isinstance(f, Filtered)) == Counter({
        "not_a_fix": 6, "root_commit": 1, "revert": 1, "bot_author": 1, "no_code_change": 1, "binary_diff": 1,
        "branch_merge": 1, "statement_too_short": 1})
    assert len(out) == 16  # every commit accounted for: 3 tasks + 13 filtered
    assert json.loads(filtered[hist["binary"]]["evidence_json"])["binary"] == ["docs/logo.png"]


def test_merge_commit_pr_is_the_diff_from_the_merge_base(hist):
    _, tasks, _ = _mine(hist)
    t = tasks[hist["pr_merge"]]
    assert set(t) == set(TASK_SCHEMA.names)
    assert t["instance_id"] == "acme__calc-5" and t["pr_number"] == 5 and t["repo"] == "acme/calc"
    assert t["base_commit"] == hist["docs"]  # merge base, not the first parent (main moved on)
    repo = hist["repo"]
    assert t["patch"] == git(repo, "diff", hist["docs"], hist["pr_b"], "--", "pkg") + "\n"
    assert t["test_patch"] == git(repo, "diff", hist["docs"], hist["pr_b"], "--", "tests") + "\n"
    assert t["patch"].startswith("diff --git a/pkg/calc.py b/pkg/calc.py") and "README" not in t["patch"]
    assert "new file mode 100644" in t["patch"] and "+def clamp(x):" in t["patch"]
    assert t["problem_statement"] == "add() should accept numeric strings, fixes #4"
    assert t["statement_source"] == "pr_message"
    extra = json.loads(t["extra_json"])
    assert extra["kind"] == "pr_merge" and extra["verifiable_hint"] is True and extra["linked_issues"] == [4]
    assert extra["code_files"] == ["pkg/calc.py", "pkg/util.py"] and extra["test_files"] == ["tests/test_calc.py"]
    assert history.patch_applies(repo, t["base_commit"], t["patch"])
    assert not history.patch_applies(repo, hist["pr_merge"], t["patch"])  # already applied there


def test_squash_and_issue_commit(hist):
    _, tasks, _ = _mine(hist)
    sq = tasks[hist["squash"]]
    assert sq["instance_id"] == "acme__calc-7" and sq["base_commit"] == hist["pr_merge"]
    assert sq["problem_statement"] == "Return 0.0 when dividing by zero\n\nDivision by zero used to raise."
    assert sq["test_patch"].startswith("diff --git a/tests/test_div.py b/tests/test_div.py\nnew file mode")
    assert json.loads(sq["extra_json"])["kind"] == "squash"
    ic = tasks[hist["issue_commit"]]
    assert ic["instance_id"] == "acme__calc-9" and ic["base_commit"] == hist["squash"]
    assert ic["statement_source"] == "commit_message" and ic["test_patch"] == ""
    assert ic["created_at"] == "2026-01-01T00:00:00Z"
    assert json.loads(ic["extra_json"])["verifiable_hint"] is False
    for t in tasks.values():
        assert history.patch_applies(hist["repo"], t["base_commit"], t["patch"])
        assert history.patch_applies(hist["repo"], t["base_commit"], t["test_patch"])


def test_issues_dump_join(hist, tmp_path):
    dump = write_issues(str(tmp_path / "acme__calc.jsonl"))
    rows = list(read_issues(dump))
    assert [r["reason"] for r in rows if isinstance(r, Reject)] == ["bad_json"]
    assert [(r["repo"], r["number"], r["is_pr"]) for r in rows if not isinstance(r, Reject)] == [
        ("acme/calc", 4, False), ("acme/calc", 5, True), ("acme/calc", 9, False)]
    index = IssueIndex.from_dumps([dump])
    _, tasks, _ = _mine(hist, index)
    pr = tasks[hist["pr_merge"]]
    assert pr["statement_source"] == "issue"
    assert pr["problem_statement"] == "add() fails on numeric strings\n\nadd('1', 2) raises TypeError.\n"
    assert pr["created_at"] == "2025-12-02T09:30:00Z"  # the pull request's creation, from the dump
    assert json.loads(pr["extra_json"])["created_at_source"] == "pr_created_at"
    ic = tasks[hist["issue_commit"]]
    assert ic["statement_source"] == "issue" and ic["problem_statement"].startswith("mul should return floats\n\n")
    assert tasks[hist["squash"]]["statement_source"] == "pr_message"  # PR 7 is not in the dump
    # a dump for another repository does not leak in
    assert IssueIndex.from_dumps([dump]).get("other/repo", 4) is None


def test_revert_and_bot_rules():
    cfg = history.MineConfig()
    base = {"parents": ["a" * 40], "author_name": "Ann", "author_email": "ann@example.com"}
    assert history.classify({**base, "message": 'Revert "Fix x (#3)"\n\nThis reverts commit abcdef12.'}, cfg) == (
        None, "revert")
    assert history.classify({**base, "message": "Fix x (#3)\n\nRevert the default to 2 as before."}, cfg) == (
        "squash", 3)
    assert history.classify({**base, "author_name": "renovate[bot]", "message": "Fix (#4)"}, cfg) == (
        None, "bot_author")
    assert history.classify({**base, "author_email": "41898282+github-actions[bot]@users.noreply.github.com",
                             "message": "Fixes #2"}, cfg) == (None, "bot_author")
    assert history.classify({**base, "parents": ["a", "b"], "message": "Merge remote-tracking branch 'o/x'"},
                            cfg) == (None, "branch_merge")
    assert history.classify({**base, "parents": ["a", "b", "c"], "message": "Merge pull request #1"}, cfg) == (
        None, "octopus_merge")


def test_config_limits(hist):
    cfg = history.MineConfig(max_code_files=1, min_statement_chars=1, test_rules=("tests/",))
    _, tasks, filtered = _mine(hist, cfg=cfg)
    assert filtered[hist["pr_merge"]]["reason"] == "too_many_files"
    assert hist["short"] in tasks  # "Fix" passes a 1-char minimum
    # test_div.py is not under the configured rules → counted as code
    assert json.loads(tasks[hist["squash"]]["extra_json"])["code_files"] == ["pkg/calc.py"]
    assert filtered[hist["binary"]]["reason"] == "binary_diff"


def test_duplicate_instances_keep_one(hist):
    _, tasks, _ = _mine(hist)
    a = tasks[hist["squash"]]
    b = {**a, "merged_commit": "f" * 40, "record_id": "other",
         "extra_json": json.dumps({**json.loads(a["extra_json"]), "kind": "issue_commit"})}
    kept, dup = list(history.pick_instance([b, a]))
    assert kept is a and isinstance(dup, Filtered) and dup["reason"] == "duplicate_instance"
    assert json.loads(dup["evidence_json"])["kept_commit"] == hist["squash"]


def test_task_gold_localization_against_the_same_repo(tmp_path):
    """Plain Python: a merged PR's task → its gold-only localization record read from the repository at the
    task's base commit (``repo`` gold: a method of a class and a top-level function)."""
    shapes = build_shapes(str(tmp_path))
    out = list(history.mine_repo(shapes["repo"], "acme/shapes"))
    tasks = [t for t in out if not isinstance(t, (Filtered, Reject))]
    assert [(t["instance_id"], t["base_commit"]) for t in tasks] == [("acme__shapes-21", shapes["root"])]
    # the PR's changelog, news fragment, docs page and authors list go to doc_patch; the test to test_patch
    extra = json.loads(tasks[0]["extra_json"])
    assert extra["code_files"] == ["pkg/shapes.py"] and extra["test_files"] == ["tests/test_shapes.py"]
    assert extra["doc_files"] == ["AUTHORS", "CHANGES.rst", "changelog/21.bugfix.rst", "docs/usage.md"]
    assert patch_files(tasks[0]["patch"]) == ["pkg/shapes.py"]
    assert patch_files(tasks[0]["doc_patch"]) == extra["doc_files"]
    [rec] = mine_instance(tasks[0], [], GitRepo(shapes["repo"], name="acme/shapes"), StructureParser(),
                          config_hash="h")
    assert rec["gold_quality"] == "repo" and rec["gold_source"] == "gold_patch"
    assert rec["gold_files"] == ["pkg/shapes.py"]
    assert rec["gold_modules"] == ["pkg/shapes.py:Circle", "pkg/shapes.py:scale"]
    assert rec["gold_entities"] == ["pkg/shapes.py:Circle.area", "pkg/shapes.py:scale"]
    assert rec["gold_added_entities"] == [] and rec["license"] == "MIT"
    assert rec["gold_line_spans"] == [{"file": "pkg/shapes.py", "start": 9, "end": 9},
                                      {"file": "pkg/shapes.py", "start": 13, "end": 13}]
    assert (rec["instance_id"], rec["repo"], rec["base_commit"]) == ("acme__shapes-21", "acme/shapes", shapes["root"])
    assert rec["problem_statement"] == "Circle.area should use math.pi and scale should return floats"
    assert rec["source_dataset"] == "tasks" and rec["source_locator"] == f"commit:{shapes['pr_merge']}"
    assert rec["retrieval_positives"] == ["pkg/shapes.py"] and rec["step_labels"] == []
