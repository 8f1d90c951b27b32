"""Secrets / PII rules on small fictional strings: exact spans, the address and entropy guards, the prefilter's
windows, scrub and drop bookkeeping."""
from __future__ import annotations

import json
import math

import pytest

from swemine.filters.secret_prefilter import _marks, candidate_windows, candidate_windows_many
from swemine.filters.secrets import (
    SecretScanner,
    SecretsConfig,
    scrub_record,
    secrets_stage_fn,
    shannon_bits,
)

KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"       # AWS's documented example secret key (40 characters)
EMAIL = "bob@fictional-mail.org"


@pytest.fixture(scope="module")
def scanner():
    return SecretScanner()


def _spans(scanner, text):
    return [(f.label, text[f.start:f.end]) for f in scanner.find(text)]


def test_private_key_block_runs_from_its_dashes_to_the_end_line(scanner):
    block = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----"
    text = f"key:\n{block}\ntail"
    (f,) = scanner.find(text)
    assert (f.label, f.start, f.end) == ("Private Key", len("key:\n"), len("key:\n") + len(block))
    # at the very start of the text
    (f,) = scanner.find(block)
    assert (f.start, f.end) == (0, len(block))
    # no END line: the header alone, from its leading dashes
    text = "x -----BEGIN OPENSSH PRIVATE KEY-----\nabc"
    (f,) = scanner.find(text)
    assert text[f.start:f.end].startswith("-----BEGIN OPENSSH PRIVATE KEY") and f.start == 2
    # a header named in prose, without dashes, starts at its own first word
    for text in ("grep 'BEGIN RSA PRIVATE KEY' id_rsa", "#      BEGIN RSA PRIVATE KEY' id_rsa"):
        (f,) = scanner.find(text)
        assert (f.start, f.end) == (text.index("BEGIN"), text.index("' id_rsa")), text
    # secrets off: no private key either
    assert SecretScanner(SecretsConfig(secrets=False)).find(block) == []


def test_email_boundaries(scanner):
    # a JSON escape before the address is no part of it; the sentence's period after it neither
    assert _spans(scanner, f"a\\n{EMAIL}.") == [("email", EMAIL)]
    assert _spans(scanner, f"x.{EMAIL} and sub@mail.example.org") == [("email", f"x.{EMAIL}")]


@pytest.mark.parametrize("text,found", [
    ("ip 2405:201:6016:4b79:b875:32c2:435f:d13d", ["2405:201:6016:4b79:b875:32c2:435f:d13d"]),
    ("ip 2405:2011:16:4:5:6:7:8", ["2405:2011:16:4:5:6:7:8"]),   # two full four-digit groups
    ("ip 2405:1:2:3:4:5:6:7", []),                                   # one: an example, not an address
    ("ip 2001:db8:85a3:8d3:1319:8a2e:370:7348", []),                 # documentation range
    ("ip ff02:1234:5678:1:2:3:4:5", []),                             # multicast
])
def test_ipv6_public_addresses_only(scanner, text, found):
    assert [t for label, t in _spans(scanner, text) if label == "ip_address"] == found


@pytest.mark.parametrize("text,found", [
    ("server 52.14.200.7 ", True),
    ("server: 52.14.200.7", True),
    ("the host is far away from here, a long sentence then 52.14.200.7", False),   # keyword > 40 chars before
    ("52.14.200.7:443 answered", True),                                          # a port after it
    ("host 224.0.0.1 and host 255.255.255.255", False),                          # multicast / broadcast
    ("server version 52.14.200.7", False),
    ("server 999.14.200.7", False),                                              # not an address at all
    # the keyword is looked for in the 40 characters before the address
    ("host" + " " * 36 + "52.14.200.7", True),
    ("host" + " " * 37 + "52.14.200.7", False),
])
def test_ipv4_context(scanner, text, found):
    assert ([label for label, _ in _spans(scanner, text)] == ["ip_address"]) is found


def test_shannon_bits():
    # -sum p log2 p: two symbols half each = 1 bit, four equally = 2 bits, one symbol = 0
    assert (shannon_bits("aabb"), shannon_bits("abcd"), shannon_bits("aaaa")) == (1.0, 2.0, 0.0)
    assert shannon_bits("aaab") == pytest.approx(-(0.75 * math.log2(0.75) + 0.25 * math.log2(0.25)))


