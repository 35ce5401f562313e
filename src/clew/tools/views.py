"""Plain-text views of records for people (the CLI's human output). Pure functions."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from clew.archive.fingerprint import telling_line
from clew.core.clock import ago
from clew.core.text import clip, counted
from clew.models import (
    Action,
    ActionLog,
    Checkpoint,
    CheckpointCheck,
    CheckpointReport,
    CheckpointStatus,
    Entry,
    Event,
    Explain,
    FileChanges,
    ForgetReport,
    Guardrail,
    ImportRecord,
    Message,
    Output,
    Pattern,
    PlanItem,
    RecordHit,
    Redaction,
    RepeatedFailure,
    Session,
    StepRecord,
    Task,
    TaskRecord,
    VerifyReport,
)

if TYPE_CHECKING:
    from clew.archive.entries import ErrorHistory
    from clew.archive.trace import Trace
    from clew.conversations.context import Context

MARKERS = {"pending": "[ ]", "active": "[>]", "completed": "[x]", "failed": "[!]", "skipped": "[-]"}


def _seconds(value: float) -> str:
    if value < 60:
        return f"{value:.1f}s"
    minutes, seconds = divmod(int(value), 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    return f"{minutes // 60}h{minutes % 60:02d}m"


def step_line(number: int, step: PlanItem, now: datetime, steps_by_id: dict[str, int]) -> str:
    """One plan step: marker, number, title and its timing."""
    if step.status.value == "active" and step.started_at:
        timing = f"active, started {ago(step.started_at, now)}"
    elif step.duration_seconds is not None:
        timing = f"{step.status.value} in {_seconds(step.duration_seconds)}"
    else:
        timing = step.status.value
    line = f"  {MARKERS[step.status.value]} {number:>2}. {clip(step.title, 60):<44} {timing}"
    if step.depends_on:
        deps = ", ".join(str(steps_by_id.get(d, "?")) for d in step.depends_on)
        line += f"  (after {deps})"
    extra = [f"        summary: {clip(step.summary, 100)}"] if step.summary else []
    if step.active_issue:
        extra.append(f"        issue: {clip(step.active_issue, 100)}")
    return "\n".join([line, *extra])


def output_size(value: Output | None) -> str:
    """Describe an output's size: '12 lines', '3.2 MB', 'binary, 40 bytes'."""
    if value is None:
        return "none"
    if isinstance(value, bytes):
        return f"binary, {len(value):,} bytes"
    lines = value.count("\n") + (0 if value.endswith("\n") or not value else 1)
    return f"{lines:,} lines, {len(value.encode('utf-8')):,} bytes"


def action_line(action: Action, now: datetime, step_numbers: dict[str, int]) -> str:
    """One action in a listing."""
    what = f"`{clip(action.command, 60)}`" if action.command else clip(action.summary, 60)
    code = f" exit {action.exit_code}" if action.exit_code is not None else ""
    step = step_numbers.get(action.plan_item_id or "")
    where = f"  step {step}" if step else ""
    kind = "" if action.type.value == "cli" else f"{action.tool or action.type.value} "
    return (
        f"  {action.id}  {action.status.value:<9} {kind}{what}{code}{where}"
        f"  {ago(action.created_at, now)}"
    )


def message_line(message: Message, now: datetime) -> str:
    """One message in a listing."""
    return (
        f"  {ago(message.created_at, now):>8}  {message.role.value}/{message.type.value}:"
        f" {clip(message.content, 100)}"
    )


def task_line(task: Task, now: datetime) -> str:
    """One task in `task list`."""
    done = sum(1 for s in task.plan if s.status.value == "completed")
    archived = " (archived)" if task.archived else ""
    return (
        f"{task.id}  {task.status.value:<9} {done}/{len(task.plan)} steps  "
        f"{clip(task.name, 50)}{archived}  updated {ago(task.updated_at, now)}"
    )


