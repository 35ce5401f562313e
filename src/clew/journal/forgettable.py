"""What a forget replaces in an event's data: the content fields of each event type, a
record's (`record_fields`) or a pattern's matches (`pattern_fields`). Pure: events' data in,
fields (paths and spans) out; the store rewrites (store/forgetting.py).

Invariants (docs/architecture.md, "Forgetting"):
- Only text is content. Below an event type's content roots, a key that names an id or a
  path, or says what a thing is (`role`, `type`, `name`...), is never rewritten, nor is any
  number: a forget never changes an id, an exit code or a path.
- A record forget replaces whole values; a pattern forget replaces only its matches, and a
  pattern that matches the empty string or clew's own placeholder is refused.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from clew.core import checks
from clew.errors import ValidationError
from clew.models import PLACEHOLDER, Field

KINDS = ("entry", "turn", "action", "message")
MAX_PATTERN = 1000  # characters of a pattern

Path = tuple[str | int, ...]
WILD = "*"  # in a root: any key or position

# Keys below a content root that are never content: ids, paths, what a thing is.
_KEEP = frozenset(
    {"id", "role", "type", "name", "path", "file_path", "filename", "cwd", "workspace"}
    | {"turn", "number", "call_id", "tool_call_id", "tool_use_id", "uuid", "parentUuid"}
    | {"sessionId", "timestamp", "model", "action", "status", "index"}
)
_ACTION = ("summary", "command", "input", "output", "stdout", "stderr")
_OUTPUT = ("output", "stdout", "stderr", "stdout_errors", "stderr_errors")
# Where each event type holds its content: a pattern looks below these.
ROOTS: dict[str, tuple[Path, ...]] = {
    "message.added": (("message", "content"),),
    "entry.added": (
        ("entry", "summary"),
        ("entry", "detail"),
        ("entry", "resolution"),
        ("fix", "description"),
    ),
    "entry.resolved": (("resolution",), ("fix", "description")),
    "fix.recorded": (("fix", "description"),),
    "action.recorded": tuple(("action", k) for k in (*_ACTION, "stdout_errors", "stderr_errors")),
    "action.updated": tuple(("changes", k) for k in ("summary", *_OUTPUT)),
    "action.logged": (("log", "content"),),
    "trace.decision_recorded": tuple(
        ("decision", k)
        for k in ("action", "context", "outcome", "error", "state", "agent", "artifacts")
    ),
    "summary.recorded": (("summary", "text"),),
    "model.output_rejected": (("raw",),),
    "turn.appended": (
        ("turn", "message"),
        ("turn", "text"),
        ("turn", "tool_calls", WILD, 2),
        ("turn", "state"),
    ),
}
# What a record forget replaces, whole, in each event type of the record.
_RECORD_ROOTS: dict[str, tuple[Path, ...]] = {
    "message.added": (("message", "content"),),
    "entry.added": ROOTS["entry.added"],
    "entry.resolved": ROOTS["entry.resolved"],
    "fix.recorded": ROOTS["fix.recorded"],
    "action.recorded": tuple(("action", k) for k in _OUTPUT),
    "action.updated": tuple(("changes", k) for k in _OUTPUT),
    "action.logged": (("log", "content"),),
}


def _holds(value: Any, key: str | int) -> bool:
    """Whether `value` is an object with `key`, or an array with position `key`."""
    if isinstance(value, dict):
        return isinstance(key, str) and key in value
    return isinstance(value, list) and isinstance(key, int) and 0 <= key < len(value)


def _kept(key: str | int) -> bool:
    return isinstance(key, str) and (key in _KEEP or key.endswith(("_id", "_path")))


def _at(data: Any, root: Path, prefix: Path = ()) -> Iterator[tuple[Path, Any]]:
    """The values at `root` (with wildcards) in `data`, with their paths."""
    if not root:
        yield prefix, data
        return
    key, rest = root[0], root[1:]
    if key == WILD:
        pairs = (
            list(data.items())
            if isinstance(data, dict)
            else list(enumerate(data))
            if isinstance(data, list)
            else []
        )
        for k, value in pairs:
            yield from _at(value, rest, (*prefix, k))
    elif _holds(data, key):
        yield from _at(data[key], rest, (*prefix, key))


def _leaves(value: Any, path: Path) -> Iterator[tuple[Path, str | bytes]]:
    """The text (and bytes) below a value, with their paths, but under kept keys."""
    if isinstance(value, str | bytes):
        yield path, value
    elif isinstance(value, dict):
        for key, inner in value.items():
            if not _kept(key):
                yield from _leaves(inner, (*path, key))
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            yield from _leaves(inner, (*path, i))


def _content(event_type: str, data: dict[str, Any]) -> Iterator[tuple[Path, str | bytes]]:
    for root in ROOTS.get(event_type, ()):
        for path, value in _at(data, root):
            yield from _leaves(value, path)


# -- records ----------------------------------------------------------------------------------


def record_of(event_type: str, data: dict[str, Any]) -> tuple[str, str] | None:
    """The record (kind, id) an event writes the content of, if it is one a forget names."""
    found: Any = None
    kind = ""
    if event_type == "message.added":
        kind, found = "message", data.get("message", {}).get("id")
    elif event_type == "action.recorded":
        kind, found = "action", data.get("action", {}).get("id")
    elif event_type == "action.updated":
        kind, found = "action", data.get("action_id")
    elif event_type == "action.logged":
        kind, found = "action", data.get("log", {}).get("action_id")
    elif event_type == "entry.added":
        kind, found = "entry", data.get("entry", {}).get("id")
    elif event_type == "entry.resolved":
        kind, found = "entry", data.get("entry_id")
    elif event_type == "fix.recorded":
        kind, found = "entry", (data.get("fix") or {}).get("entry_id")
    elif event_type == "trace.decision_recorded":
        kind, found = "decision", data.get("decision", {}).get("id")
    elif event_type == "turn.appended":
        kind, found = "turn", data.get("turn", {}).get("id")
    return (kind, found) if isinstance(found, str) else None


class Turn:
    """The turn a turn forget names, once its own event is seen: its session and number."""

    def __init__(self, turn_id: str) -> None:
        self.id = turn_id
        self.session: str | None = None
        self.number: int | None = None


def record_fields(
    kind: str, record_id: str, event_type: str, data: dict[str, Any], turn: Turn | None = None
) -> list[Field]:
    """The fields a forget of record (`kind`, `record_id`) replaces, whole, in one event's
    data (none for an event of another record). A turn's own event gives its `turn` the
    session and number by which the later turns' state changes are read."""
    if kind == "turn":
        if event_type != "turn.appended":
            return []
        return _turn_fields(data, turn or Turn(record_id))
    if record_of(event_type, data) != (kind, record_id):
        return []
    fields = []
    for root in _RECORD_ROOTS.get(event_type, ()):
        for path, value in _at(data, root):
            if value is not None:
                fields.append(Field(path))
    return fields


