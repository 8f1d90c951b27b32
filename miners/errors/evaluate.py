"""Evaluate the error miner against external labels (methods.md §3.6).

- **Who&When** (``mistake_step`` indexes ``history``; ``mistake_agent``): the share of cases whose labelled step
  is among the stage-1 candidates, and the rule diagnoser's exact-step agreement (k = 0 and ±2), beside a
  trivial "first agent step" baseline. AED's anchor for a trained 8B diagnoser is 63.6 % exact-step agreement.
- **mini-swe-agent failure reports** (machine-written ``**Labels:**`` lines, weak labels): mapped onto the
  taxonomy and compared with the diagnosed category.

Both read their logs with the corpus readers (``swemine.corpora.formats``).

Run: ``python -m swemine.miners.errors.evaluate [corpora_dir]`` prints the figures.
"""
from __future__ import annotations

import glob
import json
import os
import re
import sys
from collections.abc import Iterable

from swemine.corpora.normalize import normalize_paths
from swemine.miners.actions import is_actor
from swemine.miners.errors import diagnosis as dg


def _step_name(traj: dict, source_step: int) -> str:
    idx = dg.idx_of(traj, source_step)
    return traj["steps"][idx]["role"] if idx is not None else ""


def evaluate_who_when(paths: Iterable[str]) -> dict:
    """Coverage and agreement figures over Who&When JSON files (per subset and overall), read with the corpus
    reader (step ``source_index`` = ``history`` index; labels in ``extra_json``)."""
    per: dict[str, dict] = {}
    diagnoser = dg.RuleDiagnoser()
    trajs, _ = normalize_paths(sorted(paths))
    for traj in sorted(trajs, key=lambda t: t["instance_id"]):
        labels = json.loads(traj["extra_json"] or "{}")
        subset = traj["instance_id"].split("/")[1]
        gold = int(labels["mistake_step"])
        item = dg.make_item(traj)
        cand_steps = {dg.source_of(traj, c["step"]) for c in item["candidates"]}
        d = diagnoser.diagnose(item) if item["candidates"] else None
        pred = d["error_step"] if isinstance(d, dict) else None
        first_actor = next((dg.source_of(traj, s["idx"]) for s in traj["steps"] if is_actor(s)), None)
        for key in (subset, "all"):
            agg = per.setdefault(key, {"n": 0, "with_candidates": 0, "label_in_candidates": 0, "exact": 0,
                                       "within2": 0, "agent": 0, "baseline_first_step": 0, "verified": 0})
            agg["n"] += 1
            agg["with_candidates"] += bool(cand_steps)
            agg["label_in_candidates"] += gold in cand_steps
            agg["exact"] += pred == gold
            agg["within2"] += pred is not None and abs(pred - gold) <= 2
            agg["agent"] += pred is not None and _step_name(traj, pred) == str(labels.get("mistake_agent"))
            agg["baseline_first_step"] += first_actor == gold
            agg["verified"] += isinstance(d, dict) and not dg.verify(item, d)
    for agg in per.values():
        n = agg["n"] or 1
        agg["candidate_coverage"] = round(agg["label_in_candidates"] / n, 4)
        agg["exact_step_agreement"] = round(agg["exact"] / n, 4)
        agg["within2_agreement"] = round(agg["within2"] / n, 4)
        agg["agent_agreement"] = round(agg["agent"] / n, 4)
        agg["baseline_exact"] = round(agg["baseline_first_step"] / n, 4)
    return per


# ---- mini-swe-agent runs and their machine-written failure reports ----------------------------------------------

#: Failure-report labels → taxonomy categories (labels absent here carry no category, e.g. no-rule-violation).
REPORT_LABEL_MAP = {"incorrect-fix-logic": "incorrect_fix", "likely-incorrect-logic": "incorrect_fix",
                    "simple-fix": "incorrect_fix", "exception-handling": "incorrect_fix",
                    "encoding-handling": "incorrect_fix", "test-modification": "wrong_file_edit",
                    "config-modification": "wrong_file_edit"}
