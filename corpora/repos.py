"""Repository sources for the miners that need code: git repos at a commit, directories, installed packages,
the standard library, and remote git URLs cloned into a cache.

``open_repo(spec)`` picks the source from the spec string:

- a path to a git repository (bare or not): blobs are read with real git (``git cat-file``), no checkout;
- a path to a plain directory;
- ``stdlib``: the running interpreter's standard library (the embedded default for code mining);
- ``pkg:<name>``: an installed Python package;
- a URL (``https://``, ``ssh://``, ``git@``, ``file://``): cloned bare into a cache, then read as a git repo.

Mined code is never executed (docs/architecture.md, rule 6): files are read as bytes only.
"""
from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import os
import platform
import re
import sys
import sysconfig
from collections.abc import Iterator

from swemine.corpora.git import RepoError, clone_or_fetch, git, is_repository_root, resolve_commit, succeeds
from swemine.corpora.inputs import UNDECODABLE, UNDECODABLE_MESSAGE, undecodable
from swemine.corpora.licenses import LICENSE_FILES, license_from_text
from swemine.corpora.records import SOURCE_FILE_SCHEMA, conform, content_id, make_reject, provenance, sha256_bytes

STAGE = "repo"
DEFAULT_MAX_FILE_BYTES = 1 << 20
LANGUAGES = {".py": "python", ".pyi": "python", ".js": "javascript", ".ts": "typescript", ".go": "go",
             ".rs": "rust", ".java": "java", ".c": "c", ".h": "c", ".cpp": "cpp", ".md": "markdown"}
class RepoSource:
    """Common interface: ``name``, ``read``, ``list_files``, ``head``, ``iter_source_files``, ``license``.

    ``uri`` names the repository portably, never by a local folder: ``owner/name`` (a local clone; records add
    ``@<commit>``), the remote URL it was cloned from, ``python/cpython@v3.11.7`` (the standard library) or
    ``pypi/<package>@<version>``."""
    name: str = ""
    uri: str = ""

    def source_uri(self, commit: str | None) -> str:
        """The ``source_uri`` of a file read at ``commit``."""
        return f"{self.uri}@{commit}" if commit and "@" not in self.uri else self.uri

    def read(self, path: str, commit: str | None = None) -> bytes | None:
        raise NotImplementedError

    def list_files(self, commit: str | None = None) -> list[str]:
        raise NotImplementedError

    def head(self) -> str:
        return ""

    def license(self, commit: str | None = None) -> str:
        """SPDX id from the repository's root license file ("" when none is recognised); cached per commit."""
        cache = self.__dict__.setdefault("_license_cache", {})
        if commit not in cache:
            found = ""
            for _, data in self._blobs(list(LICENSE_FILES), commit):
                if data:
                    found = license_from_text(data.decode("utf-8", errors="replace"))
                    break
            cache[commit] = found
        return cache[commit]

    def _blobs(self, paths: list[str], commit: str | None) -> Iterator[tuple[str, bytes | None]]:
        """``(path, bytes or None)`` of the ``paths``."""
        for path in paths:
            yield path, self.read(path, commit)

    def iter_source_files(self, commit: str | None = None, suffixes: tuple[str, ...] = (".py",),
                          max_bytes: int = DEFAULT_MAX_FILE_BYTES) -> Iterator[dict]:
        """SourceFile records (or rejects: ``too_large``, ``binary_file``, ``not_utf8``, ``missing``,
        ``undecodable_name``) of every path with one of the ``suffixes``."""
        commit = commit or self.head()
        lic = self.license(commit)
        paths = []
        for p in self.list_files(commit):
            if not p.endswith(suffixes):
                continue
            shown = undecodable(p)
            if shown is None:
                paths.append(p)
            else:
                yield make_reject(STAGE, UNDECODABLE, UNDECODABLE_MESSAGE, uri=self.source_uri(commit),
                                  locator=f"{commit}:{shown}" if commit else shown)
        for path, data in self._blobs(paths, commit):
            locator = f"{commit}:{path}" if commit else path
            if data is None:
                yield make_reject(STAGE, "missing", f"{path} could not be read", uri=self.source_uri(commit),
                                  locator=locator)
                continue
            sha = sha256_bytes(data)
            problem = _content_problem(data, max_bytes)
            if problem:
                yield make_reject(STAGE, problem[0], problem[1], uri=self.source_uri(commit), locator=locator, sha256=sha,
                                  excerpt=data[:120])
                continue
            yield source_file(self.name, commit, path, data.decode("utf-8"), lic, self.source_uri(commit), locator,
                              sha)


def _content_problem(data: bytes, max_bytes: int) -> tuple[str, str] | None:
    if len(data) > max_bytes:
        return "too_large", f"{len(data)} bytes > {max_bytes}"
    if b"\x00" in data[:8192]:
        return "binary_file", "contains NUL bytes"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return "not_utf8", f"invalid UTF-8 at byte {exc.start}"
    return None


