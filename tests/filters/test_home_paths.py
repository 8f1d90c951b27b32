"""Home-directory user names in session logs are replaced (the secrets filter calls this with --scrub-secrets
scrub). Inputs are written by hand; the expected texts are the inputs with the names replaced by hand."""
import pytest

from swemine.filters.home_paths import PLACEHOLDER, home_user_spans, scrub_home_paths


def test_posix_windows_and_claude_project_folders():
    text = ("Git repository created in /Users/abdulalkawasmeh/metadata-aider\n"
            "cwd C:\\Users\\Bob\\proj and JSON-escaped C:\\\\Users\\\\Bob\\\\proj\n"
            "~/.claude/projects/-Users-alice-src-app/1.jsonl")
    assert scrub_home_paths(text) == (
        "Git repository created in /Users/<USER>/metadata-aider\n"
        "cwd C:\\Users\\<USER>\\proj and JSON-escaped C:\\\\Users\\\\<USER>\\\\proj\n"
        "~/.claude/projects/-Users-<USER>-src-app/1.jsonl", 4)


def test_the_name_elsewhere_in_the_same_text_but_not_generic_or_short_names():
    text = "/home/dana/projects/x\ndana@box:~$ whoami\ndana\ndanaX /home/user/y user /home/jo/z jo"
    # /home/<x>/ counts as a home only when a personal folder follows (projects, a dot-folder ...): y and z do not
    assert scrub_home_paths(text) == (
        "/home/<USER>/projects/x\n<USER>@box:~$ whoami\n<USER>\ndanaX /home/user/y user /home/jo/z jo", 3)
    assert scrub_home_paths("/home/jo/.cache/z /home/user/.local/w") == ("/home/<USER>/.cache/z /home/<USER>/.local/w", 2)


def test_a_container_checkout_under_home_and_dotted_names_stay():
    # a repository checked out at /home/<project>/ in a container is not someone's home, and the project's
    # package name in code (com.alibaba.<project>) is never replaced
    text = "cat -n /home/fastjson2/core/src/main/java/com/alibaba/fastjson2/JSON.java\nRunning com.alibaba.fastjson2.Issue1"
    assert scrub_home_paths(text) == (text, 0)
    named = "/home/philippe/.anaconda3/bin/python; philippe@host; com.philippe.util; /srv/philippe/x"
    assert scrub_home_paths(named)[0] == "/home/<USER>/.anaconda3/bin/python; <USER>@host; com.philippe.util; /srv/philippe/x"


def test_nothing_to_replace():
    text = "/root/a /var/home/x /usr/lib/python3 see /Users/ and /home/<USER>/done"
    assert home_user_spans(text) == [] and scrub_home_paths(text) == (text, 0)
    assert PLACEHOLDER == "<USER>"


@pytest.mark.parametrize("text,expected", [
    ("cd c:/Users/carol/src", "cd c:/Users/<USER>/src"),
    ("cwd C:\\Users\\carol\\src", "cwd C:\\Users\\<USER>\\src"),
    ('{"cwd": "C:\\\\Users\\\\carol\\\\src"}', '{"cwd": "C:\\\\Users\\\\<USER>\\\\src"}'),
    ("~/.claude/projects/-home-erin-work-app/1.jsonl", "~/.claude/projects/-home-<USER>-work-app/1.jsonl"),
    ("open /Users/frank/notes.txt", "open /Users/<USER>/notes.txt"),
    ("source /home/gina/venv/bin/activate", "source /home/<USER>/venv/bin/activate"),
])
def test_each_form_of_home_path_is_found_on_its_own(text, expected):
    # each pattern runs only over a text holding its literal: every form alone still matches
    assert scrub_home_paths(text) == (expected, 1)
