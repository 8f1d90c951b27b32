"""The local shard writer: each bundle's records go to uncompressed Arrow parts, one per bucket, which
:func:`swemine.manifests.shards.merge_parts` writes as the bytes the shuffling writer
(:class:`swemine.pipelines.engine.runner.WriteShards`) writes."""
from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Mapping
from typing import Any

import apache_beam as beam
import pyarrow as pa

from swemine.corpora.records import conform
from swemine.manifests.shards import ROW_GROUP_ROWS, bucket_of, part_path


class WriteParts(beam.DoFn):
    """``WriteShards`` on a local runner, without its shuffle: a bundle's records, ``prepare``d (the config hash
    stamp), go into one Arrow IPC file per bucket (:func:`~swemine.manifests.shards.part_path`), at most
    :data:`~swemine.manifests.shards.ROW_GROUP_ROWS` held."""

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
        for bucket, rows in sorted(self._rows.items()):
            if bucket not in self._files:
                path = part_path(self.output, self.prefix, bucket, self._tag) + ".tmp"
                os.makedirs(os.path.dirname(path), exist_ok=True)
                sink = pa.OSFile(path, "wb")
                self._files[bucket] = (path, sink, pa.ipc.new_file(sink, self.schema))
            self._files[bucket][2].write_table(pa.Table.from_pylist(rows, schema=self.schema))
        self._rows, self._held = {}, 0
