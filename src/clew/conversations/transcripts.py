"""Coding assistants' own transcript files, read as clew turns. Pure: lines in, messages out.

**Claude Code** writes one JSON line per message (an assistant reply is one line per content
block: its thinking, its text, each tool call), each with a `uuid`, and a tool result is a
user line. A kept line becomes one turn whose message is the line with the fields listed in
`CLAUDE_KEPT` (the Anthropic `message` verbatim, with its `uuid`, `parentUuid`, `timestamp`,
`isSidechain` and the markers of meta and compaction lines); the rest of a line (the folder,
the version, the branch, `toolUseResult`, which repeats the result's output and for an edit
the whole file) is the transcript's bookkeeping. Kept: user and assistant lines, summary
lines, and system lines with text (a compaction's boundary). Left out: file-history
snapshots, queue operations, attachments, system lines without text (a turn's duration).

**Codex CLI** writes a rollout file: `session_meta` (the session's id and folder), then
`response_item` lines whose payload is a Responses API item (messages, reasoning, function
calls and their outputs), which clew takes as they are; `event_msg` lines repeat them for
its interface, `turn_context` names the model, and `compacted` holds a compaction's summary
(kept as a system turn). Its lines carry no ids: a rollout only grows, so the n-th item
kept is the session's n-th turn.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from clew.errors import ValidationError

__all__ = [
    "CLAUDE_KEPT",
    "FORMATS",
    "CodexMeta",
    "claude_id",
    "claude_message",
    "codex_item",
    "codex_meta",
    "subagent",
]

FORMATS = ("claude-code", "codex")

CLAUDE_KEPT = (
    "type",
    "uuid",
    "parentUuid",
    "isSidechain",
    "agentId",
    "timestamp",
    "isMeta",
    "isCompactSummary",
    "subtype",
    "content",
    "level",
    "compactMetadata",
    "summary",
    "leafUuid",
    "message",
)


def claude_message(line: object) -> dict[str, Any] | None:
    """The turn a Claude Code transcript line becomes, or None for a line that is not a
    message (a snapshot, a queue operation, a system line without text...)."""
    if not isinstance(line, dict):
        return None
    kind = line.get("type")
    if kind in ("user", "assistant"):
        message = line.get("message")
        if not isinstance(message, dict) or not isinstance(line.get("uuid"), str):
            return None
    elif kind == "system":
        if not isinstance(line.get("uuid"), str) or not _has_text(line.get("content")):
            return None
    elif kind == "summary":
        if not isinstance(line.get("leafUuid"), str) or not _has_text(line.get("summary")):
            return None
    else:
        return None
    return {k: line[k] for k in CLAUDE_KEPT if k in line}


def claude_id(message: dict[str, Any]) -> str | None:
    """What names a kept Claude Code line among its transcript's: its uuid, or for a summary
    line (which has none) the line it summarizes, prefixed."""
    if message.get("type") == "summary":
        leaf = message.get("leafUuid")
        return f"summary:{leaf}" if isinstance(leaf, str) else None
    uuid = message.get("uuid")
    return uuid if isinstance(uuid, str) else None


def _has_text(value: object) -> bool:
    return isinstance(value, str) and bool(value.strip())


class CodexMeta(NamedTuple):
    """What a Codex rollout's `session_meta` line says about the session."""

    id: str
    cwd: str | None
    started: str | None


def codex_meta(line: object, where: str) -> CodexMeta:
    """The session a Codex rollout's first line names, or a ValidationError saying the file
    is not a rollout."""
    payload = line.get("payload") if isinstance(line, dict) else None
    if not (isinstance(line, dict) and line.get("type") == "session_meta"):
        raise ValidationError(
            f"{where} does not start with a session_meta line: it is not a Codex rollout file"
            " (they are under ~/.codex/sessions/)"
        )
    if not isinstance(payload, dict) or not isinstance(payload.get("id"), str):
        raise ValidationError(f"{where}: its session_meta line has no session id")
    cwd, started = payload.get("cwd"), payload.get("timestamp") or line.get("timestamp")
    return CodexMeta(
        payload["id"],
        cwd if isinstance(cwd, str) else None,
        started if isinstance(started, str) else None,
    )


def codex_item(line: object) -> dict[str, Any] | None:
    """The turn a Codex rollout line becomes: a response item's payload as it is, or a
    compaction's summary as a system message; None for the other lines."""
    if not isinstance(line, dict):
        return None
    payload = line.get("payload")
    if line.get("type") == "response_item" and isinstance(payload, dict):
        if isinstance(payload.get("role"), str) or isinstance(payload.get("type"), str):
            return payload
        return None
    if line.get("type") == "compacted" and isinstance(payload, dict):
        summary = payload.get("message")
        if _has_text(summary):
            return {"role": "system", "content": summary, "type": "compacted"}
    return None


def codex_model(line: object) -> str | None:
    """The model a rollout's `turn_context` line names, if it is one."""
    if isinstance(line, dict) and line.get("type") == "turn_context":
        payload = line.get("payload")
        model = payload.get("model") if isinstance(payload, dict) else None
        return model if isinstance(model, str) else None
    return None


def subagent(event: object) -> tuple[str, str] | None:
    """For a Claude Code SubagentStop hook event: the subagent's own transcript and the key
    of its session (`<session id>/agent-<agent id>`); None for any other event."""
    if not isinstance(event, dict) or event.get("hook_event_name") != "SubagentStop":
        return None
    path, session, agent = (
        event.get("agent_transcript_path"),
        event.get("session_id"),
        event.get("agent_id"),
    )
    if not all(isinstance(v, str) and v for v in (path, session, agent)):
        return None
    return str(path), f"{session}/agent-{agent}"
