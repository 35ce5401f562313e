"""`clew wait ...`, `maintain`: smart waits and maintenance."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from clew.cli.common import Commands, Parser, current_time, open_memory, print_json, show, step_ref
from clew.cli.options import task_id, tool_option

_KINDS = ("command", "file", "url", "time", "manual")


def wait_line(wait: Any, now: Any) -> str:
    """One wait: id, status, task, what it waits for, and what its last check saw."""
    from clew.core.clock import ago
    from clew.core.text import clip

    seen = wait.seen or wait.observation
    if wait.status.value == "watching":
        last = "not checked yet"
        if wait.polled_at:
            last = f"last check {ago(wait.polled_at, now)}: {seen}"
        tail = f"{last}; every {wait.poll_seconds:g}s"
        if wait.deadline:
            tail += f", until {wait.deadline[:16]}Z"
    else:
        tail = f"{wait.status.value.replace('_', ' ')} {ago(wait.ended_at, now)}: {wait.result}"
    return (
        f"{wait.id}  {wait.status.value:<9} task {wait.task_id}  {wait.kind.value:<7}"
        f" {clip(wait.label, 70)}\n    {clip(tail, 160)}"
    )


def cmd_wait_add(args: argparse.Namespace) -> int:
    kind = next(k for k in _KINDS if getattr(args, k) is not None)
    with open_memory(args) as mem:
        wait = mem.add_wait(
            args.id,
            kind,
            getattr(args, kind),
            step=step_ref(args.step),
            description=args.description,
            exit_code=args.exit_code,
            contains=args.contains,
            regex=args.regex,
            status=args.http_status,
            poll_every=args.every,
            timeout="auto" if args.timeout is None else args.timeout,
            run_timeout=args.run_timeout,
            cwd=args.cwd,
        )
        worker = mem.settings.worker
    show(args, wait, wait.id)
    # Adding a wait starts a process that outlives this command: say so, on stderr (stdout
    # stays the id or the JSON), with how to see it and how to stop it.
    if wait.kind.value != "manual":
        print(_watched_by(worker, wait), file=sys.stderr)
    return 0


def _watched_by(worker: str, wait: Any) -> str:
    """One line on who checks a new wait: the background worker, or nobody until asked."""
    if worker in ("process", "thread"):
        return (
            f"clew: a background `clew work` process checks {wait.id} every"
            f" {wait.poll_seconds:g}s and exits once no wait is watched;"
            f" `clew wait list` shows what it saw, `clew wait cancel {wait.id}` stops it"
        )
    return (
        f"clew: no background worker (worker = {worker}): `clew work` checks {wait.id}"
        " when you run it"
    )


def cmd_wait_list(args: argparse.Namespace) -> int:
    status = None if args.all else (args.status or "watching")
    with open_memory(args) as mem:
        waits = mem.list_waits(args.task, status=status, limit=args.limit)
    if args.json:
        print_json(waits)
    elif not waits:
        which = "" if args.all else f"{status} "
        print(f"no {which}waits; add one with `clew wait add TASK --command CMD`")
    else:
        now = current_time()
        for wait in waits:
            print(wait_line(wait, now))
    return 0


def cmd_wait_check(args: argparse.Namespace) -> int:
    with open_memory(args) as mem:
        found = mem.check_waits(args.wait)
    if args.json:
        print_json(found)
        return 0
    if not found:
        print("no wait is due")
    for check in found:
        print(f"{check.wait.id} {check.outcome}: {check.evidence}")
    return 0


def cmd_wait_resolve(args: argparse.Namespace) -> int:
    with open_memory(args) as mem:
        wait = mem.resolve_wait(args.wait, args.evidence)
    return show(args, wait, f"{wait.id} resolved")


def cmd_wait_cancel(args: argparse.Namespace) -> int:
    with open_memory(args) as mem:
        wait = mem.cancel_wait(args.wait, args.reason)
    return show(args, wait, f"{wait.id} cancelled")


def cmd_maintain(args: argparse.Namespace) -> int:
    with open_memory(args) as mem:
        report = mem.maintain(dry_run=args.dry_run)
    if args.json:
        print_json(report)
        return 0
    if not report.actions:
        print("nothing to do")
    verb = "would be " if args.dry_run else ""
    for action in report.actions:
        print(f"{action.id} {verb}{action.action.replace('_', ' ')}: {action.detail}")
    return 0


def register(commands: Any, command: Commands) -> None:
    """Add `clew wait` and `clew maintain`."""
    wait_parser = commands.add_parser(
        "wait",
        help="smart waits: wait for a command, file, local URL, time or condition",
        description="Smart waits: a task waits for a command to succeed, a file to appear, a"
        " URL on this machine to answer, a time, or a condition someone resolves. The worker"
        " polls them; the end posts '[wait resolved] ...' to the task.",
    )
    waits = wait_parser.add_subparsers(
        dest="wait_command", metavar="WAIT_COMMAND", parser_class=Parser
    )
    waits.required = True

    p = command(
        waits,
        "add",
        cmd_wait_add,
        "wait on a task's behalf; prints the wait's id",
        "Add a wait to a task: exactly one of --command, --file, --url, --time, --manual."
        " It is polled every --every until it is met or --timeout passes.",
    )
    task_id(p, "smart_wait")
    _wait_targets(p)
    tool = "smart_wait"
    tool_option(p, tool, "step", "--step")
    tool_option(p, tool, "description", "--description", metavar="TEXT")
    tool_option(p, tool, "exit_code", "--exit-code")
    tool_option(p, tool, "contains", "--contains", metavar="TEXT")
    tool_option(p, tool, "regex", "--regex", metavar="RE")
    tool_option(p, tool, "status", "--http-status", metavar="CODE")
    tool_option(p, tool, "poll_every", "--every")
    tool_option(p, tool, "timeout", "--timeout")
    p.add_argument("--run-timeout", default="30s", help="time limit of one check (default 30s)")
    p.add_argument("--cwd", metavar="DIR", help="where the command runs (default: here)")
    _register_wait_changes(waits, command)
    _register_maintain(commands, command)


def _wait_targets(p: Any) -> None:
    """What `wait add` waits for: smart_wait's kind and target, as one option of each kind."""
    kinds = p.add_mutually_exclusive_group(required=True)
    kinds.add_argument("--command", metavar="CMD", help="a shell command to run until it succeeds")
    kinds.add_argument("--file", metavar="PATH", help="a file (or folder) to appear")
    kinds.add_argument(
        "--url", metavar="URL", help="a URL on 127.0.0.1, localhost or [::1] to answer"
    )
    kinds.add_argument("--time", metavar="WHEN", help="an ISO time, or a delay like 10m")
    kinds.add_argument("--manual", metavar="TEXT", help="a condition you will resolve by hand")


