"""Several writers on one store file: nothing lost, no "database is locked", typed busy errors.

Writers run as separate processes (and threads) that start together; a writer that
holds the lock past a short busy timeout makes a write fail with StoreBusyError,
which leaves the store untouched, and the CLI reports it in one line with exit 2.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import clew
from clew.models import AddStep
from clew.store.sqlite import store as sqlite_store
from tests.conftest import run_in_lockstep

WORKERS = 3
MESSAGES = 200
ACTIONS = 50

# A writer: waits for "go" so that all start at once, then alternates between its own task
# and the shared one. Every message and action carries "<worker>:<n>" so the parent can
# check each one and the order it was committed in. Prints what it wrote as JSON.
WRITER = r"""
import json, sys
import clew

db, worker, own, shared = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
messages, actions = int(sys.argv[5]), int(sys.argv[6])
every = messages // actions
written = {"messages": [], "actions": []}
with clew.open(db) as mem:  # the default busy timeout
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    sys.stdin.readline()
    for n in range(messages):
        task = own if n % 2 else shared
        text = f"{worker}:{n}"
        if n % 3 == 0:  # a read-validate-write call: message and step change together
            mem.update_task(task, message=text, step=1 + n % 2, step_summary=text)
        else:
            mem.add_message(task, text)
        written["messages"].append([task, text])
        if n % every == 0:
            action = mem.record_action(
                own if n % (2 * every) else shared,
                command=f"run {text}",
                exit_code=n % 2,
                stdout=f"out {text}\n" * (n + 1),
            )
            written["actions"].append([action.id, text, n])
print(json.dumps(written))
"""


def start_writers(db: Path, count: int, own: list[str], shared: str) -> list[dict[str, Any]]:
    """Run `count` writer processes that start writing at the same moment."""
    counts = [str(MESSAGES), str(ACTIONS)]
    results = run_in_lockstep(
        [[WRITER, str(db), f"w{i}", own[i], shared, *counts] for i in range(count)]
    )
    for code, _, err in results:
        assert code == 0, err
        assert "locked" not in err and "Traceback" not in err
    return [json.loads(out) for _, out, _ in results]


def test_processes_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    db = tmp_path / "shared.db"
    with clew.open(db) as mem:
        shared = mem.create_task("Shared", ["One", "Two"]).id
        own = [mem.create_task(f"Own {i}", ["One", "Two"]).id for i in range(WORKERS)]
        events_before = len(mem.journal())

    written = start_writers(db, WORKERS, own, shared)

    with clew.open(db) as mem:
        report = mem.verify()
        assert report.ok, report.differences
        expected: Counter[tuple[str, str]] = Counter()
        for result in written:
            assert len(result["messages"]) == MESSAGES
            assert len(result["actions"]) == ACTIONS
            expected.update((task, text) for task, text in result["messages"])
        stored = Counter(
            (task, m.content) for task in [shared, *own] for m in mem.list_messages(task)
        )
        assert stored == expected
        for result in written:
            for action_id, text, n in result["actions"]:
                action = mem.get_action(action_id)
                assert action.command == f"run {text}"
                assert action.stdout == f"out {text}\n" * (n + 1)
        all_actions = [a for task in [shared, *own] for a in mem.list_actions(task)]
        assert len(all_actions) == WORKERS * ACTIONS

        # Each worker's writes were sequential, so the journal has them in that order,
        # interleaved with the others' but never reordered or duplicated.
        events = mem.journal(after=0)
        step_updates = MESSAGES // 3 + 1
        assert len(events) == events_before + WORKERS * (MESSAGES + step_updates + ACTIONS)
        order: dict[str, list[int]] = {}
        for event in events:
            if event.type == "message.added":
                worker, n = event.data["message"]["content"].split(":")
                order.setdefault(worker, []).append(int(n))
        assert order == {f"w{i}": list(range(MESSAGES)) for i in range(WORKERS)}
        seqs = [e.seq for e in events]
        assert seqs == sorted(set(seqs))


def test_threads_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    db = tmp_path / "threads.db"
    with clew.open(db) as setup:
        task_id = setup.create_task("Threads", ["One"]).id
    shared_mem = clew.open(db)
    errors: list[BaseException] = []
    start = threading.Barrier(4, timeout=30)

    def write(name: str, own_connection: bool) -> None:
        try:
            mem = clew.open(db) if own_connection else shared_mem
            start.wait()
            for n in range(50):
                mem.add_message(task_id, f"{name}:{n}")
                mem.record_action(task_id, command=f"{name}:{n}", exit_code=0)
            if own_connection:
                mem.close()
        except BaseException as exc:  # reported by the main thread below
            errors.append(exc)

    threads = [
        threading.Thread(target=write, args=(f"t{i}", i % 2 == 0)) for i in range(4)
    ]  # two with their own connection, two sharing one Memory
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    shared_mem.close()
    assert not errors, errors
    with clew.open(db) as mem:
        contents = sorted(m.content for m in mem.list_messages(task_id))
        assert contents == sorted(f"t{i}:{n}" for i in range(4) for n in range(50))
        assert len(mem.list_actions(task_id)) == 200
        assert mem.verify().ok


def test_a_store_being_created_by_another_process_opens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two agents start at once on a fresh store: while one is opening it, the other
    creates the schema. The late one must use the store, not call it foreign."""
    db = tmp_path / "fresh.db"
    real_connect = sqlite_store.connect
    raced: list[bool] = []

    class OtherProcessMigratesInBetween:
        """Proxy a connection; right after its first failed query (the schema is not
        there yet), the other opener creates the whole schema."""

        def __init__(self, conn: sqlite3.Connection) -> None:
            self._conn = conn

        def execute(self, sql: str, *params: Any) -> sqlite3.Cursor:
            try:
                return self._conn.execute(sql, *params)
            except sqlite3.OperationalError:
                if not raced:
                    raced.append(True)
                    clew.open(db).close()  # the other process opens (and migrates) it
                raise

        def __getattr__(self, name: str) -> Any:
            return getattr(self._conn, name)

    def racing_connect(path: str, busy_timeout: float = 5.0, **options: Any) -> Any:
        return OtherProcessMigratesInBetween(real_connect(path, busy_timeout, **options))

    monkeypatch.setattr(sqlite_store, "connect", racing_connect)
    with clew.open(db) as mem:
        assert raced, "the interleaving under test happened"
        task = mem.create_task("First run", ["Start"])
        assert mem.get_task(task.id).name == "First run"
        assert mem.verify().ok


