"""``swemine run tasks``: mine pull-request fixes from git history into SWE-bench-style Task shards.

Stages: ``history_list`` (one repository spec → its commits) → ``Reshuffle`` (the walk is spread over workers
commit by commit) → ``history_mine`` (one commit → a Task or a Filtered record with the reason) → group by
``instance_id`` → ``history_dedupe`` (one task per instance). ``issues`` reads the issue dumps once so that
their bad rows are counted as rejects. With ``--localization`` every task then goes through ``localization``
(:func:`swemine.miners.localization.mine.mine_instance` without trajectories) against the repository it was mined from, so
its gold localization record (gold quality ``repo``) is written to ``localization/train`` in the same run.
"""
from __future__ import annotations

import apache_beam as beam

from swemine.corpora.records import TASK_SCHEMA, make_reject
from swemine.corpora.repos import GitRepo, GitRepos, RepoError
from swemine.miners.code_structure import StructureParser
from swemine.miners.localization.mine import LOCALIZATION_SCHEMA, mine_instance
from swemine.miners.localization.mine import STAGE as STAGE_LOCALIZATION
from swemine.miners.tasks.git_stream import prepare
from swemine.miners.tasks.history import STAGE_LIST, MineConfig, classify, list_commits, mine_commit, pick_instance
from swemine.miners.tasks.issue_links import IssueIndex, read_issues
from swemine.pipelines.configs import TasksJob
from swemine.pipelines.engine.runner import Built, PipelineSpec
from swemine.pipelines.engine.stage import apply_stage
from swemine.pipelines.outputs import LOCALIZATION, TASKS
from swemine.pipelines.steps.filtering import apply_filters


def _list_fn(rev: str, cache_dir: str | None, cfg: MineConfig):
    """Commits of a repository, the fix candidates with their git work done in a few streamed git processes."""
    repos = GitRepos(cache_dir)

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


def _mine_fn(cfg: MineConfig, issue_paths: list[str], cache_dir: str | None):
    repos = GitRepos(cache_dir)
    index = IssueIndex.from_dumps(issue_paths) if issue_paths else None

    def fn(commit: dict):
        path = repos.get(commit["repo_spec"], commit["repo_label"]).path
        return mine_commit({**commit, "repo_path": path}, cfg, index)
    return fn


def _localize_fn(specs: list[dict], cache_dir: str | None):
    """A task → its gold-only localization record, read from the repository the task was mined from (the one of
    ``specs`` whose portable uri, the task's ``source_uri``, matches)."""
    repos, sp = GitRepos(cache_dir), StructureParser()
    by_uri: dict[str, GitRepo] = {}

    def fn(task: dict):
        if not by_uri:
            for s in specs:
                repo = repos.get(s["spec"], s["name"])
                by_uri[repo.uri] = repo
        return mine_instance(task, [], by_uri[task["source_uri"]], sp)
    return fn


def build_spec(job: TasksJob) -> PipelineSpec:
    """The ``tasks`` job over the repositories of ``job.repos`` and ``job.repo`` (plus gold localization records
    with ``job.localization``)."""
    config = job.resolve()
    specs = [{"spec": r.spec, "name": r.name} for r in config.repos]
    cfg, issue_paths, cache_dir, rev = config.mine, list(config.issues), job.repo_cache, config.rev

    def build(p):
        commits, list_rejects, _ = apply_stage(p | "RepoSpecs" >> beam.Create(specs), STAGE_LIST,
                                               lambda: _list_fn(rev, cache_dir, cfg), fanout=True)
        mined, mine_rejects, mine_filtered = apply_stage(
            commits | "Spread" >> beam.Reshuffle(), "history_mine",
            lambda: _mine_fn(cfg, issue_paths, cache_dir), progress_every=5000)
        grouped = mined | "ByInstance" >> beam.Map(lambda t: (t["instance_id"], t)) | "GroupInstances" >> beam.GroupByKey()
        tasks, _, dup_filtered = apply_stage(grouped, "history_dedupe",
                                             lambda: (lambda kv: pick_instance(list(kv[1]))),
                                             in_weight=lambda kv: sum(1 for _ in kv[1]))
        tasks, task_filtered = apply_filters(tasks, "task", config.filters, label="Tasks")
        rejects = [list_rejects, mine_rejects]
        outputs = {TASKS: tasks}
        if job.localization:
            outputs[LOCALIZATION], loc_rejects, _ = apply_stage(tasks, STAGE_LOCALIZATION,
                                                                lambda: _localize_fn(specs, cache_dir))
            rejects.append(loc_rejects)
        if issue_paths:
            _, issue_rejects, _ = apply_stage(p | "IssueDumps" >> beam.Create(issue_paths), "issues",
                                              lambda: read_issues, fanout=True)
            rejects.append(issue_rejects)
        return Built(outputs=outputs, rejects=rejects, filtered=[mine_filtered, dup_filtered, task_filtered])

    schemas = {TASKS: TASK_SCHEMA, **({LOCALIZATION: LOCALIZATION_SCHEMA} if job.localization else {})}
    return PipelineSpec(name="tasks", config=config, outputs=schemas, build=build, input_uris=issue_paths)
