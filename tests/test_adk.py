"""Google ADK's session and memory services over clew, against the real `google-adk`: each
method on both backends, the same calls compared with ADK's own InMemorySessionService, and
ADK's Runner driving an LlmAgent with a scripted model (a tool call and its result), resumed
by a fresh Runner over the same store, with load_memory and preload_memory finding an
earlier session's fact.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import subprocess
import sys
import tempfile
from collections.abc import AsyncGenerator, Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("google.adk")

from google.adk.agents import LlmAgent
from google.adk.errors import StaleSessionError
from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.errors.session_not_found_error import SessionNotFoundError
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.memory.memory_entry import MemoryEntry
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions.base_session_service import BaseSessionService, GetSessionConfig
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.adk.tools import load_memory, preload_memory
from google.genai import types
from pydantic import Field

import clew
from clew.integrations.adk import ClewMemoryService, ClewSessionService, session_key

APP, USER = "helpdesk", "ada"


def synchronous(test: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    """An async test run on a loop of its own (the suite has no async plugin)."""

    @functools.wraps(test)
    def run(*args: Any, **kwargs: Any) -> None:
        asyncio.run(test(*args, **kwargs))

    return run


def said(author: str, text: str, at: float, **delta: Any) -> Event:
    role = "user" if author == "user" else "model"
    return Event(
        id=f"{author}-{at}-{text}",  # the same in every run, so two services' answers compare
        author=author,
        invocation_id="inv-1",
        timestamp=at,
        content=types.Content(role=role, parts=[types.Part(text=text)]),
        actions=EventActions(state_delta=delta),
    )


@pytest.fixture
def store(db: Path) -> Any:
    with clew.open(db) as memory:
        yield memory


# -- each method, on both backends ---------------------------------------------------------


@synchronous
async def test_a_session_is_created_read_and_listed(store: clew.Memory) -> None:
    service = ClewSessionService(store)
    made = await service.create_session(
        app_name=APP,
        user_id=USER,
        session_id=" s1 ",
        state={"topic": "vpn", "app:tier": "gold", "user:lang": "fr", "temp:scratch": 1},
    )
    assert made.id == "s1"
    assert made.state == {"topic": "vpn", "app:tier": "gold", "user:lang": "fr"}
    got = await service.get_session(app_name=APP, user_id=USER, session_id="s1")
    assert got is not None and got.state == made.state and got.events == []
    other = await service.create_session(app_name=APP, user_id="bob")
    assert other.id and other.state == {"app:tier": "gold"}  # app state is shared, user's not
    assert await service.get_user_state(app_name=APP, user_id=USER) == {"lang": "fr"}
    listed = await service.list_sessions(app_name=APP)
    assert {(s.user_id, s.id) for s in listed.sessions} == {(USER, "s1"), ("bob", other.id)}
    mine = await service.list_sessions(app_name=APP, user_id=USER)
    assert [s.id for s in mine.sessions] == ["s1"]
    assert (await service.list_sessions(app_name="elsewhere")).sessions == []
    with pytest.raises(AlreadyExistsError):
        await service.create_session(app_name=APP, user_id=USER, session_id="s1")
    assert await service.get_session(app_name=APP, user_id=USER, session_id="nope") is None
    assert await service.get_session(app_name=APP, user_id="bob", session_id="s1") is None


@synchronous
async def test_events_are_kept_verbatim_with_their_state(store: clew.Memory) -> None:
    service = ClewSessionService(store)
    session = await service.create_session(app_name=APP, user_id=USER, session_id="s1")
    first = said("user", "My VPN token is KX-88.", 1000.0, **{"temp:t": 1})
    second = said("helper", "Noted.", 1001.0, step="noted", **{"user:seen": True})
    for event in (first, second):
        await service.append_event(session, event)
    assert session.state["temp:t"] == 1  # temp state lives in the caller's session only
    await service.append_event(session, second)  # a retried delivery is applied once
    got = await service.get_session(app_name=APP, user_id=USER, session_id="s1")
    assert got is not None
    assert got.events == [first, second]
    assert got.state == {"step": "noted", "user:seen": True}
    assert got.last_update_time == 1001.0
    # clew reads them as any conversation: roles, text, search
    turns = store.list_turns(session_key(APP, USER, "s1"))
    assert [(t.role, t.text) for t in turns[1:]] == [
        ("user", "My VPN token is KX-88."),
        ("assistant", "Noted."),
    ]
    hits = store.search_all("VPN token", session_id=session_key(APP, USER, "s1"))
    assert hits and hits[0].turn == turns[1].number


@synchronous
async def test_get_session_config_limits_the_events(store: clew.Memory) -> None:
    service = ClewSessionService(store)
    session = await service.create_session(app_name=APP, user_id=USER, session_id="s1")
    events = [said("user", f"message {n}", 100.0 + n) for n in range(5)]
    for event in events:
        await service.append_event(session, event)

    async def get(**config: Any) -> list[Event]:
        got = await service.get_session(
            app_name=APP, user_id=USER, session_id="s1", config=GetSessionConfig(**config)
        )
        assert got is not None
        return got.events

    assert await get(num_recent_events=2) == events[3:]
    assert await get(num_recent_events=0) == []
    assert await get(after_timestamp=102.0) == events[2:]
    assert await get(num_recent_events=2, after_timestamp=104.0) == events[4:]


@synchronous
async def test_the_newest_events_alone_come_with_the_whole_state(store: clew.Memory) -> None:
    # Only the events returned are made Events; the state is still every event's delta.
    service = ClewSessionService(store)
    session = await service.create_session(
        app_name=APP, user_id=USER, session_id="s1", state={"a": 0}
    )
    events = [
        said("user", f"m{n}", 100.0 + n, **{f"k{n}": {"n": [n]}, "a": n, "temp:t": n})
        for n in range(6)
    ]
    for event in events:
        await service.append_event(session, event)
    whole = await service.get_session(app_name=APP, user_id=USER, session_id="s1")
    newest = await service.get_session(
        app_name=APP, user_id=USER, session_id="s1", config=GetSessionConfig(num_recent_events=1)
    )
    assert whole is not None and newest is not None
    assert newest.events == events[-1:] and whole.events == events
    assert newest.state == whole.state == {"a": 5, **{f"k{n}": {"n": [n]} for n in range(6)}}
    assert newest.last_update_time == 105.0
    newest.state["k0"]["n"].append("changed by the caller")  # its own copy, not the store's
    again = await service.get_session(app_name=APP, user_id=USER, session_id="s1")
    assert again is not None and again.state["k0"] == {"n": [0]}
    await service.append_event(newest, said("user", "after", 200.0))  # its revision is current


@synchronous
async def test_a_deleted_session_is_gone_for_adk_and_kept_by_clew(store: clew.Memory) -> None:
    service = ClewSessionService(store)
    session = await service.create_session(app_name=APP, user_id=USER, session_id="s1")
    await service.append_event(session, said("user", "the canary word is heliotrope", 5.0))
    await service.delete_session(app_name=APP, user_id=USER, session_id="s1")
    await service.delete_session(app_name=APP, user_id=USER, session_id="s1")  # no error
    assert await service.get_session(app_name=APP, user_id=USER, session_id="s1") is None
    assert (await service.list_sessions(app_name=APP)).sessions == []
    with pytest.raises(SessionNotFoundError):
        await service.append_event(session, said("user", "more", 6.0))
    key = session_key(APP, USER, "s1")
    assert any(
        t.text and "heliotrope" in t.text for t in store.list_turns(key, include_hidden=True)
    )
    again = await service.create_session(app_name=APP, user_id=USER, session_id="s1")
    got = await service.get_session(app_name=APP, user_id=USER, session_id=again.id)
    assert got is not None and got.events == []


@synchronous
async def test_a_session_survives_a_new_store_and_service(db: Path) -> None:
    with clew.open(db) as first:
        service = ClewSessionService(first)
        session = await service.create_session(
            app_name=APP, user_id=USER, session_id="s1", state={"a": 1}
        )
        event = said("user", "hello", 7.0, b=2, **{"app:c": 3})
        await service.append_event(session, event)
    with clew.open(db) as second:
        got = await ClewSessionService(second).get_session(
            app_name=APP, user_id=USER, session_id="s1"
        )
        assert got is not None and got.events == [event]
        assert got.state == {"a": 1, "b": 2, "app:c": 3}


@synchronous
async def test_a_stale_session_is_refused_and_odd_state_kept(store: clew.Memory) -> None:
    service = ClewSessionService(store)
    mine = await service.create_session(app_name=APP, user_id=USER, session_id="s1")
    theirs = await service.get_session(app_name=APP, user_id=USER, session_id="s1")
    assert theirs is not None
    await service.append_event(mine, said("user", "first", 10.0))
    with pytest.raises(StaleSessionError):
        await service.append_event(theirs, said("user", "second", 11.0))
    assert theirs.events == []  # a refused event leaves the caller's session as it was
    fresh = await service.get_session(app_name=APP, user_id=USER, session_id="s1")
    assert fresh is not None
    await service.append_event(fresh, said("user", "second", 11.0, hook=print, n=1))
    got = await service.get_session(app_name=APP, user_id=USER, session_id="s1")
    assert got is not None and [e.content.parts[0].text for e in got.events if e.content] == [
        "first",
        "second",
    ]
    assert got.state["n"] == 1 and "print" in got.state["hook"]  # kept as its repr


@synchronous
async def test_a_failure_part_way_through_an_append_keeps_nothing(
    store: clew.Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = ClewSessionService(store)
    session = await service.create_session(app_name=APP, user_id=USER, session_id="s1")
    await service.append_event(session, said("user", "first", 10.0))
    before = {k: len(store.list_turns(k, include_hidden=True)) for k in _adk_keys(store)}
    # The event and the app state are written; the user state's write then fails.
    real = service._add_state

    def failing(key: str, delta: dict[str, Any], title: str) -> None:
        real(key, delta, title)
        if key.startswith("adk-user/"):
            raise OSError("disk gone")

    monkeypatch.setattr(service, "_add_state", failing)
    second = said("user", "second", 11.0, **{"app:a": 1, "user:u": 2})
    with pytest.raises(OSError, match="disk gone"):
        await service.append_event(session, second)
    assert [e.content.parts[0].text for e in session.events if e.content] == ["first"]
    after = {k: len(store.list_turns(k, include_hidden=True)) for k in _adk_keys(store)}
    assert after == before  # no turn of the event, no app state, no user state
    monkeypatch.undo()
    got = await service.get_session(app_name=APP, user_id=USER, session_id="s1")
    assert got is not None and len(got.events) == 1 and "app:a" not in got.state
    assert await service.get_user_state(app_name=APP, user_id=USER) == {}
    await service.append_event(session, said("user", "second", 11.0))  # the session still takes it
    assert store.verify().ok


def _adk_keys(store: clew.Memory) -> list[str]:
    return sorted(s.key for s in store.list_sessions() if s.key and s.key.startswith("adk"))


_RACER = """
import asyncio, sys, time
from pathlib import Path
import clew
from google.adk.errors import StaleSessionError
from google.adk.events.event import Event
from google.genai import types
from clew.integrations.adk import ClewSessionService

