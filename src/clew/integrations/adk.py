"""Google ADK's session and memory services over a clew store (the `adk` extra).

    from google.adk.runners import Runner
    from clew.integrations.adk import ClewMemoryService, ClewSessionService

    sessions = ClewSessionService("agent.db")
    runner = Runner(agent=agent, app_name="helpdesk", session_service=sessions,
                    memory_service=ClewMemoryService(sessions.memory))

**Sessions.** An ADK session (app, user, session id) is a clew conversation session keyed
`adk/<app>/<user>/<id>` (each part percent-encoded). Its first turn records the session's
creation and initial state; every event ADK appends is one turn holding the event verbatim
(`adk_event`, as ADK's own JSON) beside the role, text and tool calls clew derives from it,
so `clew recall`, `clew search` and context assembly work on ADK conversations like on any
other. State follows ADK's own services: a session's state is its initial state with every
event's `state_delta` applied; `app:` and `user:` keys are shared, kept as deltas in the
sessions keyed `adk-app/<app>` and `adk-user/<app>/<user>`; `temp:` keys live only in the
caller's Session object. Deleting a session hides its turns from ADK (and from the session's
view); clew's archive keeps them, like every other record.

**Memory.** What ADK adds to memory (a session, some events, explicit memories) is kept in
one clew session per (app, user), keyed `adk-memory/<app>/<user>`, each event once (by its
id); `search_memory` is clew's ranked search over it, the engine of `clew search`.

The store is used from one worker thread per Memory, so the event loop never blocks and the
two services can share a store.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import json
import os
import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any, TypeVar
from urllib.parse import quote, unquote

from clew.core.installation import missing_extra

try:
    from google.adk.errors import StaleSessionError
except ImportError as exc:  # a person reads this: say what to install, not a traceback's tail
    raise missing_extra("adk", exc) from None
from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.errors.session_not_found_error import SessionNotFoundError
from google.adk.events.event import Event
from google.adk.memory.base_memory_service import BaseMemoryService, SearchMemoryResponse
from google.adk.memory.memory_entry import MemoryEntry
from google.adk.platform import uuid as platform_uuid
from google.adk.sessions.base_session_service import (
    BaseSessionService,
    GetSessionConfig,
    ListSessionsResponse,
)
from google.adk.sessions.session import Session
from google.adk.sessions.state import State
from pydantic_core import to_jsonable_python

import clew
from clew.errors import NotFoundError, ValidationError
from clew.memory import Memory
from clew.models import Turn

__all__ = ["ClewMemoryService", "ClewSessionService", "session_key"]

T = TypeVar("T")
Store = Memory | str | os.PathLike[str] | None  # a Memory, a store's path or URL, or the default
SESSIONS, APP_STATE, USER_STATE, MEMORY = "adk", "adk-app", "adk-user", "adk-memory"
SEARCH_LIMIT = 10  # memories a search returns, as ADK's in-memory service
_workers: weakref.WeakKeyDictionary[Memory, ThreadPoolExecutor] = weakref.WeakKeyDictionary()
_workers_lock = threading.Lock()


def _key(*parts: str) -> str:
    # Percent-encoded so that a "/" in an app or user name cannot make two keys alike.
    return "/".join(quote(p, safe="") for p in parts)


def session_key(app_name: str, user_id: str, session_id: str) -> str:
    """The key of the clew session holding an ADK session."""
    return _key(SESSIONS, app_name, user_id, session_id)


def _split_key(key: str) -> list[str]:
    return [unquote(p) for p in key.split("/")]


def _said(timestamp: float) -> datetime:
    return datetime.fromtimestamp(timestamp, tz=UTC)


def _message(event: Event, **extra: Any) -> dict[str, Any]:
    """The turn that keeps an event: the event verbatim (`adk_event`) and what clew reads of
    it (role, text, tool calls, the call a result answers), in OpenAI chat form."""
    texts = [p.text for p in (event.content.parts or [])] if event.content else []
    text = "\n".join(t for t in texts if t) or None
    message: dict[str, Any]
    responses = event.get_function_responses()
    calls = event.get_function_calls()
    if responses:
        # A result turn answers one call; parallel results are all in its text and event.
        first = responses[0]
        lines = [f"{r.name}: {_json_text(r.response)}" for r in responses]
        message = {
            "role": "tool",
            "tool_call_id": first.id or first.name or "",
            "name": first.name,
            "content": "\n".join(lines),
        }
    elif event.author == "user":
        message = {"role": "user", "content": text}
    else:
        message = {"role": "assistant", "content": text}
        if calls:
            message["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": _json_text(c.args or {})},
                }
                for c in calls
            ]
    message["adk_event"] = to_jsonable_python(event, exclude_none=True, fallback=repr)
    message.update(extra)
    return message


def _event(turn: Turn) -> Event | None:
    raw = turn.message.get("adk_event")
    return Event.model_validate(raw) if isinstance(raw, dict) else None


def _raw_delta(raw: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """A stored event's state delta, read without validating the event (kept by alias)."""
    actions = raw.get("actions")
    if not isinstance(actions, dict):
        return None
    delta = actions.get("stateDelta", actions.get("state_delta"))
    return delta if isinstance(delta, dict) else None


