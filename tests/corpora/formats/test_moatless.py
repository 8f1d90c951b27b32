"""Moatless v1 / v2 / v3 readers on the real moatless-tools files."""
import json

from swemine.corpora.formats.base import make_step
from swemine.corpora.formats.moatless import MoatlessV3, flag_header, render_output, tool_from_class, tree_path
from swemine.corpora.inputs import DocSource
from swemine.corpora.normalize import normalize_paths

V1_RUN = "moatless/evaluations/20240617_moatless_gpt-4o-2024-05-13"
V3_RUN = "moatless/evaluations/20241117_moatless_claude_3_5_sonnet_20241022"


def _by_id(trajs):
    return {t["instance_id"]: t for t in trajs}


def test_v1_run_folder(corpora_dir):
    trajs, rejects = normalize_paths([str(corpora_dir / V1_RUN / "trajs")])
    assert rejects == []
    assert len(trajs) == 66 and {t["source_format"] for t in trajs} == {"moatless-v1"}
    preds = {json.loads(line)["instance_id"]: json.loads(line)["model_patch"]
             for line in (corpora_dir / V1_RUN / "all_preds.jsonl").read_text().splitlines()}
    result = json.loads((corpora_dir / V1_RUN / "result.json").read_text())
    # instance ids line up with the run's label files (all_preds.jsonl / result.json)
    assert all(t["instance_id"] in preds and t["final_patch"] == preds[t["instance_id"]] for t in trajs)
    assert sum(t["instance_id"] in result["resolved"] for t in trajs) == 25
    t = _by_id(trajs)["django__django-11099"]
    assert (t["harness"], t["model_name"], t["exit_status"], t["n_steps"]) == (
        "moatless", "gpt-4o-2024-05-13", "finished", 7)
    assert [s["tool_name"] for s in t["steps"]] == [
        "SearchCode", "IdentifyCode", "PlanToCode", "EditCode", "PlanToCode", "EditCode", "PlanToCode"]
    search = t["steps"][0]
    assert json.loads(search["tool_args_json"])["file_pattern"] == "**/contrib/auth/validators.py"
    assert search["thought"].startswith("The user has specified that the regex")
    assert search["observation"].startswith("ranked_spans:\n  django/contrib/auth/validators.py: imports\n")
    plan = json.loads(t["steps"][2]["tool_args_json"])          # PlanToCode's nested action is unwrapped
    assert plan["file_path"] == "django/contrib/auth/validators.py" and plan["span_id"] == "ASCIIUsernameValidator"
    assert t["problem_statement"].startswith("UsernameValidator allows trailing newline")


def test_v1_retry_and_error_status(corpora_dir):
    (t,), _ = normalize_paths([str(corpora_dir / V1_RUN / "trajs" / "sympy__sympy-20322.json")])
    assert t["instance_id"] == "sympy__sympy-20322"            # info has no instance_id: from the file name
    assert t["exit_status"] == "rejected" and t["n_steps"] == 20
    extra = json.loads(t["extra_json"])
    assert extra["error"] == "Max cost reached." and extra["step_flags"] == {"7": {"retry": True}}
    assert t["steps"][7]["observation"].startswith("[moatless: retry=true]\nSpan not found: ceiling._eval_simplify.")


def test_v2_transitions(corpora_dir):
    trajs, rejects = normalize_paths([str(corpora_dir / "moatless/tests/trajectories")])
    assert rejects == [] and len(trajs) == 6 and {t["source_format"] for t in trajs} == {"moatless-v2"}
    t = next(t for t in trajs if t["source_uri"].endswith("django__django-9296/trajectory.json"))
    assert (t["instance_id"], t["model_name"], t["exit_status"], t["base_commit"]) == (
        "django__django-9296", "claude-3-5-sonnet-20240620", "rejected", "84322a29ce9b0940335f8ab3d60e55192bef1e50")
    assert [s["tool_name"] for s in t["steps"]] == [
        "SearchCode", "IdentifyCode", "DecideRelevance", "PlanToCode", "EditCode", "EditCode", "EditCode"]
    assert [s["source_index"] for s in t["steps"]] == [1, 2, 3, 4, 5, 5, 5]   # transition ids
    assert json.loads(t["extra_json"])["step_flags"] == {str(i): {"trigger": "retry"} for i in (4, 5, 6)}
    assert t["steps"][4]["observation"].startswith("[moatless: trigger=retry]\nCLASS has invalid code:")
    corr = next(t for t in trajs
                if t["source_uri"].endswith("scikit-learn__scikit-learn-13439/trajectory-correction.json"))
    assert corr["instance_id"] == "scikit-learn__scikit-learn-13439"       # from info.tags
    assert corr["exit_status"] == "finished"


