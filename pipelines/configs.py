"""The ``swemine run`` jobs: one frozen dataclass per job whose fields are its flags (:mod:`swemine.pipelines.options`),
and :data:`JOBS`, the job table. A job's ``resolve()`` is the one step that reads files and asks git: it returns
the job's frozen, typed resolved config, whose ``to_json()`` is the run config (stored in the manifest, hashed
into the run id and every record's ``config_hash``). This module imports no Beam.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from swemine.filters.decontam import LEVELS, DecontamConfig
from swemine.filters.evidence import EvidenceConfig
from swemine.miners.fim.formats import FAMILIES, FORMATS, SPECIAL_POLICIES
from swemine.miners.localization.mine import DEFAULT_NEGATIVES, RewardConfig

if TYPE_CHECKING:                       # built where they are needed: --help loads none of them
    from swemine.filters.dedup import DedupConfig
    from swemine.filters.license import LicenseConfig
    from swemine.filters.quality import QualityConfig
    from swemine.miners.fim.scoring import FimConfig
    from swemine.miners.tasks.history import MineConfig
from swemine.pipelines.options import SettingsError, bounded, option, tuples

LLM_CACHE = os.path.join(os.path.expanduser("~"), ".cache", "swemine", "llm")


def _json(value: Any) -> Any:
    """A resolved value as JSON data (dataclasses field by field, tuples as lists)."""
    if isinstance(value, Resolved):
        return value.to_json()
    if dataclasses.is_dataclass(value):
        return {f.name: _json(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (tuple, list)):
        return [_json(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _json(v) for k, v in value.items()}
    return value


class Resolved:
    """Base of the frozen resolved configs. ``to_json()`` leaves out a field whose metadata says ``json=False``,
    and one with ``json="set"`` while it holds its default."""

    def __post_init__(self):        # made of a job's values, checked when the job was made
        pass

    def to_json(self) -> dict[str, Any]:
        out = {}
        for f in dataclasses.fields(self):
            value, shown = getattr(self, f.name), f.metadata.get("json", True)
            if shown is True or (shown == "set" and value != f.default):
                out[f.name] = _json(value)
        return out


@dataclasses.dataclass(frozen=True, kw_only=True)
class DecontamSettings(Resolved):
    """The decontamination levels and the content level's thresholds given (inlined in the JSON)."""
    levels: tuple[str, ...] = LEVELS
    cutoff_date: str = ""
    undated: str = "keep"
    grey_repos: tuple[str, ...] = ()
    ngram_n: int = DecontamConfig.ngram_n
    thresholds: tuple[tuple[str, float], ...] = dataclasses.field(default=(), metadata={"json": False})

    def to_json(self) -> dict[str, Any]:
        return {**super().to_json(), **dict(self.thresholds)}

    def config(self) -> DecontamConfig:
        """The :class:`DecontamConfig` these settings describe (unset values take its defaults)."""
        known = {f.name for f in dataclasses.fields(DecontamConfig)}
        return DecontamConfig(**{k: tuple(v) if isinstance(v, list) else v for k, v in self.to_json().items()
                                 if k in known and v not in (None, "", [])})


@dataclasses.dataclass(frozen=True, kw_only=True)
class QualitySettings(Resolved):
    keep_shortest: int = 0

    def config(self) -> QualityConfig:
        from swemine.filters.quality import QualityConfig

        return QualityConfig(keep_shortest=self.keep_shortest)


@dataclasses.dataclass(frozen=True, kw_only=True)
class DedupSettings(Resolved):
    mode: str = "both"                      # exact, near or both
    threshold: float = 0.8

    def config(self) -> DedupConfig:
        from swemine.filters.dedup import DedupConfig

        return DedupConfig(exact=self.mode in ("exact", "both"), near=self.mode in ("near", "both"),
                           threshold=self.threshold)


