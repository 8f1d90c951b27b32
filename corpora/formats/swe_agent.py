"""SWE-agent ``.traj`` files: the pre-1.0 schema and 1.x (``trajectory`` + ``history`` + ``info``)."""
from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterator
from typing import Any

from swemine.corpora.formats.base import Format, make_step, make_trajectory, text
from swemine.corpora.inputs import DocSource

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
        replay = replay_config(doc)
        calls = tool_calls_per_step(doc.get("history") or [], len(doc["trajectory"]))
        steps = []
        for i, entry in enumerate(doc["trajectory"]):
            tool, args = split_command(text(entry.get("action")))
            tool_args = {"args": args} if args else None
            if calls[i]:
                tool, tool_args = calls[i]
            steps.append(make_step(i, thought=entry.get("thought") or entry.get("response") or "", tool_name=tool,
                                   tool_args=tool_args, action_text=entry.get("action"),
                                   observation=entry.get("observation")))
        stem = posixpath.basename(src.uri)
        for suffix in (".gz", ".zst", ".traj", ".json"):
            if stem.endswith(suffix):
                stem = stem[: -len(suffix)]
        statement = replay.get("problem_statement") if isinstance(replay.get("problem_statement"), dict) else {}
        instance_id = str(info.get("instance_id") or doc.get("instance_id") or stem)
        model_stats = info.get("model_stats") or {}
        yield make_trajectory(
            src, self, instance_id=instance_id, steps=steps,
            problem_statement=problem_statement_from(doc.get("history") or []) or text(statement.get("text")),
            final_patch=text(info.get("submission")).lstrip("\r\n"),
            exit_status=str(info.get("exit_status") or ""), model_name=model_name_from(replay),
            base_commit=str(_dig(replay, "env", "repo", "base_commit") or ""),
            extra={"api_calls": model_stats.get("api_calls") if isinstance(model_stats, dict) else None,
                   "instance_cost": model_stats.get("instance_cost") if isinstance(model_stats, dict) else None},
        )


def _dig(obj: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def replay_config(doc: dict) -> dict:
    """The 1.x ``replay_config`` (a dict, or the same as a JSON string); ``{}`` when absent or unreadable."""
    value = doc.get("replay_config")
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return {}
    return value if isinstance(value, dict) else {}


def model_name_from(replay: dict) -> str:
    """``replay_config.agent.model.name`` (1.x), else a flat ``model`` string."""
    model = _dig(replay, "agent", "model")
    if isinstance(model, dict):
        return str(model.get("name") or "")
    return str(model or replay.get("model") or "")


def tool_calls_per_step(history: list[dict], n_steps: int) -> list[tuple[str, Any] | None]:
    """``(function name, parsed arguments)`` of each step's first native tool call (1.x function calling).

    Uses the non-demonstration assistant turns of ``history``; when their number differs from the number of
    trajectory steps the alignment is unknown and every entry is ``None``.
    """
    turns = [h for h in history if isinstance(h, dict) and h.get("role") == "assistant" and not h.get("is_demo")]
    if len(turns) != n_steps:
        return [None] * n_steps
    out: list[tuple[str, Any] | None] = []
    for turn in turns:
        tool_calls = turn.get("tool_calls")
        call = tool_calls[0] if isinstance(tool_calls, list) and tool_calls else None
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not function.get("name"):
            out.append(None)
            continue
        args = function.get("arguments")
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except json.JSONDecodeError:
                args = {"raw": args}
        out.append((str(function["name"]), args))
    return out


def trajectory_from_history(history: list[dict]) -> list[dict]:
    """``trajectory`` entries rebuilt from a 1.x ``history``: each non-demonstration assistant turn
    (``action`` / ``thought``, else its ``content``) with the tool / user messages that answered it."""
    entries: list[dict] = []
    for msg in history:
        if not isinstance(msg, dict) or msg.get("is_demo"):
            continue
        if msg.get("role") == "assistant":
            content = text(msg.get("content"))
            entries.append({"action": text(msg.get("action")) if msg.get("action") is not None else content,
                            "thought": text(msg.get("thought")) or content, "response": content, "observation": ""})
        elif entries and msg.get("role") in ("tool", "user"):
            obs = text(msg.get("content"))
            entries[-1]["observation"] = f"{entries[-1]['observation']}\n{obs}" if entries[-1]["observation"] else obs
    return entries


class SweAgentHistory(SweAgentTraj):
    """SWE-agent 1.x ``.traj`` holding only ``history`` (no ``trajectory``): the steps are rebuilt from the chat."""
    name = "swe-agent-history"
    description = "SWE-agent 1.x .traj without 'trajectory': steps rebuilt from history (assistant turn + answer)"
    detects = ("JSON object with SWE-agent 'history' ({role, content} + message_type/agent), 'info' or "
               "'replay_config', and no non-empty 'trajectory'")

    def matches(self, doc: Any, uri: str) -> bool:
        if not isinstance(doc, dict) or doc.get("trajectory") or not isinstance(doc.get("history"), list):
            return False
        msgs = [m for m in doc["history"] if isinstance(m, dict)]
        return (bool(msgs) and ("info" in doc or "replay_config" in doc) and "role" in msgs[0]
                and any("message_type" in m or "agent" in m for m in msgs))

    def parse(self, doc: dict, src: DocSource) -> Iterator[dict]:
        yield from super().parse({**doc, "trajectory": trajectory_from_history(doc["history"])}, src)
