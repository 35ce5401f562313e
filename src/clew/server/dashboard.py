"""The dashboard's pages: tasks, a task, sessions, a session, search. Pure: the records a
handler read through the facade in, HTML out; every value from the store goes through
`markup.escape`. Parts marked `data-live` (with an id) are what live.js swaps when the
journal moves; forms sit outside them, so a refresh never eats what a person is typing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from clew.core.lifecycle import Wait
from clew.core.text import counted
from clew.models import (
    Action,
    Entry,
    Event,
    ForgetReport,
    PlanItem,
    RecordHit,
    Session,
    Task,
    Turn,
)
from clew.server.markup import Nav, cells, escape, hidden, page, table, when
from clew.state.document import State
from clew.tasks.history import HistoryItem

KINDS = ("entry", "message", "action", "turn", "decision")  # what search may narrow to
OUTPUT_CHARS = 200_000  # of one command's output shown on a page (the API has it all)


class TaskView(NamedTuple):
    """What the task page shows, read through the facade."""

    task: Task
    state: State
    commands: Sequence[Action]
    entries: Sequence[Entry]
    waits: Sequence[Wait]
    replans: Sequence[Event]
    timeline: Sequence[tuple[HistoryItem, str]]  # each item with who wrote it


def progress(task: Task) -> tuple[int, int]:
    """(steps done or skipped, steps) of a task's plan."""
    done = sum(1 for s in task.plan if s.status.value in ("completed", "skipped"))
    return done, len(task.plan)


def current_step(task: Task) -> PlanItem | None:
    """The step being worked on: the first active one, else the first pending one."""
    for wanted in ("active", "pending"):
        found = next((s for s in task.plan if s.status.value == wanted), None)
        if found is not None:
            return found
    return None


def _title(step: PlanItem | None) -> str:
    return "" if step is None else step.title


def _bar(task: Task) -> str:
    done, total = progress(task)
    return f'<progress value="{done}" max="{max(total, 1)}"></progress> {done}/{total}'


def task_list(tasks: Sequence[Task], nav: Nav) -> str:
    """`/`: the space's tasks grouped by status, each with its plan's progress."""
    groups: dict[str, list[Task]] = {}
    for task in tasks:
        key = "archived" if task.archived else task.status.value
        groups.setdefault(key, []).append(task)
    order = ["active", "paused", "failed", "completed", "cancelled", "archived"]
    parts = []
    for status in sorted(groups, key=lambda s: order.index(s) if s in order else len(order)):
        rows = (
            cells(
                f'<a href="/tasks/{escape(t.id)}"><code>{escape(t.id)}</code></a>',
                f'<a href="/tasks/{escape(t.id)}">{escape(t.name)}</a>',
                _bar(t),
                escape(t.next_objective or _title(current_step(t))),
                f"<span class=muted>{when(t.updated_at)}</span>",
            )
            for t in groups[status]
        )
        parts.append(
            f"<h2>{escape(status)} ({len(groups[status])})</h2>"
            + table(("id", "task", "plan", "next", "updated"), rows, "none")
        )
    body = "".join(parts) or "<p class=muted>No tasks in this space yet.</p>"
    return page("Tasks", f"<div id=tasks data-live>{body}</div>", nav, live=True)


def _plan(view: TaskView) -> str:
    task = view.task
    step = current_step(task)
    current = None if step is None else step.id
    items = []
    for step in task.plan:
        mark = " current" if step.id == current else ""
        extra = f" — {escape(step.summary)}" if step.summary else ""
        issue = (
            f" <span class=bad>issue: {escape(step.active_issue)}</span>"
            if step.active_issue
            else ""
        )
        items.append(
            f'<li class="{escape(step.status.value)}{mark}">{escape(step.title)}'
            f" <span class=tag>{escape(step.status.value)}</span>{extra}{issue}</li>"
        )
    replans = "".join(
        f"<li>v{escape(e.data.get('version'))} at {when(e.created_at)}: "
        f"{escape(e.data.get('reason') or 'no reason given')}</li>"
        for e in view.replans
    )
    said = f"<h2>Replans</h2><ul>{replans}</ul>" if replans else ""
    plan = f"<ol class=plan>{''.join(items)}</ol>" if items else "<p class=muted>No plan.</p>"
    return f"<h2>Plan (version {task.plan_version}) {_bar(task)}</h2>{plan}{said}"


def _output(label: str, value: str | bytes | None) -> str:
    if value is None or value == "" or value == b"":
        return ""
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
    cut = (
        f" (first {OUTPUT_CHARS:,} of {len(text):,} characters)" if len(text) > OUTPUT_CHARS else ""
    )
    shown = escape(text[:OUTPUT_CHARS])
    return f"<details><summary>{label}{cut}</summary><pre>{shown}</pre></details>"


