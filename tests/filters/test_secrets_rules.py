"""Secrets / PII rules on small fictional strings: exact spans, the address and entropy guards, the prefilter's
windows, scrub and drop bookkeeping."""
from __future__ import annotations

import json
import math

import pytest

from swemine.filters.secrets import (
    SecretScanner,
    SecretsConfig,
    candidate_windows,
    scrub_record,
    secrets_stage_fn,
    shannon_bits,
)

KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"       # AWS's documented example secret key (40 characters)
EMAIL = "bob@fictional-mail.test"


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
    # no END line: the header alone, from its leading dashes
    text = "x -----BEGIN OPENSSH PRIVATE KEY-----\nabc"
    (f,) = scanner.find(text)
    assert text[f.start:f.end].startswith("-----BEGIN OPENSSH PRIVATE KEY") and f.start == 2


def test_email_boundaries(scanner):
    # a JSON escape before the address is no part of it; the sentence's period after it neither
    assert _spans(scanner, f"a\\n{EMAIL}.") == [("email", EMAIL)]
    assert _spans(scanner, f"x.{EMAIL} and sub@mail.example.org") == [("email", f"x.{EMAIL}")]


@pytest.mark.parametrize("text,found", [
    ("ip 2405:201:6016:4b79:b875:32c2:435f:d13d", ["2405:201:6016:4b79:b875:32c2:435f:d13d"]),
    ("ip 2405:2011:6016:4:5:6:7:8", ["2405:2011:6016:4:5:6:7:8"]),   # two full four-digit groups
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
])
def test_entropy_detector_guards(scanner, text, found):
    assert ("High Entropy String" in [label for label, _ in _spans(scanner, text)]) is found


def test_candidate_window_reaches_128_characters_to_a_space():
    # the token sits at 200..240 between "x " and " y" runs: 128 characters before it is offset 72, a space
    # precedes it at 71; 128 after it is 368, a space: the window ends just past it
    text = "x " * 100 + KEY + " y" * 100
    assert candidate_windows(text) == {"token": [(0, 72, 369)]}
    # two tokens on one line whose windows overlap are one window; on two lines, two windows
    two = f"a {KEY} b {KEY[::-1]} c"
    assert candidate_windows(two) == {"token": [(0, 0, len(two))]}
    lines = f"a {KEY}\nb {KEY[::-1]}"
    start2 = lines.index("\n") + 1
    assert candidate_windows(lines) == {"token": [(0, 0, start2 - 1), (start2, start2, len(lines))]}


@pytest.mark.parametrize("group,mark,context", [
    ("at", "x " * 150 + "@", 160), ("slack", "x " * 150 + "xox", 64), ("artifactory", "x " * 150 + "AKC", 64),
    ("ip4", "x " * 149 + "x1.2.3.4", 64), ("ip6", "x " * 149 + "x1:2:3:4:", 64),
])
def test_each_group_window_reaches_its_context(group, mark, context):
    # every mark (the "@", the anchor, the gate's match ".2.3.4" / ":2:3:4:") starts at 300, an even offset
    # between "x " and " y" runs: context characters before it is a word start, after it a space (kept)
    text = mark + " y" * 150
    gate = {"ip4": ".2.3.4", "ip6": ":2:3:4:"}.get(group, mark.split()[-1])
    assert candidate_windows(text) == {group: [(0, 300 - context, 300 + len(gate) + context + 1)]}


def test_overlapping_findings_keep_the_longer_one(scanner):
    # Basic Auth spans "://user:pass@"; the e-mail-looking "pass@github.com" inside it is not a second finding
    text = "https://jdoe:s3cr3tPassw0rd@github.com/x"
    assert [label for label, _ in _spans(scanner, text)] == ["Basic Auth Credentials"]


def test_noisy_plugin_offsets_are_in_the_whole_text():
    noisy = SecretScanner(SecretsConfig(extra_plugins=("HexHighEntropyString",)))
    sha = "4fd3044ca0135da903a70dfb66992293f529ecf1"
    text = f"line one\ncommit {sha}"
    (f,) = noisy.find(text)
    assert (f.label, f.start, f.end) == ("Hex High Entropy String", len("line one\ncommit "), len(text))


def test_switches_turn_detectors_off():
    text = f"key {KEY} mail {EMAIL} server 52.14.200.7 ls /home/bob/.cache/x"
    labels = {cfg: [f.label for f in SecretScanner(SecretsConfig(**{cfg: False})).find(text)]
              for cfg in ("secrets", "entropy", "emails", "ips", "home_paths")}
    assert labels == {"secrets": ["email", "ip_address", "home_user"],
                      "entropy": ["email", "ip_address", "home_user"],
                      "emails": ["High Entropy String", "ip_address", "home_user"],
                      "ips": ["High Entropy String", "email", "home_user"],
                      "home_paths": ["High Entropy String", "email", "ip_address"]}


def test_ids_are_kept_only_at_the_top_level(scanner):
    rec = {"record_id": EMAIL, "steps": [{"record_id": EMAIL, "n": 3}], "pair": (EMAIL, 1)}
    out, ev = scrub_record(rec, scanner)
    assert out == {"record_id": EMAIL, "steps": [{"record_id": "<EMAIL>", "n": 3}], "pair": ["<EMAIL>", 1]}
    assert [(e["field"], e["offset"], e["length"]) for e in ev] == [("steps[0].record_id", 0, len(EMAIL)),
                                                                    ("pair[0]", 0, len(EMAIL))]


def test_scrub_counts_go_to_extra_json_when_the_record_has_one():
    fn = secrets_stage_fn("t")
    assert fn({"record_id": "r", "content": EMAIL}) == [{"record_id": "r", "content": "<EMAIL>"}]
    (out,) = fn({"record_id": "r", "content": f"{EMAIL} {EMAIL}", "extra_json": '{"b": 1}'})
    assert json.loads(out["extra_json"]) == {"b": 1, "scrubbed": {"email": 2}}
    (out,) = fn({"record_id": "r", "content": EMAIL, "extra_json": "not json"})
    assert json.loads(out["extra_json"]) == {"unparsed_extra_json": "not json", "scrubbed": {"email": 1}}


def test_drop_keeps_twenty_findings_and_names_the_worst_kind():
    fn = secrets_stage_fn("t", SecretsConfig(mode="drop"))
    (out,) = fn({"record_id": "r", "content": " ".join(f"u{i}@fictional-mail.test" for i in range(25))})
    ev = json.loads(out["evidence_json"])
    assert (out["reason"], ev["rule"], ev["counts"], len(ev["findings"])) == ("pii", "pii", {"email": 25}, 20)
    (out,) = fn({"record_id": "r", "content": f"{EMAIL} {KEY}"})
    assert out["reason"] == "secret"
