"""Moatless Tools trajectories, three schema generations.

- v1 ``AgenticLoop``: ``transitions[{name, state, actions[{action, output | retry_message}]}]`` + ``info``.
- v2 ``MoatlessTools``: ``transitions[{id, name, previous_state_id, properties, actions[{request, response}]}]``.
- v3 node tree: ``nodes[{node_id, parent_id, action, observation, file_context}]``; the trajectory is the path
  from the root to the last terminal node (the last node when none is terminal).

One step per action; ``tool_name`` is the transition name (v1/v2) or the action-arguments class without its
``Args``/``Arguments`` suffix (v3, e.g. ``FindClass``); ``action_text`` is the call rendered as ``Tool({json})``
(:func:`swemine.corpora.formats.chat.render_call`). The thought is ``thoughts`` / ``scratch_pad``.

Failure flags stay on the step, in a header line that starts the observation, e.g.
``[moatless: expect_correction=true fail_reason=string_not_found]`` (v3) or ``[moatless: retry=true]`` /
``[moatless: trigger=retry]`` (v1/v2 ``retry_message``); the same flags are listed per step index in the
trajectory's ``extra_json["step_flags"]``. ``error_signals`` is left to the error miner.
"""
from __future__ import annotations

import json
import posixpath
from collections.abc import Iterator
from typing import Any

from swemine.corpora.formats.base import Format, make_step, make_trajectory, text
from swemine.corpora.formats.chat import render_call
from swemine.corpora.inputs import DocSource

_THOUGHT_KEYS = ("thoughts", "scratch_pad")


def render_output(output: Any) -> str:
    """A readable observation from a Moatless ``output`` dict: message first, then the other fields."""
    if output is None:
        return ""
    if not isinstance(output, dict):
        return text(output)
    lines = [text(output["message"])] if output.get("message") else []
    for key, value in output.items():
        if key == "message" or value in (None, "", [], {}):
            continue
        if key == "ranked_spans" and isinstance(value, list):
            lines.append("ranked_spans:")
            lines.extend(f"  {s.get('file_path', '')}: {s.get('span_id', '')}" if isinstance(s, dict) else f"  {s}"
                         for s in value)
        elif isinstance(value, str):
            lines.append(f"{key}:\n{value}" if "\n" in value else f"{key}: {value}")
        else:
            lines.append(f"{key}: {json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)}")
    return "\n".join(lines)


def flag_header(flags: dict) -> str:
    """``[moatless: k=v ...]`` for the non-empty flags (``True`` renders as ``true``)."""
    parts = []
    for key, value in flags.items():
        if value is True:
            parts.append(f"{key}=true")
        elif value not in (None, False, ""):
            parts.append(f"{key}={value}")
    return f"[moatless: {' '.join(parts)}]\n" if parts else ""


def split_thought(args: dict) -> tuple[str, dict]:
    """Separate the model's reasoning (``thoughts`` / ``scratch_pad``) from the tool arguments."""
    thought = " ".join(text(args[k]) for k in _THOUGHT_KEYS if args.get(k))
    rest = {k: v for k, v in args.items() if k not in _THOUGHT_KEYS}
    return thought, rest


def loop_status(info: dict, transitions: list) -> str:
    """v1/v2 exit status: ``info.status``, else the final state (``finished`` / ``rejected``), else
    ``error`` when ``info.error`` is set, else ``incomplete``."""
    if info.get("status"):
        return str(info["status"])
    last = str((transitions[-1] or {}).get("name", "")) if transitions else ""
    if last in ("Finished", "Rejected"):
        return last.lower()
    return "error" if info.get("error") else "incomplete"


def _stem_id(uri: str) -> str:
    """Instance id from ``<id>.json`` or ``<id>/trajectory[-correction].json``."""
    base = posixpath.basename(uri)
    for suffix in (".gz", ".zst", ".json"):
        if base.endswith(suffix):
            base = base[: -len(suffix)]
    if base.startswith("trajectory"):
        return posixpath.basename(posixpath.dirname(uri))
    return base


