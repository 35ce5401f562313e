"""The "where was I?" brief: a short, deterministic answer built from records.

Pure: it takes a task, its newest messages and actions and the current time,
and returns values; the same inputs always give the same text.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import NamedTuple

from clew.clock import ago
from clew.models import (
    FINISHED_STEP_STATUSES,
    Action,
    ActionStatus,
    Message,
    PlanItem,
    StepStatus,
    Task,
)

NEXT_STEPS_SHOWN = 3
TITLE_CHARS = 80
QUOTE_CHARS = 160


class StepRef(NamedTuple):
    number: int
    title: str
    status: str
    started_at: str | None = None


class Brief(NamedTuple):
    """Where a task stands: steps done, the current one, what broke, what comes next."""

    task_id: str
    name: str
    status: str
    plan_version: int
    completed: tuple[StepRef, ...]
    failed: tuple[StepRef, ...]
    current: StepRef | None
    next: tuple[StepRef, ...]
    last_update: str | None
    last_update_at: str | None
    recent_failures: tuple[str, ...]
    text: str


def clip(text: str, limit: int) -> str:
    """Return `text` on one line, cut to `limit` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def number_ranges(numbers: Sequence[int]) -> str:
    """Format sorted step numbers compactly: [1, 2, 3, 5] -> '1-3, 5'."""
    parts: list[str] = []
    start = prev = None
    for n in numbers:
        if start is None:
            start = prev = n
        elif prev is not None and n == prev + 1:
            prev = n
        else:
            parts.append(f"{start}-{prev}" if start != prev else f"{start}")
            start = prev = n
    if start is not None:
        parts.append(f"{start}-{prev}" if start != prev else f"{start}")
    return ", ".join(parts)


def _ref(number: int, step: PlanItem) -> StepRef:
    return StepRef(number, clip(step.title, TITLE_CHARS), step.status.value, step.started_at)


def current_step(plan: Sequence[PlanItem]) -> tuple[int, PlanItem] | None:
    """Return the step being worked on: the first active one, else the first pending one."""
    for wanted in (StepStatus.ACTIVE, StepStatus.PENDING):
        for number, step in enumerate(plan, 1):
            if step.status is wanted:
                return number, step
    return None


def _failure_line(action: Action, now: datetime) -> str:
    what = f"`{clip(action.command, 80)}`" if action.command else clip(action.summary, 80)
    code = f" exited {action.exit_code}" if action.exit_code is not None else " failed"
    detail = ""
    for stream in (action.stderr, action.stdout):
        if isinstance(stream, str) and stream.strip():
            detail = ": " + clip(stream.strip().splitlines()[-1], 120)
            break
    return f"{what}{code} ({ago(action.created_at, now)}){detail}"


def build_brief(
    task: Task, messages: Sequence[Message], actions: Sequence[Action], now: datetime
) -> Brief:
    """Answer "where was I?" for `task`; messages and actions come newest first."""
    plan = task.plan
    completed = tuple(_ref(n, s) for n, s in enumerate(plan, 1) if s.status is StepStatus.COMPLETED)
    failed = tuple(_ref(n, s) for n, s in enumerate(plan, 1) if s.status is StepStatus.FAILED)
    found = current_step(plan)
    current = _ref(*found) if found else None
    after = found[0] if found else 0
    upcoming = tuple(
        _ref(n, s)
        for n, s in enumerate(plan, 1)
        if n > after
        and s.status not in FINISHED_STEP_STATUSES
        and s.status is not StepStatus.ACTIVE
    )[:NEXT_STEPS_SHOWN]
    failures = tuple(_failure_line(a, now) for a in actions if a.status is ActionStatus.FAILED)[:3]
    last = messages[0] if messages else None

    lines = [f"Task {task.name!r} ({task.id}) is {task.status.value}, plan v{task.plan_version}."]
    if task.goal:
        lines.append(f"Goal: {clip(task.goal, QUOTE_CHARS)}")
    if not plan:
        lines.append("It has no plan steps.")
    elif completed:
        numbers = number_ranges([s.number for s in completed])
        titles = "; ".join(s.title for s in completed[-3:])
        more = f" (last: {titles})" if len(completed) > 3 else f": {titles}"
        lines.append(f"Completed steps {numbers} of {len(plan)}{more}.")
    else:
        lines.append(f"No step of {len(plan)} is completed yet.")
    for s in failed:
        lines.append(f"Failed: step {s.number} — {s.title}.")
    if current and current.status == StepStatus.ACTIVE.value:
        since = f", started {ago(current.started_at, now)}" if current.started_at else ""
        lines.append(f"Current: step {current.number} — {current.title} (active{since}).")
    elif current:
        lines.append(f"No step is in progress; next up is step {current.number} — {current.title}.")
    elif plan:
        lines.append("Every step is finished.")
    if last:
        lines.append(
            f'Last update {ago(last.created_at, now)}: "{clip(last.content, QUOTE_CHARS)}"'
        )
    for line in failures:
        lines.append(f"Recent failure: {line}")
    if upcoming:
        nexts = "; ".join(f"step {s.number} — {s.title}" for s in upcoming)
        lines.append(f"Next: {nexts}.")
    return Brief(
        task_id=task.id,
        name=task.name,
        status=task.status.value,
        plan_version=task.plan_version,
        completed=completed,
        failed=failed,
        current=current,
        next=upcoming,
        last_update=last.content if last else None,
        last_update_at=last.created_at if last else None,
        recent_failures=failures,
        text="\n".join(lines),
    )
