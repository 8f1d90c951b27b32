"""Registry of trajectory and run-metadata formats, in detection order (first match wins).

Each format module defines one or more :class:`corpora.formats.base.Format` subclasses; list an instance
here to make it auto-detected. More specific formats come before more general ones.
"""
from __future__ import annotations

from typing import Callable, Iterator

from corpora.formats.base import LABEL_PRIORITY, Format
from corpora.formats.swe_agent import SweAgentTraj

# readers-a formats
from corpora.formats.chat_rows import OpenAIChatRow, SweAgentRow
from corpora.formats.mini_swe_agent import MiniSweAgentTraj
from corpora.formats.openhands import OpenHandsLlmCompletion, OpenHandsOutput
from corpora.formats.run_labels import (ExitStatuses, FinalReport, HarnessReport, Preds, ResultJson,
                                        ResultsSummary, SbCliReport)

FORMATS: list[Format] = [
    # readers-a formats
    MiniSweAgentTraj(),
    OpenHandsOutput(),
    OpenHandsLlmCompletion(),
    SweAgentRow(),
    OpenAIChatRow(),
    Preds(),
    ResultJson(),
    HarnessReport(),
    SbCliReport(),
    FinalReport(),
    ResultsSummary(),
    ExitStatuses(),
    SweAgentTraj(),
]

#: Directory formats (see ``corpora.inputs.register_directory_format``): name -> reader(dir_uri) yielding records.
DIRECTORY_READERS: dict[str, Callable[[str], Iterator[dict]]] = {}

__all__ = ["FORMATS", "DIRECTORY_READERS", "LABEL_PRIORITY", "Format", "detect"]


def detect(doc, uri: str) -> Format | None:
    """The first registered format that recognises ``doc`` (read from ``uri``), or ``None``."""
    for fmt in FORMATS:
        try:
            if fmt.matches(doc, uri):
                return fmt
        except (TypeError, AttributeError, KeyError):
            continue
    return None
