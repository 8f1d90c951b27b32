"""Planted credentials for measuring the scrubber's recall: seeded, random, well-formed values of every kind.

Each *kind* draws a fresh random value in its provider's documented shape (length and alphabet varied within
it) and wraps it in one of several contexts people leak it in (a shell ``export``, a ``.env`` line, YAML,
JSON, TOML, Python, a command-line flag, an HTTP header, a URL...). :func:`plant` puts such a snippet into one
*field* of a real record — a step's action text, tool arguments, observation or thought, the final patch, a
task's text, a source file the FIM miner reads, a reject's excerpt, a console line — and :func:`survives`
tells whether any part of the value is still there after scrubbing. ``benchmarks/secrets_recall.py`` runs
it over real runs of the corpora.
"""
from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable
from dataclasses import dataclass

LOWER, UPPER, DIGITS = string.ascii_lowercase, string.ascii_uppercase, string.digits
ALNUM = LOWER + UPPER + DIGITS
HEX = DIGITS + "abcdef"
B64 = ALNUM + "+/"
B64URL = ALNUM + "_-"
PUNCT = "!#$%&*+-.=?^_~@,;:()[]{}|"
#: the shortest part of a value that counts as a leak when it survives (shorter values must vanish whole)
WINDOW = 12


@dataclass(frozen=True)
class Planted:
    kind: str
    snippet: str       # the text planted (context + value)
    value: str         # what must not survive


