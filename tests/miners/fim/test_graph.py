"""Call-graph edges, in-file and cross-file, on a small real git repository read at a commit."""
import pytest

from swemine.corpora.repos import open_repo
from swemine.miners.fim.graph import build_graph
from swemine.miners.fim.parse import FileParser
from tests.gitutil import commit_files, init_repo

FILES_V1 = {
    "pkg/__init__.py": "from .util import helper\n",
    "pkg/util.py": (
        "def helper(x=0):\n    return x + 1\n\n\n"
        "class Base:\n    def __init__(self):\n        self.n = 0\n\n    def run(self):\n        return helper(self.n)\n"),
    "pkg/core.py": (
        "from pkg.util import helper\n"
        "from . import util as u\n"
        "import pkg.util as pu\n"
        "from .util import Base\n\n\n"
        "def a():\n    return helper(1)\n\n\n"
        "def b():\n    return u.helper(2)\n\n\n"
        "def c():\n    return pu.helper(x=3) + local()\n\n\n"
        "def local():\n    return 0\n\n\n"
        "class Child(Base):\n    def go(self):\n        return self.run()\n\n"
        "    def make(self):\n        return Base()\n"),
    "app.py": (
        "import pkg.util\n"
        "from pkg import helper\n"
        "from pkg.core import *\n\n\n"
        "def d():\n    return helper(4)\n\n\n"
        "def e():\n    return pkg.util.helper(5) + a()\n"),
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("xrepo") / "owner__proj")
    init_repo(path)
    first = commit_files(path, FILES_V1, "v1")
    # a later commit removes the cross-file call in pkg/core.py::a; reading at `first` must still see it
    commit_files(path, {"pkg/core.py": FILES_V1["pkg/core.py"].replace("return helper(1)", "return 1")}, "v2")
    return path, first


def _structures(path, commit):
    src = open_repo(path)
    parser = FileParser()
    return [parser(f) for f in src.iter_source_files(commit=commit)]


def test_cross_file_edges_at_commit(repo):
    path, first = repo
    structures = _structures(path, first)
    assert {s.repo for s in structures} == {"owner/proj"} and {s.commit for s in structures} == {first}
    rg = build_graph(structures, cross_file=True)
    assert sorted(rg.edges["xcall"]) == [
        ("app.py::d", "pkg/util.py::helper"),                # re-export through pkg/__init__.py
        ("app.py::e", "pkg/core.py::a"),                     # star import
        ("app.py::e", "pkg/util.py::helper"),                # import pkg.util; pkg.util.helper()
        ("pkg/core.py::Child.go", "pkg/util.py::Base.run"),  # self.run through the in-repo base class
        ("pkg/core.py::Child.make", "pkg/util.py::Base.__init__"),  # imported class -> __init__
        ("pkg/core.py::a", "pkg/util.py::helper"),           # from pkg.util import helper
        ("pkg/core.py::b", "pkg/util.py::helper"),           # from . import util as u; u.helper()
        ("pkg/core.py::c", "pkg/util.py::helper"),           # import pkg.util as pu; pu.helper()
    ]
    assert sorted(rg.edges["call"]) == [("pkg/core.py::c", "pkg/core.py::local"),
                                        ("pkg/util.py::Base.run", "pkg/util.py::helper")]
    # helper's callers now include five functions of other files
    assert sorted(rg.callers("pkg/util.py::helper")) == [
        "app.py::d", "app.py::e", "pkg/core.py::a", "pkg/core.py::b", "pkg/core.py::c", "pkg/util.py::Base.run"]
    stats = rg.file_stats("pkg/util.py")
    assert stats == {"total_functions": 3, "call_edges": 1, "sibling_pairs": 2, "cross_file_in": 7,
                     "cross_file_out": 0}


def test_in_file_mode_reproduces_reference(repo):
    path, first = repo
    rg = build_graph(_structures(path, first), cross_file=False)
    assert rg.edges["xcall"] == set()
    assert sorted(rg.edges["call"]) == [("pkg/core.py::c", "pkg/core.py::local"),
                                        ("pkg/util.py::Base.run", "pkg/util.py::helper")]
    g = rg.graph
    assert g.number_of_nodes() == 11          # util 3, core 6, app 2
    assert g["pkg/util.py::Base.run"]["pkg/util.py::Base.__init__"] == {"sibling": True}


def test_head_commit_drops_the_removed_call(repo):
    path, _ = repo
    rg = build_graph(_structures(path, None), cross_file=True)
    assert ("pkg/core.py::a", "pkg/util.py::helper") not in rg.edges["xcall"]
    assert ("pkg/core.py::b", "pkg/util.py::helper") in rg.edges["xcall"]


def test_repo_rooted_inside_its_package():
    # pkg:<name> and directory repos are rooted in the package: `from mypkg.util import f` is util.py
    parser = FileParser()
    files = [parser({"repo": "pypi/mypkg", "path": "util.py", "content": "def f():\n    return 1\n"}),
             parser({"repo": "pypi/mypkg", "path": "core.py",
                     "content": "from mypkg.util import f\nimport mypkg.util as u\n\n\ndef g():\n    return f() + u.f()\n"})]
    assert build_graph(files).edges["xcall"] == {("core.py::g", "util.py::f")}


def test_a_file_whose_selection_fails_is_its_own_reject(repo, monkeypatch):
    """One file's failure does not take the repository's other selections with it."""
    from swemine.corpora.records import Reject
    from swemine.miners.fim import mine
    from swemine.miners.fim.scoring import FimConfig

    path, first = repo
    real = mine._select_file

    def failing(rg, fs, cfg):
        if fs.path == "pkg/core.py":
            raise IndexError("boom")
        return real(rg, fs, cfg)
    monkeypatch.setattr(mine, "_select_file", failing)
    out = list(mine.select_repo(_structures(path, first), FimConfig()))
    rejects = [r for r in out if isinstance(r, Reject)]
    assert [(r["reason"], r["source_locator"], r["message"]) for r in rejects] == [
        ("exception:IndexError", f"{first}:pkg/core.py", "boom")]
    assert len(out) == 4 and sum(1 for r in out if r not in rejects) == 3
