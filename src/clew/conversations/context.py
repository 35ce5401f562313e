"""Token-aware context assembly. Pure.

A prompt is built from tiers, each within its own budget, in this order of priority:

1. the system prompt (always; an error if it alone is over the whole budget);
2. the layer-1 task state of the session's task (its own hard budget);
3. the session state;
4. the enabled guardrails;
5. the newest group of turns (the message being answered; see below);
6. relevant layer-2 entries;
7. retrieved context (what the caller recalled from the archive);
8. recent turns, walked backwards from the newest until the budget is full.

Tiers 1-4, 6 and 7 go into one system message; the turns follow it verbatim. A tool call
and its results are one group, taken or left whole, so a call never reaches the model
without its result: a call whose result was never recorded (a crash, a popped item) gets a
synthetic one, and a result whose call is gone is dropped; both are reported. The same
inputs always give the same prompt, and `tiers` explains it: each tier's budget, the
tokens it used, what it included and what it left out.
"""

from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from clew.core import checks
from clew.core import turns as messages  # a module parameter is named turns
from clew.core.tokens import TokenCounter
from clew.errors import ValidationError
from clew.models import Turn

MESSAGE_OVERHEAD = 4  # tokens a chat API adds per message (role, separators)
TIER_BUDGETS = {
    "task_state": 1500,
    "session_state": 1000,
    "guardrails": 500,
    "entries": 2000,
    "retrieved": 8000,
}
NO_RESULT = "[clew: no result was recorded for this tool call]"


class Tier(NamedTuple):
    """One line of the explain record."""

    name: str
    budget: int | None  # None: no cap of its own (the system prompt; turns take the rest)
    tokens: int
    included: int  # items: sections, lines, entries, turns
    left_out: int
    note: str


class Context(NamedTuple):
    """An assembled prompt and why it is what it is."""

    messages: tuple[dict[str, Any], ...]  # the system message, then the turns verbatim
    tokens: int
    budget: int
    tiers: tuple[Tier, ...]
    turns: tuple[int, ...]  # the turn numbers included
    repairs: tuple[str, ...]  # synthetic results added, orphan results dropped
    hint: str | None  # the dangling-reference note added, if any


class Section(NamedTuple):
    """A part of the system message: a heading and the lines under it, best first; or,
    for a state, a render that fits whatever budget it is given (all or nothing)."""

    name: str
    title: str
    lines: tuple[str, ...] = ()
    render: Callable[[int], str] | None = None


class Group(NamedTuple):
    """Turns that must be sent together, with what repairs them."""

    turns: tuple[Turn, ...]
    synthetic: tuple[dict[str, Any], ...]  # results made up for calls that have none


def group_turns(turns: Sequence[Turn]) -> tuple[list[Group], list[Turn]]:
    """Split turns (in order) into groups that must not be separated, and the tool results
    whose call is not among them (orphans, dropped). A group starts at each turn that is
    not a tool result, except that an assistant item that only calls tools joins the
    reasoning item before it; a result joins the group of its call, and every group
    between them too (parallel calls answered out of order)."""
    groups: list[list[Turn]] = []
    owner: dict[str, int] = {}  # call id -> index of the group that made it
    orphans: list[Turn] = []
    for turn in turns:
        if turn.role == "tool":
            at = owner.get(turn.tool_call_id or "")
            if at is None:
                orphans.append(turn)
                continue
            if at < len(groups) - 1:  # merge everything from the call's group on
                merged = [t for g in groups[at:] for t in g]
                del groups[at:]
                groups.append(merged)
                owner = {k: min(v, at) for k, v in owner.items()}
            groups[-1].append(turn)
            continue
        joins = (
            groups
            and turn.tool_calls
            and not turn.text
            and groups[-1][-1].message.get("type") == "reasoning"
        )
        if joins:
            groups[-1].append(turn)
        else:
            groups.append([turn])
        for call_id, _, _ in turn.tool_calls:
            if call_id:
                owner[call_id] = len(groups) - 1
    return [_repaired(g) for g in groups], orphans


