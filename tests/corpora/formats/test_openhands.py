"""OpenHands readers: eval/resolver output.jsonl event histories and llm_completions snapshots."""
import pathlib

from swemine.corpora.formats.openhands import canonical_repo
from swemine.corpora.normalize import normalize_paths

SAMPLES = pathlib.Path(__file__).resolve().parents[3] / "corpora" / "samples" / "trajectories" / "openhands"
COMPLETIONS = ("openhands/evaluation/evaluation_outputs/outputs/princeton-nlp__SWE-bench_Verified-test/CodeActAgent/"
               "claude-3-5-sonnet-20241022_maxiter_50_N_v0.15.0-no-hint-no-condensation-run_1/llm_completions")


def _read(path):
    trajs, rejects = normalize_paths([str(path)])
    assert rejects == []
    return {t["instance_id"]: t for t in trajs}


def test_multi_swe_bench_output(corpora_dir):
    trajs = _read(corpora_dir / "openhands/evaluation/benchmarks/multi_swe_bench/examples/output.jsonl")
    assert sorted(trajs) == ["ponylang__ponyc-4588", "ponylang__ponyc-4593", "ponylang__ponyc-4595"]
    t = trajs["ponylang__ponyc-4595"]
    assert t["source_format"] == "openhands-output" and t["source_locator"] == "line:1"
    assert t["n_steps"] == 23 and t["repo"] == "ponylang/ponyc"
    assert t["model_name"] == "openai/openrouter-llama-4-maverick"
    assert t["base_commit"] == "f8a2feebba3aea298bde89d445ad35ca48602ca7"
    assert t["final_patch"].splitlines()[0] == "diff --git a/src/libponyc/ast/parser.c b/src/libponyc/ast/parser.c"
    assert t["resolved"] is None and t["exit_status"] == "finished"
    first = t["steps"][0]
    assert (first["tool_name"], first["action_text"], first["obs_exit_code"]) == (
        "execute_bash", "ls -l /workspace/ponylang__ponyc__0.1", 0)
    assert first["observation"].startswith("total 300")
    assert first["source_index"] == 4          # system, user message, recall and its observation are not steps
    assert t["steps"][-1]["tool_name"] == "finish"
    assert t["problem_statement"].startswith("ponyc segfaults when trying to match using a single element tuple form")
    # 4593: an `error` observation that answers no action becomes its own step (role tool)
    errs = [s for s in trajs["ponylang__ponyc-4593"]["steps"] if s["role"] == "tool"]
    assert len(errs) == 1 and errs[0]["observation"].startswith("Parameter 'command' is expected to be one of")
    edits = [s for s in trajs["ponylang__ponyc-4593"]["steps"] if s["tool_name"] == "str_replace_editor"]
    assert len(edits) == 20 and edits[0]["tool_args_json"].startswith('{"command": "view"')
    assert trajs["ponylang__ponyc-4588"]["n_steps"] == 50
    assert trajs["ponylang__ponyc-4588"]["exit_status"].startswith("RuntimeError: Agent reached maximum iteration")


def test_nunu_java_output(corpora_dir):
    t = _read(corpora_dir / "openhands/nunu0404-Python_OpenHands/output.jsonl")["alibaba__fastjson2-2775"]
    assert t["n_steps"] == 20 and t["model_name"] == "openai/gpt-5-ca"
    assert t["repo"] == "alibaba/fastjson2"                 # from mswebench/alibaba_m_fastjson2
    assert t["final_patch"].startswith("diff --git a/core/src/main/java/com/alibaba/fastjson2/JSON.java")
    codes = [s["obs_exit_code"] for s in t["steps"] if s["tool_name"] == "execute_bash"]
    assert len(codes) == 13 and codes.count(1) == 5 and codes.count(-1) == 1
    assert t["steps"][-1]["thought"] == "All done! What's next on the agenda?"


