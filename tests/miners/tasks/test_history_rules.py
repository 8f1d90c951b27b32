"""Candidate, filter and de-duplication rules of the history miner, on commit dicts and a small scratch repo.

Expected kinds, reasons and paths are read off the commit messages and diffs by hand.
"""
import dataclasses
import json

import pytest

from swemine.corpora.records import Filtered, Reject
from swemine.corpora.repos import RepoError
from swemine.miners.tasks import history
from tests.gitutil import commit_files, init_repo

BASE = {"sha": "c" * 40, "parents": ["p" * 40], "author_name": "Dev", "author_email": "dev@example.com"}


def test_config_is_immutable_and_serializes_tuples_as_lists():
    cfg = history.MineConfig(test_rules=("tests/",), bot_patterns=(r"\[bot\]",), max_code_files=3,
                             min_statement_chars=4, max_statement_chars=5, verify_apply=False)
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.max_code_files = 7
    assert cfg.as_dict() == {"test_rules": ["tests/"], "bot_patterns": [r"\[bot\]"], "max_code_files": 3,
                             "min_statement_chars": 4, "max_statement_chars": 5, "verify_apply": False,
                             "doc_rules": list(history.DEFAULT_DOC_RULES)}


@pytest.mark.parametrize("message,expected", [
    ("Undo the cache (#3)\n\nThis reverts commit abcdef1234.", (None, "revert")),      # body says revert
    ('Revert "Cache lookups"', (None, "revert")),                                       # subject only
    ("Cache lookups\n\nSee the discussion (#12)", (None, "not_a_fix")),                 # (#N) not on the subject
    ("Handle empty input, fixes #9 and closes #10", ("issue_commit", 9)),               # the first closed issue
])
def test_classify_rules(message, expected):
    assert history.classify({**BASE, "message": message}, history.MineConfig()) == expected


def test_issue_commit_statement_is_the_message_verbatim():
    message = "Handle empty input, fixes #9  \n\nDetails."
    assert history._fix_message({**BASE, "message": message}, "issue_commit") == message
    # a squash commit loses its "(#N)" and the spaces before it; the body follows
    assert history._fix_message({**BASE, "message": "Handle input (#9)\n\nDetails."}, "squash") == \
        "Handle input\n\nDetails."


def test_filter_boundaries():
    cfg = history.MineConfig(max_code_files=2, min_statement_chars=5, max_statement_chars=8)

    def reason(n_files, statement):
        return history._filter_reason(history.Diff(code_files=[f"m{i}.py" for i in range(n_files)]), statement, cfg)
    assert [reason(2, "x" * 5), reason(2, "x" * 8)] == [None, None]          # both ends allowed
    assert [reason(3, "x" * 5), reason(2, "x" * 4), reason(2, "x" * 9)] == [
        "too_many_files", "statement_too_short", "statement_too_long"]


def _task(sha, kind, created, rid):
    return {"record_id": rid, "merged_commit": sha, "created_at": created, "extra_json": json.dumps({"kind": kind})}


def test_pick_instance_prefers_kind_then_date_then_sha():
    # the squash and issue commits are older, yet the PR merge wins; then the squash over the issue commit
    merge = _task("m" * 40, "pr_merge", "2024-03-01T00:00:00Z", "r-merge")
    squash = _task("s" * 40, "squash", "2024-02-01T00:00:00Z", "r-squash")
    issue = _task("i" * 40, "issue_commit", "2024-01-01T00:00:00Z", "r-issue")
    out = list(history.pick_instance([issue, squash, merge]))
    assert out[0] is merge
    assert [(f["record_id"], f["reason"]) for f in out[1:]] == [("r-squash", "duplicate_instance"),
                                                                ("r-issue", "duplicate_instance")]
    assert {json.loads(f["evidence_json"])["kept"] for f in out[1:]} == {"r-merge"}
    assert {json.loads(f["evidence_json"])["kept_commit"] for f in out[1:]} == {"m" * 40}
    assert next(history.pick_instance([issue, squash])) is squash
    # same kind: the earlier one, then the smaller sha
    late, early = _task("a" * 40, "squash", "2024-05-01T00:00:00Z", "r1"), _task("b" * 40, "squash",
                                                                               "2024-04-01T00:00:00Z", "r2")
    assert next(history.pick_instance([late, early])) is early
    twin = _task("0" * 40, "squash", "2024-05-01T00:00:00Z", "r0")
    assert next(history.pick_instance([late, twin])) is twin


