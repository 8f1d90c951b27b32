"""A finished run's manifest on the console: the per-stage table, its outputs, notes, and whether the run lost
everything it was asked for."""
from __future__ import annotations

import sys


def print_summary(manifest: dict, out=None) -> None:
    """Print the per-stage table (in pipeline order) and the outputs of a run."""
    out = out or sys.stdout
    if manifest.get("noop"):
        print(f"up to date: {manifest['run_id']} (use --force to recompute)", file=out)
    print(f"run {manifest['run_id']}  ({manifest['wall_seconds']}s)", file=out)
    print(f"{'stage':<28}{'in':>9}{'out':>9}{'rejected':>10}{'filtered':>10}", file=out)
    stages = manifest["stages"]
    order = [s for s in manifest.get("stage_order", []) if s in stages] + sorted(
        set(stages) - set(manifest.get("stage_order", [])))
    for name in order:
        s = stages[name]
        print(f"{name:<28}{s['in']:>9}{s['out']:>9}{sum(s['rejected'].values()):>10}"
              f"{sum(s['filtered'].values()):>10}", file=out)
    for name in order:
        for reason, n in sorted(stages[name]["rejected"].items(), key=lambda kv: -kv[1])[:8]:
            print(f"  {name} rejected {reason}: {n}", file=out)
    for o in manifest["outputs"]:
        print(f"  {o['path']}: {o['rows']} rows, {o['bytes']} bytes", file=out)
    for line in notes(manifest):
        print(f"  {line}", file=out)
    for problem in manifest.get("balance_problems", []):
        print(f"  COUNTS DO NOT BALANCE: {problem}", file=out)


def notes(manifest: dict) -> list[str]:
    """What the counts do not say: gold quality (and repositories missing under ``--repos``), diagnoses made and
    not made by reason, grounded corrections."""
    out = []
    gq = manifest.get("gold_quality")
    if gq:
        missing = gq.get("repos_not_found") or []
        out.append("gold quality: " + ", ".join(f"{k} {v}" for k, v in gq.items() if k != "repos_not_found")
                   + (f"; not found under --repos: {', '.join(missing)}" if missing else ""))
    dg = manifest.get("diagnoses")
    if dg:
        missed = dg.get("not_diagnosed") or {}
        out.append(f"diagnoses: {dg.get('verified', 0)} verified" + "".join(f", not diagnosed ({r}) {n}"
                                                                            for r, n in missed.items()))
    cc = manifest.get("corrections")
    if cc:
        out.append(f"corrections: {cc['grounded']} grounded, {cc['no_grounded_correction']} without a grounded one")
    return out


def lost_everything(manifest: dict) -> str:
    """Why the run produced nothing it was asked for (a service that could not be reached left every diagnosis
    ``not_diagnosed``; not one ``--tasks`` task could be read), else ``""``."""
    diagnoses = manifest.get("diagnoses") or {}
    missed = diagnoses.get("not_diagnosed") or {}
    if missed and not diagnoses.get("verified"):
        reasons = ", ".join(f"{reason} x{n}" for reason, n in missed.items())
        return f"no trajectory was diagnosed ({reasons}): is --llm-base-url reachable and --llm-model right?"
    tasks = (manifest.get("stages") or {}).get("tasks") or {}
    if tasks.get("in") and not tasks.get("out"):
        reasons = ", ".join(f"{reason} x{n}" for reason, n in (tasks.get("rejected") or {}).items())
        return f"no task could be read from --tasks ({reasons or 'no rows'}); see the rejects shard"
    return ""
