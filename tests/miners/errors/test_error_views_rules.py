"""Error-diagnosis training views on one hand-built verified record: which views a record gets, their prefixes,
targets, loss normalization and provenance."""
from __future__ import annotations

import json

from swemine.corpora.formats.base import make_step
from swemine.miners.errors import views as ev

STEPS = [make_step(0, tool_name="bash", tool_args={"command": "ls"}, action_text="ls", observation="a.py"),
         make_step(1, tool_name="bash", tool_args={"command": "python a.py"}, action_text="python a.py",
                   observation="Traceback (most recent call last):\nValueError: x", exit_code=1),
         make_step(2, tool_name="bash", tool_args={"command": "python a.py --ok"}, action_text="python a.py --ok",
                   observation="done", exit_code=0)]
TRAJ = {"problem_statement": "Fix a.py", "harness": "swe-agent", "steps": STEPS, "resolved": True}
CORRECTION = {"tool_name": "bash", "tool_args_json": "", "action_text": "python a.py --ok"}
RECORD = {"record_id": "d1", "trajectory_id": "t1", "instance_id": "acme__a-1", "harness_family": "swe-agent",
          "error_step": 1, "error_category": "traceback", "explanation": "a.py needs --ok",
          "proposed_correction": CORRECTION, "original_action": {"action_text": "python a.py"},
          "expected_effect": "", "correction_source": "natural_recovery", "status": "verified",
          "view_diagnosis": True, "view_recovery": True, "view_preference": True,
          "source_uri": "u", "source_locator": "", "source_sha256": None, "config_hash": "h"}
RECOVERY = [{"error_step": 1, "fix_step": 2, "flag": "traceback"}]


def _item(**record):
    return {"record": {**RECORD, **record}, "trajectory": TRAJ, "recoveries": RECOVERY}


def test_every_view_of_a_verified_record_in_order():
    rows = list(ev.build_views(_item()))
    assert [r["view"] for r in rows] == ["diagnosis", "recovery", "recovery_action_only", "preference",
                                         "recovered_error"]
    assert [r["loss_normalization"] for r in rows] == ["sample_mean", "token_sum", "token_sum", "sample_mean",
                                                       "token_sum"]
    assert len({r["record_id"] for r in rows}) == 5
    assert all((r["source_uri"], r["source_sha256"], r["config_hash"], r["diagnosis_record_id"]) == ("u", "", "h", "d1")
               for r in rows)


def test_view_switches_and_status():
    views = [r["view"] for r in ev.build_views(_item(view_diagnosis=False, view_preference=False))]
    assert views == ["recovery", "recovery_action_only", "recovered_error"]
    assert [r["view"] for r in ev.build_views(_item(view_recovery=False))] == ["diagnosis", "preference",
                                                                              "recovered_error"]
    assert list(ev.build_views(_item(status="rejected"))) == []
    # a status read back from a file is an equal string, not the same object
    status = "".join(["veri", "fied"])
    assert len(list(ev.build_views(_item(status=status)))) == 5
    # an unresolved (or unlabelled) run teaches no recovered error
    item = _item()
    item["trajectory"] = {**TRAJ, "resolved": None}
    assert "recovered_error" not in [r["view"] for r in ev.build_views(item)]


def test_diagnosis_view_answers_with_the_record_as_json():
    row = ev.diagnosis_view(RECORD, TRAJ)
    system, user, answer = row["messages"]
    assert [m["train"] for m in row["messages"]] == [False, False, True]
    assert user["content"].startswith("TASK:\nFix a.py\n\nTRAJECTORY:\n[step 0]")
    assert json.loads(answer["content"]) == {"error_step": 1, "error_category": "traceback",
                                             "explanation": "a.py needs --ok", "proposed_correction": CORRECTION}
    # keys in sorted order (deterministic rows); non-ASCII text stays readable
    assert list(json.loads(answer["content"])) == ["error_category", "error_step", "explanation",
                                                   "proposed_correction"]
    row = ev.diagnosis_view({**RECORD, "explanation": "der Aufruf schlägt fehl"}, TRAJ)
    assert "schlägt" in row["messages"][-1]["content"]
    assert not ev.VIEW_SCHEMA.field("record_id").nullable
    assert "(not recorded)" in ev.diagnosis_view(RECORD, {**TRAJ, "problem_statement": ""})["messages"][1]["content"]


def test_recovery_prefix_stops_before_the_error_step():
    with_hint, action_only = ev.recovery_views(RECORD, TRAJ)
    # system, task, then step 0 as action + observation: 4 turns before the hint / target
    assert [m["role"] for m in action_only["messages"]] == ["system", "user", "assistant", "user", "assistant"]
    assert action_only["messages"][1]["content"] == "Fix a.py"
    assert action_only["messages"][0]["content"].startswith("You are a software-engineering agent working in the "
                                                            "swe-agent harness")
    assert action_only["messages"][-1] == {"role": "assistant", "content": "python a.py --ok", "train": True}
    hint, target = with_hint["messages"][-2:]
    assert hint == {"role": "user", "content": "Note: a.py needs --ok", "train": False}
    # no expected effect recorded: the rationale says a different action is needed
    assert target["content"] == "A different action is needed.\n\npython a.py --ok" and target["train"]
    rec = {**RECORD, "expected_effect": "The script runs"}
    assert ev.recovery_views(rec, TRAJ)[0]["messages"][-1]["content"] == "The script runs.\n\npython a.py --ok"


def test_preference_and_recovered_error_rows():
    pref = ev.preference_view(RECORD, TRAJ)
    assert (pref["chosen"], pref["rejected"]) == ("python a.py --ok", "python a.py")
    assert json.loads(pref["extra_json"]) == {"evidence": "natural_recovery"}
    assert all(not m["train"] for m in pref["messages"]) and len(pref["messages"]) == 4
    (row,) = ev.recovered_error_views(RECORD, TRAJ, RECOVERY)
    # the prefix runs through the error observation (steps 0 and 1), then the agent's own fix is the target
    assert row["error_step"] == 1 and json.loads(row["extra_json"]) == {"fix_step": 2, "flag": "traceback"}
    assert row["messages"][-2]["content"].startswith("Traceback") and row["messages"][-1] == {
        "role": "assistant", "content": "python a.py --ok", "train": True}
    assert len(row["messages"]) == 2 + 2 * 2 + 1
    # a recovery whose error step differs from the diagnosis keeps its own step
    (other,) = ev.recovered_error_views({**RECORD, "error_step": 0}, TRAJ, RECOVERY)
    assert other["error_step"] == 1
