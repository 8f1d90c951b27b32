"""The rules that close the recall gaps an independent planted set found: provider formats with a documented prefix,
human passwords, quoted values taken whole, password-taking tools, secret names in more forms, long values; and the
guards that keep look-alikes (type annotations, digests, remotes, paths) — each on fictional values, both ways."""
from __future__ import annotations

import base64
import json
import random
import string

import pytest

from swemine.filters.secret_values import fixture, plausible_value
from swemine.filters.secrets import SecretScanner

R32 = "q7ZkP2mX9vLw4RtB8nYc3HsJ6dFg1Ua5"          # 32 random-looking characters (fictional)
HEX = "8f3a9c2d1e4b5a6f7c8d9e0f1a2b3c4d"            # 32 hex digits (fictional)


@pytest.fixture(scope="module")
def scanner():
    return SecretScanner()


def _found(scanner, text):
    return [(f.label, text[f.start:f.end]) for f in scanner.find(text)]


def _secrets(scanner, text):
    return [text[f.start:f.end] for f in scanner.find(text) if f.kind == "secret"]


FORMATS = [
    ("wandb_v1_" + R32 + R32[:13] + "_" + R32, "W&B API Key"),
    ("django-insecure-ouqc8j0sk$gn+*9zja*ii=rs=$q()cs$e*9$fg1(y28d#m8m$d", "Django Secret Key"),
    (HEX + "-1e4b5a6f-7c8d9e0f", "Mailgun Key"),
    ("lsv2_pt_" + HEX + "_3b2c4d5e6f", "LangSmith API Key"),
    ("lsv2_sk_" + HEX + "_a1b2c3d4e5", "LangSmith API Key"),
    ("sk_" + HEX + HEX[:16], "ElevenLabs API Key"),
    ("csk-" + R32.lower() + "x9v4k2m8t1p6", "Cerebras API Key"),
    ("pcsk_3UiVd2_" + R32 + R32[:30], "Pinecone API Key"),
    ("lin_api_" + R32 + R32[:8], "Linear API Key"),
    ("dop_v1_" + HEX + HEX, "DigitalOcean Token"),
    ("dapi" + HEX + "-2", "Databricks Token"),
    ("shpat_" + HEX, "Shopify Token"),
    ("PMAK-" + HEX[:24] + "-" + HEX + "ab", "Postman API Key"),
    ("tvly-dev-" + R32, "Tavily API Key"),
    ("sbp_" + HEX + "1a2b3c4d", "Supabase Key"),
    ("sb_secret_" + R32[:22] + "_x9Kq", "Supabase Key"),
    ("secret_" + R32 + R32[:11], "Notion Token"),
    ("ntn_48102935571" + R32 + "aB3", "Notion Token"),
    ("AGE-SECRET-KEY-1" + "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7LQPZRY9X8GF2TVDW0S3JN54KHCE", "age Secret Key"),
    ("hBM2Q~sdp1x-bu.cHQr9Zk2Lp.qWe8Rt5Yu1Io_p", "Azure Client Secret"),
    # an org token's secret in base64url (its payload base64 of JSON)
    ("sntrys_" + base64.b64encode(b'{"iat": 1700000000.5, "url": "https://sentry.io", "org": "acme"}').decode()
     .rstrip("=") + "_q7ZkP2mX9v-Lw4RtB8nYc_3HsJ6dFg1Ua5q7ZkP2mX9v", "Sentry Token"),
]

