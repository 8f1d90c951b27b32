"""Filters for every ``swemine run`` pipeline: CLI flags, a JSON filter config, one Beam helper, the report.

API (what a pipeline module calls)::

    from swemine.pipelines.filtering import add_filter_arguments, filter_config_from_args, apply_filters, \
        contamination_summarizer

    def add_arguments(parser):                       # in the pipeline module
        ...; add_filter_arguments(parser)

    def spec_from_args(args):
        config = {..., "filters": filter_config_from_args(args)}     # a JSON dict: part of the config hash
        ...
        def build(p, ctx):
            records = ...                                            # a PCollection of records of one type
            kept, filtered = apply_filters(records, "fim", ctx.config["filters"], label="Fim")
            return Built(outputs={"fim/train": kept}, rejects=[...], filtered=[filtered, ...])
        return PipelineSpec(..., summarize=contamination_summarizer(config["filters"]))

``apply_filters(pcoll, record_type, filter_config, ctx=None, label="")`` runs, in order and each only when
configured: ``decontam`` (methods.md §5.3 levels against ``--benchmark`` references, with corpus boilerplate
n-grams computed in a first pass and passed as a side input) → ``secrets`` (scrub or drop) → ``license``
(allow-list) → ``quality`` + ``quality_group`` (trajectories only: per-record rules, then per-instance
duplicate-action / keep-N-shortest) → ``dedup_exact`` / ``dedup_near``. It returns ``(kept, filtered)``;
``filtered`` (one PCollection of ``FILTERED_SCHEMA`` rows) goes into ``Built.filtered`` so that every drop lands
in ``<output>/filtered/`` with its reason and evidence. Call it once per output type, with a distinct ``label``
when a pipeline filters several types. Record types: ``trajectory``, ``task``, ``source_file``, ``fim``,
``localization``, ``error_diagnosis``, ``error_view`` (see :data:`swemine.filters.fields.FIELD_SPECS`); any other type falls back to
scanning every string field. A pipeline may override a type's fields in the config:
``filter_config["fields"] = {"fim": {"texts": ["prefix", "middle", "suffix"], "dedup_key": ["file_content"]}}``.

``contamination_summarizer(filter_config)`` is a ``PipelineSpec.summarize`` hook: after the shards are written
it reads the ``decontam`` drops from ``filtered/`` and writes ``contamination_report.parquet`` and
``contamination_report.md`` next to the shards; its summary goes into ``manifest.json``.
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import os
from collections.abc import Mapping
from typing import Any

import apache_beam as beam

from swemine.corpora.records import FILTERED_SCHEMA
from swemine.filters.benchmarks import load_benchmarks
from swemine.filters.canon import RepoCanon, normalize_repo, read_alias_table, root_commits
from swemine.filters.decontam import LEVELS, DecontamConfig, Decontaminator, boilerplate_features, doc_key
from swemine.filters.decontam import STAGE as DECONTAM_STAGE
from swemine.filters.dedup import DedupConfig
from swemine.filters.fields import spec_for
from swemine.filters.license import PERMISSIVE, LicenseConfig, license_stage_fn
from swemine.filters.quality import GROUP_STAGE, QualityConfig, instance_key, quality_stage_fn, select_per_instance
from swemine.filters.report import contamination_rows, write_contamination_report
from swemine.filters.secrets import SecretsConfig, secrets_stage_fn
from swemine.manifests.shards import read_rows
from swemine.pipelines.dedup_stage import Dedup
from swemine.pipelines.runner import FILTERED_PREFIX
from swemine.pipelines.stage import FILTERED, REJECTS, Counters, StageDoFn, apply_stage, route
from swemine.pipelines.workers import broadcast, exchange


# -- CLI ------------------------------------------------------------------------------------------------------
def _levels_arg(value: str) -> str:
    levels = [x.strip() for x in value.split(",") if x.strip()]
    unknown = sorted(set(levels) - set(LEVELS))
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown level(s) {unknown}; choose from {', '.join(LEVELS)}")
    return ",".join(levels)


def add_filter_arguments(parser: argparse.ArgumentParser) -> None:
    """The filter flags every ``swemine run`` pipeline accepts."""
    g = parser.add_argument_group("filters")
    g.add_argument("--benchmark", action="append", default=[], metavar="[NAME=]PATH_OR_HUB_ID",
                   help="benchmark reference to decontaminate against (repeatable): SWE-bench family, HumanEval, "
                        "MBPP, APPS, DS-1000, LiveCodeBench; local JSON/JSONL/Parquet or a Hub dataset id[:split]")
    g.add_argument("--decontam-levels", default=",".join(LEVELS), type=_levels_arg,
                   help="comma list of instance,repo,temporal,content (default: all)")
    g.add_argument("--cutoff-date", default="", help="drop records dated on/after this ISO date (temporal level)")
    g.add_argument("--undated", choices=("keep", "drop"), default="keep",
                   help="what the temporal level does with records that carry no date")
    g.add_argument("--grey-repo", action="append", default=[], help="repo to hold out with reason grey_repo")
    g.add_argument("--repo-alias", action="append", default=[], metavar="OLD=NEW",
                   help="repo rename/alias (repeatable), or a JSON/CSV alias file")
    g.add_argument("--repo-git", action="append", default=[], metavar="OWNER/NAME=PATH",
                   help="local git clone of a repo: forks sharing its root commit map to one canonical repo")
    g.add_argument("--ngram-n", type=int, default=10, help="word n-gram size of the content level")
    g.add_argument("--scrub-secrets", choices=("off", "scrub", "drop"), default="off",
                   help="secrets/PII: replace with placeholders, or drop the record")
    g.add_argument("--license-allow", default="",
                   help="comma list of allowed SPDX ids, or 'permissive'; empty = no license filter")
    g.add_argument("--license-map", default="", help="JSON/CSV file repo -> license (metadata, wins over fields)")
    g.add_argument("--quality", action="store_true", help="trajectory quality rules (malformed, tool misuse, "
                                                          "duplicate action sequences per instance)")
    g.add_argument("--keep-shortest", type=int, default=0, help="keep the N shortest trajectories per instance")
    g.add_argument("--dedup", choices=("off", "exact", "near", "both"), default="off",
                   help="exact (content hash) and/or near (MinHash-LSH) dedup on the type's dedup key")
    g.add_argument("--dedup-threshold", type=float, default=0.8, help="near-dup Jaccard threshold")


def _file_digest(spec: str) -> str:
    source = spec.split("=", 1)[1] if "=" in spec.split("/")[0] else spec
    if os.path.isfile(source):
        with open(source, "rb") as fh:
            return hashlib.sha256(fh.read()).hexdigest()[:16]
    return ""


def _aliases(values: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for v in values:
        if os.path.isfile(v):
            with open(v, encoding="utf-8") as fh:
                out.update(read_alias_table(fh.read()))
        else:
            out.update(read_alias_table(v))
    return out


def _read_license_map(path: str) -> dict[str, str]:
    """``{repo: license}`` from a JSON object or ``repo,license`` CSV lines."""
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    if text.lstrip().startswith("{"):
        return {normalize_repo(k): v for k, v in json.loads(text).items()}
    rows = csv.reader(io.StringIO(text))
    return {normalize_repo(r[0]): r[1].strip() for r in rows if len(r) >= 2 and not r[0].startswith("#")}


def filter_config_from_args(args: argparse.Namespace) -> dict[str, Any]:
    """The parsed flags as a JSON-able dict (stored in the run config, hence in its hash)."""
    roots = {}
    for item in args.repo_git:
        name, _, path = item.partition("=")
        roots[name] = root_commits(path)
    license_map = _read_license_map(args.license_map) if args.license_map else {}
    levels = [x for x in args.decontam_levels.split(",") if x]
    allow = [] if not args.license_allow else (
        list(PERMISSIVE) if args.license_allow == "permissive" else [x.strip() for x in args.license_allow.split(",")])
    return {
        "benchmarks": list(args.benchmark),
        "benchmark_digests": [_file_digest(b) for b in args.benchmark],
        "decontam": {"levels": levels,
                     "cutoff_date": args.cutoff_date, "undated": args.undated, "grey_repos": list(args.grey_repo),
                     "ngram_n": args.ngram_n},
        "repo_aliases": _aliases(args.repo_alias), "repo_roots": roots,
        "secrets": args.scrub_secrets,
        "license": {"allow": allow, "repo_licenses": sorted(license_map.items())} if allow else None,
        "quality": {"keep_shortest": args.keep_shortest} if (args.quality or args.keep_shortest) else None,
        "dedup": {"mode": args.dedup, "threshold": args.dedup_threshold} if args.dedup != "off" else None,
    }


# -- building the plain-Python filters from the JSON config ---------------------------------------------------
def decontam_config(fcfg: Mapping[str, Any]) -> DecontamConfig:
    d = dict(fcfg.get("decontam") or {})
    return DecontamConfig(levels=tuple(d.get("levels") or LEVELS), cutoff_date=d.get("cutoff_date") or "",
                          undated=d.get("undated") or "keep", grey_repos=tuple(d.get("grey_repos") or ()),
                          ngram_n=int(d.get("ngram_n") or 10))


def field_spec(fcfg: Mapping[str, Any], record_type: str):
    """The record type's field spec with the config's ``fields[record_type]`` overrides (e.g. other text paths)."""
    return spec_for(record_type, (fcfg.get("fields") or {}).get(record_type))


def build_decontaminator(fcfg: Mapping[str, Any]) -> Decontaminator:
    """Load the benchmarks and build the decontaminator the config describes (once per worker)."""
    bench = load_benchmarks(list(fcfg["benchmarks"]))
    canon = RepoCanon(aliases=fcfg.get("repo_aliases") or {}, roots=fcfg.get("repo_roots") or {},
                      preferred=bench.eval_repos)
    return Decontaminator(bench, decontam_config(fcfg), canon)


class _Features(beam.DoFn):
    """Record → ``(feature, document key)`` for every benchmark n-gram / line it contains (boilerplate pass)."""

    def __init__(self, fcfg, record_type):
        self.fcfg, self.record_type = fcfg, record_type

    def setup(self):
        self.decon = build_decontaminator(self.fcfg)
        self.spec = field_spec(self.fcfg, self.record_type)

    def process(self, record):
        key = doc_key(record, self.spec)
        for f in sorted(self.decon.features(record, self.spec)):
            yield f, key


class _DecontamDoFn(StageDoFn):
    """The ``decontam`` stage: a :class:`StageDoFn` whose function waits for the boilerplate side input."""

    def __init__(self, fcfg, record_type):
        super().__init__(DECONTAM_STAGE, lambda: build_decontaminator(fcfg))
        self.record_type, self.spec = record_type, field_spec(fcfg, record_type)

    def setup(self):
        super().setup()
        self._decon, self._fn = self._fn, None

    def process(self, element, boilerplate=()):
        if self._fn is None:
            self._decon.boilerplate = set(boilerplate)
            self._fn = self._decon.stage_fn(self.record_type, self.spec)
        yield from super().process(element)


def _boilerplate(pcoll, fcfg, record_type):
    """PCollection of the benchmark features frequent in ``pcoll`` (see :func:`swemine.filters.decontam.boilerplate_features`)."""
    cfg = decontam_config(fcfg)
    feats = (broadcast(pcoll | "BoilerFeatures" >> beam.ParDo(_Features(fcfg, record_type)), "AllFeatures")
             | "BoilerDistinct" >> beam.Distinct())
    spec = field_spec(fcfg, record_type)
    n_docs = (broadcast(pcoll | "DocKeys" >> beam.Map(lambda r: doc_key(r, spec)), "AllDocKeys")
              | "DocDistinct" >> beam.Distinct() | "DocCount" >> beam.combiners.Count.Globally())
    counts = (feats | "FeatureOnly" >> beam.Keys() | "FeatureCount" >> beam.combiners.Count.PerElement()
              | "AllCounts" >> beam.combiners.ToList())
    return (counts | "Frequent" >> beam.FlatMap(
        lambda kvs, n: sorted(boilerplate_features(dict(kvs), n, cfg)), n=beam.pvalue.AsSingleton(n_docs)))


class _GroupStage(beam.DoFn):
    """``(instance, trajectories)`` → per-instance quality selection, counted per record."""

    def __init__(self, cfg: QualityConfig, record_type: str):
        self.cfg, self.record_type = cfg, record_type

    def setup(self):
        self.counters = Counters(GROUP_STAGE)

    def process(self, kv):
        recs = list(kv[1])
        self.counters.inc("in", len(recs))
        yield from route(self.counters, select_per_instance(recs, self.cfg, self.record_type))


class ApplyFilters(beam.PTransform):
    """The filter chain as one composite transform (so several record types can be filtered in one pipeline)."""

    def __init__(self, record_type: str, filter_config: Mapping[str, Any] | None):
        super().__init__()
        self.record_type, self.fcfg = record_type, dict(filter_config or {})

    def expand(self, pcoll):
        fcfg, record_type = self.fcfg, self.record_type
        spec = field_spec(fcfg, record_type)
        filtered, kept = [], pcoll
        if fcfg.get("benchmarks"):
            side = {}
            if "content" in decontam_config(fcfg).levels:
                side["boilerplate"] = beam.pvalue.AsList(_boilerplate(kept, fcfg, record_type))
            res = kept | "Decontam" >> beam.ParDo(_DecontamDoFn(fcfg, record_type), **side).with_outputs(
                REJECTS, FILTERED, main="main")
            kept = res.main
            filtered += [res[FILTERED], res[REJECTS] | "DecontamErrors" >> beam.Map(reject_as_filtered)]
        if fcfg.get("secrets") in ("scrub", "drop"):
            scfg = SecretsConfig(mode=fcfg["secrets"])
            kept, rej, filt = apply_stage(kept, "secrets", lambda: secrets_stage_fn(record_type, scfg, spec))
            filtered += [filt, rej | "SecretsErrors" >> beam.Map(reject_as_filtered)]
        if fcfg.get("license"):
            lic = fcfg["license"]
            lcfg = LicenseConfig(allow=tuple(lic.get("allow") or PERMISSIVE),
                                 repo_licenses=tuple(tuple(x) for x in lic.get("repo_licenses") or ()))
            kept, rej, filt = apply_stage(kept, "license", lambda: license_stage_fn(record_type, lcfg, spec))
            filtered += [filt, rej | "LicenseErrors" >> beam.Map(reject_as_filtered)]
        if fcfg.get("quality") and record_type == "trajectory":
            qcfg = QualityConfig(keep_shortest=int(fcfg["quality"].get("keep_shortest") or 0))
            kept, rej, filt = apply_stage(kept, "quality", lambda: quality_stage_fn(record_type, qcfg))
            res = (exchange(kept | "ByInstance" >> beam.Map(lambda t: (instance_key(t), t)), "ToInstance",
                            key=lambda kv: kv[0])
                   | "InstanceGroup" >> beam.GroupByKey()
                   | "QualityGroup" >> beam.ParDo(_GroupStage(qcfg, record_type)).with_outputs(FILTERED, main="main"))
            kept = res.main
            filtered += [filt, rej | "QualityErrors" >> beam.Map(reject_as_filtered), res[FILTERED]]
        if fcfg.get("dedup"):
            mode = fcfg["dedup"].get("mode", "both")
            dcfg = DedupConfig(exact=mode in ("exact", "both"), near=mode in ("near", "both"),
                               threshold=float(fcfg["dedup"].get("threshold") or 0.8))
            kept, filt = kept | "Dedup" >> Dedup(record_type, dcfg, spec)
            filtered.append(filt)
        if not filtered:
            return kept, pcoll.pipeline | "NoFiltered" >> beam.Create([])
        return kept, tuple(filtered) | "FilteredAll" >> beam.Flatten()


def apply_filters(pcoll, record_type: str, filter_config: Mapping[str, Any] | None, ctx=None, label: str = ""):
    """Run the configured filters over ``pcoll`` (records of ``record_type``); returns ``(kept, filtered)``.

    ``ctx`` (the :class:`swemine.pipelines.runner.RunContext`) is accepted for symmetry with other helpers; the filter
    config carries everything. ``label`` names the composite transform (default: the record type).
    """
    return pcoll | f"Filters[{label or record_type}]" >> ApplyFilters(record_type, filter_config)


def reject_as_filtered(rej: Mapping[str, Any]) -> dict:
    """A filter function that raised on one record: a ``Filtered`` row with reason ``filter_error:<reason>``."""
    row = {k: rej.get(k) or "" for k in FILTERED_SCHEMA.names}
    row.update({"record_id": rej.get("subject_id") or rej.get("record_id"), "stage": rej.get("stage", ""),
                "reason": f"filter_error:{rej.get('reason', '')}", "record_type": "",
                "evidence_json": json.dumps({"message": rej.get("message", "")}), "record_json": rej.get("excerpt", "")})
    return row


def contamination_summarizer(filter_config: Mapping[str, Any] | None):
    """A ``PipelineSpec.summarize`` hook writing the contamination report; ``None`` when no benchmark is given."""
    fcfg = dict(filter_config or {})
    if not fcfg.get("benchmarks"):
        return None

    def summarize(output: str, stages: dict) -> dict:
        rows = contamination_rows(read_rows(output, FILTERED_PREFIX))
        counts = load_benchmarks(list(fcfg["benchmarks"])).counts()
        return {"contamination": write_contamination_report(output, rows, counts, decontam_config(fcfg).levels)}

    return summarize
