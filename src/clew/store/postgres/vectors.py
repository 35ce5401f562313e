"""The vector index in the database, on a PostgreSQL store whose server has pgvector.

Invariants:
- `embeddings` (migration 11) stays the index's truth on every server: float16 bytes that the
  in-process search reads. On a server with the `vector` extension the store keeps a copy of
  each row in `embedding_vectors` (a pgvector column, an HNSW cosine index per dimension) and
  `nearest` runs there, filters and all, instead of loading every vector into the process.
- The copy is a cache of a cache: each row points at its `embeddings` row (space, seq) with
  ON DELETE CASCADE, so a record embedded again (its old row deleted) or a rebuild (every row
  deleted) drops its copies in the same transaction; rows a process without pgvector wrote
  are copied over the first time a process with it searches the space.
- The table is made by the store when it opens, not by a numbered migration: whether a server
  has pgvector is a property of the server, not of the schema, and a migration's fingerprint
  must be the same on every server (a store moved to a server without the extension must
  still open, and search in process).
- Row-level security on `space`, as on every other table (pg_migrations.table).
- The filters are SQL in the same query as the ORDER BY. Unfiltered or by kind, the HNSW index
  ranks (approximate; pgvector 0.8's iterative scan goes on until `limit` rows pass the
  filter); by task, step, session or time, the rows kept are scored exactly, so a narrow
  filter gets its true best `limit`, as in process.
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Sequence
from typing import Any, Protocol

from clew.models import NewVector
from clew.store.portable.vectors import RowVectors
from clew.store.postgres import migrations as pg_migrations
from clew.store.rows import RowReader, StoreHost
from clew.store.sql import Connection, param, param_list

_log = logging.getLogger(__name__)

TABLE = "embedding_vectors"
_COPY_PAGE = 2_000  # rows of `embeddings` copied per statement when the copy catches up
# Candidates the HNSW scan keeps (pgvector's ef_search, default 40): at least the rows asked
# for, so the best `limit` are found among them, up to pgvector's own ceiling.
_EF_MAX = 1_000

_TABLE_SQL = (
    *pg_migrations.table(
        TABLE,
        """
        space      text COLLATE "C" NOT NULL,
        seq        bigint NOT NULL,
        model      text COLLATE "C" NOT NULL,
        kind       text COLLATE "C" NOT NULL,
        ref_id     text COLLATE "C" NOT NULL,
        task_id    text COLLATE "C",
        step_id    text COLLATE "C",
        session_id text COLLATE "C",
        created_at text COLLATE "C" NOT NULL,
        dim        integer NOT NULL,
        vector     vector NOT NULL,
        PRIMARY KEY (space, seq),
        FOREIGN KEY (space, seq) REFERENCES embeddings (space, seq) ON DELETE CASCADE
        """,
    ),
    f"CREATE INDEX {TABLE}_model ON {TABLE}(space, model, seq)",
    # The narrow filters find their rows by these, then score them all (exact).
    f"CREATE INDEX {TABLE}_task ON {TABLE}(space, task_id)",
    f"CREATE INDEX {TABLE}_step ON {TABLE}(space, step_id)",
    f"CREATE INDEX {TABLE}_session ON {TABLE}(space, session_id)",
    f"CREATE INDEX {TABLE}_time ON {TABLE}(space, model, created_at)",
)


def literal(values: Sequence[float]) -> str:
    """A vector as pgvector's text form: [0.1,0.2,...]."""
    return "[" + ",".join(repr(float(v)) for v in values) + "]"


def half_literal(blob: bytes, dim: int) -> str:
    """The text form of a float16 vector as `embeddings` stores it (no numpy needed)."""
    return literal(struct.unpack(f"<{dim}e", blob))


