"""Reads for search over what was recorded beyond the archive: task messages, commands with
their output (`records_fts`, over `record_docs`) and conversation turns
(`turns_fts`). Archive entries are searched by `ArchiveReads.search_entries`; the facade
merges the kinds.

`fts5_match` compiles a structured `search.Query` into FTS5's query language; no other
module sees that language. Each index is ranked with bm25 among its newest SEARCH_WINDOW
matches, as entries are: FTS5 walks matches newest first cheaply, while bm25 costs a little
for every match it ranks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from clew.models import Action, RecordHit
from clew.search import Query, Term
from clew.store.migrations import OUTLINE_TABLES, outline_text, record_text
from clew.store.rows import RowReader, placeholders
from clew.store.sqlite_tasks import outline_joins
from clew.store.sqlite_trace import actions_from_rows

SEARCH_WINDOW = 5000
COMMON_PROBE = 1000  # matches of a word among the newest turns that tell it is common
COMMON_SHARE = 0.15  # the share of the newest turns holding a word that makes it common
SPAN_BLOCK = 1024  # turn numbers per block of a time's ranges (_time_spans)
MAX_SPANS = 8
SPAN_TURNS = 10_000  # a time's turns read to find their ranges, at most
# bm25 weights of records_fts's columns: title (summary and command), body (stdout or the
# message), stderr.
_BM25 = "bm25(records_fts, 3.0, 1.0, 1.0)"
_TITLE_CHARS = 200
# What `record_docs` holds a document of: each kind and its table.
RECORD_TABLES = {"action": "actions", "message": "task_messages", "decision": "trace_decisions"}


def fts5_match(query: Query) -> str:
    """The FTS5 MATCH expression of a query. Every term becomes an FTS5 string
    (double-quoted, inner quotes doubled), which FTS5 reads as a phrase of the tokens it
    contains: no user text can be read as an operator."""
    include = [_phrase(t) for t in query.include]
    joined = (" OR " if query.any_terms else " AND ").join(include)
    if len(include) > 1 and query.exclude:
        joined = f"({joined})"
    return " NOT ".join([joined, *(_phrase(t) for t in query.exclude)])


def _phrase(term: Term) -> str:
    return '"' + term.text.replace('"', '""') + '"' + ("*" if term.prefix else "")


def task_record_kinds(
    kinds: Sequence[str], step_id: str | None, session_ids: Sequence[str] | None
) -> list[str]:
    """The kinds asked for that `record_docs` holds and the filters leave: none within
    sessions (turns only), and no messages within a step (a message has none)."""
    if session_ids is not None:
        return []
    return [k for k in ("message", "action", "decision")
            if k in kinds and not (k == "message" and step_id is not None)]  # fmt: skip


def _first_line(text: str | None) -> str:
    return (text or "").strip().split("\n", 1)[0][:_TITLE_CHARS]


class SearchReads(RowReader):
    """Reads of search over messages, commands and turns (mixed into SQLiteStore)."""

    if TYPE_CHECKING:  # the task reads give it

        def _outline_described(
            self, found: Sequence[tuple[str, str]]
        ) -> dict[tuple[str, str], tuple[Any, ...]]: ...

    def _ranked(
        self,
        index: str,
        base: str,
        params: Sequence[Any],
        score: str,
        columns: str,
        limit: int,
    ) -> list[tuple[float, Any]]:
        """The best `limit` rows of `base` (FROM ... WHERE) among its newest matches, as
        (score, row of `columns`), best first. Ranked first and described after: a snippet
        reads the row's text, so it is made for the rows shown, not for every match."""
        with self.transaction():
            low = self._window_floor(index, base, params)
            best = self._rows(
                f"SELECT {index}.rowid, {score} AS score {base} AND {index}.rowid >= ?"
                " ORDER BY score LIMIT ?",
                [*params, low, limit],
            )
            if not best:
                return []
            seqs = [r[0] for r in best]
            rows = self._rows(
                f"SELECT {index}.rowid AS seq, {columns} {base}{_among(index, seqs)}",
                [*params, *seqs, min(seqs), max(seqs)],
            )
        found = {r["seq"]: r for r in rows}
        return [(r[1], found[r[0]]) for r in best if r[0] in found]

    def _window_floor(self, index: str, base: str, params: Sequence[Any]) -> int:
        """The lowest rowid among the newest SEARCH_WINDOW matches of `base` (0 when fewer
        match): ranking reads only the window, so a common word costs the same at any size."""
        floor = self._rows(
            f"SELECT {index}.rowid {base} ORDER BY {index}.rowid DESC LIMIT 1 OFFSET ?",
            [*params, SEARCH_WINDOW - 1],
        )
        return int(floor[0][0]) if floor else 0

    def search_records(
        self,
        query: Query,
        kinds: Sequence[str],
        *,
        task_id: str | None = None,
        step_id: str | None = None,
        session_ids: Sequence[str] | None = None,
        since: str | None = None,
        until: str | None = None,
        limit: int,
    ) -> list[RecordHit]:
        """bm25-ranked messages, commands, trace decisions and turns matching a query,
        each kind ranked within its own index."""
        match = fts5_match(query)
        hits: list[RecordHit] = []
        task_kinds = task_record_kinds(kinds, step_id, session_ids)
        if task_kinds:
            hits += self._search_task_records(
                match, task_kinds, task_id, step_id, since, until, limit
            )
        if "turn" in kinds and step_id is None and session_ids != []:
            turn_match = fts5_match(self._uncommon(query))
            hits += self._search_turns(turn_match, task_id, session_ids, since, until, limit)
        return hits

    def records_between(
        self,
        kinds: Sequence[str],
        *,
        since: str,
        until: str,
        task_id: str | None = None,
        session_ids: Sequence[str] | None = None,
        limit: int,
    ) -> list[tuple[str, str]]:
        """Records of a time, whatever their words, newest first (the time indexes)."""
        return records_between(self, self.space, kinds, since=since, until=until,
                               task_id=task_id, session_ids=session_ids, limit=limit)  # fmt: skip

    def _uncommon(self, query: Query) -> Query:
        """An OR query without the terms that fill the newest turns (COMMON_PROBE matches
        within COMMON_PROBE / COMMON_SHARE turns), when a rarer term is left. In a large
        store such a word matches most turns: ranking its matches costs most of a search,
        fills the window of newest matches with turns that only say that word, and bm25
        gives it next to no weight anyway. The ranking still counts it (coverage). A store
        with fewer than COMMON_PROBE turns holding a word never drops it."""
        if not query.any_terms or query.exclude or len(query.include) < 2:
            return query
        ((newest,),) = self._rows("SELECT max(seq) FROM turns")
        if newest is None or newest < COMMON_PROBE:
            return query
        common = set()
        for term in query.include:
            probe = self._rows(
                "SELECT rowid FROM turns_fts WHERE turns_fts MATCH ?"
                " ORDER BY rowid DESC LIMIT 1 OFFSET ?",
                (_phrase(term), COMMON_PROBE - 1),
            )
            if probe and COMMON_SHARE * (newest - probe[0][0] + 1) <= COMMON_PROBE:
                common.add(term)
        kept = tuple(t for t in query.include if t not in common)
        if not common or not kept:
            return query
        return query._replace(include=kept, terms=tuple(t.text for t in kept))

    def _search_task_records(
        self,
        match: str,
        kinds: Sequence[str],
        task_id: str | None,
        step_id: str | None,
        since: str | None,
        until: str | None,
        limit: int,
    ) -> list[RecordHit]:
        where, params = _time("k.", since, until)
        if task_id is not None:
            where += " AND k.task_id = ?"
            params.append(task_id)
        if step_id is not None:
            where += " AND coalesce(a.plan_item_id, d.plan_item_id) = ?"
            params.append(step_id)
        base = (
            "FROM records_fts JOIN record_docs k ON k.seq = records_fts.rowid"
            " LEFT JOIN actions a ON k.kind = 'action' AND a.id = k.ref_id"
            " LEFT JOIN task_messages m ON k.kind = 'message' AND m.id = k.ref_id"
            " LEFT JOIN trace_decisions d ON k.kind = 'decision' AND d.id = k.ref_id"
            f" WHERE records_fts MATCH ? AND k.space = ? AND k.kind IN ({placeholders(kinds)})"
            f"{where}"
        )
        columns = (
            "k.kind, k.ref_id, k.task_id, k.created_at,"
            # Output that is not UTF-8 is indexed as it is: read the snippet as bytes.
            " CAST(snippet(records_fts, -1, '[', ']', '…', 16) AS BLOB) AS snip,"
            " a.summary, a.command, a.status, a.exit_code,"
            " coalesce(a.plan_item_id, d.plan_item_id) AS plan_item_id, m.role, d.outcome,"
            f" substr(coalesce(m.content, d.action), 1, {_TITLE_CHARS}) AS head"
        )
        rows = self._ranked("records_fts", base, [match, self.space, *kinds, *params], _BM25,
                            columns, limit)  # fmt: skip
        seqs = [r["seq"] for _, r in rows if r["kind"] in ("action", "decision")]
        in_stdout, in_stderr = (
            self._matching(match, column, seqs) for column in ("body", "stderr")
        )
        hits = []
        for score, r in rows:
            if r["kind"] == "action":
                code = "" if r["exit_code"] is None else f" exit {r['exit_code']}"
                label = f"{r['status']}{code}"
                title = _first_line(r["command"] or r["summary"])
                field = (
                    "stdout" if r["seq"] in in_stdout else
                    "stderr" if r["seq"] in in_stderr else "command"
                )  # fmt: skip
            elif r["kind"] == "decision":
                label, title = f"decision {r['outcome']}", _first_line(r["head"])
                field = "outcome" if r["seq"] in in_stdout else "action"
            else:
                label, title, field = r["role"], _first_line(r["head"]), "content"
            hit = RecordHit(
                r["kind"], r["ref_id"], r["task_id"], None, None, r["created_at"], label,
                title, _decoded(r["snip"]), score, field, step_id=r["plan_item_id"],
            )  # fmt: skip
            hits.append(hit)
        return hits

    def _matching(self, match: str, column: str, seqs: Sequence[int]) -> set[int]:
        """Which of these records match in one column: the index alone answers, no text is
        read (a snippet per column would read every record's output again)."""
        if not seqs:
            return set()
        rows = self._rows(
            f"SELECT rowid FROM records_fts WHERE records_fts MATCH ?{_among('records_fts', seqs)}",
            [f"{{{column}}} : ({match})", *seqs, min(seqs), max(seqs)],
        )
        return {r[0] for r in rows}

    def _search_turns(
        self,
        match: str,
        task_id: str | None,
        session_ids: Sequence[str] | None,
        since: str | None,
        until: str | None,
        limit: int,
    ) -> list[RecordHit]:
        where, params = _time("+t.", since, until)  # `+`: walk the index, not turns_time
        if task_id is not None:
            where += " AND s.task_id = ?"
            params.append(task_id)
        if session_ids is not None:
            where += f" AND t.session_id IN ({placeholders(session_ids)})"
            params += session_ids
        spans: list[tuple[int, int]] = [(0, 2**62)]
        if since is not None or until is not None:
            # The numbers of the time's turns bound the walk (turns_time): FTS5 seeks to
            # them, instead of testing the time of every turn that holds a common word.
            spans = self._time_spans(since, until)
        base = (
            "FROM turns_fts JOIN turns t ON t.seq = turns_fts.rowid"
            " JOIN sessions s ON s.id = t.session_id"
            f" WHERE turns_fts MATCH ? AND +t.space = ?{where}"
            " AND turns_fts.rowid BETWEEN ? AND ?"
        )
        columns = (
            "t.id, s.task_id, t.session_id, t.turn, t.created_at, t.role, t.tool_name,"
            f" substr(t.content, 1, {_TITLE_CHARS}) AS head,"
            " snippet(turns_fts, 0, '[', ']', '…', 16) AS snip"
        )
        rows = []
        with self.transaction():
            for low, high in spans:
                rows += self._ranked("turns_fts", base, [match, self.space, *params, low, high],
                                     "bm25(turns_fts)", columns, limit)  # fmt: skip
        if len(spans) > 1:
            rows = sorted(rows, key=lambda r: (r[0], -r[1]["seq"]))[:limit]
        hits = []
        for score, r in rows:
            label = r["role"] + (f" ({r['tool_name']})" if r["tool_name"] else "")
            hit = RecordHit(
                "turn", r["id"], r["task_id"], r["session_id"], r["turn"], r["created_at"],
                label, _first_line(r["head"]), r["snip"], score, "content",
            )  # fmt: skip
            hits.append(hit)
        return hits

    def _time_spans(self, since: str | None, until: str | None) -> list[tuple[int, int]]:
        """The ranges of turn numbers (`seq`) that hold the turns of a time, at most
        MAX_SPANS. Turns appended as they happen make one narrow range; turns written out
        of time order (an import, a late copy) would make min..max span most of the index,
        and each match in it costs a test of its time: the time's turns in blocks of
        SPAN_BLOCK numbers, neighbouring blocks joined, cut that to the blocks that hold
        any (one read of the time index)."""
        rows = self._rows(
            f"SELECT seq / {SPAN_BLOCK} AS block, min(seq), max(seq), count(*) FROM (SELECT seq"
            " FROM turns WHERE space = ? AND created_at >= ? AND created_at < ? LIMIT ?)"
            " GROUP BY block ORDER BY block",
            (self.space, since or "", until or "\uffff", SPAN_TURNS + 1),
        )
        if sum(r[3] for r in rows) > SPAN_TURNS:
            # A long time: reading its turns would cost more than testing each match's
            # time (32 ms for a week of a million turns against 3 ms for a day).
            return [(0, 2**62)]
        spans: list[list[int]] = []
        for block, low, high, _ in rows:
            if spans and block - spans[-1][2] <= 1:
                spans[-1][1:] = [high, block]
            else:
                spans.append([low, high, block])
        while len(spans) > MAX_SPANS:  # join the two nearest
            i = min(range(len(spans) - 1), key=lambda n: spans[n + 1][0] - spans[n][1])
            spans[i : i + 2] = [[spans[i][0], spans[i + 1][1], spans[i + 1][2]]]
        return [(low, high) for low, high, _ in spans]

    def search_outline(
        self,
        query: Query,
        kinds: Sequence[str],
        *,
        task_id: str | None = None,
        step_id: str | None = None,
        since: str | None = None,
        until: str | None = None,
        limit: int,
    ) -> list[tuple[str, float, tuple[Any, ...]]]:
        """The outline's records matching a query, best first (bm25 over `outline_fts`,
        one index for every kind, so their scores compare), as (kind, score, row)."""
        if not kinds:
            return []
        joins, where, params = outline_joins(kinds, task_id, step_id, since, until,
                                             plain="+", same_space=False)  # fmt: skip
        # `+`: the index drives; handed each document of a kind to look up, FTS5 would
        # open the query's terms again for each (50x the cost).
        base = (
            f"FROM outline_fts JOIN outline_docs d ON d.seq = outline_fts.rowid{joins}"
            f" WHERE outline_fts MATCH ? AND +d.space = ?{where}"
        )
        params = [fts5_match(query), self.space, *params]
        with self.transaction():
            low = self._window_floor("outline_fts", base, params)
            best = self._rows(
                f"SELECT d.kind, d.ref_id, bm25(outline_fts) AS score {base}"
                " AND outline_fts.rowid >= ? ORDER BY score LIMIT ?",
                [*params, low, limit],
            )
            rows = self._outline_described([(r[0], r[1]) for r in best])
        return [(r[0], r[2], rows[(r[0], r[1])]) for r in best if (r[0], r[1]) in rows]

    def outline_check(self, space: str | None = None) -> str | None:
        """Check the outline's search documents of one space (of the whole file without
        one): one for each row and kind, holding the text its trigger makes, then FTS5's
        integrity check of the index against them; None when sound."""
        sql, params = outline_check_sql(space, differs="IS NOT", same_space="")
        fault = outline_fault(tuple(self._rows(sql, params)[0]))
        if fault is not None:
            return fault
        return self.fts_check("outline_fts")

    def failed_actions_matching(self, query: Query, *, limit: int = 50) -> list[Action]:
        """Failed commands whose command or output matches a query, newest first (the
        caller confirms the text is there verbatim)."""
        rows = self._rows(
            "SELECT a.* FROM records_fts JOIN record_docs k ON k.seq = records_fts.rowid"
            " JOIN actions a ON a.id = k.ref_id WHERE records_fts MATCH ? AND k.space = ?"
            " AND k.kind = 'action' AND (a.exit_code <> 0 OR a.status IN ('failed', 'timeout'))"
            " ORDER BY records_fts.rowid DESC LIMIT ?",
            (fts5_match(query), self.space, limit),
        )
        return actions_from_rows(rows)

    def records_check(self, space: str | None = None) -> str | None:
        """Check the records index of one space (of the whole file without one): one
        document for each message, command and trace decision, holding its text as the
        triggers make it, then FTS5's integrity check of the index against the documents;
        None when sound."""
        texts = {kind: record_text(kind, "r.", errors=True) for kind in RECORD_TABLES}
        sql, params = records_check_sql(texts, space, differs="IS NOT", same_space="")
        fault = records_fault(tuple(self._rows(sql, params)[0]))
        if fault is not None:
            return fault
        return self.fts_check("records_fts")


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
            "SELECT kind, ref_id FROM record_docs WHERE space = ? AND kind = ?"
            " AND created_at >= ? AND created_at < ?"
        )
        params: list[Any] = [space, kind, since, until]
        if task_id is not None:
            sql += " AND task_id = ?"
            params.append(task_id)
        rows = reader._rows(sql + " ORDER BY created_at DESC LIMIT ?", [*params, limit])
        found += [(r[0], r[1]) for r in rows]
    if "turn" in kinds and session_ids != []:
        sql = (
            "SELECT t.id FROM turns t JOIN sessions s ON s.id = t.session_id"
            " WHERE t.space = ? AND t.created_at >= ? AND t.created_at < ?"
        )
        params = [space, since, until]
        if task_id is not None:
            sql += " AND s.task_id = ?"
            params.append(task_id)
        if session_ids is not None:
            sql += f" AND t.session_id IN ({placeholders(session_ids)})"
            params += session_ids
        rows = reader._rows(sql + " ORDER BY t.created_at DESC LIMIT ?", [*params, limit])
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
    d_in = " AND d.space = ?" if space is not None else ""
    r_in = " AND r.space = ?" if space is not None else ""
    counts: list[str] = []
    params: list[str] = []
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
        params += [space] * 3 if space is not None else []
    kinds = ", ".join(f"'{k}'" for k in RECORD_TABLES)
    counts.append(f"(SELECT count(*) FROM record_docs d WHERE d.kind NOT IN ({kinds}){d_in})")
    params += [space] if space is not None else []
    return f"SELECT {', '.join(counts)}", params


