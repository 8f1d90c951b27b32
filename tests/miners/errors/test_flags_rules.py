"""Stage-1 flag rules on hand-built steps: exit codes, benign non-zero exits, where an observation comes from,
which flags hide which, loops, premature finishes, gold-file flags and natural recoveries."""
from __future__ import annotations

import pytest

from swemine.corpora.formats.base import make_step
from swemine.miners.errors import flags as ef


def _s(i, cmd="", obs="", code=None, tool="bash", role="assistant", args=None):
    args = args if args is not None else ({"command": cmd} if cmd else None)
    return make_step(i, role=role, tool_name=tool, tool_args=args, action_text=cmd, observation=obs, exit_code=code)


def _pairs(traj, gold=()):
    return [(c["step"], c["flag"]) for c in ef.detect(traj, gold)]


def test_phase_by_taxonomy_else_by_position():
    assert ef.phase_at("loop", 1, 5) == ("iterative_verification", "non_progressive_iteration")
    # execution failures: before the first source edit the agent localizes, from it on it verifies
    assert ef.phase_at("traceback", 4, 5) == ("understanding_localization", "")
    assert ef.phase_at("traceback", 5, 5) == ("iterative_verification", "")
    assert ef.phase_at("traceback", 9, 5) == ("iterative_verification", "")
    assert ef.phase_at("traceback", 9, None) == ("understanding_localization", "")


@pytest.mark.parametrize("obs,code,expected", [
    ("<returncode>2</returncode>\nout", None, 2),
    ("Command executed with exit code -1", None, -1),
    ("out\nexitcode: 3\n", None, 3),
    ("run: exitcode: 3", None, None),                       # only at a line start
    ("x" * 400 + "<returncode>2</returncode>", None, None),  # only in the first 400 characters
    ("x" * 374 + "<returncode>2</returncode>", None, 2),     # the tag ends at 400
    ("x" * 375 + "<returncode>2</returncode>", None, None),  # ... at 401
    ("<returncode>2</returncode>", 0, 0),                    # the scaffold's own code wins
    ("no code here", None, None),
])
def test_exit_code(obs, code, expected):
    assert ef.exit_code(_s(0, cmd="python x.py", obs=obs, code=code)) == expected


@pytest.mark.parametrize("cmd,code,flagged", [
    ("grep foo a.py", 1, False),            # no match
    ("cd src && grep foo a.py", 1, False),  # the last command of a chain decides
    ("test -f a.py", 1, False),
    ("[ -f a.py ]", 1, False),
    ("git diff HEAD", 1, False),
    ("git diff", 1, False),
    ("grep foo a.py | wc -l", 1, True),
    ("grep foo a.py", 2, True),             # 2 is grep's error
    ("greppy foo", 1, True),                # another program that starts like one
    ("python x.py", 1, True),
    ("python x.py", -1, True),              # a negative code (killed, timed out) is a failure too
    ("grep foo a.py", -1, True),
])
def test_benign_nonzero(cmd, code, flagged):
    assert ("nonzero_exit" in ef.step_flags(_s(0, cmd=cmd, code=code))) is flagged


@pytest.mark.parametrize("args,obs,rejected", [
    ({"fail_reason": "file_not_found"}, "", True),
    ({"fail_reason": "invalid_file"}, "", True),
    ({"fail_reason": "no_changes"}, "", False),                   # not a refusal without expect_correction
    ({"fail_reason": "no_changes", "expect_correction": True}, "", True),
    ({}, "String 'x = 1' not found in a.py", True),              # Moatless' message
    ({}, "String 'x = 1' was replaced", False),
    ({}, "File 'a.py' not found in the repository", False),          # not Moatless' String '...' message
    # only the last 2000 characters of the output are read for Moatless' fail_reason
    ({}, "fail_reason: lint_error, expect_correction: true\n" + "x" * 2000, False),
    ({}, "x" * 2000 + "\nfail_reason: lint_error, expect_correction: true", True),
    ({}, "fail_reason: lint_error, expect_correction: true", True),
])
def test_edit_rejections(args, obs, rejected):
    step = _s(0, tool="EditAction", args={"command": "str_replace", "path": "a.py", **args}, obs=obs)
    assert ef.edit_rejected(step) is rejected


def test_an_edit_rejection_hides_traceback_and_tool_error():
    obs = "Your proposed edit has introduced new syntax error(s).\nSyntaxError: invalid syntax\n"
    assert ef.step_flags(_s(0, tool="edit", cmd="edit 1:2\nx\nend_of_edit", obs=obs)) == ["edit_rejected"]
    assert ef.step_flags(_s(0, cmd="python x.py", obs="SyntaxError: invalid syntax")) == ["traceback"]
    assert ef.step_flags(_s(0, cmd="view", obs="ERROR:\nInvalid `path` parameter: /nope")) == ["tool_error"]


