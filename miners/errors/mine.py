"""The error–diagnosis miner's stage functions (detect → diagnose → verify + replay; views are
:func:`swemine.miners.errors.views.build_views`), each a plain function over one work item as
:func:`swemine.pipelines.engine.stage.apply_stage` expects, plus :func:`mine` to run them without Beam (benchmarks,
evaluation, small jobs)."""
from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from swemine.corpora.records import Filtered, Reject, make_filtered
from swemine.miners import actions as act
from swemine.miners.errors import diagnosis as dg
from swemine.miners.errors.views import build_views

DETECT_STAGE = "detect"


def _slim(traj: dict) -> dict:
    keep = ("record_id", "trajectory_id", "instance_id", "harness", "resolved", "n_steps",
            "source_uri", "source_locator", "source_sha256", "config_hash")
    return {k: traj.get(k) for k in keep}


def detect_fn(element: dict) -> Iterator[dict | Filtered]:
    """Stage 1. ``element`` = ``{"trajectory", "gold_patch"}``; a trajectory with no flagged agent step, or a
    resolved one with no error it recovered from, is kept as a ``Filtered`` record (reason
    ``no_error_candidates`` / ``resolved_without_recovery``)."""
    item = dg.make_item(element["trajectory"], element.get("gold_patch") or "")
    steps = item["trajectory"]["steps"]
    if not any(act.is_actor(steps[c["step"]]) for c in item["candidates"]):
        reason = "no_error_candidates"
    elif item["trajectory"].get("resolved") is True and not item["recoveries"]:
        reason = "resolved_without_recovery"       # a resolved run yields recovered errors only
    else:
        yield item
        return
    yield make_filtered(DETECT_STAGE, reason, _slim(item["trajectory"]), "trajectory",
                        {"n_steps": len(steps), "candidates": item["candidates"]})


def diagnose_fn(diagnoser: dg.Diagnoser, min_confidence: float = 0.0) -> Callable[[dict], Iterator[dict | Reject]]:
    """Stage 2 with ``diagnoser``: adds ``diagnosis`` (a dict or ``NotDiagnosed``) and ``diagnoser``; a
    diagnosis whose confidence is under ``min_confidence`` becomes ``NotDiagnosed("below_min_confidence")`` (a
    candidate-only record)."""
    def fn(item: dict):
        result = diagnoser.diagnose(item)
        if isinstance(result, Reject):
            yield result
            return
        if isinstance(result, dict) and float(result.get("confidence") or 0.0) < min_confidence:
            result = dg.below_min_confidence(float(result.get("confidence") or 0.0))
        yield {**item, "diagnosis": result, "diagnoser": diagnoser.name}
    return fn


def verify_fn(env: dg.ReplayEnvironment | None = None) -> Callable[[dict], Iterator[dict | Reject]]:
    """Stages 3 + 4: the verification checks (a failed check → reject naming it), replay, then ``item["record"]``."""
    def fn(item: dict):
        diagnosis = item["diagnosis"]
        if isinstance(diagnosis, dg.NotDiagnosed):
            yield {**item, "record": dg.build_record(item, diagnosis, item["diagnoser"])}
            return
        failed = dg.verify(item, diagnosis)
        if failed:
            yield dg.verification_reject(item, diagnosis, failed)
            return
        yield {**item, "record": dg.build_record(item, diagnosis, item["diagnoser"], dg.replay(item, diagnosis, env))}
    return fn


@dataclass
class MineResult:
    records: list[dict] = field(default_factory=list)
    views: list[dict] = field(default_factory=list)
    rejects: list[dict] = field(default_factory=list)
    filtered: list[dict] = field(default_factory=list)
    items: list[dict] = field(default_factory=list)


def mine(trajectories: Iterable[dict], diagnoser: dg.Diagnoser | None = None,
         patch_by_instance: dict[str, str] | None = None) -> MineResult:
    """Run all stages without Beam (default: the rule diagnoser); ``patch_by_instance`` = reference patches."""
    diagnoser = diagnoser or dg.RuleDiagnoser()
    diagnose, verify = diagnose_fn(diagnoser), verify_fn()
    out = MineResult()

    def route(results, sink):
        for r in results:
            if isinstance(r, Reject):
                out.rejects.append(r)
            elif isinstance(r, Filtered):
                out.filtered.append(r)
            else:
                sink.append(r)

    items: list[dict] = []
    for traj in trajectories:
        patch = (patch_by_instance or {}).get(traj.get("instance_id") or "", "")
        route(detect_fn({"trajectory": traj, "gold_patch": patch}), items)
    diagnosed: list[dict] = []
    if hasattr(diagnoser, "diagnose_many"):                 # concurrent endpoint calls (LLM)
        results = diagnoser.diagnose_many(items)
        for item, result in zip(items, results):
            route([result] if isinstance(result, Reject) else
                  [{**item, "diagnosis": result, "diagnoser": diagnoser.name}], diagnosed)
    else:
        for item in items:
            route(diagnose(item), diagnosed)
    for item in diagnosed:
        route(verify(item), out.items)
    for item in out.items:
        out.records.append(item["record"])
        out.views.extend(build_views(item))
    return out


def correction_counts(records: Iterable[dict], not_diagnosed: Iterable[dict]) -> dict:
    """A run's ``corrections`` and ``diagnoses`` manifest entries: error records by correction source (grounded vs
    none grounded), and the items left ``not_diagnosed`` by reason (an unreachable endpoint shows here)."""
    by_source = Counter(row["correction_source"] or "no_grounded_correction" for row in records)
    missed = Counter(json.loads(row["extra_json"] or "{}").get("not_diagnosed") or "unknown" for row in not_diagnosed)
    return {"corrections": {"grounded": sum(n for k, n in by_source.items() if k != "no_grounded_correction"),
                            "no_grounded_correction": by_source.get("no_grounded_correction", 0),
                            "by_source": dict(sorted(by_source.items()))},
            "diagnoses": {"verified": sum(by_source.values()), "not_diagnosed": dict(sorted(missed.items()))}}
