"""`clew state`, `clew prime` and `clew context`: the layer-1 state for prompts and hooks,
and a task's context within a budget."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from clew.cli.common import (
    Commands,
    input_limit,
    open_memory,
    print_json,
    read_text,
    whole,
)
from clew.cli.options import task_id, tool_option

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


def cmd_context(args: argparse.Namespace) -> int:
    prompt = (
        read_text(args.system_prompt_file, "system prompt", input_limit(args))
        if args.system_prompt_file
        else None
    )
    with open_memory(args) as mem:
        context = mem.assemble(
            args.session,
            task=args.task,
            budget=args.budget,
            reserve=args.reserve,
            query=args.query,
            system_prompt=prompt,
        )
    if args.json:
        print_json(context)
        return 0
    from clew.tools.views import context_view

    if args.explain or args.session is not None:
        sys.stdout.write(context_view(context))
    else:
        sys.stdout.write(str(context.messages[0]["content"]) + "\n")
    return 0


def _prime_for_hook(args: argparse.Namespace) -> int:
    """An assistant's hook: the hook's JSON on stdin names the folder the session is in
    (`cwd`); the store and the workspace are found from there. A hook must not break the
    session, so a failure is one line on stderr and exit 0."""
    import os

    from clew.core.checks import json_value
    from clew.errors import ClewError

    try:
        hook = "" if sys.stdin.isatty() else sys.stdin.read(HOOK_INPUT_CHARS)
        event = json_value(hook or "{}", "the hook's input")
    except (ClewError, UnicodeDecodeError):
        event = {}
    folder = event.get("cwd") if isinstance(event, dict) else None
    if isinstance(folder, str) and os.path.isdir(folder):
        os.chdir(folder)
    # The session starting (Claude Code's session id): a resumed one gets its own list back.
    session = event.get("session_id") if isinstance(event, dict) else None
    try:
        with open_memory(args) as mem:
            primer = mem.prime(
                args.workspace,
                budget=args.budget,
                limit=args.limit,
                session=session if isinstance(session, str) and session else None,
            )
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
    task_id(p, "task_state")
    tool_option(
        p, "task_state", "budget", "--budget", note="($CLEW_STATE_BUDGET or config sets it)"
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

    p = command(
        commands,
        "context",
        cmd_context,
        "assemble a task's context (state, decisions, patterns, memory) within a token budget",
        "Assemble what a model needs for a task, within a budget (default 2000 tokens): the"
        " task state, its 5 most recent decisions, the 3 most relevant patterns, the"
        " guardrails and the entries relevant to the current step (or to --query). With"
        " --session, the session's next prompt with this task's state instead (as `clew"
        " session context`). --explain prints what went in and what was left out.",
    )
    p.add_argument("task", metavar="TASK", help="task id or unambiguous prefix")
    p.add_argument("--budget", type=int, help="tokens in all (default 2000; 32000 with --session)")
    p.add_argument(
        "--reserve", type=int, default=0, help="tokens of the budget kept for the answer"
    )
    p.add_argument("--query", metavar="TEXT", help="find memory relevant to this, not the step")
    p.add_argument("--session", metavar="SESSION", help="assemble this session's next prompt")
    p.add_argument("--system-prompt-file", metavar="FILE", help="put this system prompt first")
    p.add_argument(
        "--explain", action="store_true", help="print the tiers: tokens, in and out, why"
    )
