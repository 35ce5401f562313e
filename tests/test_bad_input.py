"""Bad input gets a clear one-line error and nothing already stored is lost or half-written.

For each kind of bad input there is an API test (a typed ClewError) and a CLI test
(exit 2, exactly one line on stderr starting "clew: error:", no traceback). After
every refused call the store is compared with a snapshot taken before it: same
journal, same tasks, messages and actions, and `verify()` finds no drift.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import clew
from clew.cli import main
from clew.core import query as search
from clew.core.ids import ALPHABET
from clew.errors import ValidationError
from clew.models import AddStep, MoveStep, RemoveStep, RenameStep
from clew.tools import registry as tools
from tests.conftest import FakeClock, Result, new_space, run_in_lockstep

Cli = Callable[..., Result]
TEN_MB = 10 * 1024 * 1024


# -- helpers --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Stored:
    """What is in the store before the bad call: ids to aim the bad input at."""

    task: str
    action: str  # completed, with binary output and a log line
    started: str  # still running
    steps: tuple[str, ...]
    missing: str  # a prefix of no task, action or step id


def absent_prefix(ids: Iterable[str]) -> str:
    """A two-letter prefix that no id starts with (digits would be taken as step numbers)."""
    taken = {i[:2] for i in ids}
    letters = [c for c in ALPHABET if c.isalpha()]
    return next(a + b for a in letters for b in letters if a + b not in taken)


def snapshot(mem: clew.Memory) -> tuple[Any, ...]:
    tasks = mem.list_tasks(include_archived=True)
    per_task = [
        (
            mem.list_messages(t.id),
            mem.list_actions(t.id),
            mem.removed_steps(t.id),
            [mem.list_action_logs(a.id) for a in mem.list_actions(t.id)],
        )
        for t in tasks
    ]
    return mem.journal(), tasks, per_task


def assert_unchanged(mem: clew.Memory, before: tuple[Any, ...]) -> None:
    assert snapshot(mem) == before
    report = mem.verify()
    assert report.ok, report.differences


def error_line(result: Result) -> str:
    """Assert the CLI refused: exit 2, nothing on stdout, one line on stderr, no traceback."""
    assert result.code == 2, (result.code, result.out, result.err)
    assert result.out == ""
    assert "Traceback" not in result.err
    lines = result.err.splitlines()
    assert len(lines) == 1, result.err
    assert lines[0].startswith("clew: error: ")
    return lines[0]


def fill(args: Sequence[str], stored: Stored) -> list[str]:
    names = {
        "TASK": stored.task,
        "ACTION": stored.action,
        "STARTED": stored.started,
        "MISSING": stored.missing,
    }
    return [names.get(a, a) for a in args]


def run_clew(db: Path, *args: str | bytes, stdin: bytes | None = None) -> Any:
    """Run `python -m clew --db DB ARGS...` as a real process; output stays bytes."""
    return subprocess.run(
        [sys.executable, "-m", "clew", "--db", str(db), *args],
        input=stdin,
        capture_output=True,
        timeout=60,
    )


def process_error_line(done: Any) -> str:
    assert done.returncode == 2, done.stderr
    assert done.stdout == b""
    err = done.stderr.decode("utf-8", "replace")
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("clew: error: ")
    return lines[0]


@pytest.fixture
def stored(mem: clew.Memory) -> Stored:
    task = mem.create_task("Deploy", ["Build", "Push", "Run"], goal="ship it")
    mem.update_task(task.id, message="building", step=1, step_status="active")
    done = mem.record_action(task.id, command="make", exit_code=0, stdout=b"\xffbuilt", step=1)
    mem.log_action(done.id, "compiled")
    started = mem.record_action(task.id, command="make test", status="started")
    steps = tuple(s.id for s in task.plan)
    missing = absent_prefix([task.id, done.id, started.id, *steps])
    return Stored(task.id, done.id, started.id, steps, missing)


# -- unknown ids ----------------------------------------------------------------------------

TASK_CALLS: dict[str, Callable[[clew.Memory, Any], object]] = {
    "get_task": lambda mem, i: mem.get_task(i),
    "update_task": lambda mem, i: mem.update_task(i, message="lost?"),
    "add_message": lambda mem, i: mem.add_message(i, "lost?"),
    "record_action": lambda mem, i: mem.record_action(i, command="lost?"),
    "update_step": lambda mem, i: mem.update_step(i, 1, status="completed"),
    "replan": lambda mem, i: mem.replan(i, [AddStep("lost?")]),
    "archive_task": lambda mem, i: mem.archive_task(i),
    "list_messages": lambda mem, i: mem.list_messages(i),
    "list_actions": lambda mem, i: mem.list_actions(i),
    "removed_steps": lambda mem, i: mem.removed_steps(i),
    "where": lambda mem, i: mem.where(i),
    "journal": lambda mem, i: mem.journal(task_id=i),
}
ACTION_CALLS: dict[str, Callable[[clew.Memory, Any], object]] = {
    "get_action": lambda mem, i: mem.get_action(i),
    "finish_action": lambda mem, i: mem.finish_action(i, exit_code=0),
    "log_action": lambda mem, i: mem.log_action(i, "lost?"),
    "list_action_logs": lambda mem, i: mem.list_action_logs(i),
}


@pytest.mark.parametrize("call", TASK_CALLS.values(), ids=TASK_CALLS.keys())
def test_unknown_task_id_is_not_found(
    mem: clew.Memory, stored: Stored, call: Callable[[clew.Memory, Any], object]
) -> None:
    before = snapshot(mem)
    for ident in (stored.missing, stored.missing.upper(), "not an id", "", stored.task + "0"):
        with pytest.raises(clew.NotFoundError) as info:
            call(mem, ident)
        assert isinstance(info.value, clew.ClewError)
        assert info.value.kind == "task" and info.value.ident == ident
        assert f"no task matches {ident!r}" in str(info.value)
        assert "clew task list" in str(info.value)
    assert_unchanged(mem, before)


@pytest.mark.parametrize("call", ACTION_CALLS.values(), ids=ACTION_CALLS.keys())
def test_unknown_action_id_is_not_found(
    mem: clew.Memory, stored: Stored, call: Callable[[clew.Memory, Any], object]
) -> None:
    before = snapshot(mem)
    # A task id is not an action id either.
    for ident in (stored.missing, "not an id", "", stored.task):
        with pytest.raises(clew.NotFoundError) as info:
            call(mem, ident)
        assert info.value.kind == "action"
        assert f"no action matches {ident!r}" in str(info.value)
    assert_unchanged(mem, before)


def test_unknown_step_id_is_not_found(mem: clew.Memory, stored: Stored) -> None:
    before = snapshot(mem)
    calls: list[Callable[[], object]] = [
        lambda: mem.update_step(stored.task, stored.missing, status="completed"),
        lambda: mem.update_task(
            stored.task, message="lost?", step=stored.missing, step_status="completed"
        ),
        lambda: mem.record_action(stored.task, command="lost?", step=stored.missing),
        lambda: mem.list_actions(stored.task, step=stored.missing),
        lambda: mem.replan(stored.task, [AddStep("lost?"), RemoveStep(stored.missing)]),
        lambda: mem.update_step(stored.task, 1, depends_on=[stored.missing]),
    ]
    for call in calls:
        with pytest.raises(clew.NotFoundError) as info:
            call()
        assert info.value.kind == "step"
        assert "steps are numbered 1-" in str(info.value)
    assert_unchanged(mem, before)


@pytest.mark.parametrize("name", [*TASK_CALLS, *ACTION_CALLS], ids=[*TASK_CALLS, *ACTION_CALLS])
def test_an_id_that_is_not_text_is_a_validation_error(
    mem: clew.Memory, stored: Stored, name: str
) -> None:
    call = {**TASK_CALLS, **ACTION_CALLS}[name]
    before = snapshot(mem)
    # journal(task_id=None) means "every task", so None is not bad input there.
    for ident in (42, b"abc", ["x"]) if name == "journal" else (None, 42, b"abc", ["x"]):
        with pytest.raises(clew.ValidationError, match="must be text"):
            call(mem, ident)
    assert_unchanged(mem, before)


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["task", "show", "MISSING"], "no task matches"),
        (["task", "update", "MISSING", "-m", "lost?"], "no task matches"),
        (["task", "action", "MISSING", "-c", "lost?"], "no task matches"),
        (["task", "replan", "MISSING", "--add", "lost?"], "no task matches"),
        (["task", "where", "not-an-id"], "no task matches"),
        (["task", "archive", "MISSING"], "no task matches"),
        (["journal", "--task", "MISSING"], "no task matches"),
        (["task", "output", "MISSING"], "no action matches"),
        (["task", "output", "TASK"], "no action matches"),
        (["task", "finish", "MISSING", "--exit-code", "0"], "no action matches"),
        (["task", "log", "MISSING", "lost?"], "no action matches"),
        (["task", "update", "TASK", "-m", "lost?", "--step", "MISSING"], "no step matches"),
        (["task", "action", "TASK", "-c", "lost?", "--step", "MISSING"], "no step matches"),
    ],
)
def test_cli_unknown_id(
    cli: Cli, mem: clew.Memory, stored: Stored, args: list[str], says: str
) -> None:
    before = snapshot(mem)
    line = error_line(cli(*fill(args, stored)))
    assert says in line
    assert_unchanged(mem, before)


# -- ambiguous ids --------------------------------------------------------------------------


def shared_prefix(ids: Iterable[str], usable: str = ALPHABET) -> tuple[str, tuple[str, ...]]:
    """A one-character prefix (from `usable`) that several ids share, and those ids."""
    groups: dict[str, list[str]] = {}
    for ident in ids:
        groups.setdefault(ident[0], []).append(ident)
    prefix = next(p for p in sorted(groups) if len(groups[p]) > 1 and p in usable)
    return prefix, tuple(sorted(groups[prefix]))


def test_ambiguous_task_prefix_lists_the_candidates(mem: clew.Memory) -> None:
    # 40 ids over 32 possible first characters: some first character is certainly shared.
    ids = [mem.create_task(f"Task {n}", ["One"]).id for n in range(40)]
    prefix, candidates = shared_prefix(ids)
    before = snapshot(mem)
    for call in (*TASK_CALLS.values(),):
        with pytest.raises(clew.AmbiguousIdError) as info:
            call(mem, prefix)
        error = info.value
        assert isinstance(error, clew.ClewError) and isinstance(error, LookupError)
        assert (error.kind, error.prefix, error.candidates) == ("task", prefix, candidates)
        assert "ambiguous" in str(error) and "type more characters" in str(error)
        for candidate in candidates[:10]:
            assert candidate in str(error)
    # Upper case and surrounding spaces are the same prefix.
    with pytest.raises(clew.AmbiguousIdError):
        mem.get_task(f" {prefix.upper()} ")
    assert_unchanged(mem, before)
    # A prefix long enough to be unique still works.
    assert mem.get_task(candidates[0]).id == candidates[0]


def test_ambiguous_action_prefix_lists_the_candidates(mem: clew.Memory) -> None:
    task = mem.create_task("Busy", ["One"])
    ids = [mem.record_action(task.id, command=f"c{n}", status="started").id for n in range(40)]
    prefix, candidates = shared_prefix(ids)
    before = snapshot(mem)
    for call in ACTION_CALLS.values():
        with pytest.raises(clew.AmbiguousIdError) as info:
            call(mem, prefix)
        assert (info.value.kind, info.value.candidates) == ("action", candidates)
    assert_unchanged(mem, before)


def test_ambiguous_step_prefix_lists_the_candidates(mem: clew.Memory) -> None:
    task = mem.create_task("Long plan", [f"Step {n}" for n in range(80)])
    # Digits are step numbers, so use a prefix that starts with a letter: 80 ids have far
    # more than 22 (the letters in the alphabet) starting with one, so one is shared.
    letters = "".join(c for c in ALPHABET if not c.isdigit())
    prefix, candidates = shared_prefix([s.id for s in task.plan], letters)
    before = snapshot(mem)
    calls: list[Callable[[], object]] = [
        lambda: mem.update_step(task.id, prefix, status="completed"),
        lambda: mem.update_task(task.id, message="lost?", step=prefix, step_status="active"),
        lambda: mem.record_action(task.id, command="lost?", step=prefix),
        lambda: mem.replan(task.id, [RenameStep(prefix, "lost?"), AddStep("lost?")]),
    ]
    for call in calls:
        with pytest.raises(clew.AmbiguousIdError) as info:
            call()
        assert (info.value.kind, info.value.candidates) == ("step", candidates)
    assert_unchanged(mem, before)


def test_cli_ambiguous_ids(cli: Cli, mem: clew.Memory) -> None:
    tasks = [mem.create_task(f"Task {n}", ["One"]).id for n in range(40)]
    actions = [mem.record_action(tasks[0], command=f"c{n}").id for n in range(40)]
    task_prefix, task_candidates = shared_prefix(tasks)
    action_prefix, action_candidates = shared_prefix(actions)
    before = snapshot(mem)
    for args, candidates in (
        (["task", "show", task_prefix], task_candidates),
        (["task", "update", task_prefix, "-m", "lost?"], task_candidates),
        (["task", "action", task_prefix, "-c", "lost?"], task_candidates),
        (["task", "output", action_prefix], action_candidates),
        (["task", "log", action_prefix, "lost?"], action_candidates),
    ):
        line = error_line(cli(*args))
        prefix = task_prefix if candidates is task_candidates else action_prefix
        assert f"id prefix {prefix!r} is ambiguous" in line
        for candidate in candidates[:10]:
            assert candidate in line
    assert_unchanged(mem, before)


# -- invalid status or transition -----------------------------------------------------------

INVALID_VALUES: dict[str, Callable[[clew.Memory, Stored], object]] = {
    "task status": lambda mem, s: mem.update_task(s.task, status="done"),
    "task status with message": lambda mem, s: mem.update_task(
        s.task, message="lost?", status="finished"
    ),
    "step status": lambda mem, s: mem.update_task(s.task, step=1, step_status="finished"),
    "step status with message": lambda mem, s: mem.update_task(
        s.task, message="lost?", step=2, step_status="done"
    ),
    "update_step status": lambda mem, s: mem.update_step(s.task, 1, status="nope"),
    "list status": lambda mem, s: mem.list_tasks("closed"),
    "list statuses": lambda mem, s: mem.list_tasks(["active", "bogus"]),
    "action status": lambda mem, s: mem.record_action(s.task, command="x", status="ok"),
    "finish status": lambda mem, s: mem.finish_action(s.started, status="yes"),
    "action type": lambda mem, s: mem.record_action(s.task, command="x", type="telepathy"),
    "message role": lambda mem, s: mem.add_message(s.task, "lost?", role="robot"),
    "message type": lambda mem, s: mem.add_message(s.task, "lost?", type="shout"),
    "update role": lambda mem, s: mem.update_task(
        s.task, message="lost?", role="robot", step=1, step_status="completed"
    ),
    "update message type": lambda mem, s: mem.update_task(
        s.task, message="lost?", message_type="shout"
    ),
}


@pytest.mark.parametrize("call", INVALID_VALUES.values(), ids=INVALID_VALUES.keys())
def test_invalid_status_or_kind_is_a_validation_error(
    mem: clew.Memory, stored: Stored, call: Callable[[clew.Memory, Stored], object]
) -> None:
    before = snapshot(mem)
    with pytest.raises(clew.ValidationError, match="is not one of: ") as info:
        call(mem, stored)
    assert not isinstance(info.value, clew.InvalidTransitionError)
    assert_unchanged(mem, before)


@pytest.mark.parametrize(
    ("path", "target"),
    [
        (["cancelled"], "active"),
        (["cancelled"], "paused"),
        (["completed"], "paused"),
        (["completed"], "failed"),
        (["paused"], "completed"),
        (["failed"], "completed"),
        (["failed", "cancelled"], "active"),
    ],
)
def test_invalid_task_transition_is_refused(mem: clew.Memory, path: list[str], target: str) -> None:
    task = mem.create_task("Lifecycle", ["One"])
    for status in path:
        mem.update_task(task.id, status=status)
    before = snapshot(mem)
    with pytest.raises(clew.InvalidTransitionError) as info:
        mem.update_task(task.id, message="lost?", status=target, step=1, step_status="active")
    assert isinstance(info.value, clew.ValidationError)
    assert f"cannot go from {path[-1]} to {target}" in str(info.value)
    assert_unchanged(mem, before)


def test_closed_task_takes_no_work_and_says_how_to_reopen(mem: clew.Memory, stored: Stored) -> None:
    mem.update_task(stored.task, status="completed")
    before = snapshot(mem)
    refused: list[Callable[[], object]] = [
        lambda: mem.update_task(stored.task, step=1, step_status="completed"),
        lambda: mem.update_task(stored.task, message="lost?", step=2, step_status="completed"),
        lambda: mem.update_step(stored.task, 1, status="completed"),
        lambda: mem.record_action(stored.task, command="lost?", exit_code=0),
        lambda: mem.replan(stored.task, [AddStep("lost?")]),
    ]
    for call in refused:
        with pytest.raises(clew.InvalidTransitionError, match="reopen it with --status active"):
            call()
    assert_unchanged(mem, before)
    # The hint is right: reopened, the same work is accepted.
    mem.update_task(stored.task, status="active")
    assert mem.update_step(stored.task, 1, status="completed").status.value == "completed"

    mem.update_task(stored.task, status="cancelled")
    before = snapshot(mem)
    with pytest.raises(clew.InvalidTransitionError, match="cannot be reopened"):
        mem.update_step(stored.task, 2, status="completed")
    assert_unchanged(mem, before)


def test_finishing_an_action_twice_is_refused(mem: clew.Memory, stored: Stored) -> None:
    before = snapshot(mem)
    with pytest.raises(clew.ValidationError, match="already completed"):
        mem.finish_action(stored.action, exit_code=1, stdout="lost?")
    assert_unchanged(mem, before)


@pytest.mark.parametrize(
    ("setup", "args", "says"),
    [
        ([], ["task", "update", "TASK", "--status", "done"], "is not one of"),
        ([], ["task", "update", "TASK", "--step", "1", "--step-status", "x"], "is not one of"),
        ([], ["task", "update", "TASK", "-m", "lost?", "--role", "robot"], "is not one of"),
        ([], ["task", "action", "TASK", "-c", "x", "--status", "ok"], "is not one of"),
        ([], ["task", "action", "TASK", "-c", "x", "--type", "telepathy"], "is not one of"),
        ([], ["task", "finish", "STARTED", "--status", "yes"], "is not one of"),
        ([], ["task", "list", "--status", "bogus"], "invalid choice"),
        ([], ["task", "finish", "ACTION", "--exit-code", "0"], "already completed"),
        (["cancelled"], ["task", "update", "TASK", "--status", "active"], "from cancelled to"),
        (["paused"], ["task", "update", "TASK", "--status", "completed"], "from paused to"),
        (
            ["completed"],
            ["task", "update", "TASK", "--step", "2", "--step-status", "completed"],
            "reopen it with --status active",
        ),
        (
            ["completed"],
            ["task", "action", "TASK", "-c", "make", "--exit-code", "0"],
            "reopen it with --status active",
        ),
        (["cancelled"], ["task", "replan", "TASK", "--add", "x"], "cannot be reopened"),
    ],
)
def test_cli_invalid_status_or_transition(
    cli: Cli, mem: clew.Memory, stored: Stored, setup: list[str], args: list[str], says: str
) -> None:
    for status in setup:
        mem.update_task(stored.task, status=status)
    before = snapshot(mem)
    assert says in error_line(cli(*fill(args, stored)))
    assert_unchanged(mem, before)


# -- empty names and text -------------------------------------------------------------------

EMPTY_TEXT: dict[str, Callable[[clew.Memory, Stored], object]] = {
    "task name": lambda mem, s: mem.create_task("", ["One"]),
    "blank task name": lambda mem, s: mem.create_task("   ", ["One"]),
    "whitespace task name": lambda mem, s: mem.create_task("\n\t ", ["One"]),
    "task name not text": lambda mem, s: mem.create_task(None, ["One"]),  # type: ignore[arg-type]
    "plan step title": lambda mem, s: mem.create_task("Fine", ["One", " "]),
    "rename task": lambda mem, s: mem.update_task(s.task, message="lost?", name="  "),
    "empty rename task": lambda mem, s: mem.update_task(s.task, name=""),
    "step title": lambda mem, s: mem.update_step(s.task, 1, title=""),
    "added step": lambda mem, s: mem.replan(s.task, [AddStep("ok"), AddStep(" ")]),
    "renamed step": lambda mem, s: mem.replan(s.task, [RenameStep(1, "")]),
    "message": lambda mem, s: mem.add_message(s.task, ""),
    "blank message": lambda mem, s: mem.update_task(
        s.task, message="  ", step=1, step_status="completed"
    ),
    "log line": lambda mem, s: mem.log_action(s.action, " "),
    "action summary": lambda mem, s: mem.record_action(s.task, summary=" ", command="x"),
    "no summary or command": lambda mem, s: mem.record_action(s.task, exit_code=0),
    "name too long": lambda mem, s: mem.create_task("x" * 1001),
    "nothing to update": lambda mem, s: mem.update_task(s.task),
    "no replanning ops": lambda mem, s: mem.replan(s.task, []),
}


@pytest.mark.parametrize("call", EMPTY_TEXT.values(), ids=EMPTY_TEXT.keys())
def test_empty_name_or_text_is_refused(
    mem: clew.Memory, stored: Stored, call: Callable[[clew.Memory, Stored], object]
) -> None:
    before = snapshot(mem)
    with pytest.raises(clew.ValidationError) as info:
        call(mem, stored)
    assert "\n" not in str(info.value)
    assert_unchanged(mem, before)


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["task", "new", ""], "task name is empty"),
        (["task", "new", "   "], "task name is empty"),
        (["task", "new", "Fine", "--plan", "One", ""], "plan step title is empty"),
        (["task", "update", "TASK", "--name", ""], "task name is empty"),
        (["task", "update", "TASK", "-m", ""], "message is empty"),
        (["task", "replan", "TASK", "--add", "ok", "--add", " "], "step title is empty"),
        (["task", "replan", "TASK", "--rename", "1", ""], "step title is empty"),
        (["task", "log", "ACTION", ""], "log content is empty"),
        (["task", "action", "TASK", "--exit-code", "0"], "needs a summary or a command"),
        (["task", "update", "TASK"], "nothing to update"),
        (["task", "replan", "TASK"], "at least one change"),
    ],
)
def test_cli_empty_name_or_text(
    cli: Cli, mem: clew.Memory, stored: Stored, args: list[str], says: str
) -> None:
    before = snapshot(mem)
    assert says in error_line(cli(*fill(args, stored)))
    assert_unchanged(mem, before)


# -- steps out of range ---------------------------------------------------------------------

OUT_OF_RANGE: dict[str, Callable[[clew.Memory, Stored], object]] = {
    "step 0": lambda mem, s: mem.update_task(s.task, step=0, step_status="active"),
    "step 4 of 3": lambda mem, s: mem.update_task(s.task, step=4, step_status="active"),
    "step -1": lambda mem, s: mem.update_task(s.task, step=-1, step_status="active"),
    "step '9'": lambda mem, s: mem.update_task(s.task, step="9", step_status="active"),
    # The message comes first in the transaction: it must not survive the bad step.
    "message then bad step": lambda mem, s: mem.update_task(
        s.task, message="lost?", step=4, step_status="completed", status="paused"
    ),
    "update_step 99": lambda mem, s: mem.update_step(s.task, 99, status="completed"),
    "action step": lambda mem, s: mem.record_action(s.task, command="x", step=4),
    "list by step": lambda mem, s: mem.list_actions(s.task, step=5),
    "depends on": lambda mem, s: mem.update_step(s.task, 1, depends_on=[2, 7]),
    "move to 9": lambda mem, s: mem.replan(s.task, [MoveStep(1, 9)]),
    "move step 9": lambda mem, s: mem.replan(s.task, [MoveStep(9, 1)]),
    "insert at 0": lambda mem, s: mem.replan(s.task, [AddStep("x", position=0)]),
    "insert at 5": lambda mem, s: mem.replan(s.task, [AddStep("x", position=5)]),
    "remove 5 after an add": lambda mem, s: mem.replan(s.task, [AddStep("ok"), RemoveStep(5)]),
    "rename 7": lambda mem, s: mem.replan(s.task, [RenameStep(7, "x")]),
    "bool step": lambda mem, s: mem.update_step(s.task, True, status="completed"),
    "float step": lambda mem, s: mem.update_step(s.task, 1.0, status="completed"),  # type: ignore[arg-type]
}


@pytest.mark.parametrize("call", OUT_OF_RANGE.values(), ids=OUT_OF_RANGE.keys())
def test_step_out_of_range_is_refused(
    mem: clew.Memory, stored: Stored, call: Callable[[clew.Memory, Stored], object]
) -> None:
    before = snapshot(mem)
    with pytest.raises(clew.ValidationError, match=r"out of range|a number or a step id"):
        call(mem, stored)
    assert_unchanged(mem, before)


def test_a_step_of_a_task_without_plan_is_refused(mem: clew.Memory) -> None:
    task = mem.create_task("No plan")
    before = snapshot(mem)
    for call in (
        lambda: mem.update_step(task.id, 1, status="active"),
        lambda: mem.update_task(task.id, message="lost?", step=1, step_status="active"),
        lambda: mem.record_action(task.id, command="x", step=1),
    ):
        with pytest.raises(clew.ValidationError, match="has no plan steps; add one with replan"):
            call()
    assert_unchanged(mem, before)


@pytest.mark.parametrize(
    "args",
    [
        ["task", "update", "TASK", "--step", "9"],
        ["task", "update", "TASK", "--step", "0"],
        ["task", "update", "TASK", "-m", "lost?", "--step", "4", "--step-status", "completed"],
        ["task", "action", "TASK", "-c", "x", "--step", "4"],
        ["task", "replan", "TASK", "--move", "1", "9"],
        ["task", "replan", "TASK", "--insert", "0", "x"],
        ["task", "replan", "TASK", "--add", "ok", "--remove", "5"],
    ],
)
def test_cli_step_out_of_range(cli: Cli, mem: clew.Memory, stored: Stored, args: list[str]) -> None:
    before = snapshot(mem)
    assert "out of range" in error_line(cli(*fill(args, stored)))
    assert_unchanged(mem, before)


# -- non-UTF-8 ------------------------------------------------------------------------------


def test_non_utf8_output_round_trips_as_exact_bytes(
    mem: clew.Memory, stored: Stored, db: Path
) -> None:
    raw_out, raw_err = b"\xff\xfe raw", b"\x80\x00 err\r\n"
    action = mem.record_action(
        stored.task, command="x", exit_code=0, stdout=raw_out, stderr=raw_err
    )
    assert (action.stdout, action.stderr) == (raw_out, raw_err)
    assert isinstance(action.stdout, bytes)
    # Text that came from undecodable bytes (surrogateescape) is kept as those bytes.
    escaped = mem.record_action(stored.task, command="y", stdout="ok \udcff\udcfe")
    assert escaped.stdout == b"ok \xff\xfe"
    # Valid UTF-8 bytes are text.
    assert mem.record_action(stored.task, command="z", stdout="é".encode()).stdout == "é"
    started = mem.record_action(stored.task, command="w", status="started")
    finished = mem.finish_action(started.id, exit_code=3, stdout=b"\xc3\x28", stderr=raw_err)
    assert (finished.stdout, finished.stderr) == (b"\xc3\x28", raw_err)
    (event,) = [e for e in mem.journal() if e.data.get("action", {}).get("id") == action.id]
    assert event.data["action"]["stdout"] == raw_out
    mem.close()
    with clew.open(db) as again:
        assert again.get_action(action.id).stdout == raw_out
        assert again.get_action(action.id).stderr == raw_err
        assert again.get_action(escaped.id).stdout == b"ok \xff\xfe"
        assert again.get_action(finished.id).stdout == b"\xc3\x28"
        assert again.get_action(stored.action).stdout == b"\xffbuilt"
        assert again.verify().ok


NOT_UTF8 = "half \udcff a surrogate"
NOT_UTF8_TEXT: dict[str, Callable[[clew.Memory, Stored], object]] = {
    "add_message": lambda mem, s: mem.add_message(s.task, NOT_UTF8),
    "update message": lambda mem, s: mem.update_task(
        s.task, message=NOT_UTF8, step=1, step_status="completed"
    ),
    "task name": lambda mem, s: mem.create_task(NOT_UTF8),
    "goal": lambda mem, s: mem.update_task(s.task, message="lost?", goal=NOT_UTF8),
    "step title": lambda mem, s: mem.replan(s.task, [AddStep(NOT_UTF8)]),
    "step summary": lambda mem, s: mem.update_step(s.task, 1, summary=NOT_UTF8),
    "action summary": lambda mem, s: mem.record_action(s.task, summary=NOT_UTF8),
    "command": lambda mem, s: mem.record_action(s.task, command=NOT_UTF8),
    "log line": lambda mem, s: mem.log_action(s.action, NOT_UTF8),
    "metadata": lambda mem, s: mem.update_task(s.task, metadata={"k": NOT_UTF8}),
}


@pytest.mark.parametrize("call", NOT_UTF8_TEXT.values(), ids=NOT_UTF8_TEXT.keys())
def test_text_that_is_not_utf8_is_refused(
    mem: clew.Memory, stored: Stored, call: Callable[[clew.Memory, Stored], object]
) -> None:
    before = snapshot(mem)
    with pytest.raises(clew.ValidationError, match="not valid UTF-8"):
        call(mem, stored)
    assert_unchanged(mem, before)


def test_cli_non_utf8_output_round_trips(tmp_path: Path) -> None:
    db = tmp_path / "bytes.db"
    task_id = run_clew(db, "task", "new", "Bytes", "--plan", "One").stdout.decode().strip()
    out_file, err_file = tmp_path / "out.bin", tmp_path / "err.bin"
    out_file.write_bytes(b"\xff\xfe raw\x00\r\n\x80 end")
    err_file.write_bytes(b"\xfe only error\n")
    made = run_clew(
        db,
        "task",
        "action",
        task_id,
        "--command",
        "x",
        "--exit-code",
        "0",
        "--stdout-file",
        str(out_file),
        "--stderr-file",
        str(err_file),
    )
    assert made.returncode == 0, made.stderr
    action_id = made.stdout.decode().strip()
    assert run_clew(db, "task", "output", action_id).stdout == out_file.read_bytes()
    assert run_clew(db, "task", "output", action_id, "--stderr").stdout == err_file.read_bytes()
    assert run_clew(db, "verify").returncode == 0


def test_cli_non_utf8_argument_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "args.db"
    with clew.open(db) as mem:
        task_id = mem.create_task("Args", ["One"]).id
        before = snapshot(mem)
    for args in (
        [b"task", b"update", task_id.encode(), b"-m", b"caf\xe9 latin-1"],
        [b"task", b"new", b"\xff\xfe"],
        [b"task", b"update", task_id.encode(), b"--step", b"1", b"--summary", b"\x80"],
    ):
        line = process_error_line(run_clew(db, *args))
        assert "not valid UTF-8" in line
    with clew.open(db) as mem:
        assert_unchanged(mem, before)


# -- 10 MB outputs --------------------------------------------------------------------------


def big_text(size: int) -> str:
    unit = "línea de salida número ∑ — ok\n"
    return (unit * (size // len(unit) + 1))[:size]


def big_bytes(size: int) -> bytes:
    unit = bytes(range(256))  # not valid UTF-8
    return (unit * (size // len(unit) + 1))[:size]


def test_ten_megabyte_outputs_are_stored_whole(mem: clew.Memory, stored: Stored, db: Path) -> None:
    text, binary = big_text(TEN_MB), big_bytes(TEN_MB)
    first = mem.record_action(stored.task, command="cat log", exit_code=0, stdout=text)
    second = mem.record_action(stored.task, command="cat bin", exit_code=1, stderr=binary)
    assert first.stdout == text and second.stderr == binary
    mem.close()
    with clew.open(db) as again:
        assert again.get_action(first.id).stdout == text
        assert again.get_action(second.id).stderr == binary
        assert again.get_action(stored.action).stdout == b"\xffbuilt"  # nothing else lost
        assert [m.content for m in again.list_messages(stored.task)] == ["building"]
        assert again.verify().ok


def test_cli_ten_megabyte_output_from_file_and_stdin(tmp_path: Path) -> None:
    db = tmp_path / "big.db"
    task_id = run_clew(db, "task", "new", "Big", "--plan", "One").stdout.decode().strip()
    from_file = big_bytes(TEN_MB)
    blob = tmp_path / "big.bin"
    blob.write_bytes(from_file)
    from_stdin = big_text(TEN_MB).encode()
    made = [
        run_clew(db, "task", "action", task_id, "-c", "a", "--stdout-file", str(blob)),
        run_clew(db, "task", "action", task_id, "-c", "b", "--stdout-file", "-", stdin=from_stdin),
    ]
    for done in made:
        assert done.returncode == 0, done.stderr
    file_action, stdin_action = (done.stdout.decode().strip() for done in made)
    assert run_clew(db, "task", "output", file_action).stdout == from_file
    assert run_clew(db, "task", "output", stdin_action).stdout == from_stdin
    assert run_clew(db, "verify").returncode == 0


# -- two processes writing at once ----------------------------------------------------------

CLI_WRITER = r"""
import sys
from clew.cli import main

