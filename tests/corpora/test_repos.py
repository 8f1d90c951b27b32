import os

import pytest

from swemine.corpora import repos
from swemine.corpora.records import Reject
from tests.gitutil import commit_files, git, init_repo

MIT = "Permission is hereby granted, free of charge, to any person obtaining a copy"


@pytest.fixture()
def repo(tmp_path):
    path = init_repo(str(tmp_path / "acme__widgets"))
    c1 = commit_files(path, {"LICENSE": MIT, "pkg/a.py": "def f():\n    return 1\n", "pkg/b.bin": b"\x00\x01",
                             "README.md": "hi\n"}, "first")
    c2 = commit_files(path, {"pkg/a.py": "def f():\n    return 2\n", "pkg/bad.py": b"x = '\xff'\n"}, "second")
    return path, c1, c2


def test_git_repo_reads_blobs_at_commits(repo):
    path, c1, c2 = repo
    src = repos.open_repo(path)
    assert isinstance(src, repos.GitRepo)
    assert src.name == "acme/widgets"
    assert src.head() == c2
    assert src.read("pkg/a.py", c1) == b"def f():\n    return 1\n"
    assert src.read("pkg/a.py") == b"def f():\n    return 2\n"
    assert src.read("pkg/bad.py", c1) is None
    assert src.list_files(c1) == ["LICENSE", "README.md", "pkg/a.py", "pkg/b.bin"]
    assert src.license() == "MIT"


def test_git_repos_open_each_repository_once(repo, tmp_path):
    opened = repos.GitRepos(None)
    first = opened.get(repo[0], "acme/widgets")
    assert opened.get(repo[0], "acme/widgets") is first and first.head() == repo[2]
    (tmp_path / "plain").mkdir()
    with pytest.raises(repos.RepoError, match="not a git repository"):
        opened.get(str(tmp_path / "plain"), "")


def test_iter_source_files_rejects_with_reasons(repo):
    path, c1, c2 = repo
    out = list(repos.open_repo(path).iter_source_files(c2))
    files = [r for r in out if not isinstance(r, Reject)]
    rejects = [r for r in out if isinstance(r, Reject)]
    assert [f["path"] for f in files] == ["pkg/a.py"]
    assert files[0]["commit"] == c2 and files[0]["license"] == "MIT" and files[0]["language"] == "python"
    assert files[0]["content"] == "def f():\n    return 2\n"
    assert [(r["reason"], r["source_locator"]) for r in rejects] == [("not_utf8", f"{c2}:pkg/bad.py")]


@pytest.mark.parametrize("as_git", [True, False])
def test_a_file_name_that_is_not_utf8_is_a_reject_and_the_others_are_read(tmp_path, as_git):
    files = {"a.py": "def f():\n    return 1\n", os.fsdecode(b"caf\xe9.py"): "def g():\n    return 2\n"}
    if as_git:
        path = init_repo(str(tmp_path / "acme__names"))
        commit = commit_files(path, files, "names")
    else:
        path, commit = str(tmp_path / "names"), None
        os.makedirs(path)
        for name, text in files.items():
            with open(os.path.join(path, name), "w") as fh:
                fh.write(text)
    out = list(repos.open_repo(path).iter_source_files(commit))
    assert [f["path"] for f in out if not isinstance(f, Reject)] == ["a.py"]
    shown = f"{commit}:caf\\xe9.py" if commit else "caf\\xe9.py"
    assert [(r["reason"], r["source_locator"]) for r in out if isinstance(r, Reject)] == [("undecodable_name", shown)]


def test_bare_clone_of_a_local_remote_is_cached(repo, tmp_path):
    path, c1, c2 = repo
    bare = str(tmp_path / "remote.git")
    git(str(tmp_path), "clone", "-q", "--bare", path, bare)
    cache = str(tmp_path / "cache")
    src = repos.open_repo(f"file://{bare}", cache_dir=cache)
    assert src.head() == c2 and src.read("pkg/a.py", c1) == b"def f():\n    return 1\n"
    commit_files(path, {"pkg/c.py": "C = 3\n"}, "third")
    git(path, "push", "-q", bare, "main")
    again = repos.open_repo(f"file://{bare}", cache_dir=cache)
    assert again.path == src.path and again.read("pkg/c.py") == b"C = 3\n"
    with pytest.raises(repos.RepoError):
        repos.open_repo(f"file://{tmp_path}/missing.git", cache_dir=cache)


def test_repo_for_finds_owner_name_folders(repo, tmp_path):
    path, _, _ = repo
    found = repos.repo_for(str(tmp_path), "ACME/widgets")
    assert found is not None and found.path == os.path.abspath(path) and found.name == "acme/widgets"
    assert repos.repo_for(str(tmp_path), "acme/other") is None


def test_directory_stdlib_and_package_sources(tmp_path):
    (tmp_path / "m.py").write_text("X = 1\n")
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "m.cpython-311.pyc").write_bytes(b"\x00")
    d = repos.open_repo(str(tmp_path))
    assert isinstance(d, repos.DirRepo) and d.list_files() == ["m.py"] and d.read("../etc/passwd") is None
    std = repos.open_repo("stdlib")
    assert std.license() == "PSF-2.0" and "json/decoder.py" in std.list_files()
    assert not any(p.startswith(("site-packages/", "test/")) for p in std.list_files())
    pkg = repos.open_repo("pkg:networkx")
    assert pkg.name == "pypi/networkx" and "algorithms/__init__.py" in pkg.list_files()


def test_license_file_recognition():
    from swemine.corpora.licenses import license_from_text
    assert license_from_text("Apache License\nVersion 2.0, January 2004") == "Apache-2.0"
    assert license_from_text("GNU GENERAL PUBLIC LICENSE\n Version 3, 29 June 2007") == "GPL-3.0"
    assert license_from_text("all rights reserved") == ""
