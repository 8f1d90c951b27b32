"""Recall of the default scrubbing on random credentials planted into real runs (``benchmarks/secrets_recall.py``):
every kind and every field at least 99% caught on a seeded planted set."""
from __future__ import annotations

import json
import random

import pytest

from swemine.filters import secrets_plant as sp
from swemine.filters.secrets_recall import load_runs, measure

RUN_FOLDERS = ("swe-agent", "openhands", "mini-swe-agent", "moatless")


@pytest.fixture(scope="module")
def runs(corpora_dir):
    return load_runs([str(corpora_dir / f) for f in RUN_FOLDERS], 60)


@pytest.mark.slow
def test_every_kind_and_field_is_caught_by_default(runs):
    by_kind, by_field = measure(runs, per_cell=2, seed=0)
    assert set(by_kind.planted) == set(sp.KINDS) and set(by_field.planted) == set(sp.FIELDS)
    assert sum(by_kind.planted.values()) == 2 * len(sp.KINDS) * len(sp.FIELDS)
    low = {k: by_kind.rate(k) for k in by_kind.planted if by_kind.rate(k) < 0.99}
    low |= {f: by_field.rate(f) for f in by_field.planted if by_field.rate(f) < 0.99}
    assert not low, (low, by_kind.misses[:10])


def test_plants_land_in_the_field_and_a_leak_is_seen(runs):
    rng = random.Random(4)
    for kind in sp.KINDS:
        p = sp.draw(kind, rng)
        assert p.value and p.value.split("\n")[0] in p.snippet or kind == "google_service_account", kind
        for field in set(sp.FIELDS) - {"reject_excerpt"}:      # an excerpt keeps its first 200 characters only
            record_type, record = sp.plant(runs[0], field, p, rng)
            text = json.dumps(record, ensure_ascii=False)
            before = json.dumps(runs[0], ensure_ascii=False)
            # unscrubbed, the value survives
            assert sp.survives(p.value, before, text), (kind, field)
    # a value replaced whole is gone; one with a 12-character piece left is a leak
    value = "Zq7" * 8
    assert not sp.survives(value, "", "x=<SECRET:Secret Assignment>")
    assert sp.survives(value, "", "x=" + value[:12] + "<SECRET>")
    assert not sp.survives(value, value[:12], "x=" + value[:12])          # a piece the real text held already


def test_main_scanner_misses_what_the_benchmark_counts(runs):
    # the benchmark tells a scrubber that misses from one that catches: scrubbing nothing catches nothing
    by_kind, _ = measure(runs, per_cell=1, seed=2, scrub=lambda record_type, record: record, kinds=("openai_legacy",))
    assert sum(by_kind.caught.values()) == 0 and by_kind.planted["openai_legacy"] == len(sp.FIELDS)
