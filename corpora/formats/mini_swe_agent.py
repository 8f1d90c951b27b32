"""mini-swe-agent ``<id>.traj.json``: ``messages`` (system, task, then assistant/user turns) + ``info``.

Each assistant turn is ``THOUGHT: ...`` plus one fenced ```` ```bash ```` block (the action); the user turn
after it is the observation, ``<returncode>N</returncode><output>...</output>`` (→ ``obs_exit_code``).
"""
from __future__ import annotations

import posixpath
from collections.abc import Iterator
from typing import Any

from swemine.corpora.formats.base import Format, make_trajectory
from swemine.corpora.formats.chat import Action, chat_steps, fenced_command, thought_text
from swemine.corpora.formats.swe_agent import problem_statement_from
from swemine.corpora.inputs import DocSource


def bash_action(content: str) -> Action:
    """The fenced shell command of a mini-swe-agent assistant turn as a ``bash`` tool call."""
    found = fenced_command(content)
    if found is None:
        return "", None, "", thought_text(content)
    thought, command = found
    return "bash", {"command": command}, command, thought


class MiniSweAgentTraj(Format):
    name = "mini-swe-agent-traj"
    harness = "mini-swe-agent"
    description = "mini-swe-agent .traj.json: messages[role/content] with one fenced bash block per turn + info"
    detects = "JSON object with 'messages' (role/content) and 'info' (trajectory_format mini-swe-agent-*)"

    def matches(self, doc: Any, uri: str) -> bool:
        if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list) or "info" not in doc:
            return False
        fmt = str(doc.get("trajectory_format") or "")
        return fmt.startswith("mini-swe-agent") or (not fmt and uri.endswith(".traj.json"))

    def parse(self, doc: dict, src: DocSource) -> Iterator[dict]:
        info = doc.get("info") or {}
        config = info.get("config") or {}
        model = (config.get("model") or {}) if isinstance(config, dict) else {}
        stem = posixpath.basename(src.uri).split(".traj", 1)[0]
        stats = info.get("model_stats") or {}
        yield make_trajectory(
            src, self, instance_id=str(doc.get("instance_id") or stem),
            steps=chat_steps(doc["messages"], bash_action),
            problem_statement=problem_statement_from(doc["messages"]),
            final_patch=(info.get("submission") or "").lstrip("\r\n"),
            exit_status=str(info.get("exit_status") or ""),
            model_name=str(model.get("model_name") or "") if isinstance(model, dict) else "",
            extra={"mini_version": info.get("mini_version"), "api_calls": stats.get("api_calls"),
                   "instance_cost": stats.get("instance_cost")})