@pytest.mark.parametrize("text,found", [
    (KEY, True),
    (f"sha256: {KEY}", False),                                   # a published content hash
    (f"site-verification={KEY}", False),
    (f"{KEY}\n-----END CERTIFICATE-----", False),                 # a line of a PEM block
    # the END marker must start within 4096 - len("-----END ") = 4087 characters after the token (40 long):
    # at offset 40 + 1 + 4085 + 1 = 4127 it does, one character later it does not
    (f"{KEY}\n{'x' * 4085}\n-----END CERTIFICATE-----", False),
    (f"{KEY}\n{'x' * 4086}\n-----END CERTIFICATE-----", True),
    ("Abcdefghijkmnopqrstuvwxyz123456789ABCDEFGH", False),        # base58 only: a coin address
    ("abcdefghijklmnopqrstuvwxyz0123456789ABCD", False),          # one case change: not token-like
    ("aB3dE5gH7jK9mN0p" * 2, False),                             # 16 symbols twice: 4.0 bits < 4.5
    # 46 distinct characters (5.5 bits); lower, upper, digit, lower runs change class 3 times: not token-like,
    # one more upper run makes 4
    ("abcdefghijklmnopqrstABCDEFGH01234567uvwxy", False),
    ("abcdefghijklmnopqrstABCDEFGH01234567uvwxyJKLMN", True),
    ("abcdefghijKLMNOPQRSTuvwxyzABCDEFGHIJklmnop", False),       # 42 distinct, 4 class changes, but no digit
])
def test_entropy_detector_guards(scanner, text, found):
    assert ("High Entropy String" in [label for label, _ in _spans(scanner, text)]) is found


def _token_windows(text):
    """The prefilter's windows but the context rules' (AWS's example key ends with the keyword ``KEY``) and the
    entropy detector's (the key itself)."""
    return {g: w for g, w in candidate_windows(text).items() if g not in ("ctx", "entropy")}


def test_candidate_window_reaches_128_characters_to_a_space():
    # the token sits at 200..240 between runs of blanks: 128 characters before it is offset 72 (the blank at 71
    # is the nearest); 128 after it is 368, a blank: the window ends just past it
    text = " " * 200 + KEY + " " * 200
    assert _token_windows(text) == {"token": [(0, 72, 369)]}
    # a token that ends the text: the window ends with it
    assert _token_windows(" " * 200 + KEY) == {"token": [(0, 72, 240)]}
    assert [f.label for f in SecretScanner().find("a " * 100 + KEY)] == ["High Entropy String"]
    # two tokens on one line whose windows overlap are one window; on two lines, two windows
    two = f"a {KEY} b {KEY[::-1]} c"
    assert _token_windows(two) == {"token": [(0, 0, len(two))]}
    lines = f"a {KEY}\nb {KEY[::-1]}"
    start2 = lines.index("\n") + 1
    assert _token_windows(lines) == {"token": [(0, 0, start2 - 1), (start2, start2, len(lines))]}
    lines += f" {KEY}"                                   # a second token on line 2: still one window there
    assert _token_windows(lines) == {"token": [(0, 0, start2 - 1), (start2, start2, len(lines))]}
    assert _token_windows("\n" + KEY) == {"token": [(1, 1, 41)]}       # the line after a leading newline


@pytest.mark.parametrize("group,mark,context", [
    ("at", " " * 300 + "@", 160), ("slack", " " * 300 + "xox", 64), ("artifactory", " " * 300 + "AKC", 64),
    ("ip4", " " * 298 + "x1.2.3.4", 64), ("ip6", " " * 298 + "x1:2:3:4:", 64), ("ctx", " " * 300 + "token", 120),
])
def test_each_group_window_reaches_its_context(group, mark, context):
    # every mark (the "@", the anchor, the gate's match ".2.3.4" / ":2:3:4:") starts at 300 between runs of
    # blanks: the window starts context characters before it and ends one past the blank context characters
    # after its end
    text = mark + " " * 300
    gate = {"ip4": ".2.3.4", "ip6": ":2:3:4:"}.get(group, mark.split()[-1])
    text = text if group != "ctx" else mark + "=" + " " * 400      # a context keyword counts before = or :
    assert candidate_windows(text) == {group: [(0, 300 - context, 300 + len(gate) + context + 1)]}


