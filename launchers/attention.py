"""Document-masked attention for packed rows on PyTorch's own flash kernels (``torch.nn.attention.varlen``).

Registered with transformers as ``attn_implementation="torch_varlen"``: a standard CUDA PyTorch image gets
varlen flash attention without the ``flash_attn`` package. The model call carries ``cu_seq_lens_q/k`` and
``max_length_q/k`` (from :func:`varlen_kwargs`), which transformers forwards to every attention layer; the
same keywords drive its ``flash_attention_2`` path for batches of several packed rows.

This module needs only torch and transformers (the GPU benchmark loads it by path).
"""
from __future__ import annotations

NAME = "torch_varlen"


def varlen_kwargs(position_ids) -> dict:
    """Cumulative document offsets over the flattened batch (a document starts where its position is 0).

    ``max_length`` is the row length, an upper bound that keeps the call shape-stable across steps.
    """
    import torch

    flat = position_ids.reshape(-1)
    starts = torch.nonzero(flat == 0).flatten()
    cu = torch.cat([starts, torch.tensor([flat.numel()], device=flat.device)]).to(torch.int32)
    n = int(position_ids.shape[-1])
    return {"cu_seq_lens_q": cu, "cu_seq_lens_k": cu, "max_length_q": n, "max_length_k": n}


def torch_varlen_attention(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
    """A transformers attention function: causal attention within each ``cu_seq_lens_q`` segment.

    ``query`` is ``(B, Hq, L, D)``, ``key``/``value`` ``(B, Hkv, L, D)``; returns ``((B, L, Hq, D), None)``.
    """
    from torch.nn.attention.varlen import varlen_attn

    if dropout:
        raise ValueError("torch_varlen attention has no dropout")
    b, hq, n, d = query.shape
    hk = key.shape[1]
    q = query.transpose(1, 2).reshape(b * n, hq, d)
    k = key.transpose(1, 2).reshape(b * n, hk, d)
    v = value.transpose(1, 2).reshape(b * n, hk, d)
    cu, max_len = kwargs["cu_seq_lens_q"], kwargs["max_length_q"]
    out = varlen_attn(q, k, v, cu, cu, max_len, max_len, scale=scaling, window_size=(-1, 0), enable_gqa=hk != hq)
    return out.reshape(b, n, hq, d), None


def reference_attention(query, key, value, position_ids):
    """Masked fp32 SDPA, causal within documents: the ground truth for :func:`self_check`. ``(B, L, Hq, D)``."""
    import torch

    doc = (position_ids == 0).cumsum(-1)
    n = query.shape[2]
    mask = (doc[:, :, None] == doc[:, None, :]) & torch.ones(n, n, dtype=torch.bool, device=query.device).tril()
    rep = query.shape[1] // key.shape[1]
    key, value = key.repeat_interleave(rep, dim=1), value.repeat_interleave(rep, dim=1)
    out = torch.nn.functional.scaled_dot_product_attention(query.float(), key.float(), value.float(),
                                                           attn_mask=mask[:, None])
    return out.transpose(1, 2)


def self_check(device) -> str:
    """``""`` when torch varlen attention runs forward and backward on ``device`` and matches the masked
    reference on a packed GQA batch in bf16; otherwise the reason not to use it."""
    import torch

    try:
        from torch.nn.attention.varlen import varlen_attn  # noqa: F401
    except ImportError as e:
        return f"unavailable in torch {torch.__version__} ({e})"
    gen = torch.Generator().manual_seed(0)
    pos = torch.cat([torch.arange(n) for n in (100, 37, 200, 175)]).view(2, 256).to(device)
    q, k, v = (torch.randn(2, h, 256, 64, generator=gen).to(device, torch.bfloat16).requires_grad_()
               for h in (8, 2, 2))
    ref = reference_attention(q, k, v, pos)
    ref_grads = torch.autograd.grad(ref.sum(), (q, k, v))
    try:
        out, _ = torch_varlen_attention(None, q, k, v, None, scaling=64 ** -0.5, **varlen_kwargs(pos))
        grads = torch.autograd.grad(out.float().sum(), (q, k, v))
    except Exception as e:  # noqa: BLE001 - any failure means: do not use this path
        return f"{type(e).__name__}: {str(e)[:200]}"
    if not torch.allclose(out.float(), ref, atol=3e-2, rtol=3e-2):
        return "forward differs from the masked reference"
    if not all(torch.allclose(g.float(), r.float(), atol=5e-2, rtol=5e-2) for g, r in zip(grads, ref_grads)):
        return "backward differs from the masked reference"
    return ""


def register() -> str:
    """Register :func:`torch_varlen_attention` with transformers under :data:`NAME`; return the name."""
    from transformers import AttentionInterface

    AttentionInterface.register(NAME, torch_varlen_attention)
    return NAME
