"""Full-text search on PostgreSQL: the index the database keeps, the compiler of a
structured `search.Query` into a tsquery, and the search reads (TsIndex, a part PostgresStore
holds). The index itself, which the migrations make, is postgres/search_schema.py.

It finds what the SQLite store's FTS5 indexes find. FTS5's `unicode61` tokenizer cuts text
at every character that is not a letter or a digit (`_` included), folds case and
diacritics, and the porter tokenizer stems each piece; a query term is the phrase of its
pieces. PostgreSQL's own parser does not cut like that (it keeps `src/auth.py` as one
file token and `example.com` as a host, and splits `ERR_CONN_RESET` at `_`), so every
text is indexed twice, in one `tsvector`:

- **split**: every run of punctuation becomes a space and that text goes through the
  `clew` configuration: PostgreSQL's parser, the `unaccent` dictionary for letters with
  diacritics (FTS5's remove_diacritics), the Snowball English stemmer with no stop words
  (FTS5 keeps every word). `ERR_CONN_RESET` is indexed as `err conn reset`, `src/auth.py`
  as `src auth py`, with positions; a term is the phrase of its pieces, so `auth.py`
  finds `src/auth.py`.
- **as written**: each run of letters and digits joined by punctuation, lowercased, kept
  whole as one lexeme (`err_conn_reset`, `src/auth.py`, `parse_config.py`, a URL), once,
  at one position past the pieces. A term that is one such word matches it or its phrase
  (which finds nothing more: a row holding the word holds its pieces in sequence); the
  whole form counts as one more occurrence, so an identifier written as asked ranks
  above its pieces spread over the text. A prefix term is its phrase only, its last
  piece not stemmed, as FTS5 matches `connecti*`.

A generated column keeps the vector in the row's own transaction (no trigger to forget),
weighted like the FTS5 bm25 column weights, under a GIN index; `record_docs` holds the
documents of messages and commands, kept by a trigger, as on SQLite (postgres/search_schema.py
makes all of it). Text past `INDEX_HEAD + INDEX_TAIL` characters is indexed by its head and
tail, as command output is on both backends (a tsvector holds at most 1 MB).

Ranking is BM25, as FTS5's bm25 (k1 1.2, b 0.75): `ts_rank` has no inverse document
frequency (a query of one rare and one common word would rank by the common word's count)
and saturates a term's count much sooner. Per included term: its frequency in the row is
`ts_rank_cd`'s count of its occurrences, weighted by column; the row's length the bytes
of its indexed text against their mean over the ranked rows; its idf ln(1 + (N - df + 0.5) /
(df + 0.5)), df counted from the GIN index (capped at DF_CAP: past it every term is common
alike), N the span of the space's `seq` numbers (exact for a store of one space, an upper
bound otherwise, which only flattens the idf a little). Scores are negated, lower is
better, as bm25's are, so the facade merges kinds the same way on both backends; ties go
to the newest row (`seq`). As on SQLite, only the newest SEARCH_WINDOW matches are
ranked, which keeps a common word cheap.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any, NamedTuple

from clew.core.query import Query, Term
from clew.errors import ValidationError
from clew.models import Action, EntryFilter, RecordHit, SearchHit, Turn
from clew.store.portable.archive import ENTRY_COLUMNS, entry_filter, entry_from_row
from clew.store.portable.conversations import TURN_COLUMNS, turn_from_row
from clew.store.portable.search import (
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
from clew.store.portable.tasks import outline_joins
from clew.store.portable.trace import actions_from_rows
from clew.store.postgres.search_schema import DECISION_BODY, DECISION_TITLE, NEWLINE
from clew.store.sql import param, param_list

SEARCH_WINDOW = 5000
DF_CAP = 1000
# BM25's constants, as FTS5's bm25 has them: how fast a term's count saturates, and how
# much a row's length discounts it.
K1 = 1.2
B = 0.75


class _Index(NamedTuple):
    """What ranking needs of one searched table: its name, the ts_rank_cd weights of its
    columns, and SQL for a row's length (alias `t`)."""

    table: str
    weights: str
    length: str


