"""Identified entities: the files, URLs, hosts, services,
container images, versions and ticket ids a task touched, extracted deterministically from
its records. Pure.

Precision over recall: a value is taken only when its shape says what it is (a path with a
folder or a known extension, a URL, an IP or a domain with a known top-level name, the
argument of `systemctl restart`, an image in a container command, `v1.2.3`, `ABC-123`), never
because it is a word. Command lines are read for every kind; free text (messages, entries)
for the kinds whose shape is unmistakable; changed paths are files as they are.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from clew.core.pattern import lazy

KINDS = ("files", "urls", "hosts", "services", "images", "versions", "tickets")
PER_KIND = 10

_URL = lazy(r"\bhttps?://[^\s'\"<>`()\[\]{}]+", re.IGNORECASE)
_IPV4 = lazy(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w.])")
# Patterns stay small (they compile at import, on the hook's path); the known top-level
# names and file extensions are sets the matches are checked against.
_TLDS = frozenset(
    [
        "com",
        "org",
        "net",
        "io",
        "dev",
        "app",
        "cloud",
        "internal",
        "local",
        "ai",
        "co",
        "uk",
        "de",
        "fr",
        "eu",
        "us",
        "gov",
        "edu",
        "sh",
        "me",
        "info",
        "biz",
        "tech",
        "site",
        "online",
        "lan",
        "corp",
        "svc",
    ]
)
_DOMAIN = lazy(r"(?<![\w.@/-])(?:[a-z0-9][a-z0-9-]*\.)+[a-z]{2,8}(?![\w.-]*\w)", re.I)
_EXTENSIONS = frozenset(
    [
        "py",
        "pyi",
        "js",
        "mjs",
        "cjs",
        "ts",
        "tsx",
        "jsx",
        "go",
        "rs",
        "java",
        "kt",
        "rb",
        "php",
        "c",
        "h",
        "cc",
        "cpp",
        "hpp",
        "cs",
        "swift",
        "scala",
        "sql",
        "yaml",
        "yml",
        "json",
        "toml",
        "ini",
        "cfg",
        "conf",
        "env",
        "md",
        "rst",
        "txt",
        "csv",
        "lock",
        "sh",
        "bash",
        "zsh",
        "ps1",
        "html",
        "css",
        "scss",
        "vue",
        "svelte",
        "tf",
        "tfvars",
        "proto",
        "graphql",
        "xml",
        "gradle",
        "mk",
        "dockerfile",
        "log",
        "pem",
        "crt",
        "key",
        "db",
        "sqlite",
    ]
)
# A path: with a folder (a/b, ./a, ~/a, /a/b) or a bare name with an extension.
_PATH = lazy(
    r"(?<![\w:/.@-])(?:(?:~|\.{1,2})?/)?(?:[\w.@+-]+/)+[\w.@+-]+"
    r"|(?<![\w:/.@-])[\w@+-][\w.@+-]*\.[a-z0-9]{1,10}(?![\w-])",
    re.I,
)
_KNOWN_FILES = frozenset(
    {"Dockerfile", "Makefile", "Procfile", "Gemfile", "Jenkinsfile", "Vagrantfile", "Caddyfile"}
)
_VERSION = lazy(r"(?<![\w.])v\d+\.\d+(?:\.\d+)?(?:[-+][\w.]+)?(?![\w])")
_TICKET = lazy(r"(?<![\w-])[A-Z][A-Z0-9]{1,9}-[1-9]\d{0,6}(?![\w-])")
_PR = lazy(r"\b(?:PR|pr|issue|Issue|pull request|ticket)\s*#(\d{1,7})\b")
_SERVICE_VERBS = frozenset(
    {"start", "stop", "restart", "reload", "status", "enable", "disable", "try-restart"}
)
_IMAGE = lazy(r"^(?:[\w.-]+(?::\d+)?/)*[\w.-]+:[\w][\w.-]{0,127}$|^(?:[\w.-]+/)+[\w.-]+$")
_CONTAINER_TOOLS = frozenset({"docker", "podman", "nerdctl"})
_VALUE_OPTIONS = frozenset(
    {"-p", "--publish", "-v", "--volume", "-e", "--env", "--name", "-w", "--workdir"}
    | {"--network", "--env-file", "-u", "--user", "--entrypoint", "--mount", "--restart"}
    | {"-l", "--label", "--cpus", "-m", "--memory", "--platform", "-h", "--hostname"}
)
_COMPOSE_VERBS = frozenset({"up", "restart", "logs", "stop", "start", "build", "pull", "ps"})


def url_hostname(url: str) -> str | None:
    """`urllib.parse.urlsplit(url).hostname` of a URL `_URL` finds (no brackets, no
    whitespace), without importing urllib and ipaddress (~2 ms of a hook's start, whose
    task record reads the task's commands: `curl http://...`) when its host part is ASCII."""
    rest = url.partition("://")[2]
    if not rest.isascii():  # urlsplit checks a non-ASCII netloc's normalized form
        from urllib.parse import urlsplit

        return urlsplit(url).hostname
    end = len(rest)
    for separator in "/?#":
        at = rest.find(separator)
        if -1 < at < end:
            end = at
    host = rest[:end].rpartition("@")[2].partition(":")[0]
    if not host:
        return None
    name, percent, zone = host.partition("%")
    return name.lower() + percent + zone


def _clean(value: str) -> str:
    return value.rstrip(".,;:!?'\")]}>")


class _Found:
    """Values per kind, counted, in order of first sight."""

    def __init__(self) -> None:
        self.seen: dict[str, dict[str, int]] = {k: {} for k in KINDS}

    def add(self, kind: str, value: str) -> None:
        value = _clean(value.strip())
        if value and len(value) <= 300:
            bucket = self.seen[kind]
            bucket[value] = bucket.get(value, 0) + 1

    def result(self, per_kind: int) -> dict[str, tuple[str, ...]]:
        out: dict[str, tuple[str, ...]] = {}
        for kind in KINDS:
            bucket = self.seen[kind]
            order = {v: i for i, v in enumerate(bucket)}
            ranked = sorted(bucket, key=lambda v: (-bucket[v], order[v]))
            if ranked:
                out[kind] = tuple(ranked[:per_kind])
        return out


def _valid_ip(text: str) -> bool:
    parts = text.split(".")
    return all(p.isdigit() and int(p) <= 255 and (p == "0" or not p.startswith("0")) for p in parts)


# Every entity's shape holds one of these; prose without any is skipped at once.
_HINT = lazy(r"[./:#@]\w|-\d")


def _text(found: _Found, text: str, *, command: bool) -> None:
    """Entities whose shape is unmistakable: URLs and their hosts, IPs, domains, versions,
    tickets; paths only from commands or when they hold a folder and a known extension."""
    if _HINT.search(text) is None:
        return
    urls = [_clean(u) for u in _URL.findall(text)]
    rest = _URL.sub(" ", text)
    for url in urls:
        found.add("urls", url)
        host = url_hostname(url)
        if host and host not in ("localhost",):
            found.add("hosts", host)
    for ip in _IPV4.findall(rest):
        if _valid_ip(ip) and not ip.startswith("0."):
            found.add("hosts", ip)
    for match in _DOMAIN.finditer(rest):
        if _is_domain(match.group(0)):
            found.add("hosts", match.group(0).lower())
    for version in _VERSION.findall(rest):
        found.add("versions", version)
    for ticket in _TICKET.findall(rest):
        if not re.fullmatch(r"(?:UTF|ISO|SHA|TLS|SSL|HTTP|RFC|CVE|AES|RSA|X)-\d+", ticket):
            found.add("tickets", ticket)
    for number in _PR.findall(rest):
        found.add("tickets", f"#{number}")
    for match in _PATH.finditer(rest):
        path = _clean(match.group(0))
        head = path.split("/", 1)[0]
        if _is_domain(head) or ":" in path:
            continue  # a registry path or an image (ghcr.io/acme/app), not a file
        if _is_path(path, strict=not command):
            found.add("files", path)


def _is_domain(text: str) -> bool:
    """A host name whose last label is a known top-level name (not a file like setup.py)."""
    return _DOMAIN.fullmatch(text) is not None and text.rsplit(".", 1)[-1].lower() in _TLDS


def _known_extension(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return "." in name and name.rsplit(".", 1)[-1].lower() in _EXTENSIONS


def _is_path(path: str, *, strict: bool) -> bool:
    if path.count("/") == 0:
        return _known_extension(path) and not strict
    if re.fullmatch(r"[\d/.-]+", path):  # dates, fractions, versions: 2024/01/02, 1/2
        return False
    if re.fullmatch(r"[\w.-]+/[\w.-]+", path) and not re.search(r"\.\w{1,10}$", path):
        # a/b without an extension is as often "and/or" or an image name as a folder
        return False
    if strict:
        return _known_extension(path) or path.startswith(("/", "./", "../", "~/"))
    return True


_SHELL_WORD = lazy(r"'([^']*)'|\"([^\"]*)\"|(\S+)")


def _words(command: str) -> list[str]:
    """A command line's words, quotes taken off (shlex is ten times slower, and a command
    is read on every state render)."""
    return [a or b or c for a, b, c in _SHELL_WORD.findall(command)]


def _command(found: _Found, command: str) -> None:
    """A command line: services, images and files from what it runs, then the text rules."""
    for segment in re.split(r"\s*(?:&&|\|\||;|\|)\s*", command):
        words = _words(segment)
        while words and (words[0] in ("sudo", "env", "time", "nohup") or "=" in words[0]):
            words = words[1:]
        if not words:
            continue
        tool, args = words[0].rsplit("/", 1)[-1], words[1:]
        plain = [a for a in args if not a.startswith("-")]
        if tool == "systemctl" and len(plain) >= 2 and plain[0] in _SERVICE_VERBS:
            for name in plain[1:]:
                found.add("services", name.removesuffix(".service"))
        elif tool == "service" and len(plain) >= 2 and plain[1] in _SERVICE_VERBS:
            found.add("services", plain[0])
        elif tool in ("kubectl", "oc"):
            for arg in plain:
                kind, _, name = arg.partition("/")
                if name and kind in ("deployment", "deploy", "svc", "service", "statefulset"):
                    found.add("services", name)
        elif tool in _CONTAINER_TOOLS or tool == "docker-compose":
            _container(found, tool, args, plain)
        elif tool in ("ssh", "scp", "rsync"):
            for i, arg in enumerate(plain):
                user_host = re.fullmatch(r"[\w.-]+@([\w.-]+)(?::.*)?", arg)
                if user_host:
                    found.add("hosts", user_host.group(1))
                    if tool == "ssh" and i + 1 < len(plain):  # the remote command
                        _command(found, " ".join(plain[i + 1 :]))
                    break
        if tool in ("cat", "vim", "nano", "less", "head", "tail", "touch", "rm", "cp", "mv"):
            for arg in plain:
                named = "/" in arg or "." in arg or arg in _KNOWN_FILES
                if named and not _URL.match(arg) and ":" not in arg:
                    found.add("files", arg)
    _text(found, command, command=True)


def _container(found: _Found, tool: str, args: list[str], plain: list[str]) -> None:
    compose = tool == "docker-compose" or (plain[:1] == ["compose"])
    if compose:
        verbs = plain[1:] if plain[:1] == ["compose"] else plain
        if verbs and verbs[0] in _COMPOSE_VERBS:
            for name in verbs[1:]:
                found.add("services", name)
        return
    for i, arg in enumerate(args):
        if arg in ("-t", "--tag") and i + 1 < len(args):
            found.add("images", args[i + 1])
    if not plain:
        return
    verb = plain[0]
    if verb in ("pull", "push") and len(plain) > 1:
        found.add("images", plain[1])
    elif verb in ("run", "create"):
        # The image is the first word after the options (skipping the options' values).
        rest = args[args.index(verb) + 1 :]
        i = 0
        while i < len(rest):
            arg = rest[i]
            if arg.startswith("-"):
                i += 2 if arg in _VALUE_OPTIONS else 1
                continue
            if _IMAGE.match(arg) or re.fullmatch(r"[a-z][\w.-]*", arg):
                found.add("images", arg)
            break
    elif verb == "tag":
        for arg in plain[1:3]:
            found.add("images", arg)
    elif verb in ("restart", "stop", "start", "logs") and len(plain) > 1:
        for name in plain[1:]:
            if re.fullmatch(r"[a-zA-Z][\w.-]*", name):
                found.add("services", name)


def extract(
    *,
    commands: Iterable[str] = (),
    texts: Iterable[str] = (),
    paths: Iterable[str] = (),
    per_kind: int = PER_KIND,
) -> dict[str, tuple[str, ...]]:
    """The entities in a task's records: `commands` (command lines), `texts` (messages,
    entry summaries, step summaries) and `paths` (changed files); each kind's values most
    frequent first, then in the order given, at most `per_kind` of each."""
    found = _Found()
    for path in paths:
        found.add("files", path)
    for command in commands:
        _command(found, command)
    for text in texts:
        _text(found, text, command=False)
    # A host named by its URL is not also a file; a URL's path is not a file.
    return found.result(per_kind)


def merge(
    given: dict[str, list[str]] | None, found: dict[str, tuple[str, ...]]
) -> dict[str, tuple[str, ...]]:
    """Entities given (by an agent or a model) first, then the extracted ones not among them."""
    out: dict[str, tuple[str, ...]] = {}
    for kind in list(given or {}) + [k for k in found if k not in (given or {})]:
        values = list(dict.fromkeys([*(given or {}).get(kind, []), *found.get(kind, ())]))
        if values:
            out[kind] = tuple(values)
    return out
