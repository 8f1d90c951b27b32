"""A run stored as one JSON list of chat messages (the hand-labelled OpenHands runs), with the per-instance
files beside it joined; Anthropic blocks, several calls per message and damaged lists on small inputs."""
import json

import pytest

from swemine.corpora.formats.message_list import MessageListRun, instance_id_for, message_steps
from swemine.corpora.normalize import normalize_paths

LABELLED = "failure-labels/issuesolving-openhands"


def _one(corpora_dir, iid):
    (traj,), rejects = normalize_paths([str(corpora_dir / LABELLED / "trajectories" / iid / f"{iid}.json")])
    assert rejects == []
    return traj


def test_labelled_run_steps_patch_and_report(corpora_dir):
    t = _one(corpora_dir, "astropy__astropy-13398")
    assert (t["source_format"], t["harness"], t["instance_id"], t["repo"]) == (
        "message-list", "openhands", "astropy__astropy-13398", "astropy/astropy")
    # 12 tool calls (one per assistant message) + the closing message without a call
    assert t["n_steps"] == 13 and [s["tool_name"] for s in t["steps"]].count("") == 1
    first = t["steps"][0]
    assert (first["tool_name"], first["tool_args_json"], first["source_index"], first["obs_exit_code"]) == (
        "execute_bash", '{"command": "ls -R /workspace/astropy__astropy__5.0"}', 2, 0)
    assert first["action_text"] == "ls -R /workspace/astropy__astropy__5.0"
    assert first["observation"].startswith("OBSERVATION:\nls -R /workspace/astropy__astropy__5.0")
    last = t["steps"][-1]
    assert last["thought"].startswith("The implementation handles all edge cases correctly!")
    assert last["observation"].startswith("Please continue working on the task")
    assert t["final_patch"].startswith("diff --git a/astropy/coordinates/builtin_frames/__init__.py b/astropy/")
    assert t["final_patch_source"].endswith("trajectories/astropy__astropy-13398/patch.diff")
    assert t["resolved"] is False
    assert t["resolved_source"].endswith("trajectories/astropy__astropy-13398/report.json")
    assert t["problem_statement"].startswith("A direct approach to ITRS to Observed transformations")
    extra = json.loads(t["extra_json"])
    assert extra["gold_patch"].startswith("diff --git a/astropy/coordinates/builtin_frames/__init__.py")
    assert extra["tests"]["FAIL_TO_PASS"] == {"passed": 0, "failed": [
        "astropy/coordinates/tests/test_intermediate_transformations.py::test_itrs_topo_to_altaz_with_refraction",
        "astropy/coordinates/tests/test_intermediate_transformations.py::test_itrs_topo_to_hadec_with_refraction",
        "astropy/coordinates/tests/test_intermediate_transformations.py::test_cirs_itrs_topo",
        "astropy/coordinates/tests/test_intermediate_transformations.py::test_itrs_straight_overhead"]}
    assert (extra["dangling_results"], extra["unanswered_calls"], extra["unparsable_arguments"]) == (0, 0, 0)


def test_a_turn_without_a_tool_call_mid_run_keeps_the_call_numbering(corpora_dir):
    t = _one(corpora_dir, "django__django-11138")
    raw = json.loads((corpora_dir / LABELLED / "trajectories/django__django-11138/django__django-11138.json").read_text())
    calls = [i for i, m in enumerate(raw) if m.get("tool_calls")]
    assert len(calls) == t["n_steps"] == 18                  # every step is a call: step k-1 is the k-th call
    assert [s["source_index"] for s in t["steps"]] == calls
    assert raw[30]["role"] == "assistant" and not raw[30].get("tool_calls")
    assert t["steps"][14]["thought"].startswith("The changes look good. Here's what the fix does:")
    assert t["steps"][13]["observation"].endswith("IMPORTANT: YOU SHOULD NEVER ASK FOR HUMAN HELP.")


