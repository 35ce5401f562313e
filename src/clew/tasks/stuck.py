"""Stuck detection: an active task that makes no progress, or that runs the same
failing command again and again. Pure: records and the time in, conditions out.

Two conditions, each with its evidence and a suggestion:

- **no progress**: nothing moved for `StuckRules.idle_after` seconds (default 30 minutes).
  Progress is a step starting or finishing, a replan, a message (clew's own stuck alerts
  aside), a completed action, the task being created or (re)activated. A task that is
  waiting (`waiting`: an open wait) is not stuck for want of progress: waiting is what it
  should be doing.
- **repeated failure**: since the current step last changed, the same error (by its
  fingerprint, see fingerprint.py) came back from `StuckRules.repeats` failed commands
  (default 3), and no later run of that command succeeded.

The state and the brief show a task's conditions whenever they hold. An alert (a system
message of type `stuck`, posted by the facade) is rate-limited by `StuckRules.cooldown`:
`alert_due` says whether one may be posted now.
"""

from collections.abc import Sequence
from datetime import datetime
from operator import attrgetter
from typing import NamedTuple

from clew.core.clock import parse
from clew.core.lifecycle import StuckRules
from clew.models import Action, ActionStatus, Attempt, Message, MessageType, Task, TaskStatus

NO_PROGRESS = "no_progress"
REPEATED_FAILURE = "repeated_failure"
ACTIONS_READ = 50  # the newest actions the repeated-failure check reads
# What the checks read of an action: whole `Action`s where a caller has them, else the
# store's `recent_attempts` (the same fields, for a third of the cost).
Run = Action | Attempt


DEFAULT_RULES = StuckRules()


class Stuck(NamedTuple):
    """One reason a task is stuck, with what shows it and what to try."""

    reason: str  # no_progress or repeated_failure
    since: str  # when the condition began (the last progress, or the first failure)
    evidence: str  # one line, for people and models
    suggestion: str
    command: str | None = None  # repeated failure: the command line
    fingerprint: str | None = None  # repeated failure: the error's fingerprint key
    times: int = 0  # repeated failure: how many times
    action_id: str | None = None  # repeated failure: the newest failed run