def _synthetic_text(result: dict[str, Any]) -> str:
    """What a made-up result says (an Anthropic one holds a block per call)."""
    content = result.get("content") or result.get("output") or ""
    if isinstance(content, list):
        return "\n".join(str(b.get("content", "")) for b in content)
    return str(content)


def _synthetic_calls(result: dict[str, Any]) -> list[str]:
    """The calls a made-up result answers."""
    content = result.get("content")
    if isinstance(content, list):
        return [str(b.get("tool_use_id")) for b in content]
    return [str(result.get("tool_call_id") or result.get("call_id"))]


def _repaired(turns: list[Turn]) -> Group:
    answered = {t.tool_call_id for t in turns if t.role == "tool"}
    for turn in turns:  # an Anthropic user message answers every call of the reply before it
        if turn.role == "tool":
            answered.update(messages.answered(turn.message))
    synthetic: list[dict[str, Any]] = []
    for turn in turns:
        item = turn.message.get("type") == "function_call"
        missing = [c for c, _, _ in turn.tool_calls if c and c not in answered]
        if missing and messages.calls_by_block(turn.message):  # answered in its own shape
            synthetic.append(
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": c,
                            "content": NO_RESULT,
                            "is_error": True,
                        }
                        for c in missing
                    ],
                }
            )
            continue
        for call_id in missing:
            if item:
                synthetic.append(
                    {"type": "function_call_output", "call_id": call_id, "output": NO_RESULT}
                )
            else:
                synthetic.append({"role": "tool", "tool_call_id": call_id, "content": NO_RESULT})
    return Group(tuple(turns), tuple(synthetic))


def tier_caps(defaults: Mapping[str, int], overrides: Mapping[str, Any] | None) -> dict[str, int]:
    """Each tier's token cap: the defaults, with the caller's overrides checked."""
    caps = dict(defaults)
    for name, value in (overrides or {}).items():
        if name not in caps:
            raise ValidationError(f"no tier is called {name!r}; the tiers are: {', '.join(caps)}")
        caps[name] = checks.integer(value, f"{name} budget")
        if caps[name] < 0:
            raise ValidationError(f"the {name} budget cannot be negative ({value})")
    return caps


MIN_RENDER = 800  # the smallest budget a state render honours (state.MIN_BUDGET)


def fit_section(
    section: Section, budget: int, counter: TokenCounter
) -> tuple[str | None, int, int, int]:
    """The section's text within `budget`: (text, tokens, lines in, lines left out)."""
    heading = f"## {section.title}"
    if section.render is not None:
        inner = budget - counter.text(heading) - 4
        if inner < MIN_RENDER:
            return None, 0, 0, 1
        text = "\n".join([heading, section.render(inner).rstrip()])
        tokens = counter.text(text) + 2
        return (text, tokens, 1, 0) if tokens <= budget else (None, 0, 0, 1)
    shown: list[str] = []
    for line in section.lines:
        if counter.text("\n".join([heading, *shown, line])) + 2 > budget:
            break
        shown.append(line)
    left = len(section.lines) - len(shown)
    if not shown:
        return None, 0, 0, left
    text = "\n".join([heading, *shown])
    return text, counter.text(text) + 2, len(shown), left


def _fit_sections(
    sections: Sequence[Section],
    tier_budgets: dict[str, int],
    budget: int,
    used: int,
    newest: int,
    counter: TokenCounter,
    tiers: list[Tier],
) -> tuple[dict[str, str], int]:
    """Each section fitted within its tier's cap and the room left (the newest turn group's
    kept for the entries and what was retrieved), its tier added to `tiers`: the sections'
    texts by name, and the tokens used with them."""
    parts: dict[str, str] = {}
    for section in sections:
        cap = tier_budgets.get(section.name, 0)
        room = budget - used - (newest if section.name in ("entries", "retrieved") else 0)
        text, tokens, shown, left = fit_section(section, min(cap, room), counter)
        if not section.lines and section.render is None:
            note = "nothing to include"
        elif cap == 0:
            note = "turned off (budget 0)"
        else:
            note = f"{left} left out for the budget" if left else ""
        tiers.append(Tier(section.name, cap, tokens, shown, left, note))
        if text is not None:
            parts[section.name] = text
            used += tokens
    return parts, used


