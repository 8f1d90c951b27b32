"""What a step displayed / named / changed, per harness."""
from swemine.corpora.formats.base import make_step
from swemine.miners.localization.mine import repo_relative
from swemine.miners.localization.views import edited_paths, is_edit_step, path_matches, step_mentions, step_views


def _views(step):
    return [(v.path, v.ranges, v.whole, v.spans) for v in step_views(step)]


def test_swe_agent_window():
    obs = "[File: /django__django/django/views/debug.py (500 lines total)]\n(10 more lines above)\n11:a\n12:b\n13:c\n"
    assert _views(make_step(0, tool_name="goto", tool_args={"args": "12"}, observation=obs)) == [
        ("/django__django/django/views/debug.py", [(11, 13)], False, [])]


def test_openhands_view_and_edit_snippet():
    view = make_step(0, tool_name="str_replace_editor", tool_args={"command": "view", "path": "/workspace/r/a.py",
                                                                    "view_range": [5, 9]}, observation="")
    assert _views(view) == [("/workspace/r/a.py", [(5, 9)], False, [])]
    snippet = ("The file /workspace/r/a.py has been edited. Here's the result of running `cat -n` on a snippet of "
               "/workspace/r/a.py:\n    40\tx = 1\n    41\ty = 2\n")
    edit = make_step(1, tool_name="str_replace_editor", tool_args={"command": "str_replace", "path": "/workspace/r/a.py"},
                     observation=snippet)
    assert _views(edit) == [("/workspace/r/a.py", [(40, 41)], False, [])] and is_edit_step(edit)
    assert not is_edit_step(view)


def test_shell_commands():
    cmd = "cd /testbed && sed -n '100,140p' pkg/a.py; head -n 30 pkg/b.py && cat pkg/c.py | grep x; tail -5 d.py"
    step = make_step(0, tool_name="bash", tool_args={"command": cmd})
    assert _views(step) == [("pkg/a.py", [(100, 140)], False, []), ("pkg/b.py", [(1, 30)], False, []),
                            ("pkg/c.py", [], True, []), ("d.py", [], False, [])]
    assert is_edit_step(make_step(0, tool_name="bash", tool_args={"command": "sed -i 's/a/b/' pkg/a.py"}))
    assert is_edit_step(make_step(0, tool_name="bash", tool_args={"command": "cat > pkg/new.py << EOF"}))
    assert not is_edit_step(step) and edited_paths(step) == []
    assert edited_paths(make_step(0, tool_name="bash", tool_args={"command": "sed -i 's/a/b/g' pkg/a.py && "
                                                                             "echo x >> notes.txt"})) == [
        "notes.txt", "pkg/a.py"]
    refused = make_step(0, tool_name="edit", tool_args={"args": "1:2"}, observation=(
        "Your proposed edit has introduced new syntax error(s).\n[File: /r/a.py (3 lines total)]\n1:x\n"))
    assert is_edit_step(refused) and edited_paths(refused) == []
    # SWE-agent shell commands arrive with the program as tool_name
    assert _views(make_step(0, tool_name="cat", tool_args={"args": "a/b.py"}, action_text="cat a/b.py")) == [
        ("a/b.py", [], True, [])]


def test_moatless_spans_and_mentions():
    obs = "Found 2 code spans.\nranked_spans:\n  sklearn/svm/base.py: BaseLibSVM.fit\n  sklearn/svm/base.py: imports\n"
    step = make_step(0, tool_name="SearchCode", tool_args={"query": "fit"}, thought="look at ./sklearn/svm/base.py",
                     observation=obs)
    assert _views(step) == [("sklearn/svm/base.py", [], False, ["BaseLibSVM.fit"]),
                            ("sklearn/svm/base.py", [], False, ["imports"])]
    files, entities = step_mentions(make_step(0, thought="see sklearn/svm/base.py:BaseLibSVM.fit and setup.py"))
    assert files == {"sklearn/svm/base.py"} and entities == {"sklearn/svm/base.py:BaseLibSVM.fit"}


def test_paths():
    assert path_matches("/workspace/astropy__astropy__4.3/astropy/io/rst.py", "astropy/io/rst.py")
    assert not path_matches("/x/myastropy/io/rst.py", "astropy/io/rst.py")
    assert repo_relative("/workspace/astropy__astropy__4.3/astropy/wcs.py") == "astropy/wcs.py"
    assert repo_relative("/testbed/a/b.py") == "a/b.py" and repo_relative("/django__django/x.py") == "x.py"
    assert repo_relative("/usr/lib/python3.9/json/decoder.py") is None and repo_relative("./a.py") == "a.py"


def test_claude_code_read_names_its_file_as_file_path():
    read = make_step(0, tool_name="Read", tool_args={"file_path": "/home/u/proj/pkg/a.py"}, observation="x = 1\n")
    assert _views(read) == [("/home/u/proj/pkg/a.py", [], True, [])]
