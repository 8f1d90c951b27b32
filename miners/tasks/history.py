"""Fix candidates from a repository's git history → SWE-bench-style ``Task`` records.

The walk is shardable: :func:`list_commits` lists a repository's commits (one ``git log`` with record
separators; the message travels with each commit so that classifying it costs no git call), and
:func:`mine_commit` turns one commit into a ``Task`` or a ``Filtered`` record saying why it is not one.

Candidates:

- ``pr_merge``: a merge commit ``Merge pull request #N …``; the pull request's changes are the diff from the
  merge base of its two parents to the second parent, and ``base_commit`` is that merge base;
- ``squash``: a commit whose subject ends in ``(#N)``; diffed against its first parent;
- ``issue_commit``: a commit whose message closes an issue (``fixes #N``, ``closes #N``, ``resolves #N``, any
  case); diffed against its first parent; ``N`` is the issue's number (GitHub numbers issues and pull
  requests from one sequence, so ``<owner>__<name>-<N>`` stays unique).

The diff is split by path rules (data in :class:`MineConfig`): test files go to ``test_patch``, documentation,
changelogs, news fragments and authors lists to ``doc_patch`` (SWE-bench's gold patches hold code only), the rest
to ``patch``, from which gold files and localization labels come.

Skipped, each with a reason: reverts, bot authors, merges between long-lived branches (a merge without a pull
request number), octopus merges, root commits, empty or binary diffs, and the filters of :class:`MineConfig`.
"""
from __future__ import annotations

import fnmatch
import json
import os
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone

from swemine.corpora.git import RepoError, git, succeeds
from swemine.corpora.records import (
    TASK_SCHEMA,
    Filtered,
    Reject,
    conform,
    content_id,
    dumps_extra,
    make_filtered,
    make_reject,
    provenance,
    sha256_bytes,
)
from swemine.miners.tasks.git_stream import prepare
from swemine.miners.tasks.issue_links import IssueIndex, closing_refs, problem_statement

STAGE_LIST = "history_list"
STAGE_MINE = "history_mine"
_RS, _US = "\x1e", "\x1f"
_LOG_FORMAT = "%H%x1f%P%x1f%an%x1f%ae%x1f%aI%x1f%cI%x1f%B%x1e"
#: Path rules for test files: ``dir/`` matches a directory anywhere in the path, other rules the file name.
DEFAULT_TEST_RULES = ("tests/", "test/", "testing/", "test_*.py", "*_test.py", "conftest.py")
#: Path rules (same syntax, case ignored) for files that are no code: documentation, changelogs, news fragments
#: (towncrier ``changelog/``, ``newsfragments/``, ``news/``), release notes and authors lists. SWE-bench's gold
#: patches hold code only (Verified: 622 ``.py`` files and one ``setup.cfg`` in 500 patches), so these go to
#: ``doc_patch``.
DEFAULT_DOC_RULES = ("doc/", "docs/", "documentation/", "changelog/", "changelog.d/", "changes/", "newsfragments/",
                     "news/", "whatsnew/", "release-notes/", "releasenotes/", "*.rst", "*.md", "*.markdown", "*.adoc",
                     *(f"{name}{ext}" for name in ("changelog", "changes", "history", "news", "authors",
                                                   "contributors", "thanks") for ext in ("", ".txt")))
DEFAULT_BOT_PATTERNS = (r"\[bot\]", r"\bdependabot\b", r"\brenovate\b", r"github-actions", r"pre-commit-ci",
                        r"\bgreenkeeper\b", r"\bsnyk-bot\b", r"\bpyup-bot\b", r"\bmergify\b", r"\bimgbot\b")
_PR_MERGE_RE = re.compile(r"^Merge pull request #(\d+)\b")
_SQUASH_RE = re.compile(r"\(#(\d+)\)\s*$")
_REVERT_SUBJECT_RE = re.compile(r"^(Revert|Reapply) \"|^Revert\b", re.I)
_REVERT_BODY_RE = re.compile(r"\bThis reverts commit [0-9a-f]{7,40}")


@dataclass(frozen=True)
class MineConfig:
    """Rules for turning a fix commit into a task (SWE-bench recipe plus the FIM paper's size limits)."""
    test_rules: tuple[str, ...] = DEFAULT_TEST_RULES
    doc_rules: tuple[str, ...] = DEFAULT_DOC_RULES
    bot_patterns: tuple[str, ...] = DEFAULT_BOT_PATTERNS
    max_code_files: int = 10
    min_statement_chars: int = 20
    max_statement_chars: int = 20000
    verify_apply: bool = True           # check with ``git apply --check`` that patch + test_patch apply at the base

    def as_dict(self) -> dict:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in self.__dict__.items()}


