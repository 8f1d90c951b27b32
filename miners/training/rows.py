"""The records of ``swemine run sft``: one explicit schema each, and the plain-Python stage functions that make them.

``sft`` rows (:data:`SFT_SCHEMA`): ``messages`` and ``tools`` are JSON text (OpenAI chat messages; JSON-Schema
function definitions), ``loss_mask`` has one flag per message (true: a policy turn the loss is taken on),
``format`` is ``chat`` (what ``swemine launch`` checks). ``n_tokens`` is the length of the conversation rendered
by the ``--tokenizer``'s chat template (its plain encoding when it has none), null without a tokenizer; ``--max-tokens``
then compares ``ceil(n_chars / 4)``. ``critic`` rows (:data:`CRITIC_SCHEMA`): see :mod:`swemine.miners.training.critic`.
"""
from __future__ import annotations

import collections
import json
import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import pyarrow as pa

from swemine.corpora.records import PROVENANCE_FIELDS, Filtered, content_id, dumps_extra, make_filtered
from swemine.miners.training import native as nat
from swemine.miners.training import render as rd
from swemine.miners.training.critic import CriticConfig, critic_prompt, critic_targets
from swemine.miners.training.select import STAGE as SELECT_STAGE
from swemine.miners.training.select import SelectConfig, check_trajectory
from swemine.miners.training.tools import tool_definitions

RENDER_STAGE = "sft_render"

#: The fields both records open with: which run of which instance, by which harness and model, resolved or not.
RUN_FIELDS = [
    pa.field("record_id", pa.string(), nullable=False),
    pa.field("trajectory_id", pa.string()),
    pa.field("instance_id", pa.string()),
    pa.field("harness", pa.string()),
    pa.field("model_name", pa.string()),
    pa.field("resolved", pa.bool_()),
]

SFT_SCHEMA = pa.schema([
    *RUN_FIELDS,
    pa.field("style", pa.string()),
    pa.field("format", pa.string()),
    pa.field("messages", pa.large_string()),
    pa.field("tools", pa.string()),
    pa.field("tools_inferred", pa.bool_()),
    pa.field("loss_mask", pa.list_(pa.bool_())),
    pa.field("n_messages", pa.int32()),
    pa.field("n_tool_calls", pa.int32()),
    pa.field("n_placeholder_results", pa.int32()),
    pa.field("n_steps", pa.int32()),
    pa.field("n_chars", pa.int64()),
    pa.field("n_tokens", pa.int64()),
    pa.field("tokenizer", pa.string()),
    pa.field("extra_json", pa.string()),
    *PROVENANCE_FIELDS,
], metadata={"swemine.record_type": "SftRecord"})

CRITIC_SCHEMA = pa.schema([
    *RUN_FIELDS,
    pa.field("prompt", pa.large_string()),
    pa.field("rewards", pa.list_(pa.float64())),
    pa.field("returns", pa.list_(pa.float64())),
    pa.field("reward_sources", pa.list_(pa.list_(pa.string()))),
    pa.field("gamma", pa.float64()),
    pa.field("terminal_reward", pa.float64()),
    pa.field("has_gold", pa.bool_()),
    *PROVENANCE_FIELDS,
], metadata={"swemine.record_type": "CriticRecord"})

_PROV = ("source_uri", "source_locator", "source_sha256", "config_hash")
#: Carried from the trajectory until the per-instance selection has read it, then removed.
TRANSIENT = "steps"


@dataclass(frozen=True)
class RenderConfig:
    style: str = "tool_calls"
    inputs: tuple[str, ...] = ()        # the run's --input paths, to find a native conversation's log again
    tokenizer: str = ""
    max_tokens: int = 0


def run_values(traj: dict) -> dict:
    """The :data:`RUN_FIELDS` (but the record id) and the provenance of ``traj``, for a record made from it."""
    return {"trajectory_id": traj.get("trajectory_id"), "instance_id": traj.get("instance_id"),
            "harness": traj.get("harness"), "model_name": traj.get("model_name"), "resolved": traj.get("resolved"),
            **{k: traj.get(k) or "" for k in _PROV}}


