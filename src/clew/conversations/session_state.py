"""Session state: structured facts about a conversation, extracted
mechanically from each turn, with no model, and rendered as YAML for the prompt. Pure.

`advance` folds one turn into the state: a write or edit tool call touches a file; a shell
call that fails opens an error, and a later success of the same command resolves it; a
`git commit -m`, the decisions a user's or assistant's message states and the rules a user
sets are key decisions, found by the rules task extraction uses (`clew.archive.claims`), so the two
agree: "Going with ghcr.io instead of Docker Hub" and "Never force-push to main" are, "I'll
use grep to look for it", "Don't worry about it" and "you must be tired" are not; the
user's latest message is the current focus. The facade runs it for every turn it appends
and journals what changed (`change`), so a replay rebuilds the state exactly whatever this
fold becomes. `render` keeps the limits (files 20, decisions 10, errors 5) and stays within
its budget (about 1,000 tokens) by showing less.
"""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

from clew.archive.claims import DECISION_WORDS, RULE_WORDS, claims, holds
from clew.archive.fingerprint import telling_line
from clew.core.pattern import lazy
from clew.core.text import clip
from clew.core.tokens import TokenCounter
from clew.core.turns import Parts
from clew.state.yamltext import dump_lines

FILES, DECISIONS, ERRORS = 20, 10, 5
STATE_BUDGET = 1000
_PENDING_CALLS = 64  # tool calls remembered until their results arrive
_OPEN_ERRORS = 10  # open errors remembered (5 shown), awaiting a success

_WRITE = lazy(r"write|create|save|new_file", re.I)
_EDIT = lazy(r"edit|replace|patch|modify|update_file|insert|append", re.I)
_SHELL = lazy(r"bash|shell|exec|run|terminal|command|cmd|sh$", re.I)
# What a message must hold (lower-cased) for the claims rules to find a key decision in it:
# most turns hold none, and are never split into sentences. Found with `str.find` (`in`),
# because a regex alternation that starts at a word boundary costs tens of µs on every turn.
_WORDS = {"user": DECISION_WORDS + RULE_WORDS, "assistant": DECISION_WORDS}
# The claims that are key decisions: a decision of either, and a user's rule. The claims
# rules' own name of each role.
_KEPT = {"user": ("decision", "user_instruction"), "assistant": ("decision",)}
_ROLE = {"user": "user", "assistant": "agent"}
# What says a tool's output is a failure, found the same way.
_FAILED_TEXT = (
    "Traceback (most recent call last)",
    "command not found",
    "returned non-zero",
    "No such file or directory",
)
_FAILED_WORD = ("Error:", "Exception:", "error:", "FAILED")  # after a letter / at a word start
_EXIT = lazy(r"[Ee]xit (?:code|status)[: =]*[1-9]")


