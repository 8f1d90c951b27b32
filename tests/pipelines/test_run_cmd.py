"""``swemine run``: a job from --config, a finished run is a no-op, --workers, an unreachable Hub."""
from __future__ import annotations

import json

import pytest

from swemine.pipelines.cli.main import main
from swemine.pipelines.engine import runner


def test_run_from_a_config_file(corpora_dir, tmp_path, capsys):
    cfg = tmp_path / "run.yaml"
    cfg.write_text(f"inputs: [{corpora_dir / 'swe-agent'}]\nshards: 2\n")
    out = tmp_path / "out"
    assert main(["run", "trajectories", "--config", str(cfg), "--output", str(out)]) == 0
    m = json.loads((out / "manifest.json").read_text())
    assert m["config"]["inputs"] == [str(corpora_dir / "swe-agent")]
    assert m["stage_order"][:2] == ["read", "join"] and m["stages"]["join"]["out"] == 37
    assert sorted(o["path"] for o in m["outputs"] if o["path"].startswith("trajectories/")) == [
        "trajectories/train-00000-of-00002.parquet", "trajectories/train-00001-of-00002.parquet"]
    capsys.readouterr()
    assert main(["run", "trajectories", "--config", str(cfg), "--output", str(out)]) == 0
    assert capsys.readouterr().out.startswith("up to date")


def test_workers_flag_reaches_the_runner_before_or_after_the_job(monkeypatch, tmp_path):
    """``--workers`` is a run-level flag (not part of the job config, so not of its hash): given before or after
    the job name it reaches ``runner.execute``; absent, 1 (the run in this process); 0 is refused."""

    seen = []
    monkeypatch.setattr(runner, "execute", lambda spec, output, beam_args, force, workers: seen.append(workers) or
                        {"dry_run": True, "run_id": "x", "state": "DONE"})
    (tmp_path / "t.traj").write_text('{"trajectory": [], "info": {}}')
    data = str(tmp_path)
    assert main(["run", "--workers", "3", "trajectories", "--input", data]) == 0
    assert main(["run", "trajectories", "--input", data, "--workers", "2"]) == 0
    assert main(["run", "trajectories", "--input", data]) == 0
    assert seen == [3, 2, 1]
    with pytest.raises(SystemExit) as exc:
        main(["run", "trajectories", "--input", data, "--workers", "0"])
    assert exc.value.code == 2


def test_tasks_from_an_unreachable_hub_are_an_error(capsys, monkeypatch, tmp_path):
    from swemine.pipelines.cli.main import main

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))                  # nothing cached
    argv = ["run", "trajectories", "--input", "corpora/samples/trajectories/swe-agent", "--tasks",
            "nobody/no-such-dataset", "--output", str(tmp_path / "out")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("swemine: error: --tasks nobody/no-such-dataset: not a local file and not loadable")
    assert not (tmp_path / "out").exists()
