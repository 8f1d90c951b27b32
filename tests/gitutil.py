"""Helpers to build real git repositories in tests."""
from __future__ import annotations

import os
import subprocess

ENV = {"GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "Test",
       "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
       "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}


def git(repo: str, *args: str, env: dict | None = None) -> str:
    """Run git in ``repo`` with a fixed identity; return stdout."""
    full_env = {**os.environ, **ENV, **(env or {})}
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True, text=True,
                          env=full_env).stdout.strip()


def init_repo(path: str) -> str:
    os.makedirs(path, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    return path


def commit_files(repo: str, files: dict[str, str | bytes | None], message: str) -> str:
    """Write (or delete, with ``None``) files, commit everything, return the new commit sha."""
    for rel, content in files.items():
        full = os.path.join(repo, rel)
        if content is None:
            os.remove(full)
            continue
        os.makedirs(os.path.dirname(full) or repo, exist_ok=True)
        mode = "wb" if isinstance(content, bytes) else "w"
        with open(full, mode) as fh:
            fh.write(content)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")
