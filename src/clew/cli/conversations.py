"""`clew session` and `clew recall`: the conversation archive."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, BinaryIO, cast

from clew.cli.common import (
    Commands,
    current_time,
    input_limit,
    open_input,
    open_memory,
    print_json,
    read_text,
    show,
    show_lines,
    whole,
)
from clew.cli.options import tool_option
from clew.core.text import counted
from clew.errors import ValidationError

if TYPE_CHECKING:
    from clew.core.turns import Checked


@contextlib.contextmanager
def _read(args: argparse.Namespace, source: str) -> Iterator[Iterable[dict[str, Any]]]:
    """`_messages`, with the file closed when the block ends, read whole or not (a refusal
    before the first message leaves the lines unread)."""
    handle = open_input(source, "messages")
    with handle:
        yield _messages(args, source, handle)


def _messages(args: argparse.Namespace, source: str, handle: BinaryIO) -> Iterable[dict[str, Any]]:
    """The messages of a file (or stdin): JSON Lines are read a line at a time as the
    import takes them (each line at most the input limit), so a file of any length imports
    in constant memory; a JSON document is read whole, within the input limit. Each line
    comes checked (a turns.Checked, which append_turns and import_session take as it is)."""
    from clew.core.turns import read_messages

    limit = input_limit(args)
    name = "stdin" if source == "-" else source
    try:
        head: list[bytes] = []
        while not head or not head[-1].strip():  # up to the first line that holds something
            line = handle.readline(limit + 1)
            if not line:
                break
            head.append(line)
        last = head[-1].removesuffix(b"\n") if head else b""
        first = _message_line(last, name, len(head), limit) if head else None
    except BaseException:
        handle.close()
        raise
    if first is None:  # not one message a line: the whole document, within the limit
        with handle:
            rest = handle.read(limit + 1 - sum(len(h) for h in head))
        text = _decoded(b"".join(head) + rest, name, limit)
        return read_messages(text, name)
    # Checked messages stand for the messages themselves: the library takes them as such.
    return cast("Iterator[dict[str, Any]]", _message_lines(handle, first, name, len(head), limit))


def _message_line(raw: bytes, name: str, number: int, limit: int) -> dict[str, Any] | None:
    """The first line's message when the file is JSON Lines (the line is one message by
    itself), else None."""
    from clew.core import checks

    text = _decoded(raw, name, limit).removeprefix("\ufeff")
    try:
        value = checks.json_value(text, f"{name} line {number}")
    except (checks.NotJson, ValidationError):  # the whole document says what is wrong
        return None
    if not isinstance(value, dict) or isinstance(value.get("messages"), list):
        return None
    return value


def _message_lines(
    handle: BinaryIO, first: dict[str, Any], name: str, number: int, limit: int
) -> Iterator[Checked]:
    """Each message of a JSON Lines file, checked as `read_messages` checks them (an error
    names its line); the file's share read so far reported to the progress bar."""
    from clew.core import checks, meter
    from clew.core.turns import checked

    size = _size(handle)
    done = 0
    with handle:
        # Checked here as import_session checks them, which then takes them as they are
        # (turns.Checked): an error names its line, and no message is checked twice.
        yield checked(first, f"{name} line {number}")
        # At most one byte over the limit a read: a line with no end must not fill memory.
        for raw in iter(lambda: handle.readline(limit + 1), b""):
            number += 1
            done += len(raw)
            line = raw.removesuffix(b"\n")
            if len(line) > limit:
                _decoded(line, name, limit)  # says it is too large
            if not line.strip():
                continue
            where = f"{name} line {number}"
            try:
                # Bounded by `checked`, below, with the same errors.
                message = checks.json_value(_decoded(line, name, limit), where, bound=False)
            except checks.NotJson as exc:
                raise ValidationError(f"{where} is not valid JSON: {exc.reason}") from None
            if number % 1000 == 0:  # in MB read of the file (the messages are not counted)
                meter.report("importing (MB)", done >> 20, None if size is None else size >> 20)
            yield checked(message, where)