def _minutes(seconds: float) -> str:
    minutes = int(seconds // 60)
    if minutes >= 2 * 60 * 24:
        return f"{minutes // (60 * 24)}d"
    if minutes >= 120:
        return f"{minutes // 60}h"
    return f"{minutes}m"


def last_progress(
    task: Task,
    messages: Sequence[Message],
    actions: Sequence[Run],
    resumed_at: str | None = None,
) -> str:
    """The time of the task's newest progress (see the module docstring)."""
    # A running maximum, not a list of every time (every `where` and `state` asks).
    latest = _step_changed(task)
    for at in (task.last_replanned_at, resumed_at):
        if at and at > latest:
            latest = at
    alert = MessageType.STUCK
    for m in messages:
        if m.type is not alert and m.created_at > latest:
            latest = m.created_at
    done = ActionStatus.COMPLETED
    for a in actions:
        if a.status is done and a.updated_at > latest:
            latest = a.updated_at
    return latest


def _step_changed(task: Task) -> str:
    """When the plan last moved: failures before it belong to earlier work."""
    latest = task.created_at
    for step in task.plan:
        started, completed = step.started_at, step.completed_at
        if started and started > latest:
            latest = started
        if completed and completed > latest:
            latest = completed
    return latest


_CREATED = attrgetter("created_at")  # a key in C, not a lambda called per action


def repeated_failure(task: Task, actions: Sequence[Run], repeats: int) -> Stuck | None:
    """The error that came back most often since the plan last moved, if it came back at
    least `repeats` times and no later run of its command succeeded."""
    since = _step_changed(task)
    recent = sorted([a for a in actions if a.created_at >= since], key=_CREATED)
    runs: dict[str, list[Run]] = {}
    # The newest success of each command (or summary): a failure is fixed by a success of
    # its command at or after it. One pass, where a scan of every action for each failure
    # cost O(failures x actions) on every `where` and `state`.
    succeeded: dict[str, str] = {}
    done, failure, timeout = ActionStatus.COMPLETED, ActionStatus.FAILED, ActionStatus.TIMEOUT
    for action in recent:
        status = action.status
        if status is done:
            succeeded[action.command or action.summary] = action.created_at  # sorted: newest
        elif (status is failure or status is timeout) and action.fingerprint:
            found = runs.get(action.fingerprint)
            if found is None:
                runs[action.fingerprint] = [action]
            else:
                found.append(action)
    best: list[Run] = []
    for failed in runs.values():
        last = failed[-1]
        # (A success is never `last` itself, which failed.)
        fixed_at = succeeded.get(last.command or last.summary)
        fixed = fixed_at is not None and fixed_at >= last.created_at
        if not fixed and len(failed) >= repeats and len(failed) > len(best):
            best = failed
    if not best:
        return None
    last = best[-1]
    what = f"`{last.command}`" if last.command else repr(last.summary)
    return Stuck(
        reason=REPEATED_FAILURE,
        since=best[0].created_at,
        evidence=(
            f"{what} failed {len(best)} times with the same error since {best[0].created_at[:16]}Z"
        ),
        suggestion=failure_advice(last.id),
        command=last.command,
        fingerprint=last.fingerprint,
        times=len(best),
        action_id=last.id,
    )


def failure_advice(action_id: str, stream: str = "stderr") -> str:
    """What to try for a command that keeps failing: read its error on the stream that holds
    it (stdout is `clew task output`'s default), look for a fix that worked before, change
    approach. The commands come first, so a brief that cuts the line keeps them."""
    flag = " --stderr" if stream == "stderr" else ""
    return (
        f"read the error with `clew task output {action_id}{flag}`, look for a fix that worked"
        " before with `clew seen`, and take a different approach rather than running it again"
    )


def cannot_be_stuck(actions: Sequence[Run], now: datetime, rules: StuckRules) -> bool:
    """Whether a task with these newest actions (at least `ACTIONS_READ`, newest first) is
    not stuck whatever its plan and messages say, so a failed command's write need not read
    the task: one of the actions completed within the idle time (progress, and its plan and
    messages only make the last progress later), and no error fingerprint failed `repeats`
    times among them (the repeated failure counts only those since the plan last moved). A
    count, not the repeated-failure check itself: a task it does not clear takes the long
    path and is checked there, so this pass must cost little."""
    done = ActionStatus.COMPLETED
    latest = max((a.updated_at for a in actions if a.status is done), default=None)
    if latest is None or (now - parse(latest)).total_seconds() >= rules.idle_after:
        return False
    failure, timeout = ActionStatus.FAILED, ActionStatus.TIMEOUT
    failed: dict[str, int] = {}
    for a in actions:
        if a.fingerprint and (a.status is failure or a.status is timeout):
            n = failed[a.fingerprint] = failed.get(a.fingerprint, 0) + 1
            if n >= rules.repeats:
                return False
    return True


def detect(
    task: Task,
    messages: Sequence[Message],
    actions: Sequence[Run],
    now: datetime,
    rules: StuckRules = DEFAULT_RULES,
    *,
    waiting: bool = False,
    resumed_at: str | None = None,
) -> tuple[Stuck, ...]:
    """Why an active task is stuck now, if it is; messages and actions newest first (the
    newest few messages and `ACTIONS_READ` actions are enough)."""
    if not rules.enabled or task.status is not TaskStatus.ACTIVE:
        return ()
    found: list[Stuck] = []
    failing = repeated_failure(task, actions, rules.repeats)
    if failing is not None:
        found.append(failing)
    if not waiting:
        since = last_progress(task, messages, actions, resumed_at)
        idle = (now - parse(since)).total_seconds()
        if idle >= rules.idle_after:
            found.append(
                Stuck(
                    reason=NO_PROGRESS,
                    since=since,
                    evidence=(
                        f"no progress for {_minutes(idle)} (no step change, message or"
                        f" completed action since {since[:16]}Z)"
                    ),
                    suggestion=(
                        "report where the task stands (a message or a step's status); if it is"
                        " blocked, record the blocker as the step's issue, or pause the task"
                    ),
                )
            )
    return tuple(found)


def alert_due(last_alert: str | None, now: datetime, rules: StuckRules) -> bool:
    """Whether a stuck alert may be posted now: none yet, or the last one is older than the
    cooldown."""
    return last_alert is None or (now - parse(last_alert)).total_seconds() >= rules.cooldown


def alert_text(conditions: Sequence[Stuck]) -> str:
    """The system message a stuck alert posts to its task."""
    parts = [f"{c.evidence}; suggestion: {c.suggestion}" for c in conditions]
    return "[stuck] " + " | ".join(parts)
