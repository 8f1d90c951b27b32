"""Mutation testing of the modules whose logic decides labels (``make mutation``; not part of CI).

For each module in :data:`TARGETS`, cosmic-ray mutates the file in place, one mutant at a time, and runs the
module's own tests; a mutant is *killed* when they fail (or time out). Prints killed / total per module and the
surviving mutants. Run it in a checkout you are not editing: cosmic-ray restores each file after its mutant.

    .venv/bin/python tests/mutation/mutate.py [MODULE ...] [--jobs-per-module N]
"""
from __future__ import annotations

import argparse
import json
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]

#: the scanner's tests that need no pipeline run
_SECRETS_TESTS = ["tests/filters/test_secrets_rules.py", "tests/filters/test_secrets.py",
                  "tests/filters/test_secrets_allowlist.py"] + [
    f"tests/filters/test_secrets_reliability.py::{t}" for t in (
        "test_every_string_field_is_scrubbed_including_step_tool_args", "test_reject_and_filtered_rows_are_scrubbed",
        "test_ip_addresses_only_in_address_context", "test_entropy_detector_finds_keys_without_a_key_like_name",
        "test_prefilter_finds_exactly_what_a_full_scan_finds")]
#: module -> the tests that exercise it (a mutant must be killed by these alone)
TARGETS: dict[str, list[str]] = {
    "miners/localization/gold.py": ["tests/miners/localization/test_gold.py",
                                    "tests/miners/localization/test_gold_rules.py"],
    "miners/localization/metrics.py": ["tests/miners/localization/test_metrics.py",
                                       "tests/miners/localization/test_metrics_rules.py"],
    "miners/localization/mine.py": ["tests/miners/localization/test_mine.py",
                                    "tests/miners/localization/test_label_rules.py",
                                    "tests/miners/localization/test_mine_labels_rules.py",
                                    "tests/miners/localization/test_negatives.py",
                                    "tests/miners/localization/test_scratch.py"],
    "miners/localization/views.py": ["tests/miners/localization/test_views_rules.py",
                                     "tests/miners/localization/test_views.py",
                                     "tests/miners/localization/test_label_rules.py"],
    "miners/errors/flags.py": ["tests/miners/errors/test_flags_rules.py", "tests/miners/errors/test_flags.py"],
    "miners/errors/views.py": ["tests/miners/errors/test_error_views_rules.py"] + [
        f"tests/miners/errors/test_diagnosis.py::{t}" for t in (      # the tests that build views
            "test_mine_rules_and_views", "test_recovered_error_view_from_resolved_run",
            "test_preference_prefers_the_correction_over_the_error")],
    "miners/fim/scoring.py": ["tests/miners/fim/test_scoring.py", "tests/miners/fim/test_scoring_rules.py"],
    "miners/fim/groups.py": ["tests/miners/fim/test_scoring.py", "tests/miners/fim/test_groups_rules.py"],
    "miners/fim/masking.py": ["tests/miners/fim/test_masking_rules.py", "tests/miners/fim/test_masking_edges.py",
                              "tests/miners/fim/test_parse_mask.py", "tests/miners/fim/test_overlap.py"],
    "filters/decontam.py": ["tests/filters/test_decontam_rules.py"] + [
        f"tests/filters/test_decontam.py::{t}" for t in (          # the fast ones: no scan of whole real runs
            "test_benchmarks_load_every_public_schema", "test_canonicalization_aliases_and_forks",
            "test_planted_leaks_are_caught_with_evidence", "test_levels_temporal_grey_and_config",
            "test_boilerplate_ngrams_are_excluded", "test_generic_lines_are_not_evidence",
            "test_substring_anchor_survives_partial_edge_words",
            "test_kept_records_with_a_decontam_struct_are_annotated", "test_benchmark_document_frequency")],
    "filters/dedup.py": ["tests/filters/test_dedup_rules.py"] + [
        f"tests/filters/test_dedup.py::{t}" for t in (             # the fast ones: no Beam run, no corpora x3
            "test_building_blocks", "test_plain_dedup_pins_clusters", "test_every_reader_fills_the_trajectory_key",
            "test_empty_or_trivial_keys_are_never_duplicates", "test_near_decisions_keep_the_component_id_only")],
    "filters/quality.py": ["tests/filters/test_quality.py", "tests/filters/test_quality_rules.py"],
    "filters/minhash.py": ["tests/filters/test_dedup.py", "tests/filters/test_minhash_rules.py"],
    "filters/secrets.py": _SECRETS_TESTS,
    "filters/secret_prefilter.py": _SECRETS_TESTS,
    "miners/tasks/history.py": ["tests/miners/tasks/test_history.py", "tests/miners/tasks/test_dates.py",
                                "tests/miners/tasks/test_history_rules.py"],
}

