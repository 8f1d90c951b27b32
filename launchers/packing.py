"""Pack tokenized documents into fixed-length rows without attention across documents.

A packed row holds several documents back to back; ``position_ids`` restart at 0 at every document start
(and for the trailing padding, which forms its own pseudo-document). Two ways keep attention inside a document:

- ``varlen``: pass ``position_ids``; transformers' sdpa/eager mask builder derives the document boundaries
  from the resets; varlen kernels (``flash_attention_2``, ``torch_varlen``) also get ``cu_seq_lens_*`` over the
  flattened batch (transformers infers them from position ids only for a batch of ONE row: with more rows,
  flash attention would silently attend across documents);
- ``block``: pass an explicit block-diagonal causal 4D mask built from the same resets (sdpa / eager on any
  transformers version; O(L²) memory, so for modest contexts).

The first token of each document gets label ``-100``: predicting it would need the previous document.
Documents with per-token ``loss_weights`` (a raw-FIM context weight between 0 and 1) keep them, aligned.
"""
from __future__ import annotations

import dataclasses

from swemine.launchers.data import IGNORE_INDEX

PACKING_MODES = ("varlen", "block")


@dataclasses.dataclass
class PackStats:
    """Documents in, rows out, tokens truncated from overlong documents, and the share of real tokens."""
    docs: int = 0
    rows: int = 0
    truncated_docs: int = 0
    truncated_tokens: int = 0
    real_tokens: int = 0
    sum_sq_tokens: int = 0
    seq_len: int = 0

    @property
    def fill(self) -> float:
        """Share of the packed positions that hold document tokens (the rest is padding)."""
        return self.real_tokens / (self.rows * self.seq_len) if self.rows else 0.0

    @property
    def attention_context(self) -> float:
        """Token-weighted mean document length Σn²/Σn: the context length each token's attention really
        spans (with document masking), for the FLOPs-per-token attention term."""
        return self.sum_sq_tokens / self.real_tokens if self.real_tokens else 0.0


def next_fit(lengths: list[int], seq_len: int) -> list[list[int]]:
    """Group document indices, in order, into bins of at most ``seq_len`` tokens (next-fit, deterministic)."""
    bins, current, used = [], [], 0
    for i, n in enumerate(lengths):
        n = min(n, seq_len)
        if current and used + n > seq_len:
            bins.append(current)
            current, used = [], 0
        current.append(i)
        used += n
    if current:
        bins.append(current)
    return bins


def build_row(docs: list[tuple], seq_len: int, pad_id: int) -> dict:
    """One packed row from ``(input_ids, labels[, loss_weights])`` documents that fit in ``seq_len`` (after
    truncation); ``loss_weights`` is in the row when the documents carry weights."""
    ids, labels, pos, weights = [], [], [], []
    for doc_ids, doc_labels, *doc_weights in docs:
        doc_ids, doc_labels = doc_ids[:seq_len], doc_labels[:seq_len]
        ids.extend(doc_ids)
        labels.append(IGNORE_INDEX)
        labels.extend(doc_labels[1:])
        pos.extend(range(len(doc_ids)))
        if doc_weights:
            weights.append(0.0)
            weights.extend(doc_weights[0][1:seq_len])
    pad = seq_len - len(ids)
    if pad < 0:
        raise ValueError(f"documents of {len(ids)} tokens do not fit in {seq_len}")
    ids.extend([pad_id] * pad)
    labels.extend([IGNORE_INDEX] * pad)
    pos.extend(range(pad))
    row = {"input_ids": ids, "labels": labels, "position_ids": pos}
    if len(docs[0]) > 2:
        row["loss_weights"] = weights + [0.0] * pad
    return row


def pack_batch(batch: dict, seq_len: int, pad_id: int) -> dict:
    """``Dataset.map(batched=True)`` body: documents (``input_ids``/``labels``[/``loss_weights``]) → packed
    rows."""
    lengths = [len(x) for x in batch["input_ids"]]
    columns = [c for c in ("input_ids", "labels", "loss_weights") if c in batch]
    out = {c: [] for c in columns}
    out.update({"position_ids": [], "n_docs": [], "n_real": [], "n_sq": [], "n_truncated": [],
                "n_truncated_docs": []})
    for members in next_fit(lengths, seq_len):
        row = build_row([tuple(batch[c][i] for c in columns) for i in members], seq_len, pad_id)
        for key in (*columns, "position_ids"):
            out[key].append(row[key])
        out["n_docs"].append(len(members))
        out["n_real"].append(sum(min(lengths[i], seq_len) for i in members))
        out["n_sq"].append(sum(min(lengths[i], seq_len) ** 2 for i in members))
        out["n_truncated"].append(sum(max(0, lengths[i] - seq_len) for i in members))
        out["n_truncated_docs"].append(sum(lengths[i] > seq_len for i in members))
    return out


