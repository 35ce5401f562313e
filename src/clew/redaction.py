"""Secrets taken out of text before it is stored. Pure: no I/O.

A `Redactor` finds known secret shapes in a text and puts a marker naming the kind in each
one's place, `[redacted:github-token]`, keeping nothing of the secret (neither its prefix
nor its length). What it knows, each rule modelled on the published patterns of gitleaks,
detect-secrets and the providers' own documentation of their token formats:

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

Markers never match a rule, so redacting twice changes nothing. A rule runs only when a
text holds one of its anchors (found with `in`, which is far cheaper than a regex
alternation), so text with nothing secret-like costs a few substring searches.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

from clew.pattern import LazyPattern, lazy

__all__ = ["KINDS", "Found", "Redactor", "marker"]


def marker(kind: str) -> str:
    """The text that stands where a secret of `kind` was."""
    return f"[redacted:{kind}]"


# A finding's place and kind -> how many: what an event records of its redactions.
Found = dict[tuple[str, str], int]

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
        "", "none", "null", "nil", "true", "false", "undefined", "changeme", "change-me",
        "password", "passwd", "secret", "token", "example", "placeholder", "redacted",
        "hidden", "masked", "unset", "not-set", "notset", "required", "optional", "string",
        "str", "your-password", "your_password", "yourpassword", "your-token", "your_token",
        "mypassword", "my-password", "my_password", "prompt", "stdin", "env", "...",
    }
)  # fmt: skip
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


def _assigned(kind: str, value: str, shape: str) -> bool:
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
_LITERAL: tuple[Rule, ...] = (
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
# looked for only in a text that has such a run (`_has_run`, ~1 µs a KB; a text with none,
# most text, skips their 14 searches). Each pattern starts with its literal prefix, the
# character before it checked by a lookbehind placed after it: one placed before would cost
# the fast search of the prefix (~15 µs a KB).
_PROVIDERS: tuple[Rule, ...] = (
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
_SHORTEST = 8  # no rule finds a secret in fewer characters (a name, a separator, a value)
_RUN = 20  # every provider token is a run of at least this many of [A-Za-z0-9_-]
_RUN_CLASSES = bytes(
    0x61 if chr(b).isascii() and (chr(b).isalnum() or chr(b) in "_-") else 0x20 for b in range(256)
)
_RUN_NEEDLE = b"a" * _RUN


def _has_run(text: str) -> bool:
    """Whether `text` has a run of `_RUN` or more of [A-Za-z0-9_-] (every other character,
    each byte of a non-ASCII one included, breaks a run)."""
    if len(text) < _RUN:
        return False
    return _RUN_NEEDLE in text.encode("utf-8", "surrogatepass").translate(_RUN_CLASSES)


# Passwords on command lines, each run when its program's name is in the text.
_COMMANDS: tuple[Rule, ...] = (
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
_NAMED: tuple[Rule, ...] = (
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
        return ("password", group) if _assigned("password", value, shape) else None
    return ("secret", group) if looks_random(value) else None


# A command-line option named for a secret (`--db-password x`, `--api-key x`), in a text
# with a command line's option in it; it starts with its literal `-`, a fast search.
_OPTION = Rule(
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
_NAME_WORDS = ("pass", "pwd", "secret", "token", "key", "auth", "cred")
_ASSIGNMENT = lazy(
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
    return (kind, group) if _assigned(kind, value, "code" if code else "prose") else None


_ASSIGNED = Rule("secret", _ASSIGNMENT, judge=_judge_assignment)
# Each word of a secret's name where a separator follows the name it is in (lower-cased).
_SEPARATED = {
    word: lazy(re.escape(word) + r"[\w.\-]*\\{0,3}[\"']?\]?[ \t]*[:=]") for word in _NAME_WORDS
}


KINDS: tuple[str, ...] = (
    "github-token", "gitlab-token", "slack-token", "slack-webhook", "openai-key",
    "anthropic-key", "aws-access-key-id", "aws-secret-key", "google-api-key",
    "google-oauth-secret", "stripe-key", "npm-token", "pypi-token", "huggingface-token",
    "docker-token", "authorization", "url-password", "password", "private-key", "secret",
)  # fmt: skip
_KIND_NAME = lazy(r"[a-z0-9][a-z0-9\-]{0,39}")


# -- JSON: which keys name structure ---------------------------------------------------------

# In JSON an agent hands clew (a message, metadata, a tool's arguments), a string under one of
# these keys is structure (an id, a type, a time, a path...), never redacted; every other
# string is free text.
_STRUCTURE_KEYS = frozenset(
    {"id", "type", "role", "name", "uuid", "timestamp", "model", "status", "signature"}
    | {"index", "object", "created", "author", "cwd", "path", "file_path", "filepath"}
    | {"filename", "workspace", "version", "mime_type", "mimeType", "media_type"}
    | {"stop_reason", "finish_reason", "stop_sequence", "encoding", "language", "lang"}
    | {"gitBranch", "userType", "entrypoint", "level", "isSidechain", "isMeta", "action"}
)
_STRUCTURE_SUFFIXES = ("_id", "Id", "_ids", "Ids", "_uuid", "Uuid", "_at", "_path", "_hash")
_SAFE_KEY = lazy(r"[A-Za-z_][A-Za-z0-9_\-]{0,39}")


def structure_key(key: str) -> bool:
    """Whether a JSON key names structure (an id, a type, a time, a path), not free text."""
    return key in _STRUCTURE_KEYS or key.endswith(_STRUCTURE_SUFFIXES)


class Redactor:
    """Redaction by the built-in rules plus `extra` ones (kind -> pattern; its first group is
    the secret when it has one, else the whole match), never of a value in `allow` or one a
    pattern of `allow_patterns` matches whole; `enabled=False` redacts nothing."""

    __slots__ = ("_allow", "_allow_patterns", "_clean", "_extra", "_keys", "enabled")

    def __init__(
        self,
        *,
        enabled: bool = True,
        extra: Mapping[str, str] | None = None,
        allow: Iterable[str] = (),
        allow_patterns: Iterable[str] = (),
    ) -> None:
        self.enabled = enabled
        self._extra = tuple(
            Rule(kind, lazy(source), (), group=-1) for kind, source in (extra or {}).items()
        )
        self._allow = frozenset(allow)
        self._allow_patterns = tuple(lazy(p) for p in allow_patterns)
        # Texts this redactor made or found clean, so a text checked before its event was
        # made (a turn's message, a command) is not scanned again when the event is.
        self._clean: dict[str, None] = {}
        self._keys: dict[str, str] = {}  # JSON keys as findings name them (`_shown_key`)

    def __repr__(self) -> str:
        return f"Redactor(enabled={self.enabled}, extra={len(self._extra)})"

    # -- text ------------------------------------------------------------------------------

    def text(self, text: str, found: Found | None = None, field: str = "") -> str:
        """`text` with every secret in it replaced by its marker; each one counted in
        `found` under (`field`, its kind)."""
        if not self.enabled or len(text) < _SHORTEST or text in self._clean:
            return text
        out = text
        for rule in _PROVIDERS if _has_run(text) else ():
            if rule.pattern.search(out) is not None:
                out = self._apply(rule, out, found, field)
        for rule in _LITERAL:
            if rule.pattern.search(out) is not None:
                out = self._apply(rule, out, found, field)
        low = out.lower()
        if " -" in out or out[0] == "-":  # a command line's option
            for rule in _COMMANDS:
                if any(g in (low if rule.folded else out) for g in rule.gate):
                    out = self._apply(rule, out, found, field)
            low = out.lower()
            if _OPTION.pattern.search(out) is not None:
                out = self._apply(_OPTION, out, found, field)
                low = out.lower()
        words = [w for w in _NAME_WORDS if w in low]
        if words:
            for rule in _NAMED:
                if rule.gate[0] in low:
                    out = self._apply(rule, out, found, field)
                    low = out.lower()
            out = self._assignments(out, low, words, found, field)
        for rule in self._extra:
            out = self._apply(rule, out, found, field)
        if len(self._clean) >= 512:  # bounded: a new text is scanned again, never trusted
            self._clean.clear()
        self._clean[out] = None
        return out

    def output(self, value: str | bytes, found: Found | None = None, field: str = "") -> Any:
        """A command's output (text, or bytes that are not UTF-8) with its secrets redacted;
        bytes stay bytes, every byte outside a secret as it was."""
        if isinstance(value, str):
            return self.text(value, found, field)
        decoded = value.decode("utf-8", "surrogateescape")
        done = self.text(decoded, found, field)
        return value if done is decoded else done.encode("utf-8", "surrogateescape")

    def _apply(self, rule: Rule, text: str, found: Found | None, field: str) -> str:
        """`text` with the secrets `rule` finds in it replaced."""
        pieces: list[str] = []
        done = 0
        for match in rule.pattern.finditer(text):
            span = self._secret(rule, match)
            if span is None:
                continue
            start, end, kind = span
            pieces += (text[done:start], marker(kind))
            done = end
            if found is not None:
                found[(field, kind)] = found.get((field, kind), 0) + 1
        if not pieces:
            return text
        pieces.append(text[done:])
        return "".join(pieces)

    def _secret(self, rule: Rule, match: re.Match[str]) -> tuple[int, int, str] | None:
        """Where the secret of a match is and its kind, or None when it is none."""
        if rule.judge is None:
            kind, group = rule.kind, rule.group
            if group == -1:
                group = 1 if match.re.groups else 0
        else:
            judged = rule.judge(match)
            if judged is None:
                return None
            kind, group = judged
        start, end = match.span(group or 0)
        start -= rule.back if start >= 0 else 0
        if start < 0 or start == end or self._allowed(match.string[start:end]):
            return None
        return start, end, kind

    def _assignments(
        self, text: str, low: str, words: list[str], found: Found | None, field: str
    ) -> str:
        """`text` with the values given to secrets' names replaced. Each word of such a
        name is searched for in the lower-cased text `low` with a separator after its name
        (a pattern starting with the word: a fast search), and the assignment's pattern is
        tried on the text only there."""
        if len(low) != len(text):  # lower-casing moved the places (rare): search instead
            return self._apply(_ASSIGNED, text, found, field)
        places = sorted(m.start() for w in words for m in _SEPARATED[w].finditer(low))
        if not places:
            return text
        pieces: list[str] = []
        done = 0
        compiled = _ASSIGNMENT.compiled
        for at in places:
            if at < done:
                continue
            match = compiled.match(text, at)
            span = None if match is None else self._secret(_ASSIGNED, match)
            if span is None:
                continue
            start, end, kind = span
            pieces += (text[done:start], marker(kind))
            done = end
            if found is not None:
                found[(field, kind)] = found.get((field, kind), 0) + 1
        if not pieces:
            return text
        pieces.append(text[done:])
        return "".join(pieces)

    def _allowed(self, value: str) -> bool:
        if value in self._allow:
            return True
        return any(p.fullmatch(value) for p in self._allow_patterns)

    # -- JSON ------------------------------------------------------------------------------

    def json(self, value: Any, found: Found | None = None, field: str = "") -> Any:
        """JSON data an agent handed clew with the secrets in its free text redacted: every
        string but those under keys that name structure (`structure_key`), and a string
        under a secret's name (`api_key`, `DB_PASSWORD`) judged as an assignment. Keys stay.
        Copy on write: what changes nothing is returned as it was."""
        if not self.enabled:
            return value
        if isinstance(value, str):
            return self.text(value, found, field)
        if isinstance(value, list):
            copy: list[Any] | None = None
            for i, item in enumerate(value):
                done = self.json(item, found, f"{field}[]")
                if done is not item:
                    copy = copy if copy is not None else list(value)
                    copy[i] = done
            return value if copy is None else copy
        if isinstance(value, dict):
            changed: dict[str, Any] | None = None
            for key, item in value.items():
                if isinstance(item, str) and structure_key(key):
                    continue
                where = f"{field}.{self._shown_key(key)}" if field else self._shown_key(key)
                if isinstance(item, str):
                    done = self._keyed(key, item, found, where)
                else:
                    done = self.json(item, found, where)
                if done is not item:
                    changed = changed if changed is not None else dict(value)
                    changed[key] = done
            return value if changed is None else changed
        return value

    # -- events ----------------------------------------------------------------------------

    def event(
        self,
        type: str,
        data: dict[str, Any],
        found: Found | None = None,
        done: frozenset[str] = frozenset(),
    ) -> dict[str, Any]:
        """An event's data with the secrets in its free-text fields (free_text.TEXT_FIELDS)
        redacted, and what was redacted, with `found` (what the caller redacted before it
        made the data), recorded under "redactions": [{field, kind, count}] (merged with
        any the data holds: an imported event's). `done` names fields (or the start of their
        names) the caller redacted itself just now with this redactor, or derived from what
        it redacted so (a turn's message, the session state folded from it). Copy on write."""
        found = {} if found is None else found
        if self.enabled:
            fields = _fields(type, done)
            if fields is None:  # an event type with no map: every string but structure
                data = self.json(data, found, "")
            else:
                for name, steps, json in fields:
                    data = self._at(data, steps, 0, json, found, name)
        if not found:
            return data
        return {**data, "redactions": merged(data.get("redactions"), found)}

    def _at(
        self, node: Any, steps: tuple[str | int, ...], i: int, json: bool, found: Found, field: str
    ) -> Any:
        """`node` with the field `steps[i:]` names redacted (copy on write)."""
        if i == len(steps):
            if isinstance(node, str):
                return self.text(node, found, field)
            if isinstance(node, bytes):
                return self.output(node, found, field)
            return self.json(node, found, field) if json else node
        step = steps[i]
        if step == "[]" or step == "*":
            if step == "[]" and isinstance(node, list):
                items: Iterable[tuple[Any, Any]] = enumerate(node)
            elif step == "*" and isinstance(node, dict):
                items = node.items()
            else:
                return node
            copy: Any = None
            for key, item in items:
                done = self._at(item, steps, i + 1, json, found, field)
                if done is not item:
                    if copy is None:
                        copy = list(node) if isinstance(node, list) else dict(node)
                    copy[key] = done
            return node if copy is None else copy
        if isinstance(step, int):
            if not isinstance(node, list) or not -len(node) <= step < len(node):
                return node
            done = self._at(node[step], steps, i + 1, json, found, field)
            if done is node[step]:
                return node
            copy = list(node)
            copy[step] = done
            return copy
        if not isinstance(node, dict) or step not in node:
            return node
        done = self._at(node[step], steps, i + 1, json, found, field)
        return node if done is node[step] else {**node, step: done}

    def _keyed(self, key: str, value: str, found: Found | None, field: str) -> str:
        """A string under `key`: its text redacted, then, under a secret's name, the whole
        value if it is a secret (a JSON object's assignment: {"api_key": "..."})."""
        done = self.text(value, found, field)
        kind = name_kind(key) if done is value else None
        if kind is not None and _assigned(kind, value, "code") and not self._allowed(value):
            if found is not None:
                found[(field, kind)] = found.get((field, kind), 0) + 1
            done = marker(kind)
        return done

    def _shown_key(self, key: str) -> str:
        """A key as a finding's field names it: as it is when it is a plain name with no
        secret in it, else `*` (a finding never carries what it redacted)."""
        shown = self._keys.get(key)
        if shown is None:
            plain = _SAFE_KEY.fullmatch(key) is not None and self.text(key) == key
            shown = key if plain else "*"
            if len(self._keys) >= 4096:
                self._keys.clear()
            self._keys[key] = shown
        return shown


_WALKS: dict[tuple[str, frozenset[str]], Any] = {}


def _fields(type: str, done: frozenset[str]) -> Any:
    """The free-text fields of an event type (free_text.FIELDS) less those named by (or
    starting with a name in) `done`, worked out once per type and `done`; None for a type
    with no map."""
    key = (type, done)
    if key not in _WALKS:
        from clew.free_text import FIELDS  # here: the map is read once per process

        fields = FIELDS.get(type)
        if fields is not None and done:
            fields = tuple(f for f in fields if not f[0].startswith(tuple(done)))
        _WALKS[key] = fields
    return _WALKS[key]


def merged(recorded: object, found: Found) -> list[dict[str, Any]]:
    """An event's "redactions": what it recorded (a list of {field, kind, count}) with
    `found` added, one item per field and kind, in order."""
    total: dict[tuple[str, str], int] = {}
    if isinstance(recorded, list):
        for item in recorded:
            if isinstance(item, dict):
                key = (str(item.get("field")), str(item.get("kind")))
                count = item.get("count")
                total[key] = total.get(key, 0) + (count if isinstance(count, int) else 0)
    for key, count in found.items():
        total[key] = total.get(key, 0) + count
    return [{"field": f, "kind": k, "count": n} for (f, k), n in sorted(total.items())]


def checked_kind(kind: object, where: str) -> str:
    """An extra rule's kind, checked: lower-case letters, digits and dashes."""
    if not isinstance(kind, str) or not _KIND_NAME.fullmatch(kind):
        raise ValueError(
            f"{where}: a kind is lower-case letters, digits and dashes (at most 40), not {kind!r}"
        )
    return kind


DEFAULT = Redactor()
OFF = Redactor(enabled=False)