#: Operators that make equivalent or meaningless mutants in this code base (bit shifts on strings, renames).
EXCLUDED_OPERATORS = [
    r"core/ReplaceBinaryOperator_.*_(RShift|LShift|BitOr|BitAnd|BitXor|Pow|FloorDiv|Mod)",
    r"core/ReplaceBinaryOperator_(RShift|LShift|BitOr|BitAnd|BitXor|Pow|FloorDiv|Mod)_.*",
    r"core/VariableReplacer", r"core/VariableInserter", r"core/RemoveDecorator",
]


def _config(module: str, tests: list[str], timeout: float) -> str:
    python = sys.executable
    command = f"{python} -m pytest -x -q -p no:cacheprovider -p no:randomly {' '.join(tests)}"
    excluded = ", ".join(json.dumps(op) for op in EXCLUDED_OPERATORS)
    return (f'[cosmic-ray]\nmodule-path = "{module}"\ntimeout = {timeout}\nexcluded-modules = []\n'
            f'test-command = "{command}"\n\n[cosmic-ray.distributor]\nname = "local"\n\n'
            f'[cosmic-ray.filters.operators-filter]\nexclude-operators = [{excluded}]\n')


def run_module(module: str, tests: list[str], workdir: pathlib.Path, timeout: float) -> dict:
    """Mutate one module; return its counts and survivors."""
    cfg = workdir / (module.replace("/", "_") + ".toml")
    session = cfg.with_suffix(".sqlite")
    cfg.write_text(_config(module, tests, timeout))
    bin_dir = pathlib.Path(sys.executable).parent
    subprocess.run([bin_dir / "cosmic-ray", "init", cfg, session], cwd=ROOT, check=True)
    subprocess.run([bin_dir / "cr-filter-operators", session, cfg], cwd=ROOT, check=True)
    subprocess.run([bin_dir / "cosmic-ray", "exec", cfg, session], cwd=ROOT, check=True)
    dump = subprocess.run([bin_dir / "cosmic-ray", "dump", session], cwd=ROOT, check=True, capture_output=True,
                          text=True).stdout
    killed, survivors, total = 0, [], 0
    for line in dump.splitlines():
        job, result = json.loads(line)
        if not result or result.get("test_outcome") is None:
            continue                                   # skipped by the operator filter
        total += 1
        if result["test_outcome"] in ("killed", "incompetent"):
            killed += 1
        else:
            m = job["mutations"][0]
            survivors.append(f"{m['module_path']}:{m['start_pos'][0]} {m['operator_name']}#{m['occurrence']}")
    return {"module": module, "killed": killed, "total": total, "survivors": survivors}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("modules", nargs="*", help="modules to mutate (default: every TARGETS entry)")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds before a mutant's test run counts as killed")
    args = ap.parse_args(argv)
    modules = args.modules or list(TARGETS)
    with tempfile.TemporaryDirectory() as tmp:
        results = [run_module(m, TARGETS[m], pathlib.Path(tmp), args.timeout) for m in modules]
    for r in results:
        score = r["killed"] / r["total"] if r["total"] else 0.0
        print(f"{r['module']:<34} killed {r['killed']:>4} / {r['total']:<4} {score:6.1%}")
        for s in r["survivors"]:
            print(f"    survived: {s}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