def test_v3_tree_path_and_failure_flags(corpora_dir):
    trajs, rejects = normalize_paths([str(corpora_dir / V3_RUN)])
    trajs = [t for t in trajs if t["source_format"] == "moatless-v3"]
    assert len(trajs) == 6
    preds = {json.loads(line)["instance_id"]: json.loads(line)["model_patch"]
             for line in (corpora_dir / V3_RUN / "all_preds.jsonl").read_text().splitlines()}
    assert all(t["final_patch"] == preds[t["instance_id"]] for t in trajs)  # patches from the last node's file_context
    t = _by_id(trajs)["sympy__sympy-22005"]
    assert (t["model_name"], t["exit_status"], t["n_steps"]) == ("claude-3-5-sonnet-20241022", "finished", 7)
    assert [s["tool_name"] for s in t["steps"]] == ["ViewCode"] + ["EditAction"] * 5 + ["Finish"]
    assert [s["source_index"] for s in t["steps"]] == list(range(1, 8))   # node ids
    assert t["problem_statement"].startswith("<task>\ndetection of infinite solution request")
    assert json.loads(t["steps"][1]["tool_args_json"]) == {
        "command": "view", "path": "sympy/solvers/polysys.py", "view_range": [235, 245]}
    extra = json.loads(t["extra_json"])
    assert extra["step_flags"] == {"3": {"expect_correction": True, "fail_reason": "string_not_found"},
                                   "5": {"fail_reason": "no_tests"}}
    assert t["steps"][3]["observation"].startswith(
        "[moatless: expect_correction=true fail_reason=string_not_found]\nString 'def test_solve_linear_system")
    assert extra["path_node_ids"] == list(range(8))


def test_tree_path_follows_the_terminal_branch():
    def node(i, parent, terminal=False):
        return {"node_id": i, "parent_id": parent,
                "action": {"scratch_pad": f"t{i}", "action_args_class": "x.y.FindClassArgs", "class_name": f"C{i}"},
                "observation": {"message": f"m{i}", "terminal": terminal}}
    # 0 ─ 1 ─ 2 (abandoned branch) ; 1 ─ 3 ─ 4 (terminal) ; 5 hangs off 2 after the terminal node
    nodes = [{"node_id": 0, "parent_id": None, "message": "task"}, node(1, 0), node(2, 1), node(3, 1),
             node(4, 3, terminal=True), node(5, 2)]
    assert [n["node_id"] for n in tree_path(nodes)] == [0, 1, 3, 4]
    (t,) = MoatlessV3().parse({"metadata": {"instance_id": "samples__calc-1"}, "nodes": nodes},
                              DocSource("mem://x.json", "", "0" * 64))
    assert [s["thought"] for s in t["steps"]] == ["t1", "t3", "t4"]
    assert t["steps"][0]["tool_name"] == "FindClass" and t["exit_status"] == "terminal"
    assert [n["node_id"] for n in tree_path(nodes[:4])] == [0, 1, 3]      # no terminal: the last node


def test_helpers():
    assert tool_from_class("moatless.actions.edit.EditActionArguments") == "EditAction"
    assert tool_from_class("Args") == "Args"
    assert flag_header({"expect_correction": False, "fail_reason": None}) == ""
    assert render_output({"diff": "-a\n+b", "message": "ok", "lint_messages": []}) == "ok\ndiff:\n-a\n+b"
    assert make_step(0, observation=render_output(None))["observation"] == ""


def test_samples_parse():
    import pathlib
    root = pathlib.Path(__file__).resolve().parents[3] / "corpora" / "samples" / "trajectories"
    trajs, rejects = normalize_paths([str(root / d) for d in ("moatless-v1", "moatless-v2", "moatless-v3")])
    assert rejects == []
    assert sorted((t["source_format"], t["instance_id"]) for t in trajs) == [
        ("moatless-v1", "samples__calc-1"), ("moatless-v2", "samples__calc-2"), ("moatless-v3", "samples__calc-1")]
    assert all(t["repo"] == "samples/calc" for t in trajs)
