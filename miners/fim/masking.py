"""Masking and validation (methods.md §4.7).

The signature (``def`` line through the line of its closing ``:``; decorators stay in the prefix) is kept;
every line after it through the function's last line — docstring included — becomes one line
``# <MASKED_FUNCTION_BODY>`` at the body's indentation. Before masking, each target is re-extracted from
the file by its line span and compared with the hash taken at parse time; a mismatch drops the sample
(guards line-number drift). For raw FIM the hole runs from the first target's body to the last target's
end, and ``prefix + middle + suffix`` must equal the file exactly — checked on every sample.
"""
from __future__ import annotations

from dataclasses import dataclass

from miners.fim.parse import FunctionInfo, span_sha, split_lines

MASK = "# <MASKED_FUNCTION_BODY>"


class MaskError(ValueError):
    """A target cannot be masked faithfully; ``reason`` names the check that failed."""

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason


@dataclass
class Masked:
    masked_text: str            # the file with every target body replaced by the mask line
    prefix: str                 # raw FIM: file text before the hole
    middle: str                 # raw FIM: the hole (the original body/bodies)
    suffix: str                 # raw FIM: file text after the hole
    functions: list[str]        # each target's original source (``def`` .. last line)


def _line_ending(line: str) -> str:
    if line.endswith("\r\n"):
        return "\r\n"
    return "\n" if line.endswith("\n") else ""


def mask(content: str, targets: list[FunctionInfo]) -> Masked:
    """Mask ``targets`` (disjoint functions of ``content``); raises :class:`MaskError` on any mismatch."""
    lines = split_lines(content)
    targets = sorted(targets, key=lambda f: f.start_line)
    for f in targets:
        if f.end_line > len(lines) or f.body_line <= f.sig_end_line:
            raise MaskError("span_out_of_file", f"{f.qualname}: lines {f.start_line}-{f.end_line} of {len(lines)}")
        if f.text_sha and span_sha(lines, f.start_line, f.end_line) != f.text_sha:
            raise MaskError("span_mismatch", f"{f.qualname}: text at lines {f.start_line}-{f.end_line} changed")
    for a, b in zip(targets, targets[1:]):
        if b.start_line <= a.end_line:
            raise MaskError("overlapping_targets", f"{a.qualname} and {b.qualname} overlap")
    out: list[str] = []
    pos = 0
    for f in targets:
        body = lines[f.sig_end_line:f.end_line]
        first = next((ln for ln in body if ln.strip()), body[0])
        indent = first[:len(first) - len(first.lstrip(" \t"))]
        out.extend(lines[pos:f.sig_end_line])
        out.append(f"{indent}{MASK}{_line_ending(body[-1])}")
        pos = f.end_line
    out.extend(lines[pos:])
    start = len("".join(lines[:targets[0].sig_end_line]))
    end = len("".join(lines[:targets[-1].end_line]))
    prefix, middle, suffix = content[:start], content[start:end], content[end:]
    if (prefix + middle + suffix).encode("utf-8") != content.encode("utf-8"):
        raise MaskError("fim_reconstruction", "prefix + middle + suffix differs from the file")
    return Masked("".join(out), prefix, middle, suffix,
                  ["".join(lines[f.start_line - 1:f.end_line]) for f in targets])
