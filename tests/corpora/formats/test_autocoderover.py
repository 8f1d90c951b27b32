"""AutoCodeRover instance folders (a directory format) and the run's new_eval_results/report.json labels."""
import json
import pathlib
import shutil

from swemine.corpora.formats.autocoderover import is_acr_dir, read_acr_dir
from swemine.corpora.inputs import expand_inputs
from swemine.corpora.normalize import normalize_paths

RUN = "autocoderover/results/acr-run-1"
ASTROPY = "applicable_patch/astropy__astropy-14995_2024-04-06_13-44-56"


def test_instance_folders_are_units(corpora_dir):
    units = [u for u in expand_inputs([str(corpora_dir / RUN)]) if u.kind != "file"]
    assert len(units) == 9 and {u.kind for u in units} == {"autocoderover-dir"}
    assert is_acr_dir({"meta.json", "conversation_round_0.json"}) and not is_acr_dir({"meta.json"})


def test_run_with_labels(corpora_dir):
    trajs, rejects = normalize_paths([str(corpora_dir / RUN)])
    assert len(trajs) == 9 and {t["source_format"] for t in trajs} == {"autocoderover-dir"}
    report = json.loads((corpora_dir / RUN / "new_eval_results/report.json").read_text())
    for t in trajs:
        assert t["resolved"] is (t["instance_id"] in report["resolved"])
        assert t["resolved_source"] == f"result.json:{pathlib.Path(RUN).name}/new_eval_results/report.json"   # portable
    assert sum(t["resolved"] for t in trajs) == 5
    # run-level files that are not trajectories are rejected with a reason, never dropped
    reasons = {pathlib.Path(r["source_uri"]).name: r["reason"] for r in rejects}
    assert reasons["README.md"] == reasons["tasks.txt"] == "unsupported_file_type"
    assert reasons["stats.json"] == "unknown_format"


def test_astropy_steps(corpora_dir):
    (t,) = list(read_acr_dir(str(corpora_dir / RUN / ASTROPY)))
    assert (t["instance_id"], t["repo"], t["model_name"], t["exit_status"]) == (
        "astropy__astropy-14995", "astropy/astropy", "gpt-4-0125-preview", "APPLICABLE_PATCH")
    meta = json.loads((corpora_dir / RUN / ASTROPY / "meta.json").read_text())
    assert t["base_commit"] == meta["task_info"]["base_commit"]
    assert [s["tool_name"] for s in t["steps"]] == [
        "search_class", "search_method_in_class", "", "search_class", "", "search_method_in_file", "write_patch"]
    assert [s["obs_exit_code"] for s in t["steps"]] == [0, 1, None, 0, None, 0, None]   # call_ok false -> 1
    assert [s["source_index"] for s in t["steps"]] == [3, 3, 6, 8, 11, 13, 16]
    first, second = t["steps"][:2]
    assert json.loads(second["tool_args_json"]) == {"class_name": "NDDataRef", "method_name": "multiply"}
    assert first["observation"].startswith('Result of search_class("NDDataRef"):')
    assert second["observation"].startswith(
        'Result of search_method_in_class("multiply", "NDDataRef"):\nCould not find')
    assert first["thought"] and second["thought"] == ""
    assert t["steps"][-1]["action_text"] == (corpora_dir / RUN / ASTROPY / "agent_patch_raw_1").read_text()
    assert t["final_patch"] == (corpora_dir / RUN / ASTROPY / "extracted_patch_1.diff").read_text()
    assert t["problem_statement"].startswith("In v5.3, NDDataRef mask propagation fails")
    assert json.loads(t["extra_json"]) == {"n_rounds": 4, "n_tool_calls": 5, "total_cost": 0.18487}


def test_folder_problems_become_rejects(corpora_dir, tmp_path):
    good = corpora_dir / RUN / ASTROPY
    broken = tmp_path / "astropy__astropy-14995_x"
    shutil.copytree(good, broken)
    (broken / "conversation_round_2.json").write_text('[{"role": "user", "content": "cut')
    (rej,) = list(read_acr_dir(str(broken)))
    assert (rej["reason"], rej["source_uri"]) == ("truncated_json", f"{broken}/conversation_round_2.json")
    (broken / "conversation_round_2.json").write_bytes((good / "conversation_round_2.json").read_bytes())
    (broken / "meta.json").write_text('{"task_info": "not a dict"}')
    (rej,) = list(read_acr_dir(str(broken)))
    assert (rej["stage"], rej["reason"]) == ("parse", "malformed:autocoderover-dir")
    (broken / "meta.json").write_text('{"task_info": {}}')
    (rej,) = list(read_acr_dir(str(broken)))
    assert rej["reason"] == "missing_instance_id"


def test_sample_folder():
    root = pathlib.Path(__file__).resolve().parents[3] / "corpora/samples/trajectories/autocoderover"
    (t,) = list(read_acr_dir(str(root / "samples__calc-2_2026-02-11_09-30-00")))
    assert (t["instance_id"], t["repo"], t["model_name"]) == ("samples__calc-2", "samples/calc", "sample-model")
    assert [s["tool_name"] for s in t["steps"]] == [
        "search_class", "search_method_in_class", "", "search_method_in_class", "write_patch"]
    assert [s["obs_exit_code"] for s in t["steps"]] == [0, 1, None, 0, None]
    assert t["steps"][0]["observation"].endswith("<class>Calculator</class>")         # each call: its own result
    assert t["steps"][1]["observation"] == ('Result of search_method_in_class("reset", "Calculator"):\n'
                                            "Could not find method reset in class Calculator.\n\n"
                                            "Let's analyze collected context first")
    assert t["final_patch"].startswith("diff --git a/calc/calculator.py b/calc/calculator.py")
