"""Scrubber precision on the whole shared corpora (today's formats in ``fresh/`` and ``atif/`` included): a seeded
sample of every finding kind, each judged by reading it in context (``secrets_precision.json``: key -> true/false
and why), must be >= 95% true per kind.

Regenerate the sample in context with ``python -m swemine.filters.secrets_report <corpora> --verdicts
tests/filters/secrets_precision.json``; a finding without a verdict fails the test until someone judges it.
"""
from __future__ import annotations

import json
import pathlib
import re

import pytest

from swemine.filters.secrets_report import findings_by_kind, precision, sample

VERDICTS = pathlib.Path(__file__).with_name("secrets_precision.json")


#: what a finding must never be: a version number, a hex digest (git SHA, sha256), a UUID, a path
NOT_SECRETS = re.compile(r"(?i)^(?:v?\d+(?:\.\d+)+\w*|[0-9a-f]{40}|[0-9a-f]{64}|"
                         r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|/[\w.-]+(?:/[\w.-]+)+)$")


@pytest.fixture(scope="module")
def found(corpora_dir):
    return findings_by_kind(corpora_dir)


@pytest.mark.slow
def test_precision_per_kind_on_the_corpora(found):
    verdicts = {k: v["true"] for k, v in json.loads(VERDICTS.read_text()).items()}
    report = precision(sample(found), verdicts)
    print(json.dumps(report, indent=1))
    assert {label for label in report} >= {"email", "ip_address", "Basic Auth Credentials"}
    for label, p in report.items():
        assert p["unjudged"] == 0, f"{label}: {p['unjudged']} sampled finding(s) have no verdict"
        assert p["precision"] >= 0.95, (label, p)


@pytest.mark.slow
def test_no_version_hash_uuid_or_path_is_rewritten(found):
    secret_kinds = {label for label in found if label not in ("email", "ip_address", "home_user")}
    assert secret_kinds >= {"Basic Auth Credentials", "Secret Assignment"}
    for label in secret_kinds:
        for s in found[label]:
            value = s.context.split("[[", 1)[1].rsplit("]]", 1)[0]
            assert not NOT_SECRETS.match(value), (label, s.key)
