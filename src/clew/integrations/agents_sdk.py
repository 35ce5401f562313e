"""The OpenAI Agents SDK's `Session` protocol over clew's conversation archive.

    from agents import Agent, Runner
    from clew.integrations.agents_sdk import ClewSession

    session = ClewSession("user-42", "~/.clew/clew.db")
    await Runner.run(agent, "Where were we?", session=session)

Every item the SDK adds is a turn, committed before `add_items` returns; `pop_item` and
`clear_session` hide items from the session's view but never delete them, so
`clew recall` (and the conversation_recall tool) still finds everything. The SDK itself is
not imported here: the class satisfies its protocol by shape.
"""

from __future__ import annotations

import os
from typing import Any

from clew.aio import AsyncMemory
from clew.memory import Memory


class ClewSession:
    """An Agents SDK session named `session_id`, kept in a clew store.

    `memory` is a Memory, an AsyncMemory, or a store path (None: the default store).
    The other arguments describe the session when it is first created."""

    session_settings: Any = None  # the SDK's SessionSettings; None takes its defaults

    def __init__(
        self,
        session_id: str,
        memory: Memory | AsyncMemory | str | os.PathLike[str] | None = None,
        *,
        workspace: str | None = None,
        model: str | None = None,
        task_id: str | None = None,
        title: str | None = None,
    ) -> None:
        if isinstance(memory, AsyncMemory):
            self._memory = memory
        elif isinstance(memory, Memory):
            self._memory = AsyncMemory(memory)
        else:
            import clew

            self._memory = AsyncMemory(clew.open(memory))
        self.session_id = session_id
        self._fields = {"workspace": workspace, "model": model, "task_id": task_id, "title": title}
        self._clew_id: str | None = None

    async def _id(self) -> str:
        if self._clew_id is None:
            session = await self._memory.open_session(self.session_id, **self._fields)
            self._clew_id = session.id
        return self._clew_id

    @property
    def memory(self) -> AsyncMemory:
        """The clew memory the session lives in (for recall, context assembly...)."""
        return self._memory

    async def get_items(self, limit: int | None = None) -> list[Any]:
        """The session's items in order; with a limit, the newest `limit` of them."""
        turns = await self._memory.list_turns(await self._id(), newest=limit)
        return [t.message for t in turns]

    async def add_items(self, items: list[Any]) -> None:
        """Archive items, all or none, committed before this returns."""
        if items:
            await self._memory.append_turns(await self._id(), list(items))

    async def pop_item(self) -> Any | None:
        """Hide the newest item from the session and return it (the archive keeps it)."""
        turn = await self._memory.pop_turn(await self._id())
        return None if turn is None else turn.message

    async def clear_session(self) -> None:
        """Hide every item from the session (the archive keeps them)."""
        await self._memory.clear_session(await self._id())
