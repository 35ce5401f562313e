"""Reads for search over what was recorded beyond the archive: task messages, commands with
their output (`records_fts`, over the `record_docs` view) and conversation turns
(`turns_fts`). Archive entries are searched by `ArchiveReads.search_entries`; the facade
merges the kinds.

Each index is ranked with bm25 among its newest SEARCH_WINDOW matches, as entries are: FTS5
walks matches newest first cheaply, while bm25 costs a little for every match it ranks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from clew.errors import StoreError
from clew.models import Action, RecordHit
from clew.store.rows import RowReader, placeholders
from clew.store.sqlite_trace import action_from_row

SEARCH_WINDOW = 5000
# bm25 weights of records_fts's columns: title (summary and command), body (stdout or the
# message), stderr.
_BM25 = "bm25(records_fts, 3.0, 1.0, 1.0)"
_TITLE_CHARS = 200


def _first_line(text: str | None) -> str:
    return (text or "").strip().split("\n", 1)[0][:_TITLE_CHARS]


def _matched(column: int) -> str:
    """SQL: whether records_fts's column matched (its snippet marks a hit with char(1))."""
    return f"instr(snippet(records_fts, {column}, char(1), char(2), '', 1), char(1)) > 0"


class SearchReads(RowReader):
    """Reads of search over messages, commands and turns (mixed into SQLiteStore)."""

    def _ranked(
        self, index: str, base: str, params: Sequence[Any], columns: str, limit: int
    ) -> list[Any]:
        """The best `limit` rows of `base` (FROM ... WHERE) among its newest matches."""
        with self.transaction():
            floor = self._rows(
                f"SELECT {index}.rowid {base} ORDER BY {index}.rowid DESC LIMIT 1 OFFSET ?",
                [*params, SEARCH_WINDOW - 1],
            )
            low = floor[0][0] if floor else 0
            return self._rows(
                f"SELECT {columns} {base} AND {index}.rowid >= ? ORDER BY score LIMIT ?",
                [*params, low, limit],
            )

    def search_records(
        self,
        match: str,
        kinds: Sequence[str],
        *,
        task_id: str | None = None,
        since: str | None = None,
        until: str | None = None,
        limit: int,
    ) -> list[RecordHit]:
        """bm25-ranked messages, commands and turns matching an FTS5 expression (built by
        search.parse), each kind ranked within its own index."""
        hits: list[RecordHit] = []
        task_kinds = [k for k in kinds if k in ("message", "action")]
        if task_kinds:
            hits += self._search_task_records(match, task_kinds, task_id, since, until, limit)
        if "turn" in kinds:
            hits += self._search_turns(match, task_id, since, until, limit)
        return hits

    def _search_task_records(
        self,
        match: str,
        kinds: Sequence[str],
        task_id: str | None,
        since: str | None,
        until: str | None,
        limit: int,
    ) -> list[RecordHit]:
        where, params = _time("k.", since, until)
        if task_id is not None:
            where += " AND k.task_id = ?"
            params.append(task_id)
        base = (
            "FROM records_fts JOIN record_keys k ON k.seq = records_fts.rowid"
            " LEFT JOIN actions a ON k.kind = 'action' AND a.id = k.ref_id"
            " LEFT JOIN task_messages m ON k.kind = 'message' AND m.id = k.ref_id"
            f" WHERE records_fts MATCH ? AND k.space = ? AND k.kind IN ({placeholders(kinds)})"
            f"{where}"
        )
        columns = (
            f"k.kind, k.ref_id, k.task_id, k.created_at, {_BM25} AS score,"
            # Output that is not UTF-8 is indexed as it is: read the snippet as bytes.
            " CAST(snippet(records_fts, -1, '[', ']', '…', 16) AS BLOB) AS snip,"
            f" {_matched(1)} AS in_body, {_matched(2)} AS in_stderr,"
            " a.summary, a.command, a.status, a.exit_code, m.role,"
            f" substr(m.content, 1, {_TITLE_CHARS}) AS head"
        )
        rows = self._ranked("records_fts", base, [match, self.space, *kinds, *params], columns,
                            limit)  # fmt: skip
        hits = []
        for r in rows:
            if r["kind"] == "action":
                code = "" if r["exit_code"] is None else f" exit {r['exit_code']}"
                label = f"{r['status']}{code}"
                title = _first_line(r["command"] or r["summary"])
                field = "stdout" if r["in_body"] else "stderr" if r["in_stderr"] else "command"
            else:
                label, title, field = r["role"], _first_line(r["head"]), "content"
            hit = RecordHit(
                r["kind"], r["ref_id"], r["task_id"], None, None, r["created_at"], label,
                title, _decoded(r["snip"]), r["score"], field,
            )  # fmt: skip
            hits.append(hit)
        return hits

    def _search_turns(
        self,
        match: str,
        task_id: str | None,
        since: str | None,
        until: str | None,
        limit: int,
    ) -> list[RecordHit]:
        where, params = _time("t.", since, until)
        if task_id is not None:
            where += " AND s.task_id = ?"
            params.append(task_id)
        base = (
            "FROM turns_fts JOIN turns t ON t.seq = turns_fts.rowid"
            " JOIN sessions s ON s.id = t.session_id"
            f" WHERE turns_fts MATCH ? AND t.space = ?{where}"
        )
        columns = (
            "t.id, s.task_id, t.session_id, t.turn, t.created_at, t.role, t.tool_name,"
            f" substr(t.content, 1, {_TITLE_CHARS}) AS head, bm25(turns_fts) AS score,"
            " snippet(turns_fts, 0, '[', ']', '…', 16) AS snip"
        )
        rows = self._ranked("turns_fts", base, [match, self.space, *params], columns, limit)
        hits = []
        for r in rows:
            label = r["role"] + (f" ({r['tool_name']})" if r["tool_name"] else "")
            hit = RecordHit(
                "turn", r["id"], r["task_id"], r["session_id"], r["turn"], r["created_at"],
                label, _first_line(r["head"]), r["snip"], r["score"], "content",
            )  # fmt: skip
            hits.append(hit)
        return hits

    def failed_actions_matching(self, match: str, *, limit: int = 50) -> list[Action]:
        """Failed commands whose command or output matches an FTS5 expression, newest
        first (the caller confirms the text is there verbatim)."""
        rows = self._rows(
            "SELECT a.* FROM records_fts JOIN record_keys k ON k.seq = records_fts.rowid"
            " JOIN actions a ON a.id = k.ref_id WHERE records_fts MATCH ? AND k.space = ?"
            " AND k.kind = 'action' AND (a.exit_code <> 0 OR a.status IN ('failed', 'timeout'))"
            " ORDER BY records_fts.rowid DESC LIMIT ?",
            (match, self.space, limit),
        )
        return [action_from_row(r) for r in rows]

    def records_check(self) -> str | None:
        """Check the records index: exactly one key for each message and command, then FTS5's
        integrity check of the index against them; None when it is sound."""
        unkeyed, stray = self._rows(
            "SELECT (SELECT count(*) FROM actions a WHERE NOT EXISTS (SELECT 1 FROM record_keys"
            " k WHERE k.kind = 'action' AND k.ref_id = a.id)) + (SELECT count(*) FROM"
            " task_messages m WHERE NOT EXISTS (SELECT 1 FROM record_keys k WHERE"
            " k.kind = 'message' AND k.ref_id = m.id)), (SELECT count(*) FROM record_keys k"
            " WHERE NOT EXISTS (SELECT 1 FROM actions a WHERE k.kind = 'action' AND"
            " a.id = k.ref_id) AND NOT EXISTS (SELECT 1 FROM task_messages m WHERE"
            " k.kind = 'message' AND m.id = k.ref_id))"
        )[0]
        if unkeyed or stray:
            return (
                f"{unkeyed} message(s) or command(s) are not in the search index and"
                f" {stray} index key(s) name nothing"
            )
        try:
            self._rows("INSERT INTO records_fts (records_fts, rank) VALUES ('integrity-check', 1)")
        except StoreError as exc:
            return str(exc)
        return None


def _decoded(value: bytes | str | None) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value or ""


def _time(alias: str, since: str | None, until: str | None) -> tuple[str, list[Any]]:
    sql, params = "", []
    if since is not None:
        sql += f" AND {alias}created_at >= ?"
        params.append(since)
    if until is not None:
        sql += f" AND {alias}created_at < ?"
        params.append(until)
    return sql, params
