"""The run manifest: what ran, on what, with which config, and what came out — written last.

``stages`` holds, per stage, ``in``, ``out``, ``rejected`` (by reason) and ``filtered`` (by reason), taken
from the Beam counters the stage adapters emit; :func:`balance_problems` checks ``in = out + rejected + filtered``.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import json
import logging
import os
import re
import time
from collections.abc import Iterable, Mapping
from importlib import metadata
from typing import Any

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq

from swemine.corpora.git import resolve_commit
from swemine.corpora.records import forget_read_digests, input_sha256, read_digest
from swemine.failures import first_line

log = logging.getLogger("swemine")

MANIFEST_NAME = "manifest.json"
COUNTER_NAMESPACE = "swemine"


#: An absolute local path inside a config value (``/home/u/dumps``, ``lite=/data/lite.json``), not a URL's path.
_LOCAL_PATH = re.compile(r"(?<![\w./:~-])/(?:[^/\s=,]+/)*([^/\s=,]+)/?")


def portable(value: Any) -> Any:
    """``value`` (a config, or a manifest part) with every absolute local path replaced by its last component: what
    a run is called on any machine. URLs, relative paths and everything else are unchanged."""
    if isinstance(value, str):
        return _LOCAL_PATH.sub(r"\1", value)
    if isinstance(value, Mapping):
        return {k: portable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [portable(v) for v in value]
    return value


def config_hash(config: Mapping[str, Any]) -> str:
    """sha256 (first 16 hex) of the canonical JSON of a run configuration, with local paths made portable: the
    same data run from another folder gets the same hash (and so the same rows)."""
    blob = json.dumps(portable(config), sort_keys=True, default=str, ensure_ascii=False).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()[:16]


def package_version() -> str:
    try:
        return metadata.version("swemine")
    except metadata.PackageNotFoundError:
        return "0+unknown"


def git_commit(path: str | None = None) -> str:
    """The swemine checkout's commit, or "" when not run from a git checkout."""
    return resolve_commit(path or os.path.dirname(os.path.abspath(__file__)))


def stage_counters(counters: Iterable[tuple[str, int]]) -> dict[str, dict[str, Any]]:
    """Fold flat counter names ``stage.in`` / ``stage.out`` / ``stage.rejected.<reason>`` / ``stage.filtered.<reason>``
    / ``stage.info.<name>`` into a per-stage dict."""
    stages: dict[str, dict[str, Any]] = {}
    for name, value in counters:
        stage, _, rest = name.partition(".")
        entry = stages.setdefault(stage, {"in": 0, "out": 0, "rejected": {}, "filtered": {}, "info": {}})
        kind, _, reason = rest.partition(".")
        if kind in ("in", "out") and not reason:
            entry[kind] += int(value)
        elif kind == "info" and reason == "fanout":        # a flag, raised by every worker that ran the stage
            entry["info"]["fanout"] = 1
        elif kind in ("rejected", "filtered", "info") and reason:
            entry[kind][reason] = entry[kind].get(reason, 0) + int(value)
        else:
            entry["info"][rest] = entry["info"].get(rest, 0) + int(value)
    return {k: stages[k] for k in sorted(stages)}