def entry_line(entry: Entry, now: datetime, step_numbers: dict[str, int]) -> str:
    """One archive entry in a listing."""
    step = step_numbers.get(entry.subtask_id or "")
    where = f" step {step}" if step else ""
    state = "" if entry.status.value == "active" else f" [{entry.status.value}]"
    line = f"  {entry.id}  {entry.type.value:<16}{state}{where}  {clip(entry.summary, 100)}"
    if entry.resolution:
        line += f"\n      -> {clip(entry.resolution, 100)}"
    elif entry.evidence:  # an open error: the newest passing run, for the agent to judge
        line += f"\n      evidence: {clip(entry.evidence[-1].text(), 100)}"
    if entry.keep_open and entry.status.value == "active":
        line += "\n      kept open until you resolve it"
    tags = f"  #{' #'.join(entry.tags)}" if entry.tags else ""
    return f"{line}{tags}  ({ago(entry.created_at, now)})"


def files_view(changes: FileChanges) -> str:
    """What a task changed in its workspace."""
    if not changes.created and not changes.modified:
        return "no file changes recorded; record them with --created / --modified"
    lines = [f"{changes.created} created, {changes.modified} modified, last {changes.last_change}"]
    lines += [f"  {path}" for path in changes.newest]
    return "\n".join(lines)


def task_view(
    task: Task,
    actions: Sequence[Action],
    messages: Sequence[Message],
    now: datetime,
    *,
    entries: Sequence[Entry] = (),
    files: FileChanges | None = None,
    more_actions: bool = False,
    more_messages: bool = False,
    record: TaskRecord | None = None,
) -> str:
    """The whole of `task show`: header, record, plan, newest actions and messages."""
    numbers = {s.id: n for n, s in enumerate(task.plan, 1)}
    replanned = f" (replanned {ago(task.last_replanned_at, now)})" if task.last_replanned_at else ""
    lines = [
        f"{task.name}  ({task.id})",
        f"status: {task.status.value}{' (archived)' if task.archived else ''}   "
        f"plan v{task.plan_version}{replanned}   updated {ago(task.updated_at, now)}",
    ]
    if task.goal:
        lines.append(f"goal: {task.goal}")
    if task.workspace:
        lines.append(f"workspace: {task.workspace}")
    if task.metadata:
        lines.append("metadata: " + ", ".join(f"{k}={v}" for k, v in task.metadata.items()))
    if task.summary:
        lines.append(f"progress: {task.summary}")
    if task.next_objective:
        lines.append(f"next objective: {task.next_objective}")
    if record is not None:
        lines += record_lines(record, numbers)
    lines.append("")
    lines.append("plan:" if task.plan else "plan: (no steps)")
    for n, s in enumerate(task.plan, 1):
        lines.append(step_line(n, s, now, numbers))
        found = record.steps.get(s.id) if record is not None else None
        if found is not None:
            lines += step_record_lines(found)
    more = "; --all shows every one"
    if entries:
        lines += ["", f"entries (newest first; `clew entries --task {task.id}` lists all):"]
        lines += [entry_line(e, now, numbers) for e in entries]
    if files and (files.created or files.modified):
        lines += ["", "workspace changes: " + files_view(files)]
    if actions:
        lines += ["", f"actions (newest first{more if more_actions else ''}):"]
        lines += [action_line(a, now, numbers) for a in actions]
    if messages:
        lines += ["", f"messages (newest first{more if more_messages else ''}):"]
        lines += [message_line(m, now) for m in messages]
    return "\n".join(lines)


