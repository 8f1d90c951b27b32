"""Run a job's :class:`PipelineSpec` on a Beam runner: its outputs become shards (the one place every record gets
the run's ``config_hash``), its counters the manifest. The runner is always named: FnApiRunner by default, never
Beam's default runner (it tries to download Prism)."""
from __future__ import annotations

import contextlib
import io
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import apache_beam as beam
import fsspec
import pyarrow as pa
from apache_beam.metrics.metric import MetricsFilter
from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.pipeline import PipelineVisitor

from swemine.corpora.records import FILTERED_SCHEMA, REJECT_SCHEMA
from swemine.failures import RunFailed, environment_failure
from swemine.filters.secrets import SecretScanner, scrub_row
from swemine.manifests import manifest as mf
from swemine.manifests.lock import check_output, output_lock
from swemine.manifests.shards import (
    TMP_DIR,
    bucket_of,
    finalize_shards,
    merge_parts,
    parts_folder,
    read_rows,
    row_key,
    row_order,
    write_keyed_bucket,
)
from swemine.pipelines.engine import dataflow
from swemine.pipelines.engine.sinks import WriteParts
from swemine.pipelines.engine.stage import pack, unpack
from swemine.pipelines.outputs import FILTERED as FILTERED_PREFIX
from swemine.pipelines.outputs import REJECTS as REJECTS_PREFIX
from swemine.runtime import local_run

log = logging.getLogger("swemine")

DEFAULT_SHARD_BYTES = 256 * 1024 * 1024
LOCAL_RUNNERS = ("FnApiRunner", "DirectRunner", "BundleBasedDirectRunner", "SwitchingDirectRunner")


def beam_args_problem(beam_args: list[str]) -> str:
    """One line on what is wrong with the Beam options, or ``""``: a flag no Beam options class defines (Beam
    would only warn and drop a typo such as ``--inptu``), a value of the wrong type, an unknown ``--runner``."""
    from apache_beam.options.pipeline_options import StandardOptions

    usage = io.StringIO()
    try:
        with contextlib.redirect_stderr(usage):
            given = PipelineOptions(beam_args).get_all_options(retain_unknown_options=True)
    except SystemExit:                  # argparse: a value of the wrong type
        return usage.getvalue().strip().splitlines()[-1].split("error: ", 1)[-1]
    unknown = set(given) - set(PipelineOptions([]).get_all_options())
    flags = [a.split("=", 1)[0] for a in beam_args if a.startswith("--") and a[2:].split("=", 1)[0] in unknown]
    if flags:
        return f"unrecognized arguments: {' '.join(flags)} (not a swemine flag of this job, nor a Beam pipeline option)"
    runner, names = given.get("runner"), StandardOptions.KNOWN_RUNNER_NAMES
    if runner and "." not in runner and not {runner.lower(), f"{runner.lower()}runner"} & {n.lower() for n in names}:
        return f"--runner {runner}: not a Beam runner (one of {', '.join(names)}, or a runner class's dotted path)"
    return ""


def is_local(beam_args: list[str]) -> bool:
    """True when the Beam arguments name no runner or a local one (the run's process is the one that runs it)."""
    return dataflow.runner_name(beam_args) in (None, *LOCAL_RUNNERS)


def uses_parts(beam_args: list[str], output: str) -> bool:
    """True when the local sink (:mod:`swemine.pipelines.engine.sinks`) writes the shards: a local runner writing
    into a local folder."""
    return is_local(beam_args) and "://" not in output


@dataclass
class Built:
    """What ``build`` returns: one PCollection per output prefix, plus reject / filtered PCollections."""
    outputs: dict[str, Any]
    rejects: list = field(default_factory=list)
    filtered: list = field(default_factory=list)


@dataclass
class PipelineSpec:
    """What a job module builds: its name, resolved config, outputs and ``build`` function."""
    name: str
    config: Any                                       # the job's resolved config (a test's spec: a plain mapping)
    outputs: dict[str, pa.Schema]                     # prefix -> schema, e.g. {"trajectories/train": TRAJECTORY_SCHEMA}
    build: Callable[[beam.Pipeline], Built]
    input_uris: list[str] = field(default_factory=list)
    num_buckets: int | None = None                    # shards per output; default from input size
    summarize: Callable[[str, dict], dict] | None = None  # extra manifest entries from the written run
    scrub_filtered: bool = True                       # False when filtered rows derive from scrubbed inputs only


