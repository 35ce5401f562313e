"""The complete task record, a service of the Memory facade: setting a task's
answer, outcome, error summary, confidence, domain, priority, estimate, plan source and
entities, and a step's agent, outcome and artifacts; reading it all back as a `TaskRecord`
with its phase, phase timestamps and identified entities.

The phase timestamps are derived, never set: the projection of the events that make the
plan, change a step's status or record an action keeps them (store/projection/record.py).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from clew.core import checks
from clew.errors import ValidationError
from clew.kernel import Kernel, Service
from clew.models import (
    ActionStatus,
    EntryFilter,
    EntryStatus,
    EntryType,
    PlanItem,
    PlanSource,
    Priority,
    StepRecord,
    StepStatus,
    Task,
    TaskRecord,
    TaskStatus,
)
from clew.tasks import entities, record
from clew.tasks import rules as tasks

RECORDS_REMEMBERED = 256
ENTITY_SOURCES = 25  # the newest commands, messages, entries, files entity extraction reads
_SOURCES = ("agent", "user", "model")


class TaskRecords(Service):
    """Task and step records (a service of Memory): the tracker and the job that names a
    task's entities write them through `_set_record`, `_set_step_record` and `_change_step`,
    and layer 1 reads them through `_record_of`."""

    def __init__(self, kernel: Kernel) -> None:
        super().__init__(kernel)
        # Records built, by task id, with the seq of the task's newest event then.
        self._records: OrderedDict[str, tuple[int, TaskRecord]] = OrderedDict()

    def set_task_record(
        self,
        task_id: str,
        *,
        answer: str | None = None,
        outcome: str | None = None,
        error: str | None = None,
        error_step: int | str | None = None,
        confidence: float | None = None,
        domain: str | None = None,
        priority: str | Priority | None = None,
        estimate: float | str | None = None,
        plan_source: str | PlanSource | None = None,
        entities: dict[str, Sequence[str]] | None = None,
        source: str = "agent",
    ) -> TaskRecord:
        """Set fields of a task's record: the final answer and outcome, the error summary
        (reason and the step that failed), a confidence in [0, 1], the domain, a priority
        (low, normal, high, critical), an estimated duration (seconds or '30m'), who made
        the plan (agent, user, model, template) and entities ({kind: [names]}). Fields not
        given keep their value; `source` (agent, user or model) is journaled with them."""
        tid = self._task_id(task_id)
        changes = record.task_changes(
            answer=answer,
            outcome=outcome,
            error=error,
            confidence_score=confidence,
            domain=domain,
            priority=priority,
            estimate_value=estimate,
            plan_source=plan_source,
            entity_map=entities,
        )
        if not changes and error_step is None:
            raise ValidationError(
                "nothing to set: give answer, outcome, error, error_step, confidence, domain,"
                " priority, estimate, plan_source or entities"
            )
        with self._write() as at:
            task = self._store.get_task(tid)
            self._set_record(task, changes, at, error_step=error_step, source=source)
        return self.task_record(tid)

    def set_step_record(
        self,
        task_id: str,
        step: int | str,
        *,
        agent: str | None = None,
        outcome: str | None = None,
        artifacts: Sequence[str] | None = None,
        depends_on: Sequence[int | str] | None = None,
    ) -> StepRecord:
        """Set a step's record: the agent that does it, its outcome, the artifacts it made
        (replacing the list) and the steps it depends on (numbers or ids)."""
        tid = self._task_id(task_id)
        changes = _step_changes(agent, outcome, artifacts)
        if not changes and depends_on is None:
            raise ValidationError("nothing to set: give agent, outcome, artifacts or depends_on")
        with self._write() as at:
            task = self._store.get_task(tid)
            step_id = tasks.find_step(task.plan, step, tid).id
            if depends_on is not None:
                tasks.check_open(task.status, tid)
                self._change_step(task, step_id, at, depends_on=depends_on)
            self._set_step_record(task, step_id, changes, at)
        return self.task_record(tid).steps.get(step_id) or StepRecord(step_id, None, None, (), at)

    def task_record(self, task_id: str) -> TaskRecord:
        """Return a task's complete record: what was set, its phase and phase timestamps,
        its identified entities (given ones, then those extracted from its records) and,
        for a failed task with no error summary given, one derived from its records."""
        tid = self._task_id(task_id)
        with self._store.transaction():
            task = self._store.get_task(tid)
            return self._record_of(task)

    # -- for the other parts of Memory ---------------------------------------------------

    def _record_of(self, task: Task) -> TaskRecord:
        """Build a task's record (inside a read transaction). Every event that can change
        it is the task's, so it is remembered until the task's newest event moves (a hook's
        state and brief read it once)."""
        cache = self._records
        head = self._store.task_head(task.id)
        known = cache.get(task.id)
        if known is not None and known[0] == head:
            return known[1]
        built = self._build_record(task)
        cache[task.id] = (head, built)
        cache.move_to_end(task.id)
        if len(cache) > RECORDS_REMEMBERED:
            cache.popitem(last=False)
        return built

    def _build_record(self, task: Task) -> TaskRecord:
        row = self._store.task_record_row(task.id) or {}
        steps = {
            r["id"]: StepRecord(
                r["id"], r["agent"], r["outcome"], tuple(r["artifacts"]), r["updated_at"]
            )
            for r in self._store.step_record_rows(task.id)
        }
        commands, texts, paths = self._store.entity_sources(task.id, limit=ENTITY_SOURCES)
        found = entities.extract(commands=commands, texts=[task.goal or "", *texts], paths=paths)
        reason, failed_step = row.get("error_reason"), row.get("error_step_id")
        if task.status is TaskStatus.FAILED and reason is None:
            errors = self._store.list_entries(
                EntryFilter(task.id, (EntryType.ERROR,), (EntryStatus.ACTIVE,)), limit=1
            )
            failures = [
                a
                for a in self._store.list_actions(task.id, limit=20)
                if a.status is ActionStatus.FAILED
            ]
            reason, derived_step = record.error_summary(task.plan, errors, failures)
            failed_step = failed_step or derived_step
        elif task.status is TaskStatus.FAILED and failed_step is None:
            failed_step = record.error_summary(task.plan, (), ())[1]
        priority = row.get("priority")
        plan_source = row.get("plan_source")
        return TaskRecord(
            task_id=task.id,
            phase=record.phase(task.status, row),
            answer=row.get("answer"),
            outcome=row.get("outcome"),
            error_reason=reason,
            error_step_id=failed_step,
            confidence=row.get("confidence"),
            domain=row.get("domain"),
            priority=Priority(priority) if priority else None,
            estimate_seconds=row.get("estimate_seconds"),
            plan_source=PlanSource(plan_source) if plan_source else None,
            created_at=task.created_at,
            plan_generated_at=row.get("plan_generated_at"),
            execution_started_at=row.get("execution_started_at"),
            synthesis_started_at=row.get("synthesis_started_at"),
            completed_at=task.completed_at,
            entities=entities.merge(row.get("entities"), found),
            steps=steps,
        )

    def _set_record(
        self,
        task: Task,
        changes: dict[str, Any],
        at: str,
        *,
        error_step: int | str | None = None,
        source: str = "agent",
    ) -> None:
        """Journal changes to a task's record (inside a write)."""
        if source not in _SOURCES:
            raise ValidationError(f"source must be one of {', '.join(_SOURCES)}, not {source!r}")
        if error_step is not None:
            failed = tasks.find_step(task.plan, error_step, task.id)
            changes = {**changes, "error_step_id": failed.id}
        if "entities" in changes:
            current = (self._store.task_record_row(task.id) or {}).get("entities") or {}
            merged = {k: list(v) for k, v in current.items()}
            for kind, names in changes["entities"].items():
                merged[kind] = list(dict.fromkeys([*merged.get(kind, []), *names]))
            changes = {**changes, "entities": merged}
        if changes:
            data = {"task_id": task.id, "changes": changes, "source": source}
            self._emit("task.record_set", task.id, data, at)

    def _set_step_record(self, task: Task, step_id: str, changes: dict[str, Any], at: str) -> None:
        if changes:
            data = {"task_id": task.id, "step_id": step_id, "changes": changes}
            self._emit("step.record_set", task.id, data, at)

    def _change_step(
        self,
        task: Task,
        ref: int | str,
        at: str,
        *,
        status: str | StepStatus | None = None,
        summary: str | None = None,
        issue: str | None = None,
        title: str | None = None,
        depends_on: Sequence[int | str] | None = None,
        written: dict[str, PlanItem] | None = None,
    ) -> str:
        """Journal a change of one step; return its id (update_task, update_step and
        set_step_record change steps through it). With `written`, the step as the
        change leaves it goes in there (by id), for a caller that returns it unread."""
        target = tasks.find_step(task.plan, ref, task.id)
        changes: dict[str, Any] = {}
        if status is not None:
            new = checks.choice(status, StepStatus, "step status")
            if new is not target.status:
                changes["status"] = new.value
        if summary is not None:
            changes["summary"] = checks.optional_text(summary, "step summary")
        if issue is not None:
            # An empty issue clears it: the blocker is gone.
            changes["active_issue"] = checks.optional_text(issue, "active issue")
        if title is not None:
            changes["title"] = checks.name(title, "step title")
        if depends_on is not None:
            deps = [tasks.find_step(task.plan, d, task.id).id for d in depends_on]
            plan = [
                {"id": s.id, "depends_on": deps if s.id == target.id else list(s.depends_on)}
                for s in task.plan
            ]
            tasks.check_dependencies(plan)
            changes["depends_on"] = deps
        if changes:
            data: dict[str, Any] = {"task_id": task.id, "step_id": target.id, "changes": changes}
            timing = None
            if "status" in changes:
                timing = tasks.step_timing(target, StepStatus(changes["status"]), at)
                data["timing"] = timing
            self._emit("step.updated", task.id, data, at)
            if written is not None:
                written[target.id] = tasks.changed_step(target, changes, timing, at)
            if "status" in changes:
                self._signal("step.finished", task.id, target.id, StepStatus(changes["status"]), at)
        return target.id


def _step_changes(
    agent: str | None, outcome: str | None, artifacts: Sequence[str] | None
) -> dict[str, Any]:
    changes: dict[str, Any] = {}
    if agent is not None:
        changes["agent"] = record.short(agent, "step agent")
    if outcome is not None:
        changes["outcome"] = record.short(outcome, "step outcome")
    if artifacts is not None:
        changes["artifacts"] = record.artifacts(artifacts)
    return {k: v for k, v in changes.items() if v is not None}


def step_changes(
    agent: str | None, outcome: str | None, artifacts: Sequence[str] | None
) -> dict[str, Any]:
    """Validate a step record's fields; return the event's changes (given ones only)."""
    return _step_changes(agent, outcome, artifacts)
