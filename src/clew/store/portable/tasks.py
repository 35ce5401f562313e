"""Reads of the task tracker: tasks with their plans, steps, actions and their logs, task
messages, a task's changed files. Portable SQL (store/sql.py), a part both stores hold."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from clew.core import codec
from clew.errors import NotFoundError
from clew.models import (
    Action,
    ActionLog,
    FileChanges,
    Message,
    MessageRole,
    MessageType,
    PlanItem,
    StepStatus,
    Task,
    TaskStatus,
)
from clew.store.portable.trace import ACTION_SELECT, action_from_row, actions_in_order
from clew.store.rows import RowReader, json_ids, limited
from clew.store.sql import Row, numbered, param, param_list

# Plan rows are read on every task read, so they are selected in PlanItem's field order
# and unpacked by position: several times faster than building them by column name.
_STEP_COLUMNS = ", ".join(PlanItem._fields)
_STEP_STATUS = {s.value: s for s in StepStatus}


def _step(row: Row | tuple[Any, ...]) -> PlanItem:
    (
        id,
        space,
        task_id,
        ordinal,
        title,
        status,
        started_at,
        completed_at,
        duration,
        summary,
        issue,
        depends_on,
        removed,
        created_at,
        updated_at,
    ) = row
    # Made as NamedTuple's own __new__ makes it, without its Python frame (every task read).
    return tuple.__new__(
        PlanItem,
        (
            id,
            space,
            task_id,
            ordinal,
            title,
            _STEP_STATUS[status],
            started_at,
            completed_at,
            duration,
            summary,
            issue,
            json_ids(depends_on),
            bool(removed),
            created_at,
            updated_at,
        ),
    )


# Task fields in Task's order (all but the plan), selected by position like steps.
_TASK_FIELDS = Task._fields[:-1]
_TASK_STATUS = {s.value: s for s in TaskStatus}
_TASKS_WITH_PLANS = (
    f"SELECT {', '.join('t.' + c for c in _TASK_FIELDS)},"
    f" {', '.join('p.' + c for c in PlanItem._fields)}"
    " FROM tasks t LEFT JOIN plan_items p"
    " ON p.task_id = t.id AND p.space = t.space AND p.removed = 0"
)
_TASK_WITH_PLAN = f"{_TASKS_WITH_PLANS} WHERE t.id = $1 AND t.space = $2 ORDER BY p.ordinal"


def _tasks_with_plans(rows: Sequence[tuple[Any, ...]]) -> list[Task]:
    """Fold rows of tasks joined to their steps (a task's rows together, its steps in
    order) into tasks with their plans, in the rows' order."""
    width = len(_TASK_FIELDS)
    heads: dict[str, tuple[Any, ...]] = {}
    plans: dict[str, list[PlanItem]] = {}
    for row in rows:
        heads.setdefault(row[0], row)
        steps = plans.setdefault(row[0], [])
        if row[width] is not None:
            steps.append(_step(row[width:]))
    return [_task(head[:width], tuple(plans[tid])) for tid, head in heads.items()]


def _task(row: Row | tuple[Any, ...], plan: tuple[PlanItem, ...]) -> Task:
    (
        id,
        space,
        name,
        goal,
        workspace,
        status,
        archived,
        metadata,
        plan_version,
        last_replanned_at,
        created_at,
        updated_at,
        completed_at,
        next_objective,
        summary,
    ) = row
    return tuple.__new__(
        Task,
        (
            id,
            space,
            name,
            goal,
            workspace,
            _TASK_STATUS[status],
            bool(archived),
            {} if metadata == "{}" else codec.loads(metadata),
            plan_version,
            last_replanned_at,
            created_at,
            updated_at,
            completed_at,
            next_objective,
            summary,
            plan,
        ),
    )


def _log(row: Row) -> ActionLog:
    return ActionLog(
        id=row["id"],
        space=row["space"],
        task_id=row["task_id"],
        action_id=row["action_id"],
        type=row["type"],
        content=row["content"],
        created_at=row["created_at"],
    )


_ROLE = {r.value: r for r in MessageRole}
_MESSAGE_TYPE = {t.value: t for t in MessageType}
# Messages are selected in Message's field order and built from plain tuples by position:
# `where` builds some 200 messages, and building them by column name was a third of it.
_MESSAGE_COLUMNS = ", ".join(Message._fields)


def _messages(rows: Sequence[tuple[Any, ...]]) -> list[Message]:
    """Messages from rows of `_MESSAGE_COLUMNS` (each tuple made as NamedTuple's own
    __new__ and _make make it, without their Python frame)."""
    roles, types, new = _ROLE, _MESSAGE_TYPE, tuple.__new__
    return [
        new(Message, (id, space, task_id, roles[role], types[type], content, created_at))
        for id, space, task_id, role, type, content, created_at in rows
    ]


