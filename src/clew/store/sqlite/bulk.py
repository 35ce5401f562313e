"""Full-text index upkeep put aside for a block of bulk writes on SQLite.

FTS5 flushes its pending terms at the end of every statement that writes it, and a trigger
body runs as statements of its own: kept by triggers, a turn's index entry costs ~2.5x what
the same entries cost inserted by one `INSERT ... SELECT`. So a bulk import strips the
index statements from the triggers that carry them (a trigger left with no statement is
dropped), writes its rows, indexes them in one statement, and puts every trigger back from
its own SQL, all inside its transaction: the schema after is the one before, and a rollback
restores it with everything else. Which triggers carry them is read from the schema, so
this holds whether the index is kept by a trigger of its own or inside another (an INSTEAD
OF trigger writing a view's table).
"""

from __future__ import annotations

import re
import sqlite3

# An index statement in a trigger body: one INSERT into the index, up to its semicolon (the
# trigger bodies clew makes hold no semicolon inside a statement).
_INSERTS = r"INSERT\s+INTO\s+{index}\s*\(\s*rowid\b[^;]*;"  # new entries only
_ANY = r"INSERT\s+INTO\s+{index}\s*\([^;]*;"  # new entries, 'delete' and the like
_EMPTY = re.compile(r"\bBEGIN\s*END\s*$", re.IGNORECASE)

Saved = list[tuple[str, str]]  # (trigger name, its SQL as the schema holds it)


def strip(conn: sqlite3.Connection, indexes: tuple[str, ...], *, inserts_only: bool) -> Saved:
    """Remove the statements that write `indexes` (full-text tables) from every trigger;
    return what `restore` needs to put the triggers back exactly."""
    shape = _INSERTS if inserts_only else _ANY
    pattern = re.compile("|".join(shape.format(index=re.escape(i)) for i in indexes), re.IGNORECASE)
    saved: Saved = []
    rows = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'").fetchall()
    for name, sql in rows:
        if sql is None or not pattern.search(sql):
            continue
        saved.append((name, sql))
        conn.execute(f'DROP TRIGGER "{name}"')
        rest = pattern.sub("", sql)
        if not _EMPTY.search(rest):
            conn.execute(rest)
    return saved


def restore(conn: sqlite3.Connection, saved: Saved) -> None:
    """Put back the triggers `strip` changed, from their own SQL."""
    for name, sql in saved:
        conn.execute(f'DROP TRIGGER IF EXISTS "{name}"')
        conn.execute(sql)
