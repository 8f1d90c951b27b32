"""Patches apply like git (offsets) and the SWE-bench harness (fuzz), checked against git apply / patch on real
repositories; unsafe paths are refused."""
from __future__ import annotations

import json
import re
import subprocess

import pytest

from swemine.corpora.repos import GitRepo
from swemine.miners.code_structure import StructureParser
from swemine.miners.localization.gold import gold_from_patch, repo_reader
from swemine.miners.localization.mine import mine_instance
from swemine.miners.patches import PatchError, apply_hunks, is_safe_path, parse_patch
from tests.gitutil import ScratchRepo

# The shape of sphinx-doc__sphinx-7462: the patch was made on a file that later gained lines above the hunk, so
# the hunk's header names a line 9 lines before the code it changes.
UNPARSE = '''def unparse(node):
    if isinstance(node, ast.List):
        result = [punct('[')]
        for elem in node.elts:
            result.extend(unparse(elem))
        result.append(punct(']'))
        return result
    elif isinstance(node, ast.Tuple):
        result = []
        for elem in node.elts:
            result.extend(unparse(elem))
            result.append(punct(', '))
        result.pop()
        return result
    else:
        raise SyntaxError
'''
FIXED = UNPARSE.replace('''        result = []
        for elem in node.elts:
            result.extend(unparse(elem))
            result.append(punct(', '))
        result.pop()
''', '''        if node.elts:
            result = []
            for elem in node.elts:
                result.extend(unparse(elem))
                result.append(punct(', '))
            result.pop()
        else:
            result = [punct('('), punct(')')]
''')
HEADER = "".join(f"# header line {i}\n" for i in range(9))        # the 9 lines the base gained above


@pytest.fixture()
def shifted(tmp_path):
    """``(repo, base commit, patch)``: the patch is made against the file without ``HEADER``, the base has it."""
    repo = ScratchRepo(tmp_path / "sphinx-doc__demo")
    _, patch = repo.change({"sphinx/domains/python.py": UNPARSE}, {"sphinx/domains/python.py": FIXED})
    base, _ = repo.change({"sphinx/domains/python.py": HEADER + UNPARSE}, {})
    return repo, base, patch


def _git_apply(repo: ScratchRepo, patch: str, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(repo.root), "apply", *extra, "-"], input=patch.encode(),
                          capture_output=True)


def test_offset_like_git_apply(shifted):
    repo, base, patch = shifted
    (fp,) = parse_patch(patch)
    assert fp.hunks[0].old_start == 6                            # the header: line 6 (3 context lines before 9) ...
    assert _git_apply(repo, patch, "--check").returncode == 0     # ... git applies it anyway
    applied = apply_hunks(HEADER + UNPARSE, fp)
    _git_apply(repo, patch)
    assert applied.text == (repo.root / "sphinx/domains/python.py").read_text() == HEADER + FIXED
    assert (applied.offsets, applied.fuzz) == ([9], [0])
    # the relocated hunk names the lines where the code is: the first removed line is line 18 of the base file
    first_removed = next(ln for ln in applied.hunks[0].lines if ln.kind == "-")
    assert first_removed.old_no == (HEADER + UNPARSE).splitlines().index("        result = []") + 1 == 18


def test_offset_gold_record(shifted):
    repo, base, patch = shifted
    sp = StructureParser()
    gold = gold_from_patch(patch, repo_reader(GitRepo(str(repo.root)), base), sp)
    assert gold.quality == "repo" and gold.gold_entities == ["sphinx/domains/python.py:unparse"]
    # removed lines 18-22 of the base file (9 header lines + lines 9-13 of UNPARSE)
    assert gold.gold_line_spans == [{"file": "sphinx/domains/python.py", "start": 18, "end": 22}]
    assert gold.placement() == {"patch_placement": {"sphinx/domains/python.py": {"offsets": [9], "fuzz": [0]}}}
    task = {"instance_id": "sphinx-doc__demo-1", "repo": "sphinx-doc/demo", "base_commit": base, "patch": patch,
            "problem_statement": "empty tuple", "created_at": "2020-01-01T00:00:00Z"}
    (rec,) = mine_instance(task, [], GitRepo(str(repo.root)), sp)
    assert rec["gold_quality"] == "repo"
    assert json.loads(rec["extra_json"])["patch_placement"] == {"sphinx/domains/python.py": {"offsets": [9],
                                                                                            "fuzz": [0]}}


def test_exact_patch_records_no_placement(shifted):
    repo, _, patch = shifted
    base, exact = repo.change({"sphinx/domains/python.py": UNPARSE}, {"sphinx/domains/python.py": FIXED})
    gold = gold_from_patch(exact, repo_reader(GitRepo(str(repo.root)), base), StructureParser())
    assert gold.placement() == {} and gold.gold_line_spans == [{"file": "sphinx/domains/python.py", "start": 9,
                                                                 "end": 13}]


def test_fuzz_like_the_swe_bench_harness(tmp_path, shifted):
    repo, base, patch = shifted
    # the base's first context line differs from the patch's: git apply refuses, patch --fuzz applies it
    drifted = HEADER + UNPARSE.replace("    elif isinstance(node, ast.Tuple):", "    elif isinstance(node, tuple):")
    base, _ = repo.change({"sphinx/domains/python.py": drifted}, {})
    assert _git_apply(repo, patch, "--check").returncode != 0
    done = subprocess.run(["patch", "--batch", "--fuzz=5", "-p1", "-d", str(repo.root)], input=patch.encode(),
                          capture_output=True)
    report = re.search(r"Hunk #1 succeeded at (\d+) with fuzz (\d+) \(offset (\d+) lines?\)", done.stdout.decode())
    assert done.returncode == 0 and report, done.stdout
    (fp,) = parse_patch(patch)
    applied = apply_hunks(drifted, fp)
    assert applied.text == (repo.root / "sphinx/domains/python.py").read_text()
    # the changed context line is the last of three before the change: all three are ignored, as patch did
    assert (applied.offsets, applied.fuzz) == ([int(report[3])], [int(report[2])]) == ([9], [3])
    with pytest.raises(PatchError) as exc:
        apply_hunks(drifted, fp, max_fuzz=0)
    assert exc.value.reason == "hunk_mismatch"


@pytest.mark.parametrize("path", ["../outside.py", "a/../../outside.py", "/etc/passwd", "pkg/../../x.py",
                                  "~/x.py", "C:/x.py", "..\\x.py"])
def test_unsafe_paths_are_refused(path):
    diff = (f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-x = 1\n+x = 2\n")
    with pytest.raises(PatchError) as exc:
        parse_patch(diff)
    assert exc.value.reason == "unsafe_path"
    with pytest.raises(PatchError) as exc:                        # patch-only gold refuses them too
        gold_from_patch(diff)
    assert exc.value.reason == "unsafe_path"


def test_safe_paths():
    assert all(map(is_safe_path, ["a.py", "pkg/a.py", "pkg/./a.py", ".github/x.yml", "a..b.py"]))
    (fp,) = parse_patch("--- /dev/null\n+++ b/new/mod.py\n@@ -0,0 +1 @@\n+x = 1\n")
    assert fp.is_added and fp.path == "new/mod.py"
