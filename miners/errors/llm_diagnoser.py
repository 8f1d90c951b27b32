"""Stage 2 with a model: an OpenAI-compatible endpoint picks the earliest decisive error step (a 0-based index
into the trajectory's steps) with a verbatim quote, as JSON fitting
:data:`swemine.miners.errors.diagnosis.DIAGNOSIS_JSON_SCHEMA`. The prompt holds the candidates with their evidence,
the final patch against the gold patch, the harness's failing tests and the taxonomy's phases. The record's
correction is never the model's: it is grounded (:func:`swemine.miners.errors.diagnosis.grounded_correction`)
or absent.

Bad answers (not JSON, off-schema) become rejects; a spent budget or an endpoint still failing after the
client's retries leaves the item "not diagnosed" (written, never dropped; a re-run picks it up). Whether the
quotes are really in the trajectory is stage 3's job.
"""
from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

from swemine.clients.llm import BadAnswer, BudgetExceeded, LLMClient, Unavailable
from swemine.corpora.records import Reject, make_reject
from swemine.miners.errors.diagnosis import (
    DIAGNOSE_STAGE,
    DIAGNOSIS_JSON_SCHEMA,
    NotDiagnosed,
    provenance_of,
)
from swemine.miners.errors.evidence import harness_outcome
from swemine.miners.errors.flags import CATEGORIES
from swemine.miners.errors.transcript import clip, render_transcript

PHASE_GUIDE = (
    "understanding_localization: the agent misreads the issue or settles on the wrong file / code (misleading "
    "issue text, matching keywords, referenced code or a stack trace instead of the root cause); "
    "fix_implementation: the right place but a wrong change (overfitting the example, evasive repair, redundant "
    "code, algorithm / control-flow / boundary / data errors, missing domain knowledge, an incomplete repair that "
    "misses an inheritance / interface / coordinated site, a fix that breaks other behaviour); "
    "iterative_verification: a reproduction that does not reproduce, too weak verification, misreading the "
    "output, repeating without progress, switching strategy blindly, abandoning or weakening verification.")

SYSTEM_PROMPT = (
    "You diagnose failures of software-engineering agents. Steps are numbered [step N], N = 0-based index of the "
    "agent's actions. Return the EARLIEST DECISIVE error step: the action after which the run could no longer "
    "succeed — usually the first change that diverges from what the fix needed, or the decision that sent the "
    "agent to the wrong place. Use the candidate flags and their evidence, the agent's final patch against the "
    "reference patch, and the test results. Cite evidence as exact quotes copied from the cited step. "
    "error_category is one of: " + ", ".join(CATEGORIES) + ". Phases: " + PHASE_GUIDE + " Answer with JSON only.")


def _candidate_lines(item: dict) -> list[str]:
    return [f"step {c['step']}: {c['flag']} [{c['phase']}{'/' + c['leaf'] if c['leaf'] else ''}] "
            f"evidence step {c['evidence_step']}: \"{c['quote'][:160]}\"" for c in item["candidates"]]


def diagnosis_messages(item: dict, obs_chars: int = 1200) -> list[dict]:
    """The chat prompt for one work item: task, candidates with their evidence, final vs reference patch, the
    harness's test results, the numbered transcript."""
    traj = item["trajectory"]
    tests = harness_outcome(traj)
    parts = [f"HARNESS: {traj.get('harness') or 'unknown'}",
             f"RESOLVED: {traj.get('resolved')}",
             "TASK:\n" + (traj.get("problem_statement") or "(not recorded)")[:4000],
             "CANDIDATE FLAGS (step: rule [phase/leaf] evidence):\n" + ("\n".join(_candidate_lines(item)) or "(none)"),
             "AGENT'S FINAL PATCH:\n" + (clip(traj.get("final_patch") or "", 3000) or "(none recorded)")]
    if item.get("gold_patch"):
        parts.append("REFERENCE FIX (the task's gold patch):\n" + clip(item["gold_patch"], 3000))
    if any(tests.values()):
        parts.append("HARNESS TESTS STILL FAILING:\n" + "\n".join(f"{k}: {name}" for k, names in tests.items()
                                                                  for name in names[:10]))
    parts.append("TRAJECTORY:\n" + render_transcript(traj["steps"], obs_chars))
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": "\n\n".join(parts)}]


class LLMDiagnoser:
    """Diagnoser backed by :class:`LLMClient` (cached, budgeted, retried)."""

    def __init__(self, client: LLMClient, params: dict | None = None, obs_chars: int = 1200):
        self.client, self.params, self.obs_chars = client, dict(params or {}), obs_chars
        self.name = f"llm:{client.model}"

    def diagnose(self, item: dict, reserved: bool = False) -> dict | Reject | NotDiagnosed:
        prov = provenance_of(item["trajectory"])
        try:
            answer = self.client.chat_json(diagnosis_messages(item, self.obs_chars), DIAGNOSIS_JSON_SCHEMA,
                                           params=self.params, reserved=reserved)
        except (BudgetExceeded, Unavailable) as exc:
            return NotDiagnosed(exc.reason)
        except BadAnswer as exc:
            return make_reject(DIAGNOSE_STAGE, exc.reason, str(exc), excerpt=exc.content, **prov)
        proposed = answer.get("proposed_correction")
        try:
            json.loads((proposed or {}).get("tool_args_json") or "{}")
        except ValueError:
            return make_reject(DIAGNOSE_STAGE, "llm_bad_tool_args", "tool_args_json is not JSON",
                               excerpt=proposed["tool_args_json"], **prov)
        return answer

    def diagnose_many(self, items: list[dict]) -> list[dict | Reject | NotDiagnosed]:
        """``diagnose`` over ``items`` with up to ``client.concurrency`` requests in flight, results in input
        order. The request budget is taken in input order before anything is sent, so the same items end up
        "not diagnosed" on every run (a token budget is only checked as answers come back)."""
        plan: list[tuple[dict, bool] | None] = []
        for item in items:
            msgs = diagnosis_messages(item, self.obs_chars)
            if self.client.is_cached(msgs, DIAGNOSIS_JSON_SCHEMA, params=self.params):
                plan.append((item, False))
            elif self.client.reserve():
                plan.append((item, True))
            else:
                plan.append(None)
        with ThreadPoolExecutor(max_workers=max(1, self.client.concurrency)) as pool:
            futures = [pool.submit(self.diagnose, *p) if p else None for p in plan]
            return [f.result() if f else NotDiagnosed("budget_exceeded") for f in futures]

    def batch_lines(self, items: list[dict]) -> list[dict]:
        """OpenAI Batch API input lines for the items whose prompts are not cached yet."""
        return self.client.batch_lines([(diagnosis_messages(it, self.obs_chars), DIAGNOSIS_JSON_SCHEMA)
                                        for it in items], self.params)
