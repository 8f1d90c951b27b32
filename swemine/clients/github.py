"""A small GitHub REST client for issue dumps: token from the environment, ``Link`` pagination, primary and
secondary rate limits, and conditional requests with ETags cached on disk.

- token: ``GITHUB_TOKEN`` (or ``GH_TOKEN``) unless given; sent as ``Authorization: Bearer``;
- rate limits: a 403 or 429 answer waits ``Retry-After`` seconds when given (secondary limits), else until
  ``X-RateLimit-Reset`` when ``X-RateLimit-Remaining`` is 0 (primary limit), then retries; any other 403 is an
  error;
- conditional requests: each GET's ``ETag`` and body are cached under ``cache_dir``; the next GET sends
  ``If-None-Match`` and a ``304 Not Modified`` answer returns the cached body (GitHub does not count it against
  the rate limit);
- transient failures (connection refused or reset, DNS, timeouts, 5xx answers) are retried after 1, 2, 4, ...
  seconds (at most 30), ``max_retries`` times, then raised as one-line :class:`GitHubError`.

:func:`dump_issues` writes the JSONL dump that :mod:`swemine.miners.tasks.issue_links` reads.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

DEFAULT_API = "https://api.github.com"
ISSUE_FIELDS = ("number", "title", "body", "created_at", "closed_at", "state", "pull_request")


class GitHubError(RuntimeError):
    """A request failed for a reason other than a rate limit we can wait out."""


def next_link(link_header: str | None) -> str | None:
    """The ``rel="next"`` URL of a ``Link`` header, if any."""
    for part in (link_header or "").split(","):
        m = re.match(r'\s*<([^>]+)>\s*;(.*)', part)
        if m and re.search(r'rel="?next"?', m.group(2)):
            return m.group(1)
    return None


class GitHubClient:
    """GET JSON from the GitHub REST API with rate-limit waits and an on-disk ETag cache."""

    def __init__(self, token: str | None = None, api: str = DEFAULT_API, cache_dir: str | None = None,
                 max_retries: int = 5, timeout: float = 30.0, sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.time, max_wait: float = 3600.0):
        self.token = token if token is not None else (os.environ.get("GITHUB_TOKEN") or os.environ.get("GH_TOKEN"))
        self.api = api.rstrip("/")
        self.cache_dir = cache_dir
        self.max_retries, self.timeout, self.max_wait = max_retries, timeout, max_wait
        self.sleep, self.clock = sleep, clock
        self.stats = {"requests": 0, "not_modified": 0, "rate_limited": 0, "waited_s": 0.0}
        if cache_dir:
            os.makedirs(cache_dir, exist_ok=True)

    def _cache_path(self, url: str) -> str | None:
        if not self.cache_dir:
            return None
        return os.path.join(self.cache_dir, hashlib.sha256(url.encode()).hexdigest()[:32] + ".json")

    def _cached(self, url: str) -> dict | None:
        path = self._cache_path(url)
        if path and os.path.exists(path):
            with open(path) as fh:
                return json.load(fh)
        return None

    def _store(self, url: str, etag: str, body: Any, link: str | None) -> None:
        path = self._cache_path(url)
        if path and etag:
            tmp = path + ".tmp"
            with open(tmp, "w") as fh:
                json.dump({"etag": etag, "body": body, "link": link}, fh)
            os.replace(tmp, path)

    def _rate_limit_wait(self, status: int, headers) -> float | None:
        """Seconds to wait before retrying a 403/429, or ``None`` when it is not a rate limit."""
        retry_after = headers.get("Retry-After")
        if retry_after is not None and retry_after.strip().isdigit():
            return float(retry_after)
        if headers.get("X-RateLimit-Remaining") == "0" and headers.get("X-RateLimit-Reset"):
            return max(0.0, float(headers["X-RateLimit-Reset"]) - self.clock()) + 1.0
        return 60.0 if status == 429 else None

    def get(self, url: str) -> tuple[Any, str | None]:
        """``(json_body, next_page_url)`` of a GET (``url`` absolute or relative to the API root)."""
        if not url.startswith("http"):
            url = f"{self.api}/{url.lstrip('/')}"
        cached = self._cached(url)
        for _attempt in range(self.max_retries + 1):
            req = urllib.request.Request(url, headers={"Accept": "application/vnd.github+json",
                                                       "X-GitHub-Api-Version": "2022-11-28",
                                                       "User-Agent": "swemine"})
            if self.token:
                req.add_header("Authorization", f"Bearer {self.token}")
            if cached:
                req.add_header("If-None-Match", cached["etag"])
            self.stats["requests"] += 1
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                    body = json.loads(resp.read() or b"null")
                    link = resp.headers.get("Link")
                    self._store(url, resp.headers.get("ETag", ""), body, link)
                    return body, next_link(link)
            except urllib.error.HTTPError as err:
                if err.code == 304 and cached:
                    self.stats["not_modified"] += 1
                    return cached["body"], next_link(cached.get("link"))
                if err.code >= 500 and _attempt < self.max_retries:       # GitHub's own hiccup: back off, retry
                    self._back_off(_attempt)
                    continue
                wait = self._rate_limit_wait(err.code, err.headers) if err.code in (403, 429) else None
                if wait is None:
                    raise GitHubError(f"GET {url}: HTTP {err.code}: {err.read()[:300]!r}") from err
                if wait > self.max_wait:
                    raise GitHubError(f"GET {url}: rate limited for {wait:.0f}s > max_wait") from err
                self.stats["rate_limited"] += 1
                self.stats["waited_s"] += wait
                self.sleep(wait)
            except (urllib.error.URLError, OSError) as err:            # refused, reset, DNS, timeout
                if _attempt < self.max_retries:
                    self._back_off(_attempt)
                    continue
                reason = getattr(err, "reason", err)
                raise GitHubError(f"GET {url}: cannot reach the API ({reason}) after {self.max_retries} "
                                  "retries") from err
        raise GitHubError(f"GET {url}: still failing (rate limit or server error) after {self.max_retries} retries")

    def _back_off(self, attempt: int) -> None:
        """Wait before retrying a failed connection or a 5xx answer: 1, 2, 4, ... seconds, at most 30."""
        wait = float(min(2 ** attempt, 30))
        self.stats["waited_s"] += wait
        self.sleep(wait)

    def paginate(self, url: str) -> Iterator[Any]:
        """Every item of a list endpoint, following ``Link: rel="next"``."""
        while url:
            body, url = self.get(url)
            if not isinstance(body, list):
                raise GitHubError(f"expected a JSON list from a list endpoint, got {type(body).__name__}")
            yield from body

    def iter_issues(self, repo: str, state: str = "all", since: str | None = None,
                    per_page: int = 100) -> Iterator[dict]:
        """Issues and pull requests of ``owner/name`` (GitHub lists PRs among issues, with ``pull_request``)."""
        query = {"state": state, "per_page": per_page, "sort": "created", "direction": "asc"}
        if since:
            query["since"] = since
        url = f"{self.api}/repos/{repo}/issues?{urllib.parse.urlencode(query)}"
        for item in self.paginate(url):
            yield {"repo": repo.lower(), **{k: item.get(k) for k in ISSUE_FIELDS}}


def dump_issues(client: GitHubClient, repo: str, path: str, **kwargs) -> int:
    """Write ``repo``'s issues as the JSONL dump the task miner reads; returns the number of rows."""
    n = 0
    tmp = path + ".tmp"
    try:
        with open(tmp, "w") as fh:
            for row in client.iter_issues(repo, **kwargs):
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
                n += 1
        os.replace(tmp, path)
    except BaseException:               # no half dump left beside the last complete one
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    return n