db, task_id, name = sys.argv[1:4]
sys.stdout.write("ready\n")
sys.stdout.flush()
sys.stdin.readline()
for n in range(40):
    text = f"{name}:{n}"
    assert main(["--db", db, "task", "update", task_id, "-m", text]) == 0
    assert main(["--db", db, "task", "action", task_id, "-c", text, "--exit-code", "0"]) == 0
"""


def test_two_processes_writing_at_once_through_the_cli(tmp_path: Path) -> None:
    db = tmp_path / "two.db"
    with clew.open(db) as mem:
        task_id = mem.create_task("Shared", ["One"]).id
        mem.add_message(task_id, "first")
    results = run_in_lockstep([[CLI_WRITER, str(db), task_id, name] for name in ("a", "b")])
    for code, _, err in results:
        assert code == 0 and err == "", err
    with clew.open(db) as mem:
        wanted = {f"{name}:{n}" for name in "ab" for n in range(40)}
        messages = [m.content for m in mem.list_messages(task_id)]
        assert sorted(messages) == sorted([*wanted, "first"])
        assert sorted(a.command for a in mem.list_actions(task_id)) == sorted(wanted)
        assert mem.verify().ok


# -- command-line usage errors and other malformed values -----------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["task"],
        ["task", "new"],
        ["task", "new", "x", "--bogus"],
        ["--bogus", "task", "list"],
        ["frobnicate"],
        ["task", "frobnicate"],
        ["task", "update"],
        ["task", "show"],
        ["task", "log", "ACTION"],
        ["task", "action", "TASK", "--exit-code", "abc"],
        ["task", "action", "TASK", "--duration", "soon"],
        ["task", "replan", "TASK", "--insert", "1"],
        ["task", "update", "TASK", "-m"],
        ["journal", "--after", "x"],
        ["task", "list", "--status"],
    ],
)
def test_cli_usage_errors(cli: Cli, mem: clew.Memory, stored: Stored, args: list[str]) -> None:
    before = snapshot(mem)
    line = error_line(cli(*fill(args, stored)))
    assert "--help" in line
    assert_unchanged(mem, before)


def test_cli_usage_error_in_a_real_process(tmp_path: Path) -> None:
    db = tmp_path / "usage.db"
    for args in (["task", "new", "x", "--bogus"], ["task", "new"], ["--bogus"]):
        line = process_error_line(run_clew(db, *args))
        assert "--help" in line


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["task", "action", "TASK", "-c", "x", "--input", "{bad"], "not valid JSON"),
        (["task", "action", "TASK", "-c", "x", "--output", "[1, 2]"], "JSON object"),
        (["task", "new", "x", "--meta", "novalue"], "not KEY=VALUE"),
        (["task", "action", "TASK", "-c", "x", "--duration", "-1"], "cannot be negative"),
        (["task", "action", "TASK", "-c", "x", "--stdout-file", "NOFILE"], "cannot read stdout"),
        (["task", "action", "TASK", "-c", "x", "--stdout-file", "NLFILE"], "cannot read stdout"),
        (
            ["task", "action", "TASK", "-c", "x", "--stdout-file", "-", "--stderr-file", "-"],
            "only one of",
        ),
        (["task", "replan", "TASK", "--insert", "first", "x"], "must be a step number"),
        (["task", "update", "TASK", "--meta", "=1"], "not KEY=VALUE"),
    ],
    ids=[
        "bad json",
        "json not object",
        "meta",
        "negative duration",
        "missing file",
        "missing file with a newline",
        "stdin twice",
        "position",
        "meta key",
    ],
)
def test_cli_malformed_values(
    cli: Cli,
    mem: clew.Memory,
    stored: Stored,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    says: str,
) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"from stdin")))
    files = {"NOFILE": str(tmp_path / "nope.txt"), "NLFILE": str(tmp_path / "no\nsuch.txt")}
    before = snapshot(mem)
    line = error_line(cli(*[files.get(a, a) for a in fill(args, stored)]))
    assert says in line
    assert_unchanged(mem, before)


def test_a_file_that_is_not_a_clew_store_is_refused_and_left_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("hello " * 1000)
    other = tmp_path / "other.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE people (name TEXT)")
    conn.execute("INSERT INTO people VALUES ('ada')")
    conn.commit()
    conn.close()
    for path in (text, other):
        before = path.read_bytes()
        with pytest.raises(clew.StoreError, match="not a clew store"):
            clew.open(path)
        assert path.read_bytes() == before
        capsys.readouterr()
        code = main(["--db", str(path), "task", "list"])
        captured = capsys.readouterr()
        assert error_line(Result(code, captured.out, captured.err))
        # Someone else's file is not touched: same bytes, no WAL switch, no side files.
        assert path.read_bytes() == before, path
        assert not os.path.exists(f"{path}-wal")
    directory = tmp_path / "a-directory"
    directory.mkdir()
    with pytest.raises(clew.StoreError):
        clew.open(directory)


# -- stores: read-only, busy, unmakeable folders, missing --db folders, the user store ------
# Issue 10, points 3 and 4: a healthy store is never called foreign, and no store appears
# by surprise. Tests run as root here and in CI, where chmod does not stop a write, so the
# permission decision is tested with os.access answering as it would for another user,
# and a real read-only mount (a bind mount in a user namespace) is used where available.


def run_main(*args: str, capsys: pytest.CaptureFixture[str]) -> Result:
    capsys.readouterr()
    code = main(list(args))
    captured = capsys.readouterr()
    return Result(code, captured.out, captured.err)


def deny_writes(monkeypatch: pytest.MonkeyPatch, *paths: Path) -> None:
    """Make os.access say, as it would for another user, that `paths` cannot be written."""
    real = os.access
    denied = {os.path.abspath(p) for p in paths}

    def access(path: Any, mode: int, **kwargs: Any) -> bool:
        if mode & os.W_OK and os.path.abspath(path) in denied:
            return False
        return real(path, mode, **kwargs)

    monkeypatch.setattr(os, "access", access)


def filled_store(db: Path) -> str:
    with clew.open(db) as mem:
        task = mem.create_task("Deploy", ["Build", "Push"], goal="ship it")
        mem.update_task(task.id, message="use ghcr.io", step=1, step_status="active")
        mem.add_decision(task.id, "Push images to ghcr.io")
        return task.id


def test_why_a_store_cannot_be_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from clew.store.sqlite.store import unwritable

    db = tmp_path / "clew.db"
    assert unwritable(str(db)) is None  # not there yet: it will be created
    db.write_bytes(b"")
    assert unwritable(str(db)) is None
    deny_writes(monkeypatch, tmp_path)
    assert unwritable(str(db)) == "this user may not write its folder"
    deny_writes(monkeypatch, db)
    assert unwritable(str(db)) == "this user may not write the file"

    class ReadOnlyMount:
        f_flag = os.ST_RDONLY

    monkeypatch.setattr(os, "statvfs", lambda path: ReadOnlyMount())
    assert unwritable(str(db)) == "it is on a read-only file system"


@pytest.mark.parametrize("deny", ["file", "folder"])
def test_a_read_only_store_is_read_and_refuses_writes_in_one_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    deny: str,
) -> None:
    db = tmp_path / "ro" / "clew.db"
    task_id = filled_store(db)
    before = db.read_bytes()
    deny_writes(monkeypatch, db if deny == "file" else db.parent)
    why = "the file" if deny == "file" else "its folder"
    with clew.open(db) as mem:
        assert mem.read_only
        assert mem.get_task(task_id).name == "Deploy"
        assert mem.search("ghcr")[0].entry.summary == "Push images to ghcr.io"
        report = mem.verify()  # the FTS check runs on a copy: no false mismatch
        assert report.ok, report.differences
        with pytest.raises(clew.StoreReadOnlyError, match=f"is read-only .*may not write {why}"):
            mem.update_task(task_id, message="lost?")
        # A model's tool call gets the same sentence as a tool error, and reads still answer.
        from clew.tools import registry as tools

        refused = tools.call(mem, "task_update", {"task_id": task_id, "message": "lost?"})
        assert refused.is_error and "is read-only" in refused.text
        assert not tools.call(mem, "task_state", {"task_id": task_id}).is_error
        # SQLite itself opened it read-only: a write that slipped past clew is refused too.
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            mem._store._conn.execute("DELETE FROM tasks")  # type: ignore[attr-defined]
    for args in (["task", "list"], ["state", task_id], ["search", "ghcr"], ["verify"]):
        result = run_main("--db", str(db), *args, capsys=capsys)
        assert result.code == 0, (args, result.err)
        assert result.err == ""
    line = error_line(
        run_main("--db", str(db), "task", "update", task_id, "--message", "x", capsys=capsys)
    )
    assert line == (
        f"clew: error: the store {db} is read-only (this user may not write {why}): reads"
        " work, but this would change it; to write, give this user write access to the file"
        " and its folder"
    )
    assert db.read_bytes() == before


def test_a_read_only_store_that_needs_an_upgrade_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "clew.db"
    filled_store(db)
    conn = sqlite3.connect(db)
    newest = conn.execute("SELECT max(number) FROM clew_migrations").fetchone()[0]
    conn.execute("DELETE FROM clew_migrations WHERE number = ?", (newest,))
    conn.commit()
    conn.close()
    deny_writes(monkeypatch, db)
    with pytest.raises(clew.StoreError, match=r"needs setting up or upgrading .* open it once"):
        clew.open(db)


MOUNT_SCRIPT = r"""
import json, subprocess, sys
source, target, db, task_id = sys.argv[1:5]
subprocess.run(["mount", "--bind", "-o", "ro", source, target], check=True)
out = []
for args in (["task", "list"], ["state", task_id], ["search", "ghcr"], ["verify"],
             ["task", "update", task_id, "--message", "x"]):
    done = subprocess.run([sys.executable, "-m", "clew", "--db", db, *args],
                          capture_output=True, text=True)
    out.append([done.returncode, done.stdout, done.stderr])
