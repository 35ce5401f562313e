"""The task tracker's values: task, step, action and message statuses with their
transitions, the task, plan, action and message records, what a task changed in its
workspace, and the operations a replan is made of.

Like every module of clew.models, this one does without `from __future__ import
annotations`: NamedTuple compiles each field's annotation that is a string, and the hook
path imports every record (see the package's docstring).
"""

from enum import StrEnum
from typing import Any, NamedTuple

# Command output is kept verbatim: text when it is valid UTF-8, the raw bytes otherwise.
Output = str | bytes


class TaskStatus(StrEnum):
    ACTIVE = "active"
    PAUSED = "paused"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"


# Which status a task may move to from each status. Cancelled is final; a
# completed or failed task can be reopened, because agents do finish too early.
TASK_TRANSITIONS: dict[TaskStatus, frozenset[TaskStatus]] = {
    TaskStatus.ACTIVE: frozenset(
        {TaskStatus.PAUSED, TaskStatus.COMPLETED, TaskStatus.FAILED, TaskStatus.CANCELLED}
    ),
    TaskStatus.PAUSED: frozenset({TaskStatus.ACTIVE, TaskStatus.FAILED, TaskStatus.CANCELLED}),
    TaskStatus.COMPLETED: frozenset({TaskStatus.ACTIVE}),
    TaskStatus.FAILED: frozenset({TaskStatus.ACTIVE, TaskStatus.CANCELLED}),
    TaskStatus.CANCELLED: frozenset(),
}

# A task in one of these statuses accepts no step, plan or action changes until reopened.
CLOSED_TASK_STATUSES = frozenset({TaskStatus.COMPLETED, TaskStatus.FAILED, TaskStatus.CANCELLED})


class StepStatus(StrEnum):
    PENDING = "pending"
    ACTIVE = "active"
    COMPLETED = "completed"
    FAILED = "failed"
    SKIPPED = "skipped"


# Statuses that end a step: entering one stamps completed_at and the duration.
FINISHED_STEP_STATUSES = frozenset({StepStatus.COMPLETED, StepStatus.FAILED, StepStatus.SKIPPED})


class ActionType(StrEnum):
    CLI = "cli"
    GUI = "gui"
    WAIT = "wait"
    VISION = "vision"
    REASONING = "reasoning"
    TOOL = "tool"  # a tool call of the episodic trace
    OTHER = "other"


class ActionStatus(StrEnum):
    STARTED = "started"
    COMPLETED = "completed"
    FAILED = "failed"
    TIMEOUT = "timeout"


class MessageRole(StrEnum):
    AGENT = "agent"
    SYSTEM = "system"
    USER = "user"


class MessageType(StrEnum):
    TEXT = "text"
    LIFECYCLE = "lifecycle"
    PROGRESS = "progress"
    WAIT = "wait"
    STUCK = "stuck"
    PLAN = "plan"


class PlanItem(NamedTuple):
    """One step of a task's plan; `ordinal` is its 1-based position (None once removed)."""

    id: str
    space: str
    task_id: str
    ordinal: int | None
    title: str
    status: StepStatus
    started_at: str | None
    completed_at: str | None
    duration_seconds: float | None
    summary: str | None
    active_issue: str | None
    depends_on: tuple[str, ...]
    removed: bool
    created_at: str
    updated_at: str


class Task(NamedTuple):
    """A tracked task with its current plan (removed steps are kept but not listed here)."""

    id: str
    space: str
    name: str
    goal: str | None
    workspace: str | None
    status: TaskStatus
    archived: bool
    metadata: dict[str, Any]
    plan_version: int
    last_replanned_at: str | None
    created_at: str
    updated_at: str
    completed_at: str | None
    next_objective: str | None
    summary: str | None  # a summary of progress, set by the agent or a utility model
    plan: tuple[PlanItem, ...] = ()

    def step(self, number: int) -> PlanItem:
        """Return the step at 1-based position `number` of the current plan."""
        return self.plan[number - 1]


class Priority(StrEnum):
    LOW = "low"
    NORMAL = "normal"
    HIGH = "high"
    CRITICAL = "critical"


