"""The vector index's reads and writes: which records lack a current vector, the stored vectors
in write order, counts, and the rows themselves. Portable SQL (store/sql.py), a part both
stores hold (`VectorStore`). The search itself is a part each store holds behind
`contract.VectorIndex`: `RowVectors` here (the rows alone, searched in process by the facade),
or pg_vectors.PgVectors (pgvector).

The rows of `embeddings` are derived, like the search indexes: no event makes them, so they
are written outside the journal (in a write transaction, for the space's lock) and `verify`,
export and push never see them. The text embedded for each kind is made here, from the
record's columns, so every backend embeds the same text:

- entry: summary, detail, tags, resolution;
- message: its content;
- action: its summary (or command line), the first error lines of the middle of its stderr
  and the tail of its stderr, the same of its stdout (the tails from `record_docs`, which
  already holds a bounded copy of each output);
- turn: its content;
- decision (of the trace): its action, outcome and error.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from clew.models import NewVector, PendingText, StoredVector
from clew.store.rows import RowReader, limited
from clew.store.sql import Row, numbered

TAIL = 1000  # characters of each output's tail embedded for a command (and of its title)
_PUT_BATCH = 200  # rows per INSERT: within SQLite's and PostgreSQL's parameter limits


def _tail(column: str) -> str:
    """SQL for the last TAIL characters of a text column (no negative substr on PostgreSQL)."""
    return (
        f"CASE WHEN length({column}) > {TAIL} THEN substr({column}, length({column}) - {TAIL - 1})"
        f" ELSE coalesce({column}, '') END"
    )


def _entry_text(row: Row) -> str:
    tags = json.loads(row["tags"]) if row["tags"] and row["tags"] != "[]" else []
    parts = [row["summary"], row["detail"], " ".join(str(t) for t in tags), row["resolution"]]
    return "\n".join(p for p in parts if p)


def _decoded(value: bytes | str | None) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value or ""


def _action_text(row: Row) -> str:
    parts = [
        _decoded(row["title"]),
        row["err_lines"],
        _decoded(row["err"]),
        row["out_lines"],
        _decoded(row["out"]),
    ]
    return "\n".join(p for p in parts if p)


def _decision_text(row: Row) -> str:
    parts = [row["action"], row["outcome"], row["error"]]
    return "\n".join(p for p in parts if p)


def _content(row: Row) -> str:
    return str(row["content"] or "")


def _joined(kind: str) -> str:
    """The LEFT JOIN of a record (alias r) to its vector of the model (`$1`)."""
    return (
        "LEFT JOIN embeddings v ON v.space = r.space AND v.model = $1"
        f" AND v.kind = '{kind}' AND v.ref_id = r.id"
    )


# Each kind: (the SELECT of its records with their vectors' hash, the record's change marker,
# how its text is made). The marker is what `source_at` is compared with: a kind whose text
# never changes after it is written uses created_at.
_KINDS: dict[str, tuple[str, str, Callable[[Row], str]]] = {
    "entry": (
        "SELECT r.id, r.summary, r.detail, r.tags, r.resolution, r.task_id,"
        " r.subtask_id AS step_id, NULL AS session_id, r.created_at, r.updated_at AS source_at,"
        f" v.content_hash FROM entries r {_joined('entry')}",
        "r.updated_at",
        _entry_text,
    ),
    "message": (
        "SELECT r.id, r.content, r.task_id, NULL AS step_id, NULL AS session_id, r.created_at,"
        f" r.created_at AS source_at, v.content_hash FROM task_messages r {_joined('message')}",
        "r.created_at",
        _content,
    ),
    "action": (
        # RAW(...)RAW: a command's output may be bytes that are not UTF-8, which SQLite keeps as
        # they are in a text column (and sqlite3 cannot decode): read as bytes, decoded here.
        f"SELECT r.id, RAW(substr(d.title, 1, {TAIL}))RAW AS title,"
        f" RAW({_tail('d.stderr')})RAW AS err, RAW({_tail('d.body')})RAW AS out,"
        f" substr(r.stderr_errors, 1, {TAIL}) AS err_lines,"
        f" substr(r.stdout_errors, 1, {TAIL}) AS out_lines, r.task_id,"
        " r.plan_item_id AS step_id,"
        " NULL AS session_id, r.created_at, r.updated_at AS source_at, v.content_hash"
        " FROM actions r"
        " JOIN record_docs d ON d.space = r.space AND d.kind = 'action' AND d.ref_id = r.id"
        f" {_joined('action')}",
        "r.updated_at",
        _action_text,
    ),
    "turn": (
        "SELECT r.id, r.content, s.task_id, NULL AS step_id, r.session_id, r.created_at,"
        " r.created_at AS source_at, v.content_hash FROM turns r"
        " JOIN sessions s ON s.space = r.space AND s.id = r.session_id"
        f" {_joined('turn')}",
        "r.created_at",
        _content,
    ),
    "decision": (
        "SELECT r.id, r.action, r.outcome, r.error, r.task_id, r.plan_item_id AS step_id,"
        " NULL AS session_id, r.created_at, r.created_at AS source_at, v.content_hash"
        f" FROM trace_decisions r {_joined('decision')}",
        "r.created_at",
        _decision_text,
    ),
}
_TABLES = {
    "entry": "entries",
    "message": "task_messages",
    "action": "actions",
    "turn": "turns",
    "decision": "trace_decisions",
}
_VECTOR_COLUMNS = (
    "kind, ref_id, model, content_hash, source_at, task_id, step_id, session_id, created_at,"
    " dim, vector, space"
)


def dropped(model: str) -> str:
    """The schedule key that counts the drops of a model's vectors in a space: a rebuild's,
    or a forget's (every process's in-memory matrix loads again when it moves)."""
    return f"vectors.dropped:{model}"


class VectorStore(RowReader):
    """The vector index's reads and writes on its rows: a part both stores hold (their
    `_embeddings`), writing through the store's write transaction."""

    def pending_vectors(
        self, kind: str, model: str, *, after: str = "", limit: int
    ) -> list[PendingText]:
        """Records of `kind` with no vector of `model`, or whose record changed since its
        vector was made; by id, those with an id above `after` (a page's last id)."""
        select, marker, text = _KINDS[kind]
        select = select.replace("RAW(", self.dialect.raw_text[0]).replace(
            ")RAW", self.dialect.raw_text[1]
        )
        # `+r.space` (SQLite): walk the records by id from the page's last (their primary key's
        # order), never by an index that starts with space (turns_time): SQLite's planner
        # took that one, which read and sorted every turn of the space for each page of
        # BATCH, 3.9 s a page at a million turns.
        sql = (
            f"{select} WHERE {self._no_index}r.space = $2 AND r.id > $3"
            f" AND (v.seq IS NULL OR v.source_at <> {marker}) ORDER BY r.id"
        )
        rows = self._rows(*limited(sql, (model, self.space, after), limit))
        return [
            PendingText(
                kind,
                r["id"],
                text(r),
                r["source_at"],
                r["content_hash"],
                r["task_id"],
                r["step_id"],
                r["session_id"],
                r["created_at"],
            )
            for r in rows
        ]

    def vector_counts(self, model: str) -> dict[str, tuple[int, int]]:
        """For each kind: (records with a current vector of `model`, all its records)."""
        counts: dict[str, tuple[int, int]] = {}
        with self._reading():
            for kind, (_, marker, _) in _KINDS.items():
                table = _TABLES[kind]
                row = self._rows(
                    f"SELECT (SELECT count(*) FROM {table} WHERE space = $1),"
                    f" (SELECT count(*) FROM {table} r JOIN embeddings v ON v.space = r.space"
                    f" AND v.model = $2 AND v.kind = '{kind}' AND v.ref_id = r.id"
                    f" WHERE r.space = $3 AND v.source_at = {marker})",
                    (self.space, model, self.space),
                )[0]
                counts[kind] = (int(row[1]), int(row[0]))
        return counts

    def newest_vector(self, model: str) -> int:
        """The highest seq among the space's vectors of `model`, or 0."""
        row = self._rows(
            "SELECT coalesce(max(seq), 0) FROM embeddings WHERE space = $1 AND model = $2",
            (self.space, model),
        )[0]
        return int(row[0])

    def journal_head(self) -> int:
        """The highest event seq of the space, or 0: every record comes from an event, so
        while it stays the same no record is pending that was not before."""
        row = self._rows("SELECT coalesce(max(seq), 0) FROM events WHERE space = $1", (self.space,))
        return int(row[0][0])

    def vector_count(self, model: str, *, after: int = 0) -> int:
        """How many vectors of `model` the space holds with a seq above `after`."""
        row = self._rows(
            "SELECT count(*) FROM embeddings WHERE space = $1 AND model = $2 AND seq > $3",
            (self.space, model, after),
        )[0]
        return int(row[0])

    def vectors_after(
        self, model: str, after: int, *, limit: int | None = None
    ) -> list[StoredVector]:
        """Vectors of `model` with a seq above `after`, in seq (write) order."""
        sql = (
            "SELECT seq, kind, ref_id, task_id, step_id, session_id, created_at, dim, vector"
            " FROM embeddings WHERE space = $1 AND model = $2 AND seq > $3 ORDER BY seq"
        )
        rows = self._rows(*limited(sql, (self.space, model, after), limit))
        return [
            StoredVector(int(r[0]), r[1], r[2], r[3], r[4], r[5], r[6], int(r[7]), bytes(r[8]))
            for r in rows
        ]

    # -- writes: derived rows, outside the journal ----------------------------------------

    def touch_vectors(self, model: str, kind: str, marks: Sequence[tuple[str, str]]) -> None:
        """Say that these records' vectors of `model` are still current at their new
        `source_at` ((ref_id, source_at) pairs): their text did not change."""
        conn, _ = self._writer()
        for ref_id, source_at in marks:
            conn.execute(
                "UPDATE embeddings SET source_at = $1 WHERE space = $2 AND model = $3 AND kind = $4"
                " AND ref_id = $5",
                (source_at, self.space, model, kind, ref_id),
            )

    def drop_vectors(self, model: str) -> int:
        """Delete every vector of `model` in the space, in the current write transaction;
        return how many there were."""
        conn, _ = self._writer()
        found = conn.execute(
            "SELECT count(*) FROM embeddings WHERE space = $1 AND model = $2", (self.space, model)
        ).fetchone()
        conn.execute("DELETE FROM embeddings WHERE space = $1 AND model = $2", (self.space, model))
        return int(found[0])