def run_config(spec: PipelineSpec) -> dict[str, Any]:
    """The run config of ``spec`` as JSON: the job's name and its resolved config's ``to_json()``."""
    config = spec.config.to_json() if hasattr(spec.config, "to_json") else dict(spec.config)
    return {"pipeline": spec.name, **config}


def beam_options(beam_args: list[str] | None, workers: int = 1) -> PipelineOptions:
    """Pipeline options with the runner always named (FnApiRunner by default); ``workers`` > 1 on a local runner is
    Beam's own multi-processing mode."""
    args = list(beam_args or [])
    if dataflow.runner_name(args) is None:
        args.append("--runner=FnApiRunner")
    if is_local(args):
        # Beam's type inference disassembles every transform's function (0.13-0.23 s per run) to choose coders for
        # records that are dicts and tuples anyway; remote runs and the Dataflow dry run keep it
        args.append("--no_pipeline_type_check")
        if workers > 1 and not any(a.startswith("--direct_") for a in args):
            args += [f"--direct_num_workers={workers}", "--direct_running_mode=multi_processing"]
    return PipelineOptions(args)


class WriteShards(beam.PTransform):
    """Stamp the run's ``config_hash`` on every record and write each bucket of records (by id) as one Parquet file
    under ``<output>/_tmp``: shuffled packed beside their place in the bucket, or with ``parts`` (a local run)
    through :class:`~swemine.pipelines.engine.sinks.WriteParts` (the same bytes)."""

    def __init__(self, output: str, prefix: str, schema: pa.Schema, num_buckets: int, config_hash: str = "",
                 parts: bool = False):
        super().__init__()
        self.output, self.prefix, self.schema, self.num_buckets = output, prefix, schema, num_buckets
        self.config_hash, self.parts = config_hash, parts

    def expand(self, pcoll):
        n, output, prefix, schema, stamp = self.num_buckets, self.output, self.prefix, self.schema, self.config_hash
        prepare = (lambda r: {**r, "config_hash": stamp}) if "config_hash" in schema.names else (lambda r: r)
        if self.parts:                                  # a local run: the merge sorts and writes
            return pcoll | "WriteParts" >> beam.ParDo(WriteParts(output, prefix, schema, n, prepare))
        fields = row_order(schema)
        return (pcoll
                | "Key" >> beam.Map(lambda r: (bucket_of(r["record_id"], n), (row_key(fields, r), pack(prepare(r)))))
                | "Group" >> beam.GroupByKey()
                | "Write" >> beam.MapTuple(lambda b, keyed: write_keyed_bucket(output, prefix, b, schema, keyed, unpack)))


class ScrubRows(beam.DoFn):
    """Rejects and filtered rows with secrets replaced in every string field (excerpts, record_json, evidence)."""

    def setup(self):
        self.scanner = SecretScanner()

    def process(self, row):
        yield scrub_row(row, self.scanner)


def _counters(result) -> list[tuple[str, int]]:
    query = result.metrics().query(MetricsFilter().with_namespace(mf.COUNTER_NAMESPACE))
    out = []
    for c in query["counters"]:
        value = c.committed if c.committed is not None else c.attempted
        out.append((c.key.metric.name, int(value or 0)))
    return out


def _schemas(spec: PipelineSpec) -> dict[str, pa.Schema]:
    return {**spec.outputs, REJECTS_PREFIX: REJECT_SCHEMA, FILTERED_PREFIX: FILTERED_SCHEMA}


class _Stages(PipelineVisitor):
    """The counted stages of a pipeline in the order they were applied (every counting DoFn has a ``stage``)."""

    def __init__(self):
        self.order: list[str] = []

    def visit_transform(self, node) -> None:
        stage = getattr(getattr(node.transform, "fn", None), "stage", None)
        if isinstance(stage, str) and stage not in self.order:
            self.order.append(stage)


