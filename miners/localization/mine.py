"""Localization supervision records (docs/mining.md, docs/outputs.md): gold regions, discovery/commit labels, rewards,
retrieval pairs.

:func:`mine_instance` takes one task and the trajectories of that instance and yields one
``LOCALIZATION_SCHEMA`` record per trajectory (or one gold-only record when there are none) or rejects. It is two
plain steps, which a pipeline runs apart so that only small summaries are grouped by instance:
:func:`localize_instance` (the task and its runs' :class:`~swemine.miners.localization.summary.Summary`: gold,
scratch files, retrieval pairs → one :class:`InstanceContext`) and :func:`localize_trajectory` (the context and one
trajectory → its record):

- gold from the task's patch (``gold_source="gold_patch"``), else from the file set most resolved trajectories'
  patches agree on (``"resolved_agent_patch"``); ``gold_quality`` says whether a repository was read (``repo``)
  or only the diff (``patch_only``: no module/entity gold, so those levels' scores are null);
- per gold location: first step that observed it (and how), first step that displayed it, first step that edited
  its file (``first_discovery``; the discovery-to-commit gap is ``edit_step - step``);
- per step: gold locations ``viewed`` (content displayed, :mod:`swemine.miners.localization.views`) and ``mentioned`` (A²Agent
  regexes, paths matched by repository-relative suffix); ``observed`` = their union, cumulative (A²Agent);
  progress per level = recall gain; reward = ``α_F·Δfile + α_M·Δmodule + α_E·Δentity − step_cost``, the last
  step adding ``final_bonus_scale·Σα·F1 + commitment_bonus·Σα·DC`` (:class:`RewardConfig`, A²Agent defaults);
- committed = the explicit ``found_*`` answer of a localization agent, else the regions of the trajectory's own
  final patch (coding agents); DC = |observed gold ∩ committed| /
  |observed gold| (0 when nothing observed), Type-B = observed gold not committed, final F1 vs gold;
- retrieval (per instance, over its trajectories): positives = gold files; useful context = non-gold files
  viewed before the first edit by resolved trajectories that a resolving patch references (dotted module path, or
  the module name on an import line); hard negatives = other files any trajectory viewed.
"""
from __future__ import annotations

import collections
import datetime as _dt
import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass
from typing import NamedTuple

import pyarrow as pa

from swemine.corpora.records import PROVENANCE_FIELDS, conform, content_id, dumps_extra, make_reject
from swemine.corpora.repos import repo_for
from swemine.corpora.tasks import pick_task
from swemine.miners.actions import drop_files, patch_files
from swemine.miners.code_structure import StructureParser
from swemine.miners.localization.gold import Gold, Reader, gold_from_patch, repo_reader
from swemine.miners.localization.metrics import prf
from swemine.miners.localization.negatives import (
    bm25_negatives,
    extensions,
    repo_documents,
    trajectory_negatives,
)
from swemine.miners.localization.scratch import Created, scratch_of
from swemine.miners.localization.summary import Summary, summarize
from swemine.miners.localization.views import (
    edited_paths,
    is_edit_step,
    path_matches,
    repo_relative,
    step_mentions,
    step_views,
)
from swemine.miners.patches import PatchError

STAGE = "localization"
LEVELS = ("file", "module", "entity")
PLURAL = {"file": "files", "module": "modules", "entity": "entities"}
DEFAULT_NEGATIVES = 8
F1_EMPTY_CONVENTION = "s1: precision, recall and F1 are 0 when the prediction or the gold set is empty"


@dataclass(frozen=True)
class RewardConfig:
    """Per-step progress reward constants (A²Agent ``advantage.py`` defaults)."""
    alpha_file: float = 1.0
    alpha_module: float = 0.5
    alpha_entity: float = 0.5
    step_cost: float = 0.02
    final_bonus_scale: float = 1.0
    commitment_bonus: float = 0.5

    def alpha(self, level: str) -> float:
        return getattr(self, f"alpha_{level}")


