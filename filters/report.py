"""The contamination report: every decontamination drop with its evidence, as Parquet plus a readable summary.

``contamination_rows(filtered)`` flattens the ``decontam`` stage's ``Filtered`` records into
:data:`CONTAMINATION_SCHEMA` rows; ``write_contamination_report(output, rows, benchmarks)`` writes
``<output>/contamination_report.parquet`` and ``<output>/contamination_report.md`` (atomically) and returns the
summary counts that go into the run manifest.
"""
from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

import fsspec
import pyarrow as pa

from swemine.corpora.records import content_id
from swemine.filters.decontam import STAGE as DECONTAM_STAGE
from swemine.manifests.shards import write_table_atomic

CONTAMINATION_SCHEMA = pa.schema([
    pa.field("record_id", pa.string(), nullable=False),   # id of this report row
    pa.field("subject_id", pa.string()),                  # id of the dropped record
    pa.field("record_type", pa.string()),
    pa.field("level", pa.string()),
    pa.field("reason", pa.string()),
    pa.field("rule", pa.string()),
    pa.field("benchmark", pa.string()),
    pa.field("item_id", pa.string()),
    pa.field("match", pa.string()),                       # matched span / first n-gram / first change block / repo
    pa.field("evidence_json", pa.string()),
    pa.field("source_uri", pa.string()),
    pa.field("source_locator", pa.string()),
])
REPORT_PARQUET = "contamination_report.parquet"
REPORT_MD = "contamination_report.md"


def _match(ev: Mapping[str, Any]) -> str:
    for key in ("span", "ngrams", "blocks", "canonical_repo", "instance_id", "date"):
        value = ev.get(key)
        if value:
            return str(value[0] if isinstance(value, list) else value).replace("\n", " ↵ ")[:300]
    return ""


def contamination_rows(filtered: Iterable[Mapping[str, Any]]) -> list[dict]:
    """Report rows for the decontamination drops among ``filtered`` records, sorted by reason then subject."""
    rows = []
    for f in filtered:
        if f.get("stage") != DECONTAM_STAGE:
            continue
        ev = json.loads(f.get("evidence_json") or "{}")
        rows.append({
            "record_id": content_id("contamination", f.get("record_id"), f.get("reason"), f.get("record_type")),
            "subject_id": f.get("record_id"), "record_type": f.get("record_type"), "level": ev.get("level", ""),
            "reason": f.get("reason"), "rule": ev.get("rule", ""), "benchmark": ev.get("benchmark", ""),
            "item_id": str(ev.get("item_id", "")), "match": _match(ev), "evidence_json": f.get("evidence_json"),
            "source_uri": f.get("source_uri"), "source_locator": f.get("source_locator")})
    return sorted(rows, key=lambda r: (r["reason"], r["subject_id"] or "", r["record_type"] or ""))


def _md(rows: list[dict], summary: Mapping[str, Any]) -> str:
    lines = ["# Contamination report", "",
             f"Benchmarks: {', '.join(f'{k} ({v} items)' for k, v in summary['benchmarks'].items()) or 'none'}",
             f"Levels: {', '.join(summary['levels'])}", f"Records dropped: {summary['dropped']}", "",
             "## By level and reason", "", "| level | reason | records |", "|---|---|---|"]
    lines += [f"| {lv} | {rs} | {n} |" for (lv, rs), n in sorted(Counter((r["level"], r["reason"])
                                                                         for r in rows).items())]
    lines += ["", "## By benchmark", "", "| benchmark | records | distinct items |", "|---|---|---|"]
    for bench in sorted({r["benchmark"] for r in rows}):
        these = [r for r in rows if r["benchmark"] == bench]
        lines.append(f"| {bench or '-'} | {len(these)} | {len({r['item_id'] for r in these})} |")
    lines += ["", "## Every drop", "", "| record | type | reason | benchmark item | match |", "|---|---|---|---|---|"]
    for r in rows:
        match = r["match"].replace("|", "\\|").replace("\n", " ")[:120]
        lines.append(f"| {r['subject_id']} | {r['record_type']} | {r['reason']} | "
                     f"{r['benchmark']}:{r['item_id']} | {match} |")
    return "\n".join(lines) + "\n"


def write_contamination_report(output: str, rows: list[dict], benchmarks: Mapping[str, int],
                               levels: Iterable[str]) -> dict[str, Any]:
    """Write the Parquet and Markdown report into ``output``; return the summary for the manifest."""
    summary = {"benchmarks": dict(sorted(benchmarks.items())), "levels": list(levels), "dropped": len(rows),
               "by_reason": dict(sorted(Counter(r["reason"] for r in rows).items())),
               "by_benchmark": dict(sorted(Counter(r["benchmark"] for r in rows).items())),
               "files": [REPORT_PARQUET, REPORT_MD]}
    base = output.rstrip("/")
    write_table_atomic(pa.Table.from_pylist(rows, schema=CONTAMINATION_SCHEMA), f"{base}/{REPORT_PARQUET}")
    fs, root = fsspec.core.url_to_fs(f"{base}/{REPORT_MD}")
    tmp = f"{root}.inprogress"
    with fs.open(tmp, "w") as fh:
        fh.write(_md(rows, summary))
    fs.mv(tmp, root)
    return summary
