"""The database connection the portable code is written against, and what its backend spells
its own way.

The portable modules (`portable_*.py`, the projections) run one body of SQL on both backends:
numbered placeholders (`$1`, `$2`...: both SQLite and PostgreSQL read them as they are, so no
statement is ever rewritten on its way), standard clauses (COALESCE, `ON CONFLICT`,
`LIKE ... ESCAPE`), rows addressable by column name. What differs is not spelt in the text but
asked of the connection's `dialect`: the value of a LIMIT that limits nothing, how a text goes
into a command-output column (SQLite's BLOB takes text as it is; PostgreSQL's bytea, its UTF-8
bytes) and the key an upsert names (PostgreSQL's keys start with `space`). What only one
backend has (FTS5, PRAGMAs, tsvector, pgvector) stays in its own modules (`sqlite_*`, `pg_*`),
in that backend's own style.

A statement built piece by piece numbers each value as it is added (`param`, `param_list`), so
its placeholders are always the positions of its parameters.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Protocol


class Row(Protocol):
    """A result row: by column name (`row["id"]`) or position, iterable, with its names."""

    def __getitem__(self, key: int | str, /) -> Any: ...

    def __iter__(self) -> Iterator[Any]: ...

    def __len__(self) -> int: ...

    def keys(self) -> list[str]: ...


class Cursor(Protocol):
    """The result of one statement."""

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...

    @property
    def description(self) -> Any: ...

    @property
    def rowcount(self) -> int: ...


class Dialect:
    """What one backend spells its own way, for the portable SQL to ask instead of guess."""

    __slots__ = ("name", "no_index", "no_limit", "raw_text", "space_keyed", "text_output_as_bytes")

    def __init__(
        self,
        name: str,
        *,
        no_limit: int | None,
        space_keyed: bool,
        text_output_as_bytes: bool,
        no_index: str,
        raw_text: tuple[str, str],
    ) -> None:
        self.name = name
        # The value of `LIMIT $n` that limits nothing: SQLite's -1 (NULL is an error there);
        # PostgreSQL's NULL (-1 is an error there).
        self.no_limit = no_limit
        # Whether a row's key starts with `space` (PostgreSQL: two spaces may hold the same
        # journal, so the same ids; SQLite's ids are unique across its file).
        self.space_keyed = space_keyed
        self.text_output_as_bytes = text_output_as_bytes
        # What keeps the planner off an index for a term: SQLite's unary `+` (with `task_id =
        # ? AND space = ?` it takes events(space, seq) and walks the whole space's history);
        # PostgreSQL has no such operator on text and its planner needs no such hint.
        self.no_index = no_index
        # How a text column is read as its bytes, around the column: SQLite keeps what it was
        # given (a CAST to BLOB); a PostgreSQL text is always valid UTF-8, read as it is.
        self.raw_text = raw_text

    def conflict(self, *key: str) -> str:
        """The `ON CONFLICT` target of a row keyed by `key` within its space."""
        columns = ("space", *key) if self.space_keyed else key
        return f"({', '.join(columns)})"

    def output(self, value: Any) -> Any:
        """A command's output (stdout, stderr: text or bytes, its kind in a column beside it)
        as its BLOB or bytea column takes it."""
        if self.text_output_as_bytes and isinstance(value, str):
            return value.encode("utf-8", "surrogateescape")
        return value

    def __repr__(self) -> str:
        return f"Dialect({self.name!r})"


SQLITE = Dialect(
    "sqlite",
    no_limit=-1,
    space_keyed=False,
    text_output_as_bytes=False,
    no_index="+",
    raw_text=("CAST((", ") AS BLOB)"),
)
POSTGRESQL = Dialect(
    "postgresql",
    no_limit=None,
    space_keyed=True,
    text_output_as_bytes=True,
    no_index="",
    raw_text=("((", "))"),
)


class Connection(Protocol):
    """What the portable code needs of a connection: statements with `$n` placeholders and
    their parameters in order, and the backend's dialect."""

    @property
    def dialect(self) -> Dialect: ...

    def execute(self, sql: str, params: Sequence[Any] = (), /) -> Cursor: ...

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]], /) -> Any: ...


def param(params: list[Any], value: Any) -> str:
    """Add `value` to `params` and return its placeholder (`$n`, n its position)."""
    params.append(value)
    return f"${len(params)}"


def param_list(params: list[Any], values: Iterable[Any]) -> str:
    """Add each of `values` to `params` and return their placeholders (`$3, $4, $5`), for an
    IN list."""
    start = len(params) + 1
    params.extend(values)
    return ", ".join(f"${n}" for n in range(start, len(params) + 1))


def numbered(count: int, start: int = 1) -> str:
    """`count` placeholders from `$start` on (`$1, $2, $3`), for a statement's VALUES."""
    return ", ".join(f"${n}" for n in range(start, start + count))
