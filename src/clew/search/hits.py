"""What search over everything makes of the records it finds and of the question. Pure.

A record as a hit (a turn, a message, a decision of the trace), a hit with the text the
ranking reads of it (`found_of`: a turn's own text, speaker and tool; another record's title
and snippet), the question as the ranking reads it (`asked_of`), each index's bm25 read
against its own best (`per_index`), the entry filters of a search (narrowed to the time a
question names, or checked against an entry), and the turns either side of the best turns
found (`neighbour_places`). retrieval.py runs the search; ranking.py ranks.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from clew.core.clock import stamp
from clew.core.pattern import lazy
from clew.core.text import clip
from clew.models import (
    OUTLINE_KINDS,
    Entry,
    EntryFilter,
    EntryType,
    Message,
    RecordHit,
    TraceDecision,
    Turn,
)

if TYPE_CHECKING:
    from clew.search.coverage import Asked, Found, Key
    from clew.search.question import Question

TEXT_CHARS = 4000  # of a record's text checked for coverage and exact matches
_MARKS = lazy(r"\[([^\[\]]*)\]")
# What the best of the outline (task names, goals, steps, answers, patterns, guardrails)
# counts, of the best of each index: a title names the work, the records under it hold
# what was found and said (measured on benchmarks/retrieval: at 1, a point of hit@1 lost
# to step titles that hold the question's words).
OUTLINE_WEIGHT = 0.7


def decision_hit(decision: TraceDecision) -> RecordHit:
    """A decision of the trace as a hit of search over everything."""
    return RecordHit(
        "decision",
        decision.id,
        decision.task_id,
        None,
        None,
        decision.created_at,
        f"decision {decision.outcome}",
        first_line(decision.action),
        "",
        0.0,
        "action",
        step_id=decision.plan_item_id,
    )


def per_index(found: dict[Key, Found]) -> dict[Key, Found]:
    """Each index's bm25 scores over its own best (the best of each is -1), once every
    match is found (the time's, the related words' at their lower weight). bm25's weight
    for a word grows with the log of the number of documents its index holds, so a word
    that few records hold weighs more in a million turns than in a few thousand commands:
    read against one best, the larger index buries the smaller one's matches as it grows."""
    best: dict[str, float] = {}
    for (kind, _), f in found.items():
        index = _index_of(kind)
        best[index] = min(best.get(index, 0.0), f.hit.score)
    out = {}
    for key, f in found.items():
        low = best[_index_of(key[0])]
        weight = OUTLINE_WEIGHT if key[0] in OUTLINE_KINDS else 1.0
        out[key] = (
            f._replace(hit=f.hit._replace(score=weight * f.hit.score / -low)) if low < 0 else f
        )
    return out


def _index_of(kind: str) -> str:
    """The full-text index a kind of record is found in."""
    if kind in OUTLINE_KINDS:
        return "outline"
    return kind if kind in ("turn", "entry") else "record"


def window_of(question: Question, filters: EntryFilter) -> EntryFilter | None:
    """The filters narrowed to the time a question names, if it names one that leaves
    anything of them."""
    if question.when is None:
        return None
    since, until = stamp(question.when.start), stamp(question.when.end)
    if filters.since is not None:
        since = max(since, filters.since)
    if filters.until is not None:
        until = min(until, filters.until)
    return filters._replace(since=since, until=until) if since < until else None


def passes_filters(entry: Entry, filters: EntryFilter) -> bool:
    """Whether an entry passes the entry filters (type, status, tags) of a search."""
    return (
        (not filters.types or entry.type in filters.types)
        and (not filters.statuses or entry.status in filters.statuses)
        and set(filters.tags) <= set(entry.tags)
    )


def is_failure(hit: RecordHit) -> bool:
    """Whether a hit is an error entry or a command that failed."""
    if hit.kind == "entry":
        return hit.label.split(",")[0] == EntryType.ERROR.value
    status, _, code = hit.label.partition(" exit ")
    return status in ("failed", "timeout") or (code not in ("", "0"))


