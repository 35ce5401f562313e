"""The "where was I?" brief: a short, deterministic answer built from records.

Pure: it takes a task, its newest messages, actions and entries and the current time,
and returns values; the same inputs always give the same text. The text stays within
`BRIEF_BUDGET` tokens: it is built in shapes from full to terse (`SHAPES`) and the first
that fits is used, so the essentials (status, completed, current and next step) come
through whatever the content.

Plan-progress inference (progress.py) reads the messages for signs that a
step is done ("Step 4 done", "pushed the image"); what is only suggested is shown as a
suggestion with its message, and a step completed because a message stated it (the
facade's business, by configuration) names that message, so the agent can undo it. A
stuck task (stuck.py) says so near the top, with the evidence and what to try.
"""

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import NamedTuple

from clew.core.clock import ago
from clew.core.lifecycle import Wait
from clew.core.text import clip, clip_command, clip_words, number_ranges
from clew.core.tokens import TokenCounter
from clew.models import (
    FINISHED_STEP_STATUSES,
    Action,
    ActionStatus,
    ActionType,
    Entry,
    Message,
    MessageRole,
    PlanItem,
    StepStatus,
    Task,
    TaskRecord,
)
from clew.tasks.progress import Suggestion, applied_from, infer_completed, suggestions
from clew.tasks.stuck import Stuck

__all__ = [
    "BRIEF_BUDGET",
    "Brief",
    "StepRef",
    "Suggestion",
    "build_brief",
    "current_step",
    "infer_completed",
    "suggestions",
]

BRIEF_BUDGET = 300
NEXT_STEPS_SHOWN = 3
WAITS_SHOWN = 3
FAILED_SHOWN = 2  # failed steps shown one per line; more share one line
OPEN_ERRORS_SHOWN = 3  # open errors quoted one per line; the next ones named on one line
OPEN_ERRORS_NAMED = 8  # open errors named (id and a few words) beyond those quoted
INFERENCE_MESSAGES = 200  # the newest messages the inference reads


class StepRef(NamedTuple):
    number: int
    title: str
    status: str
    started_at: str | None = None


class Brief(NamedTuple):
    """Where a task stands: steps done, the current one, what broke, what comes next."""

    task_id: str
    name: str
    status: str
    plan_version: int
    completed: tuple[StepRef, ...]
    failed: tuple[StepRef, ...]
    current: StepRef | None
    next: tuple[StepRef, ...]
    last_update: str | None
    last_update_at: str | None
    recent_failures: tuple[str, ...]
    open_errors: tuple[str, ...]
    decisions: tuple[str, ...]
    waits: tuple[str, ...]
    suggestions: tuple[Suggestion, ...]
    text: str
    tokens: int
    stuck: tuple[Stuck, ...] = ()
    phase: str | None = None  # the task's phase (record.py), when the record was read


class _Shape(NamedTuple):
    quote: int  # characters of quoted text (messages, errors, decisions)
    title: int  # characters of a step title
    keep: int  # lines with a priority above this are left out
    completed_titles: bool = True
    next_steps: int = NEXT_STEPS_SHOWN


SHAPES = (
    _Shape(160, 80, 9),
    _Shape(120, 70, 9),
    _Shape(100, 60, 6),
    _Shape(80, 50, 4),
    _Shape(60, 40, 3),
    _Shape(40, 30, 1, completed_titles=False, next_steps=1),
    _Shape(20, 12, 0, completed_titles=False, next_steps=1),
)


def current_step(plan: Sequence[PlanItem]) -> tuple[int, PlanItem] | None:
    """Return the step being worked on: the first active one, else the first pending one."""
    for wanted in (StepStatus.ACTIVE, StepStatus.PENDING):
        for number, step in enumerate(plan, 1):
            if step.status is wanted:
                return number, step
    return None


# -- the brief --------------------------------------------------------------------------------


class _Failure(NamedTuple):
    """A recent failure as every shape quotes it, worked out once a brief."""

    action: Action
    ago: str  # when it ran, as "8m ago"
    last_line: str  # its output's last line (stderr first), "" if none


