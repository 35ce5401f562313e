"""Forgetting (docs/architecture.md, "Forgetting"), on SQLite and PostgreSQL: each kind of
record and a pattern across kinds, after which the content is in no table, no search index,
no vector, no mirror file, no export and (SQLite) not in the file's bytes, while `verify`
passes and lists the forgotten events; tampered tombstones and forgets fail verify; journal
files of format 2 carry forgotten events to another store, which verifies them, and format
1 files still import; an upgrade re-chains every event."""

from __future__ import annotations

import io
import json
import re
import sqlite3
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import clew
from clew.core import chain
from clew.core.origin import NOTHING, Origin
from clew.errors import ValidationError
from clew.journal import forgettable
from clew.models import PLACEHOLDER, Field
from clew.store import forgetting as stored
from tests.conftest import Result

S_MESSAGE = "plumtoken4411"
S_ENTRY = "figtoken5522"
S_OUTPUT = "kiwitoken6633"
S_TURN = "limetoken7744"
S_SHARED = "quokka-shared-7f3e9a21"  # no known secret shape: redaction leaves it
PATTERN = r"quokka-shared-[0-9a-f]{8}"


class World:
    """A task with a message, a decision (resolved later), a command with output and a log
    line, a trace decision, and a session whose turns hold a tool call; each record has a
    secret of its own, and S_SHARED is in all of them (and in the task's name)."""

    def __init__(self, mem: clew.Memory) -> None:
        task = mem.create_task(f"deploy with {S_SHARED}", ["build", "ship"])
        self.task = task.id
        mem.update_task(self.task, message=f"the token is {S_MESSAGE} and {S_SHARED}")
        self.message = mem.list_messages(self.task)[0].id
        self.entry = mem.add_entry(
            "error", f"login failed {S_ENTRY}", task_id=self.task, detail=f"used {S_SHARED}"
        ).id
        mem.resolve(self.entry, f"rotated {S_ENTRY}", task_id=self.task)
        self.action = mem.record_action(
            self.task,
            command=f"deploy --tag {S_SHARED}",
            cwd="/srv/app",
            exit_code=3,
            stdout=f"Login {S_OUTPUT} with {S_SHARED}",
            stderr=b"\xff\xfe " + S_OUTPUT.encode(),
        ).id
        mem.log_action(self.action, f"progress {S_OUTPUT}")
        self.decision = mem.trace_decision(self.task, f"retry login with {S_SHARED}").id
        session = mem.start_session(workspace="/w")
        self.session = session.id
        call = {
            "id": "call_1",
            "type": "function",
            "function": {
                "name": "write_file",
                "arguments": json.dumps(
                    {"path": "/srv/app/.env", "text": f"TOKEN={S_TURN} {S_SHARED}"}
                ),
            },
        }
        self.turn = mem.append_turn(
            session.id, {"role": "user", "content": f"let's use {S_TURN} and {S_SHARED}"}
        ).id
        self.call_turn = mem.append_turn(
            session.id, {"role": "assistant", "content": None, "tool_calls": [call]}
        ).id
        mem.append_turn(session.id, {"role": "tool", "tool_call_id": "call_1", "content": "ok"})


def everything(mem: clew.Memory, skip: tuple[str, ...] = ()) -> str:
    """Every value of every table row of the space (the journal included), as text; of
    every table but those in `skip`."""
    out = io.StringIO()
    if "://" in mem.path:
        import psycopg

        with psycopg.connect(mem.path, autocommit=True) as conn:
            tables = [
                r[0]
                for r in conn.execute(
                    "SELECT table_name FROM information_schema.columns WHERE column_name = 'space'"
                    " AND table_schema = 'public'"
                )
            ]
            for table in (t for t in tables if t not in skip):
                for row in conn.execute(f"SELECT * FROM {table} WHERE space = %s", (mem.space,)):
                    out.write(repr(row))
        return out.getvalue()
    conn = sqlite3.connect(mem.path)
    # A search document may hold output that is not UTF-8.
    conn.text_factory = lambda raw: raw.decode("utf-8", "replace")
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in (t for t in tables if t not in skip):
            for row in conn.execute(f"SELECT * FROM {table}"):
                out.write(
                    repr([bytes(v).decode("latin-1") if isinstance(v, bytes) else v for v in row])
                )
    finally:
        conn.close()
    return out.getvalue()


