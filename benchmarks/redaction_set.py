"""Make the labelled set of secrets and near-misses that redaction is measured on.

    python benchmarks/redaction_set.py          # writes tests/data/redaction_set.jsonl

Every secret is generated here, from a fixed seed, in the shape its provider documents
(GitHub's `ghp_` + 36 base62 and `github_pat_` + 22 + `_` + 59; GitLab's `glpat-` + 20;
Slack's `xoxb-` digits-digits-24; OpenAI's `sk-proj-` and the older `sk-` ... `T3BlbkFJ` ...;
Anthropic's `sk-ant-api03-` + 93 + `AA`; AWS's `AKIA`/`ASIA` + 16 and 40-character secret
keys; Google's `AIza` + 35 and `GOCSPX-` + 28; Stripe's `sk_live_`/`rk_live_`/`whsec_`; npm's
`npm_` + 36; PyPI's macaroons `pypi-AgEIcHlwaS5vcmc...`; Hugging Face's `hf_` + 34; Docker
Hub's `dckr_pat_`), or as the shape a person writes it (a password in a URL, on a command
line, in an env file, YAML, JSON or Python; a private key block of random base64): none is
real, and none was ever issued. Each sits in a context an agent's memory holds (a command, a
log line, a config file, a JSON body, a sentence).

The near-misses are what a coding agent's text is full of and must stay: git SHAs, UUIDs,
base64 data, sha256 and sha512 digests, npm integrity hashes, docker image digests, the
jwt.io example token and other public test values, long identifiers, random-looking file
names, hex colours, ids of many systems, public keys and certificates, publishable keys,
placeholders and references (`${API_KEY}`, `<your-password>`, `os.environ[...]`), values of
names that only look secret (`TOKEN_LIMIT=4096`, `sort_key: name`), and the options that
take no password (`ssh -p 2222`, `mkdir -p`, `docker run -p 8080:80`).

Each line: {"text", "kind" (the secret's kind, null for a near-miss), "secret" (the part
that must not survive: none of its words of 4 characters or more may be left; null for a
near-miss), "category"}. The categories named "not caught: ..." are shapes the rules are
known to miss, kept so that the recall measured says so.
"""

from __future__ import annotations

import base64
import json
import random
import string
import sys
import uuid
from collections.abc import Callable
from pathlib import Path

SEED = 2024
OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "redaction_set.jsonl"

B62 = string.ascii_letters + string.digits
B64URL = B62 + "-_"
B64 = B62 + "+/"
HEX = "0123456789abcdef"
UPPER_DIGITS = string.ascii_uppercase + string.digits


