"""What a secret looks like: the rules `redaction.Redactor` applies. Pure: no I/O.

Each rule finds one shape and says where the secret is in it and its kind, so the marker
that takes its place, `[redacted:github-token]`, keeps nothing of it (neither its prefix nor
its length). The shapes, each modelled on the published patterns of gitleaks, detect-secrets
and the providers' own documentation of their token formats (no rule file is copied):

- provider tokens by their prefixes: GitHub (classic and fine-grained), GitLab, Slack
  (tokens and webhooks), OpenAI, Anthropic, AWS access key ids, Google API keys and OAuth
  client secrets, Stripe secret and restricted keys, npm, PyPI, Hugging Face, Docker Hub;
- `Authorization:` headers (the credential after the scheme, which stays);
- a password in a URL (`https://user:PASSWORD@host`: the user and host stay);
- passwords on command lines: `--password=x`, `--password x` (any `--...-password`), `-p`
  after a registry `login`, `mysql -px`, `sshpass -p`, `curl -u user:x`, `redis-cli -a`,
  OpenSSL's `pass:x`, a netrc line;
- private key blocks (PEM, OpenSSH, PGP, PuTTY), from BEGIN to END (or, in a text cut
  short, to its end or the quote that ends the JSON string holding it);
- a value assigned to a secret's name (`*_TOKEN`, `*_SECRET`, `*_KEY`, `PASSWORD`...) in
  shell, env, YAML, JSON, TOML and Python shapes: any value for a password's name, a
  random-looking one (long, mixed, high in entropy) for the others, so `TOKEN_LIMIT=4096`
  and `sort_key: name` stay; references (`$VAR`, `${VAR}`, `<...>`, `os.environ[...]`) and
  placeholders stay too.

Markers never match a rule, so redacting twice changes nothing. Each rule is cheap to try
on text holding nothing secret: its pattern starts with a literal (which `re` finds as fast
as `in` does), or it runs only when a word it needs is in the text (`in`, a substring search),
or, for provider tokens, only in a text with a long run of token characters (`has_run`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import NamedTuple

from clew.core.pattern import LazyPattern, lazy


def marker(kind: str) -> str:
    """The text that stands where a secret of `kind` was."""
    return f"[redacted:{kind}]"


# A secret's value: in double or single quotes (maybe escaped, inside JSON text), else a run
# of characters that cannot end a shell word or a YAML scalar.
_VALUE = (
    r"(?:\\{0,3}\"(?P<dq>(?:[^\"\\\n]|\\[^\"\n])*)\\{0,3}\""
    r"|'(?P<sq>[^'\n]*)'"
    r"|(?P<bare>[^\s\"'`,;|&<>(){}\[\]\\]+))"
)

# Values that say "a secret goes here" rather than being one.
_PLACEHOLDERS = frozenset(
    {
        "",
        "none",
        "null",
        "nil",
        "true",
        "false",
        "undefined",
        "changeme",
        "change-me",
        "password",
        "passwd",
        "secret",
        "token",
        "example",
        "placeholder",
        "redacted",
        "hidden",
        "masked",
        "unset",
        "not-set",
        "notset",
        "required",
        "optional",
        "string",
        "str",
        "your-password",
        "your_password",
        "yourpassword",
        "your-token",
        "your_token",
        "mypassword",
        "my-password",
        "my_password",
        "prompt",
        "stdin",
        "env",
        "...",
    }
)
_FILLER = frozenset("*xX•.#-_")


def _placeholder(value: str) -> bool:
    """Whether `value` is a reference or a placeholder, not a secret."""
    if value.lower() in _PLACEHOLDERS or value.startswith(("[redacted:", "$", "%", "<", "{{")):
        return True
    if set(value) <= _FILLER:
        return True
    # An expression read from elsewhere: os.environ["X"], getpass(), settings.X, process.env.X
    return value.endswith((")", "]")) or value.startswith(
        ("os.", "process.env", "env.", "settings.", "config.", "self.", "args.", "var.")
    )


def _entropy(value: str) -> float:
    """Shannon entropy of `value`, in bits per character."""
    counts: dict[str, int] = {}
    for char in value:
        counts[char] = counts.get(char, 0) + 1
    size = len(value)
    return -sum(n / size * math.log2(n / size) for n in counts.values())


_HEX = frozenset("0123456789abcdefABCDEF")


def looks_random(value: str) -> bool:
    """Whether `value` looks like a generated secret: 16 characters or more with no spaces,
    not a path, URL, digest or dotted name, and high in entropy with at least two kinds of
    character (hex: 32 digits or more)."""
    if len(value) < 16 or len(value) > 4096 or _placeholder(value):
        return False
    if any(c.isspace() for c in value) or "://" in value:
        return False
    if value.startswith(("/", "~", "./", "../", "sha256:", "sha512-", "sha384-", "sha1-")):
        return False
    if set(value) <= _HEX:
        return len(value) >= 32 and _entropy(value) >= 3.0
    classes = (
        any(c.islower() for c in value)
        + any(c.isupper() for c in value)
        + any(c.isdigit() for c in value)
    )
    if classes < 2 or _entropy(value) < 3.2:
        return False
    # A dotted or slashed name of words (com.example.Key, path/to/file.txt) is not random:
    # a generated secret's pieces are not all words.
    pieces = [p for p in re.split(r"[./:\-]", value) if p]
    return not (len(pieces) > 1 and all(p.isalpha() or p.isdigit() for p in pieces))


# -- names of secrets ----------------------------------------------------------------------------

_PASSWORD_PARTS = frozenset({"password", "passwd", "pass", "pwd", "passphrase", "pw"})
_PASSWORD_ENDS = ("password", "passwd", "passphrase")  # PGPASSWORD, dbpasswd
_SECRET_ENDS = ("token", "secret", "apikey", "key", "credentials", "credential")
_SECRET_PARTS = frozenset(
    {"secret", "token", "key", "apikey", "credential", "credentials", "auth", "cred", "creds"}
    | {"privatekey", "secretkey", "accesskey", "authtoken", "apitoken", "sessiontoken"}
)
# A name's last part that says its value is about a secret, not the secret itself.
_NOT_SECRET = frozenset(
    {"url", "uri", "path", "file", "dir", "name", "id", "ids", "type", "env", "var", "length"}
    | {"len", "limit", "count", "size", "max", "min", "ttl", "timeout", "expiry", "expires"}
    | {"expiration", "at", "header", "field", "prefix", "endpoint", "host", "port", "region"}
    | {"algorithm", "alg", "format", "mode", "version", "enabled", "required", "policy"}
    | {"hint", "label", "index", "kind", "source", "location", "lifetime", "rotation"}
    | {"usage", "number", "num", "cache", "store", "provider", "scope", "scopes", "method"}
    | {"strategy", "style", "schema", "pattern", "regex", "manager", "tokens", "keys"}
    | {"fingerprint", "hash", "digest", "sha", "encoding", "budget", "file_path", "filename"}
    | {"column", "table", "class", "module", "policy", "secrets", "template", "reset"}
)
_CAMEL = lazy(r"(?<=[a-z0-9])(?=[A-Z])")
_PARTS = lazy(r"[_.\-\s]+")


_NAMES: dict[str, str | None] = {}  # name_kind's answers: JSON keys repeat on every write


def name_kind(name: str) -> str | None:
    """What a name says its value is: 'password', 'secret', 'aws-secret-key', or None."""
    if name in _NAMES:
        return _NAMES[name]
    if len(_NAMES) >= 4096:
        _NAMES.clear()
    kind = _NAMES[name] = _name_kind(name)
    return kind


def _name_kind(name: str) -> str | None:
    parts = [p for p in _PARTS.split(_CAMEL.sub("_", name).lower()) if p]
    if not parts or parts[-1] in _NOT_SECRET or parts == ["key"]:
        return None  # a bare `key` names any map's keys (`- key: app`), not a secret
    if any(p in _PASSWORD_PARTS or p.endswith(_PASSWORD_ENDS) for p in parts):
        return "password"
    if any(p in _SECRET_PARTS or p.endswith(_SECRET_ENDS) for p in parts):
        joined = "".join(parts)
        if ("aws" in parts and "secret" in joined) or "secretaccesskey" in joined:
            return "aws-secret-key"
        return "secret"
    return None


_AWS_SECRET = lazy(r"[A-Za-z0-9/+]{40}")


def assigned(kind: str, value: str, shape: str) -> bool:
    """Whether a value given to a name of `kind` is a secret: any value a password's name is
    given in code or config (`shape` 'code'), a real-looking one in prose, and a
    random-looking one for the other names."""
    if _placeholder(value) or len(value) > 4096:
        return False
    if kind == "aws-secret-key" and _AWS_SECRET.fullmatch(value):
        return True  # 40 of base64's characters: it may well start with a slash
    if kind == "password":
        if shape == "code":
            return not value.isdigit() or len(value) >= 4
        # prose ("Password: required"): only what no word looks like
        return len(value) >= 6 and not value.isalpha()
    return looks_random(value)


# -- the rules ---------------------------------------------------------------------------------

Judge = Callable[["re.Match[str]"], "tuple[str, str] | None"]


class Rule(NamedTuple):
    """A secret shape: its pattern, what must be in a text for it to be worth running (any
    of `gate`, in the lower-cased text when `folded`; none: the pattern starts with a literal,
    which `re` finds as fast as `in` does), and what a match holds: the kind and the named
    group that is the secret (the whole match for ''), or a judge that decides both."""

    kind: str
    pattern: LazyPattern
    gate: tuple[str, ...] = ()
    folded: bool = False
    group: str | int = ""  # -1: the first group if the pattern has one (an extra rule)
    judge: Judge | None = None  # (kind, group) from the match, or None to keep it
    back: int = 0  # the secret starts this many characters before the match (its prefix)


def _value_of(match: re.Match[str]) -> tuple[str, str]:
    """The group that holds a `_VALUE`, and its text."""
    groups = match.groupdict()
    for group in ("dq", "sq", "bare"):
        text = groups.get(group)
        if text is not None:
            return group, text
    return "bare", ""


def _judge_password(match: re.Match[str]) -> tuple[str, str] | None:
    group, value = _value_of(match)
    return None if _placeholder(value) else ("password", group)


def _random_body(body: str) -> bool:
    """A token's body after its prefix is generated, not words (`sk-learn-...`)."""
    classes = (
        any(c.islower() for c in body)
        + any(c.isupper() for c in body)
        + any(c.isdigit() for c in body)
    )
    return classes >= 2 and _entropy(body) >= 3.0


