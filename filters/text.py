"""Text normalization shared by decontamination and dedup: words, n-grams, diff lines, identifier tokens."""
from __future__ import annotations

import hashlib
import re

_WORD = re.compile(r"\w+")
_IDENT = re.compile(r"[A-Za-z_0-9]+")
_SPACE = re.compile(r"\s+")
_LINE_PREFIX = re.compile(r"^(?:\d+:|[+-])\s*")   # SWE-agent "123:" line numbers, diff markers


#: Lines any Python run prints, whatever the project: traceback frames and headers, exception chaining,
#: test-runner chatter. Removed from benchmark texts before n-grams are taken (they prove nothing).
GENERIC_LINE = re.compile(
    r"^\s*(?:File \"[^\"]*\", line \d+.*|Traceback \(most recent call last\):?"
    r"|During handling of the above exception, another exception occurred:?"
    r"|The above exception was the direct cause of the following exception:?"
    r"|\^+|~+|-+|=+|_+|(?:_ )+_?"
    r"|(?:Creating|Destroying) test database for alias .*|System check identified no issues.*"
    r"|Ran \d+ tests? in .*|OK|FAILED \(.*\)|\.+|=+ .* =+)\s*$")


def strip_generic_lines(text: str) -> str:
    """``text`` without the :data:`GENERIC_LINE` lines."""
    return "\n".join(line for line in text.splitlines() if not GENERIC_LINE.match(line))


def informative(tokens: list[str], min_distinct: int) -> bool:
    """At least ``min_distinct`` distinct tokens, at most half of them numbers or single characters."""
    if len(set(tokens)) < min_distinct:
        return False
    trivial = sum(1 for t in tokens if t.isdigit() or len(t) == 1)
    return trivial * 2 <= len(tokens)


def words(text: str) -> list[str]:
    """Lower-cased word tokens (``\\w+`` runs)."""
    return _WORD.findall(text.lower())


def word_ngrams(text: str, n: int) -> set[str]:
    """The set of normalized word ``n``-grams of ``text`` (space-joined)."""
    ws = words(text)
    return {" ".join(ws[i:i + n]) for i in range(len(ws) - n + 1)}


def identifier_tokens(text: str) -> set[str]:
    """bigcode near-dup tokens: the set of ``[A-Za-z_0-9]+`` runs."""
    return set(_IDENT.findall(text))


def collapse_ws(text: str) -> str:
    """Whitespace runs → one space, stripped."""
    return _SPACE.sub(" ", text).strip()


def normalize_line(line: str) -> str:
    """A code line as compared across diffs, files and tool output: no diff marker / line number, collapsed space."""
    return collapse_ws(_LINE_PREFIX.sub("", line.strip()))


def added_lines(patch: str, min_chars: int = 20) -> list[str]:
    """Normalized ``+`` lines of a unified diff that are at least ``min_chars`` long (order kept, no repeats)."""
    out, seen = [], set()
    for line in patch.splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            norm = normalize_line(line[1:])
            if len(norm) >= min_chars and norm not in seen:
                seen.add(norm)
                out.append(norm)
    return out


def text_lines(text: str, min_chars: int = 20) -> set[str]:
    """Normalized lines of any text (file, diff, tool output) at least ``min_chars`` long."""
    out = set()
    for line in text.splitlines():
        norm = normalize_line(line)
        if len(norm) >= min_chars:
            out.add(norm)
    return out


def exact_key(text: str) -> str:
    """Normalized content hash for exact dedup: lower-cased, whitespace collapsed, sha256."""
    return hashlib.sha256(collapse_ws(text.lower()).encode("utf-8")).hexdigest()
