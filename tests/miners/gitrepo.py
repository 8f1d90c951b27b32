"""A tiny real git repository for tests: write files, commit, diff."""
from __future__ import annotations

import os
import pathlib
import subprocess

ENV = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
       "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent"}


class ScratchRepo:
    def __init__(self, root: pathlib.Path):
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", "main")
        self.git("config", "core.autocrlf", "false")

    def git(self, *args: str) -> str:
        return subprocess.run(["git", "-C", str(self.root), *args], check=True, capture_output=True,
                              env=ENV).stdout.decode("utf-8", "surrogateescape")

    def write(self, files: dict[str, bytes | str | None]) -> None:
        for path, content in files.items():
            p = self.root / path
            if content is None:
                p.unlink()
                continue
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(content.encode() if isinstance(content, str) else content)

    def commit(self, files: dict[str, bytes | str | None], msg: str = "c") -> str:
        self.write(files)
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", msg)
        return self.git("rev-parse", "HEAD").strip()

    def change(self, base_files: dict, new_files: dict) -> tuple[str, str]:
        """Commit ``base_files``, apply ``new_files``, return ``(base_commit, git diff)`` (work tree reset)."""
        base = self.commit(base_files)
        self.write(new_files)
        self.git("add", "-A")
        diff = self.git("diff", "--cached", "-M", base)
        self.git("reset", "-q", "--hard", base)
        return base, diff
