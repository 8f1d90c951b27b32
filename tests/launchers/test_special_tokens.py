"""Special-token strings inside content never become special ids; sentinels and the family's EOS come by id.

Each family gets a tiny tokenizer with its own special tokens, marked special or not as in the family's real
tokenizer (DeepSeek-Coder's FIM tokens are plain added tokens, which ``split_special_tokens`` alone leaves
whole). The expected count of special ids is the number of sentinels in the layout (or, for chat, the ids
the template alone produces for the same conversation with harmless contents).
"""
import pytest

from swemine.launchers import data
from swemine.miners.fim.formats import FAMILIES, SPECIAL_STRINGS, layout, render
from swemine.miners.fim.mine import SPECIAL_IN_CONTENT, mine_files
from swemine.miners.fim.scoring import FimConfig
from tests.miners.fim.special_file import source, special_file

CODE = "tags = [" + ", ".join(repr(s) for s in SPECIAL_STRINGS) + "]\n"       # every family's strings
RAW = [(f, fmt) for f in FAMILIES for fmt in ("psm", "spm", "repo") if fmt != "repo" or FAMILIES[f].repo_name]


def _special_ids(tokenizer, ids):
    protected = data.TextEncoder(tokenizer).protected_ids
    return [i for i in ids if i in protected]


def _sentinels(segments):
    return [s.text for s in segments if s.special]


@pytest.mark.parametrize(("family", "fmt"), RAW)
def test_raw_rows_holding_every_special_string_get_no_extra_special_ids(family_tokenizers, family, fmt):
    tok = family_tokenizers[family]
    row = {"prefix": "def f():\n" + CODE, "middle": "    return " + CODE, "suffix": CODE, "repo": "o/r",
           "path": "a.py", "context": [{"path": "b.py", "content": CODE}, {"path": "c.py", "content": CODE}]}
    segments = layout(fmt, family, row["prefix"], row["middle"], row["suffix"], repo="o/r", path="a.py",
                      context=[("b.py", CODE), ("c.py", CODE)])
    row["text"] = render(segments)
    naive = tok(row["text"], add_special_tokens=False)["input_ids"]
    assert len(_special_ids(tok, naive)) > len(_sentinels(segments))     # what tokenizing the text would do
    doc = data.make_encoder(tok, fmt, "fim", family, context_weight=1.0)(row)
    assert tok.convert_ids_to_tokens(_special_ids(tok, doc["input_ids"])) == _sentinels(segments)
    assert tok.decode(doc["input_ids"]) == row["text"]                     # nothing lost, nothing added
    assert doc["input_ids"][-1] == tok.convert_tokens_to_ids(FAMILIES[family].eos)


@pytest.mark.parametrize("family", list(FAMILIES))
def test_chat_rows_holding_every_special_string_get_no_extra_special_ids(family_tokenizers, family):
    tok = family_tokenizers[family]
    encode = data.make_encoder(tok, "chat", "localization")

    def conversation(code):
        return [{"role": "user", "content": "fix this:\n" + code}, {"role": "assistant", "content": code},
                {"role": "user", "content": code}, {"role": "assistant", "content": "done " + code}]
    plain = encode({"messages": conversation("x = 1\n")})
    doc = encode({"messages": conversation(CODE)})
    assert _special_ids(tok, doc["input_ids"]) == _special_ids(tok, plain["input_ids"])   # template ids only
    assert tok.decode(doc["input_ids"]) == tok.apply_chat_template(conversation(CODE), tokenize=False)
    learned = tok.decode([t for t in doc["labels"] if t != data.IGNORE_INDEX])
    assert learned.count(CODE) == 2 and "fix this" not in learned         # the assistant turns, whole


