"""The journal's hash chain: each event's hash covers the hash before it in its space.

`event_hash` is the whole definition. An event's hash is BLAKE2b-256 (hex) of:

    b"clew-event-1"  then, for each of
    previous hash, id, space, task id, correlation id, type, data, created_at:
        its UTF-8 length as 8 bytes big-endian (2**64 - 1 for a null) and its UTF-8 bytes

where `data` is the JSON text exactly as stored in `events.data` (not re-encoded, so
even data that is not valid JSON has a hash) and the previous hash is that of the
space's event before it in `seq` order, or the empty string for a space's first event.
Length prefixes make the encoding unambiguous: no two field lists give the same bytes.
`seq` is not hashed: the chain itself fixes the order, and an event moved, removed or
inserted breaks the link of the event after it. One chain per space lets spaces be
written independently (a server writing many spaces at once needs no global order).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import NamedTuple

try:  # hashlib would load OpenSSL (~4 ms) on every write path; blake2b is built in
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - a Python built without it
    from hashlib import blake2b

VERSION = b"clew-event-1"
# The chain's version as a number: checkpoints record it (checkpointfile.py), so one made
# before the chain's definition changes (and a migration re-chains the journal) is reported
# as made under that version, not as a rewrite. Change it with VERSION.
NUMBER = 1
_NULL = (2**64 - 1).to_bytes(8, "big")


def fields_hash(label: bytes, fields: Iterable[str | None], size: int = 32) -> str:
    """Return the BLAKE2b hex digest of `label` and length-prefixed UTF-8 `fields`."""
    parts = [label]
    for field in fields:
        if field is None:
            parts.append(_NULL)
            continue
        # surrogatepass: a value SQLite stored must hash, never raise here
        raw = field.encode("utf-8", "surrogatepass")
        parts += (len(raw).to_bytes(8, "big"), raw)
    return blake2b(b"".join(parts), digest_size=size).hexdigest()


def event_hash(
    previous: str,
    *,
    id: str,
    space: str,
    task_id: str | None,
    correlation_id: str,
    type: str,
    data: str,
    created_at: str,
) -> str:
    """Return the hash of one event chained to `previous` (the empty string for a first)."""
    fields = (previous, id, space, task_id, correlation_id, type, data, created_at)
    return fields_hash(VERSION, fields)


class Link(NamedTuple):
    """One stored event as the chain sees it."""

    seq: int
    id: str
    space: str
    task_id: str | None
    correlation_id: str
    type: str
    data: str
    created_at: str
    hash: str | None


def row_hash(previous: str, link: Link) -> str:
    """Return the hash `link` should carry after `previous`."""
    return event_hash(
        previous,
        id=link.id,
        space=link.space,
        task_id=link.task_id,
        correlation_id=link.correlation_id,
        type=link.type,
        data=link.data,
        created_at=link.created_at,
    )


def walk(links: Iterable[Link]) -> Iterator[tuple[Link, str | None]]:
    """Yield each event (in seq order) with, for the first event of each space whose stored
    hash does not follow from the stored hash before it, the hash it should carry."""
    heads: dict[str, str] = {}
    broken: set[str] = set()
    for link in links:
        found = None
        if link.space not in broken:
            expected = row_hash(heads.get(link.space, ""), link)
            if link.hash != expected:
                broken.add(link.space)
                found = expected
        heads[link.space] = link.hash or ""
        yield link, found


def chained(links: Iterable[Link]) -> Iterator[tuple[int, str]]:
    """Yield (seq, hash) for events in seq order, chaining each space on its own."""
    heads: dict[str, str] = {}
    for link in links:
        heads[link.space] = row_hash(heads.get(link.space, ""), link)
        yield link.seq, heads[link.space]
