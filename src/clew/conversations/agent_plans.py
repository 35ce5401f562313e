"""The lists coding assistants keep of their own work, read from their transcripts. Pure:
messages in, list out; the capture service keeps the list as a clew task (`plan_keeping.py`).

The assistants lose these lists on compaction, `/clear` and resume; their transcripts keep
every call that wrote one, so folding the calls in order gives the list back. The calls, in
the shapes the tools publish (their tool descriptions and schemas):

- **Claude Code `TodoWrite`** `{"todos": [{"content", "status", "activeForm"}]}`, status one
  of pending, in_progress, completed: each call is the whole list, rewritten.
- **Claude Code `TaskCreate`** `{"subject", "description", "activeForm"?, "metadata"?}` adds
  one pending item; Claude Code numbers it, and its result says so (`Task #3 created
  successfully: <subject>`). Numbers count up from 1 and are not reused, so an item whose
  result is not read yet takes the next number. **`TaskUpdate`** `{"taskId", "status"?,
  "subject"?, "activeForm"?, ...}` changes one item; status `deleted` removes it.
- **Codex `update_plan`** `{"explanation"?, "plan": [{"step", "status"}]}`, a `function_call`
  item whose `arguments` is that object as a JSON string: the whole list, rewritten.

An item of a rewritten list has no number: it is told apart from the others by its title
(the first item of the same title in the list before), which is how the clew step it became
is kept across rewrites.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

from clew.core.text import clip

__all__ = ["AgentList", "Call", "Item", "fold", "plan_calls"]

STATUSES = ("pending", "in_progress", "completed")
_TITLE_CHARS = 500  # a step title; an item's text beyond it stays in the transcript
_CREATED = re.compile(r"Task #(\d+) created")


class Item(NamedTuple):
    """One item of an assistant's list."""

    title: str
    status: str  # pending, in_progress or completed
    key: str | None = None  # Claude Code's task number (TaskCreate); None in rewritten lists
    form: str | None = None  # what the assistant shows while working on it ("Running tests")
    step: str | None = None  # the id of the clew step it is kept as, once it is one


class AgentList(NamedTuple):
    """An assistant's list as its calls left it."""

    items: tuple[Item, ...]
    tool: str  # what wrote it last: TodoWrite, TaskCreate (with TaskUpdate) or update_plan
    numbered: int = 0  # the highest task number given so far (TaskCreate)
    pending: tuple[tuple[str, str], ...] = ()  # TaskCreate calls without their result yet
    explanation: str | None = None  # Codex's note with its latest plan

    def to_json(self) -> dict[str, Any]:
        """The list as JSON, to keep with its task."""
        return {
            "tool": self.tool,
            "numbered": self.numbered,
            "pending": [list(p) for p in self.pending],
            "explanation": self.explanation,
            "items": [
                {k: v for k, v in item._asdict().items() if v is not None} for item in self.items
            ],
        }

    @classmethod
    def from_json(cls, value: object) -> AgentList | None:
        """The list kept as JSON (by `to_json`); None for anything else."""
        if not isinstance(value, dict) or not isinstance(value.get("items"), list):
            return None
        items = []
        for raw in value["items"]:
            if isinstance(raw, dict) and isinstance(raw.get("title"), str):
                items.append(
                    Item(
                        raw["title"],
                        _status(raw.get("status")),
                        _text(raw.get("key")),
                        _text(raw.get("form")),
                        _text(raw.get("step")),
                    )
                )
        pending = tuple(
            (str(p[0]), str(p[1]))
            for p in value.get("pending") or ()
            if isinstance(p, list) and len(p) == 2
        )
        numbered = value.get("numbered")
        return cls(
            tuple(items),
            str(value.get("tool") or ""),
            numbered if isinstance(numbered, int) else 0,
            pending,
            _text(value.get("explanation")),
        )


class Call(NamedTuple):
    """A call that writes the list, or the result of a TaskCreate (`name` "result")."""

    name: str
    input: dict[str, Any]
    id: str | None  # the call's id, which its result names


def plan_calls(message: dict[str, Any]) -> list[Call]:
    """The list-writing calls (and tool results) in one kept message: a Claude Code line's
    Anthropic message, or a Codex Responses item."""
    if message.get("type") == "function_call":  # Codex
        if message.get("name") != "update_plan":
            return []
        try:
            arguments = json.loads(message.get("arguments") or "")
        except (TypeError, ValueError):
            return []
        if not isinstance(arguments, dict):
            return []
        return [Call("update_plan", arguments, _text(message.get("call_id")))]
    if message.get("isSidechain") is True:
        return []  # a subagent's line: its list is its own, gone when it ends
    inner = message.get("message")
    content = inner.get("content") if isinstance(inner, dict) else None
    if not isinstance(content, list):
        return []
    found = []
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "tool_use" and block.get("name") in ("TodoWrite", "TaskCreate", "TaskUpdate"):
            given = block.get("input")
            if isinstance(given, dict):
                found.append(Call(str(block["name"]), given, _text(block.get("id"))))
        elif kind == "tool_result" and isinstance(block.get("tool_use_id"), str):
            found.append(
                Call("result", {"text": _result_text(block.get("content"))}, block["tool_use_id"])
            )
    return found


