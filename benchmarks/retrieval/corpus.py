"""The labelled retrieval set's records and questions, as plain data. Pure: no clew import.

A `Book` collects containers (tasks, sessions) and records (entries, task messages,
commands, trace decisions, conversation turns), each under a stable key the questions
name, and the questions themselves. `facts_coding`, `facts_personal` and `facts_chat`
write the labelled facts by hand; `filler` adds the look-alike records that make ranking
matter, from a `random.Random` with a fixed start, so every build is the same.
`build.py` writes a book through clew's API and maps its keys to clew's ids.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

CATEGORIES = ("single-fact", "multi-fact", "temporal", "paraphrase", "identifier", "unanswerable")
# The present of the set: questions without their own `asked_at` are asked at this moment.
NOW = datetime(2026, 6, 30, 17, 0, tzinfo=UTC)


def when(text: str) -> datetime:
    """A UTC moment from 'YYYY-MM-DD HH:MM' (or a date alone: noon)."""
    stamp = text if " " in text else f"{text} 12:00"
    return datetime.strptime(stamp, "%Y-%m-%d %H:%M").replace(tzinfo=UTC)


@dataclass(frozen=True)
class Container:
    """A task or a conversation session that records belong to."""

    key: str
    kind: str  # task or session
    at: datetime
    args: dict[str, Any]


@dataclass(frozen=True)
class Record:
    """One searchable record: what clew stores and what a question may be answered by."""

    key: str
    kind: str  # entry, message, action, decision (a trace decision) or turn
    at: datetime
    owner: str  # the key of its task or session
    text: str  # its searchable text (what a paraphrase must not share words with)
    args: dict[str, Any]
    labelled: bool = True  # False for filler: never an answer


@dataclass(frozen=True)
class Question:
    id: str
    category: str
    question: str
    answers: tuple[str, ...]
    asked_at: str | None = None  # ISO time; None is NOW


@dataclass
class Book:
    containers: list[Container] = field(default_factory=list)
    records: list[Record] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)
    _keys: set[str] = field(default_factory=set)

    # -- containers -------------------------------------------------------------------------

    def task(self, key: str, at: str, name: str, *, goal: str, plan: list[str]) -> str:
        self._claim(key)
        self.containers.append(
            Container(key, "task", when(at), {"name": name, "goal": goal, "plan": plan})
        )
        return key

    def session(self, key: str, at: str, title: str, *, task: str | None = None) -> str:
        self._claim(key)
        args: dict[str, Any] = {"title": title, "task": task}
        self.containers.append(Container(key, "session", when(at), args))
        return key

    # -- records ----------------------------------------------------------------------------

    def message(self, key: str, task: str, at: str, text: str, *, role: str = "user") -> str:
        return self._add(key, "message", task, at, text, {"content": text, "role": role})

    def entry(
        self,
        key: str,
        task: str,
        at: str,
        type: str,
        summary: str,
        *,
        detail: str | None = None,
        tags: tuple[str, ...] = (),
        resolution: str | None = None,
        command: str | None = None,
    ) -> str:
        text = "\n".join(filter(None, (summary, detail, resolution, *tags)))
        args = {"type": type, "summary": summary, "detail": detail, "tags": list(tags),
                "resolution": resolution, "command": command}  # fmt: skip
        return self._add(key, "entry", task, at, text, args)

    def command(
        self,
        key: str,
        task: str,
        at: str,
        command: str,
        *,
        exit_code: int = 0,
        stdout: str = "",
        stderr: str = "",
        cwd: str | None = None,
        labelled: bool = True,
    ) -> str:
        text = "\n".join(filter(None, (command, stdout, stderr)))
        args = {"command": command, "exit_code": exit_code, "stdout": stdout, "stderr": stderr,
                "cwd": cwd}  # fmt: skip
        return self._add(key, "action", task, at, text, args, labelled=labelled)

    def decision(
        self, key: str, task: str, at: str, action: str, *, outcome: str = "success",
        error: str | None = None, agent: str | None = None,
    ) -> str:  # fmt: skip
        text = "\n".join(filter(None, (action, error)))
        args = {"action": action, "outcome": outcome, "error": error, "agent": agent}
        return self._add(key, "decision", task, at, text, args)

    def turn(
        self,
        key: str,
        session: str,
        at: str | datetime,
        role: str,
        content: str | None,
        *,
        name: str | None = None,
        tool_calls: list[dict[str, Any]] | None = None,
        tool_call_id: str | None = None,
        labelled: bool = True,
    ) -> str:
        message: dict[str, Any] = {"role": role, "content": content}
        if name is not None:
            message["name"] = name
        if tool_calls is not None:
            message["tool_calls"] = tool_calls
        if tool_call_id is not None:
            message["tool_call_id"] = tool_call_id
        return self._add(key, "turn", session, at, content or "", message, labelled=labelled)

    def tool_exchange(
        self, key: str, session: str, at: str, command: str, output: str, *, why: str = ""
    ) -> tuple[str, str]:
        """An assistant's shell call and its result: two turns, `key.call` and `key`."""
        call_id = "call_" + re.sub(r"\W", "", key)[-20:]
        call = [{"id": call_id, "type": "function",
                 "function": {"name": "bash", "arguments": {"command": command}}}]  # fmt: skip
        start = when(at)
        first = self.turn(f"{key}.call", session, start, "assistant", why or None, tool_calls=call)
        second = self.turn(
            key, session, start + timedelta(seconds=20), "tool", output, tool_call_id=call_id
        )
        return first, second

    def chat(self, key: str, session: str, at: str, lines: list[tuple[str, str]]) -> list[str]:
        """A run of turns one minute apart: (role, text) pairs; keys key.1, key.2, ..."""
        start = when(at)
        return [
            self.turn(f"{key}.{n}", session, start + timedelta(minutes=n - 1), role, text)
            for n, (role, text) in enumerate(lines, 1)
        ]

    # -- questions --------------------------------------------------------------------------

    def ask(self, category: str, question: str, *answers: str, asked_at: str | None = None) -> None:
        if category not in CATEGORIES:
            raise ValueError(f"unknown category {category!r}")
        number = sum(q.category == category for q in self.questions) + 1
        stamp = None if asked_at is None else when(asked_at).strftime("%Y-%m-%dT%H:%M:%SZ")
        self.questions.append(
            Question(f"{category}-{number:03d}", category, question, tuple(answers), stamp)
        )

    # -- plumbing ---------------------------------------------------------------------------

    def _claim(self, key: str) -> None:
        if key in self._keys:
            raise ValueError(f"duplicate key {key!r}")
        self._keys.add(key)

    def _add(
        self,
        key: str,
        kind: str,
        owner: str,
        at: str | datetime,
        text: str,
        args: dict[str, Any],
        *,
        labelled: bool = True,
    ) -> str:
        self._claim(key)
        moment = at if isinstance(at, datetime) else when(at)
        self.records.append(Record(key, kind, moment, owner, text, args, labelled))
        return key

    def keys(self) -> set[str]:
        """Every record key (what an answer may name)."""
        return {r.key for r in self.records}
