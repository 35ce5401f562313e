"""Full-text search on PostgreSQL finds what FTS5 finds on SQLite.

One corpus is recorded through the facade into a SQLite store; its rows are copied into a
space of its own in a PostgreSQL store made by the PostgreSQL migrations (the conformance
suite's database, conftest.postgres_url), where the database itself indexes them
(generated columns; `record_docs` by its trigger). Both backends then answer the same
structured queries: identifiers, phrases, prefixes, exclusions, URLs and plain words find
the same records, and the query of a rare and a common word ranks the same hit first. The
compiler is total: any text compiles to a tsquery the server accepts.
"""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import clew
from clew.core import query as search
from clew.core.query import Query, Term
from clew.errors import ValidationError
from clew.models import Entry, EntryFilter
from clew.store.postgres import connection as pg_connection
from clew.store.postgres import search as pg_search
from clew.store.postgres import search_schema as pg_search_schema
from clew.store.postgres.store import PostgresStore
from tests.conftest import new_space, postgres_url

psycopg = pytest.importorskip(
    "psycopg", reason="psycopg is not installed: pip install -e .[postgres]"
)

# The tables search reads, copied from the SQLite store as they are.
TABLES = ("tasks", "plan_items", "entries", "sessions", "turns", "actions", "task_messages")


class PgReader(pg_search.TsIndex):
    """The text index alone, over one connection (the store's, for `$n` statements)."""

    def __init__(self, conn: Any, space: str) -> None:
        self.conn = pg_connection.Connection(conn)
        self.space = space
        self.statements = 0

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        self.statements += 1
        return self.conn.execute(sql, params).fetchall()

    def transaction(self, *, write: bool = False) -> AbstractContextManager[None]:
        return nullcontext()

    def _with_sources(self, entries: list[Entry]) -> list[Entry]:
        return entries


@pytest.fixture(scope="module")
def pg_url() -> str:
    """This worker's migrated PostgreSQL database (conftest: skipped, saying so, without a
    server; a failure when CLEW_REQUIRE_POSTGRES is set)."""
    return postgres_url()


@pytest.fixture(scope="module")
def space() -> str:
    return new_space()


@pytest.fixture(scope="module")
def pg_conn(pg_url: str, space: str) -> Iterator[Any]:
    """A connection to it, in this module's space (for row-level security)."""
    conn = psycopg.connect(pg_url, autocommit=True)
    conn.execute("SELECT set_config('clew.space', %s, false)", (space,))
    try:
        yield conn
    finally:
        conn.close()


def copy_store(sqlite_path: Path, conn: Any, space: str) -> None:
    """Copy the rows search reads from a SQLite store into a space of the PostgreSQL store:
    the index and `record_docs` are made there by PostgreSQL (generated column, trigger).
    Commands and messages go in the order SQLite indexed them, so `seq` agrees."""
    source = sqlite3.connect(sqlite_path)
    order = source.execute("SELECT kind, ref_id FROM record_docs ORDER BY seq").fetchall()
    for table in TABLES:
        kinds = dict(
            conn.execute(
                "SELECT column_name, data_type FROM information_schema.columns"
                " WHERE table_name = %s AND table_schema = current_schema()"
                " AND is_generated = 'NEVER'",
                (table,),
            ).fetchall()
        )
        names = [c[1] for c in source.execute(f"PRAGMA table_info({table})") if c[1] in kinds]
        rows = source.execute(f"SELECT {', '.join(names)} FROM {table}").fetchall()
        if table in ("actions", "task_messages"):
            kind = "action" if table == "actions" else "message"
            place = {ref: i for i, (k, ref) in enumerate(order) if k == kind}
            rows.sort(key=lambda r: place[r[names.index("id")]])
        for row in rows:
            conn.execute(
                f"INSERT INTO {table} ({', '.join(names)})"
                f" VALUES ({', '.join('%s' for _ in names)})",
                [
                    space if n == "space" else _as(v, kinds[n])
                    for v, n in zip(row, names, strict=True)
                ],
            )
    source.close()


def _as(value: Any, kind: str) -> Any:
    if kind == "text" and isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if kind == "bytea" and isinstance(value, str):
        return value.encode()
    return value


# -- the corpus ---------------------------------------------------------------------------

FILLER = ("the", "build", "ran", "on", "the", "server", "and", "the", "deploy", "went")


