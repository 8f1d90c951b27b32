"""Provider formats, context rules and their precision guards on small fictional strings: what is replaced,
exactly, and what is left alone."""
from __future__ import annotations

import pytest

from swemine.filters.secrets import SecretScanner

R = "q7ZkP2mX9vLw4RtB8nYc3HsJ6dFg1Ua5"          # 32 random-looking characters (fictional)


@pytest.fixture(scope="module")
def scanner():
    return SecretScanner()


def _found(scanner, text):
    return [(f.label, text[f.start:f.end]) for f in scanner.find(text)]


@pytest.mark.parametrize("token,label", [
    ("sk-ant-api03-" + R * 3 + "AA", "Anthropic API Key"),
    ("sk-proj-" + R * 2 + "T3BlbkFJ" + R, "OpenAI API Key"),
    ("hf_" + R[:30] + "abcd", "Hugging Face Token"),
    ("github_pat_11" + R[:20] + "_" + R + R[:27], "GitHub Token"),
    ("glpat-" + R[:20], "GitLab Token"),
    ("gsk_" + R + R[:20], "Groq API Key"),
    ("npm_" + R + R[:4], "npm Token"),
    ("dckr_pat_" + R[:27], "Docker Hub Token"),
    ("AIza" + R + "abc", "Google API Key"),
    ("xai-" + R * 3, "xAI API Key"),
])
def test_provider_tokens_are_replaced_whole(scanner, token, label):
    text = f"export SOME_VAR={token} && run"
    assert _found(scanner, text) == [(label, token)]
    assert token not in SecretScanner.scrub(text, scanner.find(text))


def test_a_placeholder_with_a_provider_prefix_is_not_a_key(scanner):
    assert _found(scanner, "set OPENAI_API_KEY=sk-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx") == []
    assert _found(scanner, "token ghp_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX here") == []


@pytest.mark.parametrize("text,value", [
    ("export GH_TOKEN=Zk29fQx81LmPa0", "Zk29fQx81LmPa0"),
    ('DB_PASSWORD="Sunshine42!x"', "Sunshine42!x"),
    ("  password: Tr0ub4dor&3", "Tr0ub4dor&3"),
    ('{"client_secret": "9fK2-lQ0x_Pz7"}', "9fK2-lQ0x_Pz7"),
    ("psql --password=h4ck#Me99 -h db", "h4ck#Me99"),
    ("mysql -u root -pS3cr3t!pw app", "S3cr3t!pw"),
    ("curl -u admin:w0rd!Pass https://x.example.com", "w0rd!Pass"),
    ("Authorization: Bearer " + R, R),
    ("git clone https://deploy:Abc!@#x9@github.com/a/b.git", "Abc!@#x9"),
    ("Server=tcp:x.database.windows.net;User ID=sa;Password=Pa55w0rd|x;Encrypt=True", "Pa55w0rd|x"),
])
def test_context_rules_replace_the_value_only(scanner, text, value):
    scrubbed = SecretScanner.scrub(text, scanner.find(text))
    assert value not in scrubbed and "<SECRET:" in scrubbed
    key = text.split(value)[0][-6:]
    assert key in scrubbed                                    # the name before the value stays


@pytest.mark.parametrize("text", [
    "password = test", "PASSWORD=changeme", 'api_key = "<your-key>"', "export TOKEN=${GH_TOKEN}",
    "token: xxxxxxxxxxxxxxxx", "password = self.cleaned_data['password1']", "api_key = os.environ['API_KEY']",
    "password_sha256 = 9f86d081884c7d659a2feaa0c55ad015", "token_file = /run/secrets/token",
    "next_token = 'CAESBggBEAEYAQ'", "pad_token = '<pad>'", "version = 1.2.3", "secret: 5f3c6e2a-9b1d-4c8e-a7f0-2d4b6c8e0a1f",
    "password = models.CharField(max_length=128)", "max_tokens = 4096", "apiKey: options?.apiKey",
    "commit 4fd3044ca0135da903a70dfb66992293f529ecf1", "FAIL_TO_PASS: {test_a,test_b}",
])
def test_guards_leave_non_secrets_alone(scanner, text):
    assert [f for f in scanner.find(text) if f.kind == "secret"] == [], text


