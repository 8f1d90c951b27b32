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

import re
from collections.abc import Iterator

_B = r"(?:(?<=\\[ntr])|(?<![A-Za-z0-9_]))"          # start: after a JSON escape or a non-word character
_E = r"(?![A-Za-z0-9_])"
_E_DASH = r"(?![A-Za-z0-9_-])"

#: (label, literals one of which its match holds, pattern): a window holding none of the literals skips the pattern (a
#: substring search is far cheaper than a regex search); group ``r…`` (``a…``) is the random part that must look random
PROVIDERS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("Anthropic API Key", ("sk-ant-",), r"sk-ant-(?:api|admin|sid|oat)\d{2}-(?P<r1>[A-Za-z0-9_-]{40,200})" + _E_DASH),
    ("OpenRouter API Key", ("sk-or-",), r"sk-or-v\d-(?P<r2>[0-9a-f]{48,80})" + _E),
    ("OpenAI API Key", ("sk-proj-", "sk-svcacct-", "sk-admin-", "sk-None-"),
     r"sk-(?:proj|svcacct|admin|None)-(?P<r3>[A-Za-z0-9_-]{30,250})" + _E_DASH),
    ("OpenAI API Key", ("sk-",), r"sk-(?P<r4>[A-Za-z0-9]{20,}T3BlbkFJ[A-Za-z0-9]{20,}|[A-Za-z0-9]{40,64})" + _E_DASH),
    ("DeepSeek API Key", ("sk-",), r"sk-(?P<r5>[0-9a-f]{32})" + _E_DASH),
    ("Hugging Face Token", ("hf_", "api_org_"), r"(?:hf_|api_org_)(?P<r6>[A-Za-z0-9]{30,40})" + _E),
    ("GitHub Token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
     r"(?:gh[pousr]_(?P<r7>[A-Za-z0-9]{36,251})|github_pat_(?P<r8>[A-Za-z0-9_]{50,250}))" + _E),
    ("GitLab Token", ("glpat-", "gldt-", "glrt-", "glptt-", "gloas-", "glcbt-", "glimt-", "glagent-", "glsoat-",
                      "glffct-", "glft-", "GR1348941"),
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
    ("AWS Access Key", ("AKIA", "ASIA", "ABIA", "ACCA", "A3T"),
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
     r"(?:sntrys_(?P<r40>[A-Za-z0-9+/=_]{50,})|sntryu_(?P<r41>[0-9a-f]{64}))" + _E),
    ("Sentry DSN", ("@",), r"https?://(?P<r42>[0-9a-f]{32})(?::[0-9a-f]{32})?@"),
    ("JSON Web Token", ("eyJ",),
     r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.(?P<r43>[A-Za-z0-9_-]{16,})" + _E_DASH),
)
#: (label, literals, pattern, names of its random-part groups, whether it checks its own start); each pattern is
#: searched alone (one alternation of them all is many times slower: it defeats the regex engine's literal-prefix
#: scan), its start checked by :func:`_starts_word`
PROVIDER_RES = tuple((label, literals, re.compile(pat), tuple(re.compile(pat).groupindex),
                      pat.startswith(("(?<", "(?:(?<"))) for label, literals, pat in PROVIDERS)


def _starts_word(text: str, pos: int) -> bool:
    """Whether a token may start at ``pos``: after a non-word character, a JSON escape (``\\n``) or the start."""
    return pos == 0 or not (text[pos - 1].isalnum() or text[pos - 1] == "_") or (
        pos >= 2 and text[pos - 2] == "\\" and text[pos - 1] in "ntr")


_CLASS = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
                       "A" * 26 + "a" * 26 + "0" * 10)
#: the random part of a provider token changes character class at least this often (per 16 characters, at least 2)
MIN_SHIFTS = 4

