"""License policy: SPDX normalization, detection from license texts, allow-list decisions with reasons."""
from __future__ import annotations

import json
import subprocess

from swemine.filters.license import (
    LicenseConfig,
    check_license,
    license_from_repo,
    license_from_text,
    license_stage_fn,
    normalize_spdx,
    read_license_map,
)

MIT_TEXT = ("MIT License\n\nCopyright (c) 2024 Acme\n\nPermission is hereby granted, free of charge, to any person "
            "obtaining a copy\nof this software ...")
BSD3 = ("Redistribution and use in source and binary forms, with or without modification, are permitted ...\n"
        "3. Neither the name of the copyright holder nor the names of its contributors may be used")
GPL3 = "                    GNU GENERAL PUBLIC LICENSE\n                       Version 3, 29 June 2007\n"


def test_normalize_and_detect():
    assert [normalize_spdx(x) for x in ("MIT License", "Apache License 2.0", "BSD-3-Clause", "GPL-3.0-or-later",
                                        "", "Other")] == ["MIT", "Apache-2.0", "BSD-3-Clause", "GPL-3.0", "",
                                                          "NOASSERTION"]
    assert [license_from_text(t) for t in (MIT_TEXT, BSD3, BSD3.split("\n")[0], GPL3, "all rights reserved")] == [
        "MIT", "BSD-3-Clause", "BSD-2-Clause", "GPL-3.0", ""]


def test_expressions_and_reasons():
    cfg = LicenseConfig()
    assert check_license("MIT", cfg) is None
    assert check_license("MIT OR GPL-3.0", cfg) is None
    assert check_license("MIT AND GPL-3.0", cfg) == ("license_not_allowed", "MIT AND GPL-3.0")
    assert check_license("GPL-3.0-only", cfg) == ("license_not_allowed", "GPL-3.0-only")
    assert check_license("", cfg) == ("license_unknown", "")
    assert check_license("NOASSERTION", cfg) == ("license_unknown", "NOASSERTION")
    assert check_license("GPL-3.0", LicenseConfig(allow=("MIT", "GPL-3.0"))) is None


def test_stage_uses_metadata_then_field(tmp_path):
    fn = license_stage_fn("source_file", LicenseConfig(repo_licenses=(("Acme/GPLTool", "GPL-2.0"),)))
    ok = {"record_id": "a", "repo": "acme/lib", "license": "MIT"}
    assert fn(ok) == [ok]
    (bad,) = fn({"record_id": "b", "repo": "acme/gpltool", "license": "MIT"})
    ev = json.loads(bad["evidence_json"])
    assert (bad["reason"], ev["license"], ev["license_source"]) == ("license_not_allowed", "GPL-2.0", "metadata")
    (unk,) = fn({"record_id": "c", "repo": "acme/none", "license": None})
    assert unk["reason"] == "license_unknown"
    # from a real git repo's LICENSE file, read with git (no checkout)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "LICENSE").write_text(BSD3)
    g = ["git", "-C", str(tmp_path), "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run(g + ["add", "."], check=True)
    subprocess.run(g + ["commit", "-qm", "x"], check=True)

    def read(path):
        r = subprocess.run(["git", "-C", str(tmp_path), "show", f"HEAD:{path}"], capture_output=True)
        return r.stdout if r.returncode == 0 else None

    assert license_from_repo(read) == ("BSD-3-Clause", "LICENSE")


def test_license_map_and_alias_files(tmp_path):
    """``--license-map`` and ``--repo-alias`` files: JSON or CSV, repositories normalized, comment lines skipped."""
    from swemine.filters.canon import read_aliases

    (tmp_path / "lic.json").write_text(json.dumps({"https://github.com/Acme/Calc.git": "MIT"}))
    (tmp_path / "lic.csv").write_text("acme__calc, Apache-2.0\n#skip,x\nbeta/lib\n")
    assert read_license_map(str(tmp_path / "lic.json")) == {"acme/calc": "MIT"}
    assert read_license_map(str(tmp_path / "lic.csv")) == {"acme/calc": "Apache-2.0"}
    (tmp_path / "alias.csv").write_text("Old/Name,new/name\n")
    assert read_aliases([str(tmp_path / "alias.csv"), "a/b=c/d", '{"X/Y": "z/w"}']) == {
        "old/name": "new/name", "a/b": "c/d", "x/y": "z/w"}
