"""Scratch files: what a run created that the repository does not hold (reproduction scripts, notes, build output).

A file *belongs* to the repository when it exists at the task's base commit (when the repository is at hand) or
when the gold patch (or its test patch) changes it. A file the run created is *scratch* unless it belongs. The
run's own events decide what it created, never the file's name:

- editor ``create`` (OpenHands ``str_replace_editor``, SWE-agent ``create``, Moatless ``CreateFile``) that the
  harness did not refuse;
- shell writes: output redirection (``cat <<EOF > f``, ``echo x >> f``), ``tee``, ``touch``, the target of
  ``cp``/``mv``, and Python ``open(f, "w")`` / ``Path(f).write_text`` in an inline script; ``mkdir`` makes every
  path the run later names under that directory a creation too;
- a ``new file`` in the run's own final patch.

Without the repository, a written path counts as created unless the run showed or edited it in place before
writing it, or its final patch changes it as an existing file (both mean it existed). With the repository, every
path the run wrote or created is scratch unless it exists at the base commit.
"""
from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Callable, Iterable
from typing import NamedTuple

from swemine.miners.actions import args_of, command_text, new_files, patch_files
from swemine.miners.localization.views import (
    edited_paths,
    refused,
    repo_relative,
    step_views,
    strip_heredocs,
)

_CREATE_FAILED = ("already exists", "Cannot overwrite", "cannot overwrite")
#: A redirection target that names a file (a path with a ``.`` or ``/``): text that is no shell command (code an
#: agent sent to the shell by mistake, ``if x > 0:``) names none.
_FILE_WORD = re.compile(r"^(?=[^/]*[./])[\w.@+~/-]+$|^[\w.@+~-]*/[\w.@+~/-]+$")
_CONTROL = frozenset({"&&", "||", ";", "|", "&", ";;", "|&", "(", ")"})
_PY_WRITE = re.compile(r"""\bopen\(\s*[rbuf]*(['"])([^'"\n]+)\1\s*,\s*(?:mode\s*=\s*)?[rbuf]*['"][rbt+]*[wax]"""
                       r"""|\bPath\(\s*[rbuf]*(['"])([^'"\n]+)\3\s*\)\.write_(?:text|bytes)\b""")


