"""``swemine run errors``: trajectories → verified error–diagnosis records and training views (AET stages 1–5)."""
from __future__ import annotations

import argparse
import os

import apache_beam as beam

from swemine.corpora.inputs import expand_inputs
from swemine.manifests.shards import read_rows
from swemine.miners.errors import mine as em
from swemine.miners.errors.diagnosis import ERROR_DIAGNOSIS_SCHEMA, STATUS_VERIFIED, RuleDiagnoser
from swemine.miners.errors.views import VIEW_SCHEMA, VIEWS, build_views
from swemine.pipelines.filtering import (
    add_filter_arguments,
    apply_filters,
    contamination_summarizer,
    filter_config_from_args,
)
from swemine.pipelines.runner import Built, PipelineSpec, combine_summaries
from swemine.pipelines.stage import apply_stage
from swemine.pipelines.trajectories import read_and_join

REQUIRES_INPUT = True        # `swemine run` refuses to start without --input
RECORDS = "errors/train"
NOT_DIAGNOSED = "errors/not_diagnosed"
VIEW_PREFIXES = {view: f"views/{view}/train" for view in VIEWS}
DEFAULT_CACHE = os.path.join(os.path.expanduser("~"), ".cache", "swemine", "llm")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--max-file-bytes", type=int, default=1 << 30)
    parser.add_argument("--diagnoser", choices=("rules", "llm"), default="rules",
                        help="rules: deterministic, offline (default); llm: any OpenAI-compatible endpoint")
    parser.add_argument("--llm-base-url", default=None, help="e.g. http://127.0.0.1:8000/v1 (default $OPENAI_BASE_URL)")
    parser.add_argument("--llm-model", default="", help="model name sent to the endpoint")
    parser.add_argument("--llm-cache-dir", default=DEFAULT_CACHE, help="on-disk response cache (re-runs are free)")
    parser.add_argument("--llm-concurrency", type=int, default=4,
                        help="requests in flight per client (plain-Python runs; Beam workers send one at a time)")
    parser.add_argument("--llm-timeout", type=float, default=60.0, help="seconds per request")
    parser.add_argument("--llm-retries", type=int, default=4, help="retries on 429/5xx/timeouts (with backoff)")
    parser.add_argument("--llm-temperature", type=float, default=0.0)
    parser.add_argument("--llm-seed", type=int, default=0)
    parser.add_argument("--budget-requests", type=int, default=None,
                        help="stop sending after this many requests per worker; the rest is written not_diagnosed")
    parser.add_argument("--budget-tokens", type=int, default=None, help="same, in prompt+completion tokens")
    add_filter_arguments(parser)


def make_diagnoser(cfg: dict):
    """The configured diagnoser (built inside each worker's ``setup``)."""
    if cfg["diagnoser"] == "rules":
        return RuleDiagnoser()
    from swemine.clients.llm import LLMClient
    from swemine.miners.errors.llm_diagnoser import LLMDiagnoser
    client = LLMClient(base_url=cfg["llm_base_url"], model=cfg["llm_model"], cache_dir=cfg["llm_cache_dir"],
                       timeout_s=cfg["llm_timeout"], max_retries=cfg["llm_retries"],
                       concurrency=cfg["llm_concurrency"], max_requests=cfg["budget_requests"],
                       max_tokens_budget=cfg["budget_tokens"],
                       default_params={"temperature": cfg["llm_temperature"], "seed": cfg["llm_seed"]})
    return LLMDiagnoser(client)


def _with_gold(p, trajs, tasks_pcoll):
    """Trajectories as ``{"trajectory", "gold_patch"}`` (the task's reference patch, "" without a task)."""
    if tasks_pcoll is None:
        return trajs | "NoGold" >> beam.Map(lambda t: {"trajectory": t, "gold_patch": ""})
    keyed = {"trajs": trajs | "KeyT" >> beam.Map(lambda t: (t["instance_id"], t)),
             "gold": tasks_pcoll | "Gold" >> beam.Map(lambda t: (t["instance_id"], t.get("patch") or ""))}

    def pair(kv):
        _, g = kv
        gold = min(g["gold"], default="")          # several task files may list the instance: pick stably
        for t in g["trajs"]:
            yield {"trajectory": t, "gold_patch": gold}
    return keyed | "CoGroupGold" >> beam.CoGroupByKey() | "PairGold" >> beam.FlatMap(pair)


