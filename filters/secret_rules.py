"""Credential rules beyond detect-secrets' plugins: provider token formats and secrets found by their context.

*Provider formats* (:data:`PROVIDERS`) are documented prefixes and shapes (``sk-ant-api03-…``, ``hf_…``,
``github_pat_…``, ``glpat-…``, ``gsk_…``, ``AIza…``, ``npm_…``, ``pypi-AgE…``, ``dckr_pat_…``, JWTs, ...).
Every one of them is a long token, so :mod:`swemine.filters.secrets` runs them only inside the windows its
token prefilter marks; the random part must change character class (lower / upper / digit) often enough to be
random (``sk-xxxxxxxx…`` placeholders are not keys).

*Context rules* (:data:`CONTEXT_RULES`) find a value without a shape by what surrounds it: assigned to a
secret-named variable (``export GH_TOKEN=…``, ``.env``, YAML, JSON, TOML, Python, ``Password=…;`` in a
connection string), after a secret-named flag (``--password``, ``--api-key``), ``mysql -p<pw>``, ``curl -u
user:pass``, ``docker login -p``, ``Authorization`` / ``Cookie`` headers, a URL's userinfo (any characters,
up to the last ``@`` before the host), a SAS ``sig=``, a ``.netrc`` password line, ``wandb login``, ``ngrok
authtoken``. They run only on the parts of a line around a literal keyword (:data:`CONTEXT_ANCHORS`), and a
value counts only if :func:`plausible_value`: placeholders (``<your-key>``, ``${VAR}``, ``xxxx``, ``***``),
fixtures (``password=test``, ``secret123``), code (``args.token``, ``get_token()``), words, numbers, versions,
UUIDs and paths are left alone, as are names of hashes, files, pagination and tokenizer tokens
(``password_sha256``, ``token_file``, ``next_token``, ``pad_token``).
"""
from __future__ import annotations

import base64
import functools
import re
from collections.abc import Iterator

from swemine.filters.secret_values import (
    fixture,
    looks_random,
    passphrase,
    placeholder,
    plausible_value,
    random_enough,
    random_looking,
    strong,
)

_B = r"(?:(?<=\\[ntr])|(?<![A-Za-z0-9_]))"          # start: after a JSON escape or a non-word character
_E = r"(?![A-Za-z0-9_])"
_E_DASH = r"(?![A-Za-z0-9_-])"

