"""Checkpoint lines: a sealed record of where a space's journal ended, kept outside the store.

A journal's hash chain shows that no event was changed after it was written, but not that
the newest events are all there (a store rolled back to an older copy is a shorter, whole
chain), nor that the whole chain was not recomputed (the hash has no key). A checkpoint
line kept somewhere the store's writers cannot reach catches both: it says that at time
`at` the space's journal held `events` events and that the last of them (`last`, its id)
had hash `head`; later, a store whose space has fewer events is behind, and one with another hash
at that position diverges. One JSON object a line:

    {"checkpoint":1,"store":S,"space":P,"events":N,"head":H,"last":I,"chain":C,"at":T,
     "seal":X}

(`events`, `head` and `last` mean what they mean on a journal file's last line.)

`store` names the store by a keyed digest of its location (a file's real path; a
PostgreSQL store's host, port and database), so one file can hold the lines of many stores
without showing where they are. `chain` is the hash chain's version (chain.py) the
head was made under: a checkpoint made before the chain was redefined (and the journal
re-chained) cannot be compared, and is said to be of that version rather than to diverge.
`seal` is sealing.py's keyed BLAKE2b of every other field: a line someone edited or made up
without the sealing key does not check, and whoever holds the key can make any line.

This module does no I/O: it makes lines, reads them back and judges them against what a
store holds; `checkpoints.py` writes and reads the files.
"""

from __future__ import annotations

import functools
import json
import os
from typing import Any

from clew.core import chain
from clew.models import ChainHead, Checkpoint, CheckpointStatus
from clew.privacy import sealing

FORMAT = 1
PURPOSE = "checkpoint"
MAX_LINE = 4096  # bytes: a real line is some 300; anything longer is not one
_KEYS = ("checkpoint", "store", "space", "events", "head", "last", "chain", "at", "seal")
_HEX = frozenset("0123456789abcdef")


def default_path() -> str:
    """Where checkpoints go when no file is named: $CLEW_CHECKPOINT_FILE, else
    $XDG_STATE_HOME/clew/checkpoints.jsonl (~/.local/state/clew/checkpoints.jsonl), a
    place of this user's outside every project store."""
    named = os.environ.get("CLEW_CHECKPOINT_FILE")
    if named:
        return os.path.abspath(os.path.expanduser(named))
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "state"
    )
    return os.path.join(base, "clew", "checkpoints.jsonl")


def location(path: str) -> str:
    """What names a store in its checkpoints: a file's real path (links resolved, so the
    same file named two ways is one store); for a PostgreSQL URL its host, port and
    database (not the user or password: another role's view of one database is the same
    store)."""
    if not path.startswith(("postgresql://", "postgres://")):
        return path if path == ":memory:" else _real(os.path.abspath(path))
    from urllib.parse import parse_qs, urlsplit

    try:
        parts = urlsplit(path)
        query = parse_qs(parts.query)
        host = parts.hostname or query.get("host", ["localhost"])[0]
        port = parts.port or int(query.get("port", ["5432"])[0])
    except ValueError:
        return path
    database = parts.path.lstrip("/") or query.get("dbname", [parts.username or ""])[0]
    return f"postgresql://{host}:{port}/{database}"


@functools.lru_cache(maxsize=64)  # a server makes a checkpoint per answer: resolved once
def _real(path: str) -> str:
    return os.path.realpath(path)


def store_id(path: str, *, key: bytes | None = None) -> str:
    """The digest that names the store at `path` in checkpoint lines (keyed: a line does
    not show where its store is)."""
    return sealing.seal("checkpoint store", (location(path),), key=key)[:16]


def _fields(
    store: str, space: str, events: int, head: str | None, last: str | None, version: int, at: str
) -> tuple[str | None, ...]:
    return (str(FORMAT), store, space, str(events), head, last, str(version), at)


