"""``swemine run localization``: gold regions, discovery/commit labels, rewards and retrieval pairs per trajectory.

``--input`` trajectories are read and joined with ``--tasks`` (the shared front), grouped by instance and mined
by :func:`swemine.miners.localization.mine.mine_instance`; without ``--input`` every task yields one gold-location record.
``--repos DIR`` holds one git repository per GitHub repo (``owner__name``, bare or not): instances whose repo is
there get ``repo`` gold (tree-sitter over the base commit), repository files decided by the base commit and BM25
hard negatives up to ``--negatives`` per instance; the others ``patch_only`` gold.
"""
from __future__ import annotations

import argparse
import os
from dataclasses import asdict, fields

import apache_beam as beam

from swemine.corpora.inputs import expand_inputs
from swemine.corpora.records import make_reject
from swemine.corpora.repos import repo_for
from swemine.miners.code_structure import StructureParser
from swemine.miners.localization.mine import (
    DEFAULT_NEGATIVES,
    LOCALIZATION_SCHEMA,
    STAGE,
    RewardConfig,
    mine_instance,
)
from swemine.pipelines.filtering import (
    add_filter_arguments,
    apply_filters,
    contamination_summarizer,
    filter_config_from_args,
)
from swemine.pipelines.runner import Built, PipelineSpec
from swemine.pipelines.stage import apply_stage
from swemine.pipelines.tasks_input import read_tasks
from swemine.pipelines.trajectories import read_and_join

OUTPUT = "localization/train"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--repos", default="", help="directory of git repositories named owner__name (optional)")
    parser.add_argument("--negatives", type=int, default=DEFAULT_NEGATIVES,
                        help="with --repos, BM25 negatives fill each instance's hard negatives up to this many "
                             f"(default {DEFAULT_NEGATIVES})")
    parser.add_argument("--max-file-bytes", type=int, default=1 << 30,
                        help="trajectory files larger than this are rejected as too_large")
    for f in fields(RewardConfig):
        parser.add_argument(f"--{f.name.replace('_', '-')}", type=float, default=f.default,
                            help=f"reward constant {f.name} (default {f.default})")
    add_filter_arguments(parser)


class _Miner:
    """The stage function: one instance group → localization records / rejects (holds parser and repos)."""

    def __init__(self, repos_dir: str, cfg: RewardConfig, config_hash: str, negatives: int = DEFAULT_NEGATIVES):
        self.repos_dir, self.cfg, self.config_hash, self.negatives = repos_dir, cfg, config_hash, negatives
        self.sp = StructureParser()
        self.repos: dict[str, object] = {}

    def _repo(self, name: str):
        if not self.repos_dir:
            return None
        if name not in self.repos:
            self.repos[name] = repo_for(self.repos_dir, name)
        return self.repos[name]

    def __call__(self, group: dict):
        tasks, trajs = group["tasks"], group["trajs"]
        if not tasks:
            for t in trajs:
                yield make_reject(STAGE, "no_task", f"no task for instance {t['instance_id']!r}",
                                  uri=t["source_uri"], locator=t["source_locator"], sha256=t["source_sha256"],
                                  subject_id=t["record_id"], config_hash=self.config_hash)
            return
        task = tasks[0]
        yield from mine_instance(task, trajs, self._repo(task.get("repo") or ""), self.sp, cfg=self.cfg,
                                 config_hash=self.config_hash, negatives=self.negatives)


def _group(kv, with_inputs: bool):
    iid, grouped = kv
    tasks = sorted(grouped["tasks"], key=lambda t: t["record_id"])
    trajs = list(grouped.get("trajs", []))
    if with_inputs and not trajs:
        return []
    return [{"instance_id": iid, "tasks": tasks, "trajs": trajs}]


def build_spec(inputs: list[str], tasks: list[str], repos: str = "", reward: RewardConfig = RewardConfig(),  # noqa: B008 (frozen)
               max_file_bytes: int = 1 << 30, num_buckets: int | None = None,
               filters: dict | None = None, negatives: int = DEFAULT_NEGATIVES) -> PipelineSpec:
    """The ``localization`` pipeline (see the module docstring)."""
    if not tasks:
        raise ValueError("localization needs --tasks (the gold patches come from the task rows)")
    config = {"inputs": list(inputs), "tasks": list(tasks), "repos": os.path.abspath(repos) if repos else "",
              "reward": asdict(reward), "max_file_bytes": max_file_bytes, "filters": dict(filters or {}),
              "negatives": negatives}

    def build(p, ctx):
        cfg = ctx.config
        tasks_pcoll, task_rejects = read_tasks(p, ctx)
        keyed = {"tasks": tasks_pcoll | "KeyTasksLoc" >> beam.Map(lambda t: (t["instance_id"], t))}
        rejects = [task_rejects]
        with_inputs = bool(cfg["inputs"])
        if with_inputs:
            trajs, read_rejects = read_and_join(p, ctx, tasks_pcoll)
            keyed["trajs"] = trajs | "KeyTrajsLoc" >> beam.Map(lambda t: (t["instance_id"], t))
            rejects.append(read_rejects)
        groups = (keyed | "GroupByInstance" >> beam.CoGroupByKey()
                  | "Groups" >> beam.FlatMap(_group, with_inputs))
        reward_cfg, repos_dir, stamp, k = RewardConfig(**cfg["reward"]), cfg["repos"], ctx.config_hash, cfg["negatives"]
        records, mine_rejects, _ = apply_stage(groups, STAGE, lambda: _Miner(repos_dir, reward_cfg, stamp, k),
                                               fanout=True)
        kept, filtered = apply_filters(records, "localization", cfg["filters"], ctx, label="Loc")
        return Built(outputs={OUTPUT: kept}, rejects=rejects + [mine_rejects], filtered=[filtered])

    input_uris = [u.uri for u in expand_inputs(list(inputs) + [t for t in tasks if os.path.exists(t)])
                  if u.kind == "file"]
    return PipelineSpec(name="localization", config=config, outputs={OUTPUT: LOCALIZATION_SCHEMA}, build=build,
                        input_uris=input_uris, num_buckets=num_buckets,
                        summarize=contamination_summarizer(config["filters"]))


def spec_from_args(args: argparse.Namespace) -> PipelineSpec:
    reward = RewardConfig(**{f.name: getattr(args, f.name) for f in fields(RewardConfig)})
    return build_spec(args.input, args.tasks, args.repos, reward, args.max_file_bytes,
                      filters=filter_config_from_args(args), negatives=args.negatives)
