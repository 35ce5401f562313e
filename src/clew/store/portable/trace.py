"""Reads of the command ledger (the actions table, tool calls included), the episodic
trace, and semantic memory (patterns, guardrails)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Any

from clew.core import codec
from clew.errors import NotFoundError
from clew.models import (
    Action,
    ActionStatus,
    ActionType,
    Attempt,
    Enforcement,
    Guardrail,
    Pattern,
    RepeatedFailure,
    TraceDecision,
    TraceValidation,
)
from clew.store.rows import RowReader, fields, json_ids, like_escaped, limited, positional
from clew.store.sql import Row, param, param_list


def _json(text: str | None) -> Any:
    return None if text is None else codec.loads(text)


def output(value: str | bytes | None, kind: str | None) -> str | bytes | None:
    """Command output as it was recorded, by its kind: bytes stay bytes, text is text
    (a backend may hand either back as the other: PostgreSQL's BYTEA, SQLite's BLOB)."""
    if value is None:
        return None
    if kind == "bytes":
        return bytes(value.encode() if isinstance(value, str) else value)
    return value.decode() if isinstance(value, bytes) else value


_ACTION_TYPE = {t.value: t for t in ActionType}
_ACTION_STATUS = {s.value: s for s in ActionStatus}
# Action's fields, then the two output kinds: what a row is read as.
_ACTION_COLUMNS = (*Action._fields, "stdout_kind", "stderr_kind")
# A query's column names -> the position of each of _ACTION_COLUMNS in its rows. Rows are
# read by position: by name, sqlite3.Row compares every column's name (case-insensitively)
# on each lookup, which cost more than the rest of a listing.
_PICKERS: dict[tuple[str, ...], Callable[[tuple[Any, ...]], tuple[Any, ...]]] = {}


def _picker(names: tuple[str, ...]) -> Callable[[tuple[Any, ...]], tuple[Any, ...]]:
    found = _PICKERS.get(names)
    if found is None:
        index = {name: i for i, name in enumerate(names)}
        found = _PICKERS[names] = itemgetter(*(index[c] for c in _ACTION_COLUMNS))
    return found


# The actions table's columns in _ACTION_COLUMNS' order: rows selected so (as plain tuples,
# `_tuples`) are built by position with no picker (`actions_in_order`).
ACTION_SELECT = ", ".join(_ACTION_COLUMNS)


def actions_in_order(rows: Sequence[tuple[Any, ...]]) -> list[Action]:
    """Build the Actions of rows selected as `ACTION_SELECT` (or the same order)."""
    return [_action(values) for values in rows]


def action_from_row(row: Row) -> Action:
    """Build an Action from a row of `actions`."""
    return _action(_picker(tuple(row.keys()))(tuple(row)))


def actions_from_rows(rows: Sequence[Row]) -> list[Action]:
    """Build the Actions of rows of one query (their columns named once)."""
    if not rows:
        return []
    pick = _picker(tuple(rows[0].keys()))
    return [_action(values) for values in map(pick, positional(rows))]


def _action(values: tuple[Any, ...]) -> Action:
    (
        id,
        space,
        task_id,
        plan_item_id,
        type,
        summary,
        status,
        input,
        output_value,
        command,
        cwd,
        exit_code,
        duration,
        stdout,
        stderr,
        created_at,
        updated_at,
        tool,
        decision_id,
        started_at,
        ended_at,
        cpu_seconds,
        memory_mb,
        fingerprint,
        stdout_kind,
        stderr_kind,
    ) = values
    # Most of a listing's actions have no JSON and text (or no) output: those are taken as
    # they are, without a call each (`where` builds 50-70 actions, `state` 50); the tuple
    # is made as NamedTuple's __new__ makes it, without its Python frame.
    if input is not None:
        input = codec.loads(input)
    if output_value is not None:
        output_value = codec.loads(output_value)
    if stdout is not None and (stdout_kind == "bytes" or isinstance(stdout, bytes)):
        stdout = output(stdout, stdout_kind)
    if stderr is not None and (stderr_kind == "bytes" or isinstance(stderr, bytes)):
        stderr = output(stderr, stderr_kind)
    return tuple.__new__(
        Action,
        (
            id,
            space,
            task_id,
            plan_item_id,
            _ACTION_TYPE[type],
            summary,
            _ACTION_STATUS[status],
            input,
            output_value,
            command,
            cwd,
            exit_code,
            duration,
            stdout,
            stderr,
            created_at,
            updated_at,
            tool,
            decision_id,
            started_at,
            ended_at,
            cpu_seconds,
            memory_mb,
            fingerprint,
        ),
    )


def _decision(row: Row) -> TraceDecision:
    values = fields(row)
    values["context"] = _json(values["context"])
    values["artifacts"] = _json(values["artifacts"])
    return TraceDecision(**values)


def _validation(row: Row) -> TraceValidation:
    values = fields(row)
    values["passed"] = bool(values["passed"])
    values["requirements"] = _json(values["requirements"])
    values["violations"] = _json(values["violations"])
    return TraceValidation(**values)


def _pattern(row: Row) -> Pattern:
    values = fields(row)
    values["context"] = _json(values["context"])
    values["deprecated"] = bool(values["deprecated"])
    return Pattern(**values)


def _guardrail(row: Row) -> Guardrail:
    values = fields(row)
    values["enforcement"] = Enforcement(values["enforcement"])
    values["valid_examples"] = json_ids(values["valid_examples"])
    values["invalid_examples"] = json_ids(values["invalid_examples"])
    values["enabled"] = bool(values["enabled"])
    return Guardrail(**values)


class TraceReads(RowReader):
    """The ledger's, the trace's and semantic memory's reads (a part both stores hold)."""

    def commands(
        self,
        *,
        task_id: str | None = None,
        plan_item_id: str | None = None,
        statuses: tuple[ActionStatus, ...] = (),
        exit_code: int | None = None,
        contains: tuple[str, ...] = (),
        limit: int | None = None,
    ) -> list[Action]:
        """Recorded commands, newest first; `contains`: the command holds any of these."""
        sql = "SELECT * FROM actions WHERE space = $1 AND command IS NOT NULL"
        params: list[Any] = [self.space]
        for column, value in (
            ("task_id", task_id),
            ("plan_item_id", plan_item_id),
            ("exit_code", exit_code),
        ):
            if value is not None:
                sql += f" AND {column} = {param(params, value)}"
        if statuses:
            sql += f" AND status IN ({param_list(params, [s.value for s in statuses])})"
        if contains:
            # LIKE with its wildcards escaped, so no `%` or `_` in a command widens the match.
            likes = (
                f"lower(command) LIKE {param(params, f'%{like_escaped(c.lower())}%')} ESCAPE '\\'"
                for c in contains
            )
            sql += " AND (" + " OR ".join(likes) + ")"
        sql += " ORDER BY created_at DESC, seq DESC"
        return actions_from_rows(self._rows(*limited(sql, params, limit)))

    def repeated_failures(
        self, *, task_id: str | None = None, min_failures: int = 2, limit: int = 50
    ) -> list[RepeatedFailure]:
        """Commands (exact text) that failed at least `min_failures` times, most first."""
        sql = (
            "SELECT command, count(*) AS failures, max(created_at) AS last_at FROM actions"
            " WHERE space = $1 AND status IN ('failed', 'timeout') AND command IS NOT NULL"
        )
        params: list[Any] = [self.space]
        if task_id is not None:
            sql += f" AND task_id = {param(params, task_id)}"
        sql += f" GROUP BY command HAVING count(*) >= {param(params, min_failures)}"
        sql += f" ORDER BY failures DESC, last_at DESC LIMIT {param(params, limit)}"
        out = []
        with self.transaction():
            for row in self._rows(sql, params):
                last = self._rows(
                    "SELECT id, exit_code FROM actions WHERE space = $1 AND command = $2"
                    " AND status IN ('failed', 'timeout') ORDER BY created_at DESC, seq DESC"
                    " LIMIT 1",
                    (self.space, row["command"]),
                )[0]
                out.append(
                    RepeatedFailure(
                        row["command"], row["failures"], last[1], row["last_at"], last[0]
                    )
                )
        return out

    def recent_actions(self, task_id: str, *, limit: int) -> list[Action]:
        """A task's newest actions, newest first, without their output (stdout, stderr,
        input and output are None): what `where` reads for its brief and stuck detection,
        cheaply whatever the output."""
        # In _ACTION_COLUMNS' order, without the output (NULL), as `actions_in_order` reads.
        rows = self._tuples(
            "SELECT id, space, task_id, plan_item_id, type, summary, status, NULL AS input,"
            " NULL AS output, command, cwd, exit_code, duration_seconds, NULL AS stdout,"
            " NULL AS stderr, created_at, updated_at, tool, decision_id, started_at, ended_at,"
            " cpu_seconds, memory_mb, fingerprint, NULL AS stdout_kind, NULL AS stderr_kind"
            " FROM actions WHERE task_id = $1 AND space = $2 ORDER BY created_at DESC, seq DESC"
            " LIMIT $3",
            (task_id, self.space, limit),
        )
        return actions_in_order(rows)

    def recent_attempts(self, task_id: str, *, limit: int) -> list[Attempt]:
        """A task's newest actions as stuck detection reads them (`Attempt`), newest first:
        seven columns, each row made a tuple as NamedTuple makes it, without its frame."""
        rows = self._tuples(
            "SELECT id, summary, status, command, fingerprint, created_at, updated_at"
            " FROM actions WHERE task_id = $1 AND space = $2 ORDER BY created_at DESC, seq DESC"
            " LIMIT $3",
            (task_id, self.space, limit),
        )
        statuses, new = _ACTION_STATUS, tuple.__new__
        return [
            new(Attempt, (id, summary, statuses[status], command, fingerprint, created, updated))
            for id, summary, status, command, fingerprint, created, updated in rows
        ]

    def open_waits(self, task_id: str) -> int:
        """How many waits of a task are open: smart waits still watching, and wait actions
        still recorded as started."""
        rows = self._rows(
            "SELECT (SELECT count(*) FROM actions WHERE task_id = $1 AND space = $2"
            " AND type = 'wait' AND status = 'started')"
            " + (SELECT count(*) FROM waits WHERE task_id = $3 AND space = $4"
            " AND status = 'watching')",
            (task_id, self.space, task_id, self.space),
        )
        return int(rows[0][0])

    def last_message_at(self, task_id: str, type: str) -> str | None:
        """When the newest message of one type was added to a task, if any was."""
        rows = self._rows(
            "SELECT max(created_at) FROM task_messages WHERE task_id = $1 AND space = $2"
            " AND type = $3",
            (task_id, self.space, type),
        )
        return rows[0][0] if rows else None

    def last_event_at(self, task_id: str, type: str) -> str | None:
        """When the newest event of one type was journaled for a task, if any was."""
        rows = self._rows(
            "SELECT max(created_at) FROM events WHERE task_id = $1"
            f" AND {self._no_index}space = $2 AND {self._no_index}type = $3",
            (task_id, self.space, type),
        )
        return rows[0][0] if rows else None

    def actions_with_fingerprint(self, key: str, *, limit: int = 50) -> list[Action]:
        """Failed commands whose error has this fingerprint, newest first."""
        rows = self._rows(
            "SELECT * FROM actions WHERE fingerprint = $1 AND space = $2"
            " ORDER BY created_at DESC, seq DESC LIMIT $3",
            (key, self.space, limit),
        )
        return actions_from_rows(rows)

    def get_trace_decision(self, decision_id: str) -> TraceDecision:
        rows = self._rows(
            "SELECT * FROM trace_decisions WHERE id = $1 AND space = $2", (decision_id, self.space)
        )
        if not rows:
            raise NotFoundError("decision", decision_id)
        return _decision(rows[0])

    def trace(
        self, task_id: str
    ) -> tuple[list[TraceDecision], list[TraceValidation], list[Action]]:
        """A task's trace in order: its decisions, their validations, and its tool calls."""
        with self.transaction():
            decisions = self._rows(
                "SELECT * FROM trace_decisions WHERE task_id = $1 AND space = $2"
                " ORDER BY created_at, seq",
                (task_id, self.space),
            )
            validations = self._rows(
                "SELECT * FROM trace_validations WHERE task_id = $1 AND space = $2"
                " ORDER BY created_at, seq",
                (task_id, self.space),
            )
            calls = self._rows(
                "SELECT * FROM actions WHERE task_id = $1 AND space = $2"
                " AND (decision_id IS NOT NULL OR type = 'tool') ORDER BY created_at, seq",
                (task_id, self.space),
            )
        return (
            [_decision(r) for r in decisions],
            [_validation(r) for r in validations],
            actions_from_rows(calls),
        )

    def get_pattern(self, pattern_id: str) -> Pattern:
        rows = self._rows(
            "SELECT * FROM patterns WHERE id = $1 AND space = $2", (pattern_id, self.space)
        )
        if not rows:
            raise NotFoundError("pattern", pattern_id)
        return _pattern(rows[0])

    def list_patterns(
        self, *, domain: str | None = None, include_deprecated: bool = False
    ) -> list[Pattern]:
        sql = "SELECT * FROM patterns WHERE space = $1"
        params: list[Any] = [self.space]
        if domain is not None:
            sql += f" AND domain = {param(params, domain)}"
        if not include_deprecated:
            sql += " AND deprecated = 0"
        return [_pattern(r) for r in self._rows(sql + " ORDER BY created_at, seq", params)]

    def get_guardrail(self, guardrail_id: str) -> Guardrail:
        rows = self._rows(
            "SELECT * FROM guardrails WHERE id = $1 AND space = $2", (guardrail_id, self.space)
        )
        if not rows:
            raise NotFoundError("guardrail", guardrail_id)
        return _guardrail(rows[0])

    def list_guardrails(self, *, enabled_only: bool = False) -> list[Guardrail]:
        sql = "SELECT * FROM guardrails WHERE space = $1"
        if enabled_only:
            sql += " AND enabled = 1"
        return [_guardrail(r) for r in self._rows(sql + " ORDER BY created_at, seq", [self.space])]
