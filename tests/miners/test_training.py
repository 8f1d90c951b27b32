"""SFT rendering, selection and critic targets on the real corpora (plain Python, no Beam)."""
import collections
import glob
import json

import pytest

from swemine.corpora.normalize import normalize_paths
from swemine.miners.training import rows as R
from swemine.miners.training.critic import CriticConfig, critic_targets, discounted_returns
from swemine.miners.training.render import NO_OUTPUT, to_xml, xml_call
from swemine.miners.training.select import SelectConfig, check_trajectory
from swemine.miners.training.tools import ALWAYS, tool_definitions

PLACEHOLDERS = 120          # calls whose result the log holds empty, answered with NO_OUTPUT
RELAXED = SelectConfig(only_resolved=False, quality_rules=False, max_rejected_calls=10 ** 6, require_patch=False)


@pytest.fixture(scope="module")
def classic(classic_corpora):
    trajs, _ = normalize_paths(classic_corpora)
    return trajs


def _answered(messages):
    ids = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
    calls = [tc["id"] for m in messages for tc in m.get("tool_calls") or ()]
    return calls, ids


def test_every_classic_harness_yields_tool_call_rows_with_every_call_answered(classic, classic_corpora):
    render = R.render_fn(R.RenderConfig(inputs=tuple(classic_corpora)))
    per = collections.Counter()
    placeholders = 0
    for t in classic:
        if check_trajectory(t, RELAXED):
            continue
        for row in render(t):
            msgs = json.loads(row["messages"])
            calls, ids = _answered(msgs)
            assert calls == ids and len(set(calls)) == len(calls)      # each call answered once, in order
            assert len(row["loss_mask"]) == len(msgs)
            assert row["loss_mask"] == [m["role"] == "assistant" for m in msgs]
            assert row["n_tool_calls"] == len(calls)
            placeholders += sum(m["content"] == NO_OUTPUT for m in msgs if m["role"] == "tool")
            assert row["n_placeholder_results"] == sum(m["content"] == NO_OUTPUT for m in msgs if m["role"] == "tool")
            assert {tc["function"]["name"] for m in msgs for tc in m.get("tool_calls") or ()} <= \
                {t["function"]["name"] for t in json.loads(row["tools"])}
            per[row["harness"]] += 1
    assert set(per) == {t["harness"] for t in classic}
    # (the relaxed selection still drops invalid calls and unfixed syntax errors: 8 OpenHands, 5 + 1 shell runs)
    assert per == {"aider": 1, "autocoderover": 29, "claude-code": 4, "mini-swe-agent": 35, "moatless": 98,
                   "openhands": 56, "swe-agent": 62, "who-and-when": 82}
    assert placeholders == PLACEHOLDERS


def test_tools_come_from_the_harness_table_or_are_inferred(classic):
    by = {t["harness"]: t for t in classic}
    tools, inferred = tool_definitions("swe-agent", [("bash", {"command": "ls"}), ("open", {"path": "a.py"})])
    assert [t["function"]["name"] for t in tools] == ["bash", "open", "submit"] and not inferred
    row = next(R.render_fn(R.RenderConfig())(by["aider"]))
    assert row["tools_inferred"] is False               # aider's normalized edit / shell actions are in the table
    names = {t["function"]["name"]: t for t in json.loads(row["tools"])}
    assert set(names) == {"edit", "shell"} and names["edit"]["function"]["parameters"]["required"] == ["path"]
    tools, inferred = tool_definitions("trace-export", [("grep", {"q": "x", "n": 3}), ("grep", {"q": "y"})])
    assert inferred and tools[0]["function"]["parameters"]["required"] == ["q"]     # no documented tool set
    # an argument the documented definition lacks is added from the calls (the table itself is left alone)
    tools, inferred = tool_definitions("codex-cli", [("exec_command", {"cmd": "ls", "tty": True})])
    props = tools[0]["function"]["parameters"]["properties"]
    assert inferred and props["tty"]["type"] == "boolean" and props["cmd"]["type"] == "string"
    assert "tty" not in tool_definitions("codex-cli", [("exec_command", {"cmd": "ls"})])[0][0]["function"][
        "parameters"]["properties"]


