"""Events carry what was derived from them: a turn's parts and what it changed in the
session state are computed once when it is appended and journaled, so replay copies
values. Turns journaled before that (the fixture, as clew wrote them until then) replay
through upgrades that use the heuristics of their time, frozen in
store/projection/frozen_turns.py."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import clew
from clew.conversations import session_state
from clew.core import turns
from clew.store.projection import frozen_turns
from tests.conftest import FakeClock

FIXTURE = Path(__file__).parent / "fixtures" / "turns_v1.json"
_TURN_COLUMNS = (
    "turn, role, content, text_content, tool_calls, tool_call_id, tool_name, call_turn,"
    " message, token_count"
)


def _replay_fixture(mem: clew.Memory) -> dict[str, Any]:
    """Append the fixture's events exactly as they were journaled, one call each."""
    fixture: dict[str, Any] = json.loads(FIXTURE.read_text())
    store = mem._store  # type: ignore[attr-defined]
    for event in fixture["events"]:
        with store.transaction(write=True):
            store.append(**event)
    return fixture


def _rows(db: Path) -> tuple[list[list[Any]], dict[str, Any]]:
    conn = sqlite3.connect(db)
    rows = [list(r) for r in conn.execute(f"SELECT {_TURN_COLUMNS} FROM turns ORDER BY turn")]
    (state,) = conn.execute("SELECT state FROM sessions").fetchone()
    conn.close()
    return rows, json.loads(state)


def test_turns_of_the_older_shape_project_and_verify_exactly(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    with clew.open(db) as mem:
        fixture = _replay_fixture(mem)
        assert mem.verify().ok
        state = mem.session_state("v1").state
    rows, stored = _rows(db)
    assert rows == fixture["turns"]
    assert stored == fixture["state"]
    assert state["decisions"][-1]["text"] == "Going with JWT next sprint."


def test_tuning_today_s_heuristics_never_changes_an_old_turn_s_replay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(session_state, "_WORDS", {"user": (), "assistant": ()})
    monkeypatch.setattr(session_state, "_EDIT", re.compile(r"\A\Z"))
    db = tmp_path / "old.db"
    with clew.open(db) as mem:
        fixture = _replay_fixture(mem)
        assert mem.verify().ok
    assert _rows(db) == (fixture["turns"], fixture["state"])


def _conversation(mem: clew.Memory) -> str:
    sid = mem.start_session(workspace="/w").id
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "edit_file", "arguments": '{"path": "a.py"}'},
    }
    mem.append_turn(sid, role="user", content="Never touch prod. Let's use tox.")
    mem.append_turn(sid, {"role": "assistant", "content": None, "tool_calls": [call]})
    mem.append_turn(sid, role="tool", tool_call_id="c1", content="error: disk full")
    return sid


