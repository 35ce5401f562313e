"""Property tests: replanning keeps every step accounted for, and any sequence of API
calls leaves tables that the journal rebuilds exactly."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import TypeVar

from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

import clew
from clew import AddStep, MoveStep, RemoveStep, RenameStep
from clew.core.text import number_ranges
from clew.models import PlanItem, StepStatus
from clew.tasks.rules import revise_plan
from tests.conftest import FakeClock, new_space, postgres_url

T = TypeVar("T")
titles = st.text(min_size=1, max_size=20).filter(lambda t: t.strip() != "")
positions = st.integers(min_value=-1, max_value=12)
plan_ops = st.one_of(
    st.builds(AddStep, titles, st.none() | positions),
    st.builds(RemoveStep, positions),
    st.builds(MoveStep, positions, positions),
    st.builds(RenameStep, positions, titles),
)


def plan_of(names: list[str]) -> list[PlanItem]:
    return [
        PlanItem(
            id=f"id{i:08d}",
            space="s",
            task_id="t",
            ordinal=i,
            title=name,
            status=StepStatus.PENDING,
            started_at=None,
            completed_at=None,
            duration_seconds=None,
            summary=None,
            active_issue=None,
            depends_on=(),
            removed=False,
            created_at="",
            updated_at="",
        )
        for i, name in enumerate(names, 1)
    ]


@given(st.lists(titles, max_size=10), st.lists(plan_ops, min_size=1, max_size=8))
def test_replanning_accounts_for_every_step(names: list[str], ops: list[object]) -> None:
    plan = plan_of(names)
    try:
        revision = revise_plan(plan, ops, "t")  # type: ignore[arg-type]
    except clew.ClewError:
        return  # refused as a whole (a bad position, an unknown step): nothing to account for
    before = {s.id for s in plan}
    after = [s["id"] for s in revision.plan]
    assert len(after) == len(set(after))  # no step twice
    assert set(after) == (before - set(revision.removed)) | set(revision.added)
    assert set(revision.removed) <= before and not set(revision.added) & before
    adds = sum(isinstance(op, AddStep) for op in ops)
    assert len(revision.added) <= adds


@given(st.sets(st.integers(min_value=1, max_value=60)))
def test_step_ranges_expand_back_to_the_same_numbers(numbers: set[int]) -> None:
    text = number_ranges(sorted(numbers))
    expanded: set[int] = set()
    for part in filter(None, text.split(", ")):
        low, _, high = part.partition("-")
        expanded.update(range(int(low), int(high or low) + 1))
    assert expanded == numbers


class TrackerMachine(RuleBasedStateMachine):
    """Random sequences of tracker calls; afterwards the journal must rebuild every table."""

    def __init__(self, location: str | None = None) -> None:
        """`location`: the store to use (a fresh space in it); a new SQLite file if None."""
        super().__init__()
        self.location = location
        self.dir = tempfile.TemporaryDirectory()
        self.clock = FakeClock()
        if location is None:
            self.mem = clew.open(Path(self.dir.name) / "p.db", clock=self.clock)
        else:
            self.mem = clew.open(location, space=new_space(), clock=self.clock)
        self.tasks: list[str] = []

    def teardown(self) -> None:
        report = self.mem.verify()
        self.mem.close()
        self.dir.cleanup()
        assert report.ok, report.differences

    def attempt(self, call: Callable[[], T]) -> T | None:
        """Make a call; if it is refused, the journal must not have grown."""
        before = len(self.mem.journal())
        try:
            return call()
        except clew.ClewError:
            assert len(self.mem.journal()) == before
            return None

    @rule(steps=st.lists(titles, max_size=6))
    def create(self, steps: list[str]) -> None:
        # PostgreSQL's text cannot hold NUL: such a title is refused there (test_postgres.py).
        assume(self.location is None or not any("\x00" in s for s in steps))
        self.tasks.append(self.mem.create_task("task", steps).id)

    @precondition(lambda self: self.tasks)
    @rule(
        data=st.data(),
        status=st.sampled_from(["pending", "active", "completed", "failed", "skipped"]),
        step=st.integers(min_value=1, max_value=7),
        message=st.none() | st.text(max_size=30),
    )
    def update(self, data: st.DataObject, status: str, step: int, message: str | None) -> None:
        task_id = data.draw(st.sampled_from(self.tasks))
        self.clock.advance(data.draw(st.integers(min_value=0, max_value=600)))
        self.attempt(
            lambda: self.mem.update_task(task_id, step=step, step_status=status, message=message)
        )

    @precondition(lambda self: self.tasks)
    @rule(data=st.data(), status=st.sampled_from(["active", "paused", "completed", "cancelled"]))
    def set_status(self, data: st.DataObject, status: str) -> None:
        task_id = data.draw(st.sampled_from(self.tasks))
        self.attempt(lambda: self.mem.update_task(task_id, status=status))

    @precondition(lambda self: self.tasks)
    @rule(data=st.data(), ops=st.lists(plan_ops, min_size=1, max_size=4))
    def replan(self, data: st.DataObject, ops: list[object]) -> None:
        task_id = data.draw(st.sampled_from(self.tasks))
        self.attempt(lambda: self.mem.replan(task_id, ops))  # type: ignore[arg-type]

    @precondition(lambda self: self.tasks)
    @rule(
        data=st.data(),
        code=st.none() | st.integers(min_value=0, max_value=3),
        out=st.none() | st.text(max_size=50) | st.binary(max_size=50),
        step=st.none() | st.integers(min_value=1, max_value=4),
    )
    def act(
        self, data: st.DataObject, code: int | None, out: str | bytes | None, step: int | None
    ) -> None:
        task_id = data.draw(st.sampled_from(self.tasks))
        try:
            action = self.mem.record_action(
                task_id, command="cmd", exit_code=code, stdout=out, step=step
            )
        except clew.ClewError:
            return
        stored = self.mem.get_action(action.id).stdout
        assert stored == (out.decode() if isinstance(out, bytes) and _utf8(out) else out)

    @invariant()
    def plans_are_numbered_from_one(self) -> None:
        for task_id in self.tasks[-2:]:
            plan = self.mem.get_task(task_id).plan
            assert [s.ordinal for s in plan] == list(range(1, len(plan) + 1))


def _utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


TrackerMachine.TestCase.settings = settings(max_examples=25, stateful_step_count=25, deadline=None)
test_tracker_machine = TrackerMachine.TestCase


def test_tracker_machine_on_postgres() -> None:
    """The same random sequences on the PostgreSQL store (each run in a space of its own)."""
    url = postgres_url()
    run_state_machine_as_test(
        lambda: TrackerMachine(url),
        settings=settings(max_examples=10, stateful_step_count=25, deadline=None),
    )


# Pieces an error output is made of: error words of each kind, line breaks of every kind
# str.splitlines knows, whitespace, word characters.
_ERROR_PIECES = st.sampled_from(
    [
        "Error",
        "error:",
        "error[E1]:",
        "ValueError: x",
        "ValueError",
        "fatal:",
        "fatal",
        "EACCES",
        "EAC",
        "SegFault:",
        "Warning",
        "ERROR",
        "FAILED",
        "failed",
        "denied",
        "make: *** Error 1",
        " ",
        "\t",
        "\u00a0",
        "\n",
        "\r",
        "\r\n",
        "\x0b",
        "\x0c",
        "\x1c",
        "\x1d",
        "\x1e",
        "\x85",
        "\u2028",
        "\u2029",
        "a",
        "E",
        "x:",
        "_",
        "é",
        "1",
        ":",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_ERROR_PIECES, max_size=40).map("".join))
def test_the_telling_line_is_the_last_line_naming_an_error(text: str) -> None:
    from clew.archive.fingerprint import _ERROR_LINE, _STRONG, telling_line

    # The definition, line by line (telling_line skips a text's lines that cannot match).
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    strong = [line for line in lines if _STRONG.search(line)]
    named = [line for line in lines if _ERROR_LINE.search(line)]
    assert telling_line(text) == (strong or named or lines or [""])[-1]


@settings(max_examples=300, deadline=None)
@given(st.datetimes(timezones=st.sampled_from([UTC, timezone(timedelta(hours=5, minutes=30))])))
def test_a_stamp_is_the_time_in_utc_as_strftime_writes_it(moment: datetime) -> None:
    from clew.core.clock import stamp

    try:
        utc = moment.astimezone(UTC)
    except OverflowError:
        return  # out of range in UTC: stamp raises as astimezone does
    assert stamp(moment) == utc.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
