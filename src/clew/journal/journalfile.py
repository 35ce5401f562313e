"""The journal file: one space's journal as JSON lines, to move it to another store.

Format version 2, written by `clew export` and read by `clew import`; one JSON object a
line, lines separated by "\\n" (only: other line breaks may occur inside the data):

    {"clew":"journal","version":2,"space":S,"schema":N,"after":null}      the header
    {"seq":Q,"id":I,"space":S,"task_id":T,"correlation_id":C,"type":Y,
     "created_at":A,"hash":H,"forgotten":F,"data":D}                      one per event
    {"clew":"end","events":COUNT,"head":H,"last":I}                       the last line

`D` is the event's data exactly as the store keeps it (the JSON text whose digest its hash
covers), written in place, not quoted, and always the last key, so a reader takes the text
between `,"data":` and the closing brace without re-encoding anything. `F` is null, or the
tombstone of an event whose content was forgotten (`{"digest","by","at","event"}`, the digest
being that of the data before it was forgotten, which its hash covers instead of D's; the
`journal.forgotten` event it names comes later in the file). Each `hash` is the event's
link in its space's chain (chain.py) and must follow from the line before it: the
first event's previous hash is `after.hash` when the file continues an earlier export
(`"after":{"id":I,"hash":H}`, the event just before its first), else empty. The last line
carries the number of events and the last event's hash and id (null for none), so a file
cut at a line break is refused as surely as one cut mid-line. `seq` is the event's number
in the store it came from, for reading only. A newer clew may add keys to the header and
the last line, never change what these mean; a new version number is a file this version
refuses. Version 1 (clew before forgetting) has no `forgotten` key and chains each event with
version 1 of the hash (over D itself): it is read and checked as such.

This module does no I/O: it makes lines and reads them back, checking everything a file
can get wrong before anything is written anywhere.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, NamedTuple

from clew.core import chain, codec
from clew.core.ids import ALPHABET, ID_LENGTH
from clew.errors import ValidationError
from clew.models import EVENT_TYPES, Event

FORMAT = "journal"
VERSION = 2
EVENT_KEYS = (
    "seq",
    "id",
    "space",
    "task_id",
    "correlation_id",
    "type",
    "created_at",
    "hash",
    "forgotten",
    "data",
)
# Version 1's event keys: no tombstone.
EVENT_KEYS_1 = tuple(k for k in EVENT_KEYS if k != "forgotten")
_DATA_KEY = ',"data":'
_HEX = frozenset("0123456789abcdef")


class After(NamedTuple):
    """The event a file continues from: the one just before its first event."""

    id: str
    hash: str


class Moved(NamedTuple):
    """One event read from a journal file, with the line it came from and its data text."""

    line: int
    event: Event
    text: str  # the data exactly as stored, which the hash covers


class JournalFile(NamedTuple):
    """A journal file read and checked: its space, its schema, what it continues, its events."""

    space: str
    schema: int
    after: After | None
    events: tuple[Moved, ...]


class Header(NamedTuple):
    """A journal file's first line, read and checked."""

    space: str
    schema: int
    after: After | None
    version: int


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def header_line(space: str, schema: int, after: After | None) -> str:
    """Return the first line of a journal file."""
    continues = None if after is None else after._asdict()
    return _compact(
        {"clew": FORMAT, "version": VERSION, "space": space, "schema": schema, "after": continues}
    )


def event_line(link: chain.Link) -> str:
    """Return one stored event's line (its data and tombstone as stored)."""
    fields = {key: getattr(link, key) for key in EVENT_KEYS[:-2]}
    forgotten = "null" if link.forgotten is None else link.forgotten  # stored compact JSON
    head = _compact(fields)
    return f'{head[:-1]},"forgotten":{forgotten}{_DATA_KEY}{link.data}}}'


def end_line(count: int, head: str | None, last: str | None) -> str:
    """Return the last line of a journal file: how many events, the last one's hash and
    its id (what a later `export --after` continues from)."""
    return _compact({"clew": "end", "events": count, "head": head, "last": last})


# -- reading ------------------------------------------------------------------------------


def _refuse(number: int, why: str) -> ValidationError:
    return ValidationError(f"line {number} of the journal file {why}; nothing was imported")


def _lines(text: str) -> Iterator[tuple[int, str]]:
    # Only "\n" ends a line: U+2028, form feeds and the like may stand inside the data.
    pieces = text.split("\n")
    if pieces and pieces[-1] == "":
        pieces.pop()  # the newline that ends the last line
    for number, piece in enumerate(pieces, 1):
        yield number, piece.removesuffix("\r")


