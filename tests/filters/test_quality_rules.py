"""Each quality rule's threshold, scope and evidence on small hand-built trajectories (docs/filters.md, quality)."""
import dataclasses
import json

import pytest

from swemine.corpora.records import Filtered
from swemine.filters.quality import (
    QualityConfig,
    action_key,
    candidate,
    check_quality,
    instance_decisions,
    quality_stage_fn,
    select_per_instance,
)


def step(idx, action="ls", role="assistant", tool=None, args=None, obs="ok"):
    return {"idx": idx, "role": role, "action_text": action, "tool_name": tool, "tool_args_json": args,
            "observation": obs}


def traj(steps, rid="t1", iid="i1"):
    return {"record_id": rid, "instance_id": iid, "steps": steps}


def test_config_is_immutable():
    # the config is hashed into the run's provenance
    with pytest.raises(dataclasses.FrozenInstanceError):
        QualityConfig().min_steps = 3


def test_min_steps_is_inclusive():
    cfg = QualityConfig(min_steps=2)
    assert check_quality(traj([step(0), step(1)]), cfg) is None                 # 2 steps = the minimum
    assert check_quality(traj([step(0)]), cfg) == (
        "empty_trajectory", {"rule": "min_steps", "n_steps": 1, "min_steps": 2})
    assert check_quality({"record_id": "x"}, QualityConfig())[0] == "empty_trajectory"   # no steps key at all


def test_what_counts_as_malformed():
    ok = QualityConfig()
    # an assistant, agent or role-less step with a blank action and no tool is malformed ...
    for role in ("assistant", "agent", None):
        assert check_quality(traj([step(0, action="  \n", role=role)]), ok)[1]["steps"] == [
            {"step": 0, "why": "no_action"}], role
    # ... but a blank user/system/tool turn is not, nor a blank action that called a tool
    assert check_quality(traj([step(0, role="user", action=""), step(1, role="system", action=None),
                               step(2, role="tool", action=""), step(3, action="", tool="bash", args='{"c": 1}')]),
                         ok) is None
    # tool arguments that are not JSON; valid JSON passes
    got = check_quality(traj([step(0, tool="edit", args="{oops"), step(1, tool="edit", args="[]")]), ok)
    assert got[1]["steps"] == [{"step": 0, "why": "tool_args_not_json"}]
    # a format-error marker in the observation, matched case-insensitively; one reason per step
    got = check_quality(traj([step(0, obs="FORMAT ERROR: try again"), step(1, action="", obs="format error")]), ok)
    assert got[1]["steps"] == [{"step": 0, "why": "marker:format error"}, {"step": 1, "why": "no_action"}]


def test_malformed_threshold_and_evidence_cap():
    steps = [step(i, action="") for i in range(12)]
    reason, ev = check_quality(traj(steps), QualityConfig(max_malformed_steps=11))
    # 12 bad steps > 11 allowed; evidence lists the first 10, counts all 12
    assert (reason, ev["n_bad"], len(ev["steps"]), ev["max_malformed_steps"]) == ("malformed_response", 12, 10, 11)
    assert ev["steps"][-1] == {"step": 9, "why": "no_action"}
    assert check_quality(traj(steps), QualityConfig(max_malformed_steps=12)) is None     # 12 = the allowance
    assert check_quality(traj(steps), QualityConfig(max_malformed_steps=13)) is None     # under the allowance
    assert check_quality(traj(steps), QualityConfig(malformed=False)) is None


def test_tool_misuse_threshold_markers_and_order():
    # markers: "command not found", "usage: " (stripped in the evidence), "invalid choice", ...
    obs = ["bash: foo: command not found", "usage: git [-v]", "error: argument cmd: invalid choice: 'x'",
           "Unknown command", "x: missing required argument"]
    steps = [step(i, obs=o) for i, o in enumerate(obs)]
    reason, ev = check_quality(traj(steps), QualityConfig(max_tool_errors=4))
    assert (reason, ev["n_errors"], ev["max_tool_errors"]) == ("tool_misuse", 5, 4)
    assert [e["marker"] for e in ev["steps"]] == ["command not found", "usage:", "invalid choice",
                                                  "unknown command", "missing required argument"]
    assert check_quality(traj(steps), QualityConfig(max_tool_errors=5)) is None          # 5 = the allowance
    assert check_quality(traj(steps[:3] + [step(3, action="")]), QualityConfig(max_tool_errors=2))[0] == \
        "malformed_response"                                                               # malformed is checked first
    many = [step(i, obs="command not found") for i in range(11)]
    assert len(check_quality(traj(many), QualityConfig())[1]["steps"]) == 10               # evidence capped at 10


def test_stage_fn_wraps_with_record_type_and_evidence():
    fn = quality_stage_fn("session")
    (out,) = fn(traj([], rid="r9"))
    assert isinstance(out, Filtered)
    assert (out["stage"], out["reason"], out["record_type"], out["record_id"]) == (
        "quality", "empty_trajectory", "session", "r9")
    assert json.loads(out["evidence_json"])["n_steps"] == 0
    t = traj([step(0)])
    assert fn(t) == [t]


