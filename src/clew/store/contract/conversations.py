"""The conversation archive's reads: sessions and turns. Part of the backend contract
(store/contract/__init__.py states the rules every method keeps)."""

from __future__ import annotations

from typing import Protocol

from clew.models import (
    Session,
    Turn,
)


class ConversationReads(Protocol):
    """The conversation archive: sessions and their verbatim turns."""

    def get_session(self, session_id: str) -> Session:
        """One session by its full id. NotFoundError if none."""
        ...

    def find_session(self, ident: str) -> Session | None:
        """The session whose id, else whose key, is exactly `ident`; None if none."""
        ...

    def session_by_key(self, key: str) -> Session | None:
        """The session with this key (keys are unique in a space); None if none."""
        ...

    def session_to_append(self, ident: str) -> Session | None:
        """As find_session, for the write that appends to it: its `state` may be shared
        with the store's own cache, so the caller must never change it (or hand it out)."""
        ...

    def list_sessions(
        self, *, active_only: bool = False, limit: int | None = None, offset: int = 0
    ) -> list[Session]:
        """Sessions, most recently active first (ties: the newest made first); `offset`
        skips that many first (given only with a limit)."""
        ...

    def get_turns(
        self,
        session_id: str,
        *,
        first: int | None = None,
        last: int | None = None,
        include_hidden: bool = True,
        newest: int | None = None,
    ) -> list[Turn]:
        """Turns in number order: numbers `first`..`last` (inclusive), or the `newest` N;
        an unknown session has none."""
        ...

    def turns_numbered(self, session_id: str, numbers: list[int]) -> list[Turn]:
        """These turns of a session, in number order; numbers it lacks are skipped."""
        ...

    def count_turns(self, session_id: str, *, before: int | None = None) -> int:
        """Visible (not hidden) turns, all or those numbered below `before`; 0 for an
        unknown session."""
        ...

    def last_user_turn(self, session_id: str, *, at_most: int) -> int | None:
        """The number of the newest visible user turn numbered `at_most` or below; None."""
        ...

    def turns_by_id(self, ids: list[str]) -> list[Turn]:
        """Turns by id, ordered by session then number; unknown ids are skipped."""
        ...

    def tool_turns(self, session_id: str, tool_name: str, *, limit: int) -> list[Turn]:
        """The results of one tool's calls in a session, newest first."""
        ...

    def turn_stats(self, session_id: str) -> dict[str, dict[str, int]]:
        """{"roles": turns per role, "tools": tool results per tool name}."""
        ...