def _ledger(commands: Sequence[Action]) -> str:
    rows = []
    for a in commands:
        code = a.exit_code
        shown = "-" if code is None else str(code)
        tone = "" if code is None else " class=ok" if code == 0 else " class=bad"
        rows.append(
            cells(
                f"<span class=muted>{when(a.created_at)}</span>",
                f"<code>{escape(a.command or a.tool or a.summary)}</code>"
                + _output("stdout", a.stdout)
                + _output("stderr", a.stderr),
                f"<b{tone}>{escape(shown)}</b>",
                escape("" if a.duration_seconds is None else f"{a.duration_seconds:.1f} s"),
            )
        )
    return "<h2>Commands</h2>" + table(("at", "command", "exit", "took"), rows, "No commands.")


def _entries(view: TaskView, kind: str, title: str) -> str:
    rows = []
    for e in view.entries:
        if e.type.value != kind:
            continue
        state = e.status.value
        fix = f"<br>fix: {escape(e.resolution)}" if e.resolution else ""
        detail = (
            f"<details><summary>detail</summary><pre>{escape(e.detail)}</pre></details>"
            if e.detail
            else ""
        )
        rows.append(
            cells(
                f"<code>{escape(e.id)}</code>",
                f"{escape(e.summary)}{fix}{detail}",
                f"<span class=tag>{escape(state)}</span>",
                f"<span class=muted>{when(e.created_at)}</span>",
            )
        )
    return f"<h2>{escape(title)}</h2>" + table(("id", "what", "status", "at"), rows, "None.")


def _waits(waits: Sequence[Wait]) -> str:
    rows = (
        cells(
            f"<code>{escape(w.id)}</code>",
            escape(w.label),
            f"<span class=tag>{escape(w.status.value)}</span>",
            escape(w.result or w.observation or ""),
        )
        for w in waits
    )
    return "<h2>Waits</h2>" + table(("id", "waiting for", "status", "seen"), rows, "No waits.")


def _timeline(items: Sequence[tuple[HistoryItem, str]]) -> str:
    rows = (
        cells(
            f"<span class=muted>{escape(i.seq)}</span>",
            f"<span class=muted>{when(i.at)}</span>",
            f"<span class=tag>{escape(i.type)}</span>",
            escape(i.text),
            escape(who),
        )
        for i, who in reversed(items)
    )
    return "<h2>Timeline</h2>" + table(("seq", "at", "event", "what", "by"), rows, "Nothing yet.")


def _forms(view: TaskView, csrf: str) -> str:
    """The edits a write key may make (each a journaled event with the key as its actor)."""
    task = view.task
    tid = escape(task.id)
    act = f'method=post action="/tasks/{tid}/act"'
    lifecycle = []
    if task.status.value == "active":
        lifecycle.append("pause")
    if task.status.value == "paused":
        lifecycle.append("resume")
    lifecycle.append("unarchive" if task.archived else "archive")
    buttons = "".join(
        f'<form class=inline {act}>{hidden(csrf)}<button name=do value="{d}">{d}</button></form> '
        for d in lifecycle
    )

    def pick(kind: str, statuses: tuple[str, ...]) -> str:
        options = "".join(
            f'<option value="{escape(e.id)}">{escape(e.id)}: {escape(e.summary[:60])}</option>'
            for e in view.entries
            if e.type.value == kind and e.status.value in statuses
        )
        return f"<select name=entry required>{options}</select>" if options else ""

    forms = [f"<p>{buttons}</p>"]
    errors = pick("error", ("active", "open"))
    if errors:
        forms.append(
            f"<form {act}>{hidden(csrf)}<input type=hidden name=do value=resolve>Resolve "
            f"{errors} with <input type=text name=text required placeholder=fix> "
            "<button>resolve</button></form>"
        )
    decisions = pick("decision", ("active",))
    if decisions:
        forms.append(
            f"<form {act}>{hidden(csrf)}<input type=hidden name=do value=supersede>Supersede "
            f"{decisions} by <input type=text name=text required placeholder=decision> "
            "<button>supersede</button></form>"
        )
    for do, label in (("constraint", "Add a constraint"), ("note", "Add a note")):
        forms.append(
            f"<form {act}>{hidden(csrf)}<input type=hidden name=do value={do}>{label} "
            f'<input type=text name=text required aria-label="{do}"> <button>add</button></form>'
        )
    return "<section id=edit><h2>Edit</h2>" + "".join(forms) + "</section>"


