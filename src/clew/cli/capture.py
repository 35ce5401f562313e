"""`clew capture`: archive a coding assistant's transcript, as its hooks run it.

As a hook (`--hook`) it reads the assistant's JSON event on stdin (`session_id`,
`transcript_path`, `cwd`, `hook_event_name`), finds the store from the event's folder as
`clew prime --hook` does, and appends the transcript's new lines to the session keyed by the
assistant's session id. A hook must never block the agent: whatever goes wrong is one line on
stderr and exit status 0, and nothing is printed on stdout (a hook's stdout can enter the
prompt; only `clew prime` means to put something there).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from clew.cli.common import Commands, open_memory, print_json
from clew.core.text import counted
from clew.errors import ValidationError

HOOK_INPUT_CHARS = 1_000_000  # a hook's event is small; never read a stream without end
FORMATS = ("claude-code", "codex")


def cmd_capture(args: argparse.Namespace) -> int:
    if args.hook:
        return _capture_for_hook(args)
    if args.codex_notify is not None:
        return _capture_for_codex(args)
    if args.transcript is None:
        raise ValidationError(
            "give the transcript file to capture (or --hook, to read a hook's event on stdin)"
        )
    with open_memory(args) as mem:
        done = mem.capture_transcript(
            args.transcript, format=args.format, key=args.session, workspace=args.workspace
        )
    report(done, args.json)
    return 0


def report(done: Any, as_json: bool) -> None:
    """Print what a capture did: one line, or JSON."""
    if done.session is None:
        if as_json:
            print_json(
                {
                    "session": None,
                    "key": None,
                    "added": 0,
                    "skipped": done.skipped,
                    "not_json": done.bad,
                    "turns": 0,
                }
            )
        else:
            skipped = counted(done.skipped, "line")
            print(f"no messages in the transcript ({skipped} skipped); nothing kept")
        return
    if as_json:
        print_json(
            {
                "session": done.session.id,
                "key": done.session.key,
                "added": done.added,
                "skipped": done.skipped,
                "not_json": done.bad,
                "turns": done.session.turn_count,
            }
        )
        return
    bad = f", {done.bad} not JSON" if done.bad else ""
    print(
        f"session {done.session.key or done.session.id}: {counted(done.added, 'new turn')},"
        f" {done.session.turn_count} in all ({counted(done.skipped, 'line')} skipped{bad})"
    )


def _capture_for_hook(args: argparse.Namespace) -> int:
    """Capture as a hook: never fail the session, never print on stdout."""
    import os

    try:
        from clew.core.checks import json_value

        raw = "" if sys.stdin.isatty() else sys.stdin.read(HOOK_INPUT_CHARS)
        event = json_value(raw or "{}", "the hook's input")
        if not isinstance(event, dict):
            raise ValidationError("the hook's input is not a JSON object")
        path = event.get("transcript_path")
        if not isinstance(path, str) or not path:
            raise ValidationError("the hook's event names no transcript_path")
        if not os.path.exists(path):
            return 0  # a session's start comes before its transcript: nothing to capture yet
        folder = event.get("cwd")
        if isinstance(folder, str) and os.path.isdir(folder):
            os.chdir(folder)
        else:
            folder = None
        session = event.get("session_id")
        from clew.conversations.transcripts import subagent

        agent = subagent(event)  # a subagent's own transcript (newer Claude Codes keep one)
        with open_memory(args) as mem:
            mem.capture_transcript(
                path,
                format=args.format,
                key=session if isinstance(session, str) and session else None,
                workspace=args.workspace or folder,
                end=event.get("hook_event_name") == "SessionEnd",
            )
            if agent is not None and os.path.exists(agent[0]):
                mem.capture_transcript(
                    agent[0], key=agent[1], workspace=args.workspace or folder, end=True
                )
    except Exception as exc:
        message = str(exc).replace("\n", " ") or type(exc).__name__
        print(f"clew capture: {message}", file=sys.stderr)
    return 0


def _capture_for_codex(args: argparse.Namespace) -> int:
    """Capture as Codex's notify program: its JSON event names the session (`thread-id`) and
    the folder (`cwd`); its rollout is found under $CODEX_HOME (else ~/.codex). Never fails,
    never prints on stdout, as a hook."""
    import os

    try:
        from clew.cli.integrate import codex_home
        from clew.core.checks import json_value
        from clew.integrations.codex import find_rollout

        event = json_value(args.codex_notify, "the notification")
        if not isinstance(event, dict) or event.get("type") != "agent-turn-complete":
            return 0  # another kind of notification: nothing to capture
        thread = event.get("thread-id")
        if not isinstance(thread, str) or not thread:
            raise ValidationError("the notification names no thread-id")
        rollout = find_rollout(codex_home(), thread)
        if rollout is None:
            raise ValidationError(f"no rollout of session {thread} under {codex_home()}")
        folder = event.get("cwd")
        if isinstance(folder, str) and os.path.isdir(folder):
            os.chdir(folder)
        with open_memory(args) as mem:
            mem.capture_transcript(rollout, format="codex", workspace=args.workspace)
    except Exception as exc:  # a notify program must not disturb the agent, whatever fails
        message = str(exc).replace("\n", " ") or type(exc).__name__
        print(f"clew capture: {message}", file=sys.stderr)
    return 0


def register(commands: Any, command: Commands) -> None:
    """Add `clew capture`."""
    p = command(
        commands,
        "capture",
        cmd_capture,
        "archive a coding assistant's transcript (new lines only; for hooks: --hook)",
        "Archive the messages of a Claude Code transcript (or, with --format codex, a Codex"
        " CLI rollout) into the session keyed by its session id, verbatim: only the lines the"
        " session does not hold yet, so it can run after every prompt and tool call. With"
        " --hook it reads the hook's JSON event on stdin (transcript_path, session_id, cwd),"
        " finds the store from the event's folder, prints nothing, and never fails: an error"
        " is one line on stderr and exit status 0. `clew integrate claude-code` installs it.",
    )
    p.add_argument("transcript", nargs="?", metavar="FILE", help="the transcript (JSONL) file")
    p.add_argument(
        "--hook",
        action="store_true",
        help="run as an assistant's hook: read its JSON event from stdin, never fail",
    )
    p.add_argument(
        "--codex-notify",
        metavar="JSON",
        help="run as the Codex CLI's notify program: capture the rollout of the session the"
        " event names (`clew integrate codex` installs it); never fails",
    )
    p.add_argument("--format", choices=FORMATS, default="claude-code", help="the file's format")
    p.add_argument("--session", metavar="KEY", help="the session's key (default: its session id)")
    p.add_argument("--workspace", metavar="DIR", help="the session's folder (default: the event's)")
