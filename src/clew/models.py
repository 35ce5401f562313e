"""Value types: statuses, kinds and the immutable records the facade returns.

Records are typed NamedTuples built from store rows; they never hold a
connection, so they can cross threads, be compared and be rendered freely.
Every record carries the `space` (namespace) it belongs to. (NamedTuple, not
dataclasses: creating a dozen slotted dataclasses at import costs the CLI tens
of milliseconds, and hooks need it to start fast. For the same reason this module
does not use `from __future__ import annotations`: NamedTuple compiles every field's
annotation when it is a string, a third of this module's import time.)
"""

import base64
from enum import StrEnum
from typing import Any, NamedTuple

__all__ = [
    "Action",
    "ActionLog",
    "ActionStatus",
    "ActionType",
    "AddStep",
    "Attempt",
    "Difference",
    "Enforcement",
    "Entry",
    "EntryFilter",
    "EntryStatus",
    "EntryType",
    "Event",
    "Evidence",
    "FileChanges",
    "Fix",
    "Guardrail",
    "Job",
    "JobStatus",
    "Message",
    "MessageRole",
    "MessageType",
    "ModelCall",
    "MoveStep",
    "Output",
    "Pattern",
    "Phase",
    "PlanItem",
    "PlanOp",
    "PlanSource",
    "Priority",
    "RecordHit",
    "Redaction",
    "RemoveStep",
    "RenameStep",
    "RepeatedFailure",
    "RunningSummary",
    "SearchHit",
    "Session",
    "SourceKind",
    "StepRecord",
    "StepStatus",
    "Task",
    "TaskRecord",
    "TaskStatus",
    "TraceDecision",
    "TraceValidation",
    "Turn",
    "VerifyReport",
    "to_jsonable",
]

# Command output is kept verbatim: text when it is valid UTF-8, the raw bytes otherwise.
Output = str | bytes


class TaskStatus(StrEnum):
    ACTIVE = "active"
    PAUSED = "paused"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"


# Which status a task may move to from each status. Cancelled is final; a
# completed or failed task can be reopened, because agents do finish too early.
TASK_TRANSITIONS: dict[TaskStatus, frozenset[TaskStatus]] = {
    TaskStatus.ACTIVE: frozenset(
        {TaskStatus.PAUSED, TaskStatus.COMPLETED, TaskStatus.FAILED, TaskStatus.CANCELLED}
    ),
    TaskStatus.PAUSED: frozenset({TaskStatus.ACTIVE, TaskStatus.FAILED, TaskStatus.CANCELLED}),
    TaskStatus.COMPLETED: frozenset({TaskStatus.ACTIVE}),
    TaskStatus.FAILED: frozenset({TaskStatus.ACTIVE, TaskStatus.CANCELLED}),
    TaskStatus.CANCELLED: frozenset(),
}

# A task in one of these statuses accepts no step, plan or action changes until reopened.
CLOSED_TASK_STATUSES = frozenset({TaskStatus.COMPLETED, TaskStatus.FAILED, TaskStatus.CANCELLED})


class StepStatus(StrEnum):
    PENDING = "pending"
    ACTIVE = "active"
    COMPLETED = "completed"
    FAILED = "failed"
    SKIPPED = "skipped"


# Statuses that end a step: entering one stamps completed_at and the duration.
FINISHED_STEP_STATUSES = frozenset({StepStatus.COMPLETED, StepStatus.FAILED, StepStatus.SKIPPED})


class ActionType(StrEnum):
    CLI = "cli"
    GUI = "gui"
    WAIT = "wait"
    VISION = "vision"
    REASONING = "reasoning"
    TOOL = "tool"  # a tool call of the episodic trace
    OTHER = "other"


class ActionStatus(StrEnum):
    STARTED = "started"
    COMPLETED = "completed"
    FAILED = "failed"
    TIMEOUT = "timeout"


class MessageRole(StrEnum):
    AGENT = "agent"
    SYSTEM = "system"
    USER = "user"


class MessageType(StrEnum):
    TEXT = "text"
    LIFECYCLE = "lifecycle"
    PROGRESS = "progress"
    WAIT = "wait"
    STUCK = "stuck"
    PLAN = "plan"