@dataclasses.dataclass(frozen=True, kw_only=True)
class FilterSettings(Resolved):
    """The filter chain :func:`swemine.pipelines.steps.filtering.apply_filters` runs; each filter is off unless set."""
    benchmarks: tuple[str, ...] = ()
    benchmark_digests: tuple[str, ...] = ()
    decontam: DecontamSettings = DecontamSettings()
    repo_aliases: Mapping[str, str] = dataclasses.field(default_factory=dict)
    repo_roots: Mapping[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    secrets: str = "off"                    # scrub, drop or off
    license: LicenseConfig | None = None
    quality: QualitySettings | None = None
    dedup: DedupSettings | None = None

    @property
    def scrubs(self) -> bool:
        """Whether secrets are scrubbed (or their records dropped)."""
        return self.secrets in ("scrub", "drop")

    def without_secrets(self) -> FilterSettings:
        """These settings minus the secrets filter (for records made from inputs that were already scrubbed)."""
        return dataclasses.replace(self, secrets="off")

    def secrets_only(self) -> FilterSettings:
        """Just the secrets filter (to scrub inputs once, before records are made from them)."""
        return FilterSettings(secrets=self.secrets)


# -- shared parts ------------------------------------------------------------------------------------------------
def _levels_arg(value: str) -> str:
    levels = [x.strip() for x in value.split(",") if x.strip()]
    unknown = sorted(set(levels) - set(LEVELS))
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown level(s) {unknown}; choose from {', '.join(LEVELS)}")
    return ",".join(levels)


def threshold_arg(value: str) -> tuple[str, float]:
    """``NAME=VALUE`` for a field of :class:`EvidenceConfig` (the content level's thresholds)."""
    known = {f.name for f in dataclasses.fields(EvidenceConfig)}
    name, _, number = value.partition("=")
    if name not in known:
        raise argparse.ArgumentTypeError(f"unknown threshold {name!r}; choose from {', '.join(sorted(known))}")
    try:
        return name, float(number) if "." in number else int(number)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{value}: not a number") from exc


@dataclasses.dataclass(frozen=True)
class FilterConfig:
    """filters"""
    benchmark: tuple[str, ...] = option(
        (), "benchmark reference to decontaminate against (repeatable): SWE-bench family, HumanEval, MBPP, APPS, "
            "DS-1000, LiveCodeBench; local JSON/JSONL/Parquet or a Hub dataset id[:split]", metavar="[NAME=]PATH_OR_HUB_ID")
    decontam_levels: str = option(",".join(LEVELS), "comma list of instance,repo,temporal,content",
                                  type=_levels_arg)
    cutoff_date: str = option("", "drop records dated on/after this ISO date (temporal level)")
    undated: str = option("keep", "what the temporal level does with records that carry no date",
                          choices=("keep", "drop"))
    grey_repo: tuple[str, ...] = option((), "repo to hold out with reason grey_repo (repeatable)")
    repo_alias: tuple[str, ...] = option((), "repo rename/alias (repeatable), or a JSON/CSV alias file",
                                         metavar="OLD=NEW")
    repo_git: tuple[str, ...] = option((), "local git clone of a repo: forks sharing its root commit map to one "
                                           "canonical repo (repeatable)", metavar="OWNER/NAME=PATH")
    ngram_n: int = option(DecontamConfig.ngram_n, "word n-gram size of the content level", type=bounded(int, 1))
    decontam_threshold: tuple[tuple[str, float], ...] = option(
        (), "content-level threshold (repeatable), e.g. min_ngram_share=0.15; see swemine decontam-calibrate",
        metavar="NAME=VALUE", type=threshold_arg)
    scrub_secrets: str = option("scrub", "secrets/PII in every string field, rejects and filtered records: replace "
                                         "with placeholders, drop the record, or off (publish then needs "
                                         "--allow-unscrubbed)", choices=("off", "scrub", "drop"))
    license_allow: str = option("", "comma list of allowed SPDX ids, or 'permissive'; empty = no license filter")
    license_map: str = option("", "JSON/CSV file repo -> license (metadata, wins over fields)")
    quality: bool = option(False, "trajectory quality rules (malformed, tool misuse, duplicate action sequences "
                                  "per instance)")
    keep_shortest: int = option(0, "keep the N shortest trajectories per instance", type=bounded(int, 0))
    dedup: str = option("off", "exact (content hash) and/or near (MinHash-LSH) dedup on the type's dedup key",
                        choices=("off", "exact", "near", "both"))
    dedup_threshold: float = option(0.8, "near-dup Jaccard threshold", type=bounded(float, 0.0, 1.0))

    def __post_init__(self):
        tuples(self)

    def resolve(self) -> FilterSettings:
        """The filter settings: the alias and license files read, local benchmark files digested, the root commits
        of the ``repo_git`` clones."""
        from swemine.corpora.git import root_commits
        from swemine.filters.benchmark_sets import benchmark_digest
        from swemine.filters.canon import read_aliases
        from swemine.filters.license import PERMISSIVE, LicenseConfig, read_license_map

        allow = () if not self.license_allow else (
            tuple(PERMISSIVE) if self.license_allow == "permissive" else tuple(x.strip() for x in self.license_allow.split(",")))
        licenses = tuple(sorted(read_license_map(self.license_map).items())) if self.license_map else ()
        thresholds = tuple(threshold_arg(x) if isinstance(x, str) else tuple(x) for x in self.decontam_threshold)
        return FilterSettings(
            benchmarks=self.benchmark, benchmark_digests=tuple(benchmark_digest(b) for b in self.benchmark),
            decontam=DecontamSettings(levels=tuple(x for x in self.decontam_levels.split(",") if x),
                                      cutoff_date=self.cutoff_date, undated=self.undated, grey_repos=self.grey_repo,
                                      ngram_n=self.ngram_n, thresholds=thresholds),
            repo_aliases=read_aliases(self.repo_alias),
            repo_roots={name: root_commits(path) for name, _, path in (x.partition("=") for x in self.repo_git)},
            secrets=self.scrub_secrets, license=LicenseConfig(allow=allow, repo_licenses=licenses) if allow else None,
            quality=QualitySettings(keep_shortest=self.keep_shortest) if (self.quality or self.keep_shortest) else None,
            dedup=DedupSettings(mode=self.dedup, threshold=self.dedup_threshold) if self.dedup != "off" else None)


#: Filter flags that cannot apply to a job's records: the quality rules read trajectories; the temporal level
#: reads dates, which FIM samples do not carry.
NOT_TRAJECTORIES = ("quality", "keep_shortest")
UNDATED = ("cutoff_date", "undated")


@dataclasses.dataclass(frozen=True)
class LLMConfig:
    """LLM endpoint (any OpenAI-compatible server; cached, budgeted)"""
    base_url: str | None = option(None, "e.g. http://127.0.0.1:8000/v1 (default $OPENAI_BASE_URL)")
    model: str = option("", "model name sent to the endpoint")
    cache_dir: str = option(LLM_CACHE, "on-disk response cache (re-runs are free)")
    concurrency: int = option(4, "requests in flight per client (plain-Python runs; Beam workers send one at a time)")
    timeout: float = option(60.0, "seconds per request")
    retries: int = option(4, "retries on 429/5xx/timeouts (with exponential backoff)")
    temperature: float = option(0.0, "sampling temperature")
    seed: int = option(0, "sampling seed")
    budget_requests: int | None = option(None, "stop sending after this many requests per worker; the rest is "
                                               "written not diagnosed / without rationale", flag="--budget-requests")
    budget_tokens: int | None = option(None, "same, in prompt+completion tokens", flag="--budget-tokens")

    def make_client(self):
        """The :class:`swemine.clients.llm.LLMClient` these settings describe (build it inside a worker)."""
        from swemine.clients.llm import LLMClient

        return LLMClient(base_url=self.base_url, model=self.model, cache_dir=self.cache_dir, timeout_s=self.timeout,
                         max_retries=self.retries, concurrency=self.concurrency, max_requests=self.budget_requests,
                         max_tokens_budget=self.budget_tokens,
                         default_params={"temperature": self.temperature, "seed": self.seed})


def _repo_folders(directory: str) -> list[str]:
    """The absolute paths of the folders in ``directory`` (one repository each, named owner__name), sorted."""
    if not directory:
        return []
    if not os.path.isdir(directory):
        raise SettingsError(f"--repos {directory}: not a directory")
    return [os.path.abspath(os.path.join(directory, e)) for e in sorted(os.listdir(directory))
            if os.path.isdir(os.path.join(directory, e))]


# -- the trajectory jobs: a job's resolved config is its subclass, with the resolved fields retyped -------------
@dataclasses.dataclass(frozen=True)
class TrajectoryInputs:
    """Trajectory dumps and task files (the shared front of the trajectory jobs)."""
    inputs: tuple[str, ...] = option((), "file, directory, glob or URL (repeatable)", flag="--input")
    tasks: tuple[str, ...] = option((), "task file or Hub dataset name (repeatable)")
    max_file_bytes: int = option(1 << 30, "files larger than this (after decompression) are rejected as too_large",
                                 type=bounded(int, 1))
    follow_symlinks: bool = option(False, "read symlinks that leave an --input folder (default: reject them as "
                                          "outside_input)", json="set")
    labels: tuple[str, ...] = option((), "JSONL of run labels kept elsewhere: {instance_id, resolved[, trajectory_id]} "
                                         "per line, above the labels found in the runs (repeatable)", json="set")
    allow_empty: bool = option(False, "succeed even when --input matches no file", json=False)
    shards: int | None = option(None, "Parquet shards per output (default: one per 256 MB of input)",
                                type=bounded(int, 1), json=False)

    #: ``swemine run`` refuses to start without ``--input`` (the job has nothing else to read)
    requires_input: ClassVar[bool] = False

    def __post_init__(self):
        tuples(self)
        self.extra_labels()

    def extra_labels(self) -> list[dict]:
        """The labels of the ``--labels`` files (a file that is not there, or a line that is no label: SettingsError)."""
        from swemine.corpora.formats.run_labels import labels_file  # the readers, only when there is a file
        out: list[dict] = []
        for path in self.labels:
            try:
                out.extend(labels_file(path))
            except (OSError, ValueError) as exc:
                raise SettingsError(f"--labels {path}: {exc}") from None
        return out

    def _resolved(self, cls: type, **values: Any) -> Any:
        """``cls`` with this job's values, its filters resolved, and ``values``."""
        own = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return cls(**{**own, "filters": self.filters.resolve(), **values})


@dataclasses.dataclass(frozen=True)
class TrajectoriesJob(TrajectoryInputs):
    """read any supported dump, normalize, join run labels and tasks, write shards"""
    requires_input: ClassVar[bool] = True
    filters: FilterConfig = option(default_factory=FilterConfig)

    def resolve(self) -> ResolvedTrajectories:
        return self._resolved(ResolvedTrajectories)


@dataclasses.dataclass(frozen=True, kw_only=True)
class ResolvedTrajectories(Resolved, TrajectoriesJob):
    filters: FilterSettings


@dataclasses.dataclass(frozen=True)
class LocalizationJob(TrajectoryInputs):
    """gold regions, discovery/commit labels, rewards and retrieval pairs per trajectory"""
    repos: str = option("", "directory of git repositories named owner__name (optional)")
    reward: RewardConfig = option(default_factory=RewardConfig, help="reward constant {name}",
                                  group="reward constants (A²Agent)")
    filters: FilterConfig = option(default_factory=FilterConfig, skip=NOT_TRAJECTORIES)
    negatives: int = option(DEFAULT_NEGATIVES, "with --repos, BM25 negatives fill each instance's hard negatives up "
                                               "to this many", type=bounded(int, 0))

    def resolve(self) -> ResolvedLocalization:
        return self._resolved(ResolvedLocalization, repos=os.path.abspath(self.repos) if self.repos else "")


@dataclasses.dataclass(frozen=True, kw_only=True)
class ResolvedLocalization(Resolved, LocalizationJob):
    filters: FilterSettings


@dataclasses.dataclass(frozen=True)
class ErrorsJob(TrajectoryInputs):
    """trajectories → verified error–diagnosis records and training views (AET stages 1–5)"""
    requires_input: ClassVar[bool] = True
    diagnoser: str = option("rules", "rules: deterministic, offline; llm: any OpenAI-compatible endpoint",
                            choices=("rules", "llm"))
    llm: LLMConfig = option(default_factory=LLMConfig, prefix="llm-")
    filters: FilterConfig = option(default_factory=FilterConfig)
    min_confidence: float = option(0.0, "write only decisive errors with at least this confidence; the others "
                                        "stay candidate-only not_diagnosed records (below_min_confidence)",
                                   type=bounded(float, 0.0, 1.0))

    def resolve(self) -> ResolvedErrors:
        llm = self.llm if self.diagnoser == "llm" else LLMConfig()   # a rules run's hash ignores LLM settings
        return self._resolved(ResolvedErrors, llm=llm)


@dataclasses.dataclass(frozen=True, kw_only=True)
class ResolvedErrors(Resolved, ErrorsJob):
    filters: FilterSettings


@dataclasses.dataclass(frozen=True)
class SftJob(TrajectoryInputs):
    """SFT conversations (tool calls, SWE-smith XML or the harness's own), selected as data, and critic targets"""
    requires_input: ClassVar[bool] = True
    style: str = option("tool_calls", "conversation rendering", choices=("tool_calls", "xml", "native"))
    only_resolved: str = option("true", "false: keep failed and unlabelled runs (labelled by resolved)",
                                choices=("true", "false"))
    quality_rules: bool = option(True, "skip the malformed-response and tool-misuse rules",
                                 flag="--no-quality-rules", negate=True)
    max_rejected_calls: int = option(3, "more calls the harness refused (edit rejected, tool error) than this: "
                                        "filtered as rejected_tool_call", type=bounded(int, 0))
    require_patch: bool = option(True, "keep runs whose final patch is empty", flag="--allow-empty-patch",
                                 negate=True)
    max_tokens: int = option(0, "longer conversations are filtered as too_long (tokens with --tokenizer, else "
                                "characters / 4); 0: no limit", type=bounded(int, 0))
    per_instance: int = option(30, "keep the N shortest unique runs per instance; 0: all", type=bounded(int, 0))
    tokenizer: str = option("", "local tokenizer folder: token counts (n_tokens) with its chat template")
    gamma: float = option(0.85, "critic discount", type=bounded(float, 0.0, 1.0))
    terminal_reward: float = option(20.0, "critic reward at the last step of a resolved run")
    filters: FilterConfig = option(default_factory=FilterConfig, skip=NOT_TRAJECTORIES)

    def resolve(self) -> ResolvedSft:
        if self.tokenizer and not os.path.isdir(self.tokenizer):
            raise SettingsError(f"--tokenizer {self.tokenizer}: not a local tokenizer folder")
        return self._resolved(ResolvedSft, only_resolved=self.only_resolved == "true",
                              tokenizer=os.path.abspath(self.tokenizer) if self.tokenizer else "")


@dataclasses.dataclass(frozen=True, kw_only=True)
class ResolvedSft(Resolved, SftJob):
    only_resolved: bool
    filters: FilterSettings


@dataclasses.dataclass(frozen=True)
class FimJob:
    """dependency-graph-selected, function-aware FIM samples from repositories"""
    sources: tuple[str, ...] = option((), "a repository to mine (repeatable): git repo path[@commit], directory, "
                                          "stdlib, pkg:<name> or git URL (default: stdlib unless --repos)",
                                      flag="--source", metavar="SPEC")
    repos: str = option("", "directory of git repositories named owner__name: mines each of them")
    fim_format: str = option("chat", "sample layout", flag="--format", choices=FORMATS)
    model_family: str = option("qwen2.5-coder", "special tokens for --format psm/spm/repo (repo: qwen2.5-coder or "
                                                "starcoder)", choices=sorted(FAMILIES))
    special_tokens: str = option("neutralise", "content holding any family's special-token strings (counted as "
                                               "special_token_in_content): neutralise them (a zero-width space after "
                                               "the first character) or drop the sample", choices=SPECIAL_POLICIES)
    in_file_only: bool = option(False, "no cross-file edges: reproduce the published per-file graph exactly")
    mixture: str = option("0.8,0.15,0.05", "single,pair,triple ratios; 'none' keeps every sample")
    max_file_bytes: int = option(1 << 20, "files larger than this are rejected as too_large")
    shards: int = option(1, "Parquet shards of the sample output")
    filters: FilterConfig = option(default_factory=FilterConfig, skip=NOT_TRAJECTORIES + UNDATED)
    rationale: bool = option(False, "generate rationales and apply the critic rules (chat format; needs an endpoint)")
    llm: LLMConfig = option(default_factory=LLMConfig, prefix="llm-")
    llm_critic_model: str = option("", "critic model (default: the generator)")

    def __post_init__(self):
        tuples(self)

    def mixture_ratios(self) -> tuple[float, ...]:
        if self.mixture.strip().lower() in ("none", ""):
            return ()
        return tuple(float(x) for x in self.mixture.split(","))

    def repo_specs(self) -> list[str]:
        """Every ``--source`` then every repository folder under ``--repos`` (sorted); stdlib when neither."""
        return [*self.sources, *_repo_folders(self.repos)] or ["stdlib"]

    def resolve(self) -> ResolvedFim:
        from swemine.corpora.repos import pinned_spec
        from swemine.miners.fim.scoring import FimConfig

        specs = self.repo_specs()
        try:
            repos = tuple(dict.fromkeys(pinned_spec(spec) for spec in specs))
        except ValueError as exc:
            raise SettingsError(f"--source {exc}") from None
        return ResolvedFim(
            repos=repos, format=self.fim_format, model_family=self.model_family if self.fim_format != "chat" else "",
            fim=FimConfig(cross_file=not self.in_file_only, mixture=self.mixture_ratios()),
            max_file_bytes=self.max_file_bytes, filters=self.filters.resolve(), special_tokens=self.special_tokens,
            llm=RationaleLLM(**dataclasses.asdict(self.llm), critic_model=self.llm_critic_model) if self.rationale else None)


@dataclasses.dataclass(frozen=True)
class RationaleLLM(LLMConfig):
    """The rationale stage's endpoint and its critic model."""
    critic_model: str = ""


@dataclasses.dataclass(frozen=True, kw_only=True)
class ResolvedFim(Resolved):
    repos: tuple[str, ...]                  # pinned repository specs, in order, unique
    format: str
    model_family: str                       # "" for chat samples
    fim: FimConfig
    max_file_bytes: int
    filters: FilterSettings
    special_tokens: str
    llm: RationaleLLM | None = dataclasses.field(default=None, metadata={"json": "set"})


@dataclasses.dataclass(frozen=True)
class TasksJob:
    """mine pull-request fixes from git history into SWE-bench-style Task shards"""
    repos: str | None = option(None, "directory holding one git repository per GitHub repo, named <owner>__<name> "
                                     "(bare or not)")
    repo: tuple[str, ...] = option((), "git repository path or URL (repeatable)")
    issues: tuple[str, ...] = option((), "issues JSONL dump (number, title, body, created_at, state, pull_request); "
                                         "repeatable")
    rev: str = option("HEAD", "walk the history reachable from this revision")
    max_code_files: int = option(10, "more code files than this: filtered as too_many_files")
    filters: FilterConfig = option(default_factory=FilterConfig, skip=NOT_TRAJECTORIES)
    min_statement_chars: int = option(20, "shorter problem statements are filtered")
    max_statement_chars: int = option(20000, "longer problem statements are filtered")
    test_rule: tuple[str, ...] = option((), "test path rule (repeatable; default: the built-in rules)")
    doc_rule: tuple[str, ...] = option((), "documentation / changelog path rule, case ignored: such files go to "
                                           "doc_patch (repeatable; default: the SWE-bench convention)")
    verify_apply: bool = option(True, "skip the git apply --check of each task's patches at its base commit",
                                flag="--no-verify-apply", negate=True)
    repo_cache: str | None = option(None, "where remote repositories are cloned")
    localization: bool = option(False, "also write each task's gold localization record (gold quality repo, read "
                                       "from the same repository)")

    def __post_init__(self):
        tuples(self)

    def mine_config(self) -> MineConfig:
        from swemine.miners.tasks.history import DEFAULT_DOC_RULES, DEFAULT_TEST_RULES, MineConfig

        return MineConfig(test_rules=tuple(self.test_rule or DEFAULT_TEST_RULES),
                          doc_rules=tuple(self.doc_rule or DEFAULT_DOC_RULES), max_code_files=self.max_code_files,
                          min_statement_chars=self.min_statement_chars, max_statement_chars=self.max_statement_chars,
                          verify_apply=self.verify_apply)

    def resolve(self) -> ResolvedTasks:
        """Every repository under ``repos`` and every ``repo``, sorted, with the commit ``rev`` names in each local
        one (new history is a new config)."""
        from swemine.corpora.git import resolve_commit
        from swemine.corpora.repos import is_url, name_from_path

        specs = {path: name_from_path(path) for path in _repo_folders(self.repos)}
        for spec in self.repo:
            specs[spec if is_url(spec) else os.path.abspath(spec)] = ""
        if not specs:
            raise SettingsError("swemine run tasks needs --repos DIR or at least one --repo")
        return ResolvedTasks(repos=tuple(TaskRepo(spec, name, resolve_commit(spec, self.rev))
                                         for spec, name in sorted(specs.items())),
                             issues=tuple(os.path.abspath(p) for p in self.issues), rev=self.rev, mine=self.mine_config(),
                             localization=self.localization, filters=self.filters.resolve())


@dataclasses.dataclass(frozen=True)
class TaskRepo:
    spec: str                               # absolute path or URL
    name: str                               # owner/name from an owner__name folder, else ""
    head: str                               # the commit --rev names (local repositories)


@dataclasses.dataclass(frozen=True, kw_only=True)
class ResolvedTasks(Resolved):
    repos: tuple[TaskRepo, ...]
    issues: tuple[str, ...]
    rev: str
    mine: MineConfig
    localization: bool
    filters: FilterSettings


@dataclasses.dataclass(frozen=True)
class Job:
    """One ``swemine run`` job: its config dataclass (whose docstring is the job's help line) and the module whose
    ``build_spec(job)`` builds its pipeline (imported only when the job runs)."""
    config: type
    module: str

    @property
    def help(self) -> str:
        return (self.config.__doc__ or "").strip()


#: The one job table: ``swemine run <name>``, in pipeline order.
JOBS: dict[str, Job] = {
    "trajectories": Job(TrajectoriesJob, "swemine.pipelines.jobs.trajectories"),
    "localization": Job(LocalizationJob, "swemine.pipelines.jobs.localization"),
    "tasks": Job(TasksJob, "swemine.pipelines.jobs.tasks_mining"),
    "errors": Job(ErrorsJob, "swemine.pipelines.jobs.errors"),
    "fim": Job(FimJob, "swemine.pipelines.jobs.fim"),
    "sft": Job(SftJob, "swemine.pipelines.jobs.sft"),
}