class Maker:
    """Random values of documented shapes, from one seeded generator."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def chars(self, alphabet: str, n: int) -> str:
        return "".join(self.rng.choice(alphabet) for _ in range(n))

    def pick(self, *options: str) -> str:
        return self.rng.choice(options)

    def password(self) -> str:
        words = ("river", "Falcon", "blue", "Summer", "quartz", "Orbit", "maple", "Delta")
        return self.pick(
            self.chars(B62, 12),
            self.chars(B62 + "!@#%^*", 16),
            f"{self.pick(*words)}{self.rng.randint(10, 9999)}{self.pick('!', '#', '$', '')}",
            f"{self.pick(*words)}-{self.pick(*words)}-{self.rng.randint(1, 99)}",
        )


def secrets(m: Maker) -> list[dict[str, object]]:
    """The positives: (kind, secret, text) in many contexts each."""
    out: list[dict[str, object]] = []

    def add(kind: str, secret: str, text: str, category: str) -> None:
        assert secret in text
        out.append({"text": text, "kind": kind, "secret": secret, "category": category})

    contexts: tuple[Callable[[str], str], ...] = (
        lambda s: s,
        lambda s: f"export TOKEN_VALUE={s}",
        lambda s: f'{{"credentials": {{"value": "{s}"}}}}',
        lambda s: f"2024-05-01T10:22:03Z INFO using credential {s} for the upload",
        lambda s: f"curl -s https://api.example.com/v1/items?key={s}",
        lambda s: f"I pasted it here: {s} -- please keep it safe",
        lambda s: f"      value: {s}",
        lambda s: f"docker login ghcr.io -u bot -p {s}",
    )

    def spread(kind: str, make: Callable[[], str], n: int, category: str) -> None:
        for i in range(n):
            secret = make()
            add(kind, secret, contexts[i % len(contexts)](secret), category)

    spread("github-token", lambda: m.pick("ghp_", "gho_", "ghu_", "ghs_", "ghr_")
           + m.chars(B62, 36), 12, "github classic")  # fmt: skip
    spread("github-token", lambda: "github_pat_" + m.chars(B62, 22) + "_" + m.chars(B62, 59),
           6, "github fine-grained")  # fmt: skip
    spread("gitlab-token", lambda: m.pick("glpat-", "gldt-", "glrt-", "glptt-")
           + m.chars(B64URL, 20), 9, "gitlab")  # fmt: skip
    spread("slack-token", lambda: m.pick("xoxb", "xoxp") + f"-{m.chars(string.digits, 12)}"
           f"-{m.chars(string.digits, 13)}-{m.chars(B62, 24)}", 8, "slack")  # fmt: skip
    for _ in range(3):
        path = f"T{m.chars(UPPER_DIGITS, 8)}/B{m.chars(UPPER_DIGITS, 10)}/{m.chars(B62, 24)}"
        add("slack-webhook", path, f"SLACK_URL=https://hooks.slack.com/services/{path}",
            "slack webhook")  # fmt: skip
    spread("openai-key", lambda: "sk-proj-" + m.chars(B64URL, 74) + "T3BlbkFJ"
           + m.chars(B64URL, 74), 6, "openai project")  # fmt: skip
    spread("openai-key", lambda: "sk-" + m.chars(B62, 20) + "T3BlbkFJ" + m.chars(B62, 20), 4,
           "openai legacy")  # fmt: skip
    spread("anthropic-key", lambda: "sk-ant-api03-" + m.chars(B64URL, 93) + "AA", 8,
           "anthropic")  # fmt: skip
    spread("aws-access-key-id", lambda: m.pick("AKIA", "ASIA") + m.chars(string.ascii_uppercase
           + "234567", 16), 8, "aws access key id")  # fmt: skip
    for shape in (
        "aws_secret_access_key = {s}",
        "AWS_SECRET_ACCESS_KEY={s}",
        'export AWS_SECRET_ACCESS_KEY="{s}"',
        '    "SecretAccessKey": "{s}",',
        "aws_secret_access_key={s}",
        "  aws_secret_key: {s}",
    ):
        secret = m.chars(B64, 40)
        add("aws-secret-key", secret, shape.format(s=secret), "aws secret key")
    spread("google-api-key", lambda: "AIza" + m.chars(B64URL, 35), 8, "google api key")
    spread("google-oauth-secret", lambda: "GOCSPX-" + m.chars(B64URL, 28), 4, "google oauth")
    spread("stripe-key", lambda: m.pick("sk_live_", "rk_live_", "sk_test_") + m.chars(B62, 24),
           8, "stripe")  # fmt: skip
    spread("stripe-key", lambda: "whsec_" + m.chars(B62, 32), 2, "stripe webhook")
    spread("npm-token", lambda: "npm_" + m.chars(B62, 36), 4, "npm")
    spread("pypi-token", lambda: "pypi-AgEIcHlwaS5vcmc" + m.chars(B64URL, 120), 4, "pypi")
    spread("huggingface-token", lambda: "hf_" + m.chars(string.ascii_letters, 34), 4, "hf")
    spread("docker-token", lambda: "dckr_pat_" + m.chars(B64URL, 27), 3, "docker hub")

    # Authorization headers: the credential after the scheme.
    for shape in (
        "curl -H 'Authorization: Bearer {s}' https://api.example.com/v2/me",
        'headers = {{"Authorization": "Bearer {s}"}}',
        "> GET /api HTTP/1.1\n> Authorization: Basic {s}\n> Accept: */*",
        "requests.get(url, headers={{'authorization': 'Token {s}'}})",
        "proxy-authorization: Bearer {s}",
        'fetch(u, {{ headers: {{ Authorization: "Bearer {s}" }} }})',
    ):
        secret = m.pick(m.chars(B64URL, 40), base64.b64encode(m.chars(B62, 24).encode()).decode())
        add("authorization", secret, shape.format(s=secret), "authorization header")
    for _ in range(3):  # a JWT handed over as a bearer credential
        jwt = "eyJhbGciOiJIUzI1NiJ9." + m.chars(B64URL, 60) + "." + m.chars(B64URL, 43)
        add("authorization", jwt, f"Authorization: Bearer {jwt}", "authorization jwt")

    # Passwords in URLs.
    for scheme, host in (
        ("postgres", "db.internal:5432/app"),
        ("postgresql", "10.0.0.5/prod"),
        ("mysql", "localhost:3306/shop"),
        ("redis", "cache:6379/0"),
        ("amqp", "rabbit:5672/vhost"),
        ("mongodb+srv", "cluster0.abcde.mongodb.net/test"),
        ("https", "registry.example.com/v2/"),
        ("ftp", "files.example.com/pub"),
    ):
        pw = m.password()
        add("url-password", pw, f"DATABASE_URL={scheme}://app_user:{pw}@{host}", "url password")

    # Passwords on command lines and in files.
    shapes = (
        "docker login registry.example.com -u deploy -p {s}",
        "podman login -u me -p {s} quay.io",
        "mysql -h db -u root -p{s} shop < dump.sql",
        "sshpass -p {s} ssh admin@10.0.0.7",
        "pg_dump --dbname=app --password={s}",
        "./manage.py createsuperuser --password {s}",
        "redis-cli -h cache -a {s} PING",
        "curl -u admin:{s} https://jenkins.example.com/api/json",
        "PGPASSWORD={s} psql -h db -U app",
        "MYSQL_PWD={s} mysqldump shop",
        "DB_PASSWORD={s}",
        "password: {s}",
        '  "password": "{s}",',
        'conn = connect(host="db", user="app", password="{s}")',
        "machine api.example.com login bot password {s}",
        "openssl pkcs12 -in cert.p12 -passin pass:{s} -nodes",
        "SMTP_PASS={s}",
        "spring.datasource.password={s}",
        'ADMIN_PASSWORD = "{s}"',
        "rabbitmqctl add_user app --password={s}",
    )
    for shape in shapes:
        pw = m.password()
        add("password", pw, shape.format(s=pw), "password")

    # Private keys: random bytes in a key's armour (not keys: nothing signs with them).
    for label in ("RSA ", "EC ", "", "OPENSSH ", "ENCRYPTED ", "DSA "):
        body = base64.b64encode(m.rng.randbytes(m.rng.randint(300, 900))).decode()
        lines = "\n".join(body[i : i + 64] for i in range(0, len(body), 64))
        block = f"-----BEGIN {label}PRIVATE KEY-----\n{lines}\n-----END {label}PRIVATE KEY-----"
        add("private-key", lines, f"$ cat id_key\n{block}\n$ ", "private key")
    body = base64.b64encode(m.rng.randbytes(400)).decode()
    add("private-key", body[:64], f'{{"private_key": "-----BEGIN PRIVATE KEY-----\\n{body[:64]}'
        f'\\n{body[64:128]}\\n-----END PRIVATE KEY-----\\n"}}', "private key in json")  # fmt: skip
    cut = base64.b64encode(m.rng.randbytes(200)).decode()
    add("private-key", cut[:64], f"-----BEGIN RSA PRIVATE KEY-----\n{cut[:64]}\n{cut[64:128]}\n"
        "[output truncated]", "private key cut short")  # fmt: skip

    # Values given to secrets' names.
    names = (
        ("SECRET_KEY={s}", "env"),
        ("API_KEY: {s}", "yaml"),
        ('"client_secret": "{s}"', "json"),
        ("JWT_SECRET={s}", "env"),
        ('apiKey = "{s}"', "js"),
        ("SESSION_TOKEN={s}", "env"),
        ("x-api-key: {s}", "header"),
        ("api_token = '{s}'", "python"),
        ('signing_key = "{s}"', "toml"),
        ("ENCRYPTION_KEY={s}", "env"),
        ("  auth: {s}", "docker config"),
        ("DJANGO_SECRET_KEY={s}", "env"),
        ("access_token={s}", "query"),
        ("private_token: {s}", "yaml"),
        ("--api-key {s}", "option"),
        ("--token={s}", "option"),
    )
    for shape, where in names:
        value = m.pick(m.chars(B62, 32), m.chars(HEX, 40), m.chars(B64URL, 43))
        add("secret", value, shape.format(s=value), f"assigned ({where})")
    # What the rules are known not to catch, kept in the set so that recall says so: a
    # secret with neither a provider's prefix nor a secret's name, a password with spaces
    # in a sentence, a session cookie, a bearer token outside a header.
    hard = (
        ("secret", m.chars(HEX, 40), "here is the key you asked for {s}, keep it", "unnamed"),
        ("secret", "SK" + m.chars(HEX, 32), "TWILIO_SID_VALUE SK used: {s}", "unnamed"),
        ("aws-secret-key", m.chars(B64, 40), "the secret access key is {s}", "unnamed"),
        ("password", "correct horse battery staple", "my password is correct horse battery"
         " staple", "password in a sentence"),
        ("secret", m.chars(B62, 32), "Cookie: sessionid={s}; csrftoken=abc", "cookie"),
        ("secret", m.chars(B64URL, 40), "sending bearer {s} to the upstream", "bearer in a log"),
        ("password", m.chars(string.ascii_lowercase, 10), "mysql --password {s} shop",
         "lower-case password option"),
        ("secret", m.chars(B62, 24), "use {s} as the webhook signing value", "unnamed"),
    )  # fmt: skip
    for kind, secret, shape, category in hard:
        add(kind, secret, shape.replace("{s}", secret), f"not caught: {category}")
    for _ in range(2):  # a JWT given to a token's name
        jwt = "eyJhbGciOiJSUzI1NiJ9." + m.chars(B64URL, 80) + "." + m.chars(B64URL, 86)
        add("secret", jwt, f"ID_TOKEN={jwt}", "assigned jwt")
    return out


def near_misses(m: Maker) -> list[dict[str, object]]:
    """What must stay: every one of these is kept as it is."""
    texts: list[tuple[str, str]] = []

    def add(category: str, text: str) -> None:
        texts.append((category, text))

    for _ in range(6):
        sha = m.chars(HEX, 40)
        add("git sha", m.pick(f"commit {sha}", f"git checkout {sha}", f"HEAD is now at"
            f" {sha[:7]} fix the retry", f"Merge: {sha[:7]} {m.chars(HEX, 7)}",
            f'"sha": "{sha}"', f"parent {sha}"))  # fmt: skip
    for _ in range(6):
        u = str(uuid.UUID(int=m.rng.getrandbits(128), version=4))
        add("uuid", m.pick(f"request_id={u}", f'"id": "{u}"', f"trace {u} finished",
            f"SESSION_ID={u}", f"/api/v1/jobs/{u}/status", f"run_id: {u}"))  # fmt: skip
    for _ in range(6):
        blob = base64.b64encode(m.rng.randbytes(m.rng.randint(40, 200))).decode()
        add("base64 data", m.pick(f"data:image/png;base64,{blob}", f'"content": "{blob}"',
            f"<img src='data:image/gif;base64,{blob}'>", f"payload={blob}"))  # fmt: skip
    for _ in range(6):
        digest = m.chars(HEX, 64)
        add("sha256 digest", m.pick(f"{digest}  clew-1.4.0.tar.gz", f"sha256:{digest}",
            f"SHA256 ({m.chars(string.ascii_lowercase, 6)}.zip) = {digest}",
            f'"checksum": "{digest}"', f"expected hash {digest}"))  # fmt: skip
    for _ in range(6):
        integrity = "sha512-" + base64.b64encode(m.rng.randbytes(64)).decode()
        add("npm integrity", m.pick(f'"integrity": "{integrity}"', f"integrity {integrity}",
            f"  resolved {integrity}"))  # fmt: skip
    for _ in range(6):
        digest = m.chars(HEX, 64)
        add("docker digest", m.pick(f"ghcr.io/acme/api@sha256:{digest}", f"Digest: sha256:{digest}",
            f"docker pull nginx@sha256:{digest}", f"image: redis@sha256:{digest}"))  # fmt: skip
    jwt_io = (
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwi"
        "aWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
    )
    for text in (
        f"The example from jwt.io: {jwt_io}",
        f"assert decode({jwt_io!r})['sub'] == '1234567890'",
        f"expected = '{jwt_io}'",
        f"paste a token like {jwt_io} into the debugger",
        f"SAMPLE_JWT_HEADER = '{jwt_io.split('.')[0]}'",
        "AKIAIOSFODNN7EXAMPL is one character short of a key id",
    ):
        add("public test value", text)
    for text in (
        "test_redaction_keeps_every_field_of_every_event_type_byte_identical",
        "AbstractSingletonProxyFactoryBeanConfigurationInitializer",
        "com.example.service.authentication.TokenValidatorFactory",
        "def handle_secret_rotation_request(self, request):",
        "ERR_LEDGER_4417: ConnectionResetError in retry_with_exponential_backoff",
        "kubernetes.io/service-account-token-projection-volume",
        "tokenizer_config_for_cl100k_base_offline_encoding",
        "class PasswordResetTokenGeneratorTests(TestCase):",
        "SECRET_KEY_FALLBACKS_ARE_CHECKED_IN_ORDER_OF_DEFINITION",
        "the TokenBucketRateLimiter allows 60 requests per minute",
    ):
        add("long identifier", text)
    for _ in range(8):
        add("file name", m.pick(
            f"chunk-{m.chars(HEX, 8)}.{m.chars(HEX, 8)}.js", f"{m.chars(HEX, 32)}.tmp",
            f"IMG_{m.rng.randint(2019, 2025)}0115_{m.rng.randint(100000, 235959)}.jpg",
            f"report-2024-01-15T09-30-12Z-{m.chars(HEX, 6)}.json",
            f"/tmp/pytest-of-dev/pytest-{m.rng.randint(1, 999)}/test_api0/{m.chars(B62, 10)}.db",
            f"assets/index-{m.chars(B64URL, 8)}.css", "__pycache__/redaction.cpython-311.pyc",
            f"build/{m.chars(HEX, 16)}/libfoo.so"))  # fmt: skip
    for _ in range(5):
        add("hex colour", m.pick(f"color: #{m.chars(HEX, 6)};", f"background: #{m.chars(HEX, 3)}",
            f'"accent": "#{m.chars(HEX, 6)}"', f"border: 1px solid #{m.chars(HEX, 8)}",
        ))  # fmt: skip
    for text in (
        f"task {m.chars('0123456789abcdefghjkmnpqrstvwxyz', 10)} completed",
        f"ulid 01{m.chars('0123456789ABCDEFGHJKMNPQRSTVWXYZ', 24)}",
        f"ObjectId('{m.chars(HEX, 24)}')",
        f"pod web-{m.chars(HEX, 10)}-{m.chars('bcdfghjklmnpqrstvwxz2456789', 5)} Running",
        "arn:aws:iam::123456789012:role/deploy-role",
        "aws account 123456789012 in eu-west-1",
        f"AIDA{m.chars(UPPER_DIGITS, 16)} is the IAM user's unique id",
        f"i-{m.chars(HEX, 17)} stopped",
        f"vpc-{m.chars(HEX, 17)} sg-{m.chars(HEX, 17)}",
        f"Stripe publishable key pk_live_{m.chars(B62, 24)}",
        f"pk_test_{m.chars(B62, 24)} goes in the browser",
        f"build #{m.rng.randint(1000, 99999)} of {m.chars(HEX, 12)}",
    ):
        add("id", text)
    for text in (
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + m.chars(B64, 43) + " dev@laptop",
        "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ" + m.chars(B64, 200) + " ci@runner",
        "-----BEGIN CERTIFICATE-----\n"
        + base64.b64encode(m.rng.randbytes(300)).decode()[:64]
        + "\n-----END CERTIFICATE-----",
        "-----BEGIN PUBLIC KEY-----\n"
        + base64.b64encode(m.rng.randbytes(200)).decode()[:64]
        + "\n-----END PUBLIC KEY-----",
        "Host key fingerprint is SHA256:" + m.chars(B64, 43),
    ):
        add("public key", text)
    for text in (
        "API_KEY=${API_KEY}",
        "GITHUB_TOKEN=$GITHUB_TOKEN",
        "password: <your-password>",
        'token: "***"',
        'password = os.environ["DB_PASSWORD"]',
        "api_key = settings.OPENAI_API_KEY",
        "SECRET_KEY=changeme",
        "password: ${{ secrets.DB_PASSWORD }}",
        "export AWS_SECRET_ACCESS_KEY=<secret>",
        "Authorization: Bearer $TOKEN",
        "Authorization: Bearer <token>",
        "postgres://app:${DB_PASSWORD}@db:5432/app",
        "DB_PASSWORD=",
        "token=None",
        'client_secret: "{{ vault_client_secret }}"',
        "password = getpass.getpass()",
    ):
        add("placeholder", text)
    for text in (
        "TOKEN_LIMIT=4096",
        "max_tokens: 1024",
        "PASSWORD_MIN_LENGTH=12",
        "sort_key: created_at",
        "primary_key: id",
        "tokenizer: cl100k_base",
        "KEY_FILE=/etc/ssl/private/server.key",
        "secret_name: db-credentials",
        "auth: required",
        "api_key_env: OPENAI_API_KEY",
        "SSH_KEY_PATH=~/.ssh/id_ed25519",
        "token_url: https://oauth2.googleapis.com/token",
        "cache_key: user-profile-v2",
        "Password: required for every admin action",
        "the key: it was in the drawer",
        "TOKEN_TTL=3600",
        "AUTH_PROVIDER=github",
        "credentials: default",
    ):
        add("name only", text)
    for text in (
        "ssh -p 2222 deploy@10.0.0.7",
        "mkdir -p build/out && cp -p a b",
        "docker run -p 8080:80 -p 4443:443 nginx",
        "pytest -p no:cacheprovider -q tests",
        "git add -p src/clew/redaction.py",
        "psql -p 5432 -U app -h db",
        "mysql -u root -p shop",
        "curl -u deploy https://example.com",
        "docker login -u me --password-stdin ghcr.io < token.txt",
        "docker login ghcr.io",
        "kubectl port-forward svc/api 8080:80 -n prod",
        "gh auth login --with-token < token.txt",
        "python -m pip install -U pip --user",
        "rsync -avz -e 'ssh -p 2200' src/ host:dst/",
        "sudo -u postgres psql",
        "npm login --registry=https://registry.npmjs.org",
    ):
        add("command", text)
    for text in (
        "https://github.com/acme/api/pull/4417",
        "postgres://localhost:5432/app",
        "git@github.com:acme/api.git",
        "https://deploy@git.example.com/acme/api.git",
        "mailto:ops@example.com",
        "http://[::1]:8080/healthz",
        "redis://cache:6379/0",
        "https://example.com/search?q=token+expired&page=2",
    ):
        add("url", text)
    for text in (
        "The password is stored in Vault, never in the repo.",
        "Rotate the API key every 90 days and revoke the old one.",
        "Token: expired. Log in again to get a new one.",
        "We decided to keep secrets in the cloud's secret manager.",
        "ghp_ tokens are GitHub's classic personal access tokens.",
        "sk-learn-compatible-estimator-wrapper-for-the-pipeline",
        "the auth token request failed with 401, check the key",
        "Passing --password on the command line leaks it to ps; use --password-stdin.",
    ):
        add("prose", text)
    return [{"text": t, "kind": None, "secret": None, "category": c} for c, t in texts]


def build(seed: int = SEED) -> list[dict[str, object]]:
    """The whole set, positives then near-misses, the same for a seed."""
    m = Maker(seed)
    return secrets(m) + near_misses(m)


def main() -> int:
    rows = build()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with OUT.open("w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    positives = sum(1 for r in rows if r["kind"])
    print(f"wrote {len(rows)} strings ({positives} secrets, {len(rows) - positives} near-misses)"
          f" to {OUT}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
