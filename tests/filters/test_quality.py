"""Trajectory quality rules on real SWE-agent trajectories and hand-built variants."""
from __future__ import annotations

import collections
import copy
import json

import pytest

from swemine.corpora.normalize import normalize_paths
from swemine.corpora.records import Filtered
from swemine.filters.quality import (
    QualityConfig,
    action_key,
    candidate,
    check_quality,
    quality_stage_fn,
    select_per_instance,
)


@pytest.fixture(scope="module")
def trajs(corpora_dir):
    return normalize_paths([str(corpora_dir / "swe-agent")])[0]


def test_real_trajectories_pass_per_record_rules(trajs):
    fn = quality_stage_fn()
    out = [r for t in trajs for r in fn(t)]
    assert sum(isinstance(r, Filtered) for r in out) == 0 and len(out) == 37


def test_rules_fire_with_reasons(trajs):
    base = trajs[0]
    empty = {**base, "steps": []}
    assert check_quality(empty, QualityConfig())[0] == "empty_trajectory"
    bad = copy.deepcopy(base)
    bad["steps"][1]["action_text"], bad["steps"][1]["tool_name"] = "", None
    reason, ev = check_quality(bad, QualityConfig())
    assert (reason, ev["steps"]) == ("malformed_response", [{"step": 1, "why": "no_action"}])
    assert check_quality(bad, QualityConfig(max_malformed_steps=1)) is None
    fmt = copy.deepcopy(base)
    fmt["steps"][2]["observation"] = "Your output was not formatted correctly. Please try again."
    assert check_quality(fmt, QualityConfig())[1]["steps"][0]["why"].startswith("marker:")
    misuse = copy.deepcopy(base)
    for s in misuse["steps"][:4]:
        s["observation"] = "bash: frobnicate: command not found"
    reason, ev = check_quality(misuse, QualityConfig())
    assert (reason, ev["n_errors"]) == ("tool_misuse", 4)
    assert check_quality(misuse, QualityConfig(tool_misuse=False)) is None


def test_per_instance_duplicates_and_n_shortest(trajs):
    marsh = [t for t in trajs if t["instance_id"] == "marshmallow-code__marshmallow-1867"]
    assert sorted(len(t["steps"]) for t in marsh) == [11, 14]
    dup = {**copy.deepcopy(marsh[0]), "record_id": "zz-dup"}
    out = select_per_instance(marsh + [dup], QualityConfig())
    reasons = collections.Counter(r["reason"] for r in out if isinstance(r, Filtered))
    assert reasons == {"duplicate_actions": 1}
    dropped = next(r for r in out if isinstance(r, Filtered))
    assert dropped["record_id"] == "zz-dup" and json.loads(dropped["evidence_json"])["kept_record_id"] == marsh[0]["record_id"]
    out = select_per_instance(marsh + [dup], QualityConfig(keep_shortest=1))
    kept = [r for r in out if not isinstance(r, Filtered)]
    assert [len(k["steps"]) for k in kept] == [11]
    assert sorted(r["reason"] for r in out if isinstance(r, Filtered)) == ["duplicate_actions", "not_n_shortest"]


def test_same_action_sequence_needs_actions(classic_corpora):
    """Over every harness of the shared corpora only the one genuine repeat is a duplicate (a Moatless re-run of
    django__django-9296 that repeated every call); runs without any action are never duplicates."""
    trajs = normalize_paths(classic_corpora)[0]
    groups = collections.defaultdict(list)
    for t in trajs:
        groups[candidate(t, QualityConfig()).instance].append(t)
    dups = [r for g in groups.values() for r in select_per_instance(g, QualityConfig()) if isinstance(r, Filtered)]
    assert [(d["reason"], json.loads(d["record_json"])["harness"], json.loads(d["record_json"])["instance_id"])
            for d in dups] == [("duplicate_actions", "moatless", "django__django-9296")]
    silent = [{**trajs[0], "record_id": f"s{i}", "steps": []} for i in range(3)]
    assert action_key(silent[0]) == "" and select_per_instance(silent, QualityConfig()) == silent
