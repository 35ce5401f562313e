"""`clew integrate claude-code`: install clew's hooks and MCP server in Claude Code's settings.

The edits are integrations/claude_code.py's (pure); here the files are read, every one checked
before any is written (a malformed file is named and nothing is written), and each written
atomically, only when it changes.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from typing import Any

from clew.cli.common import Commands, print_json
from clew.errors import ValidationError


def _clew_command() -> str:
    """How Claude Code should run clew: this clew's full path (a hook's PATH may not hold
    the virtual environment it is installed in), else the `clew` beside this Python, else
    `python -m clew` with this Python (never a `clew` found on the PATH: it may be another)."""
    import shlex

    beside = os.path.join(os.path.dirname(sys.executable), "clew")
    for script in (sys.argv[0] if os.path.basename(sys.argv[0]) == "clew" else "", beside):
        if script and os.path.isfile(script):
            return shlex.quote(os.path.abspath(script))
    return f"{shlex.quote(sys.executable)} -m clew"


def _read(path: str) -> dict[str, Any] | None:
    """A JSON settings file's object (None if there is no file), or a ValidationError."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise ValidationError(f"cannot read {path}: {exc}; nothing was written") from None
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise ValidationError(
            f"{path} is not valid JSON ({exc}); fix it or move it away: nothing was written"
        ) from None
    if not isinstance(value, dict):
        raise ValidationError(f"{path} is not a JSON object; nothing was written")
    return value


def cmd_integrate(args: argparse.Namespace) -> int:
    if args.assistant == "codex":
        return _integrate_codex(args)
    from clew.integrations import claude_code
    from clew.state.mirror import write_atomically

    if args.user:
        home = os.path.expanduser("~")
        settings_path = os.path.join(home, ".claude", "settings.json")
        mcp_path = os.path.join(home, ".claude.json")
    else:
        root = os.path.abspath(args.dir or ".")
        if not os.path.isdir(root):
            raise ValidationError(f"the project folder {root} does not exist")
        settings_path = os.path.join(root, ".claude", "settings.json")
        mcp_path = os.path.join(root, ".mcp.json")
    clew = args.run_as or _clew_command()
    plans = []
    for path, install, uninstall in (
        (settings_path, claude_code.install_hooks, claude_code.uninstall_hooks),
        (mcp_path, claude_code.install_server, claude_code.uninstall_server),
    ):
        before = _read(path)
        current = before if before is not None else {}
        try:
            after = uninstall(current) if args.uninstall else install(current, clew)
        except ValueError as exc:
            raise ValidationError(f"{path}: {exc}; nothing was written") from None
        plans.append((path, before, after))
    changed = []
    for path, before, after in plans:
        if after == (before if before is not None else {}) or (before is None and not after):
            continue
        if args.uninstall and not after:
            os.remove(path)  # clew's entries were all it held
            if path == settings_path and not args.user:
                with contextlib.suppress(OSError):  # unless it holds other files
                    os.rmdir(os.path.dirname(path))  # .claude/, if clew made it
        else:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            write_atomically(
                path, (json.dumps(after, indent=2, ensure_ascii=False) + "\n").encode()
            )
        changed.append(path)
    _report(args, clew, changed, settings_path, mcp_path)
    return 0


def codex_home() -> str:
    """Codex's folder: $CODEX_HOME, else ~/.codex."""
    return os.environ.get("CODEX_HOME") or os.path.join(os.path.expanduser("~"), ".codex")


