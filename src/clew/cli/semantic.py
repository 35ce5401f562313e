"""`clew pattern ...` and `clew guard ...`: semantic memory."""

from __future__ import annotations

import argparse
from typing import Any

from clew.cli.common import (
    Commands,
    decimal,
    open_memory,
    print_json,
    show,
    show_lines,
    whole,
)


def cmd_pattern_add(args: argparse.Namespace) -> int:
    with open_memory(args) as mem:
        pattern = mem.add_pattern(
            args.domain,
            args.name,
            description=args.description,
            example=args.example,
            kind=args.kind,
        )
    return show(args, pattern, pattern.id)


def cmd_pattern_observe(args: argparse.Namespace) -> int:
    with open_memory(args) as mem:
        pattern = mem.observe_pattern(args.id, success=args.success)
    return show(
        args,
        pattern,
        f"{pattern.id} {pattern.success_count} worked, {pattern.failure_count} failed",
    )


def cmd_pattern_list(args: argparse.Namespace) -> int:
    from clew.tools.views import pattern_line

    with open_memory(args) as mem:
        patterns = mem.list_patterns(args.domain, include_deprecated=args.all, limit=args.limit)
    return show_lines(
        args, patterns, pattern_line, "no patterns; add one with `clew pattern add DOMAIN NAME`"
    )


def cmd_pattern_prune(args: argparse.Namespace) -> int:
    with open_memory(args) as mem:
        weak = mem.prune_patterns(
            min_success_rate=args.min_rate, min_trials=args.min_trials, dry_run=args.dry_run
        )
    verb = "would deprecate" if args.dry_run else "deprecated"
    text = "\n".join(f"{verb} {p.id} {p.name}" for p in weak) or "nothing to prune"
    return show(args, weak, text)


def cmd_guard_add(args: argparse.Namespace) -> int:
    with open_memory(args) as mem:
        rule = mem.add_guardrail(
            args.text,
            rule_type=args.type,
            enforcement=args.enforce,
            pattern=args.pattern,
            valid_examples=args.good or (),
            invalid_examples=args.bad or (),
        )
    return show(args, rule, rule.id)


def cmd_guard_defaults(args: argparse.Namespace) -> int:
    with open_memory(args) as mem:
        added = mem.add_default_guardrails()
    text = "\n".join(f"{g.id} [{g.enforcement.value}] {g.text}" for g in added)
    return show(args, added, text or "the default guardrails are all present already")


def cmd_guard_list(args: argparse.Namespace) -> int:
    from clew.tools.views import guardrail_line

    with open_memory(args) as mem:
        rules = mem.list_guardrails(enabled_only=not args.all)
    return show_lines(
        args,
        rules,
        guardrail_line,
        "no guardrails; add one with `clew guard add` or `clew guard defaults`",
    )


def cmd_guard_switch(args: argparse.Namespace) -> int:
    with open_memory(args) as mem:
        rule = mem.set_guardrail(args.id, enabled=args.enable)
    return show(args, rule, f"{rule.id} {'enabled' if rule.enabled else 'disabled'}")


def cmd_guard_check(args: argparse.Namespace) -> int:
    with open_memory(args) as mem:
        result = mem.check_command(args.command)
    if args.json:
        print_json({**result._asdict(), "blocked": result.blocked})
    elif not result.hits:
        print("ok: no guardrail is broken")
    for hit in result.hits if not args.json else ():
        rule = hit.guardrail
        print(f"{rule.enforcement.value}: {rule.text} ({rule.id}; matched {hit.match!r})")
    return 1 if result.blocked else 0


def register(commands: Any, command: Commands) -> None:
    """Add the pattern and guardrail commands."""
    group = commands.add_parser(
        "pattern",
        help="semantic memory: patterns and the evidence for them",
        description="Patterns: ways of doing things, ranked by how often they worked.",
    )
    patterns = group.add_subparsers(dest="pattern_command", metavar="PATTERN_COMMAND")
    patterns.required = True
    p = command(patterns, "add", cmd_pattern_add, "record a pattern of a domain; prints its id")
    p.add_argument("domain", help="the domain it belongs to, e.g. backend_api")
    p.add_argument("name", help="the pattern's name")
    p.add_argument("--description", help="what it is and when to use it")
    p.add_argument("--example", help="an example (code, a command)")
    p.add_argument("--kind", help="subtask_success, model_failure, prompt_effective...")
    p = command(patterns, "observe", cmd_pattern_observe, "count one use that worked or failed")
    p.add_argument("id", help="pattern id or unambiguous prefix")
    outcome = p.add_mutually_exclusive_group(required=True)
    outcome.add_argument("--success", action="store_true", help="it worked")
    outcome.add_argument("--failure", action="store_true", help="it did not work")
    p = command(patterns, "list", cmd_pattern_list, "patterns, best evidence first")
    p.add_argument("--domain", help="only this domain")
    p.add_argument("--all", action="store_true", help="include deprecated patterns")
    p.add_argument("--limit", type=whole, help="at most this many")
    p = command(
        patterns,
        "prune",
        cmd_pattern_prune,
        "deprecate patterns that mostly fail (under 70% after 10+ uses)",
    )
    p.add_argument("--min-rate", type=decimal, default=0.7, help="success rate to keep (0.7)")
    p.add_argument("--min-trials", type=whole, default=10, help="uses before judging (10)")
    p.add_argument("--dry-run", action="store_true", help="say what would go, change nothing")

    group = commands.add_parser(
        "guard",
        help="guardrails: rules the agent must follow, checkable on commands",
        description="Guardrails: rules for the agent (block, warn or log), always in the"
        " prompt via `clew prime`; a rule with a pattern is checked on commands.",
    )
    guards = group.add_subparsers(dest="guard_command", metavar="GUARD_COMMAND")
    guards.required = True
    p = command(guards, "add", cmd_guard_add, "add a guardrail; prints its id")
    p.add_argument("text", help="the rule, as the agent should read it")
    p.add_argument("--type", default="security", help="security, style, domain... (security)")
    p.add_argument("--enforce", default="warn", help="block, warn or log (default warn)")
    p.add_argument("--pattern", metavar="REGEX", help="a regular expression over commands")
    p.add_argument("--bad", action="append", metavar="COMMAND", help="a command it must catch")
    p.add_argument("--good", action="append", metavar="COMMAND", help="a command it must allow")
    command(guards, "defaults", cmd_guard_defaults, "add clew's starting safety rules")
    p = command(guards, "list", cmd_guard_list, "the enabled guardrails")
    p.add_argument("--all", action="store_true", help="include disabled ones")
    p = command(
        guards,
        "check",
        cmd_guard_check,
        "check a command against the guardrails (exit 1 if one blocks it)",
    )
    p.add_argument("command", help="the command line to check")
    for name, enable in (("enable", True), ("disable", False)):
        p = command(guards, name, cmd_guard_switch, f"{name} a guardrail")
        p.add_argument("id", help="guardrail id or unambiguous prefix")
        p.set_defaults(enable=enable)
