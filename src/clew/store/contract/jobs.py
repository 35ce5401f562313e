"""Jobs, model use and the lifecycle: waits, schedules, archived tasks. Part of the backend
contract (store/contract/__init__.py states the rules every method keeps)."""

from __future__ import annotations

from typing import Protocol

from clew.core.lifecycle import Wait, WaitStatus
from clew.models import (
    Action,
    Job,
    JobStatus,
    ModelCall,
    RunningSummary,
)


class JobReads(Protocol):
    """Background jobs, model calls and their cost, running summaries."""

    def get_job(self, job_id: str) -> Job:
        """One job by id. NotFoundError if none."""
        ...

    def next_job(self, now: str) -> Job | None:
        """The oldest job to do at `now`: pending, or running with a lease that ran out;
        None when there is none."""
        ...

    def list_jobs(
        self, *, statuses: tuple[JobStatus, ...] = (), task_id: str | None = None, limit: int = 50
    ) -> list[Job]:
        """Jobs, newest first; of these statuses, of one task."""
        ...

    def usage_totals(
        self, *, task_id: str | None = None, since: str | None = None
    ) -> tuple[int, int]:
        """(calls, tokens) of model calls: of one task, or since a time in the space."""
        ...

    def model_calls(
        self, *, task_id: str | None = None, since: str | None = None
    ) -> list[ModelCall]:
        """Model calls, oldest first; of one task, since a time."""
        ...

    def latest_summary(self, task_id: str) -> RunningSummary | None:
        """A task's newest running summary; None if it has none."""
        ...


class LifecycleReads(Protocol):
    """Smart waits, the poller's schedule, archived tasks."""

    def get_wait(self, wait_id: str) -> Wait:
        """One wait by id. NotFoundError if none."""
        ...

    def list_waits(
        self,
        *,
        task_id: str | None = None,
        statuses: tuple[WaitStatus, ...] = (),
        limit: int | None = None,
    ) -> list[Wait]:
        """Waits, newest first (ties by id); of one task, of these statuses."""
        ...

    def has_watching(self) -> bool:
        """Whether any wait of the space watches something a poller must look at."""
        ...

    def waiting_tasks(self) -> set[str]:
        """Ids of tasks with an open wait (a watching smart wait or a started wait action)."""
        ...

    def open_wait_actions(self, task_id: str, *, limit: int = 5) -> list[Action]:
        """A task's wait actions still started, newest first, however old."""
        ...

    def schedule(self, key: str) -> tuple[str, int, str | None] | None:
        """(when `key` last ran, how many times, its note); None if it never ran."""
        ...

    def mark_schedule(self, key: str, at: str, note: str | None = None) -> None:
        """Record that `key` ran at `at`, in the current write transaction. Bookkeeping, not
        journaled: the one write outside the journal (a replay does not need it)."""
        ...

    def archived_task_ids(self, month: str | None = None) -> list[tuple[str, str | None]]:
        """(task id, archived_at) of archived tasks, newest archived first (ties by id); of
        one month (YYYY-MM) if given."""
        ...