def _raw_time(raw: Mapping[str, Any]) -> float:
    return float(raw["timestamp"])


def _fold(turns: Sequence[Turn], field: str) -> dict[str, Any]:
    state: dict[str, Any] = {}
    for turn in turns:
        delta = turn.message.get(field)
        if isinstance(delta, dict):
            state.update(delta)
    return state


def _scoped(delta: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """A state delta split as ADK's services split it: app, user and session keys (the
    prefixes removed); temp keys are never stored."""
    parts: dict[str, dict[str, Any]] = {"app": {}, "user": {}, "session": {}}
    for key, value in delta.items():
        if key.startswith(State.APP_PREFIX):
            parts["app"][key.removeprefix(State.APP_PREFIX)] = value
        elif key.startswith(State.USER_PREFIX):
            parts["user"][key.removeprefix(State.USER_PREFIX)] = value
        elif not key.startswith(State.TEMP_PREFIX):
            parts["session"][key] = value
    return parts


def _json_safe(value: dict[str, Any]) -> dict[str, Any]:
    # A tool's result or a state value may be a pydantic model (load_memory's response):
    # stored as its JSON form, and anything that has none as its repr, as ADK's own do.
    safe: dict[str, Any] = to_jsonable_python(value, fallback=repr)
    return safe


def _json_text(value: Any) -> str:
    return json.dumps(to_jsonable_python(value, fallback=repr), ensure_ascii=False)


def _open_memory(memory: Store) -> Memory:
    return memory if isinstance(memory, Memory) else clew.open(memory)


class _Worker:
    """A Memory and the one worker thread kept for it, which runs its calls (a part each
    service holds)."""

    def __init__(self, memory: Store) -> None:
        self.memory = _open_memory(memory)
        with _workers_lock:
            worker = _workers.get(self.memory)
            if worker is None:
                worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="clew-adk")
                _workers[self.memory] = worker
        self._executor = worker

    async def run(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, functools.partial(fn, *args, **kwargs))

    def held(self, key: str) -> bool:
        """Whether a clew session with this key exists."""
        try:
            self.memory.get_session(key)
        except NotFoundError:
            return False
        return True