def test_new_turns_replay_the_same_after_a_heuristic_is_tuned(
    mem: clew.Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    sid = _conversation(mem)
    before = mem.session_state(sid).state
    assert before["decisions"] and before["files"] and before["open_errors"]
    # Tuned after the fact: the rules would find nothing in those turns any more...
    monkeypatch.setattr(session_state, "_WORDS", {"user": (), "assistant": ()})
    monkeypatch.setattr(session_state, "_EDIT", re.compile(r"\A\Z"))
    monkeypatch.setattr(session_state, "_WRITE", re.compile(r"\A\Z"))
    monkeypatch.setattr(session_state, "_FAILED_TEXT", ())
    monkeypatch.setattr(session_state, "_FAILED_WORD", ())
    monkeypatch.setattr(turns, "_ITEM_ROLES", {})
    # ... and do apply to a turn appended now (so the patch is live) ...
    mem.append_turn(sid, role="user", content="Never use eval.")
    after = mem.session_state(sid).state
    assert after["decisions"] == before["decisions"]
    # ... but the replay copies what the events say: verify stays exact.
    assert mem.verify().ok


def test_a_turn_event_carries_its_parts_without_its_text_twice(mem: clew.Memory) -> None:
    _conversation(mem)
    events = [e for e in mem.journal() if e.type == "turn.appended"]
    first = events[0].data["turn"]
    assert first["role"] == "user" and first["text_from"] == "content" and "text" not in first
    assert first["state"]["focus"] == {"text": "Never touch prod. Let's use tox.", "turn": 1}
    call = events[1].data["turn"]
    assert call["tool_calls"] == [["c1", "edit_file", '{"path": "a.py"}']]
    assert call["text"] is None and set(call["state"]) == {"files", "calls"}
    result = events[2].data["turn"]
    assert (result["tool_call_id"], result["tool_name"], result["call_turn"]) == (
        "c1",
        "edit_file",
        2,
    )
    assert set(result["state"]) == {"calls", "open_errors"}


def test_an_output_item_s_text_is_named_not_copied(mem: clew.Memory) -> None:
    sid = mem.start_session().id
    mem.append_turn(sid, {"type": "function_call", "call_id": "x", "name": "ls", "arguments": "{}"})
    mem.append_turn(sid, {"type": "function_call_output", "call_id": "x", "output": "a.py b.py"})
    listed = [e.data["turn"] for e in mem.journal() if e.type == "turn.appended"]
    assert listed[0]["text"] == "ls({})"
    assert listed[1]["text_from"] == "output" and "text" not in listed[1]
    assert [t.text for t in mem.list_turns(sid)] == ["ls({})", "a.py b.py"]
    assert mem.verify().ok


# -- the frozen copy is today's heuristic ---------------------------------------------------

_WORDS = st.sampled_from(
    [
        "never",
        "always",
        "let's use",
        "decided",
        "Error:",
        "FAILED",
        "exit code 2",
        "ok",
        "a.py",
        "git commit -m 'x'",
        "Traceback (most recent call last)",
        "\n",
        ".",
        "we chose",
        "fine",
    ]
)
_TEXT = st.lists(_WORDS, max_size=8).map(" ".join)
_NAMES = st.sampled_from(["bash", "edit_file", "write_file", "grep", "run"])


@st.composite
def _messages(draw: st.DrawFn) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for n in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["user", "assistant", "call", "result", "item"]))
        if kind in ("user", "assistant"):
            out.append({"role": kind, "content": draw(_TEXT)})
        elif kind == "call":
            args = {"command": draw(_TEXT), "path": draw(st.sampled_from(["", "a.py"]))}
            function = {"name": draw(_NAMES), "arguments": json.dumps(args)}
            call = {"id": f"c{n}", "type": "function", "function": function}
            out.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif kind == "result":
            out.append({"role": "tool", "tool_call_id": f"c{n - 1}", "content": draw(_TEXT)})
        else:
            out.append(
                {"type": "function_call_output", "call_id": f"c{n - 1}", "output": draw(_TEXT)}
            )
    return out


@settings(max_examples=60, deadline=None)
@given(_messages())
def test_the_frozen_fold_is_today_s_fold(messages: list[dict[str, Any]]) -> None:
    live: dict[str, Any] = {}
    frozen: dict[str, Any] = {}
    for number, message in enumerate(messages, 1):
        parts = turns.parse(message)
        old = frozen_turns.parse(message)
        assert (old.role, old.text, old.tool_call_id, old.tool_name) == (
            parts.role,
            parts.text,
            parts.tool_call_id,
            parts.tool_name,
        )
        assert old.tool_calls == tuple(tuple(c) for c in parts.tool_calls)
        live = session_state.advance(live, number, parts)
        frozen = frozen_turns.advance(frozen, number, old)
        # Since issue 25 a message's key decisions are what the claims rules find in it
        # (the frozen fold kept phrase lists); a commit's message is one in both, unless the
        # frozen fold's many phrases pushed it out of the ten it keeps.
        assert {**live, "decisions": []} == {**frozen, "decisions": []}
        if len(frozen.get("decisions", [])) < session_state.DECISIONS:
            assert _commits(live) == _commits(frozen)


def _commits(state: dict[str, Any]) -> list[Any]:
    return [d for d in state.get("decisions", []) if d["text"].startswith("Committed: ")]


@settings(max_examples=25, deadline=None)
@given(_messages())
def test_overlaying_each_turn_s_change_rebuilds_the_fold(messages: list[dict[str, Any]]) -> None:
    state: dict[str, Any] = {}
    overlaid: dict[str, Any] = {}
    for number, message in enumerate(messages, 1):
        new = session_state.advance(state, number, turns.parse(message))
        overlaid = {**overlaid, **session_state.change(state, new)}
        state = new
    assert json.dumps(overlaid) == json.dumps(state)  # key order too: the stored text