print(json.dumps(out))
"""


def _in_a_read_only_mount(source: Path, target: Path, *args: str) -> Any:
    """Run MOUNT_SCRIPT in a new mount namespace (a user namespace when unprivileged)."""
    import shutil

    if shutil.which("unshare") is None or shutil.which("mount") is None:
        pytest.skip("needs unshare and mount")
    for flags in (["-rm"], ["-m"]):
        done = subprocess.run(
            [
                "unshare",
                *flags,
                sys.executable,
                "-c",
                MOUNT_SCRIPT,
                str(source),
                str(target),
                *args,
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        if done.returncode == 0:
            return __import__("json").loads(done.stdout)
    pytest.skip(f"no bind mount in a namespace here: {done.stderr.strip()[-200:]}")


@pytest.mark.parametrize("files", ["closed", "open", "wal only"])
def test_a_store_on_a_read_only_mount_is_read_and_refuses_writes(
    tmp_path: Path, files: str
) -> None:
    source, target = tmp_path / "data", tmp_path / "mnt"
    target.mkdir()
    db = source / "clew.db"
    task_id = filled_store(db)
    writer = None
    if files != "closed":  # another process has it open: its -wal and -shm files are there
        writer = sqlite3.connect(db, isolation_level=None)
        writer.execute("PRAGMA wal_autocheckpoint = 0")
        writer.execute("UPDATE tasks SET name = name")  # a commit that lives in the -wal
        assert os.path.exists(f"{db}-wal") and os.path.exists(f"{db}-shm")
    if files == "wal only":  # a -wal left without its -shm: a reader cannot make one there
        assert writer is not None
        wal = Path(f"{db}-wal").read_bytes()
        writer.close()  # removes both files
        Path(f"{db}-wal").write_bytes(wal)
        writer = None
    try:
        results = _in_a_read_only_mount(source, target, str(target / "clew.db"), task_id)
    finally:
        if writer is not None:
            writer.close()
    if files == "wal only":
        for code, out, err in results:
            assert (code, out) == (2, "")
            assert err == (
                f"clew: error: cannot read the store {target / 'clew.db'}: its write-ahead log"
                f" ({target / 'clew.db'}-wal) needs a -shm file that this user cannot create"
                " there; open it once with write access\n"
            )
        return
    *reads, write = results
    for code, out, err in reads:
        assert code == 0 and err == "", (code, out, err)
    assert "Deploy" in reads[0][1]
    assert "Push images to ghcr.io" in reads[2][1]
    assert reads[3][1].startswith("ok:")
    code, out, err = write
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert err.endswith(
        "is read-only (it is on a read-only file system): reads work, but this would change"
        " it; to write, remount it read-write\n"
    )


def test_a_store_held_past_the_busy_timeout_says_busy_and_names_the_option(
    tmp_path: Path,
) -> None:
    db = tmp_path / "busy" / "clew.db"
    task_id = filled_store(db)
    with clew.open(db) as mem:
        before = snapshot(mem)
    holder = subprocess.Popen(  # a real second process holds the write lock
        [
            sys.executable,
            "-c",
            "import sqlite3, sys; c = sqlite3.connect(sys.argv[1], isolation_level=None);"
            " c.execute('BEGIN IMMEDIATE'); print('held', flush=True); sys.stdin.read()",
            str(db),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        write = ["task", "update", task_id, "--message", "lost?"]
        line = process_error_line(run_clew(db, "--busy-timeout", "0.1", *write))
        assert line == (
            f"clew: error: the store {db} is busy: another process held its write lock longer"
            " than the busy timeout (0.1 s); try again, or wait longer with --busy-timeout"
            " SECONDS ($CLEW_BUSY_TIMEOUT; busy_timeout= in Python)"
        )
        env = {**os.environ, "CLEW_BUSY_TIMEOUT": "0.2"}
        done = subprocess.run(
            [sys.executable, "-m", "clew", "--db", str(db), *write],
            capture_output=True,
            env=env,
            timeout=60,
        )
        assert "(0.2 s)" in process_error_line(done)
        # Reads do not wait for a writer, and verify never calls a busy store damaged.
        assert run_clew(db, "--busy-timeout", "0.1", "task", "list").returncode == 0
        # (FTS5's index check is a write: it waits like one, and says busy, not damaged.)
        line = process_error_line(run_clew(db, "--busy-timeout", "0.1", "verify"))
        assert line.startswith(f"clew: error: the store {db} is busy")
        with (
            clew.open(db, busy_timeout=0.1) as mem,
            pytest.raises(clew.StoreBusyError, match=r"busy_timeout= in Python"),
        ):
            mem.update_task(task_id, message="lost?")
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=60)
        assert holder.stdout is not None
        holder.stdout.close()
    with clew.open(db) as mem:
        assert_unchanged(mem, before)


BAD_TIMEOUTS = ["soon", "-1", "nan", "1e400", "86401", ""]


@pytest.mark.parametrize("value", BAD_TIMEOUTS[:-1])
def test_a_bad_busy_timeout_option_is_one_line(cli: Cli, mem: clew.Memory, value: str) -> None:
    assert error_line(cli("--busy-timeout", value, "task", "list")) == (
        f"clew: error: busy timeout {value!r} is not a number of seconds from 0 to 86400"
    )


@pytest.mark.parametrize("value", BAD_TIMEOUTS)
def test_a_bad_busy_timeout_variable_is_one_line(
    cli: Cli, mem: clew.Memory, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("CLEW_BUSY_TIMEOUT", value)
    assert error_line(cli("task", "list")) == (
        f"clew: error: $CLEW_BUSY_TIMEOUT {value!r} is not a number of seconds from 0 to 86400"
    )


@pytest.mark.parametrize("value", [-1, float("nan"), float("inf"), 10**30, "soon", True])
def test_a_bad_busy_timeout_in_python_is_a_validation_error(db: Path, value: Any) -> None:
    with pytest.raises(clew.ValidationError, match="is not a number of seconds"):
        clew.open(db, busy_timeout=value)
    assert not db.exists()


def test_a_missing_db_folder_is_refused_unless_init_or_create(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "typo" / "clew.db"
    line = error_line(run_main("--db", str(db), "task", "list", capsys=capsys))
    assert line == (
        f"clew: error: the folder {db.parent} of the store (--db {db}) does not exist;"
        f" make the store with `clew --db {db} init`, or add --create"
    )
    monkeypatch.setenv("CLEW_DB", str(db))
    line = error_line(run_main("task", "new", "T", capsys=capsys))
    assert f"(${'CLEW_DB'}={db}) does not exist" in line
    assert not db.parent.exists()  # nothing appeared
    assert run_main("task", "list", "--create", capsys=capsys).code == 0
    assert db.exists()
    other = tmp_path / "made" / "by" / "init.db"
    done = run_main("--db", str(other), "init", capsys=capsys)
    assert done.code == 0 and done.out == f"created a clew store at {other}\n"
    assert other.exists()
    assert not (tmp_path / ".clew").exists()  # init made the store it was told to
    with clew.open(tmp_path / "python" / "clew.db"):  # the library creates, as documented
        pass


@pytest.mark.parametrize("place", ["db", "init"])
def test_a_folder_that_cannot_be_made_is_one_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    place: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("in the way")
    (tmp_path / ".clew").write_text("in the way")
    if place == "db":
        args = ["--db", str(tmp_path / "afile" / "sub" / "clew.db"), "--create", "task", "list"]
        folder = tmp_path / "afile" / "sub"
    else:
        args, folder = ["init"], tmp_path / ".clew"
    line = error_line(run_main(*args, capsys=capsys))
    expected = f"clew: error: cannot make the folder {folder} for the store: a file is in the way"
    assert line == expected
    with pytest.raises(clew.StoreError, match="a file is in the way"):
        clew.open(folder / "clew.db")


def test_a_folder_without_permission_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)

    def no_permission(path: Any, *args: Any, **kwargs: Any) -> None:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(os, "makedirs", no_permission)
    line = error_line(run_main("init", capsys=capsys))
    assert line == (
        f"clew: error: cannot make the folder {tmp_path / '.clew'} for the store: Permission denied"
    )
    monkeypatch.undo()
    monkeypatch.chdir(tmp_path)
    deny_writes(monkeypatch, tmp_path)  # the folder exists, but this user may not write it
    line = error_line(run_main("--db", str(tmp_path / "new.db"), "task", "list", capsys=capsys))
    assert line == (
        f"clew: error: cannot create the store {tmp_path / 'new.db'}: this user may not write"
        f" {tmp_path}"
    )


def test_the_per_user_store_is_announced_once_and_never_on_json_stdout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    work = tmp_path / "no-project"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    from clew.core.location import find_project_store

    if find_project_store(str(work)) is not None:
        pytest.skip("a .clew/ folder above the temporary folder")
    user_store = tmp_path / "data" / "clew" / "clew.db"
    first = run_main("task", "list", "--json", capsys=capsys)
    assert first.code == 0 and __import__("json").loads(first.out) == []
    assert first.err == (
        f"clew: using the per-user store {user_store}: no .clew/ folder was found above this"
        " one (`clew init` makes one here); this note is shown once\n"
    )
    second = run_main("task", "list", capsys=capsys)
    assert second.code == 0 and second.err == ""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "elsewhere"))
    assert "using the per-user store" in run_main("task", "list", capsys=capsys).err


def test_init_below_a_project_store_warns_that_it_hides_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = tmp_path / "project"
    inner = project / "service"
    inner.mkdir(parents=True)
    monkeypatch.chdir(project)
    assert run_main("init", capsys=capsys).err == ""
    monkeypatch.chdir(inner)
    done = run_main("init", capsys=capsys)
    parent = project / ".clew" / "clew.db"
    assert done.code == 0 and "created a clew store" in done.out
    assert done.err == (
        f"clew: warning: {project} above already has a store; commands run in {inner} and below"
        f" now use the new one and no longer see its tasks (`clew --db {parent} task list`"
        " still shows them)\n"
    )
    again = run_main("init", capsys=capsys)  # already there: nothing new is hidden
    assert again.err == "" and again.out.startswith("already has")


def test_a_folder_given_as_the_store_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = error_line(run_main("--db", str(tmp_path), "task", "list", capsys=capsys))
    assert line == (
        f"clew: error: {tmp_path} is a folder, not a store file; a store in it is like"
        f" {tmp_path / '.clew' / 'clew.db'}"
    )
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("device", ["/dev/null", "/dev/zero"])
def test_a_device_given_as_the_store_is_one_line(
    device: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    line = error_line(run_main("--db", device, "task", "list", capsys=capsys))
    assert line == f"clew: error: {device} is not a clew store: it is not a regular file"
    monkeypatch.setenv("CLEW_DB", device)
    assert error_line(run_main("task", "list", capsys=capsys)) == line
    with pytest.raises(clew.StoreError, match="not a regular file"):
        clew.open(device)


# -- search over everything, `seen`, and the recall tools (issue 10, point 9) ----------------


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["search", "deploy", "--kind", "bogus"], "kind 'bogus' is not one of: entry, message"),
        (["search", "deploy", "--kind", ","], "give at least one kind: entry, message"),
        (
            ["search", "deploy", "--kind", "message", "--type", "decision"],
            "type, status and tags filter entries: add the kind entry",
        ),
        (["search", "deploy", "--kind", "turn", "--since", "soon"], "since"),
        (["search", "*", "--kind", "action"], "the search query has no words to look for"),
        (["search", "deploy", "--limit", "0"], "limit"),
        (["entries", "MISSING"], "no entry matches"),
        (["task", "message", "MISSING"], "no message matches"),
        (["task", "message", "TASK"], "no message matches"),
    ],
)
def test_cli_bad_search_input(
    cli: Cli, mem: clew.Memory, stored: Stored, args: list[str], says: str
) -> None:
    before = snapshot(mem)
    line = error_line(cli(*fill(args, stored)))
    assert says in line
    assert_unchanged(mem, before)


@pytest.mark.parametrize(
    ("kinds", "says"),
    [
        ("entry,bogus", "kind 'bogus' is not one of"),
        (["entry", 3], "must be text"),
        ([], "give at least one kind"),
        ({"entry": 1}, "kinds"),
    ],
)
def test_search_all_refuses_bad_kinds(mem: clew.Memory, kinds: Any, says: str) -> None:
    with pytest.raises(clew.ValidationError, match=says):
        mem.search_all("deploy", kinds=kinds)


@pytest.mark.parametrize(
    ("name", "arguments", "says"),
    [
        ("memory_search", {"query": "deploy", "kinds": ["bogus"]}, "kinds"),
        ("memory_search", {"query": "deploy", "kinds": "entry"}, "kinds"),
        ("memory_search", {"query": "((("}, "no words to look for"),
        (
            "conversation_recall",
            {"action": "summary", "session": "nosuchsession"},
            "no session matches 'nosuchsession'; session_list",
        ),
        (
            "conversation_recall",
            {"action": "summary"},
            "no session belongs to the workspace /nowhere; session_list",
        ),
        ("session_list", {"limit": 0}, "limit"),
    ],
)
def test_recall_and_search_tools_say_what_to_call_instead(
    mem: clew.Memory, name: str, arguments: dict[str, Any], says: str
) -> None:
    from clew.tools import registry as tools

    result = tools.call(mem, name, arguments, tools.Context(workspace="/nowhere"))
    assert result.is_error and says in result.text, result.text


# -- damaged journals and stores made by another build (verify, journal, migrations) --------

# Each: what is done to the store's migration records, and the one line a CLI command and
# `clew.open` then give (the store is refused before any table is read).
FOREIGN_SCHEMAS = [
    (
        "UPDATE clew_migrations SET fingerprint = 'f00d' WHERE number = 2",
        "the store's schema step 2 differs from this clew's",
    ),
    (
        "UPDATE clew_migrations SET fingerprint = NULL WHERE number = 1",
        "the store's schema step 1 differs from this clew's (fingerprint none",
    ),
    ("DELETE FROM clew_migrations WHERE number = 4", "without step 4 of this clew's schema"),
    (
        "INSERT INTO clew_migrations VALUES (0, 'other', 'then', 'f00d')",
        "has schema step 0, which this clew does not know",
    ),
]


@pytest.mark.parametrize(
    ("change", "says"), FOREIGN_SCHEMAS, ids=["changed", "erased", "gap", "unknown"]
)
def test_a_store_made_by_another_build_is_refused_in_one_line(
    tmp_path: Path, change: str, says: str
) -> None:
    db = tmp_path / "store.db"
    with clew.open(db) as mem:
        mem.create_task("kept")
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute(change)
    conn.close()
    with pytest.raises(clew.StoreError, match=re.escape(says)):
        clew.open(db)
    line = process_error_line(run_clew(db, "task", "list"))
    assert says in line and "open it with that one" in line


# Each: damage done to one event (message.added) by someone who dropped the append-only
# triggers, then a command with its exit code and what its output says. Nothing crashes.
DAMAGED_EVENTS = [
    ("data = '{oops'", ["verify"], 1, "skipped in the replay: its data is not valid JSON"),
    ("data = '{oops'", ["journal"], 0, "[UNREADABLE: data is not valid JSON]"),
    ("data = '{oops'", ["task", "history", "TASK"], 0, "UNREADABLE: the stored data is not"),
    ("data = '[1]'", ["verify"], 1, "its data is not a JSON object"),
    ("data = '{\"message\": 1}'", ["verify"], 1, "cannot be replayed"),
    ("data = '{\"message\": 1}'", ["task", "history", "TASK"], 0, "data of an unknown shape"),
    ("data = '" + "[" * 100_000 + "'", ["verify"], 1, "not valid JSON"),
    ("data = '" + "[" * 100_000 + "'", ["journal", "--json"], 0, '"unreadable": "[[[['),
    ("hash = 'f00d'", ["verify"], 1, "chain of space 'default' breaks at event"),
    ("created_at = '1999'", ["verify"], 1, "chain of space 'default' breaks at event"),
]


@pytest.mark.parametrize(
    ("damage", "args", "code", "says"),
    DAMAGED_EVENTS,
    ids=[
        "not json: verify",
        "not json: journal",
        "not json: history",
        "not an object",
        "unknown shape: verify",
        "unknown shape: history",
        "nested 100k deep: verify",
        "nested 100k deep: journal",
        "hash",
        "time",
    ],
)
def test_a_damaged_journal_event_is_reported_not_crashed_on(
    cli: Cli,
    mem: clew.Memory,
    stored: Stored,
    db: Path,
    damage: str,
    args: list[str],
    code: int,
    says: str,
) -> None:
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("DROP TRIGGER events_no_update")
    conn.execute(f"UPDATE events SET {damage} WHERE type = 'message.added'")
    conn.close()
    result = cli(*fill(args, stored))
    assert result.code == code, result
    assert "Traceback" not in result.err
    assert says in result.out


# -- hostile values: huge numbers, deep JSON, endless reads, bad environment values ---------
# One table that grows: each command line and the exact line it gets. TASK, STARTED and
# SESSION are ids in the store; {dir} is a folder holding `fifo`, `deep.json` (1,000 levels),
# `digits.json` (a 5,000-digit number) and `big.bin` (2 MB).

DEEP = "[" * 1000 + "]" * 1000
HUGE = "1" + "0" * 30  # 10**30
DIGITS = "9" * 5000
BEYOND = "is out of range: use a whole number from -9223372036854775808 to 9223372036854775807"
NOT_A_FILE = "give a file, or pipe a stream to stdin and give '-'"

HOSTILE: list[tuple[list[str], str]] = [
    # whole numbers beyond SQLite's 64 bits
    (
        ["task", "action", "TASK", "-c", "x", "--exit-code", "9223372036854775808"],
        f"argument --exit-code: '9223372036854775808' {BEYOND} (see `clew task action --help`)",
    ),
    (
        ["task", "finish", "STARTED", "--exit-code", "-9223372036854775809"],
        f"argument --exit-code: '-9223372036854775809' {BEYOND} (see `clew task finish --help`)",
    ),
    (
        ["ledger", "--limit", HUGE],
        f"argument --limit: '{HUGE}' {BEYOND} (see `clew ledger --help`)",
    ),
    (
        ["ledger", "--exit-code", HUGE],
        f"argument --exit-code: '{HUGE}' {BEYOND} (see `clew ledger --help`)",
    ),
    (
        ["journal", "--after", DIGITS],
        f"argument --after: '{'9' * 15}… (5,002 characters) {BEYOND} (see `clew journal --help`)",
    ),
    (["usage", "--days", HUGE], f"argument --days: '{HUGE}' {BEYOND} (see `clew usage --help`)"),
    (["usage", "--days", "100000"], "days 100000 is too large: use 1-36500"),
    (
        ["trace", "decide", "TASK", "--action", "x", "--prompt-tokens", HUGE],
        f"argument --prompt-tokens: '{HUGE}' {BEYOND} (see `clew trace decide --help`)",
    ),
    (
        ["task", "update", "TASK", "--step", DIGITS],
        f"step '{'9' * 15}… (5,002 characters) is out of range: give a step number like 2",
    ),
    (
        ["task", "replan", "TASK", "--insert", DIGITS, "x"],
        f"step '{'9' * 15}… (5,002 characters) is out of range: give a step number like 2",
    ),
    # numbers that are not finite, durations and ages without end
    (
        ["task", "action", "TASK", "-c", "x", "--duration", "nan"],
        "argument --duration: 'nan' is not a finite number like 2.5"
        " (see `clew task action --help`)",
    ),
    (
        ["task", "action", "TASK", "-c", "x", "--cpu-seconds", "1e999"],
        "argument --cpu-seconds: '1e999' is not a finite number like 2.5"
        " (see `clew task action --help`)",
    ),
    (
        ["entries", "--since", "99999999999d"],
        "since '99999999999d' reaches back too far; give an age of at most 100000w, or a date",
    ),
    (
        ["task", "tidy", "--pause-after", "99999999999d"],
        "duration '99999999999d' is longer than 100 years",
    ),
    # JSON too deep, with numbers too long, or with values JSON does not have
    (
        ["task", "action", "TASK", "-c", "x", "--input", DEEP],
        "--input is nested more than 200 levels deep; flatten it",
    ),
    (
        ["task", "action", "TASK", "-c", "x", "--output", '{"n": ' + DIGITS + "}"],
        "--output holds a number with too many digits",
    ),
    (
        ["task", "action", "TASK", "-c", "x", "--input", '{"n": NaN}'],
        "--input holds NaN, which is not a JSON number",
    ),
    (
        ["task", "new", "x", "--meta", "k=" + DEEP],
        "--meta k is nested more than 200 levels deep; flatten it",
    ),
    (["task", "update", "TASK", "--meta", "k=1e999"], "--meta k holds '1e999', a number too large"),
    (
        [
            "trace",
            "decide",
            "TASK",
            "--action",
            "x",
            "--context",
            '{"a": ' * 1000 + "1" + "}" * 1000,
        ],
        "--context is nested more than 200 levels deep; flatten it",
    ),
    (
        ["session", "import", "{dir}/deep.json"],
        "{dir}/deep.json is nested more than 200 levels deep; flatten it",
    ),
    (
        ["session", "import", "{dir}/digits.json"],
        "{dir}/digits.json holds a number with too many digits",
    ),
    # reads with no end, and what is not a file
    (
        ["session", "import", "/dev/zero"],
        f"cannot read messages from /dev/zero: it is not a regular file; {NOT_A_FILE}",
    ),
    (
        ["session", "import", "{dir}/fifo"],
        f"cannot read messages from {{dir}}/fifo: it is not a regular file; {NOT_A_FILE}",
    ),
    (
        ["session", "import", "{dir}"],
        f"cannot read messages from {{dir}}: it is a folder; {NOT_A_FILE}",
    ),
    (
        ["task", "action", "TASK", "-c", "x", "--stdout-file", "/dev/zero"],
        f"cannot read stdout from /dev/zero: it is not a regular file; {NOT_A_FILE}",
    ),
    (
        ["task", "finish", "STARTED", "--stderr-file", "{dir}/fifo"],
        f"cannot read stderr from {{dir}}/fifo: it is not a regular file; {NOT_A_FILE}",
    ),
    (
        ["note", "--type", "discovery", "--summary", "x", "--detail-file", "/dev/zero"],
        f"cannot read detail from /dev/zero: it is not a regular file; {NOT_A_FILE}",
    ),
    # files larger than the limit, and the limit itself
    (
        [
            "task",
            "action",
            "TASK",
            "-c",
            "x",
            "--stdout-file",
            "{dir}/big.bin",
            "--max-input-mb",
            "1",
        ],
        "stdout from {dir}/big.bin is larger than 1 MB; raise the limit with --max-input-mb"
        " (or $CLEW_MAX_INPUT_MB)",
    ),
    (
        ["task", "action", "TASK", "-c", "x", "--max-input-mb", "0"],
        "argument --max-input-mb: '0' is not a number of megabytes from 1 to 2047"
        " (see `clew task action --help`)",
    ),
    # recall speaks in its options, not the tool's arguments
    (
        ["recall", "SESSION", "--range", "x"],
        "--range 'x' is not turns like 1-3 (or 1 3, or 5 for one turn)",
    ),
    (["recall", "SESSION", "--range", "2-1"], "--range 2-1 goes backwards; give it as 1-2"),
    (
        ["recall", "SESSION", "--range", "1-9"],
        "--range 9 is out of range: session SESSION has turns 1-2",
    ),
    (
        ["recall", "SESSION", "--range", "0", "2"],
        "--range 0 is out of range: session SESSION has turns 1-2",
    ),
    (
        ["recall", "SESSION", "--around", "0"],
        "--around 0 is out of range: session SESSION has turns 1-2",
    ),
    (["recall", "SESSION", "--search", " "], "--search needs a value"),
    # mistyped commands
    (["serch", "x"], "unknown command 'serch'; did you mean 'search'? (see `clew --help`)"),
    (
        ["task", "updte"],
        "unknown task command 'updte'; did you mean 'update'? (see `clew task --help`)",
    ),
    # Superseding, keeping open, the kinds searched (issue 25)
    (
        ["task", "record", "TASK", "--decision", "x", "--supersedes", "zzzz"],
        "no entry matches 'zzzz'; list a task's entries with `clew entries --task TASK`",
    ),
    (
        ["task", "record", "TASK", "--finding", "x", "--keep-open"],
        "--keep-open and --command go with --error",
    ),
    (
        ["task", "keep-open", "TASK", "zzzz"],
        "no entry matches 'zzzz'; list a task's entries with `clew entries --task TASK`",
    ),
    (
        ["search", "deploy", "--kind", "pattern,bogus"],
        "kind 'bogus' is not one of: entry, message, action, turn, decision, task, goal, step,"
        " answer, pattern, guardrail",
    ),
]


@pytest.fixture
def hostile_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "hostile"
    folder.mkdir()
    os.mkfifo(folder / "fifo")
    (folder / "deep.json").write_text(DEEP)
    (folder / "digits.json").write_text('{"role": "user", "content": "x", "n": ' + DIGITS + "}")
    (folder / "big.bin").write_bytes(b"x" * (2 * 1024 * 1024))
    return folder


@pytest.mark.parametrize(("args", "says"), HOSTILE, ids=[" ".join(a)[:60] for a, _ in HOSTILE])
def test_hostile_command_line_gets_one_exact_line(
    cli: Cli, mem: clew.Memory, stored: Stored, hostile_dir: Path, args: list[str], says: str
) -> None:
    session = mem.import_session(
        [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yes"}]
    )
    names = {"SESSION": session.id}
    before = snapshot(mem)
    here = str(hostile_dir)
    line = error_line(cli(*[names.get(a, a).replace("{dir}", here) for a in fill(args, stored)]))
    assert line == "clew: error: " + says.replace("{dir}", here).replace("SESSION", session.id)
    assert_unchanged(mem, before)


ENVIRONMENT: list[tuple[dict[str, str], str]] = [
    ({"CLEW_WORKER": ""}, "worker '' is not one of: auto, thread, process, off"),
    ({"CLEW_WORKER": "maybe"}, "worker 'maybe' is not one of: auto, thread, process, off"),
    ({"CLEW_STATE_BUDGET": "abc"}, "state budget must be a whole number of tokens, not 'abc'"),
    (
        {"CLEW_STATE_BUDGET": DIGITS},
        f"state budget must be a whole number of tokens, not '{'9' * 15}… (5,002 characters)",
    ),
    ({"CLEW_SUMMARY_EVERY": "-1"}, "summary every must be a whole number, not '-1'"),
    ({"CLEW_MIRROR": "maybe"}, "mirror must be true or false, not 'maybe'"),
    ({"CLEW_SPACE": "x" * 5000}, "space is 5000 characters long; the limit is 1000"),
    (
        {"CLEW_SPACE": "a\nb"},
        "space 'a\\nb' holds a control character or a line break; give a printable name",
    ),
    (
        {"CLEW_SPACE": "\x1b[31m"},
        "space '\\x1b[31m' holds a control character or a line break; give a printable name",
    ),
    ({"CLEW_CALLS_PER_TASK": "x"}, "limit calls_per_task must be a whole number, not 'x'"),
    (
        {"CLEW_MODEL": "m", "CLEW_MODEL_TIMEOUT": "nan"},
        "model timeout must be positive (at most 3600 seconds) and retries 0-100",
    ),
    (
        {"CLEW_MODEL": "m", "CLEW_MODEL_RETRIES": DIGITS},
        "model timeout must be positive (at most 3600 seconds) and retries 0-100",
    ),
    (
        {"CLEW_MODEL": "m", "CLEW_MODEL_PROVIDER": "zzz"},
        "model provider 'zzz' is not one of: openai, anthropic",
    ),
]


@pytest.mark.parametrize(
    ("env", "says"), ENVIRONMENT, ids=[" ".join(e)[:40] for e, _ in ENVIRONMENT]
)
def test_bad_environment_value_gets_one_exact_line(
    cli: Cli, mem: clew.Memory, monkeypatch: pytest.MonkeyPatch, env: dict[str, str], says: str
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert error_line(cli("task", "list")) == f"clew: error: {says}"


def test_a_bad_input_limit_in_the_environment_is_one_line(
    cli: Cli, stored: Stored, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out.txt"
    out.write_text("ok")
    args = ["task", "action", stored.task, "-c", "x", "--stdout-file", str(out)]
    monkeypatch.setenv("CLEW_MAX_INPUT_MB", "lots")
    assert error_line(cli(*args)) == (
        "clew: error: $CLEW_MAX_INPUT_MB 'lots' is not a number of megabytes from 1 to 2047"
    )
    monkeypatch.setenv("CLEW_MAX_INPUT_MB", "1")
    assert cli(*args).code == 0  # a file under the limit is read whole


def test_the_input_limit_can_be_raised(
    cli: Cli, mem: clew.Memory, stored: Stored, hostile_dir: Path
) -> None:
    big = hostile_dir / "big.bin"
    made = cli(
        "task", "action", stored.task, "-c", "x", "--stdout-file", str(big), "--max-input-mb", "3"
    )
    assert made.code == 0, made.err
    assert mem.get_action(made.out.strip()).stdout == big.read_text()


API_HOSTILE: dict[str, tuple[Callable[[clew.Memory, Stored], object], str]] = {
    "exit code beyond 64 bits": (
        lambda mem, s: mem.record_action(s.task, command="x", exit_code=2**63),
        f"exit code 9223372036854775808 {BEYOND}",
    ),
    "finish exit code": (
        lambda mem, s: mem.finish_action(s.started, exit_code=-(2**63) - 1),
        f"exit code -9223372036854775809 {BEYOND}",
    ),
    "journal limit": (lambda mem, s: mem.journal(limit=10**30), f"limit {HUGE} {BEYOND}"),
    "journal after": (
        lambda mem, s: mem.journal(after=2**64),
        f"after 18446744073709551616 {BEYOND}",
    ),
    "messages limit": (
        lambda mem, s: mem.list_messages(s.task, limit=10**30),
        f"limit {HUGE} {BEYOND}",
    ),
    "actions limit": (
        lambda mem, s: mem.list_actions(s.task, limit=10**30),
        f"limit {HUGE} {BEYOND}",
    ),
    "ledger exit code": (
        lambda mem, s: mem.commands(exit_code=2**64),
        f"exit code 18446744073709551616 {BEYOND}",
    ),
    "jobs run limit": (lambda mem, s: mem.run_jobs(limit=0), "limit must be at least 1, not 0"),
    "usage days": (lambda mem, s: mem.usage(days=10**30), f"days {HUGE} {BEYOND}"),
    "usage days past a date": (
        lambda mem, s: mem.usage(days=10**6),
        "days 1000000 is too large: use 1-36500",
    ),
    "entries since": (
        lambda mem, s: mem.list_entries(since="99999999999d"),
        "since '99999999999d' reaches back too far; give an age of at most 100000w, or a date",
    ),
    "duration nan": (
        lambda mem, s: mem.record_action(s.task, command="x", duration_seconds=float("nan")),
        "duration must be a number of seconds, not nan",
    ),
    "duration huge int": (
        lambda mem, s: mem.record_action(s.task, command="x", duration_seconds=10**400),
        "duration must be a number of seconds, not 1000000000000000… (401 characters)",
    ),
    "tokens": (
        lambda mem, s: mem.trace_decision(s.task, "x", prompt_tokens=10**30),
        f"prompt tokens {HUGE} {BEYOND}",
    ),
    "deep metadata": (
        lambda mem, s: mem.create_task("x", metadata={"k": _nested(1000)}),
        "metadata is nested more than 200 levels deep; flatten it",
    ),
    "cyclic metadata": (
        lambda mem, s: mem.create_task("x", metadata=_cyclic()),
        "metadata is nested more than 200 levels deep; flatten it",
    ),
    "metadata with a 5,000-digit number": (
        lambda mem, s: mem.update_task(s.task, metadata={"n": 10**5000}),
        "metadata holds a number with too many digits",
    ),
    "deep action input": (
        lambda mem, s: mem.record_action(s.task, command="x", input={"k": _nested(1000)}),
        "input is nested more than 200 levels deep; flatten it",
    ),
}


def _nested(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth - 1):
        value = [value]
    return value


def _cyclic() -> dict[str, Any]:
    loop: dict[str, Any] = {}
    loop["self"] = loop
    return loop


@pytest.mark.parametrize("name", API_HOSTILE, ids=list(API_HOSTILE))
def test_hostile_value_is_a_validation_error_in_the_api(
    mem: clew.Memory, stored: Stored, name: str
) -> None:
    call, says = API_HOSTILE[name]
    before = snapshot(mem)
    with pytest.raises(clew.ValidationError) as info:
        call(mem, stored)
    assert str(info.value) == says
    assert_unchanged(mem, before)


def test_hostile_json_as_tool_arguments_is_a_model_readable_error(mem: clew.Memory) -> None:
    from clew.tools import registry as tools

    for arguments, says in (
        (DEEP, "the arguments' JSON is nested more than 200 levels deep; flatten it"),
        ('{"limit": ' + DIGITS + "}", "the arguments' JSON holds a number with too many digits"),
        (
            "{bad",
            "the arguments are not valid JSON: Expecting property name enclosed in double quotes",
        ),
    ):
        result = tools.call(mem, "task_list", arguments)
        assert result.is_error and result.text == f"Error: {says}"


def test_endless_reads_end_in_a_real_process(tmp_path: Path) -> None:
    db = tmp_path / "endless.db"
    task_id = run_clew(db, "task", "new", "Endless").stdout.decode().strip()
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    writer = os.open(fifo, os.O_RDWR)  # a writer that never closes: reading would never end
    try:
        line = process_error_line(run_clew(db, "session", "import", str(fifo)))
        assert line.endswith(f"{fifo}: it is not a regular file; {NOT_A_FILE}")
        line = process_error_line(run_clew(db, "session", "import", "/dev/zero"))
        assert "/dev/zero: it is not a regular file" in line
    finally:
        os.close(writer)
    # An endless stdin is read up to the limit, then refused.
    with open("/dev/zero", "rb") as zeros:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "clew",
                "--db",
                str(db),
                "--max-input-mb",
                "1",
                "task",
                "action",
                task_id,
                "-c",
                "x",
                "--stdout-file",
                "-",
            ],
            stdin=zeros,
            capture_output=True,
            timeout=60,
        )
    assert process_error_line(done) == (
        "clew: error: stdout from stdin is larger than 1 MB; raise the limit with --max-input-mb"
        " (or $CLEW_MAX_INPUT_MB)"
    )
    with clew.open(db) as mem:
        assert mem.list_actions(task_id) == [] and mem.verify().ok


@given(st.integers())
def test_whole_numbers_parse_exactly_within_64_bits(number: int) -> None:
    from clew.cli.common import whole

    if -(2**63) <= number < 2**63:
        assert whole(str(number)) == number
    else:
        with pytest.raises(argparse.ArgumentTypeError, match="is out of range"):
            whole(str(number))


@given(st.integers(1, 10**6), st.integers(0, 10**6), st.sampled_from(["-", "..", " ", " - "]))
def test_every_form_of_a_range_means_the_same_turns(first: int, length: int, sep: str) -> None:
    from clew.cli.conversations import turn_range

    last = first + length
    assert turn_range([f"{first}{sep}{last}"]) == (first, last)
    assert turn_range([str(first), str(last)]) == (first, last)
    assert turn_range([str(first)]) == (first, first)


@settings(max_examples=25, deadline=None)
@given(st.binary(max_size=3000), st.integers(1, 3000))
def test_a_read_returns_the_exact_bytes_or_refuses(data: bytes, limit: int) -> None:
    import tempfile

    from clew.cli.common import read_output

    with tempfile.NamedTemporaryFile() as handle:
        handle.write(data)
        handle.flush()
        if len(data) <= limit:
            assert read_output(handle.name, "stdout", [], limit) == data
        else:
            with pytest.raises(clew.ValidationError, match="is larger than"):
                read_output(handle.name, "stdout", [], limit)


JSON_DATA = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=30,
)


@given(JSON_DATA)
def test_json_within_bounds_parses_to_what_json_would(value: Any) -> None:
    from clew.core.checks import json_value

    text = json.dumps(value)
    assert json_value(text, "value") == json.loads(text)


CONFIG_FILES: list[tuple[bytes, str]] = [
    (b"a = " + b"[" * 3000 + b"]" * 3000, "cannot read the config file {path}: nested too deeply"),
    (
        b"[state]\nbudget = " + DIGITS.encode(),
        "cannot read the config file {path}: a number has too many digits",
    ),
    (b"[state]\nbudget = inf", "state budget must be a whole number of tokens, not inf"),
    (b"x = 'caf\xe9'", "the config file {path} is not UTF-8 text"),
    (b"#" * (1024 * 1024 + 1), "cannot read the config file {path}: it is larger than 1024 KB"),
    (
        b"[model]\nmodel = 'm'\nbase_url = 'https://elsewhere.example/v1'",
        "the config file {path} beside the store sets [model] base_url, model: which model clew"
        " sends your memory to, and with which key, is yours to say; move those lines to"
        " {user} or the environment (CLEW_MODEL...)",
    ),
]


@pytest.mark.parametrize(("content", "says"), CONFIG_FILES, ids=[s[:30] for _, s in CONFIG_FILES])
def test_a_hostile_config_file_is_one_line(
    cli: Cli, mem: clew.Memory, db: Path, content: bytes, says: str
) -> None:
    path = db.parent / "config.toml"
    path.write_bytes(content)
    user = Path(os.environ["XDG_CONFIG_HOME"]) / "clew" / "config.toml"
    said = "clew: error: " + says.format(path=path, user=user)
    assert error_line(cli("task", "list")) == said
    with pytest.raises(clew.ValidationError):
        clew.open(db)


def test_a_model_in_the_users_own_config_file_is_checked(
    cli: Cli, mem: clew.Memory, db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home-config"))
    (tmp_path / "home-config" / "clew").mkdir(parents=True)
    (tmp_path / "home-config" / "clew" / "config.toml").write_text(
        "[model]\nmodel = 'm'\ntimeout = nan"
    )
    says = "model timeout must be positive (at most 3600 seconds) and retries 0-100"
    assert error_line(cli("task", "list")) == "clew: error: " + says
    with pytest.raises(clew.ValidationError):
        clew.open(db)


TOOL_HOSTILE: list[tuple[str, dict[str, Any], str]] = [
    ("memory_search", {"query": "x", "limit": 10**30}, f"limit must be at most 100, not {HUGE}"),
    (
        "memory_search",
        {"query": "x", "limit": _nested(1500)},
        "limit must be integer, not a value too large to show (list)",
    ),
    (
        "task_state",
        {"task_id": "TASK", "budget": 10**5000},
        "budget must be at most 200000, not a value too large to show (int)",
    ),
    (
        "memory_query",
        {"task_id": "TASK", "step": DIGITS},
        f"step '{'9' * 15}… (5,002 characters) is out of range: task TASK has 3 steps (1-3)",
    ),
    (
        "task_record",
        {"task_id": "TASK", "decision": "x", "step": 2**64},
        "step 18446744073709551616 is out of range: task TASK has 3 steps (1-3)",
    ),
    # Keeping an error open, and the command it came from (issue 25)
    (
        "task_record",
        {"task_id": "TASK", "decision": "x", "keep_open": True},
        "keep_open and command go with error (the error they describe)",
    ),
    (
        "task_record",
        {"task_id": "TASK", "error": "x", "keep_open": "yes"},
        "keep_open must be boolean, not 'yes'",
    ),
    (
        "task_record",
        {"task_id": "TASK", "error": "x", "command": 5},
        "command must be string, not 5",
    ),
    (
        "task_record",
        {"task_id": "TASK", "keeps_open": "zzzz"},
        "no entry matches 'zzzz'; memory_search or memory_query find entries and their ids",
    ),
    (
        "memory_search",
        {"query": "x", "include_superseded": "yes"},
        "include_superseded must be boolean, not 'yes'",
    ),
]


@pytest.mark.parametrize(
    ("name", "arguments", "says"),
    TOOL_HOSTILE,
    ids=[f"{n} {list(a)[-1]}" for n, a, _ in TOOL_HOSTILE],
)
def test_hostile_tool_arguments_are_model_readable_errors(
    mem: clew.Memory, stored: Stored, name: str, arguments: dict[str, Any], says: str
) -> None:
    from clew.tools import registry as tools

    before = snapshot(mem)
    args = {k: stored.task if v == "TASK" else v for k, v in arguments.items()}
    result = tools.call(mem, name, args)
    assert result.is_error and result.text == "Error: " + says.replace("TASK", stored.task)
    assert_unchanged(mem, before)


def test_a_constraint_recorded_by_the_tool_is_kept(mem: clew.Memory, stored: Stored) -> None:
    from clew.tools import registry as tools

    result = tools.call(mem, "task_record", {"task_id": stored.task, "constraint": "no downtime"})
    assert not result.is_error, result.text
    assert [e.summary for e in mem.list_entries(stored.task, type="constraint")] == ["no downtime"]


# -- stuck detection and progress settings (issue 11) -----------------------------------------

# Each: an environment variable (or a config.toml) set to something unusable, and what the
# one-line error says. The store is never opened past its settings, so nothing changes.
BAD_WATCH_SETTINGS = [
    ({"CLEW_PROGRESS": "sometimes"}, None, "progress mode 'sometimes' is not one of: apply"),
    ({"CLEW_STUCK_AFTER": "soon"}, None, "stuck after 'soon' is not a duration like 90s"),
    ({"CLEW_STUCK_AFTER": "-5m"}, None, "stuck after must be a duration of zero or more"),
    ({"CLEW_STUCK_AFTER": "nan"}, None, "stuck after must be a duration of zero or more"),
    ({"CLEW_STUCK_COOLDOWN": "1e999"}, None, "stuck cooldown must be a duration of zero or more"),
    ({"CLEW_STUCK_REPEATS": "1"}, None, "stuck repeats must be at least 2"),
    ({"CLEW_STUCK_REPEATS": "three"}, None, "stuck repeats must be a whole number"),
    ({"CLEW_STUCK": "maybe"}, None, "stuck enabled must be true or false"),
    ({}, "[stuck]\nafter = -1\n", "stuck after must be a duration of zero or more"),
    ({}, '[progress]\nmode = ["apply"]\n', "is not one of: apply, suggest, off"),
]


@pytest.mark.parametrize(("env", "toml", "says"), BAD_WATCH_SETTINGS)
def test_bad_stuck_and_progress_settings_are_one_line(
    cli: Cli,
    mem: clew.Memory,
    stored: Stored,
    db: Path,
    monkeypatch: pytest.MonkeyPatch,
    env: dict[str, str],
    toml: str | None,
    says: str,
) -> None:
    before = snapshot(mem)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    if toml is not None:
        (db.parent / "config.toml").write_text(toml)
    with pytest.raises(clew.ValidationError, match=re.escape(says)):
        clew.open(db)
    for args in (["stuck"], ["task", "update", stored.task, "-m", "Step 2 done"]):
        assert says in error_line(cli(*args))
    monkeypatch.delenv("CLEW_PROGRESS", raising=False)
    for name in env:
        monkeypatch.delenv(name, raising=False)
    (db.parent / "config.toml").unlink(missing_ok=True)
    assert_unchanged(mem, before)


def test_stuck_of_an_unknown_task_is_not_found(cli: Cli, mem: clew.Memory, stored: Stored) -> None:
    before = snapshot(mem)
    with pytest.raises(clew.NotFoundError):
        mem.check_stuck(stored.missing)
    with pytest.raises(clew.NotFoundError):
        mem.stuck(stored.missing)
    with pytest.raises(clew.ValidationError):
        mem.stuck(42)  # type: ignore[arg-type]
    line = error_line(cli("stuck", stored.missing))
    assert "no task matches" in line and "clew task list" in line
    assert_unchanged(mem, before)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "step",
        "steps 1-99999",
        "step 0 done",
        "step -1 done",
        "§0 done",
        "step 2" * 5000,
        "done " * 20_000,
        "\x00\x1b[31mstep 1 done\x1b[0m",
        "s̶t̶e̶p̶ 1 done",
        "STEP 1 DONE?!",
    ],
)
def test_hostile_progress_messages_never_break_the_write_or_the_plan(
    mem: clew.Memory, text: str
) -> None:
    mem.settings = mem.settings._replace(progress="apply")
    task = mem.create_task("T", ["Build", "Push"])
    if not text.strip():
        with pytest.raises(clew.ValidationError):
            mem.add_message(task.id, text)
        return
    mem.add_message(task.id, text)
    statuses = [s.status.value for s in mem.get_task(task.id).plan]
    assert statuses in (["pending", "pending"], ["completed", "pending"])
    assert mem.where(task.id).tokens <= 300
    assert mem.verify().ok


# -- smart waits, maintenance and archived months (issue 11) ---------------------------------

BAD_WAITS: dict[str, tuple[Callable[[clew.Memory, Stored], object], str]] = {
    "remote url": (
        lambda mem, s: mem.add_wait(s.task, "url", "http://10.0.0.1/health"),
        "not on this machine",
    ),
    "url by a name": (
        lambda mem, s: mem.add_wait(s.task, "url", "https://example.com/"),
        "not on this machine",
    ),
    "ftp url": (lambda mem, s: mem.add_wait(s.task, "url", "ftp://localhost/x"), "http://"),
    "url with a bad port": (
        lambda mem, s: mem.add_wait(s.task, "url", "http://localhost:port/"),
        "not a valid URL",
    ),
    "bad regex": (lambda mem, s: mem.add_wait(s.task, "command", "x", regex="("), "not valid"),
    "criterion of another kind": (
        lambda mem, s: mem.add_wait(s.task, "file", "/tmp/x", exit_code=0),
        "a file wait takes contains, regex, not exit_code",
    ),
    "criterion on a manual wait": (
        lambda mem, s: mem.add_wait(s.task, "manual", "review", contains="ok"),
        "takes no criteria",
    ),
    "exit code out of range": (
        lambda mem, s: mem.add_wait(s.task, "command", "x", exit_code=300),
        "0-255",
    ),
    "poll too often": (
        lambda mem, s: mem.add_wait(s.task, "command", "x", poll_every=0),
        "poll interval must be 1s-1d",
    ),
    "poll interval in words": (
        lambda mem, s: mem.add_wait(s.task, "command", "x", poll_every="soon"),
        "not a duration",
    ),
    "zero timeout": (
        lambda mem, s: mem.add_wait(s.task, "command", "x", timeout="0s"),
        "more than 0",
    ),
    "run timeout too long": (
        lambda mem, s: mem.add_wait(s.task, "command", "x", run_timeout="1h"),
        "at most 600s",
    ),
    "time that is no time": (
        lambda mem, s: mem.add_wait(s.task, "time", "tomorrow-ish"),
        "not an ISO time",
    ),
    "empty target": (lambda mem, s: mem.add_wait(s.task, "command", "  "), "empty"),
    "unknown kind": (lambda mem, s: mem.add_wait(s.task, "socket", "x"), "wait kind"),
    "step out of range": (
        lambda mem, s: mem.add_wait(s.task, "manual", "x", step=9),
        "step",
    ),
    "unknown wait": (lambda mem, s: mem.resolve_wait(s.missing), "no wait"),
    "bad month": (lambda mem, s: mem.export_month("2026-13"), "YYYY-MM"),
    "NUL in a command": (lambda mem, s: mem.add_wait(s.task, "command", "echo \x00"), "NUL"),
    "NUL in a path": (lambda mem, s: mem.add_wait(s.task, "file", "a\x00b"), "NUL"),
    "control character in a url": (
        lambda mem, s: mem.add_wait(s.task, "url", "http://localhost/\x07"),
        "control characters",
    ),
    "space in a url": (
        lambda mem, s: mem.add_wait(s.task, "url", "http://localhost/a b"),
        "control characters",
    ),
    "bad wait status": (lambda mem, s: mem.list_waits(status="done"), "wait status"),
}


@pytest.mark.parametrize("case", BAD_WAITS.values(), ids=BAD_WAITS.keys())
def test_bad_waits_are_refused_and_change_nothing(
    mem: clew.Memory, stored: Stored, case: tuple[Callable[[clew.Memory, Stored], object], str]
) -> None:
    call, says = case
    before = snapshot(mem)
    with pytest.raises(clew.ClewError) as raised:
        call(mem, stored)
    assert says in str(raised.value)
    assert mem.list_waits(status=None) == []
    assert_unchanged(mem, before)


def test_a_closed_task_takes_no_wait_and_an_ended_wait_takes_no_end(
    mem: clew.Memory, stored: Stored
) -> None:
    wait = mem.add_wait(stored.task, "manual", "review")
    mem.resolve_wait(wait.id, "done")
    before = snapshot(mem)
    for call in (
        lambda: mem.resolve_wait(wait.id),
        lambda: mem.cancel_wait(wait.id),
        lambda: mem.check_waits(wait.id),
    ):
        with pytest.raises(clew.ValidationError, match="resolved"):
            call()
    mem.update_task(stored.task, status="completed")
    before = snapshot(mem)
    with pytest.raises(clew.InvalidTransitionError):
        mem.add_wait(stored.task, "manual", "more review")
    assert_unchanged(mem, before)


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["wait", "add", "TASK", "--url", "http://example.com/"], "not on this machine"),
        (["wait", "add", "TASK", "--command", "make", "--every", "soon"], "not a duration"),
        (["wait", "add", "TASK", "--file", "x", "--exit-code", "0"], "not exit_code"),
        (["wait", "add", "TASK", "--time", "nonsense"], "not an ISO time"),
        (["wait", "add", "TASK"], "one of the arguments"),
        (["wait", "add", "TASK", "--manual", "x", "--command", "y"], "not allowed with"),
        (["wait", "resolve", "MISSING"], "no wait"),
        (["wait", "check", "MISSING"], "no wait"),
        (["wait", "list", "--status", "done"], "wait status"),
        (["export", "--month", "2026-13"], "YYYY-MM"),
        (["export", "--month", "2026-11", "--since-seq", "3"], "give one or the other"),
        (["task", "list", "--month", "2026-11"], "--month goes with --archived"),
        (["task", "list", "--archived", "--month", "11/2026"], "YYYY-MM"),
    ],
)
def test_cli_bad_waits_and_months(
    cli: Cli, mem: clew.Memory, stored: Stored, args: list[str], says: str
) -> None:
    before = snapshot(mem)
    assert says in error_line(cli(*fill(args, stored)))
    assert_unchanged(mem, before)


@pytest.mark.parametrize(
    ("env", "value", "says"),
    [
        ("CLEW_MAINTENANCE_INTERVAL", "soon", "maintenance interval"),
        ("CLEW_MAINTENANCE", "maybe", "maintenance must be true or false"),
        ("CLEW_PAUSE_AFTER", "-3h", "pause_after"),
    ],
)
def test_bad_maintenance_settings_are_one_line(
    cli: Cli, mem: clew.Memory, monkeypatch: pytest.MonkeyPatch, env: str, value: str, says: str
) -> None:
    monkeypatch.setenv(env, value)
    assert says in error_line(cli("task", "list"))
    with pytest.raises(clew.ValidationError, match=says):
        clew.open(mem.path)


def test_export_to_a_folder_that_does_not_exist_is_one_line(
    cli: Cli, mem: clew.Memory, tmp_path: Path
) -> None:
    line = error_line(cli("export", "--month", "2026-11", "-o", str(tmp_path / "no" / "x.jsonl")))
    assert "cannot write" in line


# -- the task record and task-level context (issue 11, points 4 and 6) -------------------------


RECORD_REFUSALS = [
    ({"confidence": 1.5}, "confidence must be from 0 to 1"),
    ({"confidence": -0.1}, "confidence must be from 0 to 1"),
    ({"confidence": float("nan")}, "confidence must be a number"),
    ({"confidence": True}, "confidence must be a number"),
    ({"priority": "urgent"}, "priority"),
    ({"estimate": "soon"}, "is not a duration"),
    ({"estimate": 0}, "more than 0"),
    ({"estimate": "400d"}, "at most 366 days"),
    ({"estimate": float("inf")}, "must be a duration"),
    ({"domain": "x" * 201}, "the limit is 200"),
    ({"outcome": "  "}, "outcome is empty"),
    ({"entities": {"files": "a.py"}}, "must be a list of texts"),
    ({"entities": {"!!": ["a"]}}, "is not a word like files"),
    ({"entities": ["a.py"]}, "entities must be an object"),
    ({"entities": {"files": [f"f{n}.py" for n in range(101)]}}, "at most 100 entities"),
    ({"error_step": 9}, "out of range"),
    ({"step_agent": "executor"}, "say which step"),
    ({"depends_on": [1]}, "say which step"),
    ({"step": 1, "step_artifacts": [f"a{n}" for n in range(51)]}, "at most 50 artifacts"),
    ({"step": 1, "depends_on": [1]}, "cannot depend on itself"),
    ({"step": 1, "step_artifacts": "one\ntwo"}, "spans lines"),
]


@pytest.mark.parametrize(("changes", "says"), RECORD_REFUSALS)
def test_a_bad_task_record_changes_nothing(
    mem: clew.Memory, stored: Stored, changes: dict[str, Any], says: str
) -> None:
    before = snapshot(mem)
    with pytest.raises(clew.ValidationError, match=says):
        mem.update_task(stored.task, **changes)
    assert_unchanged(mem, before)


def test_a_bad_task_record_through_set_and_create(mem: clew.Memory, stored: Stored) -> None:
    before = snapshot(mem)
    with pytest.raises(clew.ValidationError, match="nothing to set"):
        mem.set_task_record(stored.task)
    with pytest.raises(clew.ValidationError, match="source must be one of"):
        mem.set_task_record(stored.task, outcome="ok", source="oracle")
    with pytest.raises(clew.ValidationError, match="plan source"):
        mem.create_task("T", ["a"], plan_source="vibes")
    with pytest.raises(clew.ValidationError, match="nothing to set"):
        mem.set_step_record(stored.task, 1)
    with pytest.raises(clew.NotFoundError):
        mem.set_step_record(stored.task, stored.missing, agent="x")
    assert_unchanged(mem, before)


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["task", "update", "TASK", "--confidence", "7"], "confidence must be from 0 to 1"),
        (["task", "update", "TASK", "--confidence", "high"], "--confidence"),
        (["task", "update", "TASK", "--priority", "urgent"], "--priority"),
        (["task", "update", "TASK", "--estimate", "a while"], "is not a duration"),
        (["task", "update", "TASK", "--agent", "bob"], "need --step"),
        (["task", "update", "TASK", "--failed-step", "9"], "out of range"),
        (["task", "update", "TASK", "--answer-file", "/nonexistent/answer"], "answer"),
        (["task", "new", "T", "--estimate", "-5m"], "--estimate"),
        (["task", "new", "T", "--estimate=-5m"], "is not a duration"),
        (["task", "new", "T", "--plan-source", "oracle"], "--plan-source"),
        (["context", "MISSING"], "no task matches"),
        (["context", "TASK", "--budget", "100"], "out of range"),
        (["context", "TASK", "--reserve", "-1"], "reserve cannot be negative"),
        (["context", "TASK", "--budget", "2000", "--reserve", "1900"], "out of range"),
        (["context", "TASK", "--budget", "99999999999"], "out of range"),
        (["context", "TASK", "--session", "MISSING"], "no session matches"),
    ],
)
def test_cli_bad_record_and_context_input(
    cli: Cli, mem: clew.Memory, stored: Stored, args: list[str], says: str
) -> None:
    before = snapshot(mem)
    line = error_line(cli(*fill(args, stored)))
    assert says in line, line
    assert_unchanged(mem, before)


def test_tools_refuse_a_bad_record_in_words(mem: clew.Memory, stored: Stored) -> None:
    from clew.tools import registry as tools

    before = snapshot(mem)
    for args in (
        {"task_id": stored.task, "confidence": 2},
        {"task_id": stored.task, "priority": "asap"},
        {"task_id": stored.task, "estimate": [1]},
        {"task_id": stored.task, "entities": {"hosts": "db-1"}},
        {"task_id": stored.task, "step_agent": "x"},
    ):
        result = tools.call(mem, "task_update", args)
        assert result.is_error and "Traceback" not in result.text, args
    assert tools.call(mem, "task_register", {"name": "T", "estimate": "eventually"}).is_error
    assert_unchanged(mem, before)


def test_a_task_context_with_a_bad_tier_or_nothing_to_assemble(
    mem: clew.Memory, stored: Stored
) -> None:
    with pytest.raises(clew.ValidationError, match="no tier is called"):
        mem.assemble(task=stored.task, tiers={"turns": 5})
    with pytest.raises(clew.ValidationError, match="cannot be negative"):
        mem.assemble(task=stored.task, tiers={"patterns": -1})
    with pytest.raises(clew.ValidationError, match="give a session, a task, or both"):
        mem.assemble()
    with pytest.raises(clew.ValidationError, match="reserve must be a whole number"):
        mem.assemble(task=stored.task, reserve="lots")  # type: ignore[arg-type]


# -- continuity: linked failures, decisions by topic (issue 11, point 7) ----------------------


def test_superseding_a_decision_a_later_one_already_replaced_is_refused_whole(
    cli: Cli, mem: clew.Memory, stored: Stored
) -> None:
    first = mem.add_decision(stored.task, "Use pgloader for bulk data transfer")
    mem.add_decision(stored.task, "Use COPY batches for bulk data transfer")  # replaces it
    before = snapshot(mem)
    with pytest.raises(ValidationError, match="already superseded; supersede the active"):
        mem.add_entry("decision", "Use dumps", task_id=stored.task, supersedes=first.id)
    line = error_line(
        cli("note", stored.task, "--type", "decision", "--summary", "x", "--supersedes", first.id)
    )
    assert "already superseded" in line and "--status active" in line
    result = tools.call(
        mem, "task_record", {"task_id": stored.task, "resolves": first.id, "resolution": "n/a"}
    )
    assert result.is_error and "only errors and questions" in result.text
    assert_unchanged(mem, before)


@pytest.mark.parametrize(
    "text",
    ["!!!", "for", ": ", "Use  for the ", "topic:", "\x00\x1b[31m", "é" * 5000, "a: b: c: d"],
)
def test_odd_decision_texts_and_topic_tags_never_link_by_accident(
    mem: clew.Memory, stored: Stored, text: str
) -> None:
    keep = mem.add_decision(stored.task, "Use Postgres 16 for the database", tags=["topic:db"])
    odd = mem.add_decision(stored.task, text, tags=["topic:", "topic: "])
    assert odd.supersedes is None
    assert mem.get_entry(keep.id).status.value == "active"
    assert mem.verify().ok


@pytest.mark.parametrize(
    "command",
    ["", "   ", "x" * 20_000, "rm -rf / \x00", "pytest\ttests/a.py\n--lf"],
)
def test_odd_commands_on_errors_and_actions_link_or_stay_apart_cleanly(
    mem: clew.Memory, stored: Stored, command: str
) -> None:
    if not command:  # no command at all: the error stands alone
        assert mem.add_error(stored.task, "boom", command=command).status.value == "active"
        return
    if not command.strip():
        with pytest.raises(ValidationError):
            mem.add_error(stored.task, "boom", command=command)
        return
    mem.record_action(stored.task, command=command, exit_code=1, stderr="error: boom")
    mine = mem.add_error(stored.task, "it broke: error: boom", command=command)
    assert any(kind == "action" for kind, _ in mine.sources)
    passed = mem.record_action(stored.task, command=command, exit_code=0)
    again = mem.get_entry(mine.id)  # the agent's error: evidence, for the agent to resolve
    assert again.status.value == "active" and [e.action_id for e in again.evidence] == [passed.id]
    mem.state(stored.task)  # the evidence renders, whatever the command holds
    mem.where(stored.task)
    assert mem.verify().ok


# -- i12-events -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        {"role": "user", "content": "hi", "text_from": "output", "state": {"focus": None}},
        {"role": "user", "content": "", "output": ""},
        {"type": "function_call_output", "call_id": "zz", "output": {"rows": [1, 2]}},
        {"type": "function_call_output", "call_id": "zz", "output": "x", "content": "x"},
        {"role": "assistant", "content": [{"type": "output_text", "text": "never\x00mind"}]},
        {"role": "tool", "tool_call_id": "nobody", "content": "error: " + "x" * 30_000},
    ],
)
def test_messages_with_keys_like_the_event_s_own_replay_exactly(
    mem: clew.Memory, message: dict[str, Any]
) -> None:
    sid = mem.start_session().id
    turn = mem.append_turn(sid, message)
    assert mem.export_session(sid) == [message]  # kept verbatim, whatever keys it has
    assert mem.list_turns(sid)[0].text == turn.text
    assert mem.verify().ok


def test_a_job_of_a_kind_nobody_handles_fails_with_a_typed_reason(mem: clew.Memory) -> None:
    task = mem.create_task("t", ["a"])
    with mem._write() as at:  # type: ignore[attr-defined]
        mem.jobs._enqueue("no-such-kind", task.id, None, at)
    (job,) = mem.run_jobs(limit=1)
    assert job.error == "unknown job kind 'no-such-kind'"


# -- i12-seam: structured search queries, command filters, output kinds ----------------------


@pytest.mark.parametrize(
    "text",
    ['"', "-", "*", "NOT", "AND OR NEAR", '"unclosed', "a:b", "{stdout} : x", "-only", "\x00"],
)
def test_search_text_that_reads_as_query_syntax_is_refused_or_searched(
    mem: clew.Memory, stored: Stored, text: str
) -> None:
    try:
        query = search.parse(text)
    except ValidationError:
        with pytest.raises(ValidationError, match="no words to look for"):
            search.parse(text)  # nothing to include: said so, as a typed error
        with pytest.raises(ValidationError):
            mem.search_all(text)
        return
    assert query.include and all(t.text for t in query.include)
    mem.search_all(text)  # compiled by the backend: never a syntax error


@pytest.mark.parametrize("needle", ["%", "_", "\\", "50%", "a_b", "\\%"])
def test_command_filters_with_like_wildcards_match_only_themselves(
    mem: clew.Memory, stored: Stored, needle: str
) -> None:
    mem.record_action(stored.task, command="grep 50% a_b x\\y", exit_code=0)
    mem.record_action(stored.task, command="grep 500 axb", exit_code=0)
    found = {a.command for a in mem.commands(contains=needle, limit=None)}
    assert all(needle in c for c in found if c)
    assert "grep 500 axb" not in found


@pytest.mark.parametrize("output", [b"", b"\x00\xff", "\udcff".encode("utf-8", "surrogatepass")])
def test_odd_command_output_keeps_its_kind_through_a_replay(
    mem: clew.Memory, stored: Stored, output: bytes
) -> None:
    action = mem.record_action(stored.task, command="cat blob", exit_code=0, stdout=output)
    assert mem.get_action(action.id).stdout == action.stdout
    assert mem.verify().ok


# -- i12-move: export, import and push of the journal (issue 12, point 6) ---------------------


def journal_text(mem: clew.Memory) -> str:
    out = io.StringIO()
    mem.export_events(out)
    return out.getvalue()


HEADER = '{"clew":"journal","version":1,"space":"default","schema":1,"after":null}'


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (b"{}", "is text, not bytes"),
        (None, "is text, not NoneType"),
        ("", "line 1 .* is empty"),
        ("\n\n", "line 1 .* is empty"),
        ("garbage", "line 1 .* not valid JSON"),
        ("[1, 2]", "line 1 .* not a JSON object"),
        ("[" * 100_000, "line 1 .* (nested too deep|not valid JSON)"),
        ('{"clew":"journal"}', "line 1 .* no valid format version"),
        ('{"clew":"journal","version":true}', "line 1 .* no valid format version"),
        ('{"clew":"journal","version":1,"space":" ","schema":1}', "line 1 .* names no space"),
        ('{"clew":"journal","version":1,"space":"d","schema":-1}', "no valid schema"),
        (HEADER.replace("null", '{"id":"x"}'), 'line 1 .* "after"'),
        (HEADER, "line 2 .* cut short"),
        (HEADER + "\n" + '{"clew":"end","events":1,"head":null}', "line 2 .* says 1 events"),
        (HEADER + "\n" + '{"clew":"nope"}', "line 2 .* neither an event nor the last line"),
        (HEADER + "\n" + '{"seq":1}', "line 2 .* keys of an event line"),
        (HEADER + "\n" + "1" * 5000, "line 2 .* not valid JSON"),
        (HEADER + "\n" + '{"a":NaN}', "line 2 .* not valid JSON"),
        (HEADER + "\n\n", "line 2 .* not valid JSON"),
        ('{"seq":1,"id":"x","data":{}}', "line 1 .*`clew export --month` listing"),
    ],
)
def test_bad_journal_files_are_refused_whole_before_anything_is_written(
    mem: clew.Memory, stored: Stored, text: Any, says: str
) -> None:
    before = snapshot(mem)
    with pytest.raises(ValidationError, match=says):
        mem.import_events(text)
    assert_unchanged(mem, before)


def event_row(**changes: Any) -> str:
    row = {
        "seq": 1,
        "id": "a" * 10,
        "space": "default",
        "task_id": None,
        "correlation_id": "c",
        "type": "task.created",
        "created_at": "2026-11-22T09:00:00Z",
        "hash": "0" * 64,
    }
    row.update(changes)
    data = row.pop("data", "{}")
    return json.dumps(row, separators=(",", ":"))[:-1] + ',"data":' + data + "}"


@pytest.mark.parametrize(
    ("line", "says"),
    [
        (event_row(seq="1"), "seq that is not a whole number"),
        (event_row(id="NOT-AN-ID!"), "event id that is not a clew id"),
        (event_row(space="other"), "belongs to space 'other'"),
        (event_row(task_id=7), "task id that is not a clew id"),
        (event_row(correlation_id=""), "no correlation_id"),
        (event_row(created_at=None), "no created_at"),
        (event_row(type="task.exploded"), "event type 'task.exploded', which this clew does not"),
        (event_row(hash="xyz"), "no valid hash"),
        (event_row(data="[]"), "not a JSON object in the form clew stores"),
        (event_row(data='{"a": 1}'), "not a JSON object in the form clew stores"),
        (event_row(data='{"a":"\\ud800"}'), "not a JSON object in the form clew stores"),
        (event_row(data='{"$bytes":"!!"}'), "not a JSON object in the form clew stores"),
        (event_row().replace(',"data":', ', "data":'), "not written as clew writes it"),
        (event_row(), "hash that does not follow"),
    ],
)
def test_bad_event_lines_are_refused_naming_the_line(
    mem: clew.Memory, stored: Stored, line: str, says: str
) -> None:
    before = snapshot(mem)
    with pytest.raises(ValidationError, match=f"line 2 of the journal file .*{says}"):
        mem.import_events(f"{HEADER}\n{line}\n")
    assert_unchanged(mem, before)


@pytest.mark.parametrize(
    ("call", "says"),
    [
        (lambda m: m.export_events(io.StringIO(), after="x", since_seq=1), "not both"),
        (lambda m: m.export_events(io.StringIO(), since_seq=-1), "since_seq"),
        (lambda m: m.export_events(io.StringIO(), since_seq="3"), "since_seq"),
        (lambda m: m.export_events(io.StringIO(), after=""), "after is empty"),
        (lambda m: m.export_events(io.StringIO(), after="zzzzzzzzzz"), "no event 'zzzzzzzzzz'"),
        (lambda m: m.push(123), "to must be text"),
        (lambda m: m.push("  "), "to is empty"),
        (lambda m: m.push("x.db", batch=0), "batch must be at least 1"),
        (lambda m: m.push("x.db", batch=True), "batch"),
        (lambda m: m.push("x.db", space="a\nb"), "control character"),
        (lambda m: m.push("x.db", busy_timeout=-1), "busy timeout"),
        (lambda m: m.push("postgresql://db.example/team"), "PostgreSQL"),
    ],
)
def test_bad_export_and_push_arguments_are_typed_errors(
    mem: clew.Memory, stored: Stored, call: Callable[[clew.Memory], Any], says: str
) -> None:
    before = snapshot(mem)
    with pytest.raises(clew.ClewError, match=says):
        call(mem)
    assert_unchanged(mem, before)


def test_push_to_what_is_not_a_store_is_one_error_and_writes_nothing(
    mem: clew.Memory, stored: Stored, tmp_path: Path
) -> None:
    before = snapshot(mem)
    notes = tmp_path / "notes.txt"
    notes.write_text("not a database, just notes\n" * 100)
    for target, says in ((tmp_path, "is a folder"), (notes, "not a clew store")):
        with pytest.raises(clew.StoreError, match=says):
            mem.push(str(target))
    assert notes.read_text() == "not a database, just notes\n" * 100
    assert_unchanged(mem, before)


def test_importing_a_file_into_the_same_sqlite_file_under_another_space_is_refused_whole(
    mem: clew.Memory, stored: Stored
) -> None:
    # SQLite keeps ids unique across a file's spaces: a space moves to another file.
    text = journal_text(mem)
    with clew.open(mem.path, space="other") as other:
        with pytest.raises(ValidationError, match=r"line 2 .* cannot be added to this store"):
            other.import_events(text)
        assert other.journal() == []


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["import", "/dev/zero"], "not a regular file"),
        (["import", "DIR"], "it is a folder"),
        (["import", "DIR/missing.jsonl"], "cannot read the journal file"),
        (["import", "LATIN1"], "not UTF-8 text"),
        (["import", "BIG", "--max-input-mb", "1"], "larger than 1 MB"),
        (["import", "GARBAGE"], "line 1 of the journal file"),
        (["import"], "the following arguments are required: FILE"),
        (["export", "--since-seq", "abc"], "not a whole number"),
        (["export", "--since-seq", "-1"], "since_seq"),
        (["export", "--after", "zzzzzzzzzz"], "no event 'zzzzzzzzzz'"),
        (["export", "--after", "x", "--since-seq", "2"], "not both"),
        (["export", "-o", "DIR/no/x.jsonl"], "cannot write"),
        (["push"], "the following arguments are required: --to"),
        (["push", "--to", "DIR"], "is a folder"),
        (["push", "--to", "DIR/no/team.db"], "does not exist; make it, or add --create"),
        (["push", "--to", "postgresql://db.example/team"], "PostgreSQL"),
        (["push", "--to", "DIR/t.db", "--batch", "0"], "batch size of at least 1"),
        (["push", "--to", "DIR/t.db", "--to-space", " "], "space is empty"),
    ],
)
def test_cli_bad_export_import_and_push_are_one_line(
    cli: Cli, mem: clew.Memory, stored: Stored, tmp_path: Path, args: list[str], says: str
) -> None:
    (tmp_path / "latin1.jsonl").write_bytes(HEADER.encode() + b"\n\xe9\n")
    (tmp_path / "big.jsonl").write_bytes(b" " * (2 * 2**20))
    (tmp_path / "garbage.jsonl").write_text("garbage\n")
    files = {"LATIN1": "latin1.jsonl", "BIG": "big.jsonl", "GARBAGE": "garbage.jsonl"}
    names = {"DIR": str(tmp_path), **{k: str(tmp_path / v) for k, v in files.items()}}
    line = [names.get(a, a.replace("DIR", str(tmp_path))) for a in args]
    before = snapshot(mem)
    assert re.search(says, error_line(cli(*line)))
    assert_unchanged(mem, before)
    assert not (tmp_path / "t.db").exists()


def test_a_stdin_import_that_is_cut_short_is_refused_by_a_real_process(
    mem: clew.Memory, stored: Stored, tmp_path: Path
) -> None:
    text = journal_text(mem).encode("utf-8")
    target = tmp_path / "store" / "target.db"
    done = run_clew(target, "--create", "import", "-", stdin=text[: len(text) // 2])
    assert done.returncode == 2 and b"Traceback" not in done.stderr
    assert done.stderr.count(b"\n") == 1 and b"of the journal file" in done.stderr
    whole = run_clew(target, "import", "-", stdin=text)
    assert whole.returncode == 0, whole.stderr


# -- i12-pg: PostgreSQL URLs, spaces and text a team store is given ------------------------


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://[::1",
        "postgresql://root:pw@127.0.0.1:99999/x",
        "postgresql://root:pw@127.0.0.1:1/x?sslmode=nonsense",
        "postgresql://root:pw@127.0.0.1:1/x?options=-c%20search_path%3Dnowhere",
    ],
)
def test_a_bad_or_unreachable_url_is_one_line_without_its_password(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("psycopg")
    with pytest.raises(clew.StoreError) as raised:
        clew.open(url)
    assert "pw@" not in str(raised.value) and "\n" not in str(raised.value)
    assert main(["--db", url, "task", "list"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pw@" not in err and "Traceback" not in err


@pytest.mark.parametrize("space", ["a'b", "x); DROP TABLE tasks; --", "%s %(p1)s ?", "ü 空间"])
def test_any_space_name_is_one_space_on_postgresql(space: str) -> None:
    from tests.conftest import postgres_url

    url = postgres_url()
    marker = space + uuid_suffix()
    with clew.open(url, space=marker) as mem:
        task = mem.create_task("quoted", ["a"])
        assert mem.get_task(task.id).space == marker
        assert mem.verify().ok
    with clew.open(url, space=marker + "-other") as other:
        assert other.list_tasks() == []


def uuid_suffix() -> str:
    import uuid

    return "-" + uuid.uuid4().hex[:8]


@pytest.mark.parametrize("text", ["nul\x00inside", "\x00"])
def test_text_holding_nul_is_refused_by_a_postgresql_store(
    text: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.conftest import new_space, postgres_url

    url = postgres_url()
    with clew.open(url, space=new_space()) as mem:
        task = mem.create_task("t", ["a"])
        before = len(mem.journal())
        with pytest.raises(ValidationError, match="NUL"):
            mem.update_task(task.id, message=text)
        assert len(mem.journal()) == before  # nothing half-written
        action = mem.record_action(task.id, command="cat blob", stdout=text)  # output is bytea
        assert mem.get_action(action.id).stdout == text
        assert mem.verify().ok


# -- i12-bench: what a push to a team store prints -------------------------------------------


def test_a_push_to_a_team_store_never_prints_its_password(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.conftest import postgres_url

    url = postgres_url().replace("://root@", "://root:pw-not-shown@", 1)  # trust auth: unused
    local = str(tmp_path / "clew.db")
    with clew.open(local, space="push" + uuid_suffix()) as mem:
        mem.create_task("pushed", ["a"])
        space = mem.space
    for _ in range(2):  # the first sends, the second finds it all there
        assert main(["--db", local, "--space", space, "push", "--to", url]) == 0
        out = capsys.readouterr().out
        assert "pushed" in out and "pw-not-shown" not in out and "***" in out
    unreachable = "postgresql://root:pw-not-shown@127.0.0.1:1/x"
    assert main(["--db", local, "--space", space, "push", "--to", unreachable]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pw-not-shown" not in err and "Traceback" not in err


# -- i12-pgsearch -------------------------------------------------------------------------
# Search on a PostgreSQL store: no text is tsquery syntax, SQL or an error of the server.


@pytest.fixture(scope="module")
def team() -> Iterator[clew.Memory]:
    """A PostgreSQL store (conftest: skipped, saying so, without a server)."""
    from tests.conftest import new_space, postgres_url

    with clew.open(postgres_url(), space=new_space()) as mem:
        yield mem


@pytest.mark.parametrize(
    "query",
    [
        "a:b & c | !d <-> 'e' \\f",
        "'it''s' \\' :* :A <2> (x)",
        "x" * 5000,
        "é" * 3000,
        " ".join(f"w{i}_x" for i in range(60)),
        "\x00abc\x00",
        '"unterminated phrase',
        '🔥 fix* -🔥 -"a b"',
        "https://example.com/a?b='1'&c=\"2\"#x",
        "%s %(p1)s ?1 ? $1",
    ],
)
def test_any_search_text_runs_on_postgresql(team: clew.Memory, query: str) -> None:
    assert team.search(query) == []
    assert team.search_all(query) == []
    called = tools.call(team, "memory_search", {"query": query})
    # A tool call (MCP, the HTTP API) takes no NUL in any argument, stored or not: one rule
    # at the door (schema.check_text); the facade searches around it.
    assert called.is_error == ("\x00" in query), called.text


@pytest.mark.parametrize("query", ["'&|!<->():*", "-only -excluded", "   ", "\x00"])
def test_a_search_with_no_words_is_refused_on_postgresql_as_on_sqlite(
    team: clew.Memory, mem: clew.Memory, query: str
) -> None:
    for store in (team, mem):
        with pytest.raises(ValidationError, match="no words to look for"):
            store.search(query)
    result = tools.call(team, "memory_search", {"query": query})
    said = "NUL character" if "\x00" in query else "no words to look for"  # see above
    assert result.is_error and said in result.text


# -- i13-vectors: the vector index's arguments; its commands without the extra ----------------


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"text": None}, "query must be text"),
        ({"text": b"bytes"}, "query must be text"),
        ({"text": " \n\t"}, "query is empty"),
        ({"kinds": 5}, "kinds"),
        ({"kinds": []}, "at least one kind"),
        ({"kinds": ["entry", "turns"]}, "kind 'turns' is not one of"),
        ({"kinds": ","}, "at least one kind"),
        ({"limit": 0}, "limit must be at least 1"),
        ({"limit": "10"}, "limit"),
        ({"limit": True}, "limit"),
        ({"since": "last tuesday-ish"}, "since"),
        ({"until": 12}, "until"),
        ({"step_id": 3}, "step id must be text"),
        ({"session_ids": [None]}, "session"),
        ({"session_ids": 7}, "session_ids"),
    ],
)
def test_nearest_refuses_bad_arguments_before_loading_a_model(
    mem: clew.Memory, monkeypatch: pytest.MonkeyPatch, arguments: dict[str, Any], message: str
) -> None:
    from clew.search import vectors

    def no_model() -> None:
        raise AssertionError("a bad argument must be refused before the model loads")

    monkeypatch.setattr(vectors, "load_embedder", no_model)
    given = {"text": "where is the registry", **arguments}
    with pytest.raises(ValidationError, match=message):
        mem.nearest(given.pop("text"), **given)


def test_nearest_names_what_it_cannot_find(mem: clew.Memory) -> None:
    from clew.errors import NotFoundError

    for arguments in ({"task_id": "zzzz"}, {"step_id": "zzzz"}, {"session_ids": ["nope"]}):
        with pytest.raises(NotFoundError):
            mem.nearest("registry", **arguments)


def test_update_index_refuses_a_bad_limit(mem: clew.Memory) -> None:
    for bad in (0, -5, "all", 2.5):
        with pytest.raises(ValidationError, match="limit"):
            mem.update_index(limit=bad)  # type: ignore[arg-type]


def test_index_commands_without_the_extra_say_so_in_one_line(
    cli: Callable[..., Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    from clew.search import vectors

    def missing() -> None:
        from clew.errors import VectorsUnavailable

        raise VectorsUnavailable(vectors.unavailable())

    monkeypatch.setattr(vectors, "load_embedder", missing)
    monkeypatch.setattr(vectors, "embedder_available", lambda: False)
    for command in (["update"], ["rebuild"], ["update", "--limit", "5"]):
        result = cli("index", *command)
        assert result.code == 2
        assert result.err.strip().splitlines() == [f"clew: error: {vectors.unavailable()}"]
    status = cli("index", "status")
    assert status.code == 0 and "model: none" in status.out
    for bad in (["update", "--limit", "0"], ["update", "--limit", "x"], ["nonsense"], []):
        result = cli("index", *bad)
        assert result.code == 2 and len(result.err.strip().splitlines()) <= 3


# -- i13-model ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "texts", ["a single text", ["fine", 7], [None], [b"raw bytes"], 3.5, [["nested"]]]
)
def test_the_embedding_model_refuses_what_is_not_a_list_of_texts(texts: Any) -> None:
    from clew.search import embedding

    with pytest.raises(ValidationError, match="embed takes"):
        embedding.load().embed(texts)


@pytest.mark.parametrize("name", ["", "minilm", "../../etc/passwd", "MINILM-STATIC-256"])
def test_an_unknown_embedding_model_is_refused_with_the_known_names(name: str) -> None:
    from clew.search import embedding

    with pytest.raises(ValidationError, match="the models are: minilm-static-256"):
        embedding.load(name)


# -- i13-question -----------------------------------------------------------------------------
# Query understanding is given text from anyone: what is not text is refused with a typed
# error naming what was wrong; any text at all is understood (maybe as nothing to look for).


@pytest.mark.parametrize("text", [None, 42, b"bytes", ["a list"], {"q": "x"}])
def test_a_question_that_is_not_text_is_refused(text: Any) -> None:
    from datetime import UTC, datetime

    from clew.search.question import content_words, understand

    with pytest.raises(ValidationError, match="must be text"):
        understand(text, now=datetime.now(UTC))
    with pytest.raises(ValidationError, match="must be text"):
        content_words(text)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"now": "2026-05-20"}, "`now` must be a datetime"),
        ({"now": None}, "`now` must be a datetime"),
        ({"speakers": "Melanie"}, "collection of names, not one text"),
        ({"speakers": ["Melanie", 7]}, "a speaker name must be text"),
        ({"tools": [None]}, "a tool name must be text"),
        ({"tools": "bash"}, "collection of names, not one text"),
    ],
)
def test_bad_arguments_to_understand_are_refused(arguments: dict[str, Any], message: str) -> None:
    from datetime import UTC, datetime

    from clew.search.question import understand

    given_ = {"now": datetime.now(UTC), **arguments}
    with pytest.raises(ValidationError, match=message):
        understand("what did Melanie run with bash?", **given_)


@pytest.mark.parametrize(
    "text",
    [
        "\x00\x00\x00",
        "'&|!<->():*",
        "-only -excluded",
        '"unterminated phrase',
        "`unterminated code",
        "on 9999-99-99 and 0000-01-01 and Feb 30 and 99999 years ago",
        "in 10000 and in 0001 and 29 Feb 2025",
        "\u202e\u200b\ufeff" * 50,
        "🔥" * 1000,
        "NEAR(a b) AND OR NOT *",
    ],
)
def test_any_text_is_understood_without_error(text: str) -> None:
    from datetime import UTC, datetime

    from clew.search.question import understand
    from clew.store.sqlite.search import fts5_match

    found = understand(text, now=datetime(2026, 5, 20, tzinfo=UTC), speakers=["a"], tools=["b"])
    if found.query is not None:
        db = sqlite3.connect(":memory:")
        db.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
        db.execute("SELECT * FROM t WHERE t MATCH ?", (fts5_match(found.query),))


# -- i13-engine


def test_one_long_token_is_parsed_in_linear_time() -> None:
    # A regular expression once backtracked over such a token for minutes.
    from clew.core import query as search

    assert search.parse("a" * 100_000 + "_b").identifiers == ("a" * 100_000 + "_b",)
    assert search.parse("a" * 100_000).identifiers == ()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["search", "registry", "--mode", "fuzzy"], "--mode"),
        (["session", "new", "--at", "someday"], "not a date"),
        (["recall", "--search", "x", "--budget", "10"], "budget"),
    ],
)
def test_cli_bad_search_and_time_input_is_one_line(
    cli: Cli, mem: clew.Memory, args: list[str], says: str
) -> None:
    before = snapshot(mem)
    assert says in error_line(cli(*args))
    assert snapshot(mem) == before


# -- i13-bench


def test_the_retrieval_harness_refuses_unknown_systems_and_categories_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from benchmarks.retrieval import run

    assert run.main(["--systems", "bm25,floor"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bm25" in err and "floor, keyword" in err
    assert run.main(["--categories", "trivia"]) == 2
    assert "unknown category trivia" in capsys.readouterr().err
    assert run.main(["--systems", " , "]) == 2
    assert run.main(["--limit", "0"]) == 2
    assert "--limit" in capsys.readouterr().err


# -- i13-decisions: trace decisions in search over everything ---------------------------------
@pytest.mark.parametrize("kinds", ["decisions", "Decision", ["decision", "trace"], "decision,,x"])
def test_a_wrong_record_kind_is_refused_naming_decision(mem: clew.Memory, kinds: Any) -> None:
    with pytest.raises(ValidationError, match="entry, message, action, turn, decision"):
        mem.search_all("registry", kinds=kinds)
    listed = [kinds] if isinstance(kinds, str) else kinds
    result = tools.call(mem, "memory_search", {"query": "registry", "kinds": listed})
    assert result.is_error and "decision" in result.text


def test_the_cli_refuses_a_wrong_kind_in_one_line(
    db: Path, mem: clew.Memory, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--db", str(db), "search", "registry", "--kind", "decisions"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "decision" in err


@pytest.mark.parametrize(
    "text",
    [
        "x'); DROP TABLE record_docs; --",
        '"unbalanced NEAR(a b) AND OR NOT *',
        "nul\x00byte",
        "🔥 émoji ünïcode",
        "\\ backslash \\\\ E'\\n' $$ dollar $$",
    ],
)
def test_any_decision_text_is_indexed_and_searchable(mem: clew.Memory, text: str) -> None:
    task = mem.create_task("Hostile", ["one"])
    made = mem.trace_decision(
        task.id, f"{text} zanderfish", error=text, context={text: text}, artifacts={"k": [text]}
    )
    assert [h.id for h in mem.search_all("zanderfish", kinds="decision")] == [made.id]
    # The text itself, as a query: it finds the decision (or has no words to look for).
    refused = ""
    try:
        found = [h.id for h in mem.search_all(text, kinds="decision")]
    except ValidationError as exc:
        found, refused = [], str(exc)
    assert found == [made.id] or "no words to look for" in refused
    assert mem.verify().ok


# -- i13-pgvector: hostile filters and texts reach pgvector's SQL only as parameters ---------


@pytest.mark.parametrize(
    "text",
    ["x' OR '1'='1", "x'); DROP TABLE embedding_vectors; --", "[1,2,3]::vector", "🔥 ünïcode"],
)
def test_hostile_text_and_ids_are_parameters_to_pgvector(
    pgvector_url: str, clock: FakeClock, text: str
) -> None:
    from clew.errors import NotFoundError
    from clew.search import embedding

    if not embedding.available():
        pytest.skip("the vectors extra is not installed (pip install -e '.[vectors]')")
    with clew.open(pgvector_url, space=new_space(), clock=clock) as mem:
        assert mem._store.vector_search_native()
        task = mem.create_task("hostile")
        made = mem.add_finding(task.id, f"{text} zanderfish")
        mem.update_index()
        assert mem.nearest(f"{text} zanderfish")[0][:2] == ("entry", made.id)
        for bad in ({"task_id": text}, {"step_id": text}, {"session_ids": [text]}):
            with pytest.raises((NotFoundError, ValidationError)):
                mem.nearest("zanderfish", **bad)  # type: ignore[arg-type]
        with pytest.raises(ValidationError):
            mem.nearest("zanderfish", since=text)
        assert mem.nearest("zanderfish", kinds=["turn"]) == []
        assert mem.nearest("zanderfish", since="2999-01-01") == []
    with clew.open(pgvector_url, space=new_space(), clock=clock) as other:
        assert other.nearest("zanderfish") == []  # another space sees none of it


# -- i14-hooks: what an assistant's hook hands `clew prime --hook`, and stamps of any shape ----

_HOSTILE_HOOK_INPUT = [
    b"not json at all",
    b"[1, 2, 3]",
    b'{"cwd": 7}',
    b'{"cwd": "/no/such/folder"}',
    b'{"cwd": "bad\\u0000path"}',
    b'{"cwd": "' + b"a" * 200_000 + b'"}',
    b"\xff\xfe\x00 not utf-8",
    b"",
]


@pytest.mark.parametrize("stdin", _HOSTILE_HOOK_INPUT, ids=range(len(_HOSTILE_HOOK_INPUT)))
def test_a_hook_given_hostile_input_never_fails_the_session(tmp_path: Path, stdin: bytes) -> None:
    # The hook runs in the project (its store is found from the process's folder when the
    # event names no usable one); whatever arrives on stdin, the session must not break:
    # exit 0, no traceback, and the store is unchanged.
    project = tmp_path / "project"
    (project / ".clew").mkdir(parents=True)
    db = project / ".clew" / "clew.db"
    with clew.open(db) as mem:
        mem.create_task("Deploy", ["Build"], workspace=str(project))
        before = len(mem.journal())
    env = {k: v for k, v in os.environ.items() if k != "CLEW_DB"}
    done = subprocess.run(
        [sys.executable, "-m", "clew", "prime", "--hook"],
        cwd=project,
        input=stdin,
        capture_output=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0
    assert b"Traceback" not in done.stderr and done.stderr.count(b"\n") <= 1
    assert b"Deploy" in done.stdout  # the project's task, found from the process's folder
    with clew.open(db) as mem:
        assert len(mem.journal()) == before
        assert mem.verify().ok


@settings(max_examples=200)
@given(st.text(max_size=40))
def test_a_stamp_of_any_shape_parses_or_is_refused_as_before(text: str) -> None:
    # clock.parse takes a fast path for the store's own stamps; anything else must be met
    # exactly as strptime meets it: the same datetime, or a ValueError.
    from datetime import UTC, datetime

    from clew.core import clock

    try:
        expected: datetime | None = datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ")
    except ValueError:
        expected = None
    try:
        got: datetime | None = clock.parse(text)
    except ValueError:
        got = None
    assert got == (expected.replace(tzinfo=UTC) if expected else None)


# -- i13-ann: a damaged approximate index is rebuilt, never an error; run.py's --store ------


@pytest.mark.parametrize(
    "sidecar",
    ['{"count": "many"}', "[]", "not json", '{"format": 1, "count": 5, "covered": 1e99}', ""],
)
def test_a_damaged_index_sidecar_is_rebuilt_and_never_an_error(
    tmp_path: Path,
    clock: FakeClock,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    sidecar: str,
) -> None:
    from clew.search import ann, embedding, vectors

    if not embedding.available() or not ann.available():
        pytest.skip("needs the vectors and ann extras")
    monkeypatch.setattr(ann, "THRESHOLD", 1)
    monkeypatch.setattr(vectors, "EXACT_BELOW", 0)
    db = tmp_path / "clew.db"
    with clew.open(db, clock=clock) as mem:
        task = mem.create_task("hostile").id
        made = [mem.add_finding(task, f"zanderfish number {i} swims").id for i in range(5)]
        mem.update_index()
        mem.nearest("zanderfish")
        index = vectors._CACHES[mem.vectors._cache_key(mem.vectors._embedder().model_id)].ann
        assert index is not None and index.meta_path is not None
        index.meta_path.write_text(sidecar)
    vectors._CACHES.clear()
    shown = run_main("--db", str(db), "index", "status", capsys=capsys)
    assert shown.code == 0 and "approximate index:" in shown.out, shown
    with clew.open(db, clock=clock) as mem:
        assert {h[1] for h in mem.nearest("zanderfish")} == set(made)
    vectors._CACHES.clear()


@pytest.mark.parametrize("store", ["/nonexistent/folder", "", "store.db"])
def test_the_retrieval_benchmark_refuses_a_store_folder_that_is_not_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], store: str
) -> None:
    from benchmarks.retrieval import run

    (tmp_path / "store.db").write_bytes(b"")
    code = run.main(["--store", str(tmp_path / store) if store else str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and "not a built set's folder" in err


# -- i13-keyword: hostile command output and questions for the error lines and related words


@pytest.mark.parametrize(
    "output",
    [
        "x ERROR " * 400_000,  # one 3 MB line that says ERROR everywhere
        ("ERROR: same\n" * 300_000),  # one error said 300,000 times
        b"\xff\xfe" * 10_000 + b"\nfatal: \xc3(bad utf-8)\n" + b"\x00" * 20_000,  # not UTF-8
        "a" * 5_000 + "\n" + "E   " + "\u202e" * 20_000 + "\n" + "b" * 9_000,  # a huge line
    ],
)
def test_hostile_output_is_kept_whole_and_its_error_lines_bounded(
    tmp_path: Path, output: str | bytes
) -> None:
    with clew.open(tmp_path / "c.db") as mem:
        task = mem.create_task("hostile")
        action = mem.record_action(task.id, command="make", exit_code=2, stdout=output)
        assert mem.get_action(action.id).stdout == output  # nothing lost
        kept = mem._store._conn.execute(
            "SELECT stdout_errors FROM actions WHERE id = ?", (action.id,)
        ).fetchone()[0]
        assert kept is None or len(kept) <= 4000
        mem.search_all("fatal ERROR same", mode="keyword")  # answers, whatever it finds
        assert mem.verify().ok


@pytest.mark.parametrize(
    "question",
    ["doctor " * 500, "pet dog animal canine " * 40, '"doctor" OR pet*', "\x00pet"],
)
def test_questions_of_related_words_search_without_error(tmp_path: Path, question: str) -> None:
    with clew.open(tmp_path / "c.db") as mem:
        task = mem.create_task("hostile")
        found = mem.add_finding(task.id, "the physician saw the dog")
        hits = mem.search_all(question, mode="keyword")
        assert [h.id for h in hits] == [found.id]
        with pytest.raises(ValidationError, match="no words to look for"):
            mem.search_all("-doctor -pet", mode="keyword")  # only exclusions: nothing related


# -- i13-onnx: a wrong embedding model name, bad texts for the ONNX model ---------------------


@pytest.mark.parametrize("name", ["minilm-onnx", "MINILM-ONNX-INT8", "../models_data", "x@y", "🔥"])
def test_a_wrong_embedding_model_is_one_line_and_loses_nothing(
    cli: Cli, mem: clew.Memory, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    from clew.search import embedding

    if not embedding.available():
        pytest.skip("the vectors extra is not installed (pip install -e '.[vectors]')")
    task = mem.create_task("registry choice")
    mem.add_finding(task.id, "we picked the harbor registry")
    before = snapshot(mem)
    monkeypatch.setenv(embedding.ENV, name)
    with pytest.raises(ValidationError, match="minilm-onnx-int8"):
        embedding.load()
    for mode in ("hybrid", "dense", "auto"):
        assert "no embedding model named" in error_line(cli("search", "registry", "--mode", mode))
    assert snapshot(mem) == before
    monkeypatch.delenv(embedding.ENV)
    assert cli("search", "registry", "--mode", "keyword").code == 0


@settings(max_examples=10, deadline=None)
@given(
    st.one_of(
        st.text(max_size=30),
        st.binary(max_size=10),
        st.integers(),
        st.none(),
        st.lists(st.one_of(st.none(), st.integers(), st.binary()), min_size=1),
    )
)
def test_the_onnx_model_refuses_what_is_not_a_list_of_texts(texts: Any) -> None:
    pytest.importorskip("onnxruntime")
    from clew.search import embedding

    with pytest.raises(ValidationError, match="embed takes"):
        embedding.load(embedding.ONNX_MODEL).embed(texts)


def test_the_retrieval_harness_refuses_an_unknown_model_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from benchmarks.retrieval import run

    assert run.main(["--model", "text-embedding-3"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "minilm-onnx-int8" in err


# -- i13-fast: the probes for common words and a time's ranges take any text as a term -----


@pytest.mark.parametrize("text", ['alpha "OR" NEAR(x', "alpha * ^ -kestrel", 'alpha ")" AND'])
def test_common_word_probes_take_hostile_terms_as_text(
    db: Path, clock: FakeClock, text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from clew.store.sqlite import search as sqlite_search

    monkeypatch.setattr(sqlite_search, "COMMON_PROBE", 2)
    with clew.open(db, clock=clock) as mem:
        session = mem.start_session(title="chatter").id
        for n in range(5):
            mem.append_turn(session, {"role": "user", "content": f"alpha note {n}"})
        hits = mem.search_all(text, kinds="turn", since="2000-01-01", until="2999-01-01")
        assert all(h.kind == "turn" for h in hits)
        assert mem.search_all(text, kinds="turn", since="2999-01-01", until="2999-02-01") == []


# -- i14-bulk: a streamed session import, a paged export, write_session ---------------------


@pytest.mark.parametrize(
    ("lines", "says"),
    [
        (
            ['{"role": "user", "content": "ok"}', "x" * 1_100_000],
            "hold a line (or document) larger than 1 MB",
        ),
        (
            ['{"role": "user", "content": "ok"}', '{"role": "user", "content": "\\ud800"}'],
            "line 2 holds text that is not valid UTF-8",
        ),  # checked once, as it is read
        (['{"role": "user", "content": "ok"}', "[1, 2]"], "line 2"),
        (['{"role": "user", "content": "ok"}', '{"role": "tool"}'], "line 2"),
    ],
)
def test_a_streamed_session_import_refuses_a_bad_line_in_one_line(
    tmp_path: Path, lines: list[str], says: str
) -> None:
    store = tmp_path / "s.db"
    source = tmp_path / "m.jsonl"
    source.write_text("\n".join(lines) + "\n")
    done = run_clew(store, "--create", "--max-input-mb", "1", "session", "import", str(source))
    assert says in process_error_line(done)
    if store.exists():
        with sqlite3.connect(store) as conn:
            assert conn.execute("SELECT count(*) FROM events").fetchone() == (0,)


def test_a_streamed_session_import_refuses_bytes_that_are_not_utf8(tmp_path: Path) -> None:
    source = tmp_path / "m.jsonl"
    source.write_bytes(b'{"role": "user", "content": "ok"}\n{"role": "user", "content": "\xff"}\n')
    done = run_clew(tmp_path / "s.db", "--create", "session", "import", str(source))
    assert "not UTF-8 text" in process_error_line(done)


def test_session_export_refuses_an_unknown_session_before_making_the_file(
    cli: Callable[..., Result], tmp_path: Path
) -> None:
    target = tmp_path / "out.jsonl"
    line = error_line(cli("session", "export", "nosuchsession", "-o", str(target)))
    assert "session" in line and not target.exists()


def test_write_session_refuses_what_is_not_a_session(mem: clew.Memory) -> None:
    for bad in ("", "   ", 7):
        with pytest.raises(ValidationError, match="session must be"):
            mem.write_session(bad, io.StringIO())  # type: ignore[arg-type]


# -- i14-turns2: messages checked once (turns.Checked), the session read for an append


def test_only_a_message_checked_by_clew_skips_the_check(mem: clew.Memory) -> None:
    from clew.core import turns

    session = mem.start_session().id
    good = {"role": "user", "content": "hello"}
    # A plain pair of what a check makes is still a message to check, and refused.
    with pytest.raises(ValidationError, match="message 1 must be a JSON object"):
        mem.append_turns(session, [(good, turns.parse(good))])  # type: ignore[list-item]
    with pytest.raises(ValidationError, match="line 3 holds text that is not valid UTF-8"):
        turns.checked({"role": "user", "content": "\ud800"}, "m.jsonl line 3")
    with pytest.raises(ValidationError, match="line 4 has no role"):
        turns.checked({"content": "x"}, "m.jsonl line 4")
    added = mem.import_session([turns.checked(good, "line 1"), good])  # type: ignore[list-item]
    assert mem.export_session(added.id) == [good, good]


def test_an_append_to_a_session_refuses_an_ident_that_is_no_session(mem: clew.Memory) -> None:
    for bad in ("", "  ", 7, None):
        with pytest.raises(ValidationError, match="session must be"):
            mem.append_turn(bad, {"role": "user", "content": "x"})  # type: ignore[arg-type]
    with pytest.raises(clew.NotFoundError):
        mem.append_turn("nosuchsession", {"role": "user", "content": "x"})


# -- i16-capture: clew capture, import --from claude-code|codex, integrate


def test_capture_refuses_what_is_no_transcript(cli: Callable[..., Result], tmp_path: Path) -> None:
    assert "give the transcript file" in error_line(cli("capture"))
    assert "cannot read the transcript" in error_line(cli("capture", str(tmp_path / "none")))
    assert "is not a regular file" in error_line(cli("capture", str(tmp_path)))
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert "is not a regular file" in error_line(cli("capture", str(fifo)))  # never waits
    journal = tmp_path / "notes.jsonl"
    journal.write_text('{"role": "user", "content": "hi"}\n', encoding="utf-8")
    line = error_line(cli("import", "--from", "codex", str(journal)))
    assert "not a Codex rollout" in line
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    assert "not a Codex rollout" in error_line(cli("capture", "--format", "codex", str(empty)))
    assert "not stdin" in error_line(cli("import", "--from", "claude-code", "-"))
    assert "--session names" in error_line(cli("import", "--session", "k", str(journal)))
    # A file of other JSON lines is no transcript: nothing is a message, nothing is stored.
    done = cli("capture", str(journal), "--json")
    assert done.code == 0 and json.loads(done.out)["added"] == 0


def test_capture_transcript_refuses_bad_arguments(mem: clew.Memory, tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("", encoding="utf-8")
    with pytest.raises(ValidationError, match="transcript format 'aider' is not one of"):
        mem.capture_transcript(str(transcript), format="aider")
    for bad in ("", "  ", None, 3):
        with pytest.raises(ValidationError, match="transcript path"):
            mem.capture_transcript(bad)  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="workspace"):
        mem.capture_transcript(str(transcript), workspace="")
    with pytest.raises(ValidationError, match="session key"):
        mem.capture_transcript(str(transcript), key="x" * 10_000)


def test_integrate_refuses_a_missing_project_folder(
    cli: Callable[..., Result], tmp_path: Path
) -> None:
    line = error_line(cli("integrate", "claude-code", "--dir", str(tmp_path / "none")))
    assert "does not exist" in line
    assert not (tmp_path / "none").exists()
    assert "invalid choice" in error_line(cli("integrate", "cursor"))


def test_codex_notify_fails_open_and_integrate_codex_refuses_a_project(
    cli: Callable[..., Result], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path))
    for bad in ("not json", "[1]", '{"type": "agent-turn-complete"}', '{"type": 3}'):
        done = cli("capture", "--codex-notify", bad)
        assert done.code == 0 and done.out == ""
        assert done.err == "" or (
            done.err.startswith("clew capture: ") and done.err.count("\n") == 1
        )
    assert "leave out --project" in error_line(cli("integrate", "codex", "--dir", str(tmp_path)))
    assert not (tmp_path / "config.toml").exists()


# -- i15-serve: keys and `clew serve`'s command line, hostile tokens and headers


def test_keys_refuse_bad_scopes_spaces_and_prefixes(mem: clew.Memory) -> None:
    for scope in ("", "root", "READ", None):
        with pytest.raises(ValidationError, match="scope"):
            mem.create_key("team", scope)  # type: ignore[arg-type]
    for space in ("", "  ", "a\nb", 7):
        with pytest.raises(ValidationError, match="space"):
            mem.create_key(space, "read")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="prefix"):
        mem.revoke_key("   ")
    with pytest.raises(clew.NotFoundError, match="clew keys list"):
        mem.revoke_key("000000000000")
    with pytest.raises(ValidationError, match="limit"):
        mem.list_requests(limit=0)


def test_any_malformed_token_is_one_refusal_that_says_nothing_more(mem: clew.Memory) -> None:
    from clew.errors import AuthenticationError

    made = mem.create_key("team", "write").token
    prefix = made.split("_")[1]
    hostile = [
        "",
        " ",
        "clew_",
        f"clew_{prefix}",
        f"clew_{prefix}_",
        f"clew_{prefix}_{'x' * 43}",
        made.upper(),
        made + "x",
        "clew_" + "0" * 12 + "_" + "a" * 43,
        "\x00" * 50,
        "clew_\ud800_x",
        "clew_" + prefix + "_" + "é" * 43,
        "x" * 100_000,
    ]
    for token in hostile:
        with pytest.raises(AuthenticationError) as refused:
            mem.authenticate(token)
        assert str(refused.value).startswith("the key is not valid")
    assert mem.authenticate(made).scope == "write"


def test_keys_and_serve_commands_refuse_bad_input_in_one_line(cli: Callable[..., Result]) -> None:
    assert "--space" in error_line(cli("keys", "create", "--scope", "read"))
    assert "revoke" not in error_line(cli("keys", "revoke", "nope"))
    assert "keys list" in error_line(cli("keys", "revoke", "nope"))
    assert "whole number" in error_line(cli("keys", "log", "--limit", "many"))
    assert "TCP port" in error_line(cli("serve", "--port", "70000"))
    assert "--rate" in error_line(cli("serve", "--rate", "0"))


def test_a_workspace_with_a_nul_is_refused_and_a_stored_one_matches_nothing(
    mem: clew.Memory,
) -> None:
    """Found by the API's property test: a NUL in a workspace was a ValueError from the OS."""
    for call in (
        lambda: mem.list_sessions("a\x00b"),
        lambda: mem.workspace_tasks("a\x00b"),
    ):
        with pytest.raises(ValidationError, match="NUL"):
            call()
    mem.create_task("odd", workspace="/tmp/a\x00b")
    mem.start_session(workspace="/tmp/a\x00b")
    assert mem.workspace_tasks("/tmp") == [] and mem.list_sessions("/tmp") == []