def test_other_step_flags():
    assert ef.step_flags(_s(0, cmd="ls", obs="bash: foo: command not found")) == ["shell_error"]
    assert ef.step_flags(_s(0, cmd="x", obs="Your output was not formatted correctly")) == ["format_error"]
    assert ef.step_flags(_s(0, tool="", obs="I think the bug is in a.py")) == ["format_error"]   # no action
    assert ef.step_flags(_s(0, cmd="pytest", obs="===== 2 failed, 3 passed in 0.1s =====")) == ["test_failure"]
    assert ef.step_flags(_s(0, cmd="pytest", obs="===== 5 passed in 0.1s =====")) == []
    # an environment turn is no action of the agent
    assert ef.step_flags(_s(0, role="user", tool="", obs="Traceback (most recent call last):")) == []


def test_observation_of_the_next_environment_turn():
    tb = "Traceback (most recent call last):\nValueError: x"
    steps = [_s(0, cmd="python x.py"), _s(1, role="user", tool="", obs=tb)]
    assert ef.observed(steps, 0) == 1 and ef.effective_step(steps, 0)["observation"] == tb
    assert _pairs({"steps": steps}) == [(0, "traceback")]
    # the next turn is the agent's own: step 0 simply had no output
    steps = [_s(0, cmd="python x.py"), _s(1, cmd="ls", obs=tb)]
    assert ef.observed(steps, 0) == 0 and ef.effective_step(steps, 0) is steps[0]
    # an answered step and the last step read their own observation
    assert ef.observed([_s(0, cmd="a", obs="out"), _s(1, role="user", tool="", obs=tb)], 0) == 0
    assert ef.observed([_s(0, cmd="a")], 0) == 0
    # an empty environment turn answers nothing
    assert ef.observed([_s(0, cmd="a"), _s(1, role="user", tool="")], 0) == 0


def test_the_closing_message_is_no_format_error():
    steps = [_s(0, cmd="ls", obs="a.py"), _s(1, tool="", obs="")]
    assert _pairs({"steps": steps}) == []
    # only the last turn is the closing message: an earlier flagged step keeps its flags
    steps = [_s(0, cmd="ls", obs="a.py"), _s(1, cmd="foo", obs="bash: foo: command not found"), _s(2, tool="")]
    assert _pairs({"steps": steps}) == [(1, "shell_error")]
    foo = _s(0, cmd="foo", obs="bash: foo: command not found")
    steps = [foo, _s(1, role="user", tool="", obs="go on"), _s(2, tool="")]
    assert _pairs({"steps": steps}) == [(0, "shell_error")]
    steps = [_s(0, role="user", tool="", obs="the task"), _s(1, cmd="ls", obs="a.py"), {**foo, "idx": 2},
             _s(3, tool="")]
    assert _pairs({"steps": steps}) == [(2, "shell_error")]
    # a last turn with an action keeps its flags
    assert _pairs({"steps": [_s(0, cmd="ls", obs="a.py"), {**foo, "idx": 1}]}) == [(1, "shell_error")]
    steps = [_s(0, tool="", obs=""), _s(1, cmd="ls", obs="a.py")]
    assert _pairs({"steps": steps}) == [(0, "format_error")]


def test_loop_needs_a_third_repeat_and_skips_paging():
    three = [_s(i, cmd="ls", obs="a.py") for i in range(3)]
    assert _pairs({"steps": three}) == [(2, "loop")]
    assert _pairs({"steps": three[:2]}) == []
    # an environment turn repeating the text is no action of the agent
    assert _pairs({"steps": [three[0], _s(1, role="user", cmd="ls", obs="a.py"), {**three[1], "idx": 2}]}) == []
    # A-B-A-B closes a loop at the 4th step, whichever action comes first
    for a, b in (("ls", "cat a.py"), ("cat a.py", "ls")):
        assert _pairs({"steps": [_s(i, cmd=(a, b)[i % 2], obs="x") for i in range(4)]}) == [(3, "loop")]
    paging = [_s(i, tool="scroll_down", cmd="scroll_down") for i in range(4)]
    assert _pairs({"steps": paging}) == []
    # a failed edit changes nothing: the third identical check after it is still a loop
    steps = [_s(0, cmd="python t.py"), _s(1, cmd="python t.py"),
             _s(2, tool="str_replace", args={"command": "str_replace", "path": "a.py"},
                obs="No replacement was performed"),
             _s(3, cmd="python t.py")]
    assert (3, "loop") in _pairs({"steps": steps})


