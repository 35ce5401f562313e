"""Stuck detection: a task with no progress for a while, or the same failing command again
and again, is flagged in the state and the brief with the evidence and a suggestion; alerts
(system messages) respect a cooldown; a waiting task is not stuck; settings and the CLI."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import clew
from clew.core.tokens import counter
from clew.state.brief import BRIEF_BUDGET, build_brief
from clew.tasks.stuck import NO_PROGRESS, REPEATED_FAILURE, Stuck
from tests.conftest import FakeClock, Result
from tests.test_state import STAMP, any_text, exact_tokens, task_of

TRACEBACK = (
    'Traceback (most recent call last):\n  File "t.py", line 3\n'
    "ModuleNotFoundError: No module named 'numpy'\n"
)
MINUTE = 60


def alerts(mem: clew.Memory, task_id: str) -> list[clew.Message]:
    return [m for m in mem.list_messages(task_id) if m.type is clew.MessageType.STUCK]


def fail(mem: clew.Memory, task_id: str, clock: FakeClock, command: str = "pytest -x") -> None:
    clock.advance(MINUTE)
    mem.record_action(task_id, command=command, exit_code=1, stderr=TRACEBACK)


def test_no_progress_for_the_configured_time_is_stuck(mem: clew.Memory, clock: FakeClock) -> None:
    task = mem.create_task("Deploy", ["Build", "Push"])
    mem.update_task(task.id, step=1, step_status="active")
    clock.advance(29 * MINUTE)
    assert mem.stuck(task.id) == ()
    assert "stuck" not in yaml.safe_load(mem.state(task.id).text)
    clock.advance(2 * MINUTE)
    (condition,) = mem.stuck(task.id)
    assert (
        condition.reason == NO_PROGRESS
        and condition.since == mem.get_task(task.id).step(1).started_at
    )
    assert "no progress for 31m" in condition.evidence
    state = yaml.safe_load(mem.state(task.id).text)
    assert state["stuck"][0]["reason"] == NO_PROGRESS
    assert (
        "no progress for 31m" in state["stuck"][0]["evidence"] and state["stuck"][0]["suggestion"]
    )
    brief = mem.where(task.id)
    assert "Stuck: no progress for 31m" in brief.text and "Try: report where" in brief.text
    assert brief.stuck == (condition,)
    # Progress (a message) clears it; stuck alerts themselves are not progress.
    mem.check_stuck(task.id)
    assert mem.stuck(task.id) != ()
    mem.update_task(task.id, message="still building, the cache was cold")
    assert mem.stuck(task.id) == ()


def test_a_waiting_task_is_not_stuck_for_want_of_progress(
    mem: clew.Memory, clock: FakeClock
) -> None:
    task = mem.create_task("Deploy", ["Build", "Wait for CI"])
    wait = mem.record_action(task.id, type="wait", summary="CI pipeline #412", status="started")
    clock.advance(3 * 60 * MINUTE)
    assert mem.waiting(task.id) and mem.stuck(task.id) == ()
    mem.finish_action(wait.id, status="failed", summary="CI timed out")
    clock.advance(31 * MINUTE)
    assert not mem.waiting(task.id)
    assert [c.reason for c in mem.stuck(task.id)] == [NO_PROGRESS]


def test_a_task_with_a_smart_wait_is_not_stuck_for_want_of_progress(
    mem: clew.Memory, clock: FakeClock
) -> None:
    task = mem.create_task("Deploy", ["Build", "Wait for the review"])
    wait = mem.add_wait(task.id, "manual", "the review of PR 12 is approved")
    clock.advance(3 * 60 * MINUTE)
    assert mem.waiting(task.id) and mem.stuck(task.id) == ()
    mem.cancel_wait(wait.id)
    clock.advance(31 * MINUTE)
    assert not mem.waiting(task.id)
    assert [c.reason for c in mem.stuck(task.id)] == [NO_PROGRESS]


def test_only_active_tasks_are_stuck_and_a_resumed_one_starts_afresh(
    mem: clew.Memory, clock: FakeClock
) -> None:
    task = mem.create_task("T", ["a"])
    mem.update_task(task.id, status="paused")
    clock.advance(5 * 60 * MINUTE)
    assert mem.stuck(task.id) == () and mem.check_stuck() == []
    mem.update_task(task.id, status="active")
    assert mem.stuck(task.id) == ()
    clock.advance(31 * MINUTE)
    assert [c.reason for c in mem.stuck(task.id)] == [NO_PROGRESS]


def test_the_same_failing_command_again_is_stuck_and_alerted_once(
    mem: clew.Memory, clock: FakeClock
) -> None:
    task = mem.create_task("Test", ["Fix the imports", "Ship"])
    mem.update_task(task.id, step=1, step_status="active")
    fail(mem, task.id, clock)
    fail(mem, task.id, clock)
    assert mem.stuck(task.id) == () and alerts(mem, task.id) == []
    first = mem.list_actions(task.id)[-1].created_at
    fail(mem, task.id, clock)  # the third: stuck, and the alert goes out in the same write
    (condition,) = mem.stuck(task.id)
    assert condition.reason == REPEATED_FAILURE and condition.times == 3
    assert condition.command == "pytest -x" and condition.since == first
    assert "`pytest -x` failed 3 times with the same error since" in condition.evidence
    assert f"clew task output {mem.list_actions(task.id)[0].id} --stderr" in condition.suggestion
    (alert,) = alerts(mem, task.id)
    assert alert.role is clew.MessageRole.SYSTEM and alert.content.startswith("[stuck] `pytest -x`")
    (event,) = [e for e in mem.journal(task_id=task.id) if e.type == "task.stuck_alerted"]
    assert event.data["message_id"] == alert.id
    assert event.data["conditions"][0]["reason"] == REPEATED_FAILURE
    # Within the cooldown no second alert, however often it fails; after it, one more.
    fail(mem, task.id, clock)
    fail(mem, task.id, clock)
    assert len(alerts(mem, task.id)) == 1 and mem.check_stuck()[0].alerted is False
    clock.advance(30 * MINUTE)
    fail(mem, task.id, clock)
    assert len(alerts(mem, task.id)) == 2
    assert "stuck alert: repeated failure" in [h.text for h in mem.history(task.id)][-1]
    assert mem.verify().ok


def test_a_success_or_a_step_change_ends_a_repeated_failure(
    mem: clew.Memory, clock: FakeClock
) -> None:
    task = mem.create_task("Test", ["Fix", "Ship"])
    for _ in range(3):
        fail(mem, task.id, clock)
    assert mem.stuck(task.id)
    mem.record_action(task.id, command="pytest -x", exit_code=0)
    assert mem.stuck(task.id) == ()
    for _ in range(3):
        fail(mem, task.id, clock, "make deploy")
    assert mem.stuck(task.id)
    mem.update_task(task.id, step=1, step_status="completed")
    assert mem.stuck(task.id) == ()  # failures before the plan moved belong to earlier work


def test_a_fix_that_worked_before_is_the_suggestion(mem: clew.Memory, clock: FakeClock) -> None:
    old = mem.create_task("Earlier", ["a"])
    mem.add_error(
        old.id,
        "numpy missing",
        detail=TRACEBACK,
        command="pytest -x",
        resolution="pip install 'numpy<2' in the venv",
    )
    task = mem.create_task("Now", ["a"])
    for _ in range(3):
        fail(mem, task.id, clock)
    (condition,) = mem.stuck(task.id)
    assert condition.suggestion.startswith("this error was fixed before by: pip install 'numpy<2'")


def test_check_stuck_reports_and_alerts_respecting_the_cooldown(
    mem: clew.Memory, clock: FakeClock
) -> None:
    idle = mem.create_task("Idle", ["a"])
    busy = mem.create_task("Busy", ["a"])
    clock.advance(40 * MINUTE)
    mem.add_message(busy.id, "working")
    (report,) = mem.check_stuck(alert=False)
    assert (report.task_id, report.alerted, report.last_alert) == (idle.id, False, None)
    assert alerts(mem, idle.id) == []
    (report,) = mem.check_stuck()
    assert report.alerted and len(alerts(mem, idle.id)) == 1
    assert "[stuck] no progress for 40m" in alerts(mem, idle.id)[0].content
    (again,) = mem.check_stuck()
    assert not again.alerted and again.last_alert == report.last_alert
    assert len(alerts(mem, idle.id)) == 1


@pytest.mark.sqlite_only("reads config.toml beside the store file (a team store has none)")
def test_settings_come_from_the_environment_or_config(
    db: Path, monkeypatch: pytest.MonkeyPatch, clock: FakeClock
) -> None:
    monkeypatch.setenv("CLEW_STUCK_AFTER", "5m")
    monkeypatch.setenv("CLEW_STUCK_REPEATS", "2")
    (db.parent / "config.toml").write_text('[stuck]\ncooldown = "2h"\n')
    with clew.open(db, clock=clock) as mem:
        rules = mem.settings.stuck
        assert (rules.idle_after, rules.repeats, rules.cooldown, rules.enabled) == (
            300.0,
            2,
            7200.0,
            True,
        )
        task = mem.create_task("T", ["a"])
        clock.advance(6 * MINUTE)
        assert mem.stuck(task.id)
    monkeypatch.setenv("CLEW_STUCK", "0")
    with clew.open(db, clock=clock) as mem:
        assert mem.stuck(task.id) == () and mem.check_stuck() == []


def test_the_cli_lists_stuck_tasks(
    cli: Callable[..., Result], db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLEW_STUCK_AFTER", "0s")
    task = cli("task", "new", "Deploy", "--plan", "Build").out.strip()
    quiet = cli("stuck", "--no-alert")
    assert quiet.code == 0 and f"{task} 'Deploy' (no alert posted)" in quiet.out
    assert "  stuck: no progress for 0m" in quiet.out and "  try: report where" in quiet.out
    loud = cli("stuck", task[:6])
    assert loud.code == 0 and "(alert posted)" in loud.out
    data = json.loads(cli("stuck", "--json").out)
    assert data[0]["task_id"] == task and data[0]["alerted"] is False
    assert data[0]["conditions"][0]["reason"] == "no_progress"
    assert "Stuck: no progress" in cli("task", "where", task).out
    monkeypatch.setenv("CLEW_STUCK", "off")
    assert cli("stuck").out.strip() == "no active task is stuck"


# -- the brief stays within its budget, stuck or not --------------------------------------------


@st.composite
def stuck_briefs(draw: Any) -> tuple[Any, ...]:
    task = task_of(draw, draw(st.integers(0, 30)))
    messages = [
        clew.Message(
            f"m{n:09d}",
            "default",
            task.id,
            clew.MessageRole.AGENT,
            clew.MessageType.TEXT,
            draw(any_text),
            STAMP,
        )
        for n in range(draw(st.integers(0, 4)))
    ]
    stuck = tuple(
        Stuck(reason, STAMP, draw(any_text), draw(any_text))
        for reason in draw(st.sampled_from([(), (NO_PROGRESS,), (REPEATED_FAILURE, NO_PROGRESS)]))
    )
    return task, messages, stuck


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stuck_briefs())
def test_a_stuck_brief_fits_its_budget_and_says_it_is_stuck(case: tuple[Any, ...]) -> None:
    task, messages, stuck = case
    now = datetime(2026, 11, 22, 10, 0, tzinfo=UTC)
    brief = build_brief(task, messages, [], now, counter=counter(), stuck=stuck)
    assert exact_tokens(brief.text) <= BRIEF_BUDGET
    assert brief.text.count("\nStuck: ") == len(stuck)


def _repeated_failure_by_definition(task: Any, actions: list[clew.Action], repeats: int) -> Any:
    """The definition stuck.repeated_failure keeps: each failure's group is fixed when any
    other action of its command (or summary) completed at or after its newest failure."""
    from clew.tasks.stuck import _step_changed

    since = _step_changed(task)
    recent = sorted((a for a in actions if a.created_at >= since), key=lambda a: a.created_at)
    runs: dict[str, list[clew.Action]] = {}
    for a in recent:
        if a.status in (clew.ActionStatus.FAILED, clew.ActionStatus.TIMEOUT) and a.fingerprint:
            runs.setdefault(a.fingerprint, []).append(a)
    best: list[clew.Action] = []
    for failed in runs.values():
        last = failed[-1]
        fixed = any(
            a.status is clew.ActionStatus.COMPLETED
            and a.created_at >= last.created_at
            and a.id != last.id
            and (a.command or a.summary) == (last.command or last.summary)
            for a in recent
        )
        if not fixed and len(failed) >= repeats and len(failed) > len(best):
            best = failed
    return best[-1].id if best else None


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(list(clew.ActionStatus)),
            st.sampled_from([None, "pytest", "make", ""]),  # the command
            st.sampled_from(["run tests", "build", ""]),  # the summary
            st.sampled_from([None, "f1", "f2", "f3"]),  # the error's fingerprint
            st.integers(0, 8),  # the minute it ran (ties included)
        ),
        max_size=40,
    ),
    st.integers(1, 4),
    st.integers(0, 4),
)
def test_repeated_failure_keeps_its_definition(
    runs: list[tuple[Any, ...]], repeats: int, step_minute: int
) -> None:
    from clew.tasks.stuck import repeated_failure

    task = task_of_plan_changed_at(f"2026-11-22T09:0{step_minute}:00.000000Z")
    actions = [
        clew.Action(
            f"a{n:09d}",
            "default",
            task.id,
            None,
            clew.ActionType.CLI,
            summary,
            status,
            None,
            None,
            command,
            None,
            1,
            None,
            None,
            None,
            f"2026-11-22T09:0{minute}:00.000000Z",
            f"2026-11-22T09:0{minute}:00.000000Z",
            fingerprint=fingerprint,
        )
        for n, (status, command, summary, fingerprint, minute) in enumerate(runs)
    ]
    found = repeated_failure(task, actions, repeats)
    assert (found.action_id if found else None) == _repeated_failure_by_definition(
        task, actions, repeats
    )


def task_of_plan_changed_at(stamp: str) -> Any:
    """A task whose plan last moved at `stamp` (a step started then)."""
    from clew.models import PlanItem, StepStatus, Task, TaskStatus

    step = PlanItem(
        "s000000001",
        "default",
        "t000000000",
        1,
        "step",
        StepStatus.ACTIVE,
        stamp,
        None,
        None,
        None,
        None,
        (),
        False,
        "2026-11-22T09:00:00.000000Z",
        stamp,
    )
    return Task(
        "t000000000",
        "default",
        "task",
        None,
        None,
        TaskStatus.ACTIVE,
        False,
        {},
        1,
        None,
        "2026-11-22T09:00:00.000000Z",
        stamp,
        None,
        None,
        None,
        (step,),
    )


def _unfixed_by_definition(
    actions: list[clew.Action], recorded: dict[str, str | None]
) -> tuple[clew.Action, ...]:
    """The definition brief._unfixed_failures keeps (actions newest first): a failure not
    recorded as an error, with no newer success of its command, no error entry of its
    command open or closed at or after it, and no newer failure of its command listed."""
    from clew.archive.linking import command_key

    keys = [command_key(a.command) for a in actions]
    out: list[clew.Action] = []
    listed: set[str] = set()
    for index, action in enumerate(actions):
        if action.status is not clew.ActionStatus.FAILED or action.id in recorded:
            continue
        key = keys[index]
        if key is not None and any(
            a.status is clew.ActionStatus.COMPLETED and keys[i] == key
            for i, a in enumerate(actions[:index])
        ):
            continue
        if key is not None and any(
            keys[i] == key and (closed is None or closed >= action.created_at)
            for i, a in enumerate(actions)
            if (closed := recorded.get(a.id, "")) != ""
        ):
            continue
        if key is not None and key in listed:
            continue
        out.append(action)
        if key is not None:
            listed.add(key)
    return tuple(out)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(list(clew.ActionStatus)),
            st.sampled_from([None, "pytest -x", "pytest  -x", "make", "git push"]),
            st.integers(0, 8),  # the minute it ran
            st.sampled_from(
                ["no", None, "2026-11-22T09:03:00.000000Z", "2026-11-22T09:06:00.000000Z"]
            ),
        ),
        max_size=30,
    )
)
def test_unfixed_failures_keep_their_definition(runs: list[tuple[Any, ...]]) -> None:
    from clew.state.brief import _unfixed_failures

    actions = [
        clew.Action(
            f"a{n:09d}",
            "default",
            "t000000000",
            None,
            clew.ActionType.CLI,
            "ran it",
            status,
            None,
            None,
            command,
            None,
            1,
            None,
            None,
            None,
            f"2026-11-22T09:0{minute}:00.000000Z",
            f"2026-11-22T09:0{minute}:00.000000Z",
        )
        for n, (status, command, minute, _) in enumerate(runs)
    ][::-1]
    # Which actions an error entry stands for, and when it was closed (None: still open).
    recorded = {f"a{n:09d}": closed for n, (*_, closed) in enumerate(runs) if closed != "no"}
    assert _unfixed_failures(actions, recorded) == _unfixed_by_definition(actions, recorded)


def test_recent_attempts_are_the_newest_actions_fields(mem: clew.Memory, clock: FakeClock) -> None:
    """What stuck detection reads of a state's task (`recent_attempts`) is what it read of
    whole actions: the same actions, newest first, with the same values."""
    from clew.models import Attempt

    task = mem.create_task("Deploy", ["Build"])
    fail(mem, task.id, clock)
    mem.record_action(task.id, command="make", exit_code=0, stdout="ok")
    wait = mem.record_action(task.id, type="wait", summary="CI", status="started")
    fail(mem, task.id, clock, "pytest -q")
    clock.advance(MINUTE)
    mem.record_action(task.id, command="make", exit_code=0, stdout="ok")  # same instant, twice
    mem.record_action(task.id, command="make", exit_code=2, stderr=TRACEBACK)
    store: Any = mem._store
    whole = store.recent_actions(task.id, limit=4)
    assert store.recent_attempts(task.id, limit=4) == [
        Attempt(a.id, a.summary, a.status, a.command, a.fingerprint, a.created_at, a.updated_at)
        for a in whole
    ]
    assert [a.id for a in store.recent_attempts(task.id, limit=50)][-3] == wait.id
    assert all(type(a) is Attempt for a in store.recent_attempts(task.id, limit=50))


def _last_progress_by_definition(
    task: Any, messages: list[clew.Message], actions: list[Any], resumed_at: str | None
) -> str:
    """last_progress as the module docstring defines it: the newest of every progress time."""
    times = [task.created_at]
    times += [t for t in (task.last_replanned_at, resumed_at) if t]
    for step in task.plan:
        times += [t for t in (step.started_at, step.completed_at) if t]
    times += [m.created_at for m in messages if m.type is not clew.MessageType.STUCK]
    times += [a.updated_at for a in actions if a.status is clew.ActionStatus.COMPLETED]
    return max(times)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(list(clew.MessageType)), st.integers(0, 9)), max_size=12),
    st.lists(st.tuples(st.sampled_from(list(clew.ActionStatus)), st.integers(0, 9)), max_size=20),
    st.integers(0, 9),
    st.one_of(st.none(), st.integers(0, 9)),
)
def test_last_progress_keeps_its_definition(
    said: list[tuple[Any, int]], ran: list[tuple[Any, int]], step_minute: int, resumed: int | None
) -> None:
    from clew.models import Attempt
    from clew.tasks.stuck import last_progress

    def at(minute: int) -> str:
        return f"2026-11-22T09:0{minute}:00.000000Z"

    task = task_of_plan_changed_at(at(step_minute))
    messages = [
        clew.Message(f"m{n:09d}", "default", task.id, clew.MessageRole.AGENT, kind, "x", at(m))
        for n, (kind, m) in enumerate(said)
    ]
    actions = [
        Attempt(f"a{n:09d}", "run", status, "make", None, at(m), at(min(m + 1, 9)))
        for n, (status, m) in enumerate(ran)
    ]
    resumed_at = None if resumed is None else at(resumed)
    assert last_progress(task, messages, actions, resumed_at) == _last_progress_by_definition(
        task, messages, actions, resumed_at
    )


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(list(clew.ActionStatus)),
            st.sampled_from(["pytest", "make"]),  # the command
            st.sampled_from([None, "f1", "f2"]),  # the error's fingerprint
            st.integers(0, 9),  # the minute it ran
        ),
        max_size=20,
    ),
    st.lists(st.tuples(st.sampled_from(list(clew.MessageType)), st.integers(0, 9)), max_size=6),
    st.integers(0, 9),
    st.integers(0, 9),
    st.integers(1, 4),
)
def test_a_task_that_cannot_be_stuck_is_not(
    ran: list[tuple[Any, ...]],
    said: list[tuple[Any, int]],
    step_minute: int,
    now_minute: int,
    repeats: int,
) -> None:
    """What lets a failed command's write skip reading the task holds whatever the task's
    plan and messages are: `detect` finds nothing whenever `cannot_be_stuck` says so."""
    from datetime import UTC, datetime

    from clew.core.lifecycle import StuckRules
    from clew.models import Attempt
    from clew.tasks.stuck import cannot_be_stuck, detect

    def at(minute: int) -> str:
        return f"2026-11-22T09:0{minute}:00.000000Z"

    task = task_of_plan_changed_at(at(step_minute))
    actions = [
        Attempt(f"a{n:09d}", "run", status, command, fingerprint, at(m), at(min(m + 1, 9)))
        for n, (status, command, fingerprint, m) in enumerate(ran)
    ]
    actions.sort(key=lambda a: a.created_at, reverse=True)  # newest first, as read
    messages = [
        clew.Message(f"m{n:09d}", "default", task.id, clew.MessageRole.AGENT, kind, "x", at(m))
        for n, (kind, m) in enumerate(said)
    ]
    now = datetime(2026, 11, 22, 9, now_minute, tzinfo=UTC)
    rules = StuckRules(idle_after=180.0, repeats=repeats)
    if cannot_be_stuck(actions, now, rules):
        assert detect(task, messages, actions, now, rules) == ()
