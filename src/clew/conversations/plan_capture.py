"""An assistant's own list kept as a clew task: a service of the Memory facade, run by
capture in the write that archives the lines holding the list's calls.

Claude Code loses its todo list on compaction, `/clear` and resume, and Codex keeps its plan
only on screen; the transcripts keep each call that wrote the list (`agent_plans.py` folds
them). The list of a session becomes one clew task of that session's workspace, which
`clew prime --hook` puts back at the next session start or compaction and `clew where`
answers for:

- **Found again** through the session's task link (`Session.task_id`), which the first call
  sets; a session the agent linked to a task of its own keeps that link, and its list's task
  is looked for by its mark. The task is marked as kept from a transcript (metadata
  `captured_plan`: the session, the tool, and the list as it stands), and its plan's source
  is the agent's.
- **The list's changes, not its snapshots, are applied**: the plan follows the list (steps
  added, removed, moved, renamed, as one plan version per capture), and a step's status is
  written only where the list changed it since the last capture. So a step the agent changed
  through clew's own tools keeps what the agent recorded until its list says otherwise, and
  a task the agent (or its user) failed or cancelled is left alone.
- **Idempotent**: capture hands over only lines it appends, in the same write, so a line's
  calls are applied once however often the hook runs.
- The in_progress item is the active step; a list all completed completes the task, and an
  open item in a later call reopens it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from clew.conversations.sessions import Sessions
from clew.core.clock import seconds_between
from clew.kernel import Kernel, Service
from clew.models import (
    CLOSED_TASK_STATUSES,
    AddStep,
    MoveStep,
    PlanOp,
    RemoveStep,
    RenameStep,
    Session,
    StepStatus,
    Task,
    TaskStatus,
)
from clew.tasks.rules import CAPTURED_PLAN as MARK
from clew.tasks.tracker import Tracker

if TYPE_CHECKING:
    from clew.conversations.agent_plans import AgentList, Item

__all__ = ["PlanCapture"]

_STEP_STATUS = {
    "pending": StepStatus.PENDING,
    "in_progress": StepStatus.ACTIVE,
    "completed": StepStatus.COMPLETED,
}
_ASSISTANTS = {"TodoWrite": "Claude Code", "TaskCreate": "Claude Code", "update_plan": "Codex"}
_LEFT_ALONE = frozenset({TaskStatus.FAILED, TaskStatus.CANCELLED})
_STALE_AFTER = 24 * 3600  # seconds: the idle time after which maintenance pauses a task


class PlanCapture(Service):
    """Assistants' own lists kept as clew tasks (a service of Memory; capture runs it)."""

    def __init__(self, kernel: Kernel, sessions: Sessions, tracker: Tracker) -> None:
        super().__init__(kernel)
        self._sessions = sessions
        self._tracker = tracker

    def _keep_plans(
        self,
        session: Session,
        messages: Sequence[dict[str, Any]],
        said: Callable[[], str | None] = lambda: None,
    ) -> Task | None:
        """Apply the list-writing calls of messages just archived in `session` (`said`: when
        the newest was written, a store time) to the task that keeps its list (made at the
        first call); return that task, if any changed. Runs inside capture's write, in a
        savepoint of its own: a list clew cannot keep undoes only what it wrote here."""
        # lazily: `clew prime` composes this service but never reads a transcript
        from clew.conversations.agent_plans import AgentList, fold, plan_calls

        calls = [c for m in messages for c in plan_calls(m)]
        if not calls:  # most lines: nothing read, nothing written
            return None
        writes = any(c.name != "result" for c in calls)
        if not writes and session.task_id is None:
            return None  # results only, and no list kept yet: no TaskCreate waits for one
        # As the store keeps them (their secrets redacted), so an item's title compares
        # equal to the step it became, capture after capture.
        calls = [c._replace(input=self._redacted(c.input, "turn.message", {})) for c in calls]
        with self._kernel.atomic():
            task = self._kept_task(session, look=writes)
            if task is not None and task.status in _LEFT_ALONE:
                return None
            before = AgentList.from_json(task.metadata.get(MARK, {}).get("list")) if task else None
            if not writes and (before is None or not before.pending):
                return None
            after = fold(before, calls)
            if after is None or after == before:
                return None
            # A list last written long ago (an old session imported) is history: its task
            # is kept paused, as maintenance leaves an idle task, not put in the prompt.
            written = said()
            stale = written is not None and seconds_between(written, self._now()) > _STALE_AFTER
            if task is None:
                if not after.items:
                    return None
                return self._start(session, after, stale)
            return self._follow(task, before, after, stale)

    def _kept_task(self, session: Session, *, look: bool) -> Task | None:
        """The task keeping this session's list: the one the session is linked to, if it is
        kept from a list of this session; else (`look`: when the calls write the list) the
        one marked so, for a session the agent linked to a task of its own."""
        if session.task_id is None:
            return None
        task = self._store.get_task(session.task_id)
        if _session_of(task) == session.id:
            return task
        if not look:
            return None
        for other in self._store.list_tasks(()):
            if _session_of(other) == session.id:
                return self._store.get_task(other.id)
        return None

    def _start(self, session: Session, after: AgentList, stale: bool) -> Task:
        """The task for a session's first list: its plan the list's items."""
        tool = _ASSISTANTS.get(after.tool, after.tool)
        name = f"{tool} task list (session {(session.key or session.id)[:8]})"
        task = self._tracker.create_task(
            name,
            [item.title for item in after.items],
            workspace=session.workspace,
            metadata={MARK: {"session": session.id, "key": session.key, "tool": after.tool}},
            plan_source="agent",
        )
        if session.task_id is None:
            self._sessions.update_session(session.id, task_id=task.id)
        items = tuple(i._replace(step=s.id) for i, s in zip(after.items, task.plan, strict=True))
        return self._follow(task, None, after._replace(items=items), stale)

    def _follow(
        self, task: Task, before: AgentList | None, after: AgentList, stale: bool = False
    ) -> Task:
        """Make the task follow its list's change from `before` to `after`: the plan, the
        statuses the list changed, the task's status (paused if `stale`), and the list kept
        in its metadata."""
        items = list(after.items)
        opened = [i for i in items if i.status != "completed"]
        if not opened and task.status in CLOSED_TASK_STATUSES:  # done: its plan stays as it was
            return self._tracker.update_task(task.id, metadata={MARK: _kept(task, after)})
        if opened and not stale and task.status is not TaskStatus.ACTIVE:  # at work again
            task = self._tracker.update_task(task.id, status=TaskStatus.ACTIVE)
        ops = _plan_ops(task, before, items)
        if ops:
            task = self._tracker.replan(task.id, ops, reason=f"the agent's {after.tool}")
            at = {s.id for s in task.plan}
            placed = [i for i, item in enumerate(items) if item.step is None or item.step in at]
            for position, index in enumerate(placed):
                items[index] = items[index]._replace(step=task.plan[position].id)
        was = {i.step: i.status for i in before.items if i.step} if before else {}
        steps = {s.id: s for s in task.plan}
        for item in items:
            step = steps.get(item.step or "")
            wanted = _STEP_STATUS[item.status]
            if step is None or step.status is wanted or was.get(step.id) == item.status:
                continue  # not in the plan, already so, or not changed by the list
            self._tracker.update_step(task.id, step.id, status=wanted)
        kept = _kept(task, after._replace(items=tuple(items)))
        status = None
        if items and not opened and task.status is not TaskStatus.COMPLETED:
            status = TaskStatus.COMPLETED
        elif opened and stale and task.status is TaskStatus.ACTIVE:
            status = TaskStatus.PAUSED
        if after.explanation and (before is None or before.explanation != after.explanation):
            self._tracker.add_message(task.id, after.explanation)
        return self._tracker.update_task(task.id, metadata={MARK: kept}, status=status)