class RowVectors(RowReader):
    """The vector index with no search of its own: the rows of `embeddings`, which the facade
    loads and searches in process (numpy). SQLite's store holds it; pgvector's index holds one
    for the rows it copies."""

    def vector_search_native(self) -> bool:
        """Whether `nearest_vectors` runs in the database: not here (see postgres/vectors.py)."""
        return False

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
        """Search in the database; only where `vector_search_native()` says so."""
        raise NotImplementedError("this store searches its vectors in process")

    def put_vectors(self, model: str, vectors: Sequence[NewVector]) -> None:
        """Store these vectors of `model`, each replacing the record's old one (with a new
        seq), in the current write transaction."""
        conn, _ = self._writer()
        for start in range(0, len(vectors), _PUT_BATCH):
            batch = vectors[start : start + _PUT_BATCH]
            by_kind: dict[str, list[str]] = {}
            for v in batch:
                by_kind.setdefault(v.kind, []).append(v.ref_id)
            for kind, ids in by_kind.items():
                conn.execute(
                    "DELETE FROM embeddings WHERE space = $1 AND model = $2 AND kind = $3"
                    f" AND ref_id IN ({numbered(len(ids), 4)})",
                    (self.space, model, kind, *ids),
                )
            rows = ", ".join(f"({numbered(12, 1 + 12 * n)})" for n in range(len(batch)))
            params: list[Any] = []
            for v in batch:
                params += [
                    v.kind,
                    v.ref_id,
                    model,
                    v.content_hash,
                    v.source_at,
                    v.task_id,
                    v.step_id,
                    v.session_id,
                    v.created_at,
                    v.dim,
                    v.vector,
                    self.space,
                ]
            conn.execute(
                f"INSERT INTO embeddings ({_VECTOR_COLUMNS}) VALUES {rows}",
                params,
            )
