"""Size-bounded, atomically written Parquet shards with explicit schemas.

Layout of a run directory::

    <output>/<config>/<split>-NNNNN-of-NNNNN.parquet  (one folder per output: trajectories, fim, views/<name>, ...)
    <output>/rejects/rejects-NNNNN-of-NNNNN.parquet
    <output>/filtered/filtered-NNNNN-of-NNNNN.parquet
    <output>/manifest.json                             (written last)

Records are spread over buckets by their content-hash id, so the same inputs always give the same shards.
Each bucket is written to ``_tmp/`` first and renamed into place by :func:`finalize_shards` once every
bucket is complete; a crash leaves no half-written shard under a final name.
"""
from __future__ import annotations

import glob
import hashlib
import os
import re
import shutil
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import fsspec
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from fsspec.implementations.local import LocalFileSystem

from swemine.corpora.records import conform, schema_fingerprint, sha256_file

TMP_DIR = "_tmp"
PARTS_DIR = "parts"                 # under TMP_DIR: a local run's Arrow parts, removed by merge_parts
SORT_FIELDS = ("record_id", "source_uri", "source_locator")
ROW_GROUP_ROWS = 1000
_BUCKET_RE = re.compile(r"^(?P<prefix>.+)\.bucket-(?P<bucket>\d{5})\.parquet$")