def test_windows_merge_into_the_last_one():
    # tokens A at 0, B at 441, C at 522 on one line: A's window ends at the space at 40 + 128 = 168; B's starts
    # after the space before 441 - 128 = 313; C's starts at 393 (inside B's): merged into B's, which then ends
    # after the space at 562 + 128 = 690
    text = KEY + " " + "x " * 200 + KEY + " " + "y " * 20 + KEY + " z" * 100
    assert [text.index(KEY, i) for i in (0, 1, 442)] == [0, 441, 522]
    assert _token_windows(text) == {"token": [(0, 0, 169), (0, 313, 691)]}
    # the same line after a 300-character one: every offset moves by 301
    assert _token_windows("z" * 300 + "\n" + text) == {"token": [(301, 301, 470), (301, 614, 992)]}


def test_context_keywords_are_marked_where_a_rule_can_start():
    # every keyword, at a text's start (nothing before it to look behind at), mid-line and twice in a row; only
    # where a rule can start: a command anywhere, a secret word before = / : or a flag's space
    text = ("token=1 cookie x\nx key: 2 -u secret=3 curl y pwd=4\tcred= 5 wget\nsig=6 login mysql mariadb "
            "docker ngrok passpassword=7 auth: 8 monkey keys tokens xtoken")
    ctx = [text[s:e] for s, e in _ctx_marks(text)]
    assert ctx == ["token", "cookie", "key", "secret", "curl", "pwd", "cred", "wget", "sig=", "login", "mysql",
                   "mariadb", "docker", "ngrok", "pass", "auth"]          # the second pass of passpassword=


def _ctx_marks(text):
    """The spans of the context keywords the prefilter marks in ``text``."""
    return sorted((s, e) for group, s, e in _marks(text.encode(), [0]) if group == "ctx")


def test_strings_scanned_together_find_what_each_finds_alone(scanner):
    # a keyword ending one string and a colon opening the next, a token cut by a string's end, an address split
    # over two strings: the windows and findings of each are those it gets alone
    texts = ["export password", ": hunter2longer", "key " + KEY[:20], KEY[20:] + " done", "mail jane.roe",
             "@fictional-mail.org", f"x {EMAIL}", "tiny", "", "token", "=aB3dE5gH7jK9mN0pQrS", KEY]
    assert candidate_windows_many(texts) == [candidate_windows(t) for t in texts]
    assert scanner.find_many(texts) == [scanner.find(t) for t in texts]
    assert [[f.label for f in fs] for fs in scanner.find_many(texts)] == [
        [], [], [], [], [], [], ["email"], [], [], [], [], ["High Entropy String"]]


@pytest.mark.parametrize("text,span", [
    ("xoxb-123456789012-abcdefghijklmn is the bot", (0, 32)),      # an anchor at offset 0 is marked too
    ("token xoxb-123456789012-abcdefghijklmn", (6, 38)),
])
def test_slack_token(scanner, text, span):
    assert [(f.label, f.start, f.end) for f in scanner.find(text)] == [("Slack Token", *span)]


def test_overlapping_findings_keep_the_longer_one(scanner):
    # Basic Auth spans "://user:pass@"; the e-mail-looking "pass@github.com" inside it is not a second finding,
    # also after an earlier finding
    text = "https://jdoe:s3cr3tPassw0rd@github.com/x"
    assert [label for label, _ in _spans(scanner, text)] == ["Basic Auth Credentials"]
    assert [label for label, _ in _spans(scanner, f"{EMAIL} {text}")] == ["email", "Basic Auth Credentials"]
    # a JWT whose 41-character header is also a high-entropy token (4..45): both start at 4, the longer JWT
    # match (header, dot, 15-character payload, dot: 4 + 58 = 62) is kept
    jwt = "eyJwJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY.eyJzdWIiOiIxIn0.c2lnbmF0dXJl"
    assert [(f.label, f.start, f.end) for f in scanner.find(f"tok {jwt} x")] == [("JSON Web Token", 4, 62)]
    assert [(f.label, f.start, f.end) for f in scanner.find(f"{jwt} x")] == [("JSON Web Token", 0, 58)]


def test_the_full_scan_finds_what_the_prefilter_finds():
    fast, full = SecretScanner(), SecretScanner(exhaustive=True)
    for text in (EMAIL, f"x\n{EMAIL}\nkey {KEY}", "server 52.14.200.7:22\n" + EMAIL):
        assert full.find(text) == fast.find(text) != [], text


