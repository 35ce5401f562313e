"""Search by words over every subject (each backend compiles `search.Query` its own way). Part of
the backend contract (store/contract/__init__.py states the rules every method keeps)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from clew.core.query import Query
from clew.models import (
    Action,
    EntryFilter,
    RecordHit,
    SearchHit,
    Turn,
)


class TextSearch(Protocol):
    """Search by words: entries, the outline's records, messages, commands, trace decisions and
    turns, and failed commands; each backend's own index (FTS5, tsvector) compiles the
    structured query."""

    def search_entries(self, query: Query, filters: EntryFilter, *, limit: int) -> list[SearchHit]:
        """The best `limit` entries matching the query and the filters, best first (lower
        score is better; rare terms weigh more), each with a snippet with the matched
        words in [brackets]. A very common term may be ranked among its newest matches
        only (SQLite: 5,000), which keeps it fast at any size."""
        ...

    def search_outline(
        self,
        query: Query,
        kinds: Sequence[str],
        *,
        task_id: str | None = None,
        step_id: str | None = None,
        since: str | None = None,
        until: str | None = None,
        limit: int,
    ) -> list[tuple[str, float, tuple[Any, ...]]]:
        """The outline's records matching the query (task names, goals, plan steps with
        their issue and summary, final answers, patterns, guardrails: the `kinds` asked
        for), of one task or step, made within `since` (inclusive) and `until`
        (exclusive), by their search index: the best `limit`, best first, as (kind, score,
        row of portable_tasks.OUTLINE_SQL's columns), the score comparable across these
        kinds (bm25, lower is better)."""
        ...

    def search_records(
        self,
        query: Query,
        kinds: Sequence[str],
        *,
        task_id: str | None = None,
        step_id: str | None = None,
        session_ids: Sequence[str] | None = None,
        since: str | None = None,
        until: str | None = None,
        limit: int,
    ) -> list[RecordHit]:
        """Messages, commands (command line and output), trace decisions (action, and
        outcome, error, state, agent, context, artifacts) and conversation turns matching
        the query, of the `kinds` asked for (message, action, decision, turn), in a time range
        (`since` inclusive, `until` exclusive); each kind's best `limit`, ranked within its
        own kind with scores comparable across kinds (raw bm25, lower is better); the
        caller merges them. A `step_id` keeps the commands and decisions of that step
        (and no messages or turns); `session_ids` keeps the turns of those sessions (and
        nothing else)."""
        ...

    def records_between(
        self,
        kinds: Sequence[str],
        *,
        since: str,
        until: str,
        task_id: str | None = None,
        session_ids: Sequence[str] | None = None,
        limit: int,
    ) -> list[tuple[str, str]]:
        """The (kind, id) of the messages, commands, trace decisions and turns of the `kinds`
        asked for made in a time range (`since` inclusive, `until` exclusive), whatever
        their words; newest first, at most `limit` of each kind. `session_ids` keeps the
        turns of those sessions (and nothing else)."""
        ...

    def failed_actions_matching(self, query: Query, *, limit: int = 50) -> list[Action]:
        """Failed commands whose command line or output matches the query, newest first
        (a candidate set: the caller confirms the text is there verbatim)."""
        ...

    def search_turns(
        self, session_id: str | None, query: Query, *, limit: int
    ) -> list[tuple[Turn, float, str]]:
        """The best `limit` turns matching the query (of one session, or of all), as
        (turn, score, snippet), best first (lower score is better)."""
        ...
