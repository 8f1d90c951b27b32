"""The Dataflow job graph is built offline (dry run) and the swemine wheel is staged for the workers."""
import zipfile

import pytest

from swemine.pipelines import dataflow, runner, trajectories
from swemine.pipelines.configs import TrajectoriesJob

pytest.importorskip("google.cloud.storage", reason="needs swemine[dataflow] (apache-beam[gcp])")

DF_ARGS = ["--runner=DataflowRunner", "--project=swemine-test", "--region=us-central1",
           "--temp_location=gs://swemine-test-bucket/tmp", "--dry_run=True"]


def test_dataflow_dry_run_builds_the_job_and_stages_the_wheel(tmp_path):
    spec = trajectories.build_spec(TrajectoriesJob(inputs=(str(tmp_path),)))
    (tmp_path / "t.traj").write_text('{"trajectory": [], "info": {}}')
    result = runner.execute(spec, "gs://swemine-test-bucket/out", DF_ARGS)
    assert result["dry_run"] is True and result["state"].endswith("DONE")
    proto = result["job"].proto_pipeline
    names = {t.unique_name for t in proto.components.transforms.values()}
    for expected in ("read", "CoGroup", "Join", "Shards[data/train]", "Shards[rejects/rejects]"):
        assert expected in names
    staged = [dep.role_payload for env in proto.components.environments.values() for dep in env.dependencies]
    assert any(b"swemine-0.1.0-py3-none-any.whl" in s for s in staged)


def test_with_staging_builds_an_installable_wheel(tmp_path):
    assert dataflow.with_staging(["--runner=FnApiRunner"]) == ["--runner=FnApiRunner"]
    mine = ["--runner=DataflowRunner", "--sdk_container_image=reg/img:1"]
    assert dataflow.with_staging(mine) == mine
    wheel = dataflow.build_wheel(str(tmp_path))
    names = zipfile.ZipFile(wheel).namelist()
    assert "swemine/pipelines/cli.py" in names and "swemine/corpora/records.py" in names
    assert {n.split("/")[0] for n in names} == {"swemine", "swemine-0.1.0.dist-info"}  # one namespace only
    assert any(n.startswith("swemine/corpora/samples/trajectories/") for n in names)
    meta = [n for n in names if n.endswith("entry_points.txt")][0]
    assert "swemine = swemine.pipelines.cli:main" in zipfile.ZipFile(wheel).read(meta).decode()