def _judge_sk(match: re.Match[str]) -> tuple[str, str] | None:
    if match.group("ant"):
        return "anthropic-key", ""
    return ("openai-key", "") if _random_body(match.group("body")) else None


def _judge_a(match: re.Match[str]) -> tuple[str, str] | None:
    return ("google-api-key" if match.group("google") else "aws-access-key-id"), ""


def _judge_g(match: re.Match[str]) -> tuple[str, str] | None:
    return ("google-oauth-secret" if match.group("oauth") else "gitlab-token"), ""


def _judge_hf(match: re.Match[str]) -> tuple[str, str] | None:
    return ("huggingface-token", "") if _random_body(match.group("body")) else None


def _judge_header(match: re.Match[str]) -> tuple[str, str] | None:
    value = match.group("cred")
    return None if _placeholder(value) or len(value) < 4 else ("authorization", "cred")


def _judge_url(match: re.Match[str]) -> tuple[str, str] | None:
    value = match.group("pw")
    return None if _placeholder(value) else ("url-password", "pw")


# Shapes found by a literal that starts them, whatever the text (a search for a pattern that
# starts with a literal is as cheap as `in`).
LITERAL: tuple[Rule, ...] = (
    Rule(
        "private-key",
        lazy(
            r"-----BEGIN (?P<label>[A-Z0-9 ]*?)PRIVATE KEY(?P<block>(?: BLOCK)?)-----"
            r"(?:.*?-----END (?P=label)PRIVATE KEY(?P=block)-----|(?:[^\"\\]|\\[^\"])*)",
            re.S,
        ),
    ),
    Rule(
        "private-key",
        lazy(
            r"PuTTY-User-Key-File-\d+:(?:.*?Private-MAC: *[0-9a-fA-F]+|(?:[^\"\\]|\\[^\"])*)",
            re.S,
        ),
    ),
    Rule(
        "url-password",
        lazy(r"://(?P<user>[^\s:/?#@'\"<>]{0,256}):(?P<pw>[^\s/@'\"<>]{1,256})@"),
        judge=_judge_url,
    ),
)