def test_a_pem_block_cut_off_before_its_end_line_is_replaced_to_its_last_base64_line(scanner):
    text = "excerpt: -----BEGIN RSA PRIVATE KEY-----\\nMIIEowIBAAKCAQEA7bq\\nZmFrZWtleWJvZHk"
    assert SecretScanner.scrub(text, scanner.find(text)) == "excerpt: <SECRET:Private Key>"


@pytest.mark.parametrize("text", [
    "TWILIO_ACCOUNT_SID=AC65fb27447676a1b8086b36cd3e05da6e\n",          # an account's id, not a secret
    "TWILIO_API_KEY_SID=SK5211ecf95fe39a2e667b0e18745755fa\n",          # a key's id: the secret sits beside it
    "'ftp://username:password@ftp.example.com',\n",                    # a fixture userinfo
    "DATABASE_URL=postgres://app_user:PASSWORD@localhost:5432/db\n",   # a placeholder password
    "hTTp://u:p@Some.Host/path-http://some.host.proxy\n",              # userinfo, not an e-mail
    "Help Token: AShNTyHEB-4CAvEEyxT_nyQYgEddyWTKGkiDxIDrCQ5B4 ok\n",   # a label in an error message
    "write to admin@eagle.test, YOUR_EMAIL@noaa.gov or a@b.com\n",     # reserved TLD, placeholder, fixture
    "call_command(self.cmd, addrport=\"1.2.3.4:8000\")\n",             # an example address
])
def test_identifiers_fixtures_and_labels_are_left_alone(scanner, text):
    assert _found(scanner, text) == []


def test_userinfo_passwords_netrc_and_link_tokens(scanner):
    assert _found(scanner, "postgres://app_user:tGEIywsx61QuPPu6@127.0.0.1:5432/db\n") == [
        ("Basic Auth Credentials", "://app_user:tGEIywsx61QuPPu6@")]
    assert _found(scanner, "machine pypi.org\n  login me\n  password AbVec(uF.&,OJ]vk)+yUSN+CH\n") == [
        ("Secret Assignment", "AbVec(uF.&,OJ]vk)+yUSN+CH")]
    assert _found(scanner, "[join](https://x.cn/add?link_token=dabi8911-b0f9-41d8-8090-1b47c058a198)[View] all\n") == [
        ("Secret Assignment", "dabi8911-b0f9-41d8-8090-1b47c058a198")]


@pytest.mark.parametrize("text,value", [
    ("jdbc:postgresql://db.example.net:5432/app?user=app&password=Falcon7550.aW\n", "Falcon7550.aW"),
    ("Server=db;Database=app;Password=I.uO[Ey|L_;\n", "I.uO[Ey|L_"),
    ("./manage.sh --passwd 'yh[ta~[[#zc:5dlhryuit!k&de'\n", "yh[ta~[[#zc:5dlhryuit!k&de"),
])
def test_query_connection_string_and_quoted_flag_values_are_literals(scanner, text, value):
    assert [v for _, v in _found(scanner, text)] == [value]


def test_a_connection_string_password_may_open_with_an_equals_sign(scanner):
    text = "Host=db;Port=5432;Username=app;Password==%90mr[~p8nx{~_;Database=db\n"
    assert _found(scanner, text) == [("Secret Assignment", "=%90mr[~p8nx{~_")]
    assert _found(scanner, "if a.password==b.password: return\n") == []


def test_names_joined_by_separators_are_not_cut_tokens():
    """A run's model name or folder ends a field like a cut-off token would, but it is words joined by separators;
    a random run of the same length still is one."""
    scanner = SecretScanner()
    for name in ("gpt4__SWE-bench_Lite__default__t-0.00__p-0.95__c-2.00__install-1",
                 "swe-agent/trajectories/gpt4__SWE-bench_Lite__default__t-0.00__p-0.95__c-2.00__install-1/x.traj",
                 "outputs/CodeActAgent/claude-3-5-sonnet-20241022_maxiter_50_N_v0.15.0-run_1/llm_completions/a.json"):
        assert scanner.find(name) == []
    cut = "it ended with aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1v"   # ("the key was …": a sentence naming it, found too)
    assert [(f.label, cut[f.start:f.end]) for f in scanner.find(cut)] == [("Truncated Token", cut[14:])]
