"""Score what an agent gets back after an interruption (the brief and the state, as text)
against what the script knows it must say. Pure: text and an `Expect` in, checks out.

Only the text is read, as an agent whose context was compacted would read it: the
brief's lines ("Completed steps 1-3, 5 of 40", "Current: step 6 — ...", "Also active",
"Next:", "Open error ID: ...", "Recent failure: ...", "Waiting: ...", "Decided: ...") and
the state's YAML.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

import yaml
from benchmarks.continuity.script import Expect

FIELDS = (
    "completed", "current", "next", "open_errors", "resolved_not_open", "errors_once",
    "constraints", "decisions_latest", "decisions_not_reversed", "questions", "waits", "budget",
)  # fmt: skip
BUDGET = 1800


class Shown(NamedTuple):
    """What the brief and the state say, read back from their text."""

    completed: set[int]
    current: set[int]
    next: set[int]
    open_errors: dict[str, str]  # entry id -> text
    constraints: list[str]
    decisions: list[str]
    questions: list[str]
    waits: list[str]


def _ranges(text: str) -> set[int]:
    found: set[int] = set()
    for part in text.split(","):
        low, _, high = part.strip().partition("-")
        if low.strip().isdigit():
            found.update(range(int(low), int(high or low) + 1))
    return found


def _numbers(value: Any) -> set[int]:
    """Step numbers in a state field: a ref ({n: ...}), a list of refs, or numbers."""
    if isinstance(value, dict):
        return {value["n"]} if isinstance(value.get("n"), int) else set()
    if isinstance(value, list):
        return {n for item in value for n in _numbers(item)}
    return {value} if isinstance(value, int) else set()


def read(brief: str, state: str) -> Shown:
    """Read the brief's and the state's text back into what they say."""
    shown = Shown(set(), set(), set(), {}, [], [], [], [])
    for line in brief.splitlines():
        if m := re.match(r"Completed steps ([\d, -]+) of \d+", line):
            shown.completed.update(_ranges(m.group(1)))
        elif m := re.match(r"Current: step (\d+) —", line):
            shown.current.add(int(m.group(1)))
        elif line.startswith("Also active: "):
            shown.current.update(int(n) for n in re.findall(r"step (\d+) —", line))
        elif m := re.search(r"next up is step (\d+)", line):
            shown.current.add(int(m.group(1)))
        elif line.startswith("Next: "):
            shown.next.update(int(n) for n in re.findall(r"step (\d+) —", line))
        elif m := re.match(r"Open error (\w+): (.*)$", line):
            shown.open_errors[m.group(1)] = m.group(2)
        elif m := re.match(r"Recent failure: (.*)$", line):
            # A failed command no error entry stands for yet: an open failure too.
            shown.open_errors[f"failure{len(shown.open_errors)}"] = m.group(1)
        elif m := re.match(r"Waiting(?: on \w+)?: (.*) \(since ", line):
            shown.waits.append(m.group(1))  # a wait action, or a smart wait with its id
        elif m := re.match(r"Decided: (.*)$", line):
            shown.decisions.append(m.group(1))
    data = yaml.safe_load(state) or {}
    shown.waits.extend(str(row.get("on", "")) for row in data.get("waiting_on") or [])
    for row in data.get("subtasks") or []:
        if row.get("status") == "completed":
            shown.completed.add(row["n"])
    shown.current.update(_numbers(data.get("current_step")))
    shown.current.update(_numbers(data.get("also_active")))
    shown.next.update(_numbers(data.get("next_steps")))
    for row in data.get("errors_encountered") or []:
        if row.get("resolution") is None:
            shown.open_errors[str(row["id"])] = str(row["error"])
    shown.constraints.extend(str(c) for c in data.get("constraints") or [])
    for item in data.get("decisions_log") or []:
        shown.decisions.append(str(item).split(" (was: ", 1)[0])
    shown.questions.extend(str(q["question"]) for q in data.get("pending_questions") or [])
    return shown


def _fold(text: str) -> str:
    return " ".join(text.split()).casefold()


def names(shown: str, truth: str) -> bool:
    """Whether a shown text is the truth's text, whole or cut with an ellipsis."""
    seen, want = _fold(shown), _fold(truth)
    if seen.endswith("…"):
        cut = seen[:-1].rstrip()
        return len(cut) >= min(12, len(want)) and want.startswith(cut)
    return seen == want or want in seen


def about(shown: str, subject: str, option: str) -> bool:
    """Whether a shown decision is about `subject` and names `option`."""
    text = _fold(shown)
    return _fold(subject) in text and _fold(option) in text


def check(expect: Expect, brief: str, state: str, tokens: int) -> dict[str, bool | None]:
    """Each field: True (right), False (wrong) or None (nothing to check)."""
    shown = read(brief, state)
    out: dict[str, bool | None] = dict.fromkeys(FIELDS)
    out["completed"] = shown.completed == set(expect.completed)
    out["current"] = set(expect.current) <= shown.current if expect.current else None
    out["next"] = None if expect.next is None else expect.next in shown.next

    def matching(ref: str) -> set[str]:
        return {i for i, text in shown.open_errors.items() if ref.casefold() in text.casefold()}

    if expect.open_errors:
        out["open_errors"] = all(matching(r) for r in expect.open_errors)
    if expect.resolved_errors:
        out["resolved_not_open"] = not any(matching(r) for r in expect.resolved_errors)
    if expect.open_errors or expect.resolved_errors:
        refs = (*expect.open_errors, *expect.resolved_errors)
        out["errors_once"] = all(len(matching(r)) <= 1 for r in refs)
    if expect.constraints:
        out["constraints"] = all(
            any(names(s, c) for s in shown.constraints) for c in expect.constraints
        )
    if expect.decisions:
        out["decisions_latest"] = all(
            any(about(s, subject, latest) for s in shown.decisions)
            for subject, latest, _ in expect.decisions
        )
        out["decisions_not_reversed"] = not any(
            about(s, subject, old) and not about(s, subject, latest)
            for subject, latest, earlier in expect.decisions
            for old in earlier
            for s in shown.decisions
        )
    if expect.questions:
        out["questions"] = all(any(names(s, q) for s in shown.questions) for q in expect.questions)
    if expect.waits:
        out["waits"] = all(any(names(s, w) for s in shown.waits) for w in expect.waits)
    out["budget"] = tokens <= BUDGET
    return out


def why(expect: Expect, brief: str, state: str) -> str:
    """A short account of what was shown, for reading a failed check."""
    shown = read(brief, state)
    return (
        f"expected {expect}\nshown completed={sorted(shown.completed)} "
        f"current={sorted(shown.current)} next={sorted(shown.next)} "
        f"open_errors={shown.open_errors} decisions={shown.decisions} "
        f"constraints={shown.constraints} questions={shown.questions} waits={shown.waits}"
    )
