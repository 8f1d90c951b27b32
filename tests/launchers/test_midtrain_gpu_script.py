"""The GPU benchmark script, checked on CPU: model size, FLOPs, packing, the no-GPU exit and --cpu-smoke."""
import importlib.util
import json
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
    # 6N + 12 L H T with T = the context attended inside a document: 3.17 + 0.94 GFLOP per token at T = 3200
    assert bench.flops_per_token(config, 3200, n) == pytest.approx(6 * n + 12 * 16 * 1536 * 3200)


def test_pack_resets_positions_and_masks_document_starts(bench):
    docs = [torch.arange(4, 9), torch.arange(10, 13), torch.arange(20, 27)]
    ids, labels, pos, doc_lens = bench.pack(docs, seq_len=10)
    assert doc_lens == [[5, 3], [7]]
    assert ids.tolist() == [[4, 5, 6, 7, 8, 10, 11, 12, 0, 0], [20, 21, 22, 23, 24, 25, 26, 0, 0, 0]]
    assert pos.tolist() == [[0, 1, 2, 3, 4, 0, 1, 2, 0, 1], [0, 1, 2, 3, 4, 5, 6, 0, 1, 2]]
    assert labels.tolist()[0] == [-100, 5, 6, 7, 8, -100, 11, 12, -100, -100]
    kw = bench.VARLEN.varlen_kwargs(pos)       # launchers/attention.py, loaded by path
    assert kw["cu_seq_lens_q"].tolist() == [0, 5, 8, 10, 17, 20] and kw["max_length_q"] == 10


def test_no_gpu_exits_zero_and_cpu_smoke_runs(bench, capsys):
    if not torch.cuda.is_available():
        assert bench.main([]) == 0
        assert "no CUDA GPU available" in capsys.readouterr().out
    assert bench.main(["--cpu-smoke", "--steps", "2", "--warmup", "1"]) == 0
    out = capsys.readouterr().out
    result = json.loads(out.strip().splitlines()[-1])
    assert result["steps_timed"] == 2 and result["tokens_per_s"] > 0 and 0 < result["fill"] <= 1
    assert 0 < result["attention_context"] <= 256 and result["ratio_to_bare_matmul"] > 0
