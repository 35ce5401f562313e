"""The conversation archive's prompt: token-aware context assembly and resume, the service
`conversations` of Memory (sessions and their turns are the sessions service, sessions.py;
recall is recollection.py).
"""

from __future__ import annotations

import functools
import os
from collections import OrderedDict
from typing import NamedTuple

from clew.archive.semantic import guardrail_lines
from clew.conversations.context import TIER_BUDGETS, Context, Section, assemble, tier_caps
from clew.conversations.sessions import Sessions
from clew.core import checks
from clew.core.text import clip
from clew.core.tokens import counter
from clew.errors import NotFoundError, ValidationError
from clew.kernel import Kernel, Service
from clew.models import EntryStatus, Session, Turn
from clew.state.brief import current_step
from clew.state.document import MAX_BUDGET
from clew.state.working import Working

__all__ = ["CONTEXT_BUDGET", "MAX_CONTEXT_BUDGET", "Conversations", "Resumed"]

CONTEXT_BUDGET = 32_000
MIN_CONTEXT_BUDGET, MAX_CONTEXT_BUDGET = 1_000, 10_000_000
ENTRIES_SHOWN = 20
_MEASURED = 50_000  # exact token counts of turns remembered, by turn id
_FIRST_PAGE = 256  # turns loaded for context assembly, then four times more while needed


class Resumed(NamedTuple):
    """A resumed session and the prompt to go on with."""

    session: Session
    context: Context


