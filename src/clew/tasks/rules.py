"""Task-tracker rules, as pure functions over records: lifecycle transitions,
naming steps, replanning, and what one progress report changes (the value objects the
tracker's `update_task` is made of). They validate and return the data of the events the
facade journals; none of them touches the store."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from clew.core import checks
from clew.core.clock import seconds_between
from clew.core.ids import new_id
from clew.errors import AmbiguousIdError, InvalidTransitionError, NotFoundError, ValidationError
from clew.models import (
    CLOSED_TASK_STATUSES,
    FINISHED_STEP_STATUSES,
    TASK_TRANSITIONS,
    AddStep,
    MessageRole,
    MessageType,
    MoveStep,
    PlanItem,
    PlanOp,
    RemoveStep,
    RenameStep,
    StepStatus,
    Task,
    TaskStatus,
)

StepRef = int | str


def check_transition(task: Task | TaskStatus, new: TaskStatus, task_id: str = "") -> None:
    """Raise unless a task may move from its status to `new`."""
    current = task.status if isinstance(task, Task) else task
    task_id = task.id if isinstance(task, Task) else task_id
    allowed = TASK_TRANSITIONS[current]
    if new not in allowed:
        options = ", ".join(sorted(s.value for s in allowed)) or "none (it is final)"
        raise InvalidTransitionError(
            f"task {task_id} cannot go from {current.value} to {new.value}; "
            f"allowed from {current.value}: {options}"
        )


def check_open(status: TaskStatus, task_id: str) -> None:
    """Raise if the task is closed (completed, failed, cancelled) and so takes no work."""
    if status in CLOSED_TASK_STATUSES:
        hint = (
            "reopen it with --status active"
            if TaskStatus.ACTIVE in TASK_TRANSITIONS[status]
            else "it cannot be reopened; start a new task"
        )
        raise InvalidTransitionError(f"task {task_id} is {status.value}; {hint}")


def step_index(ids: Sequence[str], ref: StepRef, task_id: str) -> int:
    """Return the 0-based index of the step named by 1-based position or id prefix."""
    if isinstance(ref, bool):
        raise ValidationError(f"step must be a number or a step id, not {ref!r}")
    # ASCII digits only: "²".isdigit() is true, and int() refuses it.
    if isinstance(ref, str) and ref.strip().isascii() and ref.strip().isdigit():
        digits = ref.strip()
        if len(digits) > 19:  # int() refuses thousands of digits; no plan is that long
            raise ValidationError(
                f"step {checks.shown(digits)} is out of range: task {task_id} has {len(ids)}"
                f" steps (1-{len(ids)})"
            )
        ref = int(digits)
    if isinstance(ref, int):
        if not ids:
            raise ValidationError(f"task {task_id} has no plan steps; add one with replan")
        if not 1 <= ref <= len(ids):
            raise ValidationError(
                f"step {ref} is out of range: task {task_id} has {len(ids)} steps (1-{len(ids)})"
            )
        return ref - 1
    if not isinstance(ref, str) or not ref.strip():
        raise ValidationError(f"step must be a number or a step id, not {ref!r}")
    key = ref.strip().lower()
    matches = [i for i, step_id in enumerate(ids) if step_id.startswith(key)]
    if not matches:
        raise NotFoundError("step", ref, f"task {task_id}'s steps are numbered 1-{len(ids)}")
    if len(matches) > 1:
        raise AmbiguousIdError("step", ref, [ids[i] for i in matches])
    return matches[0]


def find_step(plan: Sequence[PlanItem], ref: StepRef, task_id: str) -> PlanItem:
    """Return the step named by 1-based position (int or digits) or id prefix."""
    return plan[step_index([s.id for s in plan], ref, task_id)]


# The metadata key that marks a task clew keeps from an agent's own list in its transcript
# (conversations/plan_capture.py): the agent's own tasks come before such tasks.
CAPTURED_PLAN = "captured_plan"


def captured_from(task: Task) -> str | None:
    """The tool whose calls a task kept from an agent's transcript follows (TodoWrite,
    TaskCreate, update_plan...); None for a task the agent or its user recorded."""
    mark = task.metadata.get(CAPTURED_PLAN)
    tool = mark.get("tool") if isinstance(mark, dict) else None
    return tool if isinstance(tool, str) else None


def new_plan(titles: Iterable[object]) -> list[dict[str, Any]]:
    """Return the journal form of a fresh plan: an id and a title per step."""
    return [{"id": new_id(), "title": checks.name(t, "plan step title")} for t in titles]


class Revision(NamedTuple):
    """The outcome of replanning: the new plan in order, and which ids came and went."""

    plan: list[dict[str, Any]]
    added: list[str]
    removed: list[str]
    renamed: dict[str, str]


class _Draft:
    """A step being replanned (mutable, unlike PlanItem)."""

    __slots__ = ("depends_on", "id", "title")

    def __init__(self, id: str, title: str, depends_on: list[str]) -> None:
        self.id, self.title, self.depends_on = id, title, depends_on


def revise_plan(plan: Sequence[PlanItem], ops: Sequence[PlanOp], task_id: str) -> Revision:
    """Apply replanning ops in order to a copy of the plan and return the result."""
    if not ops:
        raise ValidationError("replanning needs at least one change (add, remove, move or rename)")
    drafts = [_Draft(s.id, s.title, list(s.depends_on)) for s in plan]
    added: list[str] = []
    removed: list[str] = []
    renamed: dict[str, str] = {}

    def find(ref: StepRef) -> _Draft:
        return drafts[step_index([d.id for d in drafts], ref, task_id)]

    def position(value: object, *, inserting: bool) -> int:
        last = len(drafts) + (1 if inserting else 0)
        number = checks.integer(value, "position")
        if not 1 <= number <= max(last, 1):
            raise ValidationError(f"position {number} is out of range: use 1-{max(last, 1)}")
        return number

    for op in ops:
        if isinstance(op, AddStep):
            at = len(drafts) + 1 if op.position is None else position(op.position, inserting=True)
            deps = [find(ref).id for ref in op.depends_on]
            draft = _Draft(new_id(), checks.name(op.title, "step title"), deps)
            drafts.insert(at - 1, draft)
            added.append(draft.id)
        elif isinstance(op, RemoveStep):
            gone = find(op.step)
            drafts.remove(gone)
            if gone.id in added:
                added.remove(gone.id)
            else:
                removed.append(gone.id)
            for d in drafts:
                d.depends_on = [x for x in d.depends_on if x != gone.id]
        elif isinstance(op, MoveStep):
            moving = find(op.step)
            to = position(op.position, inserting=False)
            drafts.remove(moving)
            drafts.insert(to - 1, moving)
        elif isinstance(op, RenameStep):
            target = find(op.step)
            target.title = checks.name(op.title, "step title")
            if target.id not in added:
                renamed[target.id] = target.title
        else:
            raise ValidationError(f"unknown replanning operation {op!r}")
    steps = [{"id": d.id, "title": d.title, "depends_on": d.depends_on} for d in drafts]
    check_dependencies(steps)
    return Revision(steps, added, removed, renamed)


def check_dependencies(steps: Sequence[dict[str, Any]]) -> None:
    """Raise if a step depends on itself, on a step not in the plan, or on a cycle."""
    position = {s["id"]: i for i, s in enumerate(steps, 1)}
    graph = {s["id"]: list(s.get("depends_on", [])) for s in steps}
    for step_id, deps in graph.items():
        for dep in deps:
            if dep == step_id:
                raise ValidationError(f"step {position[step_id]} cannot depend on itself")
            if dep not in position:
                raise ValidationError(f"step {position[step_id]} depends on a step not in the plan")
    state: dict[str, int] = {}  # 1 = visiting, 2 = done

    def visit(node: str) -> None:
        state[node] = 1
        for dep in graph[node]:
            if state.get(dep) == 1:
                raise ValidationError(
                    f"steps {position[node]} and {position[dep]} depend on each other (a cycle)"
                )
            if dep not in state:
                visit(dep)
        state[node] = 2

    for node in graph:
        if node not in state:
            visit(node)


def changed_step(
    step: PlanItem, changes: dict[str, Any], timing: dict[str, Any] | None, at: str
) -> PlanItem:
    """The step as a `step.updated` event of `changes` (and `timing`) at `at` leaves it:
    what the projection writes to its row, without reading it back."""
    fields: dict[str, Any] = {**changes, **(timing or {}), "updated_at": at}
    if "status" in fields:
        fields["status"] = StepStatus(fields["status"])
    if "depends_on" in fields:
        fields["depends_on"] = tuple(fields["depends_on"])
    return step._replace(**fields)


def step_timing(step: PlanItem, status: StepStatus, at: str) -> dict[str, Any]:
    """The timing a status change gives a step, which its `step.updated` event carries:
    active starts the clock, a finishing status stops it, pending clears both."""
    if status is StepStatus.ACTIVE:
        return {"started_at": at, "completed_at": None, "duration_seconds": None}
    if status in FINISHED_STEP_STATUSES:
        started = step.started_at
        duration = seconds_between(started, at) if started else None
        return {"completed_at": at, "duration_seconds": duration}
    return {"started_at": None, "completed_at": None, "duration_seconds": None}


# -- what one progress report changes (update_task) ---------------------------------------


class StepChange(NamedTuple):
    """What a progress report changes of one step: the step (a number or an id prefix), its
    status (checked against the step when written), summary, active issue and dependencies,
    and its record's changes (validated: agent, outcome, artifacts)."""

    step: StepRef
    status: str | StepStatus | None
    summary: str | None
    issue: str | None
    depends_on: Sequence[StepRef] | None
    record: dict[str, Any]