#: what an AWS access key id opens with (one case, few digits: the prefilter finds them by these, not as token runs)
AWS_KEY_ID_PREFIXES = ("AKIA", "ASIA", "ABIA", "ACCA", "A3T")
#: (label, literals one of which its match holds, pattern): a window holding none of the literals skips the pattern (a
#: substring search is far cheaper than a regex search); group ``r…`` (``a…``) is the random part that must look random
PROVIDERS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("Anthropic API Key", ("sk-",), r"sk-ant-(?:api|admin|sid|oat)\d{2}-(?P<r1>[A-Za-z0-9_-]{40,200})" + _E_DASH),
    ("OpenRouter API Key", ("sk-",), r"sk-or-v\d-(?P<r2>[0-9a-f]{48,80})" + _E),
    ("OpenAI API Key", ("sk-",),
     r"sk-(?:proj|svcacct|admin|None)-(?P<r3>[A-Za-z0-9_-]{30,250})" + _E_DASH),
    ("OpenAI API Key", ("sk-",), r"sk-(?P<r4>[A-Za-z0-9]{20,}T3BlbkFJ[A-Za-z0-9]{20,}|[A-Za-z0-9]{40,64})" + _E_DASH),
    ("DeepSeek API Key", ("sk-",), r"sk-(?P<r5>[0-9a-f]{32})" + _E_DASH),
    ("Hugging Face Token", ("hf_", "api_org_"), r"(?:hf_|api_org_)(?P<r6>[A-Za-z0-9]{30,40})" + _E),
    ("GitHub Token", ("gh", "github_pat_"),
     r"(?:gh[pousr]_(?P<r7>[A-Za-z0-9]{36,251})|github_pat_(?P<r8>[A-Za-z0-9_]{50,250}))" + _E),
    ("GitLab Token", ("gl", "GR1348941"),
     r"(?:gl(?:pat|dt|rt|ptt|oas|cbt|imt|agent|soat|ffct|ft|rtr)-|GR1348941)(?P<r9>[A-Za-z0-9_.-]{20,80})" + _E_DASH),
    ("Atlassian Token", ("ATBB", "ATATT", "ATCTT"),
     r"(?:ATBB(?P<r10>[A-Za-z0-9_=.-]{28,})|AT[AC]TT(?P<r11>[A-Za-z0-9_=+/.-]{40,}))" + _E),
    ("Slack Token", ("xox", "xapp-"),
     r"(?:xox[abposre](?:\.xox[abposre])?-(?P<r12>[A-Za-z0-9-]{10,250})|xapp-\d-(?P<r13>[A-Za-z0-9-]{20,250}))" + _E),
    ("Discord Webhook", ("/api/webhooks/",),
     r"discord(?:app)?\.com/api/webhooks/\d{15,21}/(?P<r14>[A-Za-z0-9_-]{60,80})"),
    ("Discord Bot Token", (".",),
     r"[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.(?P<r15>[A-Za-z0-9_-]{27,40})" + _E_DASH),
    ("Telegram Bot Token", (":AA",), r"(?:(?<=/bot)|(?<![\w\\]))\d{8,10}:AA(?P<r16>[A-Za-z0-9_-]{33})" + _E_DASH),
    ("Stripe Key", ("k_live_", "k_test_"), r"(?:sk|rk|pk)_(?:live|test)_(?P<r17>[A-Za-z0-9]{20,247})" + _E),
    ("Stripe Key", ("whsec_",), r"whsec_(?P<r18>[A-Za-z0-9]{32,})" + _E),
    ("Google API Key", ("AIza",), r"AIza(?P<r19>[A-Za-z0-9_-]{35})" + _E_DASH),
    ("Google OAuth Secret", ("GOCSPX-",), r"GOCSPX-(?P<r20>[A-Za-z0-9_-]{28})" + _E_DASH),
    ("Google OAuth Token", ("ya29.", "1//0"),
     r"(?:ya29\.(?P<r21>[A-Za-z0-9_-]{30,})|1//0(?P<r22>[A-Za-z0-9_-]{40,}))" + _E_DASH),
    ("AWS Access Key", AWS_KEY_ID_PREFIXES,
     r"(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])(?P<a23>[A-Z2-7]{16})" + _E),
    ("AWS Session Token", ("IQoJb3JpZ2luX2Vj", "FwoGZXIvYXdzE"),
     r"(?:IQoJb3JpZ2luX2Vj|FwoGZXIvYXdzE)(?P<r24>[A-Za-z0-9+/]{80,})={0,2}"),
    ("Azure Storage Key", ("==",), r"(?<![A-Za-z0-9+/])(?P<r25>[A-Za-z0-9+/]{86}==)(?![A-Za-z0-9+/=])"),
    ("Azure Client Secret", ("Q~",), r"[A-Za-z0-9_~.-]{3}\dQ~(?P<r26>[A-Za-z0-9_~.-]{31,34})" + _E_DASH),
    ("npm Token", ("npm_",), r"npm_(?P<r27>[A-Za-z0-9]{36})" + _E),
    ("PyPI Token", ("pypi-AgE",), r"pypi-AgE[A-Za-z0-9_-]{10,}(?P<r28>[A-Za-z0-9_-]{40,})" + _E_DASH),
    ("Docker Hub Token", ("dckr_",), r"dckr_(?:pat|oat)_(?P<r29>[A-Za-z0-9_-]{20,})" + _E_DASH),
    ("Groq API Key", ("gsk_",), r"gsk_(?P<r30>[A-Za-z0-9]{48,})" + _E),
    ("Replicate Token", ("r8_",), r"r8_(?P<r31>[A-Za-z0-9]{30,})" + _E),
    ("Together API Key", ("tgp_v",), r"tgp_v\d_(?P<r32>[A-Za-z0-9_-]{30,})" + _E_DASH),
    ("Perplexity API Key", ("pplx-",), r"pplx-(?P<r33>[A-Za-z0-9]{40,})" + _E),
    ("xAI API Key", ("xai-",), r"xai-(?P<r34>[A-Za-z0-9]{60,})" + _E),
    ("Fireworks API Key", ("fw_",), r"fw_(?P<r35>[A-Za-z0-9]{20,})" + _E),
    ("ngrok Token", ("_",), r"(?<![A-Za-z0-9_])[1-3](?P<r36>[A-Za-z0-9]{25,27}_[A-Za-z0-9]{20,23})" + _E),
    ("SendGrid Key", ("SG.",), r"SG\.[A-Za-z0-9_-]{22}\.(?P<r38>[A-Za-z0-9_-]{43})" + _E_DASH),
    ("Mailgun Key", ("key-",), r"key-(?P<r39>[0-9a-f]{32})" + _E),
    ("Sentry Token", ("sntry",),
     r"(?:sntrys_(?P<r40>[A-Za-z0-9+/=_-]{50,})|sntryu_(?P<r41>[0-9a-f]{64}))" + _E_DASH),
    ("Sentry DSN", ("@",), r"https?://(?P<r42>[0-9a-f]{32})(?::[0-9a-f]{32})?@"),
    ("JSON Web Token", ("eyJ",),
     r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.(?P<r43>[A-Za-z0-9_-]{16,})" + _E_DASH),
    ("W&B API Key", ("wandb_v",), r"wandb_v\d_(?P<r44>[A-Za-z0-9_]{60,120})" + _E),
    ("Django Secret Key", ("django-insecure-",),
     r"django-insecure-(?P<r45>[a-z0-9!@#$%^&*(\-_=+)]{40,60})(?![\w!@#$%^&*(\-=+)])"),
    # found from its literal ``-`` (a regex opening with a character class tries every position): the 32 hex digits
    # before it are checked looking back
    ("Mailgun Key", ("-",),
     r"-[0-9a-f]{8}-[0-9a-f]{8}(?<=(?:(?<=\\[ntr])|(?<![\w-]))(?P<r46>[0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8}))" + _E_DASH),
    ("LangSmith API Key", ("lsv2_",), r"lsv2_(?:pt|sk)_(?P<r47>[0-9a-f]{32})_[0-9a-f]{10}" + _E),
    ("ElevenLabs API Key", ("sk_",), r"sk_(?P<r48>[0-9a-f]{48})" + _E),
    ("Cerebras API Key", ("csk-",), r"csk-(?P<r49>[A-Za-z0-9]{40,64})" + _E_DASH),
    ("Pinecone API Key", ("pcsk_",), r"pcsk_(?P<r50>[A-Za-z0-9]{4,8}_[A-Za-z0-9]{40,90})" + _E),
    ("Linear API Key", ("lin_",), r"lin_(?:api|oauth)_(?P<r51>[A-Za-z0-9]{40,64})" + _E),
    ("DigitalOcean Token", ("_v1_",), r"do[opr]_v1_(?P<r52>[0-9a-f]{64})" + _E),
    ("Databricks Token", ("dapi",), r"dapi(?P<r53>[0-9a-f]{32})(?:-\d)?" + _E),
    ("Shopify Token", ("shp",), r"shp(?:at|ss|ca|pa)_(?P<r54>[0-9a-fA-F]{32})" + _E),
    ("Postman API Key", ("PMAK-",), r"PMAK-(?P<r55>[0-9a-f]{24}-[0-9a-f]{34})" + _E),
    ("Tavily API Key", ("tvly-",), r"tvly-(?:dev-|prod-)?(?P<r56>[A-Za-z0-9]{32,48})" + _E),
    ("Supabase Key", ("sbp_", "sb_secret_"),
     r"(?:sbp_(?:[a-z]{2}_)?(?P<r57>[0-9a-f]{40})|sb_secret_(?P<r58>[A-Za-z0-9_-]{20,80}))" + _E_DASH),
    ("Notion Token", ("secret_", "ntn_"), r"(?:secret_(?P<r59>[A-Za-z0-9]{43})|ntn_(?P<r60>[0-9]{11}[A-Za-z0-9]{35}))" + _E),
    ("age Secret Key", ("AGE-SECRET-KEY-1",), r"AGE-SECRET-KEY-1(?P<a61>[02-9AC-HJ-NP-Z]{58})" + _E),
    # a Twilio auth token passed after its account's SID (``Client("AC…", "<32 hex>")``)
    ("Twilio Auth Token", ("AC",), r"AC[0-9a-f]{32}\\?[\"']?\s*,\s*\\?[\"']?(?P<r63>[0-9a-f]{32})" + _E),
    # a private key or a credential file in base64 (a kubeconfig's ``client-key-data``, a Secret's ``data:``, a
    # service-account JSON in a ``_B64`` variable): decoded, its start says so (:func:`_encoded_credential`)
    ("Private Key", ("LS0tLS1CRUdJTi", "eyJ", "ewo"),
     r"(?P<e62>(?:LS0tLS1CRUdJTi|eyJ|ewo)[A-Za-z0-9+/]{100,}={0,2})(?![\w+/=-])"),
)
#: a label before a token that says it is a digest, not a key (``integrity="sha512-…"``, go.sum's ``h1:…``)
DIGEST_LABEL = r"(?:verif[\w-]*|integrity|checksum|digest|sha\d*|hash|\bh1)\W{0,12}"
_DIGEST_BEFORE = re.compile(rf"(?i){DIGEST_LABEL}$")
#: provider formats whose match holds more than the secret (a DSN's host, an account's SID): their random part only
_PART_ONLY = frozenset({"Sentry DSN", "Twilio Auth Token"})
#: provider formats without a literal of their own, which a digest's label before them rules out
_SHAPELESS = frozenset({"Azure Storage Key"})
#: the prefixes of the formats above that a run of token characters opens with: such a run is a token window even when
#: its random part happens to change case and digits rarely (``glpat-`` and 20 characters)
PREFIXED_RUN = re.compile(
    rb"sk[-_]|[rp]k_|whsec_|hf_|api_org_|gh[pousr]_|github_pat_|gl[a-z]{1,6}-|GR1348941|xox|xapp-|AIza|GOCSPX-|npm_|"
    rb"pypi-AgE|dckr_|gsk_|r8_|tgp_v|pplx-|xai-|fw_|sntry|ATBB|AT[AC]TT|wandb_v|lsv2_|csk-|pcsk_|lin_|do[opr]_v1_|"
    rb"dapi|shp[a-z]{2}_|PMAK-|tvly-|sbp_|sb_secret_|secret_|ntn_|AGE-SECRET-KEY-|django-insecure-")
#: (label, literals, pattern, names of its random-part groups, whether it checks its own start); each pattern is
#: searched alone (one alternation of them all is many times slower: it defeats the regex engine's literal-prefix
#: scan), its start checked by :func:`_starts_word`
PROVIDER_RES = tuple((label, literals, re.compile(pat), tuple(re.compile(pat).groupindex),
                      pat.startswith(("(?<", "(?:(?<"))) for label, literals, pat in PROVIDERS)
#: each format's literals (one set test over them all: one loop a format is slower)
_PROVIDER_GATES = tuple((literal, i) for i, provider in enumerate(PROVIDER_RES) for literal in provider[1])


def _starts_word(text: str, pos: int) -> bool:
    """Whether a token may start at ``pos``: after a non-word character, a JSON escape (``\\n``) or the start."""
    return pos == 0 or not (text[pos - 1].isalnum() or text[pos - 1] == "_") or (
        pos >= 2 and text[pos - 2] == "\\" and text[pos - 1] in "ntr")


#: a provider prefix and the start of its token cut off by the end of the text (an excerpt, a message); a long
#: run mixing cases and digits that ends the text counts too (:func:`truncated_token`)
TRUNCATED = re.compile(
    r"(?:(?:(?<=/bot)\d{8,10}:AA|" + _B + r"(?:sk-(?:ant-\w+-|or-v\d-|proj-|svcacct-|admin-)?|hf_|api_org_|gh[pousr]_|github_pat_|"
    r"gl(?:pat|dt|rt|ptt|oas)-|xox[abposre]-|xapp-|[sr]k_(?:live|test)_|whsec_|AIza|GOCSPX-|ya29\.|npm_|pypi-AgE|"
    r"dckr_(?:pat|oat)_|gsk_|r8_|tgp_v\d_|pplx-|xai-|fw_|SG\.|sntry[su]_|ATBB|AT[AC]TT|eyJ|\d{8,10}:AA|"
    r"wandb_v\d_|lsv2_(?:pt|sk)_|csk-|pcsk_|lin_api_|do[opr]_v1_|dapi|shp(?:at|ss|ca|pa)_|PMAK-|tvly-|sbp_|"
    r"sb_secret_|ntn_|AGE-SECRET-KEY-1|"
    r"https?://(?=[0-9a-f]{12,32}\Z)|discord(?:app)?\.com/api/webhooks/\d+/|hooks\.slack\.com/services/\w+/\w+/))(?P<r>[A-Za-z0-9_.+/-]{8,}={0,2})|"
    + _B + r"django-insecure-(?P<d>[a-z0-9!@#$%^&*(\-_=+)]{8,}))\Z")