def vectors(mem: clew.Memory) -> dict[tuple[str, str], int]:
    """Each vector the space holds: (kind, record id) -> its seq (a new vector, a new seq)."""
    rows = mem._store._rows(  # type: ignore[attr-defined]
        "SELECT kind, ref_id, seq FROM embeddings WHERE space = $1", (mem.space,)
    )
    return {(r[0], r[1]): r[2] for r in rows}


def found(mem: clew.Memory, word: str) -> list[str]:
    """The search hits whose title or snippet holds `word`."""
    return [h.id for h in mem.search_all(word) if word in h.title or word in h.snippet]


def exported(mem: clew.Memory) -> str:
    out = io.StringIO()
    mem.export_events(out)
    return out.getvalue()


def test_forgetting_each_kind_leaves_its_content_nowhere_and_verify_reports_it(
    mem: clew.Memory, tmp_path: Path
) -> None:
    w = World(mem)
    mem.update_index()
    vectors_before = vectors(mem)
    for secret in (S_MESSAGE, S_ENTRY, S_OUTPUT, S_TURN):
        assert secret in everything(mem)
    assert found(mem, S_MESSAGE) and found(mem, S_ENTRY) and found(mem, S_TURN)
    for kind, ident in (
        ("message", w.message),
        ("entry", w.entry),
        ("action", w.action),
        ("turn", w.turn),
        ("turn", w.call_turn),
    ):
        report = mem.forget(kind, ident[:6])  # a prefix, as everywhere
        assert report.items and report.forgets and report.by == "local user"
        assert any(i.record == f"{kind} {ident}" for i in report.items)
    stored_text = everything(mem)
    for secret in (S_MESSAGE, S_ENTRY, S_OUTPUT, S_TURN):
        assert secret not in stored_text, secret
        assert not found(mem, secret)
    # What a forget never touches: ids, the exit code, the command, paths.
    action = mem.get_action(w.action)
    assert (action.exit_code, action.cwd) == (3, "/srv/app")
    assert action.command == f"deploy --tag {S_SHARED}"
    assert (action.stdout, action.stderr) == (PLACEHOLDER, PLACEHOLDER)
    turns = mem.list_turns(w.session)
    assert turns[0].text == PLACEHOLDER and turns[1].tool_calls[0][:2] == ("call_1", "write_file")
    assert turns[2].tool_call_id == "call_1"
    assert mem.get_entry(w.entry).summary == PLACEHOLDER
    report = mem.verify()
    assert report.ok, report.differences
    assert report.forgotten_count == len(report.forgotten) >= 6
    assert {f.by for f in report.forgotten} == {"local user"}
    # No vector of a forgotten record's content remains: each was dropped, and any there now
    # was made since (a read may embed the record's placeholder text).
    newest = max(vectors_before.values())
    forgotten = {
        ("message", w.message),
        ("entry", w.entry),
        ("action", w.action),
        ("turn", w.turn),
        ("turn", w.call_turn),
    }
    assert forgotten <= set(vectors_before)
    assert all(seq > newest for ref, seq in vectors(mem).items() if ref in forgotten)
    assert vectors(mem)[("decision", w.decision)] == vectors_before[("decision", w.decision)]
    # The export carries the tombstones, not the content; another store verifies it.
    text = exported(mem)
    assert all(s not in text for s in (S_MESSAGE, S_ENTRY, S_OUTPUT, S_TURN))
    with clew.open(tmp_path / "other.db") as other:
        other.import_events(text)
        again = other.verify()
        assert again.ok, again.differences
        assert again.forgotten_count == report.forgotten_count