def _object(number: int, line: str) -> dict[str, Any]:
    def constant(name: str) -> Any:
        raise ValueError(f"{name} is not a JSON number")

    try:
        value = json.loads(line, parse_constant=constant)
    except RecursionError:
        raise _refuse(number, "is nested too deep to be a clew journal line") from None
    except ValueError as exc:  # JSONDecodeError, or a number too long to read
        raise _refuse(number, f"is not valid JSON ({exc}): the file is damaged or cut") from None
    if not isinstance(value, dict):
        raise _refuse(number, "is not a JSON object")
    return value


def _is_id(value: object) -> bool:
    return isinstance(value, str) and len(value) == ID_LENGTH and set(value) <= set(ALPHABET)


def _is_hash(value: object) -> bool:
    return isinstance(value, str) and len(value) == 64 and set(value) <= _HEX


def _header(number: int, line: str) -> Header:
    first = _object(number, line)
    if first.get("clew") != FORMAT:
        if "seq" in first and "data" in first:
            raise _refuse(
                number,
                "is an event, not a journal header: this looks like a `clew export --month`"
                " listing, which cannot be imported; write the journal with `clew export`",
            )
        raise _refuse(number, 'is not a clew journal header ({"clew":"journal",...})')
    version = first.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise _refuse(number, "has no valid format version")
    if version > VERSION:
        raise _refuse(
            number,
            f"says format version {version}, which a newer clew wrote; this clew reads"
            f" version {VERSION}: upgrade clew",
        )
    space, schema, after = first.get("space"), first.get("schema"), first.get("after")
    if not isinstance(space, str) or not space.strip():
        raise _refuse(number, "names no space")
    if not isinstance(schema, int) or isinstance(schema, bool) or schema < 0:
        raise _refuse(number, "has no valid schema number")
    if after is None:
        return Header(space, schema, None, version)
    if not (isinstance(after, dict) and _is_id(after.get("id")) and _is_hash(after.get("hash"))):
        raise _refuse(number, 'has an "after" that is not {"id": EVENT_ID, "hash": HASH}')
    return Header(space, schema, After(after["id"], after["hash"]), version)


def _keys(version: int) -> tuple[str, ...]:
    return EVENT_KEYS if version >= 2 else EVENT_KEYS_1


def _event(number: int, line: str, start: int, space: str, version: int) -> Moved:
    """Read one event line whose data starts at `start`: the fields before the data are
    parsed as JSON, the data once, by the codec, as the text the hash covers."""
    keys = _keys(version)
    row = _object(number, line[:start] + "}")
    if list(row) != list(keys[:-1]):
        raise _refuse(number, f"does not have the keys of an event line ({', '.join(keys)})")
    seq, event_id, task_id, type = row["seq"], row["id"], row["task_id"], row["type"]
    if not isinstance(seq, int) or isinstance(seq, bool):
        raise _refuse(number, "has a seq that is not a whole number")
    if not _is_id(event_id):
        raise _refuse(number, "has an event id that is not a clew id")
    if row["space"] != space:
        raise _refuse(number, f"belongs to space {row['space']!r}, not the file's {space!r}")
    if task_id is not None and not _is_id(task_id):
        raise _refuse(number, "has a task id that is not a clew id")
    for key in ("correlation_id", "created_at"):
        if not isinstance(row[key], str) or not row[key]:
            raise _refuse(number, f"has no {key}")
    if type not in EVENT_TYPES:
        raise _refuse(
            number,
            f"has the event type {type!r}, which this clew does not know (a newer clew's"
            " file, or a damaged one): upgrade clew",
        )
    if not _is_hash(row["hash"]):
        raise _refuse(number, "has no valid hash")
    forgotten = None
    if row.get("forgotten") is not None:
        try:
            forgotten = chain.tombstone(_compact(row["forgotten"]))
        except ValueError as exc:
            raise _refuse(number, f"has a tombstone that is not one: {exc}") from None
    text = line.rstrip()
    if not text.endswith("}"):
        _object(number, line)  # a line cut short is not JSON: say so
        raise _refuse(number, 'is not written as clew writes it (compact, ending with "data")')
    text = text[start + len(_DATA_KEY) : -1]
    try:
        data = codec.loads(text)
        exact = isinstance(data, dict) and codec.dumps(data) == text
    except json.JSONDecodeError as exc:
        raise _refuse(number, f"is not valid JSON ({exc}): the file is damaged or cut") from None
    except (ValueError, TypeError, RecursionError):
        exact = False
    if not exact:
        raise _refuse(
            number,
            "has data that is not a JSON object in the form clew stores, so it could not be"
            " stored exactly as written",
        )
    event = Event(
        seq,
        event_id,
        space,
        task_id,
        row["correlation_id"],
        type,
        data,
        row["created_at"],
        row["hash"],
        forgotten=forgotten,
    )
    return Moved(number, event, text)


