"""SWE-agent 1.x files holding only ``history``: the steps are rebuilt from the chat. The input is the real 1.x
demonstration with its ``trajectory`` removed; the full file's own steps are the expected values."""
import json

from swemine.corpora.normalize import normalize_paths

DEMO = ("swe-agent/SWE-agent/trajectories/demonstrations/replay__marshmallow-code__marshmallow-1867__"
        "function_calling_replace__install-1/marshmallow-code__marshmallow-1867.traj")


def test_history_only_file_matches_the_full_file(corpora_dir, tmp_path):
    doc = json.loads((corpora_dir / DEMO).read_text())
    path = tmp_path / "marshmallow-code__marshmallow-1867.traj"
    path.write_text(json.dumps({k: v for k, v in doc.items() if k != "trajectory"}))
    (full,), _ = normalize_paths([str(corpora_dir / DEMO)])
    trajs, rejects = normalize_paths([str(path)])
    assert rejects == []
    (t,) = trajs
    assert (t["source_format"], t["harness"], t["instance_id"], t["model_name"]) == (
        "swe-agent-history", "swe-agent", "marshmallow-code__marshmallow-1867", "gpt-4o")
    assert t["n_steps"] == full["n_steps"] == 11
    for got, want in zip(t["steps"], full["steps"]):
        assert (got["tool_name"], got["tool_args_json"], got["action_text"]) == (
            want["tool_name"], want["tool_args_json"], want["action_text"])
        assert got["observation"].strip().startswith(want["observation"].strip())   # history adds the state line
    assert (t["final_patch"], t["exit_status"]) == (full["final_patch"], full["exit_status"])


def test_empty_trajectory_with_history_is_read_from_history(tmp_path):
    doc = {"trajectory": [], "info": {"exit_status": "submitted"}, "history": [
        {"role": "system", "content": "sys", "agent": "main", "message_type": "system_prompt"},
        {"role": "user", "content": "<pr_description>\nfix it\n</pr_description>", "agent": "main"},
        {"role": "assistant", "content": "look", "thought": "look", "action": "ls", "agent": "main"},
        {"role": "tool", "content": "a.py", "agent": "main"}]}
    path = tmp_path / "x__y-1.traj"
    path.write_text(json.dumps(doc))
    (t,), _ = normalize_paths([str(path)])
    assert t["source_format"] == "swe-agent-history" and t["problem_statement"] == "fix it"
    assert [(s["action_text"], s["observation"]) for s in t["steps"]] == [("ls", "a.py")]
