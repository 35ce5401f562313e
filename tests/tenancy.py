"""Tenancy in plain sight: every statement that reaches a PostgreSQL connection names its space.

On PostgreSQL two spaces may hold the same journal, so the same ids. Row-level security keeps
them apart for an ordinary role; the first wall is the statement itself: every UPDATE and
DELETE says `space = $n` in its own WHERE, and every upsert's target is a key that starts with
`space`. Nothing edits a statement at run time to make that so, or for any other reason
(store/postgres/connection.py sends each as written), so the suite checks it: conftest.py
hands every statement a psycopg cursor sends to `record`, and a test that made clew send one
that breaks the rule fails (`unscoped` says why), as does one written with `?` placeholders,
which only a translation could have run (`untranslated`). A test's own SQL is not checked:
some send a statement held to nothing on purpose, to see it refused. The server's keys and
request log are administration across spaces (migration 17) and name none.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from types import FrameType
from typing import Any

import clew
from clew.store.migrations import ADMIN_TABLES
from clew.store.postgres import connection as pg_connection
from clew.store.postgres import store as postgres

# A quoted text or name, a dollar-quoted body, or a comment: none of them the statement's own.
_QUOTED = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|(\$\w*\$).*?\1|--[^\n]*", re.S)
_CHANGE = re.compile(r"\s*(?:UPDATE\s+(\w+)|DELETE\s+FROM\s+(\w+))\b", re.I)
_WRITE = re.compile(r"\s*(?:WITH|INSERT|UPDATE|DELETE)\b", re.I)
_CONFLICT = re.compile(r"\bON\s+CONFLICT\s*\(\s*(\w+)", re.I)
_IN_SPACE = re.compile(r"\bspace\s*=", re.I)


def _top_level(sql: str) -> str:
    """`sql` with every parenthesized part blanked: what is left is the statement's own."""
    kept, depth = [], 0
    for char in sql:
        depth += char == "("
        kept.append(char if depth == 0 else " ")
        depth -= char == ")" and depth > 0
    return "".join(kept)


def bare(sql: str) -> str:
    """`sql` with its quoted texts, dollar-quoted bodies and comments blanked."""
    return _QUOTED.sub("''", sql)


def untranslated(sql: str) -> str | None:
    """Why `sql` (as sent to PostgreSQL) is not written as PostgreSQL reads it, or None."""
    if "?" in bare(sql):
        return "a `?` placeholder: PostgreSQL's are `$n`, and nothing translates a statement"
    return None


def unscoped(sql: str) -> str | None:
    """Why `sql` (as sent to PostgreSQL) does not hold itself to one space, or None if it does."""
    bare = _QUOTED.sub("''", sql)
    changed = _CHANGE.match(bare)
    if changed and (changed[1] or changed[2]).lower() not in ADMIN_TABLES:
        own = _top_level(bare)
        where = re.search(r"\bWHERE\b", own, re.I)
        condition = own[where.end() :] if where else ""
        if not _IN_SPACE.search(condition):
            return "an UPDATE or DELETE whose WHERE does not name its space"
        if re.search(r"\bOR\b", condition, re.I):
            return "an UPDATE or DELETE whose WHERE names its space beside an OR"
    if _WRITE.match(bare):
        for target in _CONFLICT.finditer(bare):
            if target[1].lower() != "space":
                return "an ON CONFLICT target that does not start with space"
    return None


SEEN: set[str] = set()  # statements checked already (the shared SQL is a fixed set)
FOUND: list[tuple[str, str]] = []  # (why, statement) for each one that broke the rule


_CLEW = str(Path(clew.__file__).parent)
# What carries a statement to the server: the statement is its caller's.
_PLUMBING = frozenset({pg_connection.__file__, postgres.__file__})


def _plumbing(filename: str) -> bool:
    return filename in _PLUMBING or f"{os.sep}psycopg{os.sep}" in filename


def _sent_by_clew(frame: FrameType | None) -> bool:
    while frame is not None and _plumbing(frame.f_code.co_filename):
        frame = frame.f_back
    return frame is not None and frame.f_code.co_filename.startswith(_CLEW)


def record(query: Any, caller: FrameType | None) -> None:
    """Check `query`, a statement about to reach a PostgreSQL connection from `caller`, once
    (a statement psycopg composes, `psycopg.sql`, is its own: clew's are text)."""
    sql = query.decode() if isinstance(query, bytes) else query
    if not isinstance(sql, str) or sql in SEEN or not _sent_by_clew(caller):
        return
    SEEN.add(sql)
    why = untranslated(sql) or unscoped(sql)
    if why is not None:
        FOUND.append((why, sql))
