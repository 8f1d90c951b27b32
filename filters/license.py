"""License policy for code: an allow-list of SPDX ids (permissive by default) over each record's license.

The license comes from, in order: a repo → license mapping given as metadata (``--license-map``), the record's
own license field (``SourceFile.license``), or a repo's license file text (:func:`license_from_text` over
``LICENSE`` / ``COPYING`` files via any reader, e.g. ``RepoSource.read``). Names are normalized to SPDX ids;
expressions with ``OR`` pass when any alternative is allowed, ``AND`` when all are. A license outside the
allow-list is ``license_not_allowed``; no or unrecognisable license is its own reason, ``license_unknown``.
"""
from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

from swemine.corpora.licenses import LICENSE_FILES, license_from_repo, license_from_text  # noqa: F401 (re-exported)
from swemine.filters.canon import normalize_repo
from swemine.filters.fields import FieldSpec, first_value, spec_for
from swemine.filters.verdict import Verdict, filter_stage

STAGE = "license"
PERMISSIVE = ("MIT", "Apache-2.0", "BSD-2-Clause", "BSD-3-Clause", "ISC", "Unlicense", "0BSD", "PSF-2.0",
              "Zlib", "CC0-1.0", "BSL-1.0", "MIT-0", "X11", "NCSA", "Python-2.0")

#: Common spellings (lower-cased, punctuation collapsed) → SPDX id.
_ALIASES = {
    "mit": "MIT", "mit license": "MIT", "the mit license": "MIT", "expat": "MIT",
    "apache 2 0": "Apache-2.0", "apache license 2 0": "Apache-2.0", "apache license version 2 0": "Apache-2.0",
    "apache software license": "Apache-2.0", "apache 2": "Apache-2.0", "asl 2 0": "Apache-2.0",
    "bsd": "BSD-3-Clause", "bsd license": "BSD-3-Clause", "new bsd license": "BSD-3-Clause",
    "bsd 3 clause": "BSD-3-Clause", "bsd 3 clause new or revised license": "BSD-3-Clause",
    "bsd 2 clause": "BSD-2-Clause", "simplified bsd license": "BSD-2-Clause",
    "bsd 2 clause simplified license": "BSD-2-Clause", "isc": "ISC", "isc license": "ISC",
    "unlicense": "Unlicense", "the unlicense": "Unlicense", "psf": "PSF-2.0", "python software foundation license":
    "PSF-2.0", "gpl 2 0": "GPL-2.0", "gpl 3 0": "GPL-3.0", "gplv2": "GPL-2.0", "gplv3": "GPL-3.0",
    "gnu general public license v3 0": "GPL-3.0", "gnu general public license v2 0": "GPL-2.0",
    "lgpl 2 1": "LGPL-2.1", "lgpl 3 0": "LGPL-3.0", "agpl 3 0": "AGPL-3.0",
    "gnu affero general public license v3 0": "AGPL-3.0", "mpl 2 0": "MPL-2.0",
    "mozilla public license 2 0": "MPL-2.0", "cc0 1 0": "CC0-1.0", "zlib": "Zlib", "boost software license 1 0":
    "BSL-1.0", "other": "NOASSERTION", "no license": "NONE", "none": "NONE", "noassertion": "NOASSERTION",
}
_SUFFIXES = re.compile(r"-(only|or-later)$|\+$")

def normalize_spdx(name: str | None) -> str:
    """A license name or SPDX id → SPDX id (``""`` when empty; unknown ids are returned as given)."""
    text = (name or "").strip()
    if not text:
        return ""
    alias = _ALIASES.get(re.sub(r"[^a-z0-9]+", " ", text.lower()).strip())
    if alias:
        return alias
    return _SUFFIXES.sub("", text)


def _terms(expr: str) -> tuple[str, list[list[str]]]:
    """An SPDX expression as OR-of-AND groups of normalized ids."""
    expr = expr.strip().strip("()")
    groups = [[normalize_spdx(t) for t in re.split(r"\s+AND\s+", alt)] for alt in re.split(r"\s+OR\s+", expr)]
    return expr, groups


@dataclass(frozen=True)
class LicenseConfig:
    """The allow-list and where a record's license comes from."""
    allow: tuple[str, ...] = PERMISSIVE
    repo_licenses: tuple[tuple[str, str], ...] = ()      # (repo, license) metadata, highest priority

    def allowed(self) -> set[str]:
        return {normalize_spdx(a) for a in self.allow}


def read_license_map(path: str) -> dict[str, str]:
    """``{repo: license}`` from a JSON object or ``repo,license`` CSV lines (``--license-map``)."""
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    if text.lstrip().startswith("{"):
        return {normalize_repo(k): v for k, v in json.loads(text).items()}
    rows = csv.reader(io.StringIO(text))
    return {normalize_repo(r[0]): r[1].strip() for r in rows if len(r) >= 2 and not r[0].startswith("#")}


def check_license(license_expr: str | None, cfg: LicenseConfig) -> tuple[str, str] | None:
    """``None`` when allowed, else ``(reason, spdx)`` with reason ``license_unknown`` or ``license_not_allowed``."""
    expr = (license_expr or "").strip()
    if not expr:
        return "license_unknown", ""
    expr, groups = _terms(expr)
    allowed = cfg.allowed()
    if any(all(t in allowed for t in g) for g in groups):
        return None
    ids = [t for g in groups for t in g]
    if all(t in ("", "NONE", "NOASSERTION") for t in ids):
        return "license_unknown", expr
    return "license_not_allowed", expr


def license_stage_fn(record_type: str, cfg: LicenseConfig | None = None, spec: FieldSpec | None = None):
    """Stage function: keep records whose license is allowed; others ``Filtered`` with the license found."""
    cfg = cfg or LicenseConfig()
    spec = spec or spec_for(record_type)
    by_repo: Mapping[str, str] = {normalize_repo(r): lic for r, lic in cfg.repo_licenses}

    def judge(record: dict) -> Verdict:
        _, repo = first_value(record, spec.repo)
        source, lic = "metadata", by_repo.get(normalize_repo(str(repo or "")))
        if not lic:
            source, lic = spec.license, first_value(record, spec.license)[1]
        verdict = check_license(str(lic or ""), cfg)
        if verdict is None:
            return Verdict(record)
        reason, spdx = verdict
        return Verdict(record, reason, {"rule": reason, "license": spdx, "license_source": source if lic else "",
                                        "repo": repo or "", "allow": sorted(cfg.allowed())})

    return filter_stage(STAGE, record_type, judge)
