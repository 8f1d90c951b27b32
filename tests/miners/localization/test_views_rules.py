"""View / mention / edit rules on hand-built steps: line ranges, shell programs, JSON spans, paths."""
from __future__ import annotations

from swemine.corpora.formats.base import make_step
from swemine.miners.localization.views import (
    edited_paths,
    is_edit_step,
    norm_path,
    path_matches,
    refused,
    repo_relative,
    step_mentions,
    step_views,
    strip_heredocs,
)


def _views(step):
    return [(v.path, v.ranges, v.whole, v.spans) for v in step_views(step)]


def _shell(cmd):
    return [(v.path, v.ranges, v.whole) for v in step_views(make_step(0, tool_name="bash", tool_args={"command": cmd}))]


def test_numbered_lines_become_ranges_per_file():
    # two SWE-agent windows in one output; lines 1-2 and 4-5 of a.py (3 missing), line 3 of b.py
    obs = "[File: /r/a.py (9 lines total)]\n2:b\n1:a\n4:d\n5:e\n[File: /r/b.py (3 lines total)]\n3:c\n"
    assert _views(make_step(0, tool_name="open", tool_args={"args": "a.py"}, observation=obs)) == [
        ("/r/a.py", [(1, 2), (4, 5)], False, []), ("/r/b.py", [(3, 3)], False, [])]
    three = obs + "[File: /r/c.py (3 lines total)]\n2:x\n"                 # each window ends at the next header
    assert _views(make_step(0, tool_name="open", tool_args={"args": "a.py"}, observation=three)) == [
        ("/r/a.py", [(1, 2), (4, 5)], False, []), ("/r/b.py", [(3, 3)], False, []), ("/r/c.py", [(2, 2)], False, [])]
    big = "[File: /r/a.py (900 lines total)]\n300:a\n301:b\n"
    assert _views(make_step(0, tool_name="goto", tool_args={"args": "300"}, observation=big)) == [
        ("/r/a.py", [(300, 301)], False, [])]
    # a window in the output of a shell command: the window is what was shown
    assert _views(make_step(0, tool_name="bash", tool_args={"command": "cat a.py"}, observation=obs)) == [
        ("/r/a.py", [(1, 2), (4, 5)], False, []), ("/r/b.py", [(3, 3)], False, [])]


def test_shell_programs():
    assert _shell("sed -n '7p' a.py; sed 's/x/y/' b.py; sed '5p' c.py; cat d.py") == [   # no -n: no view
        ("a.py", [(7, 7)], False), ("d.py", [], True)]
    assert _shell("head f.py -n 5") == [("f.py", [(1, 5)], False)]
    assert _shell("cat 'a.py") == [("a.py", [], True)]                  # an unbalanced quote: split on blanks
    assert _shell("head c.py; head -20 d.py; head -n20 e.py; head -n 5 f.py") == [
        ("c.py", [(1, 10)], False), ("d.py", [(1, 20)], False), ("e.py", [(1, 20)], False), ("f.py", [(1, 5)], False)]
    # a redirection target is written, not shown; files need an extension; options are no files
    assert _shell("cat f.py > g.py; cat -A 'h i.py'; nl ./j.py; less k.txt; more Makefile") == [
        ("f.py", [], True), ("h i.py", [], True), ("j.py", [], True), ("k.txt", [], True)]
    assert _shell("ls && tail -n 3 log.txt") == [("log.txt", [], False)]


def test_heredoc_bodies_are_input_not_commands():
    cmd = "cat > a.py << 'EOF'\ncat b.py\n# a comment\nEOF\ncat c.py"
    assert strip_heredocs(cmd) == "cat > a.py << 'EOF'\ncat c.py"
    assert _shell(cmd) == [("c.py", [], True)]


def test_json_spans_and_ranges():
    args = {"files": [{"file_path": "a.py", "span_ids": ["A.f"], "span_id": "B"},
                      {"file_path": "b.py", "start_line": 5, "end_line": 3},       # an end before the start: one line
                      {"path": "c.py", "view_range": [4, -1]},                     # -1: to the end of the file
                      {"file_path": "d.py", "start_line": 2, "end_line": 9},
                      {"file_path": "e.py"}]}
    assert _views(make_step(0, tool_name="ViewCode", tool_args=args)) == [
        ("a.py", [], False, ["A.f", "B"]), ("b.py", [(5, 5)], False, []), ("c.py", [(4, 10 ** 9)], False, []),
        ("d.py", [(2, 9)], False, []), ("e.py", [], True, [])]


