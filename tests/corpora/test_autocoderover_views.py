"""AutoCodeRover search results that show code count as viewed (file + entity), listings of file names do not.
Real runs: autocoderover/results/acr-run-1 and external/acr-run2."""
from swemine.corpora.normalize import normalize_paths
from swemine.miners.localization.views import step_views

RUN2 = "external/acr-run2/applicable_patch/django__django-12308_2024-04-04_14-16-49"


def test_search_results_are_views(corpora_dir):
    (t,), _ = normalize_paths([str(corpora_dir / RUN2)])
    by_call = {(s["tool_name"], s["tool_args_json"]): s for s in t["steps"]}
    cls = by_call[("search_class", '{"class_name": "JSONField"}')]
    # "Found 4 classes ... <file>django/db/models/fields/json.py</file> (1 matches)": names only, no code
    assert step_views(cls) == []
    method = by_call[("search_method_in_file",
                      '{"file_name": "django/contrib/admin/utils.py", "method_name": "display_for_field"}')]
    assert [(v.path, v.spans) for v in step_views(method)] == [("django/contrib/admin/utils.py", ["display_for_field"])]
    in_class = by_call[("search_method_in_class", '{"class_name": "JSONField", "method_name": "prepare_value"}')]
    assert [(v.path, v.spans) for v in step_views(in_class)] == [("django/forms/fields.py", ["JSONField.prepare_value"])]


def test_most_runs_view_a_gold_file(corpora_dir):
    """Across both runs, the fraction of trajectories whose steps displayed a file the gold patch changes
    (the gold files are read from each folder's developer_patch.diff, independently of the miner)."""
    trajs, _ = normalize_paths([str(corpora_dir / "autocoderover/results/acr-run-1"), str(corpora_dir / "external/acr-run2")])
    hits = 0
    for t in trajs:
        folder = (corpora_dir / "autocoderover/results" if t["source_uri"].startswith("acr-run-1/")
                  else corpora_dir / "external") / t["source_uri"]          # portable uri: <root name>/<path>
        gold = {line[6:].strip() for line in open(f"{folder}/developer_patch.diff") if line.startswith("+++ b/")}
        shown = {v.path for s in t["steps"] for v in step_views(s)}
        hits += bool(gold & shown)
    assert (len(trajs), hits) == (29, 24)