def test_a_pattern_forget_reaches_every_kind_and_never_an_id_an_exit_code_or_a_path(
    mem: clew.Memory,
) -> None:
    w = World(mem)
    before = everything(mem)
    # The task's name is kept, and its search document with it (on PostgreSQL its vector
    # holds the name's words as written too): counted without it.
    named = everything(mem, skip=("outline_docs",)).count(f"deploy with {S_SHARED}")
    dry = mem.forget(pattern=PATTERN, dry_run=True)
    assert dry.dry_run and not dry.forgets and everything(mem) == before  # nothing written
    kinds = {i.type for i in dry.items}
    assert {
        "message.added",
        "entry.added",
        "action.recorded",
        "trace.decision_recorded",
        "turn.appended",
    } <= kinds
    # The task's name is no content a forget rewrites: said, not hidden.
    assert any(i.type == "task.created" for i in dry.remaining)
    report = mem.forget(pattern=PATTERN)
    assert [i.id for i in report.items] == [i.id for i in dry.items]
    data = json.dumps([e.data for e in mem.journal() if e.type == "journal.forgotten"])
    assert PATTERN not in data and S_SHARED not in data  # its seal, never its text
    action = mem.get_action(w.action)
    assert action.command == f"deploy --tag {PLACEHOLDER}"
    assert (action.exit_code, action.cwd) == (3, "/srv/app")
    arguments = json.loads(mem.list_turns(w.session)[1].tool_calls[0][2])
    assert arguments == {"path": "/srv/app/.env", "text": f"TOKEN={S_TURN} {PLACEHOLDER}"}
    assert mem.list_turns(w.session)[0].text == f"let's use {S_TURN} and {PLACEHOLDER}"
    assert everything(mem, skip=("outline_docs",)).count(S_SHARED) == named
    assert mem.verify().ok
    assert mem.forget(pattern=PATTERN).items == ()  # nothing left to forget


def test_a_read_of_the_journal_shows_the_tombstone(mem: clew.Memory, cli: Any) -> None:
    w = World(mem)
    mem.forget("message", w.message)
    event = next(e for e in mem.journal() if e.type == "message.added")
    assert event.forgotten is not None and event.forgotten.by == "local user"
    assert event.data["message"]["content"] == PLACEHOLDER
    lines = cli("journal").out
    assert "[forgotten by local user at" in lines and "local user forgot message" in lines
    shown = cli("verify").out
    assert "forgotten: 1 event holds" in shown and f"{event.id}" in shown


def test_forgetting_changes_no_hash_and_a_head_kept_before_still_matches(
    mem: clew.Memory,
) -> None:
    w = World(mem)
    heads = {e.id: e.hash for e in mem.journal()}
    mem.forget(pattern=PATTERN)
    mem.forget("turn", w.turn)  # forgotten twice: each forget from what the one before left
    assert {e.id: e.hash for e in mem.journal() if e.id in heads} == heads
    report = mem.verify()
    assert report.ok, report.differences
    twice = next(f for f in report.forgotten if f.type == "turn.appended")
    assert twice.event == mem.journal(types=("journal.forgotten",))[-1].id


# -- what is refused ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "says"),
    [
        ((), "say what to forget"),
        (("task", "abc"), "no record of kind 'task'"),
        (("message", None), "say what to forget"),
        (("message", "zzzzzz"), "no message matches"),
    ],
)
def test_a_forget_of_nothing_it_can_name_is_refused(
    mem: clew.Memory, args: tuple[Any, ...], says: str
) -> None:
    with pytest.raises(clew.ClewError, match=says):
        mem.forget(*args)


