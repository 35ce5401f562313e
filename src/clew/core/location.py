"""Where the store lives when nobody says: found like git finds `.git`.

Order: an explicit path, then $CLEW_DB, then `.clew/clew.db` in the nearest
directory upward that has a `.clew/` folder, then a per-user default
($XDG_DATA_HOME/clew/clew.db, ~/.local/share/clew/clew.db).
"""

from __future__ import annotations

import os

STORE_DIR = ".clew"
STORE_FILE = "clew.db"
DEFAULT_SPACE = "default"


# os.path rather than pathlib: pathlib's import cost lands on every CLI start.


def user_default() -> str:
    """Return the per-user store path used when no project store is found."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "share"
    )
    return os.path.join(base, "clew", STORE_FILE)


def find_project_store(start: str) -> str | None:
    """Return `.clew/clew.db` of the nearest directory at or above `start` with `.clew/`."""
    directory = os.path.abspath(start)
    while True:
        if os.path.isdir(os.path.join(directory, STORE_DIR)):
            return os.path.join(directory, STORE_DIR, STORE_FILE)
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def locate_store(
    explicit: str | os.PathLike[str] | None = None, cwd: str | None = None
) -> tuple[str, str]:
    """Return the store location to open and where it came from: "--db", "CLEW_DB",
    "project" (a `.clew/` upward) or "user" (the per-user default)."""
    if explicit is not None and os.fspath(explicit) != "":
        return os.fspath(explicit), "--db"
    env = os.environ.get("CLEW_DB")
    if env:
        return env, "CLEW_DB"
    found = find_project_store(os.path.realpath(cwd or os.getcwd()))
    return (found, "project") if found is not None else (user_default(), "user")


def resolve_store(explicit: str | os.PathLike[str] | None = None, cwd: str | None = None) -> str:
    """Return the store location to open, following the documented order."""
    return locate_store(explicit, cwd)[0]


URL_SCHEMES = ("postgresql://", "postgres://")


def is_url(location: str) -> bool:
    """Whether a store location is a PostgreSQL URL (a team store) rather than a file path."""
    return location.startswith(URL_SCHEMES)


def shown(location: str) -> str:
    """The location as it may be printed: a URL's password replaced by `***`."""
    if not is_url(location):
        return location
    from urllib.parse import urlsplit, urlunsplit  # only for a URL

    try:
        parts = urlsplit(location)
        if parts.password is None:
            return location
        port = f":{parts.port}" if parts.port else ""
        netloc = f"{parts.username or ''}:***@{parts.hostname or ''}{port}"
        return urlunsplit(parts._replace(netloc=netloc))
    except ValueError:  # a malformed URL: show only its scheme
        return location.split("://", 1)[0] + "://***"


DEFAULT_BUSY_TIMEOUT = 5.0
MAX_BUSY_TIMEOUT = 86_400.0  # a day: a longer wait is a hung process, not a busy store


def resolve_busy_timeout(explicit: object = None) -> float:
    """Return the seconds to wait for a busy store: explicit, then $CLEW_BUSY_TIMEOUT, then 5."""
    from clew.errors import ValidationError

    value = explicit if explicit is not None else os.environ.get("CLEW_BUSY_TIMEOUT")
    if value is None:
        return DEFAULT_BUSY_TIMEOUT
    try:
        if isinstance(value, bool):
            raise TypeError(value)
        seconds = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        seconds = -1.0
    if not 0 <= seconds <= MAX_BUSY_TIMEOUT:  # also refuses NaN
        source = "busy timeout" if explicit is not None else "$CLEW_BUSY_TIMEOUT"
        raise ValidationError(
            f"{source} {value!r} is not a number of seconds from 0 to {MAX_BUSY_TIMEOUT:.0f}"
        )
    return seconds


def resolve_space(explicit: str | None = None) -> str:
    """Return the space to use: explicit, then $CLEW_SPACE, then 'default'."""
    return explicit or os.environ.get("CLEW_SPACE") or DEFAULT_SPACE


def real_path(path: str) -> str:
    """A folder as one canonical path: user and links expanded. A path with the NUL
    character is no folder's: ValidationError (the OS would refuse it with a ValueError)."""
    if "\x00" in path:
        from clew.errors import ValidationError

        raise ValidationError(
            f"the folder {path!r} holds the NUL character (\\x00), which no path can; give a"
            " folder's path"
        )
    return os.path.realpath(os.path.expanduser(path))


def kept_path(path: str | None) -> str | None:
    """A stored folder as `real_path` gives it, or None where it can be no folder's (a NUL
    in it): such a record matches no workspace instead of failing the listing."""
    return None if not path or "\x00" in path else real_path(path)


def related(a: str, b: str) -> bool:
    """Whether one folder is the other or holds it."""
    return (
        a == b or b.startswith(a.rstrip(os.sep) + os.sep) or a.startswith(b.rstrip(os.sep) + os.sep)
    )
