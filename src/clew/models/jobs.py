"""The utility work's values: jobs queued with a change and done after it, the calls to
a utility model with what they cost, and the running summaries they make.

Like every module of clew.models, this one does without `from __future__ import
annotations`: NamedTuple compiles each field's annotation that is a string, and the hook
path imports every record (see the package's docstring).
"""

from enum import StrEnum
from typing import Any, NamedTuple


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
