"""Forgetting, as the store applies it: an event's data rewritten by the fields a
`journal.forgotten` event names, the rows it made brought to what a replay of the rewritten
event makes. What a forget event says, and the check that every tombstone is accounted for
(verify, journal files), are tombstones.py's, below the store.

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
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from clew.core import chain, codec
from clew.core.tombstones import TYPE as TYPE
from clew.core.tombstones import Item as Item
from clew.core.tombstones import Problem as Problem
from clew.core.tombstones import TombstoneCheck as TombstoneCheck
from clew.core.tombstones import field_json as field_json
from clew.core.tombstones import fields_of as fields_of
from clew.core.tombstones import items as items
from clew.models import PLACEHOLDER, Event, Field
from clew.store import projection

# Event types whose upgrades read only the event's data (projection/__init__.py): their data is
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
        link.seq,
        link.id,
        link.space,
        link.task_id,
        link.correlation_id,
        link.type,
        data,
        link.created_at,
        link.hash,
        forgotten=chain.tombstone(link.forgotten),
    )


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
            "output"
            if name in ("stdout", "stderr")
            else "json"
            if name in projection._JSON_COLUMNS
            else "text",
        )
        for name in names
    )


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
