"""Maintenance that runs by itself, a service of the Memory facade: pause idle tasks (24 h), archive
closed ones (7 d), deprecate patterns by the pruning rule, time out waits past their deadline
and cancel those of closed tasks. And the worker's round: maintenance when due, then the
waits that are due.

Maintenance runs at most once per interval (`[maintenance] interval`, 1 h) per space: the
worker runs it, and so do `clew.open` and `prime`, lazily, after one indexed read of the
`schedule` row that says when it last ran. Each thing it does is its own journal event (a
status change with reason idle, an archiving, a deprecation, a wait timed out), and a
`maintenance.ran` event sums the run up; a run that finds nothing to do journals nothing.
`tidy` is the manual form of the first two.

A task that is waiting (a watching smart wait, or a wait action still started) is never
paused as idle: waiting is what it is doing.
"""

from __future__ import annotations

from clew.archive.semantic import MIN_SUCCESS_RATE, MIN_TRIALS, Semantic
from clew.core import checks
from clew.core.clock import parse
from clew.core.lifecycle import (
    ArchivedTask,
    MaintenanceAction,
    MaintenanceReport,
    plus,
    words,
)
from clew.errors import ClewError, ValidationError
from clew.jobs.outbox import Jobs
from clew.kernel import Kernel, Service, in_background, on_open
from clew.models import CLOSED_TASK_STATUSES, TaskStatus
from clew.tasks.waits import Waits
from clew.tasks.watch import Watch

DAY = 86400.0
MAINTENANCE = "maintenance"


