"""AutoCodeRover instance folders (``<run>/applicable_patch/<instance>_<date>/``), read as one unit each.

A folder holds ``meta.json`` (task and setup), ``problem_statement.txt``, ``conversation_round_N.json``
(cumulative chat: round N repeats rounds < N and appends the assistant turn that issued the tool calls of
layer N-1 plus their results), ``tool_call_layers.json`` (the search calls per round, last layer
``write_patch``), ``debug_agent_write_patch_N.json`` (the patch-writing chat), ``agent_patch_raw_N`` and
``extracted_patch_N.diff``.

Steps: every assistant turn of the last conversation round, its following user turns as the observation.
The first assistant turn a round adds is the one that issued that layer's calls: it becomes one step per
call (``tool_name`` = ``func_name``, arguments as ``tool_args_json``; the thought sits on the first, and each
call gets its own ``Result of <call>`` section of the observation when the sections line up).
``call_ok: false`` becomes ``obs_exit_code = 1`` (``0`` for ``call_ok: true``). Each patch-writing chat adds a
``write_patch`` step (raw patch text as action, the harness reply as observation). The last
``extracted_patch_N.diff`` is the final patch.

Run-level labels: ``<run>/new_eval_results/report.json`` (SWE-bench id lists: ``resolved``, ``applied``, ...)
applies to the whole run folder (:class:`AcrEvalReport`).
"""
from __future__ import annotations

import hashlib
import posixpath
import re
from collections.abc import Iterator
from typing import Any

import fsspec

from swemine.corpora.formats.base import Format, make_label, make_step, make_trajectory, text
from swemine.corpora.formats.chat import render_call
from swemine.corpora.inputs import DocSource, iter_documents, read_bytes
from swemine.corpora.records import Reject, make_reject

NAME = "autocoderover-dir"
_NUM_RE = re.compile(r"_(\d+)(?:\.json|\.diff)?$")
_RESULT_RE = re.compile(r"(?m)^Result of (\w+)\(")


def is_acr_dir(names: set[str]) -> bool:
    """Directory predicate: an AutoCodeRover per-instance output folder."""
    return "meta.json" in names and any(n.startswith("conversation_round_") for n in names)


def _numbered(names: list[str], prefix: str) -> list[str]:
    """Names starting with ``prefix`` ordered by their trailing number."""
    found = [(int(m.group(1)), n) for n in names if n.startswith(prefix) and (m := _NUM_RE.search(n))]
    return [n for _, n in sorted(found)]


class _Bad(Exception):
    def __init__(self, reject: Reject):
        super().__init__(reject["message"])
        self.reject = reject


class _Folder:
    """Reads the folder's files once, remembering their bytes: the unit's sha256 covers the files it read."""

    def __init__(self, uri: str):
        self.uri = uri.rstrip("/")
        fs, path = fsspec.core.url_to_fs(self.uri)
        self.names = sorted(posixpath.basename(p.rstrip("/")) for p in fs.ls(path, detail=False))
        self.blobs: dict[str, bytes] = {}

    def raw(self, name: str) -> bytes:
        if name not in self.blobs:
            self.blobs[name] = read_bytes(f"{self.uri}/{name}")
        return self.blobs[name]

    def json(self, name: str) -> Any:
        uri = f"{self.uri}/{name}"
        for item in iter_documents(uri, self.raw(name), split_lists=False):
            if isinstance(item, Reject):
                raise _Bad(item)
            return item[1]
        raise _Bad(make_reject("read", "empty_file", f"{name} holds no document", uri=uri))

    def text(self, name: str) -> str:
        return self.raw(name).decode("utf-8", errors="replace") if name in self.names else ""

    def sha256(self) -> str:
        h = hashlib.sha256()
        for name in sorted(self.blobs):
            h.update(name.encode() + b"\0" + hashlib.sha256(self.blobs[name]).digest())
        return h.hexdigest()


def chat_steps(messages: list[dict], source_offset: int = 0) -> list[dict]:
    """Assistant turn + following non-assistant turns → one step each (leading user turns are skipped)."""
    steps, current = [], None
    for i, msg in enumerate(messages):
        role = msg.get("role")
        if role == "assistant":
            current = {"thought": text(msg.get("content")), "obs": [], "source_index": source_offset + i}
            steps.append(current)
        elif current is not None:
            current["obs"].append(text(msg.get("content")))
    return steps


def _split_results(observation: str, calls: list[dict]) -> list[str]:
    """One observation per call when the ``Result of <func>(`` sections match the calls in order."""
    starts = [m.start() for m in _RESULT_RE.finditer(observation)]
    names = [m.group(1) for m in _RESULT_RE.finditer(observation)]
    if len(calls) > 1 and names == [str(c.get("func_name")) for c in calls]:
        bounds = starts[1:] + [len(observation)]
        head = observation[: starts[0]]
        return [head + observation[s:e].rstrip() if k == 0 else observation[s:e].rstrip()
                for k, (s, e) in enumerate(zip(starts, bounds))]
    return [observation] + [""] * (len(calls) - 1)