STEP_LABEL_TYPE = pa.struct([
    pa.field("step", pa.int32()),
    pa.field("tool_name", pa.string()),
    pa.field("viewed", pa.list_(pa.string())),       # gold locations whose content this step displayed
    pa.field("mentioned", pa.list_(pa.string())),    # gold locations this step named
    pa.field("new_gold", pa.list_(pa.string())),     # gold locations observed for the first time
    pa.field("progress_file", pa.float32()),
    pa.field("progress_module", pa.float32()),
    pa.field("progress_entity", pa.float32()),
    pa.field("reward", pa.float32()),
    pa.field("is_edit", pa.bool_()),
])
DISCOVERY_TYPE = pa.struct([pa.field("location", pa.string()), pa.field("level", pa.string()),
                            pa.field("step", pa.int32()),          # first step that observed it
                            pa.field("how", pa.string()),          # "viewed" | "mentioned" at that step
                            pa.field("viewed_step", pa.int32()),   # first step that displayed it (null: never)
                            pa.field("edit_step", pa.int32())])    # first step that edited its file (null: never)
SPAN_TYPE = pa.struct([pa.field("file", pa.string()), pa.field("start", pa.int32()), pa.field("end", pa.int32())])
DECONTAM_TYPE = pa.struct([pa.field("repo_in_eval", pa.bool_()), pa.field("instance_in_eval", pa.bool_()),
                           pa.field("ngram_hits", pa.int32()), pa.field("passed", pa.bool_())])
_STR_LIST = pa.list_(pa.string())

LOCALIZATION_SCHEMA = pa.schema([
    pa.field("record_id", pa.string(), nullable=False),
    pa.field("source_dataset", pa.string()),
    pa.field("trajectory_id", pa.string()),
    pa.field("instance_id", pa.string()),
    pa.field("repo", pa.string()),
    pa.field("base_commit", pa.string()),
    pa.field("task_created_at", pa.timestamp("us", tz="UTC")),
    pa.field("problem_statement", pa.string()),
    pa.field("harness", pa.string()),
    pa.field("model_name", pa.string()),
    pa.field("gold_source", pa.string()),
    pa.field("gold_quality", pa.string()),
    pa.field("gold_files", _STR_LIST),
    pa.field("gold_modules", _STR_LIST),
    pa.field("gold_entities", _STR_LIST),
    pa.field("gold_added_entities", _STR_LIST),
    pa.field("gold_line_spans", pa.list_(SPAN_TYPE)),
    pa.field("gold_function_hints", _STR_LIST),
    pa.field("resolved", pa.bool_()),
    pa.field("observed_files", _STR_LIST),
    pa.field("observed_modules", _STR_LIST),
    pa.field("observed_entities", _STR_LIST),
    pa.field("viewed_files", _STR_LIST),
    pa.field("viewed_entities", _STR_LIST),
    pa.field("scratch_files", _STR_LIST),        # files the run created that the repository does not hold
    pa.field("committed_files", _STR_LIST),
    pa.field("committed_modules", _STR_LIST),
    pa.field("committed_entities", _STR_LIST),
    pa.field("dc_file", pa.float32()),
    pa.field("dc_module", pa.float32()),
    pa.field("dc_entity", pa.float32()),
    pa.field("type_b_files", _STR_LIST),
    pa.field("type_b_modules", _STR_LIST),
    pa.field("type_b_entities", _STR_LIST),
    pa.field("final_f1_file", pa.float32()),
    pa.field("final_f1_module", pa.float32()),
    pa.field("final_f1_entity", pa.float32()),
    pa.field("first_discovery", pa.list_(DISCOVERY_TYPE)),
    pa.field("step_labels", pa.list_(STEP_LABEL_TYPE)),
    pa.field("retrieval_query", pa.string()),
    pa.field("retrieval_positives", _STR_LIST),
    pa.field("retrieval_useful_context", _STR_LIST),
    pa.field("retrieval_hard_negatives", _STR_LIST),           # ranked
    pa.field("retrieval_hard_negative_sources", _STR_LIST),    # per negative: "viewed" | "searched" | "bm25"
    pa.field("decontam", DECONTAM_TYPE),
    pa.field("license", pa.string()),
    pa.field("extra_json", pa.string()),
    *PROVENANCE_FIELDS,
], metadata={"swemine.record_type": "LocalizationRecord", "swemine.f1_empty_convention": F1_EMPTY_CONVENTION,
             "swemine.reward_defaults": json.dumps(asdict(RewardConfig()), sort_keys=True)})


