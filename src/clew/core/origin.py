"""Who a call comes from, and what it may make this host do.

A wait of kind command, file or url makes the host act: run a shell command as the user clew
runs as, read one of its files, ask one of its local services. Who may add one is decided by
the door that took the call, never by the call's data:

- the host's own user (the Python API, the command line) may add any (`LOCAL`): it can run
  those commands itself; over stdio MCP, whose calls a model chooses, commands only when the
  user started `clew mcp --allow-commands`;
- through a server (`clew serve`, `clew mcp --port`), only an admin key, and only what the
  operator allowed at start: commands with `--allow-commands`, files inside a folder given
  to `--allow-wait-path`, URLs under a prefix given to `--allow-wait-url` (`HostRules`).
  Other keys may add none (`NOTHING`).

`refusal` says why rules refuse a wait (one line naming the option), and is what adding a
wait, importing a journal that adds one, and the server's scope check all ask. Adding a wait
that passes seals it (waits.py); only a sealed wait ever runs.

URLs are matched by their parsed parts (scheme, host, port, path segments), never as text:
a URL with a user name, a backslash, an encoded dot, slash or backslash, or a `.` or `..`
segment is refused outright, since the service may read it differently than the rule does.
"""

# No `from __future__ import annotations`: NamedTuple would compile each field's annotation
# text at import (2 ms on the hook path, which imports this module with the facade).
import os
from typing import TYPE_CHECKING, NamedTuple

from clew.errors import ScopeError, ValidationError

if TYPE_CHECKING:  # urllib.parse is only read once a URL is checked (not on the hook path)
    from urllib.parse import SplitResult

HOST_KINDS = ("command", "file", "url")  # the wait kinds that make this host act
# What each kind makes the host do, as refusals say it.
ACTS = {
    "command": "runs a command",
    "file": "reads a file of this host",
    "url": "fetches a URL of this host",
}
OPTIONS = {"command": "--allow-commands", "file": "--allow-wait-path", "url": "--allow-wait-url"}
_PORTS = {"http": 80, "https": 443}
_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


class UrlRule(NamedTuple):
    """A URL prefix a server lets waits fetch under: scheme, host, port and a path prefix
    (a whole path, or ending with / for everything below it)."""

    scheme: str
    host: str
    port: int
    path: str

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}{self.path}"


class HostRules(NamedTuple):
    """What a caller may make this host do through a wait: run commands, read files (inside
    `paths`, real folders; None: anywhere), fetch URLs (under `urls`; None: any local URL)."""

    commands: bool
    paths: tuple[str, ...] | None
    urls: tuple[UrlRule, ...] | None

    @property
    def local(self) -> bool:
        """Whether these are the host's own user's rules (nothing confined)."""
        return self.commands and self.paths is None and self.urls is None


LOCAL = HostRules(True, None, None)
NOTHING = HostRules(False, (), ())


class Origin(NamedTuple):
    """Who a call comes from, as the door that took it knows (never from the call's data):
    the door (python, cli, api, mcp, web, push), the server key's prefix (None: the host's
    own user) and scope, and what it may make this host do."""

    door: str = "python"
    key: str | None = None
    may: HostRules = LOCAL
    scope: str = "admin"


HOST_USER = Origin()  # a call of the Python API: the host's own user


def for_scope(scope: str, served: HostRules) -> HostRules:
    """What a server's key of `scope` may make the host do: an admin what the operator
    allowed (`served`), any other key nothing."""
    return served if scope == "admin" else NOTHING


# -- the operator's options, read once at start -------------------------------------------------


def folder_rule(text: str) -> str:
    """The real path of a folder given to --allow-wait-path; ValidationError if it is not one."""
    if not text or "\x00" in text:
        raise ValidationError(f"--allow-wait-path {text!r} is no folder's path; give a folder")
    real = os.path.realpath(os.path.expanduser(text))
    if not os.path.isdir(real):
        raise ValidationError(f"--allow-wait-path {text}: no such folder on this host")
    return real


def url_rule(text: str) -> UrlRule:
    """The rule of a URL prefix given to --allow-wait-url; ValidationError naming the option
    for one that is not an http(s) URL of this host's loopback with a clean path."""
    parts = _parts(text, "--allow-wait-url")
    if parts.query or parts.fragment:
        raise ValidationError(f"--allow-wait-url {text}: a prefix has no query or fragment")
    return UrlRule(parts.scheme, str(parts.hostname), _port(parts), parts.path or "/")


