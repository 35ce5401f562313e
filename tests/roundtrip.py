"""Compare two stores row for row: what moving a journal must keep exactly.

`assert_same_store(a, b)` takes two store locations; `rows` reads one location's tables.
Only SQLite files are read today; a PostgreSQL location gets its own reader in `rows`,
and every test written on `assert_same_store` then runs across backends unchanged.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import clew

# Not moved by the journal: which migrations ran when, the poller's own schedule, the
# full-text indexes (derived from rows; `verify` checks them against the rows) and the
# vector index (derived, rebuilt by `update_index`); LangGraph's checkpoints (framework state
# beside the journal: docs/architecture.md); the target's own record of who imported what.
_NOT_JOURNALED = (
    "clew_migrations",
    "clew_imports",
    "schedule",
    "embeddings",
    "langgraph_checkpoints",
    "langgraph_blobs",
    "langgraph_writes",
)


def rows(location: str, space: str = "default") -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every journaled table of `space` at `location`, table by table, in a
    fixed order (all columns, the journal's seq and hash included)."""
    if "://" in location:
        raise NotImplementedError(f"no row reader for {location.split('://')[0]} stores yet")
    conn = sqlite3.connect(f"file:{location}?mode=ro", uri=True)
    conn.text_factory = bytes  # some text columns hold output that is not UTF-8, verbatim
    try:
        names = [
            r[0]
            for (raw,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            for r in [(raw.decode(),)]
            if r[0] not in _NOT_JOURNALED and "_fts" not in r[0] and not r[0].startswith("sqlite")
        ]
        found: dict[str, list[tuple[Any, ...]]] = {}
        for name in sorted(names):
            columns = [r[1].decode() for r in conn.execute(f"PRAGMA table_info({name})")]
            where = " WHERE space = ?" if "space" in columns else ""
            params = (space,) if where else ()
            # Each value with its type: text and bytes must stay what they were.
            typed = ", ".join(f"typeof({c}), {c}" for c in columns)
            table = conn.execute(f"SELECT {typed} FROM {name}{where}", params).fetchall()
            found[name] = sorted(table, key=repr)
        return found
    finally:
        conn.close()


def assert_same_store(source: str, target: str, space: str = "default") -> None:
    """Assert that `target` holds exactly `source`'s rows of `space`, table by table, and
    that both verify clean with the same journal head."""
    before, after = rows(source, space), rows(target, space)
    assert sorted(before) == sorted(after)
    for table, expected in before.items():
        assert after[table] == expected, f"table {table} differs"
    with clew.open(source, space=space) as a, clew.open(target, space=space) as b:
        first, second = a.verify(), b.verify()
    assert first.ok and second.ok, (first.differences, second.differences)
    assert first.events == second.events and first.rows == second.rows
    assert first.heads == second.heads