def _s(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _b64(rng: random.Random, nbytes: int) -> str:
    return base64.b64encode(rng.randbytes(nbytes)).decode()


def _password(rng: random.Random, lo: int = 8, hi: int = 28, punct: str = PUNCT) -> str:
    """A password: random characters of a random mix of classes, or words, digits and a symbol."""
    n = rng.randint(lo, hi)
    style = rng.randrange(4)
    if style == 0:
        word = rng.choice(("Summer", "Winter", "Dragon", "Monkey", "Sunshine", "Falcon", "Tiger", "Orange"))
        return f"{word}{rng.randint(10, 9999)}{rng.choice(punct)}{_s(rng, ALNUM, 2)}"
    alphabet = (ALNUM, ALNUM + punct, LOWER + DIGITS + punct, UPPER + LOWER + punct)[style]
    while True:
        pw = _s(rng, alphabet, n)
        if sum(c.isalnum() for c in pw) >= 3 and any(c.isdigit() for c in pw) | any(c in punct for c in pw):
            return pw


def _token(rng: random.Random) -> str:
    """A shapeless API token: hex, alphanumeric, base64url or base64, 16-64 characters."""
    alphabet = rng.choice((HEX, ALNUM, B64URL, B64))
    while True:
        tok = _s(rng, alphabet, rng.randint(16, 64))
        if sum(c.isdigit() for c in tok) >= 2 and sum(c.isalpha() for c in tok) >= 4:
            return tok


def _secret_name(rng: random.Random, words: tuple[str, ...] = ()) -> str:
    service = rng.choice(("", "GH", "GITHUB", "DB", "MYSQL", "POSTGRES", "REDIS", "APP", "SERVICE", "STRIPE", "ADMIN",
                          "SMTP", "JIRA", "SLACK", "DEPLOY", "CI", "REGISTRY", "OPENAI", "BACKEND", "MY_SERVICE"))
    word = rng.choice(words or ("TOKEN", "API_KEY", "APIKEY", "SECRET", "SECRET_KEY", "PASSWORD", "PASSWD",
                                "ACCESS_TOKEN", "AUTH_TOKEN", "CLIENT_SECRET", "PRIVATE_KEY", "ACCESS_KEY", "CREDENTIALS"))
    return f"{service}_{word}" if service else word


def _case(rng: random.Random, name: str) -> str:
    """``name`` as written in some language: UPPER_SNAKE, lower_snake or camelCase."""
    style = rng.randrange(3)
    if style == 0:
        return name
    if style == 1:
        return name.lower()
    head, *rest = name.lower().split("_")
    return head + "".join(w.capitalize() for w in rest)


def assignment(rng: random.Random, value: str, name: str | None = None) -> str:
    """``value`` assigned to a secret-named variable in shell, .env, YAML, JSON, TOML or Python."""
    name = name or _secret_name(rng)
    q = rng.choice(("", '"', "'")) if all(c not in value for c in "'\" ;&|$`") else "'"
    forms = (
        lambda: f"export {name}={q}{value}{q}",
        lambda: f"{name}={q}{value}{q}",
        lambda: f"{_case(rng, name)}: {value}" if q == "" else f"{_case(rng, name)}: {q}{value}{q}",
        lambda: f'    "{_case(rng, name)}": "{value}",',
        lambda: f'{_case(rng, name).lower()} = "{value}"',
        lambda: f'{name} = "{value}"',
        lambda: f'os.environ["{name}"] = "{value}"',
        lambda: f'client = Client({_case(rng, name).lower()}="{value}")',
        lambda: f"      - {name}={value}",
        lambda: f'env {name}={q}{value}{q} python run.py',
        lambda: f"set {name}={value}",
        lambda: f'{{"{_case(rng, name)}":"{value}","retries":3}}',
    )
    return rng.choice(forms)()


def flag(rng: random.Random, value: str) -> str:
    """``value`` after a secret-named command-line flag."""
    cmd = rng.choice(("python deploy.py", "./manage.sh", "docker login registry.example.io -u ci", "twine upload dist/*",
                      "huggingface-cli login", "gh auth login", "psql -h db -U app", "ansible-vault view",
                      "node cli.js", "java -jar tool.jar", "kubectl create secret generic app", "helm install x"))
    name = rng.choice(("--password", "--passwd", "--token", "--api-key", "--apikey", "--auth-token", "--secret",
                       "--access-token", "--client-secret", "--db-password", "--api_key", "--from-literal=password"))
    sep = "=" if name.endswith("password") and "literal" in name else rng.choice(("=", " "))
    q = rng.choice(("", "'", '"')) if all(c not in value for c in "'\" ;&|$`") else "'"
    return f"{cmd} {name}{sep}{q}{value}{q}"


def _url_password(rng: random.Random) -> str:
    return _password(rng, 6, 24, punct="!#$%^&*()-_+=~.,;[]{}|@")


KindGen = Callable[[random.Random], tuple[str, str]]


def _pick(rng: random.Random, value: str, *contexts: Callable[[str], str]) -> tuple[str, str]:
    return rng.choice(contexts)(value), value


def _shaped(make: Callable[[random.Random], str], *extra: Callable[[random.Random, str], str]) -> KindGen:
    """A kind with a recognisable shape: planted bare in prose or output, assigned, or in the ``extra`` contexts."""
    def gen(rng: random.Random) -> tuple[str, str]:
        value = make(rng)
        forms = [lambda v: f"the key is {v} (rotate it)", lambda v: v, lambda v: f"'{v}'",
                 lambda v: assignment(rng, v), lambda v: f"Using credentials: {v}\n",
                 *[(lambda v, f=f: f(rng, v)) for f in extra]]
        return rng.choice(forms)(value), value
    return gen


def _named(words: tuple[str, ...], make: Callable[[random.Random], str],
           *extra: Callable[[random.Random, str], str]) -> KindGen:
    """A kind without a shape of its own: assigned to a variable named for its provider, or ``extra`` contexts."""
    def gen(rng: random.Random) -> tuple[str, str]:
        value = make(rng)
        forms = [lambda v: assignment(rng, v, rng.choice(words)), *[(lambda v, f=f: f(rng, v)) for f in extra]]
        return rng.choice(forms)(value), value
    return gen


def _pem(rng: random.Random, kind: str) -> str:
    body = _b64(rng, rng.randint(200, 1200))
    lines = [body[i:i + 64] for i in range(0, len(body), 64)]
    return "\n".join([f"-----BEGIN {kind}PRIVATE KEY-----", *lines, f"-----END {kind}PRIVATE KEY-----"])


def _pem_kind(rng: random.Random) -> tuple[str, str]:
    kind = rng.choice(("", "RSA ", "EC ", "DSA ", "OPENSSH ", "ENCRYPTED "))
    block = _pem(rng, kind)
    value = block.split("\n", 1)[1].rsplit("\n", 1)[0]          # the body
    style = rng.randrange(3)
    if style == 0:
        return f"$ cat ~/.ssh/id_rsa\n{block}\n", value
    if style == 1:          # lines joined by \n inside a JSON string (service-account files, API payloads)
        return json.dumps({"type": "service_account", "private_key": block + "\n"})[1:-1], value
    return f'KEY = """{block}"""', value


def _google_sa(rng: random.Random) -> tuple[str, str]:
    block = _pem(rng, "")
    doc = {"type": "service_account", "project_id": f"proj-{_s(rng, LOWER + DIGITS, 6)}",
           "private_key_id": _s(rng, HEX, 40), "private_key": block + "\n",
           "client_email": "svc@proj.iam.gserviceaccount.com"}
    text = json.dumps(doc, indent=rng.choice((None, 2)))
    return text, block.split("\n", 1)[1].rsplit("\n", 1)[0]


def _aws_session(rng: random.Random) -> str:
    return rng.choice(("IQoJb3JpZ2luX2Vj", "FwoGZXIvYXdzE")) + _b64(rng, rng.randint(150, 600)).rstrip("=")


def _azure_conn(rng: random.Random) -> tuple[str, str]:
    key = _b64(rng, 64)
    account = _s(rng, LOWER + DIGITS, rng.randint(5, 16))
    if rng.random() < 0.5:
        return (f"DefaultEndpointsProtocol=https;AccountName={account};AccountKey={key};"
                f"EndpointSuffix=core.windows.net"), key
    sb = _b64(rng, 32)
    return (f"Endpoint=sb://{account}.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;"
            f"SharedAccessKey={sb}"), sb


def _azure_sas(rng: random.Random) -> tuple[str, str]:
    sig = _b64(rng, 32).replace("+", "%2B").replace("/", "%2F").replace("=", "%3D")
    account = _s(rng, LOWER + DIGITS, 8)
    return (f"https://{account}.blob.core.windows.net/data/file.csv?sv=2022-11-02&ss=b&srt=sco&sp=rl"
            f"&se=2026-01-01T00:00:00Z&st=2025-01-01T00:00:00Z&spr=https&sig={sig}"), sig


def _webhook(rng: random.Random, slack: bool) -> tuple[str, str]:
    """A Slack or Discord webhook URL in some context; the value is its secret last part (the ids are not)."""
    if slack:
        secret = _s(rng, ALNUM, 24)
        url = (f"https://hooks.slack.com/services/T{_s(rng, UPPER + DIGITS, rng.randint(8, 10))}/"
               f"B{_s(rng, UPPER + DIGITS, rng.randint(8, 10))}/{secret}")
    else:
        secret = _s(rng, B64URL, 68)
        url = f"https://discord.com/api/webhooks/{_s(rng, DIGITS, 18)}/{secret}"
    return rng.choice((url, f"curl -X POST -d @msg.json {url}", assignment(rng, url, "WEBHOOK_URL"),
                       f"posting to {url} failed")), secret


def _discord(rng: random.Random) -> str:
    user = base64.b64encode(str(rng.randint(10 ** 17, 10 ** 19)).encode()).decode().rstrip("=")
    return f"{user}.{_s(rng, B64URL, 6)}.{_s(rng, B64URL, rng.randint(27, 38))}"


def _jwt(rng: random.Random) -> str:
    def seg(obj):
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")
    head = seg({"alg": rng.choice(("HS256", "RS256")), "typ": "JWT"})
    body = seg({"sub": str(rng.randint(1, 10 ** 9)), "iat": rng.randint(1.6e9, 1.8e9), "role": "admin"})
    return f"{head}.{body}.{base64.urlsafe_b64encode(rng.randbytes(rng.choice((32, 64)))).decode().rstrip('=')}"


def _sentry(rng: random.Random) -> tuple[str, str]:
    key = _s(rng, HEX, 32)
    host = rng.choice((f"o{rng.randint(10 ** 4, 10 ** 7)}.ingest.sentry.io", "sentry.io",
                       f"o{rng.randint(1000, 99999)}.ingest.us.sentry.io", "sentry.internal.example.org"))
    dsn = f"https://{key}@{host}/{rng.randint(1, 9999999)}"
    return rng.choice((dsn, f"SENTRY_DSN={dsn}", f'sentry_sdk.init(dsn="{dsn}")')), key


def _url_userinfo(rng: random.Random) -> tuple[str, str]:
    pw = _url_password(rng)
    user = rng.choice(("deploy", "admin", "oauth2", "x-access-token", "root", "ci-bot", "user.name"))
    host = rng.choice(("github.com/acme/app.git", "gitlab.example.com/x/y.git", "db.internal:5432/app",
                       "10.0.0.5:6379/0", "rabbit.local:5672//", "cluster0.ab1cd.mongodb.net/db?retryWrites=true",
                       "registry.example.io/v2/"))
    scheme = rng.choice(("https", "http", "postgres", "postgresql", "mysql", "redis", "amqp", "mongodb+srv", "ftp"))
    url = f"{scheme}://{user}:{pw}@{host}"
    return rng.choice((f"git clone {url}", url, f'DATABASE_URL="{url}"', f"remote: {url}", f"pip install git+{url}")), pw


def _curl_user(rng: random.Random) -> tuple[str, str]:
    pw = _password(rng, 8, 24, punct="!#%*+-.=?^_~@,:[]{}")
    user = rng.choice(("admin", "api", "jenkins", "me@example.com", "svc_user"))
    form = rng.choice((f"curl -u {user}:{pw} https://api.example.com/v1/items",
                       f"curl -s --user '{user}:{pw}' -X POST https://ci.example.org/job/build",
                       f"curl -fsSL -u \"{user}:{pw}\" https://repo.example.net/artifact.tgz -o a.tgz"))
    return form, pw


def _mysql(rng: random.Random) -> tuple[str, str]:
    pw = _password(rng, 6, 20, punct="!#%*+-.=?^_~@,:")
    tool = rng.choice(("mysql", "mysqldump", "mysqladmin", "mariadb"))
    q = rng.choice(("", "'", '"'))
    tail = rng.choice(("app", "shop_db", '-e "SHOW TABLES"', "< dump.sql"))
    return f"{tool} -h 127.0.0.1 -u root -p{q}{pw}{q} {tail}", pw


def _header(rng: random.Random) -> tuple[str, str]:
    scheme = rng.choice(("Bearer ", "Bearer ", "Token ", "token ", "Basic ", "Bot ", ""))
    value = _b64(rng, rng.randint(12, 40)) if scheme == "Basic " else _token(rng)
    header = rng.choice(("Authorization", "authorization", "Proxy-Authorization"))
    forms = (f"{header}: {scheme}{value}", f'curl -H "{header}: {scheme}{value}" https://api.example.com/v2/me',
             f'headers = {{"{header}": "{scheme}{value}"}}', f"> {header}: {scheme}{value}\r\n> Accept: */*")
    return rng.choice(forms), value


def _api_key_header(rng: random.Random) -> tuple[str, str]:
    value = _token(rng)
    name = rng.choice(("X-API-Key", "x-api-key", "api-key", "X-Auth-Token", "PRIVATE-TOKEN", "X-Goog-Api-Key",
                       "X-Access-Token", "apikey"))
    return rng.choice((f"{name}: {value}", f"curl -H '{name}: {value}' https://svc.example.com/",
                       f'requests.get(url, headers={{"{name}": "{value}"}})')), value


def _cookie(rng: random.Random) -> tuple[str, str]:
    value = _s(rng, rng.choice((ALNUM, HEX, B64URL)), rng.randint(20, 48))
    name = rng.choice(("sessionid", "session", "_session_id", "connect.sid", "PHPSESSID", "auth", "sid"))
    header = rng.choice(("Cookie", "cookie", "Set-Cookie"))
    return rng.choice((f"{header}: {name}={value}; theme=dark", f"{header}: lang=en; {name}={value}",
                       f'curl -b "{name}={value}" https://shop.example.com/cart',
                       f"-H '{header}: {name}={value}'")), value


def _cloud_conn(rng: random.Random) -> tuple[str, str]:
    pw = _password(rng, 8, 24, punct="!#%*+-.=?^_~@,:[]{}|")
    server = _s(rng, LOWER, 8)
    forms = (f"Server=tcp:{server}.database.windows.net,1433;Initial Catalog=app;User ID=sa;Password={pw};"
             "Encrypt=True;",
             f"Driver={{ODBC Driver 18 for SQL Server}};Server={server};Database=db;UID=app;PWD={pw};",
             f"jdbc:postgresql://{server}.rds.amazonaws.com:5432/app?user=app&password={pw}",
             f"Host={server};Port=5432;Username=app;Password={pw};Database=db")
    return rng.choice(forms), pw


def _netrc(rng: random.Random) -> tuple[str, str]:
    value = _s(rng, HEX, 40) if rng.random() < 0.5 else _password(rng)
    host = rng.choice(("api.wandb.ai", "github.com", "pypi.org", "urs.earthdata.nasa.gov"))
    return f"machine {host}\n  login user\n  password {value}\n", value


def _wandb_login(rng: random.Random, value: str) -> str:
    return rng.choice((f"wandb login {value}", f'wandb.login(key="{value}")', f"wandb login --relogin {value}"))


def _ngrok_cmd(rng: random.Random, value: str) -> str:
    return rng.choice((f"ngrok config add-authtoken {value}", f"ngrok authtoken {value}",
                       f"authtoken: {value}"))


def _hex(n: int) -> Callable[[random.Random], str]:
    return lambda rng: _s(rng, HEX, n)


def _alnum(lo: int, hi: int | None = None) -> Callable[[random.Random], str]:
    return lambda rng: _s(rng, ALNUM, rng.randint(lo, hi or lo))


def _prefixed(prefix: str | tuple[str, ...], alphabet: str, lo: int, hi: int | None = None) -> Callable:
    def make(rng: random.Random) -> str:
        head = rng.choice(prefix) if isinstance(prefix, tuple) else prefix
        return head + _s(rng, alphabet, rng.randint(lo, hi or lo))
    return make


def _openai_legacy(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return f"sk-{_s(rng, ALNUM, 20)}T3BlbkFJ{_s(rng, ALNUM, 20)}"
    return "sk-" + _s(rng, ALNUM, 48)


def _openai_project(rng: random.Random) -> str:
    n = rng.randint(40, 74)
    return f"sk-proj-{_s(rng, B64URL, n)}T3BlbkFJ{_s(rng, B64URL, n)}"


def _openai_svc(rng: random.Random) -> str:
    head = rng.choice(("sk-svcacct-", "sk-admin-", "sk-None-"))
    return f"{head}{_s(rng, B64URL, rng.randint(40, 74))}T3BlbkFJ{_s(rng, B64URL, rng.randint(40, 74))}"


def _github_pat(rng: random.Random) -> str:
    return f"github_pat_11{_s(rng, UPPER + DIGITS, 20)}_{_s(rng, ALNUM, 59)}"


def _bitbucket(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return "ATBB" + _s(rng, ALNUM, 32)
    return rng.choice(("ATATT3xFfGF0", "ATCTT3xFfGN0")) + _s(rng, B64URL + "=", rng.randint(150, 190))


def _slack_token(rng: random.Random) -> str:
    kind = rng.randrange(3)
    if kind == 0:
        return f"xoxb-{_s(rng, DIGITS, rng.randint(10, 13))}-{_s(rng, DIGITS, rng.randint(10, 13))}-{_s(rng, ALNUM, 24)}"
    if kind == 1:
        return (f"xoxp-{_s(rng, DIGITS, 12)}-{_s(rng, DIGITS, 12)}-{_s(rng, DIGITS, 13)}-"
                f"{_s(rng, HEX, 32)}")
    return f"xapp-1-A{_s(rng, UPPER + DIGITS, 10)}-{_s(rng, DIGITS, 13)}-{_s(rng, HEX, 64)}"


def _telegram(rng: random.Random) -> str:
    return f"{rng.randint(10 ** 7, 10 ** 10 - 1)}:AA{_s(rng, B64URL, 33)}"


def _stripe(prefixes: tuple[str, ...]) -> Callable[[random.Random], str]:
    return lambda rng: rng.choice(prefixes) + _s(rng, ALNUM, rng.choice((24, 34, 99)))


def _aws_key_id(rng: random.Random) -> str:
    return rng.choice(("AKIA", "ASIA")) + _s(rng, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)


def _aws_secret(rng: random.Random) -> str:
    while True:
        key = _s(rng, B64, 40)
        if any(c.isdigit() for c in key):
            return key


def _pypi(rng: random.Random) -> str:
    return rng.choice(("pypi-AgEIcHlwaS5vcmc", "pypi-AgENdGVzdC5weXBpLm9yZw")) + _s(rng, B64URL, rng.randint(70, 180))


def _ngrok(rng: random.Random) -> str:
    return f"{rng.randint(1, 2)}{_s(rng, ALNUM, 26)}_{_s(rng, ALNUM, 21)}"


def _together(rng: random.Random) -> str:
    """A Together AI key: the legacy 64 hex digits or the ``tgp_v1_`` form."""
    return _s(rng, HEX, 64) if rng.random() < 0.5 else "tgp_v1_" + _s(rng, B64URL, 43)


def _aws_secret_ctx(rng: random.Random, value: str) -> str:
    return rng.choice((f"aws_secret_access_key = {value}", f'"SecretAccessKey": "{value}"',
                       f"AWS_SECRET_ACCESS_KEY={value}"))


def _session_ctx(rng: random.Random, value: str) -> str:
    return rng.choice((f"aws_session_token = {value}", f'"SessionToken": "{value}",', f"export AWS_SESSION_TOKEN={value}"))


def _bare_key(rng: random.Random, value: str) -> str:
    return rng.choice((f"client = Client('{value}')", f"key: {value}", f"-> {value}"))


#: words people build passwords from (not the words any rule knows)
_PW_WORDS = ("Harbor", "Maple", "Violet", "Copper", "Nimbus", "Pepper", "Quartz", "Lantern", "Willow", "Ember", "Admin",
             "Welcome", "Test", "Secret", "Qwerty", "Spring")
_PASSPHRASE_WORDS = ("river", "candle", "orbit", "pickle", "granite", "meadow", "tundra", "falcon", "velvet", "sprout",
                     "lemon", "harbor", "ginger", "comet", "basalt", "walnut")


def _human_password(rng: random.Random) -> str:
    """A password a person chose: a word with digits and a symbol (``Maple4471#``, ``Admin546?``), random letters
    of both cases, a passphrase of words joined by ``-``, or random characters holding quotes, ``$``, a backslash,
    a space, ``.`` or ``(``."""
    style = rng.randrange(5)
    if style == 0:
        word = rng.choice(_PW_WORDS)
        return f"{word if rng.random() < 0.7 else word.lower()}{rng.randint(10, 99999)}{rng.choice('!@#$%&*?^')}"
    if style == 1:
        while True:
            pw = _s(rng, UPPER + LOWER, rng.randint(10, 22))
            if sum(c.isupper() for c in pw) >= 3 and sum(c.islower() for c in pw) >= 3:
                return pw
    if style == 2:
        return "-".join(rng.sample(_PASSPHRASE_WORDS, rng.randint(4, 5)))
    inner = rng.choice(("'", '"', "$", "\\", " ", ".", "(", "%", "|", ";"))
    head, tail = _s(rng, ALNUM, rng.randint(4, 9)), _s(rng, ALNUM + "!#*+-=?@^_~", rng.randint(4, 10))
    return f"{head}{inner}{tail}"


def _password_ctx(rng: random.Random, value: str) -> str:
    """``value`` in a place only a password goes, quoted so that it stays as written."""
    name = rng.choice(("DB_PASSWORD", "POSTGRES_PASSWORD", "ADMIN_PASS", "SMTP_PASSWORD", "REDIS_PASSWORD",
                       "MYSQL_ROOT_PASSWORD", "KEYSTORE_PASSWORD", "passphrase"))
    if "'" not in value and "\\" not in value:
        sq = f"'{value}'"
        forms = [f"export {name}={sq}", f"  {name}: {sq}", f"{name} = {sq}", f"os.environ.setdefault('{name}', {sq})",
                 f"pw = os.getenv('{name}', {sq})", f"setx {name} {sq}", f"$env:{name}={sq}",
                 f"process.env.{name} = {sq};", f"mysqldump -u root --password={sq} shop > dump.sql"]
    else:
        forms = []
    if not any(c in value for c in "\"$\\`"):
        dq = f'"{value}"'
        forms += [f"{name}={dq}", f'os.Setenv("{name}", {dq})', f'  environment:\n    {name}: {dq}',
                  f'bash -c "export {name}=\\"{value}\\" && make migrate"']
    if not any(c in value for c in "\"\\"):          # a JSON document would escape them: not the value as written
        forms += [json.dumps({name.lower(): value, "host": "db.internal", "port": 5432}),
                  json.dumps({"command": f"{name}={json.dumps(value)} ./deploy.sh"})]
    if all(c not in value for c in "<&"):
        forms.append(f"<server>\n  <id>releases</id>\n  <username>ci</username>\n  <password>{value}</password>\n</server>")
    if all(c not in value for c in "|`"):
        forms.append(f"| Setting | Value |\n|---|---|\n| `{name}` | `{value}` |")
    return rng.choice(forms)


def _password_tool(rng: random.Random, value: str) -> str:
    """``value`` given to a tool that takes a password on its command line (or reads it from standard input)."""
    q = "'" if "'" not in value else '"'
    v = f"{q}{value}{q}"
    return rng.choice((f"sshpass -p {v} scp build.tgz deploy@10.0.3.7:/srv/", f"redis-cli -h cache -p 6380 -a {v} INFO",
                       f"ldapwhoami -H ldap://dc1 -D 'uid=svc,ou=apps' -w {v}",
                       f"smbclient //files/public -U {q}backup%{value}{q} -c ls",
                       f"az login --service-principal -u 7c0f-app -p {v} --tenant example.onmicrosoft.com",
                       f"openssl pkcs12 -export -in c.pem -out c.p12 -passout pass:{value}" if " " not in value else
                       f"openssl enc -d -aes-256-cbc -k {v} -in backup.enc",
                       f"htpasswd -bc /etc/nginx/.htpasswd ops {v}", f"sqlcmd -S tcp:db,1433 -U sa -P {v} -i init.sql",
                       f"rabbitmqctl change_password worker {v}", f"twine upload --repository internal -p {v} dist/*",
                       f"mongodump --uri mongodb://db -u root -p {v} --out /tmp/dump",
                       f"printf '%s' {v} | docker login registry.example.io -u ci --password-stdin",
                       f'ftp.login("uploader", {json.dumps(value)})'))


#: names of secrets in the forms people write them: qualified ``_KEY`` names, ``_PAT``, an encoded value's suffix,
#: connection strings, credentials, salts, TOTP seeds, cookies, dotted configuration keys
_NAMES = ("GCP_SA_KEY", "SA_KEY", "HMAC_KEY", "OPENAI_KEY", "LLM_KEY", "JWT_KEY", "GH_PAT", "ADO_PAT", "CR_PAT",
          "GOOGLE_CREDENTIALS_B64", "SERVICE_ACCOUNT_KEY_JSON", "CONN_STR", "DB_CONNECTION_STRING", "CREDS",
          "BASIC_AUTH", "AUTH_HEADER", "PASSWORD_SALT", "TOTP_SEED", "MFA_SEED", "SESSION_COOKIE", "app.api.key",
          "spring.datasource.password", "api.secret", "settings.jwt_secret")


def _named_ctx(rng: random.Random, value: str) -> tuple[str, str]:
    """A random value assigned to a name of :data:`_NAMES`, or passed with the name as a string, or in a URL's query."""
    name = rng.choice(_NAMES)
    forms = (f"{name}={value}", f'{name}: "{value}"', f"export {name}='{value}'",
             f"os.environ.setdefault({name!r}, {value!r})", f'os.Setenv("{name}", "{value}")',
             f"<{name.replace('.', '_')}>{value}</{name.replace('.', '_')}>",
             f"GET /v2/feed?{rng.choice(('key', 'auth', 'api_key', 'access_token', 'token'))}={value}&page=2 HTTP/1.1")
    return rng.choice(forms), value


def _named_value(rng: random.Random) -> tuple[str, str]:
    value = rng.choice((_token(rng), _s(rng, HEX, 64), _s(rng, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 32),
                        _b64(rng, rng.randint(24, 48))))
    return _named_ctx(rng, value)


def _long_value(rng: random.Random) -> tuple[str, str]:
    """A value of 2 500-4 000 characters (a base64 service-account key, a session token), taken whole."""
    value = _b64(rng, rng.randint(1900, 3000))
    return rng.choice((f"GOOGLE_APPLICATION_CREDENTIALS_B64='{value}'", f"  api-token: {value}",
                       f"Authorization: Bearer {value.rstrip('=')}", f'{{"session_token": "{value}"}}')), value.rstrip("=")


def _pem_b64(rng: random.Random) -> tuple[str, str]:
    """A PEM private key in base64: a kubeconfig's ``client-key-data``, a Secret's ``data:``, a ``_B64`` variable."""
    value = base64.b64encode((_pem(rng, rng.choice(("", "RSA ", "EC "))) + "\n").encode()).decode()
    return rng.choice((f"users:\n- name: admin\n  user:\n    client-key-data: {value}\n",
                       f"kind: Secret\ndata:\n  tls.key: {value}\n", f"SIGNING_KEY_B64={value}", value)), value


def _sa_b64(rng: random.Random) -> tuple[str, str]:
    """A Google service-account file in base64, as CI variables hold it."""
    doc = {"type": "service_account", "project_id": f"p-{_s(rng, LOWER, 6)}", "private_key": _pem(rng, "") + "\n",
           "client_email": "deployer@p.iam.gserviceaccount.com"}
    value = base64.b64encode(json.dumps(doc, indent=rng.choice((None, 2))).encode()).decode()
    return rng.choice((f"echo {value} | base64 -d > sa.json", f"    GCP_SA_KEY: {value}", value)), value


#: kind -> generator of ``(snippet, value)``
KINDS: dict[str, KindGen] = {
    "openai_legacy": _shaped(_openai_legacy),
    "openai_project": _shaped(_openai_project),
    "openai_service_account": _shaped(_openai_svc),
    "anthropic_api": _shaped(lambda r: f"sk-ant-api03-{_s(r, B64URL, 93)}AA"),
    "anthropic_admin": _shaped(lambda r: f"sk-ant-admin01-{_s(r, B64URL, 93)}AA"),
    "huggingface": _shaped(_prefixed("hf_", UPPER + LOWER, 34),
                           lambda r, v: f"huggingface-cli login --token {v}"),
    "huggingface_org": _shaped(_prefixed("api_org_", UPPER + LOWER, 34)),
    "github_classic": _shaped(_prefixed(("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), ALNUM, 36),
                              lambda r, v: f"git clone https://{v}@github.com/acme/private.git"),
    "github_fine_grained": _shaped(_github_pat, lambda r, v: f"git remote set-url origin https://x:{v}@github.com/a/b"),
    "gitlab": _shaped(_prefixed(("glpat-", "gldt-", "glrt-", "glptt-", "gloas-"), B64URL, 20, 26)),
    "bitbucket": _shaped(_bitbucket),
    "slack_token": _shaped(_slack_token),
    "slack_webhook": lambda r: _webhook(r, True),
    "discord_bot": _shaped(_discord, lambda r, v: f"client.run('{v}')"),
    "discord_webhook": lambda r: _webhook(r, False),
    "telegram_bot": _shaped(_telegram, lambda r, v: f"https://api.telegram.org/bot{v}/sendMessage"),
    "stripe_secret": _shaped(_stripe(("sk_live_", "sk_test_"))),
    "stripe_restricted": _shaped(_stripe(("rk_live_", "rk_test_"))),
    "google_api_key": _shaped(_prefixed("AIza", B64URL, 35),
                              lambda r, v: f"https://maps.googleapis.com/maps/api/geocode/json?address=x&key={v}"),
    "google_oauth_secret": _shaped(_prefixed("GOCSPX-", B64URL, 28),
                                   lambda r, v: f'{{"installed":{{"client_id":"1-x.apps.googleusercontent.com",'
                                                f'"client_secret":"{v}"}}}}'),
    "google_service_account": _google_sa,
    "aws_key_id": _shaped(_aws_key_id),
    "aws_secret_key": _named(("AWS_SECRET_ACCESS_KEY", "aws_secret_access_key", "SECRET_ACCESS_KEY"), _aws_secret,
                             _aws_secret_ctx, _bare_key),
    "aws_session_token": _shaped(_aws_session, _session_ctx),
    "azure_storage_key": _named(("AZURE_STORAGE_KEY", "ACCOUNT_KEY", "STORAGE_ACCOUNT_KEY"), lambda r: _b64(r, 64),
                                lambda r, v: f"az storage blob list --account-key {v}", _bare_key),
    "azure_connection_string": _azure_conn,
    "azure_sas": _azure_sas,
    "npm": _shaped(_prefixed("npm_", ALNUM, 36), lambda r, v: f"//registry.npmjs.org/:_authToken={v}"),
    "pypi": _shaped(_pypi, lambda r, v: f"[pypi]\n  username = __token__\n  password = {v}\n"),
    "dockerhub": _shaped(_prefixed(("dckr_pat_", "dckr_oat_"), B64URL, 27),
                         lambda r, v: f"echo {v} | docker login -u acme --password-stdin"),
    "wandb": _named(("WANDB_API_KEY", "wandb_api_key"), _hex(40), _wandb_login),
    "groq": _shaped(_prefixed("gsk_", ALNUM, 52)),
    "openrouter": _shaped(lambda r: "sk-or-v1-" + _s(r, HEX, 64)),
    "replicate": _shaped(_prefixed("r8_", ALNUM, 37)),
    "together": _named(("TOGETHER_API_KEY", "together_api_key"), _together),
    "mistral": _named(("MISTRAL_API_KEY", "mistral_api_key"), _alnum(32), _bare_key),
    "cohere": _named(("COHERE_API_KEY", "CO_API_KEY", "cohere_api_key"), _alnum(40), _bare_key),
    "deepseek": _shaped(lambda r: "sk-" + _s(r, HEX, 32)),
    "perplexity": _shaped(_prefixed("pplx-", ALNUM, 48)),
    "xai": _shaped(_prefixed("xai-", ALNUM, 80)),
    "fireworks": _shaped(_prefixed("fw_", ALNUM, 24)),
    "ngrok": _named(("NGROK_AUTHTOKEN", "NGROK_API_KEY"), _ngrok, _ngrok_cmd, _bare_key),
    # an SK… / AC… SID names a key or an account; the secret is the key's 32-character secret beside it
    "twilio": _named(("TWILIO_API_SECRET", "TWILIO_API_KEY_SECRET", "twilio_api_secret"), _alnum(32)),
    "twilio_auth_token": _named(("TWILIO_AUTH_TOKEN", "twilio_auth_token"), _hex(32)),
    "sendgrid": _shaped(lambda r: f"SG.{_s(r, B64URL, 22)}.{_s(r, B64URL, 43)}"),
    "mailgun": _shaped(lambda r: "key-" + _s(r, HEX, 32)),
    "datadog": _named(("DD_API_KEY", "DATADOG_API_KEY", "DD_APP_KEY", "DD_APPLICATION_KEY"), lambda r: _s(
        r, HEX, r.choice((32, 40)))),
    "sentry_dsn": _sentry,
    "jwt": _shaped(_jwt, lambda r, v: f"Authorization: Bearer {v}"),
    "private_key": _pem_kind,
    # secrets without a shape: found by their context
    "env_assignment": lambda r: _pick(r, _password(r) if r.random() < 0.5 else _token(r),
                                      lambda v: assignment(r, v)),
    "cli_flag": lambda r: _pick(r, _password(r) if r.random() < 0.5 else _token(r), lambda v: flag(r, v)),
    "mysql_password": _mysql,
    "curl_user": _curl_user,
    "auth_header": _header,
    "api_key_header": _api_key_header,
    "cookie": _cookie,
    "url_password": _url_userinfo,
    "connection_string": _cloud_conn,
    # formats with a documented prefix
    "wandb_v1": _shaped(lambda r: f"wandb_v1_{_s(r, ALNUM, 50)}_{_s(r, ALNUM, 26)}", _wandb_login),
    "django_insecure": _shaped(_prefixed("django-insecure-", LOWER + DIGITS + "!@#$%^&*(-_=+)", 50),
                               lambda r, v: f"SECRET_KEY = '{v}'"),
    "mailgun_private": _shaped(lambda r: f"{_s(r, HEX, 32)}-{_s(r, HEX, 8)}-{_s(r, HEX, 8)}"),
    "langsmith": _shaped(lambda r: f"lsv2_{r.choice(('pt', 'sk'))}_{_s(r, HEX, 32)}_{_s(r, HEX, 10)}"),
    "elevenlabs": _shaped(_prefixed("sk_", HEX, 48)),
    "cerebras": _shaped(_prefixed("csk-", LOWER + DIGITS, 48)),
    "pinecone": _shaped(lambda r: f"pcsk_{_s(r, ALNUM, 6)}_{_s(r, ALNUM, 63)}"),
    "linear": _shaped(_prefixed("lin_api_", ALNUM, 40)),
    "digitalocean": _shaped(_prefixed(("dop_v1_", "doo_v1_", "dor_v1_"), HEX, 64)),
    "databricks": _shaped(lambda r: f"dapi{_s(r, HEX, 32)}{r.choice(('', '-2', '-3'))}"),
    "shopify": _shaped(_prefixed(("shpat_", "shpss_", "shpca_", "shppa_"), HEX, 32)),
    "postman": _shaped(lambda r: f"PMAK-{_s(r, HEX, 24)}-{_s(r, HEX, 34)}"),
    "tavily": _shaped(_prefixed(("tvly-", "tvly-dev-"), ALNUM, 32)),
    "supabase": _shaped(lambda r: f"sbp_{_s(r, HEX, 40)}" if r.random() < 0.5 else f"sb_secret_{_s(r, B64URL, 31)}"),
    "notion": _shaped(lambda r: f"secret_{_s(r, ALNUM, 43)}" if r.random() < 0.5 else
                      f"ntn_{_s(r, DIGITS, 11)}{_s(r, ALNUM, 35)}", lambda r, v: f"export NOTION_API_KEY={v}"),
    "age": _shaped(_prefixed("AGE-SECRET-KEY-1", "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)),
    "azure_client_secret": _shaped(lambda r: f"{_s(r, ALNUM, 3)}{r.randint(7, 8)}Q~{_s(r, ALNUM + '_~.-', 34)}"),
    "private_key_b64": _pem_b64,
    "service_account_b64": _sa_b64,
    # people's passwords, new names, long values
    "human_password": lambda r: _pick(r, _human_password(r), lambda v: _password_ctx(r, v),
                                      lambda v: _password_tool(r, v)),
    "named_secret": _named_value,
    "long_value": _long_value,
    "netrc": _netrc,
}


def draw(kind: str, rng: random.Random) -> Planted:
    """A fresh planted credential of ``kind``."""
    snippet, value = KINDS[kind](rng)
    return Planted(kind, snippet, value)


def _insert(text: str, snippet: str, rng: random.Random, line_prefix: str = "") -> str:
    """``text`` with ``snippet`` put at a random line boundary (or inline after a space, or at either end)."""
    lines = text.split("\n")
    snippet = "\n".join(line_prefix + s for s in snippet.split("\n")) if line_prefix else snippet
    where = rng.randrange(4)
    if where == 0 or len(lines) == 1:
        return f"{snippet}\n{text}" if rng.random() < 0.5 else f"{text}\n{snippet}"
    i = rng.randrange(1, len(lines))
    if where == 1 and lines[i - 1] and "\n" not in snippet:
        lines[i - 1] = f"{lines[i - 1]} {snippet}"
        return "\n".join(lines)
    return "\n".join(lines[:i] + [snippet] + lines[i:])


def _in_step(field: str) -> Callable[[dict, Planted, random.Random], dict]:
    def put(traj: dict, p: Planted, rng: random.Random) -> dict:
        steps = [dict(s) for s in traj["steps"]]
        idx = rng.randrange(len(steps))
        steps[idx][field] = _insert(steps[idx].get(field) or "", p.snippet, rng)
        return {**traj, "steps": steps}
    return put


def _in_tool_args(traj: dict, p: Planted, rng: random.Random) -> dict:
    steps = [dict(s) for s in traj["steps"]]
    idx = rng.randrange(len(steps))
    try:
        args = json.loads(steps[idx].get("tool_args_json") or "{}")
    except json.JSONDecodeError:
        args = {}
    args = args if isinstance(args, dict) else {"args": args}
    key = rng.choice([k for k, v in args.items() if isinstance(v, str)] or ["command"])
    args[key] = _insert(str(args.get(key, "")), p.snippet, rng)
    steps[idx]["tool_args_json"] = json.dumps(args, ensure_ascii=False)
    return {**traj, "steps": steps}


def _in_split_args(traj: dict, p: Planted, rng: random.Random) -> dict:
    """As a pre-1.0 SWE-agent run records a command: the line in the action, its arguments without the command's
    name in the tool arguments (``{"args": "-uroot -p…"}``)."""
    steps = [dict(s) for s in traj["steps"]]
    idx = rng.randrange(len(steps))
    line = p.snippet.replace("\n", " ")
    steps[idx]["action_text"] = line
    steps[idx]["tool_args_json"] = json.dumps({"args": line.split(" ", 1)[-1]})
    return {**traj, "steps": steps}


def _in_patch(traj: dict, p: Planted, rng: random.Random) -> dict:
    patch = traj.get("final_patch") or "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1 +1,2 @@\n x = 1\n"
    lines = patch.split("\n")
    hunks = [i for i, line in enumerate(lines) if line.startswith("@@")] or [len(lines) - 1]
    i = rng.choice(hunks) + 1
    added = ["+" + s for s in p.snippet.split("\n")]
    return {**traj, "final_patch": "\n".join(lines[:i] + added + lines[i:])}


def _in_task(traj: dict, p: Planted, rng: random.Random) -> dict:
    field = rng.choice(("problem_statement", "hints_text"))
    task = {"instance_id": traj["instance_id"], "repo": traj.get("repo", ""),
            "problem_statement": traj.get("problem_statement") or "", "hints_text": "", "patch": "",
            "test_patch": ""}
    task[field] = _insert(task[field], p.snippet, rng)
    return task


def _code_of(traj: dict) -> str:
    """Real code: the lines the final patch adds (or its whole text)."""
    patch = traj.get("final_patch") or ""
    code = "\n".join(line[1:] for line in patch.split("\n") if line.startswith("+") and not line.startswith("+++"))
    return code or patch or "def main():\n    return 0\n"


def _in_source_file(traj: dict, p: Planted, rng: random.Random) -> dict:
    return {"record_id": "planted", "repo": traj.get("repo", ""), "path": "src/settings.py",
            "content": _insert(_code_of(traj), p.snippet, rng)}


def _in_reject(traj: dict, p: Planted, rng: random.Random) -> dict:
    from swemine.corpora.records import make_reject

    excerpt = _insert((traj.get("problem_statement") or "")[:rng.randint(0, 120)], p.snippet, rng)
    return dict(make_reject("parse", "malformed", f"cannot parse document: {p.snippet[:60]}",
                            uri=traj.get("source_uri", ""), excerpt=excerpt))


def _in_console(traj: dict, p: Planted, rng: random.Random) -> dict:
    line = rng.choice(("INFO  running step: ", "WARNING: command failed: ", "[worker-3] stderr: ", ""))
    return {"message": f"{line}{p.snippet}", "uri": traj.get("source_uri", "")}


#: field -> (record type the pipeline scrubs it as, how to plant into a real trajectory)
FIELDS: dict[str, tuple[str, Callable[[dict, Planted, random.Random], dict]]] = {
    "action_text": ("trajectory", _in_step("action_text")),
    "tool_args": ("trajectory", _in_tool_args),
    "split_args": ("trajectory", _in_split_args),
    "observation": ("trajectory", _in_step("observation")),
    "thought": ("trajectory", _in_step("thought")),
    "final_patch": ("trajectory", _in_patch),
    "task_text": ("task", _in_task),
    "fim_source": ("source_file", _in_source_file),
    "reject_excerpt": ("reject", _in_reject),
    "console_line": ("console", _in_console),
}


def plant(traj: dict, field: str, p: Planted, rng: random.Random) -> tuple[str, dict]:
    """``(record type, record)``: ``p`` planted into ``field`` of (a copy of) real trajectory ``traj``."""
    record_type, put = FIELDS[field]
    return record_type, put(traj, p, rng)


def _pieces(value: str) -> list[str]:
    """The parts of ``value`` that must not survive: its lines (a PEM body), in windows of :data:`WINDOW`."""
    out = []
    for line in value.split("\n"):
        if len(line) <= WINDOW:
            out.append(line)
        else:
            out.extend(line[i:i + WINDOW] for i in range(0, len(line) - WINDOW + 1))
    return [p for p in out if p]


def survives(value: str, before: str, after: str) -> bool:
    """Whether any part of ``value`` (a whole short value, any :data:`WINDOW`-character window of a longer one)
    is in the scrubbed text ``after`` though not in the text ``before`` planting."""
    forms = {value}
    for _ in range(2):                                # JSON-escaped once (a record), twice (a JSON-string column)
        forms |= {json.dumps(v)[1:-1] for v in forms}
    return any(p in after and p not in before for v in forms for p in _pieces(v))