def test_premature_finish_only_after_an_applied_untested_edit():
    edit = _s(1, cmd="sed -i 's/a/b/' x.py")
    finish = _s(2, tool="submit", cmd="submit")
    assert _pairs({"steps": [_s(0, cmd="ls"), edit, finish]}) == [(2, "premature_finish")]
    assert _pairs({"steps": [_s(0, cmd="ls"), edit]}) == []                      # no finish
    failed = _s(1, tool="str_replace", args={"command": "str_replace", "path": "x.py"},
                obs="No replacement was performed")
    assert _pairs({"steps": [_s(0, cmd="ls"), failed, finish]}) == [(1, "edit_rejected")]
    tested = [_s(0, cmd="ls"), edit, _s(2, cmd="python reproduce.py"), _s(3, tool="submit", cmd="submit")]
    assert _pairs({"steps": tested}) == []
    # a finish before the last edit does not close it
    assert _pairs({"steps": [_s(0, cmd="sed -i 's/a/b/' x.py"), _s(1, tool="submit", cmd="submit"),
                             _s(2, cmd="sed -i 's/b/c/' x.py")]}) == []
    # writing a test file is no test run
    write = _s(1, cmd="cat > test_x.py << 'EOF'\nimport pytest\nEOF")
    assert _pairs({"steps": [_s(0, cmd="ls"), write, finish]}) == [(2, "premature_finish")]


def test_edit_targets_follow_the_open_file():
    steps = [_s(0, tool="open", args={"args": "pkg/a.py"}), _s(1, tool="edit", args={"args": "1:2"}),
             _s(2, tool="create", args={"args": "new.py"}), _s(3, tool="edit", args={"args": "1:1"}),
             _s(4, role="user", tool="open", args={"args": "pkg/b.py"}), _s(5, tool="edit", args={"args": "3:3"})]
    assert ef.edit_targets(steps) == {1: "pkg/a.py", 2: "new.py", 3: "new.py", 5: "new.py"}


def test_same_file_allows_one_extra_leading_directory():
    assert ef.same_file("src/pkg/a.py", "pkg/a.py") and ef.same_file("pkg/a.py", "src/pkg/a.py")
    assert ef.same_file("pkg/a.py", "/".join(["pkg", "a.py"]))          # equal text, another string object
    assert not ef.same_file("pkg/xa.py", "a.py") and not ef.same_file("pkg/a.py", "pkg/b.py")


DIFF = "diff --git a/{0} b/{0}\n--- a/{0}\n+++ b/{0}\n@@ -1 +1 @@\n-a\n+b\n"
NEW = "diff --git a/{0} b/{0}\nnew file mode 100644\n--- /dev/null\n+++ b/{0}\n@@ -0,0 +1 @@\n+x\n"


