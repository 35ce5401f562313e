"""`clew init`, `journal`, `verify`, `demo`: the store itself."""

from __future__ import annotations

import argparse
import os
from typing import Any

from clew.cli.common import (
    Commands,
    as_dict,
    open_memory,
    print_json,
    whole,
)


def cmd_init(args: argparse.Namespace) -> int:
    from clew.location import STORE_DIR, STORE_FILE

    path = os.path.join(os.getcwd(), STORE_DIR, STORE_FILE)
    existed = os.path.exists(path)
    import clew

    with clew.open(path, space=args.space):
        pass
    if args.json:
        print_json({"path": path, "created": not existed})
    else:
        verb = "already has" if existed else "created"
        print(f"{verb} a clew store at {path}; clew commands run below this folder use it")
    return 0


def cmd_journal(args: argparse.Namespace) -> int:
    from clew.views import event_line

    with open_memory(args) as mem:
        events = mem.journal(task_id=args.task, after=args.after, limit=args.limit)
    if args.json:
        print_json(events)
    else:
        for event in events:
            print(event_line(event))
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    from clew.views import verify_view

    with open_memory(args) as mem:
        report = mem.verify()
    if args.json:
        print_json({"ok": report.ok, **as_dict(report)})
    else:
        print(verify_view(report))
    return 0 if report.ok else 1


def cmd_demo(args: argparse.Namespace) -> int:
    from clew.demo import run_demo

    return run_demo(keep=args.keep, as_json=args.json)


# -- the parser -----------------------------------------------------------------------------


def register(commands: Any, command: Commands) -> None:
    """Add the store commands."""
    command(commands, "init", cmd_init, "create a project store (.clew/) in this folder")

    p = command(commands, "journal", cmd_journal, "print journal events in commit order")
    p.add_argument("--task", help="only this task's events")
    p.add_argument("--after", type=whole, default=0, metavar="SEQ", help="only events after SEQ")
    p.add_argument("--limit", type=whole, help="at most this many events")

    command(
        commands,
        "verify",
        cmd_verify,
        "rebuild every table from the journal and report differences (exit 1 if any)",
    )

    p = command(commands, "demo", cmd_demo, "a scripted walkthrough on a temporary store")
    p.add_argument("--keep", action="store_true", help="keep the demo store and print its path")
    # --json (every command's option) prints the outcome as one JSON object.
