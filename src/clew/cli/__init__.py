"""The `clew` command: a thin adapter that parses arguments, calls Memory and prints.

Exit codes: 0 success, 1 a check that found a problem (`verify`), 2 bad input
or an unusable store (one line on stderr, never a traceback), 130 interrupted.
Every read command takes --json; ids may be any unambiguous prefix. Commands are
grouped by subject, one module each, and each module adds its parsers in `register`.

May import: anything of clew (it is the top layer); the store only through the facade.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import IO

from clew import __version__
from clew.cli.common import Commands, Handler, Parser, megabytes
from clew.errors import ClewError

__all__ = ["build_parser", "main"]


def _common() -> argparse.ArgumentParser:
    # SUPPRESS lets these options appear before or after the command without clobbering.
    common = Parser(add_help=False)
    common.add_argument(
        "--db",
        default=argparse.SUPPRESS,
        metavar="PATH",
        help="store file (default: $CLEW_DB, else the nearest .clew/ upward, else a user store)",
    )
    common.add_argument(
        "--space",
        default=argparse.SUPPRESS,
        help="namespace to work in (default: $CLEW_SPACE, else 'default')",
    )
    common.add_argument(
        "--max-input-mb",
        type=megabytes,
        default=argparse.SUPPRESS,
        metavar="MB",
        help="the most one file or stdin may hold (default: $CLEW_MAX_INPUT_MB, else 64)",
    )
    common.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help="print JSON for programs"
    )
    common.add_argument(
        "--create",
        action="store_true",
        default=argparse.SUPPRESS,
        help="make the --db or $CLEW_DB store's folder if it does not exist",
    )
    common.add_argument(
        "--busy-timeout",
        default=argparse.SUPPRESS,
        metavar="SECONDS",
        help="how long to wait for another writer (default: $CLEW_BUSY_TIMEOUT, else 5)",
    )
    return common


# The command modules, and the top-level commands each adds: a command line only builds
# (and imports) the module of its own command, which keeps hooks like `clew prime` fast.
MODULES: dict[str, tuple[str, ...]] = {
    "store": ("init", "journal", "verify", "checkpoint", "forget", "redactions", "demo"),
    "tasks": ("task", "where"),
    "state": ("state", "prime", "context"),
    "archive": ("note", "entries", "search", "seen", "fix"),
    "ledger": ("ledger", "trace"),
    "semantic": ("pattern", "guard"),
    "utility": ("ask", "work", "jobs", "usage"),
    "conversations": ("session", "recall"),
    "capture": ("capture",),
    "integrate": ("integrate",),
    "agent": ("tools", "prompt", "mcp"),
    "watch": ("stuck",),
    "lifecycle": ("wait", "maintain"),
    "move": ("export", "import", "push"),
    "index": ("index",),
    "server": ("keys", "serve"),
    "db": ("db",),
    "completion": ("completion",),
}
_VALUED = ("--db", "--space", "--busy-timeout", "--max-input-mb")  # global options with a value


def command_name(argv: Sequence[str]) -> str | None:
    """The top-level command a command line names, if it can be told without parsing."""
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg in _VALUED:
            skip = True
        elif not arg.startswith("-"):
            return arg
    return None


def _wants_overview(argv: Sequence[str]) -> bool:
    """Bare `clew`, or `clew --help` with no command: the grouped overview, not argparse's."""
    rest = [a for i, a in enumerate(argv) if not (a in _VALUED or (i and argv[i - 1] in _VALUED))]
    return command_name(argv) is None and set(rest) <= {"-h", "--help", "--json"}


def build_parser(argv: Sequence[str] | None = None) -> Parser:
    """Build the `clew` argument parser: whole, or only what `argv`'s command needs."""
    name = None if argv is None else command_name(argv)
    # The subcommand of a group (`show` in `clew task show`): only its parser is built.
    # (Group parsers' dest is the command's name with `_command`; see Commands.)
    only = None
    if argv is not None and name is not None and not {"-h", "--help"} & set(argv):
        only = command_name(list(argv)[list(argv).index(name) + 1 :])
    root, command = _parser(argv, name, only)
    if command.skipped and not command.found:  # not one of the group's: argparse says so
        root, _ = _parser(argv, name, None)
    return root


def _parser(
    argv: Sequence[str] | None, name: str | None, only: str | None
) -> tuple[Parser, Commands]:
    common = _common()
    root = Parser(
        prog="clew",
        description="clew: a task memory for LLM agents that never loses the thread.",
        parents=[common],
    )
    root.add_argument("--version", action="version", version=f"clew {__version__}")
    commands = root.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    commands.required = True
    command = Commands(common, f"{name}_command", only)
    wanted = [m for m, names in MODULES.items() if name in names] or list(MODULES)
    if name is None and argv is not None and "--version" in argv:
        wanted = []  # argparse prints the version before it needs any command
    for module in wanted:
        importlib.import_module(f"clew.cli.{module}").register(commands, command)
    return root, command


def _fill_defaults(args: argparse.Namespace) -> None:
    defaults = (("db", None), ("space", None), ("json", False), ("create", False))
    for name, default in (*defaults, ("busy_timeout", None), ("max_input_mb", None)):
        if not hasattr(args, name):
            setattr(args, name, default)


def main(argv: Sequence[str] | None = None, stderr: IO[str] | None = None) -> int:
    """Run the clew command line; return its exit code."""
    err = stderr or sys.stderr
    try:
        words = sys.argv[1:] if argv is None else list(argv)
        if _wants_overview(words):
            from clew.cli.overview import text

            sys.stdout.write(text(__version__))
            return 0
        args = build_parser(words).parse_args(words)
        _fill_defaults(args)
        handler: Handler = args.handler
        return handler(args)
    except ClewError as exc:
        # One line, always: a path or value with a newline in it is shown escaped.
        message = str(exc).replace("\r", "\\r").replace("\n", "\\n")
        print(f"clew: error: {message}", file=err)
        return 2
    except KeyboardInterrupt:
        print("clew: interrupted", file=err)
        return 130
    except BrokenPipeError:
        # The reader went away (e.g. `| head`); silence the flush at exit too.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
