"""Stages 2–5 on real SWE-agent trajectories: rule diagnoser, the verification checks (docs/mining.md) (each failing by name), the
replay hook, the LLM diagnoser over a loopback OpenAI-compatible server (bad answers → rejects, budget →
not_diagnosed, re-run from the cache), and the training views."""
import copy
import json

import pytest

from swemine.clients.llm import LLMClient
from swemine.corpora.formats.base import make_step
from swemine.corpora.normalize import normalize_paths
from swemine.corpora.records import Filtered, to_table
from swemine.miners.errors import diagnosis as dg
from swemine.miners.errors.llm_diagnoser import LLMDiagnoser, diagnosis_messages
from swemine.miners.errors.mine import correction_counts, detect_fn, mine
from swemine.miners.errors.views import VIEW_SCHEMA
from tests.clients.fake_openai import FakeOpenAI

SWE = "swe-agent/auto-code-rover/results/swe-agent-results/cost_2_1"


@pytest.fixture(scope="module")
def t16139(corpora_dir):
    (traj,), _ = normalize_paths([str(corpora_dir / SWE / "django__django-16139.traj")])
    return traj


@pytest.fixture(scope="module")
def swe_trajs(corpora_dir):
    trajs, _ = normalize_paths([str(corpora_dir / SWE)])
    return trajs


def test_rule_diagnoser_failed_run_picks_unrecovered_error(t16139):
    assert t16139["resolved"] is None                       # read alone: the run's final_report.json is not joined
    item = dg.make_item(t16139)
    d = dg.RuleDiagnoser().diagnose(item)
    # the first source edit (step 6; 4 and 5 were rejected) came without any reproduction run before it
    assert (d["error_step"], d["error_category"], d["correction_source"]) == (6, "unverified_fix", "")
    assert d["evidence"] == [{"step": 6, "quote": 'password.help_text = password.help_text.format('
                                                  'f"../../{self.instance.pk}/password/")'}]
    assert d["proposed_correction"] is None                 # nothing grounds a correction: none is made up
    assert dg.verify(item, d) == []
    rec = dg.build_record(item, d, "rules-v2")
    assert (rec["view_recovery"], rec["view_preference"], rec["proposed_correction"]) == (False, False, None)
    assert json.loads(rec["extra_json"])["no_grounded_correction"] is True
    assert (rec["error_phase"], rec["error_leaf"]) == ("iterative_verification", "reproduction_script_failure")


def test_rule_diagnoser_resolved_run_uses_natural_recovery(t16139):
    item = dg.make_item({**t16139, "resolved": True})
    d = dg.RuleDiagnoser().diagnose(item)
    assert (d["error_step"], d["error_category"], d["correction_source"]) == (4, "edit_rejected", "natural_recovery")
    assert d["evidence"][0]["quote"] == "Your proposed edit has introduced new syntax error(s)."
    assert d["proposed_correction"] == dg.action_of(t16139["steps"][6])
    assert dg.verify(item, d) == []
    rec = dg.build_record(item, d, "rules-v1", dg.replay(item, d))
    assert rec["replay"]["supported"] is False and rec["recovery_step"] == 6
    assert rec["view_preference"] is True and rec["candidate_flags"][0] == {
        "step": 4, "source_step": 4, "flag": "edit_rejected", "evidence_step": 4, "phase": "fix_implementation",
        "leaf": "", "quote": "Your proposed edit has introduced new syntax error(s)."}
    assert rec["original_action"]["action_text"].startswith("edit 166:166\n        password.help_text")


