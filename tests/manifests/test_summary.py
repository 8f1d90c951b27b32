"""A manifest on the console: the per-stage table in pipeline order, the notes, a run that lost everything."""
from __future__ import annotations

import io

from swemine.manifests.summary import lost_everything, notes, print_summary


def _stage(n_in: int, out: int, rejected: dict | None = None) -> dict:
    return {"in": n_in, "out": out, "rejected": rejected or {}, "filtered": {}, "info": {}}


def test_summary_follows_the_stage_order():
    manifest = {"run_id": "x-1", "wall_seconds": 1.0, "outputs": [], "stage_order": ["read", "join", "decontam"],
                "stages": {"decontam": _stage(2, 2), "join": _stage(2, 2), "read": _stage(1, 2, {"bad": 1}),
                           "zeta": _stage(0, 0)}}
    out = io.StringIO()
    print_summary(manifest, out)
    names = [line.split()[0] for line in out.getvalue().splitlines()[2:6]]
    assert names == ["read", "join", "decontam", "zeta"]          # then stages the order does not know, sorted
    assert "  read rejected bad: 1" in out.getvalue()


def test_a_run_whose_endpoint_answered_nothing_fails():
    unreachable = {"diagnoses": {"verified": 0, "not_diagnosed": {"llm_APIConnectionError": 23}}}
    assert lost_everything(unreachable) == ("no trajectory was diagnosed (llm_APIConnectionError x23): is "
                                            "--llm-base-url reachable and --llm-model right?")
    partly = {"diagnoses": {"verified": 5, "not_diagnosed": {"budget_exceeded": 18}}}
    assert lost_everything(partly) == "" and lost_everything({}) == ""
    unread = {"stages": {"tasks": {"in": 2, "out": 0, "rejected": {"unsupported_file_type": 2}}}}
    assert lost_everything(unread) == ("no task could be read from --tasks (unsupported_file_type x2); see the "
                                       "rejects shard")
    assert lost_everything({"stages": {"tasks": {"in": 2, "out": 1, "rejected": {"invalid_json": 1}}}}) == ""


def test_notes_say_what_happened():
    manifest = {"gold_quality": {"patch_only": 3, "repo": 11, "repos_not_found": ["a/b"]},
                "diagnoses": {"verified": 5, "not_diagnosed": {"budget_exceeded": 2}},
                "corrections": {"grounded": 4, "no_grounded_correction": 1, "by_source": {}}}
    assert notes(manifest) == ["gold quality: patch_only 3, repo 11; not found under --repos: a/b",
                               "diagnoses: 5 verified, not diagnosed (budget_exceeded) 2",
                               "corrections: 4 grounded, 1 without a grounded one"]
    assert notes({}) == []