def make(
    store: str, space: str, head: ChainHead, at: str, *, key: bytes | None = None
) -> Checkpoint:
    """A sealed checkpoint of `space`'s journal ending at `head`, made at `at`."""
    fields = _fields(store, space, head.events, head.head, head.last, chain.NUMBER, at)
    made = sealing.seal(PURPOSE, fields, key=key)
    return Checkpoint(store, space, head.events, head.head, head.last, chain.NUMBER, at, made)


def line(checkpoint: Checkpoint) -> str:
    """The checkpoint as one line of ASCII JSON, without its line break (a line of a file,
    or the value of an HTTP header)."""
    value = {"checkpoint": FORMAT, **checkpoint._asdict()}
    return json.dumps({k: value[k] for k in _KEYS}, separators=(",", ":"), ensure_ascii=True)


def read(text: str) -> Checkpoint | str:
    """The checkpoint a line holds, or why it holds none (its seal is not checked here)."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_LINE:
        return f"longer than {MAX_LINE} bytes: not a checkpoint line"
    try:
        value: Any = json.loads(text)
    except (ValueError, RecursionError):
        return "not JSON: not a checkpoint line"
    if not isinstance(value, dict) or "checkpoint" not in value:
        return 'not a checkpoint line (no "checkpoint" key)'
    if type(value["checkpoint"]) is not int or value["checkpoint"] != FORMAT:
        return f"a checkpoint of format {value['checkpoint']!r}, which this clew cannot read"
    if sorted(value) != sorted(_KEYS):
        return f"a checkpoint line whose keys are not {', '.join(_KEYS)}"
    count, version = value["events"], value["chain"]
    shapes = (
        _text(value["store"]) and _text(value["space"]) and _text(value["at"]),
        isinstance(count, int) and not isinstance(count, bool) and count >= 0,
        isinstance(version, int) and not isinstance(version, bool) and version >= 1,
        _hex(value["seal"]),
        value["head"] is None if count == 0 else _hex(value["head"]),
        value["last"] is None if count == 0 else _text(value["last"]),
    )
    if not all(shapes):
        return "a checkpoint line with a field of the wrong type"
    return Checkpoint(*(value[k] for k in _KEYS[1:]))


def _text(value: object) -> bool:
    return isinstance(value, str) and bool(value)


def _hex(value: object) -> bool:
    return isinstance(value, str) and len(value) == 64 and set(value) <= _HEX


def sealed(checkpoint: Checkpoint, *, key: bytes | None = None) -> bool:
    """Whether the checkpoint's seal is that of its fields under the sealing key."""
    c = checkpoint
    fields = _fields(c.store, c.space, c.events, c.head, c.last, c.chain, c.at)
    return sealing.check(PURPOSE, fields, c.seal, key=key)


def judge(checkpoint: Checkpoint, count: int, found: str | None) -> tuple[CheckpointStatus, str]:
    """What a sealed checkpoint of this store says, now that the space holds `count` events
    and has hash `found` at the checkpoint's position (None: none there)."""
    c, n = checkpoint, f"{checkpoint.events:,}"
    if count < c.events:
        return CheckpointStatus.BEHIND, (
            f"behind: at {c.at} space {c.space!r} held {counted(c.events)}; it holds {count:,}"
            " now, so events were removed (a copy of the store from before, or lost writes)"
        )
    if c.events == 0 or found == c.head:
        return CheckpointStatus.HOLDS, (
            f"holds: space {c.space!r} still begins with the {counted(c.events)} it held at {c.at}"
        )
    if c.chain != chain.NUMBER:
        return CheckpointStatus.OLDER_CHAIN, (
            f"made under chain version {c.chain} (this clew's is {chain.NUMBER}): event {n}"
            f" of space {c.space!r} has another hash since the journal was re-chained, so it"
            " cannot be compared"
        )
    return CheckpointStatus.DIVERGES, (
        f"diverges: event {n} of space {c.space!r} has another hash than at {c.at}: the"
        " journal up to it was rewritten (or replaced by another one)"
    )


def counted(count: int) -> str:
    """'1 event', '1,204 events'."""
    return f"{count:,} event{'' if count == 1 else 's'}"
