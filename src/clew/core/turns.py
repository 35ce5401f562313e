"""Conversation messages, as agents send them, made into turns and back. Pure.

The shapes agents use are accepted: OpenAI chat messages (`role`, `content`, `name`,
`tool_calls`, `tool_call_id`); the Responses / Agents SDK items (`{"role": ...,
"content": ...}`, `{"type": "function_call", ...}`, `{"type": "function_call_output", ...}`,
reasoning items and the rest); Anthropic messages, whose content blocks carry the tool calls
(`tool_use`), their results (`tool_result`, in a user message: a tool turn) and `thinking`;
and the lines of a Claude Code transcript (`{"type": "user" | "assistant", "message": {...},
"uuid": ...}`, whose message is read as an Anthropic one; `system` and `summary` lines are
system turns; transcripts.py says which lines are kept). A turn keeps the message exactly
as given; what clew needs to search and assemble (its role, its text, its tool calls, the
call a result answers) is derived from it. A text `content` is stored once, in its own
column, and put back in place on the way out, so `restore(split(m)) == m`, key order
included.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from clew.errors import ValidationError

ROLES = ("user", "assistant", "tool", "system")
_ROLE_ALIASES = {"developer": "system", "function": "tool"}
# Items of the Responses API that carry no role: what they are in a conversation.
_ITEM_ROLES = {"function_call": "assistant", "function_call_output": "tool"}


class ToolCall(NamedTuple):
    id: str | None
    name: str
    arguments: str  # as the model wrote them (JSON text, usually)


class Parts(NamedTuple):
    """What clew derives from a message."""

    role: str
    text: str | None  # the searchable text
    tool_calls: tuple[ToolCall, ...]
    tool_call_id: str | None
    tool_name: str | None


def _text_of(content: Any) -> str | None:
    """The text of a content value: a string, or the text of its parts."""
    if content is None:
        return None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, dict):
                if part.get("type") == "tool_result":  # an Anthropic tool result's output
                    inner = _text_of(part.get("content"))
                    if inner is not None:
                        texts.append(inner)
                    continue
                for key in ("text", "output_text", "refusal", "input_text", "thinking"):
                    if isinstance(part.get(key), str):
                        texts.append(part[key])
                        break
        return "\n".join(texts) if texts else None
    return json.dumps(content, ensure_ascii=False)


def parse(message: object, where: str = "message") -> Parts:
    """Check a message's shape and derive its parts, or raise a ValidationError naming what
    is wrong. (That it is JSON data is `checks.json_object`'s to check.)"""
    if not isinstance(message, dict):
        raise ValidationError(f"{where} must be a JSON object, not {type(message).__name__}")
    kind = message.get("type")
    raw_role = message.get("role")
    if raw_role is None and kind in _TRANSCRIPT_LINES:
        return _transcript_line(message, kind, where)
    if raw_role is None and isinstance(kind, str):
        role = _ITEM_ROLES.get(kind, "tool" if kind.endswith("_output") else "assistant")
    elif isinstance(raw_role, str):
        role = _ROLE_ALIASES.get(raw_role, raw_role)
    else:
        raise ValidationError(f"{where} has no role (one of {', '.join(ROLES)}) and no type")
    if role not in ROLES:
        raise ValidationError(f"{where} has role {raw_role!r}, not one of: {', '.join(ROLES)}")
    content = message.get("content")
    if content is not None and not isinstance(content, str | list):
        raise ValidationError(f"{where}'s content must be text, a list of parts or null")
    calls: list[ToolCall] = []
    raw_calls = message.get("tool_calls")
    if raw_calls is not None:
        if not isinstance(raw_calls, list):
            raise ValidationError(f"{where}'s tool_calls must be a list")
        for n, call in enumerate(raw_calls, 1):
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(function, dict) or not isinstance(function.get("name"), str):
                raise ValidationError(f"{where}'s tool call {n} has no function name")
            arguments = function.get("arguments", "")
            if not isinstance(arguments, str):
                arguments = json.dumps(arguments, ensure_ascii=False)
            calls.append(ToolCall(call.get("id"), function["name"], arguments))
    text = _text_of(content)
    call_id = message.get("tool_call_id")
    if isinstance(content, list):
        calls.extend(_tool_uses(content))
        answered = _tool_result_ids(content) if role == "user" else []
        if answered:  # an Anthropic user message carrying tool results is a tool turn
            role, call_id = "tool", answered[0]
    name = message.get("name") if role == "tool" else None
    if kind in ("function_call", "custom_tool_call"):  # a custom tool's call has `input`
        arguments = message.get("arguments" if kind == "function_call" else "input", "")
        calls.append(ToolCall(message.get("call_id"), str(message.get("name", "")), str(arguments)))
        text = f"{message.get('name', '')}({arguments})"
    elif kind in ("function_call_output", "custom_tool_call_output"):
        call_id = message.get("call_id")
        text = _text_of(message.get("output"))
    elif text is None and kind is not None:
        text = _text_of(message.get("summary") or message.get("output"))
    if role == "tool" and kind is None and not isinstance(call_id, str):
        raise ValidationError(f"{where} is a tool result without a tool_call_id")
    return Parts(
        role,
        text,
        tuple(calls),
        call_id if isinstance(call_id, str) else None,
        name if isinstance(name, str) else None,
    )


# A Claude Code transcript line's own types (the transcript's `type`, with no `role`).
_TRANSCRIPT_LINES = ("user", "assistant", "system", "summary")


def _transcript_line(line: dict[str, Any], kind: str, where: str) -> Parts:
    """A Claude Code transcript line: a user or assistant line is its `message`; a system
    line (a compaction's boundary, a notice) and a summary line are system turns."""
    if kind in ("user", "assistant"):
        inner = line.get("message")
        if not isinstance(inner, dict):
            raise ValidationError(f"{where} is a transcript {kind} line without a message")
        return parse(inner, where)
    text = _text_of(line.get("summary") if kind == "summary" else line.get("content"))
    return Parts("system", text, (), None, None)


def _tool_uses(content: list[Any]) -> list[ToolCall]:
    """The calls of an Anthropic message's `tool_use` blocks."""
    calls = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "tool_use":
            name, arguments = block.get("name"), block.get("input", {})
            if isinstance(name, str):
                text = (
                    arguments
                    if isinstance(arguments, str)
                    else json.dumps(arguments, ensure_ascii=False)
                )
                calls.append(ToolCall(block.get("id"), name, text))
    return calls


def _tool_result_ids(content: list[Any]) -> list[str]:
    """The calls an Anthropic user message's `tool_result` blocks answer."""
    return [
        block["tool_use_id"]
        for block in content
        if isinstance(block, dict)
        and block.get("type") == "tool_result"
        and isinstance(block.get("tool_use_id"), str)
    ]


def blocks(message: dict[str, Any]) -> list[Any] | None:
    """The content blocks of an Anthropic message (or of a Claude Code line's message), or
    None for a message whose content is not a list of blocks."""
    kind = message.get("type")
    inner = (
        message.get("message")
        if kind in ("user", "assistant") and "role" not in message
        else message
    )
    content = inner.get("content") if isinstance(inner, dict) else None
    return content if isinstance(content, list) else None


def answered(message: dict[str, Any]) -> list[str]:
    """The calls an Anthropic message's `tool_result` blocks answer (all of them: a user
    message answers every call of the reply before it)."""
    content = blocks(message)
    return _tool_result_ids(content) if content is not None else []


def calls_by_block(message: dict[str, Any]) -> bool:
    """Whether a message makes its tool calls as Anthropic `tool_use` blocks (so a missing
    result must be made in that shape too)."""
    content = blocks(message)
    return content is not None and any(
        isinstance(b, dict) and b.get("type") == "tool_use" for b in content
    )


def derived(message: dict[str, Any], parts: Parts) -> dict[str, Any]:
    """What a `turn.appended` event carries besides the message: its parts as parsed now,
    so the projection copies them instead of parsing again (a parser tuned later never
    changes what an older turn replays to). The text is named by the message key holding
    it when it is that key's value verbatim, so a turn's text is not journaled twice."""
    fields: dict[str, Any] = {
        "role": parts.role,
        "tool_calls": [list(c) for c in parts.tool_calls] or None,
        "tool_call_id": parts.tool_call_id,
    }
    source = next(
        (
            k
            for k in ("content", "output")
            if parts.text is not None and message.get(k) == parts.text
        ),
        None,
    )
    if source is None:
        fields["text"] = parts.text
    else:
        fields["text_from"] = source
    return fields


def split(message: dict[str, Any]) -> tuple[str, str | None, bool]:
    """(the message to store, the text to store beside it, whether that text is its content)."""
    content = message.get("content")
    if isinstance(content, str):
        return json.dumps({**message, "content": None}, ensure_ascii=False), content, True
    return json.dumps(message, ensure_ascii=False), None, False


def restore(stored: str, content: str | None, text_content: bool) -> dict[str, Any]:
    """The message exactly as it was given."""
    message: dict[str, Any] = json.loads(stored)
    if text_content:
        message["content"] = content
    return message


def estimate_tokens(text: str | None, calls: tuple[ToolCall, ...] = ()) -> int:
    """A quick token estimate for a turn (4 characters a token, plus the message overhead);
    context assembly counts with the real tokenizer."""
    size = len(text or "") + sum(len(c.name) + len(c.arguments) for c in calls)
    return (size + 3) // 4 + 4


class Checked(NamedTuple):
    """A message checked as append_turns checks one (`checked`), with its parts: what a
    reader of a file that checks each message to name its line hands to import_session,
    so that the message is not checked twice. Made only by `checked`."""

    message: dict[str, Any]
    parts: Parts


def checked(message: object, where: str) -> Checked:
    """Check a message as append_turns does (JSON data, then its shape), naming `where` in
    an error; return it with its parts."""
    from clew.core import checks  # here: turns is pure and imported where checks is not needed

    normalized = checks.json_object(message, where)
    return Checked(normalized, parse(normalized, where))


def read_messages(text: str, source: str) -> list[dict[str, Any]]:
    """Messages from a file's text: a JSON list, a JSON object with a `messages` list, one
    message, or JSON Lines (one message per line; blank lines skipped). Every message is
    checked; the first bad one raises a ValidationError naming its line (or its place in
    the list)."""
    from clew.core import checks  # here: turns is pure and imported where checks is not needed

    text = text.removeprefix("\ufeff")
    if not text.strip():
        raise ValidationError(f"{source} is empty; it should hold messages as JSON or JSONL")
    try:
        whole = checks.json_value(text, source)
    except checks.NotJson:
        whole = None
    else:
        if isinstance(whole, dict):
            whole = whole["messages"] if isinstance(whole.get("messages"), list) else [whole]
        if isinstance(whole, list):
            for n, message in enumerate(whole, 1):
                parse(message, f"{source}: message {n}")
            return whole
    messages = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            message = checks.json_value(line, f"{source} line {n}")
        except checks.NotJson as exc:
            raise ValidationError(f"{source} line {n} is not valid JSON: {exc.reason}") from None
        parse(message, f"{source} line {n}")
        messages.append(message)
    return messages


def write_messages(messages: list[dict[str, Any]]) -> str:
    """Messages as JSON Lines, the form `read_messages` reads back to equal messages."""
    return "".join(json.dumps(m, ensure_ascii=False) + "\n" for m in messages)
