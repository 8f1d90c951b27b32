"""Text normalization shared by decontamination and dedup: words, n-grams, diff lines, identifier tokens."""
from __future__ import annotations

import hashlib
import re

_WORD = re.compile(r"\w+")
_IDENT = re.compile(r"[A-Za-z_0-9]+")
_SPACE = re.compile(r"\s+")
_LINE_PREFIX = re.compile(r"^(?:\d+:|[+-])\s*")   # SWE-agent "123:" line numbers, diff markers


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
