
"""SWE-agent 0.x run folders: final_report.json lists only resolved ids, but its stats say every generated
instance was evaluated (generated == with_logs == non-empty patches in all_preds.jsonl), so the others are
unresolved; the model comes from the run's args.yaml (agent.model.model_name)."""
import json
import pathlib

from swemine.corpora.inputs import Unit
from swemine.corpora.normalize import normalize_paths, read_unit

RUN = "external/swe-agent-old-acr-cost22"


def _preds(path):
    return {json.loads(line)["instance_id"]: json.loads(line)["model_patch"] or ""
            for line in path.read_text().splitlines() if line.strip()}


def test_labels_and_model(corpora_dir):
    run = corpora_dir / RUN
    trajs, rejects = normalize_paths([str(run)])
    assert [r["reason"] for r in rejects] == ["unsupported_file_type"]                  # PROVENANCE.md
    report = json.loads((run / "final_report.json").read_text())
    preds = _preds(run / "all_preds.jsonl")
    assert report["stats"]["generated"] == report["stats"]["with_logs"] == sum(bool(p.strip()) for p in preds.values())
    assert len(trajs) == 30 and {t["model_name"] for t in trajs} == {"gpt4-0125"}
    for t in trajs:
        evaluated = bool(preds.get(t["instance_id"], "").strip())
        if t["instance_id"] in report["resolved"]:
            assert t["resolved"] is True
        elif evaluated:
            assert t["resolved"] is False
        else:
            assert t["resolved"] is None and t["resolved_source"] == ""
        if t["resolved"] is not None:
            assert t["resolved_source"] == f"final_report.json:{pathlib.Path(run).name}/final_report.json"     # portable
    assert [sum(t["resolved"] is v for t in trajs) for v in (True, False, None)] == [1, 24, 5]


def test_no_false_labels_when_the_counts_disagree(tmp_path):
    (tmp_path / "final_report.json").write_text(json.dumps(
        {"stats": {"generated": 3, "with_logs": 3}, "resolved": ["a__b-1"]}))
    (tmp_path / "all_preds.jsonl").write_text("".join(json.dumps(
        {"instance_id": i, "model_patch": "diff", "model_name_or_path": "run"}) + "\n" for i in ("a__b-1", "a__b-2")))
    labels = [r for r in read_unit(Unit(str(tmp_path / "final_report.json")))]
    assert [(lb["instance_id"], lb["resolved"]) for lb in labels] == [("a__b-1", True)]


def test_args_yaml_labels_every_instance_of_the_folder(tmp_path):
    (tmp_path / "args.yaml").write_text("agent:\n  model:\n    model_name: gpt4\nenvironment:\n  split: test\n")
    (tmp_path / "x__y-1.traj").write_text("{}")
    (tmp_path / "all_preds.jsonl").write_text(json.dumps({"instance_id": "x__y-2", "model_patch": ""}) + "\n")
    labels = list(read_unit(Unit(str(tmp_path / "args.yaml"))))
    assert [(lb["instance_id"], lb["model_name"], lb["resolved"]) for lb in labels] == [
        ("x__y-1", "gpt4", None), ("x__y-2", "gpt4", None)]
