"""What search shares on both backends: the record kinds a search reads, the reads of a
time's records whatever their words, and the checks of the search documents (each backend
runs them with its own operators), over the portable connection (store/sql.py); and what a
text index is to the store that holds it (`TextIndex`, `IndexReads`): SQLite's FTS5 index
(sqlite_search.Fts5Index) and PostgreSQL's tsvector one (pg_search.TsIndex) are parts the
store holds and forwards its search methods to, not bases it inherits."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from clew.store.contract import TextSearch
from clew.store.migrations import OUTLINE_TABLES, outline_text
from clew.store.rows import RowReader, StoreHost
from clew.store.sql import param, param_list

if TYPE_CHECKING:
    from clew.store.portable.archive import ArchiveReads
    from clew.store.portable.tasks import TaskReads

TITLE_CHARS = 200
# What `record_docs` holds a document of: each kind and its table.
RECORD_TABLES = {"action": "actions", "message": "task_messages", "decision": "trace_decisions"}


class IndexReads(RowReader):
    """A text index's reads, through the store that holds it (its rows, transactions and
    space), and the store's parts it completes hits from: the archive's sources of entries
    and the tasks' descriptions of outline rows."""

    def __init__(self, store: StoreHost, archive: ArchiveReads, tasks: TaskReads) -> None:
        super().__init__(store)
        self._with_sources = archive._with_sources
        self._outline_described = tasks._outline_described


class TextIndex(TextSearch, Protocol):
    """A store's text index: the contract's search (contract.TextSearch), and the checks of
    its outline's and records' search documents that `verify` runs."""

    def outline_check(self, space: str | None = None) -> str | None:
        """What is wrong with the outline's search documents of a space (None: every space),
        or None when they match the rows."""
        ...

    def records_check(self, space: str | None = None) -> str | None:
        """What is wrong with the records' search documents of a space (None: every space),
        or None when they match the rows."""
        ...


def task_record_kinds(
    kinds: Sequence[str], step_id: str | None, session_ids: Sequence[str] | None
) -> list[str]:
    """The kinds asked for that `record_docs` holds and the filters leave: none within
    sessions (turns only), and no messages within a step (a message has none)."""
    if session_ids is not None:
        return []
    return [
        k
        for k in ("message", "action", "decision")
        if k in kinds and not (k == "message" and step_id is not None)
    ]


def first_line(text: str | None) -> str:
    return (text or "").strip().split("\n", 1)[0][:TITLE_CHARS]


def records_between(
    reader: RowReader,
    space: str,
    kinds: Sequence[str],
    *,
    since: str,
    until: str,
    task_id: str | None,
    session_ids: Sequence[str] | None,
    limit: int,
) -> list[tuple[str, str]]:
    """A space's records of a time, whatever their words, newest first (the time indexes):
    the same SQL on both backends, as the records' search documents are the same."""
    found: list[tuple[str, str]] = []
    for kind in task_record_kinds(kinds, None, session_ids):
        sql = (
            "SELECT kind, ref_id FROM record_docs WHERE space = $1 AND kind = $2"
            " AND created_at >= $3 AND created_at < $4"
        )
        params: list[Any] = [space, kind, since, until]
        if task_id is not None:
            sql += f" AND task_id = {param(params, task_id)}"
        rows = reader._rows(f"{sql} ORDER BY created_at DESC LIMIT {param(params, limit)}", params)
        found += [(r[0], r[1]) for r in rows]
    if "turn" in kinds and session_ids != []:
        sql = (
            "SELECT t.id FROM turns t JOIN sessions s ON s.id = t.session_id"
            " WHERE t.space = $1 AND t.created_at >= $2 AND t.created_at < $3"
        )
        params = [space, since, until]
        if task_id is not None:
            sql += f" AND s.task_id = {param(params, task_id)}"
        if session_ids is not None:
            sql += f" AND t.session_id IN ({param_list(params, session_ids)})"
        sql += f" ORDER BY t.created_at DESC LIMIT {param(params, limit)}"
        rows = reader._rows(sql, params)
        found += [("turn", r[0]) for r in rows]
    return found


