"""Embedded SAMPLE corpus: short, hand-written files in each supported format, for the no-argument run.

Every file here was written for swemine as a sample (fictional repository ``samples/calc``); none is real agent
output. Real data for tests lives in ``../shared/corpora``.
"""
from __future__ import annotations

import os


def sample_root() -> str:
    """Directory holding ``trajectories/`` (one sub-folder per format) and ``tasks/``."""
    return os.path.dirname(os.path.abspath(__file__))
