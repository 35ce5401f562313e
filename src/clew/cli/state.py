"""`clew state` and `clew prime`: the layer-1 state for prompts and hooks."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from clew.cli.common import (
    Commands,
    open_memory,
    print_json,
    whole,
)

HOOK_INPUT_CHARS = 1_000_000  # a hook's event is small; never read a stream without end


def cmd_state(args: argparse.Namespace) -> int:
    with open_memory(args) as mem:
        state = mem.state(args.id, budget=args.budget)
    if args.json:
        print_json(state)
    else:
        sys.stdout.write(state.text)
    return 0


def cmd_prime(args: argparse.Namespace) -> int:
    if args.hook:
        return _prime_for_hook(args)
    with open_memory(args) as mem:
        primer = mem.prime(args.workspace, budget=args.budget, limit=args.limit)
    if args.json:
        print_json(primer)
    else:
        sys.stdout.write(primer.text)
    return 0


def _prime_for_hook(args: argparse.Namespace) -> int:
    """An assistant's hook: the hook's JSON on stdin names the folder the session is in
    (`cwd`); the store and the workspace are found from there. A hook must not break the
    session, so a failure is one line on stderr and exit 0."""
    import os

    from clew.checks import json_value
    from clew.errors import ClewError

    try:
        hook = "" if sys.stdin.isatty() else sys.stdin.read(HOOK_INPUT_CHARS)
        event = json_value(hook or "{}", "the hook's input")
    except (ClewError, UnicodeDecodeError):
        event = {}
    folder = event.get("cwd") if isinstance(event, dict) else None
    if isinstance(folder, str) and os.path.isdir(folder):
        os.chdir(folder)
    try:
        with open_memory(args) as mem:
            primer = mem.prime(args.workspace, budget=args.budget, limit=args.limit)
    except ClewError as exc:
        print(f"clew: {exc}", file=sys.stderr)
        return 0
    sys.stdout.write(primer.text)
    return 0


def register(commands: Any, command: Commands) -> None:
    """Add `clew state` and `clew prime`."""
    p = command(
        commands,
        "state",
        cmd_state,
        "print a task's state: YAML for the prompt, within a token budget",
        "Print the task state an agent keeps in its prompt: goal, plan, current and next"
        " steps, constraints, decisions, errors, findings, questions, workspace changes."
        " It always fits the budget; whatever it leaves out is listed under `hidden` with"
        " the command that recalls it.",
    )
    p.add_argument("id", help="task id or unambiguous prefix")
    p.add_argument(
        "--budget", type=whole, help="token budget (default: $CLEW_STATE_BUDGET, config, 1500)"
    )

    p = command(
        commands,
        "prime",
        cmd_prime,
        "print the state and brief of this workspace's active tasks (for agent hooks)",
        "Print what an assistant should know at session start or after compaction: the"
        " state and the where-was-I brief of each active task of this workspace (tasks whose"
        " workspace holds the current folder or lies within it).",
    )
    p.add_argument("--workspace", metavar="DIR", help="the workspace (default: this folder)")
    p.add_argument("--budget", type=whole, help="token budget of each task's state")
    p.add_argument("--limit", type=whole, default=3, help="at most this many tasks (default 3)")
    p.add_argument(
        "--hook",
        action="store_true",
        help="run as an assistant's hook: read its JSON from stdin, use its cwd, never fail",
    )
