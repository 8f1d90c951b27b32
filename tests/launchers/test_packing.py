"""Packing: row layout, and proof with the tiny model that no token attends across a document boundary."""
import pytest
import torch
import transformers

from swemine.launchers import packing
from swemine.launchers.data import IGNORE_INDEX
from tests.launchers.conftest import tiny_config


def test_next_fit_and_row_layout():
    assert packing.next_fit([3, 4, 2, 9, 1], seq_len=8) == [[0, 1], [2], [3], [4]]
    row = packing.build_row([([5, 6, 7], [5, 6, 7]), ([8, 9], [IGNORE_INDEX, 9])], seq_len=8, pad_id=0)
    assert row == {"input_ids": [5, 6, 7, 8, 9, 0, 0, 0],
                   "labels": [IGNORE_INDEX, 6, 7, IGNORE_INDEX, 9, IGNORE_INDEX, IGNORE_INDEX, IGNORE_INDEX],
                   "position_ids": [0, 1, 2, 0, 1, 0, 1, 2]}
    mask = packing.block_causal_mask(torch.tensor([row["position_ids"]]))[0, 0]
    assert mask[4].tolist() == [False, False, False, True, True, False, False, False]
    assert mask[2].tolist() == [True, True, True, False, False, False, False, False]


def test_pack_dataset_counts(tokenizer, fim_run):
    from swemine.launchers import data
    docs, _ = data.encode_dataset(data.load_part(str(fim_run)), data.make_encoder(tokenizer, "psm", "fim"))
    rows, stats = packing.pack_dataset(docs, seq_len=256, pad_id=tokenizer.pad_token_id)
    lengths = docs["length"]
    assert stats.docs == len(docs) == 158
    assert stats.truncated_docs == sum(n > 256 for n in lengths) > 0
    assert stats.truncated_tokens == sum(max(0, n - 256) for n in lengths)
    assert stats.real_tokens == sum(min(n, 256) for n in lengths)
    assert stats.sum_sq_tokens == sum(min(n, 256) ** 2 for n in lengths)
    assert 200 < stats.attention_context <= 256          # most stdlib functions + context exceed 256 tokens
    assert stats.rows == len(rows) == len(packing.next_fit(lengths, 256))
    assert all(len(r) == 256 for r in rows["input_ids"])
    assert sum(p.count(0) for p in rows["position_ids"]) >= stats.docs     # one reset per document (+ padding)
    assert 0.5 < stats.fill <= 1.0


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    m = transformers.Qwen2ForCausalLM(tiny_config(512)).eval()
    m.config.use_cache = False
    return m


@pytest.mark.parametrize("attn,mode", [("sdpa", "varlen"), ("sdpa", "block"), ("eager", "block"),
                                       ("eager", "varlen")])
def test_no_attention_across_documents(model, attn, mode):
    model.set_attn_implementation(attn)
    g = torch.Generator().manual_seed(1)
    a, b, c = (torch.randint(1, 512, (n,), generator=g).tolist() for n in (20, 30, 10))
    a2 = torch.randint(1, 512, (20,), generator=g).tolist()
    collate = packing.PackedCollator(mode, additive_mask=(attn == "eager"))

    def logits(docs):
        row = packing.build_row([(d, d) for d in docs], 64, 0)
        batch = collate([row])
        batch.pop("labels")
        with torch.no_grad():
            return model(**batch).logits[0]

    base, changed = logits([a, b, c]), logits([a2, b, c])
    assert not torch.allclose(base[:20], changed[:20])                     # document A itself did change
    torch.testing.assert_close(base[20:60], changed[20:60], atol=1e-5, rtol=1e-5)   # B and C did not
    alone = logits([b])                                                     # B packed = B on its own
    torch.testing.assert_close(base[20:50], alone[:30], atol=1e-5, rtol=1e-5)


def test_plain_causal_rows_do_leak(model):
    """The control: without resets or a mask, changing A changes B's logits (so the test above can fail)."""
    model.set_attn_implementation("sdpa")
    g = torch.Generator().manual_seed(1)
    a, b = (torch.randint(1, 512, (n,), generator=g).tolist() for n in (20, 30))
    a2 = torch.randint(1, 512, (20,), generator=g).tolist()
    with torch.no_grad():
        x = model(input_ids=torch.tensor([a + b])).logits[0, 20:]
        y = model(input_ids=torch.tensor([a2 + b])).logits[0, 20:]
    assert not torch.allclose(x, y, atol=1e-3)


def test_default_mode():
    assert packing.default_mode("flash_attention_2") == "varlen"
    assert packing.default_mode("sdpa") == "varlen"      # transformers >= 4.53 detects the resets
