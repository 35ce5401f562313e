"""Statements per public call stay flat as the store grows: no query per task, step,
turn or action on the hot calls (counted with sqlite3's trace callback, never timed)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import clew
from clew.errors import ValidationError
from clew.models import AddStep, RemoveStep

# The statements each call runs now, as upper bounds: a new query on a hot path fails here.
# Counted as SQLite's trace reports them: a statement whose triggers keep the full-text
# index runs again for each, and the index's own statements ("--") are not counted. Prime
# shows three tasks (its default limit): a state and a brief for each.
BOUNDS = {
    "update_task": 10,
    "update_task_step": 8,  # the plan is not read again; one record update
    "record_action": 12,  # a whole id not resolved again, the action not read back
    "finish_action": 10,
    "append_turn": 10,
    "where": 18,
    "state": 12,
    "prime": 87,
    "list_tasks": 1,
    "list_sessions": 1,
    "list_sessions_of_workspace": 3,  # one page, in a read transaction (BEGIN, COMMIT)
}


def _store(path: Path, n: int) -> tuple[clew.Memory, str, str]:
    """A store with n tasks of 5 steps, and n messages, actions and turns on the last."""
    mem = clew.open(path)
    ws = str(path.parent)
    tid = ""
    for i in range(n):
        tid = mem.create_task(f"task {i}", [f"step {j}" for j in range(5)], workspace=ws).id
    for i in range(n):  # sessions of another workspace, older than this one's
        mem.start_session(workspace=f"{ws}-elsewhere-{i}")
    sid = mem.start_session(workspace=ws).id
    for i in range(n):
        mem.update_task(tid, message=f"note {i}")
        mem.record_action(tid, command=f"echo {i}", exit_code=i % 2, stdout="out")
        mem.append_turn(sid, role="user", content=f"hello {i}")
    return mem, tid, sid


def _counts(mem: clew.Memory, tid: str, sid: str) -> dict[str, int]:
    ws = str(Path(mem.path).parent)
    calls: dict[str, Callable[[], object]] = {
        "update_task": lambda: mem.update_task(tid, message="going on"),
        "update_task_step": lambda: mem.update_task(tid, step=2, step_status="active"),
        "record_action": lambda: mem.record_action(tid, command="ls", exit_code=0),
        "finish_action": lambda: mem.finish_action(started, exit_code=0),
        "append_turn": lambda: mem.append_turn(sid, role="assistant", content="ok"),
        "where": lambda: mem.where(tid),
        "state": lambda: mem.state(tid),
        "prime": lambda: mem.prime(ws),
        "list_tasks": lambda: mem.list_tasks(),
        "list_sessions": lambda: mem.list_sessions(limit=1),
        "list_sessions_of_workspace": lambda: mem.list_sessions(ws, limit=1),
    }
    started = mem.record_action(tid, command="sleep 1", status="started").id
    conn = mem._store._conn  # type: ignore[attr-defined]
    counts = {}
    for name, call in calls.items():
        statements: list[str] = []
        conn.set_trace_callback(statements.append)
        try:
            call()
        finally:
            conn.set_trace_callback(None)
        counts[name] = sum(not s.startswith("--") for s in statements)
    return counts


@pytest.fixture(scope="module")
def counts(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, int], dict[str, int]]:
    found = []
    for n in (10, 200):
        folder = tmp_path_factory.mktemp(f"store{n}")
        mem, tid, sid = _store(folder / "clew.db", n)
        with mem:
            found.append(_counts(mem, tid, sid))
    return found[0], found[1]


@pytest.mark.parametrize("call", sorted(BOUNDS))
def test_statements_are_flat_as_data_grows(
    call: str, counts: tuple[dict[str, int], dict[str, int]]
) -> None:
    small, large = counts
    assert small[call] == large[call], (
        f"{call}: {small[call]} statements at 10, {large[call]} at 200"
    )
    assert large[call] <= BOUNDS[call]


# One update_task call's arguments: a message, a step change, fields, a status.
_UPDATES = st.fixed_dictionaries(
    {},
    optional={
        "message": st.sampled_from(["working", "step 1 is done", "done with step 2"]),
        "step": st.integers(1, 3),
        "step_status": st.sampled_from(["pending", "active", "completed", "failed", "skipped"]),
        "step_summary": st.sampled_from(["half way", ""]),
        "active_issue": st.sampled_from(["the registry is down", ""]),
        "depends_on": st.sampled_from([[], [1], [1, 2]]),
        "status": st.sampled_from(["active", "paused", "completed", "failed", "cancelled"]),
        "name": st.sampled_from(["renamed", "deploy"]),
        "next_objective": st.sampled_from(["check the logs"]),
        "metadata": st.fixed_dictionaries({"k": st.integers(0, 3)}),
        "outcome": st.sampled_from(["it worked"]),
    },
)


@pytest.mark.parametrize("progress", ["suggest", "apply"])
@settings(max_examples=20, deadline=None)
@given(updates=st.lists(_UPDATES, min_size=1, max_size=6))
def test_update_task_returns_what_a_fresh_read_returns(
    tmp_path_factory: pytest.TempPathFactory,
    progress: str,
    updates: list[dict[str, object]],
) -> None:
    """The task update_task builds from what it wrote is the task the store holds."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CLEW_PROGRESS", progress)
        mem = clew.open(tmp_path_factory.mktemp("updates") / "clew.db")
    with mem:
        tid = mem.create_task("deploy", ["build", "push", "run"]).id
        for update in updates:
            try:
                returned = mem.update_task(tid, **update)  # type: ignore[arg-type]
            except ValidationError:
                continue  # a transition or step change the tracker refuses: nothing written
            assert returned == mem.get_task(tid)