QUOTED = [
    ("export REDIS_PASSWORD='9I#j\"um7rMkEKZ5P'", '9I#j"um7rMkEKZ5P'),                # the other quote inside
    ('{"password": "Xk9f\\"Lq2#ZrT"}', 'Xk9f\\"Lq2#ZrT'),                            # an escaped quote inside
    ('export DB_PASSWORD="ab\\$cd9Xk2!q"', 'ab\\$cd9Xk2!q'),                           # an escaped $
    ("password: 'Xk9f Lq2#'", "Xk9f Lq2#"),                                           # a space inside quotes
    ('{\\"command\\": \\"SMTP_PASSWORD=\\\\\\"eokf\\\\\\\\$dzH5Ps7D\\\\\\" pytest\\"}',
     'eokf\\\\\\\\$dzH5Ps7D'),                                                        # escaped twice (JSON in JSON)
    ("password = EVt$a>UL.(pS2~3ZAy#/x\n", "EVt$a>UL.(pS2~3ZAy#/x"),                  # unquoted, with < > ( .
    ('POSTGRES_PASSWORD=ez"0hRBy2cn"bYwB\nTERM=xterm', 'ez"0hRBy2cn"bYwB'),           # `env` prints quotes inside
    ("set DB_PASSWORD=r7gSAH'JHP=T#wj$7\n", "r7gSAH'JHP=T#wj$7"),                     # ... and cmd's `set` too
]

TOOLS = [
    ("echo 'Xk9fLq2#ZrT' | docker login -u ci --password-stdin", "Xk9fLq2#ZrT"),
    ("echo aCL8fBSsjadARH | podman login quay.io -u ci --password-stdin", "aCL8fBSsjadARH"),
    ("twine upload -u deploy -p Falcon667% dist/*", "Falcon667%"),
    ("sshpass -p 'Xk9f Lq2#' ssh deploy@host", "Xk9f Lq2#"),
    ("redis-cli -h db -a Xk9fLq2zz9 ping", "Xk9fLq2zz9"),
    ("ldapsearch -x -D 'cn=admin,dc=corp' -w 'Passw0rd15*' -b dc=corp", "Passw0rd15*"),
    ("smbclient //srv/share -U 'deploy%Xk9fLq2!zz'", "Xk9fLq2!zz"),
    ("az login --service-principal -u app -p 'Xk9fLq2zz9' --tenant t", "Xk9fLq2zz9"),
    ("openssl enc -aes-256-cbc -k 'Xk9fLq2zz9' -in a.tar", "Xk9fLq2zz9"),
    ("htpasswd -cb /etc/nginx/.htpasswd admin Xk9fLq2zz9", "Xk9fLq2zz9"),
    ("htpasswd -nb admin Xk9fLq2zz9", "Xk9fLq2zz9"),
    ("sqlcmd -S db -U sa -P 'lc9uoDZHs%a' -Q 'SELECT 1'", "lc9uoDZHs%a"),
    ("rabbitmqctl add_user deploy 'Falcon4826$'", "Falcon4826$"),
    ("mongosh --host db -u root -p Xk9fLq2zz9", "Xk9fLq2zz9"),
    ('smtplib.SMTP_SSL("smtp.gmail.com").login("me@corp.io", "Monkey8141$")', "Monkey8141$"),
    ('setx API_TOKEN "OyNGc[R?l-hygO^"', "OyNGc[R?l-hygO^"),
]

NAMES = [
    ("GCP_SA_KEY=" + R32, R32), ("HMAC_KEY=" + HEX + HEX, HEX + HEX), ("OPENAI_KEY=" + R32, R32),
    ("LLM_KEY=" + R32, R32), ("GH_PAT=" + HEX + "ab12cd34", HEX + "ab12cd34"), ("CR_PAT: " + R32, R32),
    ("GOOGLE_CREDENTIALS_B64=" + R32 + "==", R32 + "=="), ("SA_KEY_JSON='" + R32 + "'", R32),
    ("CONN_STR=" + R32, R32), ("CREDS=" + R32, R32), ("BASIC_AUTH=" + R32, R32), ("AUTH_HEADER='Bearer " + R32 + "'",
                                                                                 "Bearer " + R32),
    ("SALT=" + R32, R32), ("TOTP_SEED=JBSWY3DPEHPK3PXP", "JBSWY3DPEHPK3PXP"), ("COOKIE=" + R32, R32),
    ("app.api.key=" + R32, R32), ("spring.datasource.password=Xk9fLq2zz9", "Xk9fLq2zz9"),
    ("https://api.example.com/v1/q?key=" + R32 + "&x=1", R32), ("GET /feed?auth=" + R32 + " HTTP/1.1", R32),
    ("https://x.example.com/cb?access_token=" + R32, R32),
    ("os.environ.setdefault('X_API_KEY', '" + R32 + "')", R32), ("KEY = os.getenv('DB_PASSWORD', 'Xk9fLq2#Zr')",
                                                                 "Xk9fLq2#Zr"),
    ('os.Setenv("DD_APP_KEY", "' + HEX + '")', HEX), ('$env:API_TOKEN="' + R32 + '"', R32),
    ('process.env.STRIPE_KEY = "' + R32 + '"', R32), ("<password>Rocket08&amp;</password>", "Rocket08&amp;"),
    ("| `PASSWORD` | `gbzi:eib!ly5TrSmtBk` |", "gbzi:eib!ly5TrSmtBk"),
    ("machine h login u password 7cx5\"xGzip89xp\n", '7cx5"xGzip89xp'),
]


