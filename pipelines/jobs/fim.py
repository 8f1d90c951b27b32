"""``swemine run fim``: dependency-graph-selected, function-aware FIM samples from repositories.

Stages: ``fim_read`` (repo spec → SourceFiles) → ``fim_parse`` (tree-sitter structure, per file; no tree
is kept) → group the structures by repository → ``fim_select`` (graph, Ĥ/Î scoring, singles, pairs, triples,
repo-level context files; structures only) → ``fim_mix`` (single/pair/triple ratios over all targets, before any
text exists) → ``fim_emit`` (mask, validate, format) on each source file where it is: the kept selections reach
the files as a side input (``{file key: packed selection}``), so no file's text is grouped or joined. ``--format
repo`` adds a second side input: the text of the files the kept selections show as context, and of no other.
A file read more than once (a repository listed twice) is emitted from one of its copies: the file keys are
counted, and only the repeated ones' copies meet in a combiner. With no ``--repos`` it mines the running
interpreter's standard library.
"""
from __future__ import annotations

import apache_beam as beam

from swemine.corpora.records import Info
from swemine.corpora.repos import spec_source_files
from swemine.manifests.shards import read_rows
from swemine.miners.fim.formats import FIM_SCHEMA, FIM_SPLITS
from swemine.miners.fim.mine import (
    DIST_FIELDS,
    EMIT_STAGE,
    MIX_STAGE,
    SELECT_STAGE,
    FileSelection,
    apply_mixture,
    check_format,
    context_keys,
    context_texts,
    emit_samples,
    file_key,
    fim_summary,
    mixture_fractions,
    select_repo,
    selection_info,
    target_counts,
)
from swemine.miners.fim.parse import STAGE as PARSE_STAGE
from swemine.miners.fim.parse import parse_fn
from swemine.miners.fim.rationale import STAGE as RATIONALE_STAGE
from swemine.miners.fim.rationale import Rationale
from swemine.miners.fim.scoring import FimConfig
from swemine.pipelines.configs import FimJob, ResolvedFim
from swemine.pipelines.engine.runner import Built, PipelineSpec
from swemine.pipelines.engine.stage import FILTERED, AnyCopy, Counters, apply_stage, gather, pack, unpack, unpack_group
from swemine.pipelines.outputs import FIM as OUTPUT
from swemine.pipelines.steps.filtering import apply_filters

READ_STAGE = "fim_read"


class _Mix(beam.DoFn):
    """The mixture on each file's targets, before any text is built: counts ``fim_mix.in/out/filtered``."""

    def __init__(self, fmt: str, family: str):
        self.fmt, self.family = fmt, family

    stage = MIX_STAGE

    def setup(self):
        self.counters = Counters(self.stage)

    def process(self, sel, fractions):
        self.counters.inc("in", len(sel.targets))
        kept, dropped = apply_mixture(sel, fractions, self.fmt, self.family)
        self.counters.inc("out", len(kept.targets))
        for f in dropped:
            self.counters.inc("filtered.mixture_quota")
            yield beam.pvalue.TaggedOutput(FILTERED, dict(f))
        if kept.targets:
            yield kept


def _once_each(files):
    """``files`` with every file key once: the keys are counted, and the copies of a key read more than once (a
    repository listed twice: the same file) meet in a combiner that passes one of them on."""
    keyed = files | "KeyFile" >> beam.Map(lambda src: (file_key(src), src))
    repeated = beam.pvalue.AsDict(keyed | "FileKeys" >> beam.Map(lambda kv: (kv[0], 1))
                                  | "KeyCopies" >> beam.CombinePerKey(sum)
                                  | "Repeated" >> beam.Filter(lambda kv: kv[1] > 1))
    split = keyed | "Copies" >> beam.Partition(lambda kv, _, rep: int(kv[0] in rep), 2, repeated)
    once = split[1] | "OneCopy" >> beam.CombinePerKey(AnyCopy())
    return (split[0], once) | "OnceEach" >> beam.Flatten() | "Unkey" >> beam.Values()


def _emit_factory(fmt: str, family: str, special_tokens: str):
    def emit(src, selections, contexts=None):
        """A source file's samples: its kept selection (if any) and its context files' text, from the side inputs."""
        blob = selections.get(file_key(src))
        if blob is None:
            return
        sel, tally = unpack(blob), {}
        context = context_texts(sel, contexts) if contexts else None
        yield from emit_samples(src, sel, fmt, family, context=context, special_tokens=special_tokens, tally=tally)
        if tally:
            yield Info(tally)
    return emit


