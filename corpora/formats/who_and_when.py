"""Who&When failure-attribution logs (multi-agent ``history`` with a human-labelled mistake step).

One step per ``history`` entry with ``source_index`` = its index in ``history``, so the human label
``mistake_step`` compares directly with ``steps[i].source_index``. ``role`` is the speaker (``name`` when the
entry has one, else ``role``, e.g. ``Orchestrator (thought)``). What a speaker says goes to ``action_text``;
entries from an executor (``Computer_terminal``, or text starting ``exitcode: N``) are observations, with the
exit code parsed. The labels (``mistake_agent``, ``mistake_step``, ``mistake_reason``, ``mistake_type``,
``question``, ``ground_truth``, ``level``) travel in ``extra_json``.
"""
from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from typing import Any

from swemine.corpora.formats.base import Format, make_step, make_trajectory, text, to_int
from swemine.corpora.inputs import DocSource

_EXIT_RE = re.compile(r"^\s*exitcode:\s*(-?\d+)")
_EXECUTORS = ("Computer_terminal",)
_LABEL_KEYS = ("mistake_agent", "mistake_step", "mistake_reason", "mistake_type", "question", "ground_truth",
               "level", "question_ID")


def instance_id_for(uri: str) -> str:
    """``.../Hand-Crafted/17.json`` → ``who-and-when/Hand-Crafted/17``."""
    base = posixpath.basename(uri)
    for suffix in (".gz", ".zst", ".json"):
        if base.endswith(suffix):
            base = base[: -len(suffix)]
    return f"who-and-when/{posixpath.basename(posixpath.dirname(uri))}/{base}"


def _flag(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    return None


class WhoAndWhen(Format):
    name = "who-and-when"
    harness = "who-and-when"
    description = "Who&When multi-agent failure logs: history[{role|name, content}] + mistake_agent/step/reason"
    detects = "JSON object with 'history' (list) and 'mistake_step' or 'mistake_agent'"

    def matches(self, doc: Any, uri: str) -> bool:
        return (isinstance(doc, dict) and isinstance(doc.get("history"), list)
                and ("mistake_step" in doc or "mistake_agent" in doc))

    def parse(self, doc: dict, src: DocSource) -> Iterator[dict]:
        steps = []
        for i, entry in enumerate(doc["history"]):
            speaker = str(entry.get("name") or entry.get("role") or "")
            content = text(entry.get("content"))
            exit_match = _EXIT_RE.match(content)
            if speaker in _EXECUTORS or exit_match:
                steps.append(make_step(i, role=speaker, observation=content, source_index=i,
                                       exit_code=exit_match.group(1) if exit_match else None))
            else:
                steps.append(make_step(i, role=speaker, action_text=content, source_index=i))
        correct = _flag(doc.get("is_correct", doc.get("is_corrected")))
        mistake_step = doc.get("mistake_step")
        extra = {k: doc.get(k) for k in _LABEL_KEYS if k in doc}
        if isinstance(mistake_step, str) and to_int(mistake_step) is not None:
            extra["mistake_step"] = to_int(mistake_step)
        yield make_trajectory(
            src, self, instance_id=instance_id_for(src.uri), steps=steps,
            problem_statement=text(doc.get("question")), resolved=correct,
            resolved_source=f"trajectory:{src.uri}", extra=extra)