@pytest.mark.parametrize("token,label", FORMATS)
def test_prefixed_formats_are_found_bare(scanner, token, label):
    for text in (f"cat ~/.config/app/token\n{token}\n", f"the failing request used {token} (from the logs)"):
        assert _found(scanner, text) == [(label, token)], text


def test_prefixed_placeholders_are_not_keys(scanner):
    for text in ("NOTION=secret_" + "x" * 43, "tvly-" + "X" * 32, "csk-" + "a" * 48, "sk_" + "0" * 48,
                 "SECRET_KEY = 'django-insecure-change-this-later'"):
        assert _secrets(scanner, text) == [], text


def test_base64_private_keys_and_credential_files_are_found_whole_certificates_are_not(scanner):
    der = base64.b64encode(random.Random(3).randbytes(900)).decode()
    pem = base64.b64encode(f"-----BEGIN RSA PRIVATE KEY-----\n{der}\n-----END RSA PRIVATE KEY-----\n".encode()).decode()
    text = f"users:\n- name: ci\n  user:\n    client-key-data: {pem}\n"
    assert _found(scanner, text) == [("Private Key", pem)] and len(pem) > 1200
    sa = base64.b64encode(json.dumps({"type": "service_account", "project_id": "demo-project",
                                      "private_key": f"-----BEGIN PRIVATE KEY-----\n{der}\n-----END PRIVATE KEY-----\n",
                                      "client_email": "ci@demo-project.iam.gserviceaccount.com"}, indent=2).encode()).decode()
    assert _found(scanner, f"$ cat sa.b64\n{sa}\n") == [("Private Key", sa)]
    cert = base64.b64encode(f"-----BEGIN CERTIFICATE-----\n{der}\n-----END CERTIFICATE-----\n".encode()).decode()
    assert _found(scanner, f"    certificate-authority-data: {cert}\n") == []


def test_a_twilio_auth_token_after_its_account_sid(scanner):
    text = f'client = Client("AC{HEX}", "{HEX[::-1]}")'
    assert _found(scanner, text) == [("Twilio Auth Token", HEX[::-1])]


@pytest.mark.parametrize("value", ["Qwerty637*", "Admin546?", "Test2291@", "Secret2291@", "letmein123!", "Monkey2024",
                                   "iloveyou2024", "Coffee2291", "UPyfeoIhvYNtY", "hF7secretQ9!", "admin546",
                                   "Xk9fLq2.ZrTy81", "Xk9fLq2(ZrTy81"])
def test_human_passwords_are_not_fixtures(scanner, value):
    for text in (f"DB_PASSWORD={value}\n", f"  POSTGRES_PASSWORD: '{value}'\n", f'{{"password": "{value}"}}'):
        assert _secrets(scanner, text) == [value], text