def test_every_labelled_run_reads_with_labels_inside_it(corpora_dir):
    trajs, rejects = normalize_paths([str(corpora_dir / LABELLED / "trajectories")])
    assert len(trajs) == 54 and all(t["resolved"] is False for t in trajs)
    assert {r["reason"] for r in rejects} == {"unsupported_file_type"}       # patch.diff, issue.txt, gold.diff
    assert len(rejects) == 3 * 54
    by_id = {t["instance_id"]: t for t in trajs}
    for line in (corpora_dir / LABELLED / "labels.jsonl").read_text().splitlines():
        label = json.loads(line)
        step = by_id[label["instance_id"]]["steps"][label["action_index"] - 1]
        assert step["tool_name"] in ("execute_bash", "str_replace_editor")


def _msg(role, content="", **kw):
    return {"role": role, "content": content, **kw}


def test_anthropic_blocks_and_several_calls_per_message():
    msgs = [_msg("system", "sys"), _msg("user", [{"type": "text", "text": "fix it"}]),
            _msg("assistant", [{"type": "text", "text": "look first"},
                               {"type": "tool_use", "id": "a", "name": "bash", "input": {"command": "ls"}},
                               {"type": "tool_use", "id": "b", "name": "bash", "input": {"command": "pwd"}}]),
            _msg("user", [{"type": "tool_result", "tool_use_id": "b", "content": "/repo"},
                          {"type": "tool_result", "tool_use_id": "a",
                           "content": [{"type": "text", "text": "a.py"}]}]),
            _msg("assistant", "done")]
    steps, counts = message_steps(msgs)
    assert [(s["tool_name"], s["action_text"], s["observation"], s["thought"]) for s in steps] == [
        ("bash", "ls", "a.py", "look first"), ("bash", "pwd", "/repo", ""), ("", "", "", "done")]
    assert [s["source_index"] for s in steps] == [2, 2, 4]
    assert counts == {"dangling_results": 0, "unanswered_calls": 0, "unparsable_arguments": 0}


def test_damaged_lists_still_make_trajectories():
    call = {"id": "c1", "type": "function", "function": {"name": "execute_bash", "arguments": '{"command": "ls'}}
    msgs = [_msg("user", "task"), _msg("assistant", None, tool_calls=[call]),
            _msg("tool", "", tool_call_id="zzz"),                                  # dangling id, empty content
            _msg("assistant", [], tool_calls=[{"id": "c2", "function": {"name": "execute_bash",
                                                                         "arguments": '{"command": "pwd"}'}}])]
    steps, counts = message_steps(msgs)
    assert counts == {"dangling_results": 1, "unanswered_calls": 1, "unparsable_arguments": 1}
    assert steps[0]["tool_args_json"] == '{"raw_arguments": "{\\"command\\": \\"ls"}'
    assert [s["observation"] for s in steps] == ["", ""]
    assert MessageListRun().matches(msgs, "x.json") and not MessageListRun().matches([_msg("user", "x")], "x.json")


@pytest.mark.parametrize("uri,iid", [("/r/django__django-1/django__django-1.json", "django__django-1"),
                                     ("/r/sympy__sympy-2/messages.json", "sympy__sympy-2"),
                                     ("/r/x/run-7.json.gz", "run-7")])
def test_instance_id_from_file_or_folder(uri, iid):
    assert instance_id_for(uri) == iid


def test_a_folder_with_a_generic_name_and_a_flat_report(tmp_path):
    run = tmp_path / "pylint-dev__pylint-9"
    run.mkdir()
    msgs = [_msg("user", "t"), _msg("assistant", "x", tool_calls=[
        {"id": "1", "function": {"name": "grep", "arguments": "{}"}}]), _msg("tool", "ok", tool_call_id="1")]
    (run / "messages.json").write_text(json.dumps(msgs))
    (run / "report.json").write_text(json.dumps({"resolved": True, "tests_status": {}}))
    (traj,), _ = normalize_paths([str(run)])
    assert (traj["instance_id"], traj["resolved"], traj["harness"], traj["final_patch"]) == (
        "pylint-dev__pylint-9", True, "openai-chat", "")
    assert json.loads(traj["extra_json"])["tests"] == {"FAIL_TO_PASS": {"passed": 0, "failed": []},
                                                       "PASS_TO_PASS": {"passed": 0, "failed": []}}
