"""Input discovery and decoding: paths, directories, globs and fsspec URLs → read units → parsed documents.

A *unit* is what one reader call handles: usually one file, or a whole directory for directory formats
(an AutoCodeRover instance folder). A *document* is one parsed JSON value (a file, a JSONL line, a Parquet
row, a list item) with its locator. Everything that cannot be decoded becomes a ``Reject`` with a reason:
``empty_file``, ``binary_file``, ``not_utf8``, ``truncated_json``, ``invalid_json``, ``too_large``,
``unsupported_file_type``, ``corrupt_compressed``, ``unreadable``.
"""
from __future__ import annotations

import gzip
import io
import json
import os
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import fsspec
import pyarrow.parquet as pq
import yaml
import zstandard

from swemine.corpora.records import make_reject, sha256_bytes

JSON_EXTS = (".json", ".traj", ".jsonl", ".ndjson", ".parquet", ".yaml", ".yml")
COMPRESSED = (".gz", ".zst", ".zstd")
DEFAULT_MAX_BYTES = 1 << 30
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)     # libyaml when available: ~10x faster
STAGE = "read"

#: Directory formats: name -> predicate over the set of file names directly inside a directory.
DIRECTORY_FORMATS: dict[str, Callable[[set[str]], bool]] = {}
#: Text formats: predicates over (logical file name, decoded text); a match yields the text as one document.
TEXT_FORMATS: list[Callable[[str, str], bool]] = []


@dataclass(frozen=True)
class Unit:
    uri: str
    kind: str = "file"          # "file" or a DIRECTORY_FORMATS name


@dataclass(frozen=True)
class DocSource:
    """Where a document came from: the unit's URI, the locator inside it and the sha256 of the unit's bytes."""
    uri: str
    locator: str
    sha256: str


def register_directory_format(name: str, predicate: Callable[[set[str]], bool]) -> None:
    """Declare that directories whose file names satisfy ``predicate`` are read as one unit of format ``name``."""
    DIRECTORY_FORMATS[name] = predicate


def register_text_format(predicate: Callable[[str, str], bool]) -> None:
    """Declare that non-JSON text files satisfying ``predicate(name, text)`` are one ``str`` document each."""
    TEXT_FORMATS.append(predicate)


def _dir_kind(names: set[str]) -> str | None:
    for name, pred in DIRECTORY_FORMATS.items():
        if pred(names):
            return name
    return None


def expand_inputs(inputs: list[str]) -> list[Unit]:
    """Expand files, directories (recursively), globs and URLs into sorted, de-duplicated units."""
    units: dict[str, Unit] = {}
    for spec in inputs:
        fs, path = fsspec.core.url_to_fs(spec)
        proto = fs.protocol if isinstance(fs.protocol, str) else fs.protocol[0]
        prefix = "" if proto in ("file", "local") else f"{proto}://"
        if not prefix:
            path = os.path.normpath(os.path.abspath(path))
        if any(ch in path for ch in "*?["):
            paths = sorted(fs.glob(path))
        else:
            paths = [path]
        for p in paths:
            if fs.isdir(p):
                for dirpath, dirnames, filenames in (fs.walk(p) if prefix else os.walk(p)):
                    dirnames.sort()
                    kind = _dir_kind(set(filenames))
                    if kind:
                        units[prefix + dirpath] = Unit(prefix + dirpath, kind)
                        dirnames[:] = []
                        continue
                    for f in sorted(filenames):
                        full = prefix + f"{dirpath.rstrip('/')}/{f}"
                        units[full] = Unit(full)
            elif fs.exists(p):
                units[prefix + p] = Unit(prefix + p)
            else:
                raise FileNotFoundError(f"input not found: {spec}")
    return [units[k] for k in sorted(units)]


class CorruptCompressed(OSError):
    """A ``.gz`` / ``.zst`` file whose compressed stream is damaged (reject reason ``corrupt_compressed``)."""