def test_each_check_fails_by_name(t16139):
    item = dg.make_item({**t16139, "resolved": True})
    good = dg.RuleDiagnoser().diagnose(item)

    def fails(**change):
        d = copy.deepcopy(good)
        d.update(change)
        return dg.verify(item, d)

    assert fails(error_step=99) == ["step_exists"]
    assert fails(evidence=[{"step": 4, "quote": "this text is not in the trajectory"}]) == ["evidence_verbatim"]
    assert fails(evidence=[]) == ["evidence_verbatim"]
    step0 = t16139["steps"][0]["action_text"].strip()
    assert fails(error_step=0, evidence=[{"step": 0, "quote": step0}], error_category="edit_rejected") == [
        "flag_or_contradiction", "category_consistent"]
    assert fails(proposed_correction={"tool_name": "edit", "tool_args_json": "", "action_text": "edit 166-167"}) \
        == ["correction_valid"]
    assert fails(proposed_correction=dg.action_of(t16139["steps"][4])) == ["correction_differs"]
    assert fails(error_category="traceback") == ["category_consistent"]
    assert fails(error_category="incorrect_fix") == ["category_consistent"]       # resolved run
    rej = dg.verification_reject(item, {**good, "error_step": 99}, ["step_exists"])
    assert rej["stage"] == "verify" and rej["reason"] == "check_failed:step_exists"


def test_step_must_be_the_agents():
    steps = [make_step(0, role="assistant", tool_name="bash", action_text="python x.py",
                       observation="Traceback (most recent call last):\nValueError: bad"),
             make_step(1, role="tool", observation="ValueError: bad")]
    item = dg.make_item({"record_id": "r", "harness": "mini-swe-agent", "steps": steps, "resolved": False})
    d = {"error_step": 1, "error_category": "traceback", "evidence": [{"step": 1, "quote": "ValueError: bad"}],
         "explanation": "x", "proposed_correction": {"tool_name": "bash", "tool_args_json": "", "action_text": "ls"},
         "expected_effect": "", "confidence": 0.5}
    assert dg.verify(item, d) == ["step_is_actor", "flag_or_contradiction", "category_consistent"]
    assert dg.verify(item, {**d, "error_step": 0, "evidence": [{"step": 0, "quote": "ValueError:  bad"}]}) == []


def test_replay_hook_with_an_environment(t16139):
    class Env:
        def supports(self, traj):
            return True

        def run(self, traj, idx, action, seed):
            return action["action_text"] != traj["steps"][idx]["action_text"]

    item = dg.make_item({**t16139, "resolved": True})
    d = dg.RuleDiagnoser().diagnose(item)
    rep = dg.replay(item, d, Env())
    assert rep["supported"] and rep["original_pass"] is False and rep["corrected_pass"] is True
    assert rep["seed"] == dg.replay(item, d)["seed"]                                     # seeded from ids
    assert dg.build_record(item, d, "rules-v1", rep)["view_preference"] is True
    failed = dg.make_item(t16139)                         # no grounded correction: nothing to replay
    assert dg.replay(failed, dg.RuleDiagnoser().diagnose(failed), Env())["supported"] is False


def test_mine_rules_and_views(swe_trajs):
    res = mine(swe_trajs)
    assert len(swe_trajs) == 31
    cats = {}
    for r in res.records:
        cats[r["error_category"]] = cats.get(r["error_category"], 0) + 1
    assert sum(t["resolved"] is True for t in swe_trajs) == 11            # labels from final_report.json
    # tracebacks after the first source edit of an unresolved run are symptoms of the edits, not the error
    assert cats == {"edit_rejected": 9, "unverified_fix": 6, "premature_finish": 3, "repeated_action": 2}
    assert (len(res.records), len(res.rejects), len(res.filtered)) == (20, 0, 11)
    assert sorted({f["reason"] for f in res.filtered}) == ["no_error_candidates", "resolved_without_recovery"]
    views = {}
    for v in res.views:
        views[v["view"]] = views.get(v["view"], 0) + 1
    # only the 7 records with a grounded correction (the agent's own fix) get recovery / preference views
    assert {r["correction_source"] for r in res.records} == {"natural_recovery", ""}
    assert sum(r["correction_source"] == "natural_recovery" for r in res.records) == 7
    assert views == {"diagnosis": 20, "recovery": 7, "recovery_action_only": 7, "preference": 7,
                     "recovered_error": 8}
    assert all(r["resolved"] is not True or r["correction_source"] == "natural_recovery" for r in res.records)
    table = to_table(VIEW_SCHEMA, res.views)
    assert table.num_rows == 49
    rec = next(r for r in res.records if r["instance_id"] == "django__django-16139")
    assert (rec["resolved"], rec["error_step"], rec["correction_source"]) == (True, 4, "natural_recovery")
    row = next(v for v in res.views if v["diagnosis_record_id"] == rec["record_id"] and v["view"] == "diagnosis")
    assert [m["train"] for m in row["messages"]] == [False, False, True]
    assert json.loads(row["messages"][-1]["content"])["error_step"] == 4
    traj = next(t for t in swe_trajs if t["instance_id"] == "django__django-16139")
    act_only = next(v for v in res.views if v["diagnosis_record_id"] == rec["record_id"]
                    and v["view"] == "recovery_action_only")
    assert act_only["messages"][-1] == {"role": "assistant", "content": traj["steps"][6]["action_text"], "train": True}
    assert act_only["loss_normalization"] == "token_sum" and row["loss_normalization"] == "sample_mean"
    # the prefix stops before the error step: 4 steps, each an action + an observation, after system + task
    assert len(act_only["messages"]) == 2 + 2 * 4 + 1
    pref = [v for v in res.views if v["view"] == "preference"]
    assert all(v["chosen"] and v["rejected"] and v["chosen"] != v["rejected"] for v in pref)


