"""The complete task record, as pure functions: validating what an
agent sets, deriving the phase and its timestamps, the error summary of a failed task.

One state machine: a task's status (models.TASK_TRANSITIONS). The phases are a view
of it, derived from the status, the plan and the phase timestamps:

    status     plan / timestamps                              phase
    active     no plan, nothing done                          received
    active     a plan, no step started, no action             planned
    active     a step started or an action recorded           executing
    active     every step completed or skipped                synthesizing
    paused     any                                            paused
    completed  any                                            completed
    failed     no plan was ever made                          failed_planning
    failed     steps all done (synthesis had started)         failed_synthesis
    failed     otherwise                                      failed_execution
    cancelled  any                                            cancelled

The timestamps are set by the facade in the same transaction as the write that moves the
task into a phase, and journaled with it (`task.record_set`): `plan_generated_at` when the
plan first has a step, `execution_started_at` when a step first leaves pending or an action
is first recorded, `synthesis_started_at` when every step is completed or skipped (cleared
if a step reopens or is added); `completed_at` is the task's own.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from clew.core import checks
from clew.errors import ValidationError
from clew.models import (
    Action,
    Entry,
    Phase,
    PlanItem,
    PlanSource,
    Priority,
    StepStatus,
    TaskStatus,
)

MAX_ESTIMATE = 366 * 86400.0
MAX_FIELD_CHARS = 200  # domain, step agent, outcome
MAX_ARTIFACTS = 50
MAX_ENTITIES = 100
_UNITS = {
    "s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1,
    "m": 60, "min": 60, "mins": 60, "minute": 60, "minutes": 60,
    "h": 3600, "hr": 3600, "hrs": 3600, "hour": 3600, "hours": 3600,
    "d": 86400, "day": 86400, "days": 86400,
    "w": 604800, "week": 604800, "weeks": 604800,
}  # fmt: skip
_PART = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([a-z]+)\s*")


def estimate(value: object, field: str = "estimate") -> float | None:
    """Return a duration in seconds from a number of seconds or text like '90s', '30m',
    '1h30m', '2 days'; None for None."""
    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip().lower()
        pos, total, parts = 0, 0.0, 0
        while pos < len(text):
            found = _PART.match(text, pos)
            if found is None or found.group(2) not in _UNITS:
                raise ValidationError(
                    f"{field} {value!r} is not a duration: use seconds, or text like 90s, 30m,"
                    " 1h30m, 2d"
                )
            total += float(found.group(1)) * _UNITS[found.group(2)]
            pos, parts = found.end(), parts + 1
        if not parts:
            raise ValidationError(f"{field} is empty; give a duration like 30m")
        seconds = total
    elif isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValidationError(
            f"{field} must be a duration (seconds or text like 30m), not {value!r}"
        )
    else:
        seconds = float(value)
    if not 0 < seconds <= MAX_ESTIMATE:
        raise ValidationError(f"{field} must be more than 0 and at most 366 days, not {value!r}")
    return seconds


def format_duration(seconds: float) -> str:
    """Say a duration briefly: '45s', '30m', '1h30m', '2d'."""
    whole = round(seconds)
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        if whole >= size:
            parts.append(f"{whole // size}{unit}")
            whole %= size
    return "".join(parts[:2]) or "0s"


def confidence(value: object) -> float | None:
    """Return a confidence score in [0, 1], or None."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValidationError(f"confidence must be a number from 0 to 1, not {value!r}")
    if not 0 <= value <= 1:
        raise ValidationError(f"confidence must be from 0 to 1, not {value!r}")
    return float(value)


def short(value: object, field: str) -> str | None:
    """A one-line field (domain, agent, outcome) of at most 200 characters, or None."""
    found = checks.optional_text(value, field)
    if found is None:
        return None
    found = " ".join(found.split())
    if len(found) > MAX_FIELD_CHARS:
        raise ValidationError(
            f"{field} is {len(found)} characters long; the limit is {MAX_FIELD_CHARS}"
        )
    return found


def artifacts(values: object) -> list[str] | None:
    """Artifacts a step made (paths, URLs, ids), in order, without repeats; None for None."""
    if values is None:
        return None
    if isinstance(values, str):
        values = [values]
    found = list(dict.fromkeys(v.strip() for v in checks.strings(values, "artifacts")))
    if len(found) > MAX_ARTIFACTS:
        raise ValidationError(f"a step takes at most {MAX_ARTIFACTS} artifacts, not {len(found)}")
    for item in found:
        if len(item) > checks.MAX_NAME_CHARS:
            raise ValidationError(f"an artifact is {len(item)} characters long; the limit is 1000")
    return found