def read_bytes(uri: str, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """Read a file (any fsspec URL), transparently decompressing .gz / .zst; raise ``ValueError`` past ``max_bytes``."""
    if "://" in uri:
        fs, path = fsspec.core.url_to_fs(uri)
        size, opener = fs.size(path), lambda: fs.open(path, "rb")
    else:                                           # local path: skip fsspec's per-call overhead
        size, opener = os.path.getsize(uri), lambda: open(uri, "rb")
    if size is not None and size > max_bytes:
        raise ValueError(f"file is {size} bytes, over the {max_bytes}-byte limit")
    with opener() as fh:
        raw = fh.read()
    low = uri.lower()
    try:
        if low.endswith(".gz"):
            with gzip.GzipFile(fileobj=io.BytesIO(raw)) as g:
                raw = g.read(max_bytes + 1)
        elif low.endswith((".zst", ".zstd")):
            with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw)) as r:
                raw = r.read(max_bytes + 1)
    except (OSError, EOFError, zlib.error, zstandard.ZstdError) as exc:
        raise CorruptCompressed(f"cannot decompress: {type(exc).__name__}: {exc}") from exc
    if len(raw) > max_bytes:
        raise ValueError(f"decompressed size over the {max_bytes}-byte limit")
    return raw


def logical_name(uri: str) -> str:
    """File name without compression suffix, lower-cased (``a.jsonl.gz`` → ``a.jsonl``)."""
    name = os.path.basename(uri).lower()
    for ext in COMPRESSED:
        if name.endswith(ext):
            return name[: -len(ext)]
    return name


def _text_problem(data: bytes) -> tuple[str, str] | None:
    if not data or data.isspace():                  # no copy of a large file, unlike data.strip()
        return "empty_file", "file is empty or whitespace only"
    head = data[:8192]
    if b"\x00" in head:
        return "binary_file", "file contains NUL bytes (binary)"
    return None


def _json_error_reason(text: str, exc: json.JSONDecodeError) -> str:
    # a string still open at the end of the text is reported at its start, not at the end
    ended = exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string")
    return "truncated_json" if ended else "invalid_json"


def iter_documents(uri: str, data: bytes, *, split_lists: bool = True) -> Iterator[tuple[DocSource, Any] | dict]:
    """Decode ``data`` (the bytes of ``uri``) into ``(DocSource, document)`` pairs or rejects.

    JSON files yield one document (a top-level list of objects yields one per item when ``split_lists``);
    JSONL yields one per line (a bad line is rejected alone); Parquet one per row; YAML one document.
    """
    sha = sha256_bytes(data)
    name = logical_name(uri)

    def reject(reason: str, message: str, locator: str = "", excerpt: bytes | str = b"") -> dict:
        return make_reject(STAGE, reason, message, uri=uri, locator=locator, sha256=sha, excerpt=excerpt or data[:200])

    if name.endswith(".parquet"):
        try:
            table = pq.read_table(io.BytesIO(data))
        except Exception as exc:  # noqa: BLE001 - pyarrow raises several types for bad files
            yield reject("invalid_parquet", str(exc))
            return
        for i, row in enumerate(table.to_pylist()):
            yield DocSource(uri, f"row:{i}", sha), row
        return
    problem = _text_problem(data)
    if problem:
        yield reject(*problem)
        return
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        yield reject("not_utf8", f"not valid UTF-8 at byte {exc.start}")
        return
    if name.endswith((".yaml", ".yml")):
        try:
            yield DocSource(uri, "", sha), yaml.load(text, Loader=_YAML_LOADER)
        except yaml.YAMLError as exc:
            yield reject("invalid_yaml", str(exc)[:500])
        return
    if name.endswith((".jsonl", ".ndjson")):
        for i, line in enumerate(text.splitlines()):
            if not line.strip():
                continue
            try:
                yield DocSource(uri, f"line:{i + 1}", sha), json.loads(line)
            except json.JSONDecodeError as exc:
                yield reject(_json_error_reason(line, exc), f"line {i + 1}: {exc}", f"line:{i + 1}", line[:200])
        return
    if not name.endswith((".json", ".traj")) and any(pred(name, text) for pred in TEXT_FORMATS):
        yield DocSource(uri, "", sha), text
        return
    if not name.endswith((".json", ".traj")) and text.lstrip()[:1] not in ("{", "["):
        yield reject("unsupported_file_type", f"not a JSON/JSONL/Parquet/YAML file: {os.path.basename(uri)}")
        return
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        if not name.endswith((".json", ".traj")):
            # a log or text file that merely starts with a bracket, not broken JSON
            yield reject("unsupported_file_type", f"not a JSON/JSONL/Parquet/YAML file: {os.path.basename(uri)}")
        else:
            yield reject(_json_error_reason(text, exc), str(exc))
        return
    if split_lists and isinstance(doc, list) and doc and all(isinstance(x, dict) for x in doc):
        for i, item in enumerate(doc):
            yield DocSource(uri, f"item:{i}", sha), item
        return
    yield DocSource(uri, "", sha), doc