def set_up(raw: Any) -> bool:
    """Make `embedding_vectors` if the server has pgvector (creating the extension when this
    role may); return whether the store searches in the database. Never raises: without the
    extension, or without the right to make it, the store searches in process."""
    try:
        row = raw.execute(
            "SELECT (SELECT installed_version FROM pg_available_extensions WHERE name = 'vector'),"
            " EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector'),"
            f" to_regclass('{TABLE}') IS NOT NULL, pg_is_in_recovery()"
        ).fetchone()
        installed, available, made, replica = row
        if made:
            # A role not granted the table (a stricter team set-up, granted before it was
            # made) searches in process rather than failing every write of the index.
            wanted = "SELECT" if replica else "SELECT, INSERT, DELETE"
            return bool(
                raw.execute("SELECT has_table_privilege(%s, %s)", (TABLE, wanted)).fetchone()[0]
            )
    except Exception as exc:  # a server we cannot ask: the in-process search
        _log.debug("pgvector check failed: %s", exc)
        return False
    if not available or replica:
        return False
    raw.execute("BEGIN")
    try:
        # The migrations' lock: two stores opening at once do not both make the table.
        raw.execute("SELECT pg_advisory_xact_lock(%s)", (0x636C6577,))
        if installed is None:
            raw.execute("CREATE EXTENSION IF NOT EXISTS vector")
        if raw.execute(f"SELECT to_regclass('{TABLE}')").fetchone()[0] is None:
            for statement in _TABLE_SQL:
                raw.execute(statement)
        raw.execute("COMMIT")
    except Exception as exc:  # not allowed to make the extension or the table
        raw.execute("ROLLBACK")
        _log.info("pgvector is available but not usable here (%s): searching in process", exc)
        return False
    return True


class PgVectorHost(StoreHost, Protocol):
    """What pgvector's index reads and writes through: the store that holds it."""

    read_only: bool