def test_resolver_output_old_flat_events(corpora_dir):
    trajs = _read(corpora_dir / "openhands/tests/unit/resolver/mock_output/output.jsonl")
    assert sorted(trajs) == ["neubig__pr-viewer-1", "neubig__pr-viewer-5"]
    t = trajs["neubig__pr-viewer-5"]
    assert t["n_steps"] == 4 and t["repo"] == "neubig/pr-viewer"
    assert [s["tool_name"] for s in t["steps"]] == ["execute_bash", "execute_ipython_cell", "execute_bash", "finish"]
    assert t["steps"][0]["action_text"] == "touch LICENSE" and t["steps"][0]["obs_exit_code"] == 0
    assert t["final_patch"].startswith("diff --git a/LICENSE b/LICENSE")
    assert t["problem_statement"] == "Add MIT license\nWe can license this repo under the MIT license."
    assert t["resolved"] is None                            # `success` is the resolver's own LLM judgement
    assert '"resolver_success": true' in t["extra_json"]
    assert trajs["neubig__pr-viewer-1"]["n_steps"] == 22


def test_llm_completion_snapshots(corpora_dir):
    trajs = _read(corpora_dir / COMPLETIONS)
    assert {k: v["n_steps"] for k, v in trajs.items()} == {
        "astropy__astropy-12907": 10, "astropy__astropy-13033": 11, "astropy__astropy-14182": 29,
        "django__django-11099": 17}
    t = trajs["astropy__astropy-12907"]
    assert t["source_format"] == "openhands-llm-completion" and t["harness"] == "openhands"
    assert t["model_name"] == "litellm_proxy/claude-3-5-sonnet-20241022" and t["repo"] == "astropy/astropy"
    assert t["steps"][0]["tool_name"] == "execute_bash"
    assert t["steps"][0]["action_text"] == "ls -R /workspace/astropy__astropy__4.3"
    assert t["steps"][0]["obs_exit_code"] == 0
    assert t["steps"][-1]["tool_name"] == "finish" and t["steps"][-1]["observation"] == ""
    assert t["problem_statement"].startswith("Modeling's `separability_matrix` does not compute separability")
    assert t["final_patch"] == "" and t["resolved"] is None


def test_samples():
    trajs, rejects = normalize_paths([str(SAMPLES)])
    assert rejects == []
    by_fmt = {(t["source_format"], t["instance_id"]): t for t in trajs}
    one = by_fmt[("openhands-output", "samples__calc-1")]
    assert [s["tool_name"] for s in one["steps"]] == ["execute_bash", "", "str_replace_editor", "", "finish"]
    assert [s["role"] for s in one["steps"]] == ["assistant", "tool", "assistant", "assistant", "assistant"]
    assert one["steps"][0]["obs_exit_code"] == 1
    assert one["steps"][2]["tool_args_json"] == (
        '{"command": "str_replace", "new_str": "    if b == 0:\\n        return None\\n    return a / b", '
        '"old_str": "    return a / b", "path": "/workspace/calc/calc/ops.py"}')
    assert one["steps"][3]["thought"] == "SAMPLE. Should I also update the docs?"
    assert one["steps"][3]["observation"].startswith("SAMPLE. Please continue working")
    assert one["resolved"] is True and one["resolved_source"] == "trajectory"   # test_result.report.resolved
    assert one["base_commit"] == "0000000000000000000000000000000000000001"
    two = by_fmt[("openhands-output", "samples__calc-2")]
    assert [s["tool_name"] for s in two["steps"]] == ["execute_bash", "execute_ipython_cell", "finish"]
    snap = by_fmt[("openhands-llm-completion", "samples__calc-2")]
    assert [s["tool_name"] for s in snap["steps"]] == ["str_replace_editor", "execute_bash", "", "finish"]
    assert [s["obs_exit_code"] for s in snap["steps"]] == [None, 1, None, None]
    assert snap["steps"][2]["observation"] == "SAMPLE. Please continue working on the task."
    assert snap["model_name"] == "sample/model-c"


def test_canonical_repo():
    assert canonical_repo("mswebench/alibaba_m_fastjson2") == "alibaba/fastjson2"
    assert canonical_repo("Ponylang/ponyc") == "ponylang/ponyc"


def test_run_metadata_without_instance_labels_is_rejected(corpora_dir):
    path = corpora_dir / COMPLETIONS.rsplit("/", 1)[0] / "metadata.json"
    trajs, rejects = normalize_paths([str(path)])
    assert trajs == [] and [r["reason"] for r in rejects] == ["unknown_format"]
    assert "agent_class" in rejects[0]["message"]