def _failure(action: Action, now: datetime) -> _Failure:
    return _Failure(action, ago(action.created_at, now), _last_line(action))


def _last_line(action: Action) -> str:
    """The last line of a command's output (its stderr, else its stdout), "" if none."""
    for stream in (action.stderr, action.stdout):
        if isinstance(stream, str):
            text = stream.strip()
            if text:
                # Its last line lies after the last "\n" (splitlines also breaks at "\r" and
                # the like): no list of every line of a long output.
                return text[text.rfind("\n") + 1 :].splitlines()[-1]
    return ""


def _failure_line(failure: _Failure, quote: int) -> str:
    action = failure.action
    what = (
        f"`{clip_command(action.command, quote // 2)}`"
        if action.command
        else clip(action.summary, 80)
    )
    code = f" exited {action.exit_code}" if action.exit_code is not None else " failed"
    detail = f": {clip(failure.last_line, quote)}" if failure.last_line else ""
    return f"{what}{code} ({failure.ago}){detail}"


def _unfixed_failures(
    actions: Sequence[Action],
    recorded: Mapping[str, str | None],
    earlier: Sequence[Action] = (),
) -> tuple[Action, ...]:
    """The failed commands among `actions` (newest first) that no error entry stands for
    and that no later run of the same command has succeeded since: a retry that worked
    ends the failure, and a failure already shown as an error is not shown twice. `earlier`
    are older actions: an error entry standing for one of their runs covers later failed
    runs of its command too (a retry just after the recorded run sits across the window)."""
    from clew.archive.linking import command_key

    # Each command's key once (linking.same_command: equal keys, not None), not per pair
    # nor per run: the retries of one command share its line.
    every = (*actions, *earlier)
    key_of = {command: command_key(command) for command in {a.command for a in every}}
    keys = [key_of[a.command] for a in actions]
    # What each key's error entries say, in one pass (a pass per failure cost O(n^2) on
    # every `where`): whether one is still open (closed None), and the newest close.
    open_keys: set[str] = set()
    closed_at: dict[str, str] = {}
    for a in every:
        key = key_of[a.command]
        closed = recorded.get(a.id, "")
        if key is None or closed == "":
            continue
        if closed is None:
            open_keys.add(key)
        elif closed > closed_at.get(key, ""):
            closed_at[key] = closed
    out: list[Action] = []
    listed: set[str] = set()
    succeeded: set[str] = set()  # keys of the successes newer than the action at hand
    for key, action in zip(keys, actions, strict=True):
        newer_success = key is not None and key in succeeded
        if key is not None and action.status is ActionStatus.COMPLETED:
            succeeded.add(key)
        if action.status is not ActionStatus.FAILED or action.id in recorded:
            continue
        if newer_success:
            continue
        if key is not None and (
            key in open_keys or (key in closed_at and closed_at[key] >= action.created_at)
        ):
            continue  # another run of this failure, which its error entry stands for
        if key is not None and key in listed:
            continue  # an earlier run of a failure already listed (newest first)
        out.append(action)
        if key is not None:
            listed.add(key)
    return tuple(out)


class _Facts(NamedTuple):
    """Everything the brief says, before it is put into words."""

    completed: tuple[tuple[int, PlanItem], ...]
    failed: tuple[tuple[int, PlanItem], ...]
    current: tuple[int, PlanItem] | None
    upcoming: tuple[tuple[int, PlanItem], ...]
    last: Message | None
    failures: tuple[_Failure, ...]
    open_errors: tuple[Entry, ...]
    decisions: tuple[Entry, ...]
    waits: tuple[Action, ...]
    suggestions: tuple[Suggestion, ...]
    stuck: tuple[Stuck, ...] = ()
    applied: tuple[tuple[int, Message], ...] = ()  # steps completed from a message's words
    open_waits: tuple[Wait, ...] = ()
    ended_waits: tuple[Wait, ...] = ()  # ended since the agent last said anything
    more_waits: int = 0  # open waits beyond those named
    record: TaskRecord | None = None
    more_open: tuple[Entry, ...] = ()  # open errors beyond those quoted, named on one line
    more_open_count: int = 0  # all open errors beyond those quoted (named or not)