def asked_of(question: Question, text: str) -> Asked:
    """The question as the ranking reads it: its words, phrases, identifiers, the names it
    may say, its time, and the kind of record it asks for (summaries.intent)."""
    from clew.search.coverage import KINDS_ASKED, Asked
    from clew.state import summaries

    when = None
    if question.when is not None:
        when = (question.when.start, question.when.end, question.when.exact)
    names = frozenset(w.casefold() for w in (*question.words, *question.identifiers))
    asked_for = summaries.intent(text).name
    kinds = (asked_for,) if asked_for in KINDS_ASKED else ()
    return Asked(
        question.words,
        question.phrases,
        question.identifiers,
        question.exact_text,
        names,
        when,
        kinds,
    )


def found_of(hit: RecordHit, turn: Turn | None) -> Found:
    """A hit with the text the ranking reads: a turn's own (with its speaker and tool),
    else the hit's title and snippet."""
    from clew.search.coverage import Found

    if turn is None:  # the snippet without the brackets round each matched word
        return Found(hit, hit.title + "\n" + _MARKS.sub(r"\1", hit.snippet))
    return Found(
        hit, (turn.text or "")[:TEXT_CHARS], speaker(turn), turn.tool_name or _called(turn)
    )


def _called(turn: Turn) -> str | None:
    return turn.tool_calls[0][1] if turn.tool_calls else None


def speaker(turn: Turn) -> str | None:
    """Who said a turn, when it says: the message's `name`, else a "Name: " its text
    begins with (how multi-party chats are often written)."""
    name = turn.message.get("name") if isinstance(turn.message, dict) else None
    if isinstance(name, str) and name.strip():
        return name.strip()
    text = turn.text or ""
    head, sep, _ = text[:40].partition(":")
    if sep and head.strip() and len(head.split()) <= 2 and head.strip()[0].isupper():
        return head.strip()
    return None


def message_hit(m: Message) -> RecordHit:
    """A task's message as a hit of search over everything."""
    return RecordHit(
        "message",
        m.id,
        m.task_id,
        None,
        None,
        m.created_at,
        m.role.value,
        first_line(m.content),
        "",
        0.0,
        "content",
    )


def turn_hit(t: Turn) -> RecordHit:
    """A conversation's turn as a hit of search over everything."""
    label = t.role + (f" ({t.tool_name})" if t.tool_name else "")
    return RecordHit(
        "turn",
        t.id,
        None,
        t.session_id,
        t.number,
        t.created_at,
        label,
        first_line(t.text),
        clip(" ".join((t.text or "").split()), 200),
        0.0,
        "content",
    )


def first_line(text: str | None) -> str:
    """A text's first line, at most 200 characters: a hit's title."""
    return (text or "").strip().split("\n", 1)[0][:200]


def neighbour_places(found: Iterable[Found], top: int) -> dict[str, set[int]]:
    """The turns either side of the best `top` turns found, by session: the neighbours to
    fetch so that a reply can rank by the question its turn answers."""
    turns = sorted(
        (f for f in found if f.hit.kind == "turn" and f.hit.score < 0), key=lambda f: f.hit.score
    )[:top]
    places: dict[str, set[int]] = {}
    for f in turns:
        assert f.hit.session_id is not None and f.hit.turn is not None
        places.setdefault(f.hit.session_id, set()).update(
            n for n in (f.hit.turn - 1, f.hit.turn + 1) if n >= 1
        )
    return places


_MARKED = lazy(r"\[([^\[\]\n]{1,80})\]")
_TERM = lazy(r"\w+")


def plain_snippet(snippet: str, query: str) -> tuple[str, list[tuple[int, int]]]:
    """A hit's snippet without the [brackets] that mark its matched words for a terminal,
    and where those words are in it (start, end offsets). A bracket pair counts as a mark
    when it holds a word of the query (or one sharing its first four letters, as a stem
    does), so a log's own "[Makefile:8: all]" keeps its brackets."""
    stems = {w.casefold()[:4] for w in _TERM.compiled.findall(query)}
    out: list[str] = []
    matches: list[tuple[int, int]] = []
    at = 0  # in the snippet
    size = 0  # of the plain text so far
    for found in _MARKED.compiled.finditer(snippet):
        words = {w.casefold()[:4] for w in _TERM.compiled.findall(found.group(1))}
        if not words & stems:
            continue
        before = snippet[at : found.start()]
        out.append(before)
        size += len(before)
        out.append(found.group(1))
        matches.append((size, size + len(found.group(1))))
        size += len(found.group(1))
        at = found.end()
    out.append(snippet[at:])
    return "".join(out), matches
