"""`clew note`, `entries`, `search`, `seen`, `fix`: the layer-2 archive."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from clew.cli.common import (
    Commands,
    current_time,
    input_limit,
    open_memory,
    print_json,
    read_text,
    show,
    show_lines,
    step_ref,
    tags,
    whole,
)
from clew.cli.options import tool_option
from clew.errors import ClewError, ValidationError

ENTRY_TYPES = (
    "decision, error, tool_result, user_instruction, discovery, artifact, context, constraint"
    " or question"
)


def _numbers(mem: Any, task_id: str | None) -> dict[str, int]:
    """Step id -> number, for showing steps by number."""
    if task_id is None:
        return {}
    return {s.id: n for n, s in enumerate(mem.get_task(task_id).plan, 1)}


def cmd_note(args: argparse.Namespace) -> int:
    if args.detail is not None and args.detail_file is not None:
        raise ValidationError("give --detail or --detail-file, not both")
    detail = (
        read_text(args.detail_file, "detail", input_limit(args))
        if args.detail_file
        else args.detail
    )
    relevant = [step_ref(s) or s for s in tags(args.relevance_to)]
    with open_memory(args) as mem:
        entry = mem.add_entry(
            args.type,
            args.summary,
            task_id=args.task,
            detail=detail,
            step=step_ref(args.subtask),
            tags=tags(args.tags),
            relevance_to=relevant,
            supersedes=args.supersedes,
            sources=args.source or (),
            command=args.command,
            resolution=args.resolution,
        )
    return show(args, entry, entry.id)


def cmd_entries(args: argparse.Namespace) -> int:
    from clew.tools.views import entry_line, entry_view

    if args.id is not None:
        with open_memory(args) as mem:
            entry = mem.get_entry(args.id)
        return show(args, entry, entry_view(entry, current_time()))
    with open_memory(args) as mem:
        if args.relevant_to is not None:
            if args.task is None:
                raise ValidationError("--relevant-to needs --task")
            step = step_ref(args.relevant_to) or args.relevant_to
            entries = mem.query_relevant(args.task, step, limit=args.limit or 20)
        else:
            entries = mem.list_entries(
                args.task,
                type=args.type or None,
                status=args.status,
                step=step_ref(args.step),
                tags=args.tag or (),
                since=args.since,
                until=args.until,
                limit=args.limit,
            )
        numbers = _numbers(mem, args.task)
    now = current_time()
    return show_lines(
        args,
        entries,
        lambda e: entry_line(e, now, numbers),
        "no entries match; record some with `clew note` or `clew task record`",
    )


def cmd_search(args: argparse.Namespace) -> int:
    from clew.tools.views import record_hit_line

    with open_memory(args) as mem:
        hits = mem.search_all(
            args.query,
            kinds=args.kind,
            task_id=args.task,
            session_id=args.session,
            step=step_ref(args.step),
            type=args.type or None,
            status=args.status,
            tags=args.tag or (),
            since=args.since,
            until=args.until,
            mode=args.mode,
            limit=args.limit,
            explain=args.explain,
            include_superseded=args.include_superseded,
        )
        behind = _meaning_behind(mem, args.mode)
        steps = _steps_of(mem, hits)
    now = current_time()
    if behind:  # on stderr: stdout stays the hits (or their JSON)
        print(behind, file=sys.stderr)
    if args.json:
        print_json([_hit_json(h, args.query, steps) for h in hits])
        return 0
    return show_lines(args, hits, lambda h: record_hit_line(h, now, steps), "nothing found")


def _steps_of(mem: Any, hits: Sequence[Any]) -> dict[str, tuple[int, str]]:
    """The number and title of each plan step the hits belong to, by step id: people know
    a step as "step 4 — Pull the image", not by its id."""
    steps: dict[str, tuple[int, str]] = {}
    for task_id in {h.task_id for h in hits if h.step_id and h.task_id}:
        try:
            plan = mem.get_task(task_id).plan
        except ClewError:  # forgotten since the search: the id stays
            continue
        steps.update({s.id: (n, s.title) for n, s in enumerate(plan, 1)})
    return steps


def _hit_json(hit: Any, query: str, steps: dict[str, tuple[int, str]]) -> dict[str, Any]:
    """A hit for programs: its snippet as plain text with the matched words' offsets (the
    brackets are for a terminal), and its step's number and title beside its id."""
    from clew.models import to_jsonable
    from clew.search.hits import plain_snippet

    shown: dict[str, Any] = to_jsonable(hit)
    shown["snippet"], matches = plain_snippet(hit.snippet, query)
    shown["matches"] = [list(m) for m in matches]
    number, title = steps.get(hit.step_id or "", (None, None))
    shown["step"], shown["step_title"] = number, title
    return shown


def _meaning_behind(mem: Any, mode: str) -> str | None:
    """A note when a search ranked by meaning while the vector index is behind."""
    from clew.search.vectors import embedder_available

    if mode == "keyword" or mem.read_only or not embedder_available():
        return None  # a read-only store cannot catch up: nothing to suggest
    status = mem.index_status()
    if not status.pending:
        return None
    return (
        f"meaning: {status.lag()} records (each search embeds some first);"
        " `clew index update` embeds the rest now"
    )


def cmd_seen(args: argparse.Namespace) -> int:
    from clew.tools.views import error_history_view

    error = read_text("-", "the error", input_limit(args)) if args.error == "-" else args.error
    with open_memory(args) as mem:
        found = mem.seen_before(error, command=args.command)
    if args.json:
        print_json({**found._asdict(), "seen": found.seen, "worked": found.worked})
    else:
        print(error_history_view(found, current_time()))
    return 0


