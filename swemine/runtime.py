"""Process-level settings for local runs: the cores they may use, the cyclic garbage collector, the C heap, and
stopping on a signal."""
from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc
import logging
import math
import os
import resource
import signal
import threading
from contextlib import contextmanager, suppress

# glibc mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_THRESHOLD = -1, -2, -3
HEAP_KEEP_BYTES = 1 << 30          # freed memory the heap keeps instead of returning it to the OS
HEAP_TOP_PAD = 256 << 20           # extra bytes the heap grows by, and keeps, each time it grows
MMAP_THRESHOLD = 32 << 20          # larger blocks only get their own mapping (glibc's maximum)
BATCH_GC_THRESHOLD = (50_000, 50, 100)   # gen-0 allocations, gen-0 and gen-1 collections before the next generation


@contextmanager
def paused_gc():
    """Pause Python's cyclic garbage collector for one bounded step (one file, one repo's selection, one spill
    file read back).

    The miners hold many small long-lived objects (structures, call sites); full collections triggered by
    the allocations of a step rescan all of them and cost 15-25% of its CPU time (benchmarks/fim.py), and
    unpickling a repository's structures takes 4x as long with the collector running.
    Reference counting still frees everything acyclic; the collector runs again after the step.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@contextmanager
def batch_gc(threshold: tuple[int, int, int] = BATCH_GC_THRESHOLD):
    """Run the cyclic garbage collector seldom while the block lasts, then restore its thresholds.

    With the default (700, 10, 10) a run collects hundreds of times and makes a full pass over every live
    object whenever the heap has grown by a quarter: 0.3 s of a 6.5 s FIM run over the standard library, ten
    times what it costs with :data:`BATCH_GC_THRESHOLD`. Cyclic garbage still gets collected, later."""
    old = gc.get_threshold()
    gc.set_threshold(*threshold)
    try:
        yield
    finally:
        gc.set_threshold(*old)


@functools.cache
def _libc():
    """The C library, or ``None`` where it cannot be loaded."""
    try:
        return ctypes.CDLL(ctypes.util.find_library("c"))
    except (OSError, TypeError):
        return None


def keep_freed_memory() -> bool:
    """Let glibc's heap keep the memory a run frees (up to :data:`HEAP_KEEP_BYTES`) instead of handing it back.

    A local Beam run allocates and frees large buffers all the time (encoded elements, the in-memory data
    plane); returned to the OS, each one is page-faulted in again on its next use: about a quarter of an
    ingest run's CPU was kernel time for 300,000 page faults (benchmarks/ingest.py). The cost is a resident
    size that stays near the run's peak. Returns False where the C library is not glibc (nothing changes)."""
    mallopt = getattr(_libc(), "mallopt", None)
    if mallopt is None:
        return False
    return all(mallopt(param, value) == 1 for param, value in (
        (_M_MMAP_THRESHOLD, MMAP_THRESHOLD), (_M_TRIM_THRESHOLD, HEAP_KEEP_BYTES), (_M_TOP_PAD, HEAP_TOP_PAD)))


def release_freed_memory() -> None:
    """Hand the memory the heap kept back to the OS now (glibc ``malloc_trim``; nothing elsewhere). The
    benchmarks call it before each timed run, so that a run made after another in the same process starts as
    a fresh ``swemine run`` does."""
    trim = getattr(_libc(), "malloc_trim", None)
    if trim is not None:
        trim(0)


def stop_child_processes(timeout_s: float = 5.0) -> None:
    """End this process's descendants (Beam's ``--workers`` processes of an interrupted run: the run's threads wait
    on them until they end) and wait up to ``timeout_s`` for them. All are paused before any is killed, so none
    reacts to another's end (a worker whose logging channel closes prints a line of its own)."""
    import psutil

    children = psutil.Process().children(recursive=True)
    for ending in (psutil.Process.suspend, psutil.Process.kill):
        for child in children:
            with suppress(psutil.Error):
                ending(child)
    psutil.wait_procs(children, timeout=timeout_s)


class Stopped(KeyboardInterrupt):
    """Ctrl-C or SIGTERM, raised in the main thread with the signal's name as its text (a Beam step that sees it
    re-raises the same type with the step's name appended)."""


@contextmanager
def stop_on_signals():
    """While the block lasts, SIGINT and SIGTERM raise :class:`Stopped`, so a run cleans up (Beam's worker processes
    stopped, parts removed, the output lock released) instead of vanishing or printing a trace."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    hook = threading.excepthook

    def stop(signum, _frame):
        threading.excepthook = lambda _args: None     # Beam's threads that lose their worker: the run is over
        logging.getLogger("apache_beam").setLevel(logging.CRITICAL + 1)   # and what they log about it is noise
        stop_child_processes()          # Beam's --workers: its threads waiting on them then end
        raise Stopped(signal.Signals(signum).name)
    before = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)
              if signal.getsignal(sig) is not signal.SIG_IGN}
    try:
        yield
    finally:
        threading.excepthook = hook
        for sig, handler in before.items():
            signal.signal(sig, handler)


def usable_cores(cgroup_root: str = "/sys/fs/cgroup") -> int:
    """The cores this process may use: its CPU affinity (``taskset``, cpusets), capped by a cgroup CPU quota
    (``docker --cpus``, a Kubernetes CPU limit), rounded up; at least 1. ``os.cpu_count()`` counts the host's
    cores, so a container limited to 2 of 64 would start 64 workers."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    quota = _cgroup_cpu_quota(cgroup_root)
    return max(1, min(cores, math.ceil(quota)) if quota else cores)


def _cgroup_cpu_quota(root: str) -> float | None:
    """CPUs' worth of time per period the cgroup grants (cgroup v2 ``cpu.max``, v1 ``cfs_quota_us`` over
    ``cfs_period_us``); ``None`` without a limit or a readable file."""
    candidates = [(os.path.join(root, "cpu.max"), None)] + [
        (os.path.join(root, d, "cpu.cfs_quota_us"), os.path.join(root, d, "cpu.cfs_period_us"))
        for d in ("cpu", "cpu,cpuacct")]
    for quota_path, period_path in candidates:
        try:
            with open(quota_path) as fh:
                fields = fh.read().split()
            if period_path is not None:
                with open(period_path) as fh:
                    fields.append(fh.read().strip())
        except OSError:
            continue
        try:
            quota, period = int(fields[0]), int(fields[1])
        except (IndexError, ValueError):     # "max": no limit
            return None
        return quota / period if quota > 0 and period > 0 else None
    return None


def raise_open_file_limit() -> int:
    """Raise this process's soft limit on open files to its hard limit; returns the soft limit now. A local run
    keeps one Arrow part open per shard bucket in every bundle (a run of 250 GB has a thousand buckets), and
    the usual soft limit is 1,024."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            return hard
        except (ValueError, OSError):
            return soft
    return soft


@contextmanager
def local_run():
    """A run in this process: a heap that keeps what it frees, the open-file limit at its maximum and, while the
    block lasts, a garbage collector that seldom runs."""
    keep_freed_memory()
    raise_open_file_limit()
    with batch_gc():
        yield
