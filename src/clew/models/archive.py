"""The archive's values (layer 2): entry types and statuses, entries with their
evidence and filters, fixes, repeated failures, the episodic trace's decisions and
validations, and semantic memory's patterns and guardrails.

Like every module of clew.models, this one does without `from __future__ import
annotations`: NamedTuple compiles each field's annotation that is a string, and the hook
path imports every record (see the package's docstring).
"""

from enum import StrEnum
from typing import Any, NamedTuple


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