def _tokens(line: str) -> list[str]:
    """Shell tokens of one line, operators (``>``, ``>>``, ``&&``, ``|`` …) apart from words, quotes removed."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        return list(lexer)
    except ValueError:
        return line.split()


def _commands(command: str) -> list[list[str]]:
    """The simple commands of a shell command line (split at ``&&``, ``||``, ``;``, ``|``, ``&`` and newlines)."""
    out: list[list[str]] = []
    for line in strip_heredocs(command).split("\n"):
        current: list[str] = []
        for tok in _tokens(line):
            if tok in _CONTROL:
                out.append(current)
                current = []
            else:
                current.append(tok)
        out.append(current)
    return [c for c in out if c]


def _join(cwd: str, path: str) -> str:
    return posixpath.normpath(posixpath.join(cwd, path)) if cwd and not path.startswith("/") else path


def shell_writes(command: str) -> list[tuple[str, str]]:
    """``(path, kind)`` for every file (``write``) or directory (``mkdir``) a shell command writes; a ``cd`` earlier
    in the same command resolves relative paths."""
    out: list[tuple[str, str]] = []
    cwd = ""
    for words in _commands(command):
        args: list[str] = []
        i = 0
        while i < len(words):
            tok = words[i]
            if tok in (">", ">>", ">|") and i + 1 < len(words):
                if _FILE_WORD.match(words[i + 1]) and not words[i + 1].startswith("/dev/"):
                    out.append((_join(cwd, words[i + 1]), "write"))
                i += 2
                continue
            if tok in ("<", "<<", "<<<", ">&", "&>") or (tok.isdigit() and i + 1 < len(words) and words[i + 1][0] in "<>"):
                i += 2 if tok in ("<", "<<", "<<<", ">&", "&>") else 1
                continue
            args.append(tok)
            i += 1
        prog, operands = args[0] if args else "", [a for a in args[1:] if not a.startswith("-")]
        if prog == "cd" and operands:
            cwd = _join(cwd, operands[0])
        elif prog in ("tee", "touch"):
            out += [(_join(cwd, a), "write") for a in operands]
        elif prog in ("cp", "mv") and len(operands) >= 2:
            dest = operands[-1]
            if dest.endswith("/") or dest in (".", ".."):
                dest = posixpath.join(dest, posixpath.basename(operands[-2].rstrip("/")))
            out.append((_join(cwd, dest), "write"))
        elif prog == "mkdir":
            out += [(_join(cwd, a), "mkdir") for a in operands]
    for m in _PY_WRITE.finditer(command):
        out.append((_join(cwd, m.group(2) or m.group(4)), "write"))
    return out


def step_writes(step: dict) -> list[tuple[str, str]]:
    """``(path as the run names it, kind)`` written by one step: ``create`` (an editor created the file), ``write``
    (a shell write) or ``mkdir``; nothing when the harness refused the action."""
    if refused(step):
        return []
    tool = (step.get("tool_name") or "").lower()
    args = args_of(step)
    if tool.endswith("editor") or tool in ("create", "createfile") or tool.endswith("createfileargs"):
        obs = step.get("observation") or ""
        is_create = args.get("command") == "create" or "create" in tool
        if not is_create or any(m in obs[:300] for m in _CREATE_FAILED):
            return []
        path = args.get("path") or args.get("file_path")
        if not isinstance(path, str):      # SWE-agent ``create f``: the window it opens names f from the root
            shown = [v.path for v in step_views(step)] + _tokens(args.get("args") or "")[:1]
            path = shown[0] if shown else ""
        return [(path, "create")] if path else []
    if tool in ("write_file", "writefile"):
        path = args.get("path") or args.get("file_path")
        return [(path, "write")] if isinstance(path, str) and path else []
    return shell_writes(command_text(step))


def _rel(path: str) -> str | None:
    rel = repo_relative(path)
    return rel if rel and rel not in (".", "..") else None


def _under(path: str, directory: str) -> bool:
    return path.startswith(directory.rstrip("/") + "/")


class Created(NamedTuple):
    """What a run created, as far as its own events tell (:func:`created_paths`): the candidates for scratch with
    the repository at hand (every path it created or wrote) and without it (paths it created and did not show or
    change as existing files first)."""
    with_repo: tuple[str, ...]
    without_repo: tuple[str, ...]


def created_paths(traj: dict) -> Created:
    """The :class:`Created` paths of a trajectory (repository-relative, sorted). A directory the run made with
    ``mkdir`` counts as created when nothing under it was shown before the run first wrote into it; everything
    the run names under it is then created too (build output included)."""
    created: dict[str, int] = {}       # path -> step of its first write
    existed: dict[str, int] = {}       # path -> step the run showed or edited it before writing it
    dirs: dict[str, int] = {}          # mkdir'd directory -> first mkdir step
    named: set[str] = set()            # every repository path the run showed or wrote
    writes: set[str] = set()           # every path the run wrote
    for n, step in enumerate(traj.get("steps") or []):
        written = set()
        for path, kind in step_writes(step):
            rel = _rel(path)
            if rel is None:
                continue
            if kind == "mkdir":
                dirs.setdefault(rel.rstrip("/"), n)
                continue
            written.add(rel)
            writes.add(rel)
            if rel not in existed:
                created.setdefault(rel, n)
        for path in [v.path for v in step_views(step)] + edited_paths(step):
            rel = _rel(path)
            if rel is not None and rel not in written:
                named.add(rel)
                if rel not in created:
                    existed.setdefault(rel, n)
        named |= written
    patch = traj.get("final_patch") or ""
    added = set(new_files(patch))
    at_base = set(patch_files(patch)) - added          # changed as existing files: they existed at the base
    named |= set(patch_files(patch))
    made = set(created) | added
    for d, step in dirs.items():
        first_write = min([step] + [s for p, s in created.items() if _under(p, d)])
        if not any(s < first_write for p, s in existed.items() if _under(p, d)):
            made |= {p for p in named if _under(p, d) and p not in at_base}
            existed = {p: s for p, s in existed.items() if not _under(p, d)}
    return Created(tuple(sorted(made | writes)),
                   tuple(sorted(p for p in made if p not in at_base and (p in added or p not in existed))))


def scratch_of(created: Created, owned: Iterable[str], exists: Callable[[str], bool] | None = None) -> list[str]:
    """The scratch files among a run's :class:`Created` paths (sorted): those not ``owned`` (the files the gold
    patch and its test patch change) and, with ``exists`` (whether a path exists at the base commit), absent at
    the base commit; without it (``None``: no repository) the run's own evidence decides (module docstring)."""
    owned = set(owned)
    if exists is not None:
        return [p for p in created.with_repo if p not in owned and not exists(p)]
    return [p for p in created.without_repo if p not in owned]
