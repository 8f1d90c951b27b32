"""Run a pipeline spec on a Beam runner and turn its outputs into shards plus a manifest.

A pipeline module builds a :class:`PipelineSpec`: the config (hashed into the run id), the shard outputs
with their schemas, and a ``build(p, ctx)`` function that returns one PCollection per output prefix plus the
lists of reject and filtered PCollections. :func:`execute` does the rest: no-op check, Beam options
(FnApiRunner unless told otherwise — never Beam's default runner, which tries to download Prism), shard
writing, counters → manifest.
"""
from __future__ import annotations

import logging
import math
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import apache_beam as beam
import fsspec
import pyarrow as pa
from apache_beam.metrics.metric import MetricsFilter
from apache_beam.options.pipeline_options import PipelineOptions

from swemine.corpora.records import FILTERED_SCHEMA, REJECT_SCHEMA
from swemine.manifests import manifest as mf
from swemine.manifests.shards import TMP_DIR, bucket_of, finalize_shards
from swemine.pipelines import dataflow
from swemine.pipelines import workers as pipeline_workers

log = logging.getLogger("swemine")

REJECTS_PREFIX = "rejects/rejects"
FILTERED_PREFIX = "filtered/filtered"
DEFAULT_SHARD_BYTES = 256 * 1024 * 1024


@dataclass
class RunContext:
    """What a pipeline's ``build`` function gets: its config, the config hash and the output directory."""
    config: dict[str, Any]
    config_hash: str
    output: str


@dataclass
class Built:
    """What ``build`` returns: one PCollection per output prefix, plus reject / filtered PCollections."""
    outputs: dict[str, Any]
    rejects: list = field(default_factory=list)
    filtered: list = field(default_factory=list)


@dataclass
class PipelineSpec:
    name: str
    config: dict[str, Any]
    outputs: dict[str, pa.Schema]                     # prefix -> schema, e.g. {"data/train": TRAJECTORY_SCHEMA}
    build: Callable[[beam.Pipeline, RunContext], Built]
    input_uris: list[str] = field(default_factory=list)
    num_buckets: int | None = None                    # shards per output; default from input size
    partitionable: bool = False                       # build() is written for --workers (see pipelines.workers)
    summarize: Callable[[str, dict], dict] | None = None  # extra manifest entries from the written run


def combine_summaries(*hooks: Callable[[str, dict], dict] | None) -> Callable[[str, dict], dict] | None:
    """One ``PipelineSpec.summarize`` hook running several (``None`` entries skipped), their dicts merged."""
    live = [h for h in hooks if h is not None]
    if not live:
        return None

    def summarize(output: str, stages: dict) -> dict:
        merged: dict = {}
        for hook in live:
            merged.update(hook(output, stages) or {})
        return merged
    return summarize


def beam_options(beam_args: list[str] | None) -> PipelineOptions:
    """Pipeline options with the runner always named (FnApiRunner by default)."""
    args = list(beam_args or [])
    if not any(a == "--runner" or a.startswith("--runner=") for a in args):
        args.append("--runner=FnApiRunner")
    opts = PipelineOptions(args)
    return opts


class WriteShards(beam.PTransform):
    """Bucket records by id and write each bucket as one Parquet file under ``<output>/_tmp``."""

    def __init__(self, output: str, prefix: str, schema: pa.Schema, num_buckets: int):
        super().__init__()
        self.output, self.prefix, self.schema, self.num_buckets = output, prefix, schema, num_buckets

    def expand(self, pcoll):
        n, output, prefix, schema = self.num_buckets, self.output, self.prefix, self.schema
        write = pipeline_workers.bucket_writer()
        return (pcoll
                | "Key" >> beam.Map(lambda r: (bucket_of(r["record_id"], n), r))
                | "Group" >> beam.GroupByKey()
                | "Write" >> beam.MapTuple(lambda b, rows: write(output, prefix, b, schema, rows)))


def _default_buckets(inputs: list[dict]) -> int:
    total = sum(item["bytes"] or 0 for item in inputs)
    return max(1, math.ceil(total / DEFAULT_SHARD_BYTES))


def _counters(result) -> list[tuple[str, int]]:
    query = result.metrics().query(MetricsFilter().with_namespace(mf.COUNTER_NAMESPACE))
    out = []
    for c in query["counters"]:
        value = c.committed if c.committed is not None else c.attempted
        out.append((c.key.metric.name, int(value or 0)))
    return out


def _schemas(spec: PipelineSpec) -> dict[str, pa.Schema]:
    return {**spec.outputs, REJECTS_PREFIX: REJECT_SCHEMA, FILTERED_PREFIX: FILTERED_SCHEMA}


