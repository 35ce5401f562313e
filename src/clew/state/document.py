"""Layer 1: the task state an agent always keeps in its prompt, as YAML under a hard budget.

Pure: a `Snapshot` (the task, the newest entries of each kind, counts, file changes)
and a budget in; a `State` out. The same inputs always give the same text.

What is shown follows the pruning rules: decisions newest 10, errors newest 5
with unresolved first, a plan of more than 15 steps shown as counts + current step +
next 3 pending, summaries cut to 100 characters. If the render is still over budget,
it degrades in this fixed order, one level at a time, until it fits (`LEVELS`):

1. completed and skipped steps lose their summaries
2. texts cut to 120 characters; findings 5 -> 3, resolved errors dropped
3. a plan of any length is shown as counts + current + next 3
4. decisions 5, errors 3, findings 1, constraints 5, questions 3; texts 80
5. decisions 3, errors 2, findings 0, questions 1, constraints 3; no step summaries;
   workspace changes and the progress summary go
6. decisions 1, errors 1, constraints 1, next steps 1; the window of steps goes; hidden
   entries are counted on one line with one recall command
7. goal and titles cut to 60 characters, no decisions, errors or constraints
8. the core: id, goal (12 characters), status, step count, current and next step (titles
   12 characters; 9 when they are of four-byte characters), and one hidden line whose
   command recalls everything

A stuck task (stuck.py) shows why under `stuck`: each condition's reason, evidence and
suggestion; from level 5 without the suggestion, from level 7 its reason alone.

Open means shown as open: every open error comes before any resolved one, and the open
errors a level leaves out are counted on a hidden line of their own and named by id
(OPEN_NAMED; CORE_OPEN_NAMED at the core level), never folded into a count of resolved ones.

Goal, status, current step and next step are in every level, and so is every other
active step (`also_active`; at the core level by number, three and a count of the rest).
A decision that replaced another shows it while texts are wide: "X (was: Y)".
Whatever a level leaves out is hidden, never lost: the `hidden` section counts it and
names the CLI command and the tool call that recall it. Budgets below `MIN_BUDGET` are
refused, because level 8 always fits in that many tokens, whatever the content.
"""

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, NamedTuple

from clew.core.checks import MAX_BUDGET as MAX_BUDGET
from clew.core.checks import MIN_BUDGET as MIN_BUDGET
from clew.core.lifecycle import Waiting
from clew.core.text import clip
from clew.core.tokens import TokenCounter
from clew.models import (
    Entry,
    EntryStatus,
    EntryType,
    FileChanges,
    PlanItem,
    StepStatus,
    Task,
    TaskRecord,
)
from clew.state.yamltext import dump_lines
from clew.tasks.record import format_duration
from clew.tasks.stuck import Stuck

DEFAULT_BUDGET = 1500
# The core level (goal, current, next and other active steps, stuck reasons, the newest
# wait, one hidden line) always fits MIN_BUDGET UTF-8 bytes, so that many tokens; the bounds
# live in checks.py, which refuses a budget outside them.
SUMMARY_CHARS = 100  # subtask summaries at most 100 characters
WINDOW_AFTER = 15  # more than 15 subtasks are shown as a window
NEXT_PENDING = 3
ENTITIES_SHOWN = 8  # identified entities in the state, at most
CORE_ACTIVE = 3  # other active steps the core level names by number
# Open errors a level leaves out are named by id under hidden, this many at most (the rest
# counted): open means shown as open, never folded into a count of resolved ones.
OPEN_NAMED = 20
CORE_OPEN_NAMED = 3  # at the core level, which always fits MIN_BUDGET bytes

# How many of each kind the store hands the renderer (level 0 shows no more than this).
SHOWN = {
    EntryType.DECISION: 10,
    EntryType.ERROR: 5,
    EntryType.DISCOVERY: 5,
    EntryType.CONSTRAINT: 10,
    EntryType.QUESTION: 5,
}
STATE_TYPES = tuple(SHOWN)


