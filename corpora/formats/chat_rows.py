"""Dataset rows of chat-message trajectories (one row = one trajectory, from JSONL, a JSON list or Parquet).

* OpenAI-chat rows — ``nebius/SWE-rebench-openhands-trajectories``, SWE-Gym and SWE-smith trajectory sets:
  ``instance_id``, ``trajectory`` or ``messages`` (``role``, ``content``, ``tool_calls[{function{name,
  arguments}}]``, ``tool_call_id``; SWE-smith stores the list as a JSON string), ``model_patch``/``patch``,
  ``exit_status``, ``resolved`` (bool, or 1/0 with -1 = not evaluated → ``None``), ``trajectory_id``/``traj_id``,
  ``model``/``model_name``. Tool calls may be native or text-mode ``<function=NAME>`` blocks.
* ``nebius/SWE-agent-trajectories`` rows: ``instance_id``, ``model_name``, ``target`` (resolved),
  ``exit_status``, ``generated_patch``, ``eval_logs``, ``trajectory[{role: system|user|ai, text, mask}]``; an
  ``ai`` turn is a thought plus one fenced SWE-agent command, the next ``user`` turn its observation.

Steps follow :func:`swemine.corpora.formats.chat.chat_steps`.
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from swemine.corpora.formats.base import Format, make_trajectory, text
from swemine.corpora.formats.chat import Action, chat_steps, fenced_command, thought_text
from swemine.corpora.formats.swe_agent import problem_statement_from, split_command
from swemine.corpora.inputs import DocSource


def _messages(doc: dict) -> list | None:
    """The message list; SWE-smith stores it as a JSON string, which is decoded."""
    for key in ("trajectory", "messages"):
        value = doc.get(key)
        if isinstance(value, str) and value.lstrip().startswith("["):
            try:
                value = json.loads(value)
            except json.JSONDecodeError:
                continue
        if isinstance(value, list):
            return value
    return None


def _first_dict(items: list) -> dict:
    return next((m for m in items if isinstance(m, dict)), {})


def resolved_value(value: Any) -> bool | None:
    """``True``/``False`` from a bool, 1/0 or "true"/"false"; ``None`` for anything else (e.g. -1 = not evaluated)."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return {1: True, 0: False}.get(int(value)) if value == int(value) else None
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "1", "0"):
        return value.strip().lower() in ("true", "1")
    return None


class OpenAIChatRow(Format):
    name = "openai-chat-row"
    harness = "openai-chat"   # the row's own 'harness'/'scaffold' field wins when present
    description = "OpenAI-chat trajectory row (SWE-rebench-openhands, SWE-Gym, SWE-smith): messages + patch + resolved"
    detects = "object with 'instance_id' and 'trajectory'/'messages' = list of {role, content|tool_calls}"

    def matches(self, doc: Any, uri: str) -> bool:
        if not isinstance(doc, dict) or "instance_id" not in doc:
            return False
        msgs = _messages(doc)
        first = _first_dict(msgs or [])
        return bool(first) and "role" in first and ("content" in first or "tool_calls" in first)

    def parse(self, doc: dict, src: DocSource) -> Iterator[dict]:
        messages = _messages(doc) or []
        resolved = resolved_value(doc.get("resolved"))
        tools = doc.get("tools") if isinstance(doc.get("tools"), list) else []
        traj = make_trajectory(
            src, self, instance_id=str(doc.get("instance_id") or ""),
            trajectory_id=str(doc.get("trajectory_id") or doc.get("traj_id") or ""),
            repo=str(doc.get("repo") or "").lower(), steps=chat_steps(messages),
            problem_statement=str(doc.get("problem_statement") or "") or problem_statement_from(messages),
            final_patch=text(doc.get("model_patch") or doc.get("patch") or ""),
            model_name=str(doc.get("model_name") or doc.get("model") or ""),
            exit_status=text(doc.get("exit_status")), resolved=resolved,
            resolved_source="trajectory" if resolved is not None else "",
            extra={"tools": [tool_spec_name(t) for t in tools],
                   "gen_tests_correct": doc.get("gen_tests_correct"),
                   "pred_passes_gen_tests": doc.get("pred_passes_gen_tests")})
        traj["harness"] = str(doc.get("harness") or doc.get("scaffold") or self.harness)
        yield traj


def tool_spec_name(tool: Any) -> str:
    """The name of a tool spec: a dict, a JSON string of one (Open-SWE-Traces), or a bare name."""
    if isinstance(tool, str):
        try:
            tool = json.loads(tool) if tool.lstrip().startswith("{") else tool
        except json.JSONDecodeError:
            return tool
    if isinstance(tool, str):
        return tool
    if isinstance(tool, dict):
        fn = tool.get("function") if isinstance(tool.get("function"), dict) else tool
        return str(fn.get("name") or "")
    return ""


def swe_agent_command(content: str) -> Action:
    """The fenced SWE-agent command of an ``ai`` turn (``open a.py 10`` → tool ``open``, args ``a.py 10``)."""
    found = fenced_command(content)
    if found is None:
        return "", None, "", thought_text(content)
    thought, command = found
    tool, args = split_command(command)
    return tool, {"args": args} if args else None, command, thought


class SweAgentRow(Format):
    name = "swe-agent-row"
    harness = "swe-agent"
    description = "nebius/SWE-agent-trajectories row: trajectory[{role: system|user|ai, text}], target, generated_patch"
    detects = "object with 'instance_id' and 'trajectory' = list of {role: system|user|ai, text}"

    def matches(self, doc: Any, uri: str) -> bool:
        if not isinstance(doc, dict) or "instance_id" not in doc or not isinstance(doc.get("trajectory"), list):
            return False
        first = _first_dict(doc["trajectory"])
        return "text" in first and first.get("role") in ("system", "user", "ai")

    def parse(self, doc: dict, src: DocSource) -> Iterator[dict]:
        turns = doc["trajectory"]
        as_chat = [{"role": "user", "content": t.get("text")}
                   for t in turns if isinstance(t, dict) and t.get("role") == "user"]
        resolved = resolved_value(doc.get("target"))
        yield make_trajectory(
            src, self, instance_id=str(doc.get("instance_id") or ""),
            steps=chat_steps(turns, swe_agent_command, content_key="text", assistant_roles=("ai",)),
            problem_statement=problem_statement_from(as_chat[:1]),
            final_patch=text(doc.get("generated_patch") or ""), model_name=str(doc.get("model_name") or ""),
            exit_status=text(doc.get("exit_status")), resolved=resolved,
            resolved_source="trajectory" if resolved is not None else "",
            extra={"eval_logs": doc.get("eval_logs")})
