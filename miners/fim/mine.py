"""The FIM miner end to end, as plain functions the Beam pipeline wires up (and tests call directly).

parse (per file) → :func:`select_repo` (per repository: graph, scores, singles, groups, and the context files a
repo-level sample shows; only structures in memory) → :func:`mixture_fractions` over all targets +
:func:`apply_mixture` (single/pair/triple ratios, applied before any sample text is built) → :func:`emit_samples`
(per file, given its content and its selection: mask, validate, format). :func:`mine_files` runs the whole chain
in-process.
"""
from __future__ import annotations

import dataclasses
import hashlib
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from swemine.corpora.records import Filtered, Reject, content_id, dumps_extra, make_filtered, make_reject
from swemine.miners.fim.formats import (
    FAMILIES,
    FIM_SPLITS,
    FORMATS,
    SPECIAL_POLICIES,
    chat_answer,
    chat_prompt,
    count_special,
    fit_context,
    layout,
    neutralise,
    render,
)
from swemine.miners.fim.graph import RepoGraph, build_graph
from swemine.miners.fim.groups import select_groups
from swemine.miners.fim.masking import FileText, Masked, MaskError, mask
from swemine.miners.fim.parse import STAGE as PARSE_STAGE
from swemine.miners.fim.parse import FileParser, FileStructure, FunctionInfo
from swemine.miners.fim.scoring import FimConfig, Scored, file_in_bounds, select_singles
from swemine.runtime import paused_gc

SELECT_STAGE = "fim_select"
EMIT_STAGE = "fim_emit"
MIX_STAGE = "fim_mix"
SPECIAL_IN_CONTENT = "special_token_in_content"


class SpecialTokenInContent(Exception):
    """The sample's content holds special-token strings and the policy is ``drop``."""


@dataclass
class Target:
    """One sample's masked function(s) with their scores."""
    group_type: str                 # "single" or a topology
    functions: list[FunctionInfo]
    scored: Scored
    member_scores: list[Scored]
    coupling: float | None = None


@dataclass
class FileSelection:
    """What the repository stage decided for one file (no content: the file's text meets it by ``key``)."""
    key: str
    structure: FileStructure
    graph_stats: dict[str, int]
    targets: list[Target] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)
    context: list[str] = field(default_factory=list)   # repo-level layout: the files it depends on that fit


def repo_key(src: dict[str, Any]) -> str:
    return f"{src.get('repo') or ''}@{src.get('commit') or ''}"


def file_key(src: dict[str, Any]) -> str:
    return f"{repo_key(src)}:{src['path']}"


def select_repo(structures: list[FileStructure], cfg: FimConfig) -> Iterator[FileSelection | Filtered | Reject]:
    """Build the repository's graph and pick the singles, pairs and triples of every file. A file whose
    selection fails becomes a reject of its own: the repository's other files go on."""
    structures = sorted({s.path: s for s in structures}.values(), key=lambda s: s.path)   # a repo listed twice
    with paused_gc():
        rg = build_graph(structures, cross_file=cfg.cross_file)
    for fs in structures:
        try:
            with paused_gc():
                sel = _select_file(rg, fs, cfg)
        except Exception as exc:  # noqa: BLE001 - one file's failure is that file's counted reject
            yield make_reject(SELECT_STAGE, f"exception:{type(exc).__name__}", str(exc)[:500], uri=fs.source_uri,
                              locator=f"{fs.commit}:{fs.path}", sha256=fs.source_sha256, subject_id=fs.record_id)
            continue
        yield sel