def _integrate_codex(args: argparse.Namespace) -> int:
    """Merge clew's notify program and MCP server into ~/.codex/config.toml (or undo it)."""
    import tomllib

    from clew.integrations import codex
    from clew.state.mirror import write_atomically

    if args.project or args.dir:
        raise ValidationError(
            "Codex reads clew's settings from its own config ($CODEX_HOME/config.toml, else"
            " ~/.codex/config.toml): leave out --project and --dir"
        )
    path = os.path.join(codex_home(), "config.toml")
    try:
        with open(path, encoding="utf-8") as handle:
            before = handle.read()
    except FileNotFoundError:
        before = ""
    except (OSError, UnicodeDecodeError) as exc:
        raise ValidationError(f"cannot read {path}: {exc}; nothing was written") from None
    try:
        theirs = tomllib.loads(codex.uninstall(before))
        tomllib.loads(before)
    except tomllib.TOMLDecodeError as exc:
        raise ValidationError(
            f"{path} is not valid TOML ({exc}); fix it or move it away: nothing was written"
        ) from None
    clew = args.run_as or _clew_command()
    try:
        after = codex.uninstall(before) if args.uninstall else codex.install(before, clew, theirs)
    except ValueError as exc:
        raise ValidationError(f"{path}: {exc}; nothing was written") from None
    changed = after != before
    if changed:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        write_atomically(path, after.encode("utf-8"))
    if args.json:
        print_json(
            {
                "changed": [path] if changed else [],
                "config": path,
                "command": clew,
                "installed": not args.uninstall,
            }
        )
    elif args.uninstall:
        print(f"removed clew from {path}" if changed else "clew was not installed there")
    else:
        done = "installed" if changed else "already installed"
        print(f"{done}: clew's notify program and MCP server in {path} (run as {clew})")
    return 0


def _report(
    args: argparse.Namespace, clew: str, changed: list[str], settings: str, mcp: str
) -> None:
    if args.json:
        print_json(
            {
                "changed": changed,
                "settings": settings,
                "mcp": mcp,
                "command": clew,
                "installed": not args.uninstall,
            }
        )
        return
    if args.uninstall:
        print(
            f"removed clew's hooks and MCP server from {settings} and {mcp}"
            if changed
            else "clew was not installed there: nothing to remove"
        )
        return
    done = "installed" if changed else "already installed"
    print(f"{done}: clew's hooks in {settings}, its MCP server in {mcp} (run as {clew})")
    import importlib.util

    if importlib.util.find_spec("mcp") is None:
        from clew.core.installation import install_command

        print(f"note: the MCP server needs clew's mcp extra: {install_command('mcp')}")


def register(commands: Any, command: Commands) -> None:
    """Add `clew integrate`."""
    p = command(
        commands,
        "integrate",
        cmd_integrate,
        "install clew in a coding assistant: its hooks and MCP server (claude-code, codex)",
        "Merge clew's hooks and MCP server into Claude Code's settings, leaving every other"
        " entry as it was: `clew capture --hook` on SessionStart, UserPromptSubmit,"
        " PostToolUse, PreCompact, Stop, SubagentStop and SessionEnd (every message archived"
        " in the session keyed by Claude Code's session id), `clew prime --hook` at session"
        " start and after compaction (the task state put back), and the `clew` MCP server."
        " --project (the default) writes .claude/settings.json and .mcp.json in the project"
        " folder; --user"
        " writes ~/.claude/settings.json and ~/.claude.json. Running it again changes nothing;"
        " --uninstall removes clew's entries and nothing else. `clew integrate codex` puts"
        " into ~/.codex/config.toml (or $CODEX_HOME's) the notify program `clew capture"
        " --codex-notify`, which archives each session's rollout after every turn, and the"
        " MCP server.",
    )
    p.add_argument(
        "assistant", choices=("claude-code", "codex"), help="the assistant to install in"
    )
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--project", action="store_true", help="this project's settings (the default)"
    )
    where.add_argument("--user", action="store_true", help="your user settings, every project")
    p.add_argument("--uninstall", action="store_true", help="remove clew's entries")
    p.add_argument(
        "--dir", metavar="DIR", help="the project folder with --project (default: this one)"
    )
    p.add_argument(
        "--command",
        dest="run_as",
        metavar="CMD",
        help="how the hooks run clew (default: this clew's full path)",
    )
