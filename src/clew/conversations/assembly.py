"""Context assembly for a session or for a task alone: `Memory.assemble`, the service
`assembly` of Memory (a session's prompt is the conversations service's).

A task's context is built from tiers by the same pure assembler as a session's prompt
(`context.assemble`), without turns: the task state (always, first), its most recent
decisions (the episodic trace's and the recorded ones, newest 5), the 3 patterns most
relevant to the task (by domain and shared words with its goal and current step, then by
evidence), the enabled guardrails, and entries relevant to the current step (its own, those
naming it, and a full-text search of its words). Each tier has its own cap
(`TASK_TIER_BUDGETS`), the whole stays within `budget` minus an output `reserve`, and the
explain record says what went in and what was left out.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Any

from clew.archive.semantic import evidence, guardrail_lines
from clew.conversations.context import Context, Section, Tier, assemble, tier_caps
from clew.conversations.prompting import (
    CONTEXT_BUDGET,
    MAX_CONTEXT_BUDGET,
    Conversations,
)
from clew.core import checks
from clew.core.text import clip
from clew.core.tokens import counter
from clew.errors import ValidationError
from clew.kernel import Kernel, Service
from clew.models import EntryFilter, EntryStatus, EntryType, Pattern, Task
from clew.search.retrieval import Retrieval
from clew.state.brief import current_step

TASK_CONTEXT_BUDGET = 2_000  # tokens of a task's context, by default
MIN_TASK_CONTEXT = 600  # the state's smallest render and its heading
TASK_TIER_BUDGETS = {
    "task_state": 1000,
    "decisions": 300,
    "patterns": 300,
    "guardrails": 300,
    "entries": 600,
}
RECENT_DECISIONS = 5  # get_recent_decisions(count=5)
RELEVANT_PATTERNS = 3  # retrieve_similar_patterns(k=3)
RELEVANT_ENTRIES = 10
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    {"the", "a", "an", "to", "and", "or", "of", "in", "on", "for", "with", "is", "it", "by"}
    | {"be", "as", "at", "this", "that", "from", "step", "task", "do", "use"}
)


def _words(*texts: str | None) -> set[str]:
    return {w for t in texts if t for w in _WORD.findall(t.lower()) if w not in _STOP}


def rank_patterns(
    patterns: Sequence[Pattern], domain: str | None, words: set[str], k: int
) -> list[Pattern]:
    """The `k` patterns most relevant to a task: same domain counts 2, each word shared
    with its goal, current step or query 1; ties go to the better evidence. A pattern with
    no relevance at all is not included."""

    def score(p: Pattern) -> int:
        shared = len(words & _words(p.name, p.description, p.kind))
        return (2 if domain and p.domain.lower() == domain.lower() else 0) + shared

    scored = [(score(p), p) for p in patterns if not p.deprecated]
    scored = [(s, p) for s, p in scored if s > 0]
    scored.sort(key=lambda sp: (-sp[0], -evidence(sp[1]), sp[1].name))
    return [p for _, p in scored[:k]]


class Assembly(Service):
    """What to put in a prompt (a service of Memory): a session's next prompt through the
    conversations service, or a task's context alone, its entries and patterns found
    through retrieval."""

    def __init__(self, kernel: Kernel, conversations: Conversations, retrieval: Retrieval) -> None:
        super().__init__(kernel)
        self._conversations = conversations
        self._retrieval = retrieval

    def assemble(
        self,
        session: str | None = None,
        *,
        task: str | None = None,
        budget: int | None = None,
        reserve: int = 0,
        query: str | None = None,
        system_prompt: str | None = None,
        tiers: dict[str, int] | None = None,
    ) -> Context:
        """Assemble what to put in a prompt within `budget` tokens, `reserve` of them kept
        free for the model's answer. With a session: its next prompt (see
        `assemble_context`), with `task`'s state if given. Without one: `task`'s context
        (budget 2,000 by default): its state, its 5 most recent decisions, the 3 most
        relevant patterns, the guardrails and the entries relevant to its current step (or
        to `query`). `Context.tiers` explains what went in and what was left out."""
        reserve = checks.integer(reserve, "reserve")
        if reserve < 0:
            raise ValidationError(f"reserve cannot be negative ({reserve})")
        if session is not None:
            total = CONTEXT_BUDGET if budget is None else checks.integer(budget, "budget")
            if reserve >= total:
                raise ValidationError(f"reserve {reserve} leaves nothing of the {total} budget")
            context = self._conversations.assemble_context(
                session,
                budget=total - reserve,
                system_prompt=system_prompt,
                task_id=task,
                tiers=tiers,
            )
            return _reserved(context, total, reserve)
        if task is None:
            raise ValidationError("say what to assemble for: give a session, a task, or both")
        return self._task_context(task, budget, reserve, query, system_prompt, tiers)

    def _task_context(
        self,
        task_ref: str,
        budget: int | None,
        reserve: int,
        query: str | None,
        system_prompt: str | None,
        tiers: dict[str, int] | None,
    ) -> Context:
        total = TASK_CONTEXT_BUDGET if budget is None else checks.integer(budget, "budget")
        if not total - reserve >= MIN_TASK_CONTEXT or total > MAX_CONTEXT_BUDGET:
            raise ValidationError(
                f"budget {total} with reserve {reserve} is out of range: the context needs"
                f" {MIN_TASK_CONTEXT}-{MAX_CONTEXT_BUDGET} tokens after the reserve"
            )
        caps = tier_caps(TASK_TIER_BUDGETS, tiers)
        prompt = checks.optional_text(system_prompt, "system prompt") or ""
        wanted = checks.optional_text(query, "query")
        tid = self._task_id(task_ref)
        with self._store.transaction():
            found = self._store.get_task(tid)
            sections = self._task_sections(found, wanted)
        try:
            context, _ = assemble(
                budget=total - reserve,
                system_prompt=prompt,
                sections=sections,
                turns=(),
                earlier=0,
                measure=lambda turn: 0,
                counter=counter(),
                tier_budgets=caps,
            )
        except ValueError as exc:
            raise ValidationError(f"{exc}; raise the budget") from None
        context = context._replace(tiers=tuple(t for t in context.tiers if t.name != "turns"))
        return _reserved(context, total, reserve)

    def _task_sections(self, task: Task, query: str | None) -> list[Section]:
        """The tiers of a task's context, empty ones too (the explain record lists them)."""
        state = functools.partial(self._conversations._state_text, task.id)
        sections = [Section("task_state", "Task state", render=state)]
        sections.append(Section("decisions", "Recent decisions", tuple(self._decisions(task))))
        found = current_step(task.plan)
        step_title = found[1].title if found else None
        row = self._store.task_record_row(task.id) or {}
        words = _words(task.name, task.goal, step_title, query)
        known = self._store.list_patterns()
        patterns = rank_patterns(known, row.get("domain"), words, RELEVANT_PATTERNS)
        # Then the nearest in meaning (the vectors extra): "blue-green rollout" for a task
        # about zero downtime shares none of its words.
        about = "\n".join(t for t in (task.name, task.goal, step_title, query) if t)
        have = {p.id for p in patterns}
        by_id = {p.id: p for p in known}
        if len(patterns) < RELEVANT_PATTERNS:
            for ident in self._retrieval._patterns_by_meaning(about, RELEVANT_PATTERNS):
                if ident not in have and ident in by_id and len(patterns) < RELEVANT_PATTERNS:
                    patterns.append(by_id[ident])
        lines = [_pattern_line(p) for p in patterns]
        sections.append(Section("patterns", "Relevant patterns", tuple(lines)))
        rules = self._store.list_guardrails(enabled_only=True)
        lines = guardrail_lines(rules).splitlines() if rules else []
        sections.append(Section("guardrails", "Guardrails", tuple(lines)))
        lines = [
            f"- [{e.type.value}] {clip(e.summary, 200)} (entry {e.id[:8]})"
            for e in self._relevant(task, found[1].id if found else None, step_title, query)
        ]
        sections.append(Section("entries", "Relevant memory", tuple(lines)))
        return sections

    def _decisions(self, task: Task) -> list[str]:
        """The newest decisions of the task, the trace's and the recorded ones together."""
        traced = self._store.newest_trace_decisions(task.id, RECENT_DECISIONS)
        recorded = self._store.list_entries(
            EntryFilter(task.id, (EntryType.DECISION,), (EntryStatus.ACTIVE,)),
            limit=RECENT_DECISIONS,
        )
        items: list[tuple[str, str]] = []
        for d in traced:
            who = f"{d.agent}: " if d.agent else ""
            error = f"; {clip(d.error, 80)}" if d.error else ""
            items.append(
                (d.created_at, f"- [trace] {who}{clip(d.action, 160)} -> {d.outcome}{error}")
            )
        for e in recorded:
            items.append((e.created_at, f"- [decision] {clip(e.summary, 200)} (entry {e.id[:8]})"))
        items.sort(key=lambda item: item[0], reverse=True)
        return [line for _, line in items[:RECENT_DECISIONS]]

    def _relevant(
        self, task: Task, step_id: str | None, step_title: str | None, query: str | None
    ) -> list[Any]:
        """Entries for the current step: its own and those naming it, then a search of its
        title's (or the query's) words; decisions (their own tier) and superseded left out."""
        chosen: dict[str, Any] = {}
        if step_id is not None:
            for e in self._store.relevant_entries(task.id, step_id, limit=RELEVANT_ENTRIES):
                chosen.setdefault(e.id, e)
        # Then the entries most relevant to the step's words, by meaning too with vectors.
        words = " ".join(sorted(_words(query or step_title or task.goal or task.name)))
        try:
            scope = EntryFilter(task.id)
            hits = (
                self._retrieval._search(
                    words, ("entry",), scope, None, "auto", RELEVANT_ENTRIES, False
                )
                if words
                else []
            )
        except ValidationError:
            hits = []
        for hit in hits:
            if hit.id not in chosen:
                chosen[hit.id] = self._store.get_entry(hit.id)
        return [
            e
            for e in chosen.values()
            if e.type is not EntryType.DECISION and e.status is not EntryStatus.SUPERSEDED
        ][:RELEVANT_ENTRIES]


def _pattern_line(p: Pattern) -> str:
    tried = p.success_count + p.failure_count
    record = f"{p.success_count}/{tried} worked" if tried else "untried"
    what = f": {clip(p.description, 200)}" if p.description else ""
    return f"- {clip(p.name, 80)} ({p.domain}; {record}){what}"


def _reserved(context: Context, total: int, reserve: int) -> Context:
    """The context with its whole budget and, if any, the reserve in its explain record."""
    if not reserve:
        return context
    tier = Tier("output_reserve", reserve, 0, 0, 0, "kept free for the model's answer")
    return context._replace(budget=total, tiers=(*context.tiers, tier))