def provider_tokens(text: str, ws: int, we: int) -> Iterator[tuple[str, int, int]]:
    """``(label, start, end)`` of provider-format tokens in ``text[ws:we]`` whose random part looks random (a
    Sentry DSN's key, a Twilio auth token: without what surrounds them)."""
    window = text[ws:we]
    for i in sorted({i for literal, i in _PROVIDER_GATES if literal in window}):
        label, literals, pattern, groups, own_start = PROVIDER_RES[i]
        pos = ws
        while (m := pattern.search(text, pos, we)) is not None:
            pos = m.end() if m.end() > m.start() else m.start() + 1
            name = next(g for g in groups if m.group(g) is not None)
            if not (own_start or _starts_word(text, min(m.start(), m.start(name)))):
                pos = m.start() + 1
                continue
            if label in _SHAPELESS and _DIGEST_BEFORE.search(text, max(ws, m.start() - 40), m.start()):
                continue
            if name.startswith("e"):
                if _encoded_credential(m.group(name)):
                    yield label, *m.span(name)
            elif random_enough(m.group(name), name):
                yield (label, *m.span(name)) if label in _PART_ONLY else (label, min(m.start(), m.start(name)), m.end())


#: a base64 value short enough to be one token, and what a provider's token opens with (:data:`PREFIXED_RUN`, the AWS
#: key ids' prefixes)
_BASE64_VALUE = re.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/]{20,400}={0,2}(?![A-Za-z0-9+/=_-])")
_TOKEN_START = re.compile(PREFIXED_RUN.pattern + b"".join(b"|" + p.encode() for p in AWS_KEY_ID_PREFIXES))


def encoded_tokens(text: str, ws: int, we: int) -> Iterator[tuple[str, int, int]]:
    """``(label, start, end)`` of base64 values in ``text[ws:we]`` that decode to a provider's token and nothing else
    (a Kubernetes Secret's ``data:``, a ``_B64`` variable), labelled as that token."""
    for m in _BASE64_VALUE.finditer(text, ws, we):
        value = m.group()
        try:
            decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
        except ValueError:
            continue
        if not _TOKEN_START.match(decoded):
            continue
        token = decoded.decode("ascii", "replace").rstrip("\r\n ")
        found = next(provider_tokens(token, 0, len(token)), None)
        if found is not None and found[1] == 0 and found[2] == len(token):
            yield found[0], *m.span()


#: what the start of a base64 credential file holds once decoded: a private key's PEM header, a JSON credential
_DECODED_CREDENTIAL = re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY|\"(?:private_key|client_secret|refresh_token)\"")


