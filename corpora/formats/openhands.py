"""OpenHands (CodeActAgent) outputs: eval ``output.jsonl`` rows, resolver rows and ``llm_completions`` logs.

``output.jsonl`` rows carry ``history``, a list of events. An *action* event (``action`` key: ``run``, ``edit``,
``read``, ``run_ipython``, ``think``, ``finish``, agent ``message`` ...) opens a step; the *observation* event
whose ``cause`` is that action's ``id`` (else the next observation before another action) closes it. The
system prompt, ``recall`` actions and user messages are not steps (a user message right after an agent
``message`` step is that step's observation); an observation that answers no action (an ``error`` raised before
any action was emitted) becomes a step of its own with role ``tool``. Both the current event schema (``source``,
``args``, ``extras``, ``tool_call_metadata``) and the older flat one (fields beside ``action``, ``exit_code``
on the observation, ``[action, observation]`` pairs) are read. Row fields: ``resolved`` only from an evaluated
``test_result.report.resolved`` (the resolver's ``success`` is its own LLM judgement and stays in ``extra_json``);
``exit_status`` is the first line of ``error`` when set, else ``finished`` when the agent called ``finish``;
resolver rows (``issue{owner, repo, number}``) get the id ``<owner>__<repo>-<number>``.

``llm_completions/<instance_id>/*.json`` files are single LLM calls: ``messages`` (the whole conversation up to
the call) + ``response``. Each file is read as one trajectory *snapshot*: the messages plus the response's
message, segmented by :func:`swemine.corpora.formats.chat.chat_steps`. Several files of one instance overlap (each is a
prefix of the next); the reader keeps them all and records the call ``timestamp`` in ``extra_json``.
"""
from __future__ import annotations

import json
import posixpath
from collections.abc import Iterator
from typing import Any

from swemine.corpora.formats.base import Format, make_step, make_trajectory, text, to_int
from swemine.corpora.formats.chat import chat_steps, render_call
from swemine.corpora.formats.swe_agent import problem_statement_from
from swemine.corpora.inputs import DocSource

#: OpenHands action type → the tool the model called (used when ``tool_call_metadata`` is absent).
ACTION_TOOLS = {"run": "execute_bash", "run_ipython": "execute_ipython_cell", "edit": "str_replace_editor",
                "read": "str_replace_editor", "browse": "browser", "browse_interactive": "browser",
                "think": "think", "finish": "finish", "delegate": "delegate", "message": ""}
_SKIP_ACTIONS = {"system", "recall", "change_agent_state", "null"}
_SKIP_OBSERVATIONS = {"agent_state_changed", "null", "recall"}
_META_ARGS = {"thought", "is_input", "blocking", "hidden", "confirmation_state", "impl_source", "security_risk",
              "keep_prompt", "is_confirmed", "action_risk", "kernel_init_code", "include_extra", "images_urls",
              "image_urls", "wait_for_response", "outputs", "final_thought", "task_completed", "action"}


def _events(history: list) -> list[dict]:
    """Flatten ``[action, observation]`` pairs (oldest schema) into one event list."""
    out = []
    for item in history:
        if isinstance(item, list):
            out.extend(x for x in item if isinstance(x, dict))
        elif isinstance(item, dict):
            out.append(item)
    return out


def _args(event: dict) -> dict:
    args = event.get("args")
    if isinstance(args, dict):
        return args
    return {k: v for k, v in event.items() if k not in ("id", "timestamp", "source", "message", "cause")}


def _called_tool(event: dict) -> tuple[str, Any] | None:
    """``(function name, parsed arguments)`` of the model's tool call behind an action, when recorded."""
    meta = event.get("tool_call_metadata")
    if not isinstance(meta, dict) or not meta.get("function_name"):
        return None
    args: Any = None
    try:
        message = meta["model_response"]["choices"][0]["message"]
        for call in message.get("tool_calls") or []:
            if call.get("id") == meta.get("tool_call_id"):
                raw = (call.get("function") or {}).get("arguments")
                args = json.loads(raw) if isinstance(raw, str) and raw.strip() else raw
    except (KeyError, IndexError, TypeError, json.JSONDecodeError):
        args = None
    return str(meta["function_name"]), args


