"""The shared front of the trajectory jobs: task files (stage ``tasks``) and trajectory dumps (stage ``read``), each
trajectory joined (stage ``join``, :func:`swemine.corpora.normalize.join_instance`) with the run labels and the
task (:func:`swemine.corpora.tasks.pick_task`) of its instance, looked up in side inputs: trajectories are never
shuffled. :func:`group_by_instance` groups instance ids only, to count ``join.info.unused_tasks``."""
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


class _Indexed(beam.DoFn):
    """Looks instances up in the side inputs ``labels`` and ``tasks``, indexed once per process. They travel packed:
    the runner's side input cache sizes what it holds by walking every object (0.3 s of a 1.8 s run as dicts)."""

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
    """``(trajectory, its instance's task or None)`` pairs (the fields the join took; ``task_side`` ``None``: no
    tasks)."""
    if task_side is None:
        return trajs | "NoTask" >> beam.Map(lambda t: (t, None))
    return trajs | "WithTask" >> beam.ParDo(_WithTask(), task_side)


def with_gold(trajs, task_side):
    """``{"trajectory", "gold_patch"}`` items: its task's patch ("" without one)."""
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
    """``(instance, x)`` per trajectory and ``(instance, task)`` per task grouped into ``{"trajs", "tasks"}``,
    counted by :class:`_UnusedTasks` (``with_inputs``: whether the job reads trajectories at all)."""
    grouped = {"trajs": trajs, "tasks": tasks} | "TaskUse" >> beam.CoGroupByKey()
    _ = grouped | "UnusedTasks" >> beam.ParDo(_UnusedTasks(with_inputs))
    return grouped


def read_trajectory_records(p: beam.Pipeline, source, task_fields: tuple[str, ...] = TASK_CONTEXT,
                            unused_tasks: bool = True):
    """The trajectory records of ``source`` (a job's :class:`~swemine.pipelines.configs.TrajectoryInputs`) joined
    with run labels and its tasks (their ``task_fields`` only): ``(records, rejects, tasks, task_side)``, the last
    two ``None`` without tasks. ``unused_tasks=False``: the job calls :func:`group_by_instance` itself."""
    tasks, task_rejects = read_tasks(p, list(source.tasks)) if source.tasks else (None, None)
    trajs, labels, read_rejects = _read(p, source)
    side = {"labels": beam.pvalue.AsIter(labels | "PackLabels" >> beam.Map(pack))}
    if tasks is not None:
        keyed_tasks = tasks | "KeyTasks" >> beam.Map(lambda t: (t["instance_id"], {k: t.get(k) for k in task_fields}))
        side["tasks"] = beam.pvalue.AsIter(keyed_tasks | "PackTasks" >> beam.Map(pack))
        if unused_tasks:
            group_by_instance(trajs | "TrajInstances" >> beam.Map(lambda kv: (kv[0], True)),
                              keyed_tasks | "TaskInstances" >> beam.Map(lambda kv: (kv[0], True)), bool(source.inputs))
    rejects = [read_rejects] if tasks is None else [task_rejects, read_rejects]
    return trajs | "Join" >> beam.ParDo(_Join(), **side), rejects, tasks, side.get("tasks")
