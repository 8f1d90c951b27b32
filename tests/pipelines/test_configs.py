"""The job config dataclasses: every flag name the CLI always had still parses, ``resolve()`` is the one step
that reads files and git, the LLM settings build one client, the config hash follows the dataclass."""
from __future__ import annotations

import dataclasses
import importlib
import json

import pytest

from swemine.pipelines.cli import main as cli
from swemine.pipelines.cli.run_cmd import job_from_args
from swemine.pipelines.configs import (
    JOBS,
    ErrorsJob,
    FilterConfig,
    FimJob,
    LLMConfig,
    LocalizationJob,
    SftJob,
    TaskRepo,
    TasksJob,
    TrajectoriesJob,
)
from tests.gitutil import commit_files, init_repo

# Every flag each job takes, with a value when it takes one.
FILTER_FLAGS = [("--benchmark", "b.jsonl"), ("--decontam-levels", "instance"), ("--cutoff-date", "2024-01-01"),
                ("--undated", "drop"), ("--grey-repo", "a/b"), ("--repo-alias", "a/b=c/d"), ("--repo-git", "a/b=."),
                ("--ngram-n", "8"), ("--scrub-secrets", "drop"), ("--license-allow", "MIT"), ("--license-map", "m"),
                ("--quality", None), ("--keep-shortest", "2"), ("--dedup", "near"), ("--dedup-threshold", "0.7")]
OLD_FLAGS = {
    "trajectories": [("--input", "x"), ("--tasks", "t"), ("--max-file-bytes", "9")],
    "localization": [("--input", "x"), ("--tasks", "t"), ("--repos", "r"), ("--max-file-bytes", "9"),
                     *[(f"--{f.replace('_', '-')}", "0.1") for f in ("alpha_file", "alpha_module", "alpha_entity",
                                                                      "step_cost", "final_bonus_scale",
                                                                      "commitment_bonus")]],
    "tasks": [("--repos", "r"), ("--repo", "x"), ("--issues", "i"), ("--rev", "main"), ("--max-code-files", "3"),
              ("--min-statement-chars", "1"), ("--max-statement-chars", "9"), ("--test-rule", "tests/"),
              ("--no-verify-apply", None), ("--repo-cache", "c"), ("--localization", None)],
    "errors": [("--input", "x"), ("--tasks", "t"), ("--max-file-bytes", "9"), ("--diagnoser", "llm"),
               ("--llm-base-url", "u"), ("--llm-model", "m"), ("--llm-cache-dir", "c"), ("--llm-concurrency", "2"),
               ("--llm-timeout", "5"), ("--llm-retries", "1"), ("--llm-temperature", "0.5"), ("--llm-seed", "3"),
               ("--budget-requests", "4"), ("--budget-tokens", "5"), ("--min-confidence", "0.5")],
    "fim": [("--source", "x"), ("--repos", "y"), ("--format", "psm"), ("--model-family", "starcoder"),
            ("--in-file-only", None), ("--mixture", "none"), ("--max-file-bytes", "9"), ("--shards", "2"),
            ("--rationale", None), ("--llm-base-url", "u"), ("--llm-model", "m"), ("--llm-critic-model", "c"),
            ("--llm-cache-dir", "c"), ("--llm-concurrency", "2"), ("--llm-timeout", "5"), ("--llm-retries", "1"),
            ("--llm-seed", "3"), ("--budget-requests", "4"), ("--budget-tokens", "5")],
}


def _job(argv: list[str]):
    return job_from_args(argv[1], cli.build_parser(argv).parse_args(argv))


def test_one_job_table_names_each_jobs_config_module_and_help():
    assert list(JOBS) == ["trajectories", "localization", "tasks", "errors", "fim", "sft"]
    assert JOBS["fim"].config is FimJob and JOBS["tasks"].module == "swemine.pipelines.jobs.tasks_mining"
    assert JOBS["fim"].help == "dependency-graph-selected, function-aware FIM samples from repositories"
    assert all(importlib.import_module(j.module).build_spec for j in JOBS.values())


# Filter flags a job cannot use: the quality rules read trajectories, the temporal level reads dates.
NOT_OFFERED = {"localization": {"--quality", "--keep-shortest"}, "tasks": {"--quality", "--keep-shortest"},
               "fim": {"--quality", "--keep-shortest", "--cutoff-date", "--undated"}}