class MoatlessV1(Format):
    name = "moatless-v1"
    harness = "moatless"
    description = "Moatless Tools v1 AgenticLoop: transitions[{name, state, actions[{action, output}]}] + info"
    detects = "JSON object with 'transitions' (items with 'state' and 'actions') and 'info', no 'transition_rules'"

    def matches(self, doc: Any, uri: str) -> bool:
        if not isinstance(doc, dict) or not isinstance(doc.get("transitions"), list) or "transition_rules" in doc:
            return False
        first = doc["transitions"][0] if doc["transitions"] else {}
        return "info" in doc and (not first or ("actions" in first and "state" in first))

    def parse(self, doc: dict, src: DocSource) -> Iterator[dict]:
        info = doc.get("info") or {}
        steps, flags, models = [], {}, []
        for t_idx, trans in enumerate(doc["transitions"]):
            state = trans.get("state") or {}
            if state.get("model"):
                models.append(str(state["model"]))
            for action in trans.get("actions") or []:
                act = action.get("action") or {}
                thought, args = split_thought(act if isinstance(act, dict) else {"value": act})
                inner = args.get("action")
                if isinstance(inner, dict) and len(args) == 1:
                    args = inner                              # PlanToCode wraps its arguments once more
                retry = action.get("retry_message")
                step_flags = {"retry": True} if retry else {}
                obs = flag_header(step_flags) + (text(retry) if retry else render_output(action.get("output")))
                if step_flags:
                    flags[len(steps)] = step_flags
                name = str(trans.get("name") or "")
                steps.append(make_step(len(steps), thought=thought, tool_name=name, tool_args=args or None,
                                       action_text=render_call(name, args), observation=obs, source_index=t_idx))
        yield make_trajectory(
            src, self, instance_id=str(info.get("instance_id") or _stem_id(src.uri)), steps=steps,
            model_name=models[0] if models else "", problem_statement=text(doc.get("initial_message")),
            final_patch=text(info.get("submission")), exit_status=loop_status(info, doc["transitions"]),
            extra={"error": info.get("error"), "evaluation_name": info.get("evaluation_name"),
                   "total_cost": info.get("total_cost"), "step_flags": flags})


class MoatlessV2(Format):
    name = "moatless-v2"
    harness = "moatless"
    description = "Moatless Tools v2 MoatlessTools: transitions[{id, name, actions[{request, response}]}] + info"
    detects = "JSON object with 'transitions' and 'transition_rules' (or name 'MoatlessTools')"

    def matches(self, doc: Any, uri: str) -> bool:
        return (isinstance(doc, dict) and isinstance(doc.get("transitions"), list)
                and ("transition_rules" in doc or doc.get("name") == "MoatlessTools"))

    def parse(self, doc: dict, src: DocSource) -> Iterator[dict]:
        info = doc.get("info") or {}
        steps, flags, models = [], {}, []
        for t_idx, trans in enumerate(doc["transitions"]):
            props = trans.get("properties") or {}
            if props.get("model"):
                models.append(str(props["model"]))
            for action in trans.get("actions") or []:
                request = action.get("request") or {}
                response = action.get("response") or {}
                thought, args = split_thought(request if isinstance(request, dict) else {"value": request})
                retry = response.get("retry_message")
                trigger = response.get("trigger")
                step_flags = {"trigger": trigger} if trigger == "retry" or retry else {}
                obs = flag_header(step_flags) + (text(retry) if retry else render_output(response.get("output")))
                if step_flags:
                    flags[len(steps)] = step_flags
                name = str(trans.get("name") or "")
                steps.append(make_step(len(steps), thought=thought, tool_name=name, tool_args=args or None,
                                       action_text=render_call(name, args), observation=obs,
                                       source_index=trans.get("id") if isinstance(trans.get("id"), int) else t_idx))
        tags = info.get("tags") or []
        instance_id = info.get("instance_id") or (tags[0] if tags and isinstance(tags, list) else "") \
            or _stem_id(src.uri)
        repo_info = (doc.get("workspace") or {}).get("repository") or {}
        yield make_trajectory(
            src, self, instance_id=str(instance_id), steps=steps, model_name=models[0] if models else "",
            problem_statement=text(doc.get("initial_message")), final_patch=text(info.get("submission")),
            exit_status=loop_status(info, doc["transitions"]), base_commit=str(repo_info.get("commit") or ""),
            extra={"error": info.get("error"), "session_id": info.get("session_id"),
                   "total_cost": info.get("total_cost"), "step_flags": flags})


def tool_from_class(action_class: str) -> str:
    """``moatless.actions.find_class.FindClassArgs`` → ``FindClass``."""
    name = (action_class or "").rsplit(".", 1)[-1]
    for suffix in ("Arguments", "Args"):
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def tree_path(nodes: list[dict]) -> list[dict]:
    """Nodes from the root to the last terminal node (or to the last node), following ``parent_id``."""
    by_id = {n.get("node_id"): n for n in nodes}
    terminal = [n for n in nodes if isinstance(n.get("observation"), dict) and n["observation"].get("terminal")]
    end = (terminal or nodes)[-1]
    path, seen = [], set()
    node = end
    while node is not None and node.get("node_id") not in seen:
        seen.add(node.get("node_id"))
        path.append(node)
        node = by_id.get(node.get("parent_id"))
    return path[::-1]


