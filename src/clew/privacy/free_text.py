"""Which fields of each journal event are free text: what redaction may change. Pure.

Every event type names its free-text fields here, chosen by what they are: what an agent
said or a program printed (a message, a summary, a command and its output, a turn, a tool's
arguments, JSON an agent handed clew). Everything else is structure and is never touched:
ids, statuses, kinds, exit codes, counts, durations, timestamps, hashes and fingerprints,
paths (a task's workspace, an action's cwd, a file changed), names of tools and models, a
session's key, a wait's target and criteria (what it runs or watches: changing them would
change what it does), a guardrail's pattern. `tests/test_redaction.py` fails when an event
type has no entry, so a new event decides its fields when it is made.

A path is dot-separated keys; `[]` is each item of a list, `*` each value of an object, a
number the item at that place; `{}` at the end marks JSON an agent handed clew, whose every
string is free text except under keys that name structure (`redaction.structure_key`).
"""

from __future__ import annotations

TEXT_FIELDS: dict[str, tuple[str, ...]] = {
    "task.created": ("task.name", "task.goal", "task.metadata{}", "plan[].title"),
    "task.updated": (
        "changes.name",
        "changes.goal",
        "changes.next_objective",
        "changes.summary",
        "changes.metadata{}",
    ),
    "task.status_changed": ("reason",),
    "task.archived": ("reason",),
    "task.stuck_alerted": (
        "conditions[].command",
        "conditions[].evidence",
        "conditions[].reason",
        "conditions[].suggestion",
    ),
    "task.files_changed": (),  # paths and what happened to them
    "task.record_set": (
        "changes.answer",
        "changes.outcome",
        "changes.error_reason",
        "changes.entities.*[]",
    ),
    "plan.revised": ("reason", "plan[].title", "old_plan[].title", "renamed.*"),
    "step.updated": ("changes.title", "changes.summary", "changes.active_issue", "said"),
    "step.record_set": ("changes.outcome", "changes.artifacts[]"),
    "action.recorded": (
        "action.summary",
        "action.command",
        "action.stdout",
        "action.stderr",
        "action.stdout_errors",
        "action.stderr_errors",
        "action.input{}",
        "action.output{}",
    ),
    "action.updated": (
        "changes.summary",
        "changes.stdout",
        "changes.stderr",
        "changes.stdout_errors",
        "changes.stderr_errors",
        "changes.output{}",
    ),
    "action.logged": ("log.content",),
    "message.added": ("message.content",),
    "entry.added": (
        "entry.summary",
        "entry.detail",
        "entry.resolution",
        "entry.tags[]",
        "fix.description",
    ),
    "entry.resolved": ("resolution", "fix.description"),
    "fix.recorded": ("fix.description",),
    "entry.kept_open": (),  # ids and a flag
    "entry.evidence_added": (),  # ids: the command is the action's
    "trace.decision_recorded": (
        "decision.action",
        "decision.error",
        "decision.context{}",
        "decision.artifacts{}",
    ),
    "trace.validation_recorded": (
        "validation.feedback",
        "validation.requirements{}",
        "validation.violations{}",
    ),
    "pattern.added": (
        "pattern.name",
        "pattern.description",
        "pattern.example",
        "pattern.context{}",
    ),
    "pattern.observed": (),
    "pattern.deprecated": ("reason",),
    "guardrail.added": (
        "guardrail.text",
        "guardrail.valid_examples[]",
        "guardrail.invalid_examples[]",
    ),
    "guardrail.changed": (),
    "job.queued": (),
    "job.claimed": (),
    "job.done": ("result.note",),
    "job.failed": ("error",),
    "model.called": ("call.error",),
    "model.output_rejected": ("raw", "reason"),
    "summary.recorded": ("summary.text",),
    "session.started": ("session.system_prompt", "session.title"),
    "session.updated": ("changes.system_prompt", "changes.title"),
    "turn.appended": (
        "turn.message{}",
        "turn.text",
        "turn.tool_calls[].2",
        "turn.state.focus.text",
        "turn.state.decisions[].text",
        "turn.state.open_errors[].error",
        "turn.state.open_errors[].key",
        "turn.state.errors_resolved[].error",
        "turn.state.errors_resolved[].fix",
        "turn.state.calls.*.command",
    ),
    "turns.hidden": (),
    "wait.added": ("wait.description",),
    "wait.checked": ("observation",),
    "wait.resolved": ("observation", "evidence"),
    "wait.timed_out": ("observation", "evidence"),
    "wait.failed": ("observation", "error"),
    "wait.cancelled": ("reason",),
    "maintenance.ran": ("actions[].detail",),
    "journal.forgotten": (),  # who, ids, field paths, spans, digests, a pattern's seal
}

Segment = str | int


def steps(path: str) -> tuple[tuple[Segment, ...], bool]:
    """A field path as its segments, and whether it ends in JSON (`{}`)."""
    json = path.endswith("{}")
    parts: list[Segment] = []
    for part in (path[:-2] if json else path).split("."):
        name = part.removesuffix("[]")
        if name:
            parts.append(int(name) if name.isdigit() else name)
        if part.endswith("[]"):
            parts.append("[]")
    return tuple(parts), json


FIELDS: dict[str, tuple[tuple[str, tuple[Segment, ...], bool], ...]] = {
    kind: tuple((path.removesuffix("{}"), *steps(path)) for path in paths)
    for kind, paths in TEXT_FIELDS.items()
}