def fold(current: AgentList | None, calls: Iterable[Call]) -> AgentList | None:
    """The list after `calls`, in order, from `current` (None: no list yet, and still None
    if no call writes one)."""
    state = current
    for call in calls:
        if call.name in ("TodoWrite", "update_plan"):
            state = _rewritten(state, call)
        elif call.name == "TaskCreate":
            state = _created(state, call)
        elif call.name == "TaskUpdate" and state is not None:
            state = _updated(state, call)
        elif call.name == "result" and state is not None:
            state = _numbered(state, call)
    return state


def _rewritten(state: AgentList | None, call: Call) -> AgentList | None:
    """A whole list, as TodoWrite and update_plan write it: each item keeps the step of the
    first item of its title in the list before."""
    field = "todos" if call.name == "TodoWrite" else "plan"
    given = call.input.get(field)
    if not isinstance(given, list):
        return state
    earlier: dict[str, list[str]] = {}
    for item in state.items if state else ():
        if item.step is not None:
            earlier.setdefault(item.title, []).append(item.step)
    items = []
    for raw in given:
        if not isinstance(raw, dict):
            continue
        title = _title(raw.get("content") if call.name == "TodoWrite" else raw.get("step"))
        if title is None:
            continue
        steps = earlier.get(title)
        step = steps.pop(0) if steps else None
        form = _text(raw.get("activeForm"))
        items.append(Item(title, _status(raw.get("status")), None, form, step))
    explanation = _text(call.input.get("explanation")) if call.name == "update_plan" else None
    numbered = state.numbered if state else 0
    return AgentList(tuple(items), call.name, numbered, (), explanation)


def _created(state: AgentList | None, call: Call) -> AgentList | None:
    title = _title(call.input.get("subject"))
    if title is None:
        return state
    base = state or AgentList((), call.name)
    key = str(base.numbered + 1)
    item = Item(title, "pending", key, _text(call.input.get("activeForm")))
    pending = (*base.pending, (call.id, key)) if call.id else base.pending
    return base._replace(
        items=(*base.items, item), tool=call.name, numbered=base.numbered + 1, pending=pending
    )


def _updated(state: AgentList, call: Call) -> AgentList:
    key = call.input.get("taskId")
    key = str(key) if isinstance(key, (str, int)) and not isinstance(key, bool) else None
    found = next((i for i, item in enumerate(state.items) if item.key == key), None)
    if found is None:
        return state  # a task made before this transcript began (or in another list)
    item = state.items[found]
    status = call.input.get("status")
    if status == "deleted":
        items = state.items[:found] + state.items[found + 1 :]
        return state._replace(items=items, tool="TaskCreate")
    title = _title(call.input.get("subject")) or item.title
    form = _text(call.input.get("activeForm")) or item.form
    new = item._replace(title=title, form=form)
    if status is not None:
        new = new._replace(status=_status(status))
    items = (*state.items[:found], new, *state.items[found + 1 :])
    return state._replace(items=items, tool="TaskCreate")  # the tools' family, by its first


def _numbered(state: AgentList, call: Call) -> AgentList:
    """A TaskCreate's result: the number Claude Code gave the item (which a resumed session,
    whose numbering starts again, makes differ from the one taken)."""
    taken = dict(state.pending).get(call.id or "")
    if taken is None:
        return state
    pending = tuple(p for p in state.pending if p[0] != call.id)
    said = _CREATED.search(str(call.input.get("text") or ""))
    if said is None or said.group(1) == taken:
        return state._replace(pending=pending)
    given = said.group(1)
    # The item of that number before is another list's (a session resumed or cleared, whose
    # numbers start again): it keeps its place, no longer reachable by number.
    renumbered = {taken: given, given: None}
    items = tuple(
        item._replace(key=renumbered[item.key]) if item.key in renumbered else item
        for item in state.items
    )
    return state._replace(items=items, pending=pending, numbered=max(state.numbered, int(given)))


def _status(value: object) -> str:
    return value if isinstance(value, str) and value in STATUSES else "pending"


def _text(value: object) -> str | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value.strip() or None if isinstance(value, str) else None


def _title(value: object) -> str | None:
    """An item's text as a step title: one line, cut to a title's length, its control
    characters (NUL among them) shown as '?' as in every prompt line (`clip`)."""
    if not isinstance(value, str):
        return None
    return clip(value, _TITLE_CHARS) or None


def _result_text(content: object) -> str:
    """A tool result's text: a string, or its text blocks."""
    if isinstance(content, str):
        return content
    return "\n".join(_texts(content))


def _texts(content: object) -> Iterator[str]:
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                yield block["text"]
