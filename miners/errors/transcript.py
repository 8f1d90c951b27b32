"""Render normalized trajectory steps as text and as chat messages (for diagnosis prompts and training views).

Step numbers shown are the 0-based indexes into the trajectory's normalized ``steps`` — the numbering every
error record, candidate flag and diagnosis uses.
"""
from __future__ import annotations

from swemine.miners import actions as act

DEFAULT_OBS_CHARS = 1500


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` chars, keeping head and tail around a marker."""
    text = text or ""
    if limit <= 0 or len(text) <= limit:
        return text
    head = limit * 2 // 3
    return f"{text[:head]}\n[... {len(text) - limit} chars clipped ...]\n{text[-(limit - head):]}"


def action_text(step: dict) -> str:
    """What the agent did, as one string (the action text, else ``tool(args)``)."""
    if step.get("action_text"):
        return step["action_text"]
    if step.get("tool_name"):
        return f"{step['tool_name']}({step.get('tool_args_json') or ''})"
    return ""


def render_step(step: dict, obs_chars: int = DEFAULT_OBS_CHARS, with_flags: bool = False) -> str:
    """One step as a block of text headed ``[step idx] <role>``."""
    lines = [f"[step {step['idx']}] {step.get('role') or 'assistant'}"]
    if step.get("thought"):
        lines.append("THOUGHT: " + clip(step["thought"], obs_chars))
    if act.is_actor(step):
        lines.append("ACTION: " + clip(action_text(step), obs_chars))
    if step.get("observation"):
        lines.append("OBSERVATION: " + clip(step["observation"], obs_chars))
    if with_flags and step.get("error_signals"):
        lines.append("FLAGS: " + ", ".join(step["error_signals"]))
    return "\n".join(lines)


def render_transcript(steps: list[dict], obs_chars: int = DEFAULT_OBS_CHARS, with_flags: bool = False) -> str:
    """All ``steps`` rendered and joined by blank lines."""
    return "\n\n".join(render_step(s, obs_chars, with_flags) for s in steps)


def chat_messages(task: str, steps: list[dict], system: str, obs_chars: int = DEFAULT_OBS_CHARS) -> list[dict]:
    """A trajectory prefix as chat turns: system, the task as user, then per step the assistant's action and
    the observation as a user turn. Every message carries ``train=False`` (the caller marks targets)."""
    msgs = [{"role": "system", "content": system, "train": False},
            {"role": "user", "content": task or "(no task statement recorded)", "train": False}]
    for s in steps:
        if act.is_actor(s):
            body = (s.get("thought") or "").strip()
            action = action_text(s)
            content = f"{body}\n\n{action}".strip() if body else action
            msgs.append({"role": "assistant", "content": clip(content, obs_chars * 2), "train": False})
            if s.get("observation"):
                msgs.append({"role": "user", "content": clip(s["observation"], obs_chars), "train": False})
        else:
            msgs.append({"role": "user", "content": clip(s.get("observation") or s.get("action_text") or "",
                                                         obs_chars), "train": False})
    return msgs
