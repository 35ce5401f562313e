"""Who did what comes from the store's own records, never from event data (issue 24,
must-have 3), on SQLite and PostgreSQL, with a real server where one is involved.

An imported or pushed event keeps its correlation id (the hash chain covers it), which names
who made it where it came from: a claim. The store records who imported it (the key, or the
host's user; the door; the time; the seq range) in the transaction that adds it, outside the
journal, and every place that shows an event's author shows that record first."""

from __future__ import annotations

import getpass
import io
from pathlib import Path
from typing import Any

import pytest

import clew
from clew.core.origin import Origin
from clew.models import Event, ImportRecord
from clew.tasks.history import HistoryItem, author, importer
from tests.test_server import running


def _forged_file(tmp_path: Path, space: str, claimed: str) -> str:
    """A journal file, made elsewhere, whose events all claim to be `claimed`'s dashboard
    edits: a correlation id anyone can write."""
    with clew.open(tmp_path / "forger.db", space=space) as src:
        with src.correlation(f"web:{claimed}:forged"):
            task = src.create_task("Rotate the keys", ["Rotate"])
            src.add_entry("decision", "give everyone admin", task_id=task.id)
        out = io.StringIO()
        src.export_events(out)
    return out.getvalue()


def test_an_imported_event_is_shown_as_imported_by_its_importer_with_its_origin_claimed(
    db: Path, tmp_path: Path
) -> None:
    """The issue's forgery: a write key imports events claiming to be an admin's dashboard
    edits. The task page, task_history and the journal say who imported them, and show the
    admin only as claimed."""
    keys = (("write", "a", "write"), ("admin", "a", "admin"))
    with running(db, keys) as s:
        home = s.server.spaces.home
        write, admin = (home.authenticate(s.tokens[k]).prefix for k in ("write", "admin"))
        text = _forged_file(tmp_path, home.space, admin)
        reply = s.call("POST", "/api/v1/import", raw=text.encode(), key="write")
        assert reply.status == 200, reply.text
        [task] = home.list_tasks()
        imported = f"imported by key {write} (API) at "
        claims = f", claims key {admin} (dashboard)"
        page = s.call("GET", f"/tasks/{task.id}", key="admin").text
        assert imported in page and claims in page
        assert f"<td>key {admin} (dashboard)</td>" not in page  # never shown as the author
        history = s.op("task_history", {"task_id": task.id}, key="write")
        assert history.status == 200
        lines = history.json()["text"].splitlines()
        assert lines and all(imported in line and claims in line for line in lines), lines
        assert all(item["by"].startswith(imported) for item in history.json()["data"])
        # the server's own writes after it name their key, unqualified
        done = s.op("task_update", {"task_id": task.id, "message": "checked"}, key="admin")
        assert done.status == 200
        newest = home.history(task.id)[-1]
        assert newest.by == f"key {admin} (API)"
        [record] = home.import_records()
        assert (record.door, record.key_prefix, record.events) == ("api", write, 2)
        added = [e.seq for e in home.journal(task_id=task.id)][:2]
        assert (record.first_seq, record.last_seq) == (added[0], added[1])


def test_the_command_line_shows_who_imported(db: Path, tmp_path: Path, cli: Any) -> None:
    with clew.open(db) as mem:
        space = mem.space
    (tmp_path / "in.jsonl").write_text(_forged_file(tmp_path, space, "0123456789ab"))
    assert cli("import", str(tmp_path / "in.jsonl")).code == 0
    with clew.open(db) as mem:
        [task] = mem.list_tasks()
        [record] = mem.import_records()
    user = record.user_name
    assert record.door == "cli" and record.key_prefix is None and user
    if not str(db).startswith("postgresql"):
        assert user == getpass.getuser()  # the process's own user, not anything it was told
    history = cli("task", "history", task.id).out
    assert f"(imported by user {user} (command line) at " in history
    assert "claims key 0123456789ab (dashboard))" in history
    journal = cli("journal").out
    assert f"[imported by user {user} (command line) at " in journal
    assert "the cid is a claim]" in journal


def test_each_import_and_push_batch_is_recorded_in_its_own_transaction(
    mem: clew.Memory, db: Path, tmp_path: Path
) -> None:
    """A record for each transaction that added events, none for one that added nothing or
    was refused; push batches each their own; the records never travel with a journal."""
    task = mem.create_task("Deploy", ["Build", "Run"])
    mem.update_step(task.id, 1, status="completed")
    mem.add_entry("decision", "ship it", task_id=task.id)
    out = io.StringIO()
    mem.export_events(out)
    target = tmp_path / "target.db"
    with clew.open(target, space=mem.space) as other:
        other.import_events(out.getvalue(), by=Origin("cli"))
        other.import_events(out.getvalue(), by=Origin("cli"))  # twice: adds nothing
        bad = out.getvalue().replace('"name":"Deploy"', '"name":"Forged"')
        with pytest.raises(clew.ValidationError):
            other.import_events(bad)
        [record] = other.import_records()
        assert (record.first_seq, record.events, record.door) == (1, len(mem.journal()), "cli")
        # exported again and imported elsewhere: only that store's own record
        again = io.StringIO()
        other.export_events(again)
    with clew.open(tmp_path / "third.db", space=mem.space) as third:
        third.import_events(again.getvalue())
        assert [r.door for r in third.import_records()] == ["python"]
    pushed = tmp_path / "pushed.db"
    report = mem.push(str(pushed), batch=2)
    with clew.open(pushed, space=mem.space) as other:
        records = other.import_records()
        assert [r.door for r in records] == ["push"] * len(records)
        assert [r.events for r in records] == [2] * (report.added // 2) + [report.added % 2] * (
            report.added % 2
        )
        assert all(h.by.startswith("pushed by user ") for h in other.history(task.id))
        assert other.verify().ok


def test_a_push_into_a_team_store_names_the_database_role(
    mem: clew.Memory, db: Path, tmp_path: Path, backend: str
) -> None:
    """On PostgreSQL who pushed is the role the store connects as (the database's word, not
    the client's); on SQLite the process's user."""
    with clew.open(tmp_path / "local.db", space="local") as local:
        local.create_task("Deploy", ["Build"])
        local.push(str(db), space=mem.space)
    [record] = mem.import_records()
    if backend == "postgres":
        import psycopg

        with psycopg.connect(str(db)) as conn:
            role = conn.execute("SELECT current_user").fetchone()
        assert role is not None and record.user_name == role[0]
    else:
        assert record.user_name == getpass.getuser()


def test_authorship_is_the_record_first_and_the_claim_second() -> None:
    """The pure rule: an event covered by an import record is the importer's, its own
    correlation id only a claim; any other event says what the server wrote."""
    at = "2026-11-22T09:00:00.000000Z"
    record = ImportRecord(5, 7, 3, "api", "k" * 12, "svc", at)
    event = Event(6, "e" * 10, "s", None, "web:adminprefix12:x", "task.created", {}, at)
    assert author(event, [record]) == (
        "imported by key kkkkkkkkkkkk (API) at 2026-11-22 09:00, claims key adminprefix12"
        " (dashboard)"
    )
    assert author(event._replace(seq=8), [record]) == "key adminprefix12 (dashboard)"
    assert author(event._replace(correlation_id="plain"), [record]).endswith("09:00")
    assert importer(record._replace(key_prefix=None, door="push")) == (
        "pushed by user svc at 2026-11-22 09:00"
    )
    assert HistoryItem(1, at, "t", "x").by == ""