class ClewSessionService(BaseSessionService):
    """ADK's BaseSessionService over a clew store: `memory` is a Memory, a store's path or
    URL, or None (the store found from the folder, as every clew command finds it)."""

    def __init__(self, memory: Store = None) -> None:
        self._worker = _Worker(memory)
        self.memory = self._worker.memory

    # -- the service ----------------------------------------------------------------------

    async def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: dict[str, Any] | None = None,
        session_id: str | None = None,
    ) -> Session:
        """Create a session (with `session_id`, else a new one); AlreadyExistsError if that
        id is taken."""
        session_id = (session_id.strip() if session_id else None) or platform_uuid.new_uuid()
        return await self._worker.run(
            self._create, app_name, user_id, dict(state or {}), session_id
        )

    async def get_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | None = None,
    ) -> Session | None:
        """The session with its events (the newest `num_recent_events`, those at or after
        `after_timestamp`) and its state, app and user state merged in; None if none."""
        session_id = session_id.strip() if session_id else session_id
        return await self._worker.run(self._get, app_name, user_id, session_id, config)

    async def list_sessions(
        self, *, app_name: str, user_id: str | None = None
    ) -> ListSessionsResponse:
        """The app's sessions (of one user, or of all), without events, oldest update first."""
        return await self._worker.run(self._list, app_name, user_id)

    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        """Delete a session for ADK: hidden from it from now on, kept in clew's archive."""
        session_id = session_id.strip() if session_id else session_id
        await self._worker.run(self._delete, session_key(app_name, user_id, session_id))

    async def get_user_state(self, *, app_name: str, user_id: str) -> dict[str, Any]:
        """The user's state, its keys without the `user:` prefix."""
        key = _key(USER_STATE, app_name, user_id)
        return await self._worker.run(lambda: _fold(self._state_turns(key), "adk_state_delta"))

    async def append_event(self, session: Session, event: Event) -> Event:
        """Keep the event (committed before this returns), then apply it to `session`.
        StaleSessionError if another writer appended to the session since `session` was
        read, as ADK's database service; the check and the writes are one transaction."""
        if event.partial:
            return event
        key = session_key(session.app_name, session.user_id, session.id)
        if await self._worker.run(self._append_checked, session, key, event):
            self._commit_event_to_session(session, event)
            session.last_update_time = event.timestamp
            session._storage_update_marker = event.id
        return event

    # -- on the worker --------------------------------------------------------------------

    def _create(self, app: str, user: str, state: dict[str, Any], session_id: str) -> Session:
        # One transaction: two creators of one id cannot both pass the check, and a failure
        # part way leaves no half-made session.
        with self.memory.atomic():
            return self._create_in_write(app, user, state, session_id)

    def _create_in_write(
        self, app: str, user: str, state: dict[str, Any], session_id: str
    ) -> Session:
        key = session_key(app, user, session_id)
        if self._worker.held(key) and self.memory.list_turns(key, newest=1):
            raise AlreadyExistsError(f"Session with id {session_id} already exists.")
        parts = _scoped(state)
        created = time.time()
        # A deleted session's key is taken again: open_session makes it active anew.
        self.memory.open_session(key, title=f"ADK session {session_id} ({app}, {user})")
        opening = {"id": session_id, "created": created, "state": _json_safe(parts["session"])}
        self.memory.append_turn(
            key, {"role": "system", "content": None, "adk_session": opening}, at=_said(created)
        )
        self._add_state(_key(APP_STATE, app), parts["app"], f"ADK app state ({app})")
        self._add_state(
            _key(USER_STATE, app, user), parts["user"], f"ADK user state ({app}, {user})"
        )
        own = copy.deepcopy(parts["session"])
        session = Session(
            id=session_id, app_name=app, user_id=user, state=own, last_update_time=created
        )
        session._storage_update_marker = ""
        return self._merged(session)

    def _read(
        self, app: str, user: str, session_id: str
    ) -> tuple[Session, list[dict[str, Any]]] | None:
        """The session (its state, no events) and all its events as stored (ADK's JSON, made
        Events only for those a caller gets: validating is most of a read's cost); None if
        there is none."""
        key = session_key(app, user, session_id)
        if not self._worker.held(key):
            return None
        turns = self.memory.list_turns(key)
        opening = next(
            (t.message["adk_session"] for t in turns if "adk_session" in t.message), None
        )
        if opening is None:  # deleted: its turns are hidden
            return None
        state = dict(opening["state"])
        raws = [
            t.message["adk_event"] for t in turns if isinstance(t.message.get("adk_event"), dict)
        ]
        for raw in raws:
            delta = _raw_delta(raw)
            if delta:
                state.update(_scoped(delta)["session"])
        # As ADK's services: the newest event's time, else the session's creation.
        newest = Event.model_validate(raws[-1]) if raws else None
        updated = newest.timestamp if newest else opening["created"]
        session = Session(
            id=session_id,
            app_name=app,
            user_id=user,
            state=copy.deepcopy(state),
            last_update_time=updated,
        )
        session._storage_update_marker = newest.id if newest else ""
        return self._merged(session), raws

    def _get(
        self, app: str, user: str, session_id: str, config: GetSessionConfig | None
    ) -> Session | None:
        found = self._read(app, user, session_id)
        if found is None:
            return None
        session, raws = found
        if config is not None:
            if config.num_recent_events is not None:
                raws = raws[-config.num_recent_events :] if config.num_recent_events else []
            if config.after_timestamp is not None:
                # As ADK's own services: from the newest event back to the first one older.
                i = len(raws) - 1
                while i >= 0 and _raw_time(raws[i]) >= config.after_timestamp:
                    i -= 1
                raws = raws[i + 1 :]
        session.events = [Event.model_validate(raw) for raw in raws]
        return session

    def _list(self, app: str, user: str | None) -> ListSessionsResponse:
        prefix = _key(SESSIONS, app) + "/" + ("" if user is None else quote(user, safe="") + "/")
        found = []
        for held in self.memory.list_sessions():
            if held.key is None or not held.key.startswith(prefix):
                continue
            parts = _split_key(held.key)
            if len(parts) != 4:
                continue
            read = self._read(parts[1], parts[2], parts[3])
            if read is not None:
                found.append(read[0])
        found.sort(key=lambda s: (s.last_update_time, s.user_id, s.id))
        return ListSessionsResponse(sessions=found)

    def _delete(self, key: str) -> None:
        with self.memory.atomic():  # hidden and ended together
            if self._worker.held(key) and self.memory.list_turns(key, newest=1):
                self.memory.clear_session(key)
                self.memory.end_session(key)

    def _newest(self, key: str) -> list[Event] | None:
        """The newest event of a live session ([] before its first), None if none."""
        if not self._worker.held(key):
            return None
        newest = self.memory.list_turns(key, newest=1)
        if not newest:
            return None
        event = _event(newest[0])
        return [] if event is None else [event]

    def _append_checked(self, session: Session, key: str, event: Event) -> bool:
        """Check that `session` is the newest revision, then keep the event and its shared
        state: all in one write transaction, which takes the store's write lock before the
        check, so two writers to one session cannot both pass it, and a failure part way
        keeps nothing. False for a retried delivery (kept already)."""
        with self.memory.atomic():
            stored = self._newest(key)
            if stored is None:
                raise SessionNotFoundError(f"Session {session.id} not found.")
            if stored and stored[-1] == event:  # a retried delivery: applied once
                return False
            # As ADK's database service: a session this service handed out carries the id
            # of the newest event it saw (its revision marker); another is judged by time.
            marker = session._storage_update_marker
            newest = stored[-1].id if stored else ""
            if (marker is not None and marker != newest) or (
                marker is None and stored and stored[-1].timestamp > session.last_update_time
            ):
                raise StaleSessionError(
                    f"Session {session.id} was changed since it was read: read it again with"
                    " get_session and retry."
                )
            # As the base class; the caller's session takes the event only once it is
            # committed, so a failed write leaves it as it was (temp state aside, which is
            # never stored).
            self._apply_temp_state(session, event)
            self._trim_temp_delta_state(event)
            self.memory.append_turn(key, _message(event), at=_said(event.timestamp))
            parts = _scoped((event.actions.state_delta if event.actions else None) or {})
            app, user = session.app_name, session.user_id
            self._add_state(_key(APP_STATE, app), parts["app"], f"ADK app state ({app})")
            self._add_state(
                _key(USER_STATE, app, user), parts["user"], f"ADK user state ({app}, {user})"
            )
        return True

    def _state_turns(self, key: str) -> list[Turn]:
        return self.memory.list_turns(key) if self._worker.held(key) else []

    def _add_state(self, key: str, delta: dict[str, Any], title: str) -> None:
        if delta:
            self.memory.open_session(key, title=title)
            self.memory.append_turn(
                key, {"role": "system", "content": None, "adk_state_delta": _json_safe(delta)}
            )

    def _merged(self, session: Session) -> Session:
        """The session with the app's and the user's state merged in, by their prefixes."""
        app = _fold(self._state_turns(_key(APP_STATE, session.app_name)), "adk_state_delta")
        user = _fold(
            self._state_turns(_key(USER_STATE, session.app_name, session.user_id)),
            "adk_state_delta",
        )
        for name, value in app.items():
            session.state[State.APP_PREFIX + name] = value
        for name, value in user.items():
            session.state[State.USER_PREFIX + name] = value
        return session


