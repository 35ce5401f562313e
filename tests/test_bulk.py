"""The bulk paths: a session imported from a stream in batches (all or nothing, even when
killed), exported a page at a time, and the progress bar the long commands draw on a
terminal (and nowhere else)."""

from __future__ import annotations

import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import clew
from clew.cli import bar
from clew.conversations import sessions
from clew.core import meter
from clew.errors import ValidationError
from tests.conftest import Result


def _messages(count: int) -> Iterator[dict[str, Any]]:
    for n in range(count):
        if n % 3 == 2:
            yield {"role": "tool", "tool_call_id": f"c{n - 1}", "content": f"output {n} ok"}
        elif n % 3 == 1:
            call = {
                "id": f"c{n}",
                "type": "function",
                "function": {"name": "bash", "arguments": json.dumps({"n": n})},
            }
            yield {"role": "assistant", "content": f"running step {n}", "tool_calls": [call]}
        else:
            yield {"role": "user", "content": f"message number {n} about zebra{n}"}


@pytest.fixture
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sessions, "_IMPORT_BATCH", 7)
    monkeypatch.setattr(sessions, "_EXPORT_PAGE", 5)


@pytest.mark.usefixtures("small_batches")
def test_a_stream_imports_in_batches_and_exports_in_pages(mem: clew.Memory) -> None:
    expected = list(_messages(40))
    session = mem.import_session(_messages(40), title="bulk")  # a generator, not a list
    assert session.turn_count == 40
    assert mem.export_session(session.id) == expected
    out = io.StringIO()
    assert mem.write_session(session.id, out) == 40
    assert [json.loads(line) for line in out.getvalue().splitlines()] == expected
    # Each turn is in the search index, built once at the end of the import.
    found = mem.recall(session.id, "search", query="zebra36")
    assert "zebra36" in found.text
    assert mem.verify().ok


@pytest.mark.usefixtures("small_batches")
def test_a_bad_message_in_a_later_batch_leaves_nothing(mem: clew.Memory) -> None:
    def stream() -> Iterator[dict[str, Any]]:
        yield from _messages(20)
        yield {"role": "bot", "content": "no such role"}

    with pytest.raises(ValidationError, match="role 'bot'"):
        mem.import_session(stream())
    assert mem.list_sessions() == []
    assert mem.journal() == []
    session = mem.import_session(_messages(3))  # the search index is whole after a refusal
    assert "zebra0" in mem.recall(session.id, "search", query="zebra0").text
    assert mem.verify().ok


def test_import_session_refuses_what_is_not_a_list_of_messages(mem: clew.Memory) -> None:
    for bad in ("text", b"bytes", {"role": "user"}, 7):
        with pytest.raises(ValidationError, match="messages must be a list"):
            mem.import_session(bad)  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="messages must be a list"):  # one time each
        mem.import_session(_messages(2), at=["2025-01-01", "2025-01-02"])
    with pytest.raises(ValidationError, match="at gives 1 time"):
        mem.import_session(list(_messages(2)), at=["2025-01-01"])


def test_cli_streams_a_jsonl_file(
    cli: Callable[..., Result], tmp_path: Path, small_batches: None
) -> None:
    source = tmp_path / "chat.jsonl"
    source.write_text("".join(json.dumps(m) + "\n" for m in _messages(30)))
    session = cli("session", "import", str(source))
    assert session.code == 0, session.err
    exported = cli("session", "export", session.out.strip())
    assert exported.out == source.read_text()
    target = tmp_path / "out.jsonl"
    written = cli("session", "export", session.out.strip(), "-o", str(target))
    assert written.code == 0 and "30 messages" in written.err
    assert target.read_text() == source.read_text()
    # A bad line far into the file is named, and nothing of the file is kept.
    lines = source.read_text().splitlines(keepends=True)
    lines[25] = '{"role": "user", "content": "cut\n'
    source.write_text("".join(lines))
    refused = cli("session", "import", str(source))
    assert refused.code == 2 and "line 26 is not valid JSON" in refused.err
    assert len(cli("session", "list", "--all").out.splitlines()) == 1