# A row's length for BM25 is the bytes of its indexed text: octet_length reads a large
# value's size from its TOAST pointer, where counting the vector's lexemes would read (and
# decompress) every ranked row's vector a second time.
_ENTRIES = _Index(
    "entries",
    "'{0.25, 0.25, 0.5, 1.0}'::float4[]",
    "octet_length(t.summary) + coalesce(octet_length(t.detail), 0) + octet_length(t.tags)"
    " + coalesce(octet_length(t.resolution), 0)",
)
_RECORDS = _Index(
    "record_docs",
    "'{0.33, 0.33, 0.33, 1.0}'::float4[]",
    "octet_length(t.title) + octet_length(t.body) + octet_length(t.stderr)",
)
_TURNS = _Index("turns", "'{1.0, 1.0, 1.0, 1.0}'::float4[]", "octet_length(t.content)")
_OUTLINE = _Index("outline_docs", "'{1.0, 1.0, 1.0, 1.0}'::float4[]", "octet_length(t.body)")


def tsquery(query: Query, params: list[Any]) -> str:
    """Compile a query into a tsquery expression (SQL whose values are added to `params`):
    every included term (any one when any_terms), none of the excluded ones. No user text
    reaches SQL or tsquery syntax: the terms are parameters of `clew_term`."""
    if not query.include:  # search.parse never makes one: nothing to look for
        raise ValidationError("a search needs at least one term to look for")
    join = " || " if query.any_terms else " && "
    sql = "(" + join.join(_clew_term(t, params) for t in query.include) + ")"
    for term in query.exclude:
        sql = f"({sql} && !!{_clew_term(term, params)})"
    return sql


def _clew_term(term: Term, params: list[Any]) -> str:
    """`clew_term(text, prefix)` of one term, its values added to `params`."""
    text, prefix = _term(term)
    return f"clew_term({param(params, text)}, {param(params, prefix)})"


def _term(term: Term) -> list[Any]:
    # PostgreSQL text holds no NUL (search.parse already makes it a space).
    return [term.text.replace("\x00", " "), term.prefix]


def idf(n: int, df: int) -> float:
    """BM25's inverse document frequency: near 0 for a term in every row, high for a rare one."""
    n = max(n, df)
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


# Where the best match is, with the words around it: a fragment of a long text (16 words,
# as FTS5's snippet), a short text whole, as FTS5 shows it (a fragment, or a cover, of it
# drops the words before the match).
_MARKS = "StartSel=[, StopSel=], MaxWords=16, MinWords=6, ShortWord=0"
_SHORT = 120
# A zero-width space after each punctuation mark makes PostgreSQL's parser see the pieces
# the index split (not `src/auth.py` as one file token); it is taken out again after.
_ZWSP = "\u200b"
_JOINED = re.compile(r"\]((?:[^\w\s\[\]]|_)+)\[")


def _headline(text: str, query_sql: str) -> str:
    """SQL for a snippet of `text` with the words of a query in [brackets]."""
    marked = f"regexp_replace(clew_bounded({text}), '([[:punct:]])', '\\1{_ZWSP}', 'g')"
    return (
        f"CASE WHEN length({text}) <= {_SHORT}"
        f" THEN ts_headline('clew'::regconfig, {marked}, {query_sql},"
        f" '{_MARKS}, HighlightAll=true')"
        f" ELSE ts_headline('clew'::regconfig, {marked}, {query_sql},"
        f" '{_MARKS}, MaxFragments=1') END"
    )


def tidy(snippet: str | None) -> str:
    """A snippet as FTS5 makes one: an identifier's pieces marked as one ([ERR_CONN_RESET],
    not [ERR]_[CONN]_[RESET]), and no zero-width spaces."""
    return _JOINED.sub(r"\1", (snippet or "").replace(_ZWSP, ""))


