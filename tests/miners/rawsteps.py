"""Minimal step lists read straight from raw public trajectory JSON, for formats whose readers are not on
this branch yet (Moatless v3, OpenHands event history; mini-swe-agent via the evaluation reader). Steps are
built with ``make_step``."""
from __future__ import annotations

import ast
import json

from corpora.formats.base import make_step
from miners.error_eval import mini_swe_agent_trajectory


def mini_swe_agent(doc: dict) -> dict:
    """The evaluation reader (one step per assistant message, the next user message as observation)."""
    return mini_swe_agent_trajectory(doc)


def _maybe_literal(value):
    if isinstance(value, str) and value[:1] in "{[":
        try:
            return ast.literal_eval(value)
        except (ValueError, SyntaxError):
            return value
    return value


def moatless_v3(doc: dict, fail_reason_in: str = "args") -> dict:
    """nodes[1:] → steps (source_index = node_id); ``fail_reason`` / ``expect_correction`` kept in the step's
    ``tool_args_json`` (``fail_reason_in="args"``) or appended to its observation (``"observation"``)."""
    steps = []
    for node in doc["nodes"]:
        action = node.get("action") or {}
        if not action:
            continue
        obs = node.get("observation") or {}
        props = _maybe_literal(obs.get("properties")) or {}
        args = {k: v for k, v in action.items() if k not in ("scratch_pad", "action_args_class")}
        observation = obs.get("message") or ""
        meta = {"expect_correction": str(obs.get("expect_correction")) == "True",
                "fail_reason": props.get("fail_reason") if isinstance(props, dict) else None}
        if fail_reason_in == "args":
            args.update({k: v for k, v in meta.items() if v})
        elif meta["fail_reason"]:
            observation += f"\n[fail_reason: {meta['fail_reason']}; expect_correction: {meta['expect_correction']}]"
        tool = (action.get("action_args_class") or "").rsplit(".", 1)[-1]
        steps.append(make_step(len(steps), thought=action.get("scratch_pad") or "", tool_name=tool, tool_args=args,
                               observation=observation, source_index=int(node["node_id"])))
    return {"record_id": doc["metadata"]["instance_id"], "instance_id": doc["metadata"]["instance_id"],
            "harness": "moatless", "steps": steps, "resolved": None, "final_patch": ""}


def openhands_history(row: dict) -> dict:
    """OpenHands event history: an agent action event + the observation event whose ``cause`` is its id."""
    events = row["history"]
    by_cause = {str(e.get("cause")): e for e in events if "observation" in e}
    steps = []
    for e in events:
        if e.get("source") != "agent" or "action" not in e:
            continue
        args = e.get("args") or {}
        obs = by_cause.get(str(e.get("id")), {})
        code = ((obs.get("extras") or {}).get("metadata") or {}).get("exit_code")
        steps.append(make_step(len(steps), thought=args.get("thought") or "", tool_name=e["action"],
                               tool_args={k: v for k, v in args.items() if k in ("command", "path", "old_str",
                                                                                 "new_str", "code")},
                               observation=obs.get("content") or "", exit_code=code, source_index=int(e["id"])))
    return {"record_id": row["instance_id"], "instance_id": row["instance_id"], "harness": "openhands",
            "steps": steps, "resolved": None, "final_patch": (row.get("test_result") or {}).get("git_patch") or ""}


def load_json(path) -> dict:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)
