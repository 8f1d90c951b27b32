"""Minimal step lists read straight from raw Moatless v3 ``trajectory.json`` (no Moatless reader on this
branch yet). Steps are built with ``make_step``."""
from __future__ import annotations

import ast
import json

from corpora.formats.base import make_step


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


def load_json(path) -> dict:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)