#: a provider prefix and the start of its token cut off by the end of the text (an excerpt, a message); a long
#: run mixing cases and digits that ends the text counts too (:func:`truncated_token`)
TRUNCATED = re.compile(
    r"(?:(?:(?<=/bot)\d{8,10}:AA|" + _B + r"(?:sk-(?:ant-\w+-|or-v\d-|proj-|svcacct-|admin-)?|hf_|api_org_|gh[pousr]_|github_pat_|"
    r"gl(?:pat|dt|rt|ptt|oas)-|xox[abposre]-|xapp-|[sr]k_(?:live|test)_|whsec_|AIza|GOCSPX-|ya29\.|npm_|pypi-AgE|"
    r"dckr_(?:pat|oat)_|gsk_|r8_|tgp_v\d_|pplx-|xai-|fw_|SG\.|sntry[su]_|ATBB|AT[AC]TT|eyJ|\d{8,10}:AA|"
    r"https?://(?=[0-9a-f]{12,32}\Z)|discord(?:app)?\.com/api/webhooks/\d+/|hooks\.slack\.com/services/\w+/\w+/))(?P<r>[A-Za-z0-9_.+/=-]{8,}))"
    r"\Z")


def class_shifts(text: str) -> int:
    """How often consecutive characters of ``text`` change class (lower / upper / digit / other)."""
    flat = text.translate(_CLASS)
    return sum(a != b for a, b in zip(flat, flat[1:]))