class PgVectors(RowReader):
    """The vector index in the database (pgvector), a part PostgresStore holds (its `_vectors`)
    and forwards `nearest_vectors`, `put_vectors` and `vector_search_native` to. `native` is
    whether the server has pgvector (set_up); without it this is the rows alone (RowVectors)."""

    def __init__(self, store: PgVectorHost, *, native: bool) -> None:
        super().__init__(store)
        self._store = store
        self._plain = RowVectors(store)
        self.native = native
        self._copied: set[str] = set()  # models whose rows this store has made sure are copied
        self._indexed: set[int] = set()  # dimensions known to have their HNSW index

    def vector_search_native(self) -> bool:
        """Whether `nearest_vectors` runs in the database (pgvector), not in process."""
        return self.native

    def put_vectors(self, model: str, vectors: Sequence[NewVector]) -> None:
        """Store the vectors (RowVectors' rows), and their pgvector copies when native."""
        if not (self.native and vectors):
            self._plain.put_vectors(model, vectors)
            return
        conn, _ = self._writer()
        newest = conn.execute(
            "SELECT coalesce(max(seq), 0) FROM embeddings WHERE space = $1 AND model = $2",
            (self.space, model),
        ).fetchone()[0]
        self._plain.put_vectors(model, vectors)
        self._copy_missing(model, after=int(newest))

    def _copy_missing(self, model: str, *, after: int = 0) -> int:
        """Copy this space's rows of `model` (those with a seq above `after`) that have no
        pgvector copy yet, in the current write transaction; return how many."""
        conn, _ = self._writer()
        done = 0
        while True:
            rows = conn.execute(
                "SELECT e.seq, e.kind, e.ref_id, e.task_id, e.step_id, e.session_id,"
                " e.created_at, e.dim, e.vector FROM embeddings e"
                f" LEFT JOIN {TABLE} c ON c.space = e.space AND c.seq = e.seq"
                " WHERE e.space = $1 AND e.model = $2 AND e.seq > $3 AND c.seq IS NULL"
                " ORDER BY e.seq LIMIT $4",
                (self.space, model, after, _COPY_PAGE),
            ).fetchall()
            if not rows:
                return done
            for dim in {int(r[7]) for r in rows} - self._indexed:
                self._index(conn, dim)
            # Two arrays, not a VALUES list: a statement's text stays short whatever the page.
            conn.execute(
                f"INSERT INTO {TABLE} (space, seq, model, kind, ref_id, task_id, step_id,"
                " session_id, created_at, dim, vector)"
                " SELECT e.space, e.seq, e.model, e.kind, e.ref_id, e.task_id, e.step_id,"
                " e.session_id, e.created_at, e.dim, x.v::vector"
                " FROM unnest($1::bigint[], $2::text[]) AS x(seq, v)"
                " JOIN embeddings e ON e.space = $3 AND e.seq = x.seq",
                (
                    [int(r[0]) for r in rows],
                    [half_literal(bytes(r[8]), int(r[7])) for r in rows],
                    self.space,
                ),
            )
            done += len(rows)

    def _index(self, conn: Connection, dim: int) -> None:
        """Make the HNSW index of vectors of `dim` values, once per database: an HNSW index
        needs one dimension, and each model has its own (a partial index per dimension)."""
        name = f"{TABLE}_hnsw_{dim}"
        if conn.execute("SELECT to_regclass($1)", (name,)).fetchone()[0] is None:
            # A role that does not own the table (a team's agents' role) may not make an
            # index: the search then scans, still in the database, and the write goes on.
            conn.execute("SAVEPOINT clew_hnsw")
            try:
                conn.execute(
                    f"CREATE INDEX IF NOT EXISTS {name} ON {TABLE}"
                    f" USING hnsw ((vector::vector({dim})) vector_cosine_ops) WHERE dim = {dim}"
                )
            except Exception as exc:
                conn.execute("ROLLBACK TO SAVEPOINT clew_hnsw")
                _log.info("cannot make the HNSW index %s (%s): searches scan", name, exc)
            conn.execute("RELEASE SAVEPOINT clew_hnsw")
        self._indexed.add(dim)

    def nearest_vectors(
        self,
        model: str,
        query: Sequence[float],
        *,
        kinds: Sequence[str],
        task_id: str | None = None,
        step_id: str | None = None,
        session_ids: Sequence[str] | None = None,
        since: str | None = None,
        until: str | None = None,
        limit: int,
    ) -> list[tuple[str, str, float]]:
        """The `limit` vectors of `model` nearest to `query` by cosine, as (kind, ref_id,
        cosine), best first, of these kinds, task, step, sessions and time range (`since`
        inclusive, `until` exclusive); only those with a cosine above 0."""
        if model not in self._copied and not self._store.read_only:
            with self.transaction(write=True):
                self._copy_missing(model)
            self._copied.add(model)
        dim = len(query)
        params: list[Any] = [literal(query), self.space, model]  # $1: the query's vector
        where = [f"space = $2 AND model = $3 AND dim = {dim}"]
        where.append(f"kind IN ({param_list(params, kinds)})")
        for column, value in (("task_id", task_id), ("step_id", step_id)):
            if value is not None:
                where.append(f"{column} = {param(params, value)}")
        if session_ids is not None:
            if not session_ids:
                return []
            where.append(f"session_id IN ({param_list(params, session_ids)})")
        if since is not None:
            where.append(f"created_at >= {param(params, since)}")
        if until is not None:
            where.append(f"created_at < {param(params, until)}")
        ef = max(40, min(limit, _EF_MAX))
        # A task, step, session or time filter keeps few rows of many, which an HNSW scan
        # finds only in part (measured: 0.79 of the exact top 10 for one task of 100 at 50,000
        # vectors): those rows are scored exactly instead (`+ 0` hides the ORDER BY from the
        # HNSW index), as in process. Kinds keep a large share, which HNSW serves.
        narrow = any(f is not None for f in (task_id, step_id, session_ids, since, until))
        order = f"(vector::vector({dim}) <=> $1::vector({dim})){' + 0' if narrow else ''}"
        with self.transaction():
            self._rows(
                "SELECT set_config('hnsw.ef_search', $1, true),"
                " set_config('hnsw.iterative_scan', 'strict_order', true)",
                (str(ef),),
            )
            rows = self._rows(
                f"SELECT kind, ref_id, 1 - (vector::vector({dim}) <=> $1::vector({dim}))"
                f" FROM {TABLE} WHERE {' AND '.join(where)}"
                f" ORDER BY {order}, seq LIMIT {param(params, limit)}",
                params,
            )
        return [(str(r[0]), str(r[1]), float(r[2])) for r in rows if float(r[2]) > 0]