class PlanSource(StrEnum):
    """Who made a task's plan."""

    AGENT = "agent"
    USER = "user"
    MODEL = "model"
    TEMPLATE = "template"


class Phase(StrEnum):
    """Where a task is in its life (the phases), derived from its status and plan:
    never set on its own, so there is one state machine, the status (see record.phase)."""

    RECEIVED = "received"  # no plan yet, nothing done
    PLANNED = "planned"  # a plan, no step started and no action recorded
    EXECUTING = "executing"  # a step started or an action recorded
    SYNTHESIZING = "synthesizing"  # every step completed or skipped, the task still open
    PAUSED = "paused"
    COMPLETED = "completed"
    FAILED_PLANNING = "failed_planning"
    FAILED_EXECUTION = "failed_execution"
    FAILED_SYNTHESIS = "failed_synthesis"
    CANCELLED = "cancelled"


class StepRecord(NamedTuple):
    """What a step's record adds to it: who did it, how it turned out, what it made."""

    step_id: str
    agent: str | None
    outcome: str | None
    artifacts: tuple[str, ...]
    updated_at: str


class TaskRecord(NamedTuple):
    """The complete record of a task beyond its plan: the answer and
    outcome, the error summary, identified entities, confidence, phase timestamps, the plan's
    source, domain, priority and estimate, and each step's record (by step id)."""

    task_id: str
    phase: Phase
    answer: str | None
    outcome: str | None
    error_reason: str | None  # given, else derived from the records once the task failed
    error_step_id: str | None
    confidence: float | None
    domain: str | None
    priority: Priority | None
    estimate_seconds: float | None
    plan_source: PlanSource | None
    created_at: str
    plan_generated_at: str | None
    execution_started_at: str | None
    synthesis_started_at: str | None
    completed_at: str | None
    entities: dict[str, tuple[str, ...]]  # kind -> values: given ones, then extracted ones
    steps: dict[str, StepRecord]


class Action(NamedTuple):
    """Something the agent did; commands carry their exit code and verbatim output."""

    id: str
    space: str
    task_id: str
    plan_item_id: str | None
    type: ActionType
    summary: str
    status: ActionStatus
    input: dict[str, Any] | None
    output: dict[str, Any] | None
    command: str | None
    cwd: str | None
    exit_code: int | None
    duration_seconds: float | None
    stdout: Output | None
    stderr: Output | None
    created_at: str
    updated_at: str
    tool: str | None = None  # the tool's name, for a tool call
    decision_id: str | None = None  # the trace decision that made the call
    started_at: str | None = None
    ended_at: str | None = None
    cpu_seconds: float | None = None
    memory_mb: float | None = None
    fingerprint: str | None = None  # of the error, for a failed command


class Attempt(NamedTuple):
    """The few fields of an action that stuck detection reads (an `Action` has them too):
    a task's newest actions read as these build a third of what whole actions cost."""

    id: str
    summary: str
    status: ActionStatus
    command: str | None
    fingerprint: str | None
    created_at: str
    updated_at: str


class ActionLog(NamedTuple):
    id: str
    space: str
    task_id: str
    action_id: str
    type: str
    content: str
    created_at: str


class Message(NamedTuple):
    id: str
    space: str
    task_id: str
    role: MessageRole
    type: MessageType
    content: str
    created_at: str


class FileChanges(NamedTuple):
    """What a task changed in its workspace: counts, the newest paths and when."""

    created: int
    modified: int
    last_change: str | None
    newest: tuple[str, ...] = ()


# Replanning is a sequence of these operations, applied in order as one new plan version.
# `step` names a step by 1-based position in the plan as it stands when the op applies,
# or by step id (prefix); `position` is the 1-based place to put a step.


class AddStep(NamedTuple):
    title: str
    position: int | None = None  # None appends
    depends_on: tuple[int | str, ...] = ()


class RemoveStep(NamedTuple):
    step: int | str


class MoveStep(NamedTuple):
    step: int | str
    position: int


class RenameStep(NamedTuple):
    step: int | str
    title: str


PlanOp = AddStep | RemoveStep | MoveStep | RenameStep
