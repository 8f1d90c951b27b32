"""Dedup rules on small hand-built records: the dedup text, shingles, keys, LSH band shape, components, tie-breaks."""
from __future__ import annotations

import json

from swemine.filters.dedup import (
    EMPTY_KEY,
    DedupConfig,
    bucket_edges,
    component_sizes,
    connected_components,
    copy_decisions,
    copy_of,
    dedup_records,
    dedup_text,
    exact_group_key,
    keep_one,
    near_decisions,
    near_evidence,
    record_bands,
    shingles,
)
from swemine.filters.fields import FieldSpec, spec_for
from swemine.filters.text import exact_key

TRAJ = spec_for("trajectory")
FILE = spec_for("source_file")
TEN = "alpha beta gamma delta epsilon zeta eta theta iota kappa"


def test_dedup_text_joins_the_key_values_with_nul():
    steps = [{"tool_name": "bash", "tool_args_json": "", "action_text": "ls   -la\n"},
             {"tool_name": "", "tool_args_json": None, "action_text": " cat  a.py "}]
    # key paths in order, each over every step; empty and missing values are left out; blanks collapsed
    assert dedup_text({"steps": steps}, TRAJ) == "bash\x00ls -la\x00cat a.py"
    assert dedup_text({"steps": []}, TRAJ) == ""
    # a value that is not text is no part of the key (and no crash)
    assert dedup_text({"content": 42}, FILE) == "" and exact_group_key({"record_id": "n", "content": 42}, FILE,
                                                                        DedupConfig()) == EMPTY_KEY + "n"


def test_dedup_text_without_a_key_is_every_text_line_by_line():
    spec = FieldSpec(texts=("title", "body"))
    assert dedup_text({"title": "One  title", "body": "the body"}, spec) == "One  title\nthe body"


def test_shingles_are_word_ngrams():
    # 4 words, n=2: 3 windows; n=4: one window; n=5: shorter than n, one shingle of all words
    assert shingles("A b, c d", 2) == {"a b", "b c", "c d"}
    assert shingles("a b c d", 4) == {"a b c d"} == shingles("a b c d", 5)


def test_exact_group_key_needs_min_key_words():
    cfg = DedupConfig()             # 5 words make a key
    four, five = {"record_id": "r4", "content": "a b c d"}, {"record_id": "r5", "content": "A b c  d e"}
    assert exact_group_key(four, FILE, cfg) == EMPTY_KEY + "r4"
    assert exact_group_key(five, FILE, cfg) == exact_key("a b c d e")        # case and blanks normalized
    assert record_bands(four, FILE, cfg) == []
    # one key per band of the derived shape (0.8 threshold, 128 permutations: 11 bands of 11 rows)
    assert [k.split(":")[0] for k in record_bands(five, FILE, cfg)] == [str(i) for i in range(11)]


def test_band_shape_is_given_only_as_a_pair():
    derived = DedupConfig().band_shape()
    assert DedupConfig(bands=4, rows=8).band_shape() == (4, 8)
    assert DedupConfig(bands=4).band_shape() == derived == DedupConfig(rows=8).band_shape()
    assert len(record_bands({"content": TEN}, FILE, DedupConfig(bands=4, rows=8))) == 4
    # the defaults: 5-word shingles, 128 permutations, threshold 0.8 -> 11 bands of 11 rows ((1/11)^(1/11) = 0.804)
    assert near_evidence("c0", DedupConfig()) == {"rule": "minhash_lsh", "cluster_id": "c0", "threshold": 0.8,
                                                 "num_perm": 128, "bands": 11, "rows": 11, "shingle_size": 5}
    ev = near_evidence("c1", DedupConfig(bands=4, rows=8, threshold=0.7, num_perm=64, shingle_size=3))
    assert ev == {"rule": "minhash_lsh", "cluster_id": "c1", "threshold": 0.7, "num_perm": 64, "bands": 4,
                  "rows": 8, "shingle_size": 3}


def test_bucket_edges_star_from_the_smallest_id():
    assert bucket_edges(["c", "a", "b", "a"]) == [("a", "b"), ("a", "c")]
    assert bucket_edges(["x"]) == []