_LABELS_RE = re.compile(r"^\*\*Labels:\*\*\s*(.+)$", re.M)


def report_labels(text: str) -> list[str]:
    """The backticked labels of a failure report's ``**Labels:**`` line."""
    m = _LABELS_RE.search(text)
    return re.findall(r"`([^`]+)`", m.group(1)) if m else []


def report_category(labels: list[str]) -> str:
    """The weak category: a rule violation (edited tests / config) wins over "incorrect fix logic"."""
    cats = [REPORT_LABEL_MAP[lb] for lb in labels if lb in REPORT_LABEL_MAP]
    return "wrong_file_edit" if "wrong_file_edit" in cats else (cats[0] if cats else "")


def evaluate_failure_reports(run_dir: str, patch_by_instance: dict[str, str]) -> dict:
    """Agreement of the rule diagnoser's category with the weak label, over the run's failure reports (the
    run's trajectories read with the corpus readers, resolved labels joined from its reports)."""
    trajs, _ = normalize_paths([os.path.join(run_dir, "trajs")])
    by_instance = {t["instance_id"]: t for t in trajs}
    rows = []
    diagnoser = dg.RuleDiagnoser()
    for path in sorted(glob.glob(os.path.join(run_dir, "failure_reports", "*.md"))):
        iid = os.path.basename(path)[:-3]
        if path.endswith("_analysis.md") or iid not in by_instance:
            continue
        with open(path, encoding="utf-8") as fh:
            weak = report_category(report_labels(fh.read()))
        item = dg.make_item(by_instance[iid], patch_by_instance.get(iid, ""))
        d = diagnoser.diagnose(item) if item["candidates"] else None
        pred = d["error_category"] if isinstance(d, dict) else ""
        flags = {c["flag"] for c in item["candidates"]}
        rows.append({"instance_id": iid, "resolved": by_instance[iid]["resolved"], "weak": weak, "predicted": pred,
                     "agree": bool(weak) and pred == weak, "weak_in_flags": weak in flags})
    labelled = [r for r in rows if r["weak"]]
    n = len(labelled) or 1
    return {"reports": len(rows), "labelled": len(labelled),
            "category_agreement": round(sum(r["agree"] for r in labelled) / n, 4),
            "weak_label_among_flags": round(sum(r["weak_in_flags"] for r in labelled) / n, 4),
            "by_weak_label": {w: sum(1 for r in labelled if r["weak"] == w) for w in sorted({r["weak"] for r in labelled})},
            "rows": rows}


def main(argv: list[str] | None = None) -> int:
    from swemine.corpora.tasks import load_tasks
    root = (argv or sys.argv[1:] or ["/work/shared/corpora"])[0]
    ww = evaluate_who_when(glob.glob(os.path.join(root, "who-and-when", "Who_and_When", "*", "*.json")))
    print("Who&When (AED anchor: 63.6% exact-step agreement for a trained 8B diagnoser)")
    for name, agg in ww.items():
        print(f"  {name:<20} n={agg['n']:>3}  label-in-candidates={agg['candidate_coverage']:.1%}  "
              f"exact={agg['exact_step_agreement']:.1%}  within2={agg['within2_agreement']:.1%}  "
              f"agent={agg['agent_agreement']:.1%}  first-step-baseline={agg['baseline_exact']:.1%}")
    tasks = [t for t in load_tasks([os.path.join(root, "swebench-instances", "verified", "swebench_verified.jsonl")])
             if isinstance(t, dict) and "instance_id" in t]
    gold = {t["instance_id"]: t.get("patch") or "" for t in tasks}
    for run in sorted(glob.glob(os.path.join(root, "mini-swe-agent", "swebench_results", "*"))):
        fr = evaluate_failure_reports(run, gold)
        print(f"mini-swe-agent failure reports ({os.path.basename(run)}): {fr['reports']} reports, "
              f"{fr['labelled']} with a mapped label {fr['by_weak_label']}; category agreement "
              f"{fr['category_agreement']:.1%}; weak label among stage-1 flags {fr['weak_label_among_flags']:.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