def test_wrong_file_edit_points_at_the_edit_else_a_mention_else_the_finish():
    steps = [_s(0, cmd="cat core.py", obs="x"), _s(1, cmd="sed -i 's/a/b/' util.py"), _s(2, cmd="echo util.py"),
             _s(3, tool="submit", cmd="submit")]
    traj = {"steps": steps, "final_patch": DIFF.format("util.py") + NEW.format("repro.py"), "resolved": None}
    assert [s for s, f in _pairs(traj, ["core.py"]) if f == "wrong_file_edit"] == [1]
    # the patch's file was never edited by a step: the last action naming it
    steps[1] = _s(1, cmd="ls")
    assert [s for s, f in _pairs(traj, ["core.py"]) if f == "wrong_file_edit"] == [2]
    # nor named: the submission
    steps[2] = _s(2, cmd="ls")
    assert [s for s, f in _pairs(traj, ["core.py"]) if f == "wrong_file_edit"] == [3]
    # the name only in an action's text (no arguments, no output) still names it
    steps[2] = make_step(2, tool_name="bash", action_text="echo util.py")
    assert [s for s, f in _pairs(traj, ["core.py"]) if f == "wrong_file_edit"] == [2]
    # named twice: the last one; named nowhere: the last submission, else the last action
    traj2 = {**traj, "steps": [_s(0, cmd="cat core.py", obs="x"), _s(1, cmd="echo util.py"), _s(2, cmd="wc util.py"),
                               make_step(3, tool_name="view", tool_args={"path": "util.py"}), _s(4, cmd="ls")]}
    assert [s for s, f in _pairs(traj2, ["core.py"]) if f == "wrong_file_edit"] == [3]
    traj3 = {**traj, "steps": [_s(0, cmd="cat core.py", obs="x")] + [_s(i, tool="submit", cmd="submit")
                                                                     for i in (1, 2, 3)] + [_s(4, cmd="ls")]}
    assert [s for s, f in _pairs(traj3, ["core.py"]) if f == "wrong_file_edit"] == [3]
    traj4 = {**traj, "steps": [_s(0, cmd="cat core.py", obs="x"), _s(1, cmd="ls"), _s(2, cmd="pwd")]}
    assert [s for s, f in _pairs(traj4, ["core.py"]) if f == "wrong_file_edit"] == [2]
    # an edit whose target is unknown but that names the file comes before a later mention
    traj5 = {**traj, "steps": [_s(0, cmd="cat core.py", obs="x"), _s(1, tool="write_file", args={"target": "util.py"}),
                               _s(2, cmd="echo util.py")]}
    assert [s for s, f in _pairs(traj5, ["core.py"]) if f == "wrong_file_edit"] == [1]
    # two edits of the wrong file: the first one is flagged
    two = {**traj, "steps": [_s(0, cmd="cat core.py", obs="x"), _s(1, cmd="sed -i 's/a/b/' util.py"),
                             _s(2, cmd="sed -i 's/b/c/' util.py")]}
    assert [s for s, f in _pairs(two, ["core.py"]) if f == "wrong_file_edit"] == [1]
    # a resolved run has no wrong file (no step edits any more: no premature finish either)
    assert [f for _, f in _pairs({**traj, "resolved": True}, ["core.py"])] == ["localization_miss"]
    # a created file (repro.py) never counts
    created = {**traj, "final_patch": NEW.format("repro.py")}
    assert [f for _, f in _pairs(created, ["core.py"])] == ["localization_miss"]


def test_localization_miss_and_incorrect_fix():
    steps = [_s(0, cmd="cat core.py", obs="x"), _s(1, cmd="sed -i 's/a/b/' core.py"), _s(2, cmd="cat core.py"),
             _s(3, cmd="sed -i 's/b/c/' src/core.py"), _s(4, cmd="pytest")]
    traj = {"steps": steps, "final_patch": DIFF.format("core.py"), "resolved": False}
    # both edits touch the gold file (one with a leading directory): no miss; the last one is the incorrect fix
    assert _pairs(traj, ["core.py"]) == [(3, "incorrect_fix")]
    assert _pairs({**traj, "resolved": None}, ["core.py"]) == []               # unknown outcome: no verdict
    # the gold file was shown (step 0) and never edited: a miss at the first step naming it
    other = {"steps": [_s(0, cmd="ls", obs="core.py util.py"), _s(1, cmd="cat core.py")], "final_patch": ""}
    assert _pairs(other, ["core.py"]) == [(0, "localization_miss")]
    assert _pairs(other, [""]) == []
    # one gold file edited, another only shown: the shown one is missed
    two_gold = {"steps": [_s(0, cmd="sed -i 's/a/b/' util.py"), _s(1, cmd="cat core.py")], "final_patch": ""}
    assert [s for s, f in _pairs(two_gold, ["util.py", "core.py"]) if f == "localization_miss"] == [1]
    # the first *agent* step that shows it: not an environment turn, not an earlier unrelated action
    later = {"steps": [_s(0, role="user", tool="", obs="see core.py"), _s(1, cmd="ls", obs="a.py"),
                       _s(2, cmd="cat core.py")], "final_patch": ""}
    assert _pairs(later, ["core.py"]) == [(2, "localization_miss")]
    # an action that names it only in its text
    named = {"steps": [_s(0, cmd="ls", obs="a.py"), make_step(1, tool_name="bash", action_text="vim core.py")],
             "final_patch": ""}
    assert _pairs(named, ["core.py"]) == [(1, "localization_miss")]
    # ... or only in its arguments
    args = {"steps": [_s(0, cmd="ls", obs="a.py"), make_step(1, tool_name="view", tool_args={"path": "core.py"})],
            "final_patch": ""}
    assert _pairs(args, ["core.py"]) == [(1, "localization_miss")]
    # SWE-agent edits the open file: the edit of core.py is the incorrect fix though its text never names it
    swe = {"steps": [_s(0, tool="open", args={"args": "core.py"}, cmd="open core.py", obs="1: x"),
                     _s(1, tool="edit", args={"args": "1:1"}, cmd="edit 1:1\ny\nend_of_edit")],
           "final_patch": DIFF.format("core.py"), "resolved": False}
    assert (1, "incorrect_fix") in _pairs(swe, ["core.py"])
    # an edit whose target is unknown counts when its text or arguments name the gold file
    for step in (_s(0, tool="write_file", args={"target": "core.py"}),
                 make_step(0, tool_name="write_file", tool_args={"target": "x"}, action_text="write core.py")):
        unknown = {"steps": [step], "final_patch": "", "resolved": False}
        assert ef.edit_targets([step]) == {} and (0, "incorrect_fix") in _pairs(unknown, ["core.py"])


