"""The conversation archive's values: sessions and their verbatim turns.

Like every module of clew.models, this one does without `from __future__ import
annotations`: NamedTuple compiles each field's annotation that is a string, and the hook
path imports every record (see the package's docstring).
"""

from typing import Any, NamedTuple


class Session(NamedTuple):
    """A conversation: its turns are archived verbatim, its state extracted as it goes."""

    id: str
    space: str
    key: str | None  # the caller's own name for it (an Agents SDK session_id)
    workspace: str | None
    model: str | None
    system_prompt: str | None
    task_id: str | None
    title: str | None
    started_at: str
    last_active_at: str
    total_tokens: int
    turn_count: int
    state: dict[str, Any]
    active: bool


class Turn(NamedTuple):
    """One message of a conversation, exactly as it was sent (`message`), with what clew
    derives from it: its role, its text, its tool calls, the call a result answers."""

    id: str
    space: str
    session_id: str
    number: int
    role: str
    text: str | None
    message: dict[str, Any]
    tool_calls: tuple[tuple[str | None, str, str], ...]  # (id, name, arguments)
    tool_call_id: str | None
    tool_name: str | None
    call_turn: int | None  # for a tool result, the turn that made the call
    token_count: int  # an estimate (4 characters a token); context assembly counts exactly
    hidden: bool  # hidden from the session's view (popped or cleared), kept in the archive
    created_at: str