def source_file(repo: str, commit: str, path: str, content: str, license_id: str, uri: str, locator: str,
                sha: str) -> dict:
    """A ``SourceFile`` record."""
    ext = os.path.splitext(path)[1].lower()
    return conform(SOURCE_FILE_SCHEMA, {
        "record_id": content_id("source_file", repo, commit, path, sha), "repo": repo, "commit": commit,
        "path": path, "language": LANGUAGES.get(ext, ext.lstrip(".")), "content": content, "content_sha256": sha,
        "size": len(content.encode("utf-8")), "license": license_id, **provenance(uri, locator, sha)})


class GitRepo(RepoSource):
    """A local git repository (bare or with a work tree); every read goes through git objects at a commit."""

    def __init__(self, path: str, name: str = ""):
        self.path = os.path.abspath(path)
        self.name = name or name_from_path(self.path)
        self.uri = self.name
        git(self.path, "rev-parse", "--git-dir")

    def head(self) -> str:
        return git(self.path, "rev-parse", "HEAD", check=False).decode().strip()

    def has_commit(self, commit: str) -> bool:
        return succeeds(self.path, "cat-file", "-e", f"{commit}^{{commit}}")

    def read(self, path: str, commit: str | None = None) -> bytes | None:
        try:
            return git(self.path, "cat-file", "blob", f"{commit or 'HEAD'}:{path}")
        except RepoError:
            return None

    def list_files(self, commit: str | None = None) -> list[str]:
        out = git(self.path, "ls-tree", "-r", "-z", "--name-only", commit or "HEAD")
        return sorted(p for p in out.decode("utf-8", errors="surrogateescape").split("\0") if p)

    def _blobs(self, paths, commit):
        """All blobs through one ``git cat-file --batch`` process (fast for whole-repo reads)."""
        if not paths:
            return
        rev = commit or "HEAD"
        request = "".join(f"{rev}:{p}\n" for p in paths).encode("utf-8", errors="surrogateescape")
        out = git(self.path, "cat-file", "--batch", input_bytes=request)
        pos = 0
        for path in paths:
            nl = out.index(b"\n", pos)
            header = out[pos:nl].split()
            pos = nl + 1
            start, size = pos, int(header[2]) if len(header) >= 3 and header[1] != b"missing" else None
            if size is not None:
                pos += size + 1             # past the object and its newline
            yield path, out[start:start + size] if size is not None and header[1] == b"blob" else None


class DirRepo(RepoSource):
    """A plain directory (or an installed package / the standard library)."""

    def __init__(self, root: str, name: str = "", license_id: str | None = None,
                 exclude_dirs: tuple[str, ...] = ("__pycache__", ".git", "site-packages", "node_modules")):
        self.root = os.path.abspath(root)
        self.name = name or name_from_path(self.root)
        self.uri = self.name
        self._license = license_id
        self.exclude_dirs = exclude_dirs
        if not os.path.isdir(self.root):
            raise RepoError(f"not a directory: {root}")

    def read(self, path: str, commit: str | None = None) -> bytes | None:
        full = os.path.join(self.root, path)
        if not os.path.realpath(full).startswith(os.path.realpath(self.root) + os.sep) or not os.path.isfile(full):
            return None
        with open(full, "rb") as fh:
            return fh.read()

    def list_files(self, commit: str | None = None) -> list[str]:
        out = []
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames[:] = sorted(d for d in dirnames if d not in self.exclude_dirs)
            for f in filenames:
                full = os.path.join(dirpath, f)
                if not os.path.islink(full):
                    out.append(os.path.relpath(full, self.root).replace(os.sep, "/"))
        return sorted(out)

    def license(self, commit: str | None = None) -> str:
        return self._license if self._license is not None else super().license(commit)


def name_from_path(path: str) -> str:
    """``/x/owner__name.git`` → ``owner/name``; otherwise the folder name."""
    base = os.path.basename(os.path.normpath(path))
    if base.endswith(".git"):
        base = base[:-4]
    if "__" in base:
        owner, _, name = base.partition("__")
        return f"{owner}/{name}".lower()
    return base


def stdlib_repo() -> DirRepo:
    """The running interpreter's standard library (PSF-2.0), without site-packages."""
    root = sysconfig.get_paths()["stdlib"]
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    repo = DirRepo(root, name=f"python/cpython-stdlib-{version}", license_id="PSF-2.0",
                   exclude_dirs=("__pycache__", "site-packages", "idlelib", "lib2to3", "test", "tests"))
    repo.uri = f"python/cpython@v{platform.python_version()}"
    return repo


