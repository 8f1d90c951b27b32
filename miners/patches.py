"""Unified diffs: parse them (``unidiff``) and apply them in-process the way ``git apply`` and ``patch`` do.

``parse_patch`` turns a diff into :class:`FilePatch` objects (paths without ``a/``/``b/``, added / deleted /
renamed / binary flags, hunks with old- and new-side line numbers); a path that is absolute, holds a ``..``
segment or otherwise leaves the repository is refused (``unsafe_path``). ``apply_hunks`` applies one file's
hunks to its pre-patch text: every context and removed line must match the old file byte for byte (line
endings included), at the position the hunk header names or, like ``git apply``, at the nearest position
within any offset (the offset of the previous hunk carried over); failing that, like the SWE-bench harness's
``patch --fuzz=5``, with up to ``max_fuzz`` leading and trailing context lines ignored. It returns the new text
and the hunks *relocated* to where they applied, with the offset and fuzz each one needed. Reasons:
``empty_patch``, ``unparseable_patch``, ``unsafe_path``, ``binary_diff``, ``hunk_mismatch``.
"""
from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

import unidiff

from swemine.corpora.records import ReasonedError

NO_NEWLINE = "\\"
MAX_FUZZ = 5              # the SWE-bench harness's last resort: patch --batch --fuzz=5


class PatchError(ReasonedError):
    """A patch that cannot be parsed or applied; ``reason`` is the reject reason."""


@dataclass
class HunkLine:
    kind: str                 # " " context, "-" removed, "+" added
    text: str                 # the line with its own line ending ("" ending when the file lacks a final newline)
    old_no: int | None        # 1-based line number in the old file (context and removed lines)
    new_no: int | None        # 1-based line number in the new file (context and added lines)


@dataclass
class Hunk:
    old_start: int
    old_len: int
    new_start: int
    new_len: int
    header: str               # the text after the second ``@@`` (git's function context), stripped
    lines: list[HunkLine] = field(default_factory=list)


@dataclass
class FilePatch:
    old_path: str | None      # None for an added file
    new_path: str | None      # None for a deleted file
    is_binary: bool = False
    hunks: list[Hunk] = field(default_factory=list)

    @property
    def path(self) -> str:
        """The file's identity in gold: the pre-patch path, or the new path for an added file."""
        return self.old_path or self.new_path or ""

    @property
    def is_added(self) -> bool:
        return self.old_path is None

    @property
    def is_deleted(self) -> bool:
        return self.new_path is None

    @property
    def is_rename(self) -> bool:
        return self.old_path is not None and self.new_path is not None and self.old_path != self.new_path


def _strip_prefix(name: str | None) -> str | None:
    if name is None or name == "/dev/null":
        return None
    for prefix in ("a/", "b/"):
        if name.startswith(prefix):
            return name[len(prefix):]
    return name


def is_safe_path(path: str) -> bool:
    """A relative path that stays inside the repository: not absolute, no ``..`` segment, no drive or home."""
    if not path or path.startswith(("/", "\\", "~")) or (len(path) > 1 and path[1] == ":"):
        return False
    parts = path.replace("\\", "/").split("/")
    return ".." not in parts and not posixpath.normpath(path).startswith("..")


def _convert_hunk(h) -> Hunk:
    out = Hunk(h.source_start, h.source_length, h.target_start, h.target_length, (h.section_header or "").strip())
    for line in h:
        if line.line_type == NO_NEWLINE:
            if out.lines:
                last = out.lines[-1]
                last.text = last.text[:-2] if last.text.endswith("\r\n") else last.text.rstrip("\n")
            continue
        if line.line_type not in (" ", "-", "+"):
            continue
        out.lines.append(HunkLine(line.line_type, line.value, line.source_line_no, line.target_line_no))
    return out


def parse_patch(text: str) -> list[FilePatch]:
    """Parse a unified diff into per-file patches (raises :class:`PatchError`)."""
    if not text or not text.strip():
        raise PatchError("empty_patch", "patch is empty")
    try:
        ps = unidiff.PatchSet(text)
    except (unidiff.UnidiffParseError, ValueError, IndexError) as exc:
        raise PatchError("unparseable_patch", f"{type(exc).__name__}: {exc}") from exc
    if not len(ps):
        raise PatchError("unparseable_patch", "no file headers found in the patch")
    files = []
    for pf in ps:
        old = _strip_prefix(pf.source_file)
        new = _strip_prefix(pf.target_file)
        if pf.is_added_file:
            old = None
        if pf.is_removed_file:
            new = None
        if old is None and new is None:
            raise PatchError("unparseable_patch", f"file entry without paths: {pf.path}")
        for path in (old, new):
            if path is not None and not is_safe_path(path):
                raise PatchError("unsafe_path", f"{path!r} leaves the repository")
        files.append(FilePatch(old, new, bool(pf.is_binary_file), [_convert_hunk(h) for h in pf]))
    return files