def _record_lines(task: Task, rec: TaskRecord, q: int, t: int) -> list[tuple[int, str]]:
    """The task record's lines: phase and its facts, outcome, error summary, answer."""
    out: list[tuple[int, str]] = []
    facts = [f"phase {rec.phase.value}"]
    if rec.priority:
        facts.append(f"priority {rec.priority.value}")
    if rec.domain:
        facts.append(f"domain {clip(rec.domain, t)}")
    if rec.confidence is not None:
        facts.append(f"confidence {rec.confidence:.2f}")
    out.append((5, "Record: " + ", ".join(facts) + "."))
    if rec.outcome:
        out.append((1, f"Outcome: {clip(rec.outcome, q)}"))
    if rec.error_reason:
        numbers = {s.id: n for n, s in enumerate(task.plan, 1)}
        at = numbers.get(rec.error_step_id or "")
        where = f" (step {at})" if at else ""
        out.append((1, f"Failed{where}: {clip(rec.error_reason, q)}"))
    if rec.answer:
        out.append((3, f"Answer: {clip(rec.answer, q)}"))
    return out


def _lines(task: Task, facts: _Facts, shape: _Shape, now: datetime) -> list[tuple[int, str]]:
    """The brief's lines, each with its priority (0 = always kept)."""
    q, t = shape.quote, shape.title
    plan = task.plan
    head = f"Task {clip(task.name, t)!r} ({task.id}) is {task.status.value}"
    out: list[tuple[int, str]] = [(0, f"{head}, plan v{task.plan_version}.")]
    if task.goal:
        out.append((5, f"Goal: {clip(task.goal, q)}"))
    if facts.record is not None:
        out += _record_lines(task, facts.record, q, t)
    out += _progress_lines(task, facts, shape)
    for condition in facts.stuck:
        out.append((0, _sentence(f"Stuck: {clip_words(condition.evidence, q)}")))
        out.append((2, _sentence(f"Try: {clip_words(condition.suggestion, q)}")))
    out += _failed_lines(facts, t)
    out += _current_lines(task, facts, shape, now)
    if facts.last:
        m = facts.last
        out.append((2, f'Last update {ago(m.created_at, now)}: "{clip(m.content, q)}"'))
    out += _error_lines(task, facts, shape)
    out += _wait_lines(task, facts, shape, now)
    for failure in facts.failures:
        out.append((1, f"Recent failure: {_failure_line(failure, q)}"))
    for e in facts.decisions:
        out.append((6, f"Decided: {clip(e.summary, q)}"))
    for n, m in facts.applied:
        quote = clip(m.content, q // 2)
        out.append(
            (4, f'Step {n} counts as done from message {m.id}: "{quote}" (if not, set its status).')
        )
    for hint in facts.suggestions:
        status = plan[hint.step - 1].status.value
        quote = clip(hint.message, q // 2)
        out.append(
            (7, f'Messages suggest step {hint.step} is done: "{quote}" (its status is {status}).')
        )
    if facts.suggestions and shape.keep < 7:
        # A shape too short for the quotes still says which steps the messages suggest are
        # done (`--json` lists them all), so the text and the JSON tell the same story.
        suggested = sorted({h.step for h in facts.suggestions})
        numbers = number_ranges(suggested)
        steps = f"step {numbers} is" if len(suggested) == 1 else f"steps {numbers} are"
        out.append((2, f"Messages suggest {steps} done (not marked so yet)."))
    upcoming = facts.upcoming[: shape.next_steps]
    if upcoming:
        nexts = "; ".join(f"step {n} — {clip(s.title, t)}" for n, s in upcoming)
        out.append((0, f"Next: {nexts}."))
    return out


def _sentence(line: str) -> str:
    """End a line with a full stop, unless it ends cut (an ellipsis says it goes on)."""
    return line if line.endswith("…") else line + "."


def _progress_lines(task: Task, facts: _Facts, shape: _Shape) -> list[tuple[int, str]]:
    """The line on how far the plan is: the steps completed (the last titles, as the shape
    allows), or that none is, or that there is no plan."""
    plan, t = task.plan, shape.title
    if not plan:
        return [(0, "It has no plan steps.")]
    if not facts.completed:
        return [(0, f"No step of {len(plan)} is completed yet.")]
    numbers = number_ranges([n for n, _ in facts.completed])
    if shape.completed_titles:
        titles = "; ".join(clip(s.title, t) for _, s in facts.completed[-3:])
        more = f" (last: {titles})" if len(facts.completed) > 3 else f": {titles}"
    else:
        more = ""
    return [(0, f"Completed steps {numbers} of {len(plan)}{more}.")]


def _failed_lines(facts: _Facts, t: int) -> list[tuple[int, str]]:
    """The failed steps: one line each, or one line for them all when there are many."""
    if len(facts.failed) > FAILED_SHOWN:
        # Many failed steps (each replanned, say) take one line, so they never crowd out
        # what is open now.
        n, s = facts.failed[-1]
        numbers = number_ranges([m for m, _ in facts.failed])
        return [(1, f"Failed: steps {numbers} (last: step {n} — {clip(s.title, t)}).")]
    return [(1, f"Failed: step {n} — {clip(s.title, t)}.") for n, s in facts.failed]


def _current_lines(
    task: Task, facts: _Facts, shape: _Shape, now: datetime
) -> list[tuple[int, str]]:
    """The step in progress (with its issue and the other active ones), or the next one
    up, or that every step is finished."""
    q, t = shape.quote, shape.title
    plan = task.plan
    out: list[tuple[int, str]] = []
    if facts.current and facts.current[1].status is StepStatus.ACTIVE:
        n, s = facts.current
        since = f", started {ago(s.started_at, now)}" if s.started_at else ""
        out.append((0, f"Current: step {n} — {clip(s.title, t)} (active{since})."))
        if s.active_issue:
            out.append((2, f"Its issue: {clip(s.active_issue, q)}"))
        others = [(m, o) for m, o in enumerate(plan, 1) if o.status is StepStatus.ACTIVE][1:]
        if others:
            named = "; ".join(f"step {m} — {clip(o.title, t)}" for m, o in others)
            out.append((0, f"Also active: {named}."))
    elif facts.current:
        n, s = facts.current
        out.append((0, f"No step is in progress; next up is step {n} — {clip(s.title, t)}."))
    elif plan:
        out.append((0, "Every step is finished."))
    return out


def _error_lines(task: Task, facts: _Facts, shape: _Shape) -> list[tuple[int, str]]:
    """The open errors, every one named: by id on one line in the tersest shape, else the
    newest quoted and the rest named with a few words."""
    # What is open now ranks with the failed steps; open means shown as open: the tersest
    # shape names every open error by id (as it does waits), the others quote the newest
    # and name the rest, never folding one into a count of resolved errors.
    q = shape.quote
    out: list[tuple[int, str]] = []
    recall = f"`clew entries --task {task.id} --type error --status active`"
    errors = (*facts.open_errors, *facts.more_open)
    unnamed = len(facts.open_errors) + facts.more_open_count - len(errors)
    if shape.keep == 0 and errors:
        more = f" (+{unnamed}: {recall})" if unnamed > 0 else ""
        out.append((0, f"Open errors: {', '.join(e.id for e in errors)}{more}."))
        return out
    for e in facts.open_errors:
        said = ""
        if e.evidence:  # the newest passing run: the agent, who alone resolves it, judges
            said = f" [{clip(e.evidence[-1].text(), q)}; resolve it if that fixed it]"
        kept = " (kept open)" if e.keep_open else ""
        out.append((1, f"Open error {e.id}: {clip(e.summary, q)}{kept}{said}"))
    if facts.more_open_count:
        short = max(q // 4, 12)
        names = "; ".join(f"{e.id} ({clip(e.summary, short)})" for e in facts.more_open)
        more = f" and {unnamed} more: {recall}" if unnamed > 0 else ""
        count = facts.more_open_count
        out.append((1, f"{count} more open error{'s' if count > 1 else ''}: {names}{more}."))
    return out


def _wait_lines(task: Task, facts: _Facts, shape: _Shape, now: datetime) -> list[tuple[int, str]]:
    """The open waits, always named however old (they are what the task is doing; the
    tersest shape names them by id on one line), and the waits that ended since."""
    q = shape.quote
    out: list[tuple[int, str]] = []
    if shape.keep == 0 and (facts.open_waits or facts.waits):
        ids = ", ".join([w.id for w in facts.open_waits] + [a.id for a in facts.waits])
        more = (
            f" (+{facts.more_waits}: `clew wait list --task {task.id}`)" if facts.more_waits else ""
        )
        out.append((0, f"Waiting on: {ids}{more}."))
    else:
        for w in facts.open_waits:
            seen = w.seen or w.observation
            last = f"; last check: {clip(seen, q // 2)}" if seen and shape.keep >= 2 else ""
            since = ago(w.created_at, now)
            out.append((0, f"Waiting on {w.id}: {clip(w.label, q)} (since {since}{last})."))
        if facts.more_waits:
            more = f"{facts.more_waits} more open waits: `clew wait list --task {task.id}`."
            out.append((0, more))
        for a in facts.waits:
            what = clip(a.summary, q)
            out.append((0, f"Waiting: {what} (since {ago(a.created_at, now)})."))
    for w in facts.ended_waits:
        said = clip(w.result or "", q)
        status = w.status.value.replace("_", " ")
        out.append((1, f"Wait {w.id} {status}: {clip(w.label, q // 2)}: {said}"))
    return out


def _facts_of(
    task: Task,
    messages: Sequence[Message],
    actions: Sequence[Action],
    now: datetime,
    open_errors: Sequence[Entry],
    open_count: int | None,
    decisions: Sequence[Entry],
    recorded_failures: Mapping[str, str | None] | None,
    earlier: Sequence[Action],
    stuck: Sequence[Stuck],
    suggest: bool,
    applied: bool,
    waits: Sequence[Wait],
    record: TaskRecord | None,
) -> _Facts:
    """What the brief says of a task, chosen and cut to what it shows (build_brief's
    arguments, as it takes them)."""
    spoke = next((m.created_at for m in messages if m.role is not MessageRole.SYSTEM), "")
    plan = task.plan
    numbered = tuple(enumerate(plan, 1))
    found = current_step(plan)
    after = found[0] if found else 0
    return _Facts(
        completed=tuple(x for x in numbered if x[1].status is StepStatus.COMPLETED),
        failed=tuple(x for x in numbered if x[1].status is StepStatus.FAILED),
        current=found,
        upcoming=tuple(
            x
            for x in numbered
            if x[0] > after
            and x[1].status not in FINISHED_STEP_STATUSES
            and x[1].status is not StepStatus.ACTIVE
        )[:NEXT_STEPS_SHOWN],
        last=messages[0] if messages else None,
        failures=tuple(
            _failure(a, now)
            for a in _unfixed_failures(actions, recorded_failures or {}, earlier)[:3]
        ),
        open_errors=tuple(open_errors)[:OPEN_ERRORS_SHOWN],
        more_open=tuple(open_errors)[OPEN_ERRORS_SHOWN : OPEN_ERRORS_SHOWN + OPEN_ERRORS_NAMED],
        more_open_count=max(open_count or 0, len(open_errors)) - OPEN_ERRORS_SHOWN
        if len(open_errors) > OPEN_ERRORS_SHOWN or (open_count or 0) > OPEN_ERRORS_SHOWN
        else 0,
        decisions=tuple(decisions)[:3],
        waits=tuple(
            a for a in actions if a.type is ActionType.WAIT and a.status is ActionStatus.STARTED
        )[:WAITS_SHOWN],
        suggestions=suggestions(plan, messages) if suggest else (),
        applied=applied_from(plan, messages)[-2:] if applied else (),
        record=record,
        stuck=tuple(stuck),
        open_waits=tuple(w for w in waits if w.status.value == "watching")[:3],
        more_waits=max(0, sum(1 for w in waits if w.status.value == "watching") - 3),
        ended_waits=tuple(
            w for w in waits if w.status.value != "watching" and (w.ended_at or "") > spoke
        )[:2],
    )


def _fitted(
    task: Task, facts: _Facts, now: datetime, counter: TokenCounter | None, budget: int
) -> tuple[str, int, _Shape]:
    """The brief's text in the first shape that fits `budget` (the tersest when none does;
    the first when nothing counts tokens), its tokens, and that shape."""
    text, tokens, shape = "", 0, SHAPES[-1]
    for shape in SHAPES:
        lines = [line for rank, line in _lines(task, facts, shape, now) if rank <= shape.keep]
        if counter is None:
            text, tokens = "\n".join(lines), 0
            break
        count = counter.count(lines, budget)
        text, tokens = "\n".join(lines), count.tokens
        if count.tokens <= budget:
            break
    return text, tokens, shape


def build_brief(
    task: Task,
    messages: Sequence[Message],
    actions: Sequence[Action],
    now: datetime,
    *,
    open_errors: Sequence[Entry] = (),
    open_count: int | None = None,
    decisions: Sequence[Entry] = (),
    recorded_failures: Mapping[str, str | None] | None = None,
    earlier: Sequence[Action] = (),
    counter: TokenCounter | None = None,
    budget: int = BRIEF_BUDGET,
    stuck: Sequence[Stuck] = (),
    suggest: bool = True,
    applied: bool = False,
    waits: Sequence[Wait] = (),
    record: TaskRecord | None = None,
) -> Brief:
    """Answer "where was I?" for `task`; messages, actions, entries and waits come newest
    first. Every open error is named: the newest quoted, the next ones by id and a few
    words, and `open_count` (all the task's open errors, when more than `open_errors`)
    counts the rest. `stuck` are the conditions that make it stuck now; `suggest` shows
    the steps its messages say are done; `applied` (progress is applied) names the message
    a completed step came from. Open waits are always named (smart `waits`, and the started
    wait actions among `actions`); a wait that ended since the agent's last message is news
    and is named too. `recorded_failures` are the failed actions an error entry stands for,
    each with None while that error is open, else when it was closed: they (and runs of the
    same command that failed before it closed) are shown as that entry, not again as recent
    failures; `earlier` are older actions read for that only."""
    facts = _facts_of(
        task,
        messages,
        actions,
        now,
        open_errors,
        open_count,
        decisions,
        recorded_failures,
        earlier,
        stuck,
        suggest,
        applied,
        waits,
        record,
    )
    found = facts.current
    text, tokens, shape = _fitted(task, facts, now, counter, budget)

    def ref(item: tuple[int, PlanItem]) -> StepRef:
        n, s = item
        return StepRef(n, clip(s.title, shape.title), s.status.value, s.started_at)

    return Brief(
        task_id=task.id,
        name=task.name,
        status=task.status.value,
        plan_version=task.plan_version,
        completed=tuple(ref(x) for x in facts.completed),
        failed=tuple(ref(x) for x in facts.failed),
        current=ref(found) if found else None,
        next=tuple(ref(x) for x in facts.upcoming),
        last_update=facts.last.content if facts.last else None,
        last_update_at=facts.last.created_at if facts.last else None,
        recent_failures=tuple(_failure_line(f, 160) for f in facts.failures),
        open_errors=tuple(f"{e.id}: {e.summary}" for e in (*facts.open_errors, *facts.more_open)),
        decisions=tuple(e.summary for e in facts.decisions),
        waits=tuple(w.label for w in facts.open_waits) + tuple(a.summary for a in facts.waits),
        suggestions=facts.suggestions,
        text=text,
        tokens=tokens,
        stuck=facts.stuck,
        phase=record.phase.value if record is not None else None,
    )