@pytest.mark.parametrize("name", list(OLD_FLAGS))
def test_every_flag_parses_and_lands_in_the_config(name):
    pairs = OLD_FLAGS[name] + [(f, v) for f, v in FILTER_FLAGS if f not in NOT_OFFERED.get(name, ())]
    argv = ["run", name] + [x for flag, value in pairs for x in ((flag, value) if value else (flag,))]
    job = _job(argv)
    assert job != JOBS[name].config()               # every flag changed something...
    for flag, value in pairs:                       # ...and each one on its own changes the config
        alone = _job(["run", name, flag] + ([value] if value else []))
        assert alone != JOBS[name].config(), flag


@pytest.mark.parametrize("name,flag", [(n, f) for n, flags in NOT_OFFERED.items() for f in sorted(flags)])
def test_filter_flags_that_cannot_apply_are_not_offered(name, flag, capsys):
    value = dict(FILTER_FLAGS)[flag]
    with pytest.raises(SystemExit) as exc:
        _job(["run", name, flag] + ([value] if value else []))
    assert exc.value.code == 2 and flag in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.main(["run", name, "--help"])
    shown = capsys.readouterr().out
    assert "--scrub-secrets" in shown and flag not in shown


def test_config_file_may_not_set_a_filter_the_job_cannot_use(tmp_path):
    (tmp_path / "run.yaml").write_text("filters:\n  quality: true\n")
    with pytest.raises(ValueError, match="quality"):
        _job(["run", "fim", "--config", str(tmp_path / "run.yaml")])
    assert _job(["run", "trajectories", "--config", str(tmp_path / "run.yaml")]).filters.quality is True


def test_fim_sources_and_a_folder_of_repositories(tmp_path):
    for name in ("b__two", "a__one"):
        (tmp_path / "repos" / name).mkdir(parents=True)
    (tmp_path / "repos" / "README").write_text("not a repository")
    fim = _job(["run", "fim", "--source", "stdlib", "--source", "pkg:json", "--repos", str(tmp_path / "repos"),
                "--format", "psm", "--mixture", "none"])
    assert fim.sources == ("stdlib", "pkg:json") and fim.fim_format == "psm" and fim.mixture_ratios() == ()
    # the sources in the order given, then the folders sorted by name (files are not repositories)
    assert fim.repo_specs() == ["stdlib", "pkg:json", str(tmp_path / "repos" / "a__one"),
                                str(tmp_path / "repos" / "b__two")]
    assert FimJob().repo_specs() == ["stdlib"]


def test_a_source_at_a_branch_or_tag_is_pinned_to_its_commit(tmp_path):
    repo = init_repo(str(tmp_path / "acme__calc"))
    first = commit_files(repo, {"calc.py": "def add(a, b):\n    return a + b\n"}, "first")
    second = commit_files(repo, {"calc.py": "def add(a, b):\n    return b + a\n"}, "second")
    job = FimJob(sources=(f"{repo}@main", f"{repo}@HEAD~1", f"{repo}@{first[:7]}", "stdlib", str(repo)))
    # the branch and relative revisions name commits (one commit named twice is mined once); a path without @ and
    # the stdlib stay as given
    assert job.resolve().repos == (f"{repo}@{second}", f"{repo}@{first}", "stdlib", str(repo))


def test_job_values_from_flags():
    tasks = _job(["run", "tasks", "--no-verify-apply", "--test-rule", "spec/", "--test-rule", "*_spec.py"])
    assert tasks.mine_config().verify_apply is False and tasks.mine_config().test_rules == ("spec/", "*_spec.py")
    loc = _job(["run", "localization", "--tasks", "t.jsonl", "--alpha-file", "2"])
    assert loc.reward.alpha_file == 2.0 and loc.tasks == ("t.jsonl",)