def _select_file(rg: RepoGraph, fs: FileStructure, cfg: FimConfig) -> FileSelection | Filtered:
    """One file's selection (or its ``Filtered`` record when the file is outside the line bounds)."""
    out_of_bounds = file_in_bounds(fs, cfg)
    if out_of_bounds:
        return make_filtered(SELECT_STAGE, out_of_bounds, {
            "record_id": fs.record_id, "repo": fs.repo, "path": fs.path, "source_uri": fs.source_uri,
            "source_locator": f"{fs.commit}:{fs.path}", "source_sha256": fs.source_sha256},
            "source_file", {"file_lines": fs.n_lines, "bounds": [cfg.min_file_lines, cfg.max_file_lines]})
    scores: dict[str, Scored] = {}
    singles, skipped = select_singles(rg, fs, cfg, scores)
    pairs, triples, g_skipped = select_groups(rg, fs, cfg, scores)
    for k, v in g_skipped.items():
        skipped[k] = skipped.get(k, 0) + v
    # what travels on is what the samples need: the targets' functions without their call sites and attribute
    # uses (the graph's inputs, many small objects), and the structure without its functions
    fn: dict[str, FunctionInfo] = {}

    def bare(nid: str) -> FunctionInfo:
        if nid not in fn:
            fn[nid] = dataclasses.replace(rg.fn(nid), calls=[], self_reads=[], self_writes=[])
        return fn[nid]

    targets = [Target("single", [bare(s.nid)], s, [s]) for s in singles]
    for g in pairs + triples:
        targets.append(Target(g.group_type, [bare(m) for m in g.members], g.scored, g.member_scores, g.coupling))
    deps = rg.dependencies(fs.path)[:cfg.repo_context_files] if targets else []
    context = fit_context([(p, rg.files[p].n_chars) for p in deps], cfg.repo_context_chars)
    slim = dataclasses.replace(fs, functions=[], classes=[], imports=[], star_imports=[])
    return FileSelection(fs.key, slim, rg.file_stats(fs.path), targets, skipped, context)


def _target_row(fn: FunctionInfo, s: Scored) -> dict[str, Any]:
    return {"func_name": fn.qualname, "start_line": fn.start_line, "end_line": fn.end_line, "loc": fn.loc,
            "cyclomatic_complexity": fn.cc, "max_depth": fn.depth, "complexity": s.complexity,
            "inferability": s.inferability, "fim_score": s.fim_score, "difficulty": s.difficulty}


def sample_id(fs: FileStructure, t: Target, fmt: str, family: str) -> str:
    """Content-hash id of the sample ``t`` of file ``fs`` in ``fmt`` (known before the row is built)."""
    return content_id("fim", fs.repo, fs.commit, fs.path, fs.source_sha256,
                      [(f.qualname, f.start_line) for f in t.functions], fmt, family if fmt != "chat" else "")


def _neutral_middle(middle: str, spans: list[tuple[int, int]]) -> tuple[str, list[tuple[int, int]]]:
    """Neutralise ``middle`` piece by piece between the span bounds (no token string crosses a line, and
    the bounds are line starts), moving the spans with the inserted characters."""
    cuts = sorted({0, len(middle), *(x for span in spans for x in span)})
    moved, out = {0: 0}, []
    for a, b in zip(cuts, cuts[1:]):
        out.append(neutralise(middle[a:b]))
        moved[b] = moved[a] + len(out[-1])
    return "".join(out), [(moved[a], moved[b]) for a, b in spans]


def _special_content(m: Masked, context: list[tuple[str, str]], special_tokens: str) -> tuple[Masked, list, int]:
    """Count the special-token strings in the sample's content; neutralise them, or raise
    :class:`SpecialTokenInContent` when ``special_tokens`` is ``drop``."""
    n = sum(map(count_special, [m.prefix, m.middle, m.suffix, *(c for _, c in context)]))
    if not n:
        return m, context, 0
    if special_tokens == "drop":
        raise SpecialTokenInContent(n)
    middle, spans = _neutral_middle(m.middle, m.spans)
    m = Masked(neutralise(m.masked_text), neutralise(m.prefix), middle, neutralise(m.suffix),
               [neutralise(f) for f in m.functions], spans)
    return m, [(p, neutralise(c)) for p, c in context], n