def split_lines(text: str) -> list[str]:
    """Lines with their endings kept; ``\\r\\n`` and ``\\n`` are the only separators (like a diff)."""
    lines = text.split("\n")
    out = [line + "\n" for line in lines[:-1]]
    if lines[-1]:
        out.append(lines[-1])
    return out


@dataclass
class Applied:
    """One file's patch as applied: the new text, the hunks relocated to where they applied (line numbers of
    the old and new file; context lines ignored by fuzz left out), and each hunk's offset and fuzz."""
    text: str
    hunks: list[Hunk]
    offsets: list[int]
    fuzz: list[int]


def _positions(old_lines: list[str], pre: list[str], expected: int, lo: int) -> list[int]:
    """Where ``pre`` matches ``old_lines`` at or after ``lo``, nearest to ``expected`` first."""
    if not pre:
        return [min(max(expected, lo), len(old_lines))]
    n = len(pre)
    hits = [p for p in range(lo, len(old_lines) - n + 1) if old_lines[p] == pre[0] and old_lines[p:p + n] == pre]
    return sorted(hits, key=lambda p: (abs(p - expected), p))


def _context_run(lines: list[HunkLine]) -> int:
    n = 0
    while n < len(lines) and lines[n].kind == " ":
        n += 1
    return n


def _place(old_lines: list[str], hunk: Hunk, expected: int, lo: int, max_fuzz: int
           ) -> tuple[int, int, int, list[HunkLine]] | None:
    """``(start, fuzz, leading lines ignored, kept lines)`` of the nearest place a hunk applies, least fuzz first."""
    lead, trail = _context_run(hunk.lines), _context_run(hunk.lines[::-1])
    for fuzz in range(min(max_fuzz, max(lead, trail)) + 1):
        a, b = min(fuzz, lead), min(fuzz, trail)
        kept = hunk.lines[a:len(hunk.lines) - b]
        pre = [ln.text for ln in kept if ln.kind in (" ", "-")]
        found = _positions(old_lines, pre, expected + a, lo)
        if found:
            return found[0], fuzz, a, kept
    return None


def apply_hunks(old_text: str, fp: FilePatch, max_fuzz: int = MAX_FUZZ) -> Applied:
    """Apply one file's hunks like ``git apply`` (any offset, nearest first), then ``patch --fuzz`` (see the
    module docstring); raises :class:`PatchError` ``hunk_mismatch`` when a hunk fits nowhere."""
    if fp.is_binary:
        raise PatchError("binary_diff", f"{fp.path}: binary diff cannot be applied")
    old_lines = split_lines(old_text or "")
    out: list[str] = []
    res = Applied("", [], [], [])
    pos = drift = 0                   # next old line not yet copied; offset of the previous hunk
    for n, hunk in enumerate(fp.hunks, 1):
        header = hunk.old_start - 1 if hunk.old_len else hunk.old_start
        placed = _place(old_lines, hunk, header + drift, pos, max_fuzz)
        if placed is None:
            raise PatchError("hunk_mismatch", f"{fp.path}: hunk #{n} (-{hunk.old_start},{hunk.old_len}) matches "
                                              f"nowhere at or after line {pos + 1}, even with fuzz {max_fuzz}")
        start, fuzz, skipped, kept = placed
        out.extend(old_lines[pos:start])
        pos, moved = start, []
        for line in kept:
            old_no = new_no = None
            if line.kind in (" ", "-"):
                pos += 1
                old_no = pos
            if line.kind in (" ", "+"):
                out.append(line.text)
                new_no = len(out)
            moved.append(HunkLine(line.kind, line.text, old_no, new_no))
        drift = start - (header + skipped)
        n_old = sum(ln.kind != "+" for ln in moved)
        new_at = next((ln.new_no for ln in moved if ln.new_no), len(out) + 1)
        res.hunks.append(Hunk(start + 1 if n_old else start, n_old, new_at, sum(ln.kind != "-" for ln in moved),
                              hunk.header, moved))
        res.offsets.append(drift)
        res.fuzz.append(fuzz)
    out.extend(old_lines[pos:])
    res.text = "".join(out)
    return res


def apply_file_patch(old_text: str, fp: FilePatch) -> str:
    """The post-patch text of one file (:func:`apply_hunks`)."""
    return apply_hunks(old_text, fp).text