def test_config_file_and_flags(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text("inputs: [dump/]\ndiagnoser: llm\nllm:\n  model: judge\n  retries: 2\n"
                    "filters:\n  benchmark: [lite=b.json]\n  dedup: exact\n")
    job = _job(["run", "errors", "--config", str(path), "--llm-retries", "6"])
    assert job == ErrorsJob(inputs=("dump/",), diagnoser="llm", llm=LLMConfig(model="judge", retries=6),
                            filters=dataclasses.replace(ErrorsJob().filters, benchmark=("lite=b.json",), dedup="exact"))


def test_llm_config_makes_one_client(tmp_path):
    client = LLMConfig(base_url="http://127.0.0.1:9/v1", model="m", cache_dir=str(tmp_path), concurrency=2,
                       timeout=5.0, retries=1, temperature=0.3, seed=7, budget_requests=10,
                       budget_tokens=99).make_client()
    assert (client.base_url, client.model, client.cache_dir, client.concurrency, client.timeout_s, client.max_retries,
            client.max_requests, client.max_tokens_budget, client.default_params) == (
        "http://127.0.0.1:9/v1", "m", str(tmp_path), 2, 5.0, 1, 10, 99, {"temperature": 0.3, "seed": 7})
    # errors and fim share the defaults now (fim used to retry 3 times, errors 4)
    assert ErrorsJob().llm == FimJob().llm and LLMConfig().retries == 4


def test_resolve_reads_files_and_git_and_is_json(tmp_path):
    repo = init_repo(str(tmp_path / "repos" / "acme__calc"))
    head = commit_files(repo, {"a.py": "x = 1\n"}, "one")
    job = TasksJob(repos=str(tmp_path / "repos"), localization=True)
    cfg = job.resolve()
    assert cfg.repos == (TaskRepo(spec=repo, name="acme/calc", head=head),) and cfg.mine.verify_apply is True
    assert json.loads(json.dumps(cfg.to_json()))["repos"] == [{"spec": repo, "name": "acme/calc", "head": head}]
    head2 = commit_files(repo, {"a.py": "x = 2\n"}, "two")          # new history → a new config (and hash)
    assert job.resolve().repos[0].head == head2 != head
    with pytest.raises(ValueError, match="needs --repos"):
        TasksJob().resolve()
    assert LocalizationJob(repos="rel/dir").resolve().repos == str(tmp_path.cwd() / "rel" / "dir")
    # the rules diagnoser ignores the LLM settings, so they do not change its config hash
    assert ErrorsJob(llm=LLMConfig(model="judge")).resolve() == ErrorsJob().resolve()
    assert ErrorsJob(diagnoser="llm", llm=LLMConfig(model="judge")).resolve().llm.model == "judge"
    assert "llm" not in FimJob().resolve().to_json()
    assert FimJob(rationale=True).resolve().to_json()["llm"]["critic_model"] == ""


def test_the_resolved_json_is_the_run_config_of_before():
    """``to_json()`` keeps the JSON the run ids and ``config_hash`` values were made from: keys left out while off
    (``follow_symlinks``, a FIM run's ``llm``), filters that are off as null, thresholds inlined."""
    job = TrajectoriesJob(inputs=("a/",), filters=FilterConfig(decontam_threshold=(("min_ngram_share", 0.2),),
                                                              keep_shortest=2, dedup="near"))
    assert job.resolve().to_json() == {
        "inputs": ["a/"], "tasks": [], "max_file_bytes": 1 << 30,
        "filters": {"benchmarks": [], "benchmark_digests": [],
                    "decontam": {"levels": ["instance", "repo", "temporal", "content"], "cutoff_date": "",
                                 "undated": "keep", "grey_repos": [], "ngram_n": 5, "min_ngram_share": 0.2},
                    "repo_aliases": {}, "repo_roots": {}, "secrets": "scrub", "license": None,
                    "quality": {"keep_shortest": 2}, "dedup": {"mode": "near", "threshold": 0.8}}}
    assert TrajectoriesJob(follow_symlinks=True).resolve().to_json()["follow_symlinks"] is True


def test_a_trajectory_jobs_resolved_config_is_the_job_with_resolved_fields(tmp_path):
    """The resolved config keeps the job's fields (one declaration): run settings that do not change records
    (``allow_empty``, ``shards``) stay out of the JSON, the resolved fields are retyped."""
    (tmp_path / "tok").mkdir()
    job = SftJob(inputs=("a/",), only_resolved="false", tokenizer=str(tmp_path / "tok"), shards=3, allow_empty=True)
    cfg = job.resolve()
    assert isinstance(cfg, SftJob) and cfg.only_resolved is False and cfg.shards == 3
    assert cfg.tokenizer == str(tmp_path / "tok") and cfg.filters.secrets == "scrub"
    assert list(cfg.to_json())[:5] == ["inputs", "tasks", "max_file_bytes", "style", "only_resolved"]
    assert "shards" not in cfg.to_json() and "allow_empty" not in cfg.to_json()
