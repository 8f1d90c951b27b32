"""Generated FSDP / ZeRO-3 configs, the TrainingArguments they produce, MFU arithmetic and data-arg parsing."""
import argparse
import json

import pytest
import transformers

from swemine.launchers import train


def test_fsdp_config_reaches_training_arguments(tmp_path):
    cfg = train.TrainConfig(data={}, model="m", output=str(tmp_path), sharding="fsdp")
    path = train.write_sharding_config("fsdp", str(tmp_path), ["Qwen2DecoderLayer"], activation_checkpointing=True)
    assert path == str(tmp_path / "fsdp.json")
    args = train._training_arguments(cfg, grad_accum=16, bf16=False, sharding_path=path)
    assert args.fsdp_config["transformer_layer_cls_to_wrap"] == ["Qwen2DecoderLayer"]
    assert args.fsdp_config["version"] == 2 and args.fsdp_config["activation_checkpointing"] is True
    assert args.fsdp_config["state_dict_type"] == "FULL_STATE_DICT"
    assert not args.gradient_checkpointing          # FSDP checkpoints activations itself (no extra all-gather)
    assert (args.learning_rate, args.lr_scheduler_type.value, args.weight_decay, args.gradient_accumulation_steps,
            args.save_steps, args.seed) == (1e-5, "cosine", 0.05, 16, 200, 42)
    assert args.get_warmup_steps(1000) == 100       # warmup ratio 0.1
    off = train.write_sharding_config("fsdp", str(tmp_path / "b"), ["L"], activation_checkpointing=False)
    assert json.load(open(off))["activation_checkpointing"] is False


def test_zero3_config_and_missing_deepspeed(tmp_path, monkeypatch):
    path = train.write_sharding_config("zero3", str(tmp_path), [])
    ds = json.load(open(path))
    assert ds["zero_optimization"]["stage"] == 3
    assert ds["zero_optimization"]["stage3_gather_16bit_weights_on_model_save"] is True
    assert ds["train_micro_batch_size_per_gpu"] == ds["gradient_accumulation_steps"] == "auto"
    assert ds["bf16"] == {"enabled": "auto"}
    monkeypatch.setattr(train.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(RuntimeError, match="pip install deepspeed"):
        train.run(train.TrainConfig(data={}, model="m", output=str(tmp_path), sharding="zero3"))


def test_flops_and_peak_table():
    cfg = transformers.Qwen2Config(vocab_size=151936, hidden_size=3584, intermediate_size=18944,
                                   num_hidden_layers=28, num_attention_heads=28, num_key_value_heads=4,
                                   tie_word_embeddings=False)
    n = 7_615_616_512                                # Qwen2.5-7B parameter count
    assert train.flops_per_token(cfg, 32768, n) == 6 * (n - 151936 * 3584) + 12 * 28 * 3584 * 32768
    assert train.peak_tflops("NVIDIA H200") == train.peak_tflops("NVIDIA H100 80GB HBM3") == 989.0
    assert train.peak_tflops("NVIDIA A100-SXM4-80GB") == 312.0 and train.peak_tflops("Some GPU") is None
    t = train.Throughput(tokens_per_step=1000, flops_per_token=1e9, peak_tflops_total=100.0)
    t.last_time, t.last_step = train.time.perf_counter() - 2.0, 0
    m = t.measure(10)                                # 10 steps x 1000 tokens in ~2 s
    assert m["tokens_per_s"] == pytest.approx(5000, rel=0.05) and m["mfu"] == pytest.approx(0.05, rel=0.05)


def test_parse_data_parts():
    assert train.parse_data(["runs/fim", "diagnosis=org/ds", "localization=/x/views/localization"]) == {
        "fim": "runs/fim", "diagnosis": "org/ds", "localization": "/x/views/localization"}
    assert train.parse_data(["/data/a=b/run"]) == {"fim": "/data/a=b/run"}     # not a part name: a path
    with pytest.raises(ValueError, match="twice"):
        train.parse_data(["a", "b"])
    parser = argparse.ArgumentParser()
    train.add_train_arguments(parser)
    cfg = train.config_from_args(parser.parse_args(["--data", "r", "--model", "m", "--output", "o"]))
    assert (cfg.seq_len, cfg.learning_rate, cfg.warmup_ratio, cfg.global_batch, cfg.format) == (
        32768, 1e-5, 0.1, 128, "chat")
