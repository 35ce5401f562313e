"""Layer 1, a service of the Memory facade: the state that is always in the prompt, "where was I?",
workspace changes, the session-start primer, and the file mirrors.

Reads gather a snapshot in one read transaction and hand it to the pure renderers
(`state.render_state`, `brief.build_brief`); budgets are counted by `tokens.counter()`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from clew.archive.semantic import guardrail_lines
from clew.core import checks
from clew.core.lifecycle import Waiting, WaitStatus
from clew.core.location import is_url, kept_path, real_path, related
from clew.core.text import clip, counted
from clew.core.tokens import counter
from clew.errors import ValidationError
from clew.kernel import Committed, Kernel, Service, after_commit
from clew.models import (
    ActionStatus,
    EntryFilter,
    EntryStatus,
    EntryType,
    Event,
    FileChanges,
    Task,
    TaskStatus,
)
from clew.state.brief import (
    INFERENCE_MESSAGES,
    OPEN_ERRORS_NAMED,
    OPEN_ERRORS_SHOWN,
    Brief,
    build_brief,
)
from clew.state.document import OPEN_NAMED, SHOWN, STATE_TYPES, Snapshot, State, render_state
from clew.tasks.rules import captured_from
from clew.tasks.stuck import ACTIONS_READ
from clew.tasks.taskrecord import TaskRecords
from clew.tasks.watch import Watch

if TYPE_CHECKING:
    from clew.state.mirror import Mirror

BRIEF_ACTIONS = 20
PRIME_TASKS = 3


class Primer(NamedTuple):
    """What a session-start or after-compaction hook injects: states and briefs."""

    text: str
    task_ids: tuple[str, ...]
    more: int  # matching active tasks left out


class Working(Service):
    """Layer 1 (a service of Memory): the task state, "where was I?", the primer, the files
    a task changed, and the files mirror beside the store, rewritten after each write."""

    def __init__(self, kernel: Kernel, task_records: TaskRecords, watch: Watch) -> None:
        super().__init__(kernel)
        self.task_records = task_records
        self.watch = watch
        self._mirror = _mirror_beside(kernel.path) if kernel.settings.mirror else None

    def record_files(
        self, task_id: str, *, created: Sequence[str] = (), modified: Sequence[str] = ()
    ) -> FileChanges:
        """Record files the task created or modified in its workspace."""
        tid = self._task_id(task_id)
        made = checks.strings(created, "created files")
        changed = checks.strings(modified, "modified files")
        if not made and not changed:
            raise ValidationError("give at least one created or modified file")
        files = [{"path": p, "change": "created"} for p in made]
        files += [{"path": p, "change": "modified"} for p in changed if p not in made]
        with self._write() as at:
            self._store.get_task_status(tid)
            self._emit("task.files_changed", tid, {"files": files}, at)
        return self._store.file_changes(tid)

    def file_changes(self, task_id: str, *, newest: int | None = 20) -> FileChanges:
        """Return what the task changed in its workspace, with the newest paths (None: all)."""
        return self._store.file_changes(self._task_id(task_id), newest=newest)

    def snapshot(self, task_id: str) -> Snapshot:
        """Read everything the state render needs, consistently."""
        tid = self._whole_task_id(task_id)
        with self._store.transaction():
            with self._known_task(tid):
                task = self._store.get_task(tid)
            entries = self._store.newest_entries(tid, STATE_TYPES, max(SHOWN.values()))
            replaced = [
                e.supersedes
                for e in entries.get((EntryType.DECISION, EntryStatus.ACTIVE), ())
                if e.supersedes
            ]
            return Snapshot(
                task=task,
                entries=entries,
                counts=self._store.count_entries(tid),
                files=self._store.file_changes(tid),
                stuck=self.watch._stuck_now(task),
                waits=self._waiting(tid),
                record=self.task_records._record_of(task),
                previous={i: self._store.get_entry(i).summary for i in replaced},
                open_errors=self._store.list_entries(
                    EntryFilter(tid, (EntryType.ERROR,), (EntryStatus.ACTIVE,)),
                    limit=SHOWN[EntryType.ERROR] + OPEN_NAMED,
                ),
            )

    def _waiting(self, tid: str) -> list[Waiting]:
        """A task's open waits, for the state: smart waits and wait actions still started."""
        found = [
            Waiting(w.id, w.label, w.created_at, w.seen or w.observation)
            for w in self._store.list_waits(task_id=tid, statuses=(WaitStatus.WATCHING,))
        ]
        actions = self._store.open_wait_actions(tid)
        found += [Waiting(a.id, a.summary, a.created_at) for a in actions]
        return found

    def state(self, task_id: str, *, budget: int | None = None) -> State:
        """Render the task's always-in-prompt state as YAML within `budget` tokens."""
        limit = self._kernel.state_budget if budget is None else checks.budget(budget)
        return render_state(self.snapshot(task_id), limit, counter())

    def where(self, task_id: str) -> Brief:
        """Answer "where was I?" for a task: deterministic, at most 300 tokens."""
        tid = self._whole_task_id(task_id)
        with self._store.transaction():
            with self._known_task(tid):
                task = self._store.get_task(tid)
            messages = self._store.list_messages(tid, limit=INFERENCE_MESSAGES)
            # The newest actions without their output, read once for the brief and stuck
            # detection; the output (up to megabytes a command) only if the brief quotes a
            # failure's last line, below.
            recent = self._store.recent_actions(tid, limit=max(ACTIONS_READ, BRIEF_ACTIONS))
            actions = recent[:BRIEF_ACTIONS]
            # Every open error is named in the brief: the newest quoted, the next ones by id.
            errors = self._store.list_entries(
                EntryFilter(tid, (EntryType.ERROR,), (EntryStatus.ACTIVE,)),
                limit=OPEN_ERRORS_SHOWN + OPEN_ERRORS_NAMED,
            )
            open_count = len(errors)
            if open_count == OPEN_ERRORS_SHOWN + OPEN_ERRORS_NAMED:
                open_count = self._store.count_entries(tid).get(
                    (EntryType.ERROR, EntryStatus.ACTIVE), open_count
                )
            decisions = self._store.list_entries(
                EntryFilter(tid, (EntryType.DECISION,), (EntryStatus.ACTIVE,)), limit=3
            )
            stuck = self.watch._stuck_now(task, messages, recent)  # both read once
            watching = self._store.list_waits(task_id=tid, statuses=(WaitStatus.WATCHING,))
            newest = self._store.list_waits(task_id=tid, limit=3)  # maybe ended: news
            waits = list({w.id: w for w in watching + newest}.values())
            # A failed command an error entry stands for is shown as that entry, once; one
            # that none stands for is quoted with its output's last line.
            # The older runs read for stuck detection (without output) say which error a
            # shown failure's command already has, when its recorded run is just older.
            recorded = self._store.linked_actions(
                [a.id for a in recent if a.status is ActionStatus.FAILED]
            )
            if any(a.status is ActionStatus.FAILED and a.id not in recorded for a in actions):
                actions = self._store.list_actions(tid, limit=BRIEF_ACTIONS)
            # Wait actions still started, however many actions came after them.
            seen = {a.id for a in actions}
            earlier = [a for a in recent if a.id not in seen]
            actions += [a for a in self._store.open_wait_actions(tid) if a.id not in seen]
            record = self.task_records._record_of(task)
        return build_brief(
            task,
            messages,
            actions,
            self._clock(),
            open_errors=errors,
            open_count=open_count,
            decisions=decisions,
            recorded_failures=recorded,
            earlier=earlier,
            counter=counter(),
            stuck=stuck,
            suggest=self.settings.progress != "off",
            applied=self.settings.progress == "apply",
            waits=waits,
            record=record,
        )

    def workspace_tasks(self, workspace: str | None = None) -> list[Task]:
        """Active tasks of a workspace: those whose workspace holds it or lies within it,
        most recently updated first; if none has one, the active tasks with no workspace.
        The tasks the agent recorded come before those kept from its transcript's lists."""
        here = real_path(workspace or os.getcwd())
        active = self._store.list_tasks((TaskStatus.ACTIVE,))
        matched = [t for t in active if (kept := kept_path(t.workspace)) and related(kept, here)]
        found = matched or [t for t in active if not t.workspace]
        # What the agent recorded outranks what clew kept for it (a stable sort).
        return sorted(found, key=lambda t: captured_from(t) is not None)

    def _paused_here(self, workspace: str | None) -> list[Task]:
        here = real_path(workspace or os.getcwd())
        paused = self._store.list_tasks((TaskStatus.PAUSED,))
        return [t for t in paused if (kept := kept_path(t.workspace)) and related(kept, here)]

    def prime(
        self,
        workspace: str | None = None,
        *,
        budget: int | None = None,
        limit: int = PRIME_TASKS,
        session: str | None = None,
    ) -> Primer:
        """The state and brief of a workspace's active tasks, with the enabled guardrails, for
        an assistant's session-start and after-compaction hooks. `session` (an id or key):
        the session starting or resumed, whose own task (its kept list) comes back even if
        maintenance paused it while the session was away."""
        limit = checks.integer(limit, "limit")
        if limit < 1:
            raise ValidationError("limit must be at least 1")
        self._kernel._opened("prime")
        found = self.workspace_tasks(workspace)
        if session is not None:
            found = self._with_session_task(found, session)
        shown = found[:limit]
        parts = []
        for task in shown:
            state = self.state(task.id, budget=budget)
            brief = self.where(task.id)
            tool = captured_from(task)
            if tool is not None:  # the agent's own list, which it may have lost: give it back
                parts.append(self._kept_list(task, tool, budget))
            parts.append(
                f'<clew-task-state task="{task.id}" tokens="{state.tokens}">\n{state.text}'
                f'</clew-task-state>\n<clew-where-was-i task="{task.id}">\n{brief.text}\n'
                "</clew-where-was-i>"
            )
        if not shown:
            head = (
                "clew: no active task for this workspace. Register long work with"
                " `clew task new NAME --plan STEP ...` (or the task_register tool)."
            )
            paused = self._paused_here(workspace)
            if paused:  # maintenance pauses idle tasks: say how to pick one up again
                names = ", ".join(f"{t.id} '{clip(t.name, 40)}'" for t in paused[:3])
                head += f" Paused here: {names}; resume with `clew task update ID --status active`."
        else:
            more = (
                f"; {len(found) - len(shown)} more: `clew task list`" if len(found) > limit else ""
            )
            head = (
                f"clew: {counted(len(found), 'active task')} for this workspace{more}."
                " Keep them current"
                " with `clew task update ID` (or task_update); this state survives compaction."
            )
        rules = self._store.list_guardrails(enabled_only=True)
        if rules:
            parts.insert(0, f"<clew-guardrails>\n{guardrail_lines(rules)}\n</clew-guardrails>")
        text = "\n".join([head, *parts]) + "\n"
        return Primer(text, tuple(t.id for t in shown), max(0, len(found) - limit))

    def _kept_list(self, task: Task, tool: str, budget: int | None) -> str:
        """A task kept from the agent's own list, as that list: every step with its mark
        (within the state's budget), after the line that says how to write it back."""
        from clew.state.checklist import render_checklist  # only a kept list's prime uses it

        limit = self._kernel.state_budget if budget is None else checks.budget(budget)
        listed = render_checklist(task, limit, counter())
        return (
            f'{_restore_note(tool)}\n<clew-agent-list task="{task.id}" tool="{tool}"'
            f' tokens="{listed.tokens}">\n{listed.text}\n</clew-agent-list>'
        )

    def _with_session_task(self, found: list[Task], session: str) -> list[Task]:
        """The workspace's tasks with the task a session is linked to, if it is open (active,
        or paused by maintenance), first of the lists kept from transcripts (the agent's own
        tasks still come before it)."""
        held = self._store.find_session(checks.text(session, "session"))
        if held is None or held.task_id is None:
            return found
        task = self._store.get_task(held.task_id)
        if task.status not in (TaskStatus.ACTIVE, TaskStatus.PAUSED) or task.archived:
            return found
        others = [t for t in found if t.id != task.id]
        own = [t for t in others if captured_from(t) is None]
        if captured_from(task) is None:
            return [task, *others]
        return [*own, task, *[t for t in others if captured_from(t) is not None]]

    @after_commit(10)
    def _refresh_mirrors(self, done: Committed) -> None:
        """After a call that wrote tasks: rewrite their mirrored files (when mirroring)."""
        for task_id in done.tasks:
            self._rewrite_mirror(task_id)

    def _rewrite_mirror(self, task_id: str, *, whole: bool = False) -> None:
        """Rewrite a task's mirrored files (when mirroring): its state, and its events after
        those already written (`whole`: all of them again, as after a forget)."""
        if self._mirror is not None:
            mirror = self._mirror
            mirror.write(task_id, lambda after: self._mirror_content(task_id, after), whole=whole)

    def _mirror_content(self, task_id: str, after: int) -> tuple[str, list[Event]]:
        return self.state(task_id).text, self._store.list_events(task_id=task_id, after=after)


def _restore_note(tool: str) -> str:
    """The line before a task kept from the agent's own list: it is the agent's list, which
    compaction, /clear or a resume emptied; how to write it back."""
    calls = "TaskCreate and TaskUpdate" if tool == "TaskCreate" else tool
    return (
        f"clew kept your own task list from your {calls} calls. If your list is empty after"
        f" a compaction, /clear or resume, write it back with {calls} as it stands here"
        " ([x] completed, [>] in progress, [ ] pending)."
    )


def _mirror_beside(path: str) -> Mirror | None:
    """The files mirror beside a store's file; a `:memory:` or team store (a URL) has none."""
    if path == ":memory:" or is_url(path):
        return None
    from clew.state.mirror import Mirror  # lazily: only a mirrored store's open pays for it

    return Mirror.beside(path)
