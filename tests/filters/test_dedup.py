"""Exact + near dedup: known clusters pinned; plain Python == Beam in-process == Beam multi-process."""
from __future__ import annotations

import json
import random

import pyarrow.parquet as pq
import pytest

from swemine.corpora.records import SOURCE_FILE_SCHEMA, conform, content_id
from swemine.filters.dedup import DedupConfig, connected_components, dedup_records, dedup_text, shingles
from swemine.filters.fields import spec_for
from swemine.filters.minhash import estimate_jaccard, jaccard, signature

VOCAB = [f"w{i}" for i in range(400)]


def _doc(seed: int, n: int = 120) -> list[str]:
    rng = random.Random(seed)
    return [rng.choice(VOCAB) for _ in range(n)]


def _edit(words: list[str], positions: list[int], token: str = "zz") -> list[str]:
    out = list(words)
    for p in positions:
        out[p] = token
    return out


def _file(name: str, words: list[str]) -> dict:
    text = "\n".join(" ".join(words[i:i + 12]) for i in range(0, len(words), 12))
    return conform(SOURCE_FILE_SCHEMA, {"record_id": content_id("file", name), "repo": "acme/dup", "path": name,
                                        "content": text, "language": "python"})


def corpus() -> tuple[list[dict], dict[str, list[str]]]:
    """3 near-dup clusters (a: 3 files, b: 2 files, c: exact copies differing only by case/spacing) + 5 singles."""
    a, b, c = _doc(1), _doc(2), _doc(3)
    files = [_file("a0", a), _file("a1", _edit(a, [60])), _file("a2", _edit(a, [100], "yy")),
             _file("b0", b), _file("b1", _edit(b, [5])),
             _file("c0", c)]
    c_copy = dict(files[-1], record_id=content_id("file", "c1"), path="c1",
                  content=files[-1]["content"].upper().replace(" ", "   "))
    files.append(c_copy)
    files += [_file(f"u{i}", _doc(100 + i)) for i in range(5)]
    names = {f["record_id"]: f["path"] for f in files}
    return files, names


def test_building_blocks():
    assert connected_components([("b", "c"), ("a", "b"), ("x", "y")]) == {"a": "a", "b": "a", "c": "a", "x": "x",
                                                                           "y": "x"}
    assert shingles("one two", 5) == {"one two"} and shingles("", 5) == set()
    s1, s2 = shingles(" ".join(_doc(1)), 5), shingles(" ".join(_edit(_doc(1), [60])), 5)
    assert round(jaccard(s1, s2), 3) == 0.917
    assert abs(estimate_jaccard(signature(s1), signature(s2)) - jaccard(s1, s2)) < 0.08
    assert (signature(s1) == signature(set(sorted(s1)))).all()


def _summary(kept, dropped, names):
    kept_names = sorted(names[k["record_id"]] for k in kept)
    clusters = {}
    for d in dropped:
        ev = json.loads(d["evidence_json"])
        clusters.setdefault(names[ev["kept_record_id"]], []).append((d["stage"], names[d["record_id"]]))
    return kept_names, {k: sorted(v) for k, v in sorted(clusters.items())}


EXPECTED = (["a0", "b1", "c0", "u0", "u1", "u2", "u3", "u4"],
            {"a0": [("dedup_near", "a1"), ("dedup_near", "a2")], "b1": [("dedup_near", "b0")],
             "c0": [("dedup_exact", "c1")]})


def test_plain_dedup_pins_clusters():
    files, names = corpus()
    kept, dropped = dedup_records(files, "source_file")
    # the kept one per cluster is the smallest record_id: pin it through the names
    assert _summary(kept, dropped, names) == EXPECTED
    ev = json.loads(next(d for d in dropped if names[d["record_id"]] == "a1")["evidence_json"])
    assert ev["rule"] == "minhash_lsh" and ev["group_size"] == 3 and (ev["bands"], ev["rows"]) == (11, 11)
    kept2, dropped2 = dedup_records(list(reversed(files)), "source_file")
    assert [k["record_id"] for k in kept2] == [k["record_id"] for k in kept]
    assert sorted(d["record_id"] for d in dropped2) == sorted(d["record_id"] for d in dropped)
    only_exact, _ = dedup_records(files, "source_file", DedupConfig(near=False))
    assert len(only_exact) == 11


