"""`clew entries`: the layer-2 archive."""

from __future__ import annotations

import argparse
from typing import Any

from clew.cli.common import (
    Commands,
    current_time,
    open_memory,
    print_json,
    step_ref,
)


def cmd_entries(args: argparse.Namespace) -> int:
    from clew.views import entry_line

    with open_memory(args) as mem:
        entries = mem.list_entries(
            args.task,
            type=args.type or None,
            status=args.status,
            step=step_ref(args.step),
            limit=args.limit,
        )
        numbers = {}
        if args.task is not None:
            task = mem.get_task(args.task)
            numbers = {s.id: n for n, s in enumerate(task.plan, 1)}
    if args.json:
        print_json(entries)
    elif not entries:
        print("no entries match; record some with `clew task record TASK --decision TEXT`")
    else:
        now = current_time()
        for entry in entries:
            print(entry_line(entry, now, numbers))
    return 0


def register(commands: Any, command: Commands) -> None:
    """Add the archive commands."""
    p = command(
        commands,
        "entries",
        cmd_entries,
        "list archive entries by task, type, status and step, newest first",
    )
    p.add_argument("--task", help="only this task's entries")
    p.add_argument(
        "--type",
        action="append",
        help="decision, error, tool_result, user_instruction, discovery, artifact, context,"
        " constraint or question (repeatable)",
    )
    p.add_argument("--status", help="active, superseded or resolved")
    p.add_argument("--step", help="only entries of this step (needs --task)")
    p.add_argument("--limit", type=int, help="at most this many entries")