def _encoded_credential(run: str) -> bool:
    """Whether base64 ``run`` encodes a private key or a credential JSON (its first 600 characters decoded)."""
    head = run[:600]
    try:
        decoded = base64.b64decode(head[:len(head) // 4 * 4]).decode("utf-8", "replace")
    except ValueError:
        return False
    return _DECODED_CREDENTIAL.search(decoded) is not None


_TOKEN_CHAR_STR = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.+/=-"
_TOKEN_CHARS = frozenset(_TOKEN_CHAR_STR)


_SEPARATORS = re.compile(r"[_.+/=-]+")
_WORD = re.compile(r"[A-Z]?[a-z]*\d*|[A-Z]+\d*|[0-9a-f]+")     # a word, an acronym, a number, a hex id


def _joined_words(value: str) -> bool:
    """Four or more words, numbers and hex ids joined by separators (``gpt4__SWE-bench_Lite__t-0.00``), or a file's
    path: a name, not a random token (whose parts mix cases and digits anywhere and end in no file extension)."""
    parts = _SEPARATORS.split(value)
    return len(parts) > 3 and all(_WORD.fullmatch(part) for part in parts) or _FILE_PATH.search(value) is not None


_FILE_PATH = re.compile(r"/[^/]+/[^/]*\.[a-z][a-z0-9]{0,4}$")   # folders, then a file name with its extension
_FILE_END = re.compile(r"\.[a-z][a-z0-9]{0,4}$")                # a file name's extension
_DIGIT = re.compile(r"[0-9]")                                   # token characters are ASCII


def truncated_token(text: str) -> tuple[str, int, int] | None:
    """``(label, start, end)`` of a token cut off by the end of ``text`` (an excerpt, a message quoting its
    input), or None; only texts ending with token characters are searched (the run of them that ends the text,
    however long)."""
    if len(text) < 8 or text[-1] not in _TOKEN_CHARS:
        return None
    n = 400
    while True:                                               # the token characters that end the text, all of them
        tail = text[-n:]
        run = len(tail) - len(tail.rstrip(_TOKEN_CHAR_STR))
        if run < len(tail) or n >= len(text):
            break
        n *= 8
    if run < 8 or not (run >= 24 or _DIGIT.search(tail, len(tail) - run)):
        return None
    since = max(0, len(text) - run - 40)
    tail = TRUNCATED.search(text, since)
    start = len(text) - run                                   # the run's start (it may reach before the tail)
    while start > since and text[start - 1] in _TOKEN_CHARS:
        start -= 1
    value = text[start:]
    if _DIGEST_BEFORE.search(text, max(0, start - 40), start):
        return None                                           # go.sum's ``h1:…=``, an ``integrity`` hash
    if "=" in value.rstrip("="):                              # ``NAME=value``: the value alone
        start += value.rstrip("=").rindex("=") + 1
        value = text[start:]
    # a path (a session's working folder), or a file's name after a folder's separator (``\\_logs\\x-debug-0.log``)
    path = value[:1] in "/~." and "/" in value[:2] or text[start - 1:start] in ("\\", "/") and _FILE_END.search(value)
    if len(value) >= 24 and value != value.upper() and value != value.lower() and _DIGIT.search(value) \
            and not (tail and tail.start() <= start) and not path and not _joined_words(value):
        # the run mixing cases and digits, unless a prefix leads, it is a path or words joined by separators
        return ("Truncated Token", start, len(text)) if random_enough(value) else None
    if tail and random_enough(tail.group("r") or tail.group("d")):
        return "Truncated Token", tail.start(), tail.end()
    return None


# -- context rules -----------------------------------------------------------------------------------------------

_HTPASSWD_FLAGS = r"\s(?=(?:-[a-zA-Z]+\s+)*-[a-zA-Z]*b)(?=-)"     # flags, one of them ``-b``, follow
#: tools taking a password as a flag's value or a positional argument: (tool, what comes between the tool and the
#: value, the literals a window must hold); the tool's name is matched in any case, the flag as written (``sqlcmd
#: -P``, not ``-p``)
PASSWORD_TOOLS: tuple[tuple[str, str, str], ...] = (
    ("twine", r"\s(?:-p|--password)[\s=]+", "twine"),
    ("sshpass", r"\s-p\s*", "sshpass"),
    ("redis-cli", r"\s(?:-a|--pass)\s+", "redis-cli"),
    ("ldap(?:search|add|modify|delete|whoami|passwd|compare|modrdn|exop|url)?", r"\s-w\s*", "ldap"),
    ("smbclient|rpcclient|smbmap|smbget|smbcacls", r"\s(?:-U|--user(?:name)?)[\s=]+[^\s%\"']*%", "smb"),
    ("openssl", r"\s(?:-k\s+|-pass(?:in|out)?\s+pass:)", "openssl"),
    # ``-b`` takes the password on the line: after the user (``-n``: printed) or the file and the user
    ("htpasswd", _HTPASSWD_FLAGS + r"(?=[a-zA-Z -]*n)[a-zA-Z -]*\s(?:\d+\s+)?(?:\"\"|''|\S+)\s+", "htpasswd"),
    ("htpasswd", _HTPASSWD_FLAGS + r"(?![a-zA-Z -]*n)[a-zA-Z -]*\s(?:\d+\s+)?\S+\s+\S+\s+", "htpasswd"),
    ("sqlcmd", r"\s-P\s*", "sqlcmd"),
    ("rabbitmqctl", r"\s(?:add_user|change_password|authenticate_user)\s+\S+\s+", "rabbitmqctl"),
    ("mongo(?:sh|dump|restore|export|import|stat|top)?", r"\s-p\s+", "mongo"),
    (r"az\s+login", r"\s-p\s+", "az login"),
    ("ssh-keygen", r"\s-[NP]\s+", "ssh-keygen"),
)
#: the password-taking tools' names the prefilter marks (as written at a command's start; ``htpasswd`` is marked by
#: its ``pass``)
TOOL_MARKS = (b"twine upload", b"sshpass", b"redis-cli", b"ldap", b"smb", b"openssl", b"sqlcmd", b"rabbitmqctl",
              b"mongo", b"ssh-keygen")
#: the key words an assignment's name ends with (lower case): each stem (what :data:`CONTEXT_ANCHORS` and
#: :func:`_at_stems` look for) with what may follow it in the word
_KEY_WORDS = {"pass": r"(?:word|wd|phrase)?s?", "pwd": "", "secret": "", "token": "", "cred": r"(?:ential)?s?",
              "key": "", "auth": r"(?:orization|[_-]?header)?", "access": "", "pat": "", "bearer": "", "salt": "",
              "seed": "", "cookie": "", "conn": r"(?:ection)?[_-]?str(?:ing)?"}
_KW = "|".join(stem + rest for stem, rest in _KEY_WORDS.items())
_ENCODED = r"(?:[_-]?(?:b64|base64|json|encoded))"   # an encoding named after the key word
_KW_END = r"(?=[^a-z]|$|b64|base64|json|encoded)"     # a key word ends (lower-cased): ``path``, ``tokens`` do not
_TOOL_START = rb"(?:(?<=\\[ntr])|(?<![\w-]))"        # a command's start, also right after a JSON escape (\n)
#: the space around an assignment's ``=`` / ``:``: up to 4 (a line break too), or a run of spaces and tabs aligning
#: a column (``db_password     = "…"`` in tfvars, Go, Ruby; ``password:      …`` in YAML)
_ALIGN = r"(?:[ \t]{5,40}|\s{0,4})"
#: a key word (the whole of an assignment's key word) before its ``=`` / ``:`` / XML ``>`` / a table's ``|`` /
#: ``", `` of a name passed as a string, before a sentence's ``is`` / ``for`` (prose), an XML ``key="…"``'s
#: ``value=``, an environment variable's fallback (``?? "…"``, ``|| "…"``, ``or "…"``), or before a space or ``=``
#: (a flag's value, a .netrc line: group ``sp``)
_KEY_LEAD = re.compile(
    rb"(?:" + _KW.encode() + rb")" + _ENCODED.encode() + rb"?"
    rb"(?:\\*[\"'`]?\]?" + _ALIGN.encode() + rb"(?::|=(?!=)|>(?=[^\s<])|(?<=\s)\|(?=\s))|\\*[\"']\s{0,4},\s{0,4}\\*[\"']|"
    rb"[ \t]+(?:is|was|for|of|to)[ \t]|\\*[\"'][ \t]{1,4}value[ \t]*=|\\*[\"'`]?[\])]?[ \t]{0,4}(?:\?\?|\|\||or[ \t])|"
    rb"(?P<sp>[ \t=]))")


def _tool_lead(name: bytes) -> bytes:
    """A password-taking tool's name (:data:`TOOL_MARKS`) at a command's start, before a space."""
    return _TOOL_START + re.escape(name) + rb"[\w-]*[ \t]"


#: per literal keyword (lower case) one of which a context rule's match holds, what must follow it for a rule to
#: start there (None: anything, a command's name): a key word's :data:`_KEY_LEAD`, a tool's name before a space
#: (``setx NAME value`` is marked by its name's keyword)
CONTEXT_LEADS: dict[bytes, re.Pattern | None] = {
    **dict.fromkeys((b"cookie", b"sig=", b"mysql", b"mariadb", b"curl", b"wget", b"docker", b"login", b"ngrok")),
    **{stem.encode(): _KEY_LEAD for stem in ("pwd", "pat", "secret", "token", "key", "cred", "salt", "seed", "conn")},
    b"auth": re.compile(rb"auth\((?:(?<=basicauth\()|(?<=digestauth\())|" + _KEY_LEAD.pattern),   # ``HTTPBasicAuth(``
    # ``--password-stdin``, ``htpasswd``, SQL's ``PASSWORD '…'``
    b"pass": re.compile(rb"password-stdin|(?<=" + _TOOL_START + rb"ht)passwd[\w-]*[ \t]|password\s+\\*[\"'`]|"
                        + _KEY_LEAD.pattern),
    b"sudo": re.compile(rb"sudo\s+(?:-[a-z]*s|--stdin)"),      # ``echo <pw> | sudo -S``
    b"net use": None,
    b"identified": re.compile(rb"identified\s+(?:by|with)\s"),     # SQL's ``IDENTIFIED [WITH plugin] BY '…'``
    **{name: re.compile(_tool_lead(name)) for name in TOOL_MARKS},
}
CONTEXT_ANCHORS = tuple(CONTEXT_LEADS)
#: what follows a key word that can lead a rule (as :data:`_KEY_LEAD` reads it): the prefilter's pass drops the
#: rest (``path``, ``author``, ``tokens``, ``connect``) before any check
CONTEXT_ANCHOR_ENDS = {stem.encode(): (rest + _KW_END).encode() for stem, rest in _KEY_WORDS.items()
                       if CONTEXT_LEADS.get(stem.encode()) is not None}
#: a variable name is secret when it ends with one of these (case-insensitive, an encoding suffix dropped)
_KEY_QUALIFIERS = (r"access|private|account|master|signing|encryption|decryption|auth|app|application|client|storage|"
                   r"subscription|consumer|admin|shared[_.-]?access|license|secret|service|write|deploy|ingest|bot|"
                   r"webhook|sa|hmac|jwt|llm|ai|gpt|openai|anthropic|claude|gemini|google|gcp|azure|aws|groq|"
                   r"mistral|cohere|together|deepseek|perplexity|xai|fireworks|replicate|hf|huggingface|wandb|serper|"
                   r"serpapi|tavily|pinecone|stripe|sendgrid|mailgun|twilio|dd|datadog|github|gitlab|slack|discord|"
                   r"telegram|notion|linear|sentry|firebase|supabase|maps|crypto|cipher|aes|fernet|totp|otp|mfa|2fa|"
                   r"ssh|api|rest|root|backup|recovery|unlock|vault|kms|django|flask|rails|cookie|csrf")
SECRET_NAME = re.compile(
    r"(?i)(?:pass(?:word|wd|phrase)?s?|pwd|secret|token|credentials?|creds|api[_.-]?key|apikey|"
    r"access[_.-]?key[_.-]?secret|conn(?:ection)?[_.-]?str(?:ing)?|salt|(?:basic|http|proxy)[_.-]?auth|"
    r"auth[_.-]?header|authorization|(?:totp|otp|mfa|2fa|hotp)[_.-]?seed|"
    r"(?:" + _KEY_QUALIFIERS + r")[_.-]?key)$")
#: names of machine-made credentials whose value counts when it looks random (:func:`random_looking`)
RANDOM_NAME = re.compile(r"(?i)(?:(?:^|[_.-])pat|bearer|(?:^|[_.-])cookie)$")
#: a name ending with ``key`` after any other word: its value counts when it is :func:`strong`
KEY_NAME = re.compile(r"(?:^|[_.-]|(?<=[a-z]))(?:key|KEY|Key)$")
#: names too generic to say secret, whose value counts when it is :func:`strong`
GENERIC_NAMES = frozenset({"key", "auth", "access", "pat", "credential", "cred"})
#: a password's name (a passphrase of words counts beside it)
PASSWORD_NAME = re.compile(r"(?i)(?:pass(?:word|wd|phrase)?s?|pwd)$")
#: ... unless one of its parts says it names something else (a hash, a file, a count, a tokenizer token, a page)
_NOT_PARTS = frozenset({"hash", "hashed", "sha", "sha1", "sha256", "sha512", "md5", "digest", "checksum", "fingerprint",
                        "file", "path", "dir", "url", "env", "var", "name", "prompt", "pad", "eos", "bos", "unk",
                        "sep", "cls", "mask", "next", "prev", "page", "continuation", "cursor", "max", "min", "num",
                        "total", "count", "sort", "public", "pub", "field", "label", "placeholder", "old", "confirm",
                        "reset", "forgot", "input", "form", "validate", "hint", "policy", "length", "special",
                        "start", "end", "stop", "mock", "fake", "dummy", "example", "sample", "test", "trial",
                        "fail", "failed", "passed", "to", "help"})
#: ... and, for a ``…_key`` of any other word, one that names a lookup key rather than a secret
_KEY_NOT = frozenset({"cache", "primary", "foreign", "partition", "row", "map", "dict", "lookup", "index", "idx",
                      "object", "obj", "s3", "bucket", "state", "config", "cfg", "settings", "group", "column", "col",
                      "item", "entry", "node", "hot", "short", "shortcut", "keyboard", "translation", "message", "msg",
                      "metric", "tag", "attr", "attribute", "unique", "composite", "natural", "surrogate",
                      "idempotency", "dedup", "lock", "queue", "topic", "routing", "shard", "storage", "cluster",
                      "data", "dataset", "sample", "batch", "model", "layer", "input", "output", "target", "context",
                      "split", "frame", "image", "text", "value", "values", "dim", "join", "merge"})
_PARTS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
#: an environment object before a variable's name (``process.env.X``, ``os.environ.X``, ``$env:X``)
_ENV_OBJECT = re.compile(r"(?i)^(?:process\.env|import\.meta\.env|os\.environ|env|\$env)[.:]")

_Q = r"(?:(?P<esc>\\+)?(?P<q>[\"'`]))"
_QV = r"(?P<qv>[^\"'`\s\\]*)"                # a quoted value's start: :func:`_quoted_end` finds its closing quote
#: an unquoted value: ``;`` and ``&`` end it before a next ``key=``, ``</`` at an XML element's closing tag; a
#: quote inside it between token characters is the value's (``env`` prints ``DB_PASSWORD=ab"cd`` as it was set; not a
#: call's or a literal's opening quote, ``b'…'`` included)
_UV_CHAR = r"(?:[^\s\"'`;&<\\]|<(?!/)|[;&](?![\w .-]{1,40}=))"
_UV = rf"(?P<uv>{_UV_CHAR}(?:{_UV_CHAR}|(?<![(\[{{,=:])(?<![\s(\[{{,=:][rbfuRBFU])[\"'`](?=[A-Za-z0-9!#$%*+/=?@^_~-]))*)"
_VALUE = rf"(?:{_Q}{_QV}|{_UV})"
_W = r"(?:(?<=\\[ntr])|\b)"                       # a word start, also right after a JSON escape (\n)
_FLAG = r"(?:(?<=\\[ntr])|(?<![\w-]))"            # a flag start, also right after a JSON escape
#: (label, rule, loose, gate, also): a loose rule's value sits where only a password goes (``-p``, ``-u user:``), so
#: it may look like an identifier; a rule runs on a window only when the window (lower-cased) holds one of its gate's
#: literals (empty: always) and one of ``also`` when given (another literal its match holds, lower-cased: no ``i``
#: nor ``s``, which other Unicode letters match ignoring case). An assignment rule's ``kw`` group is the end of a name looked up by :func:`_name_at`;
#: its separator is ``=``, ``:``, an XML element's ``>``, a Markdown table's ``|`` or ``", `` after a name passed as
#: a string (``os.environ.setdefault("X_TOKEN", "…")``).
ASSIGNMENT = re.compile(
    rf"(?P<kw>(?i:(?:{_KW}){_ENCODED}?))"
    rf"(?P<sep>\\*[\"'`]?\]?{_ALIGN}(?::=|=>|=(?!=)|:(?!:)|>|(?<=\s)\|(?=\s))|\\*[\"']\s{{0,4}},){_ALIGN}(?:[rbfu](?=[\"']))?"
    rf"{_VALUE}")
#: a secret named in a sentence: "the password for the staging database is …", "their API key: …", "the W&B key is
#: `…`", "set the token to …" (a few words about what it opens may stand between the name and its ``is``)
PROSE = re.compile(r"(?i)\b(?P<prose>password|passphrase|passwd|token|secret|(?:api|access|secret|private|auth)[ _-]?key|"
                   r"key|credentials?)\b(?P<about>[ \t]+(?:for|of|to|on)[ \t]+(?:the[ \t]+|my[ \t]+|our[ \t]+|your[ \t]+|"
                   r"their[ \t]+|this[ \t]+)?[\w.&-]+(?:[ \t]+[\w.&-]+){0,2}?)?[ \t]*(?:[ \t]is|[ \t]was|:|(?P<to>[ \t]to))[ \t]+`?"
                   r"(?P<said>[^\s`\\]+)")
NETRC_GATE = ("machine", "password")
#: a ``.netrc`` password: the rest of its line, whatever it holds
NETRC = re.compile(r"(?i)(?:^|(?<=\\n)|\bmachine\s+\S+\s+login\s+\S+\s+)[+\s]*password\s+"
                   r"(?P<line>(?:[^\s\\]|\\(?![nr]))+)\s*(?:$|(?=\\[nr]))", re.M)
#: a password in SQL: ``CREATE USER 'app'@'%' IDENTIFIED [WITH plugin] BY '…'``, ``ALTER USER x WITH [ENCRYPTED]
#: PASSWORD '…'``, ``CREATE ROLE x LOGIN PASSWORD '…'``, ``SET PASSWORD [FOR u] = [PASSWORD(]'…'``; a string literal
#: only (``IDENTIFIED BY %s``, ``PASSWORD NULL`` and MySQL's ``BY PASSWORD '*hash'`` are not)
SQL_PASSWORD = re.compile(
    rf"(?i){_W}(?:identified\s+(?:with\s+\\?[\"'`]?\w+\\?[\"'`]?\s+)?by|(?:with|encrypted|login|"
    rf"(?:role|user)\s+[^\s;]{{1,80}})\s+password|set\s+password(?:\s+for\s+[^\n=;]{{1,80}}?)?\s*=\s*(?:password\s*\(\s*)?)"
    rf"\s*{_Q}{_QV}")
CONTEXT_RULES: tuple[tuple[str, re.Pattern, bool, tuple[str, ...], tuple[str, ...]], ...] = (
    ("Secret Assignment", ASSIGNMENT, False, (), ()),
    ("Command-line Secret", re.compile(rf"{_FLAG}--?(?P<name>[A-Za-z][\w-]{{1,60}})(?:=|\s+){_VALUE}"), False,
     ("--", " -"), ()),
    # an argument list's flag and its value as the next element: ``["./client", "--auth", "…"]``
    ("Command-line Secret", re.compile(rf"(?<=[\"'])--?(?P<name>[A-Za-z][\w-]{{1,60}})\\*[\"']\s{{0,4}},\s{{0,4}}{_Q}(?!-){_QV}"),
     False, ("--",), ()),
    # HTTP basic auth's password: ``auth=("user", "…")`` (requests, httpx), ``HTTPBasicAuth("user", "…")``
    ("Secret Assignment", re.compile(rf"(?i)(?:{_W}auth\s*=\s*\(|(?:basic|digest)auth\()\s*[^,()\n]{{1,80}},\s*{_Q}{_QV}"),
     True, ("auth",), ()),
    ("Command-line Secret", re.compile(
        rf"(?i){_W}(?:mysql|mysqldump|mysqladmin|mariadb(?:-dump)?)\b[^\n|;&]{{0,200}}?\s-p{_VALUE}"), True,
     ("mysql", "mariadb"), ("-p",)),
    ("Command-line Secret", re.compile(
        rf"(?i){_W}(?:curl|wget|http)\b[^\n|;&]{{0,300}}?\s(?:-u|--user)[\s=]{{1,3}}\\?[\"']?[^\s:\"'\\]*:{_VALUE}"),
     True, ("curl", "wget", "http"), ("-u",)),
    ("Command-line Secret", re.compile(rf"(?i){_W}docker\s+login\b[^\n|;&]{{0,200}}?\s-p\s+{_VALUE}"), True,
     ("docker",), ("-p",)),
    ("Command-line Secret", re.compile(rf"(?i){_W}wandb\s+login\s+(?:--\S+\s+)*{_VALUE}"), False, ("wandb",), ()),
    ("Command-line Secret", re.compile(rf"(?i){_W}ngrok\s+(?:config\s+add-)?authtoken\s+{_VALUE}"), False,
     ("ngrok",), ("authtoken",)),
    ("Command-line Secret", re.compile(rf"(?i){_W}login\((?:[^)\n]{{0,80}}?,\s*)?key\s*=\s*{_VALUE}"), False,
     ("login(",), ()),
    ("Command-line Secret", re.compile(rf"\.login\(\s*[^,()\n]{{1,80}},\s*{_VALUE}"), False, ("login(",), ()),
    ("Command-line Secret", re.compile(rf"(?i){_W}setx\s+(?:/m\s+)?(?P<name>[\w.-]{{1,80}})\s+{_VALUE}"), False,
     ("setx",), ()),
    *(("Command-line Secret", re.compile(rf"{_W}(?i:{tool})\b[^\n|;&]{{0,200}}?{flag}{_VALUE}"), True, tuple(gate), ())
      for tool, flag, *gate in PASSWORD_TOOLS),
    # ``smbclient -U 'user%pw'``: the quote opens before the user's name, the value runs to it closing
    ("Command-line Secret", re.compile(rf"(?i){_W}(?:smbclient|rpcclient|smbmap|smbget|smbcacls)\b[^\n|;&]{{0,200}}?"
                                       rf"\s(?:-U|--user(?:name)?)[\s=]+(?P<esc>\\?)(?P<q>[\"'])[^\s%\"']*%(?P<qv>)"), True,
     ("smb",), ()),
    ("HTTP Auth Header", re.compile(
        rf"(?i){_W}(?:proxy-)?authorization\\?[\"']?\s{{0,3}}[:=]\s{{0,3}}(?:[rbfu]{{1,2}}(?=\\?[\"']))?\\?[\"']?\s{{0,3}}"
        rf"(?:(?:bearer|token|basic|digest|bot|apikey|api-key|key|sso-key|jwt|hmac|negotiate)\s+)?"
        rf"(?P<uv>[^\s\"'`\\,;]+)"), False, ("authorization",), ()),
    ("HTTP Auth Header", re.compile(rf"(?i){_W}(?:set-)?cookie\\?[\"']?\s{{0,3}}:\s{{0,3}}(?P<pairs>[^\n\"'\\]+)"),
     False, ("cookie",), (":",)),
    ("HTTP Auth Header", re.compile(rf"{_FLAG}(?:-b|--cookie)\s+\\?[\"']?(?P<pairs>[^\n\"'\\]+)"), False,
     ("-b", "--cookie"), ()),
    ("Secret Assignment", re.compile(r"(?i)[?&;]sig=(?P<uv>[A-Za-z0-9%+/=]{8,})"), False, ("sig=",), ()),
    ("Secret in Prose", PROSE, False, (" is ", " was ", ": ", " to "), ()),
    # a connection string's, URL query's or ``--from-literal=``'s password whose value opens with ``=`` (``;Password==x;``)
    ("Secret Assignment", re.compile(r"(?i)(?<=[;?&=])(?:password|pwd)=(?P<uv>=[^;\s\"'&]+)"), True,
     ("password=", "pwd="), ()),
    # ... and a shell or ``.env`` line's (``DB_PASSWORD==ig);C&*…``)
    ("Secret Assignment", re.compile(r"(?:^|(?<=\n)|(?<=\\n))[ \t+]*(?:export[ \t]+)?(?P<name>[A-Za-z_][\w.]{0,80})="
                                     r"(?P<uv>=\S+)", re.M), True, ("==",), ()),
    ("Secret Assignment", NETRC, True, NETRC_GATE, ()),
    # Windows ``net use [Z:] \\\\host\\share <pw> /user:DOM\\u`` / ``… /user:DOM\\u <pw>``
    ("Command-line Secret", re.compile(rf"(?i){_W}net\s+use\s+(?:[a-z]:\s+|\*\s+)?\\{{2,4}}[^\s\"']+\s+(?!/){_VALUE}"), True,
     ("net use",), ()),
    ("Command-line Secret", re.compile(rf"(?i){_W}net\s+use\b[^\n|&]{{0,200}}?\s/user:[^\s\"']+\s+(?!/){_VALUE}"), True,
     ("net use",), ("/user:",)),
    # an XML setting's name and value: ``<add key="apiKey" value="…"/>``, ``<property name="db.password" value="…"/>``
    ("Secret Assignment", re.compile(rf"<[\w:.-]+\s+(?:key|name)\s*=\s*\\?[\"'](?P<name>[\w.:-]{{1,80}})\\?[\"']\s+"
                                     rf"value\s*=\s*{_Q}{_QV}"), False, ("value",), ()),
    # an environment variable's literal fallback: ``process.env.X_API_KEY ?? "…"``, ``os.getenv("X") or "…"``
    ("Secret Assignment", re.compile(rf"(?:process\.env|import\.meta\.env|os\.getenv\(|os\.environ\.get\()\.?\[?\s*"
                                     rf"\\?[\"'`]?(?P<name>[A-Za-z_][\w.-]{{0,80}})\\?[\"'`]?\s*[\])]?\s*(?:\?\?|\|\||\bor\b)\s*"
                                     rf"{_Q}{_QV}"), False, ("env",), ()),
    ("Secret Assignment", SQL_PASSWORD, True, ("identified", "password"), ("'", '"', "`")),
)
#: each rule's gate literals (one set test over them all: one loop a rule is slower), the rules without a gate
_RULE_GATES = tuple((literal, i) for i, rule in enumerate(CONTEXT_RULES) if rule[3] != NETRC_GATE for literal in rule[3])
_UNGATED = frozenset(i for i, rule in enumerate(CONTEXT_RULES) if not rule[3])
_NETRC_RULE = next(i for i, rule in enumerate(CONTEXT_RULES) if rule[3] == NETRC_GATE)
STDIN_REACH = 1000     # characters before the flag where the ``echo`` may sit
#: a value piped into a login that reads it from standard input (``echo <pw> | docker login --password-stdin``)
STDIN_LOGIN = re.compile(r"(?i)(?:(?<=\\[ntr])|(?<![^\s;&(|+\"'`]))(?:echo(?:\s+-[neE]+)?|printf(?:\s+\\?[\"']%s(?:\\n)?\\?[\"'])?)\s+"
                         r"(?:(?P<esc>)(?P<q>[\"'])(?P<qv>[^\n]*?)(?P=q)|(?P<uv>[^\s|]+))\s*\|[^|\n]*$")
#: a command reading a password or token from standard input
STDIN_FLAG = re.compile(r"--password-stdin|--with-token|\bsudo\s+(?:-[A-Za-z]*S[A-Za-z]*|--stdin)(?![\w-])")
#: a URL's userinfo password: any characters but spaces and quotes (a ``<`` not opening a tag or a placeholder's
#: ``<…>``), up to the last ``@`` before a host
URL_PASSWORD = re.compile(r"(?i)\b[a-z][a-z0-9+.-]{1,20}://[^\s:/@\"'<>\\]*:(?P<uv>(?:[^\s\"'<>\\]|<(?=[^\s\"'<>\\/]))+)@"
                          r"(?=[A-Za-z0-9\[][A-Za-z0-9.:\[\]_-]*(?:[/?#\s\"'<>),;\\]|$))")
#: a URL whose userinfo is a token alone (``https://<token>@github.com/…``, as ``git remote -v`` prints it)
URL_TOKEN = re.compile(r"(?i)\b[a-z][a-z0-9+.-]{1,20}://(?P<uv>[^\s:/@\"'<>\\]{8,})@"
                       r"(?=[A-Za-z0-9\[][A-Za-z0-9.:\[\]_-]*(?:[/?#\s\"'<>),;\\]|$))")
_PAIR = re.compile(r"(?:^|[;\s])\s*[\w.%-]{1,60}=(?P<uv>[^;\s\"'\\]{8,})")
MAX_QUOTED = 65536     # a quoted value's closing quote is looked for this far (past it, its run without spaces counts)
_QUOTE_STOPS = {q: re.compile(rf"[{q}\\\n]") for q in "\"'`"}


def _quoted_end(text: str, start: int, end: int, q: str, n: int) -> int | None:
    """Where the value opened by quote ``q`` behind ``n`` backslashes at ``start`` ends (before its closing quote and
    the backslashes that escape it), or None when its line ends first. Escaped quotes inside are part of it, at any
    depth of escaping: ``"a\\"b"``; ``\\"a\\\\\\"b\\"`` in a JSON string; ``\\\\\\"…`` twice escaped (a quote
    behind ``r`` backslashes closes when ``r % (2n + 2) == n``); inside an escaped string, a ``\\n`` at the value's
    own depth ends the line (in a plain one it is two characters of the value)."""
    stops, i = _QUOTE_STOPS[q], start
    while (m := stops.search(text, i, end)) is not None:
        j = m.start()
        if text[j] != "\\":
            return j if text[j] == q and n == 0 else None
        k = j
        while k < end and text[k] == "\\":
            k += 1
        if k == end:
            return None
        if text[k] == q and (k - j) % (2 * n + 2) == n:
            return k - n
        if n and text[k] in "nrt" and k - j <= n:
            return None
        i = k + 1
    return None


def _bare_name(name: str) -> str:
    """``name`` without quotes, brackets, an environment object before it or an encoding suffix after it."""
    name = _ENV_OBJECT.sub("", name.strip("\"'`[]"))
    bare = re.sub(r"(?i)[_.-]?(?:b64|base64|json|encoded)$", "", name)
    return bare if bare and bare != name and (SECRET_NAME.search(bare) or KEY_NAME.search(bare)) else name


@functools.lru_cache(maxsize=4096)
def name_policy(name: str) -> str | None:
    """What a value assigned to ``name`` must look like to be a secret: ``"any"`` plausible value (``GH_TOKEN``,
    ``dbPassword``, ``X-API-Key``, ``SA_KEY_B64``), a ``"random"``-looking one (``GH_PAT``, ``SESSION_COOKIE``), a
    ``"strong"`` one (``key``, ``auth``, ``CUSTOM_KEY``), or None: not a secret's name, also when a part of it
    names something else (``password_sha256``, ``token_file``, ``next_token``, ``max_tokens``, ``cache_key``)."""
    name = _bare_name(name)
    parts = {p.lower() for p in _PARTS.findall(name)}
    if parts & _NOT_PARTS:
        return None
    if SECRET_NAME.search(name):
        return "any"
    if RANDOM_NAME.search(name):
        return "random"
    if name.lower() in GENERIC_NAMES or KEY_NAME.search(name) and not parts & _KEY_NOT:
        return "strong"
    return None


def name_is_secret(name: str) -> bool:
    """``name`` ends with a secret word (``GH_TOKEN``, ``dbPassword``, ``X-API-Key``) and no part of it says it
    names something else (``password_sha256``, ``token_file``, ``next_token``, ``max_tokens``)."""
    return name_policy(name) == "any"


_LINK = re.compile(r"\)\[|\]\((?=[a-z]+:|[/#.])")


def _before_link(value: str) -> str:
    """``value`` up to a markdown link's ``)[`` / ``](`` (a value in prose, ``[View](…)``)."""
    m = _LINK.search(value)
    return value[:m.start()] if m else value


def _line_end(text: str, pos: int) -> int:
    end = text.find("\n", pos)
    return len(text) if end < 0 else end


def _value_span(text: str, m: re.Match) -> tuple[int, int] | None:
    """The value's span: a quoted one to its closing quote (whatever it holds: spaces, the other quote, escaped
    quotes), else the run of characters a value holds; an unquoted one without the punctuation that ends a
    sentence or a call; an XML element's text to its closing tag; a ``.netrc`` password's whole line."""
    groups = m.groupdict()
    if groups.get("qv") is not None:
        s = m.start("qv")
        close = _quoted_end(text, s, min(_line_end(text, s), s + MAX_QUOTED), m.group("q"), len(m.group("esc") or ""))
        if close is not None:
            return (s, close) if close > s else None
        return (s, m.end("qv")) if m.end("qv") > s else None
    if groups.get("line") is not None:
        return m.span("line")
    if groups.get("uv") is not None:
        s, value = m.start("uv"), m.group("uv")
        if (groups.get("sep") or "").endswith(">"):        # an XML element's text, whatever it holds, to ``</``
            return s, text.find("</", s, _line_end(text, s))
        return s, s + len(_before_link(value).rstrip(",;)}]"))
    return None


def _matches(rule: re.Pattern, text: str, ws: int, we: int) -> Iterator[re.Match]:
    """Every match of ``rule`` starting in ``text[ws:we]`` (its value may run to the line's end), the next one
    looked for right after the previous one's key (its ``kw`` or ``name`` group, else its first character): a
    value that is not a secret may hold the next key."""
    key = next((g for g in ("kw", "name") if g in rule.groupindex), None)
    pos, end = ws, _line_end(text, we)
    while (m := rule.search(text, pos, we)) is not None:
        yield rule.match(text, m.start(), end) or m   # the same start, its value read to the line's end
        pos = max(m.end(key) if key else m.start() + 1, pos + 1)


#: the stem of every whole key word (lower-cased; matching the stem and looking ahead at the rest is several times
#: faster than looking ahead at each offset)
_STEM_AT = re.compile("|".join(f"{stem}(?={rest}{_KW_END})" for stem, rest in _KEY_WORDS.items()))
_NETRC_LINE = re.compile(r"[ \t+]*password[ \t]")


def _at_stems(rule: re.Pattern, text: str, ws: int, we: int, window: str) -> Iterator[re.Match]:
    """Matches of ``rule`` that start where one of :data:`_KEY_WORDS` sits in ``window`` (``text[ws:we]`` lower-cased;
    the whole window is searched instead when lower-casing changed its length)."""
    if len(window) != we - ws:
        yield from _matches(rule, text, ws, we)
        return
    end = _line_end(text, we)
    for stem in _STEM_AT.finditer(window):
        m = rule.match(text, ws + stem.start(), end)
        if m:
            yield m


def _name_at(text: str, ws: int, end: int) -> str:
    """The variable name ending at ``end`` (letters, digits, ``_``, ``.``, ``-``, an environment object's ``$env:``);
    empty after a ``$`` (``$X_TOKEN`` is a reference, not an assignment)."""
    start = end
    while start > ws and (text[start - 1].isalnum() or text[start - 1] in "_.-"):
        start -= 1
    if start > 0 and text[start - 1] == "\\" and text[start:start + 1] in ("n", "t", "r"):
        start += 1                                    # after a JSON escape (``\\nprocess.env.X``)
    if start >= 5 and text[start - 5:start].lower() == "$env:":
        return text[start:end]
    return "" if start > 0 and text[start - 1] == "$" else text[start:end]


def _prose_label(text: str, ws: int, m: re.Match, name: str) -> bool:
    """Whether an assignment's ``name:`` is a label in prose whose word before it (one space before) says it names
    something else (``Help Token:``, ``Page Token:``); ``env TOKEN=…`` and ``export X=…`` stay assignments."""
    start = m.end("kw") - len(name)
    if start - 1 <= ws or text[start - 1] != " " or text[m.end("kw"):m.end()].lstrip("\\\"'`] \t")[:1] != ":":
        return False
    begin = start - 1
    while begin > ws and text[begin - 1].isalpha():
        begin -= 1
    if begin >= 1 and text[begin - 1] == "\\" and text[begin] in "ntr":
        begin += 1                                    # after a JSON escape (``\\nHelp Token:``)
    return text[begin:start - 1].lower() in _NOT_PARTS


def _literal_here(text: str, m: re.Match, name: str | None) -> bool:
    """Whether the value can only be a literal, not code: a flag's quoted value on a command line, or a value in a
    URL's query or a connection string (the name right after ``?``, ``&`` or ``;``)."""
    if "name" in m.re.groupindex:
        return m.groupdict().get("q") is not None
    if "kw" in m.re.groupindex and name:
        start = m.end("kw") - len(name)
        return start > 0 and text[start - 1] in "?&;"
    return False


#: what may stand before a shell or ``.env`` line's name: a file viewer's line number (``cat -n``'s ``  12\t``, ``12:``),
#: indentation, a diff's ``+``, a prompt, ``export``, a YAML list's ``-``, a JSON escape's line break; or a
#: container's ``-e`` / ``--env`` (``docker run -e DB_PASSWORD=…``)
_SHELL_LINE = re.compile(r"(?:^|\n|\\n)(?:[ \t]*\d{1,7}(?:\t|: ?))?[ \t+]*(?:\$ |- |(?:export|set|env|ENV)[ \t]+)?$|"
                         r"(?<![\w-])(?:-e|--env)[ \t=]+$")
SHELL_REACH = 80        # characters before a name where its line may start


def _literal_value(text: str, m: re.Match, name: str | None, value: str) -> bool:
    """Whether ``value`` is written as a literal: quoted, an XML element's text, a flag's value, or a shell or
    ``.env`` line's ``NAME=value`` that is not cut at a call's or an index's opening bracket
    (``password=parts['password'],`` in code)."""
    groups = m.groupdict()
    if groups.get("qv") is not None or (groups.get("sep") or "").endswith(">") or "name" in groups:
        return True
    if groups.get("sep") != "=" or not name or value[-1:] in ("(", "["):
        return False
    start = m.end("kw") - len(name)
    return _SHELL_LINE.search(text, max(0, start - SHELL_REACH), start) is not None


def _wrong_separator(text: str, m: re.Match, name: str) -> bool:
    """An assignment whose separator does not fit its name: ``>`` not closing an XML element's opening tag
    (``<password>``), ``|`` after a name that is not a table's cell, ``", `` after a name that is not a call's first
    argument (``"…", token, "…"``, ``["pass", "…"]``) or before a value that is not a string."""
    sep = m.group("sep")
    start = m.end("kw") - len(name)
    if sep.endswith(">"):                             # ``<password>…</password>``
        close = text.find("</", m.end(), _line_end(text, m.end()))
        return sep != ">" or start == 0 or text[start - 1] != "<" or close < 0 or "<" in text[m.end():close]
    if sep.endswith("|"):                             # a table's cell: ``| `PASSWORD` | `…` |``
        return not re.search(r"\|\s[ `*]*$", text[max(0, start - 8):start])
    if sep.endswith(","):                             # a call's first argument: ``setdefault("X_TOKEN", "…")``
        if m.group("q") is None:                      # ... and a quoted second (``scrypt("password", salt=b)``)
            return True
        quote = start - 1
        while quote > 0 and text[quote - 1] == "\\":
            quote -= 1
        return start == 0 or text[start - 1] != sep.lstrip("\\")[0] or not text[max(0, quote - 4):quote].rstrip().endswith("(")
    return False


def _accept(value: str, policy: str, loose: bool, name: str | None, literal: bool) -> bool:
    """Whether ``value`` (a ``literal`` or not, :func:`_literal_value`) beside a name of ``policy``
    (:func:`name_policy`) is a secret."""
    if policy == "any" and (name is None or PASSWORD_NAME.search(_bare_name(name))) and passphrase(value):
        return True
    if not plausible_value(value, loose, literal):
        return False
    return policy == "any" or (random_looking if policy == "random" else strong)(value)


def context_secrets(text: str, ws: int, we: int) -> Iterator[tuple[str, int, int]]:
    """``(label, start, end)`` of secret values in ``text[ws:we]`` found by their context (only the value)."""
    window = text[ws:we].lower()
    todo = {i for literal, i in _RULE_GATES if literal in window}
    if "machine" in window or _NETRC_LINE.match(window):
        todo.add(_NETRC_RULE)
    for i in sorted(todo.union(_UNGATED)):
        label, rule, loose, gate, also = CONTEXT_RULES[i]
        if also and not any(literal in window for literal in also):
            continue
        found = (_at_stems(rule, text, ws, we, window) if rule is ASSIGNMENT or rule is PROSE
                 else _matches(rule, text, ws, we))
        for m in found:
            if rule is PROSE:
                if (span := _prose_secret(m)) is not None:
                    yield label, *span
                continue
            name = (_name_at(text, ws, m.end("kw")) if "kw" in rule.groupindex
                    else m.group("name") if "name" in rule.groupindex else None)
            if "kw" in rule.groupindex and name and (_wrong_separator(text, m, name)
                                                     or _prose_label(text, ws, m, name)):
                continue                              # ``Help Token:``: a label in prose; ``<input … "password">``
            policy = "any" if name is None else name_policy(name)
            if policy is None:
                continue
            literal = _literal_here(text, m, name)
            if policy == "strong" and literal:
                policy = "random"                     # ``?key=…``, ``&auth=…``: a URL query's value is a literal
            if "pairs" in rule.groupindex:
                base = m.start("pairs")
                for p in _PAIR.finditer(m.group("pairs")):
                    if plausible_value(p.group("uv"), literal=True):
                        yield label, base + p.start("uv"), base + p.end("uv")
                continue
            span = _value_span(text, m)
            value = text[span[0]:span[1]] if span else ""
            if name and RANDOM_NAME.search(name) and name.lower().endswith("cookie") and "=" in value:
                continue                              # a Cookie header's pairs: the pairs rule reads them
            if span and _accept(value, policy, loose or literal, name, _literal_value(text, m, name, value)):
                yield label, *span
    if "-stdin" in window or "with-token" in window or "sudo" in window:
        yield from _stdin_logins(text, ws, we)


#: words around a named value that say it is something else (a commit's hash, a cache's key, a file)
_PROSE_NOT = _NOT_PARTS | {"commit", "git", "revision", "tree", "blob", "object", "cache", "primary", "foreign", "sort",
                           "partition", "lookup", "index", "row", "map", "dict"}


def _prose_secret(m: re.Match) -> tuple[int, int] | None:
    """The span of a secret a sentence names (:data:`PROSE`): a value without the sentence's punctuation, made by a
    machine or looking like a person's password beside a password's name; not what the words around it say is
    something else (a commit's hash, a cache's key, a file)."""
    value = m.group("said").rstrip(".,;:)'\"").lstrip("'\"(")
    if len(value) > 2 and value[0] == "<" and value[-1] == ">":
        value = value[1:-1]                           # ``<…>``: a value in angle brackets (a placeholder stays one)
    start = m.start("said") + m.group("said").find(value)
    before = re.split(r"[.:;\n]", m.string[max(0, m.start() - 40):m.start()])[-1].split()[-4:]
    if m.group("to") is not None and not _set_before([w.lower() for w in before]):
        return None                                   # "the token to use", not "set the token to …"
    about = {p.lower() for p in _PARTS.findall(" ".join([*before, m.group("about") or ""]))}
    if about & _PROSE_NOT or not plausible_value(value):
        return None
    password = PASSWORD_NAME.search(m.group("prose")) is not None
    if random_looking(value) or looks_random(value) or password and _human_password(value):
        return start, start + len(value)
    return None


#: the verbs before a secret's name that make what follows its ``to`` the value ("set the token to …"), and the
#: words that may stand between them
_SET_VERBS = frozenset({"set", "change", "changed", "update", "updated", "reset", "rotate", "rotated"})
_DETERMINERS = frozenset({"the", "my", "our", "your", "their", "this", "its", "a", "an"})


def _set_before(words: list[str]) -> bool:
    """Whether ``words`` (lower case) end with a setting verb, maybe then a determiner and a word (``set the``,
    ``update your staging``)."""
    while words and (words[-1] in _DETERMINERS or len(words) > 1 and words[-2] in _DETERMINERS):
        words = words[:-1]
    return bool(words) and words[-1] in _SET_VERBS


def _human_password(value: str) -> bool:
    """A word with digits or symbols, as people choose passwords (``Qwerty368!``, ``Monkey2024``)."""
    return any(c.isdigit() for c in value) and (any(not c.isalnum() for c in value) or value[:1].isalpha())


def _stdin_logins(text: str, ws: int, we: int) -> Iterator[tuple[str, int, int]]:
    """Values echoed into a login reading its password or token from standard input (``--password-stdin``,
    ``--with-token``, ``sudo -S``), on the line before the flag."""
    for flag in STDIN_FLAG.finditer(text, ws, we):
        pos = flag.start()
        line_start = max(text.rfind("\n", 0, pos) + 1, pos - STDIN_REACH)
        m = STDIN_LOGIN.search(text, line_start, pos)
        span = _value_span(text, m) if m else None
        if span and plausible_value(text[span[0]:span[1]], loose=True):
            yield "Command-line Secret", *span


def url_passwords(text: str, ws: int, we: int) -> Iterator[tuple[str, int, int]]:
    """``(label, start, end)`` of the passwords in URLs' userinfo inside ``text[ws:we]``, and of tokens standing
    alone in it."""
    end = _line_end(text, we)
    for pattern, accept in ((URL_PASSWORD, url_password), (URL_TOKEN, _url_token)):
        for m in pattern.finditer(text, ws, we):
            m = pattern.match(text, m.start(), end) or m        # the password read to the line's end
            if accept(m.group("uv")):
                yield "URL Password", m.start("uv"), m.end("uv")


def _url_token(value: str) -> bool:
    """A URL's userinfo that is a token or a password alone: machine-made, random-looking or a person's password
    (letters, digits and a symbol), not a user's name."""
    person = (any(c.isalpha() for c in value) and any(c.isdigit() for c in value)
              and any(not c.isalnum() and c not in "._-~" for c in value))     # ``Purple259$``: a person's password
    return (random_looking(value) or looks_random(value) or person) and plausible_value(value, loose=True)


def url_password(value: str) -> bool:
    """Whether a URL's userinfo password could be real: not a placeholder nor a fixture word (``password``,
    ``PASSWORD``, ``pass``) nor a run into a next URL; short passwords count (a URL says what they are)."""
    if "://" in value:
        return False
    return plausible_value(value) or (len(value) >= 4 and not placeholder(value) and not fixture(value))