def gold_levels(gold: Gold) -> dict[str, list[str]]:
    """Gold locations per level (module/entity empty for ``patch_only`` gold)."""
    return {"file": gold.gold_files, "module": gold.gold_modules, "entity": gold.gold_entities}


def _split(loc: str) -> tuple[str, str]:
    f, _, q = loc.partition(":")
    return f, q


def _region_viewed(loc: str, views, spans: dict[str, tuple[int, int]]) -> bool:
    f, q = _split(loc)
    for v in views:
        if not path_matches(v.path, f):
            continue
        if v.whole:
            return True
        if any(s == q or q.startswith(s + ".") or s.startswith(q + ".") for s in v.spans):
            return True
        span = spans.get(loc)
        if span and any(a <= span[1] and b >= span[0] for a, b in v.ranges):
            return True
    return False


def step_gold_hits(step: dict, levels: dict[str, list[str]], spans: dict[str, tuple[int, int]]
                   ) -> tuple[set[str], set[str], list[str]]:
    """``(viewed gold, mentioned gold, viewed paths)`` of one step, gold given per level."""
    views = step_views(step)
    m_files, m_entities = step_mentions(step)
    viewed, mentioned = set(), set()
    for g in levels["file"]:
        if any(path_matches(v.path, g) for v in views):
            viewed.add(g)
        if any(path_matches(m, g) for m in m_files):
            mentioned.add(g)
    for level in ("module", "entity"):
        for loc in levels[level]:
            if _region_viewed(loc, views, spans):
                viewed.add(loc)
            f, q = _split(loc)
            for m in m_entities:
                mf, mq = _split(m)
                if path_matches(mf, f) and (mq == q if level == "entity" else mq.split(".", 1)[0] == q):
                    mentioned.add(loc)
    return viewed, mentioned, [v.path for v in views]


def _recall(found: set[str], gold: list[str]) -> float:
    return len(found & set(gold)) / len(gold) if gold else 0.0


