"""Typed run configs (dolma style): frozen dataclasses whose fields are the command-line flags and the keys of a
``--config run.yaml`` file (the flags given win over it). Nothing here touches files or git.
"""
from __future__ import annotations

import argparse
import dataclasses
import types
import typing
from collections.abc import Mapping
from typing import Any

from swemine.failures import CommandError

MISSING = dataclasses.MISSING


def option(default: Any = MISSING, help: str = "", *, default_factory: Any = MISSING, **meta: Any) -> Any:
    """A field that is a flag: ``--<name>`` (``flag`` names another); the annotation gives its type (``bool``: a
    switch, one that sets False with ``negate``; ``tuple[X, ...]``: repeatable; a config dataclass: its fields as a
    group, with ``prefix``, ``group``, the names it ``skip``s and ``help`` a format for theirs); ``help`` shows the
    default; ``choices``, ``metavar`` and ``type`` (the flag's parser) go to argparse."""
    return dataclasses.field(default=default, default_factory=default_factory, metadata={"help": help, **meta})


def _kind(hint: Any) -> tuple[Any, bool]:
    """``(base type, repeatable)`` of an annotation: ``tuple[str, ...]`` → ``(str, True)``, ``int | None`` → int."""
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        hint = next(a for a in typing.get_args(hint) if a is not type(None))
    if typing.get_origin(hint) is tuple:
        return typing.get_args(hint)[0], True
    return hint, False


def _help(text: str, default: Any) -> str:
    if not (default is None or default is False or (isinstance(default, (str, tuple)) and not default)):
        shown = ",".join(map(str, default)) if isinstance(default, tuple) else default
        text = f"{text} (default: {shown})" if text else f"default: {shown}"
    return text.replace("%", "%%")


def add_arguments(parser: argparse.ArgumentParser, cls: type, *, _dest: str = "", _prefix: str = "",
                  _help_format: str = "", _group: Any = None, _skip: tuple[str, ...] = ()) -> None:
    """Add one flag per field of the config dataclass ``cls`` (recursively for nested configs); a flag defaults to
    "not given", so :func:`from_namespace` tells it apart from the dataclass default."""
    hints = typing.get_type_hints(cls)
    target = _group or parser
    for f in dataclasses.fields(cls):
        meta = f.metadata
        if f.name in _skip:
            continue
        base, repeat = _kind(hints[f.name])
        if dataclasses.is_dataclass(base):
            title = meta.get("group") or (base.__doc__ or base.__name__).strip().splitlines()[0]
            add_arguments(parser, base, _dest=f"{_dest}{f.name}.", _prefix=meta.get("prefix", ""),
                          _help_format=meta.get("help", ""), _group=parser.add_argument_group(title),
                          _skip=tuple(meta.get("skip", ())))
            continue
        text = meta.get("help") or _help_format.format(name=f.name)
        kwargs: dict[str, Any] = {"dest": _dest + f.name, "default": argparse.SUPPRESS,
                                  "help": _help(text, f.default if base is not bool else None)}
        if base is bool:
            kwargs["action"] = "store_false" if meta.get("negate") else "store_true"
        else:
            kwargs["type"] = meta.get("type") or base
            if repeat:
                kwargs["action"] = "append"
            kwargs["metavar"] = meta.get("metavar") or (None if meta.get("choices") else f.name.upper())
            if meta.get("choices") is not None:
                kwargs["choices"] = meta["choices"]
        target.add_argument(meta.get("flag") or f"--{_prefix}{f.name.replace('_', '-')}", **kwargs)


def _value(hint: Any, value: Any) -> Any:
    _, repeat = _kind(hint)
    if repeat and isinstance(value, (list, tuple)):
        return tuple(value)
    if repeat and isinstance(value, str):
        return (value,)
    return value


class SettingsError(CommandError, ValueError):
    """A ``--config`` file or a setting in it that cannot be used, or a job's setting that names nothing."""


def from_dict(cls: type, data: Mapping[str, Any], base: Any = None, _skip: tuple[str, ...] = ()) -> Any:
    """A ``cls`` from a mapping of field names (a YAML file's content); unknown names are an error, and so are
    the names a job leaves out (``skip``)."""
    base = base if base is not None else cls()
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    names = set(fields) - set(_skip)
    unknown = sorted(set(data) - names)
    if unknown:
        raise SettingsError(f"{cls.__name__}: unknown setting(s) {unknown}; known: {sorted(names)}")
    values = {}
    for k, v in data.items():
        nested = getattr(base, k, None)
        if dataclasses.is_dataclass(nested) and isinstance(v, Mapping):
            values[k] = from_dict(type(nested), v, nested, tuple(fields[k].metadata.get("skip", ())))
        else:
            values[k] = _value(hints[k], v)
    return dataclasses.replace(base, **values)


def from_namespace(cls: type, ns: argparse.Namespace, base: Any = None, _dest: str = "") -> Any:
    """``base`` (default: ``cls()``) with every flag the command line gave set on it."""
    base = base if base is not None else cls()
    hints = typing.get_type_hints(cls)
    values = {}
    for f in dataclasses.fields(cls):
        sub, _ = _kind(hints[f.name])
        if dataclasses.is_dataclass(sub):
            values[f.name] = from_namespace(sub, ns, getattr(base, f.name), f"{_dest}{f.name}.")
        elif hasattr(ns, _dest + f.name):
            values[f.name] = _value(hints[f.name], getattr(ns, _dest + f.name))
    return dataclasses.replace(base, **values)


def load_yaml(path: str) -> dict:
    """A ``--config`` file: a YAML mapping of field names."""
    import yaml

    with open(path, encoding="utf-8") as fh:
        try:
            data = yaml.safe_load(fh) or {}
        except yaml.YAMLError as exc:
            raise SettingsError(f"{path}: not YAML ({' '.join(str(exc).split())})") from None
    if not isinstance(data, dict):
        raise SettingsError(f"{path}: a config file holds a mapping of settings, not {type(data).__name__}")
    return data


def bounded(kind: type, low: float, high: float | None = None):
    """A flag ``type``: a ``kind`` number in ``[low, high]`` (argparse reports anything else in one line)."""
    def parse(value: str):
        try:
            number = kind(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {value!r}") from None
        if number < low or (high is not None and number > high):
            raise argparse.ArgumentTypeError(f"{value} is outside [{low}, {'inf' if high is None else high}]")
        return number
    parse.__name__ = kind.__name__
    return parse


def tuples(obj: Any) -> None:
    """``__post_init__`` helper: store list values of a frozen dataclass's tuple fields as tuples."""
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if isinstance(value, list):
            object.__setattr__(obj, f.name, tuple(value))
