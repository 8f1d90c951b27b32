"""The local shard writer: each bundle's records go to uncompressed Arrow parts, one per bucket; the merge writes
every bucket's Parquet file once, sorted as the shuffling writer (:class:`swemine.pipelines.engine.runner.WriteShards`)
sorts it, so the bytes are the same."""
from __future__ import annotations

import glob
import os
import re
import shutil
import uuid
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import apache_beam as beam
import pyarrow as pa
import pyarrow.compute as pc

from swemine.corpora.records import conform
from swemine.manifests.shards import ROW_GROUP_ROWS, TMP_DIR, bucket_of, row_order, write_tables_atomic

PARTS_DIR = "parts"                 # under <output>/_tmp: the Arrow parts, removed by merge_parts


def parts_folder(output: str) -> str:
    """Where :class:`WriteParts` puts the parts of a run into ``output`` (a local folder)."""
    return os.path.join(output, TMP_DIR, PARTS_DIR)


class WriteParts(beam.DoFn):
    """``WriteShards`` on a local runner, without its shuffle: a bundle's records, ``prepare``d (the config hash
    stamp), go into one Arrow IPC file per bucket in :func:`parts_folder`, at most :data:`ROW_GROUP_ROWS` held."""

    def __init__(self, output: str, prefix: str, schema: pa.Schema, num_buckets: int,
                 prepare: Callable[[Mapping], Mapping]):
        self.output, self.prefix, self.schema, self.num_buckets, self.prepare = output, prefix, schema, num_buckets, prepare

    def start_bundle(self):
        self._rows: dict[int, list[dict]] = {}
        self._held = 0
        self._files: dict[int, tuple[str, Any, Any]] = {}
        self._tag = uuid.uuid4().hex[:12]

    def process(self, record):
        self._rows.setdefault(bucket_of(record["record_id"], self.num_buckets), []).append(
            conform(self.schema, self.prepare(record)))
        self._held += 1
        if self._held >= ROW_GROUP_ROWS:
            self._flush()

    def finish_bundle(self):
        self._flush()
        for path, sink, writer in self._files.values():
            writer.close()
            sink.close()
            os.replace(path, path[:-len(".tmp")])

    def _flush(self):
        folder = parts_folder(self.output)
        for bucket, rows in sorted(self._rows.items()):
            if bucket not in self._files:
                os.makedirs(folder, exist_ok=True)
                path = os.path.join(folder, f"{self.prefix.replace('/', '__')}.bucket-{bucket:05d}.{self._tag}.arrow.tmp")
                sink = pa.OSFile(path, "wb")
                self._files[bucket] = (path, sink, pa.ipc.new_file(sink, self.schema))
            self._files[bucket][2].write_table(pa.Table.from_pylist(rows, schema=self.schema))
        self._rows, self._held = {}, 0


def merge_parts(output: str, schemas: dict[str, pa.Schema], threads: int = 1) -> None:
    """Each bucket's parts → its Parquet file under ``<output>/_tmp``, rows in the order of
    :func:`swemine.manifests.shards.write_bucket`, ``threads`` buckets at a time; the parts are removed after."""
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
