"""Who&When multi-agent failure logs: steps indexed like history, so mistake_step compares directly."""
import json

from swemine.corpora.normalize import normalize_paths

ROOT = "who-and-when/Who_and_When"


def test_all_logs(corpora_dir):
    trajs, rejects = normalize_paths([str(corpora_dir / ROOT)])
    assert rejects == [] and len(trajs) == 82
    assert {t["harness"] for t in trajs} == {"who-and-when"}
    assert sum(t["instance_id"].startswith("who-and-when/Hand-Crafted/") for t in trajs) == 42
    for t in trajs:
        raw = json.loads((corpora_dir / ROOT / (t["instance_id"].split("/", 1)[1] + ".json")).read_text())
        assert [s["source_index"] for s in t["steps"]] == list(range(len(raw["history"])))
        extra = json.loads(t["extra_json"])
        assert extra["mistake_step"] == int(raw["mistake_step"]) and extra["mistake_agent"] == raw["mistake_agent"]
        assert t["resolved"] is False                   # every log is a failed run (is_correct / is_corrected "False")


def test_hand_crafted_17(corpora_dir):
    (t,), _ = normalize_paths([str(corpora_dir / ROOT / "Hand-Crafted/17.json")])
    assert t["instance_id"] == "who-and-when/Hand-Crafted/17" and t["n_steps"] == 37
    extra = json.loads(t["extra_json"])
    assert extra["mistake_agent"] == "WebSurfer" and extra["mistake_step"] == 8
    assert extra["ground_truth"] == "McDonald's"
    assert extra["mistake_reason"].startswith("WebSurfer did not retrieve a list of eateries")
    step = t["steps"][extra["mistake_step"]]
    assert step["role"] == extra["mistake_agent"]
    assert step["action_text"].startswith("I typed 'eateries near 275 Great Neck Rd, Waterfor")
    assert t["problem_statement"].startswith("What is the closest eatery to Harkness Memorial State Park")


def test_terminal_turns_are_observations(corpora_dir):
    trajs, _ = normalize_paths([str(corpora_dir / ROOT / "Algorithm-Generated")])
    term = [s for t in trajs for s in t["steps"] if s["role"] == "Computer_terminal"]
    assert term and all(s["action_text"] == "" and s["observation"] for s in term)
    assert {s["obs_exit_code"] for s in term if s["observation"].startswith("exitcode: 0")} == {0}
    assert any(s["obs_exit_code"] == 1 for s in term)


def test_sample_log():
    import pathlib
    root = pathlib.Path(__file__).resolve().parents[3] / "corpora/samples/trajectories/who-and-when"
    (t,), rejects = normalize_paths([str(root)])
    assert rejects == [] and t["instance_id"] == "who-and-when/samples/calc-1"
    extra = json.loads(t["extra_json"])
    assert t["steps"][extra["mistake_step"]]["role"] == extra["mistake_agent"] == "Coder"
    assert t["steps"][4]["obs_exit_code"] == 1 and t["resolved"] is False
