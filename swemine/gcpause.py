"""Pausing Python's cyclic garbage collector around steps that allocate many objects and free them acyclically."""
from __future__ import annotations

import gc
from contextlib import contextmanager


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
