"""A task's history in words: one line per journal event, oldest first, and who each came
from. Pure.

The journal already is the task's history, in commit order and complete; this only says
each event the way a person reads it, with steps named by their number in the plan.

Who made an event comes from the store's own records, never from the event alone. A server
runs each request's writes under a correlation id naming its key (`<door>:<prefix>:<id>`),
so an event it wrote says which key made it. An imported or pushed event keeps the
correlation id it had where it came from (its hash covers it), which says nothing about this
store: the store's record of the import (`ImportRecord`) says who brought it here, and the
correlation id is shown as what it is, a claim.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from clew.core.text import clip
from clew.models import Event, ImportRecord

TEXT = 120
# The doors a write comes through: a server's correlation ids name the first three, the store's
# record of an import any of them.
DOORS = {
    "web": "dashboard",
    "api": "API",
    "mcp": "MCP",
    "cli": "command line",
    "python": "Python",
    "push": "push",
}
_SERVED = ("web", "api", "mcp")


class HistoryItem(NamedTuple):
    seq: int
    at: str
    type: str
    text: str
    by: str = ""  # who made it, as the store knows (`author`)


def actor_of(correlation_id: str) -> str:
    """Who a journal event's correlation id says made it ("" when it does not say)."""
    kind, _, rest = correlation_id.partition(":")
    if kind not in _SERVED or ":" not in rest:
        return ""
    who = rest.split(":", 1)[0]
    return f"{'local user' if who == 'local' else f'key {who}'} ({DOORS[kind]})"


def importer(record: ImportRecord) -> str:
    """Who brought the events of an import here, as the store recorded it."""
    if record.key_prefix:
        who = f"key {record.key_prefix}"
    else:
        who = f"user {record.user_name}" if record.user_name else "the local user"
    at = record.created_at[:16].replace("T", " ")
    verb = "pushed" if record.door == "push" else "imported"
    door = "" if record.door == "push" else f" ({DOORS.get(record.door, record.door)})"
    return f"{verb} by {who}{door} at {at}"


def author(event: Event, imports: Sequence[ImportRecord]) -> str:
    """Who made `event`: the key a server wrote it for; for an imported event, who imported
    it (from `imports`, the store's records) and, marked as claimed, what its correlation id
    says."""
    claimed = actor_of(event.correlation_id)
    record = next((r for r in imports if r.first_seq <= event.seq <= r.last_seq), None)
    if record is None:
        return claimed
    return importer(record) + (f", claims {claimed}" if claimed else "")


def _step(steps: Mapping[str, int], step_id: str | None) -> str:
    if step_id is None:
        return "the task"
    number = steps.get(step_id)
    return f"step {number}" if number else f"removed step {step_id}"


def _action(a: Mapping[str, Any], steps: Mapping[str, int]) -> str:
    if a.get("command"):
        what = f"ran `{clip(a['command'], TEXT)}`"
    elif a.get("tool"):
        what = f"called {a['tool']}"
    else:
        what = f"{a['type']}: {clip(a['summary'], TEXT)}"
    code = f", exit {a['exit_code']}" if a.get("exit_code") is not None else ""
    where = f" ({_step(steps, a['plan_item_id'])})" if a.get("plan_item_id") else ""
    return f"{what}{where} -> {a['status']}{code}"


def describe(event: Event, steps: Mapping[str, int]) -> str:
    """One journal event as a line of history."""
    d, kind = event.data, event.type
    if kind == "task.created":
        return f"created {clip(d['task']['name'], TEXT)!r} with {len(d['plan'])} steps"
    if kind == "task.updated":
        by = d.get("by") or {}
        who = f" (by the model {by['model']})" if by.get("model") else ""
        return "changed " + ", ".join(sorted(d["changes"])) + who
    if kind == "task.stuck_alerted":
        reasons = ", ".join(c["reason"].replace("_", " ") for c in d["conditions"])
        return f"stuck alert: {reasons}"
    if kind == "task.status_changed":
        why = f" ({d['reason']})" if d.get("reason") else ""
        return f"status {d['from']} -> {d['to']}{why}"
    if kind == "task.archived":
        return "archived" if d["archived"] else "unarchived"
    if kind == "plan.revised":
        parts = [f"plan v{d['version']}"]
        parts += [f"+{len(d['added'])}"] if d["added"] else []
        parts += [f"-{len(d['removed'])}"] if d["removed"] else []
        parts += [f"{len(d['renamed'])} renamed"] if d["renamed"] else []
        why = f": {clip(d['reason'], TEXT)}" if d.get("reason") else ""
        return " ".join(parts) + why
    if kind == "step.updated":
        changes = d["changes"]
        said = ", ".join(
            f"{key} {clip(str(value), TEXT)}" if key != "status" else str(value)
            for key, value in changes.items()
        )
        why = f" (inferred from message {d['message_id']})" if d.get("inferred") else ""
        return f"{_step(steps, d['step_id'])}: {said}{why}"
    if kind == "action.recorded":
        return _action(d["action"], steps)
    if kind == "action.updated":
        status = d["changes"].get("status", "updated")
        code = d["changes"].get("exit_code")
        return f"action {d['action_id']} -> {status}" + (
            f", exit {code}" if code is not None else ""
        )
    if kind == "action.logged":
        return f"log on action {d['log']['action_id']}: {clip(d['log']['content'], TEXT)}"
    if kind == "message.added":
        m = d["message"]
        return f"{m['role']}/{m['type']}: {clip(m['content'], TEXT)}"
    if kind == "entry.added":
        e = d["entry"]
        where = f" ({_step(steps, e['subtask_id'])})" if e.get("subtask_id") else ""
        return f"{e['type']}{where}: {clip(e['summary'], TEXT)}"
    if kind == "entry.resolved":
        return f"resolved {d['entry_id']}: {clip(d['resolution'], TEXT)}"
    if kind == "fix.recorded":
        fix = d["fix"]
        return f"fix {'worked' if fix['worked'] else 'failed'}: {clip(fix['description'], TEXT)}"
    if kind == "task.files_changed":
        return (
            "files "
            + ", ".join(f"{f['change']} {f['path']}" for f in d["files"][:5])
            + (f" and {len(d['files']) - 5} more" if len(d["files"]) > 5 else "")
        )
    if kind == "trace.decision_recorded":
        x = d["decision"]
        who = f" by {x['agent']}" if x.get("agent") else ""
        return f"decided{who}: {clip(x['action'], TEXT)} -> {x['outcome']}"
    if kind == "trace.validation_recorded":
        v = d["validation"]
        verdict = "passed" if v["passed"] else "failed"
        return f"validation {v['validator']} of {v['decision_id']}: {verdict}"
    return kind


def _said(event: Event, steps: Mapping[str, int]) -> str:
    if event.unreadable is not None:
        return f"UNREADABLE: the stored data is not valid JSON: {clip(event.unreadable, TEXT)}"
    try:
        return describe(event, steps)
    except (KeyError, TypeError, AttributeError, ValueError):
        # Valid JSON of a shape this clew does not know: say so rather than fail the history.
        return f"{event.type} (data of an unknown shape; see `clew journal --json`)"


def history(
    events: Sequence[Event], steps: Mapping[str, int], imports: Sequence[ImportRecord] = ()
) -> list[HistoryItem]:
    """The task's events as lines of history, in commit order, each with who made it
    (`imports`: the store's records of the imports among them)."""
    return [
        HistoryItem(e.seq, e.created_at, e.type, _said(e, steps), author(e, imports))
        for e in events
    ]
