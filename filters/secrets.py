"""Secrets and PII scrubbing: detect-secrets' detectors, an entropy detector, e-mail and public IP addresses.

Secrets are found with detect-secrets' maintained regex plugins (their ``denylist`` patterns, full match spans)
plus a high-entropy token detector (32–64 base64 characters mixing cases and digits, Shannon entropy >= 4.5
bits/char: an AWS secret key with no key-like variable name beside it). The opt-in line-based plugins (hex /
base64 entropy, keyword assignments: noisy on code, see bigcode-analysis PR #24) go through ``analyze_line``.
A private-key header extends to its ``END`` line. E-mails and IPv4/IPv6 addresses are found here; private,
loopback, link-local, reserved and documentation addresses and allow-listed e-mail domains are left alone, and
an IPv4-shaped string counts only where its context says address (a keyword such as ``server``/``host``/``ip``
or a URL before it, a ``:port`` after it), never after a version keyword or a ``-``/``==`` pin; multicast
addresses and netmasks are not addresses of anyone.

Scanning is line based behind a prefilter (:mod:`swemine.filters.secret_prefilter`): only the parts of lines around
a long token run, an ``@``, a dotted quad, a context keyword or another literal anchor are handed to the detectors
(``exhaustive=True`` hands them every line; the results are the same, see the tests), and the strings of a record
are passed over together, so clean text costs a few C-speed passes.

``mode="scrub"`` replaces each finding with a placeholder (``<SECRET:AWS Access Key>``, ``<EMAIL>``,
``<IP_ADDRESS>``) in every string field of the record (JSON-string columns such as ``tool_args_json`` and
``extra_json`` included; ids and hashes excepted) and records the counts in ``extra_json.scrubbed``;
``mode="drop"`` returns a ``Filtered`` (reason ``secret`` or ``pii``) whose stored record is the *scrubbed* one.
:func:`scrub_row` does the same to any row (rejects, filtered records). Evidence names the kind, field and
offset, never the value; nothing here logs a value.
"""
from __future__ import annotations

import base64
import ipaddress
import json
import math
import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from swemine.filters.fields import FieldSpec
from swemine.filters.home_paths import PLACEHOLDER as HOME_PLACEHOLDER
from swemine.filters.home_paths import home_user_spans
from swemine.filters.secret_joins import join_regions, joined, spans_back
from swemine.filters.secret_prefilter import ENTROPY_RUN, all_windows, candidate_windows_many, token_like
from swemine.filters.secret_rules import (
    DIGEST_LABEL,
    context_secrets,
    encoded_tokens,
    provider_tokens,
    truncated_token,
    url_password,
    url_passwords,
)
from swemine.filters.secret_values import has_filler, wordy
from swemine.filters.verdict import Verdict, filter_stage

STAGE = "secrets"
#: Line-based detect-secrets plugins: off by default (false positives on code: hashes, SHAs, test passwords).
NOISY_PLUGINS = ("Base64HighEntropyString", "HexHighEntropyString", "KeywordDetector", "IPPublicDetector")
#: detect-secrets plugins never run: Twilio's flags ``AC…`` / ``SK…`` SIDs, which name an account or a key (the
#: secret is the key's secret or the auth token beside it, found by its variable's name)
WRONG_PLUGINS = ("TwilioKeyDetector",)
#: Fields never scanned: ids and content hashes (random-looking by design).
ID_FIELDS = frozenset({"record_id", "trajectory_id", "subject_id", "source_sha256", "config_hash", "content_sha256",
                       "base_commit", "commit", "environment_setup_commit", "merged_commit"})