class Upkeep(Service):
    """Lifecycle upkeep (a service of Memory): maintenance on open, prime and in the
    worker's round, tidy, and archived tasks by month."""

    def __init__(
        self, kernel: Kernel, jobs: Jobs, semantic: Semantic, waits: Waits, watch: Watch
    ) -> None:
        super().__init__(kernel)
        self.jobs = jobs  # prime starts the worker to poll the watched waits
        self.semantic = semantic  # the patterns maintenance prunes
        self.waits = waits  # the smart waits upkeep ends and polls
        self.watch = watch  # stuck detection: maintenance alerts stuck tasks

    def tidy(
        self,
        *,
        pause_idle_after: float | None = DAY,
        archive_closed_after: float | None = 7 * DAY,
        dry_run: bool = False,
    ) -> list[tuple[str, str]]:
        """Pause active tasks idle for `pause_idle_after` seconds (unless they are waiting)
        and archive closed tasks finished `archive_closed_after` seconds ago; return (task
        id, what was done)."""
        pause = checks.duration(pause_idle_after, "pause after")
        archive = checks.duration(archive_closed_after, "archive after")
        with self._write() as at:
            done = self._tidy(pause, archive, dry_run, at)
        return [(a.id, a.action) for a in done]

    def _tidy(
        self, pause: float | None, archive: float | None, dry_run: bool, at: str
    ) -> list[MaintenanceAction]:
        now = self._clock()
        done: list[MaintenanceAction] = []
        waiting = self._store.waiting_tasks() if pause is not None else set()
        for task in self._store.list_tasks():
            idle = (now - parse(task.updated_at)).total_seconds()
            if (
                pause is not None
                and task.status is TaskStatus.ACTIVE
                and idle > pause
                and task.id not in waiting
            ):
                done.append(MaintenanceAction("paused", task.id, f"idle for {words(idle)}"))
                if not dry_run:
                    data = {"task_id": task.id, "from": "active", "to": "paused", "reason": "idle"}
                    self._emit("task.status_changed", task.id, data, at)
            elif (
                archive is not None
                and task.status in CLOSED_TASK_STATUSES
                and task.completed_at is not None
                and (closed := (now - parse(task.completed_at)).total_seconds()) > archive
            ):
                why = f"{task.status.value} {words(closed)} ago"
                done.append(MaintenanceAction("archived", task.id, why))
                if not dry_run:
                    archived = {"task_id": task.id, "archived": True, "reason": why}
                    self._emit("task.archived", task.id, archived, at)
        return done

    def maintain(self, *, dry_run: bool = False, trigger: str = "manual") -> MaintenanceReport:
        """Run maintenance now, whatever the interval: time out waits past their deadline,
        cancel the waits of closed tasks, pause idle tasks, archive long-closed ones and
        deprecate failing patterns, as the `[maintenance]` settings say."""
        rules = self.settings.maintenance
        done: list[MaintenanceAction] = []
        with self._write() as at:
            late, orphaned = self.waits._expired_waits(at)
            for wait in late:
                done.append(MaintenanceAction("timed_out", wait.id, f"wait {wait.label}"))
                if not dry_run:
                    self.waits._time_out(wait, at)
            for wait, why in orphaned:
                done.append(MaintenanceAction("cancelled", wait.id, f"wait {wait.label}: {why}"))
                if not dry_run:
                    self.waits._cancel(wait, why, at)
            done += self._tidy(rules.pause_after, rules.archive_after, dry_run, at)
            if rules.prune_patterns:
                weak = self.semantic.prune_patterns(dry_run=dry_run)
                rate = f"under {MIN_SUCCESS_RATE:.0%} success after {MIN_TRIALS}+ trials"
                done += [MaintenanceAction("deprecated", p.id, f"{p.name}: {rate}") for p in weak]
            if not dry_run:
                if done:
                    summary = {
                        "trigger": trigger,
                        "actions": [
                            {"action": a.action, "id": a.id, "detail": a.detail} for a in done
                        ],
                    }
                    self._emit("maintenance.ran", None, summary, at)
                self._store.mark_schedule(MAINTENANCE, at, f"{len(done)} actions ({trigger})")
        if not dry_run and self.settings.stuck.enabled:
            # Stuck tasks are found here too, so an idle agent's task is flagged even when
            # nothing writes to it; each alert is its own write and keeps its cooldown.
            done += [
                MaintenanceAction("stuck_alerted", r.task_id, f"{r.name}: {r.conditions[0].reason}")
                for r in self.watch.check_stuck(alert=True)
                if r.alerted
            ]
        return MaintenanceReport(True, trigger, at, tuple(done), dry_run)

    def maintenance_due(self) -> bool:
        """Whether maintenance is switched on and its interval has passed since the last run."""
        rules = self.settings.maintenance
        if not rules.enabled or self.read_only:
            return False
        last = self._store.schedule(MAINTENANCE)
        return last is None or plus(parse(last[0]), rules.interval) <= self._clock()

    def _maintain_if_due(self, trigger: str) -> MaintenanceReport:
        if not self.maintenance_due():
            return MaintenanceReport(False, trigger, self._now())
        return self.maintain(trigger=trigger)

    @on_open(10)
    def _maintain_lazily(self, trigger: str) -> None:
        """On open and prime: maintenance if it is due, and on prime a poller for the
        waits if none is running. Never fails the call it rides on (a busy store just means
        next time)."""
        try:
            self._maintain_if_due(trigger)
            wake = trigger == "prime" and self.settings.worker != "off" and not self.read_only
            if wake and self._store.has_watching():
                self.jobs._start_worker()
        except ClewError:
            pass

    @in_background(10)
    def _upkeep_round(self) -> float | None:
        """The worker's round besides jobs: maintenance when due, the waits that are due;
        return the seconds until a wait is due again (None when none is watched)."""
        try:
            self._maintain_if_due("worker")
            self.waits.check_waits()
        except ClewError:  # a busy store, say: the next round tries again
            pass
        return self.waits._next_poll_in()

    # -- archived tasks by month ----------------------------------------------------------

    def archived_tasks(self, month: str | None = None) -> list[ArchivedTask]:
        """Archived tasks, newest archived first, each with its month (YYYY-MM); of one
        month if given."""
        chosen = None if month is None else checks_month(month)
        with self._store.transaction():
            found = self._store.archived_task_ids(chosen)
            return [
                ArchivedTask((at or "unknown")[:7], at, self._store.get_task(tid))
                for tid, at in found
            ]

    def export_month(self, month: str) -> list[str]:
        """The journal events of the tasks archived in `month` (YYYY-MM), one JSON line each,
        as stored: seq, id, space, task_id, correlation_id, type, data, created_at, hash,
        forgotten. `data` is the stored JSON text itself, and `forgotten` the tombstone of an
        event whose content was forgotten (whose digest its hash covers), so each event's
        hash can be checked."""
        import json

        chosen = checks_month(month)
        with self._store.transaction():
            ids = [tid for tid, _ in self._store.archived_task_ids(chosen)]
            rows = self._store.raw_events(ids)
        lines = []
        for row in rows:
            head = {k: row[k] for k in ("seq", "id", "space", "task_id", "correlation_id", "type")}
            tail = {"created_at": row["created_at"], "hash": row["hash"]}
            forgotten = row["forgotten"]
            try:
                json.loads(row["data"])
                data = row["data"]
            except ValueError:  # a damaged event: its text, quoted, rather than a broken line
                data = json.dumps(row["data"], ensure_ascii=False)
            text = json.dumps(head, ensure_ascii=False, separators=(",", ":"))
            rest = json.dumps(tail, ensure_ascii=False, separators=(",", ":"))
            tomb = "null" if forgotten is None else forgotten  # stored as compact JSON
            lines.append(f'{text[:-1]},"data":{data},{rest[1:-1]},"forgotten":{tomb}}}')
        return lines


def checks_month(month: object) -> str:
    """Return a month as YYYY-MM, or raise."""
    import re

    if not isinstance(month, str) or not re.fullmatch(r"\d{4}-(0[1-9]|1[0-2])", month.strip()):
        raise ValidationError(f"month must be like 2026-11 (YYYY-MM), not {month!r}")
    return month.strip()