def _arguments(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _target(name: str, args: dict[str, Any]) -> tuple[str | None, str | None]:
    """(the file a call writes, the command it runs)."""
    path = next(
        (str(args[k]) for k in ("path", "file_path", "filename", "file", "target") if args.get(k)),
        None,
    )
    command = next((str(args[k]) for k in ("command", "cmd", "script") if args.get(k)), None)
    if command is None and isinstance(args.get("args"), list) and _kind(name)[1]:
        command = " ".join(str(a) for a in args["args"])
    return path, command


_KINDS: dict[str, tuple[str | None, bool]] = {}  # a tool's name: what _kind says of it


def _kind(name: str) -> tuple[str | None, bool]:
    """(what a call of the tool named `name` does to the file it names, "edited",
    "created" or None; whether it runs a shell command), worked out once a name: an agent
    calls few tools, many times."""
    kind = _KINDS.get(name)
    if kind is None:
        edits = _EDIT.search(name) is not None
        action = "edited" if edits else "created" if _WRITE.search(name) else None
        kind = _KINDS[name] = (action, _SHELL.search(name) is not None)
        if len(_KINDS) > 1024:  # names are the callers' to choose: keep the cache small
            _KINDS.clear()
    return kind


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
            return words[n + 1]  # -m MSG, or flags run together: -am MSG
        if short and "m" in word[1:]:
            return word[word.index("m", 1) + 1 :]  # -mMSG
    return None


def _word_char(text: str, at: int) -> bool:
    return 0 <= at < len(text) and (text[at].isalnum() or text[at] == "_")


def failed(text: str) -> bool:
    """Whether a tool's output reads as a failure: a traceback, `SomeError:`, `error:`,
    `FAILED`, `command not found`, a non-zero exit code..."""
    tail = text[-20_000:]
    if any(t in tail for t in _FAILED_TEXT):
        return True
    for word in _FAILED_WORD:
        at = tail.find(word)
        while at != -1:
            if word[0] == "E" and at and tail[at - 1].isalpha():  # KeyError:, not "Error:"
                return True
            starts = word[0] != "E" and not _word_char(tail, at - 1)
            if starts and (word != "FAILED" or not _word_char(tail, at + len(word))):
                return True
            at = tail.find(word, at + 1)
    return ("xit code" in tail or "xit status" in tail) and _EXIT.search(tail) is not None


def _key_decisions(text: str, role: str) -> list[str]:
    """The decisions (and, for a user, the rules) a user's or assistant's message states."""
    words = _WORDS[role]
    if not holds(text.lower(), words):  # most turns: no need to split them
        return []
    kept = _KEPT[role]
    return [c.sentence for c in claims(text, _ROLE[role], holding=words) if c.kind in kept]


def advance(state: dict[str, Any], turn: int, parts: Parts) -> dict[str, Any]:
    """Fold one turn into the session state; return the new state (the old is not changed)."""
    files: list[dict[str, Any]] = list(state.get("files", []))
    noted: list[dict[str, Any]] = list(state.get("decisions", []))
    resolved: list[dict[str, Any]] = list(state.get("errors_resolved", []))
    open_errors: list[dict[str, Any]] = list(state.get("open_errors", []))
    calls: dict[str, dict[str, Any]] = dict(state.get("calls", {}))
    focus = state.get("focus")
    decisions: list[str] = []
    for call in parts.tool_calls:
        args = _arguments(call.arguments)
        path, command = _target(call.name, args)
        action = _kind(call.name)[0] if path else None
        if path and action:
            files = [f for f in files if f["path"] != path]
            files.append({"path": path, "action": action, "turn": turn})
        if command:
            message = _commit_message(command)
            if message:
                decisions.append(f"Committed: {message}")
        if call.id:
            calls[call.id] = {"name": call.name, "command": command or path, "turn": turn}
    if parts.role == "tool":
        done = calls.pop(parts.tool_call_id or "", None) or {"name": parts.tool_name}
        key = f"{done.get('name')}: {done.get('command')}"
        text = parts.text or ""
        if failed(text):
            line = telling_line(text[-20_000:]) or "failed"
            open_errors = [e for e in open_errors if e["key"] != key]
            open_errors.append({"key": key, "error": clip(line, 160), "turn": turn})
        else:
            fixed = [e for e in open_errors if e["key"] == key]
            if fixed:
                open_errors = [e for e in open_errors if e["key"] != key]
                what = done.get("command") or done.get("name") or "it"
                fix = f"{clip(str(what), 80)} then worked"
                resolved.append({"error": fixed[-1]["error"], "fix": fix, "turn": turn})
    elif parts.role in ("user", "assistant") and parts.text:
        decisions += _key_decisions(parts.text, parts.role)
        if parts.role == "user":
            first = parts.text.strip().splitlines()[0] if parts.text.strip() else ""
            if first:
                focus = {"text": clip(first, 100), "turn": turn}
    for text in dict.fromkeys(decisions):
        noted.append({"text": clip(text, 200), "turn": turn})
    if len(calls) > _PENDING_CALLS:
        calls = dict(list(calls.items())[-_PENDING_CALLS:])
    return {
        "files": files[-FILES:],
        "decisions": noted[-DECISIONS:],
        "errors_resolved": resolved[-ERRORS:],
        "open_errors": open_errors[-_OPEN_ERRORS:],
        "calls": calls,
        "focus": focus,
    }


def change(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """The keys of the state that one turn changed (or added), with their new values: what
    its `turn.appended` event carries, so replay overlays it instead of folding again."""
    return {k: v for k, v in new.items() if k not in old or old[k] != v}


def render(
    session: dict[str, Any],
    state: dict[str, Any],
    counter: TokenCounter,
    budget: int = STATE_BUDGET,
) -> str:
    """The session state as YAML for the prompt, within `budget` tokens."""
    levels = ((20, 10, 5, 200), (10, 6, 3, 120), (5, 3, 2, 80), (2, 1, 1, 60))
    lines: list[str] = []
    for files, decisions, errors, chars in levels:
        data: dict[str, Any] = {"session": session}
        if state.get("files"):
            data["files_touched"] = [
                {"path": clip(f["path"], chars), "action": f["action"], "turn": f["turn"]}
                for f in state["files"][-files:][::-1]
            ]
        if state.get("decisions"):
            data["key_decisions"] = [
                f"{clip(d['text'], chars)} (turn {d['turn']})"
                for d in state["decisions"][-decisions:][::-1]
            ]
        if state.get("focus"):
            data["current_focus"] = clip(state["focus"]["text"], 100)
        if state.get("errors_resolved"):
            data["errors_resolved"] = [
                f"{clip(e['error'], chars)}: {clip(e['fix'], chars)} (turn {e['turn']})"
                for e in state["errors_resolved"][-errors:][::-1]
            ]
        if state.get("open_errors"):
            data["open_errors"] = [
                f"{clip(e['error'], chars)} (turn {e['turn']})"
                for e in state["open_errors"][-errors:][::-1]
            ]
        lines = dump_lines(data)
        if counter.count(lines, budget).tokens <= budget:
            break
    return "\n".join(lines) + "\n"
