"""Finished runs on disk, seen as publishable output groups.

A *run* is a directory holding ``manifest.json`` plus its shards; a *source* given to ``swemine publish`` or
``swemine report`` is either one run or a folder of runs (the default job writes ``<root>/trajectories/``,
``<root>/localization/``, ...). Each run's shards are grouped by prefix (``trajectories/train``, ``rejects/rejects``,
``views/diagnosis/train`` ...); every group becomes one dataset config with one split.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.parquet as pq

from swemine.manifests.manifest import MANIFEST_NAME, ManifestError, read_manifest

_SHARD_RE = re.compile(r"^(?P<prefix>.+)-(?P<i>\d{5})-of-(?P<n>\d{5})\.parquet$")
SPLIT_NAMES = ("train", "validation", "test")
REJECTS_KIND = "rejects"
FILTERED_KIND = "filtered"


@dataclass(frozen=True)
class Shard:
    path: str            # relative to the run directory
    local: str           # absolute path on disk
    rows: int
    bytes: int
    sha256: str
    schema_fingerprint: str


@dataclass
class OutputGroup:
    """All shards of one prefix of one run: one dataset config."""
    run: Run
    prefix: str                      # e.g. "trajectories/train", "views/diagnosis/train", "rejects/rejects"
    shards: list[Shard]
    config_name: str = ""            # filled by :func:`assign_config_names`

    @property
    def kind(self) -> str:
        """The first folder of the prefix (``trajectories``, ``localization``, ``views``, ``rejects``, ``filtered``)."""
        return self.prefix.split("/", 1)[0]

    @property
    def split(self) -> str:
        base = self.prefix.rpartition("/")[2]
        return base if base in SPLIT_NAMES else "train"

    @property
    def rows(self) -> int:
        return sum(s.rows for s in self.shards)

    @property
    def bytes(self) -> int:
        return sum(s.bytes for s in self.shards)

    def repo_path(self, shard: Shard) -> str:
        """Where ``shard`` lives in the published repository."""
        return f"{self.run.repo_dir}{shard.path}"

    @property
    def repo_pattern(self) -> str:
        """The ``data_files`` glob selecting exactly this group's shards in the repository."""
        return f"{self.run.repo_dir}{self.prefix}-*-of-*.parquet"

    def arrow_schema(self) -> pa.Schema:
        """The Arrow schema stored in the first shard (all shards of a group share one schema)."""
        return pq.read_schema(self.shards[0].local).remove_metadata()

    def arrow_bytes(self) -> int:
        """Uncompressed Arrow size of the group (sum of the row groups' sizes), the Hub's ``num_bytes``."""
        total = 0
        for s in self.shards:
            meta = pq.read_metadata(s.local)
            total += sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
        return total

    @property
    def is_primary(self) -> bool:
        return self.kind not in (REJECTS_KIND, FILTERED_KIND)


@dataclass
class Run:
    """One finished run directory and its manifest."""
    dir: str
    label: str                       # folder name; used as the repo sub-folder when several runs are published
    manifest: dict
    repo_dir: str = ""               # "" for a single run, "<label>/" in a folder of runs
    groups: list[OutputGroup] = field(default_factory=list)

    @property
    def manifest_path(self) -> str:
        return os.path.join(self.dir, MANIFEST_NAME)


class RunError(ValueError):
    """The source is not a finished run, or its files do not match its manifest."""


def _groups(run: Run) -> list[OutputGroup]:
    by_prefix: dict[str, list[Shard]] = {}
    for out in run.manifest.get("outputs", []):
        m = _SHARD_RE.match(out["path"])
        if not m:
            raise RunError(f"{run.dir}: output {out['path']!r} is not named <prefix>-NNNNN-of-NNNNN.parquet")
        local = os.path.join(run.dir, out["path"])
        if not os.path.isfile(local) or os.path.getsize(local) != out["bytes"]:
            raise RunError(f"{run.dir}: shard {out['path']} is missing or its size differs from the manifest")
        by_prefix.setdefault(m.group("prefix"), []).append(
            Shard(out["path"], local, out["rows"], out["bytes"], out["sha256"], out.get("schema_fingerprint", "")))
    groups = []
    for prefix, shards in by_prefix.items():
        if len({s.schema_fingerprint for s in shards}) > 1:
            raise RunError(f"{run.dir}: shards of {prefix} have different schemas")
        groups.append(OutputGroup(run, prefix, sorted(shards, key=lambda s: s.path)))
    return groups


def _load_run(path: str, repo_dir: str) -> Run:
    try:
        manifest = read_manifest(path)
    except ManifestError as exc:
        raise RunError(str(exc)) from None
    if manifest is None:
        raise RunError(f"{path}: no {MANIFEST_NAME} (not a finished run)")
    run = Run(dir=os.path.abspath(path), label=os.path.basename(os.path.abspath(path)), manifest=manifest,
              repo_dir=repo_dir)
    run.groups = _groups(run)
    return run


def load_runs(source: str) -> list[Run]:
    """The run at ``source``, or every run directly under it (sorted by folder name)."""
    if os.path.isfile(os.path.join(source, MANIFEST_NAME)):
        runs = [_load_run(source, "")]
    else:
        subdirs = sorted(d for d in os.listdir(source) if os.path.isfile(os.path.join(source, d, MANIFEST_NAME))) \
            if os.path.isdir(source) else []
        if not subdirs:
            raise RunError(f"{source}: neither a finished run nor a folder of finished runs")
        runs = [_load_run(os.path.join(source, d), f"{d}/") for d in subdirs]
    assign_config_names(runs)
    return runs


def _base_name(group: OutputGroup) -> str:
    head, _, base = group.prefix.rpartition("/")
    folder = head if base in SPLIT_NAMES or head.rpartition("/")[2] == base else group.prefix
    if not folder:
        return group.run.manifest.get("pipeline") or group.run.label
    return folder.replace("/", "-")


def assign_config_names(runs: list[Run]) -> None:
    """Name every group's config: the prefix folder (``trajectories``, ``views-diagnosis``), or the pipeline for a
    bare ``<split>`` prefix;
    groups of one run that differ only by split (``x/train``, ``x/test``) share a config; names that would
    clash across runs get the run folder as a prefix."""
    base = {id(g): _base_name(g) for r in runs for g in r.groups}
    owners: dict[str, set[str]] = {}
    for r in runs:
        for g in r.groups:
            owners.setdefault(base[id(g)], set()).add(r.label)
    seen: set[tuple[str, str]] = set()
    for r in runs:
        for g in r.groups:
            name = base[id(g)]
            g.config_name = name if len(owners[name]) == 1 else f"{r.label}-{name}"
            if (g.config_name, g.split) in seen:
                raise RunError(f"{r.dir}: two outputs map to config {g.config_name!r} split {g.split!r}")
            seen.add((g.config_name, g.split))