def entities(value: object) -> dict[str, list[str]] | None:
    """Entities given by an agent or a model: {kind: [values]}; None for None."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise ValidationError("entities must be an object of kind -> list of names")
    found: dict[str, list[str]] = {}
    total = 0
    for kind, names in value.items():
        label = re.sub(r"[^a-z0-9]+", "_", (short(kind, "entity kind") or "").lower()).strip("_")
        if not re.fullmatch(r"[a-z][a-z0-9_]{0,39}", label):
            raise ValidationError(
                f"entity kind {kind!r} is not a word like files, hosts or services"
            )
        items = [short(n, f"{label} entity") for n in checks.strings(names, f"{label} entities")]
        kept = list(dict.fromkeys(n for n in items if n is not None))
        total += len(kept)
        if kept:
            found[label.lower()] = kept
    if total > MAX_ENTITIES:
        raise ValidationError(f"at most {MAX_ENTITIES} entities may be given, not {total}")
    return found


def task_changes(
    *,
    answer: object = None,
    outcome: object = None,
    error: object = None,
    confidence_score: object = None,
    domain: object = None,
    priority: object = None,
    estimate_value: object = None,
    plan_source: object = None,
    entity_map: object = None,
) -> dict[str, Any]:
    """Validate what is set on a task's record; return the event's changes (given ones only)."""
    changes: dict[str, Any] = {}
    if answer is not None:
        changes["answer"] = checks.text(answer, "answer", max_chars=checks.MAX_TEXT_CHARS)
    if outcome is not None:
        changes["outcome"] = short(outcome, "outcome")
    if error is not None:
        changes["error_reason"] = checks.text(error, "error summary", max_chars=10_000).strip()
    if confidence_score is not None:
        changes["confidence"] = confidence(confidence_score)
    if domain is not None:
        changes["domain"] = short(domain, "domain")
    if priority is not None:
        changes["priority"] = checks.choice(priority, Priority, "priority").value
    if estimate_value is not None:
        changes["estimate_seconds"] = estimate(estimate_value)
    if plan_source is not None:
        changes["plan_source"] = checks.choice(plan_source, PlanSource, "plan source").value
    if entity_map is not None:
        changes["entities"] = entities(entity_map)
    return {k: v for k, v in changes.items() if v is not None}


def phase(status: TaskStatus, row: Mapping[str, Any]) -> Phase:
    """The task's phase: its status, read through its phase timestamps (see the table)."""
    if status is TaskStatus.COMPLETED:
        return Phase.COMPLETED
    if status is TaskStatus.CANCELLED:
        return Phase.CANCELLED
    if status is TaskStatus.PAUSED:
        return Phase.PAUSED
    if status is TaskStatus.FAILED:
        if row.get("plan_generated_at") is None:
            return Phase.FAILED_PLANNING
        if row.get("synthesis_started_at") is not None:
            return Phase.FAILED_SYNTHESIS
        return Phase.FAILED_EXECUTION
    if row.get("synthesis_started_at") is not None:
        return Phase.SYNTHESIZING
    if row.get("execution_started_at") is not None:
        return Phase.EXECUTING
    if row.get("plan_generated_at") is not None:
        return Phase.PLANNED
    return Phase.RECEIVED


def error_summary(
    plan: Sequence[PlanItem], open_errors: Iterable[Entry], failures: Iterable[Action]
) -> tuple[str | None, str | None]:
    """A failed task's error summary from its records when none was given: the newest open
    error (else the newest failed command) as the reason, and the step that failed."""
    failed_step = next((s.id for s in plan if s.status is StepStatus.FAILED), None)
    for entry in open_errors:
        return entry.summary, entry.subtask_id or failed_step
    for action in failures:
        what = action.command or action.summary
        code = f" exited {action.exit_code}" if action.exit_code is not None else " failed"
        tail = ""
        for stream in (action.stderr, action.stdout):
            if isinstance(stream, str) and stream.strip():
                tail = ": " + stream.strip().splitlines()[-1][:200]
                break
        return f"{what[:200]}{code}{tail}", action.plan_item_id or failed_step
    return None, failed_step