def label_trajectory(traj: dict, gold: Gold, committed: dict[str, list[str]] | None,
                     cfg: RewardConfig = RewardConfig(), keep: Callable[[str], bool] = bool) -> dict:
    """Discovery / commitment labels, per-step progress and rewards of one trajectory against ``gold``
    (``committed``: identifiers per level, from :func:`committed_regions`; ``keep``: whether a viewed path is a
    repository file, see :func:`repository_filter`)."""
    levels = gold_levels(gold)
    spans = gold.old_spans
    seen: set[str] = set()
    viewed_all: set[str] = set()
    viewed_paths: list[str] = []
    first: dict[tuple[int, str], tuple[int, str]] = {}   # (level index, location) -> (step, how)
    first_view: dict[str, int] = {}
    first_edit: dict[str, int] = {}
    step_labels = []
    for step in traj.get("steps") or []:
        viewed, mentioned, paths = step_gold_hits(step, levels, spans)
        viewed_paths.extend(paths)
        viewed_all |= viewed
        found = viewed | mentioned
        new = list(dict.fromkeys(loc for level in LEVELS for loc in sorted(set(levels[level]) & (found - seen))))
        progress = {}
        for li, level in enumerate(LEVELS):
            progress[level] = _recall(seen | found, levels[level]) - _recall(seen, levels[level])
            for loc in set(levels[level]) & (found - seen):
                first[(li, loc)] = (step["idx"], "viewed" if loc in viewed else "mentioned")
        for loc in viewed:
            first_view.setdefault(loc, step["idx"])
        for path in edited_paths(step):
            for g in levels["file"]:
                if path_matches(path, g):
                    first_edit.setdefault(g, step["idx"])
        seen |= found
        reward = sum(cfg.alpha(level) * progress[level] for level in LEVELS) - cfg.step_cost
        step_labels.append({"step": step["idx"], "tool_name": step.get("tool_name") or "",
                            "viewed": sorted(viewed), "mentioned": sorted(mentioned), "new_gold": new,
                            "progress_file": progress["file"], "progress_module": progress["module"],
                            "progress_entity": progress["entity"], "reward": reward,
                            "is_edit": is_edit_step(step)})
    committed_levels = committed or {lv: [] for lv in LEVELS}
    out = {f"observed_{PLURAL[lv]}": [x for x in levels[lv] if x in seen] for lv in LEVELS}
    scores, terminal = {}, 0.0
    for level in LEVELS:
        plural = PLURAL[level]
        if not levels[level]:
            scores[f"dc_{level}"] = scores[f"final_f1_{level}"] = None
            out[f"type_b_{plural}"] = []
            continue
        observed = set(out[f"observed_{plural}"])
        comm = set(committed_levels[level])
        scores[f"dc_{level}"] = len(observed & comm) / len(observed) if observed else 0.0
        scores[f"final_f1_{level}"] = prf(comm, levels[level], empty="s1")["f1"]
        out[f"type_b_{plural}"] = [x for x in out[f"observed_{plural}"] if x not in comm]
        terminal += cfg.alpha(level) * (cfg.final_bonus_scale * scores[f"final_f1_{level}"]
                                        + cfg.commitment_bonus * scores[f"dc_{level}"])
    if step_labels:
        step_labels[-1]["reward"] += terminal
    rel = (repo_relative(p, levels["file"]) for p in viewed_paths)
    out.update(scores)
    out.update({
        "viewed_files": list(dict.fromkeys(p for p in rel if p and keep(p))),
        "viewed_entities": [x for x in levels["entity"] if x in viewed_all],
        "committed_files": committed_levels["file"], "committed_modules": committed_levels["module"],
        "committed_entities": committed_levels["entity"],
        "first_discovery": [{"location": loc, "level": LEVELS[li], "step": s, "how": how,
                             "viewed_step": first_view.get(loc), "edit_step": first_edit.get(_split(loc)[0])}
                            for (li, loc), (s, how) in sorted(first.items(), key=lambda kv: (kv[1][0], kv[0]))],
        "step_labels": step_labels,
    })
    return out


def viewed_before_first_edit(summary: Summary, gold_files: list[str], keep: Callable[[str], bool] = bool) -> list[str]:
    """Repository paths (those ``keep`` accepts) whose content a resolved run displayed before its first edit
    (its :class:`~swemine.miners.localization.summary.Summary`)."""
    out: dict[str, None] = {}
    for path in summary.pre_edit:
        rel = repo_relative(path, gold_files)
        if rel and keep(rel):
            out.setdefault(rel, None)
    return list(out)


def references(path: str, patches: Iterable[str]) -> bool:
    """Whether a patch names ``path``'s module: its dotted path, or its module name on an import line."""
    if not path.endswith(".py"):
        return False
    dotted = path[:-3].replace("/", ".")
    stem = dotted.rsplit(".", 1)[-1]
    import_re = re.compile(rf"^[+ -]\s*(from\s+\S+\s+)?import\b.*\b{re.escape(stem)}\b|^[+ -]\s*from\s+\S*\b"
                           rf"{re.escape(stem)}\s+import\b", re.M)
    return any(dotted in p or import_re.search(p) for p in patches if p)