@pytest.mark.parametrize(
    ("pattern", "says"),
    [
        ("(", "not a regular expression"),
        ("a*", "matches the empty string"),
        ("forgot", "matches clew's placeholder"),
        ("x" * 1001, "longer than|limit is 1000"),
        ("\udcff", "not valid UTF-8"),
    ],
)
def test_a_pattern_that_would_forget_wrongly_is_refused(
    mem: clew.Memory, pattern: str, says: str
) -> None:
    World(mem)
    with pytest.raises(ValidationError, match=says):
        mem.forget(pattern=pattern)
    with pytest.raises(ValidationError, match="not both"):
        mem.forget("message", "x", pattern=S_SHARED)


def test_the_cli_forgets_lists_and_refuses_in_one_line(mem: clew.Memory, cli: Any) -> None:
    w = World(mem)
    dry = cli("forget", "--pattern", PATTERN, "--dry-run")
    assert dry.code == 0 and "would forget" in dry.out and S_SHARED not in dry.out
    out: Result = cli("--json", "forget", "message", w.message)
    assert out.code == 0 and json.loads(out.out)["items"][0]["record"] == f"message {w.message}"
    bad = cli("forget", "--pattern", "(")
    assert bad.code == 2 and bad.err.count("\n") == 1 and "regular expression" in bad.err
    assert cli("forget").code == 2


# -- tampering (SQLite: the file's owner drops the guard) ---------------------------------------


def _tamper(path: str, sql: str, *params: Any) -> None:
    conn = sqlite3.connect(path)
    conn.execute("DROP TRIGGER events_no_update")
    conn.execute(sql, params)
    conn.commit()
    conn.close()


@pytest.mark.sqlite_only("drops the journal's guard in the SQLite file to tamper with it")
@pytest.mark.parametrize(
    ("change", "says"),
    [
        (
            "UPDATE events SET forgotten = json_set(forgotten, '$.digest', ?) WHERE seq = ?",
            "chain of space 'default' breaks",
        ),
        (
            "UPDATE events SET forgotten = json_set(forgotten, '$.by', ?) WHERE seq = ?",
            "not the forget that last forgot it",
        ),
        (
            "UPDATE events SET forgotten = json_set(forgotten, '$.at', ?) WHERE seq = ?",
            "not the forget that last forgot it",
        ),
        (
            "UPDATE events SET data = replace(data, '[forgotten]', ?) WHERE seq = ?",
            "holds data that is not what forget",
        ),
        ("UPDATE events SET forgotten = ? WHERE seq = ?", "its tombstone is not valid JSON"),
    ],
)
def test_a_tampered_tombstone_fails_verify(mem: clew.Memory, change: str, says: str) -> None:
    w = World(mem)
    mem.forget("message", w.message)
    seq = next(e.seq for e in mem.journal() if e.type == "message.added")
    said = {"digest": "0" * 64, "by": "key clew_admin (dashboard)", "at": "1999-01-01T00:00:00Z"}
    value = next((v for k, v in said.items() if f"'$.{k}'" in change), "x")
    _tamper(mem.path, change, value, seq)
    report = mem.verify()
    assert not report.ok
    assert any(says in d.problem for d in report.differences), report.differences


@pytest.mark.sqlite_only("drops the journal's guard in the SQLite file to tamper with it")
def test_content_put_back_without_its_tombstone_fails_verify(mem: clew.Memory) -> None:
    w = World(mem)
    original = next(e for e in mem.journal() if e.type == "message.added")
    text = (
        sqlite3.connect(mem.path)
        .execute("SELECT data FROM events WHERE seq = ?", (original.seq,))
        .fetchone()[0]
    )
    mem.forget("message", w.message)
    _tamper(
        mem.path, "UPDATE events SET data = ?, forgotten = NULL WHERE seq = ?", text, original.seq
    )
    report = mem.verify()
    assert any("holds no tombstone" in d.problem for d in report.differences)