# -- i15-serve (dashboard): the edit forms' fields, the key cookie, the search box


def test_the_dashboards_edits_refuse_bad_fields_with_one_line_and_write_nothing(
    mem: clew.Memory,
) -> None:
    from clew.errors import ClewError
    from clew.server import web

    task = mem.create_task("edit me", plan=["one"])
    decision = mem.add_decision(task.id, "a decision")
    before = mem.journal_head()
    hostile: list[dict[str, str]] = [
        {},
        {"do": ""},
        {"do": "drop table"},
        {"do": "note"},
        {"do": "note", "text": "  "},
        {"do": "constraint", "text": "x" * 2_000_000},
        {"do": "resolve", "text": "fixed"},
        {"do": "resolve", "entry": "zzzz", "text": "fixed"},
        {"do": "resolve", "entry": decision.id, "text": "a decision is not resolved"},
        {"do": "supersede", "entry": "", "text": "x"},
        {"do": "supersede", "entry": decision.id},
        {"do": "note", "text": "a\ud800b"},
    ]
    for form in hostile:
        with pytest.raises(ClewError) as refused:
            web.edit(mem, task.id, form)
        assert "\n" not in str(refused.value) and str(refused.value), form
    with pytest.raises(ClewError, match="task"):
        web.edit(mem, "nope", {"do": "note", "text": "x"})
    assert mem.journal_head() == before