# -- a writer holding the lock past the busy timeout ----------------------------------------

LOCK_HOLDER = r"""
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
conn.execute("INSERT INTO clew_migrations VALUES (999, 'uncommitted', 'never', NULL)")
sys.stdout.write("locked\n")
sys.stdout.flush()
sys.stdin.read()  # hold the write lock until the parent closes our stdin
conn.execute("ROLLBACK")
"""


@contextlib.contextmanager
def write_lock_held(db: Path) -> Iterator[None]:
    """Hold the store's write lock from another process for the duration of the block."""
    with subprocess.Popen(
        [sys.executable, "-c", LOCK_HOLDER, str(db)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as holder:
        assert holder.stdout is not None and holder.stdin is not None
        try:
            assert holder.stdout.readline() == "locked\n"
            yield
        finally:
            holder.stdin.close()
            holder.wait(timeout=30)
    assert holder.returncode == 0


def snapshot(mem: clew.Memory) -> tuple[Any, ...]:
    tasks = mem.list_tasks(include_archived=True)
    return (
        mem.journal(),
        tasks,
        [(mem.list_messages(t.id), mem.list_actions(t.id)) for t in tasks],
    )


@pytest.fixture
def busy_store(tmp_path: Path) -> tuple[Path, str, str]:
    db = tmp_path / "busy.db"
    with clew.open(db) as mem:
        task = mem.create_task("Busy", ["One", "Two"])
        action = mem.record_action(task.id, command="make", exit_code=0, status="started")
        mem.add_message(task.id, "before the lock")
    return db, task.id, action.id


def test_a_write_past_the_busy_timeout_raises_store_busy(
    busy_store: tuple[Path, str, str],
) -> None:
    db, task_id, action_id = busy_store
    with clew.open(db, busy_timeout=0.2) as mem:
        before = snapshot(mem)
        writes = [
            lambda: mem.add_message(task_id, "blocked"),
            lambda: mem.update_task(task_id, message="blocked", step=1, step_status="active"),
            lambda: mem.record_action(task_id, command="blocked", exit_code=0),
            lambda: mem.finish_action(action_id, exit_code=0),
            lambda: mem.replan(task_id, [AddStep("blocked")]),
            lambda: mem.create_task("blocked"),
        ]
        with write_lock_held(db):
            # Readers are not blocked by a writer (WAL).
            assert mem.get_task(task_id).name == "Busy"
            for write in writes:
                started = time.monotonic()
                with pytest.raises(clew.StoreBusyError) as info:
                    write()
                # The short timeout applies, not the 5 s default.
                assert time.monotonic() - started < 4
                assert isinstance(info.value, clew.ClewError)
                assert "lock" in str(info.value) and "\n" not in str(info.value)
        assert snapshot(mem) == before
        assert mem.verify().ok
        # Once the lock is released the same Memory writes again.
        assert mem.add_message(task_id, "after the lock").content == "after the lock"
    with clew.open(db) as mem:
        assert [m.content for m in mem.list_messages(task_id)] == [
            "after the lock",
            "before the lock",
        ]


# The CLI opens stores with the default 5 s busy timeout; this runs it in a real process
# with a short one, so the test does not wait 5 s.
def test_cli_reports_a_busy_store_in_one_line(busy_store: tuple[Path, str, str]) -> None:
    db, task_id, _ = busy_store
    with clew.open(db) as mem:
        before = snapshot(mem)
    with write_lock_held(db):
        for args in (
            ["task", "update", task_id, "-m", "blocked"],
            ["task", "action", task_id, "-c", "blocked", "--exit-code", "0"],
            ["task", "new", "blocked"],
        ):
            done = subprocess.run(
                [sys.executable, "-m", "clew", "--busy-timeout", "0.2", "--db", str(db), *args],
                capture_output=True,
                text=True,
                timeout=30,
            )
            assert done.returncode == 2, done.stderr
            assert done.stdout == ""
            lines = done.stderr.splitlines()
            assert len(lines) == 1, done.stderr
            assert lines[0].startswith("clew: error:") and "lock" in lines[0]
            assert "Traceback" not in done.stderr
    with clew.open(db) as mem:
        assert snapshot(mem) == before
        assert mem.verify().ok