def test_recovered_error_view_from_resolved_run(t16139):
    res = mine([{**t16139, "resolved": True}])
    rows = [v for v in res.views if v["view"] == "recovered_error"]
    assert [(v["error_step"], json.loads(v["extra_json"])["fix_step"]) for v in rows] == [(4, 6), (5, 6)]
    assert rows[0]["messages"][-1]["content"] == t16139["steps"][6]["action_text"]
    assert "Your proposed edit has introduced" in rows[0]["messages"][-2]["content"]


def _detected(trajs):
    """The trajectories the detect stage passes on (in ``mine``'s order)."""
    return [t for t in trajs if not isinstance(next(detect_fn({"trajectory": t})), Filtered)]


def test_llm_diagnoser_bad_answers_budget_and_rerun(swe_trajs, tmp_path):
    with_cands = _detected(swe_trajs)[:5]
    items = [dg.make_item(t) for t in with_cands]
    good = [{k: v for k, v in dg.RuleDiagnoser().diagnose(it).items() if k != "correction_source"} for it in items]
    answers = {}
    for i, (it, g) in enumerate(zip(items, good)):
        prompt = diagnosis_messages(it)[1]["content"]
        if i == 1:
            g = {**g, "evidence": [{"step": g["error_step"], "quote": "a quote that is not in the trajectory"}]}
        answers[prompt] = {0: json.dumps(g), 1: json.dumps(g), 2: "I think the error is at step 3.",
                           3: json.dumps({**g, "error_category": "cosmic_rays"}), 4: json.dumps(g)}[i]
    with FakeOpenAI(lambda body: answers[body["messages"][1]["content"]]) as srv:
        def run(budget):
            client = LLMClient(base_url=srv.base_url, model="judge-1", cache_dir=str(tmp_path / "c"),
                               max_requests=budget, timeout_s=5)
            return mine(with_cands, LLMDiagnoser(client)), client

        res, client = run(4)
        assert len(srv.chat_requests()) == 4
        assert sorted(r["reason"] for r in res.rejects) == ["check_failed:evidence_verbatim", "llm_bad_json",
                                                            "llm_schema"]
        assert [(r["status"], r["trajectory_id"]) for r in res.records] == [
            ("verified", with_cands[0]["trajectory_id"]), ("not_diagnosed", with_cands[4]["trajectory_id"])]
        ok = res.records[0]
        assert ok["diagnoser_model"] == "llm:judge-1" and ok["error_step"] == good[0]["error_step"]
        assert ok["correction_source"] == dg.RuleDiagnoser().diagnose(items[0])["correction_source"]
        views = [v["view"] for v in res.views if v["diagnosis_record_id"] == ok["record_id"]]
        assert views[:1] == ["diagnosis"] and ("recovery" in views) == ok["view_recovery"]
        # re-run with the same budget: the four answered prompts come from the cache, the fifth is sent
        res2, client2 = run(4)
        assert len(srv.chat_requests()) == 5 and client2.stats.cache_hits == 4
        assert [r["status"] for r in res2.records] == ["verified", "verified"]