def test_swe_agent_shell_lines_become_bash_calls(classic):
    t = next(t for t in classic if t["source_uri"].endswith("cost_2_1/django__django-16527.traj"))
    row = next(R.render_fn(R.RenderConfig())(t))
    msgs = json.loads(row["messages"])
    assert msgs[0] == {"role": "user", "content": t["problem_statement"]}
    calls = [tc["function"] for m in msgs for tc in m.get("tool_calls") or ()]
    assert [c["name"] for c in calls] == ["bash", "bash", "bash", "submit"]     # typed command lines, then submit
    assert json.loads(calls[1]["arguments"]) == {"command": "open django/contrib/admin/templatetags/admin_modify.py 102\n"}
    assert [t["function"]["name"] for t in json.loads(row["tools"])] == ["bash", "submit"]


def test_native_is_the_logged_conversation(classic, classic_corpora, corpora_dir):
    t = next(t for t in classic if t["harness"] == "mini-swe-agent")
    row = next(R.render_fn(R.RenderConfig(style="native", inputs=tuple(classic_corpora)))(t))
    logged = json.loads((corpora_dir / t["source_uri"]).read_text())["messages"]
    msgs = json.loads(row["messages"])
    assert [(m["role"], m["content"]) for m in msgs] == [(m["role"], m["content"]) for m in logged]
    moat = next(t for t in classic if t["harness"] == "moatless")
    out = list(R.render_fn(R.RenderConfig(style="native", inputs=tuple(classic_corpora)))(moat))
    assert out[0]["reason"] == "no_native_conversation"


def test_xml_follows_swe_smith_on_a_function_calling_swe_agent_run(classic, classic_corpora, corpora_dir):
    t = next(t for t in classic if "function_calling_replace" in t["source_uri"])
    row = next(R.render_fn(R.RenderConfig(style="xml", inputs=tuple(classic_corpora)))(t))
    msgs = json.loads(row["messages"])
    history = json.loads((corpora_dir / t["source_uri"]).read_text())["history"]
    assert [m["role"] for m in msgs] == [{"tool": "user"}.get(h["role"], h["role"]) for h in history]
    first = next(h for h in history if h.get("tool_calls"))
    got = msgs[history.index(first)]["content"]
    assert got == f"{first['content'].strip()}\n\n<function=create>\n<parameter=filename>reproduce.py</parameter>\n</function>"
    assert msgs[0]["content"].startswith(history[0]["content"]) and "---- BEGIN FUNCTION #create ----" in msgs[0]["content"]
    assert not any("tool_calls" in m for m in msgs)
    assert xml_call("str_replace_editor", {"command": "str_replace", "old_str": "a", "new_str": "b"}) == (
        "<function=str_replace_editor>\n<parameter=command>str_replace</parameter>\n<parameter=old_str>\na\n"
        "</parameter>\n<parameter=new_str>\nb\n</parameter>\n</function>")
    assert to_xml([{"role": "user", "content": "x"}], [])[0]["role"] == "system"


def test_selection_reasons_on_the_classic_corpora(classic):
    reasons = collections.Counter((check_trajectory(t, SelectConfig()) or ("kept",))[0] for t in classic)
    assert reasons == {"not_resolved": 314, "kept": 56, "malformed_response": 9, "tool_misuse": 1,
                       "syntax_error_unfixed": 1}
    failed = collections.Counter((check_trajectory(t, SelectConfig(only_resolved=False)) or ("kept",))[0]
                                 for t in classic)
    assert failed["empty_patch"] == 99 and failed["invalid_tool_call"] == 4 and failed["rejected_tool_call"] == 9


