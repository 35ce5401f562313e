"""Turning what a person or model types into a structured search query. Pure.

The result names no query language: each backend compiles a `Query` into its own (the
SQLite backend into an FTS5 MATCH expression, `store.sqlite_search.fts5_match`). A term is
matched as the sequence of the tokens it contains, so no user text can be read as an
operator, and an identifier that a tokenizer splits (`ERR_CONN_RESET` -> err conn reset,
`src/auth.py`, `v1.2.3`) is still matched as the exact sequence of its pieces.

What is kept of the syntax people expect: "quoted phrases", a leading `-` to exclude a
term, and a trailing `*` for a prefix. Terms are joined with AND; callers retry with OR
(`any_terms=True`) when nothing matches all of them.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from clew.core.checks import MAX_TEXT_CHARS, unicode
from clew.errors import ValidationError

MAX_TERMS = 32
# FTS5's operators, typed as words: read as the words' intent (every term must match
# anyway), not as terms to look for.
OPERATORS = frozenset({"AND", "OR", "NOT", "NEAR"})
_TOKEN = re.compile(r'-?"[^"]*"|\S+')
_WORD = re.compile(r"[^\W_]")  # a letter or digit: what a tokenizer indexes


def _is_identifier(term: str) -> bool:
    """Whether a tokenizer would cut a term into pieces: punctuation or `_` between word
    parts of one run without spaces (`ERR_CONN_RESET`, `src/auth.py`, `v1.2.3`). Linear in
    the term's length (a regular expression for it backtracks on one long token)."""
    for chunk in term.split():
        word = [i for i, c in enumerate(chunk) if c.isalnum()]
        if len(word) >= 2 and any(not c.isalnum() for c in chunk[word[0] : word[-1]]):
            return True
    return False


class Term(NamedTuple):
    """One thing to look for: matched as the sequence of the tokens its text contains."""

    text: str  # what the user typed, quotes removed
    prefix: bool  # a trailing `*`: its last token matches as a prefix


class Query(NamedTuple):
    """A parsed search, for a backend to compile; never empty of included terms."""

    include: tuple[Term, ...]  # all must match (any one when any_terms)
    exclude: tuple[Term, ...]  # none may match
    any_terms: bool
    identifiers: tuple[str, ...]  # included terms a tokenizer would split (rank first)
    terms: tuple[str, ...]  # the included texts


def bounded(text: object) -> str:
    """`text` if it is a search query of a length clew searches, else a ValidationError."""
    if not isinstance(text, str):
        raise ValidationError(f"a search query must be text, not {type(text).__name__}")
    if len(text) > MAX_TEXT_CHARS:  # longer than any text clew keeps: it matches nothing
        raise ValidationError(
            f"a search query is {len(text):,} characters long; the most is {MAX_TEXT_CHARS:,}"
        )
    unicode(text, "the search query")
    return text


def parse(text: str, *, any_terms: bool = False) -> Query:
    """Parse user text into a structured query, or raise if there is nothing to search for."""
    text = bounded(text)
    text = text.replace("\x00", " ")  # a NUL ends an FTS5 query and is no text to PostgreSQL
    include: list[Term] = []
    exclude: list[Term] = []
    identifiers: list[str] = []
    terms: list[str] = []
    for raw in _TOKEN.findall(text):
        if raw in OPERATORS:
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
        (exclude if negative else include).append(Term(term, prefix))
        if not negative:
            terms.append(term)
            if _is_identifier(term):
                identifiers.append(term)
    if not include:
        raise ValidationError(
            "the search query has no words to look for; give at least one word or identifier"
        )
    return Query(
        tuple(include[:MAX_TERMS]),
        tuple(exclude[:MAX_TERMS]),
        any_terms,
        tuple(identifiers),
        tuple(terms),
    )


def contains_all(text: str, needles: tuple[str, ...]) -> bool:
    """Whether `text` holds every needle verbatim (ignoring case): exact identifier hits."""
    folded = text.casefold()
    return all(needle.casefold() in folded for needle in needles)
