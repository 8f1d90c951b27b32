"""CI's guard against a green run with half the suite skipped (``SWEMINE_NO_SKIPS=1``)."""
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _run_inner(tmp_path, env_value: str, module_skip: bool = False) -> subprocess.CompletedProcess:
    inner = tmp_path / "tests"
    inner.mkdir()
    (inner / "conftest.py").write_text((ROOT / "tests" / "conftest.py").read_text())
    (inner / "test_inner.py").write_text(
        "import pytest\n"
        "def test_marker_skip():\n    pytest.skip('shared corpora not found')\n"
        "@pytest.mark.skipif(True, reason='no chromium installed')\ndef test_skipif():\n    pass\n"
        "def test_passes():\n    assert 1 + 1 == 2\n")
    if module_skip:
        (inner / "test_module_skip.py").write_text("import pytest\npytest.importorskip('no_such_module_xyz')\n")
    env = {"PATH": "/usr/bin:/bin", "SWEMINE_NO_SKIPS": env_value, "COLUMNS": "400"}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(inner)],
                          cwd=tmp_path, env=env, capture_output=True, text=True)


def test_skips_fail_when_forbidden(tmp_path):
    proc = _run_inner(tmp_path, "1")
    assert proc.returncode == 1
    # a skip in the test body fails it; a skip in setup (skipif) is an error; the passing test still passes
    assert "1 failed, 1 passed, 1 error" in proc.stdout
    assert "forbids skips: Skipped: shared corpora not found" in proc.stdout


def test_module_level_skip_fails_collection(tmp_path):
    proc = _run_inner(tmp_path, "1", module_skip=True)
    assert proc.returncode != 0
    assert "forbids skips: Skipped: could not import 'no_such_module_xyz'" in proc.stdout


def test_skips_are_skips_otherwise(tmp_path):
    proc = _run_inner(tmp_path, "0", module_skip=True)
    assert proc.returncode == 0
    assert "1 passed, 3 skipped" in proc.stdout
