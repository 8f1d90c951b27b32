"""Read mid-training shards, tokenize them with the model's tokenizer and mix the parts with seeded ratios.

Row shapes (the contracts of the FIM, localization and diagnosis pipelines):

- raw FIM rows: string columns ``prefix``, ``middle``, ``suffix`` (plus ``format`` ``psm``/``spm`` and
  ``model_family``); rendered here with the *target model's* FIM special tokens (methods.md §4.11);
- chat rows: ``messages`` = list of ``{role, content}``; rendered with the tokenizer's chat template, loss on
  assistant turns only (labels ``-100`` elsewhere).

Every row that cannot be encoded is counted under a reason (:class:`EncodeStats`), never dropped silently.
"""
from __future__ import annotations

import collections
import dataclasses
import glob
import logging
import os
from collections.abc import Iterable

from swemine.miners.fim.formats import FAMILIES, FimTokens

log = logging.getLogger("swemine.launchers.data")

IGNORE_INDEX = -100
REJECT_DIRS = ("rejects", "filtered")   # runner outputs that are not training data
FORMATS = ("chat", "psm", "spm")
HINTS = {"fim_fields_missing": "no prefix/middle/suffix in these rows (a chat-format run? use --format chat)",
         "chat_messages_missing": "no messages in these rows (a raw-FIM run? use --format psm or spm)"}


#: The miner's table of FIM sentinels per model family (one source of truth for mining and training).
FIM_TOKENS: dict[str, FimTokens] = FAMILIES
FAMILY_ALIASES = {"qwen": "qwen2.5-coder", "qwen2": "qwen2.5-coder", "qwen2.5": "qwen2.5-coder",
                  "qwen3": "qwen2.5-coder", "starcoder2": "starcoder", "deepseek": "deepseek-coder"}


class EncodeError(ValueError):
    """A row that cannot become a training document; ``args[0]`` is the reason counted in the stats."""


class MissingFimTokens(ValueError):
    """The tokenizer lacks the FIM special tokens that raw-FIM training needs."""


def _is_single_token(tokenizer, token: str) -> bool:
    """``token`` is in the vocabulary AND text containing it encodes it as that one id (not as pieces)."""
    tok_id = tokenizer.convert_tokens_to_ids(token)
    if tok_id is None or tok_id == tokenizer.unk_token_id or tokenizer.convert_ids_to_tokens(tok_id) != token:
        return False
    return tokenizer(f"a{token}b", add_special_tokens=False)["input_ids"].count(tok_id) == 1


def fim_tokens_for(tokenizer, family: str | None = None) -> FimTokens:
    """The FIM tokens of ``family`` (or of the first family whose tokens the tokenizer has); raise when missing.

    Raises :class:`MissingFimTokens` naming the missing strings, so a raw-FIM run never trains on FIM
    markers that the tokenizer would split into ordinary text pieces.
    """
    if family:
        key = FAMILY_ALIASES.get(family.lower(), family.lower())
        if key not in FIM_TOKENS:
            raise MissingFimTokens(f"unknown FIM model family {family!r}; known: {sorted(FIM_TOKENS)}")
        candidates = [FIM_TOKENS[key]]
    else:
        candidates = list(FIM_TOKENS.values())
    for tokens in candidates:
        if all(_is_single_token(tokenizer, t) for t in tokens.required()):
            return tokens
    name = getattr(tokenizer, "name_or_path", "") or type(tokenizer).__name__
    wanted = "; ".join(f"{t.family}: {' '.join(t.required())}" for t in candidates)
    missing = [t for t in candidates[0].required() if not _is_single_token(tokenizer, t)]
    raise MissingFimTokens(
        f"tokenizer {name!r} has no FIM special tokens (looked for {wanted}; missing e.g. {missing}). "
        "Raw FIM (--format psm/spm) needs a model trained with FIM tokens; use --format chat for this model.")


def _fim_layout(fmt: str, tokens: FimTokens, pre: list, mid: list, suf: list, ids: dict) -> list:
    """PSM ``P pre S suf M mid``; SPM ``P S suf M pre mid`` (methods.md §4.11), over token ids; ``mid`` ends
    with EOS and ``ids`` maps the sentinel strings to their ids."""
    p, s, m = ids[tokens.prefix], ids[tokens.suffix], ids[tokens.middle]
    return [p, *pre, s, *suf, m, *mid] if fmt == "psm" else [p, s, *suf, m, *pre, *mid]