class TsIndex(IndexReads):
    """PostgreSQL's text index (tsvector): search over entries, messages, commands and turns,
    a part PostgresStore holds (its `_text`) and forwards its search methods to."""

    def _ranked_rows(
        self,
        index: _Index,
        query: Query,
        *,
        columns: str,
        limit: int,
        joins: str = "",
        where: str = "",
        params: Sequence[Any] | None = None,
        outer_joins: str = "",
    ) -> list[tuple[float, Any]]:
        """The best `limit` rows of an index's table (alias `t`, with `joins`, narrowed by
        `where`) among its newest SEARCH_WINDOW matches, as (score, row of `columns`), best
        first. `params` are `where`'s and `joins`', the space first (`$1`: None, the space
        alone); the statement's own values are added after them.
        `columns` may read `t`, `outer_joins` and `m.q`, the query's tsquery: they are
        read for the rows shown only. Two statements: the terms' document frequencies
        (none for one term), then the ranked rows."""
        values = [self.space] if params is None else list(params)
        match = tsquery(query, values)
        table, weights, length = index
        with self.transaction():
            counts: list[str] = []
            parts: list[str] = []
            for i, (form, term, weight) in enumerate(self._weighed_terms(table, query)):
                # BM25 of the term in the row: its frequency is ts_rank_cd's count of its
                # occurrences (weighted by column), against the row's length in bytes.
                sql = form.format(*(param(values, v) for v in term))
                counts.append(f"ts_rank_cd({weights}, v.search, {sql}, 0) AS tf{i}")
                parts.append(
                    f"{weight!r} * w.tf{i} * {K1 + 1} / (w.tf{i} + {K1} * (1 - {B} + {B} * w.dl"
                    " / w.avgdl))"
                )
            rows = self._rows(
                f"SELECT r.score, {columns} FROM ("
                f" SELECT w.seq, -({' + '.join(parts)}) AS score FROM ("
                f"  SELECT v.seq, v.dl, avg(v.dl) OVER () AS avgdl, {', '.join(counts)} FROM ("
                f"   SELECT t.seq, t.search, {length} AS dl FROM {table} t{joins}"
                f"   WHERE t.search @@ {match} AND t.space = $1{where}"
                f"   ORDER BY t.seq DESC LIMIT {SEARCH_WINDOW}) v) w"
                f" ORDER BY score, w.seq DESC LIMIT {param(values, limit)}) r"
                f" JOIN {table} t ON t.seq = r.seq AND t.space = $1{outer_joins}"
                f" CROSS JOIN (SELECT {match} AS q) m"
                " ORDER BY r.score, r.seq DESC",
                values,
            )
        return [(float(r[0]), r) for r in rows]

    def _weighed_terms(self, table: str, query: Query) -> list[tuple[str, list[Any], float]]:
        """Each included term's tsquery (SQL with a `{}` for each of its values, and the
        values) and its idf in the space. One statement, or none for a query of one term:
        its idf would scale every score of the index alike (so kinds merged by the facade
        interleave by the term's count alone)."""
        if len(query.include) == 1:
            return [("clew_term({}, {})", _term(query.include[0]), 1.0)]
        stats = [f"(SELECT coalesce(max(seq) - min(seq) + 1, 0) FROM {table} WHERE space = $1)"]
        params: list[Any] = [self.space]
        for term in query.include:
            clew_term = _clew_term(term, params)
            stats.append(f"{clew_term}::text")
            stats.append(
                f"(SELECT count(*) FROM (SELECT 1 FROM {table} WHERE space = $1"
                f" AND search @@ {clew_term} LIMIT {DF_CAP}) d)"
            )
        got = tuple(self._rows("SELECT " + ", ".join(stats), params)[0])
        n = int(got[0])
        return [
            ("{}::tsquery", [str(got[i])], idf(n, int(got[i + 1]))) for i in range(1, len(got), 2)
        ]

    def search_entries(self, query: Query, filters: EntryFilter, *, limit: int) -> list[SearchHit]:
        """Rank the entries matching a query (rare terms weigh more), newest first on ties."""
        params: list[Any] = [self.space]
        where = entry_filter(filters, "t.", params)
        columns = ", ".join(f"t.{c}" for c in ENTRY_COLUMNS)
        text = "concat_ws(E'\\n', t.summary, t.detail, t.resolution)"
        rows = self._ranked_rows(
            _ENTRIES,
            query,
            where=where,
            params=params,
            limit=limit,
            columns=f"{columns}, {_headline(text, 'm.q')} AS snippet",
        )
        entries = self._with_sources([entry_from_row(tuple(r)[1:]) for _, r in rows])
        return [
            SearchHit(e, score, tidy(r["snippet"]))
            for e, (score, r) in zip(entries, rows, strict=True)
        ]

    def search_turns(
        self, session_id: str | None, query: Query, *, limit: int
    ) -> list[tuple[Turn, float, str]]:
        """Rank the turns matching a query (of one session, or of all), as on SQLite."""
        columns = ", ".join("t." + c.strip() for c in TURN_COLUMNS.split(","))
        params: list[Any] = [self.space]
        where = "" if session_id is None else f" AND t.session_id = {param(params, session_id)}"
        rows = self._ranked_rows(
            _TURNS,
            query,
            limit=limit,
            where=where,
            params=params,
            columns=f"{columns}, {_headline('t.content', 'm.q')} AS snip",
        )
        return [(turn_from_row(tuple(r)[1:]), score, tidy(r["snip"])) for score, r in rows]

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
        """Ranked messages, commands, trace decisions and turns matching a query, each
        kind ranked within its own index."""
        hits: list[RecordHit] = []
        task_kinds = task_record_kinds(kinds, step_id, session_ids)
        if task_kinds:
            hits += self._search_record_docs(
                query, task_kinds, task_id, step_id, since, until, limit
            )
        if "turn" in kinds and step_id is None and session_ids != []:
            hits += self._search_turn_records(query, task_id, session_ids, since, until, limit)
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

    def _search_record_docs(
        self,
        query: Query,
        kinds: Sequence[str],
        task_id: str | None,
        step_id: str | None,
        since: str | None,
        until: str | None,
        limit: int,
    ) -> list[RecordHit]:
        params: list[Any] = [self.space]
        where = f" AND t.kind IN ({param_list(params, kinds)})"
        where += time_conditions("t.", since, until, params)
        if task_id is not None:
            where += f" AND t.task_id = {param(params, task_id)}"
        if step_id is not None:
            step = param(params, step_id)
            where += (
                " AND (EXISTS (SELECT 1 FROM actions x WHERE t.kind = 'action'"
                f" AND x.space = t.space AND x.id = t.ref_id AND x.plan_item_id = {step})"
                " OR EXISTS (SELECT 1 FROM trace_decisions x WHERE t.kind = 'decision'"
                f" AND x.space = t.space AND x.id = t.ref_id AND x.plan_item_id = {step}))"
            )
        # Where it matched: the body (stdout, or the message) weighs C, stderr B.
        field = (
            "CASE WHEN ts_filter(t.search, '{c}') @@ m.q THEN 'stdout'"
            " WHEN ts_filter(t.search, '{b}') @@ m.q THEN 'stderr' ELSE 'command' END"
        )
        text = (
            "CASE WHEN ts_filter(t.search, '{c}') @@ m.q THEN t.body"
            " WHEN ts_filter(t.search, '{b}') @@ m.q THEN t.stderr ELSE t.title END"
        )
        rows = self._ranked_rows(
            _RECORDS,
            query,
            where=where,
            params=params,
            limit=limit,
            columns=(
                "t.kind, t.ref_id, t.task_id, t.created_at,"
                f" {_headline(text, 'm.q')} AS snip, {field} AS field,"
                " a.summary, a.command, a.status, a.exit_code,"
                " coalesce(a.plan_item_id, d.plan_item_id) AS plan_item_id, g.role, d.outcome,"
                f" substr(coalesce(g.content, d.action), 1, {TITLE_CHARS}) AS head"
            ),
            outer_joins=(
                " LEFT JOIN actions a ON t.kind = 'action' AND a.space = t.space"
                " AND a.id = t.ref_id LEFT JOIN task_messages g ON t.kind = 'message'"
                " AND g.space = t.space AND g.id = t.ref_id"
                " LEFT JOIN trace_decisions d ON t.kind = 'decision' AND d.space = t.space"
                " AND d.id = t.ref_id"
            ),
        )
        hits = []
        for score, r in rows:
            if r["kind"] == "action":
                code = "" if r["exit_code"] is None else f" exit {r['exit_code']}"
                label, title = f"{r['status']}{code}", first_line(r["command"] or r["summary"])
                field_name = r["field"]
            elif r["kind"] == "decision":
                label, title = f"decision {r['outcome']}", first_line(r["head"])
                field_name = "outcome" if r["field"] == "stdout" else "action"
            else:
                label, title, field_name = r["role"], first_line(r["head"]), "content"
            hit = RecordHit(
                r["kind"],
                r["ref_id"],
                r["task_id"],
                None,
                None,
                r["created_at"],
                label,
                title,
                tidy(r["snip"]),
                score,
                field_name,
                step_id=r["plan_item_id"],
            )
            hits.append(hit)
        return hits

    def _search_turn_records(
        self,
        query: Query,
        task_id: str | None,
        session_ids: Sequence[str] | None,
        since: str | None,
        until: str | None,
        limit: int,
    ) -> list[RecordHit]:
        params: list[Any] = [self.space]
        where = time_conditions("t.", since, until, params)
        joins = ""
        if task_id is not None:
            joins = " JOIN sessions s ON s.space = t.space AND s.id = t.session_id"
            where += f" AND s.task_id = {param(params, task_id)}"
        if session_ids is not None:
            where += f" AND t.session_id IN ({param_list(params, session_ids)})"
        rows = self._ranked_rows(
            _TURNS,
            query,
            joins=joins,
            where=where,
            params=params,
            limit=limit,
            columns=(
                "t.id, s.task_id, t.session_id, t.turn, t.created_at, t.role, t.tool_name,"
                f" substr(t.content, 1, {TITLE_CHARS}) AS head,"
                f" {_headline('t.content', 'm.q')} AS snip"
            ),
            outer_joins=" JOIN sessions s ON s.space = t.space AND s.id = t.session_id",
        )
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
                tidy(r["snip"]),
                score,
                "content",
            )
            hits.append(hit)
        return hits

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
        """The outline's records matching a query, best first (BM25 over `outline_docs`,
        as on SQLite), as (kind, score, row)."""
        if not kinds:
            return []
        params: list[Any] = [self.space]
        joins, where = outline_joins(
            kinds, task_id, step_id, since, until, params, plain="", same_space=True, doc="t"
        )
        with self.transaction():
            best = self._ranked_rows(
                _OUTLINE,
                query,
                columns="t.kind, t.ref_id",
                limit=limit,
                joins=joins,
                where=where,
                params=params,
            )
            rows = self._outline_described([(r[1], r[2]) for _, r in best])
        return [(r[1], score, rows[(r[1], r[2])]) for score, r in best if (r[1], r[2]) in rows]

    def outline_check(self, space: str | None = None) -> str | None:
        """Check the outline's search documents of one space (of every space without one):
        one for each row and kind, holding the text its trigger makes; None when sound."""
        sql, params = outline_check_sql(
            space, differs="IS DISTINCT FROM", same_space=" AND d.space = r.space", newline=NEWLINE
        )
        return outline_fault(tuple(self._rows(sql, params)[0]))

    def failed_actions_matching(self, query: Query, *, limit: int = 50) -> list[Action]:
        """Failed commands whose command or output matches a query, newest first (the
        caller confirms the text is there verbatim)."""
        params: list[Any] = [self.space, limit]
        match = tsquery(query, params)
        rows = self._rows(
            "SELECT a.* FROM record_docs k JOIN actions a ON a.space = k.space AND a.id = k.ref_id"
            f" WHERE k.search @@ {match} AND k.space = $1 AND k.kind = 'action'"
            " AND (a.exit_code <> 0 OR a.status IN ('failed', 'timeout'))"
            " ORDER BY k.seq DESC LIMIT $2",
            params,
        )
        return actions_from_rows(rows)

    def records_check(self, space: str | None = None) -> str | None:
        """Check the search documents of one space (of every space without one): one for
        each message, command and trace decision, holding the text its trigger makes from
        the row; None when sound. (The vectors are generated columns: the database keeps
        them exact.)"""
        texts = {
            "action": (
                "clew_cut(CASE WHEN r.command IS NULL OR r.command = r.summary THEN r.summary"
                " ELSE r.summary || E'\\n' || r.command END)",
                "clew_output(r.stdout, r.stdout_errors)",
                "clew_output(r.stderr, r.stderr_errors)",
            ),
            "message": ("''", "clew_cut(r.content)", "''"),
            "decision": (DECISION_TITLE.format(row="r."), DECISION_BODY.format(row="r."), "''"),
        }
        sql, params = records_check_sql(
            texts, space, differs="IS DISTINCT FROM", same_space=" AND d.space = r.space"
        )
        return records_fault(tuple(self._rows(sql, params)[0]))