# Provider tokens: each a run of 20 or more of [A-Za-z0-9_-] (prefix and body), so they are
# looked for only in a text that has such a run (`has_run`, ~1 µs a KB; a text with none,
# most text, skips their 14 searches). Each pattern starts with its literal prefix, the
# character before it checked by a lookbehind placed after it: one placed before would cost
# the fast search of the prefix (~15 µs a KB).
PROVIDERS: tuple[Rule, ...] = (
    Rule(
        "github-token",
        lazy(r"gh(?<![A-Za-z0-9_]gh)[pousr]_[A-Za-z0-9]{36,251}(?![A-Za-z0-9])"),
    ),
    Rule(
        "github-token",
        lazy(r"github_pat_(?<![A-Za-z0-9_]github_pat_)[A-Za-z0-9_]{36,244}(?![A-Za-z0-9_])"),
    ),
    Rule(
        "gitlab-token",
        lazy(
            r"gl(?<![A-Za-z0-9_\-]gl)(?:pat|dt|rt|ptt|ft|soat|cbt|imt|oas|agent|ffct|wt)-"
            r"[A-Za-z0-9_\-]{20,}(?:\.[A-Za-z0-9_\-]{2,}){0,2}"
        ),
    ),
    Rule(
        "slack-token",
        lazy(
            r"x(?<![A-Za-z0-9]x)(?:ox[abposre]-(?:\d+-)+[0-9A-Za-z]{8,}[0-9A-Za-z\-]*"
            r"|oxe\.xox[bp]-\d-[0-9A-Za-z]{20,}|app-\d-[A-Z0-9]+-\d+-[a-z0-9]{16,})"
        ),
    ),
    Rule(
        "slack-webhook",
        lazy(r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9_/]{20,})"),
        group="s",
    ),
    Rule(
        "openai-key",
        lazy(
            r"sk-(?<![A-Za-z0-9_\-]sk-)(?:(?P<ant>ant-(?:api|admin|oat|ort|sid)\d{2}-"
            r"[A-Za-z0-9_\-]{32,})|(?:(?:proj|svcacct|admin|None)-)?(?P<body>[A-Za-z0-9_\-]{32,}))"
            r"(?![A-Za-z0-9_\-])"
        ),
        judge=_judge_sk,
    ),
    Rule(
        "aws-access-key-id",
        lazy(
            r"A(?<![A-Za-z0-9_\-]A)(?:(?:KIA|SIA|BIA|CCA|3T[A-Z0-9])[A-Z0-9]{16}(?![A-Za-z0-9])"
            r"|(?P<google>Iza[0-9A-Za-z_\-]{35}(?![A-Za-z0-9_\-])))"
        ),
        judge=_judge_a,
    ),
    Rule(
        "google-oauth-secret",
        lazy(
            r"G(?<![A-Za-z0-9_\-]G)(?:(?P<oauth>OCSPX-[0-9A-Za-z_\-]{28}(?![A-Za-z0-9_\-]))"
            r"|R1348941[A-Za-z0-9_\-]{20,})"
        ),
        judge=_judge_g,
    ),
    Rule(
        "stripe-key",
        lazy(
            r"k_(?<![A-Za-z0-9_][sr]k_)(?<=[sr]k_)(?:live|test|prod)_[0-9A-Za-z]{16,247}"
            r"(?![A-Za-z0-9])"
        ),
        back=1,  # found by `k_`, a literal (the s or r before it is checked behind)
    ),
    Rule("stripe-key", lazy(r"whsec_(?<![A-Za-z0-9_]whsec_)[0-9A-Za-z]{24,}(?![A-Za-z0-9])")),
    Rule("npm-token", lazy(r"npm_(?<![A-Za-z0-9_]npm_)[A-Za-z0-9]{36}(?![A-Za-z0-9_\-])")),
    Rule("pypi-token", lazy(r"pypi-AgE[A-Za-z0-9_\-]{50,}")),
    Rule(
        "huggingface-token",
        lazy(r"hf_(?<![A-Za-z0-9_]hf_)(?P<body>[A-Za-z]{34,40})(?![A-Za-z0-9_\-])"),
        judge=_judge_hf,
    ),
    Rule("docker-token", lazy(r"dckr_(?:pat|oat)_[A-Za-z0-9_\-]{24,}(?![A-Za-z0-9_\-])")),
)
SHORTEST = 8  # no rule finds a secret in fewer characters (a name, a separator, a value)
_RUN = 20  # every provider token is a run of at least this many of [A-Za-z0-9_-]
_RUN_CLASSES = bytes(
    0x61 if chr(b).isascii() and (chr(b).isalnum() or chr(b) in "_-") else 0x20 for b in range(256)
)
_RUN_NEEDLE = b"a" * _RUN