def _turn_fields(data: dict[str, Any], turn: Turn) -> list[Field]:
    t = data.get("turn")
    if not isinstance(t, dict):
        return []
    fields: list[Field] = []
    if t.get("id") == turn.id:
        turn.session, turn.number = data.get("session_id"), t.get("number")
        for root in ROOTS["turn.appended"][:3]:
            fields += [Field(path) for path, _ in _at_leaves(data, root)]
    elif turn.number is None or data.get("session_id") != turn.session:
        return []
    state = t.get("state")
    if isinstance(state, dict) and turn.number is not None:
        fields += [Field(p) for p in _said_in(state, ("turn", "state"), turn.number)]
    return fields


def _at_leaves(data: dict[str, Any], root: Path) -> Iterator[tuple[Path, str | bytes]]:
    for path, value in _at(data, root):
        yield from _leaves(value, path)


def _said_in(value: Any, path: Path, number: int) -> Iterator[Path]:
    """The text of the state's items that came from turn `number` (they carry `turn`)."""
    if isinstance(value, dict):
        if value.get("turn") == number and type(value.get("turn")) is int:
            yield from (p for p, _ in _leaves(value, path))
            return
        for key, inner in value.items():
            yield from _said_in(inner, (*path, key), number)
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            yield from _said_in(inner, (*path, i), number)


# -- patterns ---------------------------------------------------------------------------------


def compiled(pattern: object) -> re.Pattern[str]:
    """A forget's pattern, checked: a Python regular expression that matches neither the
    empty string nor clew's placeholder."""
    if pattern == "":
        raise ValidationError("give a pattern: a regular expression of the text to forget")
    text = checks.text(pattern, "the pattern", max_chars=MAX_PATTERN)
    try:
        found = re.compile(text)
    except (re.error, RecursionError, OverflowError) as exc:
        raise ValidationError(f"the pattern is not a regular expression: {exc}") from None
    if found.search("") is not None:
        raise ValidationError(
            "the pattern matches the empty string, so it would match everywhere: make it"
            " match at least one character"
        )
    if found.search(PLACEHOLDER) is not None:
        raise ValidationError(
            f"the pattern matches clew's placeholder {PLACEHOLDER!r}, so what it forgets would"
            " match again: make it more specific"
        )
    return found


def _spans(regex: re.Pattern[str], text: str) -> tuple[tuple[int, int], ...]:
    return tuple(m.span() for m in regex.finditer(text) if m.end() > m.start())


def _bytes_match(regex: re.Pattern[str], value: bytes) -> bool:
    return regex.search(value.decode("utf-8", "replace")) is not None


def pattern_fields(regex: re.Pattern[str], event_type: str, data: dict[str, Any]) -> list[Field]:
    """The matches of `regex` in one event's content: each text's spans; output that is not
    UTF-8 text, whole."""
    fields = []
    for path, value in _content(event_type, data):
        if isinstance(value, bytes):
            if _bytes_match(regex, value):
                fields.append(Field(path))
        else:
            spans = _spans(regex, value)
            if spans:
                fields.append(Field(path, spans))
    return fields


def remaining(regex: re.Pattern[str], data: dict[str, Any], fields: list[Field]) -> list[Path]:
    """Where `regex` still matches in an event's data outside `fields`: the text a pattern
    forget does not rewrite (ids and paths, names, other event types' fields)."""
    covered = {f.path for f in fields}
    found = []

    def walk(value: Any, path: Path) -> None:
        if path in covered:
            return
        if isinstance(value, str):
            if regex.search(value) is not None:
                found.append(path)
        elif isinstance(value, bytes):
            if _bytes_match(regex, value):
                found.append(path)
        elif isinstance(value, dict):
            for key, inner in value.items():
                walk(inner, (*path, key))
                if isinstance(key, str) and regex.search(key) is not None:
                    found.append((*path, key))
        elif isinstance(value, list):
            for i, inner in enumerate(value):
                walk(inner, (*path, i))

    walk(data, ())
    return found


def dotted(path: Path) -> str:
    """A field's path as a report shows it (`action.stdout`, `turn.message.content.0.text`)."""
    return ".".join(str(k) for k in path)