def retrieval_pairs(gold: Gold, gold_patch: str, runs: list[Summary], keep: Callable[[str], bool] = bool, *,
                    query: str = "", docs: dict | None = None, k: int = DEFAULT_NEGATIVES) -> dict[str, list[str]]:
    """Positives, useful context and ranked hard negatives (with their sources) of one instance over its runs'
    summaries (docs/mining.md, :mod:`swemine.miners.localization.negatives`); ``keep`` says which paths are
    repository files; ``docs`` (the repository's term counts at the base commit) adds BM25 negatives up to ``k``."""
    positives = gold.gold_files
    resolved = [s for s in runs if s.resolved]
    patches = [gold_patch] + [s.final_patch for s in resolved]
    useful: dict[str, None] = {}
    for s in resolved:
        for p in viewed_before_first_edit(s, positives, keep):
            if p not in positives and references(p, patches):
                useful.setdefault(p, None)
    taken = set(positives) | set(useful)
    negatives = trajectory_negatives((s.looks for s in runs), lambda p: p not in taken and keep(p), positives)
    if docs is not None:
        negatives += bm25_negatives(query, docs, taken | {n.path for n in negatives}, k - len(negatives), positives)
    return {"retrieval_positives": positives, "retrieval_useful_context": list(useful),
            "retrieval_hard_negatives": [n.path for n in negatives],
            "retrieval_hard_negative_sources": [n.source for n in negatives]}


def majority_patch(runs: list[Summary], exists: Callable[[str], bool] | None = None) -> str:
    """The final patch of a resolved run whose file set most resolved runs share ("" if none); each patch without
    the run's scratch files (with no gold patch, every file a run created is scratch)."""
    votes: collections.Counter = collections.Counter()
    first_patch: dict[tuple, str] = {}
    for s in sorted(runs, key=Summary.order):
        patch = drop_files(s.final_patch, scratch_of(s.created, (), exists))
        if not s.resolved or not patch.strip():
            continue
        try:
            files = tuple(sorted(gold_from_patch(patch).gold_files))
        except PatchError:
            continue
        votes[files] += 1
        first_patch.setdefault(files, patch)
    if not votes:
        return ""
    best = max(votes.items(), key=lambda kv: (kv[1], kv[0]))[0]
    return first_patch[best]


def parse_time(value: str | None) -> _dt.datetime | None:
    """ISO-8601 (``Z`` allowed) → aware UTC datetime; ``None`` when absent or unparseable."""
    if not value:
        return None
    try:
        t = _dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None
    return t.replace(tzinfo=_dt.timezone.utc) if t.tzinfo is None else t.astimezone(_dt.timezone.utc)


def _gold_fields(gold: Gold, source: str) -> dict:
    return {"gold_source": source, "gold_quality": gold.quality, "gold_files": gold.gold_files,
            "gold_modules": gold.gold_modules, "gold_entities": gold.gold_entities,
            "gold_added_entities": gold.gold_added_entities, "gold_line_spans": gold.gold_line_spans,
            "gold_function_hints": gold.function_hints}


def explicit_answer(traj: dict) -> dict[str, list[str]] | None:
    """A localization agent's answer: ``found_files`` / ``found_modules`` / ``found_entities`` in the arguments of
    its last step that has them (A²Agent's finish tool); ``None`` for coding agents."""
    for step in reversed(traj.get("steps") or []):
        raw = step.get("tool_args_json") or ""
        if "found_" not in raw:
            continue
        try:
            args = json.loads(raw)
        except json.JSONDecodeError:
            continue
        if isinstance(args, dict) and any(f"found_{PLURAL[lv]}" in args for lv in LEVELS):
            return {lv: [str(x) for x in args.get(f"found_{PLURAL[lv]}") or []] for lv in LEVELS}
    return None


