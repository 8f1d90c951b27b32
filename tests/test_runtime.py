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


def test_a_local_run_restores_the_collector_and_the_state_sampler(tmp_path):
    from apache_beam.runners.worker import statesampler

    from swemine.pipelines import runner, trajectories
    from swemine.pipelines.configs import TrajectoriesJob

    sample = tmp_path / "in.jsonl"
    sample.write_text("")
    gc_before, sampler_before = gc.get_threshold(), statesampler.StateSampler.__init__.__defaults__
    runner.execute(trajectories.build_spec(TrajectoriesJob(inputs=(str(sample),))), str(tmp_path / "out"))
    assert gc.get_threshold() == gc_before
    assert statesampler.StateSampler.__init__.__defaults__ == sampler_before