def build_row(text: FileText, sel: FileSelection, t: Target, fmt: str, family: str, config_hash: str,
              context: list[tuple[str, str]] = (), special_tokens: str = "neutralise") -> dict[str, Any]:
    """One ``FimSample`` row (raises :class:`MaskError` when the target fails validation, and
    :class:`SpecialTokenInContent` when its content holds special-token strings under ``drop``)."""
    fs = sel.structure
    m = mask(text, t.functions, with_masked_text=fmt == "chat")
    context = list(context) if fmt == "repo" else []
    m, context, n_special = _special_content(m, context, special_tokens)
    names = [f.qualname for f in t.functions]
    n = len(t.functions)
    s = t.scored
    extra = {"inferability_parts": [ms.parts for ms in t.member_scores],
             "decorators": [f.decorators for f in t.functions]}
    if n_special:
        extra["special_tokens_neutralised"] = n_special
    row: dict[str, Any] = {
        "record_id": sample_id(fs, t, fmt, family),
        "repo": fs.repo, "commit": fs.commit, "path": fs.path, "license": fs.license,
        "fim_split": FIM_SPLITS[n], "group_type": t.group_type, "format": fmt,
        "model_family": family if fmt != "chat" else None, "func_name": "+".join(names),
        "start_line": t.functions[0].start_line, "end_line": t.functions[-1].end_line,
        "loc": sum(f.loc for f in t.functions), "cyclomatic_complexity": sum(f.cc for f in t.functions),
        "max_depth": max(f.depth for f in t.functions), "complexity": s.complexity,
        "inferability": s.inferability, "score": s.score, "difficulty": s.difficulty, "penalty": s.penalty,
        "coupling": t.coupling, "fim_score": s.fim_score,
        "targets": [_target_row(f, ms) for f, ms in zip(t.functions, t.member_scores)],
        "file_lines": fs.n_lines, "graph_stats": sel.graph_stats, "extra_json": dumps_extra(extra),
        "source_uri": fs.source_uri, "source_locator": f"{fs.commit}:{fs.path}#L{t.functions[0].start_line}",
        "source_sha256": fs.source_sha256, "config_hash": config_hash,
    }
    if fmt == "chat":
        row["messages"] = [{"role": "user", "content": chat_prompt(fs.path, names, t.group_type, m.masked_text)},
                           {"role": "assistant", "content": chat_answer(names, m.functions)}]
        gs = sel.graph_stats
        row["metadata"] = {
            "sample_id": fs.record_id, "repo_id": fs.repo, "repository_url": fs.source_uri, "file_path": fs.path,
            "line_num": t.functions[0].start_line, "func_num": n, "license": fs.license, "file_lines": fs.n_lines,
            "graph_stats": {k: gs[k] for k in ("total_functions", "call_edges", "sibling_pairs")},
            "func_name": row["func_name"], "start_line": row["start_line"], "end_line": row["end_line"],
            "loc": row["loc"], "complexity": s.complexity, "inferability": s.inferability,
            "fim_score": s.fim_score, "difficulty": s.difficulty}
    else:
        segments = layout(fmt, family, m.prefix, m.middle, m.suffix, repo=fs.repo, path=fs.path, context=context)
        in_bodies = sum(m.middle.count("\n", a, b) for a, b in m.spans)
        row.update(prefix=m.prefix, middle=m.middle, suffix=m.suffix, text=render(segments),
                   middle_spans=[{"start": a, "end": b} for a, b in m.spans],
                   middle_between_lines=m.middle.count("\n") - in_bodies,
                   context=[{"path": p, "content": c} for p, c in context] if fmt == "repo" else None)
    return row


def emit_samples(src: dict[str, Any], sel: FileSelection, fmt: str, family: str, config_hash: str = "",
                 context: dict[str, str] | None = None, special_tokens: str = "neutralise",
                 tally: dict[str, int] | None = None) -> Iterator[dict | Reject]:
    """Every selected target of one file as a row; a target that fails validation becomes a reject, one whose
    content holds special-token strings is counted in ``tally`` and neutralised (or filtered under ``drop``).

    ``context`` (path → content) holds the files of ``sel.context`` for the repo-level layout
    (:func:`context_texts`).
    """
    text = FileText(src["content"])
    ctx = [(p, context[p]) for p in sel.context if p in context] if context else []
    fs = sel.structure
    for t in sel.targets:
        locator = f"{fs.commit}:{fs.path}#L{t.functions[0].start_line}"
        try:
            with paused_gc():
                row = build_row(text, sel, t, fmt, family, config_hash, ctx, special_tokens)
        except MaskError as exc:
            yield make_reject(EMIT_STAGE, exc.reason, str(exc), uri=fs.source_uri, locator=locator,
                              sha256=fs.source_sha256, subject_id=fs.record_id, config_hash=config_hash)
            continue
        except SpecialTokenInContent as exc:
            row = {"record_id": sample_id(fs, t, fmt, family), "repo": fs.repo, "path": fs.path,
                   "func_name": "+".join(f.qualname for f in t.functions), "source_uri": fs.source_uri,
                   "source_locator": locator, "source_sha256": fs.source_sha256, "config_hash": config_hash}
            yield make_filtered(EMIT_STAGE, SPECIAL_IN_CONTENT, row, "fim_sample", {"occurrences": exc.args[0]})
            continue
        if tally is not None and "special_tokens_neutralised" in row["extra_json"]:
            tally[SPECIAL_IN_CONTENT] = tally.get(SPECIAL_IN_CONTENT, 0) + 1
        yield row


