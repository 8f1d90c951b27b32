import gc
import platform

from swemine.runtime import BATCH_GC_THRESHOLD, batch_gc, keep_freed_memory, paused_gc


def test_batch_gc_raises_the_thresholds_for_the_block_only():
    before = gc.get_threshold()
    with batch_gc():
        assert gc.get_threshold() == BATCH_GC_THRESHOLD
    assert gc.get_threshold() == before


def test_paused_gc_restores_the_collector_even_after_an_error():
    assert gc.isenabled()
    try:
        with paused_gc():
            assert not gc.isenabled()
            raise KeyError("x")
    except KeyError:
        pass
    assert gc.isenabled()


def test_keep_freed_memory_takes_on_glibc():
    assert keep_freed_memory() is (platform.libc_ver()[0] == "glibc")