def test_critic_targets_of_a_real_run_equal_hand_computed_values(classic, corpora_dir):
    lite = corpora_dir / "swebench-instances/moatless-tools/benchmark/data/princeton-nlp-SWE-bench_Lite-test.json"
    gold = {x["instance_id"]: x["patch"] for x in json.loads(lite.read_text())}
    t = next(t for t in classic if t["source_uri"].endswith("cost_2_1/django__django-16527.traj"))
    got = critic_targets(t, gold[t["instance_id"]], CriticConfig())
    # step 0 finds the gold file (file recall 0 -> 1, alpha_file 1.0); step 2 is flagged (divergent edit, no test
    # run before it: -1) and first edits the gold file (commitment 0.5 x alpha_file 1.0 / 1 gold file); step 3
    # submits without testing (-1) and ends a resolved run (+20).
    assert got["rewards"] == [1.0, 0.0, -0.5, 19.0]
    r3 = 19.0
    r2 = -0.5 + 0.85 * r3
    r1 = 0.0 + 0.85 * r2
    r0 = 1.0 + 0.85 * r1
    assert got["returns"] == pytest.approx([r0, r1, r2, r3]) and got["returns"][0] == pytest.approx(12.307125)
    assert got["reward_sources"] == [["discovery"], [], ["poor_action:divergent_edit", "poor_action:unverified_fix",
                                                         "commit:django/contrib/admin/templatetags/admin_modify.py"],
                                     ["poor_action:premature_finish", "terminal"]]
    failed = next(t for t in classic if t["resolved"] is False)
    assert "terminal" not in sum(critic_targets(failed, "", CriticConfig())["reward_sources"], [])
    assert discounted_returns([0.0, 0.0, 20.0], 0.5) == [5.0, 10.0, 20.0]


def test_critic_prompt_names_the_policy_model(classic):
    t = next(t for t in classic if t["model_name"])
    row = R.critic_fn(CriticConfig())({"trajectory": t})[0]
    assert row["prompt"].startswith(f"Policy model: {t['model_name']}\n")
    assert len(row["rewards"]) == len(row["returns"]) == len(t["steps"])


def test_native_source_found_below_the_input_folder(classic, classic_corpora):
    from swemine.miners.training.native import NoConversation, resolve_source
    t = next(t for t in classic if t["harness"] == "swe-agent")
    assert resolve_source(t["source_uri"], classic_corpora).endswith(t["source_uri"])
    with pytest.raises(NoConversation):
        resolve_source("nowhere/x.json", classic_corpora)
    assert glob.glob(resolve_source(t["source_uri"], classic_corpora))


#: Per harness of today's formats (``fresh/``, ``atif/``), relaxed selection: (rows, tool calls, calls answered
#: with the placeholder, rows whose tools are inferred in whole or part). Placeholders: Gemini CLI's stream-json
#: gives a successful read / write / shell call an empty ``output``; Aider's log holds no tool output at all; the
#: trace export records empty stdout; kimi-code's and one summarization sub-agent's ATIF steps make no call.
FRESH = {"aider": (1, 33, 33, 0), "claude-code": (6, 506, 18, 5), "cline": (1, 231, 8, 1),
         "codex-cli": (1, 411, 1, 0), "gemini-cli": (4, 162, 77, 4), "mini-swe-agent": (8, 164, 8, 2),
         "openai-chat": (1, 249, 2, 1), "openhands": (40, 368, 3, 0), "pi": (1, 72, 0, 1),
         "trace-export": (10, 721, 253, 10)}
ATIF = {"claude-code": (3, 27, 0, 1), "kimi-code": (4, 0, 0, 0), "openhands": (1, 2, 1, 1),
        "terminus-2": (2, 10, 0, 2), "terminus-2-summarization-answers": (1, 2, 0, 1),
        "terminus-2-summarization-questions": (1, 0, 0, 0), "terminus-2-summarization-summary": (1, 2, 0, 1)}


