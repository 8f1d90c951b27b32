"""Issues and pull requests behind a fix: closing keywords, the issues JSONL dump, problem statements.

An issues dump is JSONL, one GitHub issue object per line with at least ``number``, ``title``, ``body``,
``created_at``, ``state`` and ``pull_request`` (present and non-empty when the row is a pull request, as in the
GitHub issues API). The repository a row belongs to comes from its ``repo`` field ("owner/name"), else its
``repository_url`` (API form), else the dump's file name ``<owner>__<name>.jsonl``; rows with none of these apply
to every repository mined in the run.
"""
from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator

from swemine.corpora.records import Reject, make_reject, sha256_bytes

STAGE = "issues"
#: GitHub's closing keywords, followed by ``#N`` (any case, optional colon).
CLOSING_RE = re.compile(r"\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s*:?\s+#(\d+)\b", re.I)
_TRAILER_RE = re.compile(r"^(?:signed-off-by|co-authored-by|reviewed-by|change-id):.*$", re.I | re.M)


def closing_refs(text: str) -> list[int]:
    """Issue numbers a text closes with GitHub's keywords (``fixes #12``, ``Closes: #3``), in order, unique."""
    seen: list[int] = []
    for m in CLOSING_RE.finditer(text or ""):
        n = int(m.group(1))
        if n not in seen:
            seen.append(n)
    return seen


def clean_message(text: str) -> str:
    """A commit / PR message without sign-off style trailers and surrounding blank lines."""
    return re.sub(r"\n{3,}", "\n\n", _TRAILER_RE.sub("", text or "")).strip()


def _row_repo(row: dict, default: str) -> str:
    if isinstance(row.get("repo"), str) and row["repo"]:
        return row["repo"].lower()
    url = row.get("repository_url")
    if isinstance(url, str) and "/repos/" in url:
        return url.split("/repos/", 1)[1].strip("/").lower()
    return default


def _dump_repo(path: str) -> str:
    base = os.path.basename(path).split(".", 1)[0]
    if "__" in base:
        owner, _, name = base.partition("__")
        return f"{owner}/{name}".lower()
    return ""


def read_issues(path: str) -> Iterator[dict | Reject]:
    """Issue rows of a JSONL dump as ``{repo, number, title, body, created_at, state, is_pr}`` (or rejects)."""
    default_repo = _dump_repo(path)
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            locator = f"line:{lineno}"
            try:
                row = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                yield make_reject(STAGE, "bad_json", str(exc), uri=path, locator=locator,
                                  sha256=sha256_bytes(raw), excerpt=raw)
                continue
            if not isinstance(row, dict) or not isinstance(row.get("number"), int):
                yield make_reject(STAGE, "no_number", "row is not an object with an integer number", uri=path,
                                  locator=locator, sha256=sha256_bytes(raw), excerpt=raw)
                continue
            yield {"repo": _row_repo(row, default_repo), "number": row["number"], "title": row.get("title") or "",
                   "body": row.get("body") or "", "created_at": row.get("created_at") or "",
                   "state": row.get("state") or "", "is_pr": bool(row.get("pull_request"))}


class IssueIndex:
    """Issue rows by ``(repo, number)``; rows without a repository match any repository."""

    def __init__(self, rows: list[dict] | None = None):
        self._rows: dict[tuple[str, int], dict] = {}
        for row in rows or []:
            self._rows[(row["repo"], row["number"])] = row

    @classmethod
    def from_dumps(cls, paths: list[str]) -> IssueIndex:
        return cls([r for p in paths for r in read_issues(p) if not isinstance(r, Reject)])

    def get(self, repo: str, number: int) -> dict | None:
        return self._rows.get((repo.lower(), number)) or self._rows.get(("", number))

    def __len__(self) -> int:
        return len(self._rows)


def issue_text(row: dict) -> str:
    """An issue's statement as SWE-bench writes it: title, blank line, body."""
    return f"{row['title'].strip()}\n\n{row['body'].strip()}".strip() + "\n"


def problem_statement(repo: str, number: int, is_pr: bool, message: str, index: IssueIndex | None
                      ) -> tuple[str, str, list[int], dict | None]:
    """``(statement, statement_source, linked_issues, pr_row)`` for a fix.

    Linked issues come from closing keywords in ``message`` and, when the dump holds the pull request, in its
    description. Sources, best first: ``issue`` (linked issues found in the dump), ``pr_description`` (the pull
    request's own title and body from the dump), ``pr_message`` / ``commit_message`` (the git message).
    """
    pr_row = index.get(repo, number) if (index is not None and is_pr) else None
    if pr_row is not None and not pr_row["is_pr"]:
        pr_row = None
    texts = [message] + ([pr_row["title"], pr_row["body"]] if pr_row else [])
    linked = [n for t in texts for n in closing_refs(t) if n != number or not is_pr]
    linked = list(dict.fromkeys(linked))
    if index is not None:
        issues = [index.get(repo, n) for n in linked]
        issues = [i for i in issues if i is not None and not i["is_pr"]]
        if issues:
            return "\n".join(issue_text(i) for i in issues), "issue", linked, pr_row
    if pr_row is not None:
        return issue_text(pr_row), "pr_description", linked, pr_row
    return clean_message(message), "pr_message" if is_pr else "commit_message", linked, None
