"""Text normalization shared by decontamination and dedup: words, n-grams, diff change blocks, identifier tokens."""
from __future__ import annotations

import hashlib
import itertools
import re

_WORD = re.compile(r"\w+")
_IDENT = re.compile(r"[A-Za-z_0-9]+")
_SPACE = re.compile(r"\s+")


#: Lines that are no evidence of a benchmark leak, whatever the project: traceback frames with the source line
#: they quote (repository or site-packages code; plain and IPython tracebacks), exception messages and pytest's
#: E / > lines (library output any run of the same code prints), exception chaining, test-runner
#: chatter and banners, diff and hunk headers, issue-template scaffolding (check boxes, headings, bold labels,
#: details/summary tags), import lines, one-word ``key: value`` listings and package/version listings.
NOT_EVIDENCE = re.compile(
    r"(?im)^[ \t]*(?:File (?:\"[^\"\n]*\", line \d+|\S+:\d+, in )[^\n]*(?:\n[ \t]+(?!File )[^\n]*)?"
    r"|(?:\w+ +)?Traceback \(most recent call last\):?|During handling of the above exception[^\n]*"
    r"|(?:[\w.]+\.)?\w*(?:Error|Exception|Warning|Exit|Interrupt)(?::[^\n]*)?"
    r"|\S+:\d+: (?:in \S+|\w+)[^\n]*|E {2,}[^\n]*|> {2,}[^\n]*"
    r"|(?:>>> |\.\.\. )?(?:from \S+ )?import [^\n]*|[\w.-]+ ?[:=] ?\S*"
    r"|The above exception was the direct cause[^\n]*"
    r"|<ipython-input-[^\n]*|Cell In ?\[[^\n]*|\S+\.py in \S+\([^\n]*|-*> ?\d+[ \t][^\n]*|\d+[ \t][^\n]*"
    r"|[\^~=_.-]+|(?:_ )+_?|=+ [^\n]* =+|(?:Creating|Destroying) test database for alias [^\n]*"
    r"|System check identified[^\n]*|Ran \d+ tests? in [^\n]*|OK|FAILED \([^\n]*"
    r"|(?:platform \w+ -- Python|rootdir:|configfile:|plugins:|cachedir:|collected \d+ item|collecting \.\.\.)[^\n]*"
    r"|(?:diff --git|index [0-9a-f]+\.\.[0-9a-f]+|--- |\+\+\+ |@@ -\d|new file mode|deleted file mode|similarity index"
    r"|rename from |rename to )[^\n]*"
    r"|[-*+] \[[ xX]\][^\n]*|#{1,6} [^\n]*|\*\*[^*\n]+\*\*:?|</?details>|<summary>[^\n]*"
    r"|[-*#>|]?[ \t]*(?:[A-Za-z_][\w.+-]{0,39}[ \t]+){0,2}[A-Za-z_][\w.+-]{0,39}[ \t]*[:=|,]*[ \t]*v?\d+\.\d+[^\n]{0,60}"
    r")[ \t]*$")
#: License headers: lines holding one of these phrases are no evidence either.
LICENSE_LINE = re.compile(
    r"(?im)^[^\n]*(?:copyright (?:\(c\)|\d{4})|licensed under|license, version|spdx-license-identifier"
    r"|all rights reserved|permission is hereby granted|without warranty|warranties of merchantability)[^\n]*$")
_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.S)      # issue-template instructions
_LICENSE_HINT = re.compile(r"(?i)copyright|licen[cs]|spdx|rights reserved|permission is hereby|warrant")
#: A word, or a chunk holding a path / URL separator (taken whole, then dropped: paths are no evidence).
_EVIDENCE_TOKEN = re.compile(r"[^\s/\\]*[/\\]\S*|(\w+)")


def evidence_words(text: str) -> list[str]:
    """Lower-cased words of ``text`` without path / URL chunks and bare numbers (so version strings, line
    numbers and addresses vanish too): one project's paths and versions never look like another's text."""
    return [w for w in _EVIDENCE_TOKEN.findall(text.lower()) if w and not w.isdigit()]


def statement_segments(text: str) -> list[list[str]]:
    """:func:`evidence_words` of the stretches of a benchmark text between HTML comments, :data:`NOT_EVIDENCE`
    lines and license lines. N-grams are taken within a stretch: each one then occurs, contiguous, wherever the
    text is pasted (records keep those lines; their n-grams are never indexed, so they cannot match anyway)."""
    text = _HTML_COMMENT.sub("\x00", text)
    text = NOT_EVIDENCE.sub("\x00", text)
    if _LICENSE_HINT.search(text):
        text = LICENSE_LINE.sub("\x00", text)
    return [ws for part in text.split("\x00") if (ws := evidence_words(part))]


def gram_tuples(ws: list[str], n: int):
    """The ``n``-grams of a word list as tuples (an iterator: set membership without joining strings)."""
    return zip(*(ws[i:] for i in range(n)))


def ngrams(ws: list[str], n: int) -> set[str]:
    """The set of space-joined ``n``-grams of a word list."""
    return {" ".join(ws[i:i + n]) for i in range(len(ws) - n + 1)}


def words(text: str) -> list[str]:
    """Lower-cased word tokens (``\\w+`` runs)."""
    return _WORD.findall(text.lower())


def has_words(text: str, n: int) -> bool:
    """``text`` holds at least ``n`` words (stops scanning at the ``n``-th)."""
    return sum(1 for _ in itertools.islice(_WORD.finditer(text), n)) >= n


def word_ngrams(text: str, n: int) -> set[str]:
    """The set of normalized word ``n``-grams of ``text`` (space-joined)."""
    return ngrams(words(text), n)


def identifier_tokens(text: str) -> set[str]:
    """bigcode near-dup tokens: the set of ``[A-Za-z_0-9]+`` runs."""
    return set(_IDENT.findall(text))


def collapse_ws(text: str) -> str:
    """Whitespace runs → one space, stripped."""
    return _SPACE.sub(" ", text).strip()


_CHANGE_RUN = re.compile(r"(?m)^(?:[+-](?!\+\+ |-- )[^\n]*(?:\n|$))+")
_HUNK_HEADER = re.compile(r"^(?:@@|\+\+\+ |--- |diff |index )")


def _context(line: str) -> str:
    """A line next to a change run, as context: "" for a hunk header, else without one leading space."""
    if _HUNK_HEADER.match(line):
        return ""
    return collapse_ws(line[1:] if line.startswith(" ") else line)


def diff_blocks(text: str) -> set[str]:
    """Change runs of the diffs in ``text``: each maximal run of ``+``/``-`` lines with the line before and after
    it as context, markers kept, whitespace collapsed, one string per run. This is the form a pasted patch shows
    in, unlike the same code quoted from a file before or after the change, and it makes even a one-line change
    specific to its place."""
    out = set()
    if "\n+" not in text and "\n-" not in text and text[:1] not in "+-":
        return out
    for m in _CHANGE_RUN.finditer(text):
        start, end = m.start(), m.end()
        before = text[text.rfind("\n", 0, max(start - 1, 0)) + 1:start - 1] if start else ""
        after = text[end:text.find("\n", end) if "\n" in text[end:] else len(text)]
        run = [ln[0] + collapse_ws(ln[1:]) for ln in m.group(0).splitlines()]
        out.add("\n".join([_context(before), *run, _context(after)]))
    return out


def exact_key(text: str) -> str:
    """Normalized content hash for exact dedup: lower-cased, whitespace collapsed, sha256."""
    return hashlib.sha256(collapse_ws(text.lower()).encode("utf-8")).hexdigest()