def record_corpus(mem: clew.Memory) -> None:
    """Entries, messages, commands with output, and turns that hold identifiers, URLs,
    phrases, stems, accents, one rare word and many common ones."""
    task = mem.create_task("Ship the release", ["build", "deploy"])
    texts = [
        "ERR_CONN_RESET while talking to the database",
        "err conn reset, written with spaces",
        "the error was err-conn-reset in the log",
        "src/auth.py raised on login",
        "auth.py alone, no folder",
        "parse_config.py failed to read the file",
        "parse config is a helper",
        "read https://example.com/docs/setup?lang=en first",
        "example.com/docs has the guide",
        "connection reset by peer",
        "reset connection pool after deploy",
        "kubernetes rollout finished",
        "kubectl apply -f deploy.yaml",
        "running the tests again",
        "the runner runs every night",
        "a café near the naïve office",
        "Connecticut office called",
        "connecting to the replica",
        "v1.2.3 is tagged",
        "the value 1e5 overflowed",
    ]
    for i, text in enumerate(texts):
        words = " ".join(FILLER[: 3 + i % 7])
        mem.add_decision(task.id, text, detail=f"{words}; deploy {i}", tags=[f"t{i % 3}"])
        mem.update_task(task.id, message=f"{text} ({words})")
        mem.record_action(
            task.id, command=f"make step{i}", exit_code=i % 2,
            stdout=f"{words}\n{text}\n" if i % 3 else f"{words}\n",
            stderr=f"{text}\n" if i % 3 == 0 else "",
        )  # fmt: skip
    session = mem.start_session(workspace="/srv/app")
    for i, text in enumerate(texts):
        mem.append_turn(session.id, {"role": "user", "content": f"{text}, {FILLER[i % 10]}"})
        mem.append_turn(session.id, {"role": "assistant", "content": f"noted: {text} server"})
    # The rare word: thrice in one turn beside the common word once, once in another
    # beside the common word thrice; the common word alone in many more.
    mem.append_turn(session.id, {"role": "user", "content": "zephyrine zephyrine zephyrine server"})
    mem.append_turn(session.id, {"role": "user", "content": "zephyrine server server server"})
    for i in range(40):
        mem.append_turn(
            session.id, {"role": "tool", "content": f"server {i} up", "tool_call_id": "x"}
        )


QUERIES = [
    "ERR_CONN_RESET",
    "err_conn_reset",
    "auth.py",
    "src/auth.py",
    "parse_config.py",
    "parse_config",
    '"connection reset"',
    '"reset connection"',
    "kube*",
    "parse_con*",
    "connecti*",
    "connect*",
    "deploy -server",
    'reset -"connection reset"',
    "office -café",
    "https://example.com/docs/setup?lang=en",
    "example.com/docs",
    "running",
    "runs",
    "cafe",
    "naive",
    "v1.2.3",
    "1e5",
    "server deploy",
    "the",
]


@pytest.fixture(scope="module")
def stores(
    pg_conn: Any, space: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[clew.Memory, PgReader]]:
    path = tmp_path_factory.mktemp("pgsearch") / "clew.db"
    with clew.open(path) as mem:
        record_corpus(mem)
    # The same rows, with the same ids, in another space too (as a journal imported twice
    # would be): nothing of it may show, even to a role that bypasses row-level security.
    other = new_space()
    pg_conn.execute("SELECT set_config('clew.space', %s, false)", (other,))
    copy_store(path, pg_conn, other)
    pg_conn.execute("SELECT set_config('clew.space', %s, false)", (space,))
    copy_store(path, pg_conn, space)
    with clew.open(path) as mem:
        yield mem, PgReader(pg_conn, space)


def _ids(hits: Sequence[Any]) -> set[str]:
    return {h.id if hasattr(h, "id") else h.entry.id for h in hits}