def test_a_killed_import_leaves_nothing_and_a_rerun_completes(tmp_path: Path) -> None:
    """All or nothing: SIGKILL in the middle of `clew session import` leaves no session and
    no event; the same command run again imports every message once, and verify holds."""
    store = tmp_path / "kill.db"
    source = tmp_path / "big.jsonl"
    filler = "x" * 300
    with source.open("w") as out:
        for m in _messages(10_000):
            out.write(json.dumps({**m, "content": f"{m['content']} {filler}"}) + "\n")
    argv = [sys.executable, "-m", "clew", "--db", str(store), "--create", "session", "import"]
    child = subprocess.Popen([*argv, str(source)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    wal = Path(f"{store}-wal")
    while time.monotonic() < deadline and child.poll() is None:
        if wal.exists() and wal.stat().st_size > 2_000_000:  # well into the import
            break
        time.sleep(0.02)
    child.send_signal(signal.SIGKILL)
    child.communicate()
    if child.returncode == -signal.SIGKILL:  # (a very fast machine may have finished)
        with sqlite3.connect(store) as conn:
            assert conn.execute("SELECT count(*) FROM sessions").fetchone() == (0,)
            assert conn.execute("SELECT count(*) FROM turns").fetchone() == (0,)
            assert conn.execute("SELECT count(*) FROM events").fetchone() == (0,)
        done = subprocess.run([*argv, str(source)], capture_output=True, timeout=120)
        assert done.returncode == 0, done.stderr
    with clew.open(store) as mem:
        [session] = mem.list_sessions()
        assert session.turn_count == 10_000
        assert mem.verify().ok


# -- the progress bar -----------------------------------------------------------------------


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_bar_draws_on_a_terminal_and_erases_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bar, "_DELAY", 0.0)
    monkeypatch.setattr(bar, "_EVERY", 0.0)
    screen = _Terminal()
    with bar.shown(screen):
        meter.report("importing", 250, 1000)
        meter.report("embedding", 42, None)
    drawn = screen.getvalue()
    assert "importing [######------------------]  25% 250/1,000" in drawn
    assert "embedding 42 " in drawn
    assert drawn.endswith("\r\x1b[K")  # the line is erased at the end


def test_the_bar_is_silent_when_piped_or_quick(monkeypatch: pytest.MonkeyPatch) -> None:
    piped = io.StringIO()
    with bar.shown(piped):
        meter.report("importing", 1, 2)
    assert piped.getvalue() == ""
    screen = _Terminal()
    with bar.shown(screen):  # under a second: nothing is drawn
        meter.report("importing", 1, 2)
    assert screen.getvalue() == ""
    meter.report("nobody listens", 1, 2)  # outside a bar: nothing happens


def test_a_piped_long_command_prints_no_bar(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    source = tmp_path / "m.jsonl"
    source.write_text("".join(json.dumps(m) + "\n" for m in _messages(50)))
    env = {**os.environ, "CLEW_MAX_INPUT_MB": "8"}
    base = [sys.executable, "-m", "clew", "--db", str(store), "--create"]
    done = subprocess.run([*base, "session", "import", str(source)], capture_output=True, env=env)
    assert done.returncode == 0 and done.stderr == b""
    done = subprocess.run([*base, "verify"], capture_output=True, env=env)
    assert done.returncode == 0 and b"\r" not in done.stderr + done.stdout


def test_index_statements_leave_any_trigger_and_come_back_exactly() -> None:
    """Whether the turns' index is kept by a trigger of its own or inside another (an
    INSTEAD OF trigger writing a view's table), the bulk path finds it, and restores the
    schema byte for byte."""
    from clew.store.sqlite import bulk as sqlite_bulk

    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.executescript("""
        CREATE TABLE rows (seq INTEGER PRIMARY KEY, content TEXT);
        CREATE VIEW turns AS SELECT seq, content FROM rows;
        CREATE VIRTUAL TABLE turns_fts USING fts5(content, content='turns', content_rowid='seq');
        CREATE TRIGGER turns_insert INSTEAD OF INSERT ON turns BEGIN
            INSERT INTO rows (content) VALUES (new.content);
            INSERT INTO turns_fts (rowid, content) VALUES (last_insert_rowid(), new.content);
        END;
        CREATE TRIGGER turns_fts_delete AFTER DELETE ON rows BEGIN
            INSERT INTO turns_fts (turns_fts, rowid, content)
            VALUES ('delete', old.seq, old.content);
        END;
    """)
    schema = conn.execute("SELECT name, sql FROM sqlite_master ORDER BY name").fetchall()
    conn.execute("BEGIN")
    saved = sqlite_bulk.strip(conn, ("turns_fts",), inserts_only=True)
    assert [name for name, _ in saved] == ["turns_insert"]  # the delete one is kept
    conn.execute("INSERT INTO turns (content) VALUES ('alpha beta')")
    assert conn.execute("SELECT count(*) FROM rows").fetchone() == (1,)  # rows still written
    assert conn.execute(
        "SELECT count(*) FROM turns_fts WHERE turns_fts MATCH 'alpha'"
    ).fetchone() == (0,)
    conn.execute("INSERT INTO turns_fts (rowid, content) SELECT seq, content FROM turns")
    sqlite_bulk.restore(conn, saved)
    conn.execute("COMMIT")
    assert conn.execute("SELECT name, sql FROM sqlite_master ORDER BY name").fetchall() == schema
    conn.execute("INSERT INTO turns (content) VALUES ('gamma')")
    for word in ("alpha", "gamma"):
        hits = conn.execute("SELECT rowid FROM turns_fts WHERE turns_fts MATCH ?", (word,))
        assert len(hits.fetchall()) == 1
    conn.execute("INSERT INTO turns_fts (turns_fts, rank) VALUES ('integrity-check', 1)")
    saved = sqlite_bulk.strip(conn, ("turns_fts",), inserts_only=False)  # as verify's scratch
    assert sorted(name for name, _ in saved) == ["turns_fts_delete", "turns_insert"]
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    assert names == {"turns_insert"}  # left with no statement, the delete trigger went


# -- push: read twice, a page at a time ------------------------------------------------------


def test_a_push_checks_and_sends_a_page_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A push reads the journal in pages (here of 2 events) for its checks and again for its
    batches, and each page is checked with what the pages before it showed: a task created
    on one page and updated on the next moves; a gap found on a later page refuses it all."""
    from clew.journal import transfer
    from tests.test_move import work

    monkeypatch.setattr(transfer, "_PAGE", 2)
    with clew.open(tmp_path / "local.db") as mem:
        work(mem)
        team = str(tmp_path / "team.db")
        sent = mem.push(team, batch=3)
        assert (sent.added, sent.skipped) == (len(mem.journal()), 0)
        with clew.open(team) as target:
            assert target.verify().ok
            assert [e.id for e in target.journal()] == [e.id for e in mem.journal()]
    with clew.open(tmp_path / "talk.db") as mem:
        for n in range(5):
            mem.start_session(title=f"chat {n}")
        last = mem.journal()[-1]
        with clew.open(tmp_path / "gap.db") as target:
            with target._store.transaction(write=True):  # the target holds only the last
                target._store.adopt(last)
            with pytest.raises(ValidationError, match="already in the store but event #1"):
                mem.push(str(tmp_path / "gap.db"), batch=1)
            assert len(target.journal()) == 1  # refused before anything was written


# -- a journal file imported a line at a time --------------------------------------------


def test_a_journal_file_imports_a_line_at_a_time_all_or_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from clew.journal import transfer
    from tests.roundtrip import assert_same_store
    from tests.test_move import work

    monkeypatch.setattr(transfer, "_PAGE", 3)
    with clew.open(tmp_path / "source.db") as mem:
        work(mem)
        mem.import_session(_messages(12))
        out = io.StringIO()
        mem.export_events(out)
    # Only "\n" ends a line (the data holds a U+2028, which splitlines would split at).
    lines = [line + "\n" for line in out.getvalue().split("\n")[:-1]]
    # A fault late in the file (here the last line's count) leaves nothing.
    cut = [*lines[:-1], lines[-1].replace('"events":', '"events":1')]
    with clew.open(tmp_path / "target.db") as target:
        with pytest.raises(ValidationError, match=f"line {len(lines)} .* nothing was imported"):
            target.import_events(iter(cut))
        assert target.journal() == []
        with pytest.raises(ValidationError, match="never came"):
            target.import_events(iter(lines[:-1]))
        assert target.journal() == []
        report = target.import_events(iter(lines))
        assert (report.added, report.skipped) == (len(lines) - 2, 0)
        assert target.import_events(iter(lines)).added == 0  # twice adds nothing
    assert_same_store(str(tmp_path / "source.db"), str(tmp_path / "target.db"))


def test_cli_imports_a_journal_file_larger_than_the_input_limit(tmp_path: Path) -> None:
    """Streamed, a journal file is bounded line by line: a file over --max-input-mb whose
    lines are each under it imports; a line over it is refused naming it."""
    source = tmp_path / "source.db"
    with clew.open(source) as mem:
        mem.import_session({"role": "user", "content": f"{n} " + "w" * 300_000} for n in range(6))
    base = [sys.executable, "-m", "clew", "--max-input-mb", "1"]
    exported = tmp_path / "journal.jsonl"
    done = subprocess.run([*base, "--db", str(source), "export", "-o", str(exported)])
    assert done.returncode == 0 and exported.stat().st_size > 1_800_000
    target = tmp_path / "target.db"
    done = subprocess.run(
        [*base, "--db", str(target), "--create", "import", str(exported)], capture_output=True
    )
    assert done.returncode == 0, done.stderr
    with clew.open(target) as mem:
        assert mem.verify().ok and mem.list_sessions()[0].turn_count == 6
    exported.write_text(exported.read_text().replace("w" * 300_000, "w" * 1_100_000, 1))
    done = subprocess.run(
        [*base, "--db", str(tmp_path / "other.db"), "--create", "import", str(exported)],
        capture_output=True,
    )
    assert done.returncode == 2 and b"line 3 of the journal file is larger than 1 MB" in done.stderr


def _stateful(count: int) -> Iterator[dict[str, Any]]:
    """Messages that move the session state: files touched, errors raised and fixed."""
    for n, message in enumerate(_messages(count)):
        if message["role"] == "tool" and n % 4 == 1:
            message = {**message, "content": f"Traceback\nValueError: bad value {n % 5}\n"}
        elif message["role"] == "tool":
            message = {**message, "content": f"wrote src/mod{n % 6}.py\nall good"}
        yield message


def test_an_import_stores_what_appending_one_by_one_stores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An import puts off writing the session state to the end of its block (and before any
    # read): every table must still end as the appends one at a time leave it.
    monkeypatch.setattr(sessions, "_IMPORT_BATCH", 7)
    bulk, single = tmp_path / "bulk.db", tmp_path / "single.db"
    with clew.open(bulk) as mem:
        mem.import_session(_stateful(60))
        assert mem.verify().ok
    with clew.open(single) as mem:
        session = mem.start_session()
        for message in _stateful(60):
            mem.append_turn(session.id, message)

    def tables(path: Path) -> dict[str, list[Any]]:
        conn = sqlite3.connect(path)
        try:
            sql = {
                "sessions": "SELECT turn_count, total_tokens, state, active FROM sessions",
                "turn_rows": "SELECT turn, role, content, text_content, tool_calls,"
                " tool_call_id, tool_name, call_turn, message, token_count, hidden, text_in"
                " FROM turn_rows ORDER BY seq",
                "events": "SELECT type, json_remove(data, '$.turn.id', '$.session.id',"
                " '$.session_id') FROM events ORDER BY seq",
                "search": "SELECT rowid, content FROM turns_fts ORDER BY rowid",
            }
            return {name: conn.execute(q).fetchall() for name, q in sql.items()}
        finally:
            conn.close()

    got, want = tables(bulk), tables(single)
    assert got["sessions"][0][2] != "{}"  # the state moved
    for name in want:
        assert got[name] == want[name], name
    # Each row refers to its own event (the seq an insert gave back), on both paths.
    for path in (bulk, single):
        conn = sqlite3.connect(path)
        try:
            pairs = conn.execute(
                "SELECT r.id, json_extract(e.data, '$.turn.id') FROM turn_rows r"
                " JOIN events e ON e.seq = r.event_seq"
            ).fetchall()
        finally:
            conn.close()
        assert len(pairs) == 60 and all(a == b for a, b in pairs)


def test_a_bulk_block_gives_the_page_cache_back(tmp_path: Path) -> None:
    # SQLite's bulk block runs with a larger page cache, then gives the usual one back.
    with clew.open(tmp_path / "store.db") as mem:
        conn = mem._store._conn  # type: ignore[attr-defined]
        before = conn.execute("PRAGMA cache_size").fetchone()[0]
        mem.import_session(_messages(10))
        assert conn.execute("PRAGMA cache_size").fetchone()[0] == before
