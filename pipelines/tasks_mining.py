"""``swemine run tasks``: mine pull-request fixes from git history into SWE-bench-style Task shards.

Stages: ``history_list`` (one repository spec → its commits) → ``Reshuffle`` (the walk is spread over workers
commit by commit) → ``history_mine`` (one commit → a Task or a Filtered record with the reason) → group by
``instance_id`` → ``history_dedupe`` (one task per instance). ``issues`` reads the issue dumps once so that
their bad rows are counted as rejects. With ``--localization`` every task then goes through ``localization``
(:func:`swemine.miners.localization.mine.mine_instance` without trajectories) against the repository it was mined from, so
its gold localization record (gold quality ``repo``) is written to ``localization/train`` in the same run.
"""
from __future__ import annotations

import argparse
import os
import subprocess

import apache_beam as beam

from swemine.corpora.records import TASK_SCHEMA, make_reject
from swemine.corpora.repos import GitRepo, RepoError, is_url, name_from_path, open_repo
from swemine.miners.code_structure import StructureParser
from swemine.miners.localization.mine import LOCALIZATION_SCHEMA, mine_instance
from swemine.miners.localization.mine import STAGE as STAGE_LOCALIZATION
from swemine.miners.tasks.git_stream import prepare
from swemine.miners.tasks.history import (
    DEFAULT_TEST_RULES,
    STAGE_LIST,
    MineConfig,
    classify,
    list_commits,
    mine_commit,
    pick_instance,
)
from swemine.miners.tasks.issue_links import IssueIndex, read_issues
from swemine.pipelines.filtering import (
    add_filter_arguments,
    apply_filters,
    contamination_summarizer,
    filter_config_from_args,
)
from swemine.pipelines.localization import OUTPUT as LOCALIZATION_OUTPUT
from swemine.pipelines.runner import Built, PipelineSpec
from swemine.pipelines.stage import apply_stage
from swemine.pipelines.workers import exchange, file_weight, share

OUTPUT = "tasks/train"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--repos", default=None, help="directory holding one git repository per GitHub repo, "
                                                      "named <owner>__<name> (bare or not)")
    parser.add_argument("--repo", action="append", default=[], help="git repository path or URL (repeatable)")
    parser.add_argument("--issues", action="append", default=[],
                        help="issues JSONL dump (number, title, body, created_at, state, pull_request); repeatable")
    parser.add_argument("--rev", default="HEAD", help="walk the history reachable from this revision")
    parser.add_argument("--max-code-files", type=int, default=10)
    add_filter_arguments(parser)
    parser.add_argument("--min-statement-chars", type=int, default=20)
    parser.add_argument("--max-statement-chars", type=int, default=20000)
    parser.add_argument("--test-rule", action="append", default=None,
                        help=f"test path rule (repeatable; default {' '.join(DEFAULT_TEST_RULES)})")
    parser.add_argument("--no-verify-apply", action="store_true",
                        help="skip the git apply --check of each task's patches at its base commit")
    parser.add_argument("--repo-cache", default=None, help="where remote repositories are cloned")
    parser.add_argument("--localization", action="store_true",
                        help=f"also write each task's gold localization record (gold quality repo, read from the "
                             f"same repository) to {LOCALIZATION_OUTPUT}")


def repo_specs(repos_dir: str | None, repos: list[str]) -> list[dict]:
    """``[{spec, name}]`` for every git repository in ``repos_dir`` plus every ``--repo``, sorted, unique."""
    specs = {}
    if repos_dir:
        for entry in sorted(os.listdir(repos_dir)):
            path = os.path.join(repos_dir, entry)
            if os.path.isdir(path):
                specs[os.path.abspath(path)] = name_from_path(path)
    for spec in repos:
        key = spec if is_url(spec) else os.path.abspath(spec)
        specs[key] = ""
    return [{"spec": k, "name": v} for k, v in sorted(specs.items())]


def _head(spec: str, rev: str) -> str:
    """The commit ``rev`` names in a local repository ("" for URLs or non-repositories): part of the config, so
    that new history is not mistaken for a finished run."""
    if not os.path.isdir(spec):
        return ""
    out = subprocess.run(["git", "-C", spec, "rev-parse", "--verify", "-q", f"{rev}^{{commit}}"],
                         capture_output=True, text=True)
    return out.stdout.strip()


class _Repos:
    """Repository specs → open ``GitRepo``s, opened once per worker (remote URLs are cloned into the cache)."""

    def __init__(self, cache_dir: str | None):
        self.cache_dir = cache_dir
        self._open: dict[tuple[str, str], GitRepo] = {}

    def get(self, spec: str, name: str) -> GitRepo:
        key = (spec, name)
        if key not in self._open:
            repo = open_repo(spec, self.cache_dir, name=name)
            if not isinstance(repo, GitRepo):
                raise RepoError(f"not a git repository: {spec}")
            self._open[key] = repo
        return self._open[key]