#: a match may start right after a JSON escape (``\\n``) but not inside a longer word, path or escape
_START = r"(?:(?<=\\[ntr])|(?<![\w.+\\-]))"
#: an address not followed by ``:path`` (``git@github.com:org/repo.git`` is an scp-like remote, not a mailbox)
EMAIL = re.compile(_START + r"[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@(?:[A-Za-z0-9-]{1,63}\.)+[A-Za-z]{2,24}(?![\w-]|:[\w~/.-])")
#: what every e-mail holds: a local part's character, ``@``, a domain label and its dot (opening with the ``@`` the
#: regex engine scans for; the e-mail regex itself tries every position of a window: ``@property`` decorators)
EMAIL_SHAPE = re.compile(r"@(?<=[A-Za-z0-9._%+-]@)[A-Za-z0-9-]+\.")
IPV4 = re.compile(r"(?<![\w.-])(?:\d{1,3}\.){3}\d{1,3}(?!\w|\.\w)")
IPV6 = re.compile(r"(?<![\w:.])(?:[0-9A-Fa-f]{1,4}:){2,7}[0-9A-Fa-f]{1,4}(?![\w:])")
#: Context that makes a dotted quad an address: a keyword shortly before it, or a port / prefix length after it.
IP_BEFORE = re.compile(r"(?i)(?:\b(?:ip|ipv4|ips|addr|address(?:es)?|host(?:name)?s?|server|remote|client|peer|"
                       r"proxy|dns|nameserver|gateway|inet|bind|listen(?:ing)?(?: on)?|connect(?:ed|ing)?(?: to)?|"
                       r"ping|ssh|curl|wget|nslookup|dig|resolved?)\b[\s:=\"'(\[]*|://|@)$")
IP_AFTER = re.compile(r":\d{1,5}\b")
IP_NOT = re.compile(r"(?i)(?:\b(?:v|ver|version|versions|release|rev|revision|build|tag|pip|package)\b\W{0,3}|"
                    r"[=<>~!]=\s*)$")
ENTROPY_TOKEN = re.compile(r"(?:(?<=\\[ntr])|(?<![A-Za-z0-9+/=_.\\-]))[A-Za-z0-9+/]{" + str(ENTROPY_RUN)
                           + r",64}={0,2}(?![A-Za-z0-9+/=_\-])")
#: no finding is shorter (``a@b.io``, a 6-character context value): shorter texts are not scanned
MIN_TEXT = 6
PEM_LINE_SPAN = 4096   # a token followed by "-----END " this close is a line of a PEM block (certificates are public)
ENTROPY_BITS = 4.5
#: a shorter token needs less: its entropy can reach only log2(length) bits, and 32 random characters average ~4.6
ENTROPY_SLACK = 0.9
#: base58 (no 0 O I l + /): crypto-currency addresses and IPFS hashes, public by design
_BASE58 = frozenset("123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz")
#: published tokens that prove a site's ownership or a file's content, not access
ENTROPY_NOT = re.compile(rf"(?i)(?:{DIGEST_LABEL}|"
                         r"\$2[abxy]?\$\d\d\$|pbkdf2_\w+\$\d+\$\w*\$|\$argon2\w*\$\S*\$)$")    # + password hashes
#: every PEM private-key header (``ENCRYPTED``, ``PGP ... BLOCK``), beside detect-secrets' list
PEM_HEADER = re.compile(r"BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?")
PEM_END = re.compile(r"-----END [A-Z ]*PRIVATE KEY[A-Z ]*-----")
#: the body after a private-key header whose END line is missing (a truncated excerpt): base64 lines, headers
PEM_BODY = re.compile(r"(?:-----)?(?:(?:\r?\n|(?:\\r)?\\n)(?:[A-Za-z0-9+/=]{8,}|(?:Proc-Type|DEK-Info|Comment):[^\n\\]*)"
                      r"(?=\r?\n|\\[rn]|$))*")
