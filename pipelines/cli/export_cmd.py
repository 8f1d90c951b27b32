"""``swemine export --format atif --run <trajectories run> --output DIR``: one validated ATIF file per trajectory."""
from __future__ import annotations

import fsspec

from swemine.corpora.atif_export import export_records
from swemine.failures import CommandError
from swemine.manifests.manifest import ManifestError, read_manifest
from swemine.manifests.shards import read_shard
from swemine.pipelines.outputs import TRAJECTORIES


def add_arguments(parser) -> None:
    parser.add_argument("--format", choices=["atif"], default="atif", help="the interchange format to write")
    parser.add_argument("--run", required=True, help="a finished `swemine run trajectories` output directory")
    parser.add_argument("--output", required=True, help="directory for the <trajectory_id>.json files")


def _records(run: str, manifest: dict):
    fs, root = fsspec.core.url_to_fs(run)
    for out in manifest["outputs"]:
        if out["path"].startswith(TRAJECTORIES + "-"):
            yield from read_shard(fs, f"{root.rstrip('/')}/{out['path']}").to_pylist()


def main(args) -> int:
    try:
        manifest = read_manifest(args.run)
    except ManifestError as exc:
        raise CommandError(str(exc)) from None
    if manifest is None:
        raise CommandError(f"{args.run}: no manifest.json (not a finished run)")
    report = export_records(_records(args.run, manifest), args.output)
    print(f"{args.output}: {report['written']} ATIF file(s) written, {report['valid']} valid, "
          f"{len(report['invalid'])} invalid")
    for name, errors in sorted(report["invalid"].items())[:10]:
        print(f"  invalid {name}: {errors[0]}")
    return 1 if report["invalid"] else 0
