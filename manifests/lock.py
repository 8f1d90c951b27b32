"""One run at a time per output folder: ``<output>/.swemine.lock`` names the owner (pid, host, start time).

The lock is an ``flock`` held on that file for the whole run, so a run killed with ``kill -9`` leaves a stale
file whose lock the kernel has already released: the next run detects it, says so, and takes over. A live
owner makes :func:`output_lock` raise :class:`LockError` naming it. Remote outputs (``gs://`` ...) cannot be
locked this way and are not locked. :func:`check_output` refuses a folder no run can use.
"""
from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import json
import logging
import os
import socket
from collections.abc import Iterator

from swemine.failures import CommandError

LOCK_NAME = ".swemine.lock"
log = logging.getLogger("swemine")


def check_output(output: str, inputs: list[str]) -> None:
    """Refuse an output path that is a file, that cannot be created or written, or that lies inside a local input
    folder (it would be re-read)."""
    if "://" in output:
        return
    out = os.path.realpath(output)
    if os.path.exists(out) and not os.path.isdir(out):
        raise CommandError(f"--output {output} exists and is not a directory")
    for spec in inputs:
        if "://" in spec or any(ch in spec for ch in "*?["):
            continue
        src = os.path.realpath(spec)
        if os.path.isdir(src) and (out == src or out.startswith(src.rstrip(os.sep) + os.sep)):
            raise CommandError(f"--output {output} is inside the input folder {spec}; its shards would be read back "
                               "as input: choose an output outside it")
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as exc:
        raise CommandError(f"--output {output}: cannot create the folder ({exc.strerror or exc})") from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise CommandError(f"--output {output}: the folder is not writable")


class LockError(RuntimeError):
    """Another live run holds the output folder."""


def _owner(fd: int) -> dict:
    os.lseek(fd, 0, os.SEEK_SET)
    try:
        return json.loads(os.read(fd, 4096) or b"{}")
    except ValueError:
        return {}


def _acquire(path: str) -> int:
    """An fd holding the exclusive lock on ``path`` (the file at ``path`` right now, not an unlinked one)."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            owner = _owner(fd)
            os.close(fd)
            raise LockError(f"{os.path.dirname(path)} is in use by another swemine run (pid {owner.get('pid', '?')} "
                            f"on {owner.get('host', '?')} since {owner.get('started', '?')}); wait for it to finish "
                            "or choose another --output") from None
        try:
            same = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return fd
        os.close(fd)                                     # the owner removed the file meanwhile: lock the new one


@contextlib.contextmanager
def output_lock(output: str) -> Iterator[None]:
    """Hold ``<output>/.swemine.lock`` for the duration of the block (a no-op for remote outputs)."""
    if "://" in output and not output.startswith("file://"):
        yield
        return
    root = output.removeprefix("file://")
    os.makedirs(root, exist_ok=True)
    path = os.path.join(root, LOCK_NAME)
    fd = _acquire(path)
    try:
        stale = _owner(fd)
        if stale:
            log.warning("%s: taking over a stale lock of pid %s on %s (that run is gone)", root,
                        stale.get("pid"), stale.get("host"))
        me = {"pid": os.getpid(), "host": socket.gethostname(),
              "started": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(me).encode(), 0)
        yield
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        os.close(fd)                                     # closing releases the flock
