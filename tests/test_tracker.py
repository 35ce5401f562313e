"""The task tracker through the Python API: tasks, steps, replans, actions, messages."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

import pytest

import clew
from clew import (
    AddStep,
    InvalidTransitionError,
    MoveStep,
    RemoveStep,
    RenameStep,
    StepStatus,
    TaskStatus,
    ValidationError,
)
from clew.models import TASK_TRANSITIONS
from tests.conftest import FakeClock, Result, new_space


def test_create_task_stores_fields_and_numbered_plan(mem: clew.Memory) -> None:
    task = mem.create_task(
        "Deploy", ["Build", "Push", "Run"], goal="ship", workspace="/srv", metadata={"p": 1}
    )
    assert task.status is TaskStatus.ACTIVE
    assert (task.name, task.goal, task.workspace, task.metadata) == (
        "Deploy",
        "ship",
        "/srv",
        {"p": 1},
    )
    assert [(s.ordinal, s.title, s.status) for s in task.plan] == [
        (1, "Build", StepStatus.PENDING),
        (2, "Push", StepStatus.PENDING),
        (3, "Run", StepStatus.PENDING),
    ]
    assert task.plan_version == 1 and not task.archived
    assert mem.get_task(task.id) == task


def test_records_survive_closing_and_reopening(db: Path, clock: FakeClock) -> None:
    with clew.open(db, clock=clock) as first:
        task = first.create_task("Keep me", ["a"])
        first.update_task(task.id, message="hello", step=1, step_status="active")
    with clew.open(db, clock=clock) as second:
        again = second.get_task(task.id)
        assert again.plan[0].status is StepStatus.ACTIVE
        assert [m.content for m in second.list_messages(task.id)] == ["hello"]


def test_update_task_is_one_correlated_atomic_call(mem: clew.Memory) -> None:
    task = mem.create_task("T", ["a", "b"])
    mem.update_task(task.id, message="a done", step=1, step_status="completed", status="paused")
    events = mem.journal(task_id=task.id)[1:]
    assert [e.type for e in events] == [
        "message.added",
        "step.updated",
        "job.queued",  # the finished step's extraction, queued with the change
        "task.status_changed",
    ]
    assert len({e.correlation_id for e in events}) == 1
    assert events[0].data["message"]["type"] == "progress"  # a message about a step is progress
    after = mem.get_task(task.id)
    assert after.status is TaskStatus.PAUSED and after.plan[0].status is StepStatus.COMPLETED


def test_failed_part_of_an_update_writes_nothing(mem: clew.Memory) -> None:
    task = mem.create_task("T", ["a"])
    before = len(mem.journal())
    with pytest.raises(ValidationError):
        mem.update_task(task.id, message="looks fine", step=1, step_status="nonsense")
    with pytest.raises(ValidationError, match="out of range"):
        mem.update_task(task.id, message="looks fine", step=2, step_status="completed")
    assert len(mem.journal()) == before
    assert mem.list_messages(task.id) == []


def test_step_timing_is_stamped_from_the_clock(mem: clew.Memory, clock: FakeClock) -> None:
    task = mem.create_task("T", ["a"])
    mem.update_step(task.id, 1, status="active")
    clock.advance(90)
    step = mem.update_step(task.id, 1, status="completed", summary="did a")
    assert step.duration_seconds == 90.0
    assert step.started_at == "2026-11-22T09:00:00.000000Z"
    assert step.completed_at == "2026-11-22T09:01:30.000000Z"
    back = mem.update_step(task.id, 1, status="pending")
    assert (back.started_at, back.completed_at, back.duration_seconds) == (None, None, None)
    assert back.summary == "did a"


def test_step_fields_and_issue_clearing(mem: clew.Memory) -> None:
    task = mem.create_task("T", ["a", "b"])
    step = mem.update_step(task.id, 2, active_issue="blocked on ENUM mapping", title="b2")
    assert (step.title, step.active_issue) == ("b2", "blocked on ENUM mapping")
    assert mem.update_step(task.id, step.id[:6], active_issue="").active_issue is None


def test_depends_on_is_validated(mem: clew.Memory) -> None:
    task = mem.create_task("T", ["a", "b", "c"])
    step = mem.update_step(task.id, 3, depends_on=[1, 2])
    assert step.depends_on == (task.plan[0].id, task.plan[1].id)
    with pytest.raises(ValidationError, match="itself"):
        mem.update_step(task.id, 2, depends_on=[2])
    with pytest.raises(ValidationError, match="cycle"):
        mem.update_step(task.id, 1, depends_on=[3])


@pytest.mark.parametrize(("start", "target"), list(itertools.product(TaskStatus, TaskStatus)))
def test_task_status_transitions_follow_the_table(
    mem: clew.Memory, start: TaskStatus, target: TaskStatus
) -> None:
    task = mem.create_task("T")
    route = {
        TaskStatus.ACTIVE: [],
        TaskStatus.PAUSED: ["paused"],
        TaskStatus.COMPLETED: ["completed"],
        TaskStatus.FAILED: ["failed"],
        TaskStatus.CANCELLED: ["cancelled"],
    }[start]
    for status in route:
        mem.update_task(task.id, status=status)
    if target is start:
        assert mem.update_task(task.id, status=target).status is start  # a no-op, not an error
    elif target in TASK_TRANSITIONS[start]:
        assert mem.update_task(task.id, status=target).status is target
    else:
        with pytest.raises(InvalidTransitionError, match=f"from {start.value} to {target.value}"):
            mem.update_task(task.id, status=target)
        assert mem.get_task(task.id).status is start


def test_completed_at_follows_closing_and_reopening(mem: clew.Memory, clock: FakeClock) -> None:
    task = mem.create_task("T")
    clock.advance(5)
    done = mem.update_task(task.id, status="completed")
    assert done.completed_at == "2026-11-22T09:00:05.000000Z"
    assert mem.update_task(task.id, status="active").completed_at is None


def test_closed_task_takes_no_work_until_reopened(mem: clew.Memory) -> None:
    task = mem.create_task("T", ["a"])
    mem.update_task(task.id, status="completed")
    with pytest.raises(InvalidTransitionError, match="reopen"):
        mem.update_step(task.id, 1, status="completed")
    with pytest.raises(InvalidTransitionError):
        mem.record_action(task.id, command="ls", exit_code=0)
    # Reopening and finishing the step in one call is allowed.
    again = mem.update_task(task.id, status="active", step=1, step_status="completed")
    assert again.plan[0].status is StepStatus.COMPLETED


def test_several_tasks_active_at_once_and_listing(mem: clew.Memory, clock: FakeClock) -> None:
    a = mem.create_task("A")
    clock.advance(1)
    b = mem.create_task("B")
    clock.advance(1)
    c = mem.create_task("C")
    mem.update_task(c.id, status="paused")
    assert [t.name for t in mem.list_tasks("active")] == ["B", "A"]
    assert [t.name for t in mem.list_tasks(["active", "paused"])] == ["C", "B", "A"]
    mem.archive_task(a.id)
    assert [t.name for t in mem.list_tasks()] == ["C", "B"]
    assert {t.name for t in mem.list_tasks(include_archived=True)} == {"A", "B", "C"}
    assert mem.archive_task(a.id, archived=False).archived is False
    assert b.id in {t.id for t in mem.list_tasks()}


def test_replan_applies_ops_in_order_as_one_version(mem: clew.Memory) -> None:
    task = mem.create_task("T", ["a", "b", "c"])
    mem.update_step(task.id, 1, status="completed")
    a, b, c = task.plan
    new = mem.replan(
        task.id,
        [
            AddStep("d"),
            AddStep("first", position=1),
            RemoveStep(3),
            MoveStep(4, 2),
            RenameStep(1, "zero"),
        ],
        reason="learned more",
    )
    assert new.plan_version == 2 and new.last_replanned_at is not None
    assert [s.title for s in new.plan] == ["zero", "d", "a", "c"]
    assert [s.ordinal for s in new.plan] == [1, 2, 3, 4]
    kept = {s.id: s for s in new.plan}
    assert kept[a.id].status is StepStatus.COMPLETED  # surviving steps keep status and id
    assert c.id in kept and b.id not in kept
    event = mem.journal(task_id=task.id)[-1]
    assert event.type == "plan.revised"
    assert [s["title"] for s in event.data["old_plan"]] == ["a", "b", "c"]
    assert event.data["removed"] == [b.id] and event.data["reason"] == "learned more"


def test_removed_step_keeps_its_record_and_actions(mem: clew.Memory) -> None:
    task = mem.create_task("T", ["a", "b"])
    action = mem.record_action(task.id, command="make b", exit_code=2, step=2)
    mem.replan(task.id, [RemoveStep(2)])
    assert [s.title for s in mem.get_task(task.id).plan] == ["a"]
    (gone,) = mem.removed_steps(task.id)
    assert gone.title == "b" and gone.removed and gone.ordinal is None
    assert mem.get_action(action.id).plan_item_id == gone.id
    assert mem.verify().ok


def test_replan_refuses_bad_ops_and_changes_nothing(mem: clew.Memory) -> None:
    task = mem.create_task("T", ["a", "b"])
    for ops in ([], [RemoveStep(3)], [MoveStep(1, 5)], [AddStep("")], [AddStep("x", position=0)]):
        with pytest.raises(ValidationError):
            mem.replan(task.id, ops)
    assert mem.get_task(task.id) == task


def test_removing_a_step_drops_dependencies_on_it(mem: clew.Memory) -> None:
    task = mem.create_task("T", ["a", "b", "c"])
    mem.update_step(task.id, 3, depends_on=[1, 2])
    new = mem.replan(task.id, [RemoveStep(1)])
    assert new.plan[1].depends_on == (task.plan[1].id,)


def test_record_action_keeps_command_output_verbatim(mem: clew.Memory) -> None:
    task = mem.create_task("T", ["build"])
    ok = mem.record_action(
        task.id,
        command="make",
        cwd="/src",
        exit_code=0,
        duration_seconds=1.5,
        stdout="line 1\r\nline 2\n\x00tail",
        stderr=b"\xff\xfe not utf-8",
        input={"argv": ["make"]},
        output={"targets": 3},
        step=1,
    )
    again = mem.get_action(ok.id)
    assert again == ok
    assert again.stdout == "line 1\r\nline 2\n\x00tail"
    assert again.stderr == b"\xff\xfe not utf-8"
    assert (again.status.value, again.exit_code, again.cwd) == ("completed", 0, "/src")
    assert (again.input, again.output) == ({"argv": ["make"]}, {"targets": 3})
    assert again.plan_item_id == task.plan[0].id
    failed = mem.record_action(task.id, command="make test", exit_code=2)
    assert failed.status.value == "failed" and failed.summary == "make test"
    assert (
        mem.record_action(task.id, type="reasoning", summary="thought").status.value == "completed"
    )


def test_started_action_is_finished_once(mem: clew.Memory) -> None:
    task = mem.create_task("T")
    started = mem.record_action(task.id, command="pytest", status="started")
    assert started.exit_code is None
    done = mem.finish_action(started.id, exit_code=1, duration_seconds=3, stderr="1 failed")
    assert (done.status.value, done.exit_code, done.stderr) == ("failed", 1, "1 failed")
    with pytest.raises(ValidationError, match="already failed"):
        mem.finish_action(started.id, exit_code=0)


def test_action_logs_and_listing_by_step(mem: clew.Memory, clock: FakeClock) -> None:
    task = mem.create_task("T", ["a", "b"])
    first = mem.record_action(task.id, command="one", exit_code=0, step=1)
    clock.advance(1)
    second = mem.record_action(task.id, command="two", exit_code=0, step=2)
    mem.log_action(first.id, "stage 1 ok")
    mem.log_action(first.id, "stage 2 slow", type="warning")
    assert [(x.type, x.content) for x in mem.list_action_logs(first.id)] == [
        ("info", "stage 1 ok"),
        ("warning", "stage 2 slow"),
    ]
    assert [a.id for a in mem.list_actions(task.id)] == [second.id, first.id]
    assert [a.id for a in mem.list_actions(task.id, step=1)] == [first.id]
    assert [a.id for a in mem.list_actions(task.id, limit=1)] == [second.id]


def test_messages_have_roles_and_types(mem: clew.Memory, clock: FakeClock) -> None:
    task = mem.create_task("T")
    mem.add_message(task.id, "please use pgloader", role="user")
    clock.advance(1)
    mem.add_message(task.id, "waiting for CI", type="wait")
    got = mem.list_messages(task.id)
    assert [(m.role.value, m.type.value, m.content) for m in got] == [
        ("agent", "wait", "waiting for CI"),
        ("user", "text", "please use pgloader"),
    ]
    with pytest.raises(ValidationError, match="not one of"):
        mem.add_message(task.id, "x", role="robot")


def test_caller_correlation_id_groups_calls(mem: clew.Memory) -> None:
    with mem.correlation("trace-42") as cid:
        task = mem.create_task("T", ["a"])
        mem.update_task(task.id, step=1, step_status="active")
    assert cid == "trace-42"
    assert {e.correlation_id for e in mem.journal(task_id=task.id)} == {"trace-42"}
    mem.add_message(task.id, "later")
    assert mem.journal(task_id=task.id)[-1].correlation_id != "trace-42"


def test_ids_resolve_from_any_unambiguous_prefix(mem: clew.Memory) -> None:
    task = mem.create_task("T")
    for length in range(len(task.id), 0, -1):
        try:
            assert mem.get_task(task.id[:length]).id == task.id
        except clew.AmbiguousIdError:  # pragma: no cover - only with other tasks
            raise
    assert mem.get_task(task.id.upper()).id == task.id


def test_spaces_share_a_file_but_not_records(db: Path, clock: FakeClock, backend: str) -> None:
    one, two = new_space(), new_space()
    with clew.open(db, space=one, clock=clock) as alpha, clew.open(db, space=two) as beta:
        task = alpha.create_task("alpha's")
        beta.create_task("beta's")
        assert [t.name for t in alpha.list_tasks()] == ["alpha's"]
        with pytest.raises(clew.NotFoundError):
            beta.get_task(task.id)
        assert {e.space for e in alpha.journal()} == {one}
        assert alpha.verify().ok and alpha.verify().rows["tasks"] == 1  # verify checks its space
        if backend == "sqlite":  # or, asked, the whole store
            assert alpha.verify(all_spaces=True).rows["tasks"] == 2
        # On PostgreSQL the worker's database holds every test's spaces, so a whole-store verify
        # here replayed the whole session's journal: test_postgres.py checks it in a database
        # of its own (test_verify_all_spaces_replays_every_space).


def test_where_answers_from_the_records(mem: clew.Memory, clock: FakeClock) -> None:
    task = mem.create_task("Deploy", ["Build", "Push", "SSH", "Pull", "Verify", "Announce"])
    for n in (1, 2, 3):
        mem.update_task(task.id, step=n, step_status="completed", message=f"step {n} done")
    mem.update_task(task.id, step=4, step_status="active")
    clock.advance(120)
    mem.record_action(task.id, command="docker pull x", exit_code=1, stderr="denied\n")
    clock.advance(60)
    brief = mem.where(task.id)
    assert [s.number for s in brief.completed] == [1, 2, 3]
    assert brief.current is not None and brief.current.number == 4
    assert [s.number for s in brief.next] == [5, 6]
    assert "Completed steps 1-3 of 6" in brief.text
    assert "Current: step 4 — Pull (active, started 3m ago)." in brief.text
    assert "`docker pull x` exited 1 (1m ago): denied" in brief.text
    assert "Next: step 5 — Verify; step 6 — Announce." in brief.text
    assert brief.last_update == "step 3 done"


def test_where_without_active_step_names_the_next_one(mem: clew.Memory) -> None:
    task = mem.create_task("T", ["a", "b"])
    mem.update_step(task.id, 1, status="completed")
    assert "next up is step 2 — b" in mem.where(task.id).text
    mem.update_step(task.id, 2, status="skipped")
    assert "Every step is finished." in mem.where(task.id).text


def test_tidy_pauses_idle_tasks_and_archives_long_closed_ones(
    mem: clew.Memory, clock: FakeClock
) -> None:
    idle = mem.create_task("idle")
    done = mem.create_task("done")
    mem.update_task(done.id, status="completed")
    clock.advance(2 * 86400)
    fresh = mem.create_task("fresh")
    assert mem.tidy(dry_run=True) == [(idle.id, "paused")]
    assert mem.get_task(idle.id).status is TaskStatus.ACTIVE  # a dry run changes nothing
    assert mem.tidy() == [(idle.id, "paused")]
    clock.advance(6 * 86400)
    assert sorted(mem.tidy()) == sorted([(done.id, "archived"), (fresh.id, "paused")])
    assert mem.get_task(done.id).archived
    assert mem.tidy() == []
    assert mem.tidy(pause_idle_after=None, archive_closed_after=None) == []
    assert mem.verify().ok


def test_a_whole_id_of_no_task_is_reported_as_a_prefix_is(mem: clew.Memory) -> None:
    # update_task, record_action, where and state take a whole id without resolving it;
    # a task that is not there reads as it did when the id was resolved first.
    with pytest.raises(clew.NotFoundError) as whole:
        mem.update_task("0123456789", message="hello")
    with pytest.raises(clew.NotFoundError) as prefix:
        mem.update_task("012345678", message="hello")
    assert str(whole.value) == str(prefix.value).replace("012345678", "0123456789")
    assert "clew task list" in str(whole.value)
    for call in (
        lambda: mem.record_action("0123456789", command="ls", exit_code=0),
        lambda: mem.where("0123456789"),
        lambda: mem.state("0123456789"),
    ):
        with pytest.raises(clew.NotFoundError, match="no task matches '0123456789'; list"):
            call()


@pytest.mark.parametrize(
    "fields",
    [
        {"command": "pytest -q", "exit_code": 1, "stdout": "1 failed", "stderr": "E boom"},
        {"command": "make", "exit_code": 0, "duration_seconds": 3, "cwd": "/srv", "step": 2},
        {"summary": "read the docs", "status": "started", "tool": "browser"},
        {"command": "cat x", "exit_code": 0, "stdout": b"\xff\xfe raw", "stderr": b"ok"},
        {
            "command": "du",
            "exit_code": 0,
            "started_at": "2026-11-20T10:00",
            "ended_at": "2026-11-20T10:00:02.5",
            "cpu_seconds": 1,
            "memory_mb": 12.5,
        },
        {"command": "api", "exit_code": 0, "input": {"q": [1, 2]}, "output": {"ok": True}},
    ],
)
def test_record_action_returns_what_a_fresh_read_returns(
    mem: clew.Memory, fields: dict[str, object]
) -> None:
    # record_action builds the action it returns from what it wrote (no read back).
    task = mem.create_task("Deploy", ["Build", "Push"])
    returned = mem.record_action(task.id, **fields)  # type: ignore[arg-type]
    fresh = mem.get_action(returned.id)
    assert returned == fresh
    assert [type(v) for v in returned] == [type(v) for v in fresh]


def test_a_step_alone_marks_it_active_at_every_door(
    mem: clew.Memory, cli: Callable[..., Result]
) -> None:
    # One meaning, defined once (Memory.update_task): the CLI once meant "active" by a bare
    # `--step N` while the API refused the same call.
    from clew.tools.registry import run

    plan = ["a", "b", "c", "d"]
    api, shell, tool = (mem.create_task(name, plan) for name in ("api", "cli", "tool"))
    mem.update_task(api.id, step=2)
    assert cli("task", "update", shell.id, "--step", "2").code == 0
    run(mem, "task_update", {"task_id": tool.id, "step": 2})
    for task in (api, shell, tool):
        assert mem.get_task(task.id).plan[1].status is clew.StepStatus.ACTIVE