def task_page(view: TaskView, nav: Nav, *, can_edit: bool, said: str = "") -> str:
    """`/tasks/<id>`: plan, ledger, entries, waits, the state the agent sees, the timeline."""
    task = view.task
    head = (
        f"<p><code>{escape(task.id)}</code> <span class=tag id=status>{escape(task.status.value)}"
        f"</span>{' <span class=tag>archived</span>' if task.archived else ''}"
        f" · goal: {escape(task.goal or '-')} · next: {escape(task.next_objective or '-')}</p>"
    )
    flash = f"<p class=bad role=alert>{escape(said)}</p>" if said else ""
    state = view.state
    parts = [
        f"<section id=plan data-live>{head}{_plan(view)}</section>",
        f"<section id=ledger data-live>{_ledger(view.commands)}</section>",
        f"<section id=decisions data-live>{_entries(view, 'decision', 'Decisions')}</section>",
        f"<section id=errors data-live>{_entries(view, 'error', 'Errors and fixes')}</section>",
        f"<section id=constraints data-live>{_entries(view, 'constraint', 'Constraints')}"
        "</section>",
        f"<section id=waits data-live>{_waits(view.waits)}</section>",
        f"<section id=state data-live><h2>The state the agent sees ({state.tokens} tokens"
        f"{'' if state.exact else ', at most'}, {escape(state.tokenizer)}, budget {state.budget})"
        f"</h2><pre>{escape(state.text)}</pre></section>",
        f"<section id=timeline data-live>{_timeline(view.timeline)}</section>",
    ]
    edit = _forms(view, nav.csrf) if can_edit else ""
    return page(task.name, flash + edit + "".join(parts), nav, live=True)


def session_list(sessions: Sequence[Session], nav: Nav) -> str:
    """`/sessions`: conversation sessions, the most recently active first."""
    rows = (
        cells(
            f'<a href="/sessions/{escape(s.id)}"><code>{escape(s.id)}</code></a>',
            escape(s.title or s.key or ""),
            escape(s.turn_count),
            "active" if s.active else "ended",
            f"<span class=muted>{when(s.last_active_at)}</span>",
        )
        for s in sessions
    )
    body = table(("id", "title", "turns", "", "last active"), rows, "No sessions in this space.")
    return page("Sessions", f"<div id=sessions data-live>{body}</div>", nav, live=True)


def _arguments(raw: str) -> str:
    return f"<pre>{escape(raw)}</pre>"


def session_page(session: Session, turns: Sequence[Turn], nav: Nav, *, more: int = 0) -> str:
    """`/sessions/<id>`: every turn verbatim, each tool call with its result under it."""
    results: dict[str, Turn] = {t.tool_call_id: t for t in turns if t.tool_call_id}
    paired: set[str] = set()
    out = []
    for turn in turns:
        if turn.tool_call_id and turn.tool_call_id in paired:
            continue  # shown under its call
        role = escape(turn.role)
        hidden_note = " <span class=tag>hidden from the view</span>" if turn.hidden else ""
        text = f"<pre>{escape(turn.text)}</pre>" if turn.text else ""
        calls = []
        for call_id, name, arguments in turn.tool_calls:
            result = results.get(call_id) if call_id else None
            if result is not None:
                paired.add(call_id or "")
                answer = (
                    f'<div class="turn tool" id="turn-{result.number}">result, turn {result.number}'
                    f"<pre>{escape(result.text)}</pre></div>"
                )
            else:
                answer = "<p class=muted>no result recorded</p>"
            calls.append(
                f"<div class=call><b>call {escape(name)}</b> <code>{escape(call_id)}</code>"
                f"{_arguments(arguments)}{answer}</div>"
            )
        out.append(
            f'<div class="turn {role}" id="turn-{turn.number}"><b>{turn.number} · {role}</b>'
            f"{' · ' + escape(turn.tool_name) if turn.tool_name else ''}"
            f" <span class=muted>{when(turn.created_at)}</span>{hidden_note}{text}"
            f"{''.join(calls)}</div>"
        )
    note = (
        f"<p class=muted>The {more} older turns are not shown here; the API has them all.</p>"
        if more
        else ""
    )
    task = "no task"
    if session.task_id:
        task = f'task <a href="/tasks/{escape(session.task_id)}">{escape(session.task_id)}</a>'
    head = (
        f"<p><code>{escape(session.id)}</code> · {escape(session.turn_count)} turns · "
        f"{escape(session.model or 'model not named')} · {task}</p>"
    )
    shown = "".join(out) or "<p class=muted>No turns.</p>"
    body = f"{head}<div id=turns data-live>{note}{shown}</div>"
    return page(session.title or session.key or session.id, body, nav, live=True)