def package_repo(name: str) -> DirRepo:
    """An installed package's source directory; license from its distribution metadata when declared."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise RepoError(f"installed package not found (or not a package): {name}")
    root = list(spec.submodule_search_locations)[0]
    repo = DirRepo(root, name=f"pypi/{name}")
    dist = (importlib.metadata.packages_distributions().get(name) or [name])[0]     # yaml -> PyYAML
    try:
        repo.uri = f"pypi/{name}@{importlib.metadata.version(dist)}"
    except importlib.metadata.PackageNotFoundError:
        pass
    return repo


def is_url(spec: str) -> bool:
    return bool(re.match(r"^(https?|ssh|git|file)://", spec)) or bool(re.match(r"^[\w.-]+@[\w.-]+:", spec))


def default_cache_dir() -> str:
    return os.environ.get("SWEMINE_REPO_CACHE", os.path.join(os.path.expanduser("~"), ".cache", "swemine", "repos"))


def clone_cached(url: str, cache_dir: str | None = None, timeout: int = 1800) -> str:
    """Bare-clone ``url`` into the cache (or fetch if already there); returns the local path."""
    cache = cache_dir or default_cache_dir()
    os.makedirs(cache, exist_ok=True)
    slug = re.sub(r"[^\w.-]+", "_", url.rstrip("/").split("://")[-1])[-80:]
    dest = os.path.join(cache, f"{slug}-{hashlib.sha1(url.encode()).hexdigest()[:8]}.git")
    clone_or_fetch(url, dest, timeout)
    return dest


def open_repo(spec: str, cache_dir: str | None = None, name: str = "") -> RepoSource:
    """Open a repository source from a spec string (see module docstring)."""
    if spec == "stdlib":
        return stdlib_repo()
    if spec.startswith("pkg:"):
        return package_repo(spec[4:])
    if is_url(spec):
        if spec.startswith("file://") and not os.path.exists(spec[7:]):
            raise RepoError(f"no repository at {spec}")
        label = name or name_from_url(spec)
        repo = GitRepo(clone_cached(spec, cache_dir), name=label)
        repo.uri = spec
        return repo
    if not os.path.exists(spec):
        raise RepoError(f"no such repository path: {spec}")
    if is_repository_root(spec):
        return GitRepo(spec, name=name)
    return DirRepo(spec, name=name)


class GitRepos:
    """Git repositories by spec, each opened once (a remote URL is cloned into ``cache_dir``): one per worker."""

    def __init__(self, cache_dir: str | None):
        self.cache_dir = cache_dir
        self._open: dict[tuple[str, str], GitRepo] = {}

    def get(self, spec: str, name: str) -> GitRepo:
        """The repository of ``spec``, named ``name``; :class:`RepoError` when it is not a git repository."""
        if (spec, name) not in self._open:
            repo = open_repo(spec, self.cache_dir, name=name)
            if not isinstance(repo, GitRepo):
                raise RepoError(f"not a git repository: {spec}")
            self._open[(spec, name)] = repo
        return self._open[(spec, name)]


def pinned_spec(spec: str) -> str:
    """``path@<rev>`` of a local git repository (``rev`` a branch, tag or ``HEAD``) → ``path@<sha>``; any other spec
    as given. ``ValueError`` for a path that is not there or a revision the repository lacks."""
    head, sep, rev = spec.rpartition("@")
    if spec == "stdlib" or spec.startswith("pkg:") or is_url(spec):
        return spec
    if not os.path.exists(spec) and not (sep and head and os.path.exists(head)):
        raise ValueError(f"{spec}: no such repository path")
    if not sep or not head or not os.path.isdir(head):
        return spec
    sha = resolve_commit(head, rev)
    if not sha:
        raise ValueError(f"{spec}: {head} has no commit {rev!r}")
    return f"{head}@{sha}"


def split_spec(spec: str) -> tuple[str, str | None]:
    """``path@<sha>`` → (path, sha); anything else → (spec, None)."""
    head, sep, tail = spec.rpartition("@")
    if sep and head and re.fullmatch(r"[0-9a-fA-F]{7,40}", tail):
        return head, tail
    return spec, None


def spec_source_files(spec: str, max_bytes: int, stage: str) -> Iterator[dict]:
    """SourceFiles of one repo spec at its ``@<sha>`` (or head), with the walk's rejects; a ``repo_unavailable``
    reject of ``stage`` for a repo that cannot be opened."""
    path, commit = split_spec(spec)
    try:
        repo = open_repo(path)
    except (RepoError, OSError) as exc:
        yield make_reject(stage, "repo_unavailable", str(exc), uri=spec)
        return
    yield from repo.iter_source_files(commit=commit or repo.head(), max_bytes=max_bytes)


def name_from_url(url: str) -> str:
    """``https://github.com/Owner/Name.git`` → ``owner/name``."""
    parts = re.split(r"[/:]", url.rstrip("/"))
    tail = [p for p in parts if p][-2:]
    if tail and tail[-1].endswith(".git"):
        tail[-1] = tail[-1][:-4]
    return "/".join(tail).lower()


def repo_for(repos_dir: str, repo_name: str) -> GitRepo | None:
    """The git repository for ``owner/name`` in ``repos_dir`` (folders ``owner__name`` or ``owner__name.git``)."""
    if not repos_dir or not repo_name or "/" not in repo_name:
        return None
    owner, name = repo_name.split("/", 1)
    want = f"{owner}__{name}".lower()
    try:
        entries = os.listdir(repos_dir)
    except OSError:
        return None
    for entry in sorted(entries):
        base = entry[:-4] if entry.endswith(".git") else entry
        if base.lower() == want:
            return GitRepo(os.path.join(repos_dir, entry), name=repo_name.lower())
    return None