def test_quote_in_step_normalizes_whitespace():
    step = _s(0, cmd="python  x.py", obs="line one\n   line two")
    assert ef.quote_in_step(step, "one line two") and ef.quote_in_step(step, "python x.py")
    assert not ef.quote_in_step(step, "") and not ef.quote_in_step(step, "line three")


def test_recovery_is_the_next_clean_same_kind_action_within_five():
    err = _s(0, cmd="python x.py", obs="Traceback (most recent call last):\nValueError: bad")
    ok = _s(2, cmd="python x.py --fixed", obs="done")
    steps = [err, _s(1, cmd="ls", obs="x.py"), ok]
    cands = ef.detect({"steps": steps})
    assert ef.find_recoveries({"steps": steps}, cands) == [{"error_step": 0, "fix_step": 2, "flag": "traceback"}]
    # the same action again is no fix; a finish ends the search; six steps later is too far
    assert ef.find_recoveries({"steps": [err, _s(1, cmd="python x.py", obs="ok")]},
                              [{"step": 0, "flag": "traceback"}]) == []
    assert ef.find_recoveries({"steps": [err, _s(1, tool="submit", cmd="submit"), ok]},
                              [{"step": 0, "flag": "traceback"}]) == []
    far = [err] + [_s(i, cmd=f"ls {i}") for i in range(1, 6)] + [_s(6, cmd="python x.py --fixed")]
    assert ef.find_recoveries({"steps": far}, [{"step": 0, "flag": "traceback"}]) == []
    near = far[:5] + [_s(5, cmd="python x.py --fixed")]
    assert ef.find_recoveries({"steps": near}, [{"step": 0, "flag": "traceback"}]) == [
        {"error_step": 0, "fix_step": 5, "flag": "traceback"}]
    # a step with two execution flags reports the first (traceback before nonzero_exit)
    both = [{**err, "obs_exit_code": 1}, _s(1, cmd="python x.py --fixed", obs="done", code=0)]
    assert ef.find_recoveries({"steps": both}, ef.detect({"steps": both})) == [
        {"error_step": 0, "fix_step": 1, "flag": "traceback"}]
    # another program in the same tool is another kind of action
    assert ef.find_recoveries({"steps": [err, _s(1, cmd="wc x.py", obs="1 x.py")]},
                              [{"step": 0, "flag": "traceback"}]) == []
    # another tool running the same program is another kind of action
    for tool in ("ash", "zsh"):
        other = [err, _s(1, tool=tool, cmd="python x.py --fixed", obs="done")]
        assert ef.find_recoveries({"steps": other}, [{"step": 0, "flag": "traceback"}]) == []
    # a failed edit is recovered by the next clean edit, not by any clean action
    bad = _s(0, tool="str_replace", args={"command": "str_replace", "path": "a.py"}, obs="No replacement was performed")
    edits = [bad, _s(1, cmd="ls", obs="a.py"), _s(2, tool="str_replace", args={"command": "str_replace",
                                                                              "path": "a.py", "new_str": "y"})]
    assert ef.find_recoveries({"steps": edits}, [{"step": 0, "flag": "edit_rejected"}]) == [
        {"error_step": 0, "fix_step": 2, "flag": "edit_rejected"}]
    # a process flag before the error does not stop the search
    assert ef.find_recoveries({"steps": steps}, [{"step": 0, "flag": "loop"}, {"step": 1, "flag": "loop"},
                                                 {"step": 0, "flag": "traceback"}]) == [
        {"error_step": 0, "fix_step": 2, "flag": "traceback"}]
    loop_first = [_s(0, cmd="ls", obs="a"), {**err, "idx": 1}, {**ok, "idx": 2}]
    assert ef.find_recoveries({"steps": loop_first}, [{"step": 0, "flag": "loop"}, {"step": 1, "flag": "traceback"}]
                              ) == [{"error_step": 1, "fix_step": 2, "flag": "traceback"}]
    # a process flag (loop) is no execution error to recover from
    assert ef.find_recoveries({"steps": steps}, [{"step": 0, "flag": "loop"}]) == []
