"""The journal's hash chain: each event's hash covers the hash before it in its space.

`event_hash` is the whole definition (version 2, every store since migration 21). An
event's hash is BLAKE2b-256 (hex) of:

    b"clew-event-2"  then, for each of
    previous hash, id, space, task id, correlation id, type, data digest, created_at:
        its UTF-8 length as 8 bytes big-endian (2**64 - 1 for a null) and its UTF-8 bytes

where the data digest is `data_digest` of the JSON text exactly as stored in `events.data`
(BLAKE2b-256 of b"clew-data-1" and the text, length-prefixed the same way; not re-encoded,
so even data that is not valid JSON has a hash) and the previous hash is that of the
space's event before it in `seq` order, or the empty string for a space's first event. An
event whose content was forgotten keeps, in its tombstone, the digest of the data it had
before: its link is checked with that digest (`link_digest`), so forgetting changes no hash.
Length prefixes make the encoding unambiguous: no two field lists give the same bytes.
`seq` is not hashed: the chain itself fixes the order, and an event moved, removed or
inserted breaks the link of the event after it. One chain per space lets spaces be
written independently (a server writing many spaces at once needs no global order).

Version 1 (`event_hash_v1`, b"clew-event-1") hashed the data text itself where version 2
has its digest: journals were chained with it up to migration 20, and journal files of
format 1 still carry it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import NamedTuple

try:  # hashlib would load OpenSSL (~4 ms) on every write path; blake2b is built in
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - a Python built without it
    from hashlib import blake2b

from clew.core.fields import encoded
from clew.models import Tombstone

VERSION = b"clew-event-2"
VERSION_1 = b"clew-event-1"
DATA = b"clew-data-1"
# The chain's version as a number: checkpoints record it (checkpointfile.py), so one made
# before the chain's definition changes (and a migration re-chains the journal) is reported
# as made under that version, not as a rewrite. Change it with VERSION.
NUMBER = 2
_HEX = frozenset("0123456789abcdef")


def fields_hash(label: bytes, fields: Iterable[str | None], size: int = 32) -> str:
    """Return the BLAKE2b hex digest of `label` and length-prefixed UTF-8 `fields`."""
    return blake2b(encoded(label, fields), digest_size=size).hexdigest()


def data_digest(data: str) -> str:
    """Return the digest of an event's data text, which its version-2 hash covers."""
    raw = data.encode("utf-8", "surrogatepass")
    return blake2b(DATA + len(raw).to_bytes(8, "big") + raw, digest_size=32).hexdigest()


def event_hash(
    previous: str,
    *,
    id: str,
    space: str,
    task_id: str | None,
    correlation_id: str,
    type: str,
    digest: str,
    created_at: str,
) -> str:
    """Return the hash of one event chained to `previous` (the empty string for a first),
    given its data's digest (`data_digest`, or a tombstone's)."""
    fields = (previous, id, space, task_id, correlation_id, type, digest, created_at)
    return fields_hash(VERSION, fields)


def event_hash_v1(
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
    """Return an event's version-1 hash (over its data text): journal files of format 1."""
    fields = (previous, id, space, task_id, correlation_id, type, data, created_at)
    return fields_hash(VERSION_1, fields)


def is_digest(value: object) -> bool:
    """Whether `value` is a hex BLAKE2b-256 digest as the chain writes them."""
    return isinstance(value, str) and len(value) == 64 and set(value) <= _HEX


def tombstone_text(tombstone: Tombstone) -> str:
    """Return a tombstone as `events.forgotten` stores it (compact JSON, fixed key order)."""
    return json.dumps(tombstone._asdict(), ensure_ascii=False, separators=(",", ":"))


def tombstone(text: str | None) -> Tombstone | None:
    """Return the tombstone `events.forgotten` holds (None for none); ValueError when the
    text is not one."""
    if text is None:
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        raise ValueError("its tombstone is not valid JSON") from None
    if not isinstance(value, dict) or list(value) != list(Tombstone._fields):
        raise ValueError(f"its tombstone does not have the keys {', '.join(Tombstone._fields)}")
    if not is_digest(value["digest"]):
        raise ValueError("its tombstone's digest is not a digest")
    if not all(isinstance(value[k], str) for k in ("by", "at", "event")):
        raise ValueError("its tombstone's by, at and event are not all text")
    return Tombstone(**value)


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
    forgotten: str | None = None  # the tombstone's text, when the content was forgotten


def link_digest(link: Link) -> str:
    """The digest a link's hash covers: its tombstone's (the data it had before it was
    forgotten), else its data's. A tombstone that cannot be read gives the data's, so the
    chain breaks there."""
    if link.forgotten is not None:
        try:
            found = tombstone(link.forgotten)
        except ValueError:
            found = None
        if found is not None:
            return found.digest
    return data_digest(link.data)


def row_hash(previous: str, link: Link) -> str:
    """Return the hash `link` should carry after `previous`."""
    return event_hash(
        previous,
        id=link.id,
        space=link.space,
        task_id=link.task_id,
        correlation_id=link.correlation_id,
        type=link.type,
        digest=link_digest(link),
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


def chained_v1(links: Iterable[Link]) -> Iterator[tuple[int, str]]:
    """`chained` with version 1: what migration 6 gave the events it hashed."""
    heads: dict[str, str] = {}
    for link in links:
        heads[link.space] = event_hash_v1(
            heads.get(link.space, ""),
            id=link.id,
            space=link.space,
            task_id=link.task_id,
            correlation_id=link.correlation_id,
            type=link.type,
            data=link.data,
            created_at=link.created_at,
        )
        yield link.seq, heads[link.space]