def record_lines(rec: TaskRecord, numbers: dict[str, int]) -> list[str]:
    """The task record in `task show`: phase and its times, facts, outcome, entities."""
    from clew.tasks.record import format_duration

    facts = [f"phase: {rec.phase.value}"]
    for label, value in (
        ("priority", rec.priority.value if rec.priority else None),
        ("domain", rec.domain),
        ("estimate", format_duration(rec.estimate_seconds) if rec.estimate_seconds else None),
        ("confidence", f"{rec.confidence:.2f}" if rec.confidence is not None else None),
        ("plan source", rec.plan_source.value if rec.plan_source else None),
    ):
        if value is not None:
            facts.append(f"{label}: {value}")
    lines = ["   ".join(facts)]
    times = [
        (label, at)
        for label, at in (
            ("created", rec.created_at),
            ("plan generated", rec.plan_generated_at),
            ("execution started", rec.execution_started_at),
            ("synthesis started", rec.synthesis_started_at),
            ("completed", rec.completed_at),
        )
        if at is not None
    ]
    lines.append("phases: " + ", ".join(f"{label} {at[:19]}" for label, at in times))
    if rec.outcome:
        lines.append(f"outcome: {rec.outcome}")
    if rec.error_reason or rec.error_step_id:
        step = numbers.get(rec.error_step_id or "")
        lines.append(
            f"error summary: {rec.error_reason or '(no reason given)'}"
            + (f" (step {step})" if step else "")
        )
    if rec.answer:
        lines.append(f"final answer: {rec.answer}")
    for kind, values in rec.entities.items():
        lines.append(f"{kind}: {', '.join(values)}")
    return lines


def step_record_lines(found: StepRecord) -> list[str]:
    """A step's record under its line in `task show`."""
    parts = []
    if found.agent:
        parts.append(f"agent {found.agent}")
    if found.outcome:
        parts.append(f"outcome {found.outcome}")
    if found.artifacts:
        parts.append("artifacts " + ", ".join(found.artifacts))
    return [f"       {'; '.join(parts)}"] if parts else []


def action_view(action: Action, logs: Sequence[ActionLog], now: datetime) -> str:
    """The whole of one action, outputs summarised (print them with `task output`)."""
    lines = [
        f"action {action.id}  {action.type.value}  {action.status.value}  "
        f"{ago(action.created_at, now)}",
        f"summary: {action.summary}",
    ]
    for label, value in (
        ("command", action.command),
        ("cwd", action.cwd),
        ("exit code", action.exit_code),
        (
            "duration",
            None if action.duration_seconds is None else _seconds(action.duration_seconds),
        ),
    ):
        if value is not None:
            lines.append(f"{label}: {value}")
    lines.append(f"stdout: {output_size(action.stdout)}   stderr: {output_size(action.stderr)}")
    lines += [f"  [{log.type}] {log.content}" for log in logs]
    return "\n".join(lines)


def event_line(event: Event, imports: Sequence[ImportRecord] = ()) -> str:
    """One journal event (marked when its stored data is not valid JSON, and, when it was
    imported, with who imported it: `imports`, the store's records)."""
    task = f" task {event.task_id}" if event.task_id else ""
    line = f"#{event.seq:<6} {event.created_at}  {event.type:<20}{task}  cid {event.correlation_id}"
    record = next((r for r in imports if r.first_seq <= event.seq <= r.last_seq), None)
    if record is not None:
        from clew.tasks.history import importer

        line += f"  [{importer(record)}; the cid is a claim]"
    if event.type == "maintenance.ran":  # what maintenance did, in a few words
        done = [f"{a.get('action')} {a.get('id')}" for a in event.data.get("actions", [])]
        line += f"  ({event.data.get('trigger')}: {clip(', '.join(done), 120)})"
    elif event.type == "journal.forgotten":  # who forgot what: never the content
        named = event.data.get("events", [])
        what = " ".join(str(event.data.get(k)) for k in ("forgot", "record") if event.data.get(k))
        line += f"  ({event.data.get('by')} forgot {what}: {counted(len(named), 'event')})"
    elif isinstance(event.data.get("reason"), str):
        line += f"  ({clip(event.data['reason'], 80)})"
    if event.forgotten is not None:
        line += f"  [forgotten by {event.forgotten.by} at {event.forgotten.at}]"
    return line + ("  [UNREADABLE: data is not valid JSON]" if event.unreadable is not None else "")