class PlanItem(NamedTuple):
    """One step of a task's plan; `ordinal` is its 1-based position (None once removed)."""

    id: str
    space: str
    task_id: str
    ordinal: int | None
    title: str
    status: StepStatus
    started_at: str | None
    completed_at: str | None
    duration_seconds: float | None
    summary: str | None
    active_issue: str | None
    depends_on: tuple[str, ...]
    removed: bool
    created_at: str
    updated_at: str


class Task(NamedTuple):
    """A tracked task with its current plan (removed steps are kept but not listed here)."""

    id: str
    space: str
    name: str
    goal: str | None
    workspace: str | None
    status: TaskStatus
    archived: bool
    metadata: dict[str, Any]
    plan_version: int
    last_replanned_at: str | None
    created_at: str
    updated_at: str
    completed_at: str | None
    next_objective: str | None
    summary: str | None  # a summary of progress, set by the agent or a utility model
    plan: tuple[PlanItem, ...] = ()

    def step(self, number: int) -> PlanItem:
        """Return the step at 1-based position `number` of the current plan."""
        return self.plan[number - 1]


class Priority(StrEnum):
    LOW = "low"
    NORMAL = "normal"
    HIGH = "high"
    CRITICAL = "critical"


class PlanSource(StrEnum):
    """Who made a task's plan."""

    AGENT = "agent"
    USER = "user"
    MODEL = "model"
    TEMPLATE = "template"


class Phase(StrEnum):
    """Where a task is in its life (the phases), derived from its status and plan:
    never set on its own, so there is one state machine, the status (see record.phase)."""

    RECEIVED = "received"  # no plan yet, nothing done
    PLANNED = "planned"  # a plan, no step started and no action recorded
    EXECUTING = "executing"  # a step started or an action recorded
    SYNTHESIZING = "synthesizing"  # every step completed or skipped, the task still open
    PAUSED = "paused"
    COMPLETED = "completed"
    FAILED_PLANNING = "failed_planning"
    FAILED_EXECUTION = "failed_execution"
    FAILED_SYNTHESIS = "failed_synthesis"
    CANCELLED = "cancelled"


class StepRecord(NamedTuple):
    """What a step's record adds to it: who did it, how it turned out, what it made."""

    step_id: str
    agent: str | None
    outcome: str | None
    artifacts: tuple[str, ...]
    updated_at: str


class TaskRecord(NamedTuple):
    """The complete record of a task beyond its plan: the answer and
    outcome, the error summary, identified entities, confidence, phase timestamps, the plan's
    source, domain, priority and estimate, and each step's record (by step id)."""

    task_id: str
    phase: Phase
    answer: str | None
    outcome: str | None
    error_reason: str | None  # given, else derived from the records once the task failed
    error_step_id: str | None
    confidence: float | None
    domain: str | None
    priority: Priority | None
    estimate_seconds: float | None
    plan_source: PlanSource | None
    created_at: str
    plan_generated_at: str | None
    execution_started_at: str | None
    synthesis_started_at: str | None
    completed_at: str | None
    entities: dict[str, tuple[str, ...]]  # kind -> values: given ones, then extracted ones
    steps: dict[str, StepRecord]


class Action(NamedTuple):
    """Something the agent did; commands carry their exit code and verbatim output."""

    id: str
    space: str
    task_id: str
    plan_item_id: str | None
    type: ActionType
    summary: str
    status: ActionStatus
    input: dict[str, Any] | None
    output: dict[str, Any] | None
    command: str | None
    cwd: str | None
    exit_code: int | None
    duration_seconds: float | None
    stdout: Output | None
    stderr: Output | None
    created_at: str
    updated_at: str
    tool: str | None = None  # the tool's name, for a tool call
    decision_id: str | None = None  # the trace decision that made the call
    started_at: str | None = None
    ended_at: str | None = None
    cpu_seconds: float | None = None
    memory_mb: float | None = None
    fingerprint: str | None = None  # of the error, for a failed command


class Attempt(NamedTuple):
    """The few fields of an action that stuck detection reads (an `Action` has them too):
    a task's newest actions read as these build a third of what whole actions cost."""

    id: str
    summary: str
    status: ActionStatus
    command: str | None
    fingerprint: str | None
    created_at: str
    updated_at: str


class ActionLog(NamedTuple):
    id: str
    space: str
    task_id: str
    action_id: str
    type: str
    content: str
    created_at: str


class Message(NamedTuple):
    id: str
    space: str
    task_id: str
    role: MessageRole
    type: MessageType
    content: str
    created_at: str


