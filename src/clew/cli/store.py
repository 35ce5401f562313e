"""`clew init`, `journal`, `verify`, `checkpoint`, `forget`, `redactions`, `demo`: the store
itself."""

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
from clew.errors import ClewError


def cmd_init(args: argparse.Namespace) -> int:
    import sys

    import clew
    from clew.core.location import (
        STORE_DIR,
        STORE_FILE,
        find_project_store,
        is_url,
        locate_store,
        shown,
    )

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
    ignore = None if source in ("--db", "CLEW_DB") else _keep_out_of_git(here, args)
    if args.json:
        print_json({"path": path, "created": not existed, "hides": above, "gitignore": ignore})
    else:
        verb = "already has" if existed else "created"
        named_store = source in ("--db", "CLEW_DB")
        where = "" if named_store else "; clew commands run below this folder use it"
        print(f"{verb} a clew store at {path}{where}")
    return 0


def _keep_out_of_git(here: str, args: argparse.Namespace) -> str | None:
    """In a git work tree where `.clew/` is not ignored: add it to the .gitignore here when
    --gitignore says so or a person at a terminal agrees, else say in one line how. Return
    what happened: "ignored" (already), "added", "declined", "told"; None outside git."""
    import sys

    from clew.cli import gitignore

    root = gitignore.work_tree(here)
    if root is None or args.gitignore is False:
        return None
    if gitignore.is_ignored(here, root):
        return "ignored"
    asked = args.gitignore is None and sys.stdin.isatty() and sys.stderr.isatty()
    if asked:
        print(
            f"clew: add {gitignore.LINE} to {os.path.join(here, '.gitignore')}, so the"
            " store is not committed with the code? [Y/n] ",
            end="",
            file=sys.stderr,
            flush=True,
        )
        answer = sys.stdin.readline().strip().lower()
        if answer not in ("", "y", "yes"):
            return "declined"
    elif not args.gitignore:
        print(
            f"clew: {gitignore.LINE} is not in .gitignore, so git would commit the store"
            " (every command, output and message it records) with the code; `clew init"
            " --gitignore` adds it",
            file=sys.stderr,
        )
        return "told"
    added = gitignore.add(here)
    if not args.json:
        print(f"added {gitignore.LINE} to {added}")
    return "added"


def cmd_journal(args: argparse.Namespace) -> int:
    from clew.tools.views import event_line

    with open_memory(args) as mem:
        events = mem.journal(task_id=args.task, after=args.after, limit=args.limit)
        imports = mem.import_records(events[0].seq, events[-1].seq) if events else []
    if args.json:
        print_json(events)
    else:
        for event in events:
            print(event_line(event, imports))
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    from clew.cli.bar import shown as bar
    from clew.tools.views import verify_view

    with open_memory(args) as mem, bar():
        report = mem.verify(all_spaces=args.all_spaces, checkpoint=_checkpoints(args.checkpoint))
    if args.json:
        print_json({"ok": report.ok, **as_dict(report)})
    else:
        print(verify_view(report))
    return 0 if report.ok else 1


def cmd_checkpoint(args: argparse.Namespace) -> int:
    from clew.journal.checkpointfile import counted, default_path

    path = args.file or default_path()
    with open_memory(args) as mem:
        made = mem.checkpoint(path, all_spaces=args.all_spaces)
    if args.json:
        print_json({"file": path, "checkpoints": made})
        return 0
    for c in made:
        head = f"the last {c.last}, hash {c.head[:16]}…" if c.head else "none yet"
        print(f"space {c.space!r}: {counted(c.events)} ({head}) at {c.at}")
    named = f" {path}" if args.file else ""
    print(
        f"appended {len(made)} checkpoint line{'' if len(made) == 1 else 's'} to {path};"
        f" `clew verify --checkpoint{named}` checks the store against it"
    )
    return 0