def build_spec(inputs: list[str], tasks: list[str] | None = None, filters: dict | None = None,
               **options) -> PipelineSpec:
    """The ``errors`` pipeline; ``options`` are the ``add_arguments`` flags (underscored). The filters run on the
    normalized trajectories, so nothing is mined from a removed one."""
    defaults = {"max_file_bytes": 1 << 30, "diagnoser": "rules", "llm_base_url": None, "llm_model": "",
                "llm_cache_dir": DEFAULT_CACHE, "llm_concurrency": 4, "llm_timeout": 60.0, "llm_retries": 4,
                "llm_temperature": 0.0, "llm_seed": 0, "budget_requests": None, "budget_tokens": None}
    unknown = set(options) - set(defaults)
    if unknown:
        raise TypeError(f"unknown option(s) {sorted(unknown)}")
    config = {"inputs": list(inputs), "tasks": list(tasks or []), **defaults, **options,
              "filters": dict(filters or {})}
    if config["diagnoser"] == "rules":
        for k in [k for k in config if k.startswith("llm_") or k.startswith("budget_")]:
            config[k] = defaults[k]           # LLM settings do not change a rules run's config hash

    def build(p, ctx):
        cfg = ctx.config
        tasks_pcoll, rejects = None, []
        if cfg["tasks"]:
            from swemine.pipelines.tasks_input import read_tasks
            tasks_pcoll, task_rejects = read_tasks(p, ctx)
            rejects.append(task_rejects)
        trajs, read_rejects = read_and_join(p, ctx, tasks_pcoll)
        rejects.append(read_rejects)
        trajs, traj_filtered = apply_filters(trajs, "trajectory", cfg["filters"], ctx, label="Traj")
        items, _, filtered = apply_stage(_with_gold(p, trajs, tasks_pcoll), "detect", lambda: em.detect_fn)
        diagnosed, diag_rejects, _ = apply_stage(items, "diagnose", lambda: em.diagnose_fn(make_diagnoser(cfg)))
        verified, verify_rejects, _ = apply_stage(diagnosed, "verify", lambda: em.verify_fn())
        views, _, _ = apply_stage(verified, "views", lambda: build_views, fanout=True)
        stamp = ctx.config_hash
        records = verified | "Records" >> beam.Map(lambda it: {**it["record"], "config_hash": stamp})
        ok, not_diag = records | "SplitStatus" >> beam.Partition(
            lambda r, n: 0 if r["status"] == STATUS_VERIFIED else 1, 2)
        by_view = views | "StampViews" >> beam.Map(lambda v: {**v, "config_hash": stamp}) | "SplitViews" >> \
            beam.Partition(lambda v, n: VIEWS.index(v["view"]), len(VIEWS))
        outputs = {RECORDS: ok, NOT_DIAGNOSED: not_diag, **{VIEW_PREFIXES[v]: by_view[i] for i, v in enumerate(VIEWS)}}
        stamp_rej = [r | f"StampRej{i}" >> beam.Map(lambda x: {**x, "config_hash": stamp})
                     for i, r in enumerate((diag_rejects, verify_rejects))]
        return Built(outputs=outputs, rejects=rejects + stamp_rej, filtered=[traj_filtered, filtered])

    schemas = {RECORDS: ERROR_DIAGNOSIS_SCHEMA, NOT_DIAGNOSED: ERROR_DIAGNOSIS_SCHEMA,
               **{prefix: VIEW_SCHEMA for prefix in VIEW_PREFIXES.values()}}
    return PipelineSpec(name="errors", config=config, outputs=schemas, build=build,
                        input_uris=[u.uri for u in expand_inputs(inputs) if u.kind == "file"],
                        summarize=combine_summaries(contamination_summarizer(config["filters"]), correction_counts))


def correction_counts(output: str, stages: dict) -> dict:
    """Manifest entry: error records by correction source, grounded vs none grounded."""
    by_source: dict[str, int] = {}
    for row in read_rows(output, RECORDS):
        key = row["correction_source"] or "no_grounded_correction"
        by_source[key] = by_source.get(key, 0) + 1
    grounded = sum(n for k, n in by_source.items() if k != "no_grounded_correction")
    return {"corrections": {"grounded": grounded, "no_grounded_correction": by_source.get("no_grounded_correction", 0),
                            "by_source": dict(sorted(by_source.items()))}}


def spec_from_args(args: argparse.Namespace) -> PipelineSpec:
    keys = ("max_file_bytes", "diagnoser", "llm_base_url", "llm_model", "llm_cache_dir", "llm_concurrency",
            "llm_timeout", "llm_retries", "llm_temperature", "llm_seed", "budget_requests", "budget_tokens")
    return build_spec(args.input, args.tasks, filters=filter_config_from_args(args),
                      **{k: getattr(args, k) for k in keys})
