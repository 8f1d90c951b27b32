"""SWE-agent ``.traj`` files: the pre-1.0 schema and 1.x (``trajectory`` + ``history`` + ``info``)."""
from __future__ import annotations

import posixpath
import re
from typing import Any, Iterator

from corpora.formats.base import Format, make_step, make_trajectory, text
from corpora.inputs import DocSource

_ISSUE_RE = re.compile(r"ISSUE:\s*\n(.*?)\n\s*INSTRUCTIONS:", re.S)
_PR_RE = re.compile(r"<pr_description>\s*(.*?)\s*</pr_description>", re.S)
_ISSUE_TAG_RE = re.compile(r"<issue_description>\s*(.*?)\s*</issue_description>", re.S)


def problem_statement_from(history: list[dict]) -> str:
    """The issue text embedded in the first user message of a SWE-agent history ("" when absent)."""
    for msg in history:
        if msg.get("role") != "user":
            continue
        body = text(msg.get("content"))
        for rx in (_ISSUE_RE, _PR_RE, _ISSUE_TAG_RE):
            m = rx.search(body)
            if m:
                return m.group(1).strip()
        return ""
    return ""


def split_command(action: str) -> tuple[str, str]:
    """``"open src/a.py 10"`` → ``("open", "src/a.py 10")``."""
    action = (action or "").strip()
    if not action:
        return "", ""
    head, _, rest = action.partition(" ")
    head = head.split("\n", 1)[0]
    return head, rest.strip() if rest else action[len(head):].strip()


class SweAgentTraj(Format):
    name = "swe-agent-traj"
    harness = "swe-agent"
    description = "SWE-agent .traj (pre-1.0 and 1.x): trajectory[action/observation/thought] + history + info"
    detects = "JSON object with 'trajectory' (list of {action, observation}) and 'info' or 'history'"

    def matches(self, doc: Any, uri: str) -> bool:
        if not isinstance(doc, dict) or not isinstance(doc.get("trajectory"), list):
            return False
        if "info" not in doc and "history" not in doc:
            return False
        first = doc["trajectory"][0] if doc["trajectory"] else {}
        return not first or ("action" in first and "observation" in first)

    def parse(self, doc: dict, src: DocSource) -> Iterator[dict]:
        info = doc.get("info") or {}
        steps = []
        for i, entry in enumerate(doc["trajectory"]):
            tool, args = split_command(text(entry.get("action")))
            steps.append(make_step(i, thought=entry.get("thought") or entry.get("response") or "", tool_name=tool,
                                   tool_args={"args": args} if args else None, action_text=entry.get("action"),
                                   observation=entry.get("observation")))
        stem = posixpath.basename(src.uri)
        for suffix in (".gz", ".zst", ".traj", ".json"):
            if stem.endswith(suffix):
                stem = stem[: -len(suffix)]
        instance_id = str(info.get("instance_id") or doc.get("instance_id") or stem)
        model_stats = info.get("model_stats") or {}
        yield make_trajectory(
            src, self, instance_id=instance_id, steps=steps,
            problem_statement=problem_statement_from(doc.get("history") or []),
            final_patch=(info.get("submission") or "").lstrip("\r\n"),
            exit_status=str(info.get("exit_status") or ""),
            model_name=str((doc.get("replay_config") or {}).get("model", "") if isinstance(doc.get("replay_config"), dict) else ""),
            extra={"api_calls": model_stats.get("api_calls") if isinstance(model_stats, dict) else None,
                   "instance_cost": model_stats.get("instance_cost") if isinstance(model_stats, dict) else None},
        )
