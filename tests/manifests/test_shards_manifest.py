import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from swemine.corpora.records import (
    FILTERED_SCHEMA,
    REJECT_SCHEMA,
    TASK_SCHEMA,
    TRAJECTORY_SCHEMA,
    SchemaError,
    conform,
    content_id,
    make_reject,
    sha256_file,
    to_table,
)
from swemine.manifests import manifest as mf
from swemine.manifests.shards import (
    bucket_of,
    bucket_tables,
    finalize_shards,
    leaf_paths,
    read_rows,
    row_key,
    row_order,
    write_bucket,
)
from swemine.miners.fim.formats import FIM_SCHEMA


def _task(i):
    return conform(TASK_SCHEMA, {"record_id": content_id("t", i), "instance_id": f"o__r-{i}", "FAIL_TO_PASS": ["a"]})


def test_conform_rejects_unknown_fields_and_missing_ids():
    with pytest.raises(SchemaError):
        conform(TASK_SCHEMA, {"record_id": "x", "instanceid": "typo"})
    with pytest.raises(SchemaError):
        conform(TASK_SCHEMA, {"instance_id": "no id"})
    row = conform(TASK_SCHEMA, {"record_id": "x"})
    assert row["PASS_TO_PASS"] == [] and row["repo"] is None
    with pytest.raises((pa.ArrowInvalid, pa.ArrowTypeError)):
        to_table(TASK_SCHEMA, [{"record_id": "x", "pr_number": "not a number"}])


def test_content_ids_are_stable():
    assert content_id("a", 1) == content_id("a", 1)
    assert content_id("a", 1) != content_id("a", 2)
    assert len(content_id("x")) == 24
    assert bucket_of("abc", 7) == bucket_of("abc", 7) and 0 <= bucket_of("abc", 7) < 7


def test_buckets_become_numbered_shards_with_checksums(tmp_path):
    out = str(tmp_path)
    rows = [_task(i) for i in range(10)]
    for b in range(3):
        write_bucket(out, "data/train", b, TASK_SCHEMA, [r for r in rows if bucket_of(r["record_id"], 3) == b])
    infos = finalize_shards(out, {"data/train": TASK_SCHEMA, "rejects/rejects": REJECT_SCHEMA})
    paths = [i.path for i in infos]
    assert paths[:3] == [f"data/train-0000{i}-of-00003.parquet" for i in range(3)]
    assert paths[3] == "rejects/rejects-00000-of-00001.parquet" and infos[3].rows == 0
    assert sum(i.rows for i in infos[:3]) == 10
    assert not (tmp_path / "_tmp").exists()
    back = read_rows(out, "data/train")
    assert sorted(r["record_id"] for r in back) == sorted(r["record_id"] for r in rows)
    assert pq.read_schema(tmp_path / paths[0]).remove_metadata().equals(TASK_SCHEMA)
    for shard in back:
        assert shard["FAIL_TO_PASS"] == ["a"]


def test_stage_counters_fold_and_balance():
    stages = mf.stage_counters([("read.in", 5), ("read.out", 3), ("read.rejected.empty_file", 1),
                                ("read.rejected.binary_file", 1), ("join.in", 3), ("join.out", 2),
                                ("fanout.in", 1), ("fanout.out", 9), ("fanout.info.fanout", 1)])
    assert stages["read"] == {"in": 5, "out": 3, "rejected": {"empty_file": 1, "binary_file": 1}, "filtered": {},
                              "info": {}}
    assert mf.balance_problems(stages) == ["join: in=3 != out+rejected+filtered=2"]


def test_manifest_write_read_and_completeness(tmp_path):
    out = str(tmp_path)
    inp = tmp_path / "in.json"
    inp.write_text("{}")
    write_bucket(out, "rejects/rejects", 0, REJECT_SCHEMA, [make_reject("read", "empty_file", "m", uri="u")])
    infos = finalize_shards(out, {"rejects/rejects": REJECT_SCHEMA})
    cfg = {"pipeline": "x", "inputs": [str(inp)]}
    h = mf.config_hash(cfg)
    m = mf.build_manifest(pipeline="x", config=cfg, cfg_hash=h, inputs=mf.input_listing([str(inp)]), stages={},
                          outputs=[i.as_dict() for i in infos], started=0.0)
    mf.write_manifest(out, m)
    assert json.loads((tmp_path / "manifest.json").read_text())["run_id"] == f"x-{h}"
    assert mf.is_complete(out, h) and not mf.is_complete(out, "other")
    inp.write_text('{"changed": true}')
    assert not mf.is_complete(out, h)


