"""Tokenization of FIM and chat rows, the FIM-token check, shard discovery and the seeded mixture."""
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import chat_rows, train_tokenizer, write_chat

from swemine.launchers import data


def test_psm_and_spm_layouts_use_the_family_tokens(tokenizer):
    row = {"prefix": "def f(x):\n", "middle": "    return x + 1\n", "suffix": "\nprint(f(2))\n"}
    assert data.fim_tokens_for(tokenizer).family == "qwen2.5-coder"
    psm = data.make_encoder(tokenizer, "psm", "fim", context_weight=1.0)(row)          # --loss-on all
    text = tokenizer.decode(psm["input_ids"])
    assert text == ("<|fim_prefix|>def f(x):\n<|fim_suffix|>\nprint(f(2))\n<|fim_middle|>    return x + 1\n"
                    "<|endoftext|>")
    assert psm["labels"] == psm["input_ids"] and not psm["trimmed"]
    assert psm["input_ids"] == tokenizer(text, add_special_tokens=False)["input_ids"]   # = tokenizing the string
    # each sentinel is ONE token, not pieces of text
    assert psm["input_ids"].count(tokenizer.convert_tokens_to_ids("<|fim_middle|>")) == 1
    spm = tokenizer.decode(data.make_encoder(tokenizer, "spm", "fim")(row)["input_ids"])
    assert spm == ("<|fim_prefix|><|fim_suffix|>\nprint(f(2))\n<|fim_middle|>def f(x):\n    return x + 1\n"
                   "<|endoftext|>")


