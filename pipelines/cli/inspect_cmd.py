"""``swemine inspect <run-dir>``: schema, counts, a sample row and rejects by reason."""
from __future__ import annotations

import collections
import json

import fsspec

from swemine.failures import CommandError
from swemine.manifests.manifest import ManifestError, damaged_shard, read_manifest
from swemine.manifests.shards import read_shard


def add_arguments(parser) -> None:
    parser.add_argument("run_dir")
    parser.add_argument("--rows", type=int, default=1, help="sample rows to print per output")


def _short(value, limit=160):
    text = json.dumps(value, default=str, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + "..."


def main(args) -> int:
    try:
        manifest = read_manifest(args.run_dir)
    except ManifestError as exc:
        raise CommandError(str(exc)) from None
    if manifest is None:
        print(f"{args.run_dir}: no manifest.json (not a finished run)")
        return 2
    fs, root = fsspec.core.url_to_fs(args.run_dir)
    damaged = damaged_shard(fs, root, manifest["outputs"])
    if damaged:
        raise CommandError(f"{args.run_dir}: {damaged}; run the job again to rebuild it", 1)
    print(f"run {manifest['run_id']}  pipeline={manifest['pipeline']}  version={manifest.get('package_version')}")
    groups = collections.defaultdict(list)
    for o in manifest["outputs"]:
        groups[o["path"].rsplit("-", 3)[0]].append(o)
    for prefix, shards in groups.items():
        rows = sum(s["rows"] for s in shards)
        print(f"\n== {prefix}: {rows} rows in {len(shards)} shard(s)")
        first = f"{root}/{shards[0]['path']}"
        table = read_shard(fs, first)
        print("schema:\n  " + str(table.schema.remove_metadata()).replace("\n", "\n  "))
        for row in table.slice(0, args.rows).to_pylist():
            print("sample: {" + ", ".join(f"{k}: {_short(v)}" for k, v in row.items()) + "}")
        if prefix.startswith("rejects") and rows:
            reasons = collections.Counter()
            for s in shards:
                reasons.update(read_shard(fs, f"{root}/{s['path']}", columns=["reason"])
                               .column("reason").to_pylist())
            print("rejects by reason:")
            for reason, n in reasons.most_common():
                print(f"  {reason}: {n}")
    return 0