@pytest.mark.parametrize("text", QUERIES)
@pytest.mark.parametrize("any_terms", [False, True])
def test_both_backends_find_the_same_records(
    stores: tuple[clew.Memory, PgReader], text: str, any_terms: bool
) -> None:
    mem, pg = stores
    lite = mem._store  # the stores themselves are compared
    query = search.parse(text, any_terms=any_terms)
    everything = EntryFilter()
    entries = _ids([h.entry for h in lite.search_entries(query, everything, limit=500)])
    assert entries == _ids([h.entry for h in pg.search_entries(query, everything, limit=500)])
    kinds = ("message", "action", "turn")
    # Each record found, and where in it (a command's line, its stdout or its stderr).
    found = pg.search_records(query, kinds, limit=500)
    records = {(h.id, h.field) for h in lite.search_records(query, kinds, limit=500)}
    assert records == {(h.id, h.field) for h in found} and len(found) == len(records)
    turns = {t.id for t, _, _ in lite.search_turns(None, query, limit=500)}
    assert turns == {t.id for t, _, _ in pg.search_turns(None, query, limit=500)}
    failed = [a.id for a in pg.failed_actions_matching(query)]
    assert {a.id for a in lite.failed_actions_matching(query)} == set(failed)
    assert len(failed) == len(set(failed))  # one row each: the joins keep to the space
    # Not vacuous: most queries find something on both.
    if text not in ('"reset connection"',):
        assert entries or records or turns


def test_the_postgres_store_searches_with_pg_search(
    stores: tuple[clew.Memory, PgReader], pg_url: str, space: str
) -> None:
    _, pg = stores
    query = search.parse("ERR_CONN_RESET")
    with clew.open(pg_url, space=space) as team:
        store = team._store
        assert isinstance(store, PostgresStore)
        found = {t.id for t, _, _ in store.search_turns(None, query, limit=50)}
        assert found and found == {t.id for t, _, _ in pg.search_turns(None, query, limit=50)}
        kinds = ("message", "action", "turn")
        assert _ids(store.search_records(query, kinds, limit=50)) == _ids(
            pg.search_records(query, kinds, limit=50)
        )
        assert {a.id for a in store.failed_actions_matching(query)}


def test_the_rare_word_ranks_the_same_hit_first(stores: tuple[clew.Memory, PgReader]) -> None:
    mem, pg = stores
    lite = mem._store
    for text, any_terms in (("server zephyrine", False), ("zephyrine server nowhere", True)):
        query = search.parse(text, any_terms=any_terms)
        first = lite.search_turns(None, query, limit=5)[0][0]
        assert "zephyrine zephyrine" in (first.text or "")
        assert pg.search_turns(None, query, limit=5)[0][0].id == first.id


def test_scores_are_lower_for_better_hits_and_ties_go_to_the_newest(
    stores: tuple[clew.Memory, PgReader],
) -> None:
    _, pg = stores
    hits = pg.search_turns(None, search.parse("server"), limit=100)
    scores = [score for _, score, _ in hits]
    assert scores == sorted(scores) and scores[0] < 0
    for (a, sa, _), (b, sb, _) in itertools.pairwise(hits):
        if sa == sb:
            assert a.created_at >= b.created_at


def test_snippets_mark_the_words_as_fts5_does(stores: tuple[clew.Memory, PgReader]) -> None:
    _, pg = stores
    snippets = [s for _, _, s in pg.search_turns(None, search.parse("ERR_CONN_RESET"), limit=9)]
    assert any("[ERR_CONN_RESET]" in s for s in snippets), snippets
    snippets = [s for _, _, s in pg.search_turns(None, search.parse("auth.py"), limit=9)]
    assert any("src/[auth.py]" in s for s in snippets), snippets
    hits = pg.search_entries(search.parse("deploy"), EntryFilter(), limit=3)
    assert all("[deploy]" in h.snippet.lower() for h in hits)


def test_a_search_costs_two_statements_and_one_for_one_term(
    stores: tuple[clew.Memory, PgReader],
) -> None:
    _, pg = stores
    for text, statements in (("server zephyrine -nothing", 2), ("zephyrine -nothing", 1)):
        before = pg.statements
        pg.search_turns(None, search.parse(text), limit=5)
        assert pg.statements - before == statements


def test_the_whole_identifier_ranks_above_its_pieces(stores: tuple[clew.Memory, PgReader]) -> None:
    _, pg = stores
    hits = pg.search_turns(None, search.parse("ERR_CONN_RESET"), limit=9)
    assert "ERR_CONN_RESET" in (hits[0][0].text or "")
    assert any("err conn reset" in (t.text or "") for t, _, _ in hits)


# -- the compiler -------------------------------------------------------------------------

