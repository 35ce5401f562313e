"""The sealing key: a secret kept outside the store, for facts the store cannot vouch for itself.

Anyone who can write a store can write any row in it: the file's owner, a database role, an
imported journal file. Some facts must hold even then: that a wait which runs a command was
made here by someone allowed to make it (waits.py), that a space's journal reached a given
head at a given time (checkpoints). Those are sealed with a keyed BLAKE2b (an HMAC in all but
name) whose key lives in a file the store never holds:

    $CLEW_SECRET_FILE, else $XDG_CONFIG_HOME/clew/secret.key (~/.config/clew/secret.key)

32 random bytes, made on first use with mode 0600 (by a hard link from a finished temporary
file, so two processes starting at once agree on one key). Each use derives its own key from
a purpose name, so a seal made for one purpose never passes for another's. Losing the file
only loses what was sealed with it: waits made before must be added again, checkpoints made
before can no longer be checked.
"""

from __future__ import annotations

import os
import threading

try:  # hashlib would load OpenSSL; blake2b is built in
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - a Python built without it
    from hashlib import blake2b

from clew.core.fields import encoded
from clew.errors import ValidationError

KEY_BYTES = 32
_cache: dict[str, bytes] = {}
_lock = threading.Lock()


def secret_path(explicit: str | None = None) -> str:
    """Where the sealing key is: `explicit`, else $CLEW_SECRET_FILE, else the user's."""
    if explicit:
        return os.path.abspath(os.path.expanduser(explicit))
    named = os.environ.get("CLEW_SECRET_FILE")
    if named:
        return os.path.abspath(os.path.expanduser(named))
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "clew", "secret.key")


def secret(explicit: str | None = None, *, create: bool = True) -> bytes:
    """The sealing key's bytes, made on first use unless `create` is false (then
    ValidationError when there is none)."""
    path = secret_path(explicit)
    with _lock:
        found = _cache.get(path)
        if found is not None:
            return found
        try:
            found = _read(path)
        except FileNotFoundError:
            if not create:
                raise ValidationError(
                    f"no sealing key at {path}: it is made by the first command that seals"
                    " (or set CLEW_SECRET_FILE to the file that holds it)"
                ) from None
            found = _make(path)
        _cache[path] = found
        return found


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            raw = handle.read(KEY_BYTES + 1)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise ValidationError(
            f"cannot read the sealing key {path}: {exc.strerror or exc}; it must be a file of"
            f" {KEY_BYTES} bytes readable by this user"
        ) from None
    if len(raw) != KEY_BYTES:
        raise ValidationError(
            f"the sealing key {path} is not {KEY_BYTES} bytes long: it is damaged; move it away"
            " to make a new one (what was sealed with it can then no longer be checked)"
        )
    return raw


def _make(path: str) -> bytes:
    folder = os.path.dirname(path)
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        temp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, os.urandom(KEY_BYTES))
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(temp, path)  # fails if another process made one first: use theirs
        except FileExistsError:
            pass
        finally:
            os.unlink(temp)
    except OSError as exc:
        raise ValidationError(
            f"cannot make the sealing key {path}: {exc.strerror or exc}; set CLEW_SECRET_FILE to"
            " a writable place"
        ) from None
    return _read(path)


def seal(purpose: str, fields: tuple[str | None, ...], *, key: bytes | None = None) -> str:
    """Return the hex seal of `fields` for `purpose` (with the sealing key unless `key`)."""
    master = secret() if key is None else key
    derived = blake2b(purpose.encode("utf-8"), key=master, digest_size=32).digest()
    return blake2b(encoded(b"", fields), key=derived, digest_size=32).hexdigest()


def check(
    purpose: str, fields: tuple[str | None, ...], given: object, *, key: bytes | None = None
) -> bool:
    """Whether `given` is the seal of `fields` for `purpose` (compared in constant time)."""
    import hmac

    if not isinstance(given, str) or len(given) != 64:
        return False
    return hmac.compare_digest(seal(purpose, fields, key=key), given)
