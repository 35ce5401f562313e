"""Reads for search over what was recorded beyond the archive: task messages, commands with
their output (`records_fts`, over `record_docs`) and conversation turns
(`turns_fts`), and archive entries (`entries_fts`); the facade merges the kinds.

`fts5_match` compiles a structured `search.Query` into FTS5's query language; no other
module sees that language. Each index is ranked with bm25 among its newest SEARCH_WINDOW
matches, as entries are: FTS5 walks matches newest first cheaply, while bm25 costs a little
for every match it ranks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from clew.core.query import Query, Term
from clew.errors import StoreBusyError, StoreError
from clew.models import Action, EntryFilter, RecordHit, SearchHit, Turn
from clew.store.migrations import record_text
from clew.store.portable.archive import ENTRY_COLUMNS, ArchiveReads, entry_filter, entry_from_row
from clew.store.portable.conversations import TURN_COLUMNS, turn_from_row
from clew.store.portable.search import (
    RECORD_TABLES,
    TITLE_CHARS,
    IndexReads,
    first_line,
    outline_check_sql,
    outline_fault,
    records_between,
    records_check_sql,
    records_fault,
    task_record_kinds,
    time_conditions,
)
from clew.store.portable.tasks import TaskReads, outline_joins
from clew.store.portable.trace import actions_from_rows
from clew.store.rows import StoreHost
from clew.store.sql import param, param_list

SEARCH_WINDOW = 5000
_ENTRY_BM25 = "bm25(entries_fts, 4.0, 1.0, 2.0, 2.0)"  # summary, detail, tags, resolution
_E_COLUMNS = ", ".join(f"e.{c}" for c in ENTRY_COLUMNS)
_T_COLUMNS = ", ".join("t." + c.strip() for c in TURN_COLUMNS.split(","))
COMMON_PROBE = 1000  # matches of a word among the newest turns that tell it is common
COMMON_SHARE = 0.15  # the share of the newest turns holding a word that makes it common
SPAN_BLOCK = 1024  # turn numbers per block of a time's ranges (_time_spans)
MAX_SPANS = 8
SPAN_TURNS = 10_000  # a time's turns read to find their ranges, at most
# bm25 weights of records_fts's columns: title (summary and command), body (stdout or the
# message), stderr.
_BM25 = "bm25(records_fts, 3.0, 1.0, 1.0)"


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


class Fts5Index(IndexReads):
    """SQLite's text index (FTS5): search over entries, messages, commands and turns, a part
    SQLiteStore holds (its `_text`) and forwards its search methods to. `fts_check` is
    the store's check of an FTS5 index (sqlite/verify.py: on a copy when the store is
    read-only), which the checks of the outline's and records' indexes run too."""

    def __init__(
        self,
        store: StoreHost,
        archive: ArchiveReads,
        tasks: TaskReads,
        fts_check: Callable[[str], str | None],
    ) -> None:
        super().__init__(store, archive, tasks)
        self._fts_check = fts_check

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
            n = len(params)
            best = self._rows(
                f"SELECT {index}.rowid, {score} AS score {base} AND {index}.rowid >= ${n + 1}"
                f" ORDER BY score LIMIT ${n + 2}",
                [*params, low, limit],
            )
            if not best:
                return []
            seqs = [r[0] for r in best]
            among = list(params)
            rows = self._rows(
                f"SELECT {index}.rowid AS seq, {columns} {base}{_among(index, seqs, among)}",
                among,
            )
        found = {r["seq"]: r for r in rows}
        return [(r[1], found[r[0]]) for r in best if r[0] in found]

    def _window_floor(self, index: str, base: str, params: Sequence[Any]) -> int:
        """The lowest rowid among the newest SEARCH_WINDOW matches of `base` (0 when fewer
        match): ranking reads only the window, so a common word costs the same at any size."""
        floor = self._rows(
            f"SELECT {index}.rowid {base} ORDER BY {index}.rowid DESC LIMIT 1"
            f" OFFSET ${len(params) + 1}",
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
        return records_between(
            self,
            self.space,
            kinds,
            since=since,
            until=until,
            task_id=task_id,
            session_ids=session_ids,
            limit=limit,
        )

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
                "SELECT rowid FROM turns_fts WHERE turns_fts MATCH $1"
                " ORDER BY rowid DESC LIMIT 1 OFFSET $2",
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
        params: list[Any] = [match, self.space]
        where = f" AND k.kind IN ({param_list(params, kinds)})"
        where += time_conditions("k.", since, until, params)
        if task_id is not None:
            where += f" AND k.task_id = {param(params, task_id)}"
        if step_id is not None:
            where += f" AND coalesce(a.plan_item_id, d.plan_item_id) = {param(params, step_id)}"
        base = (
            "FROM records_fts JOIN record_docs k ON k.seq = records_fts.rowid"
            " LEFT JOIN actions a ON k.kind = 'action' AND a.id = k.ref_id"
            " LEFT JOIN task_messages m ON k.kind = 'message' AND m.id = k.ref_id"
            " LEFT JOIN trace_decisions d ON k.kind = 'decision' AND d.id = k.ref_id"
            f" WHERE records_fts MATCH $1 AND k.space = $2{where}"
        )
        columns = (
            "k.kind, k.ref_id, k.task_id, k.created_at,"
            # Output that is not UTF-8 is indexed as it is: read the snippet as bytes.
            " CAST(snippet(records_fts, -1, '[', ']', '…', 16) AS BLOB) AS snip,"
            " a.summary, a.command, a.status, a.exit_code,"
            " coalesce(a.plan_item_id, d.plan_item_id) AS plan_item_id, m.role, d.outcome,"
            f" substr(coalesce(m.content, d.action), 1, {TITLE_CHARS}) AS head"
        )
        rows = self._ranked("records_fts", base, params, _BM25, columns, limit)
        seqs = [r["seq"] for _, r in rows if r["kind"] in ("action", "decision")]
        in_stdout, in_stderr = (
            self._matching(match, column, seqs) for column in ("body", "stderr")
        )
        hits = []
        for score, r in rows:
            if r["kind"] == "action":
                code = "" if r["exit_code"] is None else f" exit {r['exit_code']}"
                label = f"{r['status']}{code}"
                title = first_line(r["command"] or r["summary"])
                field = (
                    "stdout"
                    if r["seq"] in in_stdout
                    else "stderr"
                    if r["seq"] in in_stderr
                    else "command"
                )
            elif r["kind"] == "decision":
                label, title = f"decision {r['outcome']}", first_line(r["head"])
                field = "outcome" if r["seq"] in in_stdout else "action"
            else:
                label, title, field = r["role"], first_line(r["head"]), "content"
            hit = RecordHit(
                r["kind"],
                r["ref_id"],
                r["task_id"],
                None,
                None,
                r["created_at"],
                label,
                title,
                _decoded(r["snip"]),
                score,
                field,
                step_id=r["plan_item_id"],
            )
            hits.append(hit)
        return hits

    def _matching(self, match: str, column: str, seqs: Sequence[int]) -> set[int]:
        """Which of these records match in one column: the index alone answers, no text is
        read (a snippet per column would read every record's output again)."""
        if not seqs:
            return set()
        params: list[Any] = [f"{{{column}}} : ({match})"]
        rows = self._rows(
            f"SELECT rowid FROM records_fts WHERE records_fts MATCH $1"
            f"{_among('records_fts', seqs, params)}",
            params,
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
        params: list[Any] = [match, self.space]
        where = time_conditions("+t.", since, until, params)  # `+`: walk the index, not turns_time
        if task_id is not None:
            where += f" AND s.task_id = {param(params, task_id)}"
        if session_ids is not None:
            where += f" AND t.session_id IN ({param_list(params, session_ids)})"
        n = len(params)
        spans: list[tuple[int, int]] = [(0, 2**62)]
        if since is not None or until is not None:
            # The numbers of the time's turns bound the walk (turns_time): FTS5 seeks to
            # them, instead of testing the time of every turn that holds a common word.
            spans = self._time_spans(since, until)
        base = (
            "FROM turns_fts JOIN turns t ON t.seq = turns_fts.rowid"
            " JOIN sessions s ON s.id = t.session_id"
            f" WHERE turns_fts MATCH $1 AND +t.space = $2{where}"
            f" AND turns_fts.rowid BETWEEN ${n + 1} AND ${n + 2}"
        )
        columns = (
            "t.id, s.task_id, t.session_id, t.turn, t.created_at, t.role, t.tool_name,"
            f" substr(t.content, 1, {TITLE_CHARS}) AS head,"
            " snippet(turns_fts, 0, '[', ']', '…', 16) AS snip"
        )
        rows = []
        with self.transaction():
            for low, high in spans:
                rows += self._ranked(
                    "turns_fts", base, [*params, low, high], "bm25(turns_fts)", columns, limit
                )
        if len(spans) > 1:
            rows = sorted(rows, key=lambda r: (r[0], -r[1]["seq"]))[:limit]
        hits = []
        for score, r in rows:
            label = r["role"] + (f" ({r['tool_name']})" if r["tool_name"] else "")
            hit = RecordHit(
                "turn",
                r["id"],
                r["task_id"],
                r["session_id"],
                r["turn"],
                r["created_at"],
                label,
                first_line(r["head"]),
                r["snip"],
                score,
                "content",
            )
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
            " FROM turns WHERE space = $1 AND created_at >= $2 AND created_at < $3 LIMIT $4)"
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
        params: list[Any] = [fts5_match(query), self.space]
        joins, where = outline_joins(
            kinds, task_id, step_id, since, until, params, plain="+", same_space=False
        )
        # `+`: the index drives; handed each document of a kind to look up, FTS5 would
        # open the query's terms again for each (50x the cost).
        base = (
            f"FROM outline_fts JOIN outline_docs d ON d.seq = outline_fts.rowid{joins}"
            f" WHERE outline_fts MATCH $1 AND +d.space = $2{where}"
        )
        n = len(params)
        with self.transaction():
            low = self._window_floor("outline_fts", base, params)
            best = self._rows(
                f"SELECT d.kind, d.ref_id, bm25(outline_fts) AS score {base}"
                f" AND outline_fts.rowid >= ${n + 1} ORDER BY score LIMIT ${n + 2}",
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
        return self._fts_check("outline_fts")

    def failed_actions_matching(self, query: Query, *, limit: int = 50) -> list[Action]:
        """Failed commands whose command or output matches a query, newest first (the
        caller confirms the text is there verbatim)."""
        rows = self._rows(
            "SELECT a.* FROM records_fts JOIN record_docs k ON k.seq = records_fts.rowid"
            " JOIN actions a ON a.id = k.ref_id WHERE records_fts MATCH $1 AND k.space = $2"
            " AND k.kind = 'action' AND (a.exit_code <> 0 OR a.status IN ('failed', 'timeout'))"
            " ORDER BY records_fts.rowid DESC LIMIT $3",
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
        return self._fts_check("records_fts")

    def search_entries(self, query: Query, filters: EntryFilter, *, limit: int) -> list[SearchHit]:
        """Rank the archive entries matching a query with bm25 over `entries_fts`."""
        params: list[Any] = [fts5_match(query), self.space]
        where = entry_filter(filters, "e.", params)
        base = (
            "FROM entries_fts JOIN entries e ON e.seq = entries_fts.rowid"
            f" WHERE entries_fts MATCH $1 AND e.space = $2{where}"
        )
        n = len(params)
        with self.transaction():
            low = self._window_floor("entries_fts", base, params)
            rows = self._rows(
                f"SELECT {_E_COLUMNS}, {_ENTRY_BM25} AS score,"
                " snippet(entries_fts, -1, '[', ']', '…', 16) AS snippet"
                f" {base} AND entries_fts.rowid >= ${n + 1} ORDER BY score LIMIT ${n + 2}",
                [*params, low, limit],
            )
        entries = self._with_sources([entry_from_row(r) for r in rows])
        return [SearchHit(e, r["score"], r["snippet"]) for e, r in zip(entries, rows, strict=True)]

    def search_turns(
        self, session_id: str | None, query: Query, *, limit: int
    ) -> list[tuple[Turn, float, str]]:
        """bm25-ranked turns matching a query, among the newest SEARCH_WINDOW."""
        params: list[Any] = [fts5_match(query), self.space]
        where = f" AND t.session_id = {param(params, session_id)}" if session_id is not None else ""
        base = (
            "FROM turns_fts JOIN turns t ON t.seq = turns_fts.rowid"
            f" WHERE turns_fts MATCH $1 AND +t.space = $2{where}"
        )
        n = len(params)
        with self.transaction():
            low = self._window_floor("turns_fts", base, params)
            rows = self._rows(
                f"SELECT {_T_COLUMNS}, bm25(turns_fts) AS score,"
                " snippet(turns_fts, 0, '[', ']', '…', 16) AS snip"
                f" {base} AND turns_fts.rowid >= ${n + 1} ORDER BY score LIMIT ${n + 2}",
                [*params, low, limit],
            )
        return [(turn_from_row(r), r["score"], r["snip"]) for r in rows]

    def fts_check(self, index: str = "entries_fts") -> str | None:
        """Run FTS5's integrity check of a search index; None when it is sound."""
        try:
            self._rows(f"INSERT INTO {index} ({index}, rank) VALUES ('integrity-check', 1)")
        except StoreBusyError:
            raise  # a writer holds the lock: that says nothing about the index
        except StoreError as exc:
            return str(exc)
        return None


def _among(index: str, seqs: Sequence[int], params: list[Any]) -> str:
    """SQL keeping an index's matches to these rows (added to `params`: the rows, then their
    least and greatest). FTS5 takes `rowid IN (...)` as one lookup per row, each opening the
    query's terms again (60 rows cost 30 ms on a small store); `+` leaves the list a filter
    and the range bounds the walk instead (1 ms)."""
    among = param_list(params, seqs)
    low, high = param(params, min(seqs)), param(params, max(seqs))
    return f" AND +{index}.rowid IN ({among}) AND {index}.rowid BETWEEN {low} AND {high}"


def _decoded(value: bytes | str | None) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value or ""