def construct(spec: PipelineSpec, output: str, cfg_hash: str, beam_args: list[str], inputs: list[dict],
              workers: int = 1) -> beam.Pipeline:
    """The Beam pipeline of ``spec`` writing into ``output`` (built, not run)."""
    n_buckets = spec.num_buckets or max(1, math.ceil(sum(i["bytes"] or 0 for i in inputs) / DEFAULT_SHARD_BYTES))
    schemas = _schemas(spec)
    parts = uses_parts(beam_args, output)
    p = beam.Pipeline(options=beam_options(dataflow.with_staging(beam_args), workers))
    built = spec.build(p)
    for prefix, pcoll in built.outputs.items():
        pcoll | f"Shards[{prefix}]" >> WriteShards(output, prefix, schemas[prefix], n_buckets, cfg_hash, parts)
    filters = getattr(spec.config, "filters", None)
    scrub = filters is not None and filters.scrubs
    for prefix, pcolls in ((REJECTS_PREFIX, built.rejects), (FILTERED_PREFIX, built.filtered)):
        if pcolls:
            merged = tuple(pcolls) | f"Flatten[{prefix}]" >> beam.Flatten()
            if scrub and (prefix == REJECTS_PREFIX or spec.scrub_filtered):
                merged = merged | f"Scrub[{prefix}]" >> beam.ParDo(ScrubRows())
            merged | f"Shards[{prefix}]" >> WriteShards(output, prefix, schemas[prefix], 1, cfg_hash, parts)
    return p


def execute(spec: PipelineSpec, output: str, beam_args: list[str] | None = None, force: bool = False,
            workers: int = 1) -> dict:
    """Run ``spec`` into ``output`` with ``workers`` local processes (the same shards for any number); return the
    manifest. A finished run with the same config is a no-op unless ``force``."""
    args = list(beam_args or [])
    cfg = run_config(spec)
    cfg_hash = mf.config_hash(cfg)
    if dataflow.is_dry_run(args):       # a runner's dry run (Dataflow): the job is built, nothing runs
        result = construct(spec, output, cfg_hash, args, mf.input_listing(spec.input_uris, hashed=False)).run()
        return {"dry_run": True, "run_id": f"{spec.name}-{cfg_hash}", "state": str(result.state),
                "job": getattr(result, "job", None)}
    check_output(output, list(cfg.get("inputs") or []))
    with output_lock(output):
        if not force and mf.is_complete(output, cfg_hash, cfg):
            log.info("%s: up to date (config %s); use --force to recompute", output, cfg_hash)
            return {**mf.read_manifest(output), "noop": True}
        started = time.time()
        fs, root = fsspec.core.url_to_fs(output)
        _remove_output_tmp(fs, root)
        fs.makedirs(root, exist_ok=True)
        local = is_local(args)
        inputs = mf.input_listing(spec.input_uris, hashed=not local)   # a local run hashes after reading (below)
        try:
            with local_run() if local else contextlib.nullcontext():
                p = construct(spec, output, cfg_hash, args, inputs, workers)
                result = p.run()
                result.wait_until_finish()
                if uses_parts(args, output):
                    merge_parts(output, _schemas(spec), workers)
            if local:                   # the files this process's readers hashed whole, then the others
                hashes = mf.read_hashes(inputs)
                hashes.update(mf.input_hashes([i for i in inputs if i["uri"] not in hashes]))
                inputs = mf.with_hashes(inputs, hashes)
        except BaseException as exc:    # failed or interrupted: no half-written bucket stays behind
            _remove_output_tmp(fs, root)
            found = None if isinstance(exc, RunFailed) else environment_failure(exc, parts_folder(root))
            if found:
                raise RunFailed(found) from exc
            raise
        stages = mf.stage_counters(_counters(result))
        infos = finalize_shards(output, _schemas(spec))
        visitor = _Stages()
        p.visit(visitor)
        extra = {"stage_order": visitor.order, **(spec.summarize(output, stages) if spec.summarize else {})}
        filters = getattr(spec.config, "filters", None)
        if filters is not None and filters.benchmarks:
            extra["contamination"] = contamination_report(output, filters)
        manifest = mf.build_manifest(pipeline=spec.name, config=cfg, cfg_hash=cfg_hash, inputs=inputs, stages=stages,
                                     outputs=[i.as_dict() for i in infos], started=started, extra=extra)
        mf.write_manifest(output, manifest)
        return manifest


def contamination_report(output: str, filters) -> dict:
    """Write the contamination report of the ``decontam`` drops in ``filtered/`` next to the shards; its summary."""
    from swemine.filters.benchmark_sets import load_benchmarks
    from swemine.filters.report import contamination_rows, write_contamination_report

    rows = contamination_rows(read_rows(output, FILTERED_PREFIX))
    counts = load_benchmarks(list(filters.benchmarks)).counts()
    return write_contamination_report(output, rows, counts, filters.decontam.config().levels)


def _remove_output_tmp(fs, root: str) -> None:
    """Remove the run folder's ``_tmp`` (buckets before :func:`finalize_shards`), if there is one."""
    if fs.exists(f"{root}/{TMP_DIR}"):
        fs.rm(f"{root}/{TMP_DIR}", recursive=True)