def cmd_fix(args: argparse.Namespace) -> int:
    with open_memory(args) as mem:
        fix = mem.record_fix(args.error, args.description, worked=args.worked)
    return show(args, fix, f"{fix.id} {'worked' if fix.worked else 'did not work'}")


def _filters(p: Any, tool: str) -> None:
    """The exact filters of entries, as `tool` (memory_query or memory_search) has them."""
    tool_option(p, tool, "type", "--type", action="append", note="(repeatable)")
    tool_option(p, tool, "tags", "--tag", action="append", note="(repeatable: all)")
    tool_option(p, tool, "since", "--since")
    tool_option(p, tool, "until", "--until")


def register(commands: Any, command: Commands) -> None:
    """Add the archive commands."""
    _register_note(commands, command)
    _register_entries(commands, command)
    _register_search(commands, command)
    _register_errors(commands, command)


def _register_note(commands: Any, command: Commands) -> None:
    p = command(
        commands,
        "note",
        cmd_note,
        "store an archive entry (with or without a task); prints its id",
        "Store one typed entry in full: a decision, error, tool_result, user_instruction,"
        " discovery, artifact, context, constraint or question.",
    )
    p.add_argument("task", nargs="?", metavar="TASK_ID", help="the task it belongs to, if any")
    p.add_argument("--type", required=True, help=ENTRY_TYPES)
    p.add_argument("--summary", required=True, metavar="TEXT", help="1-2 sentences")
    p.add_argument("--detail", metavar="TEXT", help="the full content, verbatim")
    p.add_argument("--detail-file", metavar="FILE", help="read the detail from FILE ('-': stdin)")
    p.add_argument("--tags", metavar="A,B", help="comma-separated tags (matched exactly)")
    p.add_argument("--subtask", metavar="STEP", help="the step it belongs to (number or id)")
    p.add_argument("--relevance-to", metavar="S1,S2", help="steps it matters for (numbers or ids)")
    p.add_argument("--supersedes", metavar="ENTRY_ID", help="an older entry this one replaces")
    p.add_argument(
        "--source",
        action="append",
        metavar="KIND:ID",
        help="where it came from: action:ID, message:ID, turn:ID or entry:ID (repeatable)",
    )
    p.add_argument("--command", help="for an error: the command that failed")
    p.add_argument("--resolution", metavar="TEXT", help="for an error: how it was resolved")


def _register_entries(commands: Any, command: Commands) -> None:
    """`clew entries`: what memory_query does, and one entry in full."""
    p = command(
        commands,
        "entries",
        cmd_entries,
        "list archive entries by task, type, status, step, tags and time, newest first",
        "List entries, newest first, filtered exactly; with ENTRY_ID, show that entry in full.",
    )
    p.add_argument("id", nargs="?", metavar="ENTRY_ID", help="show this entry in full")
    tool_option(p, "memory_query", "task_id", "--task", note="(only its entries)")
    _filters(p, "memory_query")
    tool_option(p, "memory_query", "status", "--status")
    tool_option(p, "memory_query", "step", "--step", note="(only its entries; needs --task)")
    tool_option(
        p,
        "memory_query",
        "relevant_to",
        "--relevant-to",
        metavar="STEP",
        note="(what matters for it: its entries, those relevant to it)",
    )
    # The tool's limit is a page for a model's context (20); a listing here shows them all.
    p.add_argument("--limit", type=whole, help="at most this many entries")


def _register_search(commands: Any, command: Commands) -> None:
    """`clew search`: what memory_search does."""
    p = command(
        commands,
        "search",
        cmd_search,
        "search everything recorded, best first; ask in plain words",
        "Search archive entries, task messages, commands with their output, conversation"
        " turns and the trace's decisions in one list, best first, each hit with its score,"
        " its kind and the command that opens it. A question in plain words works: records"
        " holding more of its words rank higher; exact phrases, identifiers (ERR_CONN_RESET,"
        " src/auth.py, v1.2.3), a speaker, a tool or a time it names count too; with the"
        " vectors extra, meaning too."
        ' "quoted phrase", -exclude and prefix* work.',
    )
    tool = "memory_search"
    tool_option(p, tool, "query", "query")
    tool_option(
        p,
        tool,
        "kinds",
        "--kind",
        action="append",
        metavar="KIND",
        note="(repeatable, or a comma list)",
    )
    tool_option(p, tool, "include_superseded", "--include-superseded")
    tool_option(p, tool, "task_id", "--task", note="(only its records; turns: of its sessions)")
    tool_option(p, tool, "session", "--session")
    tool_option(
        p,
        tool,
        "step",
        "--step",
        note="(with --task: only that step's entries, commands and decisions)",
    )
    _filters(p, tool)
    p.add_argument("--status", help="entries only: active, superseded or resolved")
    tool_option(p, tool, "limit", "--limit")
    tool_option(p, tool, "mode", "--mode")
    tool_option(p, tool, "explain", "--explain")


def _register_errors(commands: Any, command: Commands) -> None:
    """`clew seen` and `clew fix`."""
    p = command(
        commands,
        "seen",
        cmd_seen,
        "have I seen this error before, and what fixed it? (fingerprint, and failed commands'"
        " output)",
    )
    p.add_argument("error", help="the error text ('-': read it from stdin)")
    p.add_argument("--command", help="the command that failed (part of the fingerprint)")

    p = command(commands, "fix", cmd_fix, "record a fix tried for an error, and whether it worked")
    p.add_argument("error", metavar="ERROR_ID", help="the error entry's id")
    p.add_argument("description", help="what was tried")
    verdict = p.add_mutually_exclusive_group(required=True)
    verdict.add_argument("--worked", action="store_true", help="it fixed the error (resolves it)")
    verdict.add_argument("--failed", action="store_true", help="it did not fix the error")
