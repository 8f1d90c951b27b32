"""``swemine fetch-issues``: dump a GitHub repository's issues and pull requests as the JSONL that
``swemine run tasks --issues`` reads (token from ``GITHUB_TOKEN`` / ``GH_TOKEN``; ETags cached on disk)."""
from __future__ import annotations

import os
import re

from swemine.clients.github import DEFAULT_API, GitHubClient, GitHubError, dump_issues
from swemine.failures import CommandError


def add_arguments(parser) -> None:
    parser.add_argument("repo", help="owner/name")
    parser.add_argument("--output", default=None, help="JSONL path (default <owner>__<name>.jsonl)")
    parser.add_argument("--since", default=None, help="only issues updated at or after this ISO-8601 time")
    parser.add_argument("--api", default=DEFAULT_API, help="API root (GitHub Enterprise: https://HOST/api/v3)")
    parser.add_argument("--cache-dir", default=os.path.join(os.path.expanduser("~"), ".cache", "swemine", "github"),
                        help="where ETags and bodies of earlier answers are kept")


def main(args) -> int:
    if not re.fullmatch(r"[\w.-]+/[\w.-]+", args.repo):
        raise CommandError(f"{args.repo!r} is not owner/name")
    client = GitHubClient(api=args.api, cache_dir=args.cache_dir)
    path = args.output or args.repo.replace("/", "__") + ".jsonl"
    try:
        n = dump_issues(client, args.repo, path, since=args.since)
    except GitHubError as err:
        raise CommandError(str(err), 1) from None
    except OSError as err:
        raise CommandError(f"cannot write {path}: {err.strerror or err}") from None
    print(f"{n} issues and pull requests of {args.repo} → {path}  ({client.stats['requests']} requests, "
          f"{client.stats['not_modified']} not modified, {client.stats['waited_s']:.0f}s rate-limit waits)")
    return 0