def committed_regions(traj: dict, reader: Reader | None, sp: StructureParser, scratch: Iterable[str] = ()
                      ) -> tuple[dict | None, dict]:
    """``(levels, info)``: the explicit answer of a localization agent, else the regions of the final patch, both
    without ``scratch`` files.

    ``info`` has ``committed_source`` (``answer`` | ``final_patch``), ``committed_error`` (a reject reason when
    the patch is empty or unusable; a patch of scratch files only commits nothing, without error) and the patch's
    ``committed_function_hints``.
    """
    scratch = set(scratch)
    answer = explicit_answer(traj)
    if answer is not None:
        answer = {lv: [x for x in ids if _split(x)[0] not in scratch] for lv, ids in answer.items()}
        return answer, {"committed_source": "answer", "committed_error": "", "committed_function_hints": []}
    info = {"committed_source": "final_patch", "committed_error": "", "committed_function_hints": []}
    patch = traj.get("final_patch") or ""
    if not patch.strip():
        return None, {**info, "committed_error": "empty_patch"}
    patch = drop_files(patch, scratch)
    if not patch.strip():
        return {lv: [] for lv in LEVELS}, info
    try:
        g = gold_from_patch(patch, reader, sp)
    except PatchError as exc:
        return None, {**info, "committed_error": exc.reason}
    return gold_levels(g), {**info, "committed_function_hints": g.function_hints}


def _memo(reader: Reader) -> Reader:
    """A reader that reads each path once (the gold and the trajectories' patches share files)."""
    seen: dict[str, bytes | None] = {}

    def read(path: str) -> bytes | None:
        if path not in seen:
            seen[path] = reader(path)
        return seen[path]

    return read


def repository_filter(owned: Iterable[str], scratch: Iterable[str], base_files: set[str] | None
                      ) -> Callable[[str], bool]:
    """Whether a path is a repository file: not scratch, and (with the repository) present at the base commit or
    changed by the gold patches (``owned``)."""
    owned, scratch = set(owned), set(scratch)
    if base_files is None:
        return lambda p: p not in scratch
    return lambda p: p not in scratch and (p in base_files or p in owned)


class BaseTree(NamedTuple):
    """A task's repository at its base commit (all ``None`` / "" without one: ``patch_only`` gold): a reader of
    pre-patch contents, the files there and the license."""
    read: Reader | None
    files: set[str] | None
    license: str

    @property
    def exists(self) -> Callable[[str], bool] | None:
        """Whether a path exists at the base commit (``None`` without the repository)."""
        return self.files.__contains__ if self.files is not None else None


def base_reader(repo, commit: str) -> Reader | None:
    """A reader of ``repo``'s contents at ``commit`` that reads each path once (``None`` without a repository);
    raises ``PatchError("missing_base_commit")`` when the repository lacks the commit."""
    return None if repo is None else _memo(repo_reader(repo, commit))


def base_tree(repo, commit: str) -> BaseTree:
    """The :class:`BaseTree` of a :class:`swemine.corpora.repos.RepoSource` (or ``None``) at ``commit``."""
    if repo is None:
        return BaseTree(None, None, "")
    return BaseTree(base_reader(repo, commit), set(repo.list_files(commit)), repo.license(commit))


@dataclass(frozen=True)
class InstanceContext:
    """What every localization record of one instance shares, made once per instance (:func:`localize_instance`):
    the task, gold and retrieval fields of the records, the gold, the gold patch (their ids hash it), the files
    the gold patch and its test patch change, and which of the paths its runs created or displayed exist at the
    base commit (``None`` without the repository)."""
    fields: dict
    gold: Gold
    patch: str
    owned: frozenset[str]
    present: frozenset[str] | None

    @property
    def exists(self) -> Callable[[str], bool] | None:
        """Whether a path a run of the instance named exists at the base commit (``None``: no repository)."""
        return self.present.__contains__ if self.present is not None else None


def _named_paths(run: Summary, gold_files: list[str]) -> set[str]:
    """The repository paths a run's record asks about: the paths it created, and those it displayed."""
    shown = (repo_relative(path, gold_files) for look in run.looks for path, _ in look.shown)
    return set(run.created.with_repo) | {p for p in shown if p}