def records_check_sql(
    texts: dict[str, tuple[str, str, str]], space: str | None, *, differs: str, same_space: str
) -> tuple[str, list[str]]:
    """The statement counting, per kind of record with documents, the records without one
    (unkeyed), the documents without their record (stray) and those whose text is not what
    the row makes (stale), then documents of no known kind: both backends' check, each
    with its SQL for a row's texts (`texts`, of alias `r.`), its "is not" operator and its
    join condition on the space (PostgreSQL's keys start with it)."""
    d_in = " AND d.space = $1" if space is not None else ""
    r_in = " AND r.space = $1" if space is not None else ""
    counts: list[str] = []
    for kind, table in RECORD_TABLES.items():
        title, body, stderr = texts[kind]
        on = f"d.kind = '{kind}'{same_space} AND d.ref_id = r.id"
        counts += [
            f"(SELECT count(*) FROM {table} r WHERE NOT EXISTS"
            f" (SELECT 1 FROM record_docs d WHERE {on}){r_in})",
            f"(SELECT count(*) FROM record_docs d WHERE d.kind = '{kind}' AND NOT EXISTS"
            f" (SELECT 1 FROM {table} r WHERE {on}){d_in})",
            f"(SELECT count(*) FROM record_docs d JOIN {table} r ON {on}"
            f" WHERE (d.title {differs} {title} OR d.body {differs} {body}"
            f" OR d.stderr {differs} {stderr}){d_in})",
        ]
    kinds = ", ".join(f"'{k}'" for k in RECORD_TABLES)
    counts.append(f"(SELECT count(*) FROM record_docs d WHERE d.kind NOT IN ({kinds}){d_in})")
    return f"SELECT {', '.join(counts)}", [space] if space is not None else []


def outline_check_sql(
    space: str | None, *, differs: str, same_space: str, newline: str = "char(10)"
) -> tuple[str, list[str]]:
    """The statement counting, per kind of the outline, the rows without their document,
    the documents without their row and those whose text is not what the row makes, then
    documents of no known kind (both backends' check, as `records_check_sql`)."""
    d_in = " AND d.space = $1" if space is not None else ""
    r_in = " AND r.space = $1" if space is not None else ""
    counts: list[str] = []
    for kind, table in OUTLINE_TABLES.items():
        on = f"d.kind = '{kind}'{same_space} AND d.ref_id = r.id"
        counts += [
            f"(SELECT count(*) FROM {table} r WHERE NOT EXISTS"
            f" (SELECT 1 FROM outline_docs d WHERE {on}){r_in})",
            f"(SELECT count(*) FROM outline_docs d WHERE d.kind = '{kind}' AND NOT EXISTS"
            f" (SELECT 1 FROM {table} r WHERE {on}){d_in})",
            f"(SELECT count(*) FROM outline_docs d JOIN {table} r ON {on}"
            f" WHERE d.body {differs} {outline_text(kind, 'r.', newline)}{d_in})",
        ]
    kinds = ", ".join(f"'{k}'" for k in OUTLINE_TABLES)
    counts.append(f"(SELECT count(*) FROM outline_docs d WHERE d.kind NOT IN ({kinds}){d_in})")
    return f"SELECT {', '.join(counts)}", [space] if space is not None else []


def outline_fault(found: tuple[int, ...]) -> str | None:
    """What the counts of `outline_check_sql` say is wrong, or None."""
    unkeyed, stray, stale = (sum(found[i:-1:3]) for i in range(3))
    stray += found[-1]
    if unkeyed or stray or stale:
        return (
            f"{unkeyed} task name(s), goal(s), step(s), answer(s), pattern(s) or guardrail(s)"
            f" are not in the search index, {stray} index document(s) name nothing and"
            f" {stale} differ from their row"
        )
    return None


def records_fault(found: tuple[int, ...]) -> str | None:
    """What the counts of `records_check_sql` say is wrong, or None."""
    unkeyed, stray, stale = (sum(found[i:-1:3]) for i in range(3))
    stray += found[-1]
    if unkeyed or stray or stale:
        return (
            f"{unkeyed} message(s), command(s) or decision(s) are not in the search index,"
            f" {stray} index document(s) name nothing and {stale} differ from their row"
        )
    return None


def time_conditions(alias: str, since: str | None, until: str | None, params: list[Any]) -> str:
    """The conditions on `alias`'s created_at of a time (either end open), their values
    added to `params`."""
    sql = ""
    if since is not None:
        sql += f" AND {alias}created_at >= {param(params, since)}"
    if until is not None:
        sql += f" AND {alias}created_at < {param(params, until)}"
    return sql