def cmd_forget(args: argparse.Namespace) -> int:
    from clew.tools.views import forget_view

    if args.pattern is None and (args.kind is None or args.id is None):
        raise ClewError(
            "say what to forget: `clew forget KIND ID` (KIND: entry, turn, action or message)"
            " or `clew forget --pattern REGEX`"
        )
    if args.pattern is not None and args.kind is not None:
        raise ClewError("give a record (KIND ID) or --pattern REGEX, not both")
    with open_memory(args) as mem:
        report = mem.forget(args.kind, args.id, pattern=args.pattern, dry_run=args.dry_run)
    if args.json:
        print_json(report)
    else:
        print(forget_view(report))
    return 0


def cmd_redactions(args: argparse.Namespace) -> int:
    from clew.tools.views import redactions_view

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
    from clew.cli.demo import run_demo

    return run_demo(keep=args.keep, as_json=args.json)


# -- the parser -----------------------------------------------------------------------------


def _checkpoints(given: str | None) -> str | None:
    """The checkpoint file --checkpoint names: the default one for the option alone."""
    if given != "":
        return given
    from clew.journal.checkpointfile import default_path

    return default_path()


def register(commands: Any, command: Commands) -> None:
    """Add the store commands."""
    _register_init(commands, command)
    _register_checks(commands, command)
    _register_content(commands, command)


def _register_init(commands: Any, command: Commands) -> None:
    """`clew init` and `clew journal`."""
    p = command(commands, "init", cmd_init, "create a project store (.clew/) in this folder")
    ignore = p.add_mutually_exclusive_group()
    ignore.add_argument(
        "--gitignore",
        action="store_true",
        default=None,
        help="in a git work tree, add .clew/ to this folder's .gitignore without asking",
    )
    ignore.add_argument(
        "--no-gitignore",
        dest="gitignore",
        action="store_false",
        help="leave .gitignore alone and say nothing of it",
    )

    p = command(commands, "journal", cmd_journal, "print journal events in commit order")
    p.add_argument("--task", help="only this task's events")
    p.add_argument("--after", type=whole, default=0, metavar="SEQ", help="only events after SEQ")
    p.add_argument("--limit", type=whole, help="at most this many events")


def _register_checks(commands: Any, command: Commands) -> None:
    """`clew verify` and `clew checkpoint`: is the store what its journal says."""
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
    p.add_argument(
        "--checkpoint",
        nargs="?",
        const="",  # the option alone: the default file
        metavar="FILE",
        help="also check the store against the checkpoints in FILE (default: the file `clew"
        " checkpoint` writes): exit 1 if it is behind (rolled back) or diverges (rewritten)",
    )

    p = command(
        commands,
        "checkpoint",
        cmd_checkpoint,
        "append a sealed checkpoint of the journal's head to a file kept outside the store",
        "Append one line per space (this one, or every one with --all-spaces) to a checkpoint"
        " file: how many events the journal holds and the newest one's hash, at this moment,"
        " sealed with this user's sealing key. `clew verify --checkpoint FILE` later reports"
        " a store that is behind (rolled back) or diverges (rewritten). Keep the file where"
        " whoever can write the store cannot.",
    )
    p.add_argument(
        "--file",
        metavar="FILE",
        help="the file to append to (default: $CLEW_CHECKPOINT_FILE, else"
        " $XDG_STATE_HOME/clew/checkpoints.jsonl, ~/.local/state/clew/checkpoints.jsonl)",
    )
    p.add_argument(
        "--all-spaces", action="store_true", help="one line for every space in the store"
    )


def _register_content(commands: Any, command: Commands) -> None:
    """`clew forget`, `clew redactions` and `clew demo`."""
    p = command(
        commands,
        "forget",
        cmd_forget,
        "remove the content of a record (an entry, a turn, an action's output, a message) or"
        " every match of a pattern, leaving a tombstone; the journal still verifies",
    )
    p.add_argument(
        "kind", nargs="?", choices=("entry", "turn", "action", "message"), help="the record's kind"
    )
    p.add_argument("id", nargs="?", help="the record's id (or an unambiguous prefix)")
    p.add_argument(
        "--pattern",
        metavar="REGEX",
        help="forget every match of this regular expression in the space's content instead",
    )
    p.add_argument(
        "--dry-run", action="store_true", help="list what would be forgotten; change nothing"
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