def _beam_run(tmp_path, label, beam_args):
    import apache_beam as beam

    from swemine.pipelines.engine.runner import Built, PipelineSpec, execute
    from swemine.pipelines.steps.dedup_stage import Dedup

    files, names = corpus()

    def build(p):
        kept, filtered = p | "Create" >> beam.Create(files, reshuffle=True) | Dedup("source_file")
        return Built(outputs={"data/train": kept}, filtered=[filtered])

    spec = PipelineSpec(name="dedup-test", config={"label": label}, outputs={"data/train": SOURCE_FILE_SCHEMA},
                        build=build, num_buckets=2)
    out = tmp_path / label
    manifest = execute(spec, str(out), beam_args)
    kept = [r for f in sorted(out.glob("data/train-*.parquet")) for r in pq.read_table(f).to_pylist()]
    dropped = [r for f in sorted(out.glob("filtered/filtered-*.parquet")) for r in pq.read_table(f).to_pylist()]
    return _summary(kept, dropped, names), manifest, {d["record_id"]: d["evidence_json"] for d in dropped}


@pytest.mark.parametrize("label,beam_args", [
    ("inprocess", ["--direct_num_workers=1"]),
    ("multiprocess", ["--direct_num_workers=2", "--direct_running_mode=multi_processing"]),
])
@pytest.mark.slow
def test_beam_dedup_same_clusters_across_parallelism(tmp_path, label, beam_args):
    summary, manifest, evidence = _beam_run(tmp_path, label, beam_args)
    assert summary == EXPECTED
    _, plain_dropped = dedup_records(corpus()[0], "source_file")
    assert evidence == {d["record_id"]: d["evidence_json"] for d in plain_dropped}
    st = manifest["stages"]
    assert (st["dedup_exact"]["in"], st["dedup_exact"]["out"], st["dedup_exact"]["filtered"]) == (
        12, 11, {"exact_duplicate": 1})
    assert (st["dedup_near"]["in"], st["dedup_near"]["out"], st["dedup_near"]["filtered"]) == (
        11, 8, {"near_duplicate": 3})


@pytest.fixture(scope="module")
def corpus_trajs(classic_corpora):
    from swemine.corpora.normalize import normalize_paths

    return normalize_paths(classic_corpora)[0]


def _by(records, key):
    out: dict[str, int] = {}
    for r in records:
        out[r[key]] = out.get(r[key], 0) + 1
    return out


def test_every_reader_fills_the_trajectory_key(corpus_trajs):
    # every tool call of every harness has an action text (but a shell call whose command is empty: OpenHands
    # sending an empty input line); Moatless renders its calls as Tool({json})
    harnesses = _by(corpus_trajs, "harness")
    assert set(harnesses) == {"aider", "autocoderover", "claude-code", "mini-swe-agent", "moatless", "openhands",
                              "swe-agent", "who-and-when"}
    for t in corpus_trajs:
        for s in t["steps"]:
            assert not s["tool_name"] or s["action_text"] or json.loads(s["tool_args_json"])["command"] == "", s
    moatless = next(t for t in corpus_trajs if t["source_format"] == "moatless-v1")
    step = moatless["steps"][0]
    assert step["action_text"] == f"{step['tool_name']}({step['tool_args_json']})"


