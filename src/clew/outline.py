"""What search finds beyond the full-text indexes: the outline of the work (each task's name,
its goal and its final answer, each plan step's title with its issue and summary) and
semantic memory (patterns, guardrails). Pure but for `documents`, which reads them.

A store holds few of these (tens to thousands, against millions of turns), so they are read
whole (the newest MAX_DOCUMENTS of each kind) and ranked here with bm25 over the question's
terms, as the indexes rank theirs: a term matches a word that starts with its stem
("registr" in "registries"), an identifier or phrase of several tokens matches them in a
row. Search (retrieval.py) mixes the result into its one list, reading each kind's bm25
against its own best as it does each index's.

A deprecated pattern, a disabled guardrail and a removed step are history: their labels
say so (", deprecated", ", disabled", ", removed"), and the ranking puts them below the
current records (ranking.current_first).
"""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from clew.models import OUTLINE_KINDS, EntryFilter, RecordHit, TaskStatus
from clew.search import Query, Term

if TYPE_CHECKING:
    from clew.store import Store

MAX_DOCUMENTS = 5000  # of each kind, the newest: more is a store few agents make
_TITLE_CHARS = 200
_TOKEN = re.compile(r"[^\W_]+")
_K1 = 1.2
_B = 0.75
_SUFFIXES = ("ingly", "edly", "ies", "ing", "ied", "ed", "es", "ly", "s")


class Document(NamedTuple):
    """One thing search can find here: its hit (score 0) and the text it is matched in."""

    hit: RecordHit
    text: str


def documents(store: Store, kinds: Sequence[str], filters: EntryFilter) -> list[Document]:
    """The documents of the kinds asked for that the filters leave: a task's (of one task
    with `filters.task_id`; only steps with a step), patterns and guardrails (none within
    one task: they belong to none), created within `since`/`until`."""
    wanted = [k for k in OUTLINE_KINDS if k in kinds]
    if not wanted or filters.types or filters.statuses or filters.tags:
        return []
    docs: list[Document] = []
    task_kinds = {"task", "goal", "step", "answer"} & set(wanted)
    if filters.subtask_id is not None:
        task_kinds &= {"step"}
    if task_kinds:
        docs += _task_documents(store, task_kinds, filters)
    if filters.task_id is None and filters.subtask_id is None:
        if "pattern" in wanted:
            for p in store.list_patterns(include_deprecated=True)[-MAX_DOCUMENTS:]:
                state = ", deprecated" if p.deprecated else ""
                text = "\n".join(x for x in (p.name, p.description, p.example, p.kind) if x)
                label = f"pattern {p.domain}{state}"
                docs.append(
                    _document("pattern", p.id, None, p.created_at, label, p.name, text, "name")
                )
        if "guardrail" in wanted:
            for g in store.list_guardrails()[-MAX_DOCUMENTS:]:
                state = "" if g.enabled else ", disabled"
                label = f"guardrail {g.enforcement.value}{state}"
                docs.append(_document("guardrail", g.id, None, g.created_at, label, g.text,
                                      g.text, "text"))  # fmt: skip
    return [d for d in docs if _in_time(d.hit.created_at, filters)]


def _task_documents(store: Store, kinds: set[str], filters: EntryFilter) -> list[Document]:
    if filters.task_id is not None:
        tasks = [store.get_task(filters.task_id)]
    else:
        tasks = store.list_tasks(include_archived=True)[:MAX_DOCUMENTS]
    docs: list[Document] = []
    for t in tasks:
        state = "" if t.status is TaskStatus.ACTIVE else f", {t.status.value}"
        if "task" in kinds:
            docs.append(_document("task", t.id, t.id, t.created_at, f"task{state}", t.name,
                                  t.name, "name"))  # fmt: skip
        if "goal" in kinds and t.goal:
            docs.append(_document("goal", t.id, t.id, t.created_at, f"goal{state}", t.goal,
                                  t.goal, "goal"))  # fmt: skip
        if "step" in kinds:
            for s in t.plan:
                if filters.subtask_id is not None and s.id != filters.subtask_id:
                    continue
                text = "\n".join(x for x in (s.title, s.active_issue, s.summary) if x)
                label = f"step {s.ordinal} {s.status.value}"
                hit = _document("step", s.id, t.id, s.created_at, label, s.title, text, "title")
                docs.append(hit._replace(hit=hit.hit._replace(step_id=s.id)))
    if "answer" in kinds:
        only = filters.task_id
        for tid, answer, at in store.task_answers(MAX_DOCUMENTS):
            if only is None or tid == only:
                docs.append(_document("answer", tid, tid, at, "answer", _first_line(answer),
                                      answer, "answer"))  # fmt: skip
    return docs


def _document(
    kind: str, ident: str, task_id: str | None, at: str, label: str, title: str, text: str,
    field: str,
) -> Document:  # fmt: skip
    hit = RecordHit(kind, ident, task_id, None, None, at, label, _first_line(title), "", 0.0,
                    field)  # fmt: skip
    return Document(hit, text)


def ranked(docs: Sequence[Document], query: Query, limit: int) -> list[Document]:
    """The documents matching a query, best first, their bm25 (negative: lower is better,
    as the indexes give it) in hit.score and the matched words in [brackets] in the
    snippet: every term must match unless `query.any_terms`; none excluded may."""
    if not docs or not query.include:
        return []
    tokens = [_tokens(d.text) for d in docs]
    matchers = [_matcher(t) for t in query.include]
    excluded = [_matcher(t) for t in query.exclude]
    counts = [[len(m.findall(d.text)) for m in matchers] for d in docs]
    holding = [sum(1 for c in column if c) for column in zip(*counts, strict=True)]
    n = len(docs)
    average = sum(len(t) for t in tokens) / n or 1.0
    scored: list[tuple[float, int]] = []
    for i, d in enumerate(docs):
        tf = counts[i]
        if not any(tf) or (not query.any_terms and not all(tf)):
            continue
        if any(m.search(d.text) for m in excluded):
            continue
        norm = _K1 * (1 - _B + _B * len(tokens[i]) / average)
        score = sum(
            math.log(1 + (n - held + 0.5) / (held + 0.5)) * f * (_K1 + 1) / (f + norm)
            for f, held in zip(tf, holding, strict=True)
            if f
        )
        scored.append((-score, i))
    scored.sort()
    out = []
    for score, i in scored[:limit]:
        d = docs[i]
        snippet = _marked(d.text, matchers)
        out.append(d._replace(hit=d.hit._replace(score=score, snippet=snippet)))
    return out


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
    """A light suffix stripping (as ranking.stem does), less a long stem's last letter so
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
