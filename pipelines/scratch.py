"""Scratch folders of local runs (``$TMPDIR/swemine-workers-*``): the Arrow parts, exchange spills and worker
temporary files of one run, removed when it ends. Each is owned through an ``flock`` that the kernel drops when
every process of the run is gone, so a run killed outright (``kill -9``, the OOM killer) leaves a folder the next
run recognises and removes. A folder of many tiny files (the workers' claims) can live in memory, under
``/dev/shm``, linked from the root (:func:`memory_folder`) and removed with it."""
from __future__ import annotations

import contextlib
import fcntl
import glob
import logging
import os
import shutil
import tempfile

log = logging.getLogger("swemine")

SCRATCH_PREFIX = "swemine-workers-"
OWNER_LOCK = "owner.lock"
MEMORY_FS = "/dev/shm"             # tmpfs on Linux: creating a file costs microseconds, not a disk journal entry
_owner_fds: dict[str, int] = {}


def new_scratch() -> str:
    """A new scratch root under ``$TMPDIR`` for one local run, locked (``flock`` on ``owner.lock``, the file
    descriptor kept open, and shared by forked workers) until :func:`remove_scratch`. Roots of runs whose
    processes are all gone (a launcher killed with ``kill -9``, or by the OOM killer) are removed first."""
    for stale in glob.glob(os.path.join(tempfile.gettempdir(), SCRATCH_PREFIX + "*")):
        _remove_if_unowned(stale)
    root = tempfile.mkdtemp(prefix=SCRATCH_PREFIX)
    fd = os.open(os.path.join(root, OWNER_LOCK + ".new"), os.O_CREAT | os.O_RDWR, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.replace(os.path.join(root, OWNER_LOCK + ".new"), os.path.join(root, OWNER_LOCK))   # appears locked
    _owner_fds[root] = fd
    return root


def _remove_if_unowned(root: str) -> None:
    try:
        fd = os.open(os.path.join(root, OWNER_LOCK), os.O_RDWR)
    except OSError:                     # not locked yet (being made now) or not a root of ours
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:             # a live run holds it
        return
    finally:
        os.close(fd)
    log.warning("removing %s, the scratch folder of a run that is gone", root)
    _remove_tree(root)


def remove_scratch(root: str) -> None:
    """Remove a root from :func:`new_scratch` (and its :func:`memory_folder` s) and release its lock."""
    _remove_tree(root)
    fd = _owner_fds.pop(root, None)
    if fd is not None:
        os.close(fd)


def memory_folder(root: str, name: str) -> str:
    """``<root>/<name>``, a new folder for many tiny files: a link to a folder under :data:`MEMORY_FS` where the
    machine has one this process may write to, else a plain folder. Either way it goes with the root."""
    path = os.path.join(root, name)
    try:
        target = tempfile.mkdtemp(prefix=f"{os.path.basename(root)}-{name}-", dir=MEMORY_FS)
    except OSError:
        os.mkdir(path)
        return path
    os.symlink(target, path)
    return path


def _remove_tree(root: str) -> None:
    """Remove ``root`` and the :func:`memory_folder` targets it links to (only folders of ours)."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(root):
            if entry.is_symlink():
                target = os.readlink(entry.path)
                if os.path.dirname(target) == MEMORY_FS and os.path.basename(target).startswith(SCRATCH_PREFIX):
                    shutil.rmtree(target, ignore_errors=True)
    shutil.rmtree(root, ignore_errors=True)
