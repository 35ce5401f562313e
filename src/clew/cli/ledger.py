"""`clew ledger` and `clew trace ...`: the command ledger and the episodic trace."""

from __future__ import annotations

import argparse
from typing import Any

from clew.cli.common import (
    Commands,
    current_time,
    decimal,
    json_arg,
    json_or_text,
    open_memory,
    print_json,
    show,
    step_ref,
    whole,
)


def cmd_ledger(args: argparse.Namespace) -> int:
    from clew.tools.views import action_line, repeated_line

    with open_memory(args) as mem:
        if args.repeated:
            failures = mem.repeated_failures(args.task, min_failures=args.min, limit=args.limit)
            if args.json:
                print_json(failures)
            elif not failures:
                print(f"no command failed {args.min} or more times")
            for failure in failures if not args.json else ():
                print(repeated_line(failure))
            return 0
        if args.last_green:
            found = mem.last_green(args.task, contains=args.contains or None)
            actions = [found] if found else []
        else:
            failed = True if args.failed else False if args.ok else None
            actions = mem.commands(
                args.task,
                failed=failed,
                step=step_ref(args.step),
                contains=args.contains or None,
                exit_code=args.exit_code,
                limit=args.limit,
            )
    if args.json:
        print_json(actions[0] if args.last_green and actions else actions or None)
    elif not actions:
        print("no green test run recorded" if args.last_green else "no commands match")
    else:
        now = current_time()
        for action in actions:
            print(action_line(action, now, {}))
    return 0


def cmd_trace_show(args: argparse.Namespace) -> int:
    from clew.tools.views import trace_view

    with open_memory(args) as mem:
        trace = mem.trace(args.id)
    if args.json:
        print_json(trace)
    else:
        print(trace_view(trace))
    return 0


def cmd_trace_decide(args: argparse.Namespace) -> int:
    with open_memory(args) as mem:
        decision = mem.trace_decision(
            args.id,
            args.action,
            outcome=args.outcome,
            state=args.state,
            agent=args.agent,
            context=json_arg(args.context, "--context"),
            prompt_tokens=args.prompt_tokens,
            completion_tokens=args.completion_tokens,
            model=args.model,
            temperature=args.temperature,
            artifacts=json_arg(args.artifacts, "--artifacts"),
            error=args.error,
            trace_id=args.trace_id,
            parent=args.parent,
            step=step_ref(args.step),
        )
    return show(args, decision, decision.id)


def cmd_trace_validate(args: argparse.Namespace) -> int:
    violations = [json_or_text(v, "--violation") for v in args.violation or ()]
    with open_memory(args) as mem:
        validation = mem.trace_validation(
            args.decision,
            passed=args.passed,
            validator=args.validator,
            requirements=args.requirement or None,
            violations=violations or None,
            feedback=args.feedback,
        )
    return show(args, validation, f"{validation.id} {'passed' if validation.passed else 'failed'}")


def register(commands: Any, command: Commands) -> None:
    """Add the ledger, trace and history commands."""
    p = command(
        commands,
        "ledger",
        cmd_ledger,
        "the command ledger: every recorded command, its exit code and outcome",
        "List recorded commands, newest first, or answer one question: --last-green (the"
        " newest passing test run), --repeated (commands that failed more than once).",
    )
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--last-green", action="store_true", help="the newest passing test run")
    mode.add_argument("--repeated", action="store_true", help="commands that failed repeatedly")
    p.add_argument("--task", help="only this task's commands")
    outcome = p.add_mutually_exclusive_group()
    outcome.add_argument("--failed", action="store_true", help="only failed commands")
    outcome.add_argument("--ok", action="store_true", help="only commands that succeeded")
    p.add_argument("--step", help="only this step's commands (needs --task)")
    p.add_argument(
        "--contains",
        action="append",
        metavar="TEXT",
        help="the command holds TEXT (repeatable: any)",
    )
    p.add_argument("--exit-code", type=whole, help="only commands with this exit code")
    p.add_argument(
        "--min", type=whole, default=2, help="with --repeated: at least this many failures"
    )
    p.add_argument("--limit", type=whole, default=50, help="at most this many (default 50)")

    trace_parser = commands.add_parser(
        "trace",
        help="the episodic trace: decisions, validations, tool calls",
        description="The episodic trace: the agent's decisions, their validations and tool calls.",
    )
    trace = trace_parser.add_subparsers(dest="trace_command", metavar="TRACE_COMMAND")
    trace.required = True
    p = command(trace, "show", cmd_trace_show, "a task's trace in order")
    p.add_argument("id", help="task id or unambiguous prefix")

    p = command(trace, "decide", cmd_trace_decide, "record a decision of the agent; prints its id")
    p.add_argument("id", help="task id or unambiguous prefix")
    p.add_argument("--action", required=True, metavar="TEXT", help="what the agent did")
    p.add_argument("--outcome", default="success", help="success, failure or retry")
    p.add_argument("--state", help="the state machine's state (PLANNING, EXECUTING...)")
    p.add_argument("--agent", help="which agent (planner, executor, critic...)")
    p.add_argument("--model", help="the model that decided")
    p.add_argument("--prompt-tokens", type=whole, help="prompt tokens used")
    p.add_argument("--completion-tokens", type=whole, help="completion tokens used")
    p.add_argument("--temperature", type=decimal, help="the sampling temperature")
    p.add_argument("--context", metavar="JSON", help="a snapshot of the context, a JSON object")
    p.add_argument("--artifacts", metavar="JSON", help="artifacts created, a JSON object")
    p.add_argument("--error", metavar="TEXT", help="the error, if it failed")
    p.add_argument("--trace-id", help="the trace it belongs to (default: a new one)")
    p.add_argument("--parent", metavar="DECISION_ID", help="the decision it follows from")
    p.add_argument("--step", help="the plan step it belongs to")

    p = command(trace, "validate", cmd_trace_validate, "record a validation of a decision")
    p.add_argument("decision", metavar="DECISION_ID", help="the decision validated")
    verdict = p.add_mutually_exclusive_group(required=True)
    verdict.add_argument("--passed", action="store_true", help="the validation passed")
    verdict.add_argument("--failed", action="store_true", help="the validation failed")
    p.add_argument("--validator", default="functional", help="schema, functional, semantic...")
    p.add_argument("--requirement", action="append", metavar="TEXT", help="a requirement checked")
    p.add_argument(
        "--violation", action="append", metavar="TEXT", help="a violation found (text or JSON)"
    )
    p.add_argument("--feedback", metavar="TEXT", help="the validator's feedback")
