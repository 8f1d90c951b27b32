"""Text normalization shared by decontamination and dedup: words, n-grams, diff lines, identifier tokens."""
from __future__ import annotations

import hashlib
import re

_WORD = re.compile(r"\w+")
_IDENT = re.compile(r"[A-Za-z_0-9]+")
_SPACE = re.compile(r"\s+")


#: Lines that are no evidence of a benchmark leak, whatever the project: traceback frame headers with the source
#: line they quote (repository or site-packages code), exception chaining, test-runner chatter and banners, diff
#: and hunk headers, package/version listings and license headers.
NOT_EVIDENCE = re.compile(
    r"(?im)^[ \t]*(?:File \"[^\"\n]*\", line \d+[^\n]*(?:\n[ \t]+(?!File \")[^\n]*)?"
    r"|Traceback \(most recent call last\):?|During handling of the above exception[^\n]*"
    r"|The above exception was the direct cause[^\n]*"
    r"|[\^~=_.-]+|(?:_ )+_?|=+ [^\n]* =+|(?:Creating|Destroying) test database for alias [^\n]*"
    r"|System check identified[^\n]*|Ran \d+ tests? in [^\n]*|OK|FAILED \([^\n]*"
    r"|(?:platform \w+ -- Python|rootdir:|configfile:|plugins:|cachedir:|collected \d+ item|collecting \.\.\.)[^\n]*"
    r"|(?:diff --git|index [0-9a-f]+\.\.[0-9a-f]+|--- |\+\+\+ |@@ -\d|new file mode|deleted file mode|similarity index"
    r"|rename from |rename to )[^\n]*"
    r"|[^\n]*(?:copyright (?:\(c\)|\d{4})|licensed under|license, version|spdx-license-identifier"
    r"|all rights reserved|permission is hereby granted|without warranty|warranties of merchantability)[^\n]*"
    r"|[-*#>|]?[ \t]*[\w.+-]+(?:[ \t]+[\w.+-]+){0,2}[ \t]*[:=|,]*[ \t]*v?\d+\.\d+[^\n]{0,60})[ \t]*$")
#: Paths, URLs, version strings, hexadecimal addresses: removed before words are taken.
NOT_EVIDENCE_TOKEN = re.compile(r"\S*[/\\]\S*|\bv?\d+(?:\.\d+)+\w*|\b0x[0-9a-f]+\b", re.I)


def evidence_words(text: str) -> list[str]:
    """Lower-cased words of ``text`` that can be evidence: :data:`NOT_EVIDENCE` lines and tokens and bare
    numbers removed, so one project's banners, paths and tracebacks never look like another's text."""
    text = NOT_EVIDENCE_TOKEN.sub(" ", NOT_EVIDENCE.sub("", text))
    return [w for w in words(text) if not w.isdigit()]


def ngrams(ws: list[str], n: int) -> set[str]:
    """The set of space-joined ``n``-grams of a word list."""
    return {" ".join(ws[i:i + n]) for i in range(len(ws) - n + 1)}


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
    return ngrams(words(text), n)


def identifier_tokens(text: str) -> set[str]:
    """bigcode near-dup tokens: the set of ``[A-Za-z_0-9]+`` runs."""
    return set(_IDENT.findall(text))


def collapse_ws(text: str) -> str:
    """Whitespace runs → one space, stripped."""
    return _SPACE.sub(" ", text).strip()


_DIFF_LINE = re.compile(r"(?m)^([+-])(?!\+\+ |-- )[ \t]*(\S[^\n]*?)[ \t\r]*$")


def diff_lines(text: str, min_chars: int = 20) -> set[str]:
    """Changed lines of the diffs in ``text``, marker kept (``+x`` / ``-x``), whitespace collapsed, at least
    ``min_chars`` long: the form in which a pasted patch shows, unlike the same code quoted from a file."""
    out = set()
    for marker, body in _DIFF_LINE.findall(text):
        norm = collapse_ws(body)
        if len(norm) >= min_chars:
            out.add(marker + norm)
    return out


def exact_key(text: str) -> str:
    """Normalized content hash for exact dedup: lower-cased, whitespace collapsed, sha256."""
    return hashlib.sha256(collapse_ws(text.lower()).encode("utf-8")).hexdigest()