@pytest.mark.parametrize("folder,expected,drops", [("fresh", FRESH, {"empty_trajectory": 4}), ("atif", ATIF, {})])
def test_every_harness_of_todays_formats_yields_tool_call_rows_with_every_call_answered(corpora_dir, folder,
                                                                                         expected, drops):
    """Every harness in ``fresh/`` and ``atif/`` yields rows; every call is answered by id, once, in order, and
    named in the row's tools; the only drops are runs with no step (OpenHands V1 tasks that never started)."""
    trajs, _ = normalize_paths([str(corpora_dir / folder)])
    render = R.render_fn(R.RenderConfig())
    per = collections.defaultdict(lambda: [0, 0, 0, 0])
    dropped = collections.Counter()
    for t in trajs:
        why = check_trajectory(t, RELAXED)
        if why:
            dropped[why[0]] += 1
            continue
        for row in render(t):
            msgs = json.loads(row["messages"])
            calls, ids = _answered(msgs)
            assert calls == ids and len(set(calls)) == len(calls)
            assert row["loss_mask"] == [m["role"] == "assistant" for m in msgs]
            tools = {d["function"]["name"]: d["function"]["parameters"]["properties"] for d in json.loads(row["tools"])}
            assert set(ALWAYS.get(row["harness"], ())) <= set(tools)     # the documented core, called or not
            for m in msgs:
                for tc in m.get("tool_calls") or ():
                    assert set(json.loads(tc["function"]["arguments"])) <= set(tools[tc["function"]["name"]])
            n = per[row["harness"]]
            n[0] += 1
            n[1] += len(calls)
            n[2] += row["n_placeholder_results"]
            n[3] += row["tools_inferred"]
    assert {h: tuple(v) for h, v in per.items()} == expected
    assert dict(dropped) == drops


def test_xml_reads_what_swe_agent_showed_at_its_last_step(classic, corpora_dir):
    from swemine.miners.training.native import conversation
    t = next(t for t in classic if "function_calling_replace" in t["source_uri"])
    doc = json.loads((corpora_dir / t["source_uri"]).read_text())
    history = doc["history"]
    assert len(conversation(doc, shown_last=True)) == len(history)          # no query logged: the history
    doc["trajectory"][-1]["query"] = history[:5]
    assert [m["content"] for m in conversation(doc, shown_last=True)] == [m["content"] for m in history[:5]]
    doc["trajectory"][-2]["query"], doc["trajectory"][-1]["response"] = history[:3], "Exit due to cost limit"
    assert len(conversation(doc, shown_last=True)) == 3
    doc["trajectory"][-1]["messages"] = history[:7]                          # before SWE-agent 1.1
    assert len(conversation(doc, shown_last=True)) == 6 and len(conversation(doc)) == len(history)


def test_sft_summary_by_harness_drops_and_critic_labels():
    rows = [{"harness": "swe-agent", "resolved": True, "n_chars": 100, "n_tool_calls": 2, "n_placeholder_results": 0,
             "n_tokens": 30},
            {"harness": "swe-agent", "resolved": False, "n_chars": 50, "n_tool_calls": 1, "n_placeholder_results": 1,
             "n_tokens": None}]
    filtered = [{"reason": "too_long", "record_json": json.dumps({"harness": "swe-agent"})},
                {"reason": "not_resolved", "record_json": "{"}]
    assert R.sft_summary(rows, filtered, [{"resolved": True}, {"resolved": None}]) == {
        "rows": 2, "by_harness": {"swe-agent": {"rows": 2, "resolved_share": 0.5, "chars_per_row": 75.0,
                                                "tokens_per_row": 30.0, "tool_calls": 3, "placeholder_results": 1}},
        "drops": {"not_resolved": 1, "too_long": 1},
        "drops_by_harness": {"": {"not_resolved": 1}, "swe-agent": {"too_long": 1}},
        "critic_rows": {"none": 1, "true": 1}}
