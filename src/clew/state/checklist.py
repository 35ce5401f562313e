"""An agent's own list, kept by capture as a task, given back as the checklist it was: every
step with its mark, so an agent whose list compaction, /clear or a resume emptied can write
it back whole. Pure: a task and a budget in, text out.

The state (document.py) shows a long plan as a window around the current step; a list to
write back needs every item, so this shows them all while they fit the budget. When they do
not, it degrades in a fixed order until they do: titles cut to 80 characters, then the
completed steps before the first open one folded into one line, then the last steps cut,
each named by the command that shows them all.
"""

from __future__ import annotations

from typing import NamedTuple

from clew.core.text import clip, counted
from clew.core.tokens import TokenCounter
from clew.models import PlanItem, StepStatus, Task

__all__ = ["Checklist", "render_checklist"]

MARKS = {
    StepStatus.COMPLETED: "[x]",
    StepStatus.ACTIVE: "[>]",
    StepStatus.PENDING: "[ ]",
    StepStatus.FAILED: "[!]",
    StepStatus.SKIPPED: "[-]",
}
_TITLE = 300  # a title's characters while the whole list fits
_CUT_TITLE = 80  # and once it does not


class Checklist(NamedTuple):
    """The list as text, and what it costs."""

    text: str
    tokens: int
    shown: int  # steps named one by one (the others folded or cut)


def render_checklist(task: Task, budget: int, counter: TokenCounter) -> Checklist:
    """The task's plan as a checklist (`[x] 1. title`) within `budget` tokens."""
    more = f"clew task show {task.id} --all"
    plan = list(task.plan)
    for width in (_TITLE, _CUT_TITLE):
        lines = [_line(step, width) for step in plan]
        if counter.fits(lines, budget):
            return Checklist("\n".join(lines), counter.count(lines).tokens, len(plan))
    # Fold the completed steps before the first open one, then cut from the end.
    first_open = next((i for i, s in enumerate(plan) if s.status is not StepStatus.COMPLETED), 0)
    head = [f"[x] 1-{first_open}. completed ({more})"] if first_open > 1 else []
    rest = plan[first_open:] if head else plan
    lines = head + [_line(step, _CUT_TITLE) for step in rest]
    kept = len(rest)
    while kept > 1 and not counter.fits(lines, budget):
        kept -= 1
        cut = len(rest) - kept
        lines = [*head, *(_line(s, _CUT_TITLE) for s in rest[:kept])]
        lines.append(f"... {counted(cut, 'more step')}: {more}")
    return Checklist("\n".join(lines), counter.count(lines).tokens, kept)


def _line(step: PlanItem, width: int) -> str:
    return f"{MARKS.get(step.status, '[ ]')} {step.ordinal}. {clip(step.title, width)}"