def test_a_listing_holds_what_reading_each_task_holds(mem: clew.Memory) -> None:
    """Tasks read in one query have the plans each task's own read gives, in order."""
    bare = mem.create_task("no plan")
    replanned = mem.create_task("replanned", ["a", "b", "c"])
    mem.replan(replanned.id, [RemoveStep(2), AddStep("d")])
    mem.create_task("closed", ["x"])
    mem.update_task(bare.id, status="completed")
    listed = mem.list_tasks(include_archived=True)
    assert len(listed) == 3
    assert listed == [mem.get_task(t.id) for t in listed]
    assert [s.title for s in mem.get_task(replanned.id).plan] == ["a", "c", "d"]
    assert mem.list_tasks("completed") == [mem.get_task(bare.id)]


def test_where_reads_a_tasks_messages_once(mem: clew.Memory) -> None:
    """The brief's inference and stuck detection share one read of the newest messages."""
    task = mem.create_task("deploy", ["build"])
    for i in range(12):
        mem.update_task(task.id, message=f"note {i}")
    statements: list[str] = []
    conn = mem._store._conn  # type: ignore[attr-defined]
    conn.set_trace_callback(statements.append)
    try:
        mem.where(task.id)
    finally:
        conn.set_trace_callback(None)
    # (The task record's entity extraction reads message texts of its own, by its own limit.)
    read = "SELECT id, space, task_id, role, type, content, created_at FROM task_messages"
    assert sum(read in s for s in statements) == 1


def test_sessions_of_a_workspace_are_found_across_pages(tmp_path: Path) -> None:
    """A workspace is matched by its real path a page of sessions at a time: every match,
    newest first, wherever the pages split them."""
    here = tmp_path / "project"
    (here / "sub").mkdir(parents=True)
    with clew.open(tmp_path / "clew.db") as mem:
        mine = []
        for i in range(130):
            if i % 7 == 0:
                mine.append(mem.start_session(workspace=str(here / "sub" if i % 2 else here)).id)
            else:
                mem.start_session(workspace=str(tmp_path / f"other{i}"))
        mine.reverse()  # newest first
        assert [s.id for s in mem.list_sessions(str(here))] == mine
        for limit in (1, 3, 19, 200):
            assert [s.id for s in mem.list_sessions(str(here), limit=limit)] == mine[:limit]


def test_a_failed_command_on_a_moving_task_reads_no_messages(mem: clew.Memory) -> None:
    """Stuck detection after a failure reads the messages only when the task looks idle
    without them: a task whose step just moved is not, and the repeated failure is still
    alerted in the same write."""
    task = mem.create_task("deploy", ["build", "ship"])
    mem.update_task(task.id, message="starting", step=1, step_status="active")
    statements: list[str] = []
    conn = mem._store._conn  # type: ignore[attr-defined]
    conn.set_trace_callback(statements.append)
    try:
        for _ in range(3):
            mem.record_action(task.id, command="make", exit_code=2, stderr="E: no rule\n")
    finally:
        conn.set_trace_callback(None)
    read = "SELECT id, space, task_id, role, type, content, created_at FROM task_messages"
    assert not any(read in s for s in statements)
    assert [c.reason for c in mem.stuck(task.id)] == ["repeated_failure"]
    assert mem.list_messages(task.id, limit=1)[0].type.value == "stuck"  # alerted at once


def test_a_failure_after_a_success_reads_no_task(mem: clew.Memory) -> None:
    """A task whose command succeeded within the idle time, with no error come back, is not
    stuck: a failed command's write reads its attempts, not the task."""
    task = mem.create_task("deploy", ["build"])
    mem.record_action(task.id, command="make", exit_code=0)
    statements: list[str] = []
    conn = mem._store._conn  # type: ignore[attr-defined]
    conn.set_trace_callback(statements.append)
    try:
        mem.record_action(task.id, command="make test", exit_code=2, stderr="E: no rule\n")
    finally:
        conn.set_trace_callback(None)
    assert not any(s.startswith("SELECT t.id, t.space, t.name") for s in statements)
    assert any("fingerprint, created_at, updated_at FROM actions" in s for s in statements)
