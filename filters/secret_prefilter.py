"""The secrets scanner's prefilter: C-speed passes over a text's bytes mark where each group of detectors could match.

A *mark* is a token-like run of characters (20+ base64 or 24+ word characters changing case and digits often: every
regex plugin and provider format without a literal anchor matches in one), a literal anchor (``@``, ``xox``, ``AKIA``
...), a dotted quad or IPv6 group, or a context keyword (``password``, ``token``, ``curl`` ...) where a context rule
can start. A *window* reaches ``CONTEXT[group]`` characters either side of a mark, widened to the nearest space or
the line's ends; :mod:`swemine.filters.secrets` runs a group's detectors only inside its windows.

:func:`candidate_windows_many` makes the passes once over many texts joined by newlines (no mark spans a newline, and
each check a mark needs is bounded by its own text), so a record's hundreds of short strings cost a few passes in all,
with the windows of each text exactly those :func:`candidate_windows` gives it alone.
"""
from __future__ import annotations

import re
from bisect import bisect_right

import ahocorasick_rs

from swemine.filters.secret_rules import (
    AWS_KEY_ID_PREFIXES,
    CONTEXT_ANCHOR_ENDS,
    CONTEXT_ANCHORS,
    CONTEXT_LEADS,
    PREFIXED_RUN,
)

Windows = dict[str, list[tuple[int, int, int]]]


def _table(chars: bytes, to: bytes = b"a") -> bytes:
    return bytes(to[0] if c in chars else ord(" ") for c in range(256))


_ALNUM = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
#: Every regex plugin without an anchor below matches a token holding a run of 20+ base64 or 24+ word characters.
_RUNS = ((_table(_ALNUM + b"+/="), b"a" * 20), (_table(_ALNUM + b"_-"), b"a" * 24))
_CLASSES = bytes.maketrans(_ALNUM, b"A" * 26 + b"a" * 26 + b"0" * 10)
MIN_SHIFTS = 4          # a run is token-like when its characters change class (lower/upper/digit) this often
_GATES = {"ip4": re.compile(rb"\.\d{1,3}\.\d{1,3}\.\d"),
          "ip6": re.compile(rb":[0-9A-Fa-f]{1,4}:[0-9A-Fa-f]{1,4}:[0-9A-Fa-f]{1,4}:")}
#: the entropy detector's shortest token: its group marks the token-like base64 runs this long (its tokens lie in them)
ENTROPY_RUN = 32
#: the groups of detectors that scan a whole text (private keys to their END line, home paths and the user names
#: they name anywhere in it), each with the literals one of which the text must hold; its one window is the text
WHOLE_TEXT = {"pem": (b"PRIVATE KEY",), "home": (b"home", b"Users")}
#: the literal anchors, found in the context keywords' pass over the lower-cased text (their case checked in the
#: text), each with its group: the whole-text groups' literals, Slack's tokens and webhooks' host (short matches),
#: ``django-insecure-`` keys (punctuation breaks their token runs), AWS key ids (one case, few digits: not
#: token-like) and Artifactory keys (``AP`` before a hex digit, as its pattern needs). The e-mail and basic-auth
#: group's ``@`` and Azure client secrets' ``Q~`` (from its rare ``~``) are found by a memchr.
KEYWORD_ANCHORS = {**{literal: group for group, literals in WHOLE_TEXT.items() for literal in literals},
                   b"xox": "slack", b"hooks.slack": "slack", b"jango-insecure-": "token",
                   **dict.fromkeys((p.encode() for p in AWS_KEY_ID_PREFIXES), "token"),
                   **dict.fromkeys((b"AKC", *(b"AP" + bytes([c]) for c in b"0123456789ABCDEF")), "artifactory")}
GROUPS = ("token", "slack", "artifactory", "at", "ip4", "ip6", "ctx", "entropy", *WHOLE_TEXT)
#: characters either side of a mark handed to a group's detectors (the longest lead-in any of them matches:
#: a key name before a token, a user:password before an @, the words before an IP)
CONTEXT = {"token": 128, "at": 160, "ip4": 64, "ip6": 64, "slack": 64, "artifactory": 64, "ctx": 120, "entropy": 0}


