"""``swemine run fim``: dependency-graph-selected, function-aware FIM samples from repositories.

Stages: ``fim_read`` (repo spec → SourceFiles) → ``fim_parse`` (tree-sitter structure, per file; no tree
is kept) → group by repository → ``fim_select`` (graph, Ĥ/Î scoring, singles, pairs, triples; structures
only) → ``fim_mix`` (single/pair/triple ratios over all targets, before any text exists) → join back with
each file's content → ``fim_emit`` (mask, validate, format). ``--format repo`` adds one more join: the files each target file calls into,
for the repo-level layout. With no ``--repos`` it mines the running interpreter's standard library.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import re

import apache_beam as beam

from swemine.corpora.records import Reject, make_reject
from swemine.miners.fim.formats import FAMILIES, FIM_SCHEMA, FIM_SPLITS, FORMATS
from swemine.miners.fim.mine import (
    EMIT_STAGE,
    MIX_STAGE,
    SELECT_STAGE,
    FileSelection,
    apply_mixture,
    check_format,
    emit_samples,
    file_key,
    mixture_fractions,
    select_repo,
    target_counts,
)
from swemine.miners.fim.parse import STAGE as PARSE_STAGE
from swemine.miners.fim.parse import FileParser
from swemine.miners.fim.rationale import STAGE as RATIONALE_STAGE
from swemine.miners.fim.scoring import FimConfig
from swemine.pipelines.filtering import (
    add_filter_arguments,
    apply_filters,
    contamination_summarizer,
    filter_config_from_args,
)
from swemine.pipelines.runner import Built, PipelineSpec, combine_summaries
from swemine.pipelines.stage import FILTERED, Counters, apply_stage
from swemine.pipelines.workers import broadcast, exchange, gather, owns

OUTPUT = "fim/train"
LLM_CACHE = os.path.join(os.path.expanduser("~"), ".cache", "swemine", "llm")
LLM_KEYS = ("llm_base_url", "llm_model", "llm_critic_model", "llm_cache_dir", "llm_concurrency", "llm_timeout",
            "llm_retries", "llm_seed", "budget_requests", "budget_tokens")
READ_STAGE = "fim_read"
DIST_FIELDS = ("loc", "complexity", "inferability", "fim_score", "difficulty")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--repos", nargs="+", action="extend", default=[],
                        help="repo specs: git repo path[@commit], directory, stdlib, pkg:<name>, git URL "
                             "(default: stdlib)")
    parser.add_argument("--format", choices=FORMATS, default="chat", dest="fim_format")
    parser.add_argument("--model-family", choices=sorted(FAMILIES), default="qwen2.5-coder",
                        help="special tokens for --format psm/spm/repo (repo: qwen2.5-coder or starcoder)")
    parser.add_argument("--in-file-only", action="store_true",
                        help="no cross-file edges: reproduce the published per-file graph exactly")
    parser.add_argument("--mixture", default="0.8,0.15,0.05",
                        help="single,pair,triple ratios; 'none' keeps every sample")
    parser.add_argument("--max-file-bytes", type=int, default=1 << 20)
    parser.add_argument("--shards", type=int, default=1, help="Parquet shards of the sample output")
    add_filter_arguments(parser)
    llm = parser.add_argument_group("optional LLM rationale + critic (chat format; off by default)")
    llm.add_argument("--rationale", action="store_true", help="generate rationales and apply the critic rules")
    llm.add_argument("--llm-base-url", default=None, help="OpenAI-compatible endpoint (default $OPENAI_BASE_URL)")
    llm.add_argument("--llm-model", default="", help="generator model")
    llm.add_argument("--llm-critic-model", default="", help="critic model (default: the generator)")
    llm.add_argument("--llm-cache-dir", default=LLM_CACHE, help="on-disk response cache (re-runs are free)")
    llm.add_argument("--llm-concurrency", type=int, default=4)
    llm.add_argument("--llm-timeout", type=float, default=60.0)
    llm.add_argument("--llm-retries", type=int, default=3, help="retries with exponential backoff")
    llm.add_argument("--llm-seed", type=int, default=0)
    llm.add_argument("--budget-requests", type=int, default=None, help="stop calling after this many requests")
    llm.add_argument("--budget-tokens", type=int, default=None, help="stop calling after this many tokens")


def split_spec(spec: str) -> tuple[str, str | None]:
    """``path@<sha>`` → (path, sha); anything else → (spec, None)."""
    head, sep, tail = spec.rpartition("@")
    if sep and head and re.fullmatch(r"[0-9a-fA-F]{7,40}", tail):
        return head, tail
    return spec, None


def read_repo(spec: str, max_bytes: int):
    """SourceFiles of one repo spec (rejects for unreadable files, or for a repo that cannot be opened)."""
    from swemine.corpora.repos import RepoError, open_repo

    path, commit = split_spec(spec)
    try:
        repo = open_repo(path)
    except (RepoError, OSError) as exc:
        if owns(spec):                  # every --workers process opens every repo; one reports it
            yield make_reject(READ_STAGE, "repo_unavailable", str(exc), uri=spec)
        return
    commit = commit or repo.head()
    yield from repo.iter_source_files(commit=commit, max_bytes=max_bytes,
                                      keep=lambda p: owns(file_key({"repo": repo.name, "commit": commit, "path": p})))


def _parse_factory(max_bytes: int):
    parser = FileParser(max_bytes=max_bytes)
    counters = Counters(PARSE_STAGE)

    def parse(src):
        out = parser(src)
        if not isinstance(out, Reject):
            counters.inc("info.functions", len(out.functions))
        return [out]
    return parse


class _CountSelections(beam.DoFn):
    """Counters for what ``fim_select`` chose and passed over: ``fim_select.info.<...>``."""

    def setup(self):
        self.counters = Counters(SELECT_STAGE)

    def process(self, sel: FileSelection):
        for t in sel.targets:
            self.counters.inc(f"info.selected_{FIM_SPLITS[len(t.functions)]}")
        for reason, n in sel.skipped.items():
            self.counters.inc(f"info.skip_{reason}", n)
        yield sel.key, sel


class _Mix(beam.DoFn):
    """The mixture on each file's targets, before any text is built: counts ``fim_mix.in/out/filtered``."""

    def __init__(self, fmt: str, family: str, config_hash: str):
        self.fmt, self.family, self.config_hash = fmt, family, config_hash

    def setup(self):
        self.counters = Counters(MIX_STAGE)

    def process(self, kv, fractions):
        key, sel = kv
        self.counters.inc("in", len(sel.targets))
        kept, dropped = apply_mixture(sel, fractions, self.fmt, self.family, self.config_hash)
        self.counters.inc("out", len(kept.targets))
        for f in dropped:
            self.counters.inc("filtered.mixture_quota")
            yield beam.pvalue.TaggedOutput(FILTERED, dict(f))
        if kept.targets:
            yield key, kept