def pack_dataset(docs, seq_len: int, pad_id: int, batch_size: int = 2048, num_proc: int | None = None):
    """Pack a dataset of documents into rows of ``seq_len``; return ``(rows, PackStats)``.

    Documents longer than ``seq_len`` are truncated (counted in the stats). Packing runs per map batch of
    ``batch_size`` documents, so at most one partly filled row per batch.
    """
    packed = docs.map(pack_batch, fn_kwargs={"seq_len": seq_len, "pad_id": pad_id}, batched=True,
                      batch_size=batch_size, remove_columns=docs.column_names, num_proc=num_proc, desc="pack")
    counters = ["n_docs", "n_real", "n_sq", "n_truncated", "n_truncated_docs"]
    stats = PackStats(docs=sum(packed["n_docs"]), rows=len(packed), seq_len=seq_len,
                      truncated_docs=sum(packed["n_truncated_docs"]), truncated_tokens=sum(packed["n_truncated"]),
                      real_tokens=sum(packed["n_real"]), sum_sq_tokens=sum(packed["n_sq"]))
    return packed.remove_columns(counters), stats


def document_ids(position_ids):
    """Per-token document index (0, 1, ...) of a batch of packed rows, from the position resets."""
    return (position_ids == 0).long().cumsum(-1)


def block_causal_mask(position_ids):
    """``(B, 1, L, L)`` bool mask: query ``q`` may attend key ``k`` iff ``k <= q`` in the same document."""
    import torch

    doc = document_ids(position_ids)
    n = position_ids.shape[-1]
    causal = torch.ones(n, n, dtype=torch.bool, device=position_ids.device).tril()
    same = doc[:, :, None] == doc[:, None, :]
    return (same & causal)[:, None, :, :]


class PackedCollator:
    """Stack packed rows into tensors; ``block`` mode adds the 4D mask (bool for sdpa, additive for eager),
    ``cu_seqlens`` adds the varlen-kernel keywords of :func:`swemine.launchers.attention.varlen_kwargs`."""

    def __init__(self, mode: str = "varlen", additive_mask: bool = False, cu_seqlens: bool = False):
        if mode not in PACKING_MODES:
            raise ValueError(f"packing mode must be one of {PACKING_MODES}, not {mode!r}")
        if cu_seqlens and mode != "varlen":
            raise ValueError("cu_seqlens keywords go with the varlen packing mode")
        self.mode, self.additive_mask, self.cu_seqlens = mode, additive_mask, cu_seqlens

    def __call__(self, rows: list[dict]) -> dict:
        import torch

        batch = {k: torch.tensor([r[k] for r in rows], dtype=torch.long)
                 for k in ("input_ids", "labels", "position_ids")}
        if "loss_weights" in rows[0]:
            batch["loss_weights"] = torch.tensor([r["loss_weights"] for r in rows], dtype=torch.float32)
        if self.mode == "block":
            mask = block_causal_mask(batch["position_ids"])
            if self.additive_mask:
                mask = torch.zeros(mask.shape, dtype=torch.float32).masked_fill(~mask, torch.finfo(torch.float32).min)
            batch["attention_mask"] = mask
        if self.cu_seqlens:
            from swemine.launchers.attention import varlen_kwargs
            batch.update(varlen_kwargs(batch["position_ids"]))
        return batch


VARLEN_KERNELS = ("flash_attention_2", "flash_attention_3", "torch_varlen")


def default_mode(attn_implementation: str) -> str:
    """``varlen`` for varlen kernels and where transformers detects packed rows from position ids."""
    if attn_implementation in VARLEN_KERNELS:
        return "varlen"
    try:
        from transformers.masking_utils import find_packed_sequence_indices  # noqa: F401  (transformers >= 4.53)
    except ImportError:
        return "block"
    return "varlen"
