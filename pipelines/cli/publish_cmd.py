"""``swemine publish <run-dir> --repo-id org/name``: upload a finished run (or a folder of runs) to the Hub."""
from __future__ import annotations

import argparse

from swemine.failures import CommandError, described
from swemine.manifests import card as cardlib
from swemine.manifests.publish import DEFAULT_FILES_PER_COMMIT, build_plan, is_transient, privacy_scan, publish
from swemine.manifests.runs import RunError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir", help="a finished run directory, or a folder of run directories")
    parser.add_argument("--repo-id", required=True, help="dataset repository, e.g. org/name")
    parser.add_argument("--private", action="store_true", help="create the repository as private")
    parser.add_argument("--revision", default="main", help="branch to commit to (created if missing)")
    parser.add_argument("--tag", default=None, help="tag for this publication (default: one tag per run, its run id)")
    parser.add_argument("--license", default=cardlib.DEFAULT_LICENSE, help="license id for the card header")
    parser.add_argument("--include-filtered", action="store_true",
                        help="also publish filtered records (they may hold secrets or benchmark text)")
    parser.add_argument("--include-rejects", action="store_true",
                        help="also publish rejects (excerpts of raw inputs that could not be used)")
    parser.add_argument("--allow-unscrubbed", action="store_true",
                        help="publish a run made with --scrub-secrets off (default: refuse)")
    parser.add_argument("--provenance", action="append", default=[],
                        help="JSONL register of input files {dest, repo, commit, license} (repeatable)")
    parser.add_argument("--max-files-per-commit", type=int, default=DEFAULT_FILES_PER_COMMIT)
    parser.add_argument("--dry-run", action="store_true", help="print the plan and the card; no network call")
    parser.add_argument("--publish-local-paths", action="store_true",
                        help="keep this machine's absolute input/output paths in the published manifest(s)")
    parser.add_argument("--allow-findings", action="store_true",
                        help="publish even when the privacy scan finds secrets, home-directory or local paths")


def main(args) -> int:
    try:
        plan = build_plan(args.run_dir, args.repo_id, revision=args.revision, tag=args.tag, private=args.private,
                          include_filtered=args.include_filtered, license=args.license, registers=args.provenance,
                          include_rejects=args.include_rejects, allow_unscrubbed=args.allow_unscrubbed,
                          local_paths=args.publish_local_paths)
    except (RunError, cardlib.CardError) as err:
        raise CommandError(str(err), prefix="cannot publish: ") from None
    scan = privacy_scan(args.run_dir, plan)
    if args.dry_run:
        print("\n".join(plan.describe(args.max_files_per_commit)))
        print("\n".join(scan.describe()))
        print("\n--- README.md ---\n" + plan.card)
        return 0
    if scan.blocking and not args.allow_findings:
        found = ", ".join(f"{k} {n}" for k, n in scan.blocking.items())
        raise CommandError(f"the rows hold {found} (see `--dry-run`; `--allow-findings` to publish anyway)",
                           prefix="cannot publish: ")
    from huggingface_hub import HfApi, get_token
    from huggingface_hub.errors import HfHubHTTPError

    if get_token() is None:
        raise CommandError("no Hugging Face token (set HF_TOKEN or run `hf auth login`)", prefix="cannot publish: ")
    try:
        result = publish(plan, HfApi(), max_files_per_commit=args.max_files_per_commit)
    except Exception as err:  # noqa: BLE001 - the Hub's answers and network failures; anything else is a bug
        if not (isinstance(err, (HfHubHTTPError, OSError, RuntimeError, ValueError)) or is_transient(err)):
            raise
        raise CommandError(f"{described(err)}\nre-run the same command to resume; files already on the Hub are "
                           "skipped", 1, prefix="publish stopped: ") from None
    print(f"datasets/{plan.repo_id}@{plan.revision}: uploaded {len(result.uploaded)} file(s), skipped "
          f"{len(result.skipped)} already present, {len(result.commits)} commit(s), tag(s) {', '.join(result.tags)}")
    return 0
