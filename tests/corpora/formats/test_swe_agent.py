"""SWE-agent .traj files: the old (0.x) schema and the 1.x function-calling demonstration."""
import json

from swemine.corpora.normalize import normalize_paths

ACR_RUN = "swe-agent/auto-code-rover/results/swe-agent-results/cost_2_1"
FC = ("swe-agent/SWE-agent/trajectories/demonstrations/replay__marshmallow-code__marshmallow-1867__"
      "function_calling_replace__install-1/marshmallow-code__marshmallow-1867.traj")


def test_old_schema_run(corpora_dir):
    trajs, rejects = normalize_paths([str(corpora_dir / ACR_RUN)])
    trajs = [t for t in trajs if t["source_format"] == "swe-agent-traj"]
    assert len(trajs) == 31
    lines = (corpora_dir / ACR_RUN / "all_preds.jsonl").read_text().splitlines()
    preds = {json.loads(line)["instance_id"] for line in lines}
    assert {t["instance_id"] for t in trajs} <= preds       # ids line up with the run's all_preds.jsonl
    t = next(t for t in trajs if t["instance_id"] == "django__django-10914")
    assert (t["exit_status"], t["n_steps"], len(t["final_patch"])) == ("submitted", 12, 625)
    assert [s["tool_name"] for s in t["steps"]] == [
        "find_file", "find_file", "open", "goto", "scroll_up", "find_file", "open", "scroll_down", "search_file",
        "goto", "edit", "submit"]
    assert t["problem_statement"].startswith("Set default FILE_UPLOAD_PERMISSION to 0o644.")
    assert json.loads(t["extra_json"]) == {"api_calls": 12, "instance_cost": 0.82967}


def test_function_calling_demonstration(corpora_dir):
    (t,), rejects = normalize_paths([str(corpora_dir / FC)])
    assert rejects == []
    assert (t["instance_id"], t["model_name"], t["base_commit"], t["exit_status"], t["n_steps"]) == (
        "marshmallow-code__marshmallow-1867", "gpt-4o", "bfd2593d4b416122e30cdefe0c72d322ef471611", "submitted", 11)
    assert [s["tool_name"] for s in t["steps"]] == [
        "create", "insert", "bash", "bash", "find_file", "open", "edit", "edit", "bash", "bash", "submit"]
    assert json.loads(t["steps"][0]["tool_args_json"]) == {"filename": "reproduce.py"}
    assert json.loads(t["steps"][4]["tool_args_json"]) == {"dir": "src", "file_name": "fields.py"}
    assert t["steps"][0]["action_text"] == "create reproduce.py"
    assert t["problem_statement"].startswith("TimeDelta serialization precision")
    assert t["final_patch"].startswith("diff --git a/src/marshmallow/fields.py b/src/marshmallow/fields.py")


def test_human_demonstration_without_tool_calls(corpora_dir):
    trajs, _ = normalize_paths([str(corpora_dir / "swe-agent/SWE-agent/trajectories/demonstrations")])
    t = next(t for t in trajs if t["instance_id"] == "humanevalfix-python-0")
    assert t["model_name"] == "" and [s["tool_name"] for s in t["steps"]][:2] == ["ls", "open"]
    assert json.loads(t["steps"][1]["tool_args_json"]) == {"args": "main.py"}
