"""Trajectory quality filters (Nebius / SWE-smith practice, docs/filters.md): each rule configurable, each a reason.

Per record (:func:`quality_stage_fn`):
- ``empty_trajectory`` — fewer than ``min_steps`` steps;
- ``malformed_response`` — more than ``max_malformed_steps`` assistant steps with no action and no tool, with
  tool arguments that are not JSON, or whose observation carries a harness format-error marker;
- ``tool_misuse`` — more than ``max_tool_errors`` observations carrying a tool-misuse marker (unknown command,
  usage error, bad arguments).

Per instance (:func:`select_per_instance` over the records, :func:`instance_decisions` over their
:class:`Candidate` stand-ins, which is what a pipeline groups by instance):
- ``duplicate_actions`` — the same normalized action sequence (tool names, arguments and action texts: the
  trajectory dedup key) as a kept trajectory of the same instance; a trajectory whose sequence has fewer than
  ``min_action_words`` words is never a duplicate;
- ``not_n_shortest`` — beyond the ``keep_shortest`` shortest (fewest steps, then smallest id, then source path) of
  its instance.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from swemine.corpora.records import Filtered, make_filtered
from swemine.filters.dedup import Outcome, dedup_text, has_key
from swemine.filters.fields import spec_for
from swemine.filters.text import exact_key
from swemine.filters.verdict import Verdict, filter_stage

STAGE = "quality"
TRAJECTORY_SPEC = spec_for("trajectory")
GROUP_STAGE = "quality_group"
FORMAT_ERROR_MARKERS = ("your output was not formatted correctly", "was not formatted correctly",
                        "your last output did not use any tool calls", "please make sure your output includes exactly",
                        "format error")
TOOL_ERROR_MARKERS = ("command not found", "unrecognized arguments", "invalid choice", "unknown command",
                      "usage: ", "not a valid command", "missing required argument")


@dataclass(frozen=True)
class QualityConfig:
    """Switches and thresholds; 0 / empty switches a rule off where noted."""
    min_steps: int = 1
    malformed: bool = True
    max_malformed_steps: int = 0
    format_error_markers: tuple[str, ...] = FORMAT_ERROR_MARKERS
    tool_misuse: bool = True
    max_tool_errors: int = 3
    tool_error_markers: tuple[str, ...] = TOOL_ERROR_MARKERS
    dedup_actions: bool = True
    min_action_words: int = 5              # a shorter action sequence is no key: never a duplicate
    keep_shortest: int = 0                 # keep N shortest per instance; 0 = off


def _malformed_steps(steps: list[dict], markers: tuple[str, ...]) -> list[dict[str, Any]]:
    out = []
    for s in steps:
        why = ""
        if s.get("role") in ("assistant", "agent", None) and not (s.get("action_text") or "").strip() \
                and not s.get("tool_name"):
            why = "no_action"
        elif s.get("tool_args_json"):
            try:
                json.loads(s["tool_args_json"])
            except (TypeError, json.JSONDecodeError):
                why = "tool_args_not_json"
        if not why:
            obs = (s.get("observation") or "").lower()
            why = next((f"marker:{m}" for m in markers if m in obs), "")
        if why:
            out.append({"step": s.get("idx"), "why": why})
    return out


def _tool_errors(steps: list[dict], markers: tuple[str, ...]) -> list[dict[str, Any]]:
    out = []
    for s in steps:
        obs = (s.get("observation") or "").lower()
        hit = next((m for m in markers if m in obs), None)
        if hit:
            out.append({"step": s.get("idx"), "marker": hit.strip()})
    return out


def check_quality(traj: dict, cfg: QualityConfig) -> tuple[str, dict[str, Any]] | None:
    """The first per-record rule that fires as ``(reason, evidence)``, or ``None``."""
    steps = traj.get("steps") or []
    if len(steps) < cfg.min_steps:
        return "empty_trajectory", {"rule": "min_steps", "n_steps": len(steps), "min_steps": cfg.min_steps}
    if cfg.malformed:
        bad = _malformed_steps(steps, cfg.format_error_markers)
        if len(bad) > cfg.max_malformed_steps:
            return "malformed_response", {"rule": "malformed_steps", "n_bad": len(bad), "steps": bad[:10],
                                          "max_malformed_steps": cfg.max_malformed_steps}
    if cfg.tool_misuse:
        errs = _tool_errors(steps, cfg.tool_error_markers)
        if len(errs) > cfg.max_tool_errors:
            return "tool_misuse", {"rule": "tool_errors", "n_errors": len(errs), "steps": errs[:10],
                                   "max_tool_errors": cfg.max_tool_errors}
    return None


def quality_stage_fn(record_type: str = "trajectory", cfg: QualityConfig | None = None):
    """Stage function for the per-record rules."""
    cfg = cfg or QualityConfig()

    def judge(traj: dict) -> Verdict:
        hit = check_quality(traj, cfg)
        return Verdict(traj) if hit is None else Verdict(traj, *hit)

    return filter_stage(STAGE, record_type, judge)


def action_key(traj: dict, min_words: int = QualityConfig.min_action_words) -> str:
    """Normalized hash of what the agent did (the trajectory dedup key); "" when that is empty or trivial."""
    text = dedup_text(traj, TRAJECTORY_SPEC)
    return exact_key(text) if has_key(text, min_words) else ""


class Candidate(NamedTuple):
    """A record's stand-in in the per-instance selection (what a shuffle carries instead of the record): its
    place in the order (fewest steps, then smallest id, then its source: records that share an id, one file read
    under two paths, are taken in the order of their paths), its :func:`action_key` and its instance."""
    n_steps: int
    record_id: str
    source_uri: str
    source_locator: str
    action_key: str
    instance_id: str | None

    @property
    def instance(self) -> str:
        """Group key for per-instance rules (records without an instance stand alone)."""
        return self.instance_id or f"record:{self.record_id}"


def candidate(traj: dict, cfg: QualityConfig) -> Candidate:
    """The :class:`Candidate` of a trajectory (or of a row that carries its ``steps``); the action key is taken
    only when ``cfg`` removes duplicate actions."""
    return Candidate(len(traj.get("steps") or []), traj.get("record_id") or "", traj.get("source_uri") or "",
                     traj.get("source_locator") or "",
                     action_key(traj, cfg.min_action_words) if cfg.dedup_actions else "", traj.get("instance_id"))


def select_candidates(cands: Sequence[Candidate], cfg: QualityConfig) -> list[tuple[int, Outcome]]:
    """The per-instance rules over one instance's candidates: ``(index in cands, outcome)`` in the order the rules
    take them (see :class:`Candidate`)."""
    out: list[tuple[int, Outcome]] = []
    seen: dict[str, str] = {}
    kept = 0
    for i in sorted(range(len(cands)), key=lambda i: cands[i][:4]):
        c = cands[i]
        if cfg.dedup_actions and c.action_key and c.action_key in seen:
            out.append((i, ("duplicate_actions", {"rule": "same_action_sequence", "kept_record_id": seen[c.action_key],
                                                  "instance_id": c.instance_id, "action_hash": c.action_key[:16]})))
        elif cfg.keep_shortest and kept >= cfg.keep_shortest:
            out.append((i, ("not_n_shortest", {"rule": "keep_n_shortest", "n": cfg.keep_shortest,
                                               "n_steps": c.n_steps, "instance_id": c.instance_id})))
        else:
            if c.action_key:
                seen[c.action_key] = c.record_id
            kept += 1
            out.append((i, None))
    return out


def instance_decisions(cands: Iterable[Candidate], cfg: QualityConfig) -> list[tuple[Candidate, tuple[Outcome, ...]]]:
    """:func:`select_candidates` by candidate, for the candidates not simply kept: each with the outcomes of its
    copies (more than one only where records agree in every field of the candidate: copies of one source
    record)."""
    cands = list(cands)
    by: dict[Candidate, list[Outcome]] = {}
    for i, outcome in select_candidates(cands, cfg):
        by.setdefault(cands[i], []).append(outcome)
    return [(c, tuple(outs)) for c, outs in by.items() if any(o is not None for o in outs)]


def apply_outcome(record: dict, outcome: Outcome, record_type: str) -> dict | Filtered:
    """The record kept, or its ``Filtered`` row of stage ``quality_group``."""
    if outcome is None:
        return record
    reason, evidence = outcome
    return make_filtered(GROUP_STAGE, reason, record, record_type, evidence)


def select_per_instance(trajs: Iterable[dict], cfg: QualityConfig, record_type: str = "trajectory"
                        ) -> list[dict | Filtered]:
    """Per-instance rules over one instance's trajectories: kept records and ``Filtered`` ones, in the order of
    :func:`select_candidates`."""
    trajs = list(trajs)
    return [apply_outcome(trajs[i], outcome, record_type)
            for i, outcome in select_candidates([candidate(t, cfg) for t in trajs], cfg)]
