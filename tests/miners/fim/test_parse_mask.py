"""Structure extraction, rejects, masking/validation and the exact FIM layouts."""
import pytest

from swemine.miners.fim.formats import FIM_SCHEMA, chat_answer
from swemine.miners.fim.masking import MASK, MaskError, mask
from swemine.miners.fim.mine import fim_summary, mine_files
from swemine.miners.fim.parse import FileParser, parse_fn
from swemine.miners.fim.scoring import FimConfig

SRC = '''import functools


class Outer:
    """Doc."""

    class Inner:
        @staticmethod
        @functools.lru_cache(maxsize=None)
        def build(
            a,
            b: int = 2,
            *rest,
            key=None,
        ) -> "Outer":
            """Build it."""
            return Outer.make(a, "x", key=b)  # trailing comment

    def make(self, value):
        self.cache[value] = self.size
        self.size, self.count = 1, 2
        self.total += value
        return self.helper(value, *self.rest, **self.opts)
        # a comment after the last statement is not part of the function

    async def fetch(self):
        async with self.lock:
            while True:
                if self.ok and self.ready or self.done:
                    break
                elif self.x:
                    pass
                elif self.y:
                    for i in range(3):
                        pass
                else:
                    pass
        return [i for i in range(3) for _ in "ab" if i] if self.ok else None


def top(x, /, y):
    return x
'''


@pytest.fixture(scope="module")
def parser():
    return FileParser()


def test_structure(parser):
    fs = parser({"path": "pkg/mod.py", "content": SRC, "repo": "o/r", "commit": "c1", "license": "MIT"})
    assert fs.module == "pkg.mod" and fs.n_lines == 42 and fs.license == "MIT"
    assert [f.qualname for f in fs.functions] == ["Outer.Inner.build", "Outer.make", "Outer.fetch", "top"]
    assert [c.qualname for c in fs.classes] == ["Outer", "Outer.Inner"]
    build, make, fetch, top = fs.functions
    assert build.decorators == ["staticmethod", "functools.lru_cache(maxsize=None)"]
    # multi-line signature: def on 10, ':' on 15, body from 16; decorators (8-9) are not in the span
    assert (build.start_line, build.sig_end_line, build.body_line, build.end_line) == (10, 15, 16, 17)
    assert build.params == ["a", "b"] and build.has_param_types and build.has_return_type and build.has_docstring
    assert build.class_name == "Outer.Inner"
    # calls: the decorator call (attributed as ast.walk does) and Outer.make(a, "x", key=b)
    assert [(c.name, c.receiver, c.n_literal, c.n_name, c.n_other, c.n_keyword) for c in build.calls] == [
        ("lru_cache", "functools", 0, 0, 0, 1), ("make", "Outer", 1, 1, 0, 1)]
    # the comment on line 24 after the last statement is not part of make (ast end_lineno)
    assert make.end_line == 23 and make.params == ["self", "value"] and not make.has_docstring
    # `self.cache[value] = ...` reads cache (as ast: Load inside a Subscript store); `+=` reads and writes
    assert make.self_writes == ["count", "size", "total"]
    assert make.self_reads == ["cache", "helper", "opts", "rest", "size", "total"]
    # `*self.rest` is another-expression argument, `**self.opts` a keyword one
    assert [(c.name, c.n_name, c.n_other, c.n_keyword) for c in make.calls] == [("helper", 1, 1, 1)]
    # CC = 1 + while + if + and + or + elif + elif + for + (IfExp) + 2 comprehension generators = 11
    assert fetch.is_async and fetch.cc == 11
    # depth: async with > while > if > elif > elif > for = 6 (an elif nests like ast's orelse If)
    assert fetch.depth == 6
    assert top.params == ["y"]                                  # positional-only `x` is not in args.args


def test_commented_string_concatenation_argument(parser):
    # comments between the pieces of an implicit string concatenation (as in stdlib ``re.compile`` calls)
    src = 'def f():\n    return g("a"  # first\n             "b", f"{x}"  # second\n             "c")\n'
    fn = parser({"path": "x.py", "content": src}).functions[0]
    assert [(c.name, c.n_literal, c.n_other) for c in fn.calls] == [("g", 1, 1)]


def test_rejects(parser):
    bad = parser({"path": "bad.py", "content": "def f(:\n    pass\n", "record_id": "r1"})
    assert bad["stage"] == "fim_parse" and bad["reason"] == "syntax_error" and bad["subject_id"] == "r1"
    assert parser({"path": "latin.py", "content": b"x = '\xe9'\n"})["reason"] == "not_utf8"
    assert parser({"path": "e.py", "content": "\n\n"})["reason"] == "empty_file"
    assert FileParser(max_bytes=10)({"path": "big.py", "content": "x = 1\n" * 5})["reason"] == "too_large"


def test_the_parse_stage_counts_each_files_functions():
    info, structure = parse_fn(1 << 20)({"path": "outer.py", "content": SRC})
    assert info == {"functions": len(structure.functions)} and [f.name for f in structure.functions][:2] == [
        "build", "make"]
    [reject] = parse_fn(10)({"path": "big.py", "content": SRC})
    assert reject["reason"] == "too_large"