def test_the_key_cookie_and_origins_take_any_text(mem: clew.Memory) -> None:
    from clew.server import web

    for header in (
        "",
        ";;;",
        "clew_keys=",
        "clew_keys=....",
        "clew_keys=" + "k." * 1000,
        "clew_keys=\x00; clew_keys=second",
        "=; ==",
    ):
        assert len(web.cookie_keys(header)) <= web.MAX_KEYS
    assert not web._same_origin({"host": "127.0.0.1:8", "origin": "null"})
    assert not web._same_origin({"host": "127.0.0.1:8", "origin": "http://127.0.0.1:8.evil"})
    assert web._same_origin({"host": "127.0.0.1:8", "referer": "http://127.0.0.1:8/tasks/x"})

    def said(query: str) -> str:  # what the search page shows above its box
        try:
            mem.search_all(query, limit=5)
        except ValidationError as refused:
            return str(refused)
        return ""

    for query in ("\x00", "((", '"', "*" * 5000, "kinds:entry", "é" * 300):
        assert "\n" not in said(query)


# -- i13-recall: questions for the question's vector and the place kept for meaning --------


def test_hybrid_takes_any_question_and_keeps_its_hits_in_order(mem: clew.Memory) -> None:
    from clew.search import embedding

    if not embedding.available():
        pytest.skip("the vectors extra is not installed")
    task = mem.create_task("Home", ["one"])
    for n in range(8):
        mem.add_finding(task.id, f"the vet on street {n} had something to say")
    mem.add_finding(task.id, "Biscuit must rest her injured leg for six weeks")
    odd = "\u03a9\u2248\u00e7 \u221a\u222b vet"  # symbols the model has no words for
    for question in (
        "what did we?",
        "the vet " * 5_000,
        "vet\x00say\u202edog",
        "what did I say yesterday?",
        odd,
    ):
        hits = mem.search_all(question, mode="hybrid", explain=True, limit=7)
        scores = [h.score for h in hits]
        assert scores == sorted(scores, reverse=True) and len(hits) <= 7
        assert len({h.id for h in hits}) == len(hits)
    with pytest.raises(ValidationError, match="search"):  # nothing to look for: said so
        mem.search_all("?!", mode="hybrid")