def _list_fn(rev: str, cache_dir: str | None, cfg: MineConfig):
    """Commits of a repository, the fix candidates with their git work done in a few streamed git processes."""
    repos = _Repos(cache_dir)

    def fn(item: dict):
        try:
            repo = repos.get(item["spec"], item["name"])
        except RepoError as exc:
            yield make_reject(STAGE_LIST, "not_a_git_repo", str(exc), uri=item["spec"])
            return
        for commit in prepare(list_commits(repo.path, repo.name, rev, uri=repo.uri),
                              lambda c: classify(c, cfg)[0], rev, cfg.verify_apply):
            yield {**commit, "repo_spec": item["spec"], "repo_label": item["name"]}
    return fn


def _mine_fn(cfg: MineConfig, issue_paths: list[str], cache_dir: str | None, config_hash: str):
    repos = _Repos(cache_dir)
    index = IssueIndex.from_dumps(issue_paths) if issue_paths else None

    def fn(commit: dict):
        path = repos.get(commit["repo_spec"], commit["repo_label"]).path
        return mine_commit({**commit, "repo_path": path}, cfg, index, config_hash)
    return fn


def _localize_fn(cache_dir: str | None, config_hash: str):
    """A task → its gold-only localization record, read from the repository the task was mined from (the task's
    ``source_uri`` is that repository's spec: its absolute path, or its URL)."""
    repos, sp = _Repos(cache_dir), StructureParser()

    def fn(task: dict):
        return mine_instance(task, [], repos.get(task["source_uri"], task["repo"]), sp, config_hash=config_hash)
    return fn


def build_spec(repos_dir: str | None = None, repos: list[str] | None = None, issues: list[str] | None = None,
               rev: str = "HEAD", cfg: MineConfig | None = None, cache_dir: str | None = None,
               localization: bool = False, filters: dict | None = None) -> PipelineSpec:
    """The ``tasks`` pipeline over the repositories of ``repos_dir`` and ``repos`` (plus gold localization records
    with ``localization``)."""
    cfg = cfg or MineConfig()
    specs = repo_specs(repos_dir, list(repos or []))
    if not specs:
        raise ValueError("swemine run tasks needs --repos DIR or at least one --repo")
    issue_paths = [os.path.abspath(p) for p in issues or []]
    config = {"repos": [{**s, "head": _head(s["spec"], rev)} for s in specs], "issues": issue_paths, "rev": rev,
              "mine": cfg.as_dict(), "localization": localization, "filters": dict(filters or {})}

    def build(p, ctx):
        h = ctx.config_hash
        mine_specs = share(specs, weight=lambda s: file_weight(s["spec"]))
        commits, list_rejects, _ = apply_stage(p | "RepoSpecs" >> beam.Create(mine_specs), STAGE_LIST,
                                               lambda: _list_fn(rev, cache_dir, cfg), fanout=True)
        mined, mine_rejects, mine_filtered = apply_stage(
            exchange(commits | "Spread" >> beam.Reshuffle(), "ToCommit", key=lambda c: c["sha"]), "history_mine",
            lambda: _mine_fn(cfg, issue_paths, cache_dir, h), progress_every=5000)
        grouped = (exchange(mined | "ByInstance" >> beam.Map(lambda t: (t["instance_id"], t)), "ToInstance",
                            key=lambda kv: kv[0])
                   | "GroupInstances" >> beam.GroupByKey())
        tasks, _, dup_filtered = apply_stage(grouped, "history_dedupe",
                                             lambda: (lambda kv: pick_instance(list(kv[1]))), fanout=True)
        tasks, task_filtered = apply_filters(tasks, "task", ctx.config["filters"], ctx, label="Tasks")
        rejects = [list_rejects, mine_rejects]
        outputs = {OUTPUT: tasks}
        if localization:
            outputs[LOCALIZATION_OUTPUT], loc_rejects, _ = apply_stage(
                tasks, STAGE_LOCALIZATION, lambda: _localize_fn(cache_dir, h))
            rejects.append(loc_rejects)
        if issue_paths:
            _, issue_rejects, _ = apply_stage(p | "IssueDumps" >> beam.Create(share(issue_paths, file_weight)), "issues",
                                              lambda: read_issues, fanout=True)
            rejects.append(issue_rejects)
        stamp = [r | f"Stamp{i}" >> beam.Map(lambda r: {**r, "config_hash": h}) for i, r in enumerate(rejects)]
        filtered = [f | f"StampF{i}" >> beam.Map(lambda r: {**r, "config_hash": h})
                    for i, f in enumerate((mine_filtered, dup_filtered))]
        return Built(outputs=outputs, rejects=stamp, filtered=filtered + [task_filtered])

    schemas = {OUTPUT: TASK_SCHEMA, **({LOCALIZATION_OUTPUT: LOCALIZATION_SCHEMA} if localization else {})}
    return PipelineSpec(name="tasks", config=config, outputs=schemas, build=build, input_uris=issue_paths,
                        summarize=contamination_summarizer(config["filters"]), partitionable=True)


def spec_from_args(args: argparse.Namespace) -> PipelineSpec:
    cfg = MineConfig(test_rules=tuple(args.test_rule or DEFAULT_TEST_RULES), max_code_files=args.max_code_files,
                     min_statement_chars=args.min_statement_chars, max_statement_chars=args.max_statement_chars,
                     verify_apply=not args.no_verify_apply)
    return build_spec(args.repos, args.repo, args.issues, args.rev, cfg, args.repo_cache, args.localization,
                      filters=filter_config_from_args(args))
