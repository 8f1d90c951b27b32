"""Canonical records: one explicit pyarrow schema per record type, plus id and provenance helpers.

Records travel through the pipelines as plain ``dict``s whose keys are exactly the schema's field names;
``conform(schema, row)`` checks and fills them before anything is written. Free-form extras go into the
single JSON-string column ``extra_json`` (docs/architecture.md, rule 2).
"""
from __future__ import annotations

import hashlib
import json
import os
import reprlib
import traceback
from collections.abc import Iterable, Mapping
from typing import Any

import pyarrow as pa

#: Provenance columns carried by every record (docs/architecture.md, rule 5).
PROVENANCE_FIELDS = [
    pa.field("source_uri", pa.string()),       # where the raw bytes came from (path or URL)
    pa.field("source_locator", pa.string()),   # line / row / member inside that source, e.g. "line:12"
    pa.field("source_sha256", pa.string()),    # sha256 of the whole source file
    pa.field("config_hash", pa.string()),      # hash of the run configuration that produced the record
]

STEP_TYPE = pa.struct([
    pa.field("idx", pa.int32()),               # 0-based position in the normalized step list
    pa.field("source_index", pa.int32()),      # the source's own index (e.g. Who&When history index)
    pa.field("role", pa.string()),             # assistant / user / tool / agent name
    pa.field("thought", pa.string()),
    pa.field("tool_name", pa.string()),
    pa.field("tool_args_json", pa.string()),
    pa.field("action_text", pa.string()),
    pa.field("observation", pa.string()),
    pa.field("obs_truncated", pa.bool_()),
    pa.field("obs_exit_code", pa.int32()),
    pa.field("error_signals", pa.list_(pa.string())),
])

TRAJECTORY_SCHEMA = pa.schema([
    pa.field("record_id", pa.string(), nullable=False),
    pa.field("trajectory_id", pa.string()),
    pa.field("instance_id", pa.string()),
    pa.field("repo", pa.string()),
    pa.field("base_commit", pa.string()),
    pa.field("harness", pa.string()),          # swe-agent | mini-swe-agent | openhands | moatless | ...
    pa.field("source_format", pa.string()),    # the reader that parsed it, e.g. "swe-agent-traj-v1"
    pa.field("model_name", pa.string()),
    pa.field("problem_statement", pa.string()),
    pa.field("resolved", pa.bool_()),
    pa.field("resolved_source", pa.string()),  # where the resolved label came from, e.g. "report.json:<path>"
    pa.field("exit_status", pa.string()),
    pa.field("final_patch", pa.string()),
    pa.field("final_patch_source", pa.string()),
    pa.field("n_steps", pa.int32()),
    pa.field("steps", pa.list_(STEP_TYPE)),
    pa.field("extra_json", pa.string()),
    *PROVENANCE_FIELDS,
])

TASK_SCHEMA = pa.schema([
    pa.field("record_id", pa.string(), nullable=False),
    pa.field("instance_id", pa.string()),
    pa.field("repo", pa.string()),
    pa.field("base_commit", pa.string()),
    pa.field("problem_statement", pa.string()),
    pa.field("hints_text", pa.string()),
    pa.field("created_at", pa.string()),       # ISO-8601 as in SWE-bench
    pa.field("patch", pa.string()),
    pa.field("test_patch", pa.string()),
    pa.field("doc_patch", pa.string()),        # mined tasks: documentation / changelog / authors files of the fix
    pa.field("version", pa.string()),
    pa.field("FAIL_TO_PASS", pa.list_(pa.string())),
    pa.field("PASS_TO_PASS", pa.list_(pa.string())),
    pa.field("environment_setup_commit", pa.string()),
    pa.field("pr_number", pa.int64()),
    pa.field("statement_source", pa.string()),
    pa.field("merged_commit", pa.string()),
    pa.field("extra_json", pa.string()),
    *PROVENANCE_FIELDS,
])

SOURCE_FILE_SCHEMA = pa.schema([
    pa.field("record_id", pa.string(), nullable=False),
    pa.field("repo", pa.string()),
    pa.field("commit", pa.string()),
    pa.field("path", pa.string()),
    pa.field("language", pa.string()),
    pa.field("content", pa.large_string()),
    pa.field("content_sha256", pa.string()),
    pa.field("size", pa.int64()),
    pa.field("license", pa.string()),
    *PROVENANCE_FIELDS,
])

