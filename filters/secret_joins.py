"""Secrets split across lines: where a text continues one value on its next line, the lines joined for the scanner.

Three ways a value goes on over a line break: Python's implicit concatenation of string literals (``("hf_ab"\\n
"cd")``), a backslash before the line break and an unindented line (``"Authorization: Bearer ab\\\\\\ncd"``),
and a hard wrap (a line of 60 or more characters ending in a token's characters, not base64 alone unless a wrap
came before, the next line opening with the token's rest, mixing character classes, alone or before a ``;`` /
``&``); and two ways a value's name goes on: a secret-named flag before a shell continuation (``--api-key \\``,
the value on the next line) and a Kubernetes env entry's secret-named ``- name:`` before its ``value:`` line.
:func:`join_regions` finds the places, each with the lines around it; :func:`joined` gives a region's text without
its breaks and maps the joined text's offsets back, so :mod:`swemine.filters.secrets` scans the joined region and
keeps what crosses a break or lies after one (found in the original lines, each part is replaced).
"""
from __future__ import annotations

import re
from collections.abc import Iterator

from swemine.filters.secret_rules import name_policy
from swemine.filters.secret_values import class_shifts

#: a break inside one value, found from its newline (the regex engine looks for that one character) after a quote,
#: a backslash or a token character: a string literal closed and reopened between token characters (not prose's
#: ``"… "`` / ``"…"``), a backslash-newline before an unindented line (inside a string; an indented one goes on with
#: a command's or a call's next word), a hard wrap after 16+ token characters before a line holding only the value's
#: rest, or its rest and the next ``;`` / ``&`` field of a connection string or URL query (the line's length is
#: checked by :func:`join_regions`), or a shell continuation's indented next line
BREAK = re.compile(r"\n(?<=[\"'\\A-Za-z0-9+/=_.~-]\n)(?:"
                   r"(?P<py>(?<=[A-Za-z0-9+/=_.~-][\"']\n)[ \t]*[\"'](?=[A-Za-z0-9+/=_.~-]))|(?P<bs>(?<=\\\n)(?![ \t]))|"
                   r"(?P<wrap>(?<=[A-Za-z0-9+/=_.~-]{16}\n)(?=(?P<rest>[A-Za-z0-9+/=_.~-]{6,})(?:[ \t]*(?:\n|$)|[;&])))|"
                   r"(?P<flag>(?<=[ \t]\\\n)[ \t]+))")
#: a Kubernetes env entry's indented ``value:`` line, found from its ``value:`` (a fast ``str.find``; the newline
#: before every indented line is many)
ENV_BREAK = re.compile(r"\n(?P<env>[ \t]+value(?=:))")
#: the line before a shell continuation whose flag's value is on the next line (``--api-key \\``), and a
#: Kubernetes env entry's ``- name: X_TOKEN`` line before its ``value:``
_FLAG_LINE = re.compile(r"(?<![\w-])--?(?P<name>[A-Za-z][\w-]{1,60})[ \t]+\\$")
_ENV_NAME = re.compile(r"^[ \t]*-?[ \t]*name:[ \t]*[\"']?(?P<name>[\w.-]{1,80})[\"']?[ \t]*$")
WRAP_LINE = 60          # a hard-wrapped line is at least this long
#: ... and holds more than base64 (a name and its ``=``, a space): a PEM block's or an encoded file's lines are not
#: one value
_NOT_BASE64 = re.compile(r"[\s:]|=[^=]")
MAX_REGIONS = 50        # breaks looked at in one text (a long wrapped base64 file is not a split key)


def _breaks(text: str) -> Iterator[re.Match]:
    """The matches of :data:`BREAK` and :data:`ENV_BREAK` in ``text`` in order (BREAK's where both match: one regex
    of them all would try its first alternative first)."""
    envs, pos = [], text.find("value:")
    while pos >= 0:
        m = ENV_BREAK.match(text, text.rfind("\n", 0, pos))
        if m and m.end() == pos + 5:
            envs.append(m)
        pos = text.find("value:", pos + 6)
    if not envs:
        return BREAK.finditer(text)
    breaks = list(BREAK.finditer(text))
    at = {m.start() for m in breaks}
    return iter(sorted([*breaks, *(m for m in envs if m.start() not in at)], key=lambda m: m.start()))


def join_regions(text: str) -> list[tuple[int, int, list[tuple[int, int]]]]:
    """``(start, end, breaks)`` of the regions of ``text`` holding breaks (each break a ``(start, end)`` span to
    drop), a region reaching from its first break's line start to its last break's line end."""
    regions: list[tuple[int, int, list[tuple[int, int]]]] = []
    for n, m in enumerate(_breaks(text)):
        if n >= MAX_REGIONS:
            break
        kind = "env" if m.re is ENV_BREAK else m.lastgroup
        if kind == "py":
            cut = (m.start() - 1, m.end()) if text[m.start() - 1] == text[m.end() - 1] else None
        elif kind == "bs":
            cut = (m.start() - 1, m.end())
        elif kind in ("flag", "env"):                 # a secret-named flag or variable before
            line = text[text.rfind("\n", 0, m.start()) + 1:m.start()]
            named = (_FLAG_LINE if kind == "flag" else _ENV_NAME).search(line)
            cut = (m.start() - 1 if kind == "flag" else m.start(), m.end()) if (
                named and name_policy(named.group("name")) is not None) else None
        else:                                         # a long line, holding more than base64 or going on from
            line_start = text.rfind("\n", 0, m.start()) + 1   # a wrap before, and a mixed token after it
            wrapped = m.start() - line_start >= WRAP_LINE and (
                _NOT_BASE64.search(text, line_start, m.start()) or regions and regions[-1][2][-1][1] == line_start)
            cut = m.span() if wrapped and class_shifts(m.group("rest")) >= 2 else None
        if cut is None:
            continue
        start = text.rfind("\n", 0, cut[0]) + 1
        end = text.find("\n", cut[1])
        end = len(text) if end < 0 else end
        if regions and start <= regions[-1][1]:
            regions[-1] = (regions[-1][0], max(end, regions[-1][1]), [*regions[-1][2], cut])
        else:
            regions.append((start, end, [cut]))
    return regions


def joined(text: str, start: int, end: int, breaks: list[tuple[int, int]]) -> tuple[str, list[tuple[int, int]]]:
    """``text[start:end]`` without its ``breaks``, and the pieces it is made of as ``(joined offset, text offset)``."""
    parts, pieces, pos, at = [], [], start, 0
    for cut_start, cut_end in breaks:
        parts.append(text[pos:cut_start])
        pieces.append((at, pos))
        at += cut_start - pos
        pos = cut_end
    parts.append(text[pos:end])
    pieces.append((at, pos))
    return "".join(parts), pieces


def spans_back(pieces: list[tuple[int, int]], length: int, start: int, end: int) -> Iterator[tuple[int, int]]:
    """The spans of the original text that joined offsets ``[start, end)`` come from (one per piece they touch);
    ``length`` is the joined text's."""
    bounds = [*(at for at, _ in pieces[1:]), length]
    for (at, origin), stop in zip(pieces, bounds):
        lo, hi = max(start, at), min(end, stop)
        if lo < hi:
            yield origin + lo - at, origin + hi - at