_FIXTURE = [HealthCheck.function_scoped_fixture]
_TERM_TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40
) | st.sampled_from(["'", "\\", "''", ":*", "&|!<->()", "a:b", "x'y\\z", "-", "*", " "])


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=st.text(max_size=80), any_terms=st.booleans())
def test_any_text_compiles_to_a_tsquery_the_server_runs(
    pg_conn: Any, text: str, any_terms: bool
) -> None:
    try:
        query = search.parse(text, any_terms=any_terms)
    except ValidationError:
        return
    params: list[Any] = []
    sql = pg_search.tsquery(query, params)
    conn = pg_connection.Connection(pg_conn)
    conn.execute(f"SELECT to_tsvector('simple', 'x') @@ {sql}", params).fetchone()


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    include=st.lists(st.tuples(_TERM_TEXT, st.booleans()), min_size=1, max_size=4),
    exclude=st.lists(st.tuples(_TERM_TEXT, st.booleans()), max_size=2),
    any_terms=st.booleans(),
)
def test_any_terms_compile_even_those_parse_never_makes(
    pg_conn: Any,
    include: list[tuple[str, bool]],
    exclude: list[tuple[str, bool]],
    any_terms: bool,
) -> None:
    query = Query(
        tuple(Term(t, p) for t, p in include), tuple(Term(t, p) for t, p in exclude),
        any_terms, (), tuple(t for t, _ in include),
    )  # fmt: skip
    params: list[Any] = []
    sql = pg_search.tsquery(query, params)
    pg_connection.Connection(pg_conn).execute(f"SELECT ({sql})::text", params).fetchone()


def test_a_term_is_the_phrase_of_its_pieces_and_an_identifier_also_as_written(
    pg_conn: Any,
) -> None:
    def term(text: str, prefix: bool) -> str:
        return str(pg_conn.execute("SELECT clew_term(%s, %s)::text", (text, prefix)).fetchone()[0])

    assert term("ERR_CONN_RESET", False) == "'err_conn_reset' | 'err' <-> 'conn' <-> 'reset'"
    assert term("parse_con", True) == "'pars' <-> 'con':*"  # a prefix is matched as FTS5 does
    assert term("Connecti", True) == "'connecti':*"  # not stemmed
    assert term("Connecting", False) == "'connect'"
    assert term("it's", False) == "'it''s' | 'it' <-> 's'"


def test_verify_checks_the_search_documents(pg_url: str) -> None:
    with clew.open(pg_url, space=new_space()) as team, psycopg.connect(pg_url) as conn:
        store = team._store
        assert isinstance(store, PostgresStore)
        conn.autocommit = True
        conn.execute("SELECT set_config('clew.space', %s, false)", (team.space,))
        conn.execute(
            "INSERT INTO tasks (id, space, name, status, created_at, updated_at)"
            " VALUES ('t1', %s, 'x', 'active', '2026', '2026')",
            (team.space,),
        )
        conn.execute(
            "INSERT INTO actions (id, space, task_id, type, summary, status, command, stdout,"
            " stderr, created_at, updated_at) VALUES ('a1', %s, 't1', 'cli', 'run', 'failed',"
            " 'make', %s, %s, '2026', '2026')",
            (team.space, "ok café\n".encode(), b"\xff\x00 not utf-8"),
        )
        assert store.records_check(team.space) is None
        conn.execute("UPDATE record_docs SET body = 'tampered' WHERE space = %s", (team.space,))
        assert "1 differ from their row" in (store.records_check(team.space) or "")
        # verify reports it too, as it does SQLite's.
        found = [d for d in team.verify().differences if d.table == "record_docs"]
        assert found and "1 differ from their row" in found[0].stored
        conn.execute("DELETE FROM record_docs WHERE space = %s", (team.space,))
        assert "1 message(s), command(s) or decision(s)" in (store.records_check(team.space) or "")


def test_a_query_with_no_term_is_refused_before_sql() -> None:
    with pytest.raises(ValidationError, match="at least one term"):
        pg_search.tsquery(Query((), (Term("x", False),), False, (), ()), [])


@given(
    n=st.integers(1, 10**7),
    rare=st.integers(1, 10**7),
    more=st.integers(1, 10**7),
)
def test_a_rarer_term_weighs_more(n: int, rare: int, more: int) -> None:
    assert pg_search.idf(n, rare) > pg_search.idf(n, rare + more) > 0


def test_the_search_functions_can_be_made_again(pg_conn: Any) -> None:
    """Every statement of FUNCTIONS runs on a database that has them (a migration run
    again after a failure, another store in the same schema)."""
    for statement in pg_search_schema.FUNCTIONS:
        pg_conn.execute(statement)