class Outline(NamedTuple):
    """What search reads of one kind of the outline (outline.py): the columns (the first
    three always id, task id, time), the table and its alias, the conditions a row of it
    must meet (SQL after WHERE ...), and its time column. Portable SQL: both backends run
    it as it is. Each table has an alias of its own, none of those the search statements
    use (`d`, `t`, `r`, `m`, `v`, `w`): one statement joins them all."""

    columns: str
    table: str
    alias: str
    where: str
    stamp: str


OUTLINE_SQL: dict[str, Outline] = {
    "task": Outline(
        "tk.id, tk.id, tk.created_at, tk.name, tk.status", "tasks", "tk", "", "created_at"
    ),
    "goal": Outline(
        "tk.id, tk.id, tk.created_at, tk.goal, tk.status",
        "tasks",
        "tk",
        " AND tk.goal IS NOT NULL",
        "created_at",
    ),
    "step": Outline(
        "p.id, p.task_id, p.created_at, p.title, p.status, p.ordinal, p.active_issue, p.summary",
        "plan_items",
        "p",
        " AND p.removed = 0",
        "created_at",
    ),
    "answer": Outline(
        "tr.id, tr.id, tr.updated_at, tr.answer",
        "task_records",
        "tr",
        " AND tr.answer IS NOT NULL",
        "updated_at",
    ),
    "pattern": Outline(
        "g.id, NULL, g.created_at, g.name, g.domain, g.deprecated,"
        " g.description, g.example, g.kind",
        "patterns",
        "g",
        "",
        "created_at",
    ),
    "guardrail": Outline(
        "gr.id, NULL, gr.created_at, gr.text, gr.enforcement, gr.enabled",
        "guardrails",
        "gr",
        "",
        "created_at",
    ),
}


def outline_joins(
    kinds: Sequence[str],
    task_id: str | None,
    step_id: str | None,
    since: str | None,
    until: str | None,
    params: list[Any],
    *,
    plain: str,
    same_space: bool,
    doc: str = "d",
) -> tuple[str, str]:
    """For one statement over the documents of several kinds of the outline (alias `doc`):
    SQL LEFT JOINing each kind's table (on its space too with `same_space`), and the
    condition (led by AND) keeping the documents whose row is of a kind asked for and meets
    that kind's conditions (`outline_where`), its values added to `params`. `plain` is the backend's
    prefix that keeps a column's index out of the plan (SQLite's `+`): the match drives."""
    if task_id is None and step_id is None and since is None and until is None:
        # Nothing but the kinds: a document that matches is a row to show (a goal or an
        # answer not set, a removed step, has an empty one), so no table is read per match.
        among = ", ".join(f"'{k}'" for k in kinds)
        return "", f" AND {plain}{doc}.kind IN ({among})"
    tables: dict[str, list[str]] = {}
    for kind in kinds:
        tables.setdefault(OUTLINE_SQL[kind].alias, []).append(kind)
    joins = ""
    for alias, of in tables.items():
        among = ", ".join(f"'{k}'" for k in of)
        space = f" AND {alias}.space = {doc}.space" if same_space else ""
        joins += (
            f" LEFT JOIN {OUTLINE_SQL[of[0]].table} {alias} ON {alias}.id = {doc}.ref_id{space}"
            f" AND {doc}.kind IN ({among})"
        )
    ors = []
    for kind in kinds:
        where = outline_where(kind, task_id, step_id, params, since, until)
        ors.append(
            f"({plain}{doc}.kind = '{kind}' AND {OUTLINE_SQL[kind].alias}.id IS NOT NULL{where})"
        )
    return joins, f" AND ({' OR '.join(ors)})"


def outline_where(
    kind: str,
    task_id: str | None,
    step_id: str | None,
    params: list[Any],
    since: str | None = None,
    until: str | None = None,
) -> str:
    """SQL (after a WHERE, each part led by AND) keeping the rows of one kind of the outline
    that meet its own conditions, of one task or step, made (an answer: set) within `since`
    (inclusive) and `until` (exclusive); its values added to `params`."""
    o = OUTLINE_SQL[kind]
    where = o.where
    if task_id is not None:
        column = "task_id" if kind == "step" else "id"
        where += f" AND {o.alias}.{column} = {param(params, task_id)}"
    if step_id is not None:
        where += f" AND {o.alias}.id = {param(params, step_id)}"
    if since is not None:
        where += f" AND {o.alias}.{o.stamp} >= {param(params, since)}"
    if until is not None:
        where += f" AND {o.alias}.{o.stamp} < {param(params, until)}"
    return where


