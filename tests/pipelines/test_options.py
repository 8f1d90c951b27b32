"""Flags generated from config dataclasses: names, types, help with defaults, ``--config`` files, precedence."""
from __future__ import annotations

import argparse
import dataclasses

import pytest

from swemine.pipelines.options import SettingsError, add_arguments, from_dict, from_namespace, load_yaml, option, tuples


@dataclasses.dataclass(frozen=True)
class Inner:
    """inner settings"""
    depth: int = option(3, "how deep")
    url: str | None = option(None, "where", flag="--inner-url")


@dataclasses.dataclass(frozen=True)
class Job:
    """a job"""
    inputs: tuple[str, ...] = option((), "input (repeatable)", flag="--input")
    ratio: float = option(0.5, "a ratio of 50%")
    mode: str = option("a", "the mode", choices=("a", "b"))
    strict: bool = option(False, "be strict")
    check: bool = option(True, "skip the check", flag="--no-check", negate=True)
    inner: Inner = option(default_factory=Inner, prefix="in-")

    def __post_init__(self):
        tuples(self)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    add_arguments(parser, Job)
    return parser


def test_flags_follow_the_fields():
    args = _parser().parse_args(["--input", "a", "--input", "b", "--ratio", "2", "--mode", "b", "--strict",
                                 "--no-check", "--in-depth", "9", "--inner-url", "u"])
    job = from_namespace(Job, args)
    assert job == Job(inputs=("a", "b"), ratio=2.0, mode="b", strict=True, check=False, inner=Inner(depth=9, url="u"))
    assert from_namespace(Job, _parser().parse_args([])) == Job()     # nothing given: the dataclass defaults
    with pytest.raises(SystemExit):
        _parser().parse_args(["--mode", "c"])


def test_help_shows_text_and_defaults():
    text = _parser().format_help()
    assert "a ratio of 50% (default: 0.5)" in text.replace("\n", " ").replace("  ", " ")
    assert "how deep (default: 3)" in " ".join(text.split())
    assert "inner settings:" in text and "--in-depth DEPTH" in text
    assert "be strict" in text and "(default: False)" not in text


def test_config_file_then_flags(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text("inputs: [one, two]\nratio: 0.25\ninner:\n  depth: 4\n")
    base = from_dict(Job, load_yaml(str(path)))
    assert base == Job(inputs=("one", "two"), ratio=0.25, inner=Inner(depth=4))
    job = from_namespace(Job, _parser().parse_args(["--ratio", "0.75"]), base)   # a flag given wins over the file
    assert (job.ratio, job.inputs, job.inner.depth) == (0.75, ("one", "two"), 4)
    with pytest.raises(SettingsError, match="unknown setting"):
        from_dict(Job, {"ratoi": 1})
    (tmp_path / "list.yaml").write_text("- a\n")
    with pytest.raises(ValueError, match="mapping"):
        load_yaml(str(tmp_path / "list.yaml"))