def _emit_factory(fmt: str, family: str, config_hash: str, max_context_chars: int):
    def emit(kv):
        _, grouped = kv
        sels, files = list(grouped["sel"])[:1], list(grouped["src"])[:1]   # a repo listed twice: once
        context = dict(grouped.get("ctx", ()))
        for sel in sels:
            for src in files:
                yield from emit_samples(src, sel, fmt, family, config_hash, context, max_context_chars)
    return emit


def _context_requests(kv):
    """(context file key, requesting file key) for every dependency a selection's repo-level sample shows."""
    key, sel = kv
    prefix = key[:len(key) - len(sel.structure.path)]
    return [(prefix + path, key) for path in sel.context]


def _route_context(kv):
    _, grouped = kv
    for src in grouped["src"]:
        for requester in grouped["req"]:
            yield requester, (src["path"], src["content"])


def _rationale_factory(llm: dict):
    from swemine.clients.llm import LLMClient
    from swemine.miners.fim.rationale import Rationale

    client = LLMClient(base_url=llm["llm_base_url"], model=llm["llm_model"], cache_dir=llm["llm_cache_dir"],
                       timeout_s=llm["llm_timeout"], max_retries=llm["llm_retries"],
                       concurrency=llm["llm_concurrency"], max_requests=llm["budget_requests"],
                       max_tokens_budget=llm["budget_tokens"],
                       default_params={"temperature": 0.0, "seed": llm["llm_seed"]})
    return Rationale(client, llm["llm_critic_model"])


