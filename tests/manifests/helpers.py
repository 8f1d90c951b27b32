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

from manifests import manifest as mf
from manifests.shards import finalize_shards, write_bucket

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]


def make_run(out: pathlib.Path, pipeline: str, outputs: dict[str, tuple[pa.Schema, list[dict]]],
             stages: dict | None = None, buckets: int = 1) -> dict:
    """Write a finished run with the real shard writer and manifest code (no Beam): ``outputs`` maps a prefix to
    its schema and rows (each row with a ``record_id``)."""
    schemas = {}
    for prefix, (schema, rows) in outputs.items():
        schemas[prefix] = schema
        for b in range(buckets):
            part = [r for i, r in enumerate(rows) if i % buckets == b]
            if part:
                write_bucket(str(out), prefix, b, schema, part)
    infos = finalize_shards(str(out), schemas)
    cfg = {"pipeline": pipeline, "inputs": []}
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