def encode_fim(row: dict, tokenizer, fmt: str, tokens: FimTokens, max_len: int | None = None) -> dict:
    """Token ids of one raw-FIM row; the loss covers the whole document (pre-training style).

    The sentinels are special tokens, so prefix, middle and suffix tokenize independently, exactly as the
    rendered string would. A document longer than ``max_len`` keeps its middle whole and loses the far end
    of its prefix and suffix (``trimmed``); one whose middle alone does not fit is rejected.
    """
    if not all(isinstance(row.get(k), str) for k in ("prefix", "middle", "suffix")):
        raise EncodeError("fim_fields_missing")
    if not row["middle"].strip():
        raise EncodeError("fim_empty_middle")
    pre, mid, suf = (tokenizer(row[k], add_special_tokens=False)["input_ids"] for k in ("prefix", "middle", "suffix"))
    eos = [tokenizer.eos_token_id] if tokenizer.eos_token_id is not None else []
    mid = mid + eos
    trimmed = False
    if max_len is not None and len(pre) + len(mid) + len(suf) + 3 > max_len:
        budget = max_len - 3 - len(mid)
        if budget < 0:
            raise EncodeError("fim_middle_too_long")
        keep_pre = min(len(pre), max(budget // 2, budget - len(suf)))
        pre, suf, trimmed = pre[len(pre) - keep_pre:], suf[:budget - keep_pre], True
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in tokens.required()}
    doc = _fim_layout(fmt, tokens, pre, mid, suf, ids)
    return {"input_ids": doc, "labels": list(doc), "trimmed": trimmed}


def _render(tokenizer, messages, add_generation_prompt=False) -> str:
    return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=add_generation_prompt)


def encode_chat(row: dict, tokenizer, max_len: int | None = None) -> dict:
    """Token ids of one chat row with labels only on assistant turns.

    Assistant spans are found by rendering the conversation prefix before each assistant message (with the
    generation prompt) and after it; the template must be prefix-stable, which is checked, not assumed.
    A conversation longer than ``max_len`` is rejected (cutting it would cut the answer).
    """
    messages = row.get("messages")
    if not messages or not all(isinstance(m, dict) and m.get("role") and isinstance(m.get("content"), str)
                                for m in messages):
        raise EncodeError("chat_messages_missing")
    messages = [{"role": m["role"], "content": m["content"]} for m in messages]
    if not any(m["role"] == "assistant" for m in messages):
        raise EncodeError("chat_no_assistant_turn")
    full = _render(tokenizer, messages)
    spans = []
    for i, m in enumerate(messages):
        if m["role"] != "assistant":
            continue
        before = _render(tokenizer, messages[:i], add_generation_prompt=True) if i else ""
        upto = _render(tokenizer, messages[: i + 1])
        if not upto.startswith(before) or not full.startswith(upto):
            raise EncodeError("chat_template_not_prefix_stable")
        spans.append((len(before), len(upto)))
    enc = tokenizer(full, add_special_tokens=False, return_offsets_mapping=True)
    labels = [IGNORE_INDEX] * len(enc["input_ids"])
    for j, (tok_id, (start, _end)) in enumerate(zip(enc["input_ids"], enc["offset_mapping"])):
        if any(a <= start < b for a, b in spans):
            labels[j] = tok_id
    if all(label == IGNORE_INDEX for label in labels):
        raise EncodeError("chat_no_assistant_tokens")
    if max_len is not None and len(labels) > max_len:
        raise EncodeError("chat_too_long")
    return {"input_ids": enc["input_ids"], "labels": labels, "trimmed": False}


@dataclasses.dataclass
class EncodeStats:
    """Rows in, documents out (``trimmed`` of them cut to fit), rows not encoded by reason, for one part."""
    rows: int = 0
    docs: int = 0
    tokens: int = 0
    trimmed: int = 0
    rejected: dict = dataclasses.field(default_factory=dict)


def make_encoder(tokenizer, fmt: str, kind: str, fim_family: str | None = None, max_len: int | None = None):
    """The row encoder of one mixture part: ``kind`` ``fim`` uses ``fmt``; other parts are always chat.
    Documents are made to fit ``max_len`` tokens (the packed row length) or rejected."""
    if fmt not in FORMATS:
        raise ValueError(f"--format must be one of {FORMATS}, not {fmt!r}")
    if kind == "fim" and fmt in ("psm", "spm"):
        tokens = fim_tokens_for(tokenizer, fim_family)
        return lambda row: encode_fim(row, tokenizer, fmt, tokens, max_len)
    if not getattr(tokenizer, "chat_template", None):
        raise ValueError(f"tokenizer {getattr(tokenizer, 'name_or_path', '')!r} has no chat template; "
                         "chat rows (and --format chat) need one")
    return lambda row: encode_chat(row, tokenizer, max_len)


def encode_batch(batch: dict, encoder) -> dict:
    """``Dataset.map(batched=True)`` body: ``input_ids``, ``labels``, ``length``, ``trimmed``, ``reject``
    (the reason, or "" for a document)."""
    n = len(next(iter(batch.values())))
    out = {"input_ids": [], "labels": [], "length": [], "trimmed": [], "reject": []}
    for i in range(n):
        try:
            doc = encoder({k: v[i] for k, v in batch.items()})
            reason = "" if doc["input_ids"] else "empty_document"
        except EncodeError as e:
            doc, reason = {"input_ids": [], "labels": [], "trimmed": False}, e.args[0]
        out["input_ids"].append(doc["input_ids"])
        out["labels"].append(doc["labels"])
        out["length"].append(len(doc["input_ids"]))
        out["trimmed"].append(doc["trimmed"])
        out["reject"].append(reason)
    return out


