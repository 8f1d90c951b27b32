"""Sample layouts (docs/outputs.md, FIM), the special-token strings mined content must not carry, and the
``FimSample`` Arrow schema.

- ``chat``: ``messages`` (user = the masked-file prompt, assistant = the original implementation in the
  ``### Implementation`` layout; the rationale comes from the optional LLM stage) plus a ``metadata`` struct
  with the fields of the published ``TIGER-Lab/FIM-Midtraining-400K`` rows.
- ``psm`` / ``spm``: raw special-token FIM for Qwen2.5-Coder, StarCoder(2) and DeepSeek-Coder, in ``text``,
  with ``prefix``/``middle``/``suffix`` kept beside it. SPM follows Bavarian/Megatron: ``[PRE][SUF] suf
  [MID] pre mid``.
- ``repo``: the repo-level layout each family published: the in-repo files the target file calls into
  (``context``), then the target's PSM sample. Qwen2.5-Coder: ``<|repo_name|>name\\n<|file_sep|>path\\n
  code\\n…<|file_sep|>path\\n<|fim_prefix|>pre…``; StarCoder2 (paper §5.1): ``<repo_name>name<file_sep>path\\n
  code…<file_sep><fim_prefix>path\\npre<fim_suffix>…`` (no newline after the name or a file, the path after
  ``<fim_prefix>``).

Every layout is a list of :class:`Segment` s: the miner joins them into ``text``, the launcher tokenizes the
text pieces and inserts the sentinels by id, so both read one definition. Raw FIM special tokens never appear
in chat samples (docs/outputs.md, FIM).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import pyarrow as pa

from swemine.corpora.records import PROVENANCE_FIELDS

FORMATS = ("chat", "psm", "spm", "repo")


@dataclass(frozen=True)
class FimTokens:
    """The special-token strings of one model family."""
    prefix: str
    suffix: str
    middle: str
    eos: str                            # the base model's end of document: ends every raw sample
    pad: str
    repo_name: str = ""
    file_sep: str = ""
    family: str = ""
    chat: tuple[str, ...] = ()          # the instruct checkpoints' chat-template tokens

    def required(self) -> tuple[str, ...]:
        """The three sentinels raw-FIM training cannot do without."""
        return (self.prefix, self.suffix, self.middle)

    def strings(self) -> tuple[str, ...]:
        """Every special-token string of the family."""
        return tuple(t for t in (self.prefix, self.suffix, self.middle, self.eos, self.pad, self.repo_name,
                                 self.file_sep, *self.chat) if t)


#: Exact special tokens per model family (docs/outputs.md, FIM). EOS strings of StarCoder and DeepSeek-Coder,
#: StarCoder2's repo tokens and the instruct checkpoints' chat tokens are written from the models' published
#: tokenizers, not read from a tokenizer file here; StarCoder2's repo layout is from its paper (section 5.1).
FAMILIES: dict[str, FimTokens] = {
    "qwen2.5-coder": FimTokens("<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>", "<|endoftext|>",
                               "<|fim_pad|>", "<|repo_name|>", "<|file_sep|>", family="qwen2.5-coder",
                               chat=("<|im_start|>", "<|im_end|>")),
    "starcoder": FimTokens("<fim_prefix>", "<fim_suffix>", "<fim_middle>", "<|endoftext|>", "<fim_pad>",
                           "<repo_name>", "<file_sep>", family="starcoder"),
    "deepseek-coder": FimTokens("<｜fim▁begin｜>", "<｜fim▁hole｜>", "<｜fim▁end｜>", "<｜end▁of▁sentence｜>", "",
                                family="deepseek-coder", chat=("<｜begin▁of▁sentence｜>", "<|EOT|>")),
}

#: Every supported family's special-token strings, longest first: mined content holding one verbatim would
#: become a real special token in a tokenizer that does not split them (an EOS mid-file, a turn cut in two).
SPECIAL_STRINGS: tuple[str, ...] = tuple(sorted({s for t in FAMILIES.values() for s in t.strings()},
                                                key=lambda s: (-len(s), s)))
#: Inserted after the first character of a special-token string found in content (U+200B ZERO WIDTH SPACE):
#: the text reads the same and no tokenizer matches it as the special token any more.
NEUTRALISER = "\u200b"
_SPECIAL_RE = re.compile("|".join(re.escape(s) for s in SPECIAL_STRINGS))
SPECIAL_POLICIES = ("neutralise", "drop")


def count_special(text: str) -> int:
    """Occurrences of any supported family's special-token strings in ``text``."""
    return sum(1 for _ in _SPECIAL_RE.finditer(text))


