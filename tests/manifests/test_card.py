"""Dataset card: YAML header from the manifest and Arrow schemas, body, and local validation."""
from __future__ import annotations

import json

import pytest
import yaml

from swemine.manifests.card import CardError, publishable_groups, render_card, size_category, validate_card
from swemine.manifests.runs import RunError, load_runs
from tests.manifests.helpers import VIEW_SCHEMA, make_mixed_runs, make_run


def _header(text: str) -> dict:
    return yaml.safe_load(text.split("---\n", 2)[1])


def _repo_files(runs, include_filtered=False):
    groups = publishable_groups(runs, include_filtered, include_rejects=True)
    return [g.repo_path(s) for g in groups for s in g.shards], groups


def test_card_of_real_run(real_run):
    manifest = json.loads((real_run / "manifest.json").read_text())
    rows = {o["path"].rsplit("-", 3)[0]: 0 for o in manifest["outputs"]}
    for o in manifest["outputs"]:
        rows[o["path"].rsplit("-", 3)[0]] += o["rows"]
    runs = load_runs(str(real_run))
    text = render_card(runs, "swemine/swe-agent-trajectories", include_rejects=True)
    head = _header(text)
    assert head["license"] == "other"
    expected = {"trajectories": {"config_name": "trajectories", "default": True,
                                 "data_files": [{"split": "train", "path": "trajectories/train-*-of-*.parquet"}]}}
    if rows["rejects/rejects"]:          # empty outputs are not published (datasets cannot load 0-row shards)
        expected["rejects"] = {"config_name": "rejects",
                               "data_files": [{"split": "train", "path": "rejects/rejects-*-of-*.parquet"}]}
    assert {c["config_name"]: c for c in head["configs"]} == expected
    infos = head["dataset_info"] if isinstance(head["dataset_info"], list) else [head["dataset_info"]]
    infos = {i.get("config_name", "trajectories"): i for i in infos}
    assert infos["trajectories"]["splits"][0]["num_examples"] == rows["trajectories/train"] == 37
    if rows["rejects/rejects"]:
        assert infos["rejects"]["splits"][0]["num_examples"] == rows["rejects/rejects"]
    assert infos["trajectories"]["download_size"] == sum(o["bytes"] for o in manifest["outputs"]
                                                         if o["path"].startswith("trajectories/"))
    assert infos["trajectories"]["splits"][0]["num_bytes"] > infos["trajectories"]["download_size"]  # uncompressed
    feats = {f["name"]: f for f in infos["trajectories"]["features"]}
    assert feats["n_steps"] == {"name": "n_steps", "dtype": "int32"}
    assert feats["resolved"]["dtype"] == "bool"
    steps = {f["name"]: f for f in feats["steps"]["list"]}
    assert steps["error_signals"] == {"name": "error_signals", "list": "string"}
    assert "filtered" not in {c["config_name"] for c in head["configs"]}   # not published by default
    assert head["size_categories"] == ["n<1K"]
    # body: sources from the corpora's provenance register, per-stage counts, loading snippet
    assert "| SWE-agent/SWE-agent | MIT |" in text
    read = manifest["stages"]["read"]
    rejected = sum(read["rejected"].values())
    assert f"| read | {read['in']} | {read['out']} | {rejected} | 0 |" in text
    labelled = manifest["stages"]["join"]["info"].get("labelled", 0)
    if labelled < 37:
        assert f"`trajectories`: {37 - labelled} of 37 rows carry no `resolved` label" in text
    assert 'load_dataset("swemine/swe-agent-trajectories", "trajectories", split="train")' in text
    assert f"config hash `{manifest['config_hash']}`" in text
    assert "have **not** been checked against evaluation benchmarks" in text
    files, groups = _repo_files(runs)
    validate_card(text, files, groups)


def test_validation_catches_bad_headers(real_run):
    runs = load_runs(str(real_run))
    text = render_card(runs, "o/n")
    files, groups = _repo_files(runs)
    with pytest.raises(CardError, match="num_examples"):
        validate_card(text.replace("num_examples: 37", "num_examples: 36"), files, groups)
    with pytest.raises(CardError, match="selects"):
        validate_card(text, files + ["trajectories/train-00007-of-00009.parquet"], groups)
    with pytest.raises(CardError, match="features"):
        validate_card(text.replace("dtype: int32", "dtype: int64", 1), files, groups)
    with pytest.raises(CardError, match="YAML"):
        validate_card(text.replace("license: other", "license: [other", 1), files, groups)


def test_folder_of_runs_with_generic_prefixes(tmp_path):
    """Any output prefix maps to a config; split names come from the prefix; clashing names get the run label."""
    make_mixed_runs(tmp_path)
    runs = load_runs(str(tmp_path))
    assert [r.label for r in runs] == ["errors", "fim", "loc"]
    text = render_card(runs, "org/mixed", include_filtered=True, license="mit", include_rejects=True)
    head = _header(text)
    configs = {c["config_name"]: c["data_files"] for c in head["configs"]}
    assert configs == {
        "localization": [{"split": "train", "path": "loc/localization/train-*-of-*.parquet"},
                         {"split": "test", "path": "loc/localization/test-*-of-*.parquet"}],
        "views-diagnosis": [{"split": "train", "path": "errors/views/diagnosis/train-*-of-*.parquet"}],
        "views-recovery": [{"split": "train", "path": "errors/views/recovery/train-*-of-*.parquet"}],
        "loc-rejects": [{"split": "train", "path": "loc/rejects/rejects-*-of-*.parquet"}],
        "filtered": [{"split": "train", "path": "loc/filtered/filtered-*-of-*.parquet"}],
        "fim": [{"split": "train", "path": "fim/fim/train-*-of-*.parquet"}]}
    assert [c["config_name"] for c in head["configs"] if c.get("default")] == ["views-diagnosis"]
    loc = next(i for i in head["dataset_info"] if i["config_name"] == "localization")
    assert {s["name"]: s["num_examples"] for s in loc["splits"]} == {"train": 5, "test": 2}
    spans = next(f for f in loc["features"] if f["name"] == "spans")
    assert spans == {"name": "spans", "list": [{"name": "file", "dtype": "string"},
                                               {"name": "start", "dtype": "int32"}]}
    assert head["license"] == "mit"
    assert "Licenses of the `fim` records: Apache-2.0 (6)." in text
    assert "Empty outputs, not published: `errors/rejects/rejects`." in text
    assert "stage **decontam** removed 1 record(s): swe_bench (1)." in text
    assert "> 1 record matched SWE-bench Verified (django)." in text
    assert "Repositories the `localization` records are about (2): pallets/flask (3), psf/requests (2)." in text
    files, groups = _repo_files(runs, include_filtered=True)
    assert "errors/views/diagnosis/train-00001-of-00002.parquet" in files
    validate_card(text, files, groups)


def test_bad_runs_are_refused(tmp_path, real_run):
    with pytest.raises(RunError, match="neither a finished run"):
        load_runs(str(tmp_path))
    make_run(tmp_path / "r", "p", {"trajectories/train": (VIEW_SCHEMA, [{"record_id": "a"}])})
    shard = next((tmp_path / "r" / "trajectories").glob("*.parquet"))
    shard.write_bytes(shard.read_bytes() + b"x")
    with pytest.raises(RunError, match="size differs"):
        load_runs(str(tmp_path / "r"))


def test_size_categories():
    assert [size_category(n) for n in (0, 999, 1000, 54_321, 2_000_000)] == \
        ["n<1K", "n<1K", "1K<n<10K", "10K<n<100K", "1M<n<10M"]