class EntryType(StrEnum):
    """What an archive entry records (the seven types, plus constraints and questions)."""

    DECISION = "decision"
    ERROR = "error"
    TOOL_RESULT = "tool_result"
    USER_INSTRUCTION = "user_instruction"
    DISCOVERY = "discovery"  # a finding
    ARTIFACT = "artifact"
    CONTEXT = "context"
    CONSTRAINT = "constraint"
    QUESTION = "question"


class EntryStatus(StrEnum):
    ACTIVE = "active"
    SUPERSEDED = "superseded"
    RESOLVED = "resolved"  # an error that was fixed, a question that was answered


# Parts of a command line that differ between runs of one command and say nothing about
# what it does (`[errors] volatile` in config.toml; linking.same_command): by default a
# temporary path that tempfile or mktemp made.
VOLATILE_PARTS = (r"/tmp/tmp[A-Za-z0-9_.-]+",)


class Evidence(NamedTuple):
    """A later run of an open error's command that passed: shown beside the error so the
    agent, who alone may resolve it, knows."""

    action_id: str
    at: str
    command: str | None = None  # read from the action (forgetting it forgets this too)

    def text(self) -> str:
        """How the state and the brief say it."""
        what = f"`{' '.join(self.command.split())}`" if self.command else "its command"
        return f"a later run of {what} passed at {self.at[:16]}Z (action {self.action_id})"


class Entry(NamedTuple):
    """One fact in the archive: a decision, an error, a finding... stored once, in full."""

    id: str
    space: str
    task_id: str | None
    subtask_id: str | None  # the plan item it belongs to
    type: EntryType
    summary: str
    detail: str | None
    tags: tuple[str, ...]
    relevance_to: tuple[str, ...]  # plan item ids this matters for
    status: EntryStatus
    resolution: str | None
    resolved_at: str | None
    supersedes: str | None
    fingerprint: str | None  # of an error: see fingerprint.py
    created_at: str
    updated_at: str
    sources: tuple[tuple[str, str], ...] = ()  # (kind, id): action, message, turn, entry
    # Who recorded it: "agent" (add_entry and every door over it), "extracted" (clew's own
    # copy of a failed command, by the extraction rules), "model" (the utility model's
    # extraction); None for an entry recorded before clew said (migration 25).
    origin: str | None = None
    keep_open: bool = False  # the agent said to leave this error open until it resolves it
    # Of an error clew may not resolve: later runs of its command that passed, oldest first.
    evidence: tuple[Evidence, ...] = ()

    @property
    def resolvable_by_clew(self) -> bool:
        """Whether clew may resolve this error itself: only its own extracted copy of a
        failed command, never one the agent recorded or said to keep open."""
        return self.origin == "extracted" and not self.keep_open


class EntryFilter(NamedTuple):
    """Exact filters for entry queries and search; tags must all be present."""

    task_id: str | None = None
    types: tuple[EntryType, ...] = ()
    statuses: tuple[EntryStatus, ...] = ()
    subtask_id: str | None = None
    tags: tuple[str, ...] = ()
    since: str | None = None  # created at or after (a store timestamp)
    until: str | None = None  # created before


class SearchHit(NamedTuple):
    """An entry found by full-text search, with its bm25 score (lower is better) and a
    snippet with the matched words in [brackets]."""

    entry: Entry
    score: float
    snippet: str


# What search over everything finds: archive entries, task messages, commands with their
# output, conversation turns, and the decisions of the episodic trace.
RECORD_KINDS = ("entry", "message", "action", "turn", "decision")
# What search also finds beyond those indexes (outline.py): a task's name, its goal and its
# final answer, a plan step's title with its issue, and semantic memory's patterns and
# guardrails.
OUTLINE_KINDS = ("task", "goal", "step", "answer", "pattern", "guardrail")
SEARCH_KINDS = RECORD_KINDS + OUTLINE_KINDS


class Explain(NamedTuple):
    """Why a hit ranked where it did: its place and score in each ranking, the boosts it
    got, and the fused score."""

    keyword_rank: int | None  # 1-based among the keyword matches; None if no word matched
    keyword: float  # its bm25 score against the best keyword match's (0-1)
    coverage: float  # the share of the question's words it holds (0-1)
    dense_rank: int | None  # 1-based among the nearest by meaning; None without vectors
    cosine: float | None  # its similarity to the question, by meaning
    boosts: tuple[str, ...]  # why, and how much: "identifier as written +0.30", "said by Ann x1.20"
    score: float  # the fused score the hits are ordered by


