"""The HTML of `/`: the key's space's tasks, their status and plan progress. Server-rendered,
no script; every value escaped. Pure: tasks in, text out."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from clew.models import Task

_STYLE = (
    "body{font:15px system-ui,sans-serif;margin:2em auto;max-width:60em;padding:0 1em}"
    "table{border-collapse:collapse;width:100%}td,th{padding:.3em .6em;text-align:left;"
    "border-bottom:1px solid #ddd}progress{width:8em}.muted{color:#777}"
)


def render(space: str, tasks: Sequence[Task], version: str) -> str:
    """The page listing `tasks` of `space`, newest first."""
    rows = []
    for task in tasks:
        done = sum(1 for s in task.plan if s.status.value in ("completed", "skipped"))
        total = len(task.plan)
        rows.append(
            f"<tr><td><code>{escape(task.id)}</code></td><td>{escape(task.name)}</td>"
            f"<td>{escape(task.status.value)}</td>"
            f'<td><progress value="{done}" max="{max(total, 1)}"></progress> {done}/{total}</td>'
            f"<td class=muted>{escape(task.updated_at[:16])}</td></tr>"
        )
    body = (
        "<table><tr><th>id</th><th>task</th><th>status</th><th>plan</th><th>updated</th></tr>"
        + "".join(rows)
        + "</table>"
        if rows
        else "<p>No tasks in this space yet.</p>"
    )
    return (
        "<!doctype html><html><head><meta charset=utf-8>"
        f"<title>clew: {escape(space)}</title><style>{_STYLE}</style></head><body>"
        f"<h1>clew <span class=muted>space {escape(space)}</span></h1>{body}"
        f'<p class=muted>clew {escape(version)} · <a href="/api/v1/openapi.json">API</a></p>'
        "</body></html>"
    )