def encode_dataset(ds, encoder, num_proc: int | None = None):
    """Encode a ``datasets.Dataset``; return ``(documents, EncodeStats)`` with failures counted by reason."""
    enc = ds.map(encode_batch, fn_kwargs={"encoder": encoder}, batched=True, batch_size=256,
                 remove_columns=ds.column_names, num_proc=num_proc, desc="tokenize")
    reasons = collections.Counter(enc["reject"])
    ok = reasons.pop("", 0)
    docs = enc.filter(lambda r: r == "", input_columns="reject").remove_columns("reject")
    stats = EncodeStats(rows=len(enc), docs=ok, tokens=sum(docs["length"]), trimmed=sum(docs["trimmed"]),
                        rejected=dict(reasons))
    return docs.remove_columns("trimmed"), stats


def resolve_data_files(source: str) -> list[str] | None:
    """Parquet files of a run directory (minus rejects/filtered), an output prefix, a glob or a file.

    Returns ``None`` when ``source`` is none of these (then it is read as a Hub dataset id).
    """
    if os.path.isdir(source):
        files = []
        for path in sorted(glob.glob(os.path.join(source, "**", "*.parquet"), recursive=True)):
            top = os.path.relpath(path, source).split(os.sep)[0]
            if top not in REJECT_DIRS:
                files.append(path)
        return files
    if os.path.isfile(source):
        return [source]
    if any(c in source for c in "*?["):
        return sorted(glob.glob(source, recursive=True))
    shards = sorted(glob.glob(f"{source}-*.parquet"))
    return shards or None


def load_part(source: str, split: str = "train"):
    """A ``datasets.Dataset`` of one part: local shards by :func:`resolve_data_files`, else a Hub dataset id."""
    import datasets

    files = resolve_data_files(source)
    if files is not None:
        if not files:
            raise FileNotFoundError(f"no Parquet shards under {source!r}")
        return datasets.load_dataset("parquet", data_files=files, split="train")
    return datasets.load_dataset(source, split=split)


def parse_mix(text: str | None, parts: Iterable[str]) -> dict[str, float]:
    """``"fim=0.8,localization=0.15"`` → normalized ratios over ``parts`` (default: equal shares)."""
    parts = list(parts)
    if not text:
        return {p: 1.0 / len(parts) for p in parts}
    ratios = {}
    for item in text.split(","):
        name, _, value = item.partition("=")
        ratios[name.strip()] = float(value)
    unknown = set(ratios) - set(parts)
    if unknown:
        raise ValueError(f"--mix names parts without --data: {sorted(unknown)}")
    if any(v < 0 for v in ratios.values()) or sum(ratios.values()) <= 0:
        raise ValueError(f"--mix ratios must be >= 0 with a positive sum: {text!r}")
    total = sum(ratios.values())
    return {p: ratios.get(p, 0.0) / total for p in parts}


def mixture_counts(sizes: dict[str, int], ratios: dict[str, float], budget: int | None = None) -> dict[str, int]:
    """Documents to take from each part so the mixture follows ``ratios`` without repeating any document.

    Without ``budget`` the total is the largest one that no part runs short of; with it, ``budget`` documents
    (capped the same way).
    """
    active = {p: r for p, r in ratios.items() if r > 0}
    cap = min(sizes[p] / r for p, r in active.items())
    total = cap if budget is None else min(cap, budget)
    return {p: int(total * ratios[p] + 1e-9) if p in active else 0 for p in ratios}


def build_documents(parts: dict[str, str], tokenizer, fmt: str, mix: str | None = None, seed: int = 0,
                    budget: int | None = None, fim_family: str | None = None,
                    num_proc: int | None = None, max_len: int | None = None):
    """Read, encode and mix the parts; return ``(Dataset of input_ids/labels/length, {part: stats}, counts)``.

    ``parts`` maps a part name to its source; the part named ``fim`` follows ``fmt`` (raw or chat), the
    others (``localization``, ``diagnosis``, ...) are chat views. Selection and order are seeded.
    """
    import datasets

    ratios = parse_mix(mix, parts)
    encoded, stats = {}, {}
    for name, source in parts.items():
        encoder = make_encoder(tokenizer, fmt, "fim" if name == "fim" else "chat", fim_family, max_len)
        encoded[name], stats[name] = encode_dataset(load_part(source), encoder, num_proc)
        for reason, n in stats[name].rejected.items():
            log.warning("part %s: %d rows not encoded (%s)", name, n, reason)
    sizes = {p: len(d) for p, d in encoded.items()}
    empty = [p for p in parts if sizes[p] == 0 and ratios[p] > 0]
    if empty:
        why = "; ".join(f"{p}: {stats[p].rows} rows, not encoded: {stats[p].rejected}"
                        + "".join(f" - {HINTS[r]}" for r in stats[p].rejected if r in HINTS) for p in empty)
        raise ValueError(f"mixture parts without any encodable row: {why}")
    counts = mixture_counts(sizes, ratios, budget)
    chosen = [encoded[p].shuffle(seed=seed).select(range(n)) for p, n in counts.items() if n]
    mixed = datasets.concatenate_datasets(chosen).shuffle(seed=seed)
    return mixed, stats, counts
