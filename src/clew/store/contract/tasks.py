"""The task tracker's reads: tasks, plans, steps and messages; the ledger (actions, commands, the
trace, semantic memory); the task record. Part of the backend contract
(store/contract/__init__.py states the rules every method keeps)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from clew.models import (
    Action,
    ActionLog,
    ActionStatus,
    Attempt,
    FileChanges,
    Guardrail,
    Message,
    Pattern,
    PlanItem,
    RepeatedFailure,
    Task,
    TaskStatus,
    TraceDecision,
    TraceValidation,
)


class TaskReads(Protocol):
    """Tasks and their plans, messages and changed files."""

    def get_task(self, task_id: str) -> Task:
        """One task with its current plan (steps in plan order). NotFoundError if none."""
        ...

    def get_task_status(self, task_id: str) -> TaskStatus:
        """Just a task's status (the write path's check). NotFoundError if no such task."""
        ...

    def get_task_steps(self, task_id: str) -> tuple[TaskStatus, tuple[str, ...]]:
        """A task's status and its current steps' ids in plan order, in one read (the check
        of a write that names a step). NotFoundError if no such task."""
        ...

    def outline_rows(
        self,
        kind: str,
        *,
        task_id: str | None = None,
        step_id: str | None = None,
        limit: int,
    ) -> list[tuple[Any, ...]]:
        """The newest `limit` rows of one kind of the outline (task, goal, step, answer,
        pattern, guardrail: portable_tasks.OUTLINE_SQL's columns), of one task or step."""
        ...

    def list_tasks(
        self, statuses: tuple[TaskStatus, ...] = (), *, include_archived: bool = False
    ) -> list[Task]:
        """Tasks with their plans, most recently updated first (ties by id); of these
        statuses if any; archived tasks only with `include_archived`. One read, whatever
        the number of tasks."""
        ...

    def get_plan(self, task_id: str, *, include_removed: bool = False) -> tuple[PlanItem, ...]:
        """A task's steps in plan order (empty for an unknown task); removed steps after
        the others when asked for."""
        ...

    def get_step(self, step_id: str) -> PlanItem:
        """One plan step by id. NotFoundError if none."""
        ...

    def list_messages(self, task_id: str, *, limit: int | None = None) -> list[Message]:
        """A task's messages, newest first."""
        ...

    def get_message(self, message_id: str) -> Message:
        """One task message by id. NotFoundError if none."""
        ...

    def count_messages(self, task_id: str) -> int:
        """How many messages a task has."""
        ...

    def last_message_at(self, task_id: str, type: str) -> str | None:
        """When the newest message of this type was added to a task; None if none was."""
        ...

    def last_event_at(self, task_id: str, type: str) -> str | None:
        """When the newest event of this type was journaled for a task; None if none was."""
        ...

    def file_changes(self, task_id: str, *, newest: int | None = 5) -> FileChanges:
        """How many files a task created and modified, and its `newest` changed paths
        (most recently changed first, ties by path)."""
        ...


class LedgerReads(Protocol):
    """The ledger: actions and their logs, commands, the trace, patterns and guardrails."""

    def get_action(self, action_id: str) -> Action:
        """One action by id, its output as recorded (text stays text, bytes stay bytes).
        NotFoundError if none."""
        ...

    def action_commands(
        self, action_ids: Sequence[str], *, failed: bool = False
    ) -> dict[str, str | None]:
        """The command of each action named that exists (that failed or timed out, with
        `failed`), by id, in one read."""
        ...

    def list_actions(
        self, task_id: str, *, plan_item_id: str | None = None, limit: int | None = None
    ) -> list[Action]:
        """A task's actions (of one step if given), newest first."""
        ...

    def recent_actions(self, task_id: str, *, limit: int) -> list[Action]:
        """A task's newest actions, newest first, without their output (stdout, stderr,
        input and output None): cheap whatever the output's size."""
        ...

    def recent_attempts(self, task_id: str, *, limit: int) -> list[Attempt]:
        """A task's newest actions, newest first, as stuck detection reads them: the few
        fields of `Attempt` only."""
        ...

    def list_action_logs(self, action_id: str) -> list[ActionLog]:
        """An action's log lines, oldest first."""
        ...

    def commands(
        self,
        *,
        task_id: str | None = None,
        plan_item_id: str | None = None,
        statuses: tuple[ActionStatus, ...] = (),
        exit_code: int | None = None,
        contains: tuple[str, ...] = (),
        limit: int | None = None,
    ) -> list[Action]:
        """Actions with a command line, newest first, filtered exactly; `contains`: the
        command holds any of these texts, ignoring ASCII case (no wildcards)."""
        ...

    def repeated_failures(
        self, *, task_id: str | None = None, min_failures: int = 2, limit: int = 50
    ) -> list[RepeatedFailure]:
        """Command lines (exact text) that failed at least `min_failures` times, most
        failures first, then most recently failed."""
        ...

    def actions_with_fingerprint(self, key: str, *, limit: int = 50) -> list[Action]:
        """Failed commands whose error has this fingerprint, newest first."""
        ...

    def open_waits(self, task_id: str) -> int:
        """How many waits of a task are open: smart waits still watching, and wait actions
        still started."""
        ...

    def get_trace_decision(self, decision_id: str) -> TraceDecision:
        """One decision of the trace by id. NotFoundError if none."""
        ...

    def trace(
        self, task_id: str
    ) -> tuple[list[TraceDecision], list[TraceValidation], list[Action]]:
        """A task's trace, each list oldest first: its decisions, their validations, and
        its tool calls (actions made by a decision or of type tool)."""
        ...

    def get_pattern(self, pattern_id: str) -> Pattern:
        """One pattern of semantic memory by id. NotFoundError if none."""
        ...

    def list_patterns(
        self, *, domain: str | None = None, include_deprecated: bool = False
    ) -> list[Pattern]:
        """Patterns, oldest first; of one domain; deprecated ones only when asked for."""
        ...

    def get_guardrail(self, guardrail_id: str) -> Guardrail:
        """One guardrail by id. NotFoundError if none."""
        ...

    def list_guardrails(self, *, enabled_only: bool = False) -> list[Guardrail]:
        """Guardrails, oldest first; only enabled ones when asked for."""
        ...


class RecordReads(Protocol):
    """The complete task record and what it is derived from."""

    def task_record_row(self, task_id: str) -> dict[str, Any] | None:
        """A task's record row (entities decoded); None if nothing was ever set."""
        ...

    def step_record_rows(self, task_id: str) -> list[dict[str, Any]]:
        """The record rows of a task's steps (artifacts decoded), in no set order."""
        ...

    def task_head(self, task_id: str) -> int:
        """The seq of a task's newest event (0 if none): a derived value is reused until it
        moves."""
        ...

    def newest_trace_decisions(self, task_id: str, limit: int) -> list[TraceDecision]:
        """A task's newest `limit` trace decisions, newest first."""
        ...

    def entity_sources(self, task_id: str, *, limit: int) -> tuple[list[str], list[str], list[str]]:
        """The newest `limit` command lines, texts (messages, then entry summaries) and
        changed paths of a task, each newest first."""
        ...