def _plan_ops(task: Task, before: AgentList | None, items: list[Item]) -> list[PlanOp]:
    """The replanning that makes the task's plan the list's items, in order: steps of items
    the list dropped removed, new items added, the others moved and renamed. Steps the list
    never held (the agent's own, through clew) stay, after the list's; an item whose step was
    removed through clew stays out."""
    listed = {i.step for i in items if i.step}
    dropped = {i.step for i in before.items if i.step and i.step not in listed} if before else set()
    ops: list[PlanOp] = [RemoveStep(s.id) for s in task.plan if s.id in dropped]
    drafts: list[str | None] = [s.id for s in task.plan if s.id not in dropped]
    titles = {s.id: s.title for s in task.plan}
    position = 0
    for item in items:
        if item.step is None:
            ops.append(AddStep(item.title, position + 1))
            drafts.insert(position, None)
        elif item.step in drafts:
            if drafts.index(item.step) != position:
                ops.append(MoveStep(item.step, position + 1))
                drafts.remove(item.step)
                drafts.insert(position, item.step)
            if titles[item.step] != item.title:
                ops.append(RenameStep(item.step, item.title))
        else:
            continue
        position += 1
    return ops


def _kept(task: Task, after: AgentList) -> dict[str, Any]:
    """The task's mark with the list as it now stands."""
    return {**task.metadata.get(MARK, {}), "tool": after.tool, "list": after.to_json()}


def _session_of(task: Task) -> str | None:
    mark = task.metadata.get(MARK)
    session = mark.get("session") if isinstance(mark, dict) else None
    return session if isinstance(session, str) else None
