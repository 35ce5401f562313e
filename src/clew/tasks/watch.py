"""Watching a task as it runs, a service of the Memory facade: stuck detection with rate-limited
alerts, and progress read from messages (stated steps applied by default, the rest
suggested).

Detection is pure (`stuck.detect`, `progress.infer`); this service reads what it needs and
journals what it decides. A stuck alert is a system message of type `stuck` plus a
`task.stuck_alerted` event carrying the conditions; the newest `stuck` message is the
cooldown's clock, so alerts are derived from rows like everything else. An inferred step
completion is a `step.updated` event with `inferred: true` and the id of the message that
said it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from clew.core.ids import new_id
from clew.kernel import Service, reacts
from clew.models import (
    CLOSED_TASK_STATUSES,
    Message,
    MessageType,
    StepStatus,
    Task,
    TaskStatus,
)
from clew.tasks import progress
from clew.tasks.rules import step_timing
from clew.tasks.stuck import (
    ACTIONS_READ,
    NO_PROGRESS,
    REPEATED_FAILURE,
    Run,
    Stuck,
    alert_due,
    alert_text,
    cannot_be_stuck,
    detect,
    failure_advice,
)

MESSAGES_READ = 10  # the newest messages stuck detection reads (alerts are skipped)


class StuckReport(NamedTuple):
    """A stuck task: why, and whether this call posted an alert about it."""

    task_id: str
    name: str
    conditions: tuple[Stuck, ...]
    alerted: bool  # an alert was posted now
    last_alert: str | None  # when the newest alert was posted (now, if alerted)


class Watch(Service):
    """Stuck detection and progress inference (a service of Memory): layer 1 reads
    `_stuck_now`, the tracker applies a message's stated progress with `_apply_progress`."""

    # -- stuck detection ------------------------------------------------------------------

    def waiting(self, task_id: str) -> bool:
        """Whether the task is waiting on something (an open wait), and so not stuck for
        want of progress."""
        return self._store.open_waits(task_id) > 0

    def stuck(self, task_id: str) -> tuple[Stuck, ...]:
        """Why a task is stuck now (empty when it is not): no progress for a while, or the
        same failing command again and again; each with its evidence and a suggestion."""
        tid = self._task_id(task_id)
        with self._store.transaction():
            return self._stuck_now(self._store.get_task(tid))

    def check_stuck(self, task_id: str | None = None, *, alert: bool = True) -> list[StuckReport]:
        """Find the stuck active tasks (one, or all of the space) and, with `alert`, post an
        alert to each whose last alert is older than the cooldown (see `[stuck]`)."""
        if task_id is not None:
            tasks = [self._store.get_task(self._task_id(task_id))]
        else:
            tasks = self._store.list_tasks((TaskStatus.ACTIVE,))
        reports = []
        for task in tasks:
            with self._store.transaction():
                report = self._check_one(task, None)
            due = report is not None and alert_due(
                report.last_alert, self._clock(), self.settings.stuck
            )
            if due and alert and not self.read_only:
                with self._write() as at:  # checked again under the write lock
                    report = self._check_one(self._store.get_task(task.id), at)
            if report is not None:
                reports.append(report)
        return reports

    def _check_one(
        self, task: Task, at: str | None, newest_actions: Sequence[Run] | None = None
    ) -> StuckReport | None:
        """Inside a transaction: the task's stuck report, alerting if `at` is given and due
        (`newest_actions`: as `_stuck_now` takes them)."""
        conditions = self._stuck_now(task, None, newest_actions)
        if not conditions:
            return None
        last = self._store.last_message_at(task.id, MessageType.STUCK.value)
        alerted = False
        if at is not None and alert_due(last, self._clock(), self.settings.stuck):
            self._post_alert(task.id, conditions, at)
            alerted, last = True, at
        return StuckReport(task.id, task.name, conditions, alerted, last)

    def _stuck_now(
        self,
        task: Task,
        newest_messages: Sequence[Message] | None = None,
        newest_actions: Sequence[Run] | None = None,
    ) -> tuple[Stuck, ...]:
        """Inside a transaction: why an active task is stuck now. A caller that has read
        the task's newest messages (newest first, at least MESSAGES_READ) or its newest
        actions (`recent_actions` or `recent_attempts`, at least ACTIONS_READ) passes them,
        so they are not read twice; else the actions are read as the few fields the checks
        use, and the messages only if the task looks idle without them."""
        rules = self.settings.stuck
        if not rules.enabled or task.status is not TaskStatus.ACTIVE:
            return ()
        actions: Sequence[Run] = (
            self._store.recent_attempts(task.id, limit=ACTIONS_READ)
            if newest_actions is None
            else newest_actions[:ACTIONS_READ]
        )
        messages = () if newest_messages is None else newest_messages[:MESSAGES_READ]
        now = self._clock()
        found = detect(task, messages, actions, now, rules)
        if newest_messages is None and any(c.reason == NO_PROGRESS for c in found):
            # Messages only move the last progress later, and the repeated failure does not
            # read them: a task that moved (a step, a completed action) within the idle
            # time is not idle, and its messages are not read (a failed command's write).
            messages = self._store.list_messages(task.id, limit=MESSAGES_READ)
            found = detect(task, messages, actions, now, rules)
        if any(c.reason == NO_PROGRESS for c in found):
            # Only a task that looks idle pays for these reads (the waits are counted over
            # all its actions): a waiting task is not idle, and a resumed task's clock
            # starts again when it was made active.
            resumed = self._store.last_event_at(task.id, "task.status_changed")
            waiting = self.waiting(task.id)
            found = detect(task, messages, actions, now, rules, waiting=waiting, resumed_at=resumed)
        return tuple(self._with_known_fix(self._on_its_stream(c)) for c in found)

    def _on_its_stream(self, condition: Stuck) -> Stuck:
        """A repeated failure's advice names the stream its output was saved to: `make` and
        many test runners write their error to stdout, and a command's output may be kept
        as one stream (`2>&1`). One action read, only for a task stuck on a failure."""
        if condition.reason != REPEATED_FAILURE or condition.action_id is None:
            return condition
        action = self._store.get_action(condition.action_id)
        if _holds_text(action.stderr) or not _holds_text(action.stdout):
            return condition
        return condition._replace(suggestion=failure_advice(condition.action_id, "stdout"))

    def _with_known_fix(self, condition: Stuck) -> Stuck:
        """A repeated failure whose error was fixed before says what worked."""
        if condition.fingerprint is None:
            return condition
        worked = [f for f in self._store.fixes_for(condition.fingerprint) if f.worked]
        if not worked:
            return condition
        newest = max(worked, key=lambda f: f.created_at)
        text = " ".join(newest.description.split())
        text = text if len(text) <= 160 else text[:159] + "…"
        return condition._replace(
            suggestion=f"this error was fixed before by: {text} (more: `clew seen`)"
        )

    def _post_alert(self, task_id: str, conditions: tuple[Stuck, ...], at: str) -> None:
        message = {
            "id": new_id(),
            "role": "system",
            "type": MessageType.STUCK.value,
            "content": alert_text(conditions),
        }
        self._emit("message.added", task_id, {"message": message}, at)
        data = {
            "task_id": task_id,
            "message_id": message["id"],
            "conditions": [c._asdict() for c in conditions],
        }
        self._emit("task.stuck_alerted", task_id, data, at)

    @reacts("action.recorded")
    def _alert_if_stuck(self, task_id: str, failed: bool, at: str) -> None:
        """Raised by the ledger inside the write that records (or finishes) an action: a
        failure may make the task stuck, and the alert goes out at once (cooldown allowing)."""
        rules = self.settings.stuck
        if not failed or not rules.enabled:
            return
        # The actions first: a task that completed one lately and has no repeated error is
        # not stuck, and its task and messages are not read.
        attempts = self._store.recent_attempts(task_id, limit=ACTIONS_READ)
        if cannot_be_stuck(attempts, self._clock(), rules):
            return
        self._check_one(self._store.get_task(task_id), at, attempts)

    # -- progress from messages -----------------------------------------------------------

    def _apply_progress(
        self,
        task_id: str,
        message_id: str,
        content: str,
        at: str,
        *,
        exclude: str | None,
        task: Task | None = None,
    ) -> list[str]:
        """Inside a write, after a message: with `progress = "apply"` (the default), complete
        the steps it states are done (by number or exact title); return their ids. Applied
        once, when the message is written: a status the agent sets later stands."""
        if self.settings.progress != "apply" or not progress.may_say_done(content):
            return []  # most messages say nothing is done: the task is not read for them
        if task is None:
            task = self._store.get_task(task_id)
        if task.status in CLOSED_TASK_STATUSES:
            return []
        done = []
        for step, hit in progress.to_apply(task.plan, content, exclude=exclude):
            data: dict[str, Any] = {
                "task_id": task_id,
                "step_id": step.id,
                "changes": {"status": StepStatus.COMPLETED.value},
                "timing": step_timing(step, StepStatus.COMPLETED, at),
                "inferred": True,
                "message_id": message_id,
                "how": hit.how,
                "said": hit.clause[:200],
            }
            self._emit("step.updated", task_id, data, at)
            self._signal("step.finished", task_id, step.id, StepStatus.COMPLETED, at)
            done.append(step.id)
        return done


def _holds_text(stream: str | bytes | None) -> bool:
    """Whether a command's stream holds anything but whitespace."""
    return bool(stream and stream.strip())