def test_same_size_edit_of_an_input_invalidates_the_run(tmp_path):
    inp = tmp_path / "in.json"
    inp.write_text('{"a": 1}')
    listing = mf.input_listing([str(inp), str(tmp_path / "gone.json")])
    assert listing[0]["bytes"] == 8 and listing[0]["sha256"] == sha256_file(str(inp))
    assert listing[1] == {"uri": str(tmp_path / "gone.json"), "bytes": None, "mtime": None, "sha256": None}
    out = str(tmp_path / "run")
    h = mf.config_hash({"x": 1})
    mf.write_manifest(out, mf.build_manifest(pipeline="x", config={}, cfg_hash=h, inputs=listing[:1], stages={},
                                             outputs=[], started=0.0))
    assert mf.is_complete(out, h)
    import os
    os.utime(inp, ns=(1, 1))
    inp.write_text('{"a": 2}')
    assert not mf.is_complete(out, h)


def test_a_bucket_is_written_a_row_group_at_a_time_with_the_bytes_of_one_write(tmp_path):
    rows = [_task(i) for i in range(2500)]
    url = write_bucket(str(tmp_path / "a"), "tasks/train", 0, TASK_SCHEMA, reversed(rows))
    ordered = sorted(rows, key=lambda r: r["record_id"])
    pq.write_table(pa.Table.from_pylist(ordered, schema=TASK_SCHEMA), str(tmp_path / "one.parquet"),
                   compression="zstd", row_group_size=1000)
    assert open(url, "rb").read() == (tmp_path / "one.parquet").read_bytes()
    meta = pq.read_metadata(url)
    assert (meta.num_row_groups, [meta.row_group(i).num_rows for i in range(3)]) == (3, [1000, 1000, 500])


def test_packed_rows_are_loaded_only_when_their_row_group_is_built(tmp_path):
    rows = [_task(i) for i in range(2100)]
    loaded = []

    def load(i):
        loaded.append(i)
        return rows[i]

    keyed = [(row_key(row_order(TASK_SCHEMA), r), i) for i, r in enumerate(rows)]
    sizes = []
    for table in bucket_tables(TASK_SCHEMA, keyed, load):
        sizes.append((table.num_rows, len(loaded)))
    assert sizes == [(1000, 1000), (1000, 2000), (100, 2100)]
    assert sorted(loaded) == list(range(2100))


@pytest.mark.parametrize("schema", [FIM_SCHEMA, TRAJECTORY_SCHEMA, REJECT_SCHEMA], ids=["fim", "trajectory", "reject"])
def test_leaf_paths_are_the_columns_pyarrow_writes(tmp_path, schema):
    pq.write_table(schema.empty_table(), tmp_path / "e.parquet")
    meta = pq.read_metadata(tmp_path / "e.parquet")
    assert [p for p, _ in leaf_paths(schema)] == [meta.schema.column(i).path for i in range(meta.num_columns)]


def test_long_texts_are_written_without_dictionary_or_statistics(tmp_path):
    rows = [conform(FILTERED_SCHEMA, {"record_id": content_id("f", i), "stage": "dedup", "reason": "exact",
                                      "record_json": json.dumps({"i": i, "text": "x" * 500})}) for i in range(30)]
    write_bucket(str(tmp_path), "filtered/filtered", 0, FILTERED_SCHEMA, rows)
    group = pq.read_metadata(tmp_path / "_tmp" / "filtered__filtered.bucket-00000.parquet").row_group(0)
    chunks = {group.column(i).path_in_schema: group.column(i) for i in range(group.num_columns)}
    assert "RLE_DICTIONARY" not in chunks["record_json"].encodings and not chunks["record_json"].is_stats_set
    assert "RLE_DICTIONARY" in chunks["stage"].encodings and chunks["stage"].statistics.min == "dedup"