def neutralise(text: str) -> str:
    """``text`` with every special-token string broken by :data:`NEUTRALISER` after its first character."""
    return _SPECIAL_RE.sub(lambda m: m.group(0)[0] + NEUTRALISER + m.group(0)[1:], text)


FIM_SPLITS = {1: "single_function", 2: "function_pair", 3: "function_triple"}

GROUP_DESCRIPTIONS = {
    "caller_callee": "one of the masked functions calls the other",
    "mutual_call": "the masked functions call each other",
    "co_callee": "both masked functions are called by the same function",
    "sibling_coupled": "the masked functions are methods of the same class that share instance state",
    "call_chain": "the masked functions form a call chain (the first calls the second, which calls the third)",
    "hub": "one masked function calls the other two",
    "fan_in": "two of the masked functions call the third",
    "class_triad": "the masked functions are three methods of one class that share instance state",
}

_TARGET = pa.struct([
    pa.field("func_name", pa.string()), pa.field("start_line", pa.int32()), pa.field("end_line", pa.int32()),
    pa.field("loc", pa.int32()), pa.field("cyclomatic_complexity", pa.int32()), pa.field("max_depth", pa.int32()),
    pa.field("complexity", pa.float64()), pa.field("inferability", pa.float64()),
    pa.field("fim_score", pa.float64()), pa.field("difficulty", pa.float64()),
])
_GRAPH_STATS = pa.struct([
    pa.field("total_functions", pa.int32()), pa.field("call_edges", pa.int32()),
    pa.field("sibling_pairs", pa.int32()), pa.field("cross_file_in", pa.int32()),
    pa.field("cross_file_out", pa.int32()),
])
#: The published row's ``metadata`` (quality fields stay null until the critic stage fills them).
#: Our reading (not published): line_num = first target line, func_num = number of masked functions.
METADATA_TYPE = pa.struct([
    pa.field("sample_id", pa.string()), pa.field("repo_id", pa.string()), pa.field("repository_url", pa.string()),
    pa.field("file_path", pa.string()), pa.field("line_num", pa.int32()), pa.field("func_num", pa.int32()),
    pa.field("category", pa.string()), pa.field("description", pa.string()), pa.field("notes", pa.string()),
    pa.field("license", pa.string()), pa.field("file_lines", pa.int32()),
    pa.field("graph_stats", pa.struct([pa.field("total_functions", pa.int32()), pa.field("call_edges", pa.int32()),
                                       pa.field("sibling_pairs", pa.int32())])),
    pa.field("func_name", pa.string()), pa.field("start_line", pa.int32()), pa.field("end_line", pa.int32()),
    pa.field("loc", pa.int32()), pa.field("complexity", pa.float64()), pa.field("inferability", pa.float64()),
    pa.field("fim_score", pa.float64()), pa.field("difficulty", pa.float64()),
    pa.field("overall_score", pa.float64()), pa.field("is_feasible", pa.bool_()),
    pa.field("correctness", pa.float64()), pa.field("executability", pa.float64()),
    pa.field("api_usage", pa.float64()), pa.field("readability", pa.float64()),
    pa.field("completeness", pa.float64()),
])
_SPAN = pa.struct([pa.field("start", pa.int32()), pa.field("end", pa.int32())])
_CONTEXT_FILE = pa.struct([pa.field("path", pa.string()), pa.field("content", pa.large_string())])
MESSAGE_TYPE = pa.struct([pa.field("role", pa.string()), pa.field("content", pa.large_string())])