def _hit_link(hit: RecordHit) -> str:
    if hit.session_id is not None:
        return f"/sessions/{escape(hit.session_id)}#turn-{escape(hit.turn)}"
    if hit.task_id is not None:
        return f"/tasks/{escape(hit.task_id)}"
    return ""


def search_page(
    query: str, kinds: Sequence[str], hits: Sequence[RecordHit], nav: Nav, said: str = ""
) -> str:
    """`/search`: one search over everything, narrowed by kind."""
    boxes = "".join(
        f'<label><input type=checkbox name=kinds value="{k}"{" checked" if k in kinds else ""}>'
        f" {k}</label> "
        for k in KINDS
    )
    form = (
        f'<form method=get action="/search"><input type=search name=q value="{escape(query)}"'
        f" aria-label=query autofocus> {boxes}<button>search</button></form>"
    )
    rows = []
    for hit in hits:
        link = _hit_link(hit)
        title = escape(hit.title) or f"({escape(hit.kind)} {escape(hit.id)})"
        rows.append(
            cells(
                f"<span class=tag>{escape(hit.kind)}</span> {escape(hit.label)}",
                f'<a href="{link}">{title}</a>' if link else title,
                escape(hit.snippet),
                f"<span class=muted>{when(hit.created_at)}</span>",
            )
        )
    flash = f"<p class=bad role=alert>{escape(said)}</p>" if said else ""
    results = (
        table(("kind", "record", "where it matched", "at"), rows, "Nothing found.") if query else ""
    )
    return page("Search", f"{form}{flash}<div id=hits>{results}</div>", nav)


def forget_page(
    nav: Nav, form: dict[str, str], report: ForgetReport | None = None, said: str = ""
) -> str:
    """`/forget` (admin keys): remove the content of a record, or every match of a pattern;
    what was (or would be) forgotten is listed by event, record and field, never content."""
    kind = form.get("kind", "")
    options = "".join(
        f'<option value="{k}"{" selected" if k == kind else ""}>{k}</option>'
        for k in ("", "entry", "turn", "action", "message")
    )
    checked = " checked" if form.get("dry_run") else ""
    body = [
        "<p>The content is replaced by a tombstone naming this key, in every table, search"
        " index, vector and mirror; the journal still verifies, and reports what was forgotten."
        " Give a record, or a pattern (a regular expression) whose every match is forgotten.</p>",
        f'<form method=post action="/forget">{hidden(nav.csrf)}'
        f"<p><label>record <select name=kind>{options}</select></label> "
        f'<input type=text name=id value="{escape(form.get("id", ""))}" placeholder=id'
        ' aria-label="record id"></p>'
        "<p><label>or pattern <input type=text name=pattern autocomplete=off"
        ' placeholder="AKIA[0-9A-Z]{16}" aria-label=pattern></label></p>'
        f"<p><label><input type=checkbox name=dry_run value=1{checked}> only say what would be"
        " forgotten</label> <button>forget</button></p></form>",
    ]
    if said:
        body.append(f"<p class=bad role=alert>{escape(said)}</p>")
    if report is not None:
        verb = "Would forget" if report.dry_run else "Forgot"
        rows = (
            cells(f"#{i.seq}", escape(i.type), escape(i.record or ""), escape(", ".join(i.fields)))
            for i in report.items
        )
        body.append(
            f"<section id=forgotten><h2>{verb}: {counted(len(report.items), 'event')}</h2>"
            + table(("seq", "event", "record", "fields"), rows, "Nothing matched.")
            + (f"<p class=muted>{escape(report.note)}</p>" if report.note else "")
            + "</section>"
        )
        if report.remaining:
            left = (
                cells(f"#{i.seq}", escape(i.type), "", escape(", ".join(i.fields)))
                for i in report.remaining
            )
            body.append(
                "<section><h2>Still matching, in fields a forget does not rewrite</h2>"
                + table(("seq", "event", "", "fields"), left, "")
                + "</section>"
            )
    return page("Forget", "".join(body), nav)


def error_page(status: int, message: str, nav: Nav | None) -> str:
    """A page saying what went wrong, in one line."""
    body = f'<p class=bad role=alert>{escape(message)}</p><p><a href="/">back to the tasks</a></p>'
    if nav is None:
        return f"<!doctype html><meta charset=utf-8><title>clew</title>{body}"
    return page(f"Error {status}", body, nav)
