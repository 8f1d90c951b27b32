"""The privacy scan of ``swemine publish``: what personal or machine-local text the rows to upload still hold.

Every string in every row of every planned shard (nested lists and structs too) is searched for:

- ``secret`` — what the secrets filter detects (detect-secrets' regex detectors);
- ``email`` / ``ip_address`` — e-mail addresses outside the allow-list, public IP addresses (the same rules);
- ``home_path`` — a path inside a home directory that names a user (``/home/<user>/``, ``/Users/<user>/``,
  ``C:\\Users\\<user>\\``); placeholders such as ``/home/<USER>/`` left by scrubbing do not count;
- ``local_root`` — an absolute path this machine used for the run (its input roots, its output folder);
- ``absolute_path`` — any other absolute POSIX path (reported, not refused: container paths such as
  ``/testbed`` are common and harmless).

Publishing refuses when ``secret``, ``home_path`` or ``local_root`` findings exist (see :data:`REFUSING`).
Examples are shown redacted, without context: the matched text keeps its first characters only.
"""
from __future__ import annotations

import collections
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import pyarrow.parquet as pq

HOME_PATH = re.compile(r"(?:(?<![\w.-])/(?:home|Users)/|\b[A-Za-z]:\\{1,2}Users\\{1,2})(?!<)([A-Za-z0-9._-]+)")
ABSOLUTE_PATH = re.compile(r"(?<![\w:/.~<>-])/[A-Za-z0-9._@+-]+(?:/[A-Za-z0-9._@+-]+)+")
REFUSING = ("secret", "home_path", "local_root")
KINDS = ("secret", "email", "ip_address", "home_path", "local_root", "absolute_path")
EXAMPLES_PER_KIND = 3


@dataclass
class PrivacyReport:
    """Counts per (config, column, kind) and a few redacted examples per kind."""
    counts: collections.Counter = field(default_factory=collections.Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)
    rows_scanned: int = 0

    def add(self, config: str, column: str, kind: str, text: str, start: int, end: int) -> None:
        self.counts[(config, column, kind)] += 1
        shown = self.examples.setdefault(kind, [])
        if len(shown) < EXAMPLES_PER_KIND:
            shown.append(f"{config}.{column}: {redact(text[start:end])}")

    def total(self, kind: str) -> int:
        return sum(n for (_, _, k), n in self.counts.items() if k == kind)

    @property
    def blocking(self) -> dict[str, int]:
        """The refusing kinds that were found, with their counts."""
        return {k: self.total(k) for k in REFUSING if self.total(k)}

    def describe(self) -> list[str]:
        """Human-readable lines for ``publish --dry-run``."""
        lines = [f"privacy scan: {self.rows_scanned} row(s); "
                 + ", ".join(f"{k} {self.total(k)}" for k in KINDS)]
        for (config, column, kind), n in sorted(self.counts.items()):
            lines.append(f"  {config}.{column}: {kind} {n}")
        for kind in KINDS:
            for example in self.examples.get(kind, []):
                lines.append(f"  e.g. {kind}: {example}")
        return lines


def redact(value: str) -> str:
    """The first few characters of ``value``, the rest masked."""
    keep = min(4, max(1, len(value) // 4))
    return value[:keep] + "*" * min(12, len(value) - keep)


def strings(value, column: str) -> Iterator[tuple[str, str]]:
    """Every string inside a row value, with the dotted column path it sits at."""
    if isinstance(value, str):
        yield column, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from strings(v, f"{column}.{k}")
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from strings(v, column)


class PrivacyScanner:
    """Finds the :data:`KINDS` in text. ``local_roots`` are this machine's absolute paths used by the run."""

    def __init__(self, local_roots: Iterable[str] = ()):
        from swemine.filters.secrets import SecretScanner

        self.secrets = SecretScanner()
        roots = sorted({r.rstrip("/") for r in local_roots if r and r.startswith("/") and r.count("/") >= 2},
                       key=len, reverse=True)
        self.local_root = re.compile("|".join(re.escape(r) for r in roots)) if roots else None

    def findings(self, text: str) -> Iterator[tuple[str, int, int]]:
        """(kind, start, end) for every finding in ``text``; a path counts once, as its most specific kind."""
        for f in self.secrets.find(text):
            yield ("secret" if f.kind == "secret" else f.label), f.start, f.end
        taken: list[tuple[int, int]] = []
        for kind, pattern in (("local_root", self.local_root), ("home_path", HOME_PATH),
                              ("absolute_path", ABSOLUTE_PATH)):
            if pattern is None:
                continue
            for m in pattern.finditer(text):
                if not any(s <= m.start() < e for s, e in taken):
                    taken.append(m.span())
                    yield kind, m.start(), m.end()

    def scan_files(self, files: Iterable[tuple[str, str]]) -> PrivacyReport:
        """Scan Parquet ``files`` given as (config name, local path)."""
        report = PrivacyReport()
        for config, path in files:
            for batch in pq.ParquetFile(path).iter_batches(batch_size=256):
                for row in batch.to_pylist():
                    report.rows_scanned += 1
                    for name, value in row.items():
                        for column, text in strings(value, name):
                            for kind, start, end in self.findings(text):
                                report.add(config, column, kind, text, start, end)
        return report
