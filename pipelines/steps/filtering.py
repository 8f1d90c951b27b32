"""The filter chain of every job as one Beam transform: :func:`apply_filters` runs, each only when configured,
``decontam`` (the corpus's boilerplate n-grams as a side input) → ``secrets`` → ``license`` → ``quality`` and
``quality_group`` (trajectories only) → ``dedup_exact`` / ``dedup_near``, and returns ``(kept, filtered)``: every
drop is a ``FILTERED_SCHEMA`` row with its reason and evidence (docs/filters.md)."""
from __future__ import annotations

import apache_beam as beam

from swemine.corpora.records import reject_as_filtered
from swemine.filters import quality
from swemine.filters.benchmark_sets import load_benchmarks
from swemine.filters.canon import RepoCanon
from swemine.filters.decontam import STAGE as DECONTAM_STAGE
from swemine.filters.decontam import Decontaminator, boilerplate_features, doc_key
from swemine.filters.fields import spec_for
from swemine.filters.license import license_stage_fn
from swemine.filters.secrets import SecretsConfig, secrets_stage_fn
from swemine.pipelines.configs import FilterSettings
from swemine.pipelines.engine.stage import Decide, apply_stage
from swemine.pipelines.steps.dedup_stage import Dedup


def build_decontaminator(settings: FilterSettings) -> Decontaminator:
    """Load the benchmarks and build the decontaminator the settings describe (once per worker)."""
    bench = load_benchmarks(list(settings.benchmarks))
    canon = RepoCanon(aliases=dict(settings.repo_aliases), roots=dict(settings.repo_roots), preferred=bench.eval_repos)
    return Decontaminator(bench, settings.decontam.config(), canon)


class _Features(beam.DoFn):
    """Record → ``(feature, document key)`` for every benchmark n-gram / line it contains (boilerplate pass)."""

    def __init__(self, settings: FilterSettings, record_type: str):
        self.settings, self.record_type = settings, record_type

    def setup(self):
        self.decon = build_decontaminator(self.settings)
        self.spec = spec_for(self.record_type)

    def process(self, record):
        key = doc_key(record, self.spec)
        for f in sorted(self.decon.features(record, self.spec)):
            yield f, key


def _decontam_fn(settings: FilterSettings, record_type: str):
    """The ``decontam`` stage function: it binds the boilerplate side input, which arrives with the first record,
    once per worker."""
    decon, bound = build_decontaminator(settings), []

    def judge(record, boilerplate=()):
        if not bound:
            bound.append(decon.with_boilerplate(boilerplate).stage_fn(record_type))
        return bound[0](record)
    return judge


def _boilerplate(pcoll, settings: FilterSettings, record_type: str):
    """PCollection of the benchmark features frequent in ``pcoll`` (see :func:`swemine.filters.decontam.boilerplate_features`)."""
    cfg = settings.decontam.config()
    feats = pcoll | "BoilerFeatures" >> beam.ParDo(_Features(settings, record_type)) | "BoilerDistinct" >> beam.Distinct()
    spec = spec_for(record_type)
    n_docs = (pcoll | "DocKeys" >> beam.Map(lambda r: doc_key(r, spec))
              | "DocDistinct" >> beam.Distinct() | "DocCount" >> beam.combiners.Count.Globally())
    counts = (feats | "FeatureOnly" >> beam.Keys() | "FeatureCount" >> beam.combiners.Count.PerElement()
              | "AllCounts" >> beam.combiners.ToList())
    return (counts | "Frequent" >> beam.FlatMap(
        lambda kvs, n: sorted(boilerplate_features(dict(kvs), n, cfg)), n=beam.pvalue.AsSingleton(n_docs)))


class SelectPerInstance(beam.PTransform):
    """Stage ``quality_group`` → ``(kept, filtered)``: only each record's :class:`~swemine.filters.quality.Candidate`
    is grouped by instance (:func:`~swemine.filters.quality.instance_decisions`), and each record is kept or
    dropped where it is."""

    def __init__(self, cfg: quality.QualityConfig, record_type: str):
        super().__init__()
        self.cfg, self.record_type = cfg, record_type

    def expand(self, pcoll):
        cfg = self.cfg

        def keyed(record):
            cand = quality.candidate(record, cfg)
            return (cand.instance, cand), record
        return (pcoll | "Candidates" >> beam.Map(keyed)
                | "Select" >> Decide(quality.GROUP_STAGE, self.record_type,
                                     lambda _, cands: quality.instance_decisions(cands, cfg)))


class ApplyFilters(beam.PTransform):
    """The filter chain as one composite transform (so several record types can be filtered in one pipeline)."""

    def __init__(self, record_type: str, settings: FilterSettings):
        super().__init__()
        self.record_type, self.settings = record_type, settings

    def expand(self, pcoll):
        settings, record_type = self.settings, self.record_type
        spec = spec_for(record_type)
        filtered, kept = [], pcoll
        if settings.benchmarks:
            side = {}
            if "content" in settings.decontam.config().levels:
                side["boilerplate"] = beam.pvalue.AsList(_boilerplate(kept, settings, record_type))
            kept, rej, filt = apply_stage(kept, DECONTAM_STAGE, lambda: _decontam_fn(settings, record_type), **side)
            filtered += [filt, rej | "DecontamErrors" >> beam.Map(reject_as_filtered)]
        if settings.scrubs:
            scfg = SecretsConfig(mode=settings.secrets)
            kept, rej, filt = apply_stage(kept, "secrets", lambda: secrets_stage_fn(record_type, scfg, spec))
            filtered += [filt, rej | "SecretsErrors" >> beam.Map(reject_as_filtered)]
        if settings.license:
            lcfg = settings.license
            kept, rej, filt = apply_stage(kept, "license", lambda: license_stage_fn(record_type, lcfg, spec))
            filtered += [filt, rej | "LicenseErrors" >> beam.Map(reject_as_filtered)]
        if settings.quality and record_type == "trajectory":
            qcfg = settings.quality.config()
            kept, rej, filt = apply_stage(kept, "quality", lambda: quality.quality_stage_fn(record_type, qcfg))
            kept, group_filt = kept | "QualityGroup" >> SelectPerInstance(qcfg, record_type)
            filtered += [filt, rej | "QualityErrors" >> beam.Map(reject_as_filtered), group_filt]
        if settings.dedup:
            kept, filt = kept | "Dedup" >> Dedup(record_type, settings.dedup.config())
            filtered.append(filt)
        if not filtered:
            return kept, pcoll.pipeline | "NoFiltered" >> beam.Create([])
        return kept, tuple(filtered) | "FilteredAll" >> beam.Flatten()


def apply_filters(pcoll, record_type: str, settings: FilterSettings, label: str = ""):
    """Run the configured filters over ``pcoll`` (records of ``record_type``); returns ``(kept, filtered)``.
    ``label`` names the composite transform (default: the record type)."""
    return pcoll | f"Filters[{label or record_type}]" >> ApplyFilters(record_type, settings)
