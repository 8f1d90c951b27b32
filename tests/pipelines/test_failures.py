"""Runs the machine stops (a full disk, memory, a killed worker) end with one line that says what to change and
leave no scratch files; other errors keep their trace. Faults are injected into real Beam runs."""
from __future__ import annotations

import errno
import os
import pathlib
import signal
import tempfile

import apache_beam as beam
import pyarrow as pa
import pytest

from swemine.pipelines import runner, workers
from swemine.pipelines.cli import main
from swemine.pipelines.failures import RunFailed, environment_failure
from swemine.pipelines.runner import Built, PipelineSpec

SAMPLE = pathlib.Path(__file__).resolve().parents[2] / "corpora" / "samples" / "trajectories" / "swe-agent"


def _raise(error: BaseException):
    def fn(_):
        raise error
    return fn


def _beam_error(error: BaseException) -> BaseException:
    """What a local Beam run raises when one of its steps raises ``error``."""
    with pytest.raises(BaseException) as got:
        with beam.Pipeline() as p:
            _ = p | beam.Create([1]) | "Boom" >> beam.Map(_raise(error))
    return got.value


@pytest.mark.parametrize("error,expected", [
    (OSError(errno.ENOSPC, "No space left on device"), "no space left on device while running 'Boom': a local run "
     "keeps its records uncompressed under /scratch ($TMPDIR)"),
    (OSError(errno.EDQUOT, "Disk quota exceeded"), "disk quota exceeded while running 'Boom'"),
    (MemoryError(), "out of memory while running 'Boom': run with fewer --workers"),
    (OSError(errno.EMFILE, "Too many open files"), "too many open files while running 'Boom': raise the limit"),
])
def test_what_the_machine_caused_is_one_line_through_beams_wrapping(error, expected):
    found = environment_failure(_beam_error(error), "/scratch")
    assert found.startswith(expected) and "\n" not in found


@pytest.mark.parametrize("error", [ValueError("a bug"), OSError(errno.ENOENT, "No such file"), KeyError("k")])
def test_other_errors_are_not_the_machines(error):
    assert environment_failure(_beam_error(error), "/scratch") is None


def _spec(fault_in_worker_1):
    def build(p, ctx):
        part = workers.current()
        rows = p | beam.Create([{"record_id": "a"}])
        if part is not None and part.index == 1:
            rows = rows | "Fault" >> beam.Map(fault_in_worker_1)
        return Built(outputs={"data/x": workers.broadcast(rows, "All")})
    return PipelineSpec(name="faulty", config={}, outputs={"data/x": pa.schema([("record_id", pa.string())])},
                        build=build, partitionable=True)


def _kill_self(_):
    os.kill(os.getpid(), signal.SIGKILL)


@pytest.mark.parametrize("fault,message", [
    (_raise(OSError(errno.ENOSPC, "No space left on device")), "no space left on device while running 'Fault'"),
    (_kill_self, "was killed (SIGKILL), most often by the kernel's out-of-memory killer"),
])
def test_a_worker_the_machine_stopped_fails_the_run_in_one_line(tmp_path, monkeypatch, fault, message):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "scratch"))
    (tmp_path / "scratch").mkdir()
    with pytest.raises(RunFailed, match=message.replace("(", r"\(").replace(")", r"\)")):
        runner.execute(_spec(fault), str(tmp_path / "out"), workers=2)
    assert list((tmp_path / "scratch").iterdir()) == [] and list((tmp_path / "out").iterdir()) == []


@pytest.mark.parametrize("n", [1, 2])
def test_a_full_disk_is_one_line_from_the_cli(tmp_path, monkeypatch, capsys, n):
    def full(self):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(workers.WriteParts, "_flush", full)
    rc = main(["run", "trajectories", "--input", str(SAMPLE), "--output", str(tmp_path / "o"), "--workers", str(n)])
    err = capsys.readouterr().err.strip()
    assert rc == 1 and err.startswith("swemine: error: no space left on device while running 'Shards[") and "\n" not in err
    assert not (tmp_path / "o" / "manifest.json").exists()
