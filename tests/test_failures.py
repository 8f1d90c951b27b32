"""Runs the machine stops (a full disk, memory, the open-file limit) end with one line that says what to change and
leave no parts behind; other errors keep their trace. Faults are injected into real Beam runs."""
from __future__ import annotations

import errno
import pathlib

import apache_beam as beam
import pyarrow as pa
import pytest

from swemine.failures import RunFailed, environment_failure
from swemine.pipelines.cli.main import main
from swemine.pipelines.engine import runner, sinks
from swemine.pipelines.engine.runner import Built, PipelineSpec

SAMPLE = pathlib.Path(__file__).resolve().parents[1] / "corpora" / "samples" / "trajectories" / "swe-agent"


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
     "keeps its records uncompressed under /out/_tmp/parts until it writes the shards"),
    (OSError(errno.EDQUOT, "Disk quota exceeded"), "disk quota exceeded while running 'Boom'"),
    (MemoryError(), "out of memory while running 'Boom': run with fewer --workers"),
    (OSError(errno.EMFILE, "Too many open files"), "too many open files while running 'Boom': raise the limit"),
])
def test_what_the_machine_caused_is_one_line_through_beams_wrapping(error, expected):
    found = environment_failure(_beam_error(error), "/out/_tmp/parts")
    assert found.startswith(expected) and "\n" not in found


@pytest.mark.parametrize("error", [ValueError("a bug"), OSError(errno.ENOENT, "No such file"), KeyError("k")])
def test_other_errors_are_not_the_machines(error):
    assert environment_failure(_beam_error(error), "/out/_tmp/parts") is None


def _spec():
    def build(p):
        rows = p | beam.Create([{"record_id": "a"}, {"record_id": "b"}])
        return Built(outputs={"data/x": rows | "Fault" >> beam.Map(_raise(OSError(errno.ENOSPC, "No space left")))})
    return PipelineSpec(name="faulty", config={}, outputs={"data/x": pa.schema([("record_id", pa.string())])},
                        build=build)


@pytest.mark.parametrize("workers", [1, pytest.param(2, marks=pytest.mark.slow)])   # 2: Beam worker processes
def test_a_step_the_machine_stopped_fails_the_run_in_one_line(tmp_path, workers):
    """In this process or in a Beam worker process (whose error arrives as text), the same one line."""
    with pytest.raises(RunFailed, match="no space left on device while running 'Fault'"):
        runner.execute(_spec(), str(tmp_path / "out"), workers=workers)
    assert list((tmp_path / "out").iterdir()) == []


def test_a_full_disk_is_one_line_from_the_cli(tmp_path, monkeypatch, capsys):
    def full(self):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(sinks.WriteParts, "_flush", full)
    rc = main(["run", "trajectories", "--input", str(SAMPLE), "--output", str(tmp_path / "o"), "--workers", "1"])
    err = capsys.readouterr().err.strip()
    assert rc == 1 and err.startswith("swemine: error: no space left on device while running 'Shards[") and "\n" not in err
    assert not (tmp_path / "o" / "manifest.json").exists()
