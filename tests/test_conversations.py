"""The conversation archive: verbatim write-through turns, session state, recall, resume,
import and export, and what bad input gets."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import clew
from clew.core import turns
from tests.conftest import FakeClock, Result


def call(call_id: str, tool: str, /, **arguments: Any) -> dict[str, Any]:
    """An assistant message that calls one tool."""
    function = {"name": tool, "arguments": json.dumps(arguments)}
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": call_id, "type": "function", "function": function}],
    }


def result(call_id: str, content: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


CONVERSATION: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a coding assistant."},
    {
        "role": "user",
        "content": "Add JWT auth to the API. Never use an ORM, raw SQL only.",
        "name": "alice",
    },
    call("c1", "read_file", path="src/auth.py"),
    result("c1", "def login(user):\n    return token_for(user)\n" * 3),
    {"role": "assistant", "content": "Let's use PyJWT for the tokens."},
    call("c2", "write_file", path="src/auth.py", content="import jwt\n"),
    result("c2", "wrote 11 bytes"),
    call("c3", "bash", command="pytest -q"),
    result("c3", "Traceback (most recent call last):\nModuleNotFoundError: No module named 'jwt'"),
    call("c4", "edit_file", path="requirements.txt", old="", new="PyJWT\n"),
    result("c4", "ok"),
    call("c5", "bash", command="pytest -q"),
    result("c5", "12 passed in 0.4s"),
    call("c6", "bash", command="git commit -am 'Add JWT auth'"),
    result("c6", "[main 1a2b3c] Add JWT auth"),
    {"role": "user", "content": "Great. Now refresh token rotation, please."},
]


@pytest.fixture
def session(mem: clew.Memory) -> clew.Session:
    started = mem.start_session(workspace="/work/api", model="m-1", title="auth")
    mem.append_turns(started.id, CONVERSATION)
    return mem.get_session(started.id)


# -- store ----------------------------------------------------------------------------------


def test_turns_are_numbered_kept_verbatim_and_counted(
    mem: clew.Memory, session: clew.Session
) -> None:
    stored = mem.list_turns(session.id)
    assert [t.number for t in stored] == list(range(1, len(CONVERSATION) + 1))
    assert [t.message for t in stored] == CONVERSATION
    assert [t.role for t in stored][:4] == ["system", "user", "assistant", "tool"]
    assert stored[2].tool_calls == (("c1", "read_file", '{"path": "src/auth.py"}'),)
    # A result knows its tool and the turn that called it, though its message names neither.
    assert (stored[3].tool_call_id, stored[3].tool_name, stored[3].call_turn) == (
        "c1",
        "read_file",
        3,
    )
    assert session.turn_count == len(CONVERSATION)
    assert session.total_tokens == sum(t.token_count for t in stored) > 0
    assert mem.verify().ok


@pytest.mark.sqlite_only("reads the SQLite file directly")
def test_an_append_is_committed_when_it_returns(mem: clew.Memory, db: Path) -> None:
    started = mem.start_session()
    mem.append_turn(started.id, role="user", content="write-through")
    # Another connection, as another process would, sees it at once.
    other = sqlite3.connect(db)
    assert other.execute("SELECT content FROM turns").fetchall() == [("write-through",)]


@pytest.mark.sqlite_only("reads the SQLite file directly")
def test_content_is_stored_once_and_whole(mem: clew.Memory, db: Path) -> None:
    big = "x" * 2_000_000  # no truncation, whatever the size
    started = mem.start_session()
    mem.append_turn(started.id, role="tool", content=big, tool_call_id="c9", tool_name="dump")
    conn = sqlite3.connect(db)
    row = conn.execute("SELECT content, message FROM turns").fetchone()
    assert row[0] == big and big not in row[1]
    # Stored once: in the journal; the row refers to its event (migration 15).
    row = conn.execute("SELECT content, message FROM turn_rows").fetchone()
    assert row[0] is None and big not in row[1]
    (data,) = conn.execute("SELECT data FROM events WHERE type = 'turn.appended'").fetchone()
    assert data.count(big) == 1
    assert mem.list_turns(started.id)[0].message["content"] == big


def test_changing_a_returned_state_changes_nothing_stored(mem: clew.Memory) -> None:
    started = mem.start_session()
    mem.append_turn(started.id, role="user", content="We decided to use tox. Fix a.py")
    given = mem.get_session(started.id).state
    given.setdefault("decisions", []).append({"text": "planted", "turn": 99})
    given["focus"] = {"text": "planted", "turn": 99}
    mem.session_state(started.id).state.setdefault("decisions", []).append({"text": "planted"})
    mem.append_turn(started.id, role="user", content="We decided to keep pytest too.")
    stored = mem.get_session(started.id).state
    assert "planted" not in str(stored)
    assert mem.verify().ok


@pytest.mark.sqlite_only("reads the SQLite file directly")
def test_a_row_keeps_what_its_event_does_not_hold_verbatim(mem: clew.Memory, db: Path) -> None:
    started = mem.start_session()
    given = [
        {"role": "user", "content": "a NUL \x00 in the text"},  # SQLite's JSON cuts it short
        {"role": "user", "content": "plain", "$key": {"$bytes": "not bytes"}},
        {"role": "assistant", "content": [{"type": "text", "text": "parts"}]},  # derived text
    ]
    mem.append_turns(started.id, given)
    rows = sqlite3.connect(db).execute("SELECT content, text_in FROM turn_rows ORDER BY turn")
    assert rows.fetchall() == [("a NUL \x00 in the text", None), (None, 1), (None, 3)]
    assert mem.export_session(started.id) == given
    assert [t.text for t in mem.list_turns(started.id)] == [
        "a NUL \x00 in the text",
        "plain",
        "parts",
    ]
    assert mem.verify().ok


_text = st.text(max_size=40)
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | _text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=8,
)
_message = st.one_of(
    st.fixed_dictionaries(
        {
            "role": st.sampled_from(["user", "assistant", "system", "developer"]),
            "content": st.one_of(
                st.none(),
                _text,
                st.lists(
                    st.fixed_dictionaries({"type": st.just("text"), "text": _text}), max_size=2
                ),
            ),
        },
        optional={"name": _text, "extra": _json},
    ),
    st.fixed_dictionaries({"role": st.just("tool"), "tool_call_id": _text, "content": _text}),
    st.fixed_dictionaries(
        {"type": st.just("function_call"), "call_id": _text, "name": _text, "arguments": _text}
    ),
    st.fixed_dictionaries(
        {"type": st.just("function_call_output"), "call_id": _text, "output": _text}
    ),
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(messages=st.lists(_message, min_size=1, max_size=6))
def test_any_message_round_trips_exactly(
    mem: clew.Memory, backend: str, messages: list[dict[str, Any]]
) -> None:
    # PostgreSQL's text cannot hold NUL: such a message is refused there (test_postgres.py).
    assume(backend == "sqlite" or "\\u0000" not in json.dumps(messages))
    started = mem.import_session(messages)
    exported = mem.export_session(started.id)
    assert exported == messages
    # Key order too: the JSON text is the same.
    assert turns.write_messages(exported) == turns.write_messages(messages)


def test_export_then_import_gives_the_same_file(mem: clew.Memory) -> None:
    first = turns.write_messages(CONVERSATION)
    again = mem.export_session(mem.import_session(turns.read_messages(first, "f")).id)
    assert turns.write_messages(again) == first


def test_responses_items_are_understood(mem: clew.Memory) -> None:
    items = [
        {"role": "user", "content": "what is the weather?"},
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {
            "type": "function_call",
            "call_id": "fc1",
            "name": "weather",
            "arguments": '{"city": "Oslo"}',
        },
        {"type": "function_call_output", "call_id": "fc1", "output": "sunny, 12 C"},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Sunny in Oslo.", "annotations": []}],
        },
    ]
    started = mem.import_session(items)
    stored = mem.list_turns(started.id)
    assert [t.role for t in stored] == ["user", "assistant", "assistant", "tool", "assistant"]
    assert stored[3].tool_name == "weather" and stored[3].text == "sunny, 12 C"
    assert stored[4].text == "Sunny in Oslo."
    assert mem.export_session(started.id) == items


# -- session state --------------------------------------------------------------------------


def test_session_state_is_extracted_mechanically(mem: clew.Memory, session: clew.Session) -> None:
    state = mem.session_state(session.id)
    assert [f["path"] for f in state.state["files"]] == ["src/auth.py", "requirements.txt"]
    assert [f["action"] for f in state.state["files"]] == ["created", "edited"]
    # The user's rule and the commit; "Let's use PyJWT for the tokens." states no choice in
    # so many words (the claims rules extraction uses: see the next test).
    decisions = [d["text"] for d in state.state["decisions"]]
    assert decisions == ["Never use an ORM, raw SQL only.", "Committed: Add JWT auth"]
    [fixed] = state.state["errors_resolved"]
    assert "No module named 'jwt'" in fixed["error"] and fixed["turn"] == 13
    assert state.state["focus"]["text"] == "Great. Now refresh token rotation, please."
    assert "current_focus: Great. Now refresh token rotation, please." in state.text
    assert state.tokens <= 1000


def test_key_decisions_are_what_was_decided_not_chatter(mem: clew.Memory) -> None:
    started = mem.start_session()
    said = [
        ("user", "Don't worry about it, you must be tired. Never had this problem before."),
        ("assistant", "I'll use grep to look for it. Let me try using ripgrep instead of grep."),
        ("assistant", "Build image: running it using the standard script."),
        ("user", "Always the same error. Can you check the logs?"),
        ("assistant", "Going with ghcr.io instead of Docker Hub: Docker Hub rate-limits pulls."),
        ("user", "Let's go with the read replica. Don't touch the billing module."),
        ("assistant", "**Decision:** keep the v1 endpoint for a release, then remove it."),
        ("user", "Please make sure the migration is reversible."),
    ]
    mem.append_turns(started.id, [{"role": r, "content": text} for r, text in said])
    state = mem.session_state(started.id)
    assert [(d["text"], d["turn"]) for d in state.state["decisions"]] == [
        ("Going with ghcr.io instead of Docker Hub: Docker Hub rate-limits pulls.", 5),
        ("Let's go with the read replica.", 6),
        ("Don't touch the billing module.", 6),
        ("Decision: keep the v1 endpoint for a release, then remove it.", 7),
        ("Please make sure the migration is reversible.", 8),
    ]
    assert "- Please make sure the migration is reversible. (turn 8)" in state.text
    assert mem.verify().ok  # replayed from the journaled change, not folded again


def test_session_state_keeps_the_newest_and_stays_within_budget(mem: clew.Memory) -> None:
    started = mem.start_session()
    messages: list[dict[str, Any]] = []
    for n in range(60):
        messages.append({"role": "user", "content": f"We decided to use option {n} " + "z" * 300})
        messages.append(call(f"w{n}", "write_file", path=f"src/module_{n}_{'q' * 150}.py"))
        messages.append(result(f"w{n}", "ok"))
        messages.append(call(f"b{n}", "bash", command=f"make target{n}"))
        messages.append(result(f"b{n}", f"error: target{n} failed"))
        messages.append(call(f"r{n}", "bash", command=f"make target{n}"))
        messages.append(result(f"r{n}", "done"))
    mem.append_turns(started.id, messages)
    state = mem.session_state(started.id)
    assert len(state.state["files"]) == 20 and state.state["files"][-1]["path"].startswith(
        "src/module_59"
    )
    assert len(state.state["decisions"]) == 10
    assert len(state.state["errors_resolved"]) == 5
    assert state.tokens <= 1000
    assert mem.verify().ok  # the state is rebuilt exactly from the journal


# -- recall ---------------------------------------------------------------------------------


@pytest.mark.search
def test_search_shows_each_hit_with_its_neighbours_exact_first(
    mem: clew.Memory, session: clew.Session
) -> None:
    found = mem.recall(session.id, "search", query="PyJWT")
    assert 5 in found.matches
    assert {4, 5, 6} <= {t.number for t in found.turns}
    assert "[Turn 5] assistant:  (match)\n  Let's use PyJWT for the tokens." in found.text
    # Exact phrase first: both turns say "raw SQL", only turn 2 says it as typed.
    mem.append_turn(session.id, role="user", content="is the SQL raw enough?")
    ranked = mem.recall(session.id, "search", query="raw SQL", limit=1)
    assert ranked.matches == (2,)


@pytest.mark.search
def test_search_takes_any_text(mem: clew.Memory, session: clew.Session) -> None:
    for query in [
        '"unbalanced',
        "this AND that OR NOT",
        "src/auth.py",
        "(x",
        "ModuleNotFoundError: No",
    ]:
        mem.recall(session.id, "search", query=query)
    with pytest.raises(clew.ValidationError, match="no words to look for"):
        mem.recall(session.id, "search", query="* -")
    assert 9 in mem.recall(session.id, "search", query="ModuleNotFoundError").matches
    nothing = mem.recall(session.id, "search", query="kubernetes")
    assert nothing.turns == () and "No turn" in nothing.text


def test_range_tool_calls_around_and_summary(mem: clew.Memory, session: clew.Session) -> None:
    ranged = mem.recall(session.id, "range", start_turn=3, end_turn=4)
    assert [t.number for t in ranged.turns] == [3, 4]
    assert '[Turn 4] tool:read_file(path="src/auth.py")' in ranged.text
    runs = mem.recall(session.id, "tool_calls", tool_name="bash", limit=2)
    assert [t.number for t in runs.turns] == [13, 15]
    assert 'tool:bash(command="pytest -q")' in runs.text
    around = mem.recall(session.id, "around", turn=8, limit=1)
    assert [t.number for t in around.turns] == [7, 8, 9]
    summary = mem.recall(session.id, "summary")
    assert "16 turns" in summary.text and "bash x3" in summary.text
    assert "key_decisions:" in summary.text


def test_source_shows_the_turns_an_entry_came_from(mem: clew.Memory, session: clew.Session) -> None:
    failing = mem.list_turns(session.id, first=9, last=9)[0]
    entry = mem.add_entry("error", "jwt missing", sources=[("turn", failing.id)])
    found = mem.recall(session.id, "source", entry_id=entry.id[:6])
    assert [t.number for t in found.turns] == [9] and "No module named 'jwt'" in found.text


@pytest.mark.search
def test_recall_stays_within_budget_trimming_tool_results_first(mem: clew.Memory) -> None:
    started = mem.start_session()
    messages: list[dict[str, Any]] = []
    for n in range(30):
        messages += [
            {"role": "user", "content": f"step {n}: check the deploy log"},
            call(f"c{n}", "read_log", name=f"deploy-{n}"),
            result(f"c{n}", f"deploy {n} log line\n" * 800),
        ]
    mem.append_turns(started.id, messages)
    found = mem.recall(started.id, "search", query="deploy", limit=30)
    assert found.tokens <= 8000
    assert found.clipped and all(n % 3 == 0 for n in found.clipped)  # tool results only
    assert "lines, " in found.text and "--range" in found.text  # says how to fetch all of it
    small = mem.recall(started.id, "range", start_turn=1, end_turn=90, budget=1500)
    assert small.tokens <= 1500 and small.omitted
    assert small.turns[0].number == 1  # a range keeps its start; the rest follows
    rest = small.omitted[0]
    assert f"--range {rest} 90" in small.text


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    sizes=st.lists(st.integers(0, 20_000), min_size=1, max_size=12),
    budget=st.integers(1000, 9000),
    text=st.text(min_size=1, max_size=30),
)
def test_recall_is_always_within_its_budget(
    mem: clew.Memory, backend: str, sizes: list[int], budget: int, text: str
) -> None:
    assume(backend == "sqlite" or "\x00" not in text)  # PostgreSQL's text cannot hold NUL
    started = mem.start_session()
    messages: list[dict[str, Any]] = []
    for n, size in enumerate(sizes):
        messages += [
            {"role": "user", "content": (text + " ") * (size // 50 + 1)},
            call(f"k{n}", "t"),
            result(f"k{n}", text * size),
        ]
    mem.append_turns(started.id, messages)
    found = mem.recall(started.id, "range", start_turn=1, end_turn=len(messages), budget=budget)
    assert found.tokens <= budget
    assert found.turns  # something is always shown


def test_recall_hint() -> None:
    assert "conversation_recall" in (clew.open(":memory:").recall_hint("fix that error") or "")


# -- resume, pop, clear ---------------------------------------------------------------------


def test_sessions_are_listed_per_workspace_and_resumed(
    mem: clew.Memory, clock: FakeClock, tmp_path: Path
) -> None:
    here, elsewhere = tmp_path / "api", tmp_path / "web"
    here.mkdir(), elsewhere.mkdir()
    old = mem.start_session(workspace=str(here))
    clock.advance(60)
    mem.start_session(workspace=str(elsewhere))
    clock.advance(60)
    newest = mem.start_session(workspace=str(here))
    mem.append_turn(newest.id, role="user", content="hello")
    assert [s.id for s in mem.list_sessions(str(here / "src"))] == [newest.id, old.id]
    mem.end_session(newest.id)
    with pytest.raises(clew.ValidationError, match="has ended; resume it"):
        mem.append_turn(newest.id, role="user", content="more")
    resumed = mem.resume(workspace=str(here))
    assert resumed.session.id == newest.id and resumed.session.active
    assert resumed.context.messages[-1] == {"role": "user", "content": "hello"}
    assert mem.resume(old.id[:5]).session.id == old.id
    with pytest.raises(clew.NotFoundError):
        mem.resume(workspace=str(tmp_path / "none"))


@pytest.mark.search
def test_pop_and_clear_hide_but_never_delete(mem: clew.Memory, session: clew.Session) -> None:
    popped = mem.pop_turn(session.id)
    assert popped is not None and popped.number == 16 and popped.hidden
    assert mem.list_turns(session.id, newest=1)[0].number == 15
    assert mem.clear_session(session.id) == 15
    assert mem.list_turns(session.id) == [] and mem.pop_turn(session.id) is None
    assert len(mem.list_turns(session.id, include_hidden=True)) == 16
    assert mem.recall(session.id, "search", query="PyJWT").turns  # the archive keeps them
    added = mem.append_turn(session.id, role="user", content="fresh start")
    assert added.number == 17 and [t.number for t in mem.list_turns(session.id)] == [17]
    assert mem.verify().ok


def test_a_session_key_names_it(mem: clew.Memory) -> None:
    keyed = mem.start_session(key="conversation_123")
    assert mem.get_session("conversation_123").id == keyed.id
    with pytest.raises(clew.ValidationError, match="already exists"):
        mem.start_session(key="conversation_123")


# -- bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "error"),
    [
        ({"role": "robot", "content": "x"}, "role 'robot'"),
        ({"content": "x"}, "no role"),
        ({"role": "tool", "content": "x"}, "without a tool_call_id"),
        ({"role": "user", "content": 3}, "content must be"),
        ({"role": "assistant", "tool_calls": [{"id": "x"}]}, "no function name"),
        ("just text", "must be a JSON object"),
        ({"role": "user", "content": None, "x": float("nan")}, "not valid JSON"),
    ],
)
def test_bad_messages_store_nothing(
    mem: clew.Memory, session: clew.Session, message: Any, error: str
) -> None:
    before = len(mem.journal())
    with pytest.raises(clew.ValidationError, match=error):
        mem.append_turns(session.id, [{"role": "user", "content": "fine"}, message])
    assert len(mem.journal()) == before and mem.get_session(session.id).turn_count == 16


def test_bad_recall_arguments_say_what_to_do(mem: clew.Memory, session: clew.Session) -> None:
    cases: list[tuple[dict[str, Any], str]] = [
        ({"action": "find"}, "not one of: search, range"),
        ({"action": "search"}, "needs query"),
        (
            {"action": "range", "start_turn": 10, "end_turn": 99},
            "out of range: session .* has turns 1-16",
        ),
        ({"action": "range", "start_turn": 0}, "out of range"),
        ({"action": "range", "start_turn": 9, "end_turn": 3}, "before start_turn"),
        ({"action": "around", "turn": "3"}, "whole number"),
        ({"action": "tool_calls"}, "needs tool_name"),
        ({"action": "search", "query": "x", "budget": 10}, "at least 1000"),
    ]
    for kwargs, error in cases:
        with pytest.raises(clew.ValidationError, match=error):
            mem.recall(session.id, **kwargs)
    with pytest.raises(clew.NotFoundError, match="no session matches"):
        mem.recall("nosuchsession", "summary")
    assert (
        "No call of tool 'deploy'" in mem.recall(session.id, "tool_calls", tool_name="deploy").text
    )


# -- the CLI --------------------------------------------------------------------------------


def test_cli_import_export_round_trip(cli: Callable[..., Result], tmp_path: Path) -> None:
    source = tmp_path / "chat.json"
    source.write_text(json.dumps({"messages": CONVERSATION}))
    imported = cli("session", "import", str(source), "--title", "auth work")
    assert imported.code == 0
    session_id = imported.out.strip()
    exported = cli("session", "export", session_id)
    assert turns.read_messages(exported.out, "out") == CONVERSATION
    assert '"name": "alice"' in exported.out  # a message's name is kept
    target = tmp_path / "again.jsonl"
    assert cli("session", "export", session_id, "--output", str(target)).code == 0
    again = cli("session", "import", str(target))
    assert cli("session", "export", again.out.strip()).out == exported.out
    clash = cli("session", "export", session_id, "--output", str(target))
    assert clash.code != 0 and "exists" in clash.err


def test_cli_malformed_imports_name_the_line(cli: Callable[..., Result], tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"role": "user", "content": "ok"}\n\n{"role": "user", "content": "x"\n')
    out = cli("session", "import", str(bad))
    assert out.code != 0 and "line 3 is not valid JSON" in out.err and "Traceback" not in out.err
    bad.write_text('{"role": "user", "content": "ok"}\n{"role": "bot", "content": "x"}\n')
    assert "line 2 has role 'bot'" in cli("session", "import", str(bad)).err
    bad.write_text("")
    assert "is empty" in cli("session", "import", str(bad)).err
    assert "no sessions" in cli("session", "list", "--all").out  # nothing was stored
    bad.write_text('{\n  "role": "user",\n  "content": "one message, pretty-printed"\n}\n')
    one = cli("session", "import", str(bad))
    assert one.code == 0 and "1 turns" in cli("session", "list", "--all").out


@pytest.mark.search
def test_cli_recall_list_show_resume(cli: Callable[..., Result], tmp_path: Path) -> None:
    source = tmp_path / "chat.jsonl"
    source.write_text(turns.write_messages(CONVERSATION))
    session_id = cli("session", "import", str(source), "--workspace", str(tmp_path)).out.strip()
    assert "(match)" in cli("recall", session_id, "--search", "PyJWT").out
    assert "[Turn 3] assistant:" in cli("recall", session_id, "--range", "3", "4").out
    assert "tool:bash" in cli("recall", session_id, "--tool-calls", "bash").out
    assert "key_decisions" in cli("recall", session_id, "--summary").out
    payload = json.loads(cli("recall", session_id, "--around", "5", "--json").out)
    assert payload["matches"] == [5] and payload["turns"][0]["message"]
    both = cli("recall", session_id, "--summary", "--search", "x")
    assert both.code != 0 and "exactly one of" in both.err
    assert session_id in cli("session", "list", "--workspace", str(tmp_path)).out
    assert "current_focus" in cli("session", "show", session_id[:4]).out
    resumed = cli("session", "resume", session_id, "--json")
    messages = json.loads(resumed.out)["context"]["messages"]
    assert messages[0] == {"role": "system", "content": messages[0]["content"]}
    assert messages[1:] == CONVERSATION[1:]  # the leading system turn became the system prompt
    assert "turns" in cli("session", "context", session_id, "--budget", "2000").out
    out_of_range = cli("recall", session_id, "--range", "5", "99")
    assert out_of_range.code != 0 and "has turns 1-16" in out_of_range.err


def test_a_conversation_recorded_later_keeps_when_it_was_said(mem: clew.Memory) -> None:
    started = mem.start_session(title="trip", at="2026-05-03T10:00")
    said = mem.append_turns(
        started.id,
        [
            {"role": "user", "content": "I booked a pottery class"},
            {"role": "assistant", "content": "Enjoy it"},
        ],
        at=["2026-05-03T10:00", "2026-05-03T10:01"],
    )
    later = mem.append_turn(started.id, role="user", content="back again", at="2026-05-20")
    assert [t.created_at[:16] for t in (*said, later)] == [
        "2026-05-03T10:00",
        "2026-05-03T10:01",
        "2026-05-20T00:00",
    ]
    session = mem.get_session(started.id)
    assert session.started_at.startswith("2026-05-03T10:00")
    assert session.last_active_at.startswith("2026-05-20")
    imported = mem.import_session([{"role": "user", "content": "a"}], at="2025-01-02")
    assert imported.started_at.startswith("2025-01-02")
    assert mem.verify().ok  # the times are in the journal: a replay makes the same rows
    with pytest.raises(clew.ValidationError, match="2 time"):
        mem.append_turns(started.id, [{"role": "user", "content": "x"}], at=["2026-01-01"] * 2)
    with pytest.raises(clew.ValidationError, match="not a date"):
        mem.append_turn(started.id, role="user", content="x", at="someday")
    assert mem.get_session(started.id).turn_count == 3  # nothing half-written


def test_the_session_row_kept_between_appends_is_the_stored_one(
    mem: clew.Memory, db: Path, clock: FakeClock
) -> None:
    """SQLite keeps the row of the session it last appended to instead of reading it again:
    another connection's turn, a rolled-back append, a change of the session and a turn
    given by the session's key must each leave the next append as a fresh read would."""
    s = mem.start_session(key="chat")

    def stored(ident: str) -> clew.Session:
        with mem._write():
            kept = mem._store.session_to_append(ident)
        assert kept is not None
        return kept

    def check() -> None:
        fresh = mem.get_session(s.id)
        assert stored(s.id) == fresh
        assert stored("chat") == fresh

    for message in CONVERSATION[:4]:
        mem.append_turn(s.id, message)
        check()
    with clew.open(db, clock=clock) as other:  # another connection appends in between
        other.append_turn(s.id, CONVERSATION[4])
    assert mem.append_turn(s.id, CONVERSATION[5]).number == 6
    check()
    with pytest.raises(RuntimeError), mem._write():  # an append rolled back
        mem.append_turn(s.id, CONVERSATION[6])
        raise RuntimeError("rolled back")
    assert mem.append_turn("chat", CONVERSATION[6]).number == 7
    check()
    mem.update_session(s.id, title="changed")
    mem.end_session(s.id)
    with pytest.raises(clew.ValidationError, match="has ended"):
        mem.append_turn(s.id, CONVERSATION[7])
    mem.open_session("chat")
    mem.append_turn(s.id, CONVERSATION[7])
    check()
    assert mem.get_session(s.id).title == "changed"
    assert mem.verify().differences == ()


