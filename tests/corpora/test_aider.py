"""Aider chat histories: the real history in external/cli-sessions/aider (aider v0.86.1, diff edit format) and
small hand-written histories. Counts were taken from the file by hand (grep '<<<<<<< SEARCH' = 24, three ```bash
blocks outside edit blocks, 12 '#### ' user messages)."""
import json

from swemine.corpora.inputs import Unit, iter_documents
from swemine.corpora.normalize import normalize_paths, read_unit

AIDER = "external/cli-sessions/aider/metadata-aider.aider.chat.history.md"


def test_real_history(corpora_dir):
    (t,) = list(read_unit(Unit(str(corpora_dir / AIDER))))
    assert (t["source_format"], t["harness"], t["source_locator"]) == ("aider-chat-history", "aider", "session:0")
    assert t["model_name"] == "openrouter/openai/gpt-4o-mini" and t["trajectory_id"].startswith("aider/")
    assert t["problem_statement"].startswith("Please create an .aidar.json file in the root directory")
    kinds = [(s["role"], s["tool_name"]) for s in t["steps"]]
    assert kinds.count(("assistant", "edit")) == 24 and kinds.count(("assistant", "shell")) == 3
    assert kinds.count(("user", "")) == 11                   # 12 user messages, the first is the problem
    first = t["steps"][0]
    assert json.loads(first["tool_args_json"]) == {
        "path": ".aidar.json", "search": "",
        "replace": '{\n    "project": {\n        "directory": "path/to/your/project",\n'
                   '        "tracked_files": []\n    }\n}\n'}
    assert "Applied edit to .aidar.json" in first["observation"]
    assert "Commit 1b2614a feat: create .aidar.json file" in first["observation"]
    mkdir = next(s for s in t["steps"] if s["tool_name"] == "shell")
    assert mkdir["action_text"] == "mkdir data" and mkdir["observation"].startswith("mkdir data\nRun shell command?")
    # the README.md edit holds ```bash fences inside its replacement text: they are not shell steps
    readme = next(s for s in t["steps"] if json.loads(s["tool_args_json"] or "{}").get("path") == "frontend/README.md")
    assert "ts-node frontend/display.ts" in json.loads(readme["tool_args_json"])["replace"]
    extra = json.loads(t["extra_json"])
    assert (extra["aider_version"], extra["edit_format"], extra["n_tool_calls"]) == ("0.86.1", "diff", 27)


HISTORY = """
# aider chat started at 2025-01-01 10:00:00

> Aider v0.70.0
> Main model: anthropic/claude-3-5-sonnet-20241022 with diff edit format, infinite output

# aider chat started at 2025-01-02 09:00:00

> Aider v0.70.0
> Model: gpt-4o with udiff edit format

#### fix the off-by-one in count()

I'll fix it.

```diff
--- a/pkg/count.py
+++ b/pkg/count.py
@@ -1,2 +1,2 @@
 def count(xs):
-    return len(xs) - 1
+    return len(xs)
```

> Applied edit to pkg/count.py
> Commit abc1234 fix: count

#### /run pytest -q

> 1 passed

#### thanks

You're welcome.
"""


def test_runs_diffs_user_commands_and_an_empty_run(tmp_path):
    path = tmp_path / ".aider.chat.history.md"
    path.write_text(HISTORY)
    trajs, rejects = normalize_paths([str(path)])
    assert [(r["reason"], r["source_locator"]) for r in rejects] == [("empty_session", "session:0")]
    (t,) = trajs
    assert t["source_locator"] == "session:1" and t["model_name"] == "gpt-4o"
    assert [(s["role"], s["tool_name"]) for s in t["steps"]] == [
        ("assistant", "edit"), ("user", "shell"), ("user", ""), ("assistant", "")]
    edit, run = t["steps"][0], t["steps"][1]
    assert json.loads(edit["tool_args_json"])["path"] == "pkg/count.py" and edit["thought"] == "I'll fix it."
    assert edit["observation"] == "Applied edit to pkg/count.py\nCommit abc1234 fix: count"
    assert (run["action_text"], run["observation"]) == ("pytest -q", "1 passed")


def test_other_markdown_stays_unsupported(tmp_path):
    path = tmp_path / "notes.md"
    path.write_text("# notes\n#### not aider\n")
    (rej,) = list(iter_documents(str(path), path.read_bytes()))
    assert rej["reason"] == "unsupported_file_type"


WHOLE = """# aider chat started at 2025-02-01 08:00:00

> Model: gpt-4o with whole edit format

#### /add pkg/greet.py

> Added pkg/greet.py to the chat

#### say hello politely

pkg/greet.py
```python
def greet():
    return "Hello, please"
```

> Applied edit to pkg/greet.py

#### why?

Politeness helps.

> Tokens: 1k sent, 10 received.
"""


def test_commands_before_the_problem_whole_file_edits_and_replies_with_output(tmp_path):
    path = tmp_path / "x.aider.chat.history.md"
    path.write_text(WHOLE)
    (t,), rejects = normalize_paths([str(path)])
    assert rejects == [] and t["problem_statement"] == "say hello politely"
    assert [(s["role"], s["tool_name"], s["action_text"], s["observation"]) for s in t["steps"]] == [
        ("user", "", "/add pkg/greet.py", "Added pkg/greet.py to the chat"),
        ("assistant", "edit", 'edit({"content": "def greet():\\n    return \\"Hello, please\\"\\n", "path": "pkg/greet.py"})',
         "Applied edit to pkg/greet.py"),
        ("user", "", "why?", ""),
        ("assistant", "", "Politeness helps.", "Tokens: 1k sent, 10 received.")]
    assert json.loads(t["steps"][1]["tool_args_json"]) == {"path": "pkg/greet.py",
                                                           "content": 'def greet():\n    return "Hello, please"\n'}