@pytest.mark.parametrize("value", ["test", "password", "changeme", "secret", "admin", "password123", "Password1",
                                   "test_password", "my-secret-key", "mysecretpassword", "foo$bar", "Secret!",
                                   "None):", "s\\u00e9same", "testpass", "some\\\\password"])
def test_fixture_words_alone_or_with_a_simple_number_stay(scanner, value):
    assert fixture(value.replace("\\\\", "").replace("\\u00e9", "e")) or not plausible_value(value), value
    assert _secrets(scanner, f"DB_PASSWORD={value}\n") == [], value


def test_a_passphrase_counts_beside_a_password_name_only(scanner):
    assert _secrets(scanner, "ADMIN_PASSWORD=correct-horse-battery-staple\n") == ["correct-horse-battery-staple"]
    assert _secrets(scanner, "API_TOKEN=correct-horse-battery-staple\n") == []
    assert _secrets(scanner, "PASSWORD=my-secret-dev-password\n") == []


@pytest.mark.parametrize("text,value", QUOTED)
def test_quoted_values_are_taken_whole(scanner, text, value):
    assert _secrets(scanner, text) == [value], text


def test_prose_and_type_expressions_between_quotes_are_not_passwords(scanner):
    for text in ('token: "str | None" = None', '"password": "Please enter your password"',
                 '"password": "This field is required."', "echo 'export AWS_SECRET_ACCESS_KEY=' >> ~/.bashrc"):
        assert _secrets(scanner, text) == [], text


@pytest.mark.parametrize("command,value", TOOLS)
def test_password_taking_tools(scanner, command, value):
    assert value in _secrets(scanner, f"$ {command}\n"), command


def test_tool_names_elsewhere_lead_nowhere(scanner):
    for text in ("x = zip(a, b) and 7zip x", "pip install redis-cli-helper -p 3", "openssl version -a"):
        assert _secrets(scanner, text) == [], text


@pytest.mark.parametrize("text,value", NAMES)
def test_secret_names_in_more_forms(scanner, text, value):
    assert _secrets(scanner, text) == [value], text


@pytest.mark.parametrize("text", [
    "CACHE_KEY=Linux-pip-" + HEX + " hit", "GPG_KEY=ADC411F4A5E9652FF5AE86F14DC7591DCB04C2D7",
    '"session_id": "sanitize-git-repo__27w76Zf",',
    'FILE_PAT = "*.py"', "pattern = 'api_token|secret_key|password'", '<input type="password">Enter</input>',
    '["pass", "Xk9fLq2#Zr"]', "def delete(self, session_key=None):", "git clone https://<your-token>@github.com/a/b",
    "token := jwt.NewWithClaims(jwt.SigningMethodHS256, claims)", 'authHeader := c.GetHeader("Authorization")',
    "const password = screen.getByLabelText(/password/i)", "apiKey: z.ZodOptional<z.ZodString>;",
    "self.proxy_auth = HTTPProxyAuth(*auth.split(':', 1))", "DATE_PAT = '%Y-%m-%d %H:%M'",
])
def test_names_and_values_that_only_look_secret(scanner, text):
    assert _secrets(scanner, text) == [], text


