"""Mid-training throughput on one NVIDIA GPU: tokens/s, MFU and peak memory of a ~0.5B Qwen2-style model.

Needs only ``torch`` and ``transformers`` (a standard CUDA PyTorch image) and nothing from the network; it
does not import swemine (it loads the dependency-free ``launchers/attention.py`` of this checkout by path for
the ``torch_varlen`` attention, and runs without it). It builds the model from a config, packs synthetic FIM-shaped documents
(``<fim_prefix> pre <fim_suffix> suf <fim_middle> mid <eos>``, log-normal lengths) into 8K rows with
position-id resets, and trains a fixed number of steps in bf16 (fp32 master weights + autocast, fused AdamW)
with attention kept inside each document:

- ``flash_attention_2`` when the ``flash_attn`` package is installed (varlen via position ids);
- ``torch_varlen``: PyTorch's own ``torch.nn.attention.varlen.varlen_attn`` (flash kernels, cu_seqlens);
- ``sdpa``: transformers builds a block-diagonal mask from the position ids (slower kernels).

``--attn auto`` takes the first that passes a numerical self-check against a masked reference.

Prints tokens/s (document tokens, padding excluded), MFU (FLOPs/token = 6·N + 12·L·H·T with T the mean
context a token attends over inside its document, against the GPU's dense bf16 peak, e.g. H100/H200 989
TFLOP/s), the ratio to a bare bf16 matmul measured in the same run (the floor), and peak memory. Without a GPU
it prints that and exits 0; ``--cpu-smoke`` runs a tiny config on CPU to check the script itself.
"""
from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import math
import pathlib
import sys
import time

import torch

PEAK_BF16_TFLOPS = (("GB200", 2500.0), ("B200", 2250.0), ("H200", 989.0), ("H100", 989.0), ("H800", 989.0),
                    ("GH200", 989.0), ("A100", 312.0), ("A800", 312.0), ("L40S", 362.0), ("L4", 121.0))
IGNORE = -100
FIM_PREFIX, FIM_SUFFIX, FIM_MIDDLE, EOS = 1, 2, 3, 0     # reserved ids of the synthetic vocabulary


def model_config(small: bool, vocab: int):
    """~0.53B parameters (hidden 1536, 16 layers, 12 heads of 128, 4 KV heads), or a tiny one for CPU."""
    from transformers import Qwen2Config

    if small:
        return Qwen2Config(vocab_size=vocab, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                           num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=4096,
                           tie_word_embeddings=True, use_cache=False)
    return Qwen2Config(vocab_size=vocab, hidden_size=1536, intermediate_size=5120, num_hidden_layers=16,
                       num_attention_heads=12, num_key_value_heads=4, max_position_embeddings=32768,
                       rope_theta=1e6, tie_word_embeddings=True, use_cache=False)


def flops_per_token(config, context: float, n_params: int) -> float:
    """6·N (matmul params: all but the input embedding, LM head included even if tied) + 12·L·H·T attention,
    with T the context each token attends over: Σn²/Σn of the packed documents (masked apart), not the row."""
    head_dim = config.hidden_size // config.num_attention_heads
    matmul = n_params if config.tie_word_embeddings else n_params - config.vocab_size * config.hidden_size
    return 6.0 * matmul + 12.0 * config.num_hidden_layers * config.num_attention_heads * head_dim * context


def fim_documents(n_tokens: int, vocab: int, mean_len: int, gen: torch.Generator):
    """Synthetic FIM-shaped documents totalling about ``n_tokens`` tokens."""
    docs, total = [], 0
    mu = math.log(mean_len) - 0.5
    while total < n_tokens:
        length = int(min(max(torch.empty(1).log_normal_(mu, 1.0, generator=gen).item(), 16), 4 * mean_len))
        body = torch.randint(4, vocab, (length - 4,), generator=gen)
        pre, suf = (length - 4) // 2, (length - 4) // 4
        doc = torch.cat([torch.tensor([FIM_PREFIX]), body[:pre], torch.tensor([FIM_SUFFIX]), body[pre:pre + suf],
                         torch.tensor([FIM_MIDDLE]), body[pre + suf:], torch.tensor([EOS])])
        docs.append(doc)
        total += len(doc)
    return docs