def test_a_step_s_timing_is_in_its_event_and_older_events_derive_it(
    mem: clew.Memory, clock: FakeClock
) -> None:
    task = mem.create_task("t", ["a", "b"])
    mem.update_task(task.id, step=1, step_status="active")
    clock.advance(seconds=30)
    mem.update_task(task.id, step=1, step_status="completed")
    timing = [e.data.get("timing") for e in mem.journal() if e.type == "step.updated"]
    assert timing[0]["started_at"] and timing[1]["duration_seconds"] == 30
    # As clew wrote a status change before events carried the timing: none in the data.
    step = task.plan[1].id
    store = mem._store  # type: ignore[attr-defined]
    for status, at in (
        ("active", "2030-01-01T00:00:00.000000Z"),
        ("failed", "2030-01-01T00:01:05.500000Z"),
    ):
        data = {"task_id": task.id, "step_id": step, "changes": {"status": status}}
        with store.transaction(write=True):
            store.append(
                type="step.updated", task_id=task.id, correlation_id="old", data=data, created_at=at
            )
    done = mem.get_task(task.id).plan[1]
    assert (done.started_at, done.duration_seconds) == ("2030-01-01T00:00:00.000000Z", 65.5)
    assert mem.verify().ok


def test_projections_import_no_heuristic() -> None:
    """Handlers copy what events say: nothing in store/projection/ may import the pure
    modules that parse, fold, fingerprint or count (only the frozen copies, for old events)."""
    import ast

    package = Path(clew.__file__).parent / "store" / "projection"
    allowed = {"clew.models", "clew.core.clock"}
    allowed.add("clew.store.sql")  # the connection they write through, and its placeholders
    for path in sorted(package.glob("*.py")):
        if path.name.startswith("frozen_"):
            continue  # the frozen copies of the heuristics themselves
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("clew"):
                names = {a.name for a in node.names}
                if node.module == "clew.core":
                    assert names <= {"codec"}, path.name  # the journal's JSON, below the store
                elif node.module.startswith("clew.store.projection"):
                    pass  # the package's own: the handlers, each subject's, the frozen copies
                else:
                    assert node.module in allowed, f"{path.name} imports {node.module}"
            elif isinstance(node, ast.Import):
                assert not any(a.name.startswith("clew") for a in node.names), path.name


def test_a_store_before_migration_15_keeps_each_text_once_and_reads_the_same(
    tmp_path: Path,
) -> None:
    from tests.old_stores import undo_migration_15

    db = tmp_path / "old.db"
    with clew.open(db) as mem:
        _replay_fixture(mem)  # turns of the older shape: their text is derived when read
        sid = _conversation(mem)
        mem.append_turn(sid, {"role": "user", "content": "$ ls", "$ref": 1})  # escaped key
        mem.append_turn(sid, {"type": "function_call_output", "call_id": "x", "output": "ok"})
        sessions = [s.id for s in mem.list_sessions()]
        before = {s: mem.list_turns(s, include_hidden=True) for s in sessions}
        found = mem.recall(sid, "search", query="tox").text
    conn = sqlite3.connect(db)
    undo_migration_15(conn)
    assert conn.execute("SELECT type FROM sqlite_master WHERE name = 'turns'").fetchone() == (
        "table",
    )
    conn.close()
    with clew.open(db) as mem:
        assert mem.verify().differences == ()
        assert {s: mem.list_turns(s, include_hidden=True) for s in sessions} == before
        assert mem.recall(sid, "search", query="tox").text == found
    stored = sqlite3.connect(db).execute(
        "SELECT r.turn, r.content IS NULL, r.text_in FROM turn_rows r WHERE r.session_id = ?"
        " ORDER BY r.turn",
        (sid,),
    )
    # The text of each new-shape turn is read from its event; the call has none.
    assert stored.fetchall() == [
        (1, True, 1),
        (2, True, None),
        (3, True, 1),
        (4, True, 1),
        (5, True, 2),
    ]
    old_shape = sqlite3.connect(db).execute(
        "SELECT count(*) FROM turn_rows WHERE session_id != ? AND content IS NULL AND text_in"
        " IS NULL AND role != 'assistant'",
        (sid,),
    )
    assert old_shape.fetchone() == (0,)  # their text stays in the row