def has_run(text: str) -> bool:
    """Whether `text` has a run of `_RUN` or more of [A-Za-z0-9_-] (every other character,
    each byte of a non-ASCII one included, breaks a run)."""
    if len(text) < _RUN:
        return False
    return _RUN_NEEDLE in text.encode("utf-8", "surrogatepass").translate(_RUN_CLASSES)


# Passwords on command lines, each run when its program's name is in the text.
COMMANDS: tuple[Rule, ...] = (
    Rule(
        "password",
        lazy(r"(?i)login\b[^\n;&|]{0,300}?[ \t]-p(?:[ \t]+|=)?(?!-)" + _VALUE),
        ("login",),
        folded=True,
        judge=_judge_password,
    ),
    Rule(
        "password",
        lazy(r"sshpass[ \t]+-p[ \t]*" + _VALUE),
        ("sshpass",),
        judge=_judge_password,
    ),
    Rule(
        "password",
        lazy(r"(?i)(?:mysql|mariadb)[\w-]*[^\n;&|]{0,300}?[ \t]-p(?![\s\-])" + _VALUE),
        ("mysql", "mariadb"),
        folded=True,
        judge=_judge_password,
    ),
    Rule(
        "password",
        lazy(r"redis-cli\b[^\n;&|]{0,300}?[ \t]-a[ \t]+" + _VALUE),
        ("redis-cli",),
        judge=_judge_password,
    ),
    Rule(
        "password",
        lazy(
            r"curl\b[^\n;&|]{0,500}?[ \t](?:-u|--user|--proxy-user)(?:[ \t]+|=)"
            r"[\"']?[^\s:\"']+:(?P<bare>[^\s\"']+)"
        ),
        ("curl",),
        judge=_judge_password,
    ),
)