@pytest.mark.parametrize("text", [
    "auth_token: Optional[str] = None", "password: List[str] = []", "token: Dict[str, Any] = {}",
    "secret_key: Union[str, bytes]",
    '"integrity": "sha512-' + base64.b64encode(random.Random(1).randbytes(64)).decode() + '"',
    "github.com/pkg/errors v0.9.1/go.mod h1:" + base64.b64encode(random.Random(2).randbytes(32)).decode(),
    "origin\tgit@github.com:acme/widgets.git (fetch)", "x\nnpm_package_version=1.0.0", "x\nnpm_config_cache=/root/.npm",
    "x\nSSH_AUTH_SOCK=/tmp/ssh-XkQ9fL2mZp/agent.1234", "x\nINVOCATION_ID=" + HEX,
    "cwd /home/dev/Documents/Projects/Mindflow_App/TASK-128/repo",
    "log: C:\\Users\\dev\\AppData\\Local\\npm-cache\\_logs\\2026-04-28T03_16_31_482Z-debug-0.log",
    "assert b64encode(b'The quick brown fox') == b'VGhlIHF1aWNrIGJyb3duIGZveCBqdW1wcyBvdmVyIHRoZSBsYXp5IGRvZw=='",
    'token=os.environ.get("GH_TOKEN")', "token=os.environ['GH_TOKEN']", 'password=getpass("Password: ")',
    # code in the standard library: a bracketed call, a header's name, a format, a call's second argument
    "        pwd = (self.password.encode('utf-8') if isinstance(self.password, str)",
    "auth_header = 'Proxy-Authorization'", 'headers["Authorization"] = "Basic %s" % auth',
    "hashlib.scrypt('password', salt=b'salt', n=2, r=8, p=1)",
])
def test_look_alikes_are_kept(scanner, text):
    assert [f for f in scanner.find(text) if f.kind == "secret" or f.label == "email"] == [], text


def test_long_values_are_taken_whole(scanner):
    rng = random.Random(7)
    value = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(3100))
    for text in (f"GCP_CREDENTIALS='{value}'\n", f"data:\n  api-token: {value}\nkind: Secret\n",
                 f"Authorization: Bearer {value}\n", f"DB_PASSWORD={value}"):
        assert value in _secrets(scanner, text), text[:40]
    cut = "... and ended with " + value[:2500]            # a cut-off token ending a field, however long
    assert _found(scanner, cut) == [("Truncated Token", value[:2500])]


def test_the_prefilter_marks_every_new_rule():
    """Each new rule's texts give the same findings through the prefilter's windows as through a scan of every line."""
    fast, full = SecretScanner(), SecretScanner(exhaustive=True)
    texts = [f"x\n$ {c}\n" for c, _ in TOOLS] + [t for t, _ in NAMES + QUOTED] + [f"see {t} here" for t, _ in FORMATS]
    assert len(texts) > 60
    for text in texts:
        assert fast.find(text) == full.find(text) != [], text


@pytest.mark.parametrize("text,parts", [
    ('API_KEY = (\n    "hf_JgFWfJTC"\n    "RlxZOVDiNDNVkxZOXqDIaPUrFX"\n)\n', ["hf_JgFWfJTC", "RlxZOVDiNDNVkxZOXqDIaPUrFX"]),
    ('curl -H "Authorization: Bearer ghp_jkASHHgdJU5OOqnvU\\\nGuGEnP6yn9OrXfV5LwB" https://api.github.com/user',
     ["ghp_jkASHHgdJU5OOqnvU", "GuGEnP6yn9OrXfV5LwB"]),
    ("x\nGH_PAT=github_pat_GYV37RffjPvBGGR1j7p15J_9I84Bmrr5A42YfcuVAHmCGCxRGK1iPockNN29g9\natCKA2olbnXmtIjRstWJ\n",
     ["github_pat_GYV37RffjPvBGGR1j7p15J_9I84Bmrr5A42YfcuVAHmCGCxRGK1iPockNN29g9", "atCKA2olbnXmtIjRstWJ"]),
    # a terminal's wrap at 80 columns inside a connection string: the key's rest opens the next line before its ";"
    ("AzureWebJobsStorage=DefaultEndpointsProtocol=https;AccountName=zq3k7mwp2x;Acco\nuntKey=Vb2kQ9mX7wLp4Rt"
     "B8nYc3HsJ6dFg1Ua5q7ZkP2mX9vLw4RtB8nYc3HsJ6dFg1Ua5\nq7ZkP2mX9vLwQ==;EndpointSuffix=core.windows.net",
     ["Vb2kQ9mX7wLp4RtB8nYc3HsJ6dFg1Ua5q7ZkP2mX9vLw4RtB8nYc3HsJ6dFg1Ua5", "q7ZkP2mX9vLwQ=="]),
])
def test_a_secret_split_over_lines_is_found_in_each_part(scanner, text, parts):
    assert _secrets(scanner, text) == parts


