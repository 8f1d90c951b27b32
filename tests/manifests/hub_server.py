"""A small Hugging Face Hub on 127.0.0.1 (stdlib ``ThreadingHTTPServer``) for upload and load-back tests.

Implements what ``huggingface_hub`` (with ``HF_HUB_DISABLE_XET=1``) and ``datasets.load_dataset`` call: repo
create, branch and tag, ``validate-yaml``, preupload, the git-LFS batch API with PUT upload and verify, the ndjson
commit, repo info (by revision), tree listing (recursive, sub-folders, ``EntryNotFound`` 404s), ``paths-info`` and
file resolve with HEAD and ``Range``. Repos keep a commit history; LFS objects live in one store keyed by sha256.

Faults are queued rules ``Fault(route, action, times, skip)``: ``route`` is one of ``commit``, ``preupload``,
``put``, ``lfs_batch``; ``action`` is an HTTP status (429 carries ``Retry-After: 0``) or ``"drop"`` (read part of
the request body, then close the connection without answering). ``put_completed`` counts stored uploads per
LFS oid, ``put_attempts`` every PUT; ``log`` holds ``(method, path, status)`` of every request.
"""
from __future__ import annotations

import base64
import collections
import hashlib
import json
import re
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import yaml

LFS_SUFFIXES = (".parquet", ".arrow", ".bin", ".zst", ".gz")
REGULAR_LIMIT = 10 * 1024 * 1024


def git_blob_oid(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class FileEntry:
    size: int
    blob_oid: str
    lfs_sha256: str | None = None      # set for LFS files (content in the LFS store)
    content: bytes | None = None       # set for regular files


@dataclass
class Commit:
    oid: str
    parent: str | None
    message: str
    files: dict[str, FileEntry]
    date: str


@dataclass
class Repo:
    repo_id: str
    private: bool
    commits: dict[str, Commit] = field(default_factory=dict)
    refs: dict[str, str] = field(default_factory=dict)       # branch -> commit oid
    tags: dict[str, str] = field(default_factory=dict)

    def resolve(self, rev: str) -> Commit | None:
        oid = self.refs.get(rev) or self.tags.get(rev) or (rev if rev in self.commits else None)
        return self.commits.get(oid) if oid else None


@dataclass
class Fault:
    route: str
    action: int | str
    times: int = 1
    skip: int = 0       # let this many matching requests through first


class HubState:
    def __init__(self):
        self.lock = threading.Lock()
        self.repos: dict[str, Repo] = {}
        self.lfs: dict[str, bytes] = {}
        self.faults: list[Fault] = []
        self.put_attempts: collections.Counter = collections.Counter()
        self.put_completed: collections.Counter = collections.Counter()
        self.log: list[tuple[str, str, int]] = []
        self.auth_headers: set[str] = set()

    def take_fault(self, route: str) -> int | str | None:
        with self.lock:
            for f in self.faults:
                if f.route != route or f.times <= 0:
                    continue
                if f.skip > 0:
                    f.skip -= 1
                    return None
                f.times -= 1
                return f.action
        return None

    def new_commit(self, repo: Repo, branch: str, files: dict[str, FileEntry], message: str) -> Commit:
        parent = repo.refs.get(branch)
        seed = json.dumps([parent, message, sorted((p, e.blob_oid) for p, e in files.items()), time.time_ns()])
        commit = Commit(hashlib.sha1(seed.encode()).hexdigest(), parent, message, files,
                        time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()))
        repo.commits[commit.oid] = commit
        repo.refs[branch] = commit.oid
        return commit