def test_quoted_paths_with_every_escape():
    # git C-quotes a path with control characters, a double quote or a backslash
    assert history.chunk_path('diff --git "a/\\a\\b\\f\\n\\r\\t\\v\\"\\\\q" "b/\\a\\b\\f\\n\\r\\t\\v\\"\\\\q"') == \
        '\a\b\f\n\r\t\v"\\q'
    assert history.chunk_path('diff --git "a/x\\t" "b/x\\t"') == "x\t"                 # an escape at the end


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    repo = init_repo(str(tmp_path_factory.mktemp("rules") / "acme__tools"))
    c = {"repo": repo}
    c["root"] = commit_files(repo, {"pkg/a.py": "x = 1\n"}, "Initial import\n\nWith a body")
    c["latin1"] = commit_files(repo, {"pkg/l1.py": b"s = '\xe9'\n"}, "Fix encoding, fixes #3\n\nBody line")
    c["doc"] = commit_files(repo, {"docs/git.txt": "Binary files a and b differ\n", "pkg/a.py": "x = 2\n"},
                            "Document git output (#4)\n\nExplain binary diffs.")
    c["unit_sep"] = commit_files(repo, {"pkg/a.py": "x = 3\n"}, "Tidy\x1fup, fixes #5\n\nSecond line")
    return c


def _commits(scratch):
    return {c["sha"]: c for c in history.list_commits(scratch["repo"], "acme/tools")}


def test_list_commits_fields(scratch):
    commits = _commits(scratch)
    assert len(commits) == 4
    assert {c["repo_uri"] for c in commits.values()} == {scratch["repo"]}          # no uri given: the path
    # a unit separator inside a message stays part of the message
    assert commits[scratch["unit_sep"]]["message"] == "Tidy\x1fup, fixes #5\n\nSecond line"
    assert history.list_commits(scratch["repo"], "acme/tools", uri="file:///x")[0]["repo_uri"] == "file:///x"


def test_text_mentioning_binary_files_is_not_binary(scratch):
    diff = history.split_diff(scratch["repo"], scratch["latin1"], scratch["doc"])
    # docs/git.txt is documentation (doc_patch), not code; neither file is binary
    assert (diff.binary_files, diff.code_files, diff.doc_files) == ([], ["pkg/a.py"], ["docs/git.txt"])


def test_non_utf8_diff_is_filtered(scratch):
    (out,) = history.mine_commit(_commits(scratch)[scratch["latin1"]], history.MineConfig())
    assert isinstance(out, Filtered) and out["reason"] == "non_utf8_diff"
    assert json.loads(out["evidence_json"])["kind"] == "issue_commit"


def test_subjects_are_the_first_message_line(scratch):
    commits = _commits(scratch)
    (root,) = history.mine_commit(commits[scratch["root"]], history.MineConfig())
    assert (root["reason"], json.loads(root["record_json"])["subject"]) == ("root_commit", "Initial import")
    (task,) = history.mine_commit(commits[scratch["doc"]], history.MineConfig())
    assert json.loads(task["extra_json"])["subject"] == "Document git output (#4)"


def test_patch_applies_is_false_without_the_base(scratch):
    assert history.patch_applies(scratch["repo"], "0" * 40, "diff --git a/x b/x\n") is False


def test_apply_check_verdict_and_switch(scratch, monkeypatch):
    commits = _commits(scratch)
    monkeypatch.setattr(history, "patch_applies", lambda repo, base, patch: False)
    (out,) = history.mine_commit(commits[scratch["doc"]], history.MineConfig())       # checked by default
    assert isinstance(out, Filtered) and out["reason"] == "patch_does_not_apply"
    (out,) = history.mine_commit(commits[scratch["doc"]], history.MineConfig(verify_apply=False))
    assert not isinstance(out, (Filtered, Reject)) and out["instance_id"] == "acme__tools-4"
    # a commit already filtered for its statement keeps that reason
    (out,) = history.mine_commit(commits[scratch["unit_sep"]], history.MineConfig(min_statement_chars=100))
    assert out["reason"] == "statement_too_short"


def test_git_failure_on_one_commit_is_a_reject(scratch, monkeypatch):
    real = history.split_diff

    def failing(repo, base, tip, *args, **kwargs):
        if tip == scratch["doc"]:
            raise RepoError("fatal: bad object")
        return real(repo, base, tip, *args, **kwargs)
    monkeypatch.setattr(history, "split_diff", failing)
    out = list(history.mine_repo(scratch["repo"], "acme/tools"))
    rejects = [r for r in out if isinstance(r, Reject)]
    assert [(r["reason"], r["source_locator"]) for r in rejects] == [("git_error", f"commit:{scratch['doc']}")]
    assert sorted(r["reason"] for r in out if isinstance(r, Filtered)) == ["non_utf8_diff", "root_commit"]
    assert [t["instance_id"] for t in out if not isinstance(t, (Filtered, Reject))] == ["acme__tools-5"]