def test_the_journal_refuses_every_change_but_forgetting(mem: clew.Memory) -> None:
    World(mem)
    store = mem._store  # type: ignore[attr-defined]
    link = store.stored_links(limit=1)[0]
    tomb = chain.tombstone_text(clew.models.Tombstone("1" * 64, "x", "y", "z"))
    changes = [
        ("UPDATE events SET type = 'task.archived' WHERE space = $1 AND id = $2", ()),
        ("UPDATE events SET data = '{}' WHERE space = $1 AND id = $2", ()),  # no tombstone
        ("DELETE FROM events WHERE space = $1 AND id = $2", ()),
    ]
    for sql, _ in changes:
        with pytest.raises(clew.ClewError, match="append-only"), store.transaction(write=True):
            store._guard(lambda sql=sql: store._writer()[0].execute(sql, (mem.space, link.id)))
    with store.transaction(write=True):  # the one change allowed: data with a tombstone
        store._writer()[0].execute(
            "UPDATE events SET data = '{}', forgotten = $1 WHERE space = $2 AND id = $3",
            (tomb, mem.space, link.id),
        )
    other = tomb.replace("1" * 64, "2" * 64)
    with pytest.raises(clew.ClewError, match="append-only"), store.transaction(write=True):
        sql = "UPDATE events SET forgotten = $1 WHERE space = $2 AND id = $3"
        # A tombstone's digest never changes.
        store._guard(lambda: store._writer()[0].execute(sql, (other, mem.space, link.id)))


# -- the SQLite file's bytes ----------------------------------------------------------------------


@pytest.mark.sqlite_only("reads the SQLite file's and its write-ahead log's bytes")
def test_forgotten_content_is_not_in_the_files_bytes(db: Path) -> None:
    big = " ".join(f"word{i}" for i in range(3000))  # overflow pages, and many index terms
    with clew.open(db) as mem:
        task = mem.create_task("t").id
        mem.update_task(task, message=f"{big} {S_MESSAGE} {big}")
        # Pages freed by ordinary writes (secure_delete off) that held the secret before:
        conn = mem._store._conn  # type: ignore[attr-defined]
        conn.execute("CREATE TABLE scratch (b BLOB)")
        conn.execute("INSERT INTO scratch VALUES (?)", ((S_MESSAGE * 2000).encode(),))
        conn.execute("DROP TABLE scratch")
        session = mem.start_session()
        for n in range(40):  # full-text segments merged along the way
            mem.append_turn(session.id, role="user", content=f"turn {n} {S_TURN if n == 3 else ''}")
        mem.forget("message", mem.list_messages(task)[0].id)
        report = mem.forget(pattern=S_TURN)
        assert report.items and report.note is None  # the write-ahead log emptied
        for name in (str(db), f"{db}-wal"):
            raw = Path(name).read_bytes() if Path(name).exists() else b""
            for secret in (S_MESSAGE, S_TURN):
                assert secret.encode() not in raw, (name, secret)
        assert mem.verify().ok


# -- mirrors and the vector index -----------------------------------------------------------------


@pytest.mark.sqlite_only("the file mirrors are beside a SQLite store")
def test_the_mirror_files_are_written_again_without_the_content(tmp_path: Path) -> None:
    with clew.open(tmp_path / "clew.db", mirror=True) as mem:
        w = World(mem)
        folder = tmp_path / "tasks" / w.task
        assert S_MESSAGE in (folder / "journal.jsonl").read_text()
        mem.forget("message", w.message)
        mem.forget(pattern=PATTERN)
        for name in ("journal.jsonl", "state.yaml"):
            text = (folder / name).read_text()
            assert S_MESSAGE not in text and S_SHARED not in text.replace(
                "deploy with " + S_SHARED, ""
            )
        assert PLACEHOLDER in (folder / "journal.jsonl").read_text()


# -- moving a journal --------------------------------------------------------------------------