class MoatlessV3(Format):
    name = "moatless-v3"
    harness = "moatless"
    description = "Moatless Tools v3 search tree: nodes[{node_id, parent_id, action, observation, file_context}]"
    detects = "JSON object with 'nodes' (items with 'node_id') and 'metadata' or 'agent'"

    def matches(self, doc: Any, uri: str) -> bool:
        if not isinstance(doc, dict) or not isinstance(doc.get("nodes"), list) or not doc["nodes"]:
            return False
        return ("metadata" in doc or "agent" in doc) and "node_id" in doc["nodes"][0]

    def parse(self, doc: dict, src: DocSource) -> Iterator[dict]:
        meta = doc.get("metadata") or {}
        path = tree_path(doc["nodes"])
        steps, flags = [], {}
        for node in path:
            action = node.get("action")
            if not isinstance(action, dict):
                continue                                      # the root carries the task message only
            thought, args = split_thought(action)
            tool = tool_from_class(str(args.pop("action_args_class", "") or ""))
            obs = node.get("observation") or {}
            props = obs.get("properties") or {}
            step_flags = {"expect_correction": True} if obs.get("expect_correction") else {}
            if props.get("fail_reason"):
                step_flags["fail_reason"] = props["fail_reason"]
            if step_flags:
                flags[len(steps)] = step_flags
            steps.append(make_step(len(steps), thought=thought, tool_name=tool, tool_args=args or None,
                                   action_text=render_call(tool, args),
                                   observation=flag_header(step_flags) + text(obs.get("message")),
                                   source_index=node.get("node_id") if isinstance(node.get("node_id"), int) else None))
        last = path[-1] if path else {}
        files = ((last.get("file_context") or {}).get("files")) or []
        patch = "\n".join(text(f.get("patch")).rstrip("\n") + "\n"
                          for f in files if isinstance(f, dict) and f.get("patch"))
        terminal = bool((last.get("observation") or {}).get("terminal"))
        last_tool = steps[-1]["tool_name"] if steps else ""
        status = ("finished" if last_tool == "Finish" else "rejected" if last_tool == "Reject" else "terminal") \
            if terminal else "incomplete"
        root = path[0] if path else {}
        completion = (doc.get("agent") or {}).get("completion") or {}
        yield make_trajectory(
            src, self, instance_id=str(meta.get("instance_id") or _stem_id(src.uri)), steps=steps,
            model_name=str(completion.get("model") or ""), problem_statement=text(root.get("message")),
            final_patch=patch, exit_status=status,
            extra={"evaluation_name": meta.get("evaluation_name"), "n_nodes": len(doc["nodes"]),
                   "path_node_ids": [n.get("node_id") for n in path], "step_flags": flags})


class MoatlessV0(Format):
    """Moatless before v1 (June 2024): ``{name: "moatless", input: {problem_statement}, steps: [{name, actions:
    [{name, input, output}], completion_cost}], output: {message}, info: {instance_id, submission, ...}}``.

    One step per action, ``tool_name`` = the action name (``search``, ``identify``, ``request_for_change``,
    ``search_replace``, ``finish`` ...); the loop state of each step (``SearchLoop_Searching``,
    ``CodeLoop_CodeChange`` ...) is listed in ``extra_json["step_states"]``. ``reasoning`` is a thought too."""
    name = "moatless-v0"
    harness = "moatless"
    description = "Moatless Tools before v1: {name, input: {problem_statement}, steps[{name, actions}], output, info}"
    detects = "JSON object with 'steps' (items with 'actions'), an 'input' object and 'info'"

    def matches(self, doc: Any, uri: str) -> bool:
        if not isinstance(doc, dict) or not isinstance(doc.get("steps"), list) or not isinstance(doc.get("input"), dict):
            return False
        first = doc["steps"][0] if doc["steps"] else {}
        return "info" in doc and (not first or isinstance(first.get("actions"), list))

    def parse(self, doc: dict, src: DocSource) -> Iterator[dict]:
        info = doc.get("info") or {}
        steps, states = [], []
        for s_idx, loop_step in enumerate(doc["steps"]):
            for action in loop_step.get("actions") or []:
                args = action.get("input") if isinstance(action.get("input"), dict) else {}
                reasoning = text(args.get("reasoning"))
                thought, args = split_thought({k: v for k, v in args.items() if k != "reasoning"})
                states.append(str(loop_step.get("name") or ""))
                name = str(action.get("name") or "")
                steps.append(make_step(len(steps), thought=" ".join(t for t in (reasoning, thought) if t),
                                       tool_name=name, tool_args=args or None,
                                       action_text=render_call(name, args) if name else "",
                                       observation=render_output(action.get("output")), source_index=s_idx))
        last_tool = steps[-1]["tool_name"] if steps else ""
        yield make_trajectory(
            src, self, instance_id=str(info.get("instance_id") or _stem_id(src.uri)), steps=steps,
            problem_statement=text((doc.get("input") or {}).get("problem_statement")),
            final_patch=text(info.get("submission")),
            exit_status={"finish": "finished", "reject": "rejected"}.get(last_tool, "incomplete"),
            extra={"evaluation_name": info.get("evaluation_name"), "trace_id": info.get("trace_id"),
                   "total_cost": info.get("total_cost"), "duration": info.get("duration"),
                   "output_message": text((doc.get("output") or {}).get("message")), "step_states": states})