class RecordHit(NamedTuple):
    """Anything recorded that a search found: an archive entry, a task message, a command
    (with its output), a conversation turn or a decision of the trace; `open` is the clew
    command that shows it."""

    kind: str  # entry, message, action, turn or decision; task, goal, step, answer,
    # pattern or guardrail (OUTLINE_KINDS)
    id: str
    task_id: str | None
    session_id: str | None  # for a turn
    turn: int | None  # for a turn: its number in the session
    created_at: str
    # entry type, message role, action status (and exit code), turn role, "decision" and
    # its outcome; ", superseded", ", resolved", ", deprecated" or ", disabled" at its end
    # for a record of history (search ranks it below the current ones)
    label: str
    title: str  # entry summary, command, a decision's action, or the text's first line
    snippet: str  # where it matched, matched words in [brackets]
    # Relevance, higher is better (search_all's fused score); a store's own reads give
    # the raw bm25 here, lower is better, before the ranking replaces it.
    score: float
    # where it matched: summary, content, command, stdout, stderr; a decision's action or
    # outcome (how it turned out: its outcome, error, state, agent, context, artifacts)
    field: str
    open: str = ""  # the clew command that shows it in full
    confident: bool = False  # the search believes this hit answers the question
    explain: Explain | None = None  # why it ranked here (asked for with explain=True)
    step_id: str | None = None  # the plan step an entry, a command or a decision belongs to
    # For a superseded entry: the current entry that replaced it (search ranks that first).
    superseded_by: str | None = None


class RepeatedFailure(NamedTuple):
    """A command that failed more than once."""

    command: str
    failures: int
    last_exit_code: int | None
    last_failed_at: str
    last_action_id: str


class SourceKind(StrEnum):
    """What an entry can be linked to as its source."""

    ACTION = "action"
    MESSAGE = "message"
    TURN = "turn"
    ENTRY = "entry"


class Fix(NamedTuple):
    """A fix tried for an error fingerprint, and whether it worked."""

    id: str
    space: str
    fingerprint: str
    entry_id: str | None
    task_id: str | None
    description: str
    worked: bool
    created_at: str


class TraceDecision(NamedTuple):
    """One decision of the episodic trace: what the agent did, with what, and how
    it turned out."""

    id: str
    space: str
    task_id: str
    plan_item_id: str | None
    trace_id: str
    parent_id: str | None
    state: str | None
    agent: str | None
    context: dict[str, Any] | None
    prompt_tokens: int | None
    completion_tokens: int | None
    model: str | None
    temperature: float | None
    action: str
    artifacts: dict[str, Any] | None
    validation_status: str | None
    outcome: str
    error: str | None
    created_at: str


class TraceValidation(NamedTuple):
    id: str
    space: str
    task_id: str
    decision_id: str
    validator: str
    passed: bool
    requirements: list[Any] | None
    violations: list[Any] | None
    feedback: str | None
    created_at: str


class Pattern(NamedTuple):
    """A validated way of doing something, with the evidence for it (semantic memory)."""

    id: str
    space: str
    domain: str
    name: str
    kind: str | None
    description: str | None
    example: str | None
    context: dict[str, Any] | None
    success_count: int
    failure_count: int
    last_validated: str | None
    deprecated: bool
    version: int
    created_at: str
    updated_at: str


class Enforcement(StrEnum):
    BLOCK = "block"
    WARN = "warn"
    LOG = "log"


class Guardrail(NamedTuple):
    """A rule the agent must follow; `pattern` (a regex) makes it checkable on commands."""

    id: str
    space: str
    rule_type: str
    text: str
    enforcement: Enforcement
    pattern: str | None
    valid_examples: tuple[str, ...]
    invalid_examples: tuple[str, ...]
    enabled: bool
    created_at: str
    updated_at: str