def _select_factory(cfg: FimConfig):
    return lambda kv: select_repo(list(kv[1]), cfg, keep=owns)


def build(p, ctx) -> Built:
    c = ctx.config
    cfg = FimConfig(**{k: tuple(v) if isinstance(v, list) else v for k, v in c["fim"].items()})
    stamp = lambda r: {**r, "config_hash": ctx.config_hash}  # noqa: E731
    # --workers: each process reads the files it owns, sees every structure, selects its own files
    files, read_rej, _ = apply_stage(p | "Repos" >> beam.Create(c["repos"]), READ_STAGE,
                                     lambda: (lambda spec: read_repo(spec, c["max_file_bytes"])), fanout=True,
                                     owned=owns)
    structures, parse_rej, _ = apply_stage(files, PARSE_STAGE, lambda: _parse_factory(c["max_file_bytes"]))
    by_repo = gather(structures, "GroupRepo", key=lambda fs: f"{fs.repo}@{fs.commit}")
    sels, _, sel_filtered = apply_stage(by_repo, SELECT_STAGE, lambda: _select_factory(cfg), fanout=True,
                                        owned=lambda kv: owns(kv[0]))
    counted = sels | "CountSelections" >> beam.ParDo(_CountSelections())
    sizes = broadcast(sels | "TargetSizes" >> beam.FlatMap(target_counts), "AllTargetSizes")
    fractions = (sizes | "CountSizes" >> beam.CombinePerKey(sum)
                 | "AsDict" >> beam.combiners.ToDict()
                 | "Fractions" >> beam.Map(lambda d: mixture_fractions({k: d.get(k, 0) for k in FIM_SPLITS},
                                                                      tuple(cfg.mixture))))
    mixed = counted | "Mix" >> beam.ParDo(
        _Mix(c["format"], c["model_family"], ctx.config_hash), fractions=beam.pvalue.AsSingleton(fractions)
    ).with_outputs(FILTERED, main="main")
    keyed_sels = mixed.main
    keyed_files = files | "KeyFile" >> beam.Map(lambda src: (file_key(src), src))
    sources = {"sel": keyed_sels, "src": keyed_files}
    if c["format"] == "repo":
        requests = exchange(keyed_sels | "ContextRequests" >> beam.FlatMap(_context_requests), "ToContextFile",
                            key=lambda kv: kv[0])
        sources["ctx"] = exchange({"req": requests, "src": keyed_files} | "JoinContext" >> beam.CoGroupByKey()
                                  | "RouteContext" >> beam.FlatMap(_route_context), "ToRequester", key=lambda kv: kv[0])
    joined = sources | "JoinContent" >> beam.CoGroupByKey()
    rows, emit_rej, _ = apply_stage(joined, EMIT_STAGE, lambda: _emit_factory(
        c["format"], c["model_family"], ctx.config_hash, cfg.repo_context_chars), fanout=True)
    stage_rejects = [("read", read_rej), ("parse", parse_rej), ("emit", emit_rej)]
    filtered = [sel_filtered, mixed[FILTERED]]
    if c.get("llm"):
        rows, llm_rej, llm_filtered = apply_stage(rows, RATIONALE_STAGE, lambda: _rationale_factory(c["llm"]))
        stage_rejects.append(("rationale", llm_rej))
        filtered.append(llm_filtered)
    rows, sample_filtered = apply_filters(rows, "fim", c.get("filters") or {}, ctx, label="Fim")
    filtered.append(sample_filtered)
    rejects = [r | f"Stamp[{name}]" >> beam.Map(stamp) for name, r in stage_rejects]
    return Built(outputs={OUTPUT: rows}, rejects=rejects, filtered=filtered)