@dataclass
class Diff:
    """A diff split into code, test and documentation parts, with the paths of each (binary paths listed apart)."""
    patch: str = ""
    test_patch: str = ""
    doc_patch: str = ""
    code_files: list[str] = field(default_factory=list)
    test_files: list[str] = field(default_factory=list)
    doc_files: list[str] = field(default_factory=list)
    binary_files: list[str] = field(default_factory=list)


def matches_rules(path: str, rules: tuple[str, ...], ignore_case: bool = False) -> bool:
    """Whether ``path`` matches a rule (``dir/`` = a directory anywhere in the path; else a file-name glob)."""
    if ignore_case:
        path, rules = path.lower(), tuple(r.lower() for r in rules)
    parts = path.split("/")
    for rule in rules:
        if rule.endswith("/"):
            if rule[:-1] in parts[:-1]:
                return True
        elif fnmatch.fnmatchcase(parts[-1], rule):
            return True
    return False


def is_test_path(path: str, rules: tuple[str, ...] = DEFAULT_TEST_RULES) -> bool:
    """Whether ``path`` is a test file under ``rules``."""
    return matches_rules(path, rules)


def is_doc_path(path: str, rules: tuple[str, ...] = DEFAULT_DOC_RULES) -> bool:
    """Whether ``path`` is documentation, a changelog or an authors list under ``rules`` (case ignored)."""
    return matches_rules(path, rules, ignore_case=True)


def list_commits(repo_path: str, repo_name: str, rev: str = "HEAD", max_count: int = 0,
                 uri: str = "") -> list[dict]:
    """Every commit reachable from ``rev`` as a small dict (sha, parents, author, dates, message, repo)."""
    args = ["log", f"--format={_LOG_FORMAT}", "--no-color"]
    if max_count:
        args.append(f"--max-count={max_count}")
    out = git(repo_path, *args, rev, "--").decode("utf-8", errors="replace")
    commits = []
    for entry in out.split(_RS):
        entry = entry.lstrip("\n")
        if not entry:
            continue
        sha, parents, an, ae, adate, cdate, message = entry.split(_US, 6)
        commits.append({"repo_path": repo_path, "repo": repo_name, "repo_uri": uri or repo_path, "sha": sha,
                        "parents": parents.split(), "author_name": an, "author_email": ae,
                        "authored_at": adate, "committed_at": cdate, "message": message.rstrip("\n")})
    return commits


def classify(commit: dict, cfg: MineConfig) -> tuple[str, int] | tuple[None, str]:
    """``(kind, number)`` for a fix candidate, or ``(None, skip_reason)``; needs no git call."""
    message = commit["message"]
    subject = message.split("\n", 1)[0]
    author = f"{commit['author_name']} <{commit['author_email']}>"
    if any(re.search(p, author, re.I) for p in cfg.bot_patterns):
        return None, "bot_author"
    if _REVERT_SUBJECT_RE.match(subject) or _REVERT_BODY_RE.search(message):
        return None, "revert"
    parents = commit["parents"]
    if len(parents) > 2:
        return None, "octopus_merge"
    if len(parents) == 2:
        m = _PR_MERGE_RE.match(subject)
        return ("pr_merge", int(m.group(1))) if m else (None, "branch_merge")
    if not parents:
        return None, "root_commit"
    m = _SQUASH_RE.search(subject)
    if m:
        return "squash", int(m.group(1))
    refs = closing_refs(message)
    if refs:
        return "issue_commit", refs[0]
    return None, "not_a_fix"


def base_of(commit: dict, kind: str) -> tuple[str, str]:
    """``(base_commit, tip)``: merge base of the parents and the second parent for a merge, else parent and self."""
    if kind == "pr_merge":
        p1, p2 = commit["parents"]
        if "base" in commit:                               # computed by git_stream.prepare
            return commit["base"], p2
        base = git(commit["repo_path"], "merge-base", p1, p2).decode().strip()
        return base, p2
    return commit["parents"][0], commit["sha"]


def _unquote(token: str) -> str:
    """A path git quoted C-style (``"a/x\\ty"``, octal escapes for raw bytes) → the path."""
    raw, out, i = token.encode("utf-8"), bytearray(), 0
    escapes = {ord("n"): 10, ord("t"): 9, ord("r"): 13, ord("a"): 7, ord("b"): 8, ord("f"): 12, ord("v"): 11}
    while i < len(raw):
        if raw[i] == 92 and i + 1 < len(raw):
            if raw[i + 1:i + 4].isdigit():
                out.append(int(raw[i + 1:i + 4], 8))
                i += 4
                continue
            out.append(escapes.get(raw[i + 1], raw[i + 1]))
            i += 2
            continue
        out.append(raw[i])
        i += 1
    return out.decode("utf-8", errors="surrogateescape")