def test_editor_views_only_files_it_displayed():
    listing = make_step(0, tool_name="str_replace_editor", tool_args={"command": "view", "path": "/r"},
                        observation="Here's the files and directories up to 2 levels deep in /r")
    create = make_step(0, tool_name="str_replace_editor", tool_args={"command": "create", "path": "/r/a.py"})
    assert _views(listing) == [] and _views(create) == []
    # an editor's command text is no shell command
    assert _views(make_step(0, tool_name="my_editor", tool_args={"command": "cat a.py"})) == []
    assert _views(make_step(0, tool_name="my_editor", tool_args={"command": "view", "path": "a.py"})) == [
        ("a.py", [], True, [])]
    # a search names a path in its arguments without displaying the file
    assert _views(make_step(0, tool_name="grep_search", tool_args={"path": "pkg/a.py", "pattern": "x"})) == []
    # arguments that are not JSON are kept as text
    assert _views(make_step(0, tool_name="cat", tool_args="a/b.py", action_text="cat a/b.py")) == [
        ("a/b.py", [], True, [])]


def test_autocoderover_search_results():
    obs = ("<file>pkg/a.py</file> <class>A</class> <func>f</func> <code>x</code>\n"
           "<file>pkg/b.py</file> <func>g</func> <code>y</code>\n<file>pkg/c.py</file> <code>z</code>")
    assert _views(make_step(0, tool_name="search", observation=obs)) == [
        ("pkg/a.py", [], False, ["A.f"]), ("pkg/b.py", [], False, ["g"]), ("pkg/c.py", [], False, [])]


def test_mentions_need_a_directory():
    files, entities = step_mentions(make_step(0, thought="./pkg/a.py and ././pkg/b.py:B.c and top.py",
                                              observation="x"))
    assert files == {"pkg/a.py", "pkg/b.py"} and entities == {"pkg/b.py:B.c"}


def test_paths_and_repo_relative():
    assert norm_path(" `./././a.py` ") == "a.py"
    assert path_matches("'./pkg/a.py'", "pkg/a.py") and not path_matches("xpkg/a.py", "pkg/a.py")
    assert repo_relative("/tmp/a.py", ["a.py"]) == "a.py"                  # a gold file it ends with
    assert repo_relative("/workspace/r/a/b.py") == "a/b.py" and repo_relative("/workspace/x") is None
    assert repo_relative("/repo/a.py") == "a.py" and repo_relative("/repo") is None
    assert repo_relative("/workspace/r/a.py") == "a.py" and repo_relative("/workspace") is None
    assert repo_relative("/") is None and repo_relative("/x/y/a.py") is None
    assert repo_relative("../a.py") is None and repo_relative("a/../b.py") is None and repo_relative("a/b.py") == "a/b.py"


def test_edit_steps_and_paths():
    def step(tool, **args):
        return make_step(0, tool_name=tool, tool_args=args or None)

    assert [is_edit_step(step("my_editor", command=c)) for c in ("view", "insert", "undo_edit", "write")] == [
        False, True, True, True]
    assert not is_edit_step(step("view_edit")) and not is_edit_step(step("FindAndReplace"))   # a view / search tool
    assert is_edit_step(step("CreateFile")) and not is_edit_step(step("bash", command="ls"))
    assert is_edit_step(step("write_file"))
    assert all(is_edit_step(step("bash", command=c)) for c in ("git apply p.diff", "ls | tee out.txt",
                                                                  "patch -p1 < x.diff", "echo x >> notes.md"))
    snippet = "Here's the result of running `cat -n` on a snippet of /r/a.py:\n 3\tx\n"
    both = make_step(0, tool_name="str_replace_editor", observation=snippet,
                     tool_args={"command": "str_replace", "path": "./a.py", "file_path": "b.py"})
    assert edited_paths(both) == ["a.py", "b.py", "/r/a.py"]
    text_only = make_step(0, tool_name="bash", action_text="echo x > a.py && sed -i 's/x/y/' b.py")
    assert edited_paths(text_only) == ["a.py", "b.py"]
    rejected = make_step(0, tool_name="str_replace_editor", tool_args={"command": "str_replace", "path": "a.py"},
                         observation="ERROR:\nInvalid `path` parameter")
    assert refused(rejected) and edited_paths(rejected) == []
