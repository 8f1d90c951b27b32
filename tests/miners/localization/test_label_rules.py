"""Rules whose one-line mutations the suite used to miss: who votes for the majority patch, where "viewed before
the first edit" stops. Expected values are worked out by hand in the comments."""
from swemine.corpora.formats.base import make_step
from swemine.miners.localization.mine import majority_patch, viewed_before_first_edit
from swemine.miners.localization.summary import summarize


def _patch(path: str) -> str:
    return (f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1,1 +1,1 @@\n-x = 1\n+x = 2\n")


def test_only_resolved_runs_vote_for_the_majority_patch():
    # two unresolved runs agree on b.py, one resolved run edits a.py: only the resolved run votes, so a.py wins
    # (if unresolved runs voted, b.py would win 2 to 1)
    trajs = [{"record_id": "1", "resolved": False, "final_patch": _patch("b.py")},
             {"record_id": "2", "resolved": None, "final_patch": _patch("b.py")},
             {"record_id": "3", "resolved": True, "final_patch": _patch("a.py")}]
    runs = [summarize(t) for t in trajs]
    assert majority_patch(runs) == _patch("a.py")
    assert majority_patch(runs[:2]) == ""                      # no resolved run: no majority patch


def _view(i: int, path: str):
    return make_step(i, tool_name="str_replace_editor", tool_args={"command": "view", "path": path}, observation="x")


def test_viewed_before_first_edit_stops_at_the_first_edit():
    steps = [_view(0, "/repo/pkg/a.py"),
             make_step(1, tool_name="str_replace_editor",
                       tool_args={"command": "str_replace", "path": "/repo/pkg/a.py", "old_str": "1", "new_str": "2"},
                       observation="edited"),
             _view(2, "/repo/pkg/b.py")]                       # seen after the edit: not "before the first edit"
    run = summarize({"steps": steps, "resolved": True})
    assert viewed_before_first_edit(run, ["pkg/a.py", "pkg/b.py"]) == ["pkg/a.py"]
    assert summarize({"steps": steps, "resolved": False}).pre_edit == ()    # only resolved runs need it
