"""The turn heuristics as clew ran them in its projection until events carried their
results: message parsing and the session-state fold, frozen here (with the helpers they
used) so that turns journaled before then replay to exactly the rows they made.

Never tune anything in this module: it is what those old events mean. The live heuristics
(`clew.core.turns`, `clew.conversations.session_state`) run on the write path and may change
freely; a change
there only affects turns appended after it, whose events say what was derived.
"""

from __future__ import annotations

import json
import re
import shlex
from typing import Any, NamedTuple

_ROLE_ALIASES = {"developer": "system", "function": "tool"}
_ITEM_ROLES = {"function_call": "assistant", "function_call_output": "tool"}


class Parts(NamedTuple):
    role: str
    text: str | None
    tool_calls: tuple[tuple[str | None, str, str], ...]  # (id, name, arguments)
    tool_call_id: str | None
    tool_name: str | None


def _text_of(content: Any) -> str | None:
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
                for key in ("text", "output_text", "refusal", "input_text"):
                    if isinstance(part.get(key), str):
                        texts.append(part[key])
                        break
        return "\n".join(texts) if texts else None
    return json.dumps(content, ensure_ascii=False)


def parse(message: dict[str, Any]) -> Parts:
    """A journaled message's parts (it was checked when it was appended)."""
    kind = message.get("type")
    raw_role = message.get("role")
    if raw_role is None and isinstance(kind, str):
        role = _ITEM_ROLES.get(kind, "tool" if kind.endswith("_output") else "assistant")
    else:
        role = _ROLE_ALIASES.get(str(raw_role), str(raw_role))
    calls: list[tuple[str | None, str, str]] = []
    for call in message.get("tool_calls") or ():
        function = call["function"]
        arguments = function.get("arguments", "")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False)
        calls.append((call.get("id"), function["name"], arguments))
    text = _text_of(message.get("content"))
    call_id = message.get("tool_call_id")
    name = message.get("name") if role == "tool" else None
    if kind == "function_call":
        arguments = message.get("arguments", "")
        calls.append((message.get("call_id"), str(message.get("name", "")), str(arguments)))
        text = f"{message.get('name', '')}({arguments})"
    elif kind == "function_call_output":
        call_id = message.get("call_id")
        text = _text_of(message.get("output"))
    elif text is None and kind is not None:
        text = _text_of(message.get("summary") or message.get("output"))
    return Parts(
        role,
        text,
        tuple(calls),
        call_id if isinstance(call_id, str) else None,
        name if isinstance(name, str) else None,
    )


# -- the session-state fold ----------------------------------------------------------------

_FILES, _DECISIONS, _ERRORS = 20, 10, 5
_PENDING_CALLS = 64
_OPEN_ERRORS = 10
_WRITE = re.compile(r"write|create|save|new_file", re.I)
_EDIT = re.compile(r"edit|replace|patch|modify|update_file|insert|append", re.I)
_SHELL = re.compile(r"bash|shell|exec|run|terminal|command|cmd|sh$", re.I)
_DECIDED = (
    "let's use",
    "let us use",
    "we'll use",
    "we will use",
    "i'll use",
    "decided",
    "going with",
    "we chose",
    "i chose",
    "switch to",
    "switched to",
    "switching to",
    "instead of",
)
_RULE = ("always", "never", "don't", "do not", "must")
_FAILED_TEXT = (
    "Traceback (most recent call last)",
    "command not found",
    "returned non-zero",
    "No such file or directory",
)
_FAILED_WORD = ("Error:", "Exception:", "error:", "FAILED")
_EXIT = re.compile(r"[Ee]xit (?:code|status)[: =]*[1-9]")
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
_ERROR_LINE = re.compile(
    r"\b(?:[A-Z][A-Za-z0-9]*(?:Error|Exception|Fault|Failure|Warning)|error|ERROR|Error|"
    r"fatal|FATAL|failed|FAILED|denied|E[A-Z]{3,})\b"
)
_STRONG = re.compile(
    r"\b[A-Z][A-Za-z0-9]*(?:Error|Exception|Fault)\b:|\berror(?:\[\w+\])?:|\bE[A-Z]{3,}\b|"
    r"\bfatal:"
)


def _clip(text: str, limit: int) -> str:
    flat = _CONTROL.sub("?", " ".join(text.split()))
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _telling_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return ""
    for pattern in (_STRONG, _ERROR_LINE):
        for line in reversed(lines):
            if pattern.search(line):
                return line
    return lines[-1]