class Level(NamedTuple):
    """How much of each section a render shows."""

    decisions: int = 10
    errors: int = 5
    resolved_errors: bool = True
    findings: int = 5
    constraints: int = 10
    questions: int = 5
    text_chars: int = 200
    title_chars: int = 120
    goal_chars: int = 400
    step_summaries: str = "all"  # all | open | none
    window: str = "auto"  # auto (past 15 steps) | always | none
    next_steps: int = NEXT_PENDING
    files: bool = True
    progress_summary: bool = True
    next_objective: bool = True
    compact_hidden: bool = False  # one hidden line for all entries, not one per type
    core_only: bool = False  # task, plan size, current and next step, one hidden line
    stuck: str = "full"  # full (evidence and suggestion) | evidence | reason


LEVELS: tuple[Level, ...] = (
    Level(),
    Level(step_summaries="open"),
    Level(step_summaries="open", text_chars=120, findings=3, resolved_errors=False),
    Level(
        step_summaries="open", text_chars=120, findings=3, resolved_errors=False, window="always"
    ),
    Level(
        decisions=5, errors=3, resolved_errors=False, findings=1, constraints=5, questions=3,
        text_chars=80, step_summaries="open", window="always",
    ),
    Level(
        decisions=3, errors=2, resolved_errors=False, findings=0, constraints=3, questions=1,
        text_chars=80, step_summaries="none", window="always", files=False,
        progress_summary=False, stuck="evidence",
    ),
    Level(
        decisions=1, errors=1, resolved_errors=False, findings=0, constraints=1, questions=1,
        text_chars=60, step_summaries="none", window="none", next_steps=1, files=False,
        progress_summary=False, compact_hidden=True, stuck="evidence",
    ),
    Level(
        decisions=0, errors=0, resolved_errors=False, findings=0, constraints=0, questions=1,
        text_chars=60, title_chars=60, goal_chars=60, step_summaries="none", window="none",
        next_steps=1, files=False, progress_summary=False, compact_hidden=True, stuck="reason",
    ),
    Level(
        decisions=0, errors=0, resolved_errors=False, findings=0, constraints=0, questions=0,
        text_chars=12, title_chars=12, goal_chars=12, step_summaries="none", window="none",
        next_steps=1, files=False, progress_summary=False, next_objective=False,
        compact_hidden=True, core_only=True, stuck="reason",
    ),
)  # fmt: skip


class Snapshot(NamedTuple):
    """What the renderer needs, read from the store in one transaction."""

    task: Task
    entries: Mapping[tuple[EntryType, EntryStatus], Sequence[Entry]]  # newest first
    counts: Mapping[tuple[EntryType, EntryStatus], int]
    files: FileChanges
    stuck: Sequence[Stuck] = ()  # why the task is stuck now, if it is (stuck.py)
    waits: Sequence[Waiting] = ()  # open waits, newest first: always shown (see `waiting`)
    record: TaskRecord | None = None  # the complete task record (taskrecord.py)
    # The summaries of the entries the shown ones superseded, by id: "X (was: Y)".
    previous: Mapping[str, str] = MappingProxyType({})
    # The task's open errors, newest first, up to OPEN_NAMED: those a level leaves out are
    # named under hidden (empty: the open errors among `entries` are all there is to name).
    open_errors: Sequence[Entry] = ()


class Hidden(NamedTuple):
    """Something the render left out, and how to get it back."""

    what: str  # e.g. "990 older decisions"
    items: int
    cli: str
    tool: str


class State(NamedTuple):
    """A rendered task state: the YAML text and how it was fitted to the budget."""

    task_id: str
    text: str
    tokens: int
    exact: bool  # tokens counted by the tokenizer, not an upper bound
    budget: int
    tokenizer: str
    level: int
    hidden: tuple[Hidden, ...]


def _stamp(at: str | None) -> str | None:
    """Store timestamps to the minute: enough for a prompt, and far fewer tokens."""
    return None if at is None else f"{at[:16]}Z"


def _entries_hidden(task_id: str, what: str, kind: EntryType, count: int) -> Hidden:
    return Hidden(
        f"{count} {what}",
        count,
        f"clew entries --task {task_id} --type {kind.value}",
        f"memory_query(task_id={task_id}, type={kind.value})",
    )


