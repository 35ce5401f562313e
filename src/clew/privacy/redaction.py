"""Secrets taken out of what is stored. Pure: no I/O.

A `Redactor` applies the rules of `secret_shapes` to text (`text`), to a command's output
that may be bytes (`output`), to JSON an agent handed clew (`json`: every string but those
under keys that name structure, and a value under a secret's name judged as an assignment),
and to an event's data (`event`: the free-text fields `free_text.TEXT_FIELDS` names, with a
record of what was redacted, by field and kind, under "redactions"). Everything is copy on
write: what holds no secret is returned as it was. `[redact]` in config.toml builds one with
more kinds, values never redacted, or none at all (`config.redaction`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from clew.core.pattern import lazy
from clew.privacy.secret_shapes import (
    ASSIGNED,
    ASSIGNMENT,
    COMMANDS,
    KIND_NAME,
    KINDS,
    LITERAL,
    NAME_WORDS,
    NAMED,
    OPTION,
    PROVIDERS,
    SEPARATED,
    SHORTEST,
    Rule,
    assigned,
    has_run,
    marker,
    name_kind,
)

__all__ = ["KINDS", "Found", "Redactor", "marker"]

# A finding's place and kind -> how many: what an event records of its redactions.
Found = dict[tuple[str, str], int]


# -- JSON: which keys name structure ---------------------------------------------------------

# In JSON an agent hands clew (a message, metadata, a tool's arguments), a string under one of
# these keys is structure (an id, a type, a time, a path...), never redacted; every other
# string is free text.
_STRUCTURE_KEYS = frozenset(
    {"id", "type", "role", "name", "uuid", "timestamp", "model", "status", "signature"}
    | {"index", "object", "created", "author", "cwd", "path", "file_path", "filepath"}
    | {"filename", "workspace", "version", "mime_type", "mimeType", "media_type"}
    | {"stop_reason", "finish_reason", "stop_sequence", "encoding", "language", "lang"}
    | {"gitBranch", "userType", "entrypoint", "level", "isSidechain", "isMeta", "action"}
)
_STRUCTURE_SUFFIXES = ("_id", "Id", "_ids", "Ids", "_uuid", "Uuid", "_at", "_path", "_hash")
_SAFE_KEY = lazy(r"[A-Za-z_][A-Za-z0-9_\-]{0,39}")


def structure_key(key: str) -> bool:
    """Whether a JSON key names structure (an id, a type, a time, a path), not free text."""
    return key in _STRUCTURE_KEYS or key.endswith(_STRUCTURE_SUFFIXES)


class Redactor:
    """Redaction by the built-in rules plus `extra` ones (kind -> pattern; its first group is
    the secret when it has one, else the whole match), never of a value in `allow` or one a
    pattern of `allow_patterns` matches whole; `enabled=False` redacts nothing."""

    __slots__ = ("_allow", "_allow_patterns", "_clean", "_extra", "_keys", "enabled")

    def __init__(
        self,
        *,
        enabled: bool = True,
        extra: Mapping[str, str] | None = None,
        allow: Iterable[str] = (),
        allow_patterns: Iterable[str] = (),
    ) -> None:
        self.enabled = enabled
        self._extra = tuple(
            Rule(kind, lazy(source), (), group=-1) for kind, source in (extra or {}).items()
        )
        self._allow = frozenset(allow)
        self._allow_patterns = tuple(lazy(p) for p in allow_patterns)
        # Texts this redactor made or found clean, so a text checked before its event was
        # made (a turn's message, a command) is not scanned again when the event is.
        self._clean: dict[str, None] = {}
        self._keys: dict[str, str] = {}  # JSON keys as findings name them (`_shown_key`)

    def __repr__(self) -> str:
        return f"Redactor(enabled={self.enabled}, extra={len(self._extra)})"

    # -- text ------------------------------------------------------------------------------

    def text(self, text: str, found: Found | None = None, field: str = "") -> str:
        """`text` with every secret in it replaced by its marker; each one counted in
        `found` under (`field`, its kind)."""
        if not self.enabled or len(text) < SHORTEST or text in self._clean:
            return text
        if text[0] in "{[":
            kept = self._json_text(text, found, field)
            if kept is not None:
                return kept
        out = text
        for rule in PROVIDERS if has_run(text) else ():
            if rule.pattern.search(out) is not None:
                out = self._apply(rule, out, found, field)
        for rule in LITERAL:
            if rule.pattern.search(out) is not None:
                out = self._apply(rule, out, found, field)
        low = out.lower()
        if " -" in out or out[0] == "-":  # a command line's option
            for rule in COMMANDS:
                if any(g in (low if rule.folded else out) for g in rule.gate):
                    out = self._apply(rule, out, found, field)
            low = out.lower()
            if OPTION.pattern.search(out) is not None:
                out = self._apply(OPTION, out, found, field)
                low = out.lower()
        words = [w for w in NAME_WORDS if w in low]
        if words:
            for rule in NAMED:
                if rule.gate[0] in low:
                    out = self._apply(rule, out, found, field)
                    low = out.lower()
            out = self._assignments(out, low, words, found, field)
        for rule in self._extra:
            out = self._apply(rule, out, found, field)
        if len(self._clean) >= 512:  # bounded: a new text is scanned again, never trusted
            self._clean.clear()
        self._clean[out] = None
        return out

    def _json_text(self, text: str, found: Found | None, field: str) -> str | None:
        """JSON text (an object or array) redacted as JSON, so that it stays JSON: read as
        prose, `{"pass:": null}` was a password assignment that swallowed the punctuation
        after it (a LangGraph item's stored value no longer parsed). Each secret is counted
        under `field`, as in prose. None when the text is not JSON."""
        try:
            value = json.loads(text)
        except ValueError:
            return None
        if not isinstance(value, dict | list):
            return None
        inner: Found = {}
        done = self.json(value, inner, field)
        if found is not None:
            for (_, kind), count in inner.items():
                found[field, kind] = found.get((field, kind), 0) + count
        return text if done is value else json.dumps(done, ensure_ascii=False)

    def output(self, value: str | bytes, found: Found | None = None, field: str = "") -> Any:
        """A command's output (text, or bytes that are not UTF-8) with its secrets redacted;
        bytes stay bytes, every byte outside a secret as it was."""
        if isinstance(value, str):
            return self.text(value, found, field)
        decoded = value.decode("utf-8", "surrogateescape")
        done = self.text(decoded, found, field)
        return value if done is decoded else done.encode("utf-8", "surrogateescape")

    def _apply(self, rule: Rule, text: str, found: Found | None, field: str) -> str:
        """`text` with the secrets `rule` finds in it replaced."""
        spans = (self._secret(rule, match) for match in rule.pattern.finditer(text))
        return _spliced(text, spans, found, field)

    def _secret(self, rule: Rule, match: re.Match[str]) -> tuple[int, int, str] | None:
        """Where the secret of a match is and its kind, or None when it is none."""
        if rule.judge is None:
            kind, group = rule.kind, rule.group
            if group == -1:
                group = 1 if match.re.groups else 0
        else:
            judged = rule.judge(match)
            if judged is None:
                return None
            kind, group = judged
        start, end = match.span(group or 0)
        start -= rule.back if start >= 0 else 0
        if start < 0 or start == end or self._allowed(match.string[start:end]):
            return None
        return start, end, kind

    def _assignments(
        self, text: str, low: str, words: list[str], found: Found | None, field: str
    ) -> str:
        """`text` with the values given to secrets' names replaced. Each word of such a
        name is searched for in the lower-cased text `low` with a separator after its name
        (a pattern starting with the word: a fast search), and the assignment's pattern is
        tried on the text only there."""
        if len(low) != len(text):  # lower-casing moved the places (rare): search instead
            return self._apply(ASSIGNED, text, found, field)
        places = sorted(m.start() for w in words for m in SEPARATED[w].finditer(low))
        if not places:
            return text
        compiled = ASSIGNMENT.compiled

        def spans() -> Iterator[tuple[int, int, str] | None]:
            done = 0
            for at in places:
                if at < done:  # inside a value already taken: no new match starts there
                    continue
                match = compiled.match(text, at)
                span = None if match is None else self._secret(ASSIGNED, match)
                done = done if span is None else span[1]
                yield span

        return _spliced(text, spans(), found, field)

    def _allowed(self, value: str) -> bool:
        if value in self._allow:
            return True
        return any(p.fullmatch(value) for p in self._allow_patterns)

    # -- JSON ------------------------------------------------------------------------------

    def json(self, value: Any, found: Found | None = None, field: str = "") -> Any:
        """JSON data an agent handed clew with the secrets in its free text redacted: every
        string but those under keys that name structure (`structure_key`), and a string
        under a secret's name (`api_key`, `DB_PASSWORD`) judged as an assignment. Keys stay.
        Copy on write: what changes nothing is returned as it was."""
        if not self.enabled:
            return value
        if isinstance(value, str):
            return self.text(value, found, field)
        if isinstance(value, list):
            copy: list[Any] | None = None
            for i, item in enumerate(value):
                done = self.json(item, found, f"{field}[]")
                if done is not item:
                    copy = copy if copy is not None else list(value)
                    copy[i] = done
            return value if copy is None else copy
        if isinstance(value, dict):
            changed: dict[str, Any] | None = None
            for key, item in value.items():
                if isinstance(item, str) and structure_key(key):
                    continue
                where = f"{field}.{self._shown_key(key)}" if field else self._shown_key(key)
                if isinstance(item, str):
                    done = self._keyed(key, item, found, where)
                else:
                    done = self.json(item, found, where)
                if done is not item:
                    changed = changed if changed is not None else dict(value)
                    changed[key] = done
            return value if changed is None else changed
        return value

    # -- events ----------------------------------------------------------------------------

    def event(
        self,
        type: str,
        data: dict[str, Any],
        found: Found | None = None,
        done: frozenset[str] = frozenset(),
    ) -> dict[str, Any]:
        """An event's data with the secrets in its free-text fields (free_text.TEXT_FIELDS)
        redacted, and what was redacted, with `found` (what the caller redacted before it
        made the data), recorded under "redactions": [{field, kind, count}] (merged with
        any the data holds: an imported event's). `done` names fields (or the start of their
        names) the caller redacted itself just now with this redactor, or derived from what
        it redacted so (a turn's message, the session state folded from it). Copy on write."""
        found = {} if found is None else found
        if self.enabled:
            fields = _fields(type, done)
            if fields is None:  # an event type with no map: every string but structure
                data = self.json(data, found, "")
            else:
                for name, steps, json in fields:
                    data = self._at(data, steps, 0, json, found, name)
        if not found:
            return data
        return {**data, "redactions": merged(data.get("redactions"), found)}

    def _at(
        self, node: Any, steps: tuple[str | int, ...], i: int, json: bool, found: Found, field: str
    ) -> Any:
        """`node` with the field `steps[i:]` names redacted (copy on write)."""
        if i == len(steps):
            if isinstance(node, str):
                return self.text(node, found, field)
            if isinstance(node, bytes):
                return self.output(node, found, field)
            return self.json(node, found, field) if json else node
        step = steps[i]
        if step == "[]" or step == "*":
            if step == "[]" and isinstance(node, list):
                items: Iterable[tuple[Any, Any]] = enumerate(node)
            elif step == "*" and isinstance(node, dict):
                items = node.items()
            else:
                return node
            copy: Any = None
            for key, item in items:
                done = self._at(item, steps, i + 1, json, found, field)
                if done is not item:
                    if copy is None:
                        copy = list(node) if isinstance(node, list) else dict(node)
                    copy[key] = done
            return node if copy is None else copy
        if isinstance(step, int):
            if not isinstance(node, list) or not -len(node) <= step < len(node):
                return node
            done = self._at(node[step], steps, i + 1, json, found, field)
            if done is node[step]:
                return node
            copy = list(node)
            copy[step] = done
            return copy
        if not isinstance(node, dict) or step not in node:
            return node
        done = self._at(node[step], steps, i + 1, json, found, field)
        return node if done is node[step] else {**node, step: done}

    def _keyed(self, key: str, value: str, found: Found | None, field: str) -> str:
        """A string under `key`: its text redacted, then, under a secret's name, the whole
        value if it is a secret (a JSON object's assignment: {"api_key": "..."})."""
        done = self.text(value, found, field)
        kind = name_kind(key) if done is value else None
        if kind is not None and assigned(kind, value, "code") and not self._allowed(value):
            if found is not None:
                found[(field, kind)] = found.get((field, kind), 0) + 1
            done = marker(kind)
        return done

    def _shown_key(self, key: str) -> str:
        """A key as a finding's field names it: as it is when it is a plain name with no
        secret in it, else `*` (a finding never carries what it redacted)."""
        shown = self._keys.get(key)
        if shown is None:
            plain = _SAFE_KEY.fullmatch(key) is not None and self.text(key) == key
            shown = key if plain else "*"
            if len(self._keys) >= 4096:
                self._keys.clear()
            self._keys[key] = shown
        return shown


def _spliced(
    text: str, spans: Iterable[tuple[int, int, str] | None], found: Found | None, field: str
) -> str:
    """`text` with each secret span (start, end, kind; None: no secret there) replaced by its
    marker, in order, each counted in `found` under (`field`, its kind)."""
    pieces: list[str] = []
    done = 0
    for span in spans:
        if span is None or span[0] < done:
            continue
        start, end, kind = span
        pieces += (text[done:start], marker(kind))
        done = end
        if found is not None:
            found[(field, kind)] = found.get((field, kind), 0) + 1
    if not pieces:
        return text
    pieces.append(text[done:])
    return "".join(pieces)


_WALKS: dict[tuple[str, frozenset[str]], Any] = {}


def _fields(type: str, done: frozenset[str]) -> Any:
    """The free-text fields of an event type (free_text.FIELDS) less those named by (or
    starting with a name in) `done`, worked out once per type and `done`; None for a type
    with no map."""
    key = (type, done)
    if key not in _WALKS:
        from clew.privacy.free_text import FIELDS  # here: the map is read once per process

        fields = FIELDS.get(type)
        if fields is not None and done:
            fields = tuple(f for f in fields if not f[0].startswith(tuple(done)))
        _WALKS[key] = fields
    return _WALKS[key]


def merged(recorded: object, found: Found) -> list[dict[str, Any]]:
    """An event's "redactions": what it recorded (a list of {field, kind, count}) with
    `found` added, one item per field and kind, in order. A record that is not such a list
    is refused (ValueError), as the projection refuses it."""
    total: dict[tuple[str, str], int] = {}
    if recorded is not None and not isinstance(recorded, list):
        raise ValueError("an event's redactions must be a list")
    for item in recorded or ():
        field = item.get("field") if isinstance(item, dict) else None
        kind = item.get("kind") if isinstance(item, dict) else None
        count = item.get("count") if isinstance(item, dict) else None
        if not (isinstance(field, str) and isinstance(kind, str) and type(count) is int):
            raise ValueError("an event's redactions must each be a field, a kind and a count")
        total[(field, kind)] = total.get((field, kind), 0) + count
    for key, count in found.items():
        total[key] = total.get(key, 0) + count
    return [{"field": f, "kind": k, "count": n} for (f, k), n in sorted(total.items())]


def checked_kind(kind: object, where: str) -> str:
    """An extra rule's kind, checked: lower-case letters, digits and dashes."""
    if not isinstance(kind, str) or not KIND_NAME.fullmatch(kind):
        raise ValueError(
            f"{where}: a kind is lower-case letters, digits and dashes (at most 40), not {kind!r}"
        )
    return kind


DEFAULT = Redactor()
OFF = Redactor(enabled=False)  # benchmarks/bench_redaction.py writes with redaction off