def verify_view(report: VerifyReport) -> str:
    """What `verify` found, one line per difference; then what the checkpoints say."""
    filled = [f"{table} {count}" for table, count in report.rows.items() if count]
    empty = sum(1 for count in report.rows.values() if not count)
    rows = "; ".join(x for x in (", ".join(filled), f"{empty} tables empty" if empty else "") if x)
    spaces = sorted(report.heads or {})
    scope = f" of space{'s' if len(spaces) != 1 else ''} {', '.join(spaces)}" if spaces else ""
    forgotten = _forgotten_lines(report)
    if not report.differences:
        lines = [
            f"ok: {report.events} journal events{scope}, chained unbroken, rebuild every table"
            f" exactly ({rows})"
        ]
    else:
        lines = [
            f"MISMATCH: {len(report.differences)} differences between the tables and the journal"
        ]
    for d in report.differences:
        if d.problem:
            lines.append(f"  {d.problem}")
        else:
            lines.append(
                f"  {d.table} {d.row_id} {d.column}: stored {d.stored!r}, rebuilt {d.rebuilt!r}"
            )
    if report.truncated:
        lines.append("  (more differences not shown)")
    lines += forgotten
    if report.checkpoints is not None:
        lines.append(checkpoints_view(report.checkpoints))
    return "\n".join(lines)


def checkpoints_view(report: CheckpointReport) -> str:
    """What a file of checkpoints says of the store: a summary line, each line that does not
    hold, and of each space the furthest checkpoint that holds."""
    from clew.journal.checkpointfile import counted

    tally: dict[CheckpointStatus, int] = {}
    for check in report.checks:
        tally[check.status] = tally.get(check.status, 0) + 1
    said = ", ".join(f"{n} {status.value}" for status, n in tally.items()) or "none checked"
    skipped = [
        f"{n} of other {what}"
        for n, what in ((report.other_stores, "stores"), (report.other_spaces, "spaces"))
        if n
    ]
    hint = " (--all-spaces checks them)" if report.other_spaces else ""
    also = f"; not checked: {' and '.join(skipped)}{hint}" if skipped else ""
    head = "ok" if report.ok else "ROLLED BACK OR REWRITTEN"
    lines = [f"{head}: checkpoints in {report.source}: {said}{also}"]
    furthest: dict[str, tuple[Checkpoint, CheckpointCheck]] = {}
    for check in report.checks:
        c = check.checkpoint
        if check.status is not CheckpointStatus.HOLDS:
            lines.append(f"  line {check.line}: {check.detail}")
        elif c is not None and c.events >= furthest.get(c.space, (c, check))[0].events:
            furthest[c.space] = (c, check)
    for space, (c, check) in sorted(furthest.items()):
        lines.append(
            f"  space {space!r}: holds up to line {check.line}'s checkpoint,"
            f" {counted(c.events)} at {c.at} (it holds {check.events or 0:,} now)"
        )
    return "\n".join(lines)


def _forgotten_lines(report: VerifyReport) -> list[str]:
    """The events whose content was forgotten, each with who and when (not damage: each
    tombstone is accounted for by the forget it names, unless a difference says otherwise)."""
    if not report.forgotten_count:
        return []
    hold = "holds" if report.forgotten_count == 1 else "hold"
    lines = [
        f"forgotten: {counted(report.forgotten_count, 'event')} {hold} a tombstone"
        " instead of their content"
    ]
    for f in report.forgotten:
        lines.append(f"  #{f.seq} {f.type} {f.id}: forgotten by {f.by} at {f.at} ({f.event})")
    if report.forgotten_count > len(report.forgotten):
        lines.append(f"  ({report.forgotten_count - len(report.forgotten)} more not shown)")
    return lines


