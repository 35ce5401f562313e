"""`clew init`, `journal`, `verify`, `redactions`, `demo`: the store itself."""

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
    import sys

    import clew
    from clew.location import STORE_DIR, STORE_FILE, find_project_store, is_url, locate_store, shown

    named, source = locate_store(args.db)
    if is_url(named):  # a team store: migrated when opened; its password is never printed
        with clew.open(named, space=args.space, busy_timeout=args.busy_timeout):
            pass
        if args.json:
            print_json({"path": shown(named), "created": None, "hides": None})
        else:
            print(f"the clew store at {shown(named)} is ready")
        return 0
    here = os.path.realpath(os.getcwd())
    path = named if source in ("--db", "CLEW_DB") else os.path.join(here, STORE_DIR, STORE_FILE)
    existed = os.path.exists(path)
    from clew.cli.bar import shown as bar

    with bar(), clew.open(path, space=args.space, busy_timeout=args.busy_timeout):
        pass  # opening migrates: an old, large store may take a while
    # A new project store below another one hides that one's tasks from this folder down.
    above: str | None = None
    if not existed and source not in ("--db", "CLEW_DB"):
        above = find_project_store(os.path.dirname(here))
    if above is not None:
        print(
            f"clew: warning: {os.path.dirname(os.path.dirname(above))} above already has a store;"
            f" commands run in {here} and below now use the new one and no longer see its"
            f" tasks (`clew --db {above} task list` still shows them)",
            file=sys.stderr,
        )
    if args.json:
        print_json({"path": path, "created": not existed, "hides": above})
    else:
        verb = "already has" if existed else "created"
        named_store = source in ("--db", "CLEW_DB")
        where = "" if named_store else "; clew commands run below this folder use it"
        print(f"{verb} a clew store at {path}{where}")
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
    from clew.cli.bar import shown as bar
    from clew.views import verify_view

    with open_memory(args) as mem, bar():
        report = mem.verify(all_spaces=args.all_spaces)
    if args.json:
        print_json({"ok": report.ok, **as_dict(report)})
    else:
        print(verify_view(report))
    return 0 if report.ok else 1


def cmd_redactions(args: argparse.Namespace) -> int:
    from clew.views import redactions_view

    with open_memory(args) as mem:
        found = mem.redactions(
            task_id=args.task, session=args.session, kind=args.kind, limit=args.limit
        )
    if args.json:
        print_json(found)
    else:
        print(redactions_view(found))
    return 0


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

    p = command(
        commands,
        "verify",
        cmd_verify,
        "check the journal's hash chain, rebuild the space's tables from it and report"
        " differences (exit 1 if any)",
    )
    p.add_argument(
        "--all-spaces", action="store_true", help="check every space in the file, not only this one"
    )

    p = command(
        commands,
        "redactions",
        cmd_redactions,
        "where secrets were taken out of what was stored: event, field, kind, how many"
        " (never the value), the newest first",
    )
    p.add_argument("--task", help="only this task's events")
    p.add_argument("--session", help="only this session's (its id, a prefix or its key)")
    p.add_argument("--kind", help="only this kind (github-token, password, secret...)")
    p.add_argument("--limit", type=whole, default=50, help="at most this many (default 50)")

    p = command(commands, "demo", cmd_demo, "a scripted walkthrough on a temporary store")
    p.add_argument("--keep", action="store_true", help="keep the demo store and print its path")
    # --json (every command's option) prints the outcome as one JSON object.
