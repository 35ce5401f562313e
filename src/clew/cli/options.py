"""The options of the `clew` commands that do what an agent tool does, made from the tool's
parameters (toolspec.py): an option's type, choices, default and help come from there, so a
parameter means the same to a model and on the command line. What only the command line has
(a file to read, --json) each command adds itself.

An option made here remembers its parameter (`PARAM`), which tests/test_cli_options.py
checks for every tool with a command."""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from typing import Any

from clew.cli.common import decimal, whole
from clew.tools.spec import SPECS, Param

PARAM = "tool_param"  # the attribute of an argparse action naming its (tool, parameter)

# The command line's reading of a JSON Schema type: the API checks the ranges.
CLI_TYPES = {"integer": whole, "number": decimal}


class OneOf:
    """argparse type: one of a parameter's values. Not argparse's `choices`, so that a wrong
    one is refused in argparse's words and the API's both ("invalid choice: 'x' is not one
    of: ...")."""

    def __init__(self, values: Sequence[str]) -> None:
        self.values = tuple(values)

    def __call__(self, text: str) -> str:
        if text not in self.values:
            raise argparse.ArgumentTypeError(
                f"invalid choice: {text!r} is not one of: {', '.join(self.values)}"
            )
        return text

    def __repr__(self) -> str:  # argparse names a type in its errors by its repr
        return "one of"


def param(tool: str, name: str) -> Param:
    return SPECS[tool].params[name]


def help_text(description: str) -> str:
    """A parameter's description as an option's help: the command names the action, so a
    tool's "For add: " falls away, and help is lower case without a full stop."""
    text = re.sub(r"^For [a-z_]+: ", "", description).removesuffix(".")
    return text[:1].lower() + text[1:]


def argument_options(spec: Param) -> dict[str, Any]:
    """argparse's keywords for a parameter: its type, choices, default and help."""
    options: dict[str, Any] = {"help": help_text(spec.description)}
    kind = spec.schema.get("type")
    if kind == "boolean":
        options["action"] = "store_true"
    elif isinstance(kind, str) and kind in CLI_TYPES:
        options["type"] = CLI_TYPES[kind]
    if "enum" in spec.schema:
        options["type"] = OneOf(spec.schema["enum"])
        options["metavar"] = "{" + ",".join(spec.schema["enum"]) + "}"
    if spec.default is not None:
        options["default"] = spec.default
    return options


def tool_option(
    parser: Any, tool: str, name: str, *flags: str, note: str = "", **extra: Any
) -> None:
    """Add the option (or positional) `flags` for parameter `name` of `tool`, as the tool's
    spec says; `note` is added to its help, `extra` are argparse's own keywords for the
    command line's shape of it (metavar, nargs, action="append" for a list, required)."""
    options = {**argument_options(param(tool, name)), **extra}
    if note:
        options["help"] += f" {note}"
    action = parser.add_argument(*(flags or (name,)), **options)
    if isinstance(action, argparse.Action):  # not a parser this command line leaves unbuilt
        setattr(action, PARAM, (tool, name))


def task_id(parser: Any, tool: str) -> None:
    """The positional `id`: the task a tool's `task_id` names."""
    tool_option(parser, tool, "task_id", "id")