def token_like(run: bytes) -> bool:
    """Whether ``run`` changes character class (lower case, upper case, digit) at least :data:`MIN_SHIFTS` times."""
    flat = run.translate(_CLASSES)
    return (flat.count(b"aA") + flat.count(b"Aa") + flat.count(b"a0") + flat.count(b"0a") + flat.count(b"A0")
            + flat.count(b"0A")) >= MIN_SHIFTS


#: the context keywords and the keyword-found anchors (lower case), all found in one pass over the lower-cased text by
#: an Aho-Corasick automaton (every occurrence, overlapping ones too; a regex pass a letter the keywords hold cost
#: three times as much on source code)
_LOWER_ANCHORS = {literal.lower(): (literal, group) for literal, group in KEYWORD_ANCHORS.items()}
KEYWORDS = (*CONTEXT_ANCHORS, *_LOWER_ANCHORS)
_KEYWORD_FINDER = ahocorasick_rs.BytesAhoCorasick(KEYWORDS)
#: per keyword: what may follow it (:data:`CONTEXT_ANCHOR_ENDS`; None: anything) and, for an anchor, its literal and
#: group
_KEYWORD_INFO = tuple((re.compile(CONTEXT_ANCHOR_ENDS[kw]) if kw in CONTEXT_ANCHOR_ENDS else None,
                       _LOWER_ANCHORS.get(kw)) for kw in KEYWORDS)
#: a flag's name ending where the keyword starts (``--api-key``)
_FLAG_NAME = re.compile(rb"-[a-z0-9_-]*$")
#: a Windows ``setx`` before the name the keyword ends (``setx /m OPENAI_KEY value``)
_SETX = re.compile(rb"\bsetx\s+(?:/m\s+)?[\w.-]*$")


def _context_here(low: bytes, start: int, end: int, lo: int = 0, hi: int | None = None) -> bool:
    """Whether a context keyword at ``low[start:end]`` can lead a context rule's match (:data:`CONTEXT_LEADS`): a
    command keyword, a tool's name before a space, a secret word right before ``=`` / ``:`` (through a closing
    quote or bracket), or before a space as a flag's name (a ``-`` before it), at a line's start (a ``.netrc``
    line) or after ``setx``. ``low[lo:hi]`` is the keyword's own text."""
    lead = CONTEXT_LEADS[low[start:end]]
    if lead is None:
        return True
    m = lead.match(low, start, len(low) if hi is None else hi)
    if m is None:
        return False
    if m.lastgroup != "sp":
        return True
    if low[m.end() - 1:m.end() + 1] == b"==":
        return True                                   # ``;Password==x;``, ``DB_PASSWORD==x``: the value opens with =
    return (_FLAG_NAME.search(low, max(lo, start - 62), start) is not None or start - lo < 8
            or low.find(b"\n", max(lo, start - 8), start) >= 0
            or _SETX.search(low, max(lo, start - 90), start) is not None)


def _occurrences(data: bytes, byte: bytes) -> list[int]:
    """Offsets of ``byte`` in ``data`` (``bytes.find``: a memchr)."""
    out, pos = [], data.find(byte)
    while pos >= 0:
        out.append(pos)
        pos = data.find(byte, pos + 1)
    return out


def _marks(data: bytes, starts: list[int]) -> list[tuple[str, int, int]]:
    """``(group, start, end)`` of every prefilter mark in ``data``: texts joined by newlines, opening at ``starts``."""
    out: list[tuple[str, int, int]] = []
    add = out.append
    for table, run in _RUNS:
        flat = data.translate(table)
        pos = flat.find(run)
        while pos >= 0:
            end = flat.find(b" ", pos)
            end = len(flat) if end < 0 else end
            if token_like(data[pos:end]):
                add(("token", pos, end))
                if table is _RUNS[0][0] and end - pos >= ENTROPY_RUN:
                    add(("entropy", pos, end))
            elif PREFIXED_RUN.match(data, pos):       # a provider's prefix before a random part that rarely shifts
                add(("token", pos, end))
            pos = flat.find(run, end)
    for group, gate in _GATES.items():
        for m in gate.finditer(data):
            add((group, m.start(), m.end()))
    out.extend(("at", pos, pos + 1) for pos in _occurrences(data, b"@"))
    for pos in _occurrences(data, b"~"):
        if pos and data[pos - 1] == 81:               # Q~
            add(("token", pos - 1, pos + 1))
    low = data.lower()
    n = len(starts)
    for k, pos, end in _KEYWORD_FINDER.find_matches_as_indexes(low, overlapping=True):
        ends, anchor = _KEYWORD_INFO[k]
        if ends is not None and ends.match(low, end) is None:
            continue                                  # ``path``, ``author``, ``tokens``: not a whole key word
        if anchor is not None:
            literal, group = anchor
            if data.startswith(literal, pos):
                if group in WHOLE_TEXT:               # its text's one window: the whole text
                    pos = end = starts[bisect_right(starts, pos) - 1]
                add((group, pos, end))
            continue
        i = bisect_right(starts, pos) - 1
        if _context_here(low, pos, end, starts[i], starts[i + 1] - 1 if i + 1 < n else len(low)):
            add(("ctx", pos, end))
    return out


