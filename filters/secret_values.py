"""What a value found beside a secret's name must look like to be one: the precision guards of the context rules.

:func:`plausible_value` leaves alone placeholders (``<your-key>``, ``${VAR}``, ``xxxx``, ``***``), fixtures (a
known fixture word alone or with a simple number: ``password``, ``test``, ``secret123``, ``my-secret-key``; a word
with other digits or a symbol, ``Admin546?``, ``Test2291@``, is a real password), code (``args.token``,
``get_token()``, ``Optional[str]``, a bare identifier unless it looks random or is a word with a number such as
``Monkey2024``), words, numbers, versions, UUIDs, paths, prose and type expressions between quotes (``"str | None"``).
:func:`strong` and :func:`random_looking` are what a value needs beside a name too generic to say secret (``key``,
``X_PAT``, ``SESSION_COOKIE``).
"""
from __future__ import annotations

import functools
import re

_CLASS = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
                       "A" * 26 + "a" * 26 + "0" * 10)
#: the random part of a provider token changes character class at least this often (per 16 characters, at least 2)
MIN_SHIFTS = 4


def class_shifts(text: str) -> int:
    """How often consecutive characters of ``text`` change class (lower / upper / digit / other)."""
    flat = text.translate(_CLASS)
    return sum(a != b for a, b in zip(flat, flat[1:]))