class Conversations(Service):
    """A session's context assembly and resume (a service of Memory): it reads sessions
    through the sessions service and the task state a context carries through layer 1."""

    def __init__(self, kernel: Kernel, sessions: Sessions, working: Working) -> None:
        super().__init__(kernel)
        self._sessions = sessions
        self._working = working
        # Exact tokens by turn id, the newest _MEASURED of them: a long session's turns are
        # counted once, not at every assembly.
        self._measured: OrderedDict[str, int] = OrderedDict()

    # -- context assembly -----------------------------------------------------------------

    def assemble_context(
        self,
        session: str,
        *,
        budget: int = CONTEXT_BUDGET,
        system_prompt: str | None = None,
        task_id: str | None = None,
        retrieved: str | None = None,
        tiers: dict[str, int] | None = None,
    ) -> Context:
        """The prompt to send next: the system prompt (given, else the session's), the task
        state (the session's task, or `task_id`), the session state, the guardrails, the
        task's relevant entries, `retrieved` context, and as many recent turns as fit in
        `budget` tokens; each tier within its own budget (`tiers` overrides them: see
        context.TIER_BUDGETS). `Context.tiers` explains what went in and what was left out."""
        budget = checks.integer(budget, "budget")
        if not MIN_CONTEXT_BUDGET <= budget <= MAX_CONTEXT_BUDGET:
            raise ValidationError(
                f"budget {budget} is out of range: use {MIN_CONTEXT_BUDGET}-{MAX_CONTEXT_BUDGET}"
            )
        caps = tier_caps(TIER_BUDGETS, tiers)
        with self._store.transaction():
            current = self._sessions.get_session(session)
            tid = self._task_id(task_id) if task_id is not None else current.task_id
            sections = self._sections(current, tid, retrieved)
            prompt, lead = self._system_prompt(current, system_prompt)
            page = _FIRST_PAGE
            while True:
                loaded, earlier = self._recent(current.id, page)
                if lead:  # the leading system turn is the system prompt: not sent twice
                    loaded = [t for t in loaded if t.number != 1]
                    earlier = max(0, earlier - 1)
                try:
                    context, more = assemble(
                        budget=budget,
                        system_prompt=prompt,
                        sections=sections,
                        turns=loaded,
                        earlier=earlier,
                        measure=self._measure,
                        counter=counter(),
                        tier_budgets=caps,
                        hint=_hint,
                    )
                except ValueError as exc:
                    raise ValidationError(f"{exc}; raise the budget") from None
                if not more:
                    return context
                page *= 4

    def _system_prompt(self, current: Session, given: str | None) -> tuple[str, bool]:
        """The system prompt: the one given, else the session's; failing both, a leading
        system turn of the conversation (and whether it is that)."""
        prompt = checks.optional_text(given, "system prompt") or current.system_prompt
        if prompt is not None:
            return prompt, False
        first = self._store.turns_numbered(current.id, [1])
        if first and first[0].role == "system" and not first[0].hidden:
            return first[0].text or "", True
        return "", False

    def _recent(self, session_id: str, page: int) -> tuple[list[Turn], int]:
        """The newest `page` visible turns, reaching back to a user turn so that no tool
        call is cut from its result; and how many visible turns come before them."""
        loaded = self._store.get_turns(session_id, newest=page, include_hidden=False)
        if loaded and loaded[0].role != "user":
            start = self._store.last_user_turn(session_id, at_most=loaded[0].number)
            if start is not None:
                loaded = self._store.get_turns(session_id, first=start, include_hidden=False)
        earlier = self._store.count_turns(session_id, before=loaded[0].number) if loaded else 0
        return loaded, earlier

    def _measure(self, turn: Turn) -> int:
        """A turn's tokens by the real tokenizer, remembered for the next assembly."""
        cache = self._measured
        known = cache.get(turn.id)
        if known is None:
            text = "\n".join(
                [
                    turn.text or "",
                    *(f"{name}({arguments})" for _, name, arguments in turn.tool_calls),
                ]
            )
            known = cache[turn.id] = counter().text(text)
            if len(cache) > _MEASURED:
                cache.popitem(last=False)
        return int(known)

    def _sections(
        self, current: Session, task_id: str | None, retrieved: str | None
    ) -> list[Section]:
        """Every tier of the system message, empty ones too (the explain record lists them)."""
        sections: list[Section] = []
        if task_id is not None:
            state = functools.partial(self._state_text, task_id)
            sections.append(Section("task_state", "Task state", render=state))
        else:
            sections.append(Section("task_state", "Task state"))
        session_text = functools.partial(self._session_state_text, current.id)
        sections.append(Section("session_state", "Session state", render=session_text))
        rules = self._store.list_guardrails(enabled_only=True)
        lines = guardrail_lines(rules).splitlines() if rules else []
        sections.append(Section("guardrails", "Guardrails", tuple(lines)))
        entries = []
        if task_id is not None:
            step = current_step(self._store.get_plan(task_id))
            if step is not None:
                entries = self._store.relevant_entries(task_id, step[1].id, limit=ENTRIES_SHOWN)
        lines = [
            f"- [{e.type.value}] {clip(e.summary, 200)} (entry {e.id[:8]})"
            for e in entries
            if e.status != EntryStatus.SUPERSEDED
        ]
        sections.append(Section("entries", "Relevant memory", tuple(lines)))
        extra = checks.optional_text(retrieved, "retrieved context")
        lines = extra.splitlines() if extra is not None else []
        sections.append(Section("retrieved", "Retrieved from the archive", tuple(lines)))
        return sections

    def _state_text(self, task_id: str, budget: int) -> str:
        return self._working.state(task_id, budget=min(budget, MAX_BUDGET)).text

    def _session_state_text(self, session_id: str, budget: int) -> str:
        return self._sessions.session_state(session_id, budget=min(budget, MAX_BUDGET)).text

    # -- resume, import, export -----------------------------------------------------------

    def resume(
        self,
        session: str | None = None,
        *,
        workspace: str | None = None,
        budget: int = CONTEXT_BUDGET,
        system_prompt: str | None = None,
    ) -> Resumed:
        """Go on with a session: the one named, else the most recently active one of the
        workspace (the current directory if none is given). It becomes active again, and
        its prompt is assembled (a call without its result is repaired there)."""
        if session is None:
            where = workspace if workspace is not None else os.getcwd()
            found = self._sessions.list_sessions(where, limit=1)
            if not found:
                raise NotFoundError(
                    "session",
                    where,
                    "list every session with `clew session list --all`",
                    message=f"no session belongs to the workspace {where}",
                )
            session = found[0].id
        current = self._sessions._set_active(session, True)
        context = self.assemble_context(current.id, budget=budget, system_prompt=system_prompt)
        return Resumed(current, context)


def _hint(turn: Turn) -> str | None:
    from clew.conversations import hints  # lazily: only an assembled context with turns needs it

    return hints.hint(turn.text or "")