def _windows(data: bytes, lo: int, hi: int, marks: list[tuple[str, int, int]]) -> Windows:
    """The windows of the text ``data[lo:hi]`` around its ``marks`` (sorted), in that text's offsets."""
    out: Windows = {}
    line_start, line_end = lo, lo - 1                 # the line of the previous mark (marks come sorted)
    for group, pos, end in marks:
        if group in WHOLE_TEXT:
            out[group] = [(lo, lo, hi)]
            continue
        spans = out.get(group)
        if spans and spans[-1][0] == line_start and end <= line_end and end + CONTEXT[group] < spans[-1][2]:
            continue                                  # inside the last window of its group, which it cannot widen
        if not line_start <= pos or end > line_end:
            line_start = data.rfind(b"\n", lo, pos) + 1 or lo
            line_end = data.find(b"\n", end, hi)
            line_end = hi if line_end < 0 else line_end
        ws = data.rfind(b" ", line_start, max(line_start, pos - CONTEXT[group])) + 1 or line_start
        we = data.find(b" ", min(line_end, end + CONTEXT[group]), line_end)
        we = line_end if we < 0 else we + 1
        spans = out.setdefault(group, [])
        if spans and spans[-1][0] == line_start and ws <= spans[-1][2]:
            spans[-1] = (line_start, spans[-1][1], max(we, spans[-1][2]))
        else:
            spans.append((line_start, ws, we))
    if lo:
        out = {g: [(a - lo, b - lo, c - lo) for a, b, c in spans] for g, spans in out.items()}
    return out


def candidate_windows_many(texts: list[str]) -> list[Windows]:
    """:func:`candidate_windows` of each of ``texts``, the passes made once over all of them."""
    data = "\n".join(texts).encode("ascii", "replace")     # one byte per character: offsets match the str
    starts, pos = [], 0
    for text in texts:
        starts.append(pos)
        pos += len(text) + 1
    out: list[Windows] = [{} for _ in texts]
    if len(texts) == 1:
        marks = sorted(_marks(data, starts))
        if marks:
            out[0] = _windows(data, 0, len(data), marks)
        return out
    per_text: dict[int, list[tuple[str, int, int]]] = {}
    for mark in _marks(data, starts):
        per_text.setdefault(bisect_right(starts, mark[1]) - 1, []).append(mark)
    for i, marks in per_text.items():
        out[i] = _windows(data, starts[i], starts[i] + len(texts[i]), sorted(marks))
    return out


def candidate_windows(text: str) -> Windows:
    """Per detector group, ``(line start, window start, window end)`` of the parts of ``text`` the prefilter marks.

    A window reaches ``CONTEXT[group]`` characters either side of a mark, widened to the nearest space or the line's ends;
    overlapping windows of a group are merged.
    """
    return candidate_windows_many([text])[0]


def all_windows(text: str) -> Windows:
    """Every line of ``text`` as a window of every group (the exhaustive scan the prefilter must agree with), and the
    whole text as the window of each whole-text group whose literal it holds."""
    lines, start = [], 0
    for line in text.split("\n"):
        lines.append((start, start, start + len(line)))
        start += len(line) + 1
    data = text.encode("ascii", "replace")
    whole = {g: [(0, 0, len(text))] for g, literals in WHOLE_TEXT.items() if any(lit in data for lit in literals)}
    return {**dict.fromkeys([g for g in GROUPS if g not in WHOLE_TEXT], lines), **whole}
