"""The store interface: all SQL lives behind it.

`Store` is what the facade needs from a backend. SQLite (`sqlite.py`) is the
embedded default; a PostgreSQL backend will implement the same protocol.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

from clew.lifecycle import Wait, WaitStatus
from clew.models import (
    Action,
    ActionLog,
    ActionStatus,
    Entry,
    EntryFilter,
    EntryStatus,
    EntryType,
    Event,
    FileChanges,
    Fix,
    Guardrail,
    Job,
    JobStatus,
    Message,
    ModelCall,
    Pattern,
    PlanItem,
    RecordHit,
    RepeatedFailure,
    RunningSummary,
    SearchHit,
    Session,
    Task,
    TaskStatus,
    TraceDecision,
    TraceValidation,
    Turn,
    VerifyReport,
)
from clew.search import Query


class Store(Protocol):
    path: str
    space: str
    read_only: bool  # opened for reading only: every write raises StoreReadOnlyError

    def transaction(self, *, write: bool = False) -> AbstractContextManager[None]: ...

    def append(
        self,
        *,
        type: str,
        task_id: str | None,
        correlation_id: str,
        data: dict[str, Any],
        created_at: str,
    ) -> Event: ...

    def close(self) -> None: ...

    def resolve(self, kind: str, ident: str, hint: str = "") -> str: ...

    def get_plan(self, task_id: str, *, include_removed: bool = False) -> tuple[PlanItem, ...]: ...

    def get_task(self, task_id: str) -> Task: ...

    def get_task_status(self, task_id: str) -> TaskStatus: ...

    def list_tasks(
        self, statuses: tuple[TaskStatus, ...] = (), *, include_archived: bool = False
    ) -> list[Task]: ...

    def get_step(self, step_id: str) -> PlanItem: ...

    def get_action(self, action_id: str) -> Action: ...

    def list_actions(
        self, task_id: str, *, plan_item_id: str | None = None, limit: int | None = None
    ) -> list[Action]: ...

    def linked_actions(self, action_ids: Sequence[str]) -> dict[str, str | None]: ...

    def list_action_logs(self, action_id: str) -> list[ActionLog]: ...

    def list_messages(self, task_id: str, *, limit: int | None = None) -> list[Message]: ...

    def get_message(self, message_id: str) -> Message: ...

    def search_records(
        self,
        query: Query,
        kinds: Sequence[str],
        *,
        task_id: str | None = None,
        since: str | None = None,
        until: str | None = None,
        limit: int,
    ) -> list[RecordHit]: ...

    def failed_actions_matching(self, query: Query, *, limit: int = 50) -> list[Action]: ...

    def get_entry(self, entry_id: str) -> Entry: ...

    def list_entries(self, filters: EntryFilter, *, limit: int | None = None) -> list[Entry]: ...

    def relevant_entries(self, task_id: str, subtask_id: str, *, limit: int) -> list[Entry]: ...

    def search_entries(
        self, query: Query, filters: EntryFilter, *, limit: int
    ) -> list[SearchHit]: ...

    def entries_with_fingerprint(self, key: str, *, limit: int = 50) -> list[Entry]: ...

    def fixes_for(self, key: str) -> list[Fix]: ...

    def fts_check(self) -> str | None: ...

    def commands(
        self,
        *,
        task_id: str | None = None,
        plan_item_id: str | None = None,
        statuses: tuple[ActionStatus, ...] = (),
        exit_code: int | None = None,
        contains: tuple[str, ...] = (),
        limit: int | None = None,
    ) -> list[Action]: ...

    def repeated_failures(
        self, *, task_id: str | None = None, min_failures: int = 2, limit: int = 50
    ) -> list[RepeatedFailure]: ...

    def recent_actions(self, task_id: str, *, limit: int) -> list[Action]: ...

    def open_waits(self, task_id: str) -> int: ...

    def last_message_at(self, task_id: str, type: str) -> str | None: ...

    def last_event_at(self, task_id: str, type: str) -> str | None: ...

    def actions_with_fingerprint(self, key: str, *, limit: int = 50) -> list[Action]: ...

    def get_trace_decision(self, decision_id: str) -> TraceDecision: ...

    def trace(
        self, task_id: str
    ) -> tuple[list[TraceDecision], list[TraceValidation], list[Action]]: ...

    def get_job(self, job_id: str) -> Job: ...

    def next_job(self, now: str) -> Job | None: ...

    def list_jobs(
        self, *, statuses: tuple[JobStatus, ...] = (), task_id: str | None = None, limit: int = 50
    ) -> list[Job]: ...

    def count_messages(self, task_id: str) -> int: ...

    def usage_totals(
        self, *, task_id: str | None = None, since: str | None = None
    ) -> tuple[int, int]: ...

    def model_calls(
        self, *, task_id: str | None = None, since: str | None = None
    ) -> list[ModelCall]: ...

    def latest_summary(self, task_id: str) -> RunningSummary | None: ...

    def get_pattern(self, pattern_id: str) -> Pattern: ...

    def list_patterns(
        self, *, domain: str | None = None, include_deprecated: bool = False
    ) -> list[Pattern]: ...

    def get_guardrail(self, guardrail_id: str) -> Guardrail: ...

    def list_guardrails(self, *, enabled_only: bool = False) -> list[Guardrail]: ...

    def newest_entries(
        self, task_id: str, types: tuple[EntryType, ...], per_group: int
    ) -> dict[tuple[EntryType, EntryStatus], list[Entry]]: ...

    def count_entries(self, task_id: str) -> dict[tuple[EntryType, EntryStatus], int]: ...

    def file_changes(self, task_id: str, *, newest: int | None = 5) -> FileChanges: ...

    def task_record_row(self, task_id: str) -> dict[str, Any] | None: ...

    def task_head(self, task_id: str) -> int: ...

    def newest_trace_decisions(self, task_id: str, limit: int) -> list[TraceDecision]: ...

    def step_record_rows(self, task_id: str) -> list[dict[str, Any]]: ...

    def entity_sources(
        self, task_id: str, *, limit: int
    ) -> tuple[list[str], list[str], list[str]]: ...

    def get_session(self, session_id: str) -> Session: ...

    def find_session(self, ident: str) -> Session | None: ...

    def session_by_key(self, key: str) -> Session | None: ...

    def list_sessions(
        self, *, active_only: bool = False, limit: int | None = None
    ) -> list[Session]: ...

    def get_turns(
        self,
        session_id: str,
        *,
        first: int | None = None,
        last: int | None = None,
        include_hidden: bool = True,
        newest: int | None = None,
    ) -> list[Turn]: ...

    def turns_numbered(self, session_id: str, numbers: list[int]) -> list[Turn]: ...

    def count_turns(self, session_id: str, *, before: int | None = None) -> int: ...

    def last_user_turn(self, session_id: str, *, at_most: int) -> int | None: ...

    def turns_by_id(self, ids: list[str]) -> list[Turn]: ...

    def tool_turns(self, session_id: str, tool_name: str, *, limit: int) -> list[Turn]: ...

    def turn_stats(self, session_id: str) -> dict[str, dict[str, int]]: ...

    def search_turns(
        self, session_id: str | None, query: Query, *, limit: int
    ) -> list[tuple[Turn, float, str]]: ...

    def list_events(
        self,
        *,
        task_id: str | None = None,
        after: int = 0,
        limit: int | None = None,
        types: tuple[str, ...] = (),
    ) -> list[Event]: ...

    def count_events(self) -> int: ...

    # -- the lifecycle: smart waits, the poller's schedule, archived tasks by month --------

    def get_wait(self, wait_id: str) -> Wait: ...

    def list_waits(
        self,
        *,
        task_id: str | None = None,
        statuses: tuple[WaitStatus, ...] = (),
        limit: int | None = None,
    ) -> list[Wait]: ...

    def has_watching(self) -> bool: ...

    def waiting_tasks(self) -> set[str]: ...

    def open_wait_actions(self, task_id: str, *, limit: int = 5) -> list[Action]: ...

    def schedule(self, key: str) -> tuple[str, int, str | None] | None: ...

    def mark_schedule(self, key: str, at: str, note: str | None = None) -> None: ...

    def archived_task_ids(self, month: str | None = None) -> list[tuple[str, str | None]]: ...

    def raw_events(self, task_ids: Sequence[str]) -> list[Any]: ...

    def verify(self, *, all_spaces: bool = False) -> VerifyReport: ...


def open_store(location: str, space: str, busy_timeout: float = 5.0) -> Store:
    """Open the backend for `location`: a `postgresql://` URL, else a SQLite file path."""
    from clew.location import is_url

    if is_url(location):
        from clew.store.postgres import PostgresStore  # imports psycopg: only for a URL

        return PostgresStore(location, space, busy_timeout)
    from clew.store.sqlite import SQLiteStore

    return SQLiteStore(location, space, busy_timeout)


__all__ = ["Store", "open_store"]