def context_keys(sel: FileSelection) -> list[str]:
    """The file keys (:func:`file_key`) of ``sel.context``: the files its repo-level samples show."""
    prefix = sel.key[:len(sel.key) - len(sel.structure.path)]
    return [prefix + p for p in sel.context]


def context_texts(sel: FileSelection, texts: Mapping[str, str]) -> dict[str, str]:
    """``{path: content}`` of the files of ``sel.context`` that ``texts`` (file key → content) holds."""
    return {p: texts[k] for p, k in zip(sel.context, context_keys(sel)) if k in texts}


def check_format(fmt: str, family: str, special_tokens: str = "neutralise") -> None:
    """Raise ``ValueError`` for an unknown format, family, special-token policy, or a repo-level layout the
    family lacks."""
    if special_tokens not in SPECIAL_POLICIES:
        raise ValueError(f"unknown special-token policy {special_tokens!r}; one of {SPECIAL_POLICIES}")
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}")
    if fmt != "chat" and family not in FAMILIES:
        raise ValueError(f"unknown model family {family!r}")
    if fmt == "repo" and not FAMILIES[family].repo_name:
        raise ValueError(f"{family} has no repo-level tokens")


def mixture_fractions(counts: dict[int, int], ratios: tuple[float, ...]) -> dict[int, float]:
    """Keep-fraction per group size so kept counts follow ``ratios`` (single, pair, triple) at the largest
    total the available counts allow; sizes with nothing available are left out of the ratio."""
    if not ratios:
        return {k: 1.0 for k in counts}
    weights = {k: ratios[k - 1] for k in counts if k - 1 < len(ratios) and ratios[k - 1] > 0 and counts[k] > 0}
    if not weights:
        return {k: 0.0 for k in counts}
    norm = sum(weights.values())
    budget = min(counts[k] / (w / norm) for k, w in weights.items())
    return {k: (min(1.0, budget * weights[k] / norm / counts[k]) if k in weights else 0.0) for k in counts}


def keep_for_mixture(record_id: str, fraction: float) -> bool:
    """Deterministic uniform sampling: keep if the id's hash falls below ``fraction``."""
    if fraction >= 1.0:
        return True
    h = int.from_bytes(hashlib.sha256(f"mix:{record_id}".encode()).digest()[:8], "big")
    return h < fraction * 2 ** 64


@dataclass
class MineResult:
    rows: list[dict]
    rejects: list[dict]
    filtered: list[dict]
    stats: dict[str, int]


def mine_files(files: Iterable[dict], cfg: FimConfig | None = None, fmt: str = "chat",
               family: str = "qwen2.5-coder", config_hash: str = "", parser: FileParser | None = None,
               special_tokens: str = "neutralise") -> MineResult:
    """The whole miner in-process over SourceFile dicts (any number of repos)."""
    cfg = cfg or FimConfig()
    check_format(fmt, family, special_tokens)
    parser = parser or FileParser()
    by_repo: dict[str, list[FileStructure]] = defaultdict(list)
    contents: dict[str, dict] = {}
    texts: dict[str, str] = {}          # file key → content, of every file for the repo-level layout
    rejects, filtered, rows = [], [], []
    stats: dict[str, int] = defaultdict(int)
    for src in files:
        if isinstance(src, Reject):
            rejects.append(src)
            continue
        stats["files"] += 1
        out = parser(src)
        if isinstance(out, Reject):
            rejects.append(out)
            continue
        stats["functions"] += len(out.functions)
        by_repo[repo_key(src)].append(out)
        contents[file_key(src)] = src
        if fmt == "repo":
            texts[file_key(src)] = src["content"]
    selections: list[FileSelection] = []
    for structures in by_repo.values():
        for sel in select_repo(structures, cfg):
            (filtered if isinstance(sel, Filtered) else selections).append(sel)
    counts = {k: 0 for k in FIM_SPLITS}
    for sel in selections:
        for n, _ in target_counts(sel):
            counts[n] += 1
            stats[f"selected_{FIM_SPLITS[n]}"] += 1
    fractions = mixture_fractions(counts, cfg.mixture)
    for sel in selections:
        sel, dropped = apply_mixture(sel, fractions, fmt, family, config_hash)
        filtered.extend(dropped)
        ctx = context_texts(sel, texts)
        for r in emit_samples(contents[sel.key], sel, fmt, family, config_hash, ctx, special_tokens, stats):
            (rejects if isinstance(r, Reject) else filtered if isinstance(r, Filtered) else rows).append(r)
    stats["samples"] = len(rows)
    return MineResult(rows, rejects, filtered, dict(stats))