def outline_check_sql(
    space: str | None, *, differs: str, same_space: str, newline: str = "char(10)"
) -> tuple[str, list[str]]:
    """The statement counting, per kind of the outline, the rows without their document,
    the documents without their row and those whose text is not what the row makes, then
    documents of no known kind (both backends' check, as `records_check_sql`)."""
    d_in = " AND d.space = ?" if space is not None else ""
    r_in = " AND r.space = ?" if space is not None else ""
    counts: list[str] = []
    params: list[str] = []
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
        params += [space] * 3 if space is not None else []
    kinds = ", ".join(f"'{k}'" for k in OUTLINE_TABLES)
    counts.append(f"(SELECT count(*) FROM outline_docs d WHERE d.kind NOT IN ({kinds}){d_in})")
    params += [space] if space is not None else []
    return f"SELECT {', '.join(counts)}", params


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


def _among(index: str, seqs: Sequence[int]) -> str:
    """SQL keeping an index's matches to these rows (parameters: the rows, then their least
    and greatest). FTS5 takes `rowid IN (...)` as one lookup per row, each opening the
    query's terms again (60 rows cost 30 ms on a small store); `+` leaves the list a filter
    and the range bounds the walk instead (1 ms)."""
    return f" AND +{index}.rowid IN ({placeholders(seqs)}) AND {index}.rowid BETWEEN ? AND ?"


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
