"""What `conversation_recall` shows: turns in the compact text, fitted to a budget.
Pure.

    [Turn 12] user:
      Can you add JWT refresh token support?

    [Turn 13] assistant:
      I'll read the auth module first.
      -> read_file(path="src/auth.py")

    [Turn 14] tool:read_file(path="src/auth.py")
      ...

The output stays within its budget (8,000 tokens by default): tool results are shortened
first, largest first, to their opening lines; if that is not enough whole groups are left
out (the oldest, or for a range the last, so that paging goes on forward); a group alone
too big for the budget is shortened to fit. Whatever is left out or shortened is named,
with the exact call that fetches it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from clew.core.text import clip, counted, number_ranges
from clew.core.tokens import TokenCounter
from clew.models import Turn

RECALL_ACTIONS = ("search", "range", "tool_calls", "summary", "around", "source")
RECALL_BUDGET = 8000
TOOL_HEAD = 600  # characters of a shortened tool result that are kept
_ARGUMENTS = 160  # characters of a call's arguments shown in a header
_COUNTED = 4 * TOOL_HEAD  # blocks up to this size are counted while fitting, larger estimated


class Fitted(NamedTuple):
    text: str
    tokens: int
    shown: tuple[Turn, ...]
    omitted: tuple[int, ...]  # turn numbers left out for the budget
    clipped: tuple[int, ...]  # turn numbers shown shortened


# The hints in recall's text name both doors: the `clew recall` command and the tool call.
SUMMARY_HINT = "conversation_recall action=summary"
RANGE_HINT = "conversation_recall action=range (or search)"
_TOOL_CALL = re.compile(r" \(conversation_recall action=range start_turn=\d+ end_turn=\d+\)")


def fetch_hint(session_id: str, first: int, last: int) -> str:
    """The CLI command and the tool call that return turns first..last."""
    return (
        f"`clew recall {session_id} --range {first} {last}` (conversation_recall"
        f" action=range start_turn={first} end_turn={last})"
    )


def for_cli(text: str, session_id: str) -> str:
    """Recall's text as the command line shows it: its hints name `clew recall` options
    only, not the tool's arguments."""
    command = f"`clew recall {session_id}"
    text = _TOOL_CALL.sub("", text)
    text = text.replace(SUMMARY_HINT, f"{command} --summary`")
    return text.replace(RANGE_HINT, f"{command} --range A-B` (or --search)")


def call_text(name: str, arguments: str) -> str:
    """A tool call on one line: name(key="value", n=3)."""
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        value = None
    if isinstance(value, dict):
        shown = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in value.items())
    else:
        shown = arguments
    return f"{name}({clip(shown, _ARGUMENTS)})"


def render_turn(
    session_id: str,
    turn: Turn,
    calls: Mapping[str, str],
    *,
    match: bool = False,
    head: int | None = None,
    most_calls: int = 10,
) -> str:
    """One turn as a block of text; `calls` maps tool call ids to their `call_text`, for
    the headers of tool results; `head` shortens the content to that many characters."""
    if turn.role == "tool":
        call = calls.get(turn.tool_call_id or "") or f"{turn.tool_name or 'tool'}(…)"
        header = f"[Turn {turn.number}] tool:{call}"
    else:
        header = f"[Turn {turn.number}] {turn.role}:"
    if match:
        header += "  (match)"
    if turn.hidden:
        header += "  (hidden from the session's view)"
    body = turn.text or ""
    if head is not None and len(body) > head:
        lines = body.count("\n") + 1
        cut = body[:head].rsplit("\n", 1)[0] if "\n" in body[:head] else body[:head]
        body = (
            f"{cut}\n[… {lines:,} lines, {len(body):,} characters in all; all of it:"
            f" {fetch_hint(session_id, turn.number, turn.number)}]"
        )
    lines_out = [header, *("  " + line if line else "" for line in body.splitlines())]
    lines_out += [f"  -> {call_text(c[1], c[2])}" for c in turn.tool_calls[:most_calls]]
    if len(turn.tool_calls) > most_calls:
        lines_out.append(f"  -> … and {len(turn.tool_calls) - most_calls} more calls")
    return "\n".join(lines_out)


def call_texts(turns: Sequence[Turn]) -> dict[str, str]:
    """Each tool call id among `turns` with its `call_text`."""
    return {c[0]: call_text(c[1], c[2]) for t in turns for c in t.tool_calls if c[0]}


def fit(
    session_id: str,
    groups: Sequence[Sequence[Turn]],
    calls: Mapping[str, str],
    counter: TokenCounter,
    *,
    budget: int = RECALL_BUDGET,
    matches: frozenset[int] = frozenset(),
    head_text: str = "",
    keep_oldest: bool = False,
) -> Fitted:
    """Render groups of consecutive turns (each a search hit with its neighbours, or one
    run of a range) within `budget` tokens: all of them if they fit, else shortened and
    fewer; the whole text is counted at the end."""
    layout = _Layout(session_id, groups, calls, counter, budget, matches, head_text)
    # The usual case: everything fits, and the whole output is counted once.
    everything = layout.everything()
    if everything is not None:
        return everything
    shown = layout.estimated(groups, keep_oldest)
    return layout.counted(shown, keep_oldest)


