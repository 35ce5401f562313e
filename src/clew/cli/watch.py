"""`clew stuck`: the active tasks that are stuck, why, and what to try."""

from __future__ import annotations

import argparse
from typing import Any

from clew.cli.common import Commands, open_memory, print_json


def cmd_stuck(args: argparse.Namespace) -> int:
    with open_memory(args) as mem:
        reports = mem.check_stuck(args.id, alert=not args.no_alert)
    if args.json:
        print_json(reports)
        return 0
    if not reports:
        print(f"task {args.id} is not stuck" if args.id else "no active task is stuck")
        return 0
    for report in reports:
        if report.alerted:
            note = "alert posted"
        elif report.last_alert:
            note = f"last alert {report.last_alert[:16]}Z"
        else:
            note = "no alert posted"
        print(f"{report.task_id} {report.name!r} ({note})")
        for condition in report.conditions:
            print(f"  stuck: {condition.evidence}")
            print(f"  try: {condition.suggestion}")
    return 0


def register(commands: Any, command: Commands) -> None:
    """Add `clew stuck`."""
    p = command(
        commands,
        "stuck",
        cmd_stuck,
        "list stuck active tasks (no progress, or one error again and again) and alert them",
        "List the active tasks that are stuck: no progress (a step change, a message, a"
        " completed action) for a while, or the same failing command again and again, with the"
        " evidence and a suggestion. Each gets an alert (a system message on the task) unless"
        " its last one is newer than the cooldown. Settings: [stuck] in config.toml.",
    )
    p.add_argument("id", nargs="?", help="only this task (id or unambiguous prefix)")
    p.add_argument("--no-alert", action="store_true", help="post no alert, only report")