def _parts(url: str, what: str) -> "SplitResult":
    """`url` split, or ValidationError for one no rule may match (see the module docstring)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises for a port that is not a number
    except ValueError as exc:
        raise ValidationError(f"{what} {url!r} is not a valid URL ({exc})") from None
    if any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in url):
        raise ValidationError(f"{what} {url!r} holds spaces or control characters")
    if parts.scheme not in _PORTS:
        raise ValidationError(f"{what} {url!r} must start with http:// or https://")
    if "@" in parts.netloc:
        raise ValidationError(f"{what} {url!r} holds a user name or password; give none")
    if parts.hostname not in _LOOPBACK:
        raise ValidationError(
            f"{what} {url!r} is not on this host's loopback (127.0.0.1, localhost, [::1])"
        )
    path = parts.path
    lowered = path.lower()
    if "\\" in url or any(code in lowered for code in ("%2e", "%2f", "%5c")):
        raise ValidationError(f"{what} {url!r} has an encoded dot, slash or a backslash")
    if any(segment in (".", "..") for segment in path.split("/")):
        raise ValidationError(f"{what} {url!r} has a . or .. segment in its path")
    return parts


def _port(parts: "SplitResult") -> int:
    return parts.port if parts.port is not None else _PORTS[parts.scheme]


# -- the one check --------------------------------------------------------------------------------


def closed(kind: str, rules: HostRules) -> str | None:
    """Why `rules` allow no wait of `kind` at all, in one line naming the option; None when
    they allow some."""
    if kind == "command" and not rules.commands:
        return "this server runs no command for a wait unless started with --allow-commands"
    if kind == "file" and rules.paths == ():
        return "this server reads no file for a wait unless started with --allow-wait-path DIR"
    if kind == "url" and rules.urls == ():
        return "this server fetches no URL for a wait unless started with --allow-wait-url URL"
    return None


def refusal(kind: str, target: str, rules: HostRules) -> str | None:
    """Why `rules` refuse a wait of `kind` on `target` (a file's absolute path, a URL), in
    one line naming the option that would allow it; None when they allow it."""
    if kind not in HOST_KINDS or rules.local:
        return None
    shut = closed(kind, rules)
    if shut is not None or kind == "command":
        return shut
    if kind == "file":
        if rules.paths is None or confining_folder(target, rules) is not None:
            return None
        return (
            f"{target} is outside the folders this server lets waits read"
            f" (--allow-wait-path {' '.join(rules.paths)})"
        )
    if rules.urls is None or any(_matches(target, rule) for rule in rules.urls):
        return None
    return (
        f"{target} is not under a URL this server lets waits fetch"
        f" (--allow-wait-url {' '.join(str(r) for r in rules.urls)})"
    )


def permit(kind: str, target: str, rules: HostRules) -> str | None:
    """Check that `rules` allow the wait (ScopeError naming the option if not); return the
    folder a file wait is confined to (None when unconfined)."""
    why = refusal(kind, target, rules)
    if why is not None:
        raise ScopeError(why)
    return confining_folder(target, rules) if kind == "file" else None


def confining_folder(path: str, rules: HostRules) -> str | None:
    """The allowed folder that holds `path`'s real path (symbolic links resolved), or None."""
    if rules.paths is None:
        return None
    return inside(path, rules.paths)


def inside(path: str, folders: tuple[str, ...]) -> str | None:
    """The first of `folders` (real paths) that holds `path` once resolved, or None."""
    try:
        real = os.path.realpath(path)
    except (OSError, ValueError):
        return None
    for folder in folders:
        if real == folder or real.startswith(folder.rstrip(os.sep) + os.sep):
            return folder
    return None


def _matches(url: str, rule: UrlRule) -> bool:
    try:
        parts = _parts(url, "url")
    except ValidationError:
        return False
    if (parts.scheme, parts.hostname, _port(parts)) != (rule.scheme, rule.host, rule.port):
        return False
    path = parts.path or "/"
    if rule.path.endswith("/"):
        return path.startswith(rule.path)
    return path == rule.path or path.startswith(rule.path + "/")
