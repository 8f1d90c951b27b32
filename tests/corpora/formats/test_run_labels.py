"""Run-metadata label readers on the real run files, and how their labels join onto trajectories."""
import pathlib
from collections import Counter

from swemine.corpora.inputs import Unit
from swemine.corpora.normalize import apply_labels, normalize_paths, read_unit

SAMPLES = pathlib.Path(__file__).resolve().parents[3] / "corpora" / "samples" / "trajectories"
MINI = "mini-swe-agent/swebench_results/20251118_gemini-3-pro-74pct"
MOATLESS = "moatless/evaluations/20240617_moatless_gpt-4o-2024-05-13"


def _labels(path):
    recs = list(read_unit(Unit(str(path))))
    assert all(r.get("kind") == "label" for r in recs), [r.get("reason") for r in recs]
    return recs


def test_moatless_result_json(corpora_dir):
    labels = _labels(corpora_dir / MOATLESS / "result.json")
    assert len(labels) == 299 and Counter(lb["resolved"] for lb in labels) == {True: 74, False: 225}
    assert {lb["label_source"] for lb in labels} == {"result.json"} and labels[0]["priority"] == 40
    assert labels[0]["run_root"] == str(corpora_dir / MOATLESS)


def test_all_preds_jsonl(corpora_dir):
    labels = _labels(corpora_dir / MOATLESS / "all_preds.jsonl")
    assert len(labels) == 300 and sum(bool(lb["final_patch"]) for lb in labels) == 289
    assert {lb["model_name"] for lb in labels} == {"20240616_moatless_temp_0_2_gpt-4o-2024-05-13"}
    assert {lb["resolved"] for lb in labels} == {None} and labels[0]["source"].endswith("all_preds.jsonl#line:1")


def test_preds_json_keyed_by_instance(corpora_dir):
    labels = _labels(corpora_dir / MINI / "trajs" / "preds.json")
    assert len(labels) == 500 and sum(bool(lb["final_patch"]) for lb in labels) == 499
    assert {lb["model_name"] for lb in labels} == {"google/gemini-3-pro-preview"}
    assert labels[0]["run_root"] == str(corpora_dir / MINI / "trajs")


def test_openhands_example_model_output_is_a_predictions_list(corpora_dir):
    labels = _labels(corpora_dir / "openhands/evaluation/benchmarks/swe_bench/examples/example_model_output.json")
    assert len(labels) == 30 and sum(bool(lb["final_patch"]) for lb in labels) == 26
    assert labels[0]["instance_id"] == "sphinx-doc__sphinx-8721" and labels[0]["model_name"] == "openhands"


def test_sb_cli_report(corpora_dir):
    [path] = (corpora_dir / MINI / "trajs" / "sb-cli-reports").glob("*.json")
    labels = _labels(path)
    assert Counter(lb["resolved"] for lb in labels) == {True: 371, False: 129}
    assert labels[0]["run_root"] == str(corpora_dir / MINI / "trajs")        # the folder above sb-cli-reports/


def test_harness_report_applies_to_the_run(corpora_dir):
    [label] = _labels(corpora_dir / MINI / "logs" / "django__django-14376" / "report.json")
    assert (label["instance_id"], label["resolved"], label["priority"]) == ("django__django-14376", True, 50)
    assert label["run_root"] == str(corpora_dir / MINI)


def test_results_summary_and_exit_statuses(corpora_dir):
    summary = _labels(corpora_dir / MINI / "results_summary.json")
    assert Counter(lb["resolved"] for lb in summary) == {True: 371, False: 129}
    statuses = [lb for p in sorted((corpora_dir / MINI / "trajs").glob("exit_statuses_*.yaml")) for lb in _labels(p)]
    assert len(statuses) == 515 and Counter(lb["exit_status"] for lb in statuses) == {"Submitted": 500, "RetryError": 15}
    # an instance that failed with RetryError first and was submitted on a retry: the later file wins
    retried = [lb for lb in statuses if lb["instance_id"] == "astropy__astropy-14096"]
    traj = {"source_uri": str(corpora_dir / MINI / "trajs" / "x" / "x.traj.json"), "resolved": None,
            "resolved_source": "", "final_patch": "", "final_patch_source": "", "model_name": "", "exit_status": ""}
    assert {lb["exit_status"] for lb in retried} == {"RetryError", "Submitted"}
    assert apply_labels(traj, retried)["exit_status"] == "Submitted"


def test_swe_agent_final_report_joins(corpora_dir):
    run = corpora_dir / "swe-agent/auto-code-rover/results/swe-agent-results/cost_2_1"
    labels = _labels(run / "final_report.json")
    # stats: generated == with_logs == 245 == the non-empty patches of all_preds.jsonl, 28 of them resolved:
    # the other 217 were evaluated and not resolved
    assert Counter(lb["resolved"] for lb in labels) == {True: 28, False: 217}
    trajs, _ = normalize_paths([str(run)])
    assert Counter(t["resolved"] for t in trajs) == {True: 11, False: 18, None: 2}
    assert all(t["resolved_source"].startswith("final_report.json:") for t in trajs if t["resolved"] is not None)
    assert len(trajs) == 31 and Counter(t["final_patch_source"].split(":")[0] for t in trajs) == {"trajectory": 29, "": 2}


def test_sample_result_json_and_final_report():
    result = _labels(SAMPLES / "run-labels" / "result.json")
    assert {lb["instance_id"]: lb["resolved"] for lb in result} == {
        "samples__calc-1": True, "samples__calc-2": False, "samples__calc-3": False}
    final = _labels(SAMPLES / "run-labels" / "final_report.json")
    assert [(lb["instance_id"], lb["resolved"]) for lb in final] == [("samples__calc-2", True)]
