"""A small Python file whose code holds every supported family's special-token strings, for mining tests."""
from swemine.miners.fim.formats import FAMILIES

BODY = "\n".join(f"    v{i} = x + {i}\n    if v{i} > 3:\n        x += v{i}" for i in range(4))


def special_file() -> str:
    """One selectable function per family, each with that family's strings in a literal; one more in a comment
    of the prefix. Mined as singles: work_0 .. work_2 (the scoring of the plain ``_long_file`` shape)."""
    funcs = [f"def work_{k}(x: int, scale: float = 1.0) -> int:\n    \"\"\"Work {k}.\"\"\"\n"
             f"    tag = {' '.join(fam.strings())!r}\n{BODY}\n    return x\n" for k, fam in enumerate(FAMILIES.values())]
    caller = "def run_all(x):\n" + "".join(f"    x = work_{k}(x, 2.0)\n" for k in range(3)) + "    return x\n"
    return "# ends with <|endoftext|>\n\n" + "\n\n".join(funcs + [caller])


def source(content: str, path: str = "w.py") -> dict:
    return {"record_id": path, "repo": "o/r", "commit": "c", "path": path, "content": content, "license": "MIT",
            "source_uri": "/x", "source_sha256": "s"}