def _arguments(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _target(name: str, args: dict[str, Any]) -> tuple[str | None, str | None]:
    path = next(
        (str(args[k]) for k in ("path", "file_path", "filename", "file", "target") if args.get(k)),
        None,
    )
    command = next((str(args[k]) for k in ("command", "cmd", "script") if args.get(k)), None)
    if command is None and _SHELL.search(name) and isinstance(args.get("args"), list):
        command = " ".join(str(a) for a in args["args"])
    return path, command


def _commit_message(command: str) -> str | None:
    if "git" not in command or "commit" not in command:
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    for n, word in enumerate(words):
        if word.startswith("--message="):
            return word.partition("=")[2]
        short = word.startswith("-") and not word.startswith("--")
        if (word == "--message" or (short and word.endswith("m"))) and n + 1 < len(words):
            return words[n + 1]
        if short and "m" in word[1:]:
            return word[word.index("m", 1) + 1 :]
    return None


def _word_char(text: str, at: int) -> bool:
    return 0 <= at < len(text) and (text[at].isalnum() or text[at] == "_")


def _has_word(text: str, words: tuple[str, ...]) -> bool:
    for word in words:
        at = text.find(word)
        while at != -1:
            if not _word_char(text, at - 1) and not _word_char(text, at + len(word)):
                return True
            at = text.find(word, at + 1)
    return False


def _failed(text: str) -> bool:
    tail = text[-20_000:]
    if any(t in tail for t in _FAILED_TEXT):
        return True
    for word in _FAILED_WORD:
        at = tail.find(word)
        while at != -1:
            if word[0] == "E" and at and tail[at - 1].isalpha():
                return True
            starts = word[0] != "E" and not _word_char(tail, at - 1)
            if starts and (word != "FAILED" or not _word_char(tail, at + len(word))):
                return True
            at = tail.find(word, at + 1)
    return ("xit code" in tail or "xit status" in tail) and _EXIT.search(tail) is not None


def _sentences(text: str, words: tuple[str, ...]) -> list[str]:
    if not _has_word(text.lower(), words):
        return []
    return [
        s.strip()
        for s in _SENTENCE.findall(text)
        if len(s.strip()) > 8 and _has_word(s.lower(), words)
    ]


def advance(state: dict[str, Any], turn: int, parts: Parts) -> dict[str, Any]:
    """Fold one turn into the session state, as clew did until turns carried the change."""
    files: list[dict[str, Any]] = list(state.get("files", []))
    noted: list[dict[str, Any]] = list(state.get("decisions", []))
    resolved: list[dict[str, Any]] = list(state.get("errors_resolved", []))
    open_errors: list[dict[str, Any]] = list(state.get("open_errors", []))
    calls: dict[str, dict[str, Any]] = dict(state.get("calls", {}))
    focus = state.get("focus")
    decisions: list[str] = []
    for call_id, call_name, arguments in parts.tool_calls:
        path, command = _target(call_name, _arguments(arguments))
        if path and (_WRITE.search(call_name) or _EDIT.search(call_name)):
            action = "edited" if _EDIT.search(call_name) else "created"
            files = [f for f in files if f["path"] != path]
            files.append({"path": path, "action": action, "turn": turn})
        if command:
            message = _commit_message(command)
            if message:
                decisions.append(f"Committed: {message}")
        if call_id:
            calls[call_id] = {"name": call_name, "command": command or path, "turn": turn}
    if parts.role == "tool":
        done = calls.pop(parts.tool_call_id or "", None) or {"name": parts.tool_name}
        key = f"{done.get('name')}: {done.get('command')}"
        text = parts.text or ""
        if _failed(text):
            line = _telling_line(text[-20_000:]) or "failed"
            open_errors = [e for e in open_errors if e["key"] != key]
            open_errors.append({"key": key, "error": _clip(line, 160), "turn": turn})
        else:
            fixed = [e for e in open_errors if e["key"] == key]
            if fixed:
                open_errors = [e for e in open_errors if e["key"] != key]
                what = done.get("command") or done.get("name") or "it"
                fix = f"{_clip(str(what), 80)} then worked"
                resolved.append({"error": fixed[-1]["error"], "fix": fix, "turn": turn})
    elif parts.role in ("user", "assistant") and parts.text:
        decisions += _sentences(parts.text, _DECIDED)
        if parts.role == "user":
            decisions += _sentences(parts.text, _RULE)
            first = parts.text.strip().splitlines()[0] if parts.text.strip() else ""
            if first:
                focus = {"text": _clip(first, 100), "turn": turn}
    for text in dict.fromkeys(decisions):
        noted.append({"text": _clip(text, 200), "turn": turn})
    if len(calls) > _PENDING_CALLS:
        calls = dict(list(calls.items())[-_PENDING_CALLS:])
    return {
        "files": files[-_FILES:],
        "decisions": noted[-_DECISIONS:],
        "errors_resolved": resolved[-_ERRORS:],
        "open_errors": open_errors[-_OPEN_ERRORS:],
        "calls": calls,
        "focus": focus,
    }
