"""mini-swe-agent .traj.json reader and the labels of its run folder (report.json, sb-cli, preds, exit statuses)."""
import pathlib

import pytest

from swemine.corpora import formats
from swemine.corpora.formats.mini_swe_agent import bash_action
from swemine.corpora.normalize import normalize_paths

SAMPLES = pathlib.Path(__file__).resolve().parents[3] / "corpora" / "samples" / "trajectories" / "mini-swe-agent"
RUN = "mini-swe-agent/swebench_results/20251118_gemini-3-pro-74pct"


@pytest.fixture(scope="module")
def real_run(corpora_dir):
    trajs, rejects = normalize_paths([str(corpora_dir / RUN)])
    return {t["instance_id"]: t for t in trajs}, rejects


def test_real_resolved_trajectory(real_run, corpora_dir):
    trajs, _ = real_run
    t = trajs["django__django-14376"]
    assert t["source_format"] == "mini-swe-agent-traj" and t["harness"] == "mini-swe-agent"
    assert t["n_steps"] == 30                      # 62 messages = system + task + 30 assistant/user pairs
    assert t["model_name"] == "google/gemini-3-pro-preview"
    assert t["exit_status"] == "Submitted"
    assert t["repo"] == "django/django"
    assert t["final_patch"].splitlines()[0] == "diff --git a/django/db/backends/mysql/base.py b/django/db/backends/mysql/base.py"
    assert t["final_patch_source"] == "trajectory"
    assert t["resolved"] is True
    assert t["resolved_source"].startswith("report.json:") and "/work/" not in t["resolved_source"]
    assert t["resolved_source"].endswith("/logs/django__django-14376/report.json")
    first = t["steps"][0]
    assert (first["tool_name"], first["action_text"], first["obs_exit_code"]) == ("bash", "ls -R django/db/backends/mysql/", 0)
    assert first["thought"].startswith("I will start by listing the files")
    assert first["source_index"] == 2
    assert t["steps"][-1]["action_text"].startswith("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT")
    assert t["problem_statement"].startswith("Consider the following PR description:\nMySQL backend uses deprecated")


def test_real_unresolved_trajectory_and_counts(real_run):
    trajs, rejects = real_run
    t = trajs["astropy__astropy-13033"]
    assert t["n_steps"] == 32 and t["resolved"] is False
    assert [s["obs_exit_code"] for s in t["steps"]].count(1) == 6
    assert t["final_patch"].splitlines()[0] == "diff --git a/astropy/timeseries/core.py b/astropy/timeseries/core.py"
    assert len(trajs) == 36
    assert sum(t["resolved"] for t in trajs.values()) == 16
    assert all(t["resolved_source"].startswith("report.json:") for t in trajs.values())
    assert sum(t["n_steps"] for t in trajs.values()) == 1203
    assert {r["reason"] for r in rejects} == {"unsupported_file_type"} and len(rejects) == 41   # 40 .md + 1 .csv


def test_bash_action_parsing():
    assert bash_action("THOUGHT: look\n\n```bash\nls -la\n```") == ("bash", {"command": "ls -la"}, "ls -la", "look")
    assert bash_action("THOUGHT: no block here") == ("", None, "", "no block here")


def test_sample_run_labels_join():
    trajs, rejects = normalize_paths([str(SAMPLES)])
    assert rejects == []
    by_id = {t["instance_id"]: t for t in trajs}
    one, two = by_id["samples__calc-1"], by_id["samples__calc-2"]
    # report.json (priority 50) beats the sb-cli report (45) for calc-1; calc-2 has only the sb-cli label
    assert one["resolved"] is True and one["resolved_source"].startswith("report.json:")
    assert one["resolved_source"].endswith("sample-run/logs/samples__calc-1/report.json")
    assert two["resolved"] is False and two["resolved_source"].endswith("sb-cli-reports/sample-report.json")
    # calc-2's trajectory has no exit status: the later exit_statuses file wins over the first attempt
    assert one["exit_status"] == "Submitted" and two["exit_status"] == "LimitsExceeded"
    assert [s["obs_exit_code"] for s in one["steps"]] == [0, 1, 0, None]
    assert [s["tool_name"] for s in two["steps"]] == ["bash", ""]
    assert two["steps"][1]["observation"].startswith("SAMPLE format error")
    assert one["model_name"] == "SAMPLE-model-a" and one["repo"] == "samples/calc"


def test_registered_before_swe_agent():
    names = [f.name for f in formats.FORMATS]
    assert names.index("mini-swe-agent-traj") < names.index("swe-agent-traj")
