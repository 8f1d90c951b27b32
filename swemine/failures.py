"""One-line errors: what stops a command (:class:`CommandError`) and what the machine stops (a full disk or quota,
memory, the open-file limit: :func:`environment_failure`). Anything else keeps its trace."""
from __future__ import annotations

import errno
import os
import re
from collections.abc import Iterator

_STEP = re.compile(r"\[while running '([^']+)'\]")      # Beam's note on an error raised inside a step
_REMOTE_ERRNO = re.compile(r"\b\w*Error: \[Errno (\d+)\]")   # an OSError in a Beam worker process, as text


class CommandError(Exception):
    """What stops a command: its message, printed once after ``prefix`` by ``swemine``, and its exit status."""

    def __init__(self, message: str, status: int = 2, prefix: str = "swemine: error: "):
        super().__init__(message)
        self.status, self.prefix = status, prefix


class RunFailed(CommandError):
    """A run stopped by its environment; the message says what to change."""

    def __init__(self, message: str):
        super().__init__(message, 1)


def causes(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and the exceptions it was raised from or while handling (Beam re-raises a step's error as a new
    exception whose context is the original)."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def first_line(exc: BaseException) -> str:
    """The first line of ``exc``'s message (its type's name when the message is empty)."""
    lines = str(exc).splitlines()
    return lines[0] if lines else type(exc).__name__


def described(exc: BaseException) -> str:
    """``<type>: <first line>`` of ``exc`` (the type alone when the message is empty)."""
    lines = str(exc).splitlines()
    return f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__


def environment_failure(exc: BaseException, parts: str) -> str | None:
    """One line for a failure the machine caused anywhere in ``exc``'s chain, else ``None``; ``parts`` is where
    the run keeps its uncompressed parts (named when a disk is full)."""
    chain = list(causes(exc))
    step = next((m.group(1) for e in chain for m in [_STEP.search(str(e))] if m), "")
    where = f" while running '{step}'" if step else ""
    for e in chain:
        remote = None if isinstance(e, OSError) else _REMOTE_ERRNO.search(str(e))
        code = getattr(e, "errno", None) if isinstance(e, OSError) else int(remote.group(1)) if remote else None
        if isinstance(e, MemoryError) or code == errno.ENOMEM:
            return f"out of memory{where}: run with fewer --workers, or on a machine with more memory"
        if code in (errno.ENOSPC, errno.EDQUOT):
            return (f"{os.strerror(code).lower()}{where}: a local run keeps its records uncompressed "
                    f"under {parts} until it writes the shards; free space on that disk or choose an --output on "
                    "a larger one")
        if code in (errno.EMFILE, errno.ENFILE):
            return f"too many open files{where}: raise the limit (ulimit -n) or run with fewer --workers"
    return None
