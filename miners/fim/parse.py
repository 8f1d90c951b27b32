"""Structure extraction from one Python file with tree-sitter (docs/mining.md, FIM graph).

``FileParser`` (build it in ``DoFn.setup()``: tree-sitter objects are unpicklable) turns a ``SourceFile``
dict into a :class:`FileStructure` — plain dataclasses, no tree kept alive — or a ``Reject``
(``syntax_error``, ``not_utf8``, ``too_large``, ``empty_file``).

Nodes follow the reference: every top-level function and every class method (``Class.method``; nested
classes recursed, nested functions are not nodes — their calls and control flow belong to the enclosing
node; a re-defined name keeps its last definition). Everything a node needs for Ĥ and Î is extracted here: LoC (``def`` line to the last code line),
cyclomatic complexity, control-flow nesting, positional parameters, annotations, docstring, decorators,
calls with argument kinds, and ``self.attr`` reads/writes.
"""
from __future__ import annotations

import bisect
import hashlib
from dataclasses import dataclass, field
from typing import Any

from swemine.corpora.records import Info, Reject, make_reject
from swemine.runtime import paused_gc

STAGE = "fim_parse"

#: Argument node types that are ``ast.Constant`` in Python's own AST.
_LITERALS = frozenset({"integer", "float", "true", "false", "none", "ellipsis"})
_STRINGS = frozenset({"string", "concatenated_string"})
#: Cyclomatic complexity counts If (elif = a nested If in ast), IfExp, For, While, ExceptHandler, each extra
#: BoolOp operand (tree-sitter nests binary boolean_operators) and each comprehension generator; control-flow
#: depth nests If/For/While/With/Try (``async`` variants share the node types). One capture name per role.
_QUERY = """
(call) @call
[(if_statement) (for_statement) (while_statement)] @cc_depth
(elif_clause) @elif
[(conditional_expression) (except_clause) (boolean_operator) (for_in_clause)] @cc
[(with_statement) (try_statement)] @depth
(attribute object: (identifier) @_obj attribute: (identifier) @self_attr (#eq? @_obj "self"))
(assignment left: [(attribute object: (identifier) @_o1 (#eq? @_o1 "self"))
                   (pattern_list (attribute object: (identifier) @_o2 (#eq? @_o2 "self")))
                   (tuple_pattern (attribute object: (identifier) @_o3 (#eq? @_o3 "self")))] @_lhs) @store
(augmented_assignment left: (attribute object: (identifier) @_o4 (#eq? @_o4 "self"))) @update
"""


@dataclass(slots=True)
class CallSite:
    """One call inside a node function: the called name and its argument kinds (for call-site specificity)."""
    name: str                  # short callee name: ``f`` for ``f(..)``, ``m`` for ``x.y.m(..)``
    receiver: str | None       # receiver text (``self``, ``os.path``; "" for other expressions); None: a bare name
    n_literal: int
    n_name: int
    n_other: int
    n_keyword: int


@dataclass(slots=True)
class FunctionInfo:
    qualname: str              # ``f`` or ``Class.method`` or ``Outer.Inner.method``
    name: str
    class_name: str | None     # qualified owning class
    start_line: int            # 1-based ``def`` line (decorators excluded, as ``ast`` lineno)
    end_line: int              # last line of code of the body (trailing comments excluded, as ``ast``)
    sig_end_line: int          # line of the ``:`` closing the signature
    body_line: int             # first line of the body block
    params: list[str]          # positional-or-keyword parameter names (``ast`` ``args.args``)
    has_return_type: bool
    has_param_types: bool
    has_docstring: bool
    is_async: bool
    decorators: list[str]
    cc: int
    depth: int
    calls: list[CallSite] = field(default_factory=list)
    self_reads: list[str] = field(default_factory=list)
    self_writes: list[str] = field(default_factory=list)
    text_sha: str = ""         # sha1 of the function's lines (``def`` .. end), rstripped: the masking check

    @property
    def loc(self) -> int:
        return self.end_line - self.start_line + 1

    @property
    def self_attrs(self) -> frozenset[str]:
        return frozenset(self.self_reads) | frozenset(self.self_writes)


@dataclass(slots=True)
class ClassInfo:
    qualname: str
    bases: list[str]           # source text of positional base expressions
    methods: list[str]         # short names of the methods that are graph nodes
    start_line: int
    end_line: int


