"""Which fields of a record the filters read: text paths, repo / instance / date / license fields per record type.

A *path* names a field (``problem_statement``), a field of every element of a list (``steps[].observation``),
or a key inside a JSON-string column (``extra_json.created_at``). Filters apply to any record type: a type
without an entry in :data:`FIELD_SPECS` — or a record in which none of the configured text paths exists — falls
back to every string field except ids and provenance.
"""
from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

#: Fields never scanned as text (ids, hashes, provenance, configuration).
NON_TEXT_FIELDS = frozenset({"record_id", "trajectory_id", "source_uri", "source_locator", "source_sha256",
                             "config_hash", "content_sha256", "base_commit", "commit", "environment_setup_commit",
                             "merged_commit", "extra_json", "resolved_source", "final_patch_source"})


@dataclass(frozen=True)
class FieldSpec:
    """Where one record type keeps the things filters look at."""
    texts: tuple[str, ...] = ()                      # text paths; empty = every string field
    repo: str = "repo"
    instance: str = "instance_id"
    numbers: tuple[str, ...] = ("pr_number", "issue_number")
    dates: tuple[str, ...] = ("created_at", "commit_date", "task_created_at", "extra_json.created_at")
    license: str = "license"
    dedup_key: tuple[str, ...] = ()                  # text paths whose joined text is the dedup key; empty = texts


FIELD_SPECS: dict[str, FieldSpec] = {
    "trajectory": FieldSpec(
        texts=("problem_statement", "steps[].thought", "steps[].action_text", "steps[].observation", "final_patch"),
        dedup_key=("steps[].tool_name", "steps[].tool_args_json", "steps[].action_text")),
    "task": FieldSpec(texts=("problem_statement", "hints_text", "patch", "test_patch"),
                      dedup_key=("problem_statement", "patch")),
    "source_file": FieldSpec(texts=("content",), dedup_key=("content",)),
    "fim": FieldSpec(texts=("prefix", "middle", "suffix", "text", "messages[].content", "messages"),
                     dedup_key=("prefix", "middle", "suffix", "text", "messages[].content")),
    "localization": FieldSpec(texts=("problem_statement", "retrieval_query")),
    "error_diagnosis": FieldSpec(texts=("explanation", "evidence[].quote", "original_action.action_text",
                                        "proposed_correction.action_text", "expected_effect"),
                                 dedup_key=("original_action.action_text", "proposed_correction.action_text")),
    "error_view": FieldSpec(texts=("messages[].content", "messages", "chosen", "rejected"),
                            dedup_key=("messages[].content", "chosen")),
}


def spec_for(record_type: str, overrides: Mapping[str, Any] | None = None) -> FieldSpec:
    """The field spec of ``record_type`` (generic fallback for unknown types), with ``overrides`` applied."""
    spec = FIELD_SPECS.get(record_type, FieldSpec())
    if overrides:
        spec = replace(spec, **{k: tuple(v) if isinstance(v, list) else v for k, v in overrides.items()})
    return spec


def _parse_path(path: str) -> list[tuple[str, bool]]:
    parts = []
    for seg in path.split("."):
        parts.append((seg[:-2], True) if seg.endswith("[]") else (seg, False))
    return parts


def _walk(value: Any, parts: list[tuple[str, bool]], prefix: str) -> Iterator[tuple[str, Any]]:
    if not parts:
        yield prefix, value
        return
    if isinstance(value, str) and value[:1] in "{[":
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return
    if not isinstance(value, Mapping):
        return
    (name, is_list), rest = parts[0], parts[1:]
    if name not in value or value[name] is None:
        return
    child = value[name]
    here = f"{prefix}.{name}" if prefix else name
    if is_list:
        if isinstance(child, str):          # e.g. messages stored as one string: scan it whole
            if not rest:
                yield here, child
            return
        for i, item in enumerate(child or []):
            yield from _walk(item, rest, f"{here}[{i}]")
    else:
        yield from _walk(child, rest, here)


def get_path(record: Mapping[str, Any], path: str) -> list[tuple[str, Any]]:
    """``[(concrete_path, value)]`` for every value ``path`` reaches in ``record``."""
    return list(_walk(record, _parse_path(path), ""))


def _all_strings(value: Any, prefix: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        if value:
            yield prefix, value
    elif isinstance(value, Mapping):
        for k in sorted(value, key=str):
            if prefix or k not in NON_TEXT_FIELDS:
                yield from _all_strings(value[k], f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            yield from _all_strings(item, f"{prefix}[{i}]")


def iter_texts(record: Mapping[str, Any], spec: FieldSpec, paths: tuple[str, ...] | None = None
               ) -> list[tuple[str, str]]:
    """``[(concrete_path, text)]`` of the non-empty strings at ``paths`` (default ``spec.texts``).

    Falls back to every string field (minus ids/provenance) when none of the paths exists in the record.
    """
    paths = spec.texts if paths is None else paths
    out: list[tuple[str, str]] = []
    seen = set()
    for path in paths:
        for concrete, value in get_path(record, path):
            if isinstance(value, str) and value and concrete not in seen:
                seen.add(concrete)
                out.append((concrete, value))
    if not out and not any(get_path(record, p) for p in paths):
        out = list(_all_strings(record, ""))
    return out


def set_path(record: dict, concrete: str, value: Any) -> dict:
    """Return a copy of ``record`` with the value at a concrete path (``steps[3].observation``) replaced.

    JSON-string containers on the way (``extra_json.x``, ``messages`` stored as a string) are re-serialized.
    """
    segs = concrete.split(".")
    return _set(record, segs, value)


def _set(container: Any, segs: list[str], value: Any) -> Any:
    if isinstance(container, str):
        return json.dumps(_set(json.loads(container), segs, value), ensure_ascii=False, sort_keys=True)
    seg, rest = segs[0], segs[1:]
    name, idx = seg, None
    if seg.endswith("]"):
        name, _, num = seg[:-1].partition("[")
        idx = int(num)
    out = dict(container)
    if idx is None:
        out[name] = _set(out[name], rest, value) if rest else value
    else:
        items = out[name]
        if isinstance(items, str):
            items = json.loads(items)
            new = list(items)
            new[idx] = _set(new[idx], rest, value) if rest else value
            out[name] = json.dumps(new, ensure_ascii=False)
        else:
            new = list(items)
            new[idx] = _set(new[idx], rest, value) if rest else value
            out[name] = new
    return out


def first_value(record: Mapping[str, Any], paths: tuple[str, ...] | str) -> tuple[str, Any]:
    """``(path, value)`` of the first non-empty value among ``paths``; ``("", None)`` when none has one."""
    for path in ((paths,) if isinstance(paths, str) else paths):
        for concrete, value in get_path(record, path):
            if value not in (None, "", []):
                return concrete, value
    return "", None