_GITATTRIBUTES = b"*.parquet filter=lfs diff=lfs merge=lfs -text\n*.arrow filter=lfs diff=lfs merge=lfs -text\n"
_API_RE = re.compile(r"^/api/(?P<type>datasets|models|spaces)/(?P<repo>[^/]+/[^/]+)(?:/(?P<rest>.*))?$")
_RESOLVE_RE = re.compile(r"^/(?P<type>datasets)/(?P<repo>[^/]+/[^/]+)/resolve/(?P<rev>[^/]+)/(?P<path>.+)$")
_LFS_BATCH_RE = re.compile(r"^/(?P<type>datasets)/(?P<repo>[^/]+/[^/]+)\.git/info/lfs/objects/batch$")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: HubServer

    def log_message(self, *args):  # quiet
        pass

    # ------------------------------------------------------------ helpers
    @property
    def state(self) -> HubState:
        return self.server.state

    def _body(self) -> bytes:
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def _send(self, status: int, body: bytes = b"", headers: dict | None = None, content_type="application/json"):
        self.state.log.append((self.command, self.path, status))
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        for k, v in (headers or {}).items():
            self.send_header(k, str(v))
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, obj, headers: dict | None = None):
        self._send(status, json.dumps(obj).encode(), headers)

    def _error(self, status: int, message: str, code: str | None = None):
        self._json(status, {"error": message}, {"X-Error-Code": code, "X-Error-Message": message} if code else
                   {"X-Error-Message": message})

    def _drop(self):
        """Read part of the request body, then close the socket without an answer."""
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            self.rfile.read(max(1, n // 2))
        self.state.log.append((self.command, self.path, 0))
        self.close_connection = True
        try:
            self.connection.shutdown(2)
        except OSError:
            pass

    def _fault(self, route: str) -> bool:
        action = self.state.take_fault(route)
        if action is None:
            return False
        if action == "drop":
            self._drop()
        else:
            self._body()
            self._error(int(action), f"injected {action}", None)
        return True

    def _repo(self, repo_id: str) -> Repo | None:
        repo = self.state.repos.get(repo_id)
        if repo is None:
            self._error(404, "Repository not found", "RepoNotFound")
        return repo

    def _commit_at(self, repo: Repo, rev: str) -> Commit | None:
        commit = repo.resolve(urllib.parse.unquote(rev))
        if commit is None:
            self._error(404, f"Invalid rev id: {rev}", "RevisionNotFound")
        return commit

    def _base(self) -> str:
        return f"http://{self.server.server_address[0]}:{self.server.server_address[1]}"

    def _entry_json(self, path: str, e: FileEntry) -> dict:
        out = {"type": "file", "oid": e.blob_oid, "size": e.size, "path": path}
        if e.lfs_sha256:
            out["lfs"] = {"oid": e.lfs_sha256, "size": e.size, "pointerSize": 134}
        return out

    def _file_bytes(self, e: FileEntry) -> bytes:
        return self.state.lfs[e.lfs_sha256] if e.lfs_sha256 else e.content

    # ------------------------------------------------------------ dispatch
    def _dispatch(self):
        if self.headers.get("Authorization"):
            self.state.auth_headers.add(self.headers["Authorization"])
        url = urllib.parse.urlsplit(self.path)
        path, query = url.path, urllib.parse.parse_qs(url.query)
        if self.command == "POST" and path == "/api/repos/create":
            return self._create_repo()
        if self.command == "POST" and path == "/api/validate-yaml":
            return self._validate_yaml()
        if path.startswith("/_lfs/"):
            return self._lfs_object(path)
        if m := _LFS_BATCH_RE.match(path):
            return self._lfs_batch(m["repo"])
        if m := _RESOLVE_RE.match(path):
            return self._resolve(m["repo"], m["rev"], urllib.parse.unquote(m["path"]))
        if m := _API_RE.match(path):
            return self._api(m["repo"], m["rest"] or "", query)
        self._body()
        self._error(404, f"no route {self.command} {path}")

    do_GET = do_POST = do_PUT = do_HEAD = _dispatch

    # ------------------------------------------------------------ write side
    def _create_repo(self):
        body = json.loads(self._body() or b"{}")
        repo_id = f"{body.get('organization')}/{body['name']}" if body.get("organization") else body["name"]
        with self.state.lock:
            if repo_id in self.state.repos:  # the Hub's 409 still carries the url
                return self._json(409, {"error": "You already created this dataset repo",
                                        "url": f"{self._base()}/datasets/{repo_id}"})
            repo = Repo(repo_id, body.get("visibility") == "private" or bool(body.get("private")))
            self.state.repos[repo_id] = repo
            self.state.new_commit(repo, "main", {".gitattributes": FileEntry(
                len(_GITATTRIBUTES), git_blob_oid(_GITATTRIBUTES), content=_GITATTRIBUTES)}, "initial commit")
        self._json(200, {"url": f"{self._base()}/datasets/{repo_id}", "name": repo_id})

    def _validate_yaml(self):
        body = json.loads(self._body() or b"{}")
        content = body.get("content", "")
        errors = []
        if not content.startswith("---\n") or content.count("---\n") < 2:
            errors.append("README.md has no YAML metadata block")
        else:
            try:
                meta = yaml.safe_load(content.split("---\n", 2)[1])
            except yaml.YAMLError as err:
                meta, errors = None, [f"YAML parse error: {err}"]
            if meta is not None and not isinstance(meta, dict):
                errors.append("metadata must be a mapping")
            elif isinstance(meta, dict):
                errors += _metadata_errors(meta)
        self._json(400 if errors else 200, {"errors": [{"message": e} for e in errors], "warnings": []})

    def _preupload(self, repo: Repo, rev: str):
        if self._fault("preupload"):
            return
        body = json.loads(self._body() or b"{}")
        commit = repo.resolve(urllib.parse.unquote(rev))
        files = []
        for f in body.get("files", []):
            sample = base64.b64decode(f.get("sample", ""))
            lfs = f["path"].endswith(LFS_SUFFIXES) or f["size"] > REGULAR_LIMIT or b"\0" in sample
            existing = commit.files.get(f["path"]) if commit else None
            oid = (existing.lfs_sha256 or existing.blob_oid) if existing else None
            files.append({"path": f["path"], "uploadMode": "lfs" if lfs else "regular", "shouldIgnore": False,
                          "oid": oid})
        self._json(200, {"files": files, "commitOid": commit.oid if commit else None})

    def _lfs_batch(self, repo_id: str):
        if self._fault("lfs_batch"):
            return
        if self._repo(repo_id) is None:
            return
        body = json.loads(self._body() or b"{}")
        objects = []
        for obj in body.get("objects", []):
            out = {"oid": obj["oid"], "size": obj["size"]}
            if obj["oid"] not in self.state.lfs:
                out["actions"] = {"upload": {"href": f"{self._base()}/_lfs/upload/{obj['oid']}"},
                                  "verify": {"href": f"{self._base()}/_lfs/verify/{obj['oid']}"}}
            objects.append(out)
        self._send(200, json.dumps({"transfer": "basic", "objects": objects}).encode(),
                   content_type="application/vnd.git-lfs+json")

    def _lfs_object(self, path: str):
        kind, _, oid = path[len("/_lfs/"):].partition("/")
        if kind == "upload" and self.command == "PUT":
            with self.state.lock:
                self.state.put_attempts[oid] += 1
            if self._fault("put"):
                return
            data = self._body()
            if hashlib.sha256(data).hexdigest() != oid:
                return self._error(400, "sha256 mismatch")
            with self.state.lock:
                self.state.lfs[oid] = data
                self.state.put_completed[oid] += 1
            return self._send(200)
        if kind == "verify" and self.command == "POST":
            body = json.loads(self._body() or b"{}")
            ok = oid in self.state.lfs and len(self.state.lfs[oid]) == body.get("size")
            return self._json(200, {"message": "ok"}) if ok else self._error(404, "object not found")
        self._body()
        self._error(404, "no such LFS route")

    def _commit(self, repo: Repo, rev: str):
        if self._fault("commit"):
            return
        branch = urllib.parse.unquote(rev)
        lines = [json.loads(ln) for ln in self._body().splitlines() if ln.strip()]
        with self.state.lock:
            if branch not in repo.refs:
                return self._error(404, f"Invalid rev id: {branch}", "RevisionNotFound")
            files = dict(repo.commits[repo.refs[branch]].files)
            message = ""
            for item in lines:
                key, value = item["key"], item["value"]
                if key == "header":
                    message = value.get("summary", "")
                elif key == "file":
                    data = base64.b64decode(value["content"])
                    files[value["path"]] = FileEntry(len(data), git_blob_oid(data), content=data)
                elif key == "lfsFile":
                    if value["oid"] not in self.state.lfs:
                        return self._error(422, f"LFS object {value['oid']} was never uploaded")
                    pointer = f"version https://git-lfs.github.com/spec/v1\noid sha256:{value['oid']}\n" \
                              f"size {value['size']}\n".encode()
                    files[value["path"]] = FileEntry(value["size"], git_blob_oid(pointer), lfs_sha256=value["oid"])
                elif key == "deletedFile":
                    files.pop(value["path"], None)
            commit = self.state.new_commit(repo, branch, files, message)
        self._json(200, {"commitUrl": f"{self._base()}/datasets/{repo.repo_id}/commit/{commit.oid}",
                         "commitOid": commit.oid, "pullRequestUrl": None})

    def _create_ref(self, repo: Repo, kind: str, name: str):
        body = json.loads(self._body() or b"{}")
        name = urllib.parse.unquote(name)
        with self.state.lock:
            if kind == "branch":
                if name in repo.refs:
                    return self._error(409, "Branch already exists")
                start = repo.resolve(body.get("startingPoint") or "main")
                repo.refs[name] = start.oid
            else:
                if body.get("tag") in repo.tags:
                    return self._error(409, "Tag already exists")
                target = repo.resolve(name)
                if target is None:
                    return self._error(404, f"Invalid rev id: {name}", "RevisionNotFound")
                repo.tags[body["tag"]] = target.oid
        self._json(200, {})

    # ------------------------------------------------------------ read side
    def _api(self, repo_id: str, rest: str, query: dict):
        if self.command == "GET" and (rest == "" or rest.startswith("revision/")):
            return self._info(repo_id, rest.partition("/")[2] or "main")
        repo = self._repo(repo_id)
        if repo is None:
            return
        head, _, tail = rest.partition("/")
        if head == "preupload":
            return self._preupload(repo, tail)
        if head == "commit" and self.command == "POST":
            return self._commit(repo, tail)
        if head in ("branch", "tag") and self.command == "POST":
            return self._create_ref(repo, head, tail)
        if head == "tree":
            rev, _, sub = tail.partition("/")
            return self._tree(repo, rev, urllib.parse.unquote(sub), query.get("recursive", ["false"])[0] == "true")
        if head == "paths-info":
            return self._paths_info(repo, tail)
        if head == "refs":
            return self._json(200, {"branches": [{"name": b, "ref": f"refs/heads/{b}", "targetCommit": o}
                                                 for b, o in repo.refs.items()],
                                    "tags": [{"name": t, "ref": f"refs/tags/{t}", "targetCommit": o}
                                             for t, o in repo.tags.items()], "converts": []})
        self._body()
        self._error(404, f"no route {self.command} {rest}")

    def _info(self, repo_id: str, rev: str):
        repo = self._repo(repo_id)
        if repo is None:
            return
        commit = self._commit_at(repo, rev)
        if commit is None:
            return
        self._json(200, {"_id": hashlib.sha1(repo_id.encode()).hexdigest()[:24], "id": repo_id,
                         "author": repo_id.split("/")[0], "sha": commit.oid, "private": repo.private,
                         "disabled": False, "gated": False, "downloads": 0, "likes": 0, "tags": [],
                         "lastModified": commit.date, "createdAt": commit.date,
                         "siblings": [{"rfilename": p} for p in sorted(commit.files)]})

    def _tree(self, repo: Repo, rev: str, sub: str, recursive: bool):
        commit = self._commit_at(repo, rev)
        if commit is None:
            return
        prefix = sub.strip("/") + "/" if sub.strip("/") else ""
        if prefix and not any(p.startswith(prefix) for p in commit.files):
            return self._error(404, f"{sub} does not exist on {rev}", "EntryNotFound")
        entries, folders = [], set()
        for path in sorted(commit.files):
            if not path.startswith(prefix):
                continue
            rel_parts = path[len(prefix):].split("/")
            for depth in range(1, len(rel_parts)):
                if recursive or depth == 1:
                    folders.add(prefix + "/".join(rel_parts[:depth]))
            if recursive or len(rel_parts) == 1:
                entries.append(self._entry_json(path, commit.files[path]))
        dirs = [{"type": "directory", "oid": hashlib.sha1(d.encode()).hexdigest(), "size": 0, "path": d}
                for d in sorted(folders)]
        self._json(200, dirs + entries)

    def _paths_info(self, repo: Repo, rev: str):
        raw = self._body()
        ctype = self.headers.get("Content-Type", "")
        if "json" in ctype:
            paths = json.loads(raw or b"{}").get("paths", [])
        else:
            paths = urllib.parse.parse_qs(raw.decode()).get("paths", [])
        commit = self._commit_at(repo, rev)
        if commit is None:
            return
        out = []
        for p in paths:
            p = p.strip("/")
            if p in commit.files:
                out.append(self._entry_json(p, commit.files[p]))
            elif any(f.startswith(p + "/") for f in commit.files):
                out.append({"type": "directory", "oid": hashlib.sha1(p.encode()).hexdigest(), "size": 0, "path": p})
        self._json(200, out)

    def _resolve(self, repo_id: str, rev: str, path: str):
        repo = self._repo(repo_id)
        if repo is None:
            return
        commit = self._commit_at(repo, rev)
        if commit is None:
            return
        entry = commit.files.get(path)
        if entry is None:
            return self._error(404, f"Entry not found: {path}", "EntryNotFound")
        data = self._file_bytes(entry)
        headers = {"X-Repo-Commit": commit.oid, "Accept-Ranges": "bytes",
                   "ETag": f'"{entry.lfs_sha256 or entry.blob_oid}"'}
        if entry.lfs_sha256:
            headers.update({"X-Linked-Etag": f'"{entry.lfs_sha256}"', "X-Linked-Size": entry.size})
        status = 200
        rng = self.headers.get("Range")
        if rng and (m := re.match(r"bytes=(\d*)-(\d*)$", rng.strip())):
            start = int(m[1]) if m[1] else max(0, len(data) - int(m[2]))
            end = int(m[2]) if m[1] and m[2] else len(data) - 1
            end = min(end, len(data) - 1)
            headers["Content-Range"] = f"bytes {start}-{end}/{len(data)}"
            data, status = data[start:end + 1], 206
        self._send(status, data, headers, content_type="application/octet-stream")


def _metadata_errors(meta: dict) -> list[str]:
    """The checks the Hub applies to a dataset card header that matter here."""
    errors = []
    if "license" in meta and not isinstance(meta["license"], (str, list)):
        errors.append('"license" must be a string or a list of strings')
    configs = meta.get("configs", [])
    if not isinstance(configs, list):
        return errors + ['"configs" must be a list']
    names = [c.get("config_name") for c in configs if isinstance(c, dict)]
    if len(names) != len(configs) or None in names:
        errors.append('every entry of "configs" needs a "config_name"')
    if len(set(names)) != len(names):
        errors.append('"configs" names must be unique')
    if sum(1 for c in configs if isinstance(c, dict) and c.get("default")) > 1:
        errors.append('at most one config can be "default"')
    for c in configs:
        for df in c.get("data_files", []) if isinstance(c, dict) else []:
            if isinstance(df, dict) and not (set(df) == {"split", "path"} and re.match(r"^\w+(\.\w+)*$", df["split"])):
                errors.append(f"bad data_files entry {df}")
    infos = meta.get("dataset_info", [])
    for info in infos if isinstance(infos, list) else [infos]:
        for s in info.get("splits", []) if isinstance(info, dict) else []:
            if not {"name", "num_bytes", "num_examples"} <= set(s):
                errors.append(f"dataset_info split {s} needs name, num_bytes and num_examples")
    return errors


class HubServer(ThreadingHTTPServer):
    """``with HubServer() as hub: hub.url ...`` — serves in a daemon thread until the block ends."""
    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.state = HubState()
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def __enter__(self) -> HubServer:
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self.shutdown()
        self.server_close()

    def files(self, repo_id: str, rev: str = "main") -> dict[str, FileEntry]:
        """The files of ``repo_id`` at ``rev`` (branch, tag or commit)."""
        return dict(self.state.repos[repo_id].resolve(rev).files)

    def content(self, repo_id: str, path: str, rev: str = "main") -> bytes:
        e = self.files(repo_id, rev)[path]
        return self.state.lfs[e.lfs_sha256] if e.lfs_sha256 else e.content

