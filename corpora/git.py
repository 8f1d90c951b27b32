"""The one place swemine runs ``git``: a checked call, and the few questions the readers, miners, filters and
the manifest ask of a repository. Everything reads git objects (no checkout, never runs repository code)."""
from __future__ import annotations

import os
import subprocess


class RepoError(RuntimeError):
    """A repository could not be opened, cloned or read."""


def git(repo_path: str, *args: str, input_bytes: bytes | None = None, check: bool = True,
        env: dict[str, str] | None = None, timeout: int = 600) -> bytes:
    """stdout of ``git -C repo_path args...``; a failure raises :class:`RepoError` (unless ``check=False``)."""
    proc = subprocess.run(["git", "-C", repo_path, *args], input=input_bytes, capture_output=True, timeout=timeout,
                          env=env)
    if check and proc.returncode != 0:
        raise RepoError(f"git {' '.join(args[:3])} failed in {repo_path}: {proc.stderr.decode(errors='replace')[:300]}")
    return proc.stdout


def popen(repo_path: str, *args: str) -> subprocess.Popen:
    """A long-lived ``git -C repo_path args...`` fed on stdin (``cat-file --batch``, ``diff-tree --stdin``): one
    process answers a whole history's questions. The caller writes stdin, reads stdout and waits."""
    return subprocess.Popen(["git", "-C", repo_path, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


def succeeds(repo_path: str, *args: str, input_bytes: bytes | None = None, env: dict[str, str] | None = None) -> bool:
    """True when ``git -C repo_path args...`` exits 0 (its output is discarded)."""
    proc = subprocess.run(["git", "-C", repo_path, *args], input=input_bytes, capture_output=True, env=env)
    return proc.returncode == 0


def _text(repo_path: str, *args: str) -> str:
    """stdout of a git query, stripped; "" when git fails or is missing."""
    try:
        proc = subprocess.run(["git", "-C", repo_path, *args], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return proc.stdout.strip() if proc.returncode == 0 else ""


def resolve_commit(path: str, rev: str = "HEAD") -> str:
    """The commit ``rev`` names in the local repository ``path`` ("" for URLs and non-repositories)."""
    if not os.path.isdir(path):
        return ""
    return _text(path, "rev-parse", "--verify", "-q", f"{rev}^{{commit}}")


def root_commits(git_dir: str) -> list[str]:
    """Root commit SHAs of a local git repository (``git rev-list --max-parents=0 --all``), sorted."""
    out = git(git_dir, "rev-list", "--max-parents=0", "--all", timeout=120).decode()
    return sorted(line for line in out.split() if line)


def is_repository_root(path: str) -> bool:
    """True for a bare repository or the top of a work tree (not for a folder inside one)."""
    if not succeeds(path, "rev-parse", "--git-dir"):
        return False
    top = _text(path, "rev-parse", "--show-toplevel")
    return not top or os.path.samefile(top, path)


def clone_or_fetch(url: str, dest: str, timeout: int = 1800) -> None:
    """Bare-clone ``url`` into ``dest`` (via ``dest.partial``), or fetch every branch when ``dest`` exists."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    exists = os.path.isdir(dest)
    cmd = (["git", "-C", dest, "fetch", "--quiet", "--prune", "origin", "+refs/heads/*:refs/heads/*"] if exists
           else ["git", "clone", "--quiet", "--bare", url, dest + ".partial"])
    proc = subprocess.run(cmd, capture_output=True, timeout=timeout, env=env)
    if proc.returncode != 0:
        raise RepoError(f"git {'fetch' if exists else 'clone'} {url} failed: {proc.stderr.decode(errors='replace')[:300]}")
    if not exists:
        os.rename(dest + ".partial", dest)