@pytest.mark.parametrize(("family", "fmt"), [*RAW, ("qwen2.5-coder", "chat"), ("deepseek-coder", "chat")])
def test_mined_file_with_every_family_token_encodes_to_its_sentinels(family_tokenizers, family, fmt):
    """The miner neutralises the strings, so even a trainer that tokenizes ``text`` naively gets only the
    sentinels; the launcher gives the same ids as tokenizing the text (PSM: every piece is between sentinels)."""
    tok = family_tokenizers[family]
    content = special_file()
    files = [source(content)]
    if fmt == "repo":
        files = [source(content.replace("def run_all(x):\n", "from h import helper\n\n\ndef run_all(x):\n")),
                 source("def helper(x):\n    return '<|im_end|><file_sep>' + x\n", "h.py")]
    res = mine_files(files, FimConfig(mixture=()), fmt=fmt, family=family)
    assert len(res.rows) == 3 and res.stats[SPECIAL_IN_CONTENT] == 3
    encode = data.make_encoder(tok, fmt, "fim", family if fmt != "chat" else None, context_weight=1.0)
    for r in res.rows:
        doc = encode(r)
        if fmt == "chat":
            rendered = tok.apply_chat_template(r["messages"], tokenize=False)
            assert doc["input_ids"] == tok(rendered, add_special_tokens=False)["input_ids"]
            continue
        naive = tok(r["text"], add_special_tokens=False)["input_ids"]
        segments = layout(fmt, family, r["prefix"], r["middle"], r["suffix"], repo=r["repo"], path=r["path"],
                          context=[(c["path"], c["content"]) for c in r["context"] or []])
        assert tok.convert_ids_to_tokens(_special_ids(tok, naive)) == _sentinels(segments)
        assert tok.convert_ids_to_tokens(_special_ids(tok, doc["input_ids"])) == _sentinels(segments)
        assert tok.decode(doc["input_ids"]) == r["text"]
        if fmt == "psm":
            assert doc["input_ids"] == naive


def test_family_eos_ends_raw_samples_and_a_missing_one_is_an_error(sources):
    from conftest import train_tokenizer

    row = {"prefix": "def f():\n", "middle": "    return 1\n", "suffix": "\n"}
    q = FAMILIES["qwen2.5-coder"]
    instruct = train_tokenizer(sources, specials=q.strings(), vocab_size=600, eos="<|im_end|>")
    doc = data.make_encoder(instruct, "psm", "fim")(row)
    assert instruct.eos_token == "<|im_end|>"
    assert doc["input_ids"][-1] == instruct.convert_tokens_to_ids("<|endoftext|>")       # the family EOS
    no_eos = train_tokenizer(sources, specials=[*q.required(), "<|im_end|>"], vocab_size=600, eos="<|im_end|>")
    with pytest.raises(data.MissingFimTokens, match=r"missing e\.g\. \['<\|endoftext\|>'\]"):
        data.make_encoder(no_eos, "psm", "fim", "qwen2.5-coder")
    with pytest.raises(data.MissingFimTokens, match="<|repo_name|>"):
        data.make_encoder(train_tokenizer(sources, specials=[*q.required(), q.eos], vocab_size=600), "repo", "fim")


def test_repo_rows_drop_context_files_before_cutting_the_target(family_tokenizers):
    tok = family_tokenizers["starcoder"]
    ctx = [{"path": f"m{i}.py", "content": "def g():\n    return 1\n" * 20} for i in range(3)]
    row = {"prefix": "import m0\n\ndef f():\n", "middle": "    return m0.g()\n", "suffix": "\nf()\n", "repo": "o/r",
           "path": "f.py", "context": ctx}
    encode = data.make_encoder(tok, "repo", "fim", "starcoder2")
    full = encode(row)
    one_file = encode({**row, "context": ctx[:1]})
    cut = data.make_encoder(tok, "repo", "fim", "starcoder", max_len=len(one_file["input_ids"]))(row)
    assert cut["input_ids"] == one_file["input_ids"] and cut["trimmed"] and not full["trimmed"]
    files = tok.convert_tokens_to_ids("<file_sep>")
    assert full["input_ids"].count(files) == 4 and cut["input_ids"].count(files) == 2
    with pytest.raises(data.EncodeError, match="repo_context_missing"):
        encode({**row, "context": None})
    with pytest.raises(data.EncodeError, match="fim_text_mismatch"):
        encode({**row, "text": render(layout("psm", "starcoder", row["prefix"], row["middle"], row["suffix"]))})


def test_build_documents_refuses_rows_of_another_format_or_family(tmp_path, family_tokenizers):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [{"prefix": "a", "middle": "b\n", "suffix": "c", "format": "spm", "model_family": "starcoder"}]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "spm.parquet")
    tok = family_tokenizers["starcoder"]
    with pytest.raises(data.DataMismatch, match="rows are spm format, not --format psm"):
        data.build_documents({"fim": str(tmp_path / "spm.parquet")}, tok, "psm")
    with pytest.raises(data.DataMismatch, match="rendered for starcoder, not --model-family qwen2.5-coder"):
        data.build_documents({"fim": str(tmp_path / "spm.parquet")}, tok, "spm", fim_family="qwen2.5-coder")
    docs, stats, _ = data.build_documents({"fim": str(tmp_path / "spm.parquet")}, tok, "spm")
    assert stats["fim"].docs == 1 and stats["fim"].middle_share == 1.0       # family from the rows
    assert tok.decode(docs[0]["input_ids"]) == "<fim_prefix><fim_suffix>c<fim_middle>ab\n<|endoftext|>"
