"""The shared fronts of the jobs: task files, and trajectory dumps read and joined with run labels and tasks once.

``read_tasks(p, specs)`` → ``(tasks, rejects)``: stage ``tasks`` (one spec → its tasks).

``read_trajectory_records(p, source, tasks, task_fields)`` → ``(records, rejects, task_side)``: stage ``read``
(unit → trajectories, run labels and rejects), then stage ``join`` (:func:`swemine.corpora.normalize.join_instance`,
counted per trajectory): each trajectory with its instance's labels and task (:func:`swemine.corpora.tasks.pick_task`
of those listing the instance, ``task_fields`` only). Labels and tasks are small tables, looked up as side inputs:
the trajectories are not shuffled (grouping them by instance took about a fifth more CPU and a tenth more memory
over 104 MB of runs). ``task_side`` is the tasks' side input (``None`` without tasks); :func:`with_gold` pairs each
trajectory with its task's patch from it. ``join.info.unused_tasks`` counts the instances that have a task and no
trajectory (:func:`group_by_instance`: a shuffle of instance ids, or of the job's own per-instance grouping);
without inputs (gold-only localization) the join runs over no trajectory.
"""
from __future__ import annotations

import apache_beam as beam
from apache_beam.transforms.window import GlobalWindow
from apache_beam.utils.windowed_value import WindowedValue

from swemine.corpora.inputs import expand_inputs
from swemine.corpora.normalize import join_instance, read_unit
from swemine.corpora.tasks import load_tasks, pick_task
from swemine.pipelines.engine.stage import Counters, apply_stage, pack, unpack

#: The task fields a trajectory needs (record_id for the stable choice; the rest is applied to it).
TASK_CONTEXT = ("record_id", "repo", "base_commit", "problem_statement")


def read_tasks(p: beam.Pipeline, specs: list[str]):
    """Every task (and reject) of the task files / Hub datasets ``specs``, as one stage named ``tasks``."""
    tasks, rejects, _ = apply_stage(p | "TaskSpecs" >> beam.Create(specs), "tasks",
                                    lambda: (lambda spec: load_tasks([spec])), fanout=True)
    return tasks, rejects


def read_optional_tasks(p: beam.Pipeline, specs) -> tuple:
    """:func:`read_tasks` of ``specs`` as ``(tasks, [rejects])``; ``(None, [])`` when there are none."""
    if not specs:
        return None, []
    tasks, rejects = read_tasks(p, list(specs))
    return tasks, [rejects]


class _SplitKinds(beam.DoFn):
    """Reader output → ``(instance_id, packed trajectory)`` on the main output (see :func:`pack`), and
    ``(instance_id, [labels])`` on ``labels``: a bundle's labels of one instance travel as one element (a run's
    label files list every instance, so labels far outnumber trajectories)."""

    #: Labels held back at most, before the bundle ends.
    max_held = 20_000

    def start_bundle(self):
        self._labels: dict[str, list[dict]] = {}
        self._held = 0

    def process(self, rec):
        if rec.get("kind") == "label":
            self._labels.setdefault(rec["instance_id"], []).append(rec)
            self._held += 1
            if self._held >= self.max_held:
                yield from self._flush(lambda kv: kv)
        else:
            yield rec["instance_id"], pack(rec)

    def finish_bundle(self):
        yield from self._flush(lambda kv: WindowedValue(kv, GlobalWindow().max_timestamp(), [GlobalWindow()]))

    def _flush(self, wrap):
        labels, self._labels, self._held = self._labels, {}, 0
        for kv in labels.items():
            yield beam.pvalue.TaggedOutput("labels", wrap(kv))


def _read(p: beam.Pipeline, source):
    """Stage ``read`` over ``source``'s units: ``(instance_id, packed trajectory)`` pairs, the run labels
    (``(instance_id, [labels])``, with those of the ``--labels`` files) and the rejects."""
    units = expand_inputs(list(source.inputs), source.follow_symlinks)
    max_file_bytes = source.max_file_bytes          # the stage pickles this number, not the whole job
    recs, read_rejects, _ = apply_stage(
        p | "Units" >> beam.Create(units, reshuffle=True), "read",
        lambda: (lambda unit: read_unit(unit, max_file_bytes)), fanout=True, progress_every=100)
    split = recs | "SplitKinds" >> beam.ParDo(_SplitKinds()).with_outputs("labels", main="trajs")
    labels = split.labels
    extra = _by_key((lb["instance_id"], lb) for lb in source.extra_labels())
    if extra:   # the --labels files
        labels = (labels, p | "LabelsFiles" >> beam.Create(sorted(extra.items()))) | "WithLabelsFiles" >> beam.Flatten()
    return split.trajs, labels, read_rejects


def _keyed_tasks(tasks, task_fields: tuple[str, ...] | None):
    """``(instance_id, task)`` of every task (``task_fields`` only; ``None``: the whole task)."""
    keep = (lambda t: t) if task_fields is None else (lambda t: {k: t.get(k) for k in task_fields})
    return tasks | "KeyTasks" >> beam.Map(lambda t: (t["instance_id"], keep(t)))