def random_enough(part: str, group: str = "r") -> bool:
    """Random-looking: many distinct characters and class changes (a group named ``a…``, one-case base32:
    distinct characters only)."""
    distinct = len(set(part)) >= min(10, len(part) // 2)
    return distinct and (group.startswith("a") or class_shifts(part) >= max(MIN_SHIFTS, len(part) // 8))


#: values that are placeholders or fixtures, not secrets (lower case, non-alphanumerics dropped), alone or joined
FIXTURE_WORDS = frozenset({"password", "passwd", "pass", "secret", "token", "test", "testing", "tests", "changeme",
                           "example", "dummy", "fake", "mock", "sample", "placeholder", "redacted", "none", "null",
                           "true", "false", "admin", "root", "user", "guest", "default", "hunter", "letmein", "qwerty",
                           "foobar", "foo", "bar", "baz", "abc", "xyz", "demo", "empty", "hidden", "masked", "removed",
                           "required", "optional", "string", "str", "your", "my", "the", "a", "this", "is", "not", "so",
                           "very", "super", "new", "dev", "local", "app", "db", "api", "jwt", "key", "keys", "insecure",
                           "undefined", "value", "bearer", "basic", "auth", "env", "environ", "config", "settings",
                           "os", "self", "get", "set", "change", "me", "it", "in", "production", "prod", "here",
                           "please", "replace", "todo", "access", "private", "client", "some"})
_LONGEST_FIXTURE = max(map(len, FIXTURE_WORDS))
#: words that make a value a placeholder wherever they sit in it
PLACEHOLDER_PARTS = ("example", "dummy", "placeholder", "redacted")
_PLACEHOLDER_WHOLE = re.compile(
    r"(?i)(?:<[\w\s.:/|*-]*>?|<%.*|\[[^\[\]]*\]|\{[\w.]*\}?|\{[\w.]*\[[^\]]*\]\}|\(.*\)|%(?:\(\w+\))?[sd]|%\w+%|"
    r"\$(?-i:[A-Z_][A-Z0-9_]*|[a-z_][a-z0-9_]*)|\$\{.*|\$\([a-z_][\w .|/=-]*(?:\).*)?|\{\{.*|[x*.#_-]{3,}|(.)\1{3,}|(?:your|enter|insert|replace)\w*.*|"
    r"(?:my|the|some|example|sample|dummy|fake|test|mock|placeholder|changeme)(?:[_:.-][\w.:-]*)?|.*[_-]?here)")
#: a template's ``${…}`` / ``{{…}}``, ``***``, ``...``, a counting run
_PLACEHOLDER_INSIDE = re.compile(r"(?i)\$\{[^}]*\}|\{\{.*?\}\}|\*\*\*|\.\.\.|0123456|1234567|abcdefg")
#: capitalized words run together or joined by ``-``, as headers, classes and labels are named (``Authorization``,
#: ``Proxy-Authorization``, ``OtherInfo``): a name, not a password in mixed case
_CAPITALIZED = re.compile(r"(?:[A-Z][a-z]{2,})+(?:-(?:[A-Z][a-z]{2,})+|-[a-z]{3,})*")
#: a printf or ``str.format`` field (``%s``, ``%(user)s``, ``{}``, ``{0}``): the value is filled in elsewhere
_FORMAT_FIELD = re.compile(r"%(?:\(\w+\))?[-#0 +]*\d*(?:\.\d+)?[sdrifx](?![A-Za-z0-9])|\{\w*\}")
#: a date format's directives (``%Y-%m-%d %H:%M``): a value that is little else is a format, not a password
_DATE_DIRECTIVE = re.compile(r"%[A-Za-z]")
#: a placeholder's filler: a run of ``x`` or ``*``
_FILLER = re.compile(r"[xX]{4,}|\*{3,}")


def has_filler(text: str) -> bool:
    """Whether ``text`` holds a placeholder's filler, a run of ``x`` or ``*`` that is a quarter of it or more
    (``ghp_XXXXXXXX…``, ``sk-****``, ``<key-xxxx>``; four x in 3 000 random characters are chance)."""
    return any(m.end() - m.start() >= len(text) / 4 for m in _FILLER.finditer(text))


def placeholder(value: str) -> bool:
    """A placeholder, not a value: ``<your-key>``, ``${VAR}``, ``$VAR``, ``{token}``, ``%(pw)s``, ``xxxx``, ``****``,
    ``...``, ``your_…``, ``…_here``, ``test-…``, a template inside it, a date format."""
    value = value.strip("'\"`")
    if (_PLACEHOLDER_WHOLE.fullmatch(value) is not None or _PLACEHOLDER_INSIDE.search(value) is not None
            or has_filler(value)):
        return True
    rest = _DATE_DIRECTIVE.sub("", value)
    return len(value) - len(rest) >= 4 and sum(c.isalnum() for c in rest) <= 2


#: code, never a literal: a dotted name, a call, an index, a generic type (``self.cleaned_data[``, ``Optional[str``)
_CALL = re.compile(r"^(?:[A-Za-z_]\w*(?:\??\.[A-Za-z_]\w*)+(?:[(\[)<].*)?|"
                   r"(?:[a-z_][a-z0-9_]*|[a-z]+(?:[A-Z][a-z0-9]+)+)(?:[(\[][\w\"')\]*]|[(\[]$|\)\.).*|"
                   r"[A-Z][a-z0-9]*(?:[A-Z][a-z0-9]*)+\((?:[\w\"')*].*)?|[A-Z]\w*[\[<].*)$")
#: the characters code is written with, optional chaining's ``?.`` too (a value holding others, ``?`` ``#`` ``$``
#: ``%`` ``^`` ``~`` ``@``, is a literal)
_CODE_CHARS = re.compile(r"(?:[\w.\[\]()'\", =:|*+/<>!-]|\?\.)*")
_SEGMENTS = re.compile(r"[^A-Za-z0-9]+")
#: a bare name or a lower-case word: code unless it looks random
_IDENT = re.compile(r"^(?:@?[A-Za-z_]\w*\)*|[a-z]+(?:[_-][a-z]+)*)$")
#: a word and a number, as people choose passwords (``Monkey2024``), not a type or an encoding's name (``float32``)
_WORD_NUMBER = re.compile(r"^(?!(?i:base|sha|md|utf|u?int|float|python|py|ipv|aes|rsa|hs|rs|es|ps|tls|ssl|cp|iso|"
                          r"win|x|v|arm|amd|i)\d)[A-Za-z]{4,}\d{2,}$")
_UUID = re.compile(r"(?i)^[0-9a-f]{4,12}(?:-[0-9a-f]{4,12})+$")        # a UUID or groups of one
_VERSION = re.compile(r"^[v=<>~^]*\d+(?:\.\d+)+[\w.+-]*$|^\d{1,7}$")
_PATH = re.compile(r"^(?:~?/|\.\.?/)[\w.@+~%/-]*$|^[A-Za-z]:\\|^\w+://|"
                   r"\.(?:txt|json|ya?ml|pem|key|crt|env|cfg|ini|conf|py|sh|toml)$")
#: ``12:…``: a line number and the line, as grep prints them after a file name (``vocab.tiktoken:12:…``)
_GREP_LINE = re.compile(r"^\d+:")
#: a grammar's repetition (ABNF's ``token = 1*tchar``, ``1*<any CHAR>``), as a comment quoting an RFC writes it
_REPETITION = re.compile(r"^\d*\*\d*[A-Za-z<(\[\"]")
#: a word, a lower-case name, a number or an operator: a quoted value made only of these (and CamelCase names) is
#: prose or code, not a password
_PLAIN_CHUNK = re.compile(r"[A-Za-z][a-z']*[.,:;!?]?|[A-Z]+|\d+[.,]?|[a-z_][a-z0-9_.]*(?:\(\)|\[\])?[,:;]?|"
                          r"[-|&=+*/<>%#()\[\]{}]+")
MAX_SPACES = 3         # a quoted password may hold a few spaces; more is a sentence
MAX_SPACED = 40        # ... and is short
MIN_ALNUM = 0.15       # a password holds letters or digits; a run of punctuation is code (a regex, a sed script)
_UNICODE_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")


def _simple_digits(digits: str) -> bool:
    """No digits, one or two, a run counting up or down (``123``, ``4321``) or one digit repeated (``000``)."""
    return (len(digits) <= 2 or digits in "01234567890" or digits in "9876543210"
            or len(set(digits)) == 1)


def fixture(value: str) -> bool:
    """A known fixture word alone or joined with others (``test_password``, ``mysecretkey``, ``Secret``, ``foo$bar``),
    maybe with a simple number (``password123``); other digits, or digits and a symbol, make a real password
    (``Admin546``, ``letmein123!``)."""
    low = value.lower().strip("()[]{}<>,;:'\"`")
    core = re.sub(r"[_.\s:-]+", "", low)
    symbols = re.search(r"[^a-z0-9]", core) is not None
    m = re.fullmatch(r"([a-z]*)(\d*)", re.sub(r"[^a-z0-9]+", "", core) if symbols else core)
    return bool(m and m.group(1) and _fixture_words(m.group(1))
                and (not m.group(2) if symbols else _simple_digits(m.group(2))))


def _fixture_words(letters: str) -> bool:
    """Whether ``letters`` split into :data:`FIXTURE_WORDS` (``mysecretkey``: my, secret, key)."""
    ends = {0}
    for i in range(1, len(letters) + 1):
        if any(letters[j:i] in FIXTURE_WORDS for j in range(max(0, i - _LONGEST_FIXTURE), i) if j in ends):
            ends.add(i)
    return len(letters) in ends


def looks_random(value: str) -> bool:
    """Letters and digits changing class often (``Xk9fLq2.ZrTy81``), or random mixed-case letters."""
    core = re.sub(r"[\W_]+", "", value)
    return (any(c.isdigit() for c in core) and class_shifts(core) >= max(MIN_SHIFTS, len(core) // 4)
            or _random_letters(core))


def _random_word(value: str) -> bool:
    """A random-looking part of a value that is not a name written in CamelCase (``Xk9fLq2``, not
    ``SigningMethodHS256``), or 16+ capitals and digits run together (base32: ``MRUOIP5YBVFLVFXUOOINWWEGYQSLHWI3``;
    a constant's name has underscores)."""
    return (looks_random(value) and not camel_case(value)
            or len(value) >= 16 and value.isalnum() and value.isupper() and any(c.isdigit() for c in value))


#: two-letter words a name is made of (``getByName``, ``toJson``, ``userId``)
_SHORT_WORDS = frozenset({"by", "to", "of", "id", "ok", "is", "at", "in", "on", "up", "no", "or", "if", "as", "an",
                          "be", "do", "go", "my", "we", "it", "me", "so", "io", "db", "ui", "js", "os", "fs", "ip", "op",
                          "fn", "rx", "tx", "pk", "qa", "vm", "ex"})
#: vowel-less abbreviations names are made of (``getMsgCtx``)
_ABBREVIATIONS = frozenset({"ctx", "cfg", "msg", "str", "btn", "src", "dst", "ptr", "mgr", "svc", "pkg", "cmd", "lst",
                            "tmp", "pwd", "dlg", "wnd", "len", "num", "cnt", "idx", "std", "lib", "sql", "xml", "css",
                            "dns", "tcp", "http", "rpc", "sdk", "grpc", "bytes", "cls", "fmt", "img", "doc", "dt",
                            "nlp", "gpt", "llm", "jwt", "rsp", "req", "resp", "pkt", "vm", "fn", "srv", "mnt", "dbg"})
#: the words of a name written in CamelCase or camelCase: acronyms, words, numbers (``HTTPS``, ``Connection``)
_CAMEL_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z]|\d|$)|[A-Z]?[a-z]+|\d+")


def _random_letters(value: str) -> bool:
    """Random mixed-case letters rather than a CamelCase name: both cases, changing often, not words and acronyms."""
    return (len(value) >= 10 and value.isalnum() and not value.isupper() and not value.islower()
            and class_shifts(value) >= len(value) / 4 and not camel_case(value))


def camel_case(value: str) -> bool:
    """A name of words and acronyms (``HTTPSConnection``, ``getByLabelText``, ``TokenXRefRole``): every part holding
    lower case has three letters or more, is a two-letter word or comes first (``isOk``), where random letters leave
    short ones (``Xk9fLq2``: ``f``, ``Lq``), single capitals and vowel-less runs (``ADyrrPVFrjiIJukfTvemsQbp``);
    capitals and digits alone are no name (``JBSWY3DPEHPK3PXP``)."""
    parts = _CAMEL_PARTS.findall(value)
    return ("".join(parts) == value and value.upper() != value and sum(len(p) == 1 for p in parts) <= 1
            and all(_name_word(p, i == 0) for i, p in enumerate(parts)))


def _name_word(part: str, first: bool) -> bool:
    """A part of a name: digits, an acronym, a two-letter word (or any two letters first), a word with a vowel or a
    known abbreviation."""
    low = part.lower()
    if part.isdigit() or part.isupper() or low in _SHORT_WORDS or (first and len(part) == 2):
        return True
    return len(part) >= 3 and (re.search(r"[aeiouy]", low) is not None or low in _ABBREVIATIONS)


_WORD_RUN = re.compile(r"[A-Z]?[a-z]*[aeiouy][a-z]*")
MIN_WORDY = 0.7


def wordy(value: str) -> bool:
    """Whether words with vowels cover most of ``value`` (``doubleCheckedLockingIndirect2Test``): names and phrases
    written together, not random characters."""
    return sum(len(w) for w in _WORD_RUN.findall(value) if len(w) >= 3) >= MIN_WORDY * len(value)


def _repetitive(value: str) -> bool:
    """A short unit repeated (``ICAgICAg…``, ``0123456789abcdef0123456789abcdef``): few distinct 4-grams."""
    grams = {value[i:i + 4] for i in range(len(value) - 3)}
    return len(value) >= 16 and len(grams) < len(value) / 3


def _path(value: str) -> bool:
    """A path, a URL or a file name; a random-looking single segment after ``/`` is a password that opens with it, a
    segment mixing cases and digits is base64 (``/fS/xo7EXNz0gLUF2SwPWWdTL5us+7i…``)."""
    return bool(_PATH.search(value)) and not (value[:1] == "/" and value.count("/") == 1 and looks_random(value)
                                              or any(map(_mixed_run, value.split("/"))))


def _mixed_run(segment: str) -> bool:
    """16+ base64 characters mixing upper case, lower case and digits: base64, not a folder's name."""
    return (len(segment) >= 16 and re.fullmatch(r"[A-Za-z0-9+=_-]+", segment) is not None
            and any(c.isupper() for c in segment) and any(c.islower() for c in segment)
            and any(c.isdigit() for c in segment))


def _prose_or_code(value: str) -> bool:
    """A value with spaces that is a sentence, a type expression or code: more than :data:`MAX_SPACES` spaces, or
    only words, names, numbers and operators (``str | None``, ``correct horse battery staple``)."""
    chunks = value.split()
    return len(chunks) > MAX_SPACES + 1 or all(
        (_PLAIN_CHUNK.fullmatch(c) or camel_case(c.strip(".,:;()[]"))) and not looks_random(c) for c in chunks)


def passphrase(value: str) -> bool:
    """Four or more lower-case words joined by ``-`` (``correct-horse-battery-staple``), none a fixture word."""
    words = value.split("-")
    return (len(words) >= 4 and all(re.fullmatch(r"[a-z]{3,10}", w) for w in words)
            and not any(w in FIXTURE_WORDS for w in words))


@functools.lru_cache(maxsize=8192)
def plausible_value(value: str, loose: bool = False, literal: bool = False) -> bool:
    """Whether ``value`` could be a real secret: not a placeholder, fixture, code (unless ``loose``), word, number,
    version, UUID, path or prose (the rules run on text where a secret-named key sits right before it). A
    ``literal`` (a quoted string, an XML element's text, a shell or ``.env`` line's value) is code only when it is a
    balanced call or a dotted name of plain words (also after an opening bracket: ``(self.password.encode(``), and a
    name only in one case (``"EAxOy(YXpGuP"``, ``"Tiger3883.ah"``, ``"PirBAENVSictwKIM"`` are passwords;
    ``"access_token"``, ``settings.SECRET_KEY``, ``"Proxy-Authorization"`` are not). A format's fields
    (``"Basic %s"``) are not its text."""
    if "\\u" in value:                                # ``s\\u00e9same``: checked as written (``sésame``)
        value = _UNICODE_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), value)
    if not loose:                                     # ``"Basic %s" % auth``: the format's text is what is written
        value = _FORMAT_FIELD.sub("", value)
    alnum = sum(c.isalnum() for c in value)
    if (len(value) < 6 or len(set(value)) < (4 if loose else 5) or alnum < 3 or alnum < len(value) * MIN_ALNUM
            or fixture(value)):
        return False
    low = value.lower()
    if any(w in low for w in PLACEHOLDER_PARTS) or _repetitive(value) or not (loose or literal) and (
            _GREP_LINE.match(value) or _REPETITION.match(value)):
        return False
    if placeholder(value) or _UUID.match(value) or _VERSION.match(value) or _path(value):
        return False
    if any(c.isspace() for c in value) and (len(value) > MAX_SPACED or value != value.strip() or "\\n" in value
                                             or not loose and _prose_or_code(value)):
        return False
    if loose:
        return True
    if _CAPITALIZED.fullmatch(value) or value[:1] in "([" and value[1:].isalpha():
        return False                                  # ``(known after apply)``, ``(sensitive value)``: a remark
    segments = [seg for seg in _SEGMENTS.split(value) if seg]
    if (_CALL.match(value.lstrip("([")) and _CODE_CHARS.fullmatch(value) and not any(map(_random_word, segments))
            and not (literal and (not _balanced(value) or not all(map(_name_segment, segments))))):
        return False
    return not (_IDENT.match(value) and not (_random_word(value) or _WORD_NUMBER.match(value) or random_looking(value)
                                             or literal and (_mixed_case(value) or _WORD_NUMBER.match(value.strip("_")))))


