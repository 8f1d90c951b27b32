"""The runner a run names, and getting swemine onto Dataflow workers: unless the user chose a way
(:data:`STAGING_FLAGS`), a DataflowRunner run stages a wheel of this checkout with ``--extra_package``; pip
resolves its declared dependencies on each worker."""
from __future__ import annotations

import glob
import os
import subprocess
import sys
import tempfile

STAGING_FLAGS = ("--extra_package", "--extra_packages", "--setup_file", "--requirements_file",
                 "--sdk_container_image")


def project_root() -> str:
    """The source checkout holding ``pyproject.toml`` (raises when swemine runs from an installed wheel)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if not os.path.exists(os.path.join(root, "pyproject.toml")):
        raise RuntimeError("swemine is not running from a source checkout: pass --extra_package=<swemine wheel> "
                           "or --sdk_container_image=<image with swemine installed>")
    return root


def build_wheel(dest: str | None = None) -> str:
    """Build a wheel of the checkout into ``dest`` (a temp dir by default); return its path."""
    dest = dest or tempfile.mkdtemp(prefix="swemine-wheel-")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", dest,
                    project_root()], check=True, capture_output=True)
    wheels = sorted(glob.glob(os.path.join(dest, "swemine-*.whl")))
    if not wheels:
        raise RuntimeError(f"pip wheel produced no swemine wheel in {dest}")
    return wheels[-1]


def runner_name(beam_args: list[str]) -> str | None:
    """The runner ``--runner`` names in ``beam_args`` (``None`` without one)."""
    for i, a in enumerate(beam_args):
        if a == "--runner":
            return beam_args[i + 1] if i + 1 < len(beam_args) else ""
        if a.startswith("--runner="):
            return a.split("=", 1)[1]
    return None


def uses_dataflow(beam_args: list[str]) -> bool:
    return runner_name(beam_args) in ("DataflowRunner", "dataflow")


def with_staging(beam_args: list[str]) -> list[str]:
    """``beam_args`` plus ``--extra_package=<fresh wheel>`` for Dataflow runs that name no staging method."""
    if not uses_dataflow(beam_args) or any(a.split("=", 1)[0] in STAGING_FLAGS for a in beam_args):
        return list(beam_args)
    return [*beam_args, f"--extra_package={build_wheel()}"]


def is_dry_run(beam_args: list[str]) -> bool:
    return any(a in ("--dry_run", "--dry_run=True", "--dry_run=true") for a in beam_args)
