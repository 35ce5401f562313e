"""The task tracker, a service of the Memory facade: tasks, their plans and steps, and their
messages.

A progress report (`update_task`) is one write: the message first (with the steps it says
are done, through the watch service), then the step change and the records (through the
task-record service), then the task's fields and status. Its flat keyword signature is
what users call; it is made into value objects (`tasks.StepChange`, `TaskChange`,
`RecordChange`, `NewMessage`: pure, checked before the write) that the write applies.
The task it returns is built from what it read and wrote, not read again, unless something
else changed the task in the same call.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from clew.core import checks
from clew.core.ids import new_id
from clew.errors import ValidationError
from clew.kernel import Kernel, Service
from clew.models import (
    CLOSED_TASK_STATUSES,
    Message,
    MessageRole,
    MessageType,
    PlanItem,
    PlanOp,
    StepStatus,
    Task,
    TaskStatus,
)
from clew.privacy.redaction import Found
from clew.tasks import record
from clew.tasks import rules as tasks
from clew.tasks.rules import NewMessage, RecordChange, StepChange, TaskChange
from clew.tasks.taskrecord import TaskRecords, step_changes
from clew.tasks.watch import Watch

# Events that change a task's row or plan in ways update_task does not model itself.
_REWRITES = frozenset({"task.created", "task.archived", "plan.revised"})


class Tracker(Service):
    """Tasks, plans, steps and messages (a service of Memory; takes the task records, which
    it changes steps and records through, and the watch, which applies a message's stated
    progress)."""

    def __init__(self, kernel: Kernel, task_records: TaskRecords, watch: Watch) -> None:
        super().__init__(kernel)
        self._records = task_records
        self._watch = watch

    # -- tasks ----------------------------------------------------------------------------

    def create_task(
        self,
        name: str,
        plan: Iterable[str] = (),
        *,
        goal: str | None = None,
        workspace: str | None = None,
        metadata: dict[str, Any] | None = None,
        domain: str | None = None,
        priority: str | None = None,
        estimate: float | str | None = None,
        plan_source: str | None = None,
    ) -> Task:
        """Register a task with an optional plan; it starts active. `domain`, `priority`
        (low, normal, high, critical), `estimate` (seconds or '30m') and `plan_source`
        (agent, user, model, template; agent by default when a plan is given) go into
        its record (see `task_record`)."""
        if isinstance(plan, str):
            raise ValidationError("plan must be a list of step titles, not one string")
        facts = record.task_changes(
            domain=domain, priority=priority, estimate_value=estimate, plan_source=plan_source
        )
        steps = tasks.new_plan(plan)
        if steps and "plan_source" not in facts:
            facts["plan_source"] = "agent"
        task_id = new_id()
        data = {
            "task": {
                "id": task_id,
                "name": checks.name(name, "task name"),
                "goal": checks.optional_text(goal, "goal"),
                "workspace": checks.optional_text(workspace, "workspace"),
                "metadata": checks.json_object(metadata or {}, "metadata"),
            },
            "plan": steps,
            "record": facts,
        }
        with self._write() as at:
            self._emit("task.created", task_id, data, at)
            return self._store.get_task(task_id)

    def get_task(self, task_id: str) -> Task:
        """Return a task with its current plan."""
        return self._store.get_task(self._task_id(task_id))

    def list_tasks(
        self,
        status: str | TaskStatus | Sequence[str | TaskStatus] | None = None,
        *,
        include_archived: bool = False,
    ) -> list[Task]:
        """Return tasks, most recently updated first (archived ones only when asked)."""
        wanted: Sequence[str | TaskStatus]
        if status is None:
            wanted = ()
        elif isinstance(status, str):
            wanted = (status,)
        else:
            wanted = status
        statuses = tuple(checks.choice(s, TaskStatus, "task status") for s in wanted)
        return self._store.list_tasks(statuses, include_archived=include_archived)

    def update_task(
        self,
        task_id: str,
        *,
        message: str | None = None,
        role: str | MessageRole = MessageRole.AGENT,
        message_type: str | MessageType | None = None,
        step: int | str | None = None,
        step_status: str | StepStatus | None = None,
        step_summary: str | None = None,
        active_issue: str | None = None,
        status: str | TaskStatus | None = None,
        name: str | None = None,
        goal: str | None = None,
        workspace: str | None = None,
        next_objective: str | None = None,
        summary: str | None = None,
        metadata: dict[str, Any] | None = None,
        answer: str | None = None,
        outcome: str | None = None,
        confidence: float | None = None,
        domain: str | None = None,
        priority: str | None = None,
        estimate: float | str | None = None,
        error: str | None = None,
        error_step: int | str | None = None,
        entities: dict[str, Sequence[str]] | None = None,
        step_agent: str | None = None,
        step_outcome: str | None = None,
        step_artifacts: Sequence[str] | None = None,
        depends_on: Sequence[int | str] | None = None,
    ) -> Task:
        """Report progress in one atomic call: a message, a step change, task fields, status.

        `next_objective` is what the agent means to do next and `summary` a summary of
        progress so far; both show in the task state. `answer`, `outcome`, `confidence`,
        `domain`, `priority`, `estimate`, `entities` and `error` (with `error_step`) set the task's
        record; `step_agent`, `step_outcome`, `step_artifacts` and `depends_on` the step's
        (see `set_task_record` and `set_step_record`).

        `step` alone (no status, summary or record) marks that step active: the agent is
        now working on it (the CLI's `--step N` and the tool's `step` mean the same). The
        message is stored first, then the step change, then the task's fields and status,
        all in one transaction: either all of it happens or none. With
        `progress = "apply"` (the default), steps the message states are done (by number
        or exact title: "step 2 done", "Finished Build image") are completed too
        (journaled as inferred from the message), except the step this call changes itself.
        """
        tid = self._whole_task_id(task_id)
        facts = RecordChange(
            record.task_changes(
                answer=answer,
                outcome=outcome,
                error=error,
                confidence_score=confidence,
                domain=domain,
                priority=priority,
                estimate_value=estimate,
                entity_map=entities,
            ),
            error_step,
        )
        noted = _step_record(step_agent, step_outcome, step_artifacts)
        change = tasks.step_change(step, step_status, step_summary, active_issue, depends_on, noted)
        fields = {
            "name": name,
            "goal": goal,
            "workspace": workspace,
            "next_objective": next_objective,
            "summary": summary,
        }
        given = (message, step, status, *fields.values())
        if all(f is None for f in given) and not metadata and not facts.given:
            raise ValidationError(
                "nothing to update: give a message, a step change, a status or a field"
            )
        own = tasks.task_change(fields, metadata, status)
        said = _new_message(message, role, message_type, step)
        return self._update(tid, said, change, own, facts)

    def _update(
        self,
        tid: str,
        said: NewMessage | None,
        change: StepChange | None,
        own: TaskChange,
        facts: RecordChange,
    ) -> Task:
        """update_task's write, of what it was given made into value objects and checked:
        the message, the step change, the records, the task's fields and status."""
        nested = self._kernel._in_call()
        with self._write() as at:
            with self._known_task(tid):
                task = self._store.get_task(tid)
            fields = self._checked(task, change, own)
            # The step this call changes itself is not also inferred from its message.
            explicit = tasks.find_step(task.plan, change.step, tid).id if change else None
            applied: list[str] = []  # steps the message completed (stated progress)
            if said is not None:
                self._add_message(
                    tid,
                    said.content,
                    said.role,
                    said.type,
                    at,
                    exclude=explicit,
                    task=task,
                    applied=applied,
                )
            steps: dict[str, PlanItem] = {}
            if change is not None:
                step_id = self._records._change_step(
                    task,
                    change.step,
                    at,
                    status=change.status,
                    summary=change.summary,
                    issue=change.issue,
                    depends_on=change.depends_on,
                    written=steps,
                )
                self._records._set_step_record(task, step_id, change.record, at)
            if facts.given:
                self._records._set_record(task, facts.facts, at, error_step=facts.error_step)
            if fields:
                self._emit("task.updated", tid, {"task_id": tid, "changes": fields}, at)
            new_status = own.status if own.status is not task.status else None
            if new_status is not None:
                data = {"task_id": tid, "from": task.status.value, "to": new_status.value}
                self._emit("task.status_changed", tid, data, at)
            if nested or own.metadata:  # an outer call's writes, or JSON: read it back whole
                return self._store.get_task(tid)
            return self._as_written(task, at, fields, own.status, steps, bool(applied))

    def _checked(self, task: Task, change: StepChange | None, own: TaskChange) -> dict[str, Any]:
        """Inside update_task's write, with the task read: check that the task may take the
        change (its new status, a step of an open task); return the task's field changes,
        with the metadata merged into its own."""
        fields = dict(own.fields)
        if own.metadata:
            metadata = checks.json_object(own.metadata, "metadata")
            fields["metadata"] = {**task.metadata, **metadata}
        moves = own.status is not None and own.status is not task.status
        if own.status is not None and moves:
            tasks.check_transition(task, own.status)
        if change is not None and not moves:
            tasks.check_open(task.status, task.id)
        return fields

    def _as_written(
        self,
        task: Task,
        at: str,
        changes: dict[str, Any],
        status: TaskStatus | None,
        steps: dict[str, PlanItem],
        applied: bool = False,
    ) -> Task:
        """The task after update_task's writes, built from the task it read and what it
        wrote (`steps`: the steps it changed, as written), so a report reads the task once;
        the plan is read again only when a step changed in a way not in `steps` (progress
        applied from the message)."""
        written = self._kernel._written(task.id)
        own_status = status is not None and status is not task.status
        if written & _REWRITES or ("task.status_changed" in written and not own_status):
            return self._store.get_task(task.id)  # something else changed the task: read it
        fields: dict[str, Any] = dict(changes)
        if own_status:
            fields["status"] = status
            fields["completed_at"] = at if status in CLOSED_TASK_STATUSES else None
        if written:  # every event of a task stamps its updated_at
            fields["updated_at"] = at
        if "step.updated" in written:
            if steps and not applied:
                fields["plan"] = tuple(steps.get(s.id, s) for s in task.plan)
            else:
                fields["plan"] = self._store.get_plan(task.id)
        return task._replace(**fields)

    def archive_task(self, task_id: str, archived: bool = True) -> Task:
        """Hide a task from default listings (or show it again); nothing is deleted."""
        tid = self._task_id(task_id)
        with self._write() as at:
            task = self._store.get_task(tid)
            if task.archived != archived:
                self._emit("task.archived", tid, {"task_id": tid, "archived": archived}, at)
            return self._store.get_task(tid)

    # -- plan -----------------------------------------------------------------------------

    def update_step(
        self,
        task_id: str,
        step: int | str,
        *,
        status: str | StepStatus | None = None,
        title: str | None = None,
        summary: str | None = None,
        active_issue: str | None = None,
        depends_on: Sequence[int | str] | None = None,
    ) -> PlanItem:
        """Change one step's status or fields (step: 1-based number or step id prefix)."""
        tid = self._task_id(task_id)
        with self._write() as at:
            task = self._store.get_task(tid)
            tasks.check_open(task.status, tid)
            step_id = self._records._change_step(
                task,
                step,
                at,
                status=status,
                summary=summary,
                issue=active_issue,
                title=title,
                depends_on=depends_on,
            )
            return self._store.get_step(step_id)

    def replan(self, task_id: str, ops: Sequence[PlanOp], *, reason: str | None = None) -> Task:
        """Add, remove, move or rename steps as one new plan version; the old plan stays
        in the journal and removed steps keep their records and actions."""
        tid = self._task_id(task_id)
        why = checks.optional_text(reason, "reason")
        with self._write() as at:
            task = self._store.get_task(tid)
            tasks.check_open(task.status, tid)
            revision = tasks.revise_plan(task.plan, ops, tid)
            old = [
                {"id": s.id, "title": s.title, "status": s.status.value, "depends_on": s.depends_on}
                for s in task.plan
            ]
            data = {
                "task_id": tid,
                "version": task.plan_version + 1,
                "reason": why,
                "old_plan": old,
                "plan": revision.plan,
                "added": revision.added,
                "removed": revision.removed,
                "renamed": revision.renamed,
            }
            self._emit("plan.revised", tid, data, at)
            return self._store.get_task(tid)

    def removed_steps(self, task_id: str) -> list[PlanItem]:
        """Return the steps removed by replanning, with their final status."""
        tid = self._task_id(task_id)
        return [s for s in self._store.get_plan(tid, include_removed=True) if s.removed]

    # -- messages -------------------------------------------------------------------------

    def add_message(
        self,
        task_id: str,
        content: str,
        *,
        role: str | MessageRole = MessageRole.AGENT,
        type: str | MessageType = MessageType.TEXT,
    ) -> Message:
        """Append a message to a task's history."""
        tid = self._task_id(task_id)
        content = checks.text(content, "message")
        with self._write() as at:
            self._store.get_task_status(tid)
            return self._add_message(tid, content, role, type, at)

    def _add_message(
        self,
        task_id: str,
        content: str,
        role: str | MessageRole,
        kind: str | MessageType,
        at: str,
        *,
        exclude: str | None = None,
        task: Task | None = None,
        applied: list[str] | None = None,
    ) -> Message:
        """Journal a message; with `progress = "apply"` (the default), an agent's or user's
        message that states steps are done completes them (all but `exclude`), journaled as
        inferred, their ids added to `applied`. `task`: the task as the caller read it in
        this write, so it is not read again."""
        found: Found = {}
        content = self._redacted(content, "message.content", found)
        message = Message(
            id=new_id(),
            space=self.space,
            task_id=task_id,
            role=checks.choice(role, MessageRole, "message role"),
            type=checks.choice(kind, MessageType, "message type"),
            content=content,
            created_at=at,
        )
        data = {"id": message.id, "role": message.role.value, "type": message.type.value}
        self._emit("message.added", task_id, {"message": {**data, "content": content}}, at, found)
        if message.role is not MessageRole.SYSTEM:
            done = self._watch._apply_progress(
                task_id, message.id, content, at, exclude=exclude, task=task
            )
            if applied is not None:
                applied += done
        self._signal("message.added", task_id, at)
        return message

    def list_messages(self, task_id: str, *, limit: int | None = None) -> list[Message]:
        """Return a task's messages, newest first."""
        limit = checks.optional_count(limit, "limit")
        return self._store.list_messages(self._task_id(task_id), limit=limit)

    def get_message(self, message_id: str) -> Message:
        """Return one task message, in full."""
        return self._store.get_message(self._resolve("message", message_id))


def _new_message(
    message: str | None,
    role: str | MessageRole,
    kind: str | MessageType | None,
    step: int | str | None,
) -> NewMessage | None:
    """The message a report posts, checked; one that comes with a step is progress unless
    its type is given."""
    if message is None:
        return None
    kind = kind or (MessageType.PROGRESS if step is not None else MessageType.TEXT)
    return NewMessage(checks.text(message, "message"), role, kind)


def _step_record(
    agent: str | None, outcome: str | None, artifacts: Sequence[str] | None
) -> dict[str, Any] | None:
    """The step record's changes a report gives, validated; None when it gives none."""
    if agent is None and outcome is None and artifacts is None:
        return None
    return step_changes(agent, outcome, artifacts)
