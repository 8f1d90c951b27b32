"""Helpers for publishing tests: synthetic runs written with the real shard/manifest code, and subprocesses
that talk to the loopback Hub (``HF_ENDPOINT`` is read when ``huggingface_hub``/``datasets`` are imported)."""
from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import time

import pyarrow as pa

from swemine.corpora.records import FILTERED_SCHEMA, REJECT_SCHEMA
from swemine.manifests import manifest as mf
from swemine.manifests.shards import finalize_shards, write_bucket

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
LOC_SCHEMA = pa.schema([pa.field("record_id", pa.string(), nullable=False), pa.field("repo", pa.string()),
                        pa.field("gold_files", pa.list_(pa.string())), pa.field("dc_file", pa.float32()),
                        pa.field("spans", pa.list_(pa.struct([pa.field("file", pa.string()),
                                                              pa.field("start", pa.int32())])))])
VIEW_SCHEMA = pa.schema([pa.field("record_id", pa.string(), nullable=False), pa.field("prompt", pa.large_string()),
                         pa.field("error_category", pa.string())])
FIM_SCHEMA = pa.schema([pa.field("record_id", pa.string(), nullable=False), pa.field("repo", pa.string()),
                        pa.field("license", pa.string()),
                        pa.field("metadata", pa.struct([pa.field("loc", pa.int32()),
                                                        pa.field("complexity", pa.float64()),
                                                        pa.field("inferability", pa.float64()),
                                                        pa.field("fim_score", pa.float64())]))])


def make_run(out: pathlib.Path, pipeline: str, outputs: dict[str, tuple[pa.Schema, list[dict]]],
             stages: dict | None = None, buckets: int = 1, secrets: str = "scrub") -> dict:
    """Write a finished run with the real shard writer and manifest code (no Beam): ``outputs`` maps a prefix to
    its schema and rows (each row with a ``record_id``); ``secrets`` is the run's ``--scrub-secrets``."""
    schemas = {}
    for prefix, (schema, rows) in outputs.items():
        schemas[prefix] = schema
        for b in range(buckets):
            part = [r for i, r in enumerate(rows) if i % buckets == b]
            if part:
                write_bucket(str(out), prefix, b, schema, part)
    infos = finalize_shards(str(out), schemas)
    cfg = {"pipeline": pipeline, "inputs": [], "filters": {"secrets": secrets}}
    manifest = mf.build_manifest(pipeline=pipeline, config=cfg, cfg_hash=mf.config_hash(cfg), inputs=[],
                                 stages=stages or {}, outputs=[i.as_dict() for i in infos], started=time.time())
    mf.write_manifest(str(out), manifest)
    return manifest


def hub_env(hub_url: str, home: pathlib.Path, token: str | None = None) -> dict:
    """Environment for a subprocess that talks to the loopback Hub (HF_ENDPOINT is read at import time)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env.update({"HF_ENDPOINT": hub_url, "HF_HUB_DISABLE_XET": "1", "HF_HUB_OFFLINE": "0", "HF_HOME": str(home),
                "HF_HUB_DISABLE_TELEMETRY": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1", "PYTHONPATH": str(REPO_ROOT)})
    if token:
        env["HF_TOKEN"] = token
    return env


_LOAD_SCRIPT = """
import json, sys
import datasets
repo, revision = sys.argv[1], sys.argv[2] or None
out = {}
for config in sys.argv[3:]:
    dd = datasets.load_dataset(repo, config, revision=revision)
    out[config] = {split: ds.num_rows for split, ds in dd.items()}
    out[config]["_columns"] = sorted(next(iter(dd.values())).column_names)
print(json.dumps(out))
"""


def load_back(hub_url: str, home: pathlib.Path, repo_id: str, configs: list[str], revision: str = "") -> dict:
    """``datasets.load_dataset`` of each config from the loopback Hub, in a fresh process:
    ``{config: {split: rows, "_columns": [...]}}``."""
    proc = subprocess.run([sys.executable, "-c", _LOAD_SCRIPT, repo_id, revision, *configs],
                          env=hub_env(hub_url, home), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def make_mixed_runs(root: pathlib.Path) -> None:
    """A folder of three runs with other pipelines' prefixes: ``loc/`` (localization train/test splits, a reject, a
    decontamination drop and its report), ``errors/`` (two view outputs in 2 shards, no rejects) and ``fim/``
    (FIM samples whose scores sit in a ``metadata`` struct)."""
    loc_rows = [{"record_id": f"l{i}", "repo": "psf/requests" if i % 2 else "pallets/flask",
                 "gold_files": ["a.py"] * (i % 3 + 1), "dc_file": i / 10,
                 "spans": [{"file": "a.py", "start": i}]} for i in range(7)]
    make_run(root / "loc", "localization", {
        "localization/train": (LOC_SCHEMA, loc_rows[:5]), "localization/test": (LOC_SCHEMA, loc_rows[5:]),
        "rejects/rejects": (REJECT_SCHEMA, [{"record_id": "r1", "stage": "mine", "reason": "no_patch"}]),
        "filtered/filtered": (FILTERED_SCHEMA, [{"record_id": "f1", "stage": "decontam", "reason": "swe_bench",
                                                 "evidence_json": '{"benchmark": "swe-bench-verified"}'}])},
        stages={"mine": {"in": 8, "out": 7, "rejected": {"no_patch": 1}, "filtered": {}, "info": {}},
                "decontam": {"in": 8, "out": 7, "rejected": {}, "filtered": {"swe_bench": 1}, "info": {}}})
    (root / "loc" / "contamination_report.md").write_text("1 record matched SWE-bench Verified (django).\n")
    view_rows = [{"record_id": f"v{i}", "prompt": "x" * i, "error_category": ("syntax", "wrong_file")[i % 2]}
                 for i in range(4)]
    make_run(root / "errors", "errors", {
        "views/diagnosis/train": (VIEW_SCHEMA, view_rows), "views/recovery/train": (VIEW_SCHEMA, view_rows[:2]),
        "rejects/rejects": (REJECT_SCHEMA, [])}, buckets=2)
    fim_rows = [{"record_id": f"f{i}", "repo": "psf/requests", "license": "Apache-2.0",
                 "metadata": {"loc": 5 + 3 * i, "complexity": 0.1 * i, "inferability": 1 - 0.1 * i,
                              "fim_score": 0.05 * i}} for i in range(6)]
    make_run(root / "fim", "fim", {"fim/train": (FIM_SCHEMA, fim_rows)})