def test_loss_on_middle_and_context_weight(tokenizer):
    row = {"prefix": "def f(x):\n", "middle": "    return x + 1\n", "suffix": "\nprint(f(2))\n"}
    mid = tokenizer(row["middle"], add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
    doc = data.make_encoder(tokenizer, "psm", "fim")(row)                               # default: middle
    assert [t for t in doc["labels"] if t != data.IGNORE_INDEX] == mid                  # the middle + EOS only
    assert doc["labels"][-len(mid):] == mid and doc["n_middle"] == len(mid)
    weighted = data.make_encoder(tokenizer, "psm", "fim", context_weight=0.25)
    assert weighted.weighted
    doc = weighted(row)
    n_context = len(doc["input_ids"]) - len(mid)
    assert doc["weights"] == [0.25] * n_context + [1.0] * len(mid) and doc["labels"] == doc["input_ids"]
    assert data.loss_weight("all") == 1.0 and data.loss_weight("all", 0.1) == 0.1 and data.loss_weight() == 0.0
    with pytest.raises(ValueError, match="--loss-on all"):
        data.loss_weight("middle", 0.5)
    with pytest.raises(ValueError, match=r"\(0, 1\]"):
        data.loss_weight("all", 1.5)


def test_overlong_fim_keeps_the_middle(tokenizer, splits):
    row = max(splits, key=lambda r: len(r["prefix"]) + len(r["suffix"]))
    full = data.make_encoder(tokenizer, "psm", "fim")(row)
    mid = tokenizer(row["middle"], add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
    cut = data.make_encoder(tokenizer, "psm", "fim", max_len=len(mid) + 3 + 40)(row)
    assert len(full["input_ids"]) > len(cut["input_ids"]) == len(mid) + 43 and cut["trimmed"]
    assert cut["input_ids"][-len(mid):] == mid                                    # the middle is whole
    def parts(ids):
        s_at = ids.index(tokenizer.convert_tokens_to_ids("<|fim_suffix|>"))
        m_at = ids.index(tokenizer.convert_tokens_to_ids("<|fim_middle|>"))
        return ids[1:s_at], ids[s_at + 1:m_at]
    (pre, suf), (full_pre, full_suf) = parts(cut["input_ids"]), parts(full["input_ids"])
    assert len(pre) == len(suf) == 20                                              # 40 context tokens, split
    assert pre == full_pre[-20:] and suf == full_suf[:20]                          # the near ends are kept
    with pytest.raises(data.EncodeError, match="fim_middle_too_long"):
        data.make_encoder(tokenizer, "psm", "fim", max_len=len(mid))(row)


def test_refuses_raw_fim_without_fim_tokens(sources):
    plain = train_tokenizer(sources, specials=["<|endoftext|>", "<|im_start|>", "<|im_end|>"], vocab_size=600)
    with pytest.raises(data.MissingFimTokens, match=r"no FIM special tokens.*<\|fim_prefix\|>.*--format chat"):
        data.make_encoder(plain, "psm", "fim")
    with pytest.raises(data.MissingFimTokens, match="<fim_prefix>"):
        data.fim_tokens_for(plain, "starcoder")
    # the deepseek strings use full-width bars: the ASCII look-alikes do not count
    assert data.FIM_TOKENS["deepseek-coder"].prefix == "<\uff5cfim\u2581begin\uff5c>"
    assert data.make_encoder(plain, "chat", "fim")  # chat needs no FIM tokens


def test_chat_labels_only_on_assistant_turns(tokenizer):
    msgs = [{"role": "system", "content": "S"}, {"role": "user", "content": "where is the bug?"},
            {"role": "assistant", "content": "in foo.py"}, {"role": "user", "content": "and?"},
            {"role": "assistant", "content": "line 3"}]
    encode = data.make_encoder(tokenizer, "chat", "localization")
    doc = encode({"messages": msgs})
    learned = [t for t, lab in zip(doc["input_ids"], doc["labels"]) if lab != data.IGNORE_INDEX]
    assert tokenizer.decode(learned) == "in foo.py<|im_end|>\nline 3<|im_end|>\n"
    assert tokenizer.decode(doc["input_ids"]).startswith("<|im_start|>system\nS<|im_end|>")
    with pytest.raises(data.EncodeError, match="chat_no_assistant_turn"):
        encode({"messages": msgs[:2]})


def test_run_dir_discovery_skips_rejects(fim_run):
    files = data.resolve_data_files(str(fim_run))
    assert [f.split("fim-run")[-1].split("/", 1)[1] for f in files] == [
        "fim/train-00000-of-00002.parquet", "fim/train-00001-of-00002.parquet"]
    assert data.resolve_data_files(str(fim_run / "fim" / "train")) == files      # output prefix form
    assert data.resolve_data_files(str(fim_run / "fim" / "*.parquet")) == files  # glob form
    assert data.resolve_data_files("org/some-dataset") is None                   # -> Hub id


def test_mixture_counts_follow_ratios_without_repeats():
    ratios = data.parse_mix("fim=0.8,localization=0.15,diagnosis=0.05", ["fim", "localization", "diagnosis"])
    assert data.mixture_counts({"fim": 1000, "localization": 100, "diagnosis": 100}, ratios) == {
        "fim": 533, "localization": 100, "diagnosis": 33}
    assert data.mixture_counts({"fim": 1000, "localization": 900, "diagnosis": 900}, ratios, budget=200) == {
        "fim": 160, "localization": 30, "diagnosis": 10}
    with pytest.raises(ValueError, match="without --data"):
        data.parse_mix("fim=1,views=1", ["fim"])


def test_build_documents_mixes_seeded_and_counts_rejects(tmp_path, fim_run, splits, tokenizer):
    loc = chat_rows(splits[:40])
    loc[0]["messages"] = loc[0]["messages"][:2]                    # no assistant turn -> counted, not dropped
    write_chat(tmp_path / "loc" / "views" / "localization-00000-of-00001.parquet", loc)
    bad = [{"record_id": "x", "prefix": "a", "middle": "   ", "suffix": "b", "format": "psm",
            "model_family": "qwen2.5-coder"}]
    pq.write_table(pa.Table.from_pylist(bad), fim_run.parent / "bad.parquet")
    parts = {"fim": str(fim_run), "localization": str(tmp_path / "loc")}
    docs, stats, counts = data.build_documents(parts, tokenizer, "psm", mix="fim=0.75,localization=0.25", seed=3)
    assert stats["fim"].rows == len(splits) == stats["fim"].docs
    assert stats["localization"].rows == 40 and stats["localization"].docs == 39
    assert stats["localization"].rejected == {"chat_no_assistant_turn": 1}
    assert counts == {"fim": 117, "localization": 39}
    assert len(docs) == 156 and set(docs.column_names) == {"input_ids", "labels", "length"}
    again, _, _ = data.build_documents(parts, tokenizer, "psm", mix="fim=0.75,localization=0.25", seed=3)
    assert again["input_ids"] == docs["input_ids"]
    other, _, _ = data.build_documents(parts, tokenizer, "psm", mix="fim=0.75,localization=0.25", seed=4)
    assert other["input_ids"] != docs["input_ids"]
    fim_only = data.encode_dataset(data.load_part(str(fim_run.parent / "bad.parquet")),
                                   data.make_encoder(tokenizer, "psm", "fim"))[1]
    assert fim_only.rejected == {"fim_empty_middle": 1} and fim_only.docs == 0


def test_wrong_format_for_the_shards_says_which(tmp_path, splits, tokenizer):
    write_chat(tmp_path / "chat" / "fim" / "train-00000-of-00001.parquet", chat_rows(splits[:5]))
    with pytest.raises(ValueError, match=r"fim: 5 rows, not encoded: \{'fim_fields_missing': 5\} - .*--format chat"):
        data.build_documents({"fim": str(tmp_path / "chat")}, tokenizer, "psm")


def test_fim_token_in_vocab_but_not_special_is_refused(sources):
    """A vocabulary entry that text does not encode as one id is no FIM token."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {c: i for i, c in enumerate("abcdefghijklmnopqrstuvwxyz<>|_")}
    for t in ("<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>", "<|endoftext|>"):
        vocab[t] = len(vocab)                        # plain entries: a char-level model never produces them
    tok = Tokenizer(models.WordLevel(vocab, unk_token="a"))
    tok.pre_tokenizer = pre_tokenizers.Split("", "isolated")
    fast = PreTrainedTokenizerFast(tokenizer_object=tok)
    assert fast.convert_tokens_to_ids("<|fim_prefix|>") == 30                  # in the vocabulary...
    assert 30 not in fast("a<|fim_prefix|>b", add_special_tokens=False)["input_ids"]   # ...but text splits it
    with pytest.raises(data.MissingFimTokens):
        data.fim_tokens_for(fast)