@dataclass(slots=True)
class ImportBinding:
    """``alias`` bound in the module: to module ``module`` (``attr`` None) or to ``module.attr``."""
    alias: str
    module: str                # absolute dotted name (relative imports resolved against the file's module)
    attr: str | None


@dataclass(slots=True)
class FileStructure:
    """Everything the graph and scoring need from one file (no content, no tree)."""
    record_id: str             # the SourceFile's record id
    repo: str
    commit: str
    path: str
    module: str                # dotted module name from the path (``a/b/__init__.py`` → ``a.b``)
    n_lines: int
    n_chars: int               # len(content): what the repo-level context budget counts
    license: str
    source_uri: str
    source_sha256: str
    functions: list[FunctionInfo]
    classes: list[ClassInfo]
    imports: list[ImportBinding]
    star_imports: list[str]

    @property
    def key(self) -> str:
        """``repo@commit:path`` — the join key with the file's content (``mine.file_key``)."""
        return f"{self.repo}@{self.commit}:{self.path}"


def module_name(path: str) -> str:
    """Dotted module name of a repo-relative path."""
    parts = path[:-3].split("/") if path.endswith(".py") else path.split("/")
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def resolve_relative(module: str, is_package: bool, level: int, name: str) -> str:
    """Absolute module for ``from <level dots><name> import ...`` inside ``module``."""
    base = module.split(".") if module else []
    if not is_package:
        base = base[:-1]
    if level > 1:
        base = base[: max(0, len(base) - (level - 1))]
    return ".".join([*base, *([name] if name else [])])


def span_sha(lines: list[str], start_line: int, end_line: int) -> str:
    """Hash of lines ``start_line..end_line`` (1-based, inclusive; ``lines`` = ``text.split("\\n")``), rstripped."""
    return hashlib.sha1("\n".join(lines[start_line - 1:end_line]).rstrip().encode("utf-8")).hexdigest()


