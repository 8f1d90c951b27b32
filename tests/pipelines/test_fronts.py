"""The shared front: trajectories, run labels and tasks joined once per instance, with one stable task choice."""
from __future__ import annotations

import json

import apache_beam as beam
from apache_beam.testing.util import assert_that, equal_to

from swemine.corpora.samples import sample_root
from swemine.corpora.tasks import load_tasks, pick_task
from swemine.pipelines.fronts import read_tasks, read_trajectories, trajectories
from swemine.pipelines.runner import beam_options

ROOT = sample_root()
TASKS = f"{ROOT}/tasks/sample_tasks.jsonl"


def _variant(tmp_path) -> tuple[str, dict]:
    """A second task file listing samples__calc-1 with another patch (so another record id)."""
    row = next(json.loads(line) for line in open(TASKS) if '"samples__calc-1"' in line)
    row["patch"] = row["patch"].replace("return None", "return 0")
    path = tmp_path / "other_tasks.jsonl"
    path.write_text(json.dumps(row) + "\n")
    return str(path), row


def test_pick_task_is_the_smallest_record_id_whatever_the_order(tmp_path):
    other, _ = _variant(tmp_path)
    both = [t for t in load_tasks([TASKS, other]) if t["instance_id"] == "samples__calc-1"]
    assert len(both) == 2 and both[0]["record_id"] != both[1]["record_id"]
    assert pick_task(both) is pick_task(both[::-1]) is min(both, key=lambda t: t["record_id"])
    assert pick_task([]) is None


def test_groups_carry_the_picked_task_and_joined_trajectories(tmp_path):
    other, _ = _variant(tmp_path)
    both = [t for t in load_tasks([TASKS, other]) if t["instance_id"] == "samples__calc-1"]
    chosen = min(both, key=lambda t: t["record_id"])["patch"]
    with beam.Pipeline(options=beam_options([])) as p:
        tasks, _ = read_tasks(p, [TASKS, other])
        groups, _ = read_trajectories(p, [f"{ROOT}/trajectories"], 1 << 30, tasks, task_fields=None)
        calc1 = groups | beam.Filter(lambda g: g["instance_id"] == "samples__calc-1")
        assert_that(calc1 | beam.Map(lambda g: (g["task"]["patch"] == chosen, len(g["trajs"]) > 0,
                                                {t["repo"] for t in g["trajs"]})),
                    equal_to([(True, True, {"samples/calc"})]), label="OneGroup")
        # flattening gives the group's trajectories back (every one read for the instance)
        ids = trajectories(groups) | beam.Map(lambda t: t["instance_id"])
        counts = ids | beam.combiners.Count.PerElement() | beam.Filter(lambda kv: kv[0] == "samples__calc-1")
        assert_that(counts | beam.Map(lambda kv: kv[1] > 0), equal_to([True]), label="Flattened")


def test_without_inputs_every_task_is_one_group(tmp_path):
    other, _ = _variant(tmp_path)
    n_instances = len({t["instance_id"] for t in load_tasks([TASKS])})
    with beam.Pipeline(options=beam_options([])) as p:
        tasks, _ = read_tasks(p, [TASKS, other])
        groups, rejects = read_trajectories(p, [], 1 << 30, tasks, task_fields=None)
        assert rejects == []
        shapes = groups | beam.Map(lambda g: (len(g["trajs"]), g["task"] is not None))
        assert_that(shapes | beam.combiners.Count.Globally(), equal_to([n_instances]), label="OnePerInstance")
        assert_that(shapes | beam.Distinct(), equal_to([(0, True)]), label="TaskOnly")