def _mixed_case(value: str) -> bool:
    return len(value) >= 8 and any(c.isupper() for c in value) and any(c.islower() for c in value)


def _name_segment(segment: str) -> bool:
    """A part of a dotted name in a string (``settings.SECRET_KEY``): letters in one case or CamelCase, no digits
    (``"Tiger3883.ah"`` and ``"hYYFHVMgu.sIls"`` are passwords)."""
    return segment.isalpha() and (segment.islower() or segment.isupper() or camel_case(segment))


def _balanced(value: str) -> bool:
    return value.count("(") == value.count(")") and value.count("[") == value.count("]")


def strong(value: str) -> bool:
    """A random-looking token: 20+ characters mixing lower case, upper case and digits, changing class often."""
    return (len(value) >= 20 and any(c.islower() for c in value) and any(c.isupper() for c in value)
            and any(c.isdigit() for c in value) and class_shifts(value) >= len(value) // 4)


def random_looking(value: str) -> bool:
    """A machine-made token of 16+ characters: letters and digits, many distinct characters and class changes
    (hex and one-case base32 included: ``XQLLYPJPBVJJRSKNGDUWBKSTTS45BNYS``), not words joined by separators."""
    core = re.sub(r"[\W_]+", "", value)
    return (len(core) >= 16 and any(c.isdigit() for c in core) and any(c.isalpha() for c in core)
            and (random_enough(core) or value.isalnum() and value.isupper() and len(set(core)) >= 10)
            and not _repetitive(core))