# -- i16-adk: Google ADK's session and memory services


def test_adk_services_take_hostile_names_state_and_queries(mem: clew.Memory) -> None:
    import asyncio

    pytest.importorskip("google.adk")
    import pydantic
    from google.adk.memory.memory_entry import MemoryEntry
    from google.adk.sessions.base_session_service import GetSessionConfig
    from google.genai import types

    from clew.integrations.adk import ClewMemoryService, ClewSessionService

    async def scenario() -> None:
        sessions, memory = ClewSessionService(mem), ClewMemoryService(mem)
        # A "/" in a name cannot make two sessions one.
        one = await sessions.create_session(app_name="a/b", user_id="c", session_id="d")
        two = await sessions.create_session(app_name="a", user_id="b/c", session_id="d")
        assert (await sessions.list_sessions(app_name="a")).sessions[0].user_id == "b/c"
        assert one.app_name == "a/b" and two.user_id == "b/c"
        # A blank id is a new one, as in ADK's own service.
        assert (await sessions.create_session(app_name="a", user_id="u", session_id=" ")).id
        # State that is not JSON is kept as ADK's stores keep it (its repr), the rest as is.
        odd = await sessions.create_session(
            app_name="a", user_id="u", session_id="odd", state={"f": print, "n": 1}
        )
        assert odd.state["n"] == 1
        got = await sessions.get_session(app_name="a", user_id="u", session_id="odd")
        assert got is not None and got.state["n"] == 1 and "print" in got.state["f"]
        with pytest.raises(ValidationError, match="session key"):
            await sessions.create_session(app_name="x" * 2_000, user_id="u")
        with pytest.raises(pydantic.ValidationError):
            GetSessionConfig(num_recent_events=-1)
        # Search syntax in a query is text; a query that finds nothing finds nothing.
        note = MemoryEntry(content=types.Content(parts=[types.Part(text="the printer is jammed")]))
        await memory.add_memory(app_name="a", user_id="u", memories=[note])
        for query in ('"AND OR (', "*", "NEAR(a b)", "\x00", "é" * 5_000):
            found = await memory.search_memory(app_name="a", user_id="u", query=query)
            assert found.memories == []
        found = await memory.search_memory(app_name="a", user_id="u", query="printer (jammed")
        assert [m.content for m in found.memories] == [note.content]

    asyncio.run(scenario())


