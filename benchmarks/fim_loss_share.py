"""Where the raw-FIM loss goes: the share of loss (by token weight) on middles under each ``--loss-on`` setting.

Reads a ``swemine run fim --format psm|spm|repo`` run directory and encodes it once exactly as the launcher
does (:func:`swemine.launchers.data.encode_dataset`, ``--loss-on all --context-weight W``), which counts the
middle tokens ``M`` (with their EOS) and all tokens ``T``; the loss shares on middles follow: ``middle`` 1,
``all`` M/T, weight W: M/(M + W·(T − M)). Without ``--tokenizer`` it trains a byte-level BPE (``--vocab``
entries, the family's special tokens) on the mined files themselves, so it runs offline; the character share
is printed too (tokenizer-free), and how often the samples re-read each file's text.

    python benchmarks/fim_loss_share.py /tmp/mt/stdlib-psm [--tokenizer DIR] [--weight 0.1]
"""
from __future__ import annotations

import argparse
import collections
import json


def bpe_tokenizer(texts: list[str], family: str, vocab: int):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    from swemine.miners.fim.formats import FAMILIES

    tokens = FAMILIES[family]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(texts, trainers.BpeTrainer(vocab_size=vocab, special_tokens=list(tokens.strings()),
                                                       initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token=tokens.eos, pad_token=tokens.eos)


def main(argv=None) -> int:
    from transformers import AutoTokenizer

    from swemine.launchers import data

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", help="run directory of a raw-format FIM run")
    ap.add_argument("--tokenizer", default=None, help="HF tokenizer dir (default: a BPE trained on the files)")
    ap.add_argument("--vocab", type=int, default=16384)
    ap.add_argument("--weight", type=float, default=0.1, help="the context weight of the third setting")
    ap.add_argument("--num-proc", type=int, default=None)
    args = ap.parse_args(argv)

    ds = data.load_part(args.run)
    (fmt, family), = data.dataset_pairs(ds)
    files = {}
    for r in ds.select_columns(["path", "prefix", "middle", "suffix"]):
        files.setdefault(r["path"], r["prefix"] + r["middle"] + r["suffix"])
    tok = (AutoTokenizer.from_pretrained(args.tokenizer) if args.tokenizer
           else bpe_tokenizer(list(files.values()), family, args.vocab))
    per_file = collections.Counter(ds["path"])
    chars = {k: sum(map(len, ds[k])) for k in ("prefix", "middle", "suffix")}
    enc = data.make_encoder(tok, fmt, "fim", family, context_weight=data.loss_weight("all", args.weight))
    _, stats = data.encode_dataset(ds, enc, args.num_proc)
    m, t = stats.middle_weight, stats.tokens
    assert abs(stats.loss_weight - (m + args.weight * (t - m))) < 1e-3 * t
    out = {"run": args.run, "format": fmt, "model_family": family, "rows": len(ds), "files": len(files),
           "samples_per_file": round(len(ds) / len(files), 2), "max_samples_per_file": max(per_file.values()),
           "file_text_reads": round(sum(chars.values()) / sum(map(len, files.values())), 2),
           "middle_char_share": round(chars["middle"] / sum(chars.values()), 4),
           "tokenizer": args.tokenizer or f"bpe-{args.vocab} trained on the mined files",
           "docs": stats.docs, "rejected": stats.rejected, "tokens": t, "middle_tokens": int(m),
           "middle_loss_share": {"--loss-on middle": 1.0, "--loss-on all": round(m / t, 4),
                                 f"--loss-on all --context-weight {args.weight}": round(stats.middle_share, 4)}}
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