class ClewMemoryService(BaseMemoryService):
    """ADK's BaseMemoryService over a clew store, searched by clew's ranked search: `memory`
    is a Memory, a store's path or URL, or None (the store found from the folder)."""

    def __init__(self, memory: Store = None, *, limit: int = SEARCH_LIMIT) -> None:
        self._worker = _Worker(memory)
        self.memory = self._worker.memory
        self.limit = limit

    async def add_session_to_memory(self, session: Session) -> None:
        """Keep the session's events that have content (each once, however often added)."""
        await self._worker.run(
            self._add_events, session.app_name, session.user_id, session.events, session.id
        )

    async def add_events_to_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        events: Sequence[Event],
        session_id: str | None = None,
        custom_metadata: Mapping[str, object] | None = None,
    ) -> None:
        """Keep these events (those with content, each once)."""
        await self._worker.run(self._add_events, app_name, user_id, list(events), session_id)

    async def add_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        memories: Sequence[MemoryEntry],
        custom_metadata: Mapping[str, object] | None = None,
    ) -> None:
        """Keep explicit memories (their text is what search finds)."""
        await self._worker.run(self._add_memories, app_name, user_id, list(memories))

    async def search_memory(
        self, *, app_name: str, user_id: str, query: str
    ) -> SearchMemoryResponse:
        """The user's memories that best answer `query`, best first (clew's ranked search)."""
        return await self._worker.run(self._search, app_name, user_id, query)

    # -- on the worker --------------------------------------------------------------------

    def _session(self, app: str, user: str) -> str:
        key = _key(MEMORY, app, user)
        self.memory.open_session(key, title=f"ADK memory ({app}, {user})")
        return key

    def _add_events(self, app: str, user: str, events: list[Event], session_id: str | None) -> None:
        wanted = [e for e in events if e.content and e.content.parts]
        if not wanted:
            return
        key = self._session(app, user)
        held = {
            t.message["adk_event"].get("id")
            for t in self.memory.list_turns(key)
            if isinstance(t.message.get("adk_event"), dict)
        }
        new, seen = [], set(held)
        for event in wanted:
            if event.id not in seen:
                seen.add(event.id)
                new.append(event)
        if new:
            extra = {} if session_id is None else {"adk_session_id": session_id}
            self.memory.append_turns(
                key, [_message(e, **extra) for e in new], at=[_said(e.timestamp) for e in new]
            )

    def _add_memories(self, app: str, user: str, memories: list[MemoryEntry]) -> None:
        if not memories:
            return
        key = self._session(app, user)
        messages = []
        for entry in memories:
            text = "\n".join(p.text for p in (entry.content.parts or []) if p.text) or None
            role = "user" if entry.author == "user" else "assistant"
            kept = entry.model_dump(mode="json", exclude_none=True)
            messages.append({"role": role, "content": text, "adk_memory": kept})
        self.memory.append_turns(key, messages)

    def _search(self, app: str, user: str, query: str) -> SearchMemoryResponse:
        key = _key(MEMORY, app, user)
        if not query.strip() or not self._worker.held(key):
            return SearchMemoryResponse()
        try:
            hits = self.memory.search_all(query, session_id=key, limit=self.limit)
        except ValidationError:  # no word to look for ("*", "?"): nothing matches, as in ADK's
            return SearchMemoryResponse()
        found: list[MemoryEntry] = []
        for hit in hits:
            if hit.turn is None:
                continue
            turn = self.memory.list_turns(key, first=hit.turn, last=hit.turn)[0]
            entry = _entry(turn, hit.score)
            if entry is not None:
                found.append(entry)
        return SearchMemoryResponse(memories=found)


def _entry(turn: Turn, score: float) -> MemoryEntry | None:
    """The memory a turn keeps: an explicit memory as it was added, or an event's content."""
    meta = {"clew_turn": turn.number, "score": score}
    raw = turn.message.get("adk_memory")
    if isinstance(raw, dict):
        entry = MemoryEntry.model_validate(raw)
        entry.custom_metadata = {**entry.custom_metadata, **meta}
        return entry
    event = _event(turn)
    if event is None or event.content is None:
        return None
    if isinstance(turn.message.get("adk_session_id"), str):
        meta["session_id"] = turn.message["adk_session_id"]
    return MemoryEntry(
        id=event.id,
        content=event.content,
        author=event.author,
        timestamp=datetime.fromtimestamp(event.timestamp).isoformat(),
        custom_metadata=meta,
    )