def test_a_bare_aws_key_is_found(scanner):
    # 20 characters between blanks: the shortest token run the prefilter hands to the detectors
    assert _spans(scanner, "key AKIAQ7FAKE0EXAMPLE12 here") == [("AWS Access Key", "AKIAQ7FAKE0EXAMPLE12")]


def test_noisy_plugin_offsets_are_in_the_whole_text():
    noisy = SecretScanner(SecretsConfig(extra_plugins=("HexHighEntropyString",)))
    sha = "4fd3044ca0135da903a70dfb66992293f529ecf1"
    text = f"line one\ncommit {sha}"
    (f,) = noisy.find(text)
    assert (f.label, f.start, f.end) == ("Hex High Entropy String", len("line one\ncommit "), len(text))
    (f,) = noisy.find(f"line one\n{sha}")                             # at the start of its line
    assert (f.start, f.end) == (len("line one\n"), len("line one\n") + len(sha))


def test_switches_turn_detectors_off():
    text = f"key {KEY} mail {EMAIL} server 52.14.200.7 ls /home/bob/.cache/x"
    labels = {cfg: [f.label for f in SecretScanner(SecretsConfig(**{cfg: False})).find(text)]
              for cfg in ("secrets", "entropy", "emails", "ips", "home_paths")}
    assert labels == {"secrets": ["email", "ip_address", "home_user"],
                      "entropy": ["email", "ip_address", "home_user"],
                      "emails": ["High Entropy String", "ip_address", "home_user"],
                      "ips": ["High Entropy String", "email", "home_user"],
                      "home_paths": ["High Entropy String", "email", "ip_address"]}
    assert SecretScanner(SecretsConfig(ips=False)).find("ip 2405:201:6016:4b79:b875:32c2:435f:d13d") == []


def test_ids_are_kept_only_at_the_top_level(scanner):
    rec = {"record_id": EMAIL, "steps": [{"record_id": EMAIL, "n": 3}], "pair": ("mail " + EMAIL, 1)}
    out, ev = scrub_record(rec, scanner)
    assert out == {"record_id": EMAIL, "steps": [{"record_id": "<EMAIL>", "n": 3}], "pair": ["mail <EMAIL>", 1]}
    assert [(e["field"], e["offset"], e["length"]) for e in ev] == [("steps[0].record_id", 0, len(EMAIL)),
                                                                    ("pair[0]", 5, len(EMAIL))]


def test_scrub_counts_go_to_extra_json_when_the_record_has_one():
    fn = secrets_stage_fn("t")
    assert fn({"record_id": "r", "content": EMAIL}) == [{"record_id": "r", "content": "<EMAIL>"}]
    (out,) = fn({"record_id": "r", "content": f"{EMAIL} {EMAIL}", "extra_json": '{"b": 1}'})
    assert json.loads(out["extra_json"]) == {"b": 1, "scrubbed": {"email": 2}}
    # sorted keys (deterministic records); non-ASCII text stays readable UTF-8, not \u escapes
    (out,) = fn({"record_id": "r", "content": EMAIL, "extra_json": '{"note": "café"}'})
    assert out["extra_json"] == '{"note": "café", "scrubbed": {"email": 1}}'
    (out,) = fn({"record_id": "r", "content": EMAIL, "extra_json": '{"z": 1}'})
    assert out["extra_json"] == '{"scrubbed": {"email": 1}, "z": 1}'
    (out,) = fn({"record_id": "r", "content": EMAIL, "extra_json": "not json"})
    assert json.loads(out["extra_json"]) == {"unparsed_extra_json": "not json", "scrubbed": {"email": 1}}


def test_drop_keeps_twenty_findings_and_names_the_worst_kind():
    fn = secrets_stage_fn("t", SecretsConfig(mode="drop"))
    (out,) = fn({"record_id": "r", "content": " ".join(f"u{i}@fictional-mail.org" for i in range(25))})
    ev = json.loads(out["evidence_json"])
    assert (out["reason"], ev["rule"], ev["counts"], len(ev["findings"])) == ("pii", "pii", {"email": 25}, 20)
    (out,) = fn({"record_id": "r", "content": f"{EMAIL} {KEY}"})
    assert out["reason"] == "secret"