_STEPS = st.lists(
    st.sampled_from(["id", "key", "batch", "other", "rollback", "update", "pop"]), max_size=12
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=_STEPS)
def test_any_mix_of_writes_leaves_the_kept_session_row_as_stored(
    tmp_path_factory: pytest.TempPathFactory, steps: list[str]
) -> None:
    """Appends by id, by key and in batches, another connection's append, a rolled-back
    append, a change of the session and a pop, in any order: after each, the row an append
    starts from (kept or read) is the stored one, and the store verifies."""
    path = tmp_path_factory.mktemp("kept") / "clew.db"
    with clew.open(path) as mem:
        s = mem.start_session(key="chat")
        messages = iter(CONVERSATION * 10)
        for step in steps:
            if step == "other":
                with clew.open(path) as other:
                    other.append_turn(s.id, next(messages))
            elif step == "rollback":
                with pytest.raises(RuntimeError), mem._write():
                    mem.append_turn(s.id, next(messages))
                    raise RuntimeError("rolled back")
            elif step == "update":
                mem.update_session(s.id, title=f"t{len(steps)}")
            elif step == "pop":
                mem.pop_turn(s.id)
            elif step == "batch":
                mem.append_turns(s.id, [next(messages), next(messages)])
            else:
                mem.append_turn(s.id if step == "id" else "chat", next(messages))
            with mem._write():
                kept = mem._store.session_to_append(s.id)
            assert kept == mem.get_session(s.id)
        assert mem.verify().differences == ()
