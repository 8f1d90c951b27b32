"""Benchmark references, loaded as data: what decontamination compares records against.

``load_benchmarks(specs)`` reads each spec — ``[name=]PATH_OR_HUB_ID[:split]`` — from a local JSON / JSONL /
Parquet file (or directory / glob) or, in real use, a Hub dataset, and recognises each row's public schema:

- SWE-bench family (full / Lite / Verified / dev / Pro / Multilingual): ``instance_id`` + ``repo`` +
  ``problem_statement``, normalized with :func:`swemine.corpora.tasks.normalize_task`;
- HumanEval: ``task_id`` + ``prompt`` + ``canonical_solution``;
- MBPP: ``task_id`` + ``text`` (or sanitized ``prompt``) + ``code``;
- APPS: ``problem_id`` + ``question`` (+ ``solutions``, skipped for cost as bigcode did);
- DS-1000: ``prompt`` + ``reference_code`` (+ ``metadata.problem_id``);
- LiveCodeBench: ``question_id`` + ``question_content`` (+ ``contest_date``).

Each row becomes a :class:`BenchmarkItem` whose texts are split by how they are matched (docs/filters.md):
``substrings`` (bigcode exact case-insensitive substring), ``statements`` (word n-gram overlap), ``patches``
(added lines of gold / test patches) and ``document`` (MinHash near-duplicate). Rows of no known schema are
rejects with reason ``unknown_benchmark_schema``. The eval repo set is derived from the ``repo`` columns.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from swemine.corpora.inputs import DocSource, expand_inputs, iter_documents, read_bytes
from swemine.corpora.records import Reject, make_reject
from swemine.corpora.tasks import is_local_or_url, normalize_task

STAGE = "benchmarks"
_DOCSTRING = re.compile(r'("""|\'\'\')(.*?)\1', re.S)
_NUMBER = re.compile(r"-(\d+)$")


@dataclass(frozen=True)
class BenchmarkItem:
    """One benchmark row, reduced to what matching needs."""
    benchmark: str
    item_id: str
    kind: str                                   # swebench | humaneval | mbpp | apps | ds1000 | livecodebench
    repo: str = ""
    instance_id: str = ""
    number: int | None = None                   # PR / issue number when the item has one
    created_at: str = ""
    substrings: tuple[str, ...] = ()
    statements: tuple[str, ...] = ()
    patches: tuple[str, ...] = ()              # (gold patch, test patch), "" where missing
    document: str = ""


@dataclass
class BenchmarkSet:
    """All loaded items plus the rejects met while loading."""
    items: list[BenchmarkItem] = field(default_factory=list)
    rejects: list[dict] = field(default_factory=list)

    @property
    def eval_repos(self) -> dict[str, list[str]]:
        """``{repo: [benchmark, ...]}`` from the items' ``repo`` columns (as loaded, lower-cased)."""
        out: dict[str, set[str]] = {}
        for item in self.items:
            if item.repo:
                out.setdefault(item.repo, set()).add(item.benchmark)
        return {r: sorted(b) for r, b in sorted(out.items())}

    def counts(self) -> dict[str, int]:
        """Items per benchmark."""
        out: dict[str, int] = {}
        for item in self.items:
            out[item.benchmark] = out.get(item.benchmark, 0) + 1
        return out


def parse_spec(spec: str) -> tuple[str, str]:
    """``name=source`` → ``(name, source)``; without a name, the file stem or the Hub id names the benchmark."""
    name, sep, source = spec.partition("=")
    if sep and name and "/" not in name and os.sep not in name:
        return name, source
    source = spec
    if is_local_or_url(source):
        base = os.path.basename(source.rstrip("/"))
        for ext in (".gz", ".zst", ".jsonl", ".json", ".parquet"):
            base = base[:-len(ext)] if base.endswith(ext) else base
        return base, source
    return source.split(":")[0], source