def load_tokenizer(path: str):
    """The local tokenizer ``path`` names (never fetched)."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(path, local_files_only=True)


def count_tokens(tokenizer, messages: list[dict], tools: list[dict]) -> int:
    """Tokens of the conversation as the tokenizer's chat template renders it (plain encoding without one)."""
    if getattr(tokenizer, "chat_template", None):
        text = tokenizer.apply_chat_template(messages, tools=tools or None, tokenize=False)
    else:
        text = "\n".join(m.get("content") or "" for m in messages)
    return len(tokenizer(text, add_special_tokens=False)["input_ids"])


def conversation(traj: dict, cfg: RenderConfig) -> tuple[list[dict], list[dict], bool, rd.Conversation]:
    """``(messages, tools, tools_inferred, the tool_calls rendering)`` of ``traj`` in ``cfg.style``; raises
    :class:`~swemine.miners.training.native.NoConversation` when the style needs a log that is not there."""
    base = rd.render_steps(traj)
    messages, calls = base.messages, base.calls
    if cfg.style == "native" or (cfg.style == "xml" and traj.get("harness") == "swe-agent"):
        try:
            messages = nat.native_conversation(traj, list(cfg.inputs), shown_last=cfg.style == "xml")
            calls = rd.native_calls(messages)
        except nat.NoConversation:
            if cfg.style == "native":
                raise
    tools, inferred = tool_definitions(traj.get("harness") or "", calls)
    if cfg.style == "xml":
        messages = rd.to_xml(messages, tools)
    return messages, tools, inferred, base


def render_fn(cfg: RenderConfig) -> Callable[[dict], Iterator[dict | Filtered]]:
    """Stage function: a selected trajectory → its SFT row (with the transient ``steps``), or ``Filtered``
    (``no_native_conversation`` and the other reasons of :class:`NoConversation`, ``too_long``)."""
    tokenizer = load_tokenizer(cfg.tokenizer) if cfg.tokenizer else None

    def fn(traj: dict) -> Iterator[dict | Filtered]:
        try:
            messages, tools, inferred, base = conversation(traj, cfg)
        except nat.NoConversation as exc:
            yield make_filtered(RENDER_STAGE, exc.args[0], traj, "trajectory", {"style": cfg.style})
            return
        mask = [m["role"] == "assistant" and not m.get("is_demo") for m in messages]
        messages = [{k: v for k, v in m.items() if k != "is_demo"} for m in messages]
        text = json.dumps(messages, ensure_ascii=False, sort_keys=True)
        n_chars = sum(len(m.get("content") or "") for m in messages)
        n_tokens = count_tokens(tokenizer, messages, tools) if tokenizer is not None else None
        length = n_tokens if n_tokens is not None else math.ceil(n_chars / 4)
        if cfg.max_tokens and length > cfg.max_tokens:
            yield make_filtered(RENDER_STAGE, "too_long", traj, "trajectory",
                                {"length": length, "max_tokens": cfg.max_tokens, "counted": "tokens" if
                                 n_tokens is not None else "chars/4"})
            return
        yield {"record_id": content_id("sft", traj["record_id"], cfg.style), **run_values(traj), "style": cfg.style,
               "format": "chat", "messages": text, "tools": json.dumps(tools, ensure_ascii=False, sort_keys=True),
               "tools_inferred": inferred, "loss_mask": mask, "n_messages": len(messages),
               "n_tool_calls": sum(len(m.get("tool_calls") or ()) for m in messages),
               "n_placeholder_results": base.n_placeholder_results if cfg.style == "tool_calls" else 0,
               "n_steps": len(traj.get("steps") or []), "n_chars": n_chars, "n_tokens": n_tokens,
               "tokenizer": cfg.tokenizer, "extra_json": dumps_extra({"trajectory_record_id": traj["record_id"]}),
               TRANSIENT: traj.get("steps") or []}

    return fn


