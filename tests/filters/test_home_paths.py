"""Home-directory user names in session logs are replaced (the secrets filter calls this with --scrub-secrets
scrub). Inputs are written by hand; the expected texts are the inputs with the names replaced by hand."""
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
    text = "/home/dana/src/x\ndana@box:~$ whoami\ndana\ndanaX /home/user/y user /home/jo/z jo"
    assert scrub_home_paths(text) == (
        "/home/<USER>/src/x\n<USER>@box:~$ whoami\n<USER>\ndanaX /home/<USER>/y user /home/<USER>/z jo", 5)


def test_nothing_to_replace():
    text = "/root/a /var/home/x /usr/lib/python3 see /Users/ and /home/<USER>/done"
    assert home_user_spans(text) == [] and scrub_home_paths(text) == (text, 0)
    assert PLACEHOLDER == "<USER>"