def forget_view(report: ForgetReport) -> str:
    """What a forget did (or would do): the events, their records and fields, never content."""
    verb = "would forget" if report.dry_run else "forgot"
    fields = sum(i.replaced for i in report.items)
    if not report.items:
        lines = ["nothing to forget: no content matched (or it is forgotten already)"]
    else:
        lines = [
            f"{report.by} {verb} {counted(fields, 'value or match', 'values or matches')}"
            f" in {counted(len(report.items), 'event')}"
        ]
    for item in report.items:
        owner = f" {item.record}" if item.record else ""
        lines.append(f"  #{item.seq} {item.type}{owner}: {', '.join(item.fields)}")
    if report.forgets:
        lines.append(f"journaled as: {', '.join(report.forgets)} (journal.forgotten)")
    if report.remaining:
        lines.append(
            f"still matching in {counted(len(report.remaining), 'event')},"
            " in fields a forget does not"
            " rewrite (ids, paths, names, other records):"
        )
        lines += [f"  #{i.seq} {i.type}: {', '.join(i.fields)}" for i in report.remaining]
    if report.note:
        lines.append(f"note: {report.note}")
    return "\n".join(lines)


def redactions_view(found: Sequence[Redaction]) -> str:
    """Where redaction took secrets out, one line each (newest first), then the totals by kind."""
    if not found:
        return "no redactions found"
    lines = []
    kinds: dict[str, int] = {}
    for r in found:
        where = f"task {r.task_id}" if r.task_id else ""
        if r.session_id:
            where = f"{where}, session {r.session_id}" if where else f"session {r.session_id}"
        lines.append(
            f"{r.created_at[:19]}  #{r.seq} {r.event_type}  {r.field}: {r.times} {r.kind}"
            + (f"  ({where})" if where else "")
        )
        kinds[r.kind] = kinds.get(r.kind, 0) + r.times
    total = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0])))
    lines.append(f"{counted(len(found), 'field')} redacted: {total}")
    return "\n".join(lines)


def label_of(hit: RecordHit) -> str:
    """A hit's label as shown, with the entry that replaced a superseded one."""
    if hit.superseded_by:
        return f"{hit.label} by {hit.superseded_by}"
    return hit.label


def record_hit_line(
    hit: RecordHit, now: datetime, steps: Mapping[str, tuple[int, str]] | None = None
) -> str:
    """One search hit: its kind, what it is, where it matched, and how to open it; its
    step by number and title when `steps` (by step id) knows it."""
    where = f" task {hit.task_id}" if hit.task_id else ""
    if hit.step_id:
        known = (steps or {}).get(hit.step_id)
        where += f" step {known[0]} ({clip(known[1], 40)})" if known else f" step {hit.step_id}"
    if hit.session_id:
        where += f" session {hit.session_id} turn {hit.turn}"
    sure = " (confident)" if hit.confident else ""
    lines = [
        f"{hit.score:5.2f} {hit.kind:<7} {hit.id}  [{label_of(hit)}]{where}"
        f"  ({ago(hit.created_at, now)}){sure}",
        f"      {clip(hit.title, 110)}",
    ]
    snippet = " ".join(hit.snippet.split())
    if snippet and re.sub(r"\[([^\[\]]*)\]", r"\1", snippet) != " ".join(hit.title.split()):
        lines.append(f"      {clip(snippet, 140)}")
    lines.append(f"      open: {hit.open}")
    if hit.explain is not None:
        lines.append(f"      why: {explain_line(hit.explain)}")
    return "\n".join(lines)


def explain_line(e: Explain) -> str:
    """Why a hit ranked where it did, in one line."""
    keyword = (
        "no keyword match"
        if e.keyword_rank is None
        else f"keyword #{e.keyword_rank} (bm25 {e.keyword:.2f} of the best, words {e.coverage:.0%})"
    )
    dense = "" if e.cosine is None else f"; meaning #{e.dense_rank} (cosine {e.cosine:.2f})"
    if e.cosine is None and e.dense_rank is None:
        dense = "; meaning: off"
    boosts = "".join(f"; {b}" for b in e.boosts)
    return f"{keyword}{dense}{boosts}; score {e.score:.2f}"