def _end(number: int, last: dict[str, Any], count: int, head: str | None) -> None:
    if last.get("clew") != "end":
        raise _refuse(number, 'is neither an event nor the last line ({"clew":"end",...})')
    if last.get("events") != count or last.get("head") != head:
        raise _refuse(
            number,
            f"says {last.get('events')!r} events ending at {last.get('head')!r}, but the file"
            f" holds {count} ending at {head!r}: lines were removed or added",
        )


def parse(text: str) -> JournalFile:
    """Read a journal file and check it whole: its header, every line's shape and data, the
    hash chain from line to line, and the last line's count; raise ValidationError naming
    the first line that is wrong."""
    space, schema, after, events = stream(_lines(text))
    return JournalFile(space, schema, after, tuple(events))


def stream(lines: Iterator[tuple[int, str]]) -> tuple[str, int, After | None, Iterator[Moved]]:
    """Read a journal file's header from `lines` (numbered, without their line ends) and
    return it with its events, read and checked one by one as they are taken (as `parse`
    checks them); the iterator raises ValidationError at the first line that is wrong,
    the last line's count included, so a file is known sound only once it is exhausted."""
    number, line = next(lines, (1, ""))
    if not line.strip():
        raise _refuse(1, "is empty: this is not a file written by `clew export`")
    header = _header(number, line)
    events = _events(lines, header.space, header.after, header.version)
    return header.space, header.schema, header.after, events


def _link_hash(previous: str, moved: Moved, version: int) -> str:
    """The hash a line's event should carry after `previous`, by the file's version."""
    e = moved.event
    if version < 2:
        return chain.event_hash_v1(
            previous,
            id=e.id,
            space=e.space,
            task_id=e.task_id,
            correlation_id=e.correlation_id,
            type=e.type,
            data=moved.text,
            created_at=e.created_at,
        )
    digest = chain.data_digest(moved.text) if e.forgotten is None else e.forgotten.digest
    return chain.event_hash(
        previous,
        id=e.id,
        space=e.space,
        task_id=e.task_id,
        correlation_id=e.correlation_id,
        type=e.type,
        digest=digest,
        created_at=e.created_at,
    )


def _events(
    lines: Iterator[tuple[int, str]], space: str, after: After | None, version: int
) -> Iterator[Moved]:
    from clew.core.tombstones import TombstoneCheck

    tombstones = TombstoneCheck(whole=False)
    previous = "" if after is None else after.hash
    count, head, number = 0, None, 1
    for number, line in lines:
        start = line.find(_DATA_KEY)
        if start < 0:  # the last line, or a line that is not an event as clew writes one
            row = _object(number, line)
            if "clew" not in row:
                keys = list(row) == list(_keys(version))
                raise _refuse(
                    number,
                    'is not written as clew writes it (compact, ending with "data")'
                    if keys
                    else f"does not have the keys of an event line ({', '.join(_keys(version))})",
                )
            _end(number, row, count, head)
            unaccounted = next(iter(tombstones.findings()), None)
            if unaccounted is not None:  # a tombstone no forget in the file accounts for
                raise _refuse(unaccounted.line, unaccounted.text)
            extra = next(lines, None)
            if extra is not None:
                raise _refuse(extra[0], "comes after the journal's last line")
            return
        moved = _event(number, line, start, space, version)
        expected = _link_hash(previous, moved, version)
        if moved.event.hash != expected:
            raise _refuse(
                number,
                "has a hash that does not follow from the lines before it: the file was"
                " changed, reordered or had lines removed",
            )
        problem = tombstones.see(number, moved.event, moved.text)
        if problem is not None:
            raise _refuse(number, problem)
        previous = head = expected
        count += 1  # noqa: SIM113 - events, not lines: the last line is not one
        yield moved
    raise _refuse(
        number + 1,
        'is missing: the journal\'s last line ({"clew":"end",...}) never came, so the file'
        " was cut short",
    )