def pack(docs, seq_len: int):
    """Next-fit packing into rows of ``seq_len``: input ids, labels (-100 at document starts and padding),
    position ids that restart at every document (padding forms its own pseudo-document), and each row's
    document lengths."""
    rows, current, used = [], [], 0
    for doc in docs:
        doc = doc[:seq_len]
        if current and used + len(doc) > seq_len:
            rows.append(current)
            current, used = [], 0
        current.append(doc)
        used += len(doc)
    rows.append(current)
    ids, labels, pos = [], [], []
    doc_lens = [[len(d) for d in row] for row in rows]
    for row in rows:
        pad = seq_len - sum(len(d) for d in row)
        parts = row + ([torch.full((pad,), EOS)] if pad else [])
        ids.append(torch.cat(parts))
        lab = []
        for i, d in enumerate(parts):
            lab.append(torch.full((len(d),), IGNORE) if (pad and i == len(parts) - 1) else d.clone())
            lab[-1][0] = IGNORE
        labels.append(torch.cat(lab))
        pos.append(torch.cat([torch.arange(len(d)) for d in parts]))
    return torch.stack(ids), torch.stack(labels), torch.stack(pos), doc_lens


def load_attention_module():
    """``launchers/attention.py`` of this checkout, loaded by path (torch + transformers only), or ``None``."""
    path = pathlib.Path(__file__).resolve().parents[1] / "launchers" / "attention.py"
    if not path.is_file():
        return None
    spec = importlib.util.spec_from_file_location("swemine_varlen_attention", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


VARLEN = load_attention_module()


def pick_attention(requested: str, device) -> tuple[str, list[str]]:
    """The attention implementation to use and notes on the ones passed over."""
    notes = []
    if requested in ("auto", "flash_attention_2"):
        if importlib.util.find_spec("flash_attn") is not None and VARLEN:   # cu_seqlens: rows > 1 stay apart
            return "flash_attention_2", notes
        notes.append("flash_attention_2: flash_attn not installed")
    if requested in ("auto", "torch_varlen"):
        why = VARLEN.self_check(device) if VARLEN else "launchers/attention.py not found beside this script"
        if not why:
            return VARLEN.register(), notes
        notes.append(f"torch_varlen: {why}")
    if requested == "flex_attention":
        return "flex_attention", notes
    return "sdpa", notes


def bare_matmul_tflops(device, dtype, n: int, reps: int) -> float:
    """Achieved TFLOP/s of a square matmul: the floor this run's model throughput is compared with."""
    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)
    for _ in range(3):
        a @ b
    sync(device)
    t = time.perf_counter()
    for _ in range(reps):
        a @ b
    sync(device)
    return 2 * n ** 3 * reps / (time.perf_counter() - t) / 1e12


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def run(args) -> dict:
    from transformers import Qwen2ForCausalLM

    cuda = not args.cpu_smoke
    device = torch.device("cuda" if cuda else "cpu")
    dtype = torch.bfloat16 if cuda else torch.float32
    vocab = 512 if args.cpu_smoke else args.vocab
    seq_len = 256 if args.cpu_smoke else args.seq_len
    torch.manual_seed(0)
    attn, notes = pick_attention(args.attn, device) if cuda else ("sdpa", [])
    config = model_config(args.cpu_smoke, vocab)
    with device:
        model = Qwen2ForCausalLM(config)
    model.set_attn_implementation(attn)
    model.train()
    n_params = sum(p.numel() for p in model.parameters())
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5, betas=(0.9, 0.95), weight_decay=0.05, fused=cuda)
    step_fn = model
    if args.compile:
        step_fn = torch.compile(model)
    if args.grad_ckpt:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})

    # ~1.6 MB of activations per token without checkpointing (0.4 MB of it fp32 logits): ~13 GiB per 8K row
    micro = args.micro_batch or (2 if args.cpu_smoke else max(1, min(8, int(
        (torch.cuda.get_device_properties(0).total_memory / 2**30 - 20) // 18))))
    gen = torch.Generator().manual_seed(0)
    mean_len = 200 if args.cpu_smoke else args.mean_doc_len
    n_rows = micro * (args.warmup + args.steps)
    ids, labels, pos, doc_lens = pack(fim_documents(n_rows * seq_len, vocab, mean_len, gen), seq_len)
    while len(ids) < n_rows:        # next-fit packing is dense; top up if short
        more = pack(fim_documents(seq_len * (n_rows - len(ids)), vocab, mean_len, gen), seq_len)
        ids, labels, pos = (torch.cat([x, y]) for x, y in zip((ids, labels, pos), more[:3]))
        doc_lens += more[3]

    def step(i):
        sl = slice(i * micro, (i + 1) * micro)
        batch = {"input_ids": ids[sl].to(device), "labels": labels[sl].to(device), "position_ids": pos[sl].to(device)}
        if attn in ("torch_varlen", "flash_attention_2"):
            batch.update(VARLEN.varlen_kwargs(batch["position_ids"]))
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=cuda):
            loss = step_fn(**batch).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    started = time.perf_counter()
    for i in range(args.warmup):
        loss = step(i)
    sync(device)
    first_loss = float(loss.detach())
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    t = time.perf_counter()
    done = 0
    for i in range(args.warmup, args.warmup + args.steps):
        loss = step(i)
        done += 1
        if time.perf_counter() - started > args.time_budget:
            break
    sync(device)
    elapsed = time.perf_counter() - t
    timed = [n for row in doc_lens[args.warmup * micro:(args.warmup + done) * micro] for n in row]
    tokens = sum(timed)                                   # document tokens, padding excluded
    context = sum(n * n for n in timed) / tokens
    fpt = flops_per_token(config, context, n_params)
    tps = tokens / elapsed
    name = torch.cuda.get_device_name(0) if cuda else "cpu"
    peak = args.peak_tflops or next((v for k, v in PEAK_BF16_TFLOPS if k in name.upper()), None)
    achieved = tps * fpt / 1e12
    floor = bare_matmul_tflops(device, dtype, 8192 if cuda else 512, 20 if cuda else 3)
    result = {"device": name, "attention": attn, "notes": notes, "params_m": round(n_params / 1e6, 1),
              "seq_len": seq_len, "micro_batch": micro, "steps_timed": done, "tokens_per_s": round(tps, 1),
              "fill": round(tokens / (done * micro * seq_len), 4), "attention_context": round(context, 1),
              "flops_per_token_g": round(fpt / 1e9, 3), "model_tflops": round(achieved, 2),
              "peak_tflops": peak, "mfu": round(achieved / peak, 4) if peak else None,
              "bare_matmul_tflops": round(floor, 2), "ratio_to_bare_matmul": round(achieved / floor, 3),
              "peak_mem_gib": round(torch.cuda.max_memory_allocated() / 2**30, 2) if cuda else None,
              "first_loss": round(first_loss, 3), "last_loss": round(float(loss.detach()), 3),
              "grad_ckpt": args.grad_ckpt,
              "compile": args.compile, "wall_s": round(time.perf_counter() - started, 1)}
    return result


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cpu-smoke", action="store_true", help="tiny config on CPU: checks the script, measures nothing")
    p.add_argument("--seq-len", type=int, default=8192)
    p.add_argument("--micro-batch", type=int, default=None, help="rows per step (default: from GPU memory)")
    p.add_argument("--steps", type=int, default=30, help="timed steps")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--vocab", type=int, default=32768)
    p.add_argument("--mean-doc-len", type=int, default=2048, help="mean synthetic FIM document length (tokens)")
    p.add_argument("--attn", default="auto",
                   choices=("auto", "flash_attention_2", "torch_varlen", "sdpa", "flex_attention"))
    p.add_argument("--grad-ckpt", action="store_true", help="gradient checkpointing (off: faster, more memory)")
    p.add_argument("--compile", action="store_true", help="torch.compile the model")
    p.add_argument("--peak-tflops", type=float, default=None, help="GPU dense bf16 peak (default: by name)")
    p.add_argument("--time-budget", type=float, default=300.0, help="stop timed steps after this many seconds")
    args = p.parse_args(argv)
    if not args.cpu_smoke and not torch.cuda.is_available():
        print("no CUDA GPU available: nothing measured (run on an NVIDIA GPU; --cpu-smoke checks the script)")
        return 0
    fallbacks = []
    while True:
        oom = False
        try:
            result = run(args)
            break
        except torch.OutOfMemoryError:
            if args.cpu_smoke or (args.micro_batch == 1 and args.grad_ckpt):
                raise
            oom = True
        except Exception as e:  # noqa: BLE001 - a kernel path that fails here is retried on plain sdpa
            if args.cpu_smoke or args.attn == "sdpa":
                raise
            fallbacks.append(f"{args.attn} failed ({type(e).__name__}: {str(e)[:200]}); retried with sdpa")
            args.attn = "sdpa"
        gc.collect()                     # outside the except block: the failed run's tensors are now free
        torch.cuda.empty_cache()
        if oom:
            micro = args.micro_batch or 8
            if micro > 1:
                args.micro_batch = micro // 2
            else:
                args.grad_ckpt = True
            fallbacks.append(f"out of memory: retried with micro-batch {args.micro_batch}, "
                             f"grad-ckpt {args.grad_ckpt}")
        print(fallbacks[-1], file=sys.stderr)
    result["notes"] += fallbacks
    width = max(len(k) for k in result)
    for k, v in result.items():
        print(f"{k:<{width}}  {v}")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
