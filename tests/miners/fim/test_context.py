"""The repo-level context is chosen with the selection, from structures alone: the files a target file calls
into, most call edges first, while their text fits the character budget; the text is looked up by file key."""
import pytest

from swemine.corpora.records import sha256_bytes
from swemine.corpora.repos import source_file
from swemine.miners.fim.mine import FileSelection, context_keys, context_texts, mine_files, select_repo
from swemine.miners.fim.parse import FileParser
from swemine.miners.fim.scoring import FimConfig

BIG = "def grow(x):\n    return x + 1\n\n\ndef shrink(x):\n    return x - 1\n" + "# padding\n" * 20
SMALL = "def clamp(x):\n    return max(0, min(x, 9))   # höchstens 9: the budget counts characters, not bytes\n"


def _work() -> str:
    body = "\n".join(f"    v{i} = x + {i}\n    if v{i} > 3:\n        x += v{i}" for i in range(4))
    funcs = [f"def work_{k}(x: int, scale: float = 1.0) -> int:\n    \"\"\"Work {k}.\"\"\"\n{body}\n"
             f"    return clamp(grow(x) + shrink(x))\n" for k in range(3)]
    return ("from lib.big import grow, shrink\nfrom lib.small import clamp\n\n\n" + "\n\n".join(funcs) + "\n\n"
            + "\n".join(f"# padding {i}" for i in range(12)) + "\n")


def _files():
    texts = {"lib/work.py": _work(), "lib/big.py": BIG, "lib/small.py": SMALL}
    return [source_file("acme/tools", "c0ffee", p, t, "MIT", "acme/tools@c0ffee", f"c0ffee:{p}", sha256_bytes(t.encode()))
            for p, t in texts.items()]


@pytest.mark.parametrize("budget, context", [
    (len(BIG) + len(SMALL), ["lib/big.py", "lib/small.py"]),   # two callees in big.py, one in small.py
    (len(BIG) + len(SMALL) - 1, ["lib/big.py"]),
    (len(BIG) - 1, []),                                         # the first file does not fit: none after it either
])
def test_context_is_the_leading_dependencies_that_fit(budget, context):
    parser = FileParser()
    cfg = FimConfig(repo_context_chars=budget, mixture=())
    sels = {s.structure.path: s for s in select_repo([parser(f) for f in _files()], cfg) if isinstance(s, FileSelection)}
    work = sels["lib/work.py"]
    assert len(work.targets) == 3 and work.context == context
    assert context_keys(work) == [f"acme/tools@c0ffee:{p}" for p in context]
    texts = {"acme/tools@c0ffee:lib/big.py": BIG, "acme/tools@c0ffee:lib/small.py": SMALL}
    assert context_texts(work, texts) == {p: {"lib/big.py": BIG, "lib/small.py": SMALL}[p] for p in context}
    rows = mine_files(_files(), cfg, fmt="repo").rows
    assert len(rows) == 3 and all([c["path"] for c in r["context"]] == context for r in rows)
    assert all(r["text"].startswith("<|repo_name|>acme/tools\n" + "".join(
        f"<|file_sep|>{p}\n" + (BIG if p == "lib/big.py" else SMALL) + "\n" for p in context)) for r in rows)