# -- i14-write5: a JSON Lines import parsed by one decoder made once (checks.json_value)


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ('{"role": "user", "content": NaN}', "line 2 holds NaN, which is not a JSON number"),
        ('{"role": "user", "n": 1e999}', "line 2 holds '1e999', a number too large"),
        ('{"role": "user", "n": ' + "9" * 5000 + "}", "line 2 holds a number with too many"),
        ('{"role": "user", "content": "x"', "line 2 is not valid JSON"),
    ],
)
def test_a_bad_line_of_a_session_import_is_named_and_nothing_is_imported(
    cli: Callable[..., Result], mem: clew.Memory, tmp_path: Path, line: str, said: str
) -> None:
    source = tmp_path / "talk.jsonl"
    good = '{"role": "user", "content": "hello"}'
    source.write_text(f"{good}\n{line}\n{good}\n", encoding="utf-8")
    assert said in error_line(cli("session", "import", str(source)))
    assert mem.list_sessions() == []


# -- i15-finish: a streamed import's lines, the journal's tail read and its types


def test_an_import_body_cut_into_lines_refuses_what_is_not_a_line(mem: clew.Memory) -> None:
    from clew.server.bodies import body_lines

    for chunks, said in (
        ([b"x" * 40], "line 1 of the journal file is larger than"),
        ([b"ok\n", b"\xff\xfe\n"], "line 2 of the journal file is not UTF-8"),
        ([b'{"a": 1}\n', b"\xe2\x82"], "line 2 of the journal file is not UTF-8"),
    ):
        feed = iter(chunks)
        with pytest.raises(ValidationError) as refused:
            list(body_lines(lambda feed=feed: next(feed, None), limit=32))
        assert said in str(refused.value) and "\n" not in str(refused.value)
        assert "nothing was imported" in str(refused.value)
    # a text that is not a journal file, a line at a time: one line, nothing added
    before = mem.journal_head()
    for text in ("", "\n\n", "not json\n", '{"clew": "end"}\n'):
        with pytest.raises(clew.ClewError) as refused:
            mem.import_events(iter(text.splitlines(keepends=True)))
        assert "\n" not in str(refused.value)
    assert mem.journal_head() == before


