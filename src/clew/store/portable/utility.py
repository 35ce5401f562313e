"""Reads of the job outbox, the model calls and the running summaries."""

from __future__ import annotations

from typing import Any

from clew.core import codec
from clew.errors import NotFoundError
from clew.models import Job, JobStatus, ModelCall, RunningSummary
from clew.store.rows import RowReader, fields
from clew.store.sql import Row, param, param_list


def _job(row: Row) -> Job:
    values = fields(row)
    values["status"] = JobStatus(values["status"])
    values["result"] = None if values["result"] is None else codec.loads(values["result"])
    return Job(**values)


def _call(row: Row) -> ModelCall:
    values = fields(row)
    values["ok"] = bool(values["ok"])
    return ModelCall(**values)


class UtilityReads(RowReader):
    """The utility model's reads (a part both stores hold)."""

    def get_job(self, job_id: str) -> Job:
        rows = self._rows("SELECT * FROM jobs WHERE id = $1 AND space = $2", (job_id, self.space))
        if not rows:
            raise NotFoundError("job", job_id)
        return _job(rows[0])

    def next_job(self, now: str) -> Job | None:
        """The oldest job to do: pending, or running with a lease that has run out."""
        rows = self._rows(
            "SELECT * FROM jobs WHERE space = $1 AND (status = 'pending' OR (status = 'running'"
            " AND lease_until < $2)) ORDER BY created_at, seq LIMIT 1",
            (self.space, now),
        )
        return _job(rows[0]) if rows else None

    def list_jobs(
        self, *, statuses: tuple[JobStatus, ...] = (), task_id: str | None = None, limit: int = 50
    ) -> list[Job]:
        sql = "SELECT * FROM jobs WHERE space = $1"
        params: list[Any] = [self.space]
        if statuses:
            sql += f" AND status IN ({param_list(params, [s.value for s in statuses])})"
        if task_id is not None:
            sql += f" AND task_id = {param(params, task_id)}"
        sql += f" ORDER BY created_at DESC, seq DESC LIMIT {param(params, limit)}"
        return [_job(r) for r in self._rows(sql, params)]

    def count_messages(self, task_id: str) -> int:
        return int(
            self._rows(
                "SELECT count(*) FROM task_messages WHERE task_id = $1 AND space = $2",
                (task_id, self.space),
            )[0][0]
        )

    def usage_totals(
        self, *, task_id: str | None = None, since: str | None = None
    ) -> tuple[int, int]:
        """(calls, tokens) of model calls, for a task or since a time (the whole space)."""
        where, params = self._calls_where(task_id, since)
        row = self._rows(
            "SELECT count(*), coalesce(sum(prompt_tokens + completion_tokens), 0)"
            f" FROM model_calls {where}",
            params,
        )[0]
        return int(row[0]), int(row[1])

    def model_calls(
        self, *, task_id: str | None = None, since: str | None = None
    ) -> list[ModelCall]:
        where, params = self._calls_where(task_id, since)
        rows = self._rows(f"SELECT * FROM model_calls {where} ORDER BY created_at, seq", params)
        return [_call(r) for r in rows]

    def _calls_where(self, task_id: str | None, since: str | None) -> tuple[str, list[Any]]:
        where = "WHERE space = $1"
        params: list[Any] = [self.space]
        if task_id is not None:
            where += f" AND task_id = {param(params, task_id)}"
        if since is not None:
            where += f" AND created_at >= {param(params, since)}"
        return where, params

    def latest_summary(self, task_id: str) -> RunningSummary | None:
        rows = self._rows(
            "SELECT * FROM task_summaries WHERE task_id = $1 AND space = $2"
            " ORDER BY created_at DESC, seq DESC LIMIT 1",
            (task_id, self.space),
        )
        return RunningSummary(**fields(rows[0])) if rows else None
