"""Sessions and their turns, a service of the Memory facade: every message kept verbatim as
a turn, written through before the call returns; the session state folded from the turns as they
are appended (each turn's event carries what it changed); import and export.

Nothing is ever deleted: popping or clearing a session (the Agents SDK's `pop_item`,
`clear_session`) hides turns from the session's view, and recall still finds them.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import IO, Any, NamedTuple

from clew.conversations.session_state import STATE_BUDGET as SESSION_STATE_BUDGET
from clew.conversations.session_state import advance as fold_state
from clew.conversations.session_state import change as state_change
from clew.conversations.session_state import render as render_session_state
from clew.core import checks, turns
from clew.core.ids import new_id
from clew.core.location import kept_path, real_path, related
from clew.core.text import counted
from clew.core.tokens import counter
from clew.errors import AmbiguousIdError, NotFoundError, ValidationError, shown_id
from clew.kernel import Service
from clew.models import Session, Turn
from clew.privacy.redaction import Found

_SESSION_FIELDS = ("workspace", "model", "system_prompt", "task_id", "title")

KEY_PREFIX_MIN = 4  # characters of a key that may name its session
KEY_PAGE = 500  # sessions read at a time looking for a key prefix


class SessionState(NamedTuple):
    """The session state as YAML for the prompt, and the facts it shows."""

    session_id: str
    text: str
    tokens: int
    state: dict[str, Any]


class Sessions(Service):
    """Sessions, their turns and their state (a service of Memory: it takes only the
    kernel; capture, recall and context assembly take it)."""

    # -- sessions -------------------------------------------------------------------------

    def start_session(
        self,
        *,
        workspace: str | None = None,
        model: str | None = None,
        system_prompt: str | None = None,
        task_id: str | None = None,
        title: str | None = None,
        key: str | None = None,
        at: str | datetime | None = None,
    ) -> Session:
        """Start a conversation. `key` is the caller's own unique name for it (an Agents
        SDK session_id); `task_id` links it to a task, whose state then joins its prompt;
        `at` is when it started, for a conversation recorded after it happened (default:
        now)."""
        session_id = new_id()
        data = {
            "id": session_id,
            "key": checks.optional_text(key, "session key", max_chars=checks.MAX_NAME_CHARS),
            "workspace": checks.optional_text(workspace, "workspace"),
            "model": checks.optional_text(model, "model", max_chars=checks.MAX_NAME_CHARS),
            "system_prompt": checks.optional_text(system_prompt, "system prompt"),
            "title": checks.optional_text(title, "title", max_chars=checks.MAX_NAME_CHARS),
            "task_id": None,
        }
        if at is not None:
            data["started_at"] = checks.moment(at, "at", self._clock())
        with self._write() as now:
            if task_id is not None:
                data["task_id"] = self._task_id(task_id)
            if data["key"] is not None and self._store.session_by_key(data["key"]) is not None:
                raise ValidationError(
                    f"a session with key {data['key']!r} already exists; open it with"
                    f" `clew session show {data['key']}`"
                )
            self._emit("session.started", data["task_id"], {"session": data}, now)
            return self._store.get_session(session_id)

    def open_session(self, key: str, /, **fields: str | None) -> Session:
        """The session with this key, started (with `fields`, as for start_session) if
        there is none, and made active again if it had ended: for adapters whose sessions
        are named by the caller."""
        checks.text(key, "session key")
        with self._write():
            found = self._store.session_by_key(key)
            if found is None:
                return self.start_session(key=key, **fields)
            return found if found.active else self._set_active(found.id, True)

    def get_session(self, session: str) -> Session:
        """A session by its id (or an unambiguous prefix) or its key."""
        return self._session(session)

    def list_sessions(
        self, workspace: str | None = None, *, active_only: bool = False, limit: int | None = None
    ) -> list[Session]:
        """Sessions, the most recently active first; with a workspace, those whose workspace
        is it, holds it or lies within it."""
        if limit is not None:
            limit = checks.count(limit, "limit")
        if workspace is None:  # nothing to filter here: the store limits in SQL
            return self._store.list_sessions(active_only=active_only, limit=limit)
        here = real_path(checks.text(workspace, "workspace"))
        # A workspace matches by its real path, which only the file system knows: read the
        # newest sessions a page at a time until `limit` match (`resume` asks for one).
        page = 200 if limit is None else max(4 * limit, 50)
        found: list[Session] = []
        seen: set[str] = set()
        with self._store.transaction():
            for offset in itertools.count(0, page):
                rows = self._store.list_sessions(active_only=active_only, limit=page, offset=offset)
                for s in rows:
                    if (
                        s.id not in seen
                        and (kept := kept_path(s.workspace))
                        and related(kept, here)
                    ):
                        found.append(s)
                    seen.add(s.id)
                if len(rows) < page or (limit is not None and len(found) >= limit):
                    break
        return found[:limit] if limit is not None else found

    def update_session(self, session: str, /, **changes: str | None) -> Session:
        """Change a session's workspace, model, system prompt, task or title."""
        unknown = set(changes) - set(_SESSION_FIELDS)
        if unknown:
            raise ValidationError(
                f"cannot change {', '.join(sorted(unknown))} of a session; one can change:"
                f" {', '.join(_SESSION_FIELDS)}"
            )
        clean = {k: checks.optional_text(v, k.replace("_", " ")) for k, v in changes.items()}
        with self._write() as at:
            sid = self._session_id(session)
            if clean.get("task_id") is not None:
                clean["task_id"] = self._task_id(clean["task_id"])  # type: ignore[arg-type]
            if clean:
                task = self._store.get_session(sid).task_id
                self._emit("session.updated", task, {"session_id": sid, "changes": clean}, at)
            return self._store.get_session(sid)

    def end_session(self, session: str) -> Session:
        """Mark a session inactive; resuming it makes it active again."""
        return self._set_active(session, False)

    def _set_active(self, session: str, active: bool) -> Session:
        with self._write() as at:
            current = self._session(session)
            if current.active != active:
                data = {"session_id": current.id, "changes": {"active": active}}
                self._emit("session.updated", current.task_id, data, at)
            return self._store.get_session(current.id)

    def _session(self, ident: str) -> Session:
        """A session by its exact id or key (one query), else by an id prefix, else by a
        key prefix (`0199a1c2` for Codex's `0199a1c2-7d3e-...`: the key is what an import
        prints and what the tool that wrote the session calls it)."""
        found = self._store.find_session(_ident(ident))
        if found is not None:
            return found
        try:
            return self._store.get_session(self._resolve("session", ident))
        except NotFoundError:
            keyed = self._by_key_prefix(ident)
            if keyed is None:
                raise
            return keyed

    def _by_key_prefix(self, prefix: str) -> Session | None:
        """The one session whose key starts with `prefix` (None if none does); a prefix
        that starts several keys is ambiguous. Only a miss pays for this scan."""
        if len(prefix) < KEY_PREFIX_MIN:
            return None
        matched: list[Session] = []
        with self._store.transaction():
            for offset in itertools.count(0, KEY_PAGE):
                rows = self._store.list_sessions(limit=KEY_PAGE, offset=offset)
                matched += [s for s in rows if s.key and s.key.startswith(prefix)]
                if len(rows) < KEY_PAGE:
                    break
        if len(matched) > 1:
            raise AmbiguousIdError("session", prefix, [s.key or s.id for s in matched])
        return matched[0] if matched else None

    def _session_to_append(self, ident: str) -> Session:
        """`_session` for append_turns, whose state is the store's shared copy: read, never
        changed (the fold builds a new state) nor handed out."""
        found = self._store.session_to_append(_ident(ident))
        return found if found is not None else self._session(ident)

    def _session_id(self, ident: str) -> str:
        return self._session(ident).id

    # -- turns ----------------------------------------------------------------------------

    def append_turn(
        self,
        session: str,
        message: dict[str, Any] | None = None,
        /,
        *,
        role: str | None = None,
        content: Any = None,
        tool_calls: list[dict[str, Any]] | None = None,
        tool_call_id: str | None = None,
        name: str | None = None,
        tool_name: str | None = None,
        at: str | datetime | None = None,
    ) -> Turn:
        """Archive one message verbatim; it is committed when this returns.

        Give the message as the agent sends it (an OpenAI chat message or a Responses /
        Agents SDK item), or its fields (`role`, `content`, ...). `tool_name` names the
        tool a result came from when the message does not (found from its call if it can
        be); `at` when it was said, for a conversation recorded after it happened."""
        if message is None:
            fields = {
                "role": role,
                "content": content,
                "tool_calls": tool_calls,
                "tool_call_id": tool_call_id,
                "name": name,
            }
            message = {k: v for k, v in fields.items() if v is not None or k == "content"}
        elif any(v is not None for v in (role, content, tool_calls, tool_call_id, name)):
            raise ValidationError("give a message, or its fields (role, content...), not both")
        return self.append_turns(session, [message], tool_name=tool_name, at=at)[0]

    def append_turns(
        self,
        session: str,
        messages: Iterable[dict[str, Any]],
        *,
        tool_name: str | None = None,
        at: str | datetime | Sequence[str | datetime] | None = None,
    ) -> list[Turn]:
        """Archive messages in order, all or none, in one transaction. `at` is when they
        were said (one time for all, or one per message), for a conversation recorded
        after it happened; search's time boosts and filters use it (default: now)."""
        if isinstance(messages, str | bytes | dict):
            raise ValidationError("messages must be a list of messages, not one")
        items = list(messages)
        parsed = [self._unsecret(*self._checked(m, f"message {n}")) for n, m in enumerate(items, 1)]
        tool = checks.optional_text(tool_name, "tool name", max_chars=checks.MAX_NAME_CHARS)
        said = self._said(at, len(parsed))
        with self._write() as now:
            current = self._session_to_append(session)
            if not current.active:
                raise ValidationError(
                    f"session {current.id} has ended; resume it first with"
                    f" `clew session resume {current.id}`"
                )
            # The calls awaiting results, so that a result knows its tool and its call's turn.
            pending: dict[str, Any] = dict(current.state.get("calls", {}))
            state = current.state
            added = []
            for number, (message, parts, found) in enumerate(parsed, current.turn_count + 1):
                call, name = {}, None
                if parts.role == "tool":
                    call = pending.pop(parts.tool_call_id or "", {})
                    name = tool or parts.tool_name or call.get("name")
                for c in parts.tool_calls:
                    if c.id:
                        pending[c.id] = {"name": c.name, "turn": number}
                made = tuple((c.id, c.name, c.arguments) for c in parts.tool_calls)
                turn = Turn(
                    new_id(),
                    current.space,
                    current.id,
                    number,
                    parts.role,
                    parts.text,
                    message,
                    made,
                    parts.tool_call_id,
                    name,
                    call.get("turn"),
                    turns.estimate_tokens(parts.text, parts.tool_calls),
                    False,
                    said[number - current.turn_count - 1] or now,
                )
                # The event carries everything derived (parts, tokens, the state's change),
                # so the projection copies it and a tuned heuristic never alters a replay.
                folded = fold_state(state, number, parts)
                data = {
                    "id": turn.id,
                    "number": number,
                    "message": message,
                    "token_count": turn.token_count,
                    "tool_name": name,
                    "call_turn": turn.call_turn,
                    **turns.derived(message, parts),
                    "state": state_change(state, folded),
                }
                if said[number - current.turn_count - 1] is not None:
                    data["said_at"] = turn.created_at
                state = folded
                self._emit(
                    "turn.appended",
                    current.task_id,
                    {"session_id": current.id, "turn": data},
                    now,
                    found,
                    _MESSAGE_DONE,
                )
                added.append(turn)
            return added

    def _said(
        self, at: str | datetime | Sequence[str | datetime] | None, count: int
    ) -> list[str | None]:
        """When each of `count` messages was said: None for now."""
        if at is None:
            return [None] * count
        if isinstance(at, str | datetime):
            return [checks.moment(at, "at", self._clock())] * count
        times = checks.sequence(at, "at")
        if len(times) != count:
            raise ValidationError(
                f"at gives {counted(len(times), 'time')} for {counted(count, 'message')}"
            )
        return [checks.moment(t, f"at[{i}]", self._clock()) for i, t in enumerate(times)]

    def _unsecret(
        self, message: dict[str, Any], parts: turns.Parts
    ) -> tuple[dict[str, Any], turns.Parts, Found]:
        """A message with its secrets redacted before its parts and the session state are
        derived from it, so its text, its tool calls and the state's keys (a command that
        failed, matched when it later succeeds) are what is stored; what was redacted."""
        found: Found = {}
        clean = self._redacted(message, "turn.message", found)
        return clean, parts if clean is message else turns.parse(clean), found

    @staticmethod
    def _checked(message: object, where: str) -> tuple[dict[str, Any], turns.Parts]:
        if type(message) is turns.Checked:  # checked by this process already (import)
            return message
        return turns.checked(message, where)

    def list_turns(
        self,
        session: str,
        *,
        first: int | None = None,
        last: int | None = None,
        newest: int | None = None,
        include_hidden: bool = False,
    ) -> list[Turn]:
        """A session's turns in order: numbers `first`..`last`, or the `newest` N; hidden
        turns only when asked for."""
        sid = self._session_id(session)
        if newest is not None:
            newest = checks.count(newest, "newest")
        for value, field in ((first, "first"), (last, "last")):
            if value is not None:
                checks.count(value, f"{field} turn")
        return self._store.get_turns(
            sid, first=first, last=last, newest=newest, include_hidden=include_hidden
        )

    def pop_turn(self, session: str) -> Turn | None:
        """Hide the newest visible turn from the session's view and return it (None if
        there is none); the archive keeps it."""
        with self._write() as at:
            current = self._session(session)
            newest = self._store.get_turns(current.id, newest=1, include_hidden=False)
            if not newest:
                return None
            data = {"session_id": current.id, "turn": newest[0].number}
            self._emit("turns.hidden", current.task_id, data, at)
            return self._store.turns_numbered(current.id, [newest[0].number])[0]

    def clear_session(self, session: str) -> int:
        """Hide every turn from the session's view (the archive keeps them); return how
        many were visible."""
        with self._write() as at:
            current = self._session(session)
            visible = self._store.count_turns(current.id)
            if visible:
                data = {"session_id": current.id, "through": current.turn_count}
                self._emit("turns.hidden", current.task_id, data, at)
            return visible

    # -- session state --------------------------------------------------------------------

    def session_state(self, session: str, *, budget: int = SESSION_STATE_BUDGET) -> SessionState:
        """The session state (files touched, key decisions, errors resolved, current focus)
        as YAML within `budget` tokens."""
        current = self._session(session)
        limit = checks.budget(budget)
        header = {
            "id": current.id,
            "workspace": current.workspace,
            "model": current.model,
            "turn_count": current.turn_count,
            "total_tokens": current.total_tokens,
        }
        text = render_session_state(
            {k: v for k, v in header.items() if v is not None}, current.state, counter(), limit
        )
        public = {k: v for k, v in current.state.items() if k != "calls"}
        return SessionState(current.id, text, counter().text(text), public)

    def import_session(
        self,
        messages: Iterable[dict[str, Any]],
        *,
        workspace: str | None = None,
        model: str | None = None,
        title: str | None = None,
        task_id: str | None = None,
        system_prompt: str | None = None,
        at: str | datetime | Sequence[str | datetime] | None = None,
    ) -> Session:
        """A new session holding `messages` (OpenAI chat messages or Responses items) as
        its turns, exactly; all or nothing, in one transaction. `messages` may be any
        iterable (a generator reading a file, say): it is read in batches, so a million
        messages never sit in memory at once. `at`: when they were said (one time for all,
        or one per message, which needs them all); the session starts at the first."""
        if isinstance(messages, str | bytes | dict) or not isinstance(messages, Iterable):
            raise ValidationError(f"messages must be a list, not {type(messages).__name__}")
        said: list[str | None] | None = None  # one time per message, when given so
        start: str | None = None  # else one time for all (None: now)
        items: Iterable[Any] = messages
        if at is not None and not isinstance(at, str | datetime):
            items = checks.sequence(messages, "messages")
            said = self._said(at, len(items))
        elif at is not None:
            start = self._said(at, 1)[0]
        batches = _batches(iter(items), _IMPORT_BATCH)
        # Read before the write lock is taken: a file that fails at once never takes it.
        first = next(batches, [])
        with self._write(), self._store.bulk_turns():
            created = self.start_session(
                workspace=workspace,
                model=model,
                title=title,
                task_id=task_id,
                system_prompt=system_prompt,
                at=said[0] if said else start,
            )
            done = 0
            for batch in itertools.chain([first] if first else [], batches):
                when = said[done : done + len(batch)] if said is not None else start
                self.append_turns(created.id, batch, at=when)  # type: ignore[arg-type]
                done += len(batch)
            return self._store.get_session(created.id)

    def export_session(self, session: str, *, include_hidden: bool = True) -> list[dict[str, Any]]:
        """A session's messages exactly as they were given, in order (import_session takes
        them back)."""
        return list(self._session_messages(session, include_hidden))

    def write_session(self, session: str, out: IO[str], *, include_hidden: bool = True) -> int:
        """Write a session's messages to `out` as JSON Lines (what export_session returns,
        one per line), a page at a time, so a session of any length is written in constant
        memory; return how many were written."""
        written = 0
        for message in self._session_messages(session, include_hidden):
            out.write(json.dumps(message, ensure_ascii=False) + "\n")
            written += 1
        return written

    def _session_messages(self, session: str, include_hidden: bool) -> Iterator[dict[str, Any]]:
        """A session's messages, read a page at a time in one read transaction."""
        from clew.core import meter  # here: the hook path imports this module, not meter

        with self._store.transaction():
            current = self._session(session)
            for first in range(1, current.turn_count + 1, _EXPORT_PAGE):
                page = self._store.get_turns(
                    current.id,
                    first=first,
                    last=first + _EXPORT_PAGE - 1,
                    include_hidden=include_hidden,
                )
                yield from (t.message for t in page)
                meter.report(
                    "exporting",
                    min(first + _EXPORT_PAGE - 1, current.turn_count),
                    current.turn_count,
                )


# Redacted by `_unsecret` before its parts and the session state are derived from it.
_MESSAGE_DONE = frozenset({"turn.message", "turn.state."})
_IMPORT_BATCH = 1000  # messages parsed and appended at a time by import_session
_EXPORT_PAGE = 1000  # turns read at a time by _session_messages


def _batches(items: Iterator[Any], size: int) -> Iterator[list[Any]]:
    while batch := list(itertools.islice(items, size)):
        yield batch


def _ident(ident: object) -> str:
    """A session's id or key as given, once it is one a store can look up: text, not blank,
    UTF-8 (a lone surrogate is not), no longer than a key may be."""
    if not isinstance(ident, str) or not ident.strip():
        raise ValidationError("session must be a session id or key, as text")
    if len(ident) > checks.MAX_NAME_CHARS:
        raise ValidationError(
            f"session key {shown_id(ident)} is too long: a session id or key is at most"
            f" {checks.MAX_NAME_CHARS:,} characters"
        )
    return ident if ident.isascii() else checks.unicode(ident, f"session key {shown_id(ident)}")