@pytest.mark.slow
def test_corpora_copied_twice_drop_exactly_the_copies(corpus_trajs):
    """The shared corpora + an exact copy of every trajectory + a copy with one word appended to the last action:
    exact dedup removes the exact copies, near dedup the edited ones, per harness, and nothing else."""
    spec = spec_for("trajectory")
    # the corpora hold one genuine duplicate: a Moatless re-run ("-correction") that repeated every action
    _, natural = dedup_records(corpus_trajs, "trajectory")
    assert [(d["stage"], json.loads(d["record_json"])["source_uri"].rsplit("/", 2)[-2:]) for d in natural] == [
        ("dedup_exact", ["django__django-9296", "trajectory.json"])]
    copies, edited = [], []
    for t in corpus_trajs:
        copies.append({**t, "record_id": t["record_id"] + "~copy"})
        steps = [dict(s) for s in t["steps"]]
        steps[-1]["action_text"] += " again"          # one word more: one new shingle
        edited.append({**t, "record_id": t["record_id"] + "~edit", "steps": steps})
    assert all(dedup_text(e, spec) != dedup_text(t, spec) for e, t in zip(edited, corpus_trajs))
    stats: dict[str, int] = {}
    kept, dropped = dedup_records(corpus_trajs + copies + edited, "trajectory", stats=stats)
    natural_id = natural[0]["record_id"]
    by_stage = {st: [json.loads(d["record_json"]) for d in dropped if d["stage"] == st]
                for st in ("dedup_exact", "dedup_near")}
    # the natural pair's edited copies are identical too: exact dedup takes the second one
    assert sorted(r["record_id"] for r in by_stage["dedup_exact"]) == sorted([c["record_id"] for c in copies] +
                                                                             [natural_id, natural_id + "~edit"])
    assert sorted(r["record_id"] for r in by_stage["dedup_near"]) == sorted(
        e["record_id"] for e in edited if e["record_id"] != natural_id + "~edit")
    harnesses = _by(corpus_trajs, "harness")
    assert _by(by_stage["dedup_exact"], "harness") == {h: n + 2 * (h == "moatless") for h, n in harnesses.items()}
    assert _by(by_stage["dedup_near"], "harness") == {h: n - (h == "moatless") for h, n in harnesses.items()}
    assert sorted(k["record_id"] for k in kept) == sorted(t["record_id"] for t in corpus_trajs
                                                          if t["record_id"] != natural_id)
    assert stats == {"dedup_key_empty": 0}


def test_empty_or_trivial_keys_are_never_duplicates(corpus_trajs):
    base = corpus_trajs[0]
    empty = [{**base, "record_id": f"empty{i}", "steps": []} for i in range(3)]
    trivial = [{**base, "record_id": f"ls{i}", "steps": [{**base["steps"][0], "tool_name": "bash",
                                                          "tool_args_json": "", "action_text": "ls"}]}
               for i in range(3)]
    stats: dict[str, int] = {}
    kept, dropped = dedup_records(empty + trivial, "trajectory", stats=stats)
    assert (len(kept), dropped, stats) == (6, [], {"dedup_key_empty": 6})
    files = [_file(f"e{i}", []) for i in range(2)] + [_file(f"t{i}", ["pass"]) for i in range(2)]
    kept, dropped = dedup_records(files, "source_file", stats=stats)
    assert (len(kept), dropped, stats) == (4, [], {"dedup_key_empty": 4})


def test_beam_dedup_counts_empty_keys(tmp_path):
    import apache_beam as beam

    from swemine.pipelines.engine.runner import Built, PipelineSpec, execute
    from swemine.pipelines.steps.dedup_stage import Dedup

    words = _doc(7)
    files = [_file("a", words), _file("b", words), _file("e1", []), _file("e2", []), _file("t", ["pass"])]

    def build(p):
        kept, filtered = p | beam.Create(files) | Dedup("source_file")
        return Built(outputs={"data/train": kept}, filtered=[filtered])

    spec = PipelineSpec(name="dedup-empty", config={}, outputs={"data/train": SOURCE_FILE_SCHEMA}, build=build,
                        num_buckets=1)
    st = execute(spec, str(tmp_path / "o"), ["--direct_num_workers=1"])["stages"]
    assert (st["dedup_exact"]["in"], st["dedup_exact"]["out"], st["dedup_exact"]["filtered"]) == (
        5, 4, {"exact_duplicate": 1})
    assert st["dedup_exact"]["info"] == {"dedup_key_empty": 3}
    assert (st["dedup_near"]["in"], st["dedup_near"]["out"], st["dedup_near"]["filtered"]) == (4, 4, {})


def test_near_decisions_keep_the_component_id_only():
    from swemine.filters.dedup import near_decisions

    cfg, comps = DedupConfig(), {"a": ("a", 2), "b": ("a", 2)}
    assert near_decisions("a", [("a", "", "")], comps, cfg) == []        # "a" is its component's (smallest) id
    [(copy, ((reason, ev),))] = near_decisions("b", [("b", "", "")], comps, cfg)
    assert (copy, reason, ev["kept_record_id"], ev["group_size"], ev["rule"]) == (
        ("b", "", ""), "near_duplicate", "a", 2, "minhash_lsh")
    assert near_decisions("c", [("c", "", "")], comps, cfg) == []        # a singleton stays
    [(_, (kept, (_, ev)))] = near_decisions("a", [("a", "h", "x")] * 2, comps, cfg)   # two copies of the kept id
    assert kept is None and (ev["kept_record_id"], ev["group_size"]) == ("a", 2)