def benchmark_digest(spec: str) -> str:
    """The first 16 hex digits of the sha256 of a spec's local file; ``""`` for anything else (a Hub id)."""
    _, source = parse_spec(spec)
    if not os.path.isfile(source):
        return ""
    with open(source, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()[:16]


def _pr_number(instance_id: str) -> int | None:
    m = _NUMBER.search(instance_id)
    return int(m.group(1)) if m else None


def _docstring(prompt: str) -> str:
    m = _DOCSTRING.search(prompt)
    return m.group(2).strip() if m else ""


def _s(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def item_from_row(row: dict, benchmark: str, src: DocSource) -> BenchmarkItem:
    """Recognise a row's public schema and build its item (``ValueError`` for an unknown schema)."""
    keys = set(row)
    if {"instance_id", "problem_statement"} <= keys:
        task = normalize_task(row, src)
        return BenchmarkItem(
            benchmark, task["instance_id"], "swebench", repo=task["repo"], instance_id=task["instance_id"],
            number=task["pr_number"] if task["pr_number"] is not None else _pr_number(task["instance_id"]),
            created_at=task["created_at"] or "", statements=(task["problem_statement"] or "",),
            patches=(task["patch"] or "", task["test_patch"] or ""),
            document=task["problem_statement"] or "")
    if {"task_id", "prompt", "canonical_solution"} <= keys:
        prompt, solution = _s(row["prompt"]), _s(row["canonical_solution"])
        return BenchmarkItem(benchmark, _s(row["task_id"]), "humaneval",
                             substrings=(_docstring(prompt), prompt, solution), statements=(_docstring(prompt),),
                             document=prompt + solution + _s(row.get("test")))
    if "task_id" in keys and "code" in keys and ({"text"} & keys or {"prompt"} & keys):
        text = _s(row.get("text") or row.get("prompt"))
        tests = "\n".join(map(_s, row.get("test_list") or []))
        return BenchmarkItem(benchmark, _s(row["task_id"]), "mbpp", substrings=(text, _s(row["code"])),
                             statements=(text,), document=text + "\n" + _s(row["code"]) + "\n" + tests)
    if {"problem_id", "question"} <= keys:
        question = _s(row["question"])
        return BenchmarkItem(benchmark, _s(row["problem_id"]), "apps", substrings=(question,),
                             statements=(question,), document=question)
    if {"prompt", "reference_code"} <= keys:
        meta = row.get("metadata")
        meta = json.loads(meta) if isinstance(meta, str) and meta.startswith("{") else (meta or {})
        item_id = _s(meta.get("problem_id", src.locator)) if isinstance(meta, dict) else src.locator
        prompt, ref = _s(row["prompt"]), _s(row["reference_code"])
        return BenchmarkItem(benchmark, item_id, "ds1000", substrings=(prompt, ref), statements=(prompt,),
                             document=prompt + "\n" + ref)
    if {"question_id", "question_content"} <= keys:
        content = _s(row["question_content"])
        return BenchmarkItem(benchmark, _s(row["question_id"]), "livecodebench", statements=(content,),
                             created_at=_s(row.get("contest_date")), document=content)
    raise ValueError(f"no known benchmark schema for keys {sorted(keys)[:12]}")


def _rows(source: str) -> Iterator[tuple[DocSource, Any] | dict]:
    if is_local_or_url(source):
        for unit in expand_inputs([source]):
            try:
                data = read_bytes(unit.uri)
            except (OSError, ValueError) as exc:
                yield make_reject(STAGE, "unreadable", str(exc), uri=unit.uri)
                continue
            yield from iter_documents(unit.uri, data)
        return
    import datasets

    name, _, split = source.partition(":")
    ds = datasets.load_dataset(name, split=split or "test")
    for i, row in enumerate(ds):
        yield DocSource(f"hf://datasets/{name}", f"{split or 'test'}:{i}", ""), dict(row)


def load_benchmarks(specs: list[str]) -> BenchmarkSet:
    """Load every benchmark spec (``[name=]PATH_OR_HUB_ID[:split]``) into one :class:`BenchmarkSet`."""
    out = BenchmarkSet()
    for spec in specs:
        name, source = parse_spec(spec)
        for entry in _rows(source):
            if isinstance(entry, Reject) or not isinstance(entry, tuple):
                out.rejects.append(dict(entry))
                continue
            src, row = entry
            try:
                if not isinstance(row, dict):
                    raise ValueError(f"expected an object, got {type(row).__name__}")
                out.items.append(item_from_row(row, name, src))
            except (ValueError, TypeError) as exc:
                out.rejects.append(dict(make_reject(STAGE, "unknown_benchmark_schema", str(exc), uri=src.uri,
                                                    locator=src.locator, sha256=src.sha256)))
    return out


def fill_patches(bench: BenchmarkSet, tasks: Mapping[str, dict]) -> BenchmarkSet:
    """A copy of ``bench`` whose SWE-bench items take a missing gold / test patch from the task of the same
    instance id (e.g. a Verified file without ``test_patch`` joined with the full task rows)."""
    items = []
    for item in bench.items:
        task = tasks.get(item.instance_id) if item.kind == "swebench" else None
        if task and not all(item.patches):
            own = item.patches + ("",) * (2 - len(item.patches))
            item = replace(item, patches=(own[0] or task.get("patch") or "", own[1] or task.get("test_patch") or ""))
        items.append(item)
    return BenchmarkSet(items, list(bench.rejects))