DEFAULT_EMAIL_ALLOW = ("example.com", "example.org", "example.net", "localhost", "users.noreply.github.com")
_DOC_NETS = [ipaddress.ip_network(n) for n in ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32")]

#: the detector group each anchored detect-secrets plugin runs in (the others run in the token group's windows)
_PLUGIN_GROUP = {"Slack Token": "slack", "Artifactory Credentials": "artifactory", "Basic Auth Credentials": "at"}


@dataclass(frozen=True)
class SecretsConfig:
    """What to look for and what to do about it."""
    mode: str = "scrub"                        # scrub | drop
    secrets: bool = True
    emails: bool = True
    ips: bool = True
    entropy: bool = True                       # the high-entropy token detector
    home_paths: bool = True                    # user names in home-folder paths (filters.home_paths)
    extra_plugins: tuple[str, ...] = ()        # NOISY_PLUGINS to switch on by class name
    email_allow_domains: tuple[str, ...] = DEFAULT_EMAIL_ALLOW

    def __post_init__(self):
        if self.mode not in ("scrub", "drop"):
            raise ValueError(f"secrets mode must be scrub or drop, not {self.mode!r}")


@dataclass(frozen=True)
class Finding:
    kind: str          # "secret" | "pii"
    label: str         # detector type, "email", "ip_address"
    start: int
    end: int
    copy: bool = False  # a copy of a secret found elsewhere in the record (:func:`copied_secrets`)

    @property
    def placeholder(self) -> str:
        if self.kind == "secret":
            return f"<SECRET:{self.label}>"
        return {"email": "<EMAIL>", "home_user": HOME_PLACEHOLDER}.get(self.label, "<IP_ADDRESS>")


#: reserved top-level domains (RFC 2606, RFC 6761): no one's mailbox
RESERVED_TLDS = frozenset({"example", "invalid", "localhost", "test"})


def _in_userinfo(text: str, start: int) -> bool:
    """Whether ``start`` sits in a URL's userinfo (``https://u:p@host``: a password and a host, not an e-mail)."""
    scheme = text.rfind("://", max(0, start - 80), start)
    return scheme >= 0 and not any(c in text[scheme:start] for c in " \t\n\"'<>")


def fixture_email(local: str, domain: str) -> bool:
    """An address no one holds (lower case parts): a reserved TLD, an ``example.<tld>`` domain, a ``your…`` placeholder
    or a one-letter name at a one-letter domain (``a@b.com``)."""
    labels = domain.split(".")
    return (labels[-1] in RESERVED_TLDS or labels[-2:-1] == ["example"] or local.startswith("your")
            or len(local) == 1 and len(labels[0]) == 1)


def _counting(text: str) -> bool:
    """Octets counting up or down by one (``1.2.3.4``, ``4.3.2.1``): an example address, not someone's."""
    octets = [int(o) for o in text.split(".")]
    steps = {b - a for a, b in zip(octets, octets[1:])}
    return steps in ({1}, {-1})


def _ip_is_public(text: str) -> bool:
    """A global unicast address outside the documentation ranges, not counting octets; for IPv6 also not a netmask and with at least
    two full four-digit groups (``123:2:3:4:5:6:7:8`` in a comment is an example, not someone's address)."""
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        return False
    if ip.is_multicast or any(ip in n for n in _DOC_NETS if n.version == ip.version):
        return False
    if ip.version == 4 and _counting(text):
        return False
    if ip.version == 6:
        bits = format(int(ip), "0128b")
        if "01" not in bits or sum(len(g) == 4 for g in text.split(":")) < 2:
            return False
    return ip.is_global


def _ipv4_says_address(text: str, line_start: int, start: int, end: int) -> bool:
    """True when the words around ``text[start:end]`` (on its line) say it is an address, not a version."""
    before = text[max(line_start, start - 40):start]
    if IP_NOT.search(before):
        return False
    return bool(IP_BEFORE.search(before) or IP_AFTER.match(text, end))


def shannon_bits(token: str) -> float:
    """Shannon entropy of ``token`` in bits per character."""
    n = len(token)
    return -sum(c / n * math.log2(c / n) for c in Counter(token).values())


def _crypto_address(core: str) -> bool:
    """Base58 in an address's shape: Bitcoin (``1``/``3`` and 25-35 characters), IPFS (``Qm``), Tezos (``KT1``,
    ``tz1``-``tz3``) or 43+ characters (Solana and the like). A random 32-character key is base58-only 12% of the time, so the
    alphabet alone says nothing."""
    return _BASE58.issuperset(core) and (core[0] in "13" and len(core) <= 35 or core[:2] == "Qm" or len(core) >= 43
                                         or core[:3] in ("KT1", "tz1", "tz2", "tz3"))


def _high_entropy(token: str) -> bool:
    """Mixed cases and digits changing often, entropy high enough, and not a name: a crypto address, words written
    together (``shouldMapSomeBToSomeAWithoutField1``, a URL-encoded phrase ``27s+Victorian+Establishment``)."""
    core = token.rstrip("=")
    return (any(c.isdigit() for c in core) and any(c.isupper() for c in core) and any(c.islower() for c in core)
            and not _crypto_address(core) and token_like(core.encode())
            and shannon_bits(core) >= min(ENTROPY_BITS, math.log2(len(core)) - ENTROPY_SLACK)
            and not wordy(core))


def _secret_token(text: str, line_start: int, start: int, end: int) -> bool:
    """An entropy-detector token that is not a line of a PEM block, a published verification / content hash nor
    encoded prose."""
    return (_high_entropy(text[start:end]) and text.find("-----END ", end, end + PEM_LINE_SPAN) < 0
            and not ENTROPY_NOT.search(text, max(line_start, start - 40), start) and not _encoded_prose(text[start:end]))


def _encoded_prose(token: str) -> bool:
    """Base64 of printable text with spaces (``VGhlIHF1aWNr…``: "The quick…", a JSON document): a fixture's encoded
    sentence, not a key (random bytes never decode to it; ``user:password`` has no space)."""
    try:
        decoded = base64.b64decode(token + "=" * (-len(token) % 4), validate=True).decode("ascii")
    except ValueError:
        return False
    return " " in decoded and decoded.isprintable()


#: literals (lower case) one of which a detect-secrets pattern's match must hold: its keyword-led patterns (IBM,
#: SoftLayer, Cloudant: ``…key|pwd|pass…``) cost the most and match only beside these words
_KEYWORD_LED = "(?:(?<=\\W)|(?<=^))"
_PLUGIN_GATES = (("-us[0-9]", ("-us",)), ("cloudant", ("cloudant",)), ("softlayer", ("softlayer",)), ("aws", ("aws",)),
                 ("\\d{8,10}:", (":",)), ("[MNO]", (".",)),
                 # the literal prefix of a provider's format (lower case)
                 ("ABIA|ACCA|AKIA", ("a3t", "abia", "acca", "akia", "asia")), ("AccountKey=", ("accountkey=",)),
                 ("(ghp|gho", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")), ("GR1348941", ("gr1348941",)),
                 ("(glpat|", ("glpat-", "gldt-", "glft-", "glsoat-", "glrt-")), ("glcbt-", ("glcbt-",)),
                 ("glimt-", ("glimt-",)), ("glptt-", ("glptt-",)), ("glagent-", ("glagent-",)), ("gloas-", ("gloas-",)),
                 ("eyJ", ("eyj",)), ("_authToken", ("_authtoken",)), ("T3BlbkFJ", ("t3blbkfj",)),
                 ("pypi-AgE", ("pypi-age",)), ("SG\\.", ("sg.",)), ("sq0csp-", ("sq0csp-",)), ("k_live_", ("k_live_",)))
#: the keyword-led patterns' assignment: a key word, ``=`` / ``:`` / a space, the value (24+ characters of its class)
_ASSIGNED = """(?:"|\\'|)(?:\\]|)(?: *)(?:=|:|:=|=>| +|::)(?: *)(?:"|\\'|)("""
#: (a part of a detect-secrets pattern, a regex each of its matches holds): the patterns whose literal sits in most
#: windows and that cost the most (no literal to open with) run only where their shape is found first (a regex opening
#: with a literal, or one alternation of the keywords)
_PLUGIN_SHAPES = (
    (_ASSIGNED, re.compile(r"""(?i)(?:key|pwd?|pass(?:word)?|token)["']?\]? *(?:=|:|:=|=>| +|::) *["']?[0-9a-z_-]{24}""")),
    ("\\d{8,10}:[0-9A-Za-z_-]{35}", re.compile(r":[0-9A-Za-z_-]{35}")),                               # Telegram
    ("\\.[a-zA-Z\\d_-]{6}\\.[a-zA-Z\\d_-]{27}", re.compile(r"\.[a-zA-Z\d_-]{6}\.[a-zA-Z\d_-]{27}")),   # Discord
)


def plugin_gate(pattern: re.Pattern) -> tuple[tuple[str, ...], re.Pattern | None]:
    """What a window must hold for ``pattern`` to run on it: one of some literals (lower case; none: always run),
    then a match of a regex when one is given."""
    shape = next((s for part, s in _PLUGIN_SHAPES if part in pattern.pattern), None)
    if pattern.pattern.startswith(_KEYWORD_LED):
        return ("key", "pw", "pass", "token", "secret"), shape
    return next((gate for part, gate in _PLUGIN_GATES if part in pattern.pattern), ()), shape


def merged(found: list[Finding]) -> list[Finding]:
    """``found`` sorted and without overlaps: the earliest (then longest, then not a copy) finding wins, overlapping
    secrets join."""
    found.sort(key=lambda f: (f.start, -(f.end - f.start), f.copy, f.label))
    out: list[Finding] = []
    for f in found:
        if not out or f.start >= out[-1].end:
            out.append(f)
        elif f.end > out[-1].end and f.kind == out[-1].kind == "secret":    # overlapping secrets: their union
            out[-1] = Finding("secret", out[-1].label, out[-1].start, f.end, out[-1].copy)
    return out


class SecretScanner:
    """Finds secrets and PII spans in text; build once per worker (plugins are loaded here)."""

    def __init__(self, cfg: SecretsConfig | None = None, exhaustive: bool = False):
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
        from detect_secrets.plugins.base import RegexBasedDetector

        self.cfg = cfg or SecretsConfig()
        self.windows = (lambda texts: [all_windows(t) for t in texts]) if exhaustive else candidate_windows_many
        #: detector group -> (literals, shape, [(secret type, pattern)]) of the regex plugins the group's windows are
        #: scanned with, grouped by their gate (:func:`plugin_gate`, looked for once per window)
        self.group_patterns: dict[str, list[tuple[tuple[str, ...], re.Pattern | None, list[tuple[str, re.Pattern]]]]] = {}
        self.line_plugins: list[Any] = []
        plans: dict[str, dict[tuple, list[tuple[str, re.Pattern]]]] = {}
        for secret_type, cls in sorted(get_mapping_from_secret_type_to_class().items()):
            name = cls.__name__
            if name in WRONG_PLUGINS:
                continue
            if name in NOISY_PLUGINS:
                if name in self.cfg.extra_plugins:
                    self.line_plugins.append(cls())
            elif issubclass(cls, RegexBasedDetector) and secret_type != "Private Key":
                for pat in cls().denylist:
                    gates = plans.setdefault(_PLUGIN_GROUP.get(secret_type, "token"), {})
                    gates.setdefault(plugin_gate(pat), []).append((secret_type, pat))
        self.group_patterns = {group: [(*gate, pats) for gate, pats in gates.items()] for group, gates in plans.items()}
        self.private_key = [p for t, c in get_mapping_from_secret_type_to_class().items() if t == "Private Key"
                            for p in c().denylist] + [PEM_HEADER]

    def _private_keys(self, text: str) -> Iterator[Finding]:
        for pat in self.private_key:
            for m in pat.finditer(text):
                start, end = m.span()
                start = start - 5 if text[max(0, start - 5):start] == "-----" else start
                tail = PEM_END.search(text, end)
                yield Finding("secret", "Private Key", start, tail.end() if tail else PEM_BODY.match(text, end).end())

    def _window_findings(self, group: str, text: str, line_start: int, ws: int, we: int) -> Iterator[Finding]:
        """Findings of ``group``'s detectors inside ``text[ws:we]`` (lookbehinds see the text before it)."""
        cfg = self.cfg
        if cfg.secrets:
            low = None                                # the window lower-cased, once a gate needs it
            for literals, shape, patterns in self.group_patterns.get(group, ()):
                if literals:
                    if low is None:
                        low = text[ws:we].lower()
                    for literal in literals:
                        if literal in low:
                            break
                    else:
                        continue
                if shape is not None and shape.search(text, ws, we) is None:
                    continue
                for label, pat in patterns:
                    for m in pat.finditer(text, ws, we):
                        if m.end() > m.start() and not has_filler(m.group()) and (
                                label != "Basic Auth Credentials" or url_password(m.group(1))):
                            yield Finding("secret", label, *m.span())
            if group == "token":
                yield from (Finding("secret", *f) for f in provider_tokens(text, ws, we))
                yield from (Finding("secret", *f) for f in encoded_tokens(text, ws, we))
            if cfg.entropy and group == "entropy":
                for m in ENTROPY_TOKEN.finditer(text, ws, we):
                    if _secret_token(text, line_start, *m.span()):
                        yield Finding("secret", "High Entropy String", *m.span())
            if group == "ctx":
                yield from (Finding("secret", *f) for f in context_secrets(text, ws, we))
            if group == "at" and text.find("://", ws, we) >= 0:
                yield from (Finding("secret", *f) for f in url_passwords(text, ws, we))
            if group == "pem":
                yield from self._private_keys(text)
        if cfg.home_paths and group == "home":
            yield from (Finding("pii", "home_user", s, e) for s, e in home_user_spans(text))
        if cfg.emails and group == "at" and EMAIL_SHAPE.search(text, ws, we):
            for m in EMAIL.finditer(text, ws, we):
                local, domain = m.group().lower().rsplit("@", 1)
                if not (any(domain == d or domain.endswith("." + d) for d in cfg.email_allow_domains)
                        or fixture_email(local, domain) or _in_userinfo(text, m.start())):
                    yield Finding("pii", "email", *m.span())
        if cfg.ips and group == "ip4":
            for m in IPV4.finditer(text, ws, we):
                if _ip_is_public(m.group()) and _ipv4_says_address(text, line_start, *m.span()):
                    yield Finding("pii", "ip_address", *m.span())
        if cfg.ips and group == "ip6":
            for m in IPV6.finditer(text, ws, we):
                if _ip_is_public(m.group()):
                    yield Finding("pii", "ip_address", *m.span())

    def _plugin_lines(self, text: str) -> Iterator[Finding]:
        offset = 0
        for line in text.splitlines(keepends=True):
            for plugin in self.line_plugins:
                for found in plugin.analyze_line(filename="", line=line, enable_eager_search=True):
                    value = found.secret_value or ""
                    pos = line.find(value) if len(value) >= 4 else -1
                    if pos >= 0:
                        yield Finding("secret", plugin.secret_type, offset + pos, offset + pos + len(value))
            offset += len(line)

    def find(self, text: str) -> list[Finding]:
        """Non-overlapping findings in ``text``, earliest first (longer span wins on overlap); a secret split over
        lines (:mod:`swemine.filters.secret_joins`) is found in each of its parts."""
        return self.find_many([text])[0]

    def find_many(self, texts: list[str]) -> list[list[Finding]]:
        """:meth:`find` of each of ``texts``, the prefilter's passes made once over all of them and the joined
        regions of their lines (texts shorter than ``MIN_TEXT`` are not scanned)."""
        scanned = [text for text in texts if len(text) >= MIN_TEXT]
        views = [(i, *joined(text, *region)) for i, text in enumerate(texts)
                 if self.cfg.secrets and "\n" in text and len(text) >= MIN_TEXT for region in join_regions(text)]
        windows = iter(self.windows([*scanned, *(view for _, view, _ in views)]) if scanned else ())
        out = [self._findings(text, next(windows)) if len(text) >= MIN_TEXT else [] for text in texts]
        split: dict[int, list[Finding]] = {}
        for i, view, pieces in views:                 # the findings crossing a break, mapped back to the lines
            for f in self._findings(view, next(windows), cut_off=False):
                spans = list(spans_back(pieces, len(view), f.start, f.end))
                if f.kind == "secret" and (len(spans) > 1 or f.start >= pieces[1][0]):   # crossing or after a break
                    split.setdefault(i, []).extend(Finding("secret", f.label, s, e) for s, e in spans)
        for i, found in split.items():
            out[i] = merged([*out[i], *found])
        return out

    def _findings(self, text: str, windows: dict[str, list[tuple[int, int, int]]],
                  cut_off: bool = True) -> list[Finding]:
        """Every detector's findings in ``text`` inside its group's ``windows``, and a token the text's end cuts off
        when ``cut_off`` (not for lines joined over their breaks: their end is not a field's)."""
        found: list[Finding] = []
        for group, spans in windows.items():
            for line_start, ws, we in spans:
                found.extend(self._window_findings(group, text, line_start, ws, we))
        if self.cfg.secrets and cut_off and (cut := truncated_token(text)):
            found.append(Finding("secret", *cut))
        if self.line_plugins:
            found.extend(self._plugin_lines(text))
        return merged(found) if len(found) > 1 else found

    @staticmethod
    def scrub(text: str, findings: list[Finding]) -> str:
        """``text`` with every finding replaced by its placeholder."""
        parts, last = [], 0
        for f in findings:
            parts.append(text[last:f.start])
            parts.append(f.placeholder)
            last = f.end
        parts.append(text[last:])
        return "".join(parts)


#: how the scrub walks a value of each type: "str", "map" (a mapping), "seq" (a list or tuple) or "" (left alone)
_KINDS: dict[type, str] = {str: "str", dict: "map", list: "seq", tuple: "seq", int: "", float: "", bool: "",
                           type(None): ""}


def _kind(value: Any) -> str:
    kind = _KINDS.get(type(value))
    if kind is None:
        kind = _KINDS[type(value)] = ("str" if isinstance(value, str) else "map" if isinstance(value, Mapping)
                                      else "seq" if isinstance(value, (list, tuple)) else "")
    return kind


def _strings(value: Any, out: dict[str, None], top: bool = False) -> dict[str, None]:
    """Every string inside ``value`` (at the top level, ids and hashes excepted), in the order met, into ``out``."""
    kind = _kind(value)
    if kind == "str":
        out[value] = None
    elif kind:
        for k, v in value.items() if kind == "map" else enumerate(value):
            if top and kind == "map" and k in ID_FIELDS:
                continue
            if type(v) is str:
                out[v] = None
            elif _kind(v):
                _strings(v, out)
    return out


def _scrub_value(value: Any, path: str, scanner: SecretScanner, evidence: list[dict],
                 seen: dict[str, list[Finding]]) -> Any:
    """``value`` with every string inside it scrubbed; findings appended to ``evidence``; ``seen`` holds the
    findings of the strings scanned so far (a record repeats many: roles, tool names, a task text)."""
    kind = _kind(value)
    if kind == "str":
        findings = seen.get(value)
        if findings is None:
            findings = seen[value] = scanner.find(value)
        if not findings:
            return value
        evidence.extend({"kind": f.kind, "label": f.label, "field": path, "offset": f.start,
                         "length": f.end - f.start, **({"copy": True} if f.copy else {})} for f in findings)
        return scanner.scrub(value, findings)
    if kind == "map":
        out, changed = {}, False
        for k, v in value.items():
            if (not path and k in ID_FIELDS) or not _kind(v) or type(v) is str and seen.get(v) == []:
                out[k] = v                            # an id, a number, a string known to be clean: no path to build
            else:
                out[k] = _scrub_value(v, f"{path}.{k}" if path else str(k), scanner, evidence, seen)
                changed = changed or out[k] is not v
        return out if changed else value
    if kind == "seq":
        items = [v if not _kind(v) or type(v) is str and seen.get(v) == [] else
                 _scrub_value(v, f"{path}[{i}]", scanner, evidence, seen) for i, v in enumerate(value)]
        return items if any(a is not b for a, b in zip(items, value)) else value
    return value


#: a secret this long found anywhere in a record is replaced wherever else in the record it occurs
MIN_COPY = 6
#: the labels of values found by what surrounds them (a name, a command, a sentence, an account's SID) or by their
#: line (the entropy detector's guards): a copy elsewhere may stand without it; a provider format's token, a private
#: key's block is found by its own shape wherever it is
COPIED_LABELS = frozenset({"Secret Assignment", "Command-line Secret", "HTTP Auth Header", "URL Password",
                           "Secret in Prose", "High Entropy String", "Truncated Token", "Twilio Auth Token"})
#: ... also cut off by a text's end or start, when this much of it is left
MIN_CUT = 12


def _escape_forms(value: str) -> set[str]:
    """``value``, its JSON-escaped form (a copy inside a JSON-string column such as ``tool_args_json``) and, when
    it was found escaped, its unescaped form."""
    forms = {value, json.dumps(value, ensure_ascii=False)[1:-1]}
    if "\\" in value:
        try:
            forms.add(json.loads(f'"{value}"'))
        except json.JSONDecodeError:
            pass
    return {f for f in forms if len(f) >= MIN_COPY}


def copied_secrets(seen: Mapping[str, list[Finding]]) -> Mapping[str, list[Finding]]:
    """``seen`` (each string's findings) with every copy of a secret value found in any of its strings added to
    every string holding it, escaped or not, whole or cut off (:func:`_copies`): a password the command-aware
    rules find in a step's action is also in its tool arguments without the command (``{"args": "-uroot -p<pw>"}``),
    JSON-escaped once more, printed where nothing names it, or cut off at the end of a reject's message. Only a
    record with a secret finding pays: a few C-speed finds over its strings joined; ``seen`` itself comes back when
    no string holds a copy it has not found already."""
    values: dict[str, str] = {}
    for text, findings in seen.items():
        for f in findings:
            if f.kind == "secret" and f.label in COPIED_LABELS and f.end - f.start >= MIN_COPY:
                for form in _escape_forms(text[f.start:f.end]):
                    values.setdefault(form, f.label)
    texts = list(seen)
    out, added = dict(seen), False
    for i, spans in _copies(texts, values).items():
        findings = seen[texts[i]]
        copies = [Finding("secret", label, start, end, copy=True) for start, end, label in spans
                  if not any(f.start <= start and end <= f.end for f in findings)]
        if copies:
            out[texts[i]], added = merged([*findings, *copies]), True
    return out if added else seen


def _copies(texts: list[str], values: dict[str, str]) -> dict[int, list[tuple[int, int, str]]]:
    """Per index of ``texts``, ``(start, end, label)`` of where it holds one of ``values`` (each with its label):
    whole, or cut off by the text's end or start (an excerpt, a message quoting the first characters of its input)
    when :data:`MIN_CUT` characters of it remain. The texts are searched joined by NULs (a value holding none)."""
    out: dict[int, list[tuple[int, int, str]]] = {}
    if not values:
        return out
    data = "\0".join(texts)
    starts, pos = [], 0
    for text in texts:
        starts.append(pos)
        pos += len(text) + 1
    heads: dict[str, list[tuple[str, int]]] = {}
    for value, label in values.items():
        if "\0" in value:
            continue
        start = value[:MIN_CUT]                       # whole copies, and texts ending in the value's start
        pos = data.find(start)
        while pos >= 0:
            i = bisect_right(starts, pos) - 1
            at, end = pos - starts[i], len(texts[i])
            if data.startswith(value, pos):
                out.setdefault(i, []).append((at, at + len(value), label))
                pos = data.find(start, pos + len(value))
                continue
            if len(value) > MIN_CUT and end - at < len(value) and value.startswith(texts[i][at:]):
                out.setdefault(i, []).append((at, end, label))
            pos = data.find(start, pos + 1)
        if len(value) <= MIN_CUT:
            continue
        for j in range(1, len(value) - MIN_CUT + 1):  # a text starting with the value's end: by its first characters
            heads.setdefault(value[j:j + MIN_CUT], []).append((value, j))
    if heads:
        for i, text in enumerate(texts):
            for value, j in heads.get(text[:MIN_CUT], ()):
                if text.startswith(value[j:]):
                    out.setdefault(i, []).append((0, len(value) - j, values[value]))
    return out


def _scrub(value: Any, scanner: SecretScanner, evidence: list[dict]) -> Any:
    """``value`` scrubbed (:func:`_scrub_value`), every string inside it scanned together first, with the copies of
    its secrets (:func:`copied_secrets`); ``value`` itself when nothing was found."""
    texts = list(_strings(value, {}, top=True))
    seen = dict(zip(texts, scanner.find_many(texts)))
    if not any(seen.values()):
        return value
    return _scrub_value(value, "", scanner, evidence, copied_secrets(seen))


def scrub_record(record: dict, scanner: SecretScanner, spec: FieldSpec | None = None
                 ) -> tuple[dict, list[dict[str, Any]]]:
    """``(scrubbed record, findings as evidence)`` over every string field but ids and hashes (``spec`` is
    accepted for symmetry with the other filters: secrets are looked for everywhere); a secret found in one field
    is replaced wherever the record holds it (:func:`copied_secrets`, evidence ``copy``). The evidence holds kind,
    label, field and offsets only."""
    evidence: list[dict[str, Any]] = []
    return _scrub(record, scanner, evidence), evidence


def scrub_row(row: Mapping[str, Any], scanner: SecretScanner) -> dict:
    """Any row (a reject, a filtered record) with secrets replaced in every string field but ids and hashes."""
    return dict(_scrub(row, scanner, []))


def _with_counts(record: dict, counts: Mapping[str, int]) -> dict:
    if "extra_json" not in record:
        return record
    try:
        extra = json.loads(record.get("extra_json") or "{}")
    except json.JSONDecodeError:
        extra = {"unparsed_extra_json": record.get("extra_json")}
    extra["scrubbed"] = dict(sorted(counts.items()))
    return {**record, "extra_json": json.dumps(extra, sort_keys=True, ensure_ascii=False, default=str)}


def secrets_stage_fn(record_type: str, cfg: SecretsConfig | None = None, spec: FieldSpec | None = None):
    """Stage function: scrub in place (counts in ``extra_json.scrubbed``) or drop with reason ``secret``/``pii``."""
    cfg = cfg or SecretsConfig()
    scanner = SecretScanner(cfg)

    def judge(record: dict) -> Verdict:
        scrubbed, evidence = scrub_record(record, scanner, spec)
        if not evidence:
            return Verdict(record)
        counts: dict[str, int] = {}
        for e in evidence:
            counts[e["label"]] = counts.get(e["label"], 0) + 1
        if cfg.mode == "drop":
            reason = "secret" if any(e["kind"] == "secret" for e in evidence) else "pii"
            return Verdict(scrubbed, reason, {"rule": reason, "counts": counts, "findings": evidence[:20]})
        return Verdict(_with_counts(scrubbed, counts))

    return filter_stage(STAGE, record_type, judge)
