"""Turning what a person or model types into a safe SQLite FTS5 query. Pure.

FTS5 has its own query language (AND, OR, NOT, NEAR, quotes, `*`, `-`, `:`, parentheses)
and raises a syntax error on much ordinary text. Here every term becomes an FTS5 string
(double-quoted, inner quotes doubled), which FTS5 treats as a phrase of the tokens it
contains; so no user text can be read as an operator, and an identifier that the
tokenizer splits (`ERR_CONN_RESET` -> err conn reset, `src/auth.py`, `v1.2.3`) is still
matched as the exact sequence of its pieces.

What is kept of the syntax people expect: "quoted phrases", a leading `-` to exclude a
term, and a trailing `*` for a prefix. Terms are joined with AND; callers retry with OR
(`any_terms=True`) when nothing matches all of them.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from clew.errors import ValidationError

MAX_TERMS = 32
# FTS5's operators, typed as words: read as the words' intent (every term must match
# anyway), not as terms to look for.
_OPERATORS = frozenset({"AND", "OR", "NOT", "NEAR"})
_TOKEN = re.compile(r'-?"[^"]*"|\S+')
_WORD = re.compile(r"[^\W_]")  # a letter or digit: what a tokenizer indexes
# A term an FTS tokenizer would cut into pieces: punctuation or `_` between word parts.
_IDENTIFIER = re.compile(r"[^\W_](?:[^\s]*?)(?:_|[^\w\s])+[^\W_]")


class Query(NamedTuple):
    """A parsed search: the FTS5 expression and the identifier terms to rank first."""

    match: str
    identifiers: tuple[str, ...]
    terms: tuple[str, ...]


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def parse(text: str, *, any_terms: bool = False) -> Query:
    """Parse user text into a safe FTS5 query, or raise if there is nothing to search for."""
    if not isinstance(text, str):
        raise ValidationError(f"a search query must be text, not {type(text).__name__}")
    text = text.replace("\x00", " ")  # FTS5 reads a NUL as the end of the query
    include: list[str] = []
    exclude: list[str] = []
    identifiers: list[str] = []
    terms: list[str] = []
    for raw in _TOKEN.findall(text):
        if raw in _OPERATORS:
            continue
        negative = raw.startswith("-") and len(raw) > 1
        term = raw[1:] if negative else raw
        prefix = False
        if term.startswith('"') and term.endswith('"') and len(term) >= 2:
            term = term[1:-1]
        else:
            term = term.strip("\"'()[]{},;!?")
            prefix = term.endswith("*")
            term = term.rstrip("*").strip("\"'()[]{},;!?:")
        if not _WORD.search(term):
            continue  # nothing a tokenizer would index: operators, punctuation, quotes
        expression = _quote(term) + ("*" if prefix else "")
        (exclude if negative else include).append(expression)
        if not negative:
            terms.append(term)
            if _IDENTIFIER.search(term):
                identifiers.append(term)
    if not include:
        raise ValidationError(
            "the search query has no words to look for; give at least one word or identifier"
        )
    include, exclude = include[:MAX_TERMS], exclude[:MAX_TERMS]
    joined = (" OR " if any_terms else " AND ").join(include)
    if len(include) > 1 and exclude:
        joined = f"({joined})"
    match = " NOT ".join([joined, *exclude])
    return Query(match, tuple(identifiers), tuple(terms))


def contains_all(text: str, needles: tuple[str, ...]) -> bool:
    """Whether `text` holds every needle verbatim (ignoring case): exact identifier hits."""
    folded = text.casefold()
    return all(needle.casefold() in folded for needle in needles)