def entry_view(entry: Entry, now: datetime) -> str:
    """The whole of one archive entry."""
    lines = [
        f"{entry.type.value} {entry.id}  {entry.status.value}  {ago(entry.created_at, now)}",
        f"summary: {entry.summary}",
    ]
    for label, value in (
        ("task", entry.task_id),
        ("step", entry.subtask_id),
        ("tags", ", ".join(entry.tags)),
        ("relevant to", ", ".join(entry.relevance_to)),
        ("resolution", entry.resolution),
        ("supersedes", entry.supersedes),
        ("fingerprint", entry.fingerprint),
        ("sources", ", ".join(f"{kind}:{ident}" for kind, ident in entry.sources)),
        (
            "recorded by",
            {
                "agent": "the agent",
                "extracted": "clew (its copy of a failed command)",
                "model": "the utility model",
            }.get(entry.origin or ""),
        ),
        ("kept open", "yes, until you resolve it" if entry.keep_open else None),
    ):
        if value:
            lines.append(f"{label}: {value}")
    lines += [f"evidence: {e.text()}" for e in entry.evidence]
    if entry.detail:
        lines += ["detail:", entry.detail]
    return "\n".join(lines)


def message_view(message: Message, now: datetime) -> str:
    """The whole of one task message."""
    return (
        f"message {message.id}  {message.role.value}/{message.type.value}  task"
        f" {message.task_id}  {ago(message.created_at, now)}\n{message.content}"
    )


def error_history_view(found: ErrorHistory, now: datetime) -> str:
    """Where an error's fingerprint was seen, and which fixes worked."""
    fp = found.fingerprint
    lines = [f"fingerprint {fp.key}: {fp.kind} | {clip(fp.message, 100)}"]
    if fp.command:
        lines[0] += f" | {clip(fp.command, 60)}"
    if not found.seen and not found.fixes:
        lines.append("not seen before")
        return "\n".join(lines + _similar_lines(found))
    places = len(found.errors) + len(found.failed_commands)
    tasks = {e.task_id for e in found.errors} | {a.task_id for a in found.failed_commands}
    times = "once" if places == 1 else f"{places} times"
    lines.append(f"seen {times} in {counted(len(tasks - {None}), 'task')}")
    for e in found.errors[:5]:
        lines.append(f"  error {e.id} ({ago(e.created_at, now)}): {clip(e.summary, 100)}")
        said = telling_line(e.detail or "")
        if said and said not in e.summary:
            lines.append(f"    {clip(said, 120)}")
    for a in found.failed_commands[:5]:
        code = f" exit {a.exit_code}" if a.exit_code is not None else ""
        lines.append(
            f"  command {a.id} ({ago(a.created_at, now)}{code}):"
            f" `{clip(a.command or a.summary, 80)}`  open: clew task output {a.id} --info"
        )
        # The line that says what went wrong, not the output's tail ("make: *** Error 1").
        said = _told(a)
        if said:
            lines.append(f"    {clip(said, 120)}")
    for fix in found.fixes:
        verdict = "WORKED" if fix.worked else "failed"
        lines.append(f"  fix {verdict} ({ago(fix.created_at, now)}): {clip(fix.description, 120)}")
    if not found.fixes:
        lines.append("no fix recorded yet")
    return "\n".join(lines + _similar_lines(found))


def _told(action: Action) -> str:
    """The telling line of a failed command's output: its stderr's, else its stdout's."""
    for stream in (action.stderr, action.stdout):
        text = stream.decode("utf-8", "replace") if isinstance(stream, bytes) else stream
        if text and text.strip():
            return telling_line(text[-4096:])
    return ""


def _similar_lines(found: ErrorHistory) -> list[str]:
    """Errors and failed commands like this one, whose text differs."""
    if not found.similar:
        return []
    lines = ["like it (another fingerprint):"]
    for h in found.similar:
        lines.append(f"  {h.kind} {h.id} [{h.label}] {clip(h.title, 90)}  open: {h.open}")
    return lines


