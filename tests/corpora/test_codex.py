"""Codex CLI rollouts. No public rollout is in the shared corpora: the files under samples/codex/ are HAND-WRITTEN
SAMPLES following the documented rollout layout (session_meta, turn_context, response_item message / reasoning /
function_call / function_call_output / custom_tool_call, event_msg). Expected values are read off those files."""
import json
import pathlib

from swemine.corpora.inputs import Unit
from swemine.corpora.normalize import read_unit

SAMPLES = pathlib.Path(__file__).parent / "samples" / "codex"
WORK = SAMPLES / "rollout-2025-10-02T09-00-00-0199a1b2-0000-7000-8000-00000000c0de.jsonl"
CHAT = SAMPLES / "rollout-2025-10-02T10-00-00-0199a1b2-0000-7000-8000-0000000000aa.jsonl"


def _one(path):
    (t,) = list(read_unit(Unit(str(path))))
    assert t["source_format"] == "codex-rollout" and t["harness"] == "codex-cli"
    return t


def test_rollout_with_tool_calls():
    t = _one(WORK)
    assert t["trajectory_id"] == t["instance_id"] == "codex/0199a1b2-0000-7000-8000-00000000c0de"
    assert (t["model_name"], t["base_commit"]) == ("gpt-5-codex", "3f2a9c1d")
    # the <environment_context> message is harness context, not the problem
    assert t["problem_statement"] == "divide() crashes on zero; make it raise ValueError instead"
    assert [(s["role"], s["tool_name"]) for s in t["steps"]] == [
        ("assistant", "shell"), ("assistant", "shell"), ("assistant", "apply_patch"), ("assistant", "shell"),
        ("assistant", ""), ("user", "")]
    first = t["steps"][0]
    assert json.loads(first["tool_args_json"])["command"] == ["bash", "-lc", "grep -n 'def divide' -r tinycalc"]
    assert first["action_text"] == "grep -n 'def divide' -r tinycalc" and first["thought"] == "**Locating divide**"
    # JSON-text output with metadata.exit_code, and plain-text "Exit code: N" output
    assert (first["observation"], first["obs_exit_code"]) == ("tinycalc/ops.py:12:def divide(a, b):\n", 0)
    assert t["steps"][3]["obs_exit_code"] == 1 and "1 failed, 7 passed" in t["steps"][3]["observation"]
    assert t["steps"][2]["thought"] == "I'll add a guard."
    assert t["steps"][2]["action_text"].startswith("*** Begin Patch\n*** Update File: tinycalc/ops.py")
    assert t["steps"][5]["action_text"] == "update that test too"
    extra = json.loads(t["extra_json"])
    assert extra["event_types"] == {"agent_message": 1, "token_count": 1, "user_message": 1}
    assert (extra["cwd"], extra["git_branch"], extra["context_messages"], extra["n_tool_calls"]) == (
        "/home/dana/src/tinycalc", "main", 1, 4)


def test_rollout_without_tool_use_is_still_read():
    t = _one(CHAT)
    assert t["problem_statement"] == "what does EAFP mean?" and t["model_name"] == "gpt-5"
    assert [(s["role"], s["tool_name"], s["action_text"]) for s in t["steps"]] == [
        ("assistant", "", "Easier to ask forgiveness than permission.")]


def test_older_rollout_without_the_payload_wrapper(tmp_path):
    """Hand-written in the pre-wrapper layout: bare header, bare response items, record_type state lines."""
    lines = [{"id": "s-old", "timestamp": "2025-05-01T10:00:00Z", "instructions": None,
              "git": {"commit_hash": "abc", "branch": "dev"}},
             {"record_type": "state"},
             {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "list files"}]},
             {"type": "function_call", "name": "shell", "arguments": '{"command": ["ls"]}', "call_id": "c1"},
             {"type": "function_call_output", "call_id": "c1",
              "output": '{"output": "a.py\\n", "metadata": {"exit_code": 0, "duration_seconds": 0.0}}'},
             {"record_type": "state"}]
    path = tmp_path / "rollout-2025-05-01T10-00-00-s-old.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    t = _one(path)
    assert (t["trajectory_id"], t["problem_statement"], t["base_commit"]) == ("codex/s-old", "list files", "abc")
    assert [(s["tool_name"], s["action_text"], s["observation"], s["obs_exit_code"]) for s in t["steps"]] == [
        ("shell", "ls", "a.py\n", 0)]
    assert json.loads(t["extra_json"])["line_types"] == {"record_type:state": 2, "response_item": 3,
                                                         "session_meta": 1}
