"""The `clew` command: a thin adapter that parses arguments, calls Memory and prints.

Exit codes: 0 success, 1 a check that found a problem (`verify`), 2 bad input
or an unusable store (one line on stderr, never a traceback), 130 interrupted.
Every read command takes --json; ids may be any unambiguous prefix. Commands are
grouped by subject, one module each, and each module adds its parsers in `register`.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import IO

from clew import __version__
from clew.cli import archive, ledger, semantic, state, store, tasks
from clew.cli.common import Commands, Handler, Parser
from clew.errors import ClewError

__all__ = ["build_parser", "main"]


def _common() -> argparse.ArgumentParser:
    # SUPPRESS lets these options appear before or after the command without clobbering.
    common = argparse.ArgumentParser(add_help=False)
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
        "--json", action="store_true", default=argparse.SUPPRESS, help="print JSON for programs"
    )
    return common


def build_parser() -> Parser:
    """Build the whole `clew` argument parser."""
    common = _common()
    root = Parser(
        prog="clew",
        description="clew: a task memory for LLM agents that never loses the thread.",
        parents=[common],
    )
    root.add_argument("--version", action="version", version=f"clew {__version__}")
    commands = root.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    commands.required = True
    command = Commands(common)
    for module in (store, tasks, state, archive, ledger, semantic):
        module.register(commands, command)
    return root


def _fill_defaults(args: argparse.Namespace) -> None:
    for name, default in (("db", None), ("space", None), ("json", False)):
        if not hasattr(args, name):
            setattr(args, name, default)


def main(argv: Sequence[str] | None = None, stderr: IO[str] | None = None) -> int:
    """Run the clew command line; return its exit code."""
    err = stderr or sys.stderr
    try:
        args = build_parser().parse_args(argv)
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