def _is_user_message(event: dict, steps_so_far: int) -> bool:
    if event.get("action") != "message":
        return False
    source = event.get("source")
    return source == "user" or (source is None and steps_so_far == 0)


def _exit_code(event: dict) -> Any:
    extras = event.get("extras") if isinstance(event.get("extras"), dict) else {}
    meta = extras.get("metadata") if isinstance(extras.get("metadata"), dict) else {}
    for value in (meta.get("exit_code"), extras.get("exit_code"), event.get("exit_code")):
        if to_int(value) is not None:
            return value
    return None


def _action_step(event: dict) -> dict:
    kind = str(event.get("action"))
    args = _args(event)
    called = _called_tool(event)
    if called:
        tool_name, tool_args = called
    else:
        tool_name = ACTION_TOOLS.get(kind, kind)
        tool_args = {k: v for k, v in args.items() if k not in _META_ARGS and v not in (None, "")} or None
    if kind == "message":
        thought = text(args.get("content")) or text(event.get("message"))
        tool_name, tool_args = "", None
    elif kind == "finish":
        thought = text(args.get("thought") or args.get("final_thought") or event.get("message"))
    else:
        thought = text(args.get("thought"))
    if kind == "run":
        action_text = args.get("command")
    elif kind == "run_ipython":
        action_text = args.get("code")
    else:
        action_text = render_call(tool_name, tool_args) if tool_name else ""
    return {"role": "assistant", "thought": thought, "tool_name": tool_name, "tool_args": tool_args,
            "action_text": text(action_text), "observation": None, "exit_code": None, "source_index": None}


def history_steps(history: list) -> list[dict]:
    """Normalized steps of an OpenHands event history (pairing rule in the module docstring)."""
    pending: list[dict] = []
    by_id: dict[Any, dict] = {}
    skipped: set = set()
    open_step: dict | None = None
    for pos, event in enumerate(_events(history)):
        if "action" in event and "observation" not in event:
            if event["action"] in _SKIP_ACTIONS or _is_user_message(event, len(pending)):
                skipped.add(event.get("id"))
                if (open_step is not None and open_step["tool_name"] == "" and open_step["observation"] is None
                        and _is_user_message(event, len(pending))):
                    open_step["observation"] = text(_args(event).get("content") or event.get("message"))
                    open_step = None
                continue
            step = _action_step(event)
            step["source_index"] = pos
            pending.append(step)
            if event.get("id") is not None:
                by_id[event["id"]] = step
            open_step = None if event["action"] == "finish" else step
        elif "observation" in event:
            cause = event.get("cause")
            if event["observation"] in _SKIP_OBSERVATIONS or (cause is not None and cause in skipped):
                continue
            target = by_id.get(cause) if cause is not None else None
            if target is None and open_step is not None and open_step["observation"] is None:
                target = open_step
            content = text(event.get("content") if "content" in event else event.get("message"))
            if target is None:
                pending.append({"role": "tool", "thought": "", "tool_name": "", "tool_args": None, "action_text": "",
                                "observation": content, "exit_code": _exit_code(event), "source_index": pos})
                continue
            target["observation"] = content if target["observation"] is None else target["observation"] + "\n" + content
            target["exit_code"] = _exit_code(event)
            if target is open_step:
                open_step = None
    return [make_step(i, role=s["role"], thought=s["thought"], tool_name=s["tool_name"], tool_args=s["tool_args"],
                      action_text=s["action_text"], observation=s["observation"] or "", exit_code=s["exit_code"],
                      source_index=s["source_index"]) for i, s in enumerate(pending)]


