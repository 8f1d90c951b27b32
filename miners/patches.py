"""Unified diffs: parse them (``unidiff``) and apply them in-process at the exact hunk positions.

``parse_patch`` turns a diff into :class:`FilePatch` objects (paths without ``a/``/``b/``, added / deleted /
renamed / binary flags, hunks with old- and new-side line numbers). ``apply_file_patch`` applies one file's
hunks to its pre-patch text without fuzz or offsets: every context and removed line must match the old file
byte for byte (line endings included) at the position the hunk header names, otherwise :class:`PatchError`
is raised with reason ``hunk_mismatch``. Reasons: ``empty_patch``, ``unparseable_patch``, ``binary_diff``,
``hunk_mismatch``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import unidiff

from swemine.corpora.records import ReasonedError

NO_NEWLINE = "\\"


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
        files.append(FilePatch(old, new, bool(pf.is_binary_file), [_convert_hunk(h) for h in pf]))
    return files


def split_lines(text: str) -> list[str]:
    """Lines with their endings kept; ``\\r\\n`` and ``\\n`` are the only separators (like a diff)."""
    lines = text.split("\n")
    out = [line + "\n" for line in lines[:-1]]
    if lines[-1]:
        out.append(lines[-1])
    return out


def apply_file_patch(old_text: str, fp: FilePatch) -> str:
    """The post-patch text of one file; hunks must match exactly where their headers say."""
    if fp.is_binary:
        raise PatchError("binary_diff", f"{fp.path}: binary diff cannot be applied")
    old_lines = split_lines(old_text or "")
    out: list[str] = []
    pos = 0  # 0-based index into old_lines of the next line not yet copied
    for n, hunk in enumerate(fp.hunks, 1):
        start = hunk.old_start - 1 if hunk.old_len else hunk.old_start
        if start < pos:
            raise PatchError("hunk_mismatch", f"{fp.path}: hunk #{n} overlaps the previous one")
        out.extend(old_lines[pos:start])
        pos = start
        for line in hunk.lines:
            if line.kind in (" ", "-"):
                if pos >= len(old_lines) or old_lines[pos] != line.text:
                    have = old_lines[pos] if pos < len(old_lines) else "<end of file>"
                    raise PatchError("hunk_mismatch", f"{fp.path}: hunk #{n} line {pos + 1}: expected "
                                                      f"{line.text!r}, found {have!r}")
                pos += 1
            if line.kind in (" ", "+"):
                out.append(line.text)
    out.extend(old_lines[pos:])
    return "".join(out)