def test_the_keep_rule_hashes_record_content_only_for_copies_that_share_an_id(monkeypatch):
    from swemine.filters import dedup

    hashed = []
    real = dedup.exact_key
    monkeypatch.setattr(dedup, "exact_key", lambda text: hashed.append(text) or real(text))
    one, two = {"record_id": "b", "x": 1}, {"record_id": "a", "x": 2}
    assert dedup.keep_one([one], "s", "r", "t", {}) == [one] and hashed == []
    kept, dropped = dedup.keep_one([one, two], "s", "r", "t", {})
    assert kept is two and dropped["record_id"] == "b" and hashed == []
    copy = {"record_id": "a", "x": 0}
    kept, _, _ = dedup.keep_one([one, two, copy], "s", "r", "t", {})
    assert len(hashed) == 3 and kept is min((two, copy), key=lambda r: real(repr(sorted(r.items()))))


def test_beam_dedup_makes_each_records_dedup_text_once(tmp_path, monkeypatch):
    """Exact then near: the exact pass's dedup text is the one the near pass's bands are made from."""
    import apache_beam as beam

    from swemine.filters import dedup
    from swemine.pipelines.engine.runner import Built, PipelineSpec, execute
    from swemine.pipelines.steps import dedup_stage

    log, real = tmp_path / "made.txt", dedup.dedup_text

    def counting(record, spec):         # Beam runs a pickled copy of it: it counts in a file
        with open(log, "a") as fh:
            fh.write(record["record_id"] + "\n")
        return real(record, spec)
    monkeypatch.setattr(dedup_stage, "dedup_text", counting)
    monkeypatch.setattr(dedup, "dedup_text", counting)
    files, _ = corpus()

    def build(p):
        kept, filtered = p | beam.Create(files) | dedup_stage.Dedup("source_file")
        return Built(outputs={"data/train": kept}, filtered=[filtered])

    spec = PipelineSpec(name="dedup-once", config={}, outputs={"data/train": SOURCE_FILE_SCHEMA}, build=build,
                        num_buckets=1)
    st = execute(spec, str(tmp_path / "o"))["stages"]
    made = log.read_text().split()
    assert st["dedup_near"]["filtered"] and sorted(made) == sorted(f["record_id"] for f in files)


def test_beam_dedup_of_copies_that_share_an_id_matches_the_plain_twin(tmp_path):
    """Byte-identical copies (the corpus twice) and a record that shares an id with different content: the Beam
    stages, which shuffle (key, copy) tuples only, keep and drop what :func:`dedup_records` does."""
    import apache_beam as beam

    from swemine.pipelines.engine.runner import Built, PipelineSpec, execute
    from swemine.pipelines.steps.dedup_stage import Dedup

    files, _ = corpus()
    files = files + [dict(f) for f in files] + [dict(files[7], content="\n".join(_doc(50)))]

    def build(p):
        kept, filtered = p | beam.Create(files, reshuffle=True) | Dedup("source_file")
        return Built(outputs={"data/train": kept}, filtered=[filtered])

    spec = PipelineSpec(name="dedup-copies", config={}, outputs={"data/train": SOURCE_FILE_SCHEMA}, build=build,
                        num_buckets=1)
    st = execute(spec, str(tmp_path / "o"))["stages"]
    kept = [r for f in (tmp_path / "o").glob("data/train-*.parquet") for r in pq.read_table(f).to_pylist()]
    dropped = [r for f in (tmp_path / "o").glob("filtered/filtered-*.parquet") for r in pq.read_table(f).to_pylist()]
    plain_kept, plain_dropped = dedup_records(files, "source_file")
    assert sorted((r["record_id"], r["content"]) for r in kept) == sorted(
        (r["record_id"], r["content"]) for r in plain_kept)
    assert len(kept) == 8 and len(dropped) == 17      # one per cluster; a single and its id-sharer: one
    assert sorted((d["record_id"], d["stage"], d["evidence_json"], d["record_json"]) for d in dropped) == sorted(
        (d["record_id"], d["stage"], d["evidence_json"], d["record_json"]) for d in plain_dropped)
    assert (st["dedup_exact"]["in"], st["dedup_exact"]["out"], st["dedup_exact"]["filtered"]) == (
        25, 12, {"exact_duplicate": 13})