def test_action_key_keeps_step_boundaries():
    # whitespace and case inside an action do not matter ...
    # (keys of at least 5 words: shorter ones are never duplicates)
    assert action_key(traj([step(0, "LS  -a src"), step(1, "cd x && make")])) == action_key(
        traj([step(0, "ls -a src"), step(1, " cd x && make ")]))
    # ... but where one action ends and the next begins does: one step "ls -a src cd x" is not two steps
    two = action_key(traj([step(0, "ls -a src"), step(1, "cd x && make")]))
    assert two and two != action_key(traj([step(0, "ls"), step(1, "-a src cd x && make")]))
    assert two != action_key(traj([step(0, "ls -a src cd x && make")]))


def test_candidate_is_the_record_stand_in():
    t = {**traj([step(0, "cat pkg/a.py and then some")], rid="r"), "source_uri": "a/x.traj", "source_locator": "3"}
    c = candidate(t, QualityConfig())
    assert c == (1, "r", "a/x.traj", "3", action_key(t), "i1") and c.instance == "i1"
    assert candidate(t, QualityConfig(dedup_actions=False)).action_key == ""     # no key taken when unused
    assert candidate({"instance_id": "", "record_id": "r"}, QualityConfig()).instance == "record:r"
    assert candidate({}, QualityConfig()).instance == "record:"


def test_records_sharing_an_id_are_taken_in_source_order():
    """One run read under two paths (a doubled corpus): the copy from the first path is kept, whatever the order
    the records arrive in; the other is the duplicate."""
    steps = [step(0, "cat pkg/a.py"), step(1, "cat pkg/b.py")]
    a = {**traj(steps, rid="r"), "source_uri": "a/run.traj", "source_locator": ""}
    b = {**traj(steps, rid="r"), "source_uri": "b/run.traj", "source_locator": ""}
    for order in ([a, b], [b, a]):
        out = select_per_instance(order, QualityConfig())
        assert [(r.get("source_uri"), r.get("reason")) for r in out] == [
            ("a/run.traj", None), ("b/run.traj", "duplicate_actions")]


def test_instance_decisions_name_the_candidates_not_simply_kept():
    steps = [step(0, "cat pkg/a.py"), step(1, "cat pkg/b.py")]
    short, twin = traj(steps, rid="a"), traj(steps, rid="b")
    long_ = traj(steps + [step(2, "grep -rn x pkg")], rid="c")
    cfg = QualityConfig(keep_shortest=1)
    cands = [candidate(t, cfg) for t in (long_, twin, short)]
    dup = ("duplicate_actions", {"rule": "same_action_sequence", "kept_record_id": "a", "instance_id": "i1",
                                 "action_hash": action_key(short)[:16]})
    beyond = ("not_n_shortest", {"rule": "keep_n_shortest", "n": 1, "n_steps": 3, "instance_id": "i1"})
    assert instance_decisions(cands, cfg) == [(cands[1], (dup,)), (cands[0], (beyond,))]     # in selection order
    # copies of one record (every candidate field equal): one outcome per copy, in the order the rules take them
    assert instance_decisions([cands[2], cands[2]], cfg) == [(cands[2], (None, dup))]


def test_per_instance_order_duplicates_and_keep_n():
    long_ = traj([step(0, "cat pkg/a.py"), step(1, "cat pkg/b.py"), step(2, "cat pkg/c.py")], rid="a-long")
    short = traj([step(0, "cat pkg/a.py"), step(1, "cat pkg/b.py")], rid="z-short")
    twin = traj([step(0, "CAT pkg/a.py"), step(1, "cat pkg/b.py ")], rid="m-twin")   # z-short's actions, normalized
    other = traj([step(0, "grep -rn x pkg"), step(1, "cat pkg/y.py")], rid="b-other")
    out = select_per_instance([long_, short, twin, other], QualityConfig())
    # order: fewest steps, then record id -> b-other, m-twin, z-short (dup of m-twin), a-long
    assert [(r["record_id"], r.get("reason")) for r in out] == [
        ("b-other", None), ("m-twin", None), ("z-short", "duplicate_actions"), ("a-long", None)]
    ev = json.loads(out[2]["evidence_json"])
    assert (ev["kept_record_id"], ev["instance_id"], out[2]["stage"]) == ("m-twin", "i1", "quality_group")
    assert ev["action_hash"] == action_key(short)[:16]
    # keep the 2 shortest distinct ones; the duplicate is reported as a duplicate, not as beyond N
    out = select_per_instance([long_, short, twin, other], QualityConfig(keep_shortest=2))
    assert [(r["record_id"], r.get("reason")) for r in out] == [
        ("b-other", None), ("m-twin", None), ("z-short", "duplicate_actions"), ("a-long", "not_n_shortest")]
    assert json.loads(out[3]["evidence_json"]) == {"rule": "keep_n_shortest", "n": 2, "n_steps": 3,
                                                   "instance_id": "i1"}
    # every record beyond N is reported, not only the first
    out = select_per_instance([long_, short, other], QualityConfig(keep_shortest=1))
    assert [(r["record_id"], r.get("reason")) for r in out] == [
        ("b-other", None), ("z-short", "not_n_shortest"), ("a-long", "not_n_shortest")]
    # dedup off: the twins both stay
    out = select_per_instance([short, twin], QualityConfig(dedup_actions=False))
    assert [r["record_id"] for r in out] == ["m-twin", "z-short"]
