"""A scratch git repository for gold tests, on top of :mod:`tests.gitutil`: byte-exact diffs (CRLF kept)."""
from __future__ import annotations

import os
import pathlib
import subprocess

from tests.gitutil import ENV, commit_files, git, init_repo


class ScratchRepo:
    def __init__(self, root: pathlib.Path):
        self.root = root
        init_repo(str(root))
        git(str(root), "config", "core.autocrlf", "false")

    def change(self, base_files: dict, new_files: dict) -> tuple[str, str]:
        """Commit ``base_files`` (unless already committed), stage ``new_files``, return ``(base, git diff)``;
        the work tree is reset to the base afterwards."""
        repo = str(self.root)
        has_head = subprocess.run(["git", "-C", repo, "rev-parse", "-q", "--verify", "HEAD"],
                                  capture_output=True).returncode == 0
        for rel, content in base_files.items():
            p = self.root / rel
            if not p.exists() or p.read_bytes() != (content.encode() if isinstance(content, str) else content):
                has_head = False
        base = commit_files(repo, base_files, "base") if not has_head else git(repo, "rev-parse", "HEAD")
        for rel, content in new_files.items():
            p = self.root / rel
            if content is None:
                p.unlink()
                continue
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(content.encode() if isinstance(content, str) else content)
        git(repo, "add", "-A")
        diff = subprocess.run(["git", "-C", repo, "diff", "--cached", "-M", base], check=True, capture_output=True,
                              env={**os.environ, **ENV}).stdout.decode("utf-8", "surrogateescape")
        git(repo, "reset", "-q", "--hard", base)
        return base, diff