class OpenHandsOutput(Format):
    name = "openhands-output"
    harness = "openhands"
    description = "OpenHands output.jsonl row (eval or resolver): history events + test_result.git_patch / git_patch"
    detects = "JSON object with 'history' (action/observation events) and 'test_result', 'git_patch' or 'instruction'"

    def matches(self, doc: Any, uri: str) -> bool:
        if not isinstance(doc, dict) or not isinstance(doc.get("history"), list) or "trajectory" in doc:
            return False
        if not any(k in doc for k in ("test_result", "git_patch", "instruction")):
            return False
        events = _events(doc["history"])
        return not events or any("action" in e or "observation" in e for e in events)

    def parse(self, doc: dict, src: DocSource) -> Iterator[dict]:
        instance = doc.get("instance") if isinstance(doc.get("instance"), dict) else {}
        issue = doc.get("issue") if isinstance(doc.get("issue"), dict) else {}
        metadata = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
        test_result = doc.get("test_result") if isinstance(doc.get("test_result"), dict) else {}
        instance_id = str(doc.get("instance_id") or instance.get("instance_id") or "")
        repo = canonical_repo(str(instance.get("repo") or ""))
        if issue and not instance_id:
            instance_id = f"{issue.get('owner')}__{issue.get('repo')}-{issue.get('number')}"
            repo = f"{issue.get('owner')}/{issue.get('repo')}".lower()
        problem = instance.get("problem_statement") or (
            f"{issue.get('title', '')}\n{issue.get('body', '')}".strip() if issue else "")
        steps = history_steps(doc["history"])
        report = test_result.get("report") if isinstance(test_result.get("report"), dict) else {}
        resolved = report.get("resolved") if isinstance(report.get("resolved"), bool) else None
        error = text(doc.get("error"))
        finished = any(s["tool_name"] == "finish" for s in steps)
        yield make_trajectory(
            src, self, instance_id=instance_id, repo=repo, steps=steps,
            problem_statement=str(problem or "") or problem_statement_from(_user_messages(doc["history"])),
            final_patch=str(test_result.get("git_patch") or doc.get("git_patch") or ""),
            model_name=str((metadata.get("llm_config") or {}).get("model") or ""),
            base_commit=str(instance.get("base_commit") or doc.get("base_commit") or ""),
            exit_status=error.splitlines()[0] if error else ("finished" if finished else ""),
            resolved=resolved, resolved_source="trajectory" if resolved is not None else "",
            extra={"agent_class": metadata.get("agent_class"), "error": error or None,
                   "resolver_success": doc.get("success"), "result_explanation": doc.get("result_explanation"),
                   "accumulated_cost": (doc.get("metrics") or {}).get("accumulated_cost")
                   if isinstance(doc.get("metrics"), dict) else None})


def canonical_repo(repo: str) -> str:
    """``owner/name``; Multi-SWE-bench image names ``mswebench/<owner>_m_<name>`` are mapped back."""
    if repo.startswith("mswebench/") and "_m_" in repo:
        owner, _, name = repo.split("/", 1)[1].partition("_m_")
        return f"{owner}/{name}".lower()
    return repo.lower()


def _user_messages(history: list) -> list[dict]:
    return [{"role": "user", "content": _args(e).get("content") or e.get("message")}
            for e in _events(history) if _is_user_message(e, 0)]


class OpenHandsLlmCompletion(Format):
    name = "openhands-llm-completion"
    harness = "openhands"
    description = "OpenHands llm_completions/<instance_id>/*.json: one LLM call (messages + response) = a snapshot"
    detects = "JSON object with 'messages' (OpenAI chat) and 'response' with 'choices'"

    def matches(self, doc: Any, uri: str) -> bool:
        return (isinstance(doc, dict) and isinstance(doc.get("messages"), list)
                and isinstance(doc.get("response"), dict) and isinstance(doc["response"].get("choices"), list))

    def parse(self, doc: dict, src: DocSource) -> Iterator[dict]:
        messages = list(doc["messages"])
        choices = doc["response"]["choices"]
        if choices and isinstance(choices[0], dict) and isinstance(choices[0].get("message"), dict):
            messages.append(choices[0]["message"])
        folder = posixpath.dirname(src.uri)
        in_completions = posixpath.basename(posixpath.dirname(folder)) == "llm_completions"
        instance_id = posixpath.basename(folder) if in_completions else ""
        yield make_trajectory(
            src, self, instance_id=instance_id, steps=chat_steps(messages),
            problem_statement=problem_statement_from(messages),
            model_name=str(doc["response"].get("model") or ""),
            extra={"snapshot_timestamp": doc.get("timestamp"), "cost": doc.get("cost")})
