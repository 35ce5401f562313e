"""Maintenance that runs by itself: idle tasks paused (never those waiting), closed ones
archived, failing patterns deprecated, waits expired; at most once per interval, lazily on
open and prime and by the worker, every action journaled; archived tasks by month and their
journal exported."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

import clew
from clew.core import chain, codec
from tests.conftest import FakeClock, Result
from tests.old_stores import undo_migration_10

Cli = Callable[..., Result]
HOUR = 3600.0
DAY = 86400.0


@pytest.fixture(autouse=True)
def maintenance_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLEW_MAINTENANCE", raising=False)


def statuses(mem: clew.Memory) -> dict[str, str]:
    return {t.id: t.status.value for t in mem.list_tasks(include_archived=True)}


def test_maintenance_does_each_thing_once_and_journals_it(
    mem: clew.Memory, clock: FakeClock, cli: Cli
) -> None:
    idle = mem.create_task("Idle", ["a"])
    waiting = mem.create_task("Waiting on CI", ["a"])
    wait = mem.add_wait(waiting.id, "manual", "CI is green")
    waiting_old = mem.create_task("Old-style wait", ["a"])
    mem.record_action(waiting_old.id, summary="the build farm", type="wait", status="started")
    done = mem.create_task("Done", ["a"])
    mem.update_task(done.id, status="completed")
    dropped = mem.create_task("Dropped", ["a"])
    late = mem.add_wait(dropped.id, "command", "false", timeout="2h")
    weak = mem.add_pattern("deploy", "force-push hotfixes")
    for n in range(10):
        mem.observe_pattern(weak.id, success=n < 5)
    clock.advance(8 * DAY)
    report = mem.maintain()
    did = {(a.action, a.id) for a in report.actions}
    assert did == {
        ("paused", idle.id),
        ("archived", done.id),
        ("deprecated", weak.id),
        ("timed_out", late.id),
    }
    # Waiting is what a task does while nothing else moves: never paused for it.
    assert statuses(mem)[waiting.id] == "active" and statuses(mem)[waiting_old.id] == "active"
    assert mem.get_wait(wait.id).status.value == "watching"
    assert mem.get_wait(late.id).status.value == "timed_out"
    # Its wait timing out is news on the task, just now: not paused in the same run.
    assert statuses(mem)[dropped.id] == "active"
    assert mem.get_task(done.id).archived
    [ran] = [e for e in mem.journal() if e.type == "maintenance.ran"]
    assert ran.data["trigger"] == "manual" and len(ran.data["actions"]) == 4
    journal = cli("journal").out
    assert "maintenance.ran" in journal and "(idle)" in journal
    # Done is done: a second run finds nothing and journals nothing.
    assert mem.maintain().actions == ()
    assert len([e for e in mem.journal() if e.type == "maintenance.ran"]) == 1
    assert mem.verify().ok


def test_maintenance_alerts_a_stuck_task_once_per_cooldown(
    mem: clew.Memory, clock: FakeClock
) -> None:
    task = mem.create_task("Migrate", ["Dump", "Load"])
    mem.update_task(task.id, step=1, step_status="active")
    clock.advance(2 * HOUR)  # idle past the stuck limit (30m), not past the pause one (24h)
    report = mem.maintain()
    assert [(a.action, a.id) for a in report.actions] == [("stuck_alerted", task.id)]
    assert mem.list_messages(task.id, limit=1)[0].type.value == "stuck"
    clock.advance(10 * 60)  # within the cooldown: still stuck, not alerted again
    assert mem.maintain().actions == () and mem.stuck(task.id) != ()
    assert mem.maintain(dry_run=True).actions == ()
    assert mem.verify().ok


def test_waits_of_a_closed_task_are_cancelled(mem: clew.Memory) -> None:
    task = mem.create_task("Ship", ["a"])
    wait = mem.add_wait(task.id, "command", "false")
    mem.update_task(task.id, status="cancelled")
    report = mem.maintain()
    assert [(a.action, a.id) for a in report.actions] == [("cancelled", wait.id)]
    assert (
        mem.list_messages(task.id)[0].content == "[wait cancelled] `false`: the task is cancelled"
    )


def test_a_dry_run_changes_nothing(mem: clew.Memory, clock: FakeClock) -> None:
    task = mem.create_task("Idle", ["a"])
    clock.advance(2 * DAY)
    before = mem.journal()
    assert [(a.action, a.id) for a in mem.maintain(dry_run=True).actions] == [("paused", task.id)]
    assert mem.journal() == before and statuses(mem)[task.id] == "active"


def test_it_runs_lazily_on_open_at_most_once_per_interval(
    db: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLEW_MAINTENANCE_INTERVAL", "48h")
    with clew.open(db, clock=clock) as mem:  # the first open runs it (nothing to do)
        task = mem.create_task("Idle", ["a"])
        assert not mem.maintenance_due()
    clock.advance(25 * HOUR)  # idle past 24h, but maintenance ran 25h ago: not due
    with clew.open(db, clock=clock) as mem:
        assert statuses(mem)[task.id] == "active"
    clock.advance(24 * HOUR)  # 49h since it ran: the next open runs it
    with clew.open(db, clock=clock) as mem:
        assert statuses(mem)[task.id] == "paused"
        [ran] = [e for e in mem.journal() if e.type == "maintenance.ran"]
        assert ran.data["trigger"] == "open"


def test_prime_runs_it_too(db: Path, clock: FakeClock) -> None:
    with clew.open(db, clock=clock) as mem:
        task = mem.create_task("Old", ["a"], workspace="/srv/app")
        clock.advance(2 * DAY)
        text = mem.prime("/srv/app").text  # paused before it printed, and it says so
        assert "no active task" in text and f"Paused here: {task.id} 'Old'" in text
        assert statuses(mem)[task.id] == "paused"
        [ran] = [e for e in mem.journal() if e.type == "maintenance.ran"]
        assert ran.data["trigger"] == "prime"


@pytest.mark.sqlite_only("reads config.toml beside the store file (a team store has none)")
def test_the_off_switch_and_the_settings(
    db: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLEW_MAINTENANCE", "off")
    with clew.open(db, clock=clock) as mem:
        task = mem.create_task("Idle", ["a"])
    clock.advance(3 * DAY)
    with clew.open(db, clock=clock) as mem:
        assert statuses(mem)[task.id] == "active"
        assert not mem.maintenance_due()
    monkeypatch.delenv("CLEW_MAINTENANCE")
    (db.parent / "config.toml").write_text(
        '[maintenance]\npause_after = "4d"\narchive_after = "never"\ninterval = "10m"\n'
    )
    with clew.open(db, clock=clock) as mem:
        assert mem.settings.maintenance.interval == 600
        assert mem.settings.maintenance.archive_after is None
        assert statuses(mem)[task.id] == "active"  # idle 3 days < 4 days
    clock.advance(DAY + 1)
    monkeypatch.setenv("CLEW_PAUSE_AFTER", "never")  # the environment beats the file
    with clew.open(db, clock=clock) as mem:
        assert statuses(mem)[task.id] == "active"


def test_the_worker_round_runs_it_when_due(mem: clew.Memory, clock: FakeClock, cli: Cli) -> None:
    task = mem.create_task("Idle", ["a"])
    clock.advance(2 * DAY)
    assert mem.run_background() is None  # nothing watched
    assert statuses(mem)[task.id] == "paused"
    [ran] = [e for e in mem.journal() if e.type == "maintenance.ran"]
    assert ran.data["trigger"] == "worker"


def test_tidy_stays_the_manual_form_and_spares_waiting_tasks(
    mem: clew.Memory, clock: FakeClock
) -> None:
    idle = mem.create_task("Idle", ["a"])
    waiting = mem.create_task("Waiting", ["a"])
    mem.add_wait(waiting.id, "time", "3d")
    clock.advance(2 * DAY)
    assert mem.tidy() == [(idle.id, "paused")]


# -- archived tasks by month, and their journal ----------------------------------------------


def archive_in(mem: clew.Memory, clock: FakeClock, name: str) -> clew.Task:
    task = mem.create_task(name, ["a"])
    mem.update_task(task.id, message=f"{name} done", step=1, step_status="completed")
    mem.update_task(task.id, status="completed")
    return mem.archive_task(task.id)


def test_archived_tasks_are_grouped_by_month_and_exported(
    mem: clew.Memory, clock: FakeClock, cli: Cli, tmp_path: Path
) -> None:
    october = archive_in(mem, clock, "October work")  # 2026-11-22: November
    clock.advance(15 * DAY)  # 2026-12-07
    december = [archive_in(mem, clock, f"December {n}") for n in range(2)]
    mem.create_task("Still going", ["a"])
    found = mem.archived_tasks()
    assert [(a.month, a.task.id) for a in found][-1] == ("2026-11", october.id)
    assert {a.task.id for a in mem.archived_tasks("2026-12")} == {t.id for t in december}
    listed = cli("task", "list", "--archived").out
    assert listed.index("2026-12 (2 archived") < listed.index("2026-11 (1 archived")
    every = cli("task", "list", "--all").out
    assert "Still going" in every and "2026-11 (1 archived" in every
    grouped = json.loads(cli("task", "list", "--archived", "--json").out)
    assert [g["month"] for g in grouped] == ["2026-12", "2026-11"]

    out = tmp_path / "2026-12.jsonl"
    assert cli("export", "--month", "2026-12", "--output", str(out)).code == 0
    lines = out.read_text().splitlines()
    events = [e for t in december for e in mem.journal(task_id=t.id)]
    assert len(lines) == len(events)
    by_id = {e.id: e for e in events}
    for line in lines:
        row = json.loads(line)
        assert list(row) == [
            "seq",
            "id",
            "space",
            "task_id",
            "correlation_id",
            "type",
            "data",
            "created_at",
            "hash",
            "forgotten",
        ]
        event = by_id[row["id"]]
        assert (row["seq"], row["type"], row["hash"]) == (event.seq, event.type, event.hash)
        # The data is the stored text itself, so the event's own hash can be checked.
        text = line.split('"data":', 1)[1].rsplit(',"created_at":', 1)[0]
        assert codec.loads(text) == event.data
        before = mem.journal(after=event.seq - 1, limit=1)
        assert before[0].id == event.id
    seqs = [json.loads(line)["seq"] for line in lines]
    assert seqs == sorted(seqs)
    assert cli("export", "--month", "2026-12").out == out.read_text()
    assert cli("export", "--month", "2025-01").out == ""


def test_an_exported_event_hash_checks_against_its_data(mem: clew.Memory, clock: FakeClock) -> None:
    task = archive_in(mem, clock, "Proof")
    lines = mem.export_month("2026-11")
    events = {e.id: e for e in mem.journal()}
    ordered = mem.journal()
    for line in lines:
        row = json.loads(line)
        text = line.split('"data":', 1)[1].rsplit(',"created_at":', 1)[0]
        index = next(i for i, e in enumerate(ordered) if e.id == row["id"])
        previous = ordered[index - 1].hash if index else ""
        assert row["forgotten"] is None
        assert (
            chain.event_hash(
                previous or "",
                id=row["id"],
                space=row["space"],
                task_id=row["task_id"],
                correlation_id=row["correlation_id"],
                type=row["type"],
                digest=chain.data_digest(text),
                created_at=row["created_at"],
            )
            == row["hash"]
            == events[row["id"]].hash
        )
    assert task.archived


def test_archiving_again_moves_a_task_to_the_new_month(mem: clew.Memory, clock: FakeClock) -> None:
    task = archive_in(mem, clock, "Twice")
    mem.archive_task(task.id, archived=False)
    clock.advance(20 * DAY)
    mem.archive_task(task.id)
    assert [a.month for a in mem.archived_tasks()] == ["2026-12"]
    assert mem.verify().ok


@pytest.mark.sqlite_only("builds an older SQLite store")
def test_a_store_from_before_waits_gets_its_archive_months(db: Path, clock: FakeClock) -> None:
    import sqlite3

    with clew.open(db, clock=clock) as mem:
        task = archive_in(mem, clock, "Old")
    # Take the store back to schema 7. (Task records came later; their rows are put back as
    # they were once the schema has them again.)
    conn = sqlite3.connect(db)
    undo_migration_10(conn)
    kept = conn.execute("SELECT * FROM task_records").fetchall()
    conn.executescript(
        """
        DROP TABLE waits; DROP TABLE schedule; DROP INDEX tasks_archived;
        ALTER TABLE tasks DROP COLUMN archived_at; DROP TABLE step_records;
        DROP TABLE task_records; DELETE FROM clew_migrations WHERE number >= 8;
        """
    )
    conn.close()
    with clew.open(db, clock=clock):
        pass
    conn = sqlite3.connect(db)
    conn.executemany(f"INSERT INTO task_records VALUES ({', '.join('?' for _ in kept[0])})", kept)
    conn.commit()
    conn.close()
    with clew.open(db, clock=clock) as mem:
        [found] = mem.archived_tasks()
        assert (found.month, found.task.id) == ("2026-11", task.id)
        assert mem.verify().ok


def test_checking_a_wait_of_a_closed_task_cancels_it(mem: clew.Memory, tmp_path: Path) -> None:
    task = mem.create_task("Ship", ["a"])
    flag = tmp_path / "ran"
    wait = mem.add_wait(task.id, "command", f"touch {flag}")
    mem.update_task(task.id, status="completed")
    [check] = mem.check_waits()
    assert check.outcome == "cancelled" and not flag.exists()
    assert mem.get_wait(wait.id).result == "the task is completed"