class TaskChange(NamedTuple):
    """What a progress report changes of the task itself: its fields (checked), the
    metadata to merge into its own (checked when merged) and its new status."""

    fields: dict[str, Any]
    metadata: dict[str, Any] | None = None
    status: TaskStatus | None = None


class RecordChange(NamedTuple):
    """What a progress report sets of the task's record: its fields (validated) and the
    step that failed (a number or an id prefix)."""

    facts: dict[str, Any]
    error_step: StepRef | None = None

    @property
    def given(self) -> bool:
        """Whether it sets anything."""
        return bool(self.facts) or self.error_step is not None


class NewMessage(NamedTuple):
    """The message a progress report posts: its text (checked), role and type."""

    content: str
    role: str | MessageRole
    type: str | MessageType


def step_change(
    step: StepRef | None,
    status: str | StepStatus | None,
    summary: str | None,
    issue: str | None,
    depends_on: Sequence[StepRef] | None,
    record: dict[str, Any] | None,
) -> StepChange | None:
    """A report's step arguments as one change, or None when it names no step (and so
    must give none of them). `record`: the step record's changes, None when no field of
    it was given. A step alone means "I am now working on it": it becomes active."""
    given = (status, summary, issue, depends_on, record)
    if step is None:
        if any(f is not None for f in given):
            raise ValidationError("say which step to change: give step (a number or a step id)")
        return None
    if all(f is None for f in given):
        status = StepStatus.ACTIVE
    return StepChange(step, status, summary, issue, depends_on, record or {})


def task_change(
    fields: dict[str, str | None],
    metadata: dict[str, Any] | None,
    status: str | TaskStatus | None,
) -> TaskChange:
    """A report's changes to the task itself, checked: `fields` (name, goal, workspace,
    next_objective, summary: those given), the metadata to merge and the status."""
    changes: dict[str, Any] = {k: v for k, v in fields.items() if v is not None}
    if "name" in changes:
        changes["name"] = checks.name(changes["name"], "task name")
    for key in ("goal", "workspace", "next_objective", "summary"):
        if key in changes:
            changes[key] = checks.text(changes[key], key, max_chars=checks.MAX_TEXT_CHARS)
    new_status = checks.choice(status, TaskStatus, "task status") if status else None
    return TaskChange(changes, metadata, new_status)