class _Layout:
    """The turns of a recall being fitted to its budget: how each is shown (its head cut
    to a length, its calls' arguments shown or not) and the text they make."""

    def __init__(
        self,
        session_id: str,
        groups: Sequence[Sequence[Turn]],
        calls: Mapping[str, str],
        counter: TokenCounter,
        budget: int,
        matches: frozenset[int],
        head_text: str,
    ) -> None:
        self.session_id, self.calls, self.counter = session_id, calls, counter
        self.budget, self.matches, self.head_text = budget, matches, head_text
        self.heads: dict[int, int | None] = {t.number: None for g in groups for t in g}
        self.by_number = {t.number: t for g in groups for t in g}
        self.bare: set[int] = set()  # turns shown without their tool calls' arguments
        self.sizes: dict[int, int] = {}  # each turn's tokens, counted or estimated
        self.fixed = 0  # the head's tokens, and the closing note's on what is left out

    def block(self, t: Turn) -> str:
        """A turn as it is shown now."""
        return render_turn(
            self.session_id,
            t,
            self.calls,
            match=t.number in self.matches,
            head=self.heads[t.number],
            most_calls=0 if t.number in self.bare else 10,
        )

    def cost(self, t: Turn) -> int:
        """A block's tokens: counted if it is small, else estimated (a third of its
        characters) so that text about to be cut is not tokenized; the whole output is
        counted exactly at the end."""
        text = self.block(t)
        return (self.counter.text(text) if len(text) <= _COUNTED else len(text) // 3) + 1

    def compose(self, shown: list[Turn]) -> Fitted:
        """The recall's text of the turns `shown`, with a note on those left out."""
        numbers = {t.number for t in shown}
        omitted = tuple(sorted(n for n in self.by_number if n not in numbers))
        parts = [self.head_text] if self.head_text else []
        previous: int | None = None
        for t in shown:
            if previous is not None and t.number != previous + 1:
                parts.append("[…]")
            parts.append(self.block(t))
            previous = t.number
        if omitted:
            parts.append(
                f"[{counted(len(omitted), 'turn')} left out to stay within {self.budget:,} tokens:"
                f" {clip(number_ranges(omitted), 200)}. Fetch them with"
                f" {fetch_hint(self.session_id, omitted[0], omitted[-1])}, or narrow the query.]"
            )
        text = "\n\n".join(parts) + "\n"
        clipped = tuple(sorted(n for n in numbers if self.heads[n] is not None))
        return Fitted(text, self.counter.text(text), tuple(shown), omitted, clipped)

    def everything(self) -> Fitted | None:
        """Every turn in full, when that fits the budget."""
        if sum(len(self.block(t)) for t in self.by_number.values()) // 3 <= self.budget:
            everything = self.compose(list(self.by_number.values()))
            if everything.tokens <= self.budget:
                return everything
        return None

    def total(self, turns: Sequence[Turn]) -> int:
        """The estimated tokens of a recall of `turns`."""
        return self.fixed + sum(self.sizes[t.number] for t in turns)

    def shorten(self, candidates: Sequence[Turn], shown: Sequence[Turn]) -> None:
        """Shorten long turns, largest first, until `shown` fits."""
        for t in sorted(candidates, key=lambda t: -self.sizes[t.number]):
            if self.total(shown) <= self.budget:
                return
            if len(t.text or "") > TOOL_HEAD:
                self.heads[t.number] = TOOL_HEAD
                self.sizes[t.number] = self.cost(t)

    def estimated(self, groups: Sequence[Sequence[Turn]], keep_oldest: bool) -> list[Turn]:
        """The turns shown, shortened and fewer until their estimated tokens fit."""
        self.sizes = {n: self.cost(t) for n, t in self.by_number.items()}
        self.fixed = self.counter.text(self.head_text) + 120
        # 1. Tool results first, largest first.
        shown = list(self.by_number.values())
        self.shorten([t for t in shown if t.role == "tool"], shown)
        # 2. Then whole groups: the oldest (or, paging a range, the last), keeping one.
        kept = list(groups)
        while self.total([t for g in kept for t in g]) > self.budget and len(kept) > 1:
            kept.pop(-1 if keep_oldest else 0)
        # 3. A group alone too big: shorten its longest turns, then drop its edge turns.
        shown = [t for g in kept for t in g]
        self.shorten(shown, shown)
        while len(shown) > 1 and self.total(shown) > self.budget:
            shown.pop(-1 if keep_oldest else 0)
        return shown

    def counted(self, shown: list[Turn], keep_oldest: bool) -> Fitted:
        """The recall of `shown`, fewer or shorter until its counted tokens fit."""
        fitted = self.compose(shown)
        while fitted.tokens > self.budget:  # the reserve was not enough, or one turn is dense
            if len(shown) > 1:
                shown.pop(-1 if keep_oldest else 0)
            else:
                alone = shown[0]
                size = self.heads[alone.number]
                size = len(alone.text or "") if size is None else size
                if size == 0 and alone.number in self.bare:
                    break
                if size == 0:
                    self.bare.add(alone.number)
                self.heads[alone.number] = size // 2
            fitted = self.compose(shown)
        return fitted