REJECT_SCHEMA = pa.schema([
    pa.field("record_id", pa.string(), nullable=False),  # id of the reject itself
    pa.field("stage", pa.string()),
    pa.field("reason", pa.string()),
    pa.field("message", pa.string()),
    pa.field("subject_id", pa.string()),                 # id of the record it concerns, when known
    pa.field("excerpt", pa.string()),                    # first bytes of the offending input, for debugging
    *PROVENANCE_FIELDS,
])

FILTERED_SCHEMA = pa.schema([
    pa.field("record_id", pa.string()),       # id of the removed record
    pa.field("stage", pa.string()),
    pa.field("reason", pa.string()),          # the rule that fired
    pa.field("record_type", pa.string()),
    pa.field("evidence_json", pa.string()),   # benchmark, item id, matched span / n-grams ...
    pa.field("record_json", pa.large_string()),
    *PROVENANCE_FIELDS,
])

SCHEMAS: dict[str, pa.Schema] = {
    "trajectory": TRAJECTORY_SCHEMA,
    "task": TASK_SCHEMA,
    "source_file": SOURCE_FILE_SCHEMA,
    "reject": REJECT_SCHEMA,
    "filtered": FILTERED_SCHEMA,
}


def sha256_bytes(data: bytes) -> str:
    """Hex sha256 of raw bytes."""
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: str, opener=open) -> str:
    """Hex sha256 of a file, read in chunks; ``opener`` may be an fsspec filesystem's ``open``."""
    h = hashlib.sha256()
    with opener(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 22), b""):
            h.update(chunk)
    return h.hexdigest()


#: ``(path, size, mtime_ns) -> sha256`` of the local files a reader hashed in this process.
_READ_DIGESTS: dict[tuple[str, int, int], str] = {}


def file_stamp(path: str) -> tuple[int, int] | None:
    """``(size, mtime_ns)`` of a local file, ``None`` when it cannot be stat-ed."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


def note_read_digest(path: str, stamp: tuple[int, int] | None, sha: str) -> None:
    """Remember ``sha`` as the digest of the local file ``path``, read whole while its :func:`file_stamp` was
    ``stamp`` (taken before reading); nothing is kept when the file changed meanwhile."""
    if sha and stamp is not None and file_stamp(path) == stamp:
        _READ_DIGESTS[(path, *stamp)] = sha


def read_digest(path: str) -> str | None:
    """The sha256 a reader of this process took of the local file ``path``, if the file is unchanged since."""
    stamp = file_stamp(path)
    return _READ_DIGESTS.get((path, *stamp)) if stamp is not None else None


def forget_read_digests() -> None:
    """Drop the digests noted so far (a run takes them once it is over; a long-lived process must not keep
    every input it ever read)."""
    _READ_DIGESTS.clear()


def input_sha256(path: str) -> str:
    """sha256 of a local input file: :func:`read_digest` (so a run does not read its inputs once more for the
    manifest), else read and hashed now."""
    return read_digest(path) or sha256_file(path)


def content_id(*parts: Any) -> str:
    """Stable content-hash id (first 24 hex chars of sha256) over the JSON encoding of ``parts``."""
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()[:24]


def dumps_extra(extra: Mapping[str, Any] | None) -> str:
    """Serialize free-form extras deterministically for the ``extra_json`` column."""
    return json.dumps(dict(extra or {}), sort_keys=True, ensure_ascii=False, default=str)


def provenance(uri: str, locator: str, sha256: str, config_hash: str = "") -> dict[str, str]:
    """The provenance columns as a dict, ready to ``**``-merge into a record."""
    return {"source_uri": uri, "source_locator": locator, "source_sha256": sha256, "config_hash": config_hash}


class ReasonedError(ValueError):
    """An error whose ``reason`` is the short reject reason counted for it; the message says the details."""

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason


class SchemaError(ValueError):
    """A record does not fit its schema (missing id, unknown field, wrong type)."""


_LAYOUTS: dict[int, tuple[pa.Schema, frozenset, tuple]] = {}


def _layout(schema: pa.Schema) -> tuple[frozenset, tuple]:
    """Field names and (name, is_list, nullable) per field, computed once per schema object."""
    cached = _LAYOUTS.get(id(schema))
    if cached is None or cached[0] is not schema:
        fields = tuple((f.name, pa.types.is_list(f.type), f.nullable) for f in schema)
        cached = _LAYOUTS[id(schema)] = (schema, frozenset(schema.names), fields)
    return cached[1], cached[2]


def conform(schema: pa.Schema, row: Mapping[str, Any]) -> dict[str, Any]:
    """Return ``row`` restricted to and completed with ``schema``'s fields.

    Unknown keys raise ``SchemaError`` (a typo must not vanish silently); missing keys get ``None``
    (or ``[]`` for lists). Non-nullable fields must be present.
    """
    names, fields = _layout(schema)
    if not names.issuperset(row):
        raise SchemaError(f"unknown field(s) {sorted(set(row) - names)} for schema with {schema.names[:4]}...")
    out = {}
    for name, is_list, nullable in fields:
        value = row.get(name)
        if value is None and name not in row and is_list:
            value = []                                   # a fresh list per row, never a shared default
        if value is None and not nullable:
            raise SchemaError(f"field {name!r} may not be null")
        out[name] = value
    return out


def to_table(schema: pa.Schema, rows: Iterable[Mapping[str, Any]]) -> pa.Table:
    """Build a table with exactly ``schema`` (no inference); raises on a type mismatch."""
    rows = [conform(schema, r) for r in rows]
    return pa.Table.from_pylist(rows, schema=schema)


def schema_fingerprint(schema: pa.Schema) -> str:
    """Short stable hash of a schema's fields and types (metadata ignored)."""
    return hashlib.sha256(str(schema.remove_metadata()).encode()).hexdigest()[:16]