def test_llm_diagnoser_concurrency_limit(swe_trajs, tmp_path):
    import time

    with_cands = _detected(swe_trajs)[:8]
    items = [dg.make_item(t) for t in with_cands]

    def slow(body):
        time.sleep(0.15)
        return "not json"

    with FakeOpenAI(slow) as srv:
        client = LLMClient(base_url=srv.base_url, model="m", cache_dir=str(tmp_path / "c"), concurrency=3, timeout_s=5)
        t0 = time.time()
        results = LLMDiagnoser(client).diagnose_many(items)
        elapsed = time.time() - t0
    assert [r["reason"] for r in results] == ["llm_bad_json"] * 8
    assert srv.max_inflight == 3 and len(srv.chat_requests()) == 8
    assert elapsed < 8 * 0.15                                   # 3 at a time, not one after another


def test_batch_api_file_then_offline_run_from_cache(swe_trajs, tmp_path):
    with_cands = _detected(swe_trajs)[:3]
    items = [dg.make_item(t) for t in with_cands]
    closed = "http://127.0.0.1:9/v1"                      # nothing listens there: any request would fail
    client = LLMClient(base_url=closed, model="batch-m", cache_dir=str(tmp_path / "c"), max_retries=0, timeout_s=1)
    llm = LLMDiagnoser(client)
    lines = llm.batch_lines(items)
    assert [ln["url"] for ln in lines] == ["/v1/chat/completions"] * 3
    assert lines[0]["body"]["model"] == "batch-m" and lines[0]["body"]["response_format"]["type"] == "json_schema"
    # what the Batch API returns: one output line per custom_id (one of them failed)
    answers = [{k: v for k, v in dg.RuleDiagnoser().diagnose(it).items() if k != "correction_source"} for it in items]
    out = [json.dumps({"id": f"b{i}", "custom_id": ln["custom_id"], "error": None,
                       "response": {"status_code": 200 if i < 2 else 500,
                                    "body": {"model": "batch-m", "choices": [{"index": 0, "message": {
                                        "role": "assistant", "content": json.dumps(a)}}]}}})
           for i, (ln, a) in enumerate(zip(lines, answers))]
    assert client.ingest_batch_output("\n".join(out)) == {"ingested": 2, "failed": 1}
    assert len(llm.batch_lines(items)) == 1                 # only the failed one is left to send
    res = mine(with_cands, LLMDiagnoser(LLMClient(base_url=closed, model="batch-m", cache_dir=str(tmp_path / "c"),
                                                  max_retries=0, timeout_s=1)))
    assert [r["status"] for r in res.records] == ["verified", "verified", "not_diagnosed"]
    assert json.loads(res.records[2]["extra_json"])["not_diagnosed"].startswith("llm_")


def test_steps_are_indexes_even_where_the_source_repeats_its_numbers(corpora_dir):
    path = corpora_dir / "moatless/evaluations/20240617_moatless_gpt-4o-2024-05-13/trajs/scikit-learn__scikit-learn-14983.json"
    (traj,), _ = normalize_paths([str(path)])
    assert [s["source_index"] for s in traj["steps"]][8:11] == [8, 8, 8]        # one transition, three actions
    item = dg.make_item(traj)
    d = dg.RuleDiagnoser().diagnose(item)
    # steps 13 and 14 send the same PlanToCode call and get the same "Span not found" answer: 14 repeats 13
    assert (d["error_step"], d["error_category"]) == (14, "repeated_action") and dg.verify(item, d) == []
    rec = dg.build_record(item, d, "rules-v1")
    assert (rec["error_step"], rec["error_source_step"]) == (14, 11) == (14, traj["steps"][14]["source_index"])