def localize_instance(task: dict | None, runs: list[Summary], repo, sp: StructureParser, *, config_hash: str = "",
                      negatives: int = DEFAULT_NEGATIVES) -> Iterator[dict | InstanceContext]:
    """The per-instance part of :func:`mine_instance` over the runs' summaries: a ``no_task`` reject per run when
    no task lists the instance, a ``no_gold`` or patch reject, the gold-only record when there are no runs, else
    the instance's :class:`InstanceContext`."""
    if task is None:
        for s in runs:
            yield make_reject(STAGE, "no_task", f"no task for instance {s.instance_id!r}", uri=s.source_uri,
                              locator=s.source_locator, sha256=s.source_sha256, subject_id=s.record_id)
        return
    iid = task["instance_id"]
    commit = task.get("base_commit") or ""
    uri, locator, sha = task.get("source_uri") or "", task.get("source_locator") or "", task.get("source_sha256") or ""
    try:
        tree = base_tree(repo, commit)
        patch, source = task.get("patch") or "", "gold_patch"
        if not patch.strip():
            patch, source = majority_patch(runs, tree.exists), "resolved_agent_patch"
        if not patch.strip():
            yield make_reject(STAGE, "no_gold", f"{iid}: no gold patch and no resolved trajectory patch", uri=uri,
                              locator=locator, sha256=sha, subject_id=iid, config_hash=config_hash)
            return
        gold = gold_from_patch(patch, tree.read, sp)
    except PatchError as exc:
        yield make_reject(STAGE, exc.reason, f"{iid}: {exc}", uri=uri, locator=locator, sha256=sha, subject_id=iid,
                          excerpt=(task.get("patch") or "")[:200], config_hash=config_hash)
        return
    owned = frozenset(patch_files(patch)) | set(patch_files(task.get("test_patch") or ""))
    ordered = sorted(runs, key=Summary.order)
    keep = repository_filter(owned, {p for s in ordered for p in scratch_of(s.created, owned, tree.exists)},
                             tree.files)
    docs = repo_documents(repo, commit, extensions(gold.gold_files)) if repo is not None and negatives > 0 else None
    query = task.get("problem_statement") or ""
    fields = {"instance_id": iid, "repo": task.get("repo") or "", "base_commit": commit,
              "task_created_at": parse_time(task.get("created_at")), "problem_statement": task.get("problem_statement"),
              "license": tree.license, "config_hash": config_hash, **_gold_fields(gold, source),
              "retrieval_query": query, **retrieval_pairs(gold, task.get("patch") or patch, ordered, keep, query=query,
                                                          docs=docs, k=negatives)}
    if runs:
        present = None if tree.files is None else frozenset(
            p for s in runs for p in _named_paths(s, gold.gold_files) if p in tree.files)
        yield InstanceContext(fields, gold, patch, owned, present)
        return
    yield conform(LOCALIZATION_SCHEMA, {
        **fields, "record_id": content_id("localization", iid, patch, gold.quality), "source_dataset": "tasks",
        "source_uri": uri, "source_locator": locator, "source_sha256": sha,
        "extra_json": dumps_extra({"file_changes": gold.file_changes(), **gold.placement()})})


def localize_trajectory(ctx: InstanceContext, traj: dict, created: Created, read: Reader | None, sp: StructureParser,
                        cfg: RewardConfig = RewardConfig()) -> dict:
    """The localization record of one trajectory (its :func:`~swemine.miners.localization.scratch.created_paths`)
    against its instance's context; ``read`` reads the repository at the base commit (:func:`base_reader`)."""
    own_scratch = scratch_of(created, ctx.owned, ctx.exists)
    committed, info = committed_regions(traj, read, sp, own_scratch)
    labels = label_trajectory(traj, ctx.gold, committed, cfg, repository_filter(ctx.owned, own_scratch, ctx.present))
    extra = {**info, "n_steps": len(traj.get("steps") or []), **ctx.gold.placement()}
    return conform(LOCALIZATION_SCHEMA, {
        **ctx.fields, **labels, "scratch_files": own_scratch,
        "record_id": content_id("localization", traj["record_id"], ctx.patch, ctx.gold.quality, asdict(cfg)),
        "source_dataset": traj.get("source_format") or traj.get("harness") or "",
        "trajectory_id": traj.get("trajectory_id"), "harness": traj.get("harness"),
        "model_name": traj.get("model_name"), "resolved": traj.get("resolved"),
        "source_uri": traj.get("source_uri"), "source_locator": traj.get("source_locator"),
        "source_sha256": traj.get("source_sha256"), "extra_json": dumps_extra(extra)})