def test_a_forget_reaches_a_store_that_holds_the_content_by_import_and_push(
    mem: clew.Memory, tmp_path: Path
) -> None:
    w = World(mem)
    copy, team = tmp_path / "copy.db", str(tmp_path / "team.db")
    with clew.open(copy) as other:
        other.import_events(exported(mem))
    mem.push(team)
    mem.forget("message", w.message)
    mem.forget(pattern=PATTERN)
    for where, move in (
        (str(copy), lambda o: o.import_events(exported(mem))),
        (team, lambda o: mem.push(team)),
    ):
        with clew.open(where) as other:
            move(other)
            assert S_MESSAGE not in everything(other)
            assert exported(other).count(S_SHARED) == 1  # the task's name: no content
            report = other.verify()
            assert report.ok, report.differences
            assert report.forgotten_count == mem.verify().forgotten_count


# A server's write key importing: it may not forget (nor add waits that make the host act).
WRITE_KEY = Origin("api", "0123456789ab", NOTHING, "write")


def test_an_import_that_may_not_forget_cannot_rewrite_held_content(
    mem: clew.Memory, tmp_path: Path
) -> None:
    w = World(mem)
    with clew.open(tmp_path / "b.db") as other:
        other.import_events(exported(mem))
        mem.forget("message", w.message)
        text = exported(mem)
        with pytest.raises(ValidationError, match=r"line \d+ .*forgetting needs"):
            other.import_events(text, by=WRITE_KEY)
        assert S_MESSAGE in everything(other)  # nothing imported
    with clew.open(tmp_path / "c.db") as fresh:  # all of it arrives forgotten: nothing to remove
        fresh.import_events(text, by=WRITE_KEY)
        assert fresh.verify().ok


def test_a_journal_file_whose_forget_is_missing_or_changed_is_refused(
    mem: clew.Memory, tmp_path: Path
) -> None:
    w = World(mem)
    mem.forget("message", w.message)
    lines = exported(mem).splitlines()
    forget = next(i for i, line in enumerate(lines) if '"type":"journal.forgotten"' in line)
    with clew.open(tmp_path / "b.db") as other:
        last = json.loads(lines[forget - 1])
        end = {"clew": "end", "events": forget - 1, "head": last["hash"], "last": last["id"]}
        cut = [*lines[:forget], json.dumps(end, separators=(",", ":"))]
        with pytest.raises(ValidationError, match="no later forget names"):
            other.import_events("\n".join(cut) + "\n")
        at = next(i for i, line in enumerate(lines) if '"forgotten":{' in line)
        forged = [*lines]
        forged[at] = lines[at].replace('"by":"local user"', '"by":"key clew_x (API)"')
        with pytest.raises(ValidationError, match=r"line \d+ .*not the forget that last forgot"):
            other.import_events("\n".join(forged) + "\n")
        digest = json.loads(lines[at])["forgotten"]["digest"]
        forged[at] = lines[at].replace(digest, "0" * 64)
        with pytest.raises(ValidationError, match=f"line {at + 1} .*does not follow"):
            other.import_events("\n".join(forged) + "\n")
        assert other.journal() == []


def test_a_format_1_file_still_imports_its_chain_checked_as_version_1(
    mem: clew.Memory, tmp_path: Path
) -> None:
    World(mem)
    lines = exported(mem).splitlines()
    head = json.loads(lines[0])
    head["version"] = 1
    old, previous = [json.dumps(head, separators=(",", ":"))], ""
    for line in lines[1:-1]:
        fields, text = line.split(',"forgotten":null,"data":', 1)
        row = json.loads(fields + "}")
        row["hash"] = previous = chain.event_hash_v1(
            previous,
            id=row["id"],
            space=row["space"],
            task_id=row["task_id"],
            correlation_id=row["correlation_id"],
            type=row["type"],
            data=text[:-1],
            created_at=row["created_at"],
        )
        old.append(
            json.dumps(row, ensure_ascii=False, separators=(",", ":"))[:-1] + ',"data":' + text
        )
    last = json.loads(lines[-1])
    last["head"] = previous
    old.append(json.dumps(last, separators=(",", ":")))
    with clew.open(tmp_path / "b.db") as other:
        report = other.import_events("\n".join(old) + "\n")
        assert report.added == len(lines) - 2
        assert other.verify().ok
    bad = [*old]
    bad[1] = old[1].replace(json.loads(old[1])["hash"], "f" * 64)
    with clew.open(tmp_path / "c.db") as other, pytest.raises(ValidationError, match="line 2"):
        other.import_events("\n".join(bad) + "\n")