def test_llm_prompt_holds_evidence_and_answers_use_step_indexes(corpora_dir, tmp_path):
    iid = "astropy__astropy-7606"
    path = corpora_dir / "failure-labels/issuesolving-openhands/trajectories" / iid / f"{iid}.json"
    (traj,), _ = normalize_paths([str(path)])
    item = dg.make_item(traj)
    prompt = diagnosis_messages(item)
    user = prompt[1]["content"]
    cand = next(c for c in item["candidates"] if c["flag"] == "divergent_edit")
    assert cand["step"] == 7 and traj["steps"][7]["source_index"] == 16       # index 7, message 16
    assert f"step 7: divergent_edit [fix_implementation/issue_interference] evidence step 7: \"{cand['quote']}\"" in user
    assert "AGENT'S FINAL PATCH:\ndiff --git a/astropy/units/core.py" in user
    assert "REFERENCE FIX (the task's gold patch):\ndiff --git a/astropy/units/core.py" in user
    assert "HARNESS TESTS STILL FAILING:\nPASS_TO_PASS: astropy/units/tests/test_units.py::test_compose_roundtrip[]" in user
    # the target test passes, an existing one broke: the change interferes with other behaviour (taxonomy 2.4)
    assert cand["leaf"] == "issue_interference"
    assert "[step 7] assistant" in user and "iterative_verification:" in prompt[0]["content"]
    answer = {"error_step": 7, "error_category": "divergent_edit", "confidence": 0.7,
              "evidence": [{"step": 7, "quote": cand["quote"]}], "explanation": "overfits the reported case"}
    bad = {**answer, "evidence": [{"step": 6, "quote": cand["quote"]}]}          # the quote is not in step 6
    replies = iter([json.dumps(answer), json.dumps(bad)])
    with FakeOpenAI(lambda body: next(replies)) as srv:
        res = mine([traj], LLMDiagnoser(LLMClient(base_url=srv.base_url, model="m", cache_dir=str(tmp_path / "a"))))
        (rec,) = res.records
        assert (rec["error_step"], rec["error_source_step"], rec["correction_source"]) == (7, 16, "gold_patch")
        assert rec["proposed_correction"]["tool_args_json"].startswith('{"command": "git apply <<\'EOF\'\\ndiff')
        res = mine([traj], LLMDiagnoser(LLMClient(base_url=srv.base_url, model="m", cache_dir=str(tmp_path / "b"))))
        assert [r["reason"] for r in res.rejects] == ["check_failed:evidence_verbatim"]


def test_preference_prefers_the_correction_over_the_error(swe_trajs):
    """DPO pairs must teach the fix: ``rejected`` is the action the trajectory took at the decisive step, ``chosen``
    the grounded correction (never the other way round)."""
    res = mine(swe_trajs)
    by_traj = {t["trajectory_id"]: t for t in swe_trajs}
    records = {r["record_id"]: r for r in res.records}
    pref = [v for v in res.views if v["view"] == "preference"]
    assert pref
    for v in pref:
        rec = records[v["diagnosis_record_id"]]
        taken = by_traj[rec["trajectory_id"]]["steps"][rec["error_step"]]["action_text"]
        assert v["rejected"] == taken != v["chosen"]
        assert v["chosen"] == rec["proposed_correction"]["action_text"]


def test_correction_counts_split_grounded_corrections_and_missed_diagnoses():
    records = [{"correction_source": "gold_patch"}, {"correction_source": ""}, {"correction_source": "gold_patch"}]
    missed = [{"extra_json": json.dumps({"not_diagnosed": "endpoint_unreachable"})}, {"extra_json": ""}]
    assert correction_counts(records, missed) == {
        "corrections": {"grounded": 2, "no_grounded_correction": 1,
                        "by_source": {"gold_patch": 2, "no_grounded_correction": 1}},
        "diagnoses": {"verified": 3, "not_diagnosed": {"endpoint_unreachable": 1, "unknown": 1}}}
