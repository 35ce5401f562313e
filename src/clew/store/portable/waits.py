"""Reads of smart waits, archived tasks by month and the journal of chosen tasks; and the
one write outside the journal, the poller's `schedule` (see lifecycle.py for why)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from clew.core import codec
from clew.core.lifecycle import Wait, WaitKind, WaitStatus
from clew.errors import NotFoundError
from clew.store.rows import RowReader, fields, limited
from clew.store.sql import Row, numbered, param, param_list

_SELECT = (
    "SELECT w.*, s.runs AS polls, s.last_at AS polled_at, s.note AS seen FROM waits w"
    " LEFT JOIN schedule s ON s.space = w.space AND s.key = 'wait:' || w.id"
)


def _wait(row: Row) -> Wait:
    values = fields(row)
    values["kind"] = WaitKind(values["kind"])
    values["status"] = WaitStatus(values["status"])
    values["criteria"] = codec.loads(values["criteria"])
    values["polls"] = values["polls"] or 0
    return Wait(**values)


class WaitReads(RowReader):
    """The lifecycle's reads (a part both stores hold)."""

    def get_wait(self, wait_id: str) -> Wait:
        rows = self._rows(f"{_SELECT} WHERE w.id = $1 AND w.space = $2", (wait_id, self.space))
        if not rows:
            raise NotFoundError("wait", wait_id)
        return _wait(rows[0])

    def list_waits(
        self,
        *,
        task_id: str | None = None,
        statuses: tuple[WaitStatus, ...] = (),
        limit: int | None = None,
    ) -> list[Wait]:
        """Waits, newest first."""
        sql = f"{_SELECT} WHERE w.space = $1"
        params: list[Any] = [self.space]
        if task_id is not None:
            sql += f" AND w.task_id = {param(params, task_id)}"
        if statuses:
            sql += f" AND w.status IN ({param_list(params, [s.value for s in statuses])})"
        sql += " ORDER BY w.created_at DESC, w.id"
        return [_wait(r) for r in self._rows(*limited(sql, params, limit))]

    def has_watching(self) -> bool:
        """Whether any wait of the space is watching something a poller must look at."""
        rows = self._rows(
            "SELECT 1 FROM waits WHERE space = $1 AND status = 'watching'"
            " AND (kind != 'manual' OR deadline IS NOT NULL) LIMIT 1",
            (self.space,),
        )
        return bool(rows)

    def waiting_tasks(self) -> set[str]:
        """Tasks with an open wait: a watching smart wait, or a wait action still started."""
        rows = self._rows(
            "SELECT task_id FROM waits WHERE space = $1 AND status = 'watching'"
            " UNION SELECT task_id FROM actions WHERE space = $2 AND type = 'wait'"
            " AND status = 'started'",
            (self.space, self.space),
        )
        return {r[0] for r in rows}

    def open_wait_actions(self, task_id: str, *, limit: int = 5) -> list[Any]:
        """A task's wait actions still started, newest first, however old."""
        from clew.store.portable.trace import actions_from_rows

        rows = self._rows(
            "SELECT * FROM actions WHERE task_id = $1 AND space = $2 AND type = 'wait'"
            " AND status = 'started' ORDER BY created_at DESC, seq DESC LIMIT $3",
            (task_id, self.space, limit),
        )
        return actions_from_rows(rows)

    def schedule(self, key: str) -> tuple[str, int, str | None] | None:
        """When `key` last ran, how often, and its note."""
        rows = self._rows(
            "SELECT last_at, runs, note FROM schedule WHERE space = $1 AND key = $2",
            (self.space, key),
        )
        return (rows[0][0], rows[0][1], rows[0][2]) if rows else None

    def mark_schedule(self, key: str, at: str, note: str | None = None) -> None:
        """Record that `key` ran at `at` (inside a write transaction; not journaled)."""
        self._rows(
            "INSERT INTO schedule (space, key, last_at, runs, note) VALUES ($1, $2, $3, 1, $4)"
            " ON CONFLICT(space, key) DO UPDATE SET last_at = excluded.last_at,"
            " runs = schedule.runs + 1, note = excluded.note",
            (self.space, key, at, note),
        )

    def archived_task_ids(self, month: str | None = None) -> list[tuple[str, str | None]]:
        """(task id, archived_at) of archived tasks, newest archived first; of one month
        (YYYY-MM) if given."""
        sql = "SELECT id, archived_at FROM tasks WHERE space = $1 AND archived = 1"
        params: list[Any] = [self.space]
        if month is not None:
            sql += " AND archived_at >= $2 AND archived_at < $3"
            params += [f"{month}-01", f"{month}-32"]
        sql += " ORDER BY archived_at DESC, id"
        return [(r[0], r[1]) for r in self._rows(sql, params)]

    def raw_events(self, task_ids: Sequence[str]) -> list[Row]:
        """The journal rows of these tasks as stored (data as its text), in seq order."""
        out: list[Row] = []
        ids = list(task_ids)
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            out += self._rows(
                "SELECT seq, id, space, task_id, correlation_id, type, data, created_at, hash,"
                f" forgotten FROM events WHERE {self._no_index}space = $1"
                f" AND task_id IN ({numbered(len(chunk), 2)})",
                (self.space, *chunk),
            )
        out.sort(key=lambda r: r[0])
        return out