def _call_steps(raw: dict, calls: list[dict]) -> list[dict]:
    observation = "\n".join(raw["obs"])
    if not calls:
        return [make_step(0, thought=raw["thought"], observation=observation, source_index=raw["source_index"])]
    out = []
    for k, (call, obs) in enumerate(zip(calls, _split_results(observation, calls))):
        ok = call.get("call_ok")
        name, args = str(call.get("func_name") or ""), call.get("arguments") or None
        out.append(make_step(0, thought=raw["thought"] if k == 0 else "", tool_name=name, tool_args=args,
                             action_text=render_call(name, args) if name else "", observation=obs,
                             exit_code=None if ok is None else (0 if ok else 1), source_index=raw["source_index"]))
    return out


class _AcrDir(Format):
    """Names the directory format on its records (``source_format``, ``harness``); folders are read by
    :func:`read_acr_dir`, never detected from a parsed document."""
    name = NAME
    harness = "autocoderover"
    description = "AutoCodeRover per-instance folder: meta.json, conversation_round_N.json, tool_call_layers.json"
    detects = "directory containing meta.json and conversation_round_*.json"

    def matches(self, doc: Any, uri: str) -> bool:
        return False                      # directory format: selected by expand_inputs, not by document shape


FORMAT = _AcrDir()


def read_acr_dir(uri: str) -> Iterator[dict]:
    """The trajectory of one AutoCodeRover instance folder, or a reject saying what is wrong with it."""
    try:
        folder = _Folder(uri)
        yield _parse(folder)
    except _Bad as bad:
        yield bad.reject
    except (OSError, ValueError) as exc:
        yield make_reject("read", "unreadable", f"{type(exc).__name__}: {exc}", uri=uri)
    except (KeyError, TypeError, AttributeError, IndexError) as exc:
        yield make_reject("parse", f"malformed:{NAME}", f"{type(exc).__name__}: {exc}", uri=uri)


def _parse(folder: _Folder) -> dict:
    meta = folder.json("meta.json")
    task = meta.get("task_info") or {}
    rounds = [folder.json(n) for n in _numbered(folder.names, "conversation_round_")]
    layers = folder.json("tool_call_layers.json") if "tool_call_layers.json" in folder.names else []
    final = rounds[-1] if rounds else []
    steps: list[dict] = []
    for r in range(1, len(rounds)):
        added = final[len(rounds[r - 1]): len(rounds[r])]
        calls = layers[r - 1] if r - 1 < len(layers) else []
        for k, raw in enumerate(chat_steps(added, len(rounds[r - 1]))):
            steps.extend(_call_steps(raw, calls if k == 0 else []))
    for name in _numbered(folder.names, "debug_agent_write_patch_"):
        for raw in chat_steps(folder.json(name))[-1:]:
            steps.append(make_step(0, tool_name="write_patch", action_text=raw["thought"],
                                   observation="\n".join(raw["obs"]), source_index=raw["source_index"]))
    patches = _numbered(folder.names, "extracted_patch_")
    cost = folder.json("cost.json") if "cost.json" in folder.names else {}
    status = folder.json("extract_status.json") if "extract_status.json" in folder.names else {}
    statuses = (status.get("extract_status") or []) if isinstance(status, dict) else []
    instance_id = str(task.get("instance_id") or meta.get("task_id") or "")
    if not instance_id:
        raise _Bad(make_reject("parse", "missing_instance_id", "meta.json has no task_info.instance_id / task_id",
                               uri=f"{folder.uri}/meta.json"))
    problem = folder.text("problem_statement.txt") or text(task.get("problem_statement"))
    final_patch = folder.text(patches[-1]) if patches else ""
    src = DocSource(folder.uri, "", folder.sha256())
    return make_trajectory(
        src, FORMAT, instance_id=instance_id, steps=steps, repo=str(task.get("repo") or "").lower(),
        base_commit=str(task.get("base_commit") or ""), model_name=str(cost.get("model") or ""),
        problem_statement=problem, final_patch=final_patch, exit_status=str(statuses[-1]) if statuses else "",
        extra={"total_cost": cost.get("total_cost"), "n_rounds": len(rounds),
               "n_tool_calls": sum(len(layer) for layer in layers)})


class AcrEvalReport(Format):
    """``<run>/new_eval_results/report.json``: SWE-bench id lists whose labels apply to the whole ``<run>``."""
    name = "acr-eval-report"
    harness = "autocoderover"
    kind = "labels"
    description = "AutoCodeRover new_eval_results/report.json: {generated, applied, resolved, ...} id lists"
    detects = "file new_eval_results/report.json holding a 'resolved' id list"

    def matches(self, doc: Any, uri: str) -> bool:
        return (uri.endswith("new_eval_results/report.json") and isinstance(doc, dict)
                and isinstance(doc.get("resolved"), list))

    def parse(self, doc: dict, src: DocSource) -> Iterator[dict]:
        run_root = posixpath.dirname(posixpath.dirname(src.uri))
        resolved = {str(i) for i in doc["resolved"]}
        evaluated = set(resolved)
        for key in ("applied", "generated", "no_apply", "with_logs"):
            if isinstance(doc.get(key), list):
                evaluated.update(str(i) for i in doc[key])
        for instance_id in sorted(evaluated):
            yield make_label(src, "result.json", instance_id=instance_id, resolved=instance_id in resolved,
                             run_root=run_root)