def test_wrapped_base64_and_ordinary_line_breaks_are_not_joined(scanner):
    der = base64.b64encode(random.Random(9).randbytes(300)).decode()
    cert = "-----BEGIN CERTIFICATE-----\n" + "\n".join(der[i:i + 64] for i in range(0, len(der), 64)) + \
           "\n-----END CERTIFICATE-----\n"
    names = 'labels = (\n    "first_name"\n    "last_name"\n)\n'
    # a test runner's long line before a number (not a cut token), code continued with backslashes
    log = "[INFO] Running com.alibaba.fastjson2.benchmark.fastcode.DecimalUtilsTest\n1E+100\n2.0.52\n"
    code = "h = salted_hmac(\\\n    key_salt,\\\n    secret=secret,\\\n    algorithm='sha256',\\\n)\n"
    for text in (cert, names, "echo one \\\n  two\n", log, code):
        assert _secrets(scanner, text) == [], text


def test_a_provider_token_in_base64_is_that_token(scanner):
    """A Kubernetes Secret's ``data:`` holds its values in base64: one that decodes to a provider's token (a line
    break after it too) is that token; a user's name or a token's look-alike in base64 is not."""
    aws = base64.b64encode(b"AKIAKR4FSJUWYIN456V6").decode()
    github = base64.b64encode(("ghp_" + R32 + "Ab3d\n").encode()).decode()
    text = (f"$ kubectl get secret app -o yaml\ndata:\n  aws_access_key_id: {aws}\n  token: {github}\n"
            f"  username: {base64.b64encode(b'deploy-bot-account').decode()}\n"
            f"  note: {base64.b64encode(b'ghp_not_a_token_at_all').decode()}\nkind: Secret\n")
    assert _found(scanner, text) == [("AWS Access Key", aws), ("GitHub Token", github)]


@pytest.mark.parametrize("text,value", [
    ("The password for the staging database is Maple2291# (see the wiki).", "Maple2291#"),
    ("The user gave their database API key: Y=j6Dg1FfH\"Xz. I'll export it.", 'Y=j6Dg1FfH"Xz'),
    ("I found it in the config: the Datadog key is `" + HEX + "1a2b3c4d`, exporting it.", HEX + "1a2b3c4d"),
    ("Set the token to `" + HEX + "` in your environment and rerun.", HEX),
    ("Please update your staging password to Xk9fLq2!zz today.", "Xk9fLq2!zz"),
    ("(the token was <" + HEX + ">.)", HEX),                                        # in angle brackets
])
def test_a_secret_named_in_a_sentence(scanner, text, value):
    assert _found(scanner, text) == [("Secret in Prose", value)]


@pytest.mark.parametrize("text", [
    "the token is invalid and the password is required; the key is 42; the secret is out",
    "Hash with new key: 9def5878d74edf1bd45271ff70a44c60879843411322804739c5415c8fe25a69",
    "the commit key is " + HEX + "1a2b3c4d today", "the password for the admin is stored in the vault",
    "apiKey: z.ZodOptional<z.ZodString>;",
    "We need the token to " + HEX + " first", "set the key to None", "Set the password to `$DB_PASSWORD`.",
    "(the token was <your-token>.)", "the key was <TOKEN>",
])
def test_sentences_that_name_no_secret(scanner, text):
    assert _secrets(scanner, text) == [], text


def test_a_password_alone_in_a_url_and_htpasswd_with_separate_flags(scanner):
    assert _secrets(scanner, "git remote set-url origin https://Purple259$@github.com/acme/tools.git") == ["Purple259$"]
    assert _secrets(scanner, "git clone https://deploy@github.com/a/b.git; https://john.doe2024@example.com/x") == []
    assert _secrets(scanner, "htpasswd -b -c .htpasswd admin 'xPepQ2L6GR(17)'") == ["xPepQ2L6GR(17)"]
    assert _secrets(scanner, "htpasswd -nbB -C 10 admin Xk9fLq2zz9") == ["Xk9fLq2zz9"]