def test_mask_single_and_reconstruct(parser):
    fs = parser({"path": "m.py", "content": SRC})
    build = fs.functions[0]
    m = mask(SRC, [build])
    lines = m.masked_text.split("\n")
    # signature lines 10-15 kept, lines 16-17 (docstring + body) become one mask line at body indentation
    assert lines[14] == '        ) -> "Outer":' and lines[15] == f"            {MASK}"
    assert lines[16] == "" and lines[17] == "    def make(self, value):"
    assert m.prefix + m.middle + m.suffix == SRC
    assert m.middle == '            """Build it."""\n            return Outer.make(a, "x", key=b)  # trailing comment\n'
    assert m.functions[0].startswith("        def build(\n") and m.functions[0].endswith("# trailing comment\n")


def test_mask_group_crlf_and_mismatch(parser):
    crlf = SRC.replace("\n", "\r\n")
    fs = parser({"path": "m.py", "content": crlf})
    make, top = fs.functions[1], fs.functions[3]
    m = mask(crlf, [top, make])
    assert m.prefix + m.middle + m.suffix == crlf
    assert m.masked_text.count(MASK) == 2 and f"        {MASK}\r\n" in m.masked_text
    assert m.masked_text.endswith(f"def top(x, /, y):\r\n    {MASK}\r\n")
    with pytest.raises(MaskError) as err:
        mask(crlf.replace("self.size, self.count = 1, 2", "self.size, self.count = 3, 4"), [make])
    assert err.value.reason == "span_mismatch"


def test_chat_answer_layout():
    assert chat_answer(["f", "g"], ["def f():\n    pass\n", "def g(): ..."]) == (
        "### Implementation\n### Function 1: f\n```python\ndef f():\n    pass\n```\n"
        "### Function 2: g\n```python\ndef g(): ...\n```\n")


def _long_file() -> str:
    body = "\n".join(f"    v{i} = x + {i}\n    if v{i} > 3:\n        x += v{i}" for i in range(4))
    funcs = [f"def work_{k}(x: int, scale: float = 1.0) -> int:\n    \"\"\"Work {k}.\"\"\"\n{body}\n    return x\n"
             for k in range(3)]
    caller = "def run_all(x):\n" + "".join(f"    x = work_{k}(x, 2.0)\n" for k in range(3)) + "    return x\n"
    return "\n\n".join(funcs + [caller])


def test_mine_files_psm_rows_reconstruct_and_fit_schema():
    import pyarrow as pa

    content = _long_file()
    src = {"record_id": "f1", "repo": "o/r", "commit": "c", "path": "w.py", "content": content, "license": "MIT",
           "source_uri": "/x", "source_sha256": "s"}
    res = mine_files([src], FimConfig(mixture=()), fmt="psm", family="starcoder", config_hash="h")
    assert res.stats == {"files": 1, "functions": 4, "selected_single_function": 3, "samples": 3}
    assert [r["func_name"] for r in res.rows] == ["work_0", "work_1", "work_2"]
    for r in res.rows:
        assert r["prefix"] + r["middle"] + r["suffix"] == content
        assert r["text"] == f"<fim_prefix>{r['prefix']}<fim_suffix>{r['suffix']}<fim_middle>{r['middle']}<|endoftext|>"
        assert (r["loc"], r["cyclomatic_complexity"], r["max_depth"], r["file_lines"]) == (15, 5, 1, 56)
        assert r["license"] == "MIT" and r["config_hash"] == "h" and r["model_family"] == "starcoder"
    assert res.filtered == [] and res.rejects == []
    table = pa.Table.from_pylist(res.rows, schema=FIM_SCHEMA)
    assert table.num_rows == 3
    chat = mine_files([src], FimConfig(mixture=()), fmt="chat")
    r0 = chat.rows[0]
    assert [m["role"] for m in r0["messages"]] == ["user", "assistant"]
    assert MASK in r0["messages"][0]["content"] and "<|fim" not in r0["messages"][0]["content"]
    assert r0["metadata"]["func_name"] == "work_0" and r0["metadata"]["graph_stats"]["call_edges"] == 3
    assert r0.get("prefix") is None and r0.get("text") is None


def test_fim_summary_counts_and_percentiles():
    samples = [{"loc": n, "complexity": 1, "inferability": 0.5, "fim_score": n / 10, "difficulty": 2,
                "fim_split": "single_function" if n < 30 else "function_pair"} for n in (10, 20, 30)]
    stages = {"fim_parse": {"in": 4, "out": 3, "info": {"functions": 9}},
              "fim_select": {"info": {"selected_single_function": 2, "selected_function_pair": 1}},
              "fim_emit": {"info": {"special_token_in_content": 1}, "filtered": {"special_token_in_content": 2}}}
    summary = fim_summary(samples, stages)
    assert summary["fim_counts"] == {"files": 4, "files_parsed": 3, "functions": 9, "selected_singles": 2,
                                     "selected_pairs": 1, "selected_triples": 0, "samples": 3,
                                     "special_token_in_content": 3}
    dist = summary["fim_distribution"]
    assert dist["all"]["loc"] == {"p10": 10, "p50": 20, "p90": 30, "n": 3} and set(dist) == {
        "all", "single_function", "function_pair"}
    assert dist["function_pair"]["fim_score"] == {"p10": 3.0, "p50": 3.0, "p90": 3.0, "n": 1}