class TaskReads(RowReader):
    """The task tracker's reads (a part both stores hold)."""

    def outline_rows(
        self,
        kind: str,
        *,
        task_id: str | None = None,
        step_id: str | None = None,
        limit: int,
    ) -> list[tuple[Any, ...]]:
        """The newest `limit` rows of one kind of the outline (OUTLINE_SQL's columns), of
        one task or step if given."""
        o = OUTLINE_SQL[kind]
        params: list[Any] = [self.space]
        where = outline_where(kind, task_id, step_id, params)
        rows = self._rows(
            f"SELECT {o.columns} FROM {o.table} {o.alias} WHERE {o.alias}.space = $1{where}"
            f" ORDER BY {o.alias}.{o.stamp} DESC, {o.alias}.id LIMIT {param(params, limit)}",
            params,
        )
        return [tuple(r) for r in rows]

    def _outline_described(
        self, found: Sequence[tuple[str, str]]
    ) -> dict[tuple[str, str], tuple[Any, ...]]:
        """The rows (OUTLINE_SQL's columns) of these records (kind, id), by (kind, id): one
        read of each kind's table by its key, no document read again (a planner without
        statistics, on a young PostgreSQL table, joined them the slow way round)."""
        by_kind: dict[str, list[str]] = {}
        for kind, ident in found:
            by_kind.setdefault(kind, []).append(ident)
        described: dict[tuple[str, str], tuple[Any, ...]] = {}
        for kind, ids in by_kind.items():
            o = OUTLINE_SQL[kind]
            rows = self._rows(
                f"SELECT {o.columns} FROM {o.table} {o.alias} WHERE {o.alias}.space = $1"
                f" AND {o.alias}.id IN ({numbered(len(ids), 2)})",
                [self.space, *ids],
            )
            described.update(((kind, r[0]), tuple(r)) for r in rows)
        return described

    def get_plan(self, task_id: str, *, include_removed: bool = False) -> tuple[PlanItem, ...]:
        """Return a task's steps in plan order; removed steps last when asked for."""
        # Current steps have unique ordinals; removed ones (ordinal NULL) follow by time.
        where = (
            " ORDER BY removed, ordinal, updated_at"
            if include_removed
            else (" AND removed = 0 ORDER BY ordinal")
        )
        rows = self._rows(
            f"SELECT {_STEP_COLUMNS} FROM plan_items WHERE task_id = $1 AND space = $2{where}",
            (task_id, self.space),
        )
        return tuple(_step(r) for r in rows)

    def get_task(self, task_id: str) -> Task:
        """Return one task with its current plan (one query: the task joined to its steps)."""
        rows = self._tuples(_TASK_WITH_PLAN, (task_id, self.space))
        if not rows:
            raise NotFoundError("task", task_id)
        return _tasks_with_plans(rows)[0]

    def get_task_status(self, task_id: str) -> TaskStatus:
        """Return just a task's status: the hot write path's only check."""
        rows = self._rows(
            "SELECT status FROM tasks WHERE id = $1 AND space = $2", (task_id, self.space)
        )
        if not rows:
            raise NotFoundError("task", task_id)
        return TaskStatus(rows[0]["status"])

    def get_task_steps(self, task_id: str) -> tuple[TaskStatus, tuple[str, ...]]:
        """Return a task's status and its current steps' ids in plan order: what a write
        naming a step checks, in one read (not the task, nor its steps' other columns)."""
        rows = self._rows(
            "SELECT t.status, p.id FROM tasks t LEFT JOIN plan_items p ON p.task_id = t.id"
            " AND p.removed = 0 WHERE t.id = $1 AND t.space = $2 ORDER BY p.ordinal",
            (task_id, self.space),
        )
        if not rows:
            raise NotFoundError("task", task_id)
        ids = tuple(r[1] for r in rows)
        return TaskStatus(rows[0][0]), ids if ids[0] is not None else ()

    def list_tasks(
        self, statuses: tuple[TaskStatus, ...] = (), *, include_archived: bool = False
    ) -> list[Task]:
        """Return tasks, most recently updated first, each with its plan (one query: the
        tasks joined to their steps, so a listing costs the same at any number of tasks)."""
        sql = f"{_TASKS_WITH_PLANS} WHERE t.space = $1"
        params: list[Any] = [self.space]
        if statuses:
            sql += f" AND t.status IN ({param_list(params, [s.value for s in statuses])})"
        if not include_archived:
            sql += " AND t.archived = 0"
        sql += " ORDER BY t.updated_at DESC, t.id, p.ordinal"
        return _tasks_with_plans(self._tuples(sql, params))

    def get_step(self, step_id: str) -> PlanItem:
        """Return one plan item by id."""
        rows = self._rows(
            f"SELECT {_STEP_COLUMNS} FROM plan_items WHERE id = $1 AND space = $2",
            (step_id, self.space),
        )
        if not rows:
            raise NotFoundError("step", step_id)
        return _step(rows[0])

    def get_action(self, action_id: str) -> Action:
        """Return one action by id."""
        rows = self._rows(
            "SELECT * FROM actions WHERE id = $1 AND space = $2", (action_id, self.space)
        )
        if not rows:
            raise NotFoundError("action", action_id)
        return action_from_row(rows[0])

    def action_commands(
        self, action_ids: Sequence[str], *, failed: bool = False
    ) -> dict[str, str | None]:
        """Return the command of each action named that exists (that failed or timed out,
        with `failed`), by id (one read)."""
        if not action_ids:
            return {}
        marks = numbered(len(action_ids), 2)
        only = " AND status IN ('failed', 'timeout')" if failed else ""
        rows = self._rows(
            f"SELECT id, command FROM actions WHERE space = $1 AND id IN ({marks}){only}",
            (self.space, *action_ids),
        )
        return {r["id"]: r["command"] for r in rows}

    def list_actions(
        self, task_id: str, *, plan_item_id: str | None = None, limit: int | None = None
    ) -> list[Action]:
        """Return a task's actions, newest first."""
        sql = f"SELECT {ACTION_SELECT} FROM actions WHERE task_id = $1 AND space = $2"
        params: list[Any] = [task_id, self.space]
        if plan_item_id is not None:
            sql += f" AND plan_item_id = {param(params, plan_item_id)}"
        sql += " ORDER BY created_at DESC, seq DESC"
        return actions_in_order(self._tuples(*limited(sql, params, limit)))

    def linked_actions(self, action_ids: Sequence[str]) -> dict[str, str | None]:
        """Which of these actions an error entry names as its source: each with None while
        such an entry is active, else when the last of them was closed."""
        if not action_ids:
            return {}
        marks = numbered(len(action_ids), 2)
        rows = self._rows(
            # CASE, not max() of a comparison: PostgreSQL has no max of booleans.
            "SELECT s.source_id, MAX(CASE WHEN e.status = 'active' THEN 1 ELSE 0 END) AS open,"
            " MAX(COALESCE(e.resolved_at, e.updated_at)) AS closed_at"
            " FROM entry_sources s JOIN entries e ON e.id = s.entry_id AND e.space = s.space"
            " WHERE s.space = $1 AND s.kind = 'action' AND e.type = 'error'"
            f" AND s.source_id IN ({marks}) GROUP BY s.source_id",
            (self.space, *action_ids),
        )
        return {r["source_id"]: None if r["open"] else r["closed_at"] for r in rows}

    def list_action_logs(self, action_id: str) -> list[ActionLog]:
        """Return an action's log lines, oldest first."""
        rows = self._rows(
            "SELECT * FROM action_logs WHERE action_id = $1 AND space = $2"
            " ORDER BY created_at, seq",
            (action_id, self.space),
        )
        return [_log(r) for r in rows]

    def list_messages(self, task_id: str, *, limit: int | None = None) -> list[Message]:
        """Return a task's messages, newest first."""
        rows = self._tuples(
            *limited(
                f"SELECT {_MESSAGE_COLUMNS} FROM task_messages WHERE task_id = $1 AND space = $2"
                " ORDER BY created_at DESC, seq DESC",
                (task_id, self.space),
                limit,
            )
        )
        return _messages(rows)

    def get_message(self, message_id: str) -> Message:
        """Return one task message by id."""
        rows = self._tuples(
            f"SELECT {_MESSAGE_COLUMNS} FROM task_messages WHERE id = $1 AND space = $2",
            (message_id, self.space),
        )
        if not rows:
            raise NotFoundError("message", message_id)
        return _messages(rows[:1])[0]

    def file_changes(self, task_id: str, *, newest: int | None = 5) -> FileChanges:
        """Summarise the files a task created or modified."""
        with self.transaction():
            totals = self._rows(
                "SELECT sum(created), count(*) - sum(created), max(last_at) FROM task_files"
                " WHERE task_id = $1 AND space = $2",
                (task_id, self.space),
            )[0]
            paths = self._rows(
                *limited(
                    "SELECT path FROM task_files WHERE task_id = $1 AND space = $2"
                    " ORDER BY last_at DESC, path",
                    (task_id, self.space),
                    newest,
                )
            )
        return FileChanges(
            created=totals[0] or 0,
            modified=totals[1] or 0,
            last_change=totals[2],
            newest=tuple(r[0] for r in paths),
        )