class JobStatus(StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


class Job(NamedTuple):
    """Work queued with a change and done after it: an extraction or a running summary."""

    id: str
    space: str
    kind: str  # "extract" or "summarize"
    task_id: str
    step_id: str | None
    status: JobStatus
    attempts: int
    lease_until: str | None
    result: dict[str, Any] | None
    error: str | None
    created_at: str
    updated_at: str


class ModelCall(NamedTuple):
    """One call to a utility model, with what it cost."""

    id: str
    space: str
    task_id: str | None
    purpose: str  # extract, summarize, ask
    role: str  # small or large
    provider: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    seconds: float | None
    ok: bool
    error: str | None
    created_at: str


class RunningSummary(NamedTuple):
    id: str
    space: str
    task_id: str
    text: str
    message_count: int
    source: str  # "model" or "rules"
    model: str | None
    created_at: str


class Session(NamedTuple):
    """A conversation: its turns are archived verbatim, its state extracted as it goes."""

    id: str
    space: str
    key: str | None  # the caller's own name for it (an Agents SDK session_id)
    workspace: str | None
    model: str | None
    system_prompt: str | None
    task_id: str | None
    title: str | None
    started_at: str
    last_active_at: str
    total_tokens: int
    turn_count: int
    state: dict[str, Any]
    active: bool


class Turn(NamedTuple):
    """One message of a conversation, exactly as it was sent (`message`), with what clew
    derives from it: its role, its text, its tool calls, the call a result answers."""

    id: str
    space: str
    session_id: str
    number: int
    role: str
    text: str | None
    message: dict[str, Any]
    tool_calls: tuple[tuple[str | None, str, str], ...]  # (id, name, arguments)
    tool_call_id: str | None
    tool_name: str | None
    call_turn: int | None  # for a tool result, the turn that made the call
    token_count: int  # an estimate (4 characters a token); context assembly counts exactly
    hidden: bool  # hidden from the session's view (popped or cleared), kept in the archive
    created_at: str


class FileChanges(NamedTuple):
    """What a task changed in its workspace: counts, the newest paths and when."""

    created: int
    modified: int
    last_change: str | None
    newest: tuple[str, ...] = ()


class Tombstone(NamedTuple):
    """What an event whose content was forgotten keeps beside it (`events.forgotten`): the
    digest of its data before it was first forgotten (what its hash covers), who forgot it,
    when, and the `journal.forgotten` event that did."""

    digest: str
    by: str
    at: str
    event: str


class Event(NamedTuple):
    """One journal entry: a mutation, in the order it was committed (`seq`)."""

    seq: int
    id: str
    space: str
    task_id: str | None
    correlation_id: str
    type: str
    data: dict[str, Any]
    created_at: str
    # The event's link in its space's hash chain (chain.py).
    hash: str | None = None
    # Set, with `data` empty, when the stored data is not valid JSON: the text as stored.
    unreadable: str | None = None
    # Set when the event's content was forgotten (its data holds `[forgotten]` there).
    forgotten: Tombstone | None = None


# Replanning is a sequence of these operations, applied in order as one new plan version.
# `step` names a step by 1-based position in the plan as it stands when the op applies,
# or by step id (prefix); `position` is the 1-based place to put a step.


class AddStep(NamedTuple):
    title: str
    position: int | None = None  # None appends
    depends_on: tuple[int | str, ...] = ()


class RemoveStep(NamedTuple):
    step: int | str


class MoveStep(NamedTuple):
    step: int | str
    position: int


class RenameStep(NamedTuple):
    step: int | str
    title: str


PlanOp = AddStep | RemoveStep | MoveStep | RenameStep


def to_jsonable(value: Any) -> Any:
    """Return `value` (records, enums, tuples, bytes) as plain JSON-ready data."""
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return {name: to_jsonable(getattr(value, name)) for name in value._fields}
    if isinstance(value, StrEnum):
        return value.value
    if isinstance(value, bytes):
        # Non-UTF-8 output is shown as base64 so JSON stays valid and nothing is altered.
        return {"base64": base64.b64encode(value).decode("ascii")}
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    return value


class Difference(NamedTuple):
    """One way a projection table disagrees with the journal replayed from scratch."""

    table: str
    row_id: str
    column: str  # "*" when the whole row is missing on one side
    stored: Any
    rebuilt: Any
    # What is wrong, in words, for findings in the journal itself (events that cannot be
    # read or replayed, a broken hash chain); empty for a row that differs.
    problem: str = ""


class ChainHead(NamedTuple):
    """The end of one space's journal: how many events it holds, and the last one's id and
    hash (None for a space with no events)."""

    events: int
    last: str | None
    head: str | None


class Checkpoint(NamedTuple):
    """A sealed record that one space's journal held `events` events, the last of them
    `last` with hash `head`, at time `at` (checkpointfile.py: the line and its seal)."""

    store: str  # which store: a keyed digest of its location
    space: str
    events: int
    head: str | None  # the hash of event number `events` (None when there are none)
    last: str | None  # that event's id
    chain: int  # the version of the hash chain the head was made under (chain.py)
    at: str
    seal: str


class CheckpointStatus(StrEnum):
    """What a checkpoint line says of the store now."""

    HOLDS = "holds"  # the space has at least `events` events, and that one has `head`
    BEHIND = "behind"  # fewer events than `events`: the journal was rolled back or cut
    DIVERGES = "diverges"  # another hash there: the journal was rewritten up to there
    OLDER_CHAIN = "older chain"  # another hash, but made under an older chain version
    NOT_CHECKABLE = "not checkable"  # not a checkpoint line, or its seal does not verify


class CheckpointCheck(NamedTuple):
    """One checkpoint line checked against the store."""

    line: int  # its line number in the file (1 for a single line given alone)
    status: CheckpointStatus
    checkpoint: Checkpoint | None  # None for a line that is not a readable checkpoint
    events: int | None  # how many events the store's space holds now (None: not read)
    found: str | None  # the hash the store has at the checkpoint's position, if any
    detail: str  # what it means, in words


class CheckpointReport(NamedTuple):
    """Checkpoint lines checked against a store: each line of its spaces, and how many
    lines were of other stores or (without all_spaces) of other spaces, so not checked."""

    source: str
    checks: tuple[CheckpointCheck, ...]
    other_stores: int = 0
    other_spaces: int = 0

    @property
    def ok(self) -> bool:
        """Whether no checkpoint shows the store behind or diverged."""
        failed = (CheckpointStatus.BEHIND, CheckpointStatus.DIVERGES)
        return not any(c.status in failed for c in self.checks)


# What a forgotten value is replaced by, in an event's data and the rows it made.
PLACEHOLDER = "[forgotten]"


class Field(NamedTuple):
    """What a forget replaces in one event's data: the value at `path` (keys of objects,
    positions in arrays), whole (`spans` None) or the character spans of its text."""

    path: tuple[str | int, ...]
    spans: tuple[tuple[int, int], ...] | None = None


class ForgetItem(NamedTuple):
    """One event a forget rewrites (or would): its seq, id and type, the record it belongs
    to (`kind id`, or None), the fields it replaces (dotted paths) and how many matches or
    whole values that is. Never the content."""

    seq: int
    id: str
    type: str
    record: str | None
    fields: tuple[str, ...]
    replaced: int


class ForgetReport(NamedTuple):
    """What `forget` did (or, `dry_run`, would do): who, the events rewritten, the
    `journal.forgotten` events that say so, the events where a pattern still matches in
    fields no forget rewrites (`remaining`, their fields being where), and what the store's
    files may still hold (`note`)."""

    by: str
    dry_run: bool
    items: tuple[ForgetItem, ...]
    forgets: tuple[str, ...] = ()
    remaining: tuple[ForgetItem, ...] = ()
    note: str | None = None


class Forgotten(NamedTuple):
    """An event whose content was forgotten, as `verify` reports it: which, by whom, when."""

    seq: int
    id: str
    space: str
    type: str
    by: str
    at: str
    event: str  # the journal.forgotten event that forgot it


class VerifyReport(NamedTuple):
    """What `verify` found: row counts per table and every difference (capped), for the
    spaces it checked, with the newest hash of each one's journal chain (its head), and the
    events whose content was forgotten (the first MAX of them; `forgotten_count` all); and,
    when asked, what the checkpoints of a file say of it."""

    events: int
    rows: dict[str, int]
    differences: tuple[Difference, ...]
    truncated: bool = False
    heads: dict[str, str] | None = None
    checkpoints: CheckpointReport | None = None
    forgotten: tuple[Forgotten, ...] = ()
    forgotten_count: int = 0

    @property
    def ok(self) -> bool:
        return not self.differences and (self.checkpoints is None or self.checkpoints.ok)


# Every event type a journal may hold; a store's projection handles each (a test checks
# that the two agree). A journal file naming any other type is refused on import.
EVENT_TYPES = frozenset(
    {"task.created", "task.updated", "task.status_changed", "task.archived", "task.stuck_alerted"}
    | {"task.files_changed", "task.record_set", "plan.revised", "step.updated", "step.record_set"}
    | {"action.recorded", "action.updated", "action.logged", "message.added"}
    | {"entry.added", "entry.resolved", "fix.recorded", "entry.kept_open", "entry.evidence_added"}
    | {"trace.decision_recorded", "trace.validation_recorded"}
    | {"pattern.added", "pattern.observed", "pattern.deprecated"}
    | {"guardrail.added", "guardrail.changed"}
    | {"job.queued", "job.claimed", "job.done", "job.failed", "model.called"}
    | {"model.output_rejected", "summary.recorded"}
    | {"session.started", "session.updated", "turn.appended", "turns.hidden"}
    | {"wait.added", "wait.checked", "wait.resolved", "wait.timed_out", "wait.failed"}
    | {"wait.cancelled", "maintenance.ran", "journal.forgotten"}
)


class Redaction(NamedTuple):
    """Where redaction took secrets out of what an agent handed clew: one event's field,
    their kind and how many (never what they were)."""

    event_id: str
    seq: int
    event_type: str
    task_id: str | None
    session_id: str | None
    field: str
    kind: str
    times: int  # how many of that kind in that field
    created_at: str


class MoveReport(NamedTuple):
    """What moving a journal did (`import_events`, `push`): the events read, those added
    to the target and those it already held, the target's space and its newest hash."""

    events: int
    added: int
    skipped: int
    space: str
    head: str | None


class ImportRecord(NamedTuple):
    """The store's own record of one import or push batch (never journaled, never moved):
    the events it added (seq `first_seq`..`last_seq` of the space), who brought them (a
    server key's prefix, else the host's user: the process's on SQLite, the database role on
    PostgreSQL), through which door and when."""

    first_seq: int
    last_seq: int
    events: int
    door: str  # python, cli, api, push
    key_prefix: str | None
    user_name: str | None
    created_at: str


# -- the vector index (vectors.py, store/portable/vectors.py) ---------------------------------

# The kinds of record the vector index embeds, in the order an update goes through them.
VECTOR_KINDS: tuple[str, ...] = ("entry", "message", "action", "turn", "decision")


class PendingText(NamedTuple):
    """A record whose vector for a model is missing or may be stale: its text as embedded,
    where it belongs, and the `content_hash` of the vector it has (None if it has none)."""

    kind: str
    ref_id: str
    text: str
    source_at: str  # the record's updated_at (created_at if its text never changes)
    content_hash: str | None
    task_id: str | None
    step_id: str | None
    session_id: str | None
    created_at: str


class NewVector(NamedTuple):
    """A vector to store for a record (float16 bytes, little-endian, `dim` values)."""

    kind: str
    ref_id: str
    content_hash: str
    source_at: str
    task_id: str | None
    step_id: str | None
    session_id: str | None
    created_at: str
    dim: int
    vector: bytes


class StoredVector(NamedTuple):
    """A stored vector as the in-process index loads it, `seq` its place in write order."""

    seq: int
    kind: str
    ref_id: str
    task_id: str | None
    step_id: str | None
    session_id: str | None
    created_at: str
    dim: int
    vector: bytes


class IndexStatus(NamedTuple):
    """How far the vector index is: records with a current vector of `model` of all of
    them (`model` None when no embedding model is installed: nothing can be embedded)."""

    model: str | None
    embedded: int
    total: int
    kinds: dict[str, tuple[int, int]] | None = None  # kind -> (embedded, total)

    @property
    def pending(self) -> int:
        return self.total - self.embedded

    def lag(self) -> str:
        """Say how far the index is, e.g. "embedded 9,812 of 9,820"."""
        return f"embedded {self.embedded:,} of {self.total:,}"


class RoleGrant(NamedTuple):
    """What `grant_role` or `revoke_role` does to a PostgreSQL role: the statements, in
    order, and whether they were run (`applied`) or only made."""

    role: str
    kind: str | None  # server, member or reader; None when everything was taken away
    statements: tuple[str, ...]
    applied: bool


class DatabaseRole(NamedTuple):
    """A PostgreSQL role that can reach a store's tables, and the kind its rights match:
    owner, superuser or bypassrls (row-level security holds neither), server, member,
    reader, or other (then `differences` says how it differs from the `nearest` kind:
    '+RIGHT table' held beyond it, '-RIGHT table' lacking)."""

    role: str
    kind: str
    login: bool
    nearest: str | None = None
    differences: tuple[str, ...] = ()