def _run(spec: PipelineSpec, output: str, beam_args: list[str] | None, inputs: list[dict]) -> list[tuple[str, int]]:
    """Run the pipeline writing its buckets under ``output``; return its counters."""
    p, _ = construct(spec, output, beam_args, inputs)
    result = p.run()
    result.wait_until_finish()
    return _counters(result)


def _run_workers(spec: PipelineSpec, output: str, beam_args: list[str] | None, inputs: list[dict],
                 n: int) -> list[tuple[str, int]]:
    """``n`` partitions of the pipeline in ``n`` processes, their buckets merged into ``output``."""
    root, counters = pipeline_workers.run_partitioned(lambda out: _run(spec, out, beam_args, inputs), n)
    try:
        pipeline_workers.merge_buckets(root, n, output, _schemas(spec))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return counters


def construct(spec: PipelineSpec, output: str, beam_args: list[str] | None = None,
              inputs: list[dict] | None = None) -> tuple[beam.Pipeline, dict]:
    """Build (not run) the Beam pipeline of ``spec`` writing into ``output``; returns it with the shard schemas."""
    cfg = {"pipeline": spec.name, **spec.config}
    cfg_hash = mf.config_hash(cfg)
    if inputs is None:
        inputs = mf.input_listing(spec.input_uris)
    n_buckets = spec.num_buckets or _default_buckets(inputs)
    schemas = _schemas(spec)
    ctx = RunContext(config=cfg, config_hash=cfg_hash, output=output)
    p = beam.Pipeline(options=beam_options(dataflow.with_staging(list(beam_args or []))))
    built = spec.build(p, ctx)
    for prefix, pcoll in built.outputs.items():
        pcoll | f"Shards[{prefix}]" >> WriteShards(output, prefix, schemas[prefix], n_buckets)
    for prefix, parts in ((REJECTS_PREFIX, built.rejects), (FILTERED_PREFIX, built.filtered)):
        if parts:
            merged = tuple(parts) | f"Flatten[{prefix}]" >> beam.Flatten()
            merged | f"Shards[{prefix}]" >> WriteShards(output, prefix, schemas[prefix], 1)
    return p, schemas


def dry_run(spec: PipelineSpec, output: str, beam_args: list[str]):
    """Build the job for a runner's dry run (``--dry_run=True``, e.g. on Dataflow) and return Beam's result."""
    p, _ = construct(spec, output, beam_args)
    return p.run()


def execute(spec: PipelineSpec, output: str, beam_args: list[str] | None = None, force: bool = False,
            workers: int = 1) -> dict:
    """Run ``spec`` into ``output``; return the manifest. A finished run with the same config is a no-op.

    ``workers`` > 1 runs a partitionable spec on a local runner as that many processes (same shards)."""
    cfg = {"pipeline": spec.name, **spec.config}
    cfg_hash = mf.config_hash(cfg)
    if dataflow.is_dry_run(list(beam_args or [])):
        result = dry_run(spec, output, list(beam_args or []))
        return {"dry_run": True, "run_id": f"{spec.name}-{cfg_hash}", "state": str(result.state),
                "job": getattr(result, "job", None)}
    if not force and mf.is_complete(output, cfg_hash):
        log.info("%s: up to date (config %s); use --force to recompute", output, cfg_hash)
        manifest = mf.read_manifest(output)
        manifest["noop"] = True
        return manifest
    started = time.time()
    fs, root = fsspec.core.url_to_fs(output)
    if fs.exists(f"{root}/{TMP_DIR}"):
        fs.rm(f"{root}/{TMP_DIR}", recursive=True)
    fs.makedirs(root, exist_ok=True)
    inputs = mf.input_listing(spec.input_uris)
    if workers > 1 and spec.partitionable and pipeline_workers.is_local(list(beam_args or [])):
        counters = _run_workers(spec, output, beam_args, inputs, workers)
    else:
        counters = _run(spec, output, beam_args, inputs)
    stages = mf.stage_counters(counters)
    infos = finalize_shards(output, _schemas(spec))
    extra = spec.summarize(output, stages) if spec.summarize else None
    manifest = mf.build_manifest(pipeline=spec.name, config=cfg, cfg_hash=cfg_hash, inputs=inputs, stages=stages,
                                 outputs=[i.as_dict() for i in infos], started=started, extra=extra)
    mf.write_manifest(output, manifest)
    return manifest


def clean_output(output: str) -> None:
    """Remove a local run directory (used by ``--force`` callers and tests)."""
    shutil.rmtree(output, ignore_errors=True)
