"""What a `journal.forgotten` event says, read from its data, and the check that every
tombstone in a journal is accounted for: pure, so the store's verify and a journal file's
check (journalfile.py) run the same code. The store applies forgets (store/forgetting.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

from clew.core import chain
from clew.models import Event, Field, Forgotten, Tombstone

TYPE = "journal.forgotten"


def fields_of(raw: Any) -> list[Field]:
    """The fields a journal.forgotten event's item names (its JSON form: [path, spans]);
    ValueError when they are not fields."""
    if not isinstance(raw, list):
        raise ValueError("its fields are not a list")
    found = []
    for item in raw:
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], list)):
            raise ValueError("a field is not [path, spans]")
        path = item[0]
        keys = all(isinstance(k, str | int) and not isinstance(k, bool) for k in path)
        if not path or not keys:
            raise ValueError("a field's path is not a list of keys and positions")
        spans = item[1]
        if spans is not None:
            ok = isinstance(spans, list) and all(
                isinstance(s, list) and len(s) == 2 and all(type(n) is int for n in s)
                for s in spans
            )
            if not ok:
                raise ValueError("a field's spans are not [start, end] pairs")
            spans = tuple((s[0], s[1]) for s in spans)
        found.append(Field(tuple(path), spans))
    return found


def field_json(field: Field) -> list[Any]:
    """A field as a journal.forgotten event carries it."""
    spans = None if field.spans is None else [list(s) for s in field.spans]
    return [list(field.path), spans]


class Item(NamedTuple):
    """One event a journal.forgotten event forgets, read from its data."""

    id: str
    fields: list[Field]
    before: str
    after: str
    record: tuple[str, str] | None  # (kind, id) of the record it belongs to
    task_id: str | None


def items(data: dict[str, Any]) -> Iterator[Item]:
    """The events a journal.forgotten event's data names; ValueError for a malformed one."""
    named = data.get("events")
    if not isinstance(named, list):
        raise ValueError("it names no events")
    for raw in named:
        if not isinstance(raw, dict) or not isinstance(raw.get("id"), str):
            raise ValueError("an event it names has no id")
        before, after = raw.get("before"), raw.get("after")
        if not (chain.is_digest(before) and chain.is_digest(after)):
            raise ValueError(f"event {raw['id']}'s digests are not digests")
        record = raw.get("record")
        owner = None
        if isinstance(record, list) and [type(r) for r in record] == [str, str]:
            owner = (record[0], record[1])
        task = raw.get("task_id")
        yield Item(
            raw["id"],
            fields_of(raw.get("fields")),
            str(before),
            str(after),
            owner,
            task if isinstance(task, str) else None,
        )


# -- the check of tombstones ------------------------------------------------------------------


class Problem(NamedTuple):
    """A tombstone or a forget that does not account for the other: where (a seq or a line)."""

    line: int
    id: str
    text: str


class _Seen(NamedTuple):
    where: int
    space: str
    type: str
    tombstone: Tombstone
    digest: str  # of the data as it is now


class _Forget(NamedTuple):
    event: str  # the journal.forgotten event
    by: str
    at: str
    after: str
    first_before: str  # the `before` of the first forget that named the event


class TombstoneCheck:
    """Walk a journal in order (`see` each event) and account for every tombstone: the last
    forget naming an event is the one its tombstone names (the same by and time), left the
    data it holds, and the first found the digest the tombstone keeps; a forget names only
    events that hold a tombstone, each from what the forget before it left. `whole`: the
    journal from its start (verify); else a file that may continue one whose earlier events
    a store holds (a forget may name them)."""

    def __init__(self, *, whole: bool) -> None:
        self.whole = whole
        self._seen: dict[tuple[str, str], _Seen] = {}
        self._forgets: dict[tuple[str, str], _Forget] = {}

    def see(self, where: int, event: Event, text: str) -> str | None:
        """Take the next event (its data as stored in `text`); return what is wrong with it
        at once (a forget that cannot be read, or that names what it cannot), else None."""
        if event.forgotten is not None:
            seen = _Seen(where, event.space, event.type, event.forgotten, chain.data_digest(text))
            self._seen[event.space, event.id] = seen
        if event.type != TYPE:
            return None
        try:
            named = list(items(event.data))
        except ValueError as exc:
            return f"forgets what it cannot say: {exc}"
        for item in named:
            key = (event.space, item.id)
            if key not in self._seen:
                if self.whole:
                    return f"forgets event {item.id}, which holds no tombstone before it"
                continue  # an event of the journal before the file: the store checks it
            earlier = self._forgets.get(key)
            if earlier is not None and earlier.after != item.before:
                return f"forgets event {item.id} from data the forget before it did not leave"
            first = item.before if earlier is None else earlier.first_before
            by = event.data.get("by")
            self._forgets[key] = _Forget(
                event.id, by if isinstance(by, str) else "", event.created_at, item.after, first
            )
        return None

    def findings(self) -> list[Problem]:
        """What is wrong with the tombstones seen, once the journal is walked."""
        problems = []
        for key, seen in self._seen.items():
            tomb = seen.tombstone
            forget = self._forgets.get(key)
            why = None
            if forget is None:
                why = f"holds a tombstone naming forget {tomb.event}, which no later forget names"
            elif (forget.event, forget.by, forget.at) != (tomb.event, tomb.by, tomb.at):
                why = (
                    f"holds a tombstone (forget {tomb.event} by {tomb.by!r} at {tomb.at}) that is"
                    f" not the forget that last forgot it ({forget.event} by {forget.by!r} at"
                    f" {forget.at})"
                )
            elif forget.after != seen.digest:
                why = f"holds data that is not what forget {forget.event} left"
            elif forget.first_before != tomb.digest:
                why = "holds a tombstone whose digest is not that of the data it was forgotten"
            if why is not None:
                problems.append(Problem(seen.where, key[1], f"event {key[1]} ({seen.type}) {why}"))
        return problems

    def forgotten(self) -> list[Forgotten]:
        """The events seen with a tombstone, in order."""
        return [
            Forgotten(
                s.where, key[1], s.space, s.type, s.tombstone.by, s.tombstone.at, s.tombstone.event
            )
            for key, s in sorted(self._seen.items(), key=lambda kv: kv[1].where)
        ]