def bucket_of(record_id: str, num_buckets: int) -> int:
    """Deterministic bucket of a record id (hex content hash or any string)."""
    digest = hashlib.sha1(record_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % max(1, num_buckets)


def _fs_and_path(url: str) -> tuple[fsspec.AbstractFileSystem, str]:
    fs, path = fsspec.core.url_to_fs(url)
    return fs, path


def write_table_atomic(table: pa.Table, url: str, row_group_size: int = ROW_GROUP_ROWS) -> None:
    """Write ``table`` as zstd Parquet to ``url`` through a temporary name and a rename."""
    write_tables_atomic(table.schema, [table], url, row_group_size)


def write_tables_atomic(schema: pa.Schema, tables: Iterable[pa.Table], url: str,
                        row_group_size: int = ROW_GROUP_ROWS) -> None:
    """Write ``tables`` one after another as one zstd Parquet file at ``url``, through a temporary name and a
    rename; the bytes are those of one ``write_table`` of their concatenation when every table but the last
    has a multiple of ``row_group_size`` rows."""
    fs, path = _fs_and_path(url)
    parent = os.path.dirname(path)
    if parent:
        fs.makedirs(parent, exist_ok=True)
    tmp = f"{path}.inprogress-{os.getpid()}"
    with fs.open(tmp, "wb") as fh, pq.ParquetWriter(fh, schema, compression="zstd", **_column_options(schema)) as writer:
        for table in tables:
            writer.write_table(table, row_group_size=row_group_size)
    fs.mv(tmp, path)


def leaf_paths(schema: pa.Schema) -> list[tuple[str, pa.DataType]]:
    """The Parquet column paths of ``schema``'s leaves with their Arrow types (lists as ``<name>.list.element``,
    struct fields as ``<name>.<field>``, the names pyarrow's writer takes)."""
    out: list[tuple[str, pa.DataType]] = []

    def walk(path: str, dtype: pa.DataType) -> None:
        if pa.types.is_struct(dtype):
            for child in dtype:
                walk(f"{path}.{child.name}", child.type)
        elif pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
            walk(f"{path}.list.element", dtype.value_type)
        elif pa.types.is_map(dtype):
            walk(f"{path}.key_value.key", dtype.key_type)
            walk(f"{path}.key_value.value", dtype.item_type)
        else:
            out.append((path, dtype))
    for field in schema:
        walk(field.name, field.type)
    return out


def _column_options(schema: pa.Schema) -> dict[str, Any]:
    """Writer options for ``schema``: its ``large_string`` leaves (the long texts: step contents, FIM text and
    context) are written without a dictionary and without min/max statistics. Nearly every value is unique
    and many are kilobytes: the dictionary is built and dropped, the statistics are never useful, and both
    cost a fifth of a text-heavy shard's write. Other columns keep pyarrow's defaults."""
    leaves = leaf_paths(schema)
    short = [path for path, dtype in leaves if not pa.types.is_large_string(dtype)]
    if len(short) == len(leaves):
        return {}
    return {"use_dictionary": short or False, "write_statistics": short or False}


def row_order(schema: pa.Schema) -> list[str]:
    """The columns a bucket is sorted by: ``record_id``, then provenance (equal contents read from two files
    share an id), so a bucket's order never depends on the order its rows arrived in."""
    return [f for f in SORT_FIELDS if f in schema.names]


def row_key(fields: list[str], row: Mapping) -> tuple[str, ...]:
    """``row``'s place in its bucket: its values of ``fields`` (the schema's :func:`row_order`, taken once per
    bucket or output, not per row); a missing or null value sorts as ""."""
    return tuple(row.get(f) or "" for f in fields)


def bucket_tables(schema: pa.Schema, keyed: Iterable[tuple[tuple, Any]], load: Callable[[Any], Mapping]
                  ) -> Iterator[pa.Table]:
    """The rows of ``(row_key, item)`` pairs in key order, as tables of :data:`ROW_GROUP_ROWS` rows (one row
    group each): ``load(item)`` makes an item a record only when its table is built, so a bucket of packed
    records never holds more than one row group's records."""
    ordered = sorted(keyed, key=lambda kv: kv[0])
    for start in range(0, len(ordered), ROW_GROUP_ROWS):
        chunk = ordered[start:start + ROW_GROUP_ROWS]
        yield pa.Table.from_pylist([conform(schema, load(item)) for _, item in chunk], schema=schema)


def bucket_url(output: str, prefix: str, bucket: int, suffix: str = "parquet") -> str:
    """Where bucket ``bucket`` of ``prefix`` is written before :func:`finalize_shards`."""
    return f"{output.rstrip('/')}/{TMP_DIR}/{prefix.replace('/', '__')}.bucket-{bucket:05d}.{suffix}"


def write_bucket(output: str, prefix: str, bucket: int, schema: pa.Schema, rows: Iterable[Mapping]) -> str:
    """Write one bucket's rows, sorted (:func:`row_order`), to ``<output>/_tmp/<prefix>.bucket-NNNNN.parquet``."""
    fields = row_order(schema)
    return write_keyed_bucket(output, prefix, bucket, schema, ((row_key(fields, r), r) for r in rows), lambda r: r)


def write_keyed_bucket(output: str, prefix: str, bucket: int, schema: pa.Schema,
                       keyed: Iterable[tuple[tuple, Any]], load: Callable[[Any], Mapping]) -> str:
    """:func:`write_bucket` of ``(row_key, item)`` pairs whose items ``load`` makes records (see
    :func:`bucket_tables`)."""
    url = bucket_url(output, prefix, bucket)
    write_tables_atomic(schema, bucket_tables(schema, keyed, load), url)
    return url


def parts_folder(output: str) -> str:
    """Where a local run into the folder ``output`` keeps its uncompressed Arrow parts until :func:`merge_parts`."""
    return os.path.join(output, TMP_DIR, PARTS_DIR)


def part_path(output: str, prefix: str, bucket: int, tag: str) -> str:
    """One part of bucket ``bucket`` of ``prefix`` (``tag`` tells the writers' parts apart)."""
    return os.path.join(parts_folder(output), f"{prefix.replace('/', '__')}.bucket-{bucket:05d}.{tag}.arrow")


def merge_parts(output: str, schemas: dict[str, pa.Schema], threads: int = 1) -> None:
    """Each bucket's parts (:func:`part_path`) → its Parquet file under ``<output>/_tmp``, rows in the order of
    :func:`write_bucket`, ``threads`` buckets at a time; the parts are removed after."""
    by_bucket: dict[str, list[str]] = {}
    for path in glob.glob(os.path.join(parts_folder(output), "*.bucket-*.arrow")):
        by_bucket.setdefault(_PART_RE.match(os.path.basename(path)).group("bucket"), []).append(path)
    prefixes = {prefix.replace("/", "__"): schema for prefix, schema in schemas.items()}
    largest_first = sorted(by_bucket, key=lambda b: (-sum(os.path.getsize(p) for p in by_bucket[b]), b))
    with ThreadPoolExecutor(max_workers=max(1, threads)) as pool:
        done = [pool.submit(_merge_bucket, sorted(by_bucket[b]), prefixes[b.split(".bucket-")[0]],
                            f"{output.rstrip('/')}/{TMP_DIR}/{b}.parquet") for b in largest_first]
        for future in done:
            future.result()
    shutil.rmtree(parts_folder(output), ignore_errors=True)


_PART_RE = re.compile(r"^(?P<bucket>.+\.bucket-\d{5})\.[0-9a-f]+\.arrow$")


def _merge_bucket(paths: list[str], schema: pa.Schema, url: str) -> None:
    """One bucket's parts, sorted, as one Parquet file (row group ``g + 1`` gathered while ``g`` is written)."""
    table = pa.concat_tables([pa.ipc.open_file(pa.memory_map(p)).read_all() for p in paths])
    keys = pa.table({f: table.column(f).fill_null("") for f in row_order(schema)})
    order = pc.sort_indices(keys, sort_keys=[(f, "ascending") for f in keys.column_names])
    with ThreadPoolExecutor(max_workers=1) as pool:
        groups = [pool.submit(lambda s: table.take(order[s:s + ROW_GROUP_ROWS]).combine_chunks(), start)
                  for start in range(0, table.num_rows, ROW_GROUP_ROWS)]
        write_tables_atomic(schema, (g.result() for g in groups), url)


@dataclass(frozen=True)
class ShardInfo:
    path: str          # relative to the run directory
    rows: int
    bytes: int
    sha256: str
    schema_fingerprint: str

    def as_dict(self) -> dict:
        return {"path": self.path, "rows": self.rows, "bytes": self.bytes, "sha256": self.sha256,
                "schema_fingerprint": self.schema_fingerprint}


def finalize_shards(output: str, schemas: Mapping[str, pa.Schema]) -> list[ShardInfo]:
    """Rename every complete bucket in ``_tmp/`` to its final shard name and describe the result.

    ``schemas`` maps a shard prefix (e.g. ``"trajectories/train"``, ``"rejects/rejects"``) to its schema. A prefix with
    no bucket gets one empty shard so that every declared output exists and loads.
    """
    fs, root = _fs_and_path(output)
    tmp_root = f"{root.rstrip('/')}/{TMP_DIR}"
    found: dict[str, list[str]] = {p: [] for p in schemas}
    if fs.exists(tmp_root):
        for name in sorted(fs.ls(tmp_root, detail=False)):
            m = _BUCKET_RE.match(os.path.basename(name))
            if not m:
                continue
            prefix = m.group("prefix").replace("__", "/")
            if prefix in found:
                found[prefix].append(name)
    infos: list[ShardInfo] = []
    for prefix, schema in schemas.items():
        for old in fs.glob(f"{root}/{prefix}-*-of-*.parquet"):
            fs.rm(old)
        buckets = sorted(found[prefix])
        if not buckets:
            empty = bucket_url(output, prefix, 0)
            write_table_atomic(schema.empty_table(), empty)
            buckets = [_fs_and_path(empty)[1]]
        total = len(buckets)
        for i, src in enumerate(buckets):
            rel = f"{prefix}-{i:05d}-of-{total:05d}.parquet"
            dst = f"{root}/{rel}"
            fs.makedirs(os.path.dirname(dst), exist_ok=True)
            fs.mv(src, dst)
            meta = pq.read_metadata(fs.open(dst, "rb"))
            infos.append(ShardInfo(rel, meta.num_rows, fs.size(dst), sha256_file(dst, fs.open),
                                   schema_fingerprint(schema)))
    if fs.exists(tmp_root) and not fs.ls(tmp_root, detail=False):
        fs.rm(tmp_root, recursive=True)
    return infos


def read_shard(fs: fsspec.AbstractFileSystem, path: str, columns: list[str] | None = None) -> pa.Table:
    """One Parquet file of ``fs``. A local file is read by pyarrow itself; anything else through a Python file
    object without pyarrow's threads, which can outlive such a read and abort the interpreter at exit
    ("terminate called without an active exception", exit 134, after the command has printed its results)."""
    if isinstance(fs, LocalFileSystem):
        return pq.read_table(path, columns=columns)
    with fs.open(path, "rb") as fh:
        return pq.read_table(fh, columns=columns, pre_buffer=False, use_threads=False)


def read_rows(output: str, prefix: str, columns: list[str] | None = None) -> list[dict]:
    """All rows (or their ``columns``) of the shards under ``prefix`` (e.g. ``"trajectories/train"``), in shard order."""
    fs, root = _fs_and_path(output)
    rows: list[dict] = []
    for path in sorted(fs.glob(f"{root}/{prefix}-*-of-*.parquet")):
        rows.extend(read_shard(fs, path, columns=columns).to_pylist())
    return rows