def recount_fn(cfg: RenderConfig) -> Callable[[dict], list[dict]]:
    """Stage function: a row the secrets filter scrubbed (``extra_json.scrubbed``) with ``n_chars`` and
    ``n_tokens`` counted again on its scrubbed messages (a name found in one turn is replaced in every turn, so
    the row can differ from the trajectory it was rendered from); other rows unchanged."""
    tokenizer = load_tokenizer(cfg.tokenizer) if cfg.tokenizer else None

    def fn(row: dict) -> list[dict]:
        if "scrubbed" not in json.loads(row.get("extra_json") or "{}"):
            return [row]
        messages, tools = json.loads(row["messages"]), json.loads(row["tools"])
        n_tokens = count_tokens(tokenizer, messages, tools) if tokenizer is not None else None
        return [{**row, "n_chars": sum(len(m.get("content") or "") for m in messages), "n_tokens": n_tokens}]
    return fn


def select_fn(cfg: SelectConfig) -> Callable[[dict], list[dict | Filtered]]:
    """Stage function: ``{"trajectory", "gold_patch"}`` → the trajectory, or ``Filtered`` with its reason."""
    def fn(item: dict) -> list[dict | Filtered]:
        traj = item["trajectory"]
        hit = check_trajectory(traj, cfg)
        return [traj] if hit is None else [make_filtered(SELECT_STAGE, hit[0], traj, "trajectory", hit[1])]
    return fn


def critic_fn(cfg: CriticConfig) -> Callable[[dict], list[dict]]:
    """Stage function: ``{"trajectory", "gold_patch"}`` → its critic row (every run, resolved or not)."""
    def fn(item: dict) -> list[dict]:
        traj = item["trajectory"]
        gold = item.get("gold_patch") or json.loads(traj.get("extra_json") or "{}").get("gold_patch") or ""
        targets = critic_targets(traj, gold, cfg)
        return [{"record_id": content_id("critic", traj["record_id"], cfg.gamma, cfg.terminal_reward),
                 **run_values(traj), "prompt": critic_prompt(traj), **targets, "gamma": cfg.gamma,
                 "terminal_reward": cfg.terminal_reward, "has_gold": bool(gold)}]
    return fn


def without_steps(row: dict) -> dict:
    """The SFT row without the transient trajectory steps."""
    return {k: v for k, v in row.items() if k != TRANSIENT}


def sft_summary(sft_rows: Iterable[dict], filtered_rows: Iterable[dict], critic_rows: Iterable[dict]) -> dict:
    """A run's ``sft`` manifest entry: rows, resolved share and tokens per row by harness, critic rows by label,
    and every drop by reason (with the harness of the dropped record)."""
    harness: dict[str, dict] = {}
    for row in sft_rows:
        h = harness.setdefault(row["harness"] or "", {"rows": 0, "resolved": 0, "tokens": 0, "chars": 0,
                                                      "counted": 0, "tool_calls": 0, "placeholders": 0})
        h["rows"] += 1
        h["resolved"] += row["resolved"] is True
        h["chars"] += row["n_chars"] or 0
        h["tool_calls"] += row["n_tool_calls"] or 0
        h["placeholders"] += row["n_placeholder_results"] or 0
        if row["n_tokens"] is not None:
            h["tokens"] += row["n_tokens"]
            h["counted"] += 1
    drops: collections.Counter = collections.Counter()
    drops_by_harness: dict[str, collections.Counter] = {}
    for row in filtered_rows:
        drops[row["reason"]] += 1
        try:
            name = json.loads(row["record_json"] or "{}").get("harness") or ""
        except ValueError:
            name = ""
        drops_by_harness.setdefault(name, collections.Counter())[row["reason"]] += 1
    critic = collections.Counter(str(r["resolved"]).lower() for r in critic_rows)
    per = {}
    for name, h in sorted(harness.items()):
        per[name] = {"rows": h["rows"], "resolved_share": round(h["resolved"] / h["rows"], 4),
                     "chars_per_row": round(h["chars"] / h["rows"], 1),
                     "tokens_per_row": round(h["tokens"] / h["counted"], 1) if h["counted"] else None,
                     "tool_calls": h["tool_calls"], "placeholder_results": h["placeholders"]}
    return {"rows": sum(h["rows"] for h in harness.values()), "by_harness": per, "drops": dict(sorted(drops.items())),
            "drops_by_harness": {k: dict(sorted(v.items())) for k, v in sorted(drops_by_harness.items())},
            "critic_rows": dict(sorted(critic.items()))}
