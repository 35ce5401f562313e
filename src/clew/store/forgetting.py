"""Forgetting, as the store applies it: an event's data rewritten by the fields a
`journal.forgotten` event names, the rows it made brought to what a replay of the rewritten
event makes, and the check that every tombstone is accounted for (verify, journal files).

Invariants (docs/architecture.md, "Forgetting"):
- A field is a path into an event's data (keys of objects, positions in arrays) and either
  the character spans of a string to replace (a pattern's matches) or None, the whole value.
  Each is replaced by PLACEHOLDER; nothing else in the data changes.
- What is rewritten is the data the projection reads: an event of an older shape whose
  upgrade is a pure function of its data (an action's output without its error lines) is
  rewritten in the current shape, so a replay of it never derives anything from the old text.
- A row's content column is "the last event that sets it wins": a rewritten event's new
  value replaces the row's only where the row still holds the value the event had set.
  Since a forget rewrites every event of a record alike, that is what a replay gives.
- Never content in anything this module reports: paths, digests, ids and counts only.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, NamedTuple

from clew.models import PLACEHOLDER, Event, Field, Forgotten, Tombstone
from clew.store import chain, codec, projection

TYPE = "journal.forgotten"
# Event types whose upgrades read only the event's data (projection.py): their data is
# rewritten in the shape the projection reads.
_PURE_UPGRADES = frozenset({"action.recorded", "action.updated"})

Path = tuple[str | int, ...]
Spans = tuple[tuple[int, int], ...]


class Missing:
    """What `get` returns for a path the data does not have."""


MISSING = Missing()


def get(data: Any, path: Sequence[str | int]) -> Any:
    """The value at `path` in `data`, or MISSING."""
    value = data
    for key in path:
        if not _holds(value, key):
            return MISSING
        value = value[key]
    return value


def _holds(value: Any, key: str | int) -> bool:
    """Whether `value` is an object with `key`, or an array with position `key`."""
    if isinstance(value, dict):
        return isinstance(key, str) and key in value
    return isinstance(value, list) and isinstance(key, int) and 0 <= key < len(value)


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


def event_of(link: chain.Link) -> Event:
    """The event a stored link holds, its data decoded and its tombstone read; ValueError
    when its data is not a JSON object or its tombstone not one."""
    try:
        data = codec.loads(link.data)
    except (ValueError, TypeError, RecursionError):
        data = None
    if not isinstance(data, dict):
        raise ValueError(f"event #{link.seq} ({link.type}) holds data that is not a JSON object")
    return Event(
        link.seq, link.id, link.space, link.task_id, link.correlation_id, link.type, data,
        link.created_at, link.hash, forgotten=chain.tombstone(link.forgotten),
    )  # fmt: skip


def base(event: Event) -> dict[str, Any]:
    """The data a forget rewrites: the event's, in the shape the projection reads where that
    shape is a function of the data alone."""
    if event.type in _PURE_UPGRADES:
        return projection.current(None, event).data  # type: ignore[arg-type]
    return event.data


def replaced(value: Any, spans: Spans | None) -> Any:
    """`value` with its spans (or all of it) replaced by PLACEHOLDER."""
    if spans is None:
        return PLACEHOLDER
    if not isinstance(value, str):
        raise ValueError("spans of a value that is not text")
    out: list[str] = []
    at = 0
    for start, end in sorted(spans):
        if start < at or end <= start or end > len(value):
            raise ValueError("spans that overlap or fall outside the text")
        out += (value[at:start], PLACEHOLDER)
        at = end
    out.append(value[at:])
    return "".join(out)


def rewrite(data: dict[str, Any], fields: Iterable[Field]) -> dict[str, Any]:
    """`data` with each field replaced; ValueError for a field it does not have."""
    new = copy.deepcopy(data)
    for field in fields:
        *parents, last = field.path
        holder = get(new, parents)
        if not _holds(holder, last):
            raise ValueError(f"the data has no field {'.'.join(map(str, field.path))}")
        holder[last] = replaced(holder[last], field.spans)
    return new


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


# -- the rows ---------------------------------------------------------------------------------


class Column(NamedTuple):
    """A content column of a row an event sets: the table, where the row's id is in the
    event's data, the column, where its value is, and how it is stored ("text"; "json",
    encoded by the codec; "output", text or bytes with its kind beside it)."""

    table: str
    key: Path
    column: str
    path: Path
    kind: str = "text"


def _columns(table: str, key: Path, root: Path, names: Sequence[str]) -> tuple[Column, ...]:
    return tuple(
        Column(
            table,
            key,
            name,
            (*root, name),
            "output" if name in ("stdout", "stderr") else
            "json" if name in projection._JSON_COLUMNS else "text",
        )
        for name in names
    )  # fmt: skip


_ACTION = ("summary", "command", "input", "output", "stdout", "stderr")
_ERRORS = ("stdout_errors", "stderr_errors")
_FIX = _columns("fixes", ("fix", "id"), ("fix",), ("description",))
# The content columns each event type sets (turns are their own: `turn_columns`).
ROWS: dict[str, tuple[Column, ...]] = {
    "message.added": _columns("task_messages", ("message", "id"), ("message",), ("content",)),
    "action.recorded": _columns("actions", ("action", "id"), ("action",), _ACTION + _ERRORS),
    "action.updated": _columns(
        "actions", ("action_id",), ("changes",), ("summary", "output", "stdout", "stderr", *_ERRORS)
    ),
    "action.logged": _columns("action_logs", ("log", "id"), ("log",), ("content",)),
    "entry.added": (
        *_columns("entries", ("entry", "id"), ("entry",), ("summary", "detail", "resolution")),
        *_FIX,
    ),
    "entry.resolved": (*_columns("entries", ("entry_id",), (), ("resolution",)), *_FIX),
    "fix.recorded": _FIX,
    "trace.decision_recorded": _columns(
        "trace_decisions",
        ("decision", "id"),
        ("decision",),
        ("action", "context", "outcome", "error", "state", "agent", "artifacts"),
    ),
    "summary.recorded": _columns("task_summaries", ("summary", "id"), ("summary",), ("text",)),
}
# The full-text index each event type's rows are searched by (SQLite's names).
INDEXES: dict[str, str] = {
    **dict.fromkeys(("message.added", "action.recorded", "action.updated"), "records_fts"),
    "trace.decision_recorded": "records_fts",
    **dict.fromkeys(("entry.added", "entry.resolved"), "entries_fts"),
    "turn.appended": "turns_fts",
}


def stored(value: Any, kind: str) -> Any:
    """A value as its row stores it: JSON columns as the projection encodes them."""
    if kind == "json" and value is not None:
        return codec.dumps(value)
    return value


def output_kind(value: Any) -> str | None:
    """The kind of a command output: what `projection.output_kinds` gives."""
    return None if value is None else "bytes" if isinstance(value, bytes) else "text"


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
            Forgotten(s.where, key[1], s.space, s.type, s.tombstone.by, s.tombstone.at,
                      s.tombstone.event)
            for key, s in sorted(self._seen.items(), key=lambda kv: kv[1].where)
        ]  # fmt: skip