def chunk_path(header: str) -> str:
    """The path of a ``diff --git a/P b/P`` header line (without renames both sides name the same path)."""
    rest = header[len("diff --git "):]
    if rest.startswith('"'):
        m = re.match(r'"((?:[^"\\]|\\.)*)"', rest)
        return _unquote(m.group(1))[2:] if m else rest
    return rest[2:2 + (len(rest) - 5) // 2]


def split_diff(repo_path: str, base: str, tip: str, rules: tuple[str, ...] = DEFAULT_TEST_RULES,
               doc_rules: tuple[str, ...] = DEFAULT_DOC_RULES, raw: bytes | None = None) -> Diff:
    """The diff ``base..tip`` (no renames, one ``git diff`` unless ``raw`` holds it) split by path rules into test,
    documentation and code patches (a path that is both test and documentation is a test)."""
    if raw is None:
        raw = git(repo_path, "-c", "core.quotepath=off", "diff", "--no-color", "--no-ext-diff", "--no-renames",
                  "--src-prefix=a/", "--dst-prefix=b/", base, tip, "--")
    text = raw.decode("utf-8")
    out = Diff()
    for body in re.split(r"^diff --git ", text, flags=re.M)[1:]:
        chunk = "diff --git " + body
        path = chunk_path(chunk.split("\n", 1)[0])
        head = chunk.split("\n@@", 1)[0]
        if re.search(r"^(Binary files .* differ|GIT binary patch)$", head, re.M):
            out.binary_files.append(path)
        elif is_test_path(path, rules):
            out.test_files.append(path)
            out.test_patch += chunk
        elif is_doc_path(path, doc_rules):
            out.doc_files.append(path)
            out.doc_patch += chunk
        else:
            out.code_files.append(path)
            out.patch += chunk
    return out


def patch_applies(repo_path: str, base: str, patch: str) -> bool:
    """``git apply --check --cached`` of ``patch`` against an index built from ``base`` (no work tree needed)."""
    if not patch:
        return True
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "GIT_INDEX_FILE": os.path.join(tmp, "index")}
        return (succeeds(repo_path, "read-tree", base, env=env)
                and succeeds(repo_path, "apply", "--check", "--cached", "-", input_bytes=patch.encode("utf-8"), env=env))


def _commit_meta(commit: dict) -> dict:
    return {"record_id": content_id("commit", commit["repo"], commit["sha"]), "repo": commit["repo"],
            "sha": commit["sha"], "parents": commit["parents"], "subject": commit["message"].split("\n", 1)[0],
            "author": commit["author_name"], "source_uri": commit["repo_uri"],
            "source_locator": f"commit:{commit['sha']}"}


def mine_commit(commit: dict, cfg: MineConfig, issues: IssueIndex | None = None,
                config_hash: str = "") -> Iterator[dict | Filtered | Reject]:
    """One commit → a ``Task`` record, or a ``Filtered`` record with the reason it is not one."""
    kind, number = classify(commit, cfg)
    meta = _commit_meta(commit)
    if kind is None:
        yield make_filtered(STAGE_MINE, number, meta, "commit")
        return
    base, tip = base_of(commit, kind)
    try:
        diff = split_diff(commit["repo_path"], base, tip, cfg.test_rules, cfg.doc_rules, raw=commit.get("diff"))
    except UnicodeDecodeError as exc:
        yield make_filtered(STAGE_MINE, "non_utf8_diff", meta, "commit", {"kind": kind, "error": str(exc)})
        return
    evidence = {"kind": kind, "number": number, "code_files": diff.code_files, "test_files": diff.test_files,
                "doc_files": diff.doc_files}
    if diff.binary_files:
        yield make_filtered(STAGE_MINE, "binary_diff", meta, "commit", {**evidence, "binary": diff.binary_files})
        return
    if not diff.code_files and not diff.test_files and not diff.doc_files:
        yield make_filtered(STAGE_MINE, "empty_diff", meta, "commit", evidence)
        return
    is_pr = kind != "issue_commit"
    statement, source, linked, pr_row = problem_statement(commit["repo"], number, is_pr, _fix_message(commit, kind),
                                                          issues)
    task = _task(commit, kind, number, base, diff, statement, source, linked, pr_row, config_hash)
    reason = _filter_reason(diff, statement, cfg)
    if reason is None and cfg.verify_apply:
        if not (commit.get("applies") or patch_applies(commit["repo_path"], base, task["patch"] + task["test_patch"])):
            reason = "patch_does_not_apply"
    if reason:
        yield make_filtered(STAGE_MINE, reason, task, "task", {**evidence, "statement_chars": len(statement)})
        return
    yield task