#: shapes a second independent planted set missed: SQL, aligned columns, argument lists, basic-auth pairs, stdin,
#: ``net use``, continued flags, Kubernetes env entries, XML settings, fallbacks, odd values (fictional values)
@pytest.mark.parametrize("text,value", [
    ("CREATE USER 'app'@'%' IDENTIFIED BY 'Sunflower#2291';", "Sunflower#2291"),
    ("CREATE USER 'app'@'localhost' IDENTIFIED WITH mysql_native_password BY '" + HEX + "';", HEX),
    ("ALTER USER postgres WITH PASSWORD 'winter1992!';", "winter1992!"),
    ("CREATE USER app WITH ENCRYPTED PASSWORD '" + R32 + "';", R32),
    ("CREATE ROLE app LOGIN PASSWORD 'Kx8!mPq2vW';", "Kx8!mPq2vW"),
    ("SET PASSWORD FOR 'bob'@'%' = 'Kx8!mPq2vW';", "Kx8!mPq2vW"),
    ("SET PASSWORD = PASSWORD('Kx8!mPq2vW');", "Kx8!mPq2vW"),
    ('psql -c "ALTER USER postgres WITH PASSWORD \'Kx8!mPq2vW\';"', "Kx8!mPq2vW"),
    ('db_password     = "&Piratebanana45"', "&Piratebanana45"),
    ("  api_password:          Kx8!mPq2vW", "Kx8!mPq2vW"),
    ("  api_password          : Kx8!mPq2vW", "Kx8!mPq2vW"),
    ('\tDBPassword\t\t\t= "Kx8!mPq2vW"', "Kx8!mPq2vW"),
    ('{"cmd": ["python", "sync.py", "--secret", "' + HEX + '", "--verbose"]}', HEX),
    ('subprocess.run(["./client", "--password", "pirate!Etarip69", "--region", "eu"])', "pirate!Etarip69"),
    ("args = ['deploy', '--api-key', '" + R32 + "']", R32),
    ('r = requests.get(url, auth=("svc-bot", "#Rocket62"), timeout=10)', "#Rocket62"),
    ('r = httpx.get(url, auth=(settings.USER, "Kx8!mPq2vW"))', "Kx8!mPq2vW"),
    ('s.auth = HTTPBasicAuth("svc", "' + HEX + '")', HEX),
    ("echo 'Kx8!mPq2vW' | sudo -S systemctl restart nginx", "Kx8!mPq2vW"),
    ('echo "' + HEX + '" | sudo -kS apt-get install -y jq', HEX),
    ('net use Z: \\\\fs01\\share /user:ACME\\svc "V|]9fa8,>j#MoJ/5Yvpuy"', "V|]9fa8,>j#MoJ/5Yvpuy"),
    ("net use \\\\fs01\\share Kx8!mPq2vW /user:ACME\\svc /persistent:no", "Kx8!mPq2vW"),
    ("curl -X POST \\\n  --token \\\n  Kx8!mPq2vW \\\n  https://api.acme.test", "Kx8!mPq2vW"),
    ('        env:\n        - name: TWILIO_AUTH_TOKEN\n          value: "' + HEX + '"', HEX),
    ("        - name: DB_PASSWORD\n          value: Kx8!mPq2vW\n", "Kx8!mPq2vW"),
    ('  <add key="wandbApiKey" value="' + HEX + '" />', HEX),
    ('  <property name="db.password" value="Kx8!mPq2vW"/>', "Kx8!mPq2vW"),
    ('const key: string = process.env.DD_API_KEY ?? "' + HEX + '";', HEX),
    ('const pw = process.env.DB_PASSWORD || "Kx8!mPq2vW";', "Kx8!mPq2vW"),
    ('pw = os.getenv("DB_PASSWORD") or "Kx8!mPq2vW"', "Kx8!mPq2vW"),
    ("export DB_PASSWORD=footballmonkey4279_", "footballmonkey4279_"),
    ("docker run --rm -e DB_PASSWORD=@Dragon46 -p 8080:8080 acme/api:1.4", "@Dragon46"),   # a container's -e
    ("  1280\t            export DB_PASSWORD=footballmonkey4279_\n", "footballmonkey4279_"),  # cat -n, indented
    ("12:DB_PASSWORD=footballmonkey4279_\n", "footballmonkey4279_"),                       # a viewer's line number
    ("podman run --env=API_TOKEN=pirate!Etarip69 img", "pirate!Etarip69"),
    ('headers = {"Authorization": f"Bearer SK7e79e847eb9fd12bb6b342da6ee06042"}',          # an f-string's value
     "SK7e79e847eb9fd12bb6b342da6ee06042"),
    ("DB_USER=app\nDB_PASSWORD==ig);C&*bOlv^1O+MN/4x_V\n", "=ig);C&*bOlv^1O+MN/4x_V"),
    ("postgresql://app:%IsUxX5n<t$rhWx~Mr@db.internal/app", "%IsUxX5n<t$rhWx~Mr"),
])
def test_a_secret_in_a_shape_of_its_format(scanner, text, value):
    assert _secrets(scanner, text) == [value]