def test_the_journals_tail_read_and_types_refuse_bad_values(mem: clew.Memory) -> None:
    mem.create_task("t")
    for bad in (
        {"limit": -1, "newest": True},
        {"limit": "5", "newest": True},
        {"types": "plan.revised"},
        {"types": [1]},
    ):
        with pytest.raises(ValidationError) as refused:
            mem.journal(**bad)  # type: ignore[arg-type]
        assert "\n" not in str(refused.value)
    assert mem.journal(types=["no.such.type"]) == []
    with pytest.raises(ValidationError, match="limit"):
        mem.journal(limit=0, newest=True)


# -- i16-langgraph: ClewStore and ClewSaver


def test_langgraph_store_and_saver_refuse_bad_input_and_keep_nothing(mem: clew.Memory) -> None:
    pytest.importorskip("langgraph.store.base")
    from langgraph.store.base import PutOp

    from clew.integrations.langgraph import ClewSaver, ClewStore

    store = ClewStore(mem)
    with pytest.raises(ValidationError, match="needs a namespace"):
        store.batch([PutOp((), "k", {"v": 1})])
    with pytest.raises(ValidationError, match="is not JSON"):
        store.put(("a",), "k", {"v": object()})
    with pytest.raises(ValidationError, match="is not JSON"):
        store.put(("a",), "k", {"v": float("nan")})
    with pytest.raises(ValidationError, match="the limit is 1000: use shorter labels"):
        store.put(("a",), "k" * 1000, {"v": 1})
    assert store.get(("a",), "k") is None and mem.list_entries() == []
    store.put(("a",), "k", {"v": 1})
    with pytest.raises(ValidationError, match="is not JSON"):
        store.put(("a",), "k", {"v": {1, 2}})
    kept = store.get(("a",), "k")
    assert kept is not None and kept.value == {"v": 1}  # the good version stays current

    saver = ClewSaver(mem)
    for config in ({}, {"configurable": {}}, {"configurable": {"thread_id": ""}}):
        with pytest.raises(ValidationError, match="thread_id"):
            saver.get_tuple(config)  # type: ignore[arg-type]
        with pytest.raises(ValidationError, match="thread_id"):
            list(saver.list(config))  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="checkpoint_id"):
        saver.put_writes({"configurable": {"thread_id": "t"}}, [("ch", 1)], "task")
    assert saver.get_tuple({"configurable": {"thread_id": "t"}}) is None
    saver.close()


# -- i14-tw: a recorded action's step checked from the task's status and step ids alone


def test_an_actions_step_is_checked_from_one_read_of_the_steps(mem: clew.Memory) -> None:
    """record_action reads a task's status and its current steps' ids (not the plan): the
    numbers count the steps a replan left, a bad step or a closed task writes nothing."""
    from clew.errors import InvalidTransitionError, NotFoundError

    bare = mem.create_task("no plan")
    task = mem.create_task("deploy", ["build", "push", "run"])
    mem.replan(task.id, [RemoveStep(1)])
    plan = mem.get_task(task.id).plan
    before = mem.journal_head()
    for ref in (0, 3, -1, "4", "", " ", True, 2.0):
        with pytest.raises(ValidationError):
            mem.record_action(task.id, command="x", step=ref)  # type: ignore[arg-type]
    with pytest.raises(NotFoundError, match="step"):
        mem.record_action(task.id, command="x", step="zzzzzz")
    with pytest.raises(ValidationError, match="no plan steps"):
        mem.record_action(bare.id, command="x", step=1)
    with pytest.raises(NotFoundError, match="task"):
        mem.record_action("0000000000", command="x", step=1)
    assert mem.journal_head() == before
    for n, step in enumerate(plan, start=1):
        assert mem.record_action(task.id, command="x", step=n).plan_item_id == step.id
        assert mem.record_action(task.id, command="x", step=str(n)).plan_item_id == step.id
        done = mem.record_action(task.id, command="x", step=step.id[:8])
        assert done.plan_item_id == step.id == mem.get_action(done.id).plan_item_id
    mem.update_task(task.id, status="completed")
    with pytest.raises(InvalidTransitionError):
        mem.record_action(task.id, command="x", step=1)


# -- i14-turn: a session key that is another session's id, after appends through the key
def test_a_key_spelling_another_sessions_id_appends_as_a_read_finds(mem: clew.Memory) -> None:
    """SQLite keeps the row of the session it last appended to; a key that spells another
    session's id still names that other session (a read prefers the id), kept row or not."""
    other = mem.start_session()
    named = mem.start_session(key=other.id)
    hello = {"role": "user", "content": "hello"}
    assert mem.append_turn(named.id, hello).session_id == named.id
    assert mem.append_turn(other.id, hello).session_id == other.id
    assert mem.append_turn(named.id, hello).session_id == named.id
    assert mem.append_turn(other.id, hello).session_id == other.id  # the id, not the key
    assert (mem.get_session(named.id).turn_count, mem.get_session(other.id).turn_count) == (2, 2)
