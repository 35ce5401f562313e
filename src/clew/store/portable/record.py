"""Reads of the task record: its row, its steps' rows, and the few columns of a task's
records that entity extraction reads (never whole command outputs)."""

from __future__ import annotations

from typing import Any

from clew.core import codec
from clew.models import TraceDecision
from clew.store.rows import RowReader


class RecordReads(RowReader):
    """The task record's reads (a part both stores hold)."""

    def task_record_row(self, task_id: str) -> dict[str, Any] | None:
        """A task's record row as a dict (entities decoded), or None if nothing was set."""
        rows = self._rows(
            "SELECT * FROM task_records WHERE id = $1 AND space = $2", (task_id, self.space)
        )
        if not rows:
            return None
        row = dict(zip(rows[0].keys(), tuple(rows[0]), strict=True))
        row["entities"] = codec.loads(row["entities"])
        return row

    def task_head(self, task_id: str) -> int:
        """The seq of a task's newest event (0 if none): what its records were last changed
        by, so a value derived from them can be reused until it moves."""
        # `+space` (SQLite): with `space = ?` its planner walks the space's index on
        # (space, seq) back from the newest event until one of this task's appears, the
        # whole space's history for an old task (~5 ms at 10,000 events); held off it, it
        # reads the task's own index on (task_id, seq). PostgreSQL's index leads with space.
        rows = self._rows(
            f"SELECT max(seq) FROM events WHERE task_id = $1 AND {self._no_index}space = $2",
            (task_id, self.space),
        )
        return int(rows[0][0] or 0)

    def newest_trace_decisions(self, task_id: str, limit: int) -> list[TraceDecision]:
        """A task's newest `limit` decisions of the episodic trace, newest first."""
        from clew.store.portable.trace import _decision

        rows = self._rows(
            "SELECT * FROM trace_decisions WHERE task_id = $1 AND space = $2"
            " ORDER BY created_at DESC, seq DESC LIMIT $3",
            (task_id, self.space, limit),
        )
        return [_decision(r) for r in rows]

    def step_record_rows(self, task_id: str) -> list[dict[str, Any]]:
        """The record rows of a task's steps (artifacts decoded)."""
        rows = self._rows(
            "SELECT * FROM step_records WHERE task_id = $1 AND space = $2", (task_id, self.space)
        )
        out = []
        for r in rows:
            row = dict(zip(r.keys(), tuple(r), strict=True))
            row["artifacts"] = codec.loads(row["artifacts"])
            out.append(row)
        return out

    def entity_sources(self, task_id: str, *, limit: int) -> tuple[list[str], list[str], list[str]]:
        """The newest `limit` command lines, texts (messages, entry summaries) and changed
        paths of a task, for entity extraction."""
        params = (task_id, self.space, limit)
        commands = [
            str(r[0])
            for r in self._rows(
                "SELECT command FROM actions WHERE task_id = $1 AND space = $2"
                " AND command IS NOT NULL ORDER BY created_at DESC, seq DESC LIMIT $3",
                params,
            )
        ]
        texts = [
            str(r[0])
            for r in self._rows(
                # Plain `?` placeholders (not SQLite's numbered `?1`): one SQL for any backend.
                "SELECT content FROM (SELECT content, created_at FROM task_messages"
                " WHERE task_id = $1 AND space = $2 ORDER BY created_at DESC, seq DESC LIMIT $3) m"
                " UNION ALL SELECT summary FROM (SELECT summary, created_at FROM entries"
                " WHERE task_id = $4 AND space = $5 ORDER BY created_at DESC, seq DESC LIMIT $6) e",
                params * 2,
            )
        ]
        paths = [
            str(r[0])
            for r in self._rows(
                "SELECT path FROM task_files WHERE task_id = $1 AND space = $2"
                " ORDER BY last_at DESC LIMIT $3",
                params,
            )
        ]
        return commands, texts, paths
