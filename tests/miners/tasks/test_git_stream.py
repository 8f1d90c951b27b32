"""Streamed git work gives the same tasks as one git call per commit; merge bases and the batched apply check
agree with git itself."""
import itertools

import pytest

from swemine.corpora.records import Filtered
from swemine.miners.tasks import git_stream, history
from tests.gitutil import build_history, build_shapes, commit_files, git, init_repo


def _odd_repo(root: str) -> str:
    """Fix commits touching odd paths, CRLF and no-final-newline files, a deletion and a binary file."""
    repo = init_repo(root)
    commit_files(repo, {"pkg/a.py": "x = 1\r\ny = 2", "pkg/gone.py": "z = 3\n", "README": "r\n"}, "init")
    commit_files(repo, {"pkg/a.py": "x = 1\r\ny = 3\n", "pkg/gone.py": None, "src/é b.py": "w = 1\n",
                        "tests/tab\there.py": "t = 1\n"}, "Handle odd files (#7)\n\nThe odd files were mishandled badly.")
    commit_files(repo, {"pkg/a.py": "x = 2\r\ny = 3", "img.bin": b"\x00\x01\x02"}, "Fix a binary thing (#8)")
    commit_files(repo, {"pkg/a.py": "x = 2\r\ny = 4\n"}, "Fix y, it was wrong for everyone. Fixes #9")
    return repo


@pytest.fixture(scope="module")
def repos(tmp_path_factory):
    root = tmp_path_factory.mktemp("stream")
    return [build_history(str(root / "h"))["repo"], build_shapes(str(root / "s"))["repo"],
            _odd_repo(str(root / "odd" / "acme__odd"))]


def test_streamed_mining_equals_one_git_call_per_commit(repos, monkeypatch):
    streamed = [list(history.mine_repo(r, "acme/calc")) for r in repos]
    monkeypatch.setattr(history, "prepare", lambda commits, *a, **k: commits)     # the per-commit git path
    plain = [list(history.mine_repo(r, "acme/calc")) for r in repos]
    assert streamed == plain
    reasons = {f["reason"] for out in plain for f in out if isinstance(f, Filtered)}
    assert {"binary_diff", "not_a_fix"} <= reasons and sum(not isinstance(t, Filtered) for t in plain[2]) == 2


def test_prepare_does_the_git_work_up_front(repos):
    commits = history.list_commits(repos[0], "acme/calc")
    cfg = history.MineConfig()
    prepared = list(git_stream.prepare(commits, lambda c: history.classify(c, cfg)[0], "HEAD"))
    candidates = [c for c in prepared if history.classify(c, cfg)[0]]
    assert candidates and all("diff" in c and "base" in c for c in candidates)
    for c in candidates:        # the streamed text is git diff's text
        base, tip = history.base_of({k: v for k, v in c.items() if k != "base"}, history.classify(c, cfg)[0])
        assert c["base"] == base
        assert c["diff"].decode() == git(repos[0], "-c", "core.quotepath=off", "diff", "--no-color", "--no-renames",
                                         "--src-prefix=a/", "--dst-prefix=b/", base, tip, "--") + "\n"
        assert c.get("applies", False) is (b"\nBinary files " not in c["diff"])   # binary diffs are filtered before


def test_merge_base_agrees_with_git_and_defers_criss_cross(tmp_path):
    repo = init_repo(str(tmp_path / "cc"))
    root = commit_files(repo, {"f": "0\n"}, "root")
    a = commit_files(repo, {"a": "1\n"}, "a")
    git(repo, "checkout", "-q", "-b", "side", root)
    b = commit_files(repo, {"b": "1\n"}, "b")
    git(repo, "merge", "-q", "--no-edit", a)                      # side: merge of b and a
    side_merge = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-edit", b)                      # main: merge of a and b (criss-cross)
    main_merge = git(repo, "rev-parse", "HEAD")
    git(repo, "merge", "-q", "--no-edit", "side")
    _, parents, gen = git_stream.commit_graph(repo, "HEAD")
    for x, y in itertools.combinations(sorted(gen), 2):
        ours = git_stream.merge_base(x, y, parents, gen)
        theirs = git(repo, "merge-base", "--all", x, y).split()
        assert ours == (theirs[0] if len(theirs) == 1 else None), (x, y)
    assert git_stream.merge_base(main_merge, side_merge, parents, gen) is None   # two best ancestors: ask git


def test_apply_hunks_is_exact():
    chunk = (b"diff --git a/f b/f\nindex 1..2 100644\n--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\r\n-b\n"
             b"\\ No newline at end of file\n+c\n")
    assert git_stream.apply_hunks(b"a\r\nb", chunk) == b"a\r\nc\n"
    assert git_stream.apply_hunks(b"a\r\nB", chunk) is None                    # removed line differs
    assert git_stream.apply_hunks(b"x\na\r\nb", chunk) is None                 # no offsets: line 1 must match