# Rules that need a word in the lower-cased text (their gate), tried when a word of a
# secret's name is in it (each of them holds one: auth, pass).
NAMED: tuple[Rule, ...] = (
    Rule(
        "authorization",
        lazy(
            r"(?i)authori[sz]ation\\{0,3}[\"']?[ \t]*[:=][ \t]*\\{0,3}[\"']?"
            r"(?:(?:bearer|basic|token|digest|negotiate|bot|apikey|key|sso-key|hmac"
            r"|aws4-hmac-sha256|ntlm|dpop|gitlab-ci-token)[ \t]+)?"
            r"(?P<cred>[^\s\"'\\,]+)"
        ),
        ("authori",),
        judge=_judge_header,
    ),
    Rule(
        "password",
        lazy(r"-pass(?:in|out)?[ \t]+pass:" + _VALUE),
        ("pass:",),
        judge=_judge_password,
    ),
    Rule(
        "password",
        lazy(r"machine[ \t]+\S+[ \t]+login[ \t]+\S+[ \t]+password[ \t]+" + _VALUE),
        ("machine",),
        judge=_judge_password,
    ),
)


def _called(match: re.Match[str], group: str) -> bool:
    """Whether a bare value is the start of an expression (`getpass.getpass()`, `env["X"]`)."""
    end = match.end(group)
    return group == "bare" and end < len(match.string) and match.string[end] in "([."


