"""The tree-sitter port against Python's ``ast`` (the convention A²Agent's gold uses) on real stdlib code."""
import ast
import os
import sysconfig

from swemine.miners.code_structure import StructureParser

PACKAGES = ("json", "email", "http", "logging", "concurrent", "asyncio", "unittest", "xml")


def _ast_entities(src: bytes) -> dict[str, tuple[int, int]]:
    out = {}

    def visit(body, prefix):
        for node in body:
            if isinstance(node, ast.ClassDef):
                out[prefix + node.name] = (node.lineno, node.end_lineno)
                visit(node.body, prefix + node.name + ".")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out[prefix + node.name] = (node.lineno, node.end_lineno)
            elif isinstance(node, (ast.If, ast.Try, ast.With, ast.For, ast.While)):
                for name in ("body", "orelse", "finalbody"):
                    visit(getattr(node, name, []) or [], prefix)
                for handler in getattr(node, "handlers", []) or []:
                    visit(handler.body, prefix)

    visit(ast.parse(src).body, "")
    return out


def test_entities_match_ast_on_stdlib_packages():
    sp = StructureParser()
    root = sysconfig.get_paths()["stdlib"]
    n_files = n_entities = 0
    for pkg in PACKAGES:
        for dirpath, _, files in os.walk(os.path.join(root, pkg)):
            for f in sorted(files):
                if not f.endswith(".py"):
                    continue
                src = open(os.path.join(dirpath, f), "rb").read()
                expected = _ast_entities(src)
                got = {e.qualname: (e.start, e.end) for e in sp.parse(src).entities}
                assert got == expected, f
                n_files += 1
                n_entities += len(expected)
    assert n_files > 100 and n_entities > 4000