def selection_info(sel: FileSelection) -> dict[str, int]:
    """``fim_select``'s info counts of one file: its targets by split, its candidates passed over by reason."""
    info = {f"skip_{reason}": n for reason, n in sel.skipped.items()}
    for t in sel.targets:
        name = f"selected_{FIM_SPLITS[len(t.functions)]}"
        info[name] = info.get(name, 0) + 1
    return info


def target_counts(sel: FileSelection) -> list[tuple[int, int]]:
    """(group size, 1) per target of a selection: the mixture's counts."""
    return [(len(t.functions), 1) for t in sel.targets]


def apply_mixture(sel: FileSelection, fractions: dict[int, float], fmt: str, family: str,
                  config_hash: str = "") -> tuple[FileSelection, list[Filtered]]:
    """Keep each target with its group size's fraction (deterministic by sample id); the others become
    ``Filtered`` records (slim: no file text)."""
    fs = sel.structure
    kept, dropped = [], []
    for t in sel.targets:
        sid = sample_id(fs, t, fmt, family)
        fraction = fractions.get(len(t.functions), 1.0)
        if keep_for_mixture(sid, fraction):
            kept.append(t)
            continue
        slim = {"record_id": sid, "repo": fs.repo, "commit": fs.commit, "path": fs.path,
                "fim_split": FIM_SPLITS[len(t.functions)], "group_type": t.group_type,
                "func_name": "+".join(f.qualname for f in t.functions), "start_line": t.functions[0].start_line,
                "end_line": t.functions[-1].end_line, "fim_score": t.scored.fim_score, "source_uri": fs.source_uri,
                "source_locator": f"{fs.commit}:{fs.path}#L{t.functions[0].start_line}",
                "source_sha256": fs.source_sha256, "config_hash": config_hash}
        dropped.append(make_filtered(MIX_STAGE, "mixture_quota", slim, "fim_sample", {"keep_fraction": fraction}))
    return dataclasses.replace(sel, targets=kept), dropped


#: The sample fields whose distribution a run's manifest reports.
DIST_FIELDS = ("loc", "complexity", "inferability", "fim_score", "difficulty")


def _percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    v = sorted(values)

    def q(p: float) -> float:
        return round(v[min(len(v) - 1, int(p * (len(v) - 1) + 0.5))], 4)
    return {"p10": q(0.1), "p50": q(0.5), "p90": q(0.9), "n": len(v)}


def fim_summary(samples: list[dict], stages: Mapping[str, Any]) -> dict[str, Any]:
    """A run's ``fim_counts`` (files, functions, selections, samples) and ``fim_distribution`` (p10/p50/p90 of
    :data:`DIST_FIELDS`, over all samples and per split) manifest entries, from its samples and stage counters."""
    dist = {"all": {f: _percentiles([s[f] for s in samples]) for f in DIST_FIELDS}}
    for split in FIM_SPLITS.values():
        part = [s for s in samples if s["fim_split"] == split]
        if part:
            dist[split] = {f: _percentiles([s[f] for s in part]) for f in DIST_FIELDS}
    parse, info = stages.get(PARSE_STAGE, {}), stages.get(SELECT_STAGE, {}).get("info", {})
    counts = {"files": parse.get("in", 0), "files_parsed": parse.get("out", 0),
              "functions": parse.get("info", {}).get("functions", 0),
              "selected_singles": info.get("selected_single_function", 0),
              "selected_pairs": info.get("selected_function_pair", 0),
              "selected_triples": info.get("selected_function_triple", 0),
              "samples": len(samples),
              SPECIAL_IN_CONTENT: sum(stages.get(EMIT_STAGE, {}).get(k, {}).get(SPECIAL_IN_CONTENT, 0)
                                      for k in ("info", "filtered"))}
    return {"fim_counts": counts, "fim_distribution": dist}
