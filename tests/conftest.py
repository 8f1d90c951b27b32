"""Shared fixtures: where the real public corpora live (../shared/corpora beside the checkout)."""
import os
import pathlib

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="session")
def corpora_dir() -> pathlib.Path:
    here = pathlib.Path(__file__).resolve().parent.parent
    for cand in (os.environ.get("SWEMINE_CORPORA"), here.parent / "shared" / "corpora",
                 pathlib.Path("/work/shared/corpora")):
        if cand and pathlib.Path(cand).is_dir():
            return pathlib.Path(cand)
    pytest.skip("shared corpora not found")