# -- the upgrade -------------------------------------------------------------------------------


@pytest.mark.sqlite_only("takes the SQLite file back to schema 19")
def test_an_older_store_is_chained_again_and_verifies(db: Path) -> None:
    from tests.old_stores import undo_migration_21

    with clew.open(db) as mem:
        World(mem)
        v2 = [e.hash for e in mem.journal()]
    conn = sqlite3.connect(db)
    undo_migration_21(conn)
    conn.close()
    v1 = [r[0] for r in sqlite3.connect(db).execute("SELECT hash FROM events ORDER BY seq")]
    assert v1 != v2
    with clew.open(db) as mem:
        assert [e.hash for e in mem.journal()] == v2
        assert mem.verify().ok
        assert mem.forget(pattern=PATTERN).items


# -- the rewrite itself, as a property ------------------------------------------------------------

_word = st.text(alphabet="abcdefgh ", min_size=0, max_size=12)


@settings(max_examples=40, deadline=None)
@given(st.lists(_word, min_size=1, max_size=6), st.integers(0, 2**31), st.data())
def test_a_pattern_rewrite_leaves_no_match_in_content_and_changes_nothing_else(
    words: list[str], number: int, data: st.DataObject
) -> None:
    secret = "quokka-shared-0123abcd"
    texts = [w + (secret if data.draw(st.booleans()) else "") + w for w in words]
    event = {
        "action": {
            "id": "abcdefghij",
            "command": texts[0],
            "stdout": " ".join(texts),
            "exit_code": number,
            "cwd": f"/p/{secret}",
        },
    }
    regex = forgettable.compiled(PATTERN)
    fields = forgettable.pattern_fields(regex, "action.recorded", event)
    new = stored.rewrite(event, fields)
    leaves = [v for _, v in forgettable._content("action.recorded", new)]
    assert not any(regex.search(v) for v in leaves if isinstance(v, str))
    assert new["action"]["exit_code"] == number and new["action"]["cwd"] == f"/p/{secret}"
    assert new["action"]["id"] == "abcdefghij"
    assert forgettable.remaining(regex, new, []) == ([("action", "cwd")])
    again = stored.rewrite(new, forgettable.pattern_fields(regex, "action.recorded", new))
    assert again == new  # forgetting twice changes nothing more


def test_a_field_the_data_does_not_have_is_refused_by_the_rewrite() -> None:
    with pytest.raises(ValueError, match="no field"):
        stored.rewrite({"a": {"b": "x"}}, [Field(("a", "c"))])
    with pytest.raises(ValueError, match="outside the text"):
        stored.rewrite({"a": "abc"}, [Field(("a",), ((1, 9),))])
    assert stored.rewrite({"a": ["x", {"b": "secret"}]}, [Field(("a", 1, "b"), ((0, 3),))]) == {
        "a": ["x", {"b": f"{PLACEHOLDER}ret"}]
    }


# -- over HTTP: an admin key, never a read or write key ------------------------------------------


@pytest.fixture
def served(db: Path, backend: str) -> Iterator[Any]:
    """A server of space A with read, write and admin keys of A (tests/test_server.py)."""
    from tests.test_server import running

    keys = (("read", "a", "read"), ("write", "a", "write"), ("admin", "a", "admin"))
    with running(db, keys) as result:
        yield result


