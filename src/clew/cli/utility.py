"""`clew ask`, `work`, `jobs`, `usage`: the utility model and its queued work."""

from __future__ import annotations

import argparse
from typing import Any

from clew.cli.common import (
    Commands,
    folder_task,
    open_memory,
    print_json,
    whole,
)


def cmd_ask(args: argparse.Namespace) -> int:
    with open_memory(args) as mem:
        answer = mem.ask(folder_task(mem, args.id)[0], args.question)
    if args.json:
        print_json(answer)
    else:
        print(answer.text)
        if answer.source != "model" and answer.note:
            print(f"(answered from the records: {answer.note})")
    return 0


def cmd_work(args: argparse.Namespace) -> int:
    from clew.jobs.worker import drain

    checked: list[Any] = []
    upkeep = None
    with open_memory(args) as mem:
        if args.background:
            done = drain(mem)  # polls the waits too, while any is watched
        else:
            from clew.cli.bar import shown as bar

            with bar():
                done = mem.run_jobs(limit=args.limit)
            if mem.maintenance_due():
                upkeep = mem.maintain(trigger="worker")
            checked = mem.check_waits()
    if args.json:  # the jobs, as ever (`clew wait check --json` details the waits)
        print_json(done)
        return 0
    for check in checked:
        print(f"wait {check.wait.id} {check.outcome}: {check.evidence}")
    for action in upkeep.actions if upkeep else ():
        print(f"maintenance: {action.id} {action.action.replace('_', ' ')}: {action.detail}")
    for job in done:
        result = job.result or {}
        made = len(result.get("entries", []))
        how = result.get("source", "")
        note = f"; {result['note']}" if result.get("note") else ""
        error = f": {job.error}" if job.error else ""
        print(f"{job.id} {job.kind} {job.status.value} ({how}, {made} entries{note}){error}")
    if not done and not checked:
        print("no queued jobs" + ("" if args.background else "; no wait was due"))
    return 0


def cmd_jobs(args: argparse.Namespace) -> int:
    with open_memory(args) as mem:
        jobs = mem.list_jobs(status=args.status, task_id=args.task, limit=args.limit)
    if args.json:
        print_json(jobs)
        return 0
    for job in jobs:
        why = f"  {job.error}" if job.error else ""
        print(
            f"{job.id}  {job.kind:<9} {job.status.value:<8} task {job.task_id}"
            f"  tries {job.attempts}  {job.created_at[:19]}{why}"
        )
    if not jobs:
        print("no jobs")
    return 0


def cmd_usage(args: argparse.Namespace) -> int:
    with open_memory(args) as mem:
        usage = mem.usage(args.task, days=args.days)
    if args.json:
        print_json(usage)
        return 0
    print(
        f"{usage.calls} model calls, {usage.tokens:,} tokens in {args.days} days"
        f" ({usage.failed_calls} failed)"
    )
    for day, calls, tokens in usage.by_day:
        print(f"  {day}  {calls:>5} calls  {tokens:>10,} tokens")
    for task_id, calls, tokens in usage.by_task[:10]:
        print(f"  task {task_id or '-':<10}  {calls:>5} calls  {tokens:>10,} tokens")
    caps = ", ".join(f"{k.replace('_', ' ')} {v:,}" for k, v in usage.limits.items())
    print(f"caps: {caps}")
    return 0


def register(commands: Any, command: Commands) -> None:
    """Add the utility-model commands."""
    p = command(
        commands,
        "ask",
        cmd_ask,
        "ask a free question about a task (a model if configured, else the records)",
        'Ask "where was I?", "what failed?", "should I change the plan?". With a model: from'
        " the running summary and the messages since (complex questions to the large model if"
        " one is configured). Without one, or past a cap: from the records, saying so.",
    )
    p.add_argument(
        "id", nargs="?", help="task id or unambiguous prefix (default: this folder's active task)"
    )
    p.add_argument("question", help="the question, in quotes")

    p = command(
        commands,
        "work",
        cmd_work,
        "do the queued jobs now, poll the waits that are due, and maintenance when it is due",
        "Do the jobs queued by writes (the extraction of finished steps, running summaries),"
        " poll the waits that are due, and run maintenance if its interval has passed."
        " Normally a background worker does this right after the write, and stays while waits"
        " are watched; run this from cron or after setting CLEW_WORKER=off.",
    )
    p.add_argument("--limit", type=whole, help="at most this many jobs")
    p.add_argument(
        "--background",
        action="store_true",
        help="as the store's one background worker (do nothing if another is working); stay"
        " and poll while waits are watched",
    )

    p = command(commands, "jobs", cmd_jobs, "list queued, running, done and failed jobs")
    p.add_argument("--status", help="pending, running, done or failed")
    p.add_argument("--task", help="only this task's jobs")
    p.add_argument("--limit", type=whole, default=50, help="at most this many (default 50)")

    p = command(commands, "usage", cmd_usage, "what the utility model cost: calls and tokens")
    p.add_argument("--task", help="only this task's calls")
    p.add_argument("--days", type=whole, default=7, help="over the last DAYS days (default 7)")