def _decoded(data: bytes, name: str, limit: int) -> str:
    if len(data) > limit:
        raise ValidationError(
            f"messages from {name} hold a line (or document) larger than {limit // 2**20} MB;"
            " raise the limit with --max-input-mb (or $CLEW_MAX_INPUT_MB)"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValidationError(f"messages from {name} is not UTF-8 text") from None


def _size(handle: BinaryIO) -> int | None:
    import stat

    try:
        info = os.fstat(handle.fileno())
    except (OSError, ValueError):
        return None
    return info.st_size if stat.S_ISREG(info.st_mode) else None


def _session_fields(args: argparse.Namespace) -> dict[str, Any]:
    prompt = (
        read_text(args.system_prompt_file, "system prompt", input_limit(args))
        if args.system_prompt_file
        else None
    )
    return {
        "workspace": args.workspace or os.getcwd(),
        "model": args.model,
        "title": args.title,
        "task_id": args.task,
        "system_prompt": prompt,
        "at": args.at,
    }


def cmd_new(args: argparse.Namespace) -> int:
    with open_memory(args) as mem:
        session = mem.start_session(key=args.key, **_session_fields(args))
    return show(args, session, session.id)


def cmd_append(args: argparse.Namespace) -> int:
    with _read(args, args.file) as messages, open_memory(args) as mem:
        added = mem.append_turns(args.session, messages, at=args.at)
    numbers = f"{added[0].number}-{added[-1].number}" if added else "none"
    return show(args, added, f"{counted(len(added), 'turn')} added: {numbers}")


def cmd_list(args: argparse.Namespace) -> int:
    from clew.tools.views import session_line

    workspace = None if args.all else (args.workspace or os.getcwd())
    with open_memory(args) as mem:
        sessions = mem.list_sessions(workspace, active_only=args.active, limit=args.limit)
    now = current_time()
    where = "" if args.all else " for this workspace (--all lists every one)"
    return show_lines(
        args,
        sessions,
        lambda s: session_line(s, now),
        f"no sessions{where}; import one with `clew session import FILE`",
    )


def cmd_show(args: argparse.Namespace) -> int:
    from clew.tools.views import session_line

    with open_memory(args) as mem:
        session = mem.get_session(args.session)
        state = mem.session_state(session.id)
        last = max(1, session.turn_count - args.turns + 1)
        recent = (
            mem.recall(session.id, "range", start_turn=last, end_turn=session.turn_count)
            if session.turn_count and args.turns
            else None
        )
    if args.json:
        print_json({"session": session, "state": state, "recent": recent})
        return 0
    from clew.conversations.recall import for_cli

    print(session_line(session, current_time()))
    sys.stdout.write(state.text)
    if recent is not None:
        print()
        sys.stdout.write(for_cli(recent.text, session.id))
    return 0


def cmd_resume(args: argparse.Namespace) -> int:
    from clew.tools.views import context_view

    with open_memory(args) as mem:
        resumed = mem.resume(args.session, workspace=args.workspace, budget=args.budget)
    if args.json:
        print_json(resumed)
        return 0
    session = resumed.session
    print(f"Resuming session {session.id} ({session.turn_count} turns in the archive).")
    sys.stdout.write(context_view(resumed.context))
    return 0


def cmd_context(args: argparse.Namespace) -> int:
    from clew.tools.views import context_view

    prompt = (
        read_text(args.system_prompt_file, "system prompt", input_limit(args))
        if args.system_prompt_file
        else None
    )
    retrieved = (
        read_text(args.retrieved_file, "retrieved context", input_limit(args))
        if args.retrieved_file
        else None
    )
    with open_memory(args) as mem:
        context = mem.assemble_context(
            args.session,
            budget=args.budget,
            system_prompt=prompt,
            retrieved=retrieved,
            task_id=args.task,
        )
    if args.json:
        print_json(context)
    else:
        sys.stdout.write(context_view(context))
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from clew.cli.bar import shown as bar

    with _read(args, args.file) as messages, open_memory(args) as mem, bar():
        session = mem.import_session(messages, **_session_fields(args))
    return show(args, session, session.id)


def cmd_export(args: argparse.Namespace) -> int:
    from clew.cli.bar import shown as bar

    with open_memory(args) as mem:
        session = mem.get_session(args.session).id  # before the file: an unknown one makes none
        if args.output is None or args.output == "-":
            with bar():
                mem.write_session(session, sys.stdout, include_hidden=not args.visible)
            return 0
        try:
            handle = open(args.output, "x", encoding="utf-8")  # noqa: SIM115 - closed below
        except FileExistsError:
            raise ValidationError(f"{args.output} exists; choose a new file name") from None
        except OSError as exc:
            raise ValidationError(f"cannot write {args.output}: {exc.strerror}") from None
        try:
            with handle, bar():
                count = mem.write_session(session, handle, include_hidden=not args.visible)
        except BaseException as exc:
            os.remove(args.output)  # the file was new: no half of an export stays behind
            if isinstance(exc, OSError):
                raise ValidationError(f"cannot write {args.output}: {exc.strerror}") from None
            raise
    print(f"{counted(count, 'message')} written to {args.output}", file=sys.stderr)
    return 0


def cmd_end(args: argparse.Namespace) -> int:
    with open_memory(args) as mem:
        session = mem.end_session(args.session)
    return show(args, session, f"session {session.id} ended; `clew session resume` reopens it")


def cmd_recall(args: argparse.Namespace) -> int:
    chosen = [
        (name, value)
        for name, value in (
            ("search", args.search),
            ("range", args.range),
            ("tool_calls", args.tool_calls),
            ("summary", args.summary or None),
            ("around", args.around),
            ("source", args.source),
        )
        if value is not None
    ]
    if len(chosen) != 1:
        raise ValidationError(
            "give exactly one of --search, --range, --tool-calls, --summary, --around, --source"
        )
    from clew.conversations.recall import for_cli

    action, value = chosen[0]
    options: dict[str, Any] = {}
    if action == "range":
        first, last = turn_range(value)
        options = {"start_turn": first, "end_turn": last}
    elif action in _KEYWORDS:
        options = {_KEYWORDS[action]: value}
    with open_memory(args) as mem:
        session, workspace, everywhere = args.session, None, ""
        if session is None:
            workspace = os.getcwd()
            if action == "search" and not mem.list_sessions(workspace, limit=1):
                # Sessions imported from elsewhere (Codex's rollouts name the folder Codex
                # ran in): a search here looks through every session of the store.
                everywhere = f"clew: no session belongs to {workspace}; searched every session"
                workspace = None
            if action != "search":
                newest = mem.list_sessions(workspace, limit=1)
                if not newest:
                    raise ValidationError(
                        f"no session belongs to {workspace}: name one (clew sessions --all)"
                    )
                session = newest[0].id
        try:
            found = mem.recall(
                session,
                action,
                workspace=workspace,
                limit=args.limit,
                budget=args.budget,
                **options,
            )
        except ValidationError as exc:
            raise ValidationError(_in_cli_terms(str(exc))) from None
    if everywhere:  # said once the search answered: a refusal stays one line
        print(everywhere + " of this store", file=sys.stderr)
    found = found._replace(text=for_cli(found.text, found.session_id))
    if args.json:
        print_json(found)
    else:
        sys.stdout.write(found.text)
    return 0


# Memory.recall's arguments, and the options of `clew recall` that give them.
_KEYWORDS = {"search": "query", "tool_calls": "tool_name", "around": "turn", "source": "entry_id"}
_OPTIONS = {
    "start_turn": "--range",
    "end_turn": "--range",
    "turn": "--around",
    "query": "--search",
    "tool_name": "--tool-calls",
    "entry_id": "--source",
}


def _in_cli_terms(message: str) -> str:
    """An error of Memory.recall, naming the command's options instead of its arguments."""
    import re

    needs = re.fullmatch(r"recall action '(\w+)' needs (\w+)", message)
    if needs and needs.group(2) in _OPTIONS:
        return f"{_OPTIONS[needs.group(2)]} needs a value"
    first = message.split(" ", 1)[0]
    return _OPTIONS[first] + message[len(first) :] if first in _OPTIONS else message


def turn_range(values: list[str]) -> tuple[int, int]:
    """Turns A to B from `--range A B`, `--range A-B`, `--range A..B` or `--range A`."""
    import re

    text = " ".join(values).strip()
    found = re.fullmatch(r"(\d{1,19})(?:\s*(?:-|\.\.|\s)\s*(\d{1,19}))?", text)
    if found is None:
        raise ValidationError(
            f"--range {text[:40]!r} is not turns like 1-3 (or 1 3, or 5 for one turn)"
        )
    first = int(found.group(1))
    last = first if found.group(2) is None else int(found.group(2))
    if last < first:
        raise ValidationError(f"--range {first}-{last} goes backwards; give it as {last}-{first}")
    return first, last


def _new_session_options(p: Any) -> None:
    p.add_argument("--workspace", metavar="DIR", help="its workspace (default: this folder)")
    p.add_argument("--model", help="the model the conversation is with")
    p.add_argument("--title", help="a title to list it by")
    p.add_argument("--task", metavar="TASK_ID", help="its task (whose state joins its prompt)")
    p.add_argument("--system-prompt-file", metavar="FILE", help="its system prompt ('-': stdin)")
    _at_option(p)


def _at_option(p: Any) -> None:
    p.add_argument(
        "--at",
        metavar="TIME",
        help="when it was said, for a conversation recorded after it happened:"
        " 2026-05-03, 2026-05-03T14:20 or an age like 3d (default: now)",
    )


def register(commands: Any, command: Commands) -> None:
    """Add `clew session` and `clew recall`."""
    group = commands.add_parser(
        "session",
        help="conversation sessions: every message kept verbatim, resumable",
        description="Archive an agent's conversation turn by turn, list and resume sessions,"
        " import and export them (OpenAI chat messages or Responses / Agents SDK items, JSON"
        " or JSONL).",
    )
    sub = group.add_subparsers(dest="session_command", metavar="SESSION_COMMAND")
    sub.required = True
    _register_sessions(sub, command)
    _register_prompts(sub, command)
    _register_files(sub, command)
    _register_recall(commands, command)


def _register_sessions(sub: Any, command: Commands) -> None:
    """`session new`, `append`, `list`, `show` and `end`."""
    p = command(sub, "new", cmd_new, "start a session; prints its id")
    _new_session_options(p)
    p.add_argument("--key", help="your own unique name for it (usable wherever an id is)")

    p = command(sub, "append", cmd_append, "add messages to a session (JSON or JSONL), all or none")
    p.add_argument("session", metavar="SESSION", help="session id, prefix or key")
    p.add_argument("file", metavar="FILE", help="the messages ('-': stdin)")
    _at_option(p)

    p = command(sub, "list", cmd_list, "list this workspace's sessions, most recent first")
    tool_option(p, "session_list", "all", "--all")
    tool_option(p, "session_list", "workspace", "--workspace", metavar="DIR")
    tool_option(p, "session_list", "active", "--active")
    # The tool's limit is a page for a model's context (20); a listing here shows them all.
    p.add_argument("--limit", type=whole, help="at most this many")

    p = command(sub, "show", cmd_show, "show a session: its state and its newest turns")
    p.add_argument("session", metavar="SESSION", help="session id, prefix or key")
    p.add_argument("--turns", type=whole, default=10, help="newest turns shown (default 10)")

    p = command(sub, "end", cmd_end, "mark a session ended (resuming reopens it)")
    p.add_argument("session", metavar="SESSION", help="session id, prefix or key")


def _register_prompts(sub: Any, command: Commands) -> None:
    """`session resume` and `context`: a session's next prompt."""
    p = command(
        sub,
        "resume",
        cmd_resume,
        "reopen a session (the given one, else this workspace's newest) and print its prompt",
        "Make the session active again and assemble the prompt to go on with: system prompt,"
        " states, and as many recent turns as fit the budget. --json gives the messages to"
        " load into an agent.",
    )
    p.add_argument("session", metavar="SESSION", nargs="?", help="session id, prefix or key")
    p.add_argument("--workspace", metavar="DIR", help="the newest session of this workspace")
    p.add_argument("--budget", type=whole, default=32_000, help="prompt tokens (default 32000)")

    p = command(
        sub,
        "context",
        cmd_context,
        "assemble the next prompt of a session within a token budget, and explain it",
    )
    p.add_argument("session", metavar="SESSION", help="session id, prefix or key")
    p.add_argument("--budget", type=whole, default=32_000, help="prompt tokens (default 32000)")
    p.add_argument("--task", metavar="TASK_ID", help="include this task's state and memory")
    p.add_argument("--system-prompt-file", metavar="FILE", help="use this system prompt")
    p.add_argument("--retrieved-file", metavar="FILE", help="retrieved context to include")


def _register_files(sub: Any, command: Commands) -> None:
    """`session import` and `export`."""
    p = command(sub, "import", cmd_import, "import messages (JSON or JSONL) as a new session")
    p.add_argument("file", metavar="FILE", help="the messages ('-': stdin)")
    _new_session_options(p)

    p = command(sub, "export", cmd_export, "write a session's messages as JSONL, exactly")
    p.add_argument("session", metavar="SESSION", help="session id, prefix or key")
    p.add_argument("--output", "-o", metavar="FILE", help="a new file to write (default: stdout)")
    p.add_argument("--visible", action="store_true", help="leave out popped or cleared turns")


def _register_recall(commands: Any, command: Commands) -> None:
    """`clew recall`: what conversation_recall does."""
    p = command(
        commands,
        "recall",
        cmd_recall,
        "pull earlier turns of a session back: search, a range, a tool's calls, a summary",
        "conversation_recall from the command line: compact text within a token budget;"
        " tool results are shortened first, then the oldest hits, and the output says how"
        " to fetch the rest.",
    )
    tool = "conversation_recall"
    tool_option(p, tool, "session", "session", nargs="?", metavar="SESSION")
    tool_option(p, tool, "query", "--search", metavar="QUERY", note="(the best turns first)")
    p.add_argument(
        "--range",
        nargs="+",
        metavar="A-B",
        help="turns A to B, inclusive: 1-3 or 1 3 (one number: that turn)",
    )
    tool_option(
        p, tool, "tool_name", "--tool-calls", metavar="NAME", note="(the results of its calls)"
    )
    p.add_argument("--summary", action="store_true", help="the session state and statistics")
    tool_option(p, tool, "turn", "--around", metavar="N", note="(the turns around it)")
    tool_option(
        p, tool, "entry_id", "--source", metavar="ENTRY_ID", note="(the turns it came from)"
    )
    tool_option(p, tool, "limit", "--limit")
    p.add_argument("--budget", type=whole, default=8000, help="output tokens (default 8000)")
