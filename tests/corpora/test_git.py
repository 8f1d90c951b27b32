"""The one git module: checked calls, commits by revision, root commits, repository roots, bare clones."""
from __future__ import annotations

import os

import pytest

from swemine.corpora.git import (
    RepoError,
    clone_or_fetch,
    git,
    is_repository_root,
    resolve_commit,
    root_commits,
    succeeds,
)
from tests.gitutil import commit_files, init_repo
from tests.gitutil import git as git_text


def test_git_questions(tmp_path):
    repo = init_repo(str(tmp_path / "r"))
    first = commit_files(repo, {"a.py": "x = 1\n"}, "one")
    second = commit_files(repo, {"a.py": "x = 2\n"}, "two")
    assert git(repo, "cat-file", "blob", f"{first}:a.py") == b"x = 1\n"
    with pytest.raises(RepoError, match="git cat-file blob"):
        git(repo, "cat-file", "blob", f"{first}:missing.py")
    assert git(repo, "cat-file", "blob", "HEAD:missing.py", check=False) == b""
    assert succeeds(repo, "cat-file", "-e", f"{second}^{{commit}}") and not succeeds(repo, "cat-file", "-e", "f" * 40)
    assert resolve_commit(repo) == second and resolve_commit(repo, "HEAD~1") == first
    assert resolve_commit(repo, "no-such-branch") == "" and resolve_commit("https://example.invalid/r.git") == ""
    assert root_commits(repo) == [first]
    os.makedirs(os.path.join(repo, "pkg"))
    assert is_repository_root(repo) and not is_repository_root(os.path.join(repo, "pkg"))
    assert not is_repository_root(str(tmp_path))


def test_clone_then_fetch(tmp_path):
    origin = init_repo(str(tmp_path / "origin"))
    first = commit_files(origin, {"a.py": "x = 1\n"}, "one")
    dest = str(tmp_path / "cache" / "origin.git")
    os.makedirs(os.path.dirname(dest))
    clone_or_fetch(f"file://{origin}", dest)
    assert is_repository_root(dest) and resolve_commit(dest, "main") == first
    second = commit_files(origin, {"a.py": "x = 2\n"}, "two")
    clone_or_fetch(f"file://{origin}", dest)                       # the second call fetches
    assert resolve_commit(dest, "main") == second == git_text(origin, "rev-parse", "HEAD")
    with pytest.raises(RepoError, match="clone"):
        clone_or_fetch(f"file://{tmp_path}/nothing", str(tmp_path / "cache" / "nothing.git"))