def count_lines(text: str) -> int:
    """Lines as tree-sitter and ``ast`` count them ("\\n"-terminated; a last line without newline counts)."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


class FileParser:
    """Holds the tree-sitter parser and query; call it on a SourceFile dict."""

    def __init__(self, max_bytes: int = 1 << 20):
        import tree_sitter_python as tspython
        from tree_sitter import Language, Parser, Query

        self.language = Language(tspython.language())
        self.parser = Parser(self.language)
        self.query = Query(self.language, _QUERY)
        self.max_bytes = max_bytes

    def __call__(self, src: dict[str, Any]) -> FileStructure | Reject:
        """Parse one SourceFile; a ``Reject`` for files that cannot be used.

        The walk allocates many short-lived node wrappers and no cycles: it runs with the cyclic collector
        paused (see :func:`paused_gc`).
        """
        with paused_gc():
            return self._parse(src)

    def _parse(self, src: dict[str, Any]) -> FileStructure | Reject:
        content = src.get("content")
        loc = f"{src.get('commit') or ''}:{src.get('path')}"
        common = dict(uri=src.get("source_uri") or "", locator=loc, sha256=src.get("source_sha256") or "",
                      subject_id=src.get("record_id") or "")
        if isinstance(content, bytes):
            try:
                content = content.decode("utf-8")
            except UnicodeDecodeError as exc:
                return make_reject(STAGE, "not_utf8", f"invalid UTF-8 at byte {exc.start}", **common)
        if not content or not content.strip():
            return make_reject(STAGE, "empty_file", "no code", **common)
        data = content.encode("utf-8")
        if len(data) > self.max_bytes:
            return make_reject(STAGE, "too_large", f"{len(data)} bytes > {self.max_bytes}", **common)
        tree = self.parser.parse(data)
        root = tree.root_node
        if root.has_error:
            row = _first_error_row(root)
            return make_reject(STAGE, "syntax_error", f"tree-sitter ERROR/MISSING node near line {row + 1}",
                               excerpt=content.split("\n")[row][:200] if row >= 0 else "", **common)
        path = src["path"]
        module = module_name(path)
        is_package = path.endswith("__init__.py")
        functions, classes, fnodes = [], [], []
        imports: list[ImportBinding] = []
        stars: list[str] = []
        for child in root.named_children:
            _collect(child, None, functions, classes, fnodes)
            if child.type in ("import_statement", "import_from_statement"):
                _imports(child, module, is_package, imports, stars)
        if fnodes:
            _attach_items(self.query, root, functions, fnodes)
            lines = content.split("\n")
            for f in functions:
                f.text_sha = span_sha(lines, f.start_line, f.end_line)
            # a re-definition (property setter, platform variants) replaces the earlier node, as in the
            # reference's name-keyed graph
            last = {f.qualname: i for i, f in enumerate(functions)}
            functions = [f for i, f in enumerate(functions) if last[f.qualname] == i]
        return FileStructure(
            record_id=src.get("record_id") or "", repo=src.get("repo") or "", commit=src.get("commit") or "",
            path=path, module=module, n_lines=count_lines(content), n_chars=len(content),
            license=src.get("license") or "", source_uri=src.get("source_uri") or "",
            source_sha256=src.get("source_sha256") or src.get("content_sha256") or "",
            functions=functions, classes=classes, imports=imports, star_imports=stars)


def _first_error_row(node) -> int:
    cursor = node.walk()
    while True:
        n = cursor.node
        if n.type == "ERROR" or n.is_missing:
            return n.start_point.row
        if n.has_error and cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return -1


def _text(node) -> str:
    return node.text.decode("utf-8", errors="replace")


def _unwrap(node):
    """(definition node, decorator texts) for a possibly decorated definition."""
    if node.type == "decorated_definition":
        decs = [_text(c)[1:].strip() for c in node.named_children if c.type == "decorator"]
        return node.child_by_field_name("definition"), decs
    return node, []


def _collect(outer, cls: str | None, functions: list, classes: list, fnodes: list) -> None:
    """Top-level functions, class methods and nested classes (recursively), as in the reference.

    A function's calls are attributed over its decorated span (``ast.walk`` of a FunctionDef visits its
    decorators too).
    """
    node, decorators = _unwrap(outer)
    if node is None:
        return
    if node.type == "function_definition":
        functions.append(_function(node, cls, decorators))
        fnodes.append(outer)
    elif node.type == "class_definition":
        qual = f"{cls}.{_text(node.child_by_field_name('name'))}" if cls else _text(node.child_by_field_name("name"))
        sup = node.child_by_field_name("superclasses")
        bases = [_text(b) for b in sup.named_children if b.type in ("identifier", "attribute")] if sup else []
        info = ClassInfo(qualname=qual, bases=bases, methods=[], start_line=node.start_point.row + 1,
                         end_line=_last_code_row(node) + 1)
        classes.append(info)
        body = node.child_by_field_name("body")
        n_before = len(functions)
        for child in body.named_children if body else ():
            _collect(child, qual, functions, classes, fnodes)
        info.methods = list(dict.fromkeys(f.name for f in functions[n_before:] if f.class_name == qual))


def _last_code_row(node) -> int:
    """End row of the last non-comment descendant (``ast`` end_lineno ignores trailing comments)."""
    while node.child_count:
        last = None
        for i in range(node.child_count - 1, -1, -1):
            c = node.child(i)
            if c.type != "comment":
                last = c
                break
        if last is None:
            break
        node = last
    return node.end_point.row


def _function(node, cls: str | None, decorators: list[str]) -> FunctionInfo:
    name = _text(node.child_by_field_name("name"))
    params: list[str] = []
    has_param_types = False
    posonly_until = -1
    pnode = node.child_by_field_name("parameters")
    seen_star = False
    for p in pnode.named_children if pnode else ():
        t = p.type
        if t == "positional_separator":
            posonly_until = len(params)
            continue
        if t in ("keyword_separator", "list_splat_pattern", "dictionary_splat_pattern"):
            seen_star = seen_star or t != "dictionary_splat_pattern"
            continue
        if t in ("typed_parameter", "typed_default_parameter"):
            inner = p.named_children[0]
            if inner.type in ("list_splat_pattern", "dictionary_splat_pattern"):
                seen_star = seen_star or inner.type == "list_splat_pattern"
                continue
            has_param_types = True
            pname = _text(inner if t == "typed_parameter" else p.child_by_field_name("name"))
        elif t == "default_parameter":
            pname = _text(p.child_by_field_name("name"))
        elif t == "identifier":
            pname = _text(p)
        else:
            continue
        if not seen_star:
            params.append(pname)
    if posonly_until >= 0:
        params = params[posonly_until:]
    colon_row = node.start_point.row
    for c in node.children:
        if c.type == ":":
            colon_row = c.start_point.row
            break
    body = node.child_by_field_name("body")
    return FunctionInfo(
        qualname=f"{cls}.{name}" if cls else name, name=name, class_name=cls,
        start_line=node.start_point.row + 1, end_line=_last_code_row(node) + 1, sig_end_line=colon_row + 1,
        body_line=body.start_point.row + 1 if body is not None else colon_row + 1,
        params=params, has_return_type=node.child_by_field_name("return_type") is not None,
        has_param_types=has_param_types, has_docstring=_has_docstring(body),
        is_async=node.children[0].type == "async", decorators=decorators, cc=1, depth=0)


def _is_constant_string(node, allow_bytes: bool) -> bool:
    """An ``ast.Constant`` string: no f-string (the only kind with interpolations); bytes when allowed."""
    parts = node.named_children if node.type == "concatenated_string" else (node,)
    banned = b"fF" if allow_bytes else b"bBfF"
    for s in parts:
        if s.type == "comment":            # a comment between the pieces of an implicit concatenation
            continue
        start = s.child(0)
        if start is None or any(c in banned for c in start.text):
            return False
    return True


def _has_docstring(body) -> bool:
    if body is None:
        return False
    for i in range(body.named_child_count):     # (not ``named_children``: only the first statement matters)
        stmt = body.named_child(i)
        if stmt.type == "comment":
            continue
        if stmt.type != "expression_statement" or stmt.named_child_count != 1:
            return False
        expr = stmt.named_child(0)
        return expr.type in _STRINGS and _is_constant_string(expr, allow_bytes=False)   # str docstrings only
    return False


def _arg_kinds(args) -> tuple[int, int, int, int]:
    """(literal, name, other, keyword) counts of a call's arguments, as ``ast`` would classify them."""
    lit = name = other = kw = 0
    if args is None:
        return 0, 0, 0, 0
    if args.type == "generator_expression":
        return 0, 0, 1, 0
    for a in args.named_children:
        t = a.type
        if t == "identifier":                    # the common cases first
            name += 1
            continue
        if t in ("comment", "line_continuation"):
            continue
        while t == "parenthesized_expression" and a.named_child_count == 1:   # ast has no parentheses
            a = a.named_children[0]
            t = a.type
        if t in ("keyword_argument", "dictionary_splat"):
            kw += 1
        elif t == "identifier":
            name += 1
        elif t in _LITERALS or (t in _STRINGS and _is_constant_string(a, allow_bytes=True)):
            lit += 1
        else:
            other += 1
    return lit, name, other, kw