def _register_wait_changes(waits: Any, command: Commands) -> None:
    """`wait list`, `check`, `resolve` and `cancel`."""
    p = command(waits, "list", cmd_wait_list, "list waits: the watching ones, newest first")
    tool_option(p, "smart_wait", "task_id", "--task", note="(only its waits)")
    p.add_argument("--status", help="watching (default), resolved, timed_out, cancelled or error")
    p.add_argument("--all", action="store_true", help="waits of every status")
    p.add_argument("--limit", type=int, default=50, help="at most this many (default 50)")

    p = command(
        waits, "check", cmd_wait_check, "poll the waits that are due now (or one wait, due or not)"
    )
    p.add_argument("wait", nargs="?", metavar="WAIT_ID", help="only this wait, now")

    p = command(waits, "resolve", cmd_wait_resolve, "mark a wait met by hand")
    p.add_argument("wait", metavar="WAIT_ID", help="wait id or unambiguous prefix")
    tool_option(p, "smart_wait", "evidence", "--evidence", metavar="TEXT")

    p = command(waits, "cancel", cmd_wait_cancel, "stop waiting")
    p.add_argument("wait", metavar="WAIT_ID", help="wait id or unambiguous prefix")
    tool_option(p, "smart_wait", "reason", "--reason", metavar="TEXT")


def _register_maintain(commands: Any, command: Commands) -> None:
    p = command(
        commands,
        "maintain",
        cmd_maintain,
        "run maintenance now: time out waits, pause idle tasks, archive closed ones, prune",
        "Run now what otherwise runs by itself once an interval: time out waits past their"
        " deadline, cancel the waits of closed tasks, pause tasks idle for 24h (not those"
        " waiting), archive tasks closed 7d ago, deprecate patterns under 70% after 10 trials."
        " Settings: [maintenance] in config.toml.",
    )
    p.add_argument("--dry-run", action="store_true", help="say what would change, change nothing")
