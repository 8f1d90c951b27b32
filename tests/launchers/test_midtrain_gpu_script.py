"""The GPU benchmark script, checked on CPU: model size, packing, the torch-varlen attention plumbing (with a
CPU stand-in for the CUDA kernel), the no-GPU exit and the --cpu-smoke run."""
import importlib.util
import pathlib

import pytest
import torch
import transformers

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "midtrain_gpu.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("midtrain_gpu", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_model_is_half_a_billion_parameters(bench):
    config = bench.model_config(small=False, vocab=32768)
    with torch.device("meta"):
        model = transformers.Qwen2ForCausalLM(config)
    n = sum(p.numel() for p in model.parameters())
    # per layer: q 1536²+1536, k,v 2·(1536·512+512), o 1536², MLP 3·1536·5120, 2 norms; + embedding + norm
    assert n == 16 * 29_890_048 + 32768 * 1536 + 1536 == 528_573_952
    # 6N + 12 L H T at 8K: 3.17 + 2.42 GFLOP per token
    assert bench.flops_per_token(config, 8192, n) == pytest.approx(6 * n + 12 * 16 * 1536 * 8192)


def test_pack_resets_positions_and_masks_document_starts(bench):
    docs = [torch.arange(4, 9), torch.arange(10, 13), torch.arange(20, 27)]
    ids, labels, pos = bench.pack(docs, seq_len=10)
    assert ids.tolist() == [[4, 5, 6, 7, 8, 10, 11, 12, 0, 0], [20, 21, 22, 23, 24, 25, 26, 0, 0, 0]]
    assert pos.tolist() == [[0, 1, 2, 3, 4, 0, 1, 2, 0, 1], [0, 1, 2, 3, 4, 5, 6, 0, 1, 2]]
    assert labels.tolist()[0] == [-100, 5, 6, 7, 8, -100, 11, 12, -100, -100]
    kw = bench.varlen_kwargs(pos)
    assert kw["cu_seq_lens_q"].tolist() == [0, 5, 8, 10, 17, 20] and kw["max_length_q"] == 10


CALLS = []


def _cpu_varlen_attn(q, k, v, cu_q, cu_k, max_q, max_k, scale=None, window_size=(-1, -1), enable_gqa=False):
    """A CPU stand-in for ``torch.nn.attention.varlen.varlen_attn``: causal SDPA per segment."""
    assert window_size == (-1, 0)
    CALLS.append((q.shape, k.shape, enable_gqa))
    out = torch.empty_like(q)
    for a, b in zip(cu_q[:-1].tolist(), cu_q[1:].tolist()):
        qs, ks, vs = (x[a:b].transpose(0, 1) for x in (q, k, v))
        out[a:b] = torch.nn.functional.scaled_dot_product_attention(
            qs, ks, vs, is_causal=True, scale=scale, enable_gqa=enable_gqa).transpose(0, 1)
    return out


def test_torch_varlen_attention_matches_packed_sdpa(bench, monkeypatch):
    import torch.nn.attention.varlen as varlen
    monkeypatch.setattr(varlen, "varlen_attn", _cpu_varlen_attn)
    transformers.AttentionInterface.register("torch_varlen", bench.torch_varlen_attention)
    torch.manual_seed(0)
    model = transformers.Qwen2ForCausalLM(bench.model_config(small=True, vocab=300)).eval()
    gen = torch.Generator().manual_seed(0)
    ids, _, pos = bench.pack(bench.fim_documents(4 * 128, 300, 40, gen), seq_len=128)
    ids, pos = ids[:2], pos[:2]
    with torch.no_grad():
        model.set_attn_implementation("sdpa")
        expected = model(input_ids=ids, position_ids=pos).logits
        for gqa in (True, False):
            bench.TORCH_VARLEN_GQA[0] = gqa
            model.set_attn_implementation("torch_varlen")
            got = model(input_ids=ids, position_ids=pos, **bench.varlen_kwargs(pos)).logits
            torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-5)
    # 2 layers x 2 runs went through the varlen path: flattened (B*L, heads, dim), GQA native or repeated
    assert CALLS == [((256, 4, 16), (256, 2, 16), True)] * 2 + [((256, 4, 16), (256, 4, 16), False)] * 2


def test_no_gpu_exits_zero_and_cpu_smoke_runs(bench, capsys):
    if not torch.cuda.is_available():
        assert bench.main([]) == 0
        assert "no CUDA GPU available" in capsys.readouterr().out
    assert bench.main(["--cpu-smoke", "--steps", "2", "--warmup", "1"]) == 0
    out = capsys.readouterr().out
    assert "tokens_per_s" in out and "ratio_to_bare_matmul" in out