FIM_SCHEMA = pa.schema([
    pa.field("record_id", pa.string(), nullable=False),
    pa.field("repo", pa.string()),
    pa.field("commit", pa.string()),
    pa.field("path", pa.string()),                    # relative to the repository root
    pa.field("license", pa.string()),
    pa.field("fim_split", pa.string()),               # single_function | function_pair | function_triple
    pa.field("group_type", pa.string()),              # single | one of the eight topologies
    pa.field("format", pa.string()),                  # chat | psm | spm | repo
    pa.field("model_family", pa.string()),            # raw formats: qwen2.5-coder | starcoder | deepseek-coder
    pa.field("func_name", pa.string()),               # "+"-joined for groups
    pa.field("start_line", pa.int32()),               # first target's def line
    pa.field("end_line", pa.int32()),                 # last target's last line
    pa.field("loc", pa.int32()),                      # masked functions' LoC (summed for groups)
    pa.field("cyclomatic_complexity", pa.int32()),    # summed for groups
    pa.field("max_depth", pa.int32()),
    pa.field("complexity", pa.float64()),             # Ĥ (group: mean)
    pa.field("inferability", pa.float64()),           # Î (group: mean, intra-group information removed)
    pa.field("score", pa.float64()),                  # ĤÎ/(Ĥ+Î)
    pa.field("difficulty", pa.float64()),             # Δ
    pa.field("penalty", pa.float64()),                # ρ(Δ)
    pa.field("coupling", pa.float64()),               # groups only
    pa.field("fim_score", pa.float64()),
    pa.field("targets", pa.list_(_TARGET)),
    pa.field("file_lines", pa.int32()),
    pa.field("graph_stats", _GRAPH_STATS),
    pa.field("messages", pa.list_(MESSAGE_TYPE)),     # chat rows
    pa.field("metadata", METADATA_TYPE),              # chat rows: the published metadata
    pa.field("text", pa.large_string()),              # raw rows: the special-token training string
    pa.field("prefix", pa.large_string()),            # raw rows
    pa.field("middle", pa.large_string()),
    pa.field("suffix", pa.large_string()),
    pa.field("middle_spans", pa.list_(_SPAN)),        # raw rows: each target's body in ``middle`` (char offsets)
    pa.field("middle_between_lines", pa.int32()),     # raw groups: lines of ``middle`` between the targets
    pa.field("context", pa.list_(_CONTEXT_FILE)),     # repo rows: the files before the target, in order
    pa.field("extra_json", pa.string()),
    *PROVENANCE_FIELDS,
])


@dataclass(frozen=True)
class Segment:
    """One piece of a raw sample: a sentinel (``special``: inserted by id) or text the tokenizer reads as text.

    ``role``: ``head`` (sentinels, repo name, target path), ``file`` (a context file and its separator),
    ``prefix``, ``suffix`` (the target file around the hole) or ``middle`` (the hole, and the EOS that ends it):
    the launcher puts the loss on ``middle`` and trims a too-long sample by role.
    """
    text: str
    role: str
    special: bool = False


def _sentinel(text: str, role: str = "head") -> Segment:
    return Segment(text, role, True)


def _fim(t: FimTokens, fmt: str, prefix: str, middle: str, suffix: str, lead: tuple[Segment, ...] = ()) -> list:
    """PSM ``P [lead] pre S suf M mid EOS``; SPM (Bavarian/Megatron) ``P S suf M pre mid EOS``."""
    tail = [_sentinel(t.middle), Segment(middle, "middle"), _sentinel(t.eos, "middle")]
    if fmt == "spm":
        return [_sentinel(t.prefix), _sentinel(t.suffix), Segment(suffix, "suffix"), tail[0],
                Segment(prefix, "prefix"), *tail[1:]]
    return [_sentinel(t.prefix), *lead, Segment(prefix, "prefix"), _sentinel(t.suffix), Segment(suffix, "suffix"),
            *tail]


def _qwen_repo(t: FimTokens, repo: str, context, path: str, prefix: str, middle: str, suffix: str) -> list:
    """``<|repo_name|>name\\n`` + ``<|file_sep|>path\\ncode\\n`` per file + ``<|file_sep|>path\\n`` + PSM."""
    out = [_sentinel(t.repo_name), Segment(f"{repo}\n", "head")]
    for p, c in context:
        out += [_sentinel(t.file_sep, "file"), Segment(f"{p}\n{c}\n", "file")]
    return out + [_sentinel(t.file_sep), Segment(f"{path}\n", "head"), *_fim(t, "psm", prefix, middle, suffix)]


def _starcoder2_repo(t: FimTokens, repo: str, context, path: str, prefix: str, middle: str, suffix: str) -> list:
    """``<repo_name>name`` + ``<file_sep>path\\ncode`` per file + ``<file_sep><fim_prefix>path\\npre…``."""
    out = [_sentinel(t.repo_name), Segment(repo, "head")]
    for p, c in context:
        out += [_sentinel(t.file_sep, "file"), Segment(f"{p}\n{c}", "file")]
    return out + [_sentinel(t.file_sep), *_fim(t, "psm", prefix, middle, suffix, (Segment(f"{path}\n", "head"),))]


REPO_LAYOUTS = {"qwen2.5-coder": _qwen_repo, "starcoder": _starcoder2_repo}


