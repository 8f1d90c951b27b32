
"""Moatless before v1 (external/moatless-gpt4o-0609: 20 trajectories of the June 2024 run) with the run's
result.json labels. Expected values were read off the files."""
import json
import pathlib

from swemine.corpora.normalize import normalize_paths

RUN = "external/moatless-gpt4o-0609"


def test_run_is_read_and_labelled(corpora_dir):
    trajs, rejects = normalize_paths([str(corpora_dir / RUN)])
    assert len(trajs) == 20 and {t["source_format"] for t in trajs} == {"moatless-v0"}
    assert sorted(r["reason"] for r in rejects) == ["unsupported_file_type"] * 2        # README.md, PROVENANCE.md
    result = json.loads((corpora_dir / RUN / "result.json").read_text())
    for t in trajs:
        assert t["resolved"] is (t["instance_id"] in result["resolved"])
        assert t["resolved_source"] == f"result.json:{pathlib.Path(RUN).name}/result.json"     # portable: <root>/<file>
        assert t["final_patch"].startswith("diff --git") and t["final_patch_source"] == "trajectory"
        assert t["model_name"] == "20240609_moatless_gpt4o"                     # all_preds.jsonl names the run only
    assert sum(t["resolved"] for t in trajs) == 5


def test_one_trajectory(corpora_dir):
    trajs, _ = normalize_paths([str(corpora_dir / RUN / "trajs" / "django__django-11848.json")])
    (t,) = trajs
    assert [s["tool_name"] for s in t["steps"]] == ["search", "identify", "request_for_change", "search_replace",
                                                    "finish"]
    assert json.loads(t["steps"][0]["tool_args_json"]) == {"file_pattern": "**/django/utils/http.py",
                                                           "function_name": "parse_http_date"}
    assert t["steps"][0]["observation"].startswith("Found 1 hits.")
    assert t["steps"][1]["thought"].startswith("The parse_http_date function contains the logic")
    assert "reasoning" not in json.loads(t["steps"][1]["tool_args_json"])
    assert t["exit_status"] == "finished" and t["problem_statement"].startswith(
        "django.utils.http.parse_http_date two digit year check is incorrect")
    assert t["final_patch"].startswith("diff --git a/django/utils/http.py b/django/utils/http.py")
    assert json.loads(t["extra_json"])["step_states"] == [
        "SearchLoop_Searching", "SearchLoop_Searching", "CodeLoop_Pending", "CodeLoop_CodeChange", "CodeLoop_Pending"]