def _select_factory(cfg: FimConfig):
    def select(kv):
        for sel in select_repo(unpack_group(kv[1]), cfg):
            yield sel
            if isinstance(sel, FileSelection):
                yield Info(selection_info(sel))
    return select


def build(p, c: ResolvedFim) -> Built:
    """The FIM stages over the resolved config ``c`` (see the module docstring)."""
    cfg, max_bytes, fmt, family = c.fim, c.max_file_bytes, c.format, c.model_family
    files, read_rej, _ = apply_stage(p | "Repos" >> beam.Create(list(c.repos)), READ_STAGE,
                                     lambda: (lambda spec: spec_source_files(spec, max_bytes, READ_STAGE)), fanout=True)
    # secrets are scrubbed once per source file, before mining: every sample is then made of scrubbed text
    files, source_filtered = apply_filters(files, "source_file", c.filters.secrets_only(), label="Sources")
    structures, parse_rej, _ = apply_stage(files, PARSE_STAGE, lambda: parse_fn(max_bytes))
    by_repo = gather(structures, "GroupRepo", key=lambda fs: f"{fs.repo}@{fs.commit}")
    sels, _, sel_filtered = apply_stage(by_repo, SELECT_STAGE, lambda: _select_factory(cfg), fanout=True)
    fractions = (sels | "TargetSizes" >> beam.FlatMap(target_counts) | "CountSizes" >> beam.CombinePerKey(sum)
                 | "AsDict" >> beam.combiners.ToDict()
                 | "Fractions" >> beam.Map(lambda d: mixture_fractions({k: d.get(k, 0) for k in FIM_SPLITS},
                                                                      tuple(cfg.mixture))))
    mixed = sels | "Mix" >> beam.ParDo(
        _Mix(fmt, family), fractions=beam.pvalue.AsSingleton(fractions)
    ).with_outputs(FILTERED, main="main")
    files = _once_each(files)
    side = {"selections": beam.pvalue.AsDict(mixed.main | "PackSelection" >> beam.Map(lambda s: (s.key, pack(s))))}
    if fmt == "repo":
        wanted = beam.pvalue.AsDict(mixed.main | "ContextKeys" >> beam.FlatMap(lambda s: [(k, 1) for k in context_keys(s)]))
        side["contexts"] = beam.pvalue.AsDict(files | "ContextFiles" >> beam.FlatMap(
            lambda src, keys: [(k, src["content"])] if (k := file_key(src)) in keys else [], wanted))
    special = c.special_tokens
    rows, emit_rej, emit_filtered = apply_stage(files, EMIT_STAGE, lambda: _emit_factory(fmt, family, special),
                                                fanout=True, **side)
    rejects = [read_rej, parse_rej, emit_rej]
    filtered = [source_filtered, sel_filtered, mixed[FILTERED], emit_filtered]
    if c.llm is not None:
        llm = c.llm
        rows, llm_rej, llm_filtered = apply_stage(rows, RATIONALE_STAGE, lambda: Rationale(llm.make_client(), llm.critic_model))
        rejects.append(llm_rej)
        filtered.append(llm_filtered)
    rows, sample_filtered = apply_filters(rows, "fim", c.filters.without_secrets(), label="Fim")
    filtered.append(sample_filtered)
    return Built(outputs={OUTPUT: rows}, rejects=rejects, filtered=filtered)


def summarize(output: str, stages: dict) -> dict:
    """The written samples' counts (printed too) and distribution report."""
    summary = fim_summary(read_rows(output, OUTPUT, columns=[*DIST_FIELDS, "fim_split"]), stages)
    print("fim: " + ", ".join(f"{k}={v}" for k, v in summary["fim_counts"].items()))
    return summary


def build_spec(job: FimJob) -> PipelineSpec:
    """The ``fim`` job over ``job.repos`` (default: the standard library); ``job.rationale`` turns on the
    rationale + critic stage for chat samples."""
    check_format(job.fim_format, job.model_family, job.special_tokens)
    if job.rationale and job.fim_format != "chat":
        raise ValueError("the rationale stage needs --format chat")
    config = job.resolve()
    return PipelineSpec(name="fim", config=config, outputs={OUTPUT: FIM_SCHEMA},
                        build=lambda p: build(p, config), num_buckets=job.shards or 1,
                        scrub_filtered=False,     # samples come from scrubbed files
                        summarize=summarize)