def _judge_option(match: re.Match[str]) -> tuple[str, str] | None:
    """Any value for a password's option (given with `=`, or one no word looks like: the
    option named in a sentence is no assignment), a random-looking one for the others."""
    group, value = _value_of(match)
    if _called(match, group):
        return None
    if match.group("pw"):
        shape = "code" if "=" in match.group(0)[: match.start(group) - match.start()] else "prose"
        return ("password", group) if assigned("password", value, shape) else None
    return ("secret", group) if looks_random(value) else None


# A command-line option named for a secret (`--db-password x`, `--api-key x`), in a text
# with a command line's option in it; it starts with its literal `-`, a fast search.
OPTION = Rule(
    "password",
    lazy(
        r"-(?<![\w-]-)-?(?:[a-z0-9]+[-_])*(?:(?P<pw>password|passwd|pass|pwd|passphrase)"
        r"|token|secret|api-?key|apikey|access-key|key|auth|credentials?)"
        r"(?:[ \t]*=[ \t]*|[ \t]+)(?!-)" + _VALUE
    ),
    judge=_judge_option,
)


# A value given to a name: the pattern is tried where a word of a secret's name is (found
# with `str.find` in the lower-cased text), never searched for (a case-insensitive
# alternation at every position costs ~150 µs a KB).
NAME_WORDS = ("pass", "pwd", "secret", "token", "key", "auth", "cred")
ASSIGNMENT = lazy(
    r"(?i)(?P<name>(?:pass|pwd|secret|token|key|auth|cred)[\w.\-]*)"
    r"\\{0,3}[\"']?\]?[ \t]*(?P<sep>:=|=>|=(?!=)|:(?!:)"
    r"(?:[ \t]*(?:str|bytes|SecretStr|Optional\[str\])[ \t]*=)?)[ \t]*" + _VALUE
)
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
_LEAD = lazy(r"[ \t]*(?:-[ \t]+)?(?:export[ \t]+)?")


def _judge_assignment(match: re.Match[str]) -> tuple[str, str] | None:
    """A value given to a name: the match starts at the word that makes it a secret's name
    (`TOKEN` of `GITHUB_TOKEN`), so the name's start is found here, going back."""
    text = match.string
    start = match.start()
    while start > 0 and text[start - 1] in _NAME_CHARS:
        start -= 1
    kind = name_kind(text[start : match.end("name")].lstrip("-"))
    if kind is None:
        return None
    group, value = _value_of(match)
    if _called(match, group):
        return None
    if group == "bare" and text[match.end("name") : match.end("name") + 1] in ('"', "'"):
        return None  # a JSON key's unquoted value is a number or a literal: a marker there
        # would leave the JSON unreadable (a quoted value is redacted inside its quotes)
    if group == "dq" and "\\" in value:  # JSON text inside text: judge the value as it reads
        value = value.replace('\\"', '"')
    line = text.rfind("\n", 0, start) + 1
    at_line_start = _LEAD.fullmatch(text, line, start) is not None
    code = group != "bare" or at_line_start or match.group("sep") != ":"
    return (kind, group) if assigned(kind, value, "code" if code else "prose") else None


ASSIGNED = Rule("secret", ASSIGNMENT, judge=_judge_assignment)
# Each word of a secret's name where a separator follows the name it is in (lower-cased).
SEPARATED = {
    word: lazy(re.escape(word) + r"[\w.\-]*\\{0,3}[\"']?\]?[ \t]*[:=]") for word in NAME_WORDS
}


KINDS: tuple[str, ...] = (
    "github-token",
    "gitlab-token",
    "slack-token",
    "slack-webhook",
    "openai-key",
    "anthropic-key",
    "aws-access-key-id",
    "aws-secret-key",
    "google-api-key",
    "google-oauth-secret",
    "stripe-key",
    "npm-token",
    "pypi-token",
    "huggingface-token",
    "docker-token",
    "authorization",
    "url-password",
    "password",
    "private-key",
    "secret",
)
KIND_NAME = lazy(r"[a-z0-9][a-z0-9\-]{0,39}")