db, me, other, folder = sys.argv[1], sys.argv[2], sys.argv[3], Path(sys.argv[4])

def wait_for(name, seconds):
    end = time.monotonic() + seconds
    while not (folder / name).exists() and time.monotonic() < end:
        time.sleep(0.01)

async def main():
    with clew.open(db) as memory:
        service = ClewSessionService(memory)
        session = await service.get_session(app_name="helpdesk", user_id="ada", session_id="s1")
        (folder / f"read-{me}").touch()
        wait_for(f"read-{other}", 30)  # both hold the same revision before either appends
        real = memory.append_turn

        def append_turn(*args, **kwargs):
            # Between the revision check and the write: wait for the other writer to pass
            # its check too. With the check and the write in one transaction, it cannot
            # (it waits on the write lock), and this wait ends unanswered.
            (folder / f"checked-{me}").touch()
            wait_for(f"checked-{other}", 2)
            return real(*args, **kwargs)

        memory.append_turn = append_turn
        event = Event(id=f"e-{me}", author="user", invocation_id="i", timestamp=100.0,
                      content=types.Content(role="user", parts=[types.Part(text=me)]))
        try:
            await service.append_event(session, event)
        except StaleSessionError:
            print("stale")
        else:
            print("won")

asyncio.run(main())
"""


@synchronous
async def test_two_processes_appending_to_one_session_at_once_one_wins(
    db: Path, tmp_path: Path
) -> None:
    with clew.open(db) as memory:
        await ClewSessionService(memory).create_session(app_name=APP, user_id=USER, session_id="s1")
    script = tmp_path / "racer.py"
    script.write_text(_RACER)
    racers = [
        subprocess.Popen(
            [sys.executable, str(script), str(db), me, other, str(tmp_path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for me, other in (("a", "b"), ("b", "a"))
    ]
    outcomes = []
    for racer in racers:
        out, err = racer.communicate(timeout=120)
        assert racer.returncode == 0, err
        outcomes.append(out.strip())
    assert sorted(outcomes) == ["stale", "won"]
    with clew.open(db) as memory:
        got = await ClewSessionService(memory).get_session(
            app_name=APP, user_id=USER, session_id="s1"
        )
        assert got is not None and len(got.events) == 1
        assert got.events[0].id == ("e-a" if outcomes[0] == "won" else "e-b")


@synchronous
async def test_memory_is_searched_by_clew(store: clew.Memory) -> None:
    sessions, memory = ClewSessionService(store), ClewMemoryService(store)
    session = await sessions.create_session(app_name=APP, user_id=USER, session_id="s1")
    facts = [
        said("user", "My printer on floor 3 is jammed.", 1.0),
        said("helper", "The VPN server is vpn-eu-2.corp.", 2.0),
        said("user", "My badge number is 7731.", 3.0),
    ]
    for event in facts:
        await sessions.append_event(session, event)
    await memory.add_session_to_memory(session)
    await memory.add_session_to_memory(session)  # added twice: kept once
    await memory.add_events_to_memory(app_name=APP, user_id=USER, events=facts[:1], session_id="s1")
    found = await memory.search_memory(app_name=APP, user_id=USER, query="badge number")
    assert found.memories[0].id == facts[2].id
    assert found.memories[0].content == facts[2].content and found.memories[0].author == "user"
    assert found.memories[0].custom_metadata["session_id"] == "s1"
    key = "adk-memory/helpdesk/ada"
    assert len(store.list_turns(key)) == 3
    explicit = MemoryEntry(
        content=types.Content(parts=[types.Part(text="Ada prefers email")]),
        author="user",
        custom_metadata={"source": "crm"},
    )
    await memory.add_memory(app_name=APP, user_id=USER, memories=[explicit])
    found = await memory.search_memory(app_name=APP, user_id=USER, query="prefers email")
    assert found.memories[0].content == explicit.content
    assert found.memories[0].custom_metadata["source"] == "crm"
    # another user's memory is not searched; an empty query finds nothing
    assert (await memory.search_memory(app_name=APP, user_id="bob", query="badge")).memories == []
    assert (await memory.search_memory(app_name=APP, user_id=USER, query=" ")).memories == []


# -- the same calls as ADK's own service ------------------------------------------------------


def _seen(session: Any) -> Any:
    if session is None:
        return None
    # copied: the caller's Session object changes as events are appended to it
    return copy.deepcopy(
        (session.id, session.app_name, session.user_id, session.state, session.events)
    )


async def _script(service: BaseSessionService) -> list[Any]:
    """A run of calls; what each returned, timestamps of creation aside."""
    out: list[Any] = []
    state = {"x": 1, "app:y": 2, "user:z": 3, "temp:w": 4}
    s = await service.create_session(app_name=APP, user_id=USER, session_id="one", state=state)
    out.append(_seen(s))
    t = await service.create_session(app_name=APP, user_id="bob", session_id="two")
    out.append(_seen(t))
    for n, event in enumerate(
        [
            said("user", "hi", 10.0, x=5, **{"temp:q": 1}),
            said("helper", "hello", 11.0, **{"app:y": 7, "user:z": None}),
            said("helper", "bye", 12.0, **{"user:new": [1, 2]}),
        ]
    ):
        await service.append_event(s, event)
        out.append(dict(s.state))
        await service.append_event(t, said("user", f"bob {n}", 20.0 + n, **{"app:n": n}))
    for config in (
        None,
        GetSessionConfig(num_recent_events=1),
        GetSessionConfig(after_timestamp=11.0),
    ):
        out.append(
            _seen(
                await service.get_session(
                    app_name=APP, user_id=USER, session_id="one", config=config
                )
            )
        )
    out.append(_seen(await service.get_session(app_name=APP, user_id="bob", session_id="two")))
    listed = await service.list_sessions(app_name=APP)
    out.append([(x.id, x.user_id, x.state, x.events, x.last_update_time) for x in listed.sessions])
    out.append(await service.get_user_state(app_name=APP, user_id=USER))
    await service.delete_session(app_name=APP, user_id=USER, session_id="one")
    out.append(_seen(await service.get_session(app_name=APP, user_id=USER, session_id="one")))
    out.append([x.id for x in (await service.list_sessions(app_name=APP)).sessions])
    return out


@synchronous
async def test_it_answers_as_adks_own_session_service(store: clew.Memory) -> None:
    assert await _script(ClewSessionService(store)) == await _script(InMemorySessionService())


# -- ADK's Runner, end to end ---------------------------------------------------------------


class Scripted(BaseLlm):
    """A model that answers from a script and remembers what it was asked."""

    model: str = "scripted"
    script: list[LlmResponse] = Field(default_factory=list)
    asked: list[LlmRequest] = Field(default_factory=list)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self.asked.append(llm_request)
        yield self.script.pop(0)


def reply(text: str) -> LlmResponse:
    return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))


def call(name: str, **args: Any) -> LlmResponse:
    part = types.Part(function_call=types.FunctionCall(name=name, args=args))
    return LlmResponse(content=types.Content(role="model", parts=[part]))


def ask(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


def get_weather(city: str) -> dict[str, str]:
    """The weather in a city."""
    return {"city": city, "forecast": "sunny, 21 C"}


def seen_text(request: LlmRequest) -> str:
    return " ".join(p.text or "" for c in request.contents for p in (c.parts or []))


async def run(runner: Runner, session_id: str, text: str) -> list[Event]:
    return [
        e
        async for e in runner.run_async(user_id=USER, session_id=session_id, new_message=ask(text))
    ]


@synchronous
async def test_adks_runner_keeps_a_conversation_in_clew(db: Path) -> None:
    with clew.open(db) as first:
        model = Scripted(script=[call("get_weather", city="Paris"), reply("Sunny in Paris.")])
        agent = LlmAgent(name="helper", model=model, tools=[get_weather])
        sessions = ClewSessionService(first)
        runner = Runner(agent=agent, app_name=APP, session_service=sessions)
        await sessions.create_session(app_name=APP, user_id=USER, session_id="s1")
        events = await run(runner, "s1", "Weather in Paris? My badge number is 7731.")
        assert events[-1].content and events[-1].content.parts[0].text == "Sunny in Paris."
        turns = first.list_turns(session_key(APP, USER, "s1"))
        assert [t.role for t in turns[1:]] == ["user", "assistant", "tool", "assistant"]
        asked, result = turns[2], turns[3]
        assert asked.tool_calls[0][1] == "get_weather" and result.call_turn == asked.number
        assert result.tool_name == "get_weather" and "sunny, 21 C" in (result.text or "")
        memory = ClewMemoryService(first)
        stored = await sessions.get_session(app_name=APP, user_id=USER, session_id="s1")
        assert stored is not None and len(stored.events) == 4
        await memory.add_session_to_memory(stored)
    with clew.open(db) as second:  # a fresh process's view: a new store, services, runner
        model = Scripted(script=[reply("You asked about Paris.")])
        sessions = ClewSessionService(second)
        runner = Runner(
            agent=LlmAgent(name="helper", model=model, tools=[get_weather]),
            app_name=APP,
            session_service=sessions,
        )
        await run(runner, "s1", "What did I ask?")
        history = seen_text(model.asked[0])
        assert "Weather in Paris?" in history and "Sunny in Paris." in history
        got = await sessions.get_session(app_name=APP, user_id=USER, session_id="s1")
        assert got is not None and len(got.events) == 6

        # a later session finds the earlier one's fact through memory
        memory = ClewMemoryService(second)
        model = Scripted(script=[call("load_memory", query="badge number"), reply("7731")])
        runner = Runner(
            agent=LlmAgent(name="helper", model=model, tools=[load_memory]),
            app_name=APP,
            session_service=sessions,
            memory_service=memory,
        )
        await sessions.create_session(app_name=APP, user_id=USER, session_id="s2")
        events = await run(runner, "s2", "What is my badge number?")
        responses = [r for e in events for r in e.get_function_responses()]
        assert responses and "7731" in str(responses[0].response)

        model = Scripted(script=[reply("It is 7731.")])
        runner = Runner(
            agent=LlmAgent(name="helper", model=model, tools=[preload_memory]),
            app_name=APP,
            session_service=sessions,
            memory_service=memory,
        )
        await sessions.create_session(app_name=APP, user_id=USER, session_id="s3")
        await run(runner, "s3", "Remind me of my badge number")
        assert "7731" in seen_text(model.asked[0])
        assert second.verify().ok  # the journal rebuilds every row the services wrote


# -- a round trip, for any events ------------------------------------------------------------

_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)
_deltas = st.dictionaries(
    st.sampled_from(["a", "b", "app:a", "user:a", "temp:a"]), _values, max_size=3
)
_events = st.lists(
    st.tuples(st.sampled_from(["user", "helper"]), st.text(min_size=1, max_size=40), _deltas),
    max_size=6,
)


@settings(max_examples=25)
@given(initial=_deltas, script=_events)
def test_any_events_read_back_as_adks_own_service_gives_them(
    initial: dict[str, Any], script: list[tuple[str, str, dict[str, Any]]]
) -> None:
    async def play(service: BaseSessionService) -> Any:
        session = await service.create_session(
            app_name=APP, user_id=USER, session_id="s", state=copy.deepcopy(initial)
        )
        for n, (author, text, delta) in enumerate(script):
            event = said(author, text, 100.0 + n, **copy.deepcopy(delta))
            await service.append_event(session, event)
        got = await service.get_session(app_name=APP, user_id=USER, session_id="s")
        return _seen(got), await service.get_user_state(app_name=APP, user_id=USER)

    with tempfile.TemporaryDirectory() as folder, clew.open(Path(folder) / "c.db") as memory:
        ours = asyncio.run(play(ClewSessionService(memory)))
    assert ours == asyncio.run(play(InMemorySessionService()))