_SHORT = reprlib.Repr()
_SHORT.maxlevel, _SHORT.maxdict, _SHORT.maxlist, _SHORT.maxstring, _SHORT.maxother = 2, 8, 4, 60, 60


def short_repr(value: Any, limit: int = 200) -> str:
    """A bounded ``repr`` for reject excerpts: costs the same for a 50 MB document as for a small one."""
    return _SHORT.repr(value)[:limit]


class Reject(dict):
    """A reject record (a dict with ``REJECT_SCHEMA``'s fields); the type tells the Beam adapter to route it."""


class Filtered(dict):
    """A record removed by a filter (``FILTERED_SCHEMA``): kept with its rule and evidence, never silently dropped."""


class Info(dict):
    """Not a record: counts for the stage's manifest ``info`` (``{"repaired_surrogates": 1}``)."""


def make_reject(stage: str, reason: str, message: str, *, uri: str = "", locator: str = "", sha256: str = "",
                subject_id: str = "", excerpt: bytes | str = b"", config_hash: str = "") -> Reject:
    """A ``Reject`` record: what failed, where, and why. Its id is a hash of all of that."""
    if isinstance(excerpt, bytes):
        excerpt = excerpt[:200].decode("utf-8", errors="replace")
    else:
        excerpt = excerpt[:200]
    message = message[:2000]
    return Reject({
        "record_id": content_id("reject", stage, reason, uri, locator, subject_id, message),
        "stage": stage, "reason": reason, "message": message, "subject_id": subject_id,
        "excerpt": excerpt, **provenance(uri, locator, sha256, config_hash),
    })


def exception_reject(stage: str, exc: Exception, element: Any) -> Reject:
    """The reject of an ``element`` a stage raised ``exc`` on: reason ``exception:<Type>``, the message with the
    first frames of the trace, and the element's provenance when it is a record."""
    rec = element if isinstance(element, dict) else {}
    trace = "".join(traceback.format_exception(exc, limit=3))
    return make_reject(stage, f"exception:{type(exc).__name__}", f"{exc}\n{trace}",
                       uri=str(rec.get("source_uri", "") or getattr(element, "uri", "")),
                       locator=str(rec.get("source_locator", "")), sha256=str(rec.get("source_sha256", "")),
                       subject_id=str(rec.get("record_id", "")), excerpt=short_repr(element))


def make_filtered(stage: str, reason: str, record: Mapping[str, Any], record_type: str,
                  evidence: Mapping[str, Any] | None = None) -> Filtered:
    """Wrap a record a filter removed, with the rule (``reason``) and the evidence that matched."""
    return Filtered({
        "record_id": record.get("record_id", ""), "stage": stage, "reason": reason, "record_type": record_type,
        "evidence_json": dumps_extra(evidence), "record_json": json.dumps(dict(record), default=str,
                                                                         ensure_ascii=False, sort_keys=True),
        **{k: record.get(k) or "" for k in ("source_uri", "source_locator", "source_sha256", "config_hash")},
    })


def reject_as_filtered(rej: Mapping[str, Any]) -> dict:
    """A filter function that raised on one record: a ``Filtered`` row with reason ``filter_error:<reason>``."""
    row = {k: rej.get(k) or "" for k in FILTERED_SCHEMA.names}
    row.update({"record_id": rej.get("subject_id") or rej.get("record_id"), "stage": rej.get("stage", ""),
                "reason": f"filter_error:{rej.get('reason', '')}", "record_type": "",
                "evidence_json": json.dumps({"message": rej.get("message", "")}), "record_json": rej.get("excerpt", "")})
    return row