def layout(fmt: str, family: str, prefix: str, middle: str, suffix: str, *, repo: str = "", path: str = "",
           context: list[tuple[str, str]] = ()) -> list[Segment]:
    """The raw sample of ``fmt`` (psm/spm/repo) for ``family`` as segments (``context``: (path, code) pairs)."""
    t = FAMILIES[family]
    if fmt != "repo":
        return _fim(t, fmt, prefix, middle, suffix)
    if family not in REPO_LAYOUTS:
        raise ValueError(f"{family} has no repo-level tokens")
    return REPO_LAYOUTS[family](t, repo, context, path, prefix, middle, suffix)


def render(segments: list[Segment]) -> str:
    """The training string of a layout (what the ``text`` column holds)."""
    return "".join(s.text for s in segments)


def fit_context(sizes: list[tuple[str, int]], max_chars: int | None) -> list[str]:
    """The leading context files (``(path, characters)``, in order) whose code fits in ``max_chars`` in total
    (all when ``None``)."""
    budget = max_chars if max_chars is not None else float("inf")
    kept = []
    for p, n in sizes:
        if n > budget:
            break
        budget -= n
        kept.append(p)
    return kept


#: What the user turn asks the answer to hold: without a rationale stage the answer is the implementation only.
ANSWER_SECTIONS = {
    (False, "single"): "Answer with a `### Implementation` section holding the whole function (signature "
                       "included) in one ```python block.",
    (True, "single"): "Reason step by step from its signature, type hints and usages. Answer with a `### Reasoning` "
                      "section, then a `### Implementation` section holding the whole function (signature "
                      "included) in one ```python block.",
    (False, "group"): "Answer with a `### Implementation` section with one `### Function i: name` heading and "
                      "```python block per function, in the order listed.",
    (True, "group"): "Reason step by step about each function and how they use one another. Answer with a "
                     "`### Reasoning` section, then `### Implementation` with one `### Function i: name` heading "
                     "and ```python block per function, in the order listed.",
}


def chat_prompt(path: str, names: list[str], group_type: str, masked_text: str, reasoning: bool = False) -> str:
    """The user turn: the masked file and what to produce (docs/mining.md; in our own words). ``reasoning``
    asks for a ``### Reasoning`` section too (only when a rationale stage writes one into the answer)."""
    if len(names) == 1:
        head = (f"You are an expert Python programmer. In the Python file below, the body of the function "
                f"`{names[0]}` has been replaced by the line `# <MASKED_FUNCTION_BODY>`.\n\n"
                "Work out what it must do from the imports, the other functions and classes, the places that "
                "call it and the helpers it can call, then write its complete body.\n\n"
                + ANSWER_SECTIONS[reasoning, "single"])
    else:
        listed = ", ".join(f"`{n}`" for n in names)
        head = (f"You are an expert Python programmer. In the Python file below, the bodies of {len(names)} "
                f"related functions ({listed}) have been replaced by `# <MASKED_FUNCTION_BODY>`; "
                f"{GROUP_DESCRIPTIONS.get(group_type, 'they depend on each other')}.\n\n"
                "Work out what each must do from the rest of the file and from how they use one another; keep "
                "the implementations consistent with each other.\n\n"
                + ANSWER_SECTIONS[reasoning, "group"])
    return f"{head}\n\nFile: `{path}`\n\n```python\n{masked_text}\n```"


def asks_for_reasoning(prompt: str) -> str:
    """``prompt`` (a :func:`chat_prompt`) changed to ask for a ``### Reasoning`` section before the implementation."""
    for kind in ("single", "group"):
        if ANSWER_SECTIONS[False, kind] in prompt:
            return prompt.replace(ANSWER_SECTIONS[False, kind], ANSWER_SECTIONS[True, kind], 1)
    return prompt


def requested_sections(prompt: str) -> list[str]:
    """The ``### `` sections a :func:`chat_prompt` asks the answer to start with, in order."""
    for (reasoning, _kind), text in ANSWER_SECTIONS.items():
        if text in prompt:
            return ["Reasoning", "Implementation"] if reasoning else ["Implementation"]
    return []


def chat_answer(names: list[str], functions: list[str], rationale: str = "") -> str:
    """The assistant turn: optional rationale, then the original implementation(s)."""
    parts = [f"### Reasoning\n{rationale.strip()}\n\n"] if rationale else []
    parts.append("### Implementation\n")
    if len(functions) == 1:
        parts.append(f"```python\n{functions[0].rstrip()}\n```")
    else:
        parts.extend(f"### Function {i}: {n}\n```python\n{src.rstrip()}\n```\n"
                     for i, (n, src) in enumerate(zip(names, functions), 1))
    return "".join(parts).rstrip() + "\n"
