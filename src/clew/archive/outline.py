"""What search finds beyond the archive, the records and the turns: the outline of the work
(each task's name, its goal and its final answer, each plan step's title with its issue and
summary) and semantic memory (patterns, guardrails). Pure but for `found` and `documents`,
which read them.

Each has a search document of its own, kept by the store beside its row (migration 26):
`found` asks the store for the best matches of a question, ranked by bm25 over one index
of every kind (FTS5 on SQLite, a tsvector on PostgreSQL), as the other indexes rank
theirs, and marks the question's words in each one's text. Search (retrieval.py) mixes
the result into its one list, reading the outline's bm25 against its own best as it does
each index's. `documents` reads them all (the newest of each kind), for ranking by meaning.

A deprecated pattern, a disabled guardrail and a removed step are history: their labels
say so (", deprecated", ", disabled", ", removed"), and the ranking puts them below the
current records (ranking.current_first).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from clew.core.query import Query, Term
from clew.models import OUTLINE_KINDS, EntryFilter, RecordHit, TaskStatus

if TYPE_CHECKING:
    from clew.store import Store

MAX_DOCUMENTS = 5000  # of each kind, the newest, read to rank by meaning
_TITLE_CHARS = 200
_TOKEN = re.compile(r"[^\W_]+")
_SUFFIXES = ("ingly", "edly", "ies", "ing", "ied", "ed", "es", "ly", "s")


class Document(NamedTuple):
    """One thing search can find here: its hit (score 0) and the text it is matched in."""

    hit: RecordHit
    text: str


def _wanted(kinds: Sequence[str], filters: EntryFilter) -> list[str]:
    """The outline's kinds asked for that the filters leave: none with entry filters; of
    one step, only steps; no patterns or guardrails within a task (they belong to none)."""
    wanted = [k for k in OUTLINE_KINDS if k in kinds]
    if not wanted or filters.types or filters.statuses or filters.tags:
        return []
    if filters.subtask_id is not None:
        wanted = [k for k in wanted if k == "step"]
    if filters.task_id is not None or filters.subtask_id is not None:
        wanted = [k for k in wanted if k not in ("pattern", "guardrail")]
    return wanted


def found(
    store: Store, kinds: Sequence[str], filters: EntryFilter, query: Query, limit: int
) -> list[Document]:
    """The best `limit` documents of the kinds asked for matching a query, that the
    filters leave (of one task with `filters.task_id`, only steps with a step), best
    first: their bm25 (negative: lower is better, as the indexes give it) in hit.score,
    the matched words in [brackets] in the snippet."""
    wanted = _wanted(kinds, filters)
    if not wanted or not query.include:
        return []
    rows = store.search_outline(
        query,
        wanted,
        task_id=filters.task_id,
        step_id=filters.subtask_id,
        since=filters.since,
        until=filters.until,
        limit=limit,
    )
    matchers = [_matcher(t) for t in query.include]
    out = []
    for kind, score, row in rows:
        d = _from_row(kind, row)
        out.append(d._replace(hit=d.hit._replace(score=score, snippet=_marked(d.text, matchers))))
    return out


def documents(
    store: Store, kinds: Sequence[str], filters: EntryFilter, limit: int = MAX_DOCUMENTS
) -> list[Document]:
    """Every document of the kinds asked for that the filters leave (as `found`), created
    within `since`/`until`; the newest `limit` of each kind."""
    docs: list[Document] = []
    for kind in _wanted(kinds, filters):
        rows = store.outline_rows(
            kind, task_id=filters.task_id, step_id=filters.subtask_id, limit=limit
        )
        docs += (_from_row(kind, row) for row in rows)
    return [d for d in docs if _in_time(d.hit.created_at, filters)]


def _from_row(kind: str, row: tuple[Any, ...]) -> Document:
    """A document of one row of `store.outline_rows`."""
    ident, task_id, at, title = row[:4]
    if kind in ("task", "goal"):
        state = "" if row[4] == TaskStatus.ACTIVE.value else f", {row[4]}"
        return _document(
            kind,
            ident,
            task_id,
            at,
            f"{kind}{state}",
            title,
            title,
            "name" if kind == "task" else "goal",
        )
    if kind == "step":
        status, ordinal, issue, summary = row[4:8]
        text = "\n".join(x for x in (title, issue, summary) if x)
        doc = _document(
            "step", ident, task_id, at, f"step {ordinal} {status}", title, text, "title"
        )
        return doc._replace(hit=doc.hit._replace(step_id=ident))
    if kind == "answer":
        return _document(
            "answer", ident, task_id, at, "answer", _first_line(title), title, "answer"
        )
    if kind == "pattern":
        domain, deprecated, description, example, what = row[4:9]
        state = ", deprecated" if deprecated else ""
        text = "\n".join(x for x in (title, description, example, what) if x)
        return _document(
            "pattern", ident, None, at, f"pattern {domain}{state}", title, text, "name"
        )
    enforcement, enabled = row[4:6]
    state = "" if enabled else ", disabled"
    return _document(
        "guardrail", ident, None, at, f"guardrail {enforcement}{state}", title, title, "text"
    )


def _document(
    kind: str,
    ident: str,
    task_id: str | None,
    at: str,
    label: str,
    title: str,
    text: str,
    field: str,
) -> Document:
    hit = RecordHit(kind, ident, task_id, None, None, at, label, _first_line(title), "", 0.0, field)
    return Document(hit, text)


def _matcher(term: Term) -> re.Pattern[str]:
    """What finds a term in a text: its tokens in a row, each at the start of a word, the
    last by its stem (or as a prefix with `*`); the others whole."""
    parts = _tokens(term.text)
    if not parts:
        return re.compile(r"(?!)")
    *head, last = parts
    tail = re.escape(last) if term.prefix else re.escape(stem(last))
    body = r"[\W_]+".join([*(re.escape(p) for p in head), tail])
    end = r"\w*" if term.prefix or len(parts) == 1 else r"\w{0,4}"
    return re.compile(rf"(?<![^\W_])(?:{body}){end}", re.IGNORECASE)


def stem(word: str) -> str:
    """A light suffix stripping (as coverage.stem does), less a long stem's last letter so
    that "registry" meets "registries"."""
    word = word.casefold()
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    word = word[:-1] if word.endswith("e") and len(word) > 4 else word
    return word if len(word) <= 4 else word[:-1]


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.casefold())


def _marked(text: str, matchers: Sequence[re.Pattern[str]]) -> str:
    head = " ".join(text.split())[: 2 * _TITLE_CHARS]
    for m in matchers:
        head = m.sub(lambda found: f"[{found.group(0)}]", head)
    return head.replace("[[", "[").replace("]]", "]")


def _in_time(at: str, filters: EntryFilter) -> bool:
    return (filters.since is None or at >= filters.since) and (
        filters.until is None or at < filters.until
    )


def _first_line(text: str | None) -> str:
    return (text or "").strip().split("\n", 1)[0][:_TITLE_CHARS]


def open_command(hit: RecordHit) -> str:
    """The clew command line that shows an outline hit in full (without its space)."""
    if hit.kind in ("task", "goal", "answer", "step"):
        return f"clew task show {hit.task_id}"
    if hit.kind == "pattern":
        domain = hit.label.removeprefix("pattern ").removesuffix(", deprecated")
        return f"clew pattern list --domain {shlex.quote(domain)} --all"
    return "clew guard list --all"
