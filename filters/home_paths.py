"""Home-directory user names in session logs (``/Users/<name>/``, ``/home/<name>/``, ``C:\\Users\\<name>``).

Coding-assistant logs (Claude Code, Codex CLI, Aider) are full of absolute paths under the user's home, and
Claude Code names its project folders after them (``-Users-<name>-src-app``). :func:`home_user_spans` finds
the user-name part of each such path (every name: the publish privacy scan refuses any), plus every other
whole-word occurrence of a name found that way in the same text (a shell prompt, ``whoami`` output) unless it is
a generic account name (``root``, ``user``, ``runner`` ...) or shorter than four characters.
:func:`scrub_home_paths` replaces them with :data:`PLACEHOLDER` (``/home/<USER>/``, the form the privacy scan
accepts). The secrets filter calls these with ``--scrub-secrets scrub``; nothing here logs a name.
"""
from __future__ import annotations

import re

PLACEHOLDER = "<USER>"
#: Account names shared by many machines: too common as words to replace outside paths.
GENERIC_NAMES = frozenset({"user", "users", "root", "runner", "ubuntu", "admin", "administrator", "ec2-user",
                           "vagrant", "node", "app", "dev", "test", "guest", "public", "shared", "default",
                           "jovyan", "codespace", "vscode", "docker"})
_NAME = r"[A-Za-z0-9][A-Za-z0-9._-]*"
#: What a personal home folder holds next: a dot-folder, a common personal folder or a per-user tool install.
#: ``/home/<x>/`` followed by anything else is as often a container's checkout (``/home/fastjson2/core``).
_HOME_NEXT = (r"(?=/(?:\.|Desktop|Documents|Downloads|projects|Projects|PycharmProjects|repos|github|"
              r"programming|sandbox|venv|venvs|envs|miniconda3?|anaconda3?|miniforge3?|mambaforge)\b)")
#: (literals one of which the match must hold, pattern): a pattern runs only over a text holding its literal, and
#: opens with it (the check on the character before comes after it, as a lookbehind over both: the regex engine then
#: scans for the literal instead of trying every position)
_PATHS = (
    (("/Users/",), re.compile(rf"/Users/(?<![\w.-]/Users/)({_NAME})")),                  # macOS: always a user's home
    (("/home/",), re.compile(rf"/home/(?<![\w.-]/home/)({_NAME}){_HOME_NEXT}")),        # Linux: when it looks personal
    ((":/Users", ":\\Users", ":\\\\Users"),                                       # C:\Users\alice (also JSON-escaped)
     re.compile(rf"\b[A-Za-z]:(?:\\{{1,2}}|/)Users(?:\\{{1,2}}|/)({_NAME})")),
    (("-Users-", "-home-"),                                                      # Claude Code project folder names
     re.compile(r"-(?:Users|home)-(?<![\w.]-Users-)(?<![\w.]-home-)([A-Za-z0-9_.]+)(?=-|$|[/\s\"'])")),
)
_MIN_WORD = 4        # names shorter than this are only replaced inside paths
#: each literal of _PATHS, by the word it holds, with that word's offset in it
_BY_WORD = {word: [(lit, lit.index(word)) for literals, _ in _PATHS for lit in literals if word in lit]
            for word in ("home", "Users")}


def _literals_held(text: str) -> set[str]:
    """The literals of ``_PATHS`` that ``text`` holds, looked for around its ``home`` / ``Users`` (one pass each)."""
    held: set[str] = set()
    for word, literals in _BY_WORD.items():
        wanted = {lit for lit, _ in literals}
        pos = text.find(word)
        while pos >= 0 and not wanted <= held:
            for lit, k in literals:
                if pos >= k and text.startswith(lit, pos - k):
                    held.add(lit)
            pos = text.find(word, pos + 1)
    return held


def home_user_spans(text: str) -> list[tuple[int, int]]:
    """Sorted, non-overlapping ``(start, end)`` spans of home-directory user names in ``text``."""
    spans: set[tuple[int, int]] = set()
    names: set[str] = set()
    held = _literals_held(text)
    for literals, pattern in _PATHS:
        if held.isdisjoint(literals):
            continue
        for m in pattern.finditer(text):
            name = m.group(1).rstrip(".-")
            spans.add((m.start(1), m.start(1) + len(name)))
            names.add(name)
    for name in names:
        if len(name) >= _MIN_WORD and name.lower() not in GENERIC_NAMES:
            # the bare word (a prompt, ``whoami`` output), never part of a dotted name or another path
            word = re.escape(name)
            pattern = rf"{word}(?<![\w.\-/\\]{word})(?![\w\-/\\]|\.\w)"
            spans.update(m.span() for m in re.finditer(pattern, text))
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if not out or start >= out[-1][1]:
            out.append((start, end))
    return out


def scrub_home_paths(text: str, placeholder: str = PLACEHOLDER) -> tuple[str, int]:
    """``(text with home-directory user names replaced, number of replacements)``."""
    spans = home_user_spans(text)
    if not spans:
        return text, 0
    parts, last = [], 0
    for start, end in spans:
        parts.append(text[last:start])
        parts.append(placeholder)
        last = end
    parts.append(text[last:])
    return "".join(parts), len(spans)