def _open(hidden: Hidden) -> bool:
    """Whether a hidden line names open errors (kept apart from every other count)."""
    return hidden.tool.endswith("type=error, status=active)")


def _steps_hidden(task_id: str, count: int) -> Hidden:
    return Hidden(
        f"{count} steps",
        count,
        f"clew task show {task_id} --all",
        f"task_state(task_id={task_id}, full=true)",
    )


class _Render:
    """One render at one level: builds the mapping and records what it hides."""

    def __init__(self, snap: Snapshot, level: Level) -> None:
        self.snap, self.level = snap, level
        self.task = snap.task
        self.hidden: list[Hidden] = []
        self.numbers = {s.id: n for n, s in enumerate(self.task.plan, 1)}

    def text(self, value: str) -> str:
        return clip(value, self.level.text_chars)

    def entries(self, kind: EntryType, status: EntryStatus, shown: int) -> list[Entry]:
        return list(self.snap.entries.get((kind, status), ()))[:shown]

    def hide(self, what: str, kind: EntryType, total: int, shown: int) -> None:
        if total > shown:
            self.hidden.append(_entries_hidden(self.task.id, what, kind, total - shown))

    def build(self) -> dict[str, Any]:
        task, level = self.task, self.level
        head: dict[str, Any] = {"id": task.id}
        if not level.core_only:
            head["name"] = clip(task.name, level.title_chars)
        head["goal"] = (
            clip(task.goal or "", level.goal_chars)
            or clip(task.name, level.goal_chars)
            or "(no goal given)"
        )
        head["status"] = task.status.value
        if task.workspace and not level.core_only:
            head["workspace"] = clip(task.workspace, level.title_chars)
        data: dict[str, Any] = {"task": head}
        self.record_head(head, data)
        data["plan"] = self.plan_counts()
        if task.summary and level.progress_summary:
            data["progress_summary"] = clip(task.summary, 2 * level.text_chars)
        current, upcoming = self.current_and_next()
        data["current_step"] = current
        others = self.also_active(current)
        if others:
            data["also_active"] = others
        data["next_steps"] = upcoming
        if self.snap.stuck:
            data["stuck"] = [self.stuck(c) for c in self.snap.stuck]
        waiting = self.waiting()
        if waiting:
            data["waiting_on"] = waiting
        steps = self.steps()
        if steps:
            data["subtasks"] = steps
        self.add_entries(data)
        if task.next_objective and level.next_objective:
            data["next_objective"] = self.text(task.next_objective)
        self.record_tail(data)
        files = self.snap.files
        if files.created or files.modified:
            if level.files:
                data["workspace_changes"] = {
                    "files_created": files.created,
                    "files_modified": files.modified,
                    "last_change": _stamp(files.last_change),
                }
            else:
                self.hidden.append(
                    Hidden(
                        f"{files.created + files.modified} changed files",
                        files.created + files.modified,
                        f"clew task files {task.id}",
                        f"task_state(task_id={task.id}, full=true)",
                    )
                )
        if level.core_only:
            self.hide_everything()
        elif level.compact_hidden:
            self.hide_entries()
        if self.hidden:
            data["hidden"] = [{"what": h.what, "cli": h.cli, "tool": h.tool} for h in self.hidden]
        return data

    def waiting(self) -> list[dict[str, Any]]:
        """Open waits: what the task is doing while nothing else moves, so every level names
        them (the core level the newest one, the others counted under hidden)."""
        level, waits = self.level, list(self.snap.waits)
        shown = 1 if level.core_only else 3 if level.compact_hidden else 5
        rows = []
        for w in waits[:shown]:
            row: dict[str, Any] = {"id": w.id, "on": clip(w.what, level.text_chars)}
            if not level.compact_hidden:
                row["since"] = _stamp(w.since)
                if w.seen:
                    row["last_check"] = clip(w.seen, level.text_chars)
            rows.append(row)
        if len(waits) > shown:
            self.hidden.append(
                Hidden(
                    f"{len(waits) - shown} more open waits",
                    len(waits) - shown,
                    f"clew wait list --task {self.task.id}",
                    f"smart_wait(action=list, task_id={self.task.id})",
                )
            )
        return rows

    def hide_everything(self) -> None:
        """At the core level, one line counts all that is hidden and one command recalls it."""
        if self.hidden:
            kinds = {
                "steps": 0,
                "entries": 0,
                "changed files": 0,
                "open waits": 0,
                "record fields": 0,
            }
            errors = [h for h in self.hidden if _open(h)]
            self.hidden = [h for h in self.hidden if not _open(h)]
            for h in self.hidden:
                kind = "steps" if h.what.endswith(" steps") else "changed files"
                if h.tool.startswith("smart_wait"):
                    kind = "open waits"
                if h.cli == f"clew task show {self.task.id}":
                    kind = "record fields"
                kinds["entries" if h.tool.startswith("memory_query") else kind] += h.items
            rest = [
                Hidden(
                    ", ".join(f"{n} {kind}" for kind, n in kinds.items() if n),
                    sum(h.items for h in self.hidden),
                    f"clew task show {self.task.id} --all",
                    f"task_state(task_id={self.task.id}, full=true)",
                )
            ]
            self.hidden = errors + (rest if self.hidden else [])

    def hide_entries(self) -> None:
        """At compact levels, fold the hidden entries of every type into one line (the open
        errors left out keep their own line)."""
        entries = [h for h in self.hidden if h.tool.startswith("memory_query") and not _open(h)]
        if len(entries) < 2:
            return
        what = ", ".join(h.what for h in entries)
        folded = Hidden(
            what,
            sum(h.items for h in entries),
            f"clew entries --task {self.task.id}",
            f"memory_query(task_id={self.task.id})",
        )
        self.hidden = [h for h in self.hidden if h not in entries] + [folded]

    def plan_counts(self) -> dict[str, Any]:
        plan = self.task.plan
        if self.level.core_only:
            return {"steps": len(plan)}
        counts: dict[str, Any] = {
            "version": self.task.plan_version,
            "last_replanned": _stamp(self.task.last_replanned_at),
            "steps": len(plan),
        }
        for status in (StepStatus.COMPLETED, StepStatus.FAILED, StepStatus.SKIPPED):
            n = sum(1 for s in plan if s.status is status)
            if n:
                counts[status.value] = n
        return counts

    def step_ref(self, number: int, step: PlanItem) -> dict[str, Any]:
        ref: dict[str, Any] = {"n": number, "title": clip(step.title, self.level.title_chars)}
        if step.status is not StepStatus.PENDING:
            ref["status"] = step.status.value
        if step.status is StepStatus.ACTIVE and step.started_at and not self.level.core_only:
            ref["started"] = _stamp(step.started_at)
        return ref

    def current_and_next(self) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
        plan = self.task.plan
        current = next(
            (
                n
                for want in (StepStatus.ACTIVE, StepStatus.PENDING)
                for n, s in enumerate(plan, 1)
                if s.status is want
            ),
            None,
        )
        after = current or 0
        # Refs for the few shown only: a plan may have thousands of pending steps.
        wanted = [
            (n, s) for n, s in enumerate(plan, 1) if n > after and s.status is StepStatus.PENDING
        ][: self.level.next_steps]
        upcoming = [self.step_ref(n, s) for n, s in wanted]
        if not current:
            return None, upcoming
        return {
            **self.step_ref(current, plan[current - 1]),
            "status": plan[current - 1].status.value,
        }, upcoming

    def also_active(self, current: dict[str, Any] | None) -> list[Any]:
        """Every active step besides the current one (several may run at once): at the
        core level their numbers, at most `CORE_ACTIVE` of them and a count of the rest."""
        if current is None:
            return []
        others = [
            (n, s)
            for n, s in enumerate(self.task.plan, 1)
            if s.status is StepStatus.ACTIVE and n != current["n"]
        ]
        if not self.level.core_only:
            return [{"n": n, "title": clip(s.title, self.level.title_chars)} for n, s in others]
        shown: list[Any] = [n for n, _ in others[:CORE_ACTIVE]]
        if len(others) > CORE_ACTIVE:
            shown.append(f"{len(others) - CORE_ACTIVE} more")
        return shown

    def steps(self) -> list[dict[str, Any]]:
        plan, level = self.task.plan, self.level
        if not plan:
            return []
        windowed = level.window == "always" or (level.window == "auto" and len(plan) > WINDOW_AFTER)
        if level.window == "none":
            chosen: list[int] = []
        elif not windowed:
            chosen = list(range(1, len(plan) + 1))
        else:
            # completed count + current + next 3 pending; failed steps too,
            # since what broke must stay in view.
            current, upcoming = self.current_and_next()
            keep = {s["n"] for s in upcoming[:NEXT_PENDING]}
            if current:
                keep.add(current["n"])
            keep |= {
                n
                for n, s in enumerate(plan, 1)
                if s.status in (StepStatus.FAILED, StepStatus.ACTIVE)
            }
            chosen = sorted(keep)
        if len(chosen) < len(plan):
            self.hidden.append(_steps_hidden(self.task.id, len(plan) - len(chosen)))
        rows = []
        for n in chosen:
            step = plan[n - 1]
            row: dict[str, Any] = {"n": n, "title": clip(step.title, level.title_chars)}
            row["status"] = step.status.value
            open_step = step.status in (StepStatus.ACTIVE, StepStatus.PENDING, StepStatus.FAILED)
            if step.summary and (
                level.step_summaries == "all" or (level.step_summaries == "open" and open_step)
            ):
                row["summary"] = clip(step.summary, SUMMARY_CHARS)
            if step.active_issue:
                row["active_issue"] = clip(step.active_issue, SUMMARY_CHARS)
            self.step_record(row, step, open_step)
            deps = [self.numbers[d] for d in step.depends_on if d in self.numbers]
            if deps:
                row["depends_on"] = deps
            rows.append(row)
        return rows

    # -- the task record ------------------------------------------------------------

    def record_hidden(self, what: str, items: int) -> None:
        self.hidden.append(
            Hidden(
                what,
                items,
                f"clew task show {self.task.id}",
                f"task_state(task_id={self.task.id}, full=true)",
            )
        )

    def record_head(self, head: dict[str, Any], data: dict[str, Any]) -> None:
        """Phase, domain, priority, estimate and confidence under `task`; the phase
        timestamps after it, while workspace changes are shown."""
        rec, level = self.snap.record, self.level
        if rec is None or level.core_only:
            return
        head["phase"] = rec.phase.value
        if level.compact_hidden:
            return
        if rec.domain:
            head["domain"] = clip(rec.domain, level.title_chars)
        if rec.priority:
            head["priority"] = rec.priority.value
        if rec.estimate_seconds:
            head["estimate"] = format_duration(rec.estimate_seconds)
        if rec.confidence is not None:
            head["confidence"] = round(rec.confidence, 2)
        if rec.plan_source:
            head["plan_source"] = rec.plan_source.value
        if level.files:
            times = {
                "created": _stamp(rec.created_at),
                "plan_generated": _stamp(rec.plan_generated_at),
                "execution_started": _stamp(rec.execution_started_at),
                "synthesis_started": _stamp(rec.synthesis_started_at),
                "completed": _stamp(rec.completed_at),
            }
            data["timestamps"] = {k: v for k, v in times.items() if v is not None}

    def record_tail(self, data: dict[str, Any]) -> None:
        """Outcome, error summary, answer and identified entities, as the level allows."""
        rec, level = self.snap.record, self.level
        if rec is None:
            return
        hidden = 0
        if level.core_only:
            hidden += sum(1 for v in (rec.outcome, rec.error_reason, rec.answer) if v)
            hidden += sum(len(v) for v in rec.entities.values())
            if hidden:
                self.record_hidden(f"{hidden} record fields", hidden)
            return
        if rec.outcome:
            data["outcome"] = self.text(rec.outcome)
        if rec.error_reason or rec.error_step_id:
            summary: dict[str, Any] = {"reason": self.text(rec.error_reason or "(not given)")}
            step = self.numbers.get(rec.error_step_id or "")
            if step:
                summary["failed_step"] = step
            data["error_summary"] = summary
        if rec.answer:
            if level.compact_hidden:
                hidden += 1
            else:
                data["final_answer"] = clip(rec.answer, 2 * level.text_chars)
        # A few of each kind, the most used first, at most ENTITIES_SHOWN in all: they are
        # a reminder of what the task touches; `task show` lists them all.
        per_kind = (2 if level.findings >= 5 else 1) if level.files else 0
        room = (ENTITIES_SHOWN if level.findings >= 5 else ENTITIES_SHOWN // 2) if per_kind else 0
        shown: dict[str, list[str]] = {}
        for kind, values in rec.entities.items():
            taken = values[: min(per_kind, room)]
            if taken:
                shown[kind] = [clip(v, level.title_chars) for v in taken]
                room -= len(taken)
            hidden += len(values) - len(taken)
        if shown:
            data["identified_entities"] = shown
        if hidden:
            self.record_hidden(f"{hidden} record fields", hidden)

    def step_record(self, row: dict[str, Any], step: PlanItem, open_step: bool) -> None:
        """A step's agent, outcome and artifacts, shown with its summary's rule."""
        rec = self.snap.record
        found = rec.steps.get(step.id) if rec is not None else None
        wanted = self.level.step_summaries
        if found is None or not (wanted == "all" or (wanted == "open" and open_step)):
            return
        if found.agent:
            row["agent"] = clip(found.agent, 40)
        if found.outcome:
            row["outcome"] = clip(found.outcome, SUMMARY_CHARS)
        if found.artifacts:
            row["artifacts"] = [clip(a, SUMMARY_CHARS) for a in found.artifacts[:3]]
            if len(found.artifacts) > 3:
                row["more_artifacts"] = len(found.artifacts) - 3

    def add_entries(self, data: dict[str, Any]) -> None:
        level, counts = self.level, self.snap.counts
        active, resolved = EntryStatus.ACTIVE, EntryStatus.RESOLVED

        def total(kind: EntryType, status: EntryStatus = active) -> int:
            return counts.get((kind, status), 0)

        constraints = self.entries(EntryType.CONSTRAINT, active, level.constraints)
        if constraints:
            data["constraints"] = [self.text(e.summary) for e in constraints]
        self.hide(
            "more constraints", EntryType.CONSTRAINT, total(EntryType.CONSTRAINT), len(constraints)
        )

        decisions = self.entries(EntryType.DECISION, active, level.decisions)
        if decisions:
            data["decisions_log"] = [self.decision(e) for e in decisions]
        self.hide("older decisions", EntryType.DECISION, total(EntryType.DECISION), len(decisions))

        # errors newest 5, every open one before any resolved one; the open ones a level
        # leaves out are named apart from the resolved ones it leaves out (hide_open_errors).
        known_open = list(self.snap.open_errors) or list(
            self.snap.entries.get((EntryType.ERROR, active), ())
        )
        open_errors = known_open[: level.errors]
        room = level.errors - len(open_errors) if level.resolved_errors else 0
        fixed = self.entries(EntryType.ERROR, resolved, room)
        if open_errors or fixed:
            data["errors_encountered"] = [self.error(e) for e in open_errors + fixed]
        open_count = max(total(EntryType.ERROR), len(known_open))
        self.hide_open_errors(
            known_open[len(open_errors) :], open_count - len(open_errors), bool(open_errors)
        )
        self.hide("resolved errors", EntryType.ERROR, total(EntryType.ERROR, resolved), len(fixed))

        findings = self.entries(EntryType.DISCOVERY, active, level.findings)
        if findings:
            data["key_findings"] = [self.text(e.summary) for e in findings]
        self.hide("more findings", EntryType.DISCOVERY, total(EntryType.DISCOVERY), len(findings))

        questions = self.entries(EntryType.QUESTION, active, level.questions)
        if questions:
            data["pending_questions"] = [
                {"id": e.id, "question": self.text(e.summary)} for e in questions
            ]
        self.hide(
            "more open questions", EntryType.QUESTION, total(EntryType.QUESTION), len(questions)
        )

    def hide_open_errors(self, left_out: Sequence[Entry], hidden: int, more: bool) -> None:
        """The open errors a level leaves out: counted apart and named by id (OPEN_NAMED at
        most, the rest counted), never folded into a count of resolved ones."""
        if hidden <= 0:
            return
        named = [e.id for e in left_out[: CORE_OPEN_NAMED if self.level.core_only else OPEN_NAMED]]
        rest = hidden - len(named)
        ids = ", ".join(named) + (f" and {rest} more" if rest > 0 and named else "")
        what = f"{hidden} {'more ' if more else ''}open error{'s' if hidden > 1 else ''}"
        self.hidden.append(
            Hidden(
                f"{what}: {ids}" if ids else what,
                hidden,
                f"clew entries --task {self.task.id} --type error --status active",
                f"memory_query(task_id={self.task.id}, type=error, status=active)",
            )
        )

    def stuck(self, condition: Stuck) -> Any:
        """A stuck condition: its reason alone at the smallest levels, else with the
        evidence (and the suggestion while there is room)."""
        if self.level.stuck == "reason":
            return condition.reason
        row = {"reason": condition.reason, "evidence": self.text(condition.evidence)}
        if self.level.stuck == "full":
            row["suggestion"] = self.text(condition.suggestion)
        return row

    def decision(self, entry: Entry) -> str:
        """A decision, with what it replaced while there is room: "X (was: Y)"."""
        text = self.text(entry.summary)
        was = self.snap.previous.get(entry.supersedes or "")
        if was is None or self.level.text_chars < 120:
            return text
        from clew.archive.linking import same_decision  # lazily: only decisions that replaced one

        if same_decision(entry.summary, was):
            return text
        return f"{text} (was: {clip(was, self.level.text_chars // 2)})"

    def error(self, entry: Entry) -> dict[str, Any]:
        row: dict[str, Any] = {"id": entry.id}
        step = self.numbers.get(entry.subtask_id or "")
        if step:
            row["step"] = step
        row["error"] = self.text(entry.summary)
        row["resolution"] = self.text(entry.resolution) if entry.resolution else None
        if entry.status is EntryStatus.ACTIVE:
            if entry.evidence:
                # The newest passing run: the agent, who alone resolves it, judges.
                row["evidence"] = self.text(entry.evidence[-1].text())
            if entry.keep_open:
                row["kept_open"] = True
        return row


# The core's bound is worked out at three UTF-8 bytes a character (its texts cut to 12):
# texts of four-byte characters (most emoji, historic scripts) are cut to three quarters.
FOUR_BYTE_CORE = LEVELS[-1]._replace(text_chars=9, title_chars=9, goal_chars=9)


def render_lines(snap: Snapshot, level: int) -> tuple[list[str], tuple[Hidden, ...]]:
    """Render `snap` at degradation `level` (0 = the pruning rules only)."""
    render = _Render(snap, LEVELS[level])
    lines = dump_lines(render.build())
    if LEVELS[level].core_only and _utf8_bytes(lines) > MIN_BUDGET:
        render = _Render(snap, FOUR_BYTE_CORE)
        lines = dump_lines(render.build())
    return lines, tuple(render.hidden)


def _utf8_bytes(lines: list[str]) -> int:
    return sum(len(line.encode("utf-8", "surrogatepass")) + 1 for line in lines)


def render_state(snap: Snapshot, budget: int, counter: TokenCounter) -> State:
    """Render the task state at the first level that fits in `budget` tokens."""
    lines: list[str] = []
    hidden: tuple[Hidden, ...] = ()
    for number in range(len(LEVELS)):
        lines, hidden = render_lines(snap, number)
        count = counter.count(lines, budget)
        if count.tokens <= budget:
            break
    text = "\n".join(lines) + "\n"
    return State(
        snap.task.id, text, count.tokens, count.exact, budget, counter.name, number, hidden
    )
