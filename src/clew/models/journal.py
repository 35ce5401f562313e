"""The journal's values: events and their tombstones, `EVENT_TYPES`, what `verify`
finds, checkpoints and their checks, forgetting, redactions, and the reports of moving
a journal and the store's records of imports.

Like every module of clew.models, this one does without `from __future__ import
annotations`: NamedTuple compiles each field's annotation that is a string, and the hook
path imports every record (see the package's docstring).
"""

from enum import StrEnum
from typing import Any, NamedTuple


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
