"""Repo canonicalization (docs/filters.md, decontamination): lower-case ``owner/name``, renames/aliases, fork lineages.

Aliases come from a table (``old/name -> new/name``; chains are followed). Forks and mirrors are joined
offline by their **root commit SHA**: repos whose git history starts at the same root commit are one lineage,
represented by a preferred member (an eval repo when one is in the lineage, else the smallest name).
"""
from __future__ import annotations

import csv
import io
import json
import os
import re
from collections.abc import Iterable, Mapping

_GH = re.compile(r"^(?:https?://|git@)?(?:www\.)?github\.com[/:]", re.I)
_INSTANCE = re.compile(r"^(?P<owner>[^_/][^/]*?)__(?P<name>.+)-(?P<num>\d+)$")


def normalize_repo(repo: str | None) -> str:
    """``https://github.com/Owner/Name.git`` / ``Owner__Name`` / ``Owner/Name`` → ``owner/name``."""
    text = (repo or "").strip()
    text = _GH.sub("", text)
    text = text[:-4] if text.endswith(".git") else text
    text = text.strip("/")
    if "/" not in text and "__" in text:
        text = text.replace("__", "/", 1)
    return text.lower()


def parse_instance_id(instance_id: str | None) -> tuple[str, int | None]:
    """SWE-bench ``owner__name-123`` → ``("owner/name", 123)``; ``("", None)`` when it has no such shape."""
    m = _INSTANCE.match(instance_id or "")
    if not m:
        return "", None
    return f"{m['owner']}/{m['name']}".lower(), int(m["num"])


def read_alias_table(text: str) -> dict[str, str]:
    """Aliases from JSON (``{"old/name": "new/name"}``) or CSV / ``old,new`` / ``old=new`` lines."""
    text = text.strip()
    if text.startswith("{"):
        return {normalize_repo(k): normalize_repo(v) for k, v in json.loads(text).items()}
    out = {}
    for row in csv.reader(io.StringIO(text.replace("=", ","))):
        if len(row) >= 2 and not row[0].startswith("#"):
            out[normalize_repo(row[0])] = normalize_repo(row[1])
    return out


def read_aliases(values: Iterable[str]) -> dict[str, str]:
    """The aliases of ``--repo-alias`` values, each an alias file or an alias table's text (``old=new``)."""
    out: dict[str, str] = {}
    for value in values:
        if os.path.isfile(value):
            with open(value, encoding="utf-8") as fh:
                value = fh.read()
        out.update(read_alias_table(value))
    return out


class RepoCanon:
    """Maps any spelling of a repo to its canonical name.

    ``aliases``: ``{old: new}``; ``roots``: ``{repo: [root SHAs]}`` (from :func:`swemine.corpora.git.root_commits` or metadata);
    ``preferred``: names that represent their lineage when present (the eval repos).
    """

    def __init__(self, aliases: Mapping[str, str] | None = None, roots: Mapping[str, Iterable[str]] | None = None,
                 preferred: Iterable[str] = ()):
        self.aliases = {normalize_repo(k): normalize_repo(v) for k, v in (aliases or {}).items()}
        preferred_set = {self._follow(normalize_repo(p)) for p in preferred}
        by_root: dict[str, set[str]] = {}
        for repo, shas in (roots or {}).items():
            for sha in shas:
                by_root.setdefault(sha, set()).add(self._follow(normalize_repo(repo)))
        # union repos sharing any root into lineages
        parent: dict[str, str] = {}

        def find(x: str) -> str:
            while parent.setdefault(x, x) != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        for members in by_root.values():
            first, *rest = sorted(members)
            for m in rest:
                a, b = find(first), find(m)
                if a != b:
                    parent[max(a, b)] = min(a, b)
        groups: dict[str, list[str]] = {}
        for repo in list(parent):
            groups.setdefault(find(repo), []).append(repo)
        self.lineage: dict[str, str] = {}
        for members in groups.values():
            pref = sorted(m for m in members if m in preferred_set)
            rep = pref[0] if pref else min(members)
            for m in members:
                self.lineage[m] = rep

    def _follow(self, repo: str) -> str:
        seen = set()
        while repo in self.aliases and repo not in seen:
            seen.add(repo)
            repo = self.aliases[repo]
        return repo

    def canonical(self, repo: str | None) -> str:
        """The canonical ``owner/name`` of ``repo`` ("" for an empty value)."""
        name = self._follow(normalize_repo(repo))
        return self.lineage.get(name, name)

    def how(self, repo: str | None) -> str:
        """Which canonicalization step changed ``repo``: ``""``, ``lowercase``, ``alias`` or ``fork_root``."""
        norm = normalize_repo(repo)
        followed = self._follow(norm)
        if self.lineage.get(followed, followed) != followed:
            return "fork_root"
        if followed != norm:
            return "alias"
        return "lowercase" if norm != (repo or "") else ""