def _random_enough(part: str, group: str = "r") -> bool:
    """Random-looking: many distinct characters and class changes (a group named ``a…``, one-case base32:
    distinct characters only)."""
    distinct = len(set(part)) >= min(10, len(part) // 2)
    return distinct and (group.startswith("a") or class_shifts(part) >= max(MIN_SHIFTS, len(part) // 8))


def provider_tokens(text: str, ws: int, we: int) -> Iterator[tuple[str, int, int]]:
    """``(label, start, end)`` of provider-format tokens in ``text[ws:we]`` whose random part looks random (a
    Sentry DSN: its key only)."""
    window = text[ws:we]
    for label, literals, pattern, groups, own_start in PROVIDER_RES:
        for literal in literals:
            if literal in window:
                break
        else:
            continue
        pos = ws
        while (m := pattern.search(text, pos, we)) is not None:
            pos = m.end() if m.end() > m.start() else m.start() + 1
            if not (own_start or _starts_word(text, m.start())):
                pos = m.start() + 1
                continue
            name = next(g for g in groups if m.group(g) is not None)
            if _random_enough(m.group(name), name):
                yield (label, *m.span(name)) if label == "Sentry DSN" else (label, *m.span())


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
_DIGIT = re.compile(r"[0-9]")                                   # token characters are ASCII


def truncated_token(text: str) -> tuple[str, int, int] | None:
    """``(label, start, end)`` of a token cut off by the end of ``text`` (an excerpt, a message quoting its
    input), or None; only texts ending with token characters are searched (their last 400 characters)."""
    if len(text) < 8 or text[-1] not in _TOKEN_CHARS:
        return None
    tail = text[-400:]
    run = len(tail) - len(tail.rstrip(_TOKEN_CHAR_STR))       # the token characters that end the text
    if run < 8 or not (run >= 24 or _DIGIT.search(tail, len(tail) - run)):
        return None
    since = max(0, len(text) - run - 40)
    tail = TRUNCATED.search(text, since)
    start = len(text) - run                                   # the run's start (it may reach before the tail)
    while start > since and text[start - 1] in _TOKEN_CHARS:
        start -= 1
    value = text[start:]
    if len(value) >= 24 and value != value.upper() and value != value.lower() and _DIGIT.search(value) \
            and not (tail and tail.start() <= start) and not _joined_words(value):
        # the run mixing cases and digits, unless a prefix leads or it is words joined by separators
        return ("Truncated Token", start, len(text)) if _random_enough(value) else None
    if tail and _random_enough(tail.group("r")):
        return "Truncated Token", tail.start(), tail.end()
    return None


# -- context rules -----------------------------------------------------------------------------------------------

#: literal keywords (lower case) one of which a context rule's match holds
CONTEXT_ANCHORS = (b"pass", b"pwd", b"secret", b"token", b"key", b"auth", b"cookie", b"cred", b"sig=",
                   b"mysql", b"mariadb", b"curl", b"wget", b"docker", b"login", b"ngrok")
#: a variable name is secret when it ends with one of these (case-insensitive)
SECRET_NAME = re.compile(
    r"(?i)(?:pass(?:word|wd|phrase)?s?|pwd|secret|token|credentials?|api[_-]?key|apikey|access[_-]?key[_-]?secret|"
    r"(?:access|private|account|master|signing|encryption|auth|app|application|client|storage|subscription|"
    r"consumer|admin|shared[_-]?access|license|secret|service|write|deploy|ingest|bot|webhook|session)[_-]?key)$")
#: ... unless one of its parts says it names something else (a hash, a file, a count, a tokenizer token, a page)
_NOT_PARTS = frozenset({"hash", "hashed", "sha", "sha1", "sha256", "sha512", "md5", "digest", "checksum", "fingerprint",
                        "file", "path", "dir", "url", "env", "var", "name", "prompt", "pad", "eos", "bos", "unk",
                        "sep", "cls", "mask", "next", "prev", "page", "continuation", "cursor", "max", "min", "num",
                        "total", "count", "sort", "public", "pub", "field", "label", "placeholder", "old", "confirm",
                        "reset", "forgot", "input", "form", "validate", "hint", "policy", "length", "special",
                        "start", "end", "stop", "mock", "fake", "dummy", "example", "sample", "test", "trial",
                        "fail", "failed", "passed", "to", "help"})
_PARTS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")

_Q = r"(?:\\?(?P<q>[\"']))"
_QV = r"(?P<qv>[^\"'`\s\\]{1,400})"          # a quoted value: no spaces (prose between quotes is not a secret)
_UV = r"(?P<uv>(?:[^\s\"'`;&<>\\]|[;&](?![\w .-]{1,40}=)){1,1200})"   # ; and & end it before a next key=
_VALUE = rf"(?:{_Q}{_QV}|{_UV})"
_W = r"(?:(?<=\\[ntr])|\b)"                       # a word start, also right after a JSON escape (\n)
_FLAG = r"(?:(?<=\\[ntr])|(?<![\w-]))"            # a flag start, also right after a JSON escape
#: (label, rule, loose, gate, also): a loose rule's value sits where only a password goes (``-p``, ``-u user:``), so
#: it may look like an identifier; a rule runs on a window only when the window (lower-cased) holds one of its gate's
#: literals (empty: always) and one of ``also`` when given (another literal its match holds, lower-cased: no ``i``
#: nor ``s``, which other Unicode letters match ignoring case). An assignment rule's ``kw`` group is the end of a name
#: looked up by :func:`_name_at`.
ASSIGNMENT = re.compile(
    rf"(?P<kw>(?i:pass(?:word|wd|phrase)?s?|pwd|secret|token|credentials?|key|auth|access|pat|bearer))"
    rf"\\?[\"'`]?\]?\s{{0,4}}(?::=|=>|=(?!=)|:(?!:))\s{{0,4}}(?:[rbfu](?=[\"']))?{_VALUE}")
NETRC_GATE = ("machine", "password")
CONTEXT_RULES: tuple[tuple[str, re.Pattern, bool, tuple[str, ...], tuple[str, ...]], ...] = (
    ("Secret Assignment", ASSIGNMENT, False, (), ()),
    ("Command-line Secret", re.compile(rf"{_FLAG}--?(?P<name>[A-Za-z][\w-]{{1,60}})(?:=|\s+){_VALUE}"), False,
     ("--", " -"), ()),
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
    ("HTTP Auth Header", re.compile(
        rf"(?i){_W}(?:proxy-)?authorization\\?[\"']?\s{{0,3}}[:=]\s{{0,3}}\\?[\"']?\s{{0,3}}"
        rf"(?:(?:bearer|token|basic|digest|bot|apikey|api-key|key|sso-key|jwt|hmac|negotiate)\s+)?"
        rf"(?P<uv>[^\s\"'`\\,;]{{1,2000}})"), False, ("authorization",), ()),
    ("HTTP Auth Header", re.compile(rf"(?i){_W}(?:set-)?cookie\\?[\"']?\s{{0,3}}:\s{{0,3}}(?P<pairs>[^\n\"'\\]{{1,4000}})"),
     False, ("cookie",), (":",)),
    ("HTTP Auth Header", re.compile(rf"{_FLAG}(?:-b|--cookie)\s+\\?[\"']?(?P<pairs>[^\n\"'\\]{{1,4000}})"), False,
     ("-b", "--cookie"), ()),
    ("Secret Assignment", re.compile(r"(?i)[?&;]sig=(?P<uv>[A-Za-z0-9%+/=]{8,})"), False, ("sig=",), ()),
    # a connection string's or URL query's password whose value opens with ``=`` (``;Password==x;``)
    ("Secret Assignment", re.compile(r"(?i)(?<=[;?&])(?:password|pwd)=(?P<uv>=[^;\s\"'&]{1,400})"), True,
     ("password=", "pwd="), ()),
    ("Secret Assignment", re.compile(
        r"(?i)(?:^|(?<=\\n)|\bmachine\s+\S+\s+login\s+\S+\s+)[+\s]*password\s+(?P<uv>[^\s\"'\\]+)\s*(?:$|(?=\\[nr]))",
        re.M), True, NETRC_GATE, ()),
)
#: a URL's userinfo password: any characters but spaces and quotes, up to the last ``@`` before a host
URL_PASSWORD = re.compile(r"(?i)\b[a-z][a-z0-9+.-]{1,20}://[^\s:/@\"'<>\\]*:(?P<uv>[^\s\"'<>\\]{1,400})@"
                          r"(?=[A-Za-z0-9\[][A-Za-z0-9.:\[\]_-]*(?:[/?#\s\"'<>),;\\]|$))")
_PAIR = re.compile(r"(?:^|[;\s])\s*[\w.%-]{1,60}=(?P<uv>[^;\s\"'\\]{8,})")

#: values that are placeholders or fixtures, not secrets (lower case, non-alphanumerics dropped)
FIXTURE_WORDS = frozenset({"password", "passwd", "pass", "secret", "token", "test", "testing", "changeme", "example",
                           "dummy", "fake", "mock", "sample", "placeholder", "redacted", "none", "null", "true", "false",
                           "admin", "root", "user", "guest", "default", "hunter", "letmein", "qwerty", "foobar", "foo",
                           "bar", "baz", "abc", "xyz", "demo", "empty", "hidden", "masked", "removed", "required",
                           "optional", "string", "str", "your", "yourpassword", "yourtoken", "yoursecret", "mypassword",
                           "mysecret", "mytoken", "secretkey", "apikey", "notasecret", "insecure", "undefined",
                           "value", "key", "bearer", "basic", "auth", "env", "environ", "config", "settings", "os",
                           "self", "get", "set"})
PLACEHOLDER = re.compile(r"(?i)^(?:<.*|\[[^\[\]]*\]|\{[\w.]*\}?|\{[\w.]*\[[^\]]*\]\}|\(.*\)|%(?:\(\w+\))?[sd]|%\w+%|\$\w+|\$\{.*|\$\(.*|"
                         r"\{\{.*|.*\$\{.*\}.*|.*\{\{.*\}\}.*|[x*.#_-]{3,}|(.)\1{3,}|.*(?:xxxx|XXXX|\*\*\*|\.\.\.|0123456|1234567|abcdefg).*|"
                         r"(?:your|enter|insert|replace)\w*.*|(?:my|the|some|example|sample|dummy|fake|test|mock|"
                         r"placeholder|changeme)(?:[_:.-].*)?|.*[_-]?here)$")
#: words that make a value a fixture wherever they sit in it (``test_password``, ``my-secret-key``)
FIXTURE_PARTS = ("password", "passwd", "secret", "changeme", "example", "dummy", "placeholder", "redacted")
#: code, never a literal: a dotted name, a call, an index (``self.cleaned_data[``, ``f.read().strip(``)
_CALL = re.compile(r"^(?:[A-Za-z_]\w*(?:\??\.[A-Za-z_]\w*)+(?:[(\[)].*)?|"
                   r"(?:[a-z_][a-z0-9_]*|[a-z]+(?:[A-Z][a-z0-9]+)+)(?:[(\[][\w\"')\]]|[(\[]$|\)\.).*|"
                   r"[A-Z][a-z0-9]*(?:[A-Z][a-z0-9]*)+\((?:[\w\"')].*)?)$")
#: a bare name or a lower-case word: code unless it looks random
_IDENT = re.compile(r"^(?:@?[A-Za-z_]\w*\)*|[a-z]+(?:[_-][a-z]+)*)$")
_UUID = re.compile(r"(?i)^[0-9a-f]{4,12}(?:-[0-9a-f]{4,12})+$")        # a UUID or groups of one
_VERSION = re.compile(r"^[v=<>~^]*\d+(?:\.\d+)+[\w.+-]*$|^\d{1,7}$")
_PATH = re.compile(r"^(?:~?/|\.\.?/|[A-Za-z]:\\|\w+://)|\.(?:txt|json|ya?ml|pem|key|crt|env|cfg|ini|conf|py|sh|toml)$")


#: names too generic to say secret, whose value counts when it is :func:`strong`
GENERIC_NAMES = frozenset({"key", "auth", "access", "pat", "bearer", "credential"})


def strong(value: str) -> bool:
    """A random-looking token: 20+ characters mixing lower case, upper case and digits, changing class often."""
    return (len(value) >= 20 and any(c.islower() for c in value) and any(c.isupper() for c in value)
            and any(c.isdigit() for c in value) and class_shifts(value) >= len(value) // 4)


def name_is_secret(name: str) -> bool:
    """``name`` ends with a secret word (``GH_TOKEN``, ``dbPassword``, ``X-API-Key``) and no part of it says it
    names something else (``password_sha256``, ``token_file``, ``next_token``, ``max_tokens``)."""
    name = name.strip("\"'`[]")
    if not SECRET_NAME.search(name):
        return False
    return not any(p.lower() in _NOT_PARTS for p in _PARTS.findall(name))


#: ``12:…``: a line number and the line, as grep prints them after a file name (``vocab.tiktoken:12:…``)
_GREP_LINE = re.compile(r"^\d+:")


def _repetitive(value: str) -> bool:
    """A short unit repeated (``ICAgICAg…``, ``0123456789abcdef0123456789abcdef``): few distinct 4-grams."""
    grams = {value[i:i + 4] for i in range(len(value) - 3)}
    return len(value) >= 16 and len(grams) < len(value) / 3


def _random_letters(value: str) -> bool:
    """Random mixed-case letters rather than a CamelCase name: capitals side by side, and class changes often."""
    return len(value) >= 16 and len(re.findall(r"[A-Z]{2}", value)) >= 2 and class_shifts(value) >= len(value) / 3


def plausible_value(value: str, loose: bool = False) -> bool:
    """Whether ``value`` could be a real secret: not a placeholder, fixture, code (unless ``loose``), word, number,
    version, UUID or path (the rules run on text where a secret-named key sits right before it)."""
    if len(value) < 6 or len(value) > 2000:
        return False
    core = re.sub(r"[\W_]+", "", value.lower())
    if any(w in core for w in FIXTURE_PARTS):
        return False
    if not core or core in FIXTURE_WORDS or re.sub(r"\d+$", "", core) in FIXTURE_WORDS or len(set(value)) < 5:
        return False
    if _GREP_LINE.match(value) or _repetitive(value):
        return False
    if PLACEHOLDER.match(value) or _UUID.match(value) or _VERSION.match(value) or _PATH.search(value):
        return False
    if not loose and (_CALL.match(value) or _IDENT.match(value) and not (
            class_shifts(value) >= 4 and any(c.isdigit() for c in value) or _random_letters(value))):
        return False
    return True


_LINK = re.compile(r"\)\[|\]\(")


def _before_link(value: str) -> str:
    """``value`` up to a markdown link's ``)[`` / ``](`` (a value in prose, ``[View](…)``)."""
    m = _LINK.search(value)
    return value[:m.start()] if m else value


def _value_span(m: re.Match) -> tuple[int, int] | None:
    for group in ("qv", "uv"):
        if m.groupdict().get(group) is not None:
            s, e = m.span(group)
            value = m.group(group)
            stripped = _before_link(value).rstrip(",;)}]") if group == "uv" else value
            return s, s + len(stripped)
    return None


def _matches(rule: re.Pattern, text: str, ws: int, we: int) -> Iterator[re.Match]:
    """Every match of ``rule`` in ``text[ws:we]``, the next one looked for right after the previous one's key
    (its ``kw`` or ``name`` group, else its first character): a value that is not a secret may hold the next key."""
    key = next((g for g in ("kw", "name") if g in rule.groupindex), None)
    pos = ws
    while (m := rule.search(text, pos, we)) is not None:
        yield m
        pos = max(m.end(key) if key else m.start() + 1, pos + 1)


#: the lower-case stems an assignment's key word starts with
_STEMS = ("pass", "pwd", "secret", "token", "key", "auth", "access", "pat", "bearer", "cred")
_STEM_AT = re.compile("(?=" + "|".join(_STEMS) + ")")      # every offset where one of them starts
_NETRC_LINE = re.compile(r"[ \t+]*password[ \t]")


def _at_stems(rule: re.Pattern, text: str, ws: int, we: int, window: str) -> Iterator[re.Match]:
    """Matches of ``rule`` that start where one of :data:`_STEMS` sits in ``window`` (``text[ws:we]`` lower-cased;
    the whole window is searched instead when lower-casing changed its length)."""
    if len(window) != we - ws:
        yield from _matches(rule, text, ws, we)
        return
    for stem in _STEM_AT.finditer(window):
        m = rule.match(text, ws + stem.start(), we)
        if m:
            yield m


def _name_at(text: str, ws: int, end: int) -> str:
    """The variable name ending at ``end`` (letters, digits, ``_``, ``.``, ``-``); empty after a ``$``
    (``$X_TOKEN`` is a reference, not an assignment)."""
    start = end
    while start > ws and (text[start - 1].isalnum() or text[start - 1] in "_.-"):
        start -= 1
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
        return m.group("q") is not None
    if "kw" in m.re.groupindex and name:
        start = m.end("kw") - len(name)
        return start > 0 and text[start - 1] in "?&;"
    return False


def context_secrets(text: str, ws: int, we: int) -> Iterator[tuple[str, int, int]]:
    """``(label, start, end)`` of secret values in ``text[ws:we]`` found by their context (only the value)."""
    window = text[ws:we].lower()
    for label, rule, loose, gate, also in CONTEXT_RULES:
        if gate == NETRC_GATE:
            if "machine" not in window and not _NETRC_LINE.match(window):
                continue
        elif gate:
            for literal in gate:
                if literal in window:
                    break
            else:
                continue
            for literal in also:
                if literal in window:
                    break
            else:
                if also:
                    continue
        found = _at_stems(rule, text, ws, we, window) if rule is ASSIGNMENT else _matches(rule, text, ws, we)
        for m in found:
            name = (_name_at(text, ws, m.end("kw")) if "kw" in rule.groupindex
                    else m.group("name") if "name" in rule.groupindex else None)
            if "kw" in rule.groupindex and name and _prose_label(text, ws, m, name):
                continue                              # ``Help Token:``, ``Next Page Token:``: a label in prose
            generic = name is not None and not name_is_secret(name)
            if generic and name.strip("\"'`[]").lower() not in GENERIC_NAMES:
                continue
            if "pairs" in rule.groupindex:
                base = m.start("pairs")
                for p in _PAIR.finditer(m.group("pairs")):
                    if plausible_value(p.group("uv")):
                        yield label, base + p.start("uv"), base + p.end("uv")
                continue
            span = _value_span(m)
            value = text[span[0]:span[1]] if span else ""
            if span and plausible_value(value, loose or _literal_here(text, m, name)) and (not generic or strong(value)):
                yield label, *span


def url_passwords(text: str, ws: int, we: int) -> Iterator[tuple[str, int, int]]:
    """``(label, start, end)`` of the passwords in URLs' userinfo inside ``text[ws:we]``."""
    for m in URL_PASSWORD.finditer(text, ws, we):
        if url_password(m.group("uv")):
            yield "URL Password", m.start("uv"), m.end("uv")


def url_password(value: str) -> bool:
    """Whether a URL's userinfo password could be real: not a placeholder nor a fixture word (``password``,
    ``PASSWORD``, ``pass``) nor a run into a next URL; short passwords count (a URL says what they are)."""
    if "://" in value:
        return False
    return plausible_value(value) or (len(value) >= 4 and not PLACEHOLDER.match(value)
                                      and re.sub(r"[\W_]+", "", value.lower()) not in FIXTURE_WORDS)