def test_only_an_admin_key_forgets_through_the_api(served: Any, tmp_path: Path) -> None:
    s = served
    mem = s.mems[next(iter(s.mems))]
    w = World(mem)
    before = mem.journal_head()
    for key in ("read", "write"):
        refused = s.op("forget", {"kind": "message", "id": w.message}, key=key)
        assert refused.status == 403 and "admin" in refused.json()["error"]
    assert mem.journal_head() == before and S_MESSAGE in everything(mem)
    assert s.op("forget", {"kind": "task", "id": "x"}, key="admin").status == 400
    dry = s.op("forget", {"pattern": PATTERN, "dry_run": True}, key="admin")
    assert dry.status == 200 and dry.json()["data"]["dry_run"] and mem.journal_head() == before
    done = s.op("forget", {"kind": "message", "id": w.message}, key="admin")
    assert done.status == 200, done.text
    prefix = mem.authenticate(s.tokens["admin"]).prefix
    assert done.json()["data"]["by"] == f"key {prefix} (API)"
    event = next(e for e in mem.journal() if e.type == "message.added")
    assert event.forgotten is not None and event.forgotten.by == f"key {prefix} (API)"
    assert S_MESSAGE not in s.op("task_show", {"task_id": w.task}, key="read").text
    # Importing a file whose forget would rewrite held content: an admin key only.
    with clew.open(tmp_path / "side.db") as side:
        side.import_events(exported(mem))
        side.forget(pattern=PATTERN)
        text = exported(side).encode()
    head = mem.journal_head()
    refused = s.call("POST", "/api/v1/import", raw=text, key="write")
    assert refused.status == 400 and re.search(r"line \d+ .*forgetting needs", refused.text)
    assert mem.journal_head() == head and S_SHARED in exported(mem).replace(f"with {S_SHARED}", "")
    assert s.call("POST", "/api/v1/import", raw=text, key="admin").status == 200
    assert exported(mem).count(S_SHARED) == 1 and mem.verify().ok


def test_only_an_admin_forgets_on_the_dashboard_and_its_pages_show_no_content(
    served: Any,
) -> None:
    from tests.test_dashboard import _csrf, _login, _raw

    s = served
    mem = s.mems[next(iter(s.mems))]
    w = World(mem)
    writer = _login(s, s.tokens["write"])
    for key in ("read", "write"):
        assert _raw(s, "GET", "/forget", headers={"Cookie": _login(s, s.tokens[key])})[0] == 403
    home = _raw(s, "GET", "/", headers={"Cookie": writer})[2]
    assert 'href="/forget"' not in home  # the link is an admin's only
    token = _csrf(home)
    form = {"csrf": token, "kind": "message", "id": w.message}
    body = urllib.parse.urlencode(form).encode()
    assert _raw(s, "POST", "/forget", body, {"Cookie": writer})[0] == 403
    admin = _login(s, s.tokens["admin"])
    page = _raw(s, "GET", "/forget", headers={"Cookie": admin})[2]
    assert 'action="/forget"' in page and 'href="/forget"' in page
    fields = {"csrf": _csrf(page), "pattern": PATTERN}
    stale = urllib.parse.urlencode({**fields, "csrf": "0" * 32}).encode()
    assert _raw(s, "POST", "/forget", stale, {"Cookie": admin})[0] == 403
    assert S_SHARED in everything(mem).replace(f"with {S_SHARED}", "")
    status, _, shown = _raw(
        s, "POST", "/forget", urllib.parse.urlencode(fields).encode(), {"Cookie": admin}
    )
    assert status == 200 and "Forgot" in shown and PATTERN not in shown
    turns = f"/sessions/{w.session}"
    for path in ("/", f"/tasks/{w.task}", "/sessions", turns, f"/search?q={S_SHARED}"):
        text = _raw(s, "GET", path, headers={"Cookie": admin})[2]
        if path.startswith("/search"):  # the page says what was asked; no hit holds it
            text = text.split("<div id=hits>", 1)[1]
        assert S_SHARED not in text.replace(f"with {S_SHARED}", ""), path
    prefix = mem.authenticate(s.tokens["admin"]).prefix
    assert {f.by for f in mem.verify().forgotten} == {f"key {prefix} (dashboard)"}