def repeated_line(failure: RepeatedFailure) -> str:
    """One command that failed more than once."""
    code = f" (last exit {failure.last_exit_code})" if failure.last_exit_code is not None else ""
    what = clip(failure.command, 90)
    return f"  {failure.failures:>3}x  `{what}`{code}  last {failure.last_action_id}"


def trace_view(trace: Trace) -> str:
    """A task's trace: decisions with their validations and tool calls, in order."""
    if not trace.decisions and not trace.tool_calls:
        return "no trace recorded; record decisions with `clew trace decide`"
    checks: dict[str, list[str]] = {}
    for v in trace.validations:
        checks.setdefault(v.decision_id, []).append(
            f"      {'passed' if v.passed else 'FAILED'} {v.validator}"
            + (f": {clip(v.feedback, 100)}" if v.feedback else "")
        )
    calls: dict[str | None, list[str]] = {}
    for a in trace.tool_calls:
        took = f" {a.duration_seconds:.1f}s" if a.duration_seconds is not None else ""
        calls.setdefault(a.decision_id, []).append(
            f"      -> {a.tool or a.type.value} {a.status.value}{took}  ({a.id})"
        )
    lines = []
    for d in trace.decisions:
        who = " ".join(x for x in (d.agent, d.state) if x)
        tokens = ""
        if d.prompt_tokens is not None or d.completion_tokens is not None:
            tokens = f"  {d.prompt_tokens or 0}+{d.completion_tokens or 0} tokens"
        model = f" {d.model}" if d.model else ""
        lines.append(
            f"  {d.id}  {d.created_at[:19]}  [{who or 'agent'}]{model}  {clip(d.action, 80)}"
            f" -> {d.outcome}{tokens}"
        )
        if d.error:  # what search found it by, often: say it where the search sends you
            lines.append(f"      error: {clip(' '.join(d.error.split()), 200)}")
        lines += checks.get(d.id, []) + calls.get(d.id, [])
    lines += calls.get(None, [])
    return "\n".join(lines)


def pattern_line(pattern: Pattern) -> str:
    """One pattern with its evidence."""
    from clew.archive.semantic import evidence

    total = pattern.success_count + pattern.failure_count
    gone = " (deprecated)" if pattern.deprecated else ""
    return (
        f"  {pattern.id}  {pattern.domain}/{clip(pattern.name, 50)}{gone}  "
        f"{pattern.success_count}/{total} worked, evidence {evidence(pattern):.2f}"
    )


def guardrail_line(rule: Guardrail) -> str:
    """One guardrail."""
    off = "" if rule.enabled else " (disabled)"
    checked = f"  /{rule.pattern}/" if rule.pattern else ""
    text = clip(rule.text, 90)
    return f"  {rule.id}  [{rule.enforcement.value}] {rule.rule_type}: {text}{off}{checked}"


def session_line(session: Session, now: datetime) -> str:
    """One session in `session list`."""
    state = "" if session.active else " (ended)"
    key = f"key {session.key}" if session.key else None  # what its caller names it by
    what = " ".join(filter(None, (key, session.model, clip(session.title or "", 40) or None)))
    active = ago(session.last_active_at, now)
    return (
        f"{session.id}  {session.turn_count:>5} turns  last active {active}{state}  {what}"
        f"  {session.workspace or ''}".rstrip()
    )


def context_view(context: Context) -> str:
    """An assembled prompt explained: the tokens of each tier, then the turns it holds."""
    lines = [f"prompt: {context.tokens:,} of {context.budget:,} tokens"]
    for tier in context.tiers:
        cap = f"/{tier.budget:,}" if tier.budget is not None else ""
        note = f"  ({tier.note})" if tier.note else ""
        lines.append(
            f"  {tier.name:<14} {tier.tokens:>7,}{cap} tokens  {tier.included} in,"
            f" {tier.left_out} out{note}"
        )
    lines += [f"  repair: {r}" for r in context.repairs]
    if context.turns:
        lines.append(f"turns {context.turns[0]}-{context.turns[-1]} are in the prompt")
    return "\n".join(lines) + "\n"