def _percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    v = sorted(values)

    def q(p: float) -> float:
        return round(v[min(len(v) - 1, int(p * (len(v) - 1) + 0.5))], 4)
    return {"p10": q(0.1), "p50": q(0.5), "p90": q(0.9), "n": len(v)}


def summarize(output: str, stages: dict) -> dict:
    """Counts and the p10/p50/p90 distribution report of the written samples (as the reference's step 3)."""
    import fsspec
    import pyarrow.parquet as pq

    cols: dict[str, list] = {f: [] for f in (*DIST_FIELDS, "fim_split")}
    fs, root = fsspec.core.url_to_fs(output)
    for path in sorted(fs.glob(f"{root}/{OUTPUT}-*-of-*.parquet")):
        with fs.open(path, "rb") as fh:
            t = pq.read_table(fh, columns=list(cols))
        for f in cols:
            cols[f].extend(t.column(f).to_pylist())
    dist = {"all": {f: _percentiles(cols[f]) for f in DIST_FIELDS}}
    for split in FIM_SPLITS.values():
        idx = [i for i, s in enumerate(cols["fim_split"]) if s == split]
        if idx:
            dist[split] = {f: _percentiles([cols[f][i] for i in idx]) for f in DIST_FIELDS}
    info = stages.get(SELECT_STAGE, {}).get("info", {})
    counts = {"files": stages.get(PARSE_STAGE, {}).get("in", 0),
              "files_parsed": stages.get(PARSE_STAGE, {}).get("out", 0),
              "functions": stages.get(PARSE_STAGE, {}).get("info", {}).get("functions", 0),
              "selected_singles": info.get("selected_single_function", 0),
              "selected_pairs": info.get("selected_function_pair", 0),
              "selected_triples": info.get("selected_function_triple", 0),
              "samples": len(cols["fim_split"])}
    print("fim: " + ", ".join(f"{k}={v}" for k, v in counts.items()))
    return {"fim_counts": counts, "fim_distribution": dist}


def build_spec(repos: list[str] | None = None, fmt: str = "chat", family: str = "qwen2.5-coder",
               cfg: FimConfig | None = None, max_file_bytes: int = 1 << 20,
               num_buckets: int | None = None, llm: dict | None = None,
               filters: dict | None = None) -> PipelineSpec:
    """The ``fim`` pipeline over ``repos`` (default: the standard library); ``llm`` (the ``LLM_KEYS``
    settings) turns on the rationale + critic stage for chat samples."""
    check_format(fmt, family)
    if llm and fmt != "chat":
        raise ValueError("the rationale stage needs --format chat")
    cfg = cfg or FimConfig()
    config = {"repos": list(repos or ["stdlib"]), "format": fmt, "model_family": family if fmt != "chat" else "",
              "fim": dataclasses.asdict(cfg), "max_file_bytes": max_file_bytes, "filters": dict(filters or {})}
    if llm:
        config["llm"] = dict(llm)
    return PipelineSpec(name="fim", config=config, outputs={OUTPUT: FIM_SCHEMA}, build=build,
                        num_buckets=num_buckets or 1, partitionable=True,
                        summarize=combine_summaries(summarize, contamination_summarizer(config["filters"])))


def _mixture(text: str) -> tuple[float, ...]:
    if text.strip().lower() in ("none", ""):
        return ()
    return tuple(float(x) for x in text.split(","))


def spec_from_args(args: argparse.Namespace) -> PipelineSpec:
    cfg = FimConfig(cross_file=not args.in_file_only, mixture=_mixture(args.mixture))
    llm = {k: getattr(args, k) for k in LLM_KEYS} if args.rationale else None
    return build_spec(args.repos or args.input, args.fim_format, args.model_family, cfg, args.max_file_bytes,
                      args.shards, llm, filters=filter_config_from_args(args))
