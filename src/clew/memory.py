"""The Memory facade: every behaviour of clew, over one store; here, the task tracker.

How a call writes (validate, one write transaction, journal events) is in `facade.py`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any

from clew import checks, record, tasks
from clew.archive import Archive
from clew.assembly import Assembly
from clew.capture import Capture
from clew.checkpoints import Checkpoints
from clew.clock import Clock, utcnow
from clew.conversations import Conversations
from clew.errors import ValidationError
from clew.facade import Settings, forward
from clew.governor import Governor
from clew.ids import new_id
from clew.keys import Keys
from clew.models import (
    CLOSED_TASK_STATUSES,
    Event,
    Message,
    MessageRole,
    MessageType,
    PlanItem,
    PlanOp,
    Redaction,
    StepStatus,
    Task,
    TaskStatus,
    VerifyReport,
)
from clew.recollection import Recollection
from clew.redaction import Found
from clew.retrieval import Retrieval
from clew.roles import Roles
from clew.semantic import Semantic
from clew.sessions import Sessions
from clew.store import Store
from clew.taskrecord import TaskRecords, step_changes
from clew.trace import Ledger
from clew.transfer import Transfer
from clew.upkeep import Upkeep
from clew.vectors import Vectors
from clew.waits import Waits
from clew.watch import Watch
from clew.working import Working

# Events that change a task's row or plan in ways update_task does not model itself.
_REWRITES = frozenset({"task.created", "task.archived", "plan.revised"})


class Memory(Upkeep, Transfer):
    """A task memory over one store, in one space. Open it with `clew.open()`.

    The methods live in mixins by subject: tasks, plans and messages here; archive
    entries, search and error fingerprints in `archive.py`; the command ledger and the
    episodic trace in `trace.py`; patterns and guardrails in `semantic.py`; the layer-1
    state and "where was I?" in `working.py`; queued jobs in `jobs.py` (the worker in
    `worker.py`), the model's caps in `governor.py` and its extraction and summaries in
    `utility.py`; sessions and turns in `sessions.py`, recall in `recollection.py` and
    a session's context assembly and resume in `conversations.py`;
    smart waits in `waits.py`; maintenance and archived tasks by month in `upkeep.py`;
    `assemble` (a session's prompt, or a task's context without one) in `assembly.py`;
    export, import and push of the journal in `transfer.py`;
    checkpoints of the journal's heads, written and checked, in `checkpoints.py`;
    the HTTP server's keys and request log in `keys.py`;
    a PostgreSQL store's database roles in `roles.py`;
    the vector index (embeddings, `nearest`) in `vectors.py`;
    search over everything (the archive's words and the vectors' meaning) in `retrieval.py`;
    the complete task record (answer, outcome, phases, entities...) in `taskrecord.py`;
    the shared plumbing (transactions, ids, correlation) in `facade.py`.
    """

    def __init__(
        self, store: Store, *, clock: Clock = utcnow, settings: Settings | None = None
    ) -> None:
        super().__init__(store, clock=clock, settings=settings)
        # The services composed so far (issue 26: the mixins become services one by one);
        # each is handed the kernel and the services it uses.
        self.keys = Keys(self)
        self.roles = Roles(self)
        self.checkpoints = Checkpoints(self)
        self.archive = Archive(self)
        self.vectors = Vectors(self)
        self.retrieval = Retrieval(self, self.archive, self.vectors)
        self.ledger = Ledger(self)
        self.governor = Governor(self)
        self.semantic = Semantic(self)
        self.sessions = Sessions(self)
        self.capture = Capture(self, self.sessions)
        self.recollection = Recollection(self, self.sessions, self.archive, self.retrieval)
        self.task_records = TaskRecords(self)
        self.watch = Watch(self)
        self.waits = Waits(self)
        self.working = Working(self, self.task_records, self.watch)
        self.conversations = Conversations(self, self.sessions, self.working)
        self.assembly = Assembly(self, self.conversations, self.retrieval)

    # -- the services' calls, forwarded: Memory's flat API (tests/test_services.py keeps
    # this list equal to the services' public methods) ------------------------------------

    create_key = forward("keys", Keys.create_key)
    list_keys = forward("keys", Keys.list_keys)
    revoke_key = forward("keys", Keys.revoke_key)
    has_keys = forward("keys", Keys.has_keys)
    authenticate = forward("keys", Keys.authenticate)
    log_requests = forward("keys", Keys.log_requests)
    list_requests = forward("keys", Keys.list_requests)
    prune_requests = forward("keys", Keys.prune_requests)
    grant_role = forward("roles", Roles.grant_role)
    revoke_role = forward("roles", Roles.revoke_role)
    database_roles = forward("roles", Roles.database_roles)
    checkpoint = forward("checkpoints", Checkpoints.checkpoint)
    check_checkpoints = forward("checkpoints", Checkpoints.check_checkpoints)
    add_entry = forward("archive", Archive.add_entry)
    add_decision = forward("archive", Archive.add_decision)
    add_error = forward("archive", Archive.add_error)
    add_finding = forward("archive", Archive.add_finding)
    add_constraint = forward("archive", Archive.add_constraint)
    add_question = forward("archive", Archive.add_question)
    resolve = forward("archive", Archive.resolve)
    keep_open = forward("archive", Archive.keep_open)
    record_fix = forward("archive", Archive.record_fix)
    get_entry = forward("archive", Archive.get_entry)
    list_entries = forward("archive", Archive.list_entries)
    query_relevant = forward("archive", Archive.query_relevant)
    search = forward("archive", Archive.search)
    index_status = forward("vectors", Vectors.index_status)
    update_index = forward("vectors", Vectors.update_index)
    rebuild_index = forward("vectors", Vectors.rebuild_index)
    nearest = forward("vectors", Vectors.nearest)
    prepare_nearest = forward("vectors", Vectors.prepare_nearest)
    ann_status = forward("vectors", Vectors.ann_status)
    search_all = forward("retrieval", Retrieval.search_all)
    seen_before = forward("retrieval", Retrieval.seen_before)
    record_action = forward("ledger", Ledger.record_action)
    finish_action = forward("ledger", Ledger.finish_action)
    get_action = forward("ledger", Ledger.get_action)
    list_actions = forward("ledger", Ledger.list_actions)
    log_action = forward("ledger", Ledger.log_action)
    list_action_logs = forward("ledger", Ledger.list_action_logs)
    trace_decision = forward("ledger", Ledger.trace_decision)
    trace_validation = forward("ledger", Ledger.trace_validation)
    record_tool_call = forward("ledger", Ledger.record_tool_call)
    trace = forward("ledger", Ledger.trace)
    commands = forward("ledger", Ledger.commands)
    last_green = forward("ledger", Ledger.last_green)
    repeated_failures = forward("ledger", Ledger.repeated_failures)
    history = forward("ledger", Ledger.history)
    usage = forward("governor", Governor.usage)
    add_pattern = forward("semantic", Semantic.add_pattern)
    observe_pattern = forward("semantic", Semantic.observe_pattern)
    list_patterns = forward("semantic", Semantic.list_patterns)
    prune_patterns = forward("semantic", Semantic.prune_patterns)
    add_guardrail = forward("semantic", Semantic.add_guardrail)
    add_default_guardrails = forward("semantic", Semantic.add_default_guardrails)
    set_guardrail = forward("semantic", Semantic.set_guardrail)
    list_guardrails = forward("semantic", Semantic.list_guardrails)
    check_command = forward("semantic", Semantic.check_command)
    guardrails_text = forward("semantic", Semantic.guardrails_text)
    start_session = forward("sessions", Sessions.start_session)
    open_session = forward("sessions", Sessions.open_session)
    get_session = forward("sessions", Sessions.get_session)
    list_sessions = forward("sessions", Sessions.list_sessions)
    update_session = forward("sessions", Sessions.update_session)
    end_session = forward("sessions", Sessions.end_session)
    append_turn = forward("sessions", Sessions.append_turn)
    append_turns = forward("sessions", Sessions.append_turns)
    list_turns = forward("sessions", Sessions.list_turns)
    pop_turn = forward("sessions", Sessions.pop_turn)
    clear_session = forward("sessions", Sessions.clear_session)
    session_state = forward("sessions", Sessions.session_state)
    import_session = forward("sessions", Sessions.import_session)
    export_session = forward("sessions", Sessions.export_session)
    write_session = forward("sessions", Sessions.write_session)
    capture_transcript = forward("capture", Capture.capture_transcript)
    recall = forward("recollection", Recollection.recall)
    recall_hint = forward("recollection", Recollection.recall_hint)
    set_task_record = forward("task_records", TaskRecords.set_task_record)
    set_step_record = forward("task_records", TaskRecords.set_step_record)
    task_record = forward("task_records", TaskRecords.task_record)
    waiting = forward("watch", Watch.waiting)
    stuck = forward("watch", Watch.stuck)
    check_stuck = forward("watch", Watch.check_stuck)
    add_wait = forward("waits", Waits.add_wait)
    get_wait = forward("waits", Waits.get_wait)
    list_waits = forward("waits", Waits.list_waits)
    check_waits = forward("waits", Waits.check_waits)
    resolve_wait = forward("waits", Waits.resolve_wait)
    cancel_wait = forward("waits", Waits.cancel_wait)
    record_files = forward("working", Working.record_files)
    file_changes = forward("working", Working.file_changes)
    snapshot = forward("working", Working.snapshot)
    state = forward("working", Working.state)
    where = forward("working", Working.where)
    workspace_tasks = forward("working", Working.workspace_tasks)
    prime = forward("working", Working.prime)
    assemble_context = forward("conversations", Conversations.assemble_context)
    resume = forward("conversations", Conversations.resume)
    assemble = forward("assembly", Assembly.assemble)

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
        facts = record.task_changes(
            answer=answer, outcome=outcome, error=error, confidence_score=confidence,
            domain=domain, priority=priority, estimate_value=estimate, entity_map=entities,
        )  # fmt: skip
        step_facts = step_changes(step_agent, step_outcome, step_artifacts)
        step_fields = (
            step_status, step_summary, active_issue, step_agent, step_outcome, step_artifacts,
            depends_on,
        )  # fmt: skip
        if step is None and any(f is not None for f in step_fields):
            raise ValidationError("say which step to change: give step (a number or a step id)")
        if step is not None and all(f is None for f in step_fields):
            step_status = StepStatus.ACTIVE  # a step alone: "I am now working on step N"
        fields = (
            ("name", name),
            ("goal", goal),
            ("workspace", workspace),
            ("next_objective", next_objective),
            ("summary", summary),
        )
        changes: dict[str, Any] = {k: v for k, v in fields if v is not None}
        recorded = facts or error_step is not None
        if (
            message is None
            and step is None
            and status is None
            and not changes
            and not metadata
            and not recorded
        ):
            raise ValidationError(
                "nothing to update: give a message, a step change, a status or a field"
            )
        if "name" in changes:
            changes["name"] = checks.name(changes["name"], "task name")
        for key in ("goal", "workspace", "next_objective", "summary"):
            if key in changes:
                changes[key] = checks.text(changes[key], key, max_chars=checks.MAX_TEXT_CHARS)
        new_status = checks.choice(status, TaskStatus, "task status") if status else None
        kind = None
        if message is not None:
            message = checks.text(message, "message")
            kind = message_type or (MessageType.PROGRESS if step is not None else MessageType.TEXT)
        nested = self._in_call()
        with self._write() as at:
            with self._known_task(tid):
                task = self._store.get_task(tid)
            if metadata:
                changes["metadata"] = {**task.metadata, **checks.json_object(metadata, "metadata")}
            if new_status is not None and new_status is not task.status:
                tasks.check_transition(task, new_status)
            if step is not None and (new_status is None or new_status is task.status):
                tasks.check_open(task.status, tid)
            # The step this call changes itself is not also inferred from its message.
            explicit = tasks.find_step(task.plan, step, tid).id if step is not None else None
            applied: list[str] = []  # steps the message completed (stated progress)
            if message is not None and kind is not None:
                self._add_message(
                    tid, message, role, kind, at, exclude=explicit, task=task, applied=applied
                )
            steps: dict[str, PlanItem] = {}
            if step is not None:
                step_id = self.task_records._change_step(
                    task, step, at, status=step_status, summary=step_summary, issue=active_issue,
                    depends_on=depends_on, written=steps,
                )  # fmt: skip
                self.task_records._set_step_record(task, step_id, step_facts, at)
            if recorded:
                self.task_records._set_record(task, facts, at, error_step=error_step)
            if changes:
                self._emit("task.updated", tid, {"task_id": tid, "changes": changes}, at)
            if new_status is not None and new_status is not task.status:
                data = {"task_id": tid, "from": task.status.value, "to": new_status.value}
                self._emit("task.status_changed", tid, data, at)
            if nested or metadata:  # an outer call's writes, or JSON: read it back whole
                return self._store.get_task(tid)
            return self._as_written(task, at, changes, new_status, steps, bool(applied))

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
        written = self._written(task.id)
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
            step_id = self.task_records._change_step(
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
            done = self.watch._apply_progress(
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

    # -- the journal ----------------------------------------------------------------------

    def journal(
        self,
        *,
        task_id: str | None = None,
        after: int = 0,
        limit: int | None = None,
        types: Sequence[str] = (),
        newest: bool = False,
    ) -> list[Event]:
        """Return journal events in commit order, for the space or one task, of some types
        or all; with `newest`, the newest `limit` of them (a tail read: cheap on a long
        journal), still oldest first."""
        after = checks.integer(after, "after")
        limit = checks.optional_count(limit, "limit")
        if isinstance(types, str) or not all(isinstance(t, str) for t in types):
            raise ValidationError("types is a list of event types, e.g. ['plan.revised']")
        tid = self._task_id(task_id) if task_id is not None else None
        return self._store.list_events(
            task_id=tid, after=after, limit=limit, types=tuple(types), newest=bool(newest)
        )

    def redactions(
        self,
        *,
        task_id: str | None = None,
        session: str | None = None,
        kind: str | None = None,
        limit: int | None = None,
    ) -> list[Redaction]:
        """Where redaction took secrets out of what was stored, the newest first: each
        event's field, the kind and how many (never the value); of one task, one session
        (its id, a prefix or its key) or one kind when given."""
        limit = checks.optional_count(limit, "limit")
        tid = None if task_id is None else self._task_id(task_id)
        sid = None if session is None else self.sessions.get_session(session).id
        if kind is not None:
            kind = checks.name(kind, "kind")
        return self._store.list_redactions(task_id=tid, session_id=sid, kind=kind, limit=limit)

    def journal_head(self) -> int:
        """Return the space's newest event seq, or 0 (cheap: a follower polls it)."""
        return self._store.journal_head()

    def verify(
        self,
        *,
        all_spaces: bool = False,
        checkpoint: str | os.PathLike[str] | Iterable[str] | None = None,
    ) -> VerifyReport:
        """Check the space's journal chain, rebuild its rows from its journal and report any
        difference (every space in the file with `all_spaces`); with `checkpoint` (a file
        of checkpoint lines, or the lines), also whether the store is behind or diverges
        from any of them (`check_checkpoints`): the report is then ok only if neither."""
        checked = None
        if checkpoint is not None:  # first: a missing file or key is said before the long part
            checked = self.check_checkpoints(checkpoint, all_spaces=all_spaces)
        report = self._store.verify(all_spaces=all_spaces)
        return report if checked is None else report._replace(checkpoints=checked)
