"""Stage 2 with a model: an OpenAI-compatible endpoint picks the earliest decisive error step among the
stage-1 candidates and proposes a correction, as JSON fitting :data:`swemine.miners.errors.diagnosis.DIAGNOSIS_JSON_SCHEMA`.

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
from swemine.miners.errors.flags import CATEGORIES
from swemine.miners.errors.transcript import clip, render_transcript

SYSTEM_PROMPT = (
    "You diagnose failures of software-engineering agents. Given a task, the agent's trajectory with step "
    "numbers, and deterministic error flags, return the EARLIEST DECISIVE error step: the first step at which "
    "a different action would have changed the outcome. Cite evidence as exact quotes copied from the cited "
    "step. Propose a corrected action in the same harness's action syntax (tool_name, tool_args_json as a JSON "
    "string, action_text). Categories: " + ", ".join(CATEGORIES) + ". Answer with JSON only.")


def diagnosis_messages(item: dict, obs_chars: int = 1200) -> list[dict]:
    """The chat prompt for one work item."""
    traj = item["trajectory"]
    flags = [f"step {c['step']}: {c['flag']}" for c in item["candidates"]]
    parts = [f"HARNESS: {traj.get('harness') or 'unknown'}",
             f"RESOLVED: {traj.get('resolved')}",
             "TASK:\n" + (traj.get("problem_statement") or "(not recorded)")[:4000],
             "CANDIDATE FLAGS:\n" + ("\n".join(flags) or "(none)")]
    if item.get("gold_patch"):
        parts.append("REFERENCE FIX (the task's gold patch):\n" + clip(item["gold_patch"], 3000))
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
        answer["correction_source"] = "llm"
        try:
            json.loads(answer["proposed_correction"]["tool_args_json"] or "{}")
        except ValueError:
            return make_reject(DIAGNOSE_STAGE, "llm_bad_tool_args", "tool_args_json is not JSON",
                               excerpt=answer["proposed_correction"]["tool_args_json"], **prov)
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
