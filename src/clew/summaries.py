"""Running summaries and live questions (seed 001), with their no-model answers. Pure.

A question goes to the small model if it is simple ("what step am I on?") and to the large
one, when one is configured, if it is complex ("should I change the plan?", "analyze the
errors"); `is_complex` decides, by its words and length. With no model, or past a cap, or
when the model fails, `rules_answer` answers questions about where the task is, what comes
next and what failed from the brief, and says so; other questions get search hits.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence
from functools import cache
from importlib import resources
from typing import NamedTuple

from clew.brief import Brief, clip
from clew.models import Message, SearchHit, Task
from clew.providers import Message as Prompt

_COMPLEX = re.compile(
    r"\b(?:should|why|how|analy[sz]e|compare|recommend|suggest|plan|risk|alternative|explain|"
    r"evaluate|trade-?offs?|better|worse|improve)\b",
    re.I,
)
_WHERE = re.compile(r"\b(?:where|status|progress|what step|which step|current|done|so far)\b", re.I)
_NEXT = re.compile(r"\b(?:next|remaining|left|to do|todo|then)\b", re.I)
_FAILED = re.compile(r"\b(?:fail\w*|error\w*|broke\w*|wrong|blocker\w*|blocked|issues?)\b", re.I)
_DETAIL = re.compile(
    r"(?:https?://\S+|\bv?\d+\.\d+(?:\.\d+)+\b|(?:[\w.-]+/)+[\w.-]+|\b[\w-]+\.(?:py|js|ts|go|rs|"
    r"json|ya?ml|toml|sql|md|sh)\b)"
)


class Answer(NamedTuple):
    """The answer to a question about a task, and where it came from."""

    text: str
    source: str  # "model", "rules" or "search"
    model: str | None = None
    note: str | None = None  # why the model was not used, if it was not


@cache
def prompt(name: str) -> dict[str, str]:
    """A prompt template shipped in clew/prompts/<name>.toml."""
    text = resources.files("clew").joinpath(f"prompts/{name}.toml").read_text("utf-8")
    return {k: str(v).strip() for k, v in tomllib.loads(text).items()}


def is_complex(question: str) -> bool:
    """Whether a question needs judgement (the large model) rather than a lookup."""
    return bool(_COMPLEX.search(question)) or len(question.split()) > 25


def format_messages(messages: Sequence[Message]) -> str:
    """Messages oldest first, one per line, as the prompts show them."""
    ordered = sorted(messages, key=lambda m: m.created_at)
    lines = [f"[{m.created_at[:16]}] {m.role.value}: {m.content}" for m in ordered]
    return "\n".join(lines) or "None."


def plan_text(task: Task) -> str:
    return "; ".join(f"{n}. {s.title} [{s.status.value}]" for n, s in enumerate(task.plan, 1))


def summary_prompt(task: Task, messages: Sequence[Message]) -> list[Prompt]:
    """Seed 001's running-summary prompt."""
    user = prompt("summary")["user"].format(
        name=task.name, plan=plan_text(task), messages=format_messages(messages)
    )
    return [Prompt("user", user)]


def ask_prompt(
    task: Task, summary: str | None, since: int, recent: Sequence[Message], question: str
) -> list[Prompt]:
    """Seed 001's live-query prompt: the summary, the messages after it, the question."""
    user = prompt("ask")["user"].format(
        name=task.name,
        plan=plan_text(task),
        status=task.status.value,
        summary_messages=since,
        summary=summary or "No summary yet.",
        recent=format_messages(recent),
        question=question,
    )
    return [Prompt("user", user)]


def rules_summary(task: Task, brief: Brief, messages: Sequence[Message]) -> str:
    """A summary built from the records alone: steps, the current one, blockers, details."""
    parts = []
    if brief.completed:
        done = ", ".join(str(s.number) for s in brief.completed)
        parts.append(f"Completed steps {done} of {len(task.plan)}.")
    elif task.plan:
        parts.append(f"No step of {len(task.plan)} is completed yet.")
    if brief.current is not None:
        state = "in progress" if brief.current.status == "active" else "next"
        parts.append(f"Step {brief.current.number} ({brief.current.title}) is {state}.")
    blockers = [*brief.open_errors, *(s.title for s in brief.failed)]
    if blockers:
        parts.append("Blockers: " + "; ".join(clip(b, 100) for b in blockers[:3]) + ".")
    details: dict[str, None] = {}
    for message in sorted(messages, key=lambda m: m.created_at):
        for found in _DETAIL.findall(message.content):
            details[found.rstrip(".,;:)")] = None
    if details:
        parts.append("Details: " + ", ".join(list(details)[-8:]) + ".")
    return " ".join(parts) or f"Task {task.name!r} has no plan or updates yet."


def rules_answer(question: str, brief: Brief, hits: Sequence[SearchHit], note: str) -> Answer:
    """Answer without a model: the brief's lines for where / next / failed, else search hits
    (and the whole brief when nothing matches at all)."""
    lines = brief.text.splitlines()
    picked: list[str] = []
    if _FAILED.search(question):
        failures = ("Failed:", "Open error", "Recent failure", "Its issue")
        picked += [line for line in lines if line.startswith(failures)] or [
            "No failures or open errors are recorded."
        ]
    if _NEXT.search(question):
        picked += [line for line in lines if line.startswith("Next:") or "next up is" in line] or [
            "No step is left after the current one."
        ]
    if _WHERE.search(question) or (not picked and not hits):
        picked = [*lines, *picked]
    if picked:
        return Answer("\n".join(dict.fromkeys(picked)), "rules", note=note)
    found = [
        f"- {h.entry.type.value} {h.entry.id}: {clip(h.entry.summary, 120)} ({clip(h.snippet, 80)})"
        for h in hits
    ]
    return Answer("Closest records:\n" + "\n".join(found), "search", note=note)
