"""The e-mail allow-list matches whole domains and their subdomains, never a look-alike suffix."""
from swemine.filters.secrets import SecretScanner


def test_allow_list_is_not_a_suffix_match():
    scanner = SecretScanner()
    text = "a@example.com b@mail.example.com c@attacker-example.com d@example.com.evil.io"
    found = [text[f.start:f.end] for f in scanner.find(text) if f.label == "email"]
    # example.com and its subdomain are allowed; a domain that merely ends in "example.com" or contains it is not
    assert found == ["c@attacker-example.com", "d@example.com.evil.io"]


def test_home_folder_user_names_are_scrubbed():
    scanner = SecretScanner()
    text = "cd /Users/alicesmith/src/app && ls /home/bob/.cache/x; whoami -> alicesmith; /home/<USER>/y stays"
    out = scanner.scrub(text, scanner.find(text))
    # both path names go, and the whole-word repeat of a 4+ letter name found in a path goes too
    assert out == "cd /Users/<USER>/src/app && ls /home/<USER>/.cache/x; whoami -> <USER>; /home/<USER>/y stays"