class Localizer:
    """:func:`localize_instance` and :func:`localize_trajectory` with what a worker keeps between calls: the parser
    and the repositories of ``repos_dir`` by name (``""``: none, ``patch_only`` gold)."""

    def __init__(self, repos_dir: str = "", cfg: RewardConfig = RewardConfig(), negatives: int = DEFAULT_NEGATIVES):
        self.repos_dir, self.cfg, self.negatives = repos_dir, cfg, negatives
        self.sp, self.repos = StructureParser(), {}

    def repo(self, name: str):
        """The repository named ``owner/name`` under ``repos_dir`` (``None``: not there)."""
        if self.repos_dir and name not in self.repos:
            self.repos[name] = repo_for(self.repos_dir, name)
        return self.repos.get(name)

    def instance(self, tasks: Iterable[dict], runs: Iterable[Summary]) -> Iterator[dict | InstanceContext]:
        """:func:`localize_instance` of one instance: the tasks that list it (:func:`pick_task` chooses) and its
        runs' summaries."""
        task = pick_task(tasks)
        return localize_instance(task, list(runs), self.repo((task or {}).get("repo") or ""), self.sp,
                                 negatives=self.negatives)

    def trajectory(self, item: tuple[InstanceContext, Created, dict]) -> Iterator[dict]:
        """:func:`localize_trajectory` of ``(its instance's context, its created paths, trajectory)``."""
        ctx, created, traj = item
        read = base_reader(self.repo(ctx.fields["repo"]), ctx.fields["base_commit"])
        yield localize_trajectory(ctx, traj, created, read, self.sp, self.cfg)


def mine_instance(task: dict, trajs: list[dict], repo, sp: StructureParser, *,
                  cfg: RewardConfig = RewardConfig(), config_hash: str = "",
                  negatives: int = DEFAULT_NEGATIVES) -> Iterator[dict]:
    """Localization records (or rejects) for one task and its trajectories (see the module docstring):
    :func:`localize_instance` over their summaries, then :func:`localize_trajectory` for each.

    ``repo`` is a :class:`swemine.corpora.repos.RepoSource` holding ``base_commit`` (``repo`` gold, repository
    files decided by the base commit, BM25 negatives up to ``negatives``) or ``None`` (``patch_only`` gold).
    """
    runs = sorted(((summarize(t), t) for t in trajs), key=lambda st: st[0].order())
    for item in localize_instance(task, [s for s, _ in runs], repo, sp, config_hash=config_hash, negatives=negatives):
        if not isinstance(item, InstanceContext):
            yield item
            continue
        read = base_reader(repo, task.get("base_commit") or "")
        for s, traj in runs:
            yield localize_trajectory(item, traj, s.created, read, sp, cfg)


def gold_quality_counts(records: list[dict], with_repos: bool) -> dict:
    """A run's ``gold_quality`` manifest entry: records by gold quality and (``with_repos``) the repositories that
    were not found, so a quiet fall back to patch-only gold is visible."""
    counts = collections.Counter(row["gold_quality"] for row in records)
    missing = {row["repo"] for row in records if with_repos and row["gold_quality"] == "patch_only"}
    return {**dict(sorted(counts.items())), "repos_not_found": sorted(missing)}