def _fix_message(commit: dict, kind: str) -> str:
    """The message that describes the fix: a PR merge's body (GitHub puts the PR title there); a squash
    commit's message without the ``(#N)`` suffix; else the whole message."""
    subject, _, body = commit["message"].partition("\n")
    if kind == "pr_merge":
        return body
    if kind == "squash":
        return f"{_SQUASH_RE.sub('', subject).rstrip()}\n{body}"
    return commit["message"]


def _filter_reason(diff: Diff, statement: str, cfg: MineConfig) -> str | None:
    if not diff.code_files:
        return "no_code_change"
    if len(diff.code_files) > cfg.max_code_files:
        return "too_many_files"
    if not any(p.endswith(".py") for p in diff.code_files):
        return "no_python_change"
    if len(statement) < cfg.min_statement_chars:
        return "statement_too_short"
    if len(statement) > cfg.max_statement_chars:
        return "statement_too_long"
    return None


def _task(commit: dict, kind: str, number: int, base: str, diff: Diff, statement: str, source: str,
          linked: list[int], pr_row: dict | None, config_hash: str) -> dict:
    owner_name = commit["repo"].replace("/", "__")
    instance_id = f"{owner_name}-{number}"
    created_at, created_source = utc_iso(commit["authored_at"]), "commit_author_date"
    if pr_row and pr_row.get("created_at"):
        created_at, created_source = pr_row["created_at"], "pr_created_at"
    extra = {"kind": kind, "verifiable_hint": bool(diff.test_files), "linked_issues": linked,
             "code_files": diff.code_files, "test_files": diff.test_files, "doc_files": diff.doc_files,
             "author": commit["author_name"],
             "created_at_source": created_source, "subject": commit["message"].split("\n", 1)[0]}
    return conform(TASK_SCHEMA, {
        "record_id": content_id("task", instance_id, base, diff.patch), "instance_id": instance_id,
        "repo": commit["repo"], "base_commit": base, "problem_statement": statement, "hints_text": "",
        "created_at": created_at, "patch": diff.patch, "test_patch": diff.test_patch, "doc_patch": diff.doc_patch,
        "pr_number": number,
        "statement_source": source, "merged_commit": commit["sha"], "extra_json": dumps_extra(extra),
        **provenance(commit["repo_uri"], f"commit:{commit['sha']}",
                     sha256_bytes((diff.patch + diff.test_patch + diff.doc_patch).encode("utf-8")), config_hash)})


def utc_iso(stamp: str) -> str:
    """A git ISO-8601 date with offset → UTC ``YYYY-MM-DDTHH:MM:SSZ`` (the form GitHub and SWE-bench use)."""
    return datetime.fromisoformat(stamp).astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


_KIND_RANK = {"pr_merge": 0, "squash": 1, "issue_commit": 2}


def pick_instance(tasks: list[dict]) -> Iterator[dict | Filtered]:
    """Of several tasks with one ``instance_id`` keep one (PR merge before squash before issue commit, then the
    earliest); the others become ``duplicate_instance`` filtered records."""
    ranked = sorted(tasks, key=lambda t: (_KIND_RANK.get(json.loads(t["extra_json"])["kind"], 9), t["created_at"],
                                          t["merged_commit"]))
    yield ranked[0]
    for dup in ranked[1:]:
        yield make_filtered(STAGE_MINE, "duplicate_instance", dup, "task",
                            {"kept": ranked[0]["record_id"], "kept_commit": ranked[0]["merged_commit"]})


def mine_repo(repo_path: str, repo_name: str, cfg: MineConfig | None = None, issues: IssueIndex | None = None,
              rev: str = "HEAD") -> Iterator[dict | Filtered | Reject]:
    """The whole walk in plain Python (tests, benchmarks): list, mine every commit, de-duplicate instances.

    A git failure on one commit becomes a reject, as in the Beam stage."""
    cfg = cfg or MineConfig()
    by_instance: dict[str, list[dict]] = {}
    for commit in prepare(list_commits(repo_path, repo_name, rev), lambda c: classify(c, cfg)[0], rev,
                          cfg.verify_apply):
        try:
            results = list(mine_commit(commit, cfg, issues))
        except RepoError as exc:
            results = [make_reject(STAGE_MINE, "git_error", str(exc), uri=commit["repo_uri"],
                                   locator=f"commit:{commit['sha']}")]
        for r in results:
            if isinstance(r, (Filtered, Reject)):
                yield r
            else:
                by_instance.setdefault(r["instance_id"], []).append(r)
    for group in by_instance.values():
        yield from pick_instance(group)