def test_components_take_the_smallest_member_whatever_the_edge_order():
    # d-c, c-b joined later to a through b: every node ends under "a"
    comp = connected_components([("d", "c"), ("z", "y"), ("c", "b"), ("b", "a")])
    assert comp == {"a": "a", "b": "a", "c": "a", "d": "a", "y": "y", "z": "y"}
    assert component_sizes([("d", "c"), ("z", "y"), ("c", "b"), ("b", "a")]) == [
        ("a", ("a", 4)), ("b", ("a", 4)), ("c", ("a", 4)), ("d", ("a", 4)), ("y", ("y", 2)), ("z", ("y", 2))]


def test_keep_one_keeps_the_smallest_id_and_names_it():
    recs = [{"record_id": "b", "v": 1}, {"record_id": "a", "v": 2}, {"record_id": "c", "v": 3}]
    kept, *dropped = keep_one(recs, "dedup_exact", "exact_duplicate", "t", {"rule": "exact"})
    assert kept == {"record_id": "a", "v": 2}
    assert [d["record_id"] for d in dropped] == ["b", "c"]
    ev = json.loads(dropped[0]["evidence_json"])
    assert (dropped[0]["stage"], dropped[0]["reason"], ev) == (
        "dedup_exact", "exact_duplicate", {"rule": "exact", "kept_record_id": "a", "group_size": 3})


def test_exact_copies_drop_to_the_smallest_id_with_the_hash_in_evidence():
    recs = [{"record_id": "r2", "content": TEN.upper()}, {"record_id": "r1", "content": "  " + TEN},
            {"record_id": "r3", "content": "something else entirely with five words"}]
    stats: dict[str, int] = {}
    kept, dropped = dedup_records(recs, "source_file", DedupConfig(near=False), stats=stats)
    assert [k["record_id"] for k in kept] == ["r1", "r3"] and stats == {"dedup_key_empty": 0}
    (d,) = dropped
    ev = json.loads(d["evidence_json"])
    assert (d["record_id"], ev["rule"], ev["content_hash"], ev["kept_record_id"]) == (
        "r2", "exact", exact_key(TEN)[:16], "r1")


def test_near_only_and_no_pass():
    # identical texts: with only the near pass the copy is a near duplicate; with no pass nothing is dropped
    recs = [{"record_id": "b", "content": TEN}, {"record_id": "a", "content": TEN}]
    kept, dropped = dedup_records(recs, "source_file", DedupConfig(exact=False))
    assert [k["record_id"] for k in kept] == ["a"] and [(d["record_id"], d["stage"]) for d in dropped] == [
        ("b", "dedup_near")]
    kept, dropped = dedup_records(recs, "source_file", DedupConfig(exact=False, near=False))
    assert [k["record_id"] for k in kept] == ["a", "b"] and dropped == []


def test_near_decisions_compare_ids_by_value():
    # a component id read back from another worker is an equal string, not the same object
    rid = "rec-" + str(7)
    cid = "".join(["rec-", "7"])
    assert rid == cid and rid is not cid
    assert near_decisions(rid, [(rid, "", "")], {rid: (cid, 2)}, DedupConfig()) == []       # kept: no decision


def test_copy_decisions_keep_one_copy_of_the_smallest_tuple():
    copies = [("b", "h1", "x"), ("a", "h2", "y"), ("a", "h2", "y"), ("a", "h1", "z")]
    drop = ("r", {"rule": "x", "kept_record_id": "a", "group_size": 4})
    assert copy_decisions(copies, "r", {"rule": "x"}) == [(("a", "h1", "z"), (None,)), (("a", "h2", "y"), (drop, drop)),
                                                          (("b", "h1", "x"), (drop,))]
    two = ("r", {"kept_record_id": "a", "group_size": 2})
    assert copy_decisions([("a", "h", "x"), ("a", "h", "x")], "r", {}) == [(("a", "h", "x"), (None, two))]
    assert copy_decisions([("a", "h", "x")], "r", {}) == []


def test_copy_of_tells_identical_copies_from_records_that_share_an_id():
    one, upper = {"record_id": "a", "text": "x y"}, {"record_id": "a", "text": "X  Y"}
    assert copy_of(one) == copy_of(dict(one))
    assert copy_of(one)[:2] == copy_of(upper)[:2] and copy_of(one)[2] != copy_of(upper)[2]
    assert copy_of(one)[1] == exact_key(repr(sorted(one.items())))      # keep_one's tie-break
    assert copy_of(one, shared=False) == ("a", "", "")                  # no other record bears its id