def balance_problems(stages: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Stages whose counts do not balance: ``in = out + rejected + filtered``, or for fan-out stages (which set
    ``info.fanout``) ``in <= out + rejected + filtered + info.empty``: every input yielded at least one result
    or was counted as empty."""
    problems = []
    for name, s in stages.items():
        info = s.get("info", {})
        total = s["out"] + sum(s["rejected"].values()) + sum(s["filtered"].values())
        if info.get("fanout"):
            if s["in"] > total + info.get("empty", 0):
                problems.append(f"{name}: in={s['in']} > out+rejected+filtered+empty={total + info.get('empty', 0)}")
        elif s["in"] != total:
            problems.append(f"{name}: in={s['in']} != out+rejected+filtered={total}")
    return problems


def input_listing(uris: Iterable[str], hashed: bool = True) -> list[dict[str, Any]]:
    """URI, size, modification time and (for local files, unless not ``hashed``) sha256 of every input file.

    Remote inputs are only stat-ed (hashing them would mean downloading them to the launching machine).
    """
    out = []
    for uri in uris:
        size, mtime = input_stat(uri)
        out.append({"uri": uri, "bytes": size, "mtime": mtime, "sha256": None})
    return with_hashes(out, input_hashes(out)) if hashed else out


def _local(listing: Iterable[Mapping[str, Any]]) -> list[str]:
    return [i["uri"] for i in listing if i["bytes"] is not None and "://" not in i["uri"]]


def input_hashes(listing: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """``{uri: sha256}`` of the local files of an :func:`input_listing`."""
    return {uri: input_sha256(uri) for uri in _local(listing)}


def read_hashes(listing: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """``{uri: sha256}`` of the local files of ``listing`` that this process's readers hashed and that have not
    changed since (:func:`~swemine.corpora.records.read_digest`); the noted digests are dropped after."""
    hashes = {uri: sha for uri in _local(listing) if (sha := read_digest(uri))}
    forget_read_digests()
    return hashes


def with_hashes(listing: list[dict[str, Any]], hashes: Mapping[str, str]) -> list[dict[str, Any]]:
    """The listing with each entry's sha256 from ``hashes`` (entries not in it keep theirs)."""
    return [{**i, "sha256": hashes.get(i["uri"], i["sha256"])} for i in listing]


def _unchanged(inp: Mapping[str, Any]) -> bool:
    """True when an input listed in a manifest still has the same size and modification time."""
    if inp.get("bytes") is None:
        return True
    now = input_stat(inp["uri"])
    return now == (inp["bytes"], inp.get("mtime"))


def input_stat(uri: str) -> tuple[int | None, str | None]:
    """``(size, mtime)`` of an input, ``(None, None)`` when it is gone."""
    try:
        if "://" in uri:
            fs, path = fsspec.core.url_to_fs(uri)
            info = fs.info(path)
            return info.get("size"), str(info.get("mtime") or info.get("updated") or info.get("LastModified") or "")
        st = os.stat(uri)
        return st.st_size, str(st.st_mtime_ns)
    except (FileNotFoundError, OSError):
        return None, None


def write_manifest(output: str, manifest: Mapping[str, Any]) -> str:
    """Write ``manifest.json`` atomically (temp name, then rename)."""
    fs, root = fsspec.core.url_to_fs(output)
    fs.makedirs(root, exist_ok=True)
    path = f"{root.rstrip('/')}/{MANIFEST_NAME}"
    tmp = path + ".inprogress"
    with fs.open(tmp, "w") as fh:
        json.dump(manifest, fh, indent=2, sort_keys=True, default=str)
    fs.mv(tmp, path)
    return path


class ManifestError(ValueError):
    """A ``manifest.json`` that is not a run's manifest: truncated, edited by hand, not JSON."""


#: What every manifest holds, and every listed output.
REQUIRED_KEYS = ("run_id", "pipeline", "config_hash", "stages", "outputs")
REQUIRED_OUTPUT_KEYS = ("path", "rows", "bytes", "sha256")


def read_manifest(output: str) -> dict[str, Any] | None:
    """The run's manifest, or ``None`` when the run is absent or unfinished; :class:`ManifestError` (one line)
    when the file is damaged."""
    fs, root = fsspec.core.url_to_fs(output)
    path = f"{root.rstrip('/')}/{MANIFEST_NAME}"
    if not fs.exists(path):
        return None
    with fs.open(path, "rb") as fh:
        raw = fh.read()
    try:
        manifest = json.loads(raw)
    except ValueError as exc:
        raise ManifestError(f"{path}: damaged manifest ({exc}); run the job again to rebuild it") from None
    outputs = manifest.get("outputs") if isinstance(manifest, dict) else None
    if (not isinstance(outputs, list) or any(k not in manifest for k in REQUIRED_KEYS)
            or not all(isinstance(o, dict) and all(k in o for k in REQUIRED_OUTPUT_KEYS) for o in outputs)):
        raise ManifestError(f"{path}: not a swemine manifest (it needs {', '.join(REQUIRED_KEYS)} and a path, "
                            "rows, bytes and sha256 per output); run the job again to rebuild it")
    return manifest


def finished_run(output: str, pipeline: str) -> dict[str, Any]:
    """The manifest of the finished ``pipeline`` run in ``output``; :class:`ManifestError` (one line) when there
    is none, it is damaged, or it is another pipeline's."""
    manifest = read_manifest(output)
    if manifest is None:
        raise ManifestError(f"{output}: no {MANIFEST_NAME} (not a finished run)")
    if manifest["pipeline"] != pipeline:
        raise ManifestError(f"{output} is a `{manifest['pipeline']}` run; this needs a `swemine run {pipeline}` "
                            "output")
    return manifest


def shard_present(fs, root: str, shard: Mapping[str, Any]) -> bool:
    """True when the manifest's ``shard`` is under the run folder ``root`` with the size the manifest lists."""
    path = f"{root.rstrip('/')}/{shard['path']}"
    return fs.exists(path) and fs.size(path) == shard["bytes"]


def damaged_shard(fs, root: str, outputs: list[dict]) -> str:
    """What is wrong with the first listed shard that is missing, of another size, or not Parquet; ``""``."""
    for o in outputs:
        if not shard_present(fs, root, o):
            return f"shard {o['path']} is missing or its size differs from the manifest"
        try:
            pq.read_metadata(fs.open(f"{root}/{o['path']}", "rb"))
        except (OSError, pa.ArrowInvalid) as exc:
            return f"shard {o['path']} is not readable Parquet ({first_line(exc)})"
    return ""


def is_complete(output: str, cfg_hash: str, config: Mapping[str, Any] | None = None) -> bool:
    """True when ``output`` holds a finished run of the same config whose shards are all present (a damaged
    manifest means an unfinished run)."""
    try:
        manifest = read_manifest(output)
    except ManifestError as exc:
        log.warning("%s", exc)
        return False
    if not manifest or manifest.get("config_hash") != cfg_hash:
        return False
    if config is not None and json.loads(json.dumps(config, default=str)) != manifest.get("config"):
        return False                                  # the same settings over other folders: not this run
    fs, root = fsspec.core.url_to_fs(output)
    if not all(shard_present(fs, root, shard) for shard in manifest.get("outputs", [])):
        return False
    return all(_unchanged(inp) for inp in manifest.get("inputs", []))


def build_manifest(*, pipeline: str, config: Mapping[str, Any], cfg_hash: str, inputs: list[dict],
                   stages: Mapping[str, Any], outputs: list[dict], started: float,
                   extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Assemble the manifest dict (see module docstring)."""
    return {
        "run_id": f"{pipeline}-{cfg_hash}",
        "pipeline": pipeline,
        "package_version": package_version(),
        "git_commit": git_commit(),
        "config": dict(config),
        "config_hash": cfg_hash,
        "inputs": inputs,
        "stages": dict(stages),
        "balance_problems": balance_problems(stages),
        "outputs": outputs,
        "started_at": _dt.datetime.fromtimestamp(started, _dt.timezone.utc).isoformat(),
        "wall_seconds": round(time.time() - started, 3),
        **(dict(extra) if extra else {}),
    }