class _Indexed(beam.DoFn):
    """A DoFn that looks trajectories' instances up in the side inputs ``labels`` and ``tasks`` (the whole run's,
    packed: the runner's side input cache sizes what it holds by walking every object, 0.3 s of a 1.8 s run for
    the labels of 104 MB of runs as dicts, nothing as bytes). They are indexed once per process: ``{instance:
    [labels]}`` and ``{instance: picked task}``."""

    stage = "join"

    def setup(self):
        self.counters = Counters(self.stage)
        self._index: tuple[dict, dict] | None = None

    def index(self, labels, tasks) -> tuple[dict, dict]:
        if self._index is None:
            by_labels = _by_key((iid, lb) for iid, batch in map(unpack, labels) for lb in batch)
            self._index = by_labels, {iid: pick_task(ts) for iid, ts in _by_key(map(unpack, tasks)).items()}
        return self._index


class _Join(_Indexed):
    """One trajectory joined with its instance's labels and task; counts ``join.in/out`` and
    ``join.info.labelled``."""

    def process(self, kv, labels, tasks=()):
        by_labels, by_task = self.index(labels, tasks)
        iid, packed = kv
        [traj] = join_instance(iid, [unpack(packed)], by_labels.get(iid, ()), by_task.get(iid))["trajs"]
        self.counters.inc("in")
        self.counters.inc("out")
        self.counters.inc("info.labelled", int(traj["resolved"] is not None))
        yield traj


class _WithTask(_Indexed):
    """A trajectory → ``(trajectory, its instance's task or None)``."""

    def process(self, traj, tasks):
        yield traj, self.index((), tasks)[1].get(traj["instance_id"])


def with_task(trajs, task_side):
    """``(trajectory, task)`` pairs: each trajectory with its instance's task (the fields the join took), looked
    up in ``task_side`` (of :func:`read_trajectory_records`; ``None``: no tasks, every task is ``None``)."""
    if task_side is None:
        return trajs | "NoTask" >> beam.Map(lambda t: (t, None))
    return trajs | "WithTask" >> beam.ParDo(_WithTask(), task_side)


def with_gold(trajs, task_side):
    """``{"trajectory", "gold_patch"}`` items: each trajectory with its instance's task patch ("" without one;
    see :func:`with_task`)."""
    return with_task(trajs, task_side) | "WithGold" >> beam.Map(
        lambda tt: {"trajectory": tt[0], "gold_patch": (tt[1] or {}).get("patch") or ""})


def _by_key(pairs) -> dict:
    """``{key: [values]}`` of ``(key, value)`` pairs."""
    out: dict = {}
    for key, value in pairs:
        out.setdefault(key, []).append(value)
    return out


class _UnusedTasks(beam.DoFn):
    """``join.info.unused_tasks``: the instances that have a task and no trajectory; without inputs, each task's
    instance is a join of no trajectory (``join.in``, ``join.out`` and ``join.info.labelled`` stay 0)."""

    stage = "join"

    def __init__(self, with_inputs: bool):
        self.with_inputs = with_inputs

    def setup(self):
        self.counters = Counters(self.stage)

    def process(self, kv):
        _, grouped = kv
        if grouped["tasks"] and not grouped["trajs"]:
            if self.with_inputs:
                self.counters.inc("info.unused_tasks")
            else:
                for name in ("in", "out", "info.labelled"):
                    self.counters.inc(name, 0)
        return ()


def group_by_instance(trajs, tasks, with_inputs: bool):
    """``(instance, x)`` per trajectory and ``(instance, task)`` per task, grouped by instance into ``{"trajs",
    "tasks"}``; counts ``join.info.unused_tasks`` (see :class:`_UnusedTasks`; ``with_inputs``: whether the job
    reads trajectories at all)."""
    grouped = {"trajs": trajs, "tasks": tasks} | "TaskUse" >> beam.CoGroupByKey()
    _ = grouped | "UnusedTasks" >> beam.ParDo(_UnusedTasks(with_inputs))
    return grouped


def read_trajectory_records(p: beam.Pipeline, source, tasks=None, task_fields: tuple[str, ...] | None = TASK_CONTEXT,
                            unused_tasks: bool = True):
    """The trajectory records of ``source`` (a job's :class:`~swemine.pipelines.configs.TrajectoryInputs`: inputs,
    size limit, symlink rule) joined with run labels and ``tasks`` (a PCollection, or ``None``; ``task_fields``
    only, ``None``: whole tasks); returns ``(records, rejects, task_side)`` (see the module docstring).
    ``unused_tasks=False``: the job groups its tasks by instance itself (:func:`group_by_instance`), which counts
    them."""
    if source.inputs:
        trajs, labels, read_rejects = _read(p, source)
        rejects = [read_rejects]
    else:
        trajs, labels, rejects = p | "NoTrajectories" >> beam.Create([]), p | "NoLabels" >> beam.Create([]), []
    side = {"labels": beam.pvalue.AsIter(labels | "PackLabels" >> beam.Map(pack))}
    if tasks is not None:
        keyed_tasks = _keyed_tasks(tasks, task_fields)
        side["tasks"] = beam.pvalue.AsIter(keyed_tasks | "PackTasks" >> beam.Map(pack))
        if unused_tasks:
            group_by_instance(trajs | "TrajInstances" >> beam.Map(lambda kv: (kv[0], True)),
                              keyed_tasks | "TaskInstances" >> beam.Map(lambda kv: (kv[0], True)), bool(source.inputs))
    return trajs | "Join" >> beam.ParDo(_Join(), **side), rejects, side.get("tasks")