def _call_site(node) -> CallSite | None:
    fn = node.child_by_field_name("function")
    if fn is None:
        return None
    kind = fn.type
    if kind == "identifier":
        name, receiver = _text(fn), None
    elif kind == "attribute":
        attr = fn.child_by_field_name("attribute")
        obj = fn.child_by_field_name("object")
        if attr is None or obj is None:
            return None
        # only a dotted name can resolve (``self``, ``mod.sub``, ``Class``); other receivers stay anonymous
        name, receiver = _text(attr), (_text(obj) if obj.type in ("identifier", "attribute") else "")
    else:
        return None
    return CallSite(name, receiver, *_arg_kinds(node.child_by_field_name("arguments")))


def _attach_items(query, root, functions: list[FunctionInfo], fnodes: list) -> None:
    """Run one query over the file and hand every capture to the node function whose byte span holds it.

    Node functions never nest (methods sit in classes, nested functions are not nodes), so a sorted list of
    start bytes and a bisect find the owner in O(log n).
    """
    from tree_sitter import QueryCursor

    starts = [n.start_byte for n in fnodes]
    ends = [n.end_byte for n in fnodes]
    find = bisect.bisect_right

    def owned(nodes):
        """(owner index, node) for each node inside a node function."""
        for node in nodes:
            b = node.start_byte
            i = find(starts, b) - 1
            if i >= 0 and b < ends[i]:
                yield i, node

    caps = QueryCursor(query).captures(root)
    # the cursor's capture order is not stable across runs: document order keeps the call lists deterministic
    calls = sorted(caps.get("call", ()), key=lambda n: (n.start_byte, n.end_byte))
    for i, node in owned(calls):
        site = _call_site(node)
        if site is not None:
            functions[i].calls.append(site)
    cc = [1] * len(fnodes)
    ctl: list[list[tuple[int, int]]] = [[] for _ in fnodes]
    for i, _ in owned(caps.get("cc", ())):
        cc[i] += 1
    for i, node in owned(caps.get("cc_depth", ())):
        cc[i] += 1
        ctl[i].append((node.start_byte, node.end_byte))
    for i, node in owned(caps.get("elif", ())):
        cc[i] += 1
        # an elif is an If nested in the previous branch's orelse: its span runs to the end of the if
        ctl[i].append((node.start_byte, node.parent.end_byte))
    for i, node in owned(caps.get("depth", ())):
        ctl[i].append((node.start_byte, node.end_byte))
    reads: list[set[bytes]] = [set() for _ in fnodes]
    writes: list[set[bytes]] = [set() for _ in fnodes]
    # `self.x` on the left of `=` is a write (also inside a target tuple), of `+=` a read and a write
    stores = {n.start_byte for n in caps.get("_o1", ())} | {n.start_byte for n in caps.get("_o2", ())} \
        | {n.start_byte for n in caps.get("_o3", ())}
    updates = {n.start_byte for n in caps.get("_o4", ())}
    for i, node in owned(caps.get("self_attr", ())):
        name = node.text                      # decoded once per name below (UTF-8 keeps the sort order)
        start = node.parent.start_byte        # the attribute `self.x` starts where `self` does
        if start in stores or start in updates:
            writes[i].add(name)
        if start not in stores:
            reads[i].add(name)
    for i, f in enumerate(functions):
        f.cc = cc[i]
        if ctl[i]:
            f.depth = _max_nesting(ctl[i])
        f.self_reads = [n.decode("utf-8", errors="replace") for n in sorted(reads[i])]
        f.self_writes = [n.decode("utf-8", errors="replace") for n in sorted(writes[i])]


