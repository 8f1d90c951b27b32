"""Secrets and PII scrubbing: detect-secrets' detectors plus e-mail addresses and public IP addresses.

Secrets are found with detect-secrets' maintained plugins. Its regex plugins are run directly over whole texts
(their ``denylist`` patterns, full match spans — fast, and exact spans to replace); the opt-in line-based
plugins (high-entropy strings, keyword assignments: noisy on code, see bigcode-analysis PR #24) go through
``scan_line``. A private-key header extends to its ``END`` line. E-mails and IPv4/IPv6 addresses are found
here; private, loopback, link-local, reserved and documentation addresses and allow-listed e-mail domains are
left alone.

``mode="scrub"`` replaces each finding with a placeholder (``<SECRET:AWS Access Key>``, ``<EMAIL>``,
``<IP_ADDRESS>``) and records the counts in ``extra_json.scrubbed``; ``mode="drop"`` returns a ``Filtered``
(reason ``secret`` or ``pii``) whose stored record is the *scrubbed* one. Evidence names the kind, field and
offset, never the value; nothing here logs a value.
"""
from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from swemine.filters.fields import FieldSpec, iter_texts, set_path, spec_for
from swemine.filters.verdict import Verdict, filter_stage

STAGE = "secrets"
#: Line-based detect-secrets plugins: off by default (false positives on code: hashes, SHAs, test passwords).
NOISY_PLUGINS = ("Base64HighEntropyString", "HexHighEntropyString", "KeywordDetector", "IPPublicDetector")
EMAIL = re.compile(r"(?<![\w.+-])[A-Za-z0-9._%+-]{1,64}@(?:[A-Za-z0-9-]{1,63}\.)+[A-Za-z]{2,24}(?![\w-])")
IPV4 = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w.])")
IPV6 = re.compile(r"(?<![\w:.])(?:[0-9A-Fa-f]{1,4}:){2,7}[0-9A-Fa-f]{1,4}(?![\w:])")
PEM_END = re.compile(r"-----END [A-Z ]*PRIVATE KEY[A-Z ]*-----")
DEFAULT_EMAIL_ALLOW = ("example.com", "example.org", "example.net", "localhost", "users.noreply.github.com")


@dataclass(frozen=True)
class SecretsConfig:
    """What to look for and what to do about it."""
    mode: str = "scrub"                        # scrub | drop
    secrets: bool = True
    emails: bool = True
    ips: bool = True
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

    @property
    def placeholder(self) -> str:
        if self.kind == "secret":
            return f"<SECRET:{self.label}>"
        return "<EMAIL>" if self.label == "email" else "<IP_ADDRESS>"


def _ip_is_public(text: str) -> bool:
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        return False
    doc_nets = [ipaddress.ip_network(n) for n in ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24",
                                                   "2001:db8::/32")]
    if any(ip in n for n in doc_nets if n.version == ip.version):
        return False
    return ip.is_global


class SecretScanner:
    """Finds secrets and PII spans in text; build once per worker (plugins are loaded here)."""

    def __init__(self, cfg: SecretsConfig | None = None):
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
        from detect_secrets.plugins.base import RegexBasedDetector

        self.cfg = cfg or SecretsConfig()
        self.regex_plugins: list[tuple[str, list[re.Pattern]]] = []
        self.line_plugins: list[Any] = []
        for secret_type, cls in sorted(get_mapping_from_secret_type_to_class().items()):
            name = cls.__name__
            if name in NOISY_PLUGINS:
                if name in self.cfg.extra_plugins:
                    self.line_plugins.append(cls())
            elif issubclass(cls, RegexBasedDetector):
                self.regex_plugins.append((secret_type, list(cls().denylist)))

    def _secret_spans(self, text: str) -> Iterator[Finding]:
        for label, patterns in self.regex_plugins:
            for pat in patterns:
                for m in pat.finditer(text):
                    start, end = m.span()
                    if label == "Private Key":
                        start = start - 5 if text[max(0, start - 5):start] == "-----" else start
                        tail = PEM_END.search(text, end)
                        end = tail.end() if tail else end
                    if end > start:
                        yield Finding("secret", label, start, end)
        if self.line_plugins:
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
        """Non-overlapping findings in ``text``, earliest first (longer span wins on overlap)."""
        cfg = self.cfg
        found: list[Finding] = []
        if cfg.secrets:
            found.extend(self._secret_spans(text))
        if cfg.emails and "@" in text:
            for m in EMAIL.finditer(text):
                domain = m.group().rsplit("@", 1)[1].lower()
                if not any(domain == d or domain.endswith("." + d) for d in cfg.email_allow_domains):
                    found.append(Finding("pii", "email", *m.span()))
        if cfg.ips:
            for pat in (IPV4, IPV6):
                for m in pat.finditer(text):
                    if _ip_is_public(m.group()):
                        found.append(Finding("pii", "ip_address", *m.span()))
        found.sort(key=lambda f: (f.start, -(f.end - f.start), f.label))
        out: list[Finding] = []
        for f in found:
            if not out or f.start >= out[-1].end:
                out.append(f)
        return out

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


def _with_counts(record: dict, counts: Mapping[str, int]) -> dict:
    if "extra_json" not in record:
        return record
    try:
        extra = json.loads(record.get("extra_json") or "{}")
    except json.JSONDecodeError:
        extra = {"unparsed_extra_json": record.get("extra_json")}
    extra["scrubbed"] = dict(sorted(counts.items()))
    return {**record, "extra_json": json.dumps(extra, sort_keys=True, ensure_ascii=False, default=str)}


def scrub_record(record: dict, scanner: SecretScanner, spec: FieldSpec) -> tuple[dict, list[dict[str, Any]]]:
    """``(scrubbed record, findings as evidence)``; the evidence holds kind, label, field and offsets only."""
    out = record
    evidence: list[dict[str, Any]] = []
    for path, text in iter_texts(record, spec):
        findings = scanner.find(text)
        if not findings:
            continue
        out = set_path(out, path, scanner.scrub(text, findings))
        evidence.extend({"kind": f.kind, "label": f.label, "field": path, "offset": f.start,
                         "length": f.end - f.start} for f in findings)
    return out, evidence


def secrets_stage_fn(record_type: str, cfg: SecretsConfig | None = None, spec: FieldSpec | None = None):
    """Stage function: scrub in place (counts in ``extra_json.scrubbed``) or drop with reason ``secret``/``pii``."""
    cfg = cfg or SecretsConfig()
    spec = spec or spec_for(record_type)
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