@pytest.mark.parametrize("text", [
    'cur.execute("CREATE USER %s IDENTIFIED BY %s", (user, pw))',
    "cur.execute(\"CREATE USER 'app' IDENTIFIED BY '%s'\" % pw)",
    "ALTER USER app WITH PASSWORD NULL;", "ALTER USER app WITH PASSWORD ?;",
    "CREATE USER 'app'@'%' IDENTIFIED BY PASSWORD '*6BB4837EB74329105EE4568DDA7DC67ED2CA2AD9';",
    "ALTER ROLE app WITH PASSWORD '<your-password>';",
    'subprocess.run(["./client", "--token", token, "--region", "eu"])',
    'subprocess.run(["./client", "--token", "--region", "eu"])',
    'parser.add_argument("--token", "-t", help="the token")',
    "r = requests.get(url, auth=(user, password), timeout=10)",
    'r = requests.get(url, auth=("user", os.environ["PW"]))',
    "echo $PASSWORD | sudo -S ls", "echo hello | sudo tee /etc/motd", "sudo -S ls -la /root",
    "docker run -e DB_PASSWORD=$DB_PASSWORD -e API_TOKEN=${API_TOKEN} img",
    'headers = {"Authorization": f"Bearer {token}"}',
    "  45\t        password=self.password,", "  45\t        password=db_password_value,",
    "    password=parts['password'],", "                token=profile.get('aws_session_token'),",   # code's calls
    "            password=bytearray(KEY_PASSWORD.encode()))",
    "net use Z: \\\\fs01\\share /user:ACME\\svc * /persistent:no", "net use Z: /delete",
    "./deploy \\\n  --api-key \\\n  $API_KEY \\\n  --region eu",
    "        - name: DB_PASSWORD\n          valueFrom:\n            secretKeyRef: {name: db, key: password}",
    '        - name: LOG_LEVEL\n          value: "Kx8!mPq2vWq1"', '  <add key="dbPassword" value="" />',
    '  <add key="TokenLifetime" value="3600" />', 'const t = process.env.GITHUB_TOKEN ?? undefined;',
    'const t = process.env.TOKEN_FILE ?? "/run/secrets/token";', "if TOKEN_COUNT==5:", "token = _buffer32",
    "postgresql://app:<password>@db.internal/app",
])
def test_look_alikes_of_those_shapes_stay(scanner, text):
    assert _secrets(scanner, text) == [], text


def test_an_aligned_grammar_rule_or_plan_remark_stays(scanner):
    assert _secrets(scanner, "# token          = 1*tchar\n      token             = 1*<any CHAR except CTLs>") == []
    plan = "      + secret                 = (known after apply)\n      + password               = (sensitive value)"
    assert _secrets(scanner, plan) == []