def _max_nesting(spans: list[tuple[int, int]]) -> int:
    """Maximum number of spans nested inside each other (spans are properly nested or disjoint)."""
    spans.sort(key=lambda s: (s[0], -s[1]))
    stack: list[int] = []
    best = 0
    for start, end in spans:
        while stack and stack[-1] <= start:
            stack.pop()
        stack.append(end)
        best = max(best, len(stack))
    return best


def _imports(node, module: str, is_package: bool, out: list[ImportBinding], stars: list[str]) -> None:
    if node.type == "import_statement":
        for item in node.named_children:
            if item.type == "dotted_name":
                full = _text(item)
                out.append(ImportBinding(full.split(".")[0], full.split(".")[0], None))
                if "." in full:  # ``import a.b`` also makes ``a.b.f()`` resolvable via the dotted receiver
                    out.append(ImportBinding(full, full, None))
            elif item.type == "aliased_import":
                out.append(ImportBinding(_text(item.child_by_field_name("alias")),
                                         _text(item.child_by_field_name("name")), None))
        return
    mod_node = node.child_by_field_name("module_name")
    if mod_node is None:
        return
    if mod_node.type == "relative_import":
        prefix = next((c for c in mod_node.named_children if c.type == "import_prefix"), None)
        level = _text(prefix).count(".") if prefix is not None else 0
        dotted = next((c for c in mod_node.named_children if c.type == "dotted_name"), None)
        base = resolve_relative(module, is_package, level, _text(dotted) if dotted is not None else "")
    else:
        base = _text(mod_node)
    for item in node.children_by_field_name("name"):
        if item.type == "dotted_name":
            name = _text(item)
            out.append(ImportBinding(name, base, name))
        elif item.type == "aliased_import":
            out.append(ImportBinding(_text(item.child_by_field_name("alias")), base,
                                     _text(item.child_by_field_name("name"))))
    if any(c.type == "wildcard_import" for c in node.named_children):
        stars.append(base)


def parse_fn(max_bytes: int):
    """The ``fim_parse`` stage function: a source file → its structure (its functions counted) or a reject."""
    parser = FileParser(max_bytes=max_bytes)

    def parse(src: dict[str, Any]) -> list:
        out = parser(src)
        return [out] if isinstance(out, Reject) else [Info(functions=len(out.functions)), out]
    return parse