def _newest_that_fit(
    groups: Sequence[Group], cost_of: Callable[[Group], int], used: int, budget: int
) -> tuple[list[Group], int]:
    """The newest whole turn groups that fit in what `budget` leaves after `used`, oldest
    first, and the tokens used with them."""
    taken: list[Group] = []
    for group in reversed(groups):
        cost = cost_of(group)
        if used + cost > budget:
            break
        taken.append(group)
        used += cost
    taken.reverse()
    return taken, used


def _repairs(taken: Sequence[Group], orphans: Sequence[Turn]) -> list[str]:
    """What the context changed of the turns: a result added for each call with none, and
    each result whose call is not in it dropped."""
    repairs = [
        f"added a result for call {call} (none recorded)"
        for g in taken
        for s in g.synthetic
        for call in _synthetic_calls(s)
    ]
    repairs += [
        f"dropped turn {t.number}: a result whose call is not in the context" for t in orphans
    ]
    return repairs


def assemble(
    *,
    budget: int,
    system_prompt: str,
    sections: Sequence[Section],
    turns: Sequence[Turn],
    earlier: int,
    measure: Callable[[Turn], int],
    counter: TokenCounter,
    tier_budgets: dict[str, int],
    hint: Callable[[Turn], str | None] = lambda turn: None,
) -> tuple[Context, bool]:
    """Assemble a prompt from the system prompt, the sections (task state, session state,
    guardrails, entries, retrieved; empty ones may be left out) and the newest `turns` of
    the conversation (`earlier` visible turns come before them and were not loaded).

    Also returns whether the turns ran out before the budget did while earlier turns
    exist: the caller then loads more and assembles again."""
    tiers: list[Tier] = []
    used = counter.text(system_prompt) + MESSAGE_OVERHEAD
    if used > budget:
        raise ValueError(f"the system prompt alone is {used:,} tokens, over the {budget:,} budget")
    tiers.append(Tier("system_prompt", None, used, 1, 0, ""))
    groups, orphans = group_turns(turns)

    def group_cost(g: Group) -> int:
        return sum(measure(t) + MESSAGE_OVERHEAD for t in g.turns) + sum(
            counter.text(_synthetic_text(s)) + MESSAGE_OVERHEAD for s in g.synthetic
        )

    newest = group_cost(groups[-1]) if groups else 0
    parts, used = _fit_sections(sections, tier_budgets, budget, used, newest, counter, tiers)
    # The recall hint for the newest user message, if it refers back: its room is kept
    # while the turns are packed, and it is sent only if some turns were left out.
    latest_user = next((t for t in reversed(turns) if t.role == "user"), None)
    the_hint = hint(latest_user) if latest_user is not None else None
    reserve = counter.text(the_hint) + 2 if the_hint is not None else 0
    # Turns: whole groups, newest first, while they fit.
    used += reserve
    taken, used = _newest_that_fit(groups, group_cost, used, budget)
    full = len(taken) < len(groups)
    first = taken[0].turns[0].number if taken else None
    left_out = sum(len(g.turns) for g in groups[: len(groups) - len(taken)]) + earlier
    included = [t for g in taken for t in g.turns]
    note = ""
    if groups and not taken:
        note = f"the newest turn group ({newest:,} tokens) does not fit what is left"
    elif left_out:
        note = f"turns before {first} left out (recall them with conversation_recall)"
    repairs = _repairs(taken, orphans)
    used -= reserve
    if the_hint is not None and left_out and latest_user in included:
        parts["hint"] = the_hint
        used += reserve
    else:
        the_hint = None
    system = "\n\n".join([system_prompt, *parts.values()]).strip()
    turn_tokens = sum(group_cost(g) for g in taken)
    tiers.append(Tier("turns", None, turn_tokens, len(included), left_out, note))
    if the_hint is not None:
        tiers.append(Tier("hint", None, reserve, 1, 0, ""))
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}]
    for g in taken:
        messages += [t.message for t in g.turns]
        messages += g.synthetic
    context = Context(
        tuple(messages),
        used,
        budget,
        tuple(tiers),
        tuple(t.number for t in included),
        tuple(repairs),
        the_hint,
    )
    return context, (not full and earlier > 0)
