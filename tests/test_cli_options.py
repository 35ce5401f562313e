"""The `clew` commands that do what an agent tool does take the tool's parameters as their
options (cli/options.py makes them from toolspec.py): same type, same choices, same default,
help from the one description. An option of such a command named like a tool parameter but
not made from it must be listed below, with what it means instead."""

from __future__ import annotations

import argparse
from typing import Any

import pytest

from clew.cli import build_parser
from clew.cli.common import decimal, whole
from clew.cli.options import PARAM, OneOf, help_text
from clew.tools.spec import SPECS, Param

# Each tool with a command line, and the commands that do what it does.
COUNTERPARTS = {
    "task_register": [("task", "new")],
    "task_update": [("task", "update")],
    "task_plan": [("task", "replan")],
    "task_record": [("task", "record"), ("task", "resolve"), ("task", "keep-open")],
    "task_state": [("state",)],
    "task_list": [("task", "list")],
    "memory_search": [("search",)],
    "memory_query": [("entries",)],
    "conversation_recall": [("recall",)],
    "session_list": [("session", "list")],
    "smart_wait": [("wait", "add"), ("wait", "list"), ("wait", "resolve"), ("wait", "cancel")],
}
# Options named like a parameter of their command's tool that mean something else there.
DIFFERENT = {
    ("task", "list", "all"): "archived tasks too; task_list's all: every workspace's tasks",
    ("task", "update", "outcome"): "the step's with --step, else the task's (one option for"
    " task_update's outcome and step_outcome)",
    ("entries", "limit"): "none by default: a listing shows every entry; the tool's 20 is a"
    " page of a model's context",
    ("session", "list", "limit"): "none by default, as entries",
    ("wait", "list", "status"): "the waits' status; smart_wait's status is a URL's HTTP status",
}


def _parsers() -> dict[tuple[str, ...], argparse.ArgumentParser]:
    found: dict[tuple[str, ...], argparse.ArgumentParser] = {}

    def walk(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    found[(*path, name)] = sub
                    walk(sub, (*path, name))

    walk(build_parser(), ())
    return found


PARSERS = _parsers()


def _made(path: tuple[str, ...]) -> list[tuple[argparse.Action, tuple[str, str]]]:
    return [(a, getattr(a, PARAM)) for a in PARSERS[path]._actions if hasattr(a, PARAM)]


def _agrees(action: argparse.Action, spec: Param) -> list[str]:
    """How an option and its parameter differ (nothing, when they agree)."""
    schema: dict[str, Any] = spec.schema
    kind = schema.get("type")
    wrong = []
    if "enum" in schema:
        if not (isinstance(action.type, OneOf) and list(action.type.values) == schema["enum"]):
            wrong.append("choices")
    elif kind == "boolean":
        if not isinstance(action, argparse._StoreTrueAction):
            wrong.append("type")
    elif kind == "array":
        if not (isinstance(action, argparse._AppendAction) or action.nargs in ("+", "*")):
            wrong.append("type (a list)")
    elif action.type is not {"integer": whole, "number": decimal}.get(str(kind)):
        wrong.append("type")
    if action.default != spec.default and not (spec.default is None and action.default is False):
        wrong.append(f"default {action.default!r} (the tool's: {spec.default!r})")
    if not (action.help or "").startswith(help_text(spec.description)):
        wrong.append("help (not the parameter's description)")
    return wrong


@pytest.mark.parametrize("tool", sorted(COUNTERPARTS))
def test_each_command_of_a_tool_takes_its_parameters_from_it(tool: str) -> None:
    params = SPECS[tool].params
    for path in COUNTERPARTS[tool]:
        made = _made(path)
        assert any(source[0] == tool for _, source in made), f"`clew {' '.join(path)}`"
        for action, (source, name) in made:
            assert source == tool, f"`clew {' '.join(path)}` {action.dest}: from {source}"
            wrong = _agrees(action, params[name])
            assert wrong == [], f"`clew {' '.join(path)}` {action.dest} vs {tool}.{name}"
        # An option named like a parameter is made from it, or listed as different.
        for action in PARSERS[path]._actions:
            if action.dest in params and not hasattr(action, PARAM):
                assert (*path, action.dest) in DIFFERENT, (
                    f"`clew {' '.join(path)}` {action.dest}: make it from {tool}'s parameter"
                )


def test_the_differences_listed_are_there() -> None:
    for *path, dest in DIFFERENT:
        tool = next(t for t, paths in COUNTERPARTS.items() if tuple(path) in paths)
        action = next(a for a in PARSERS[tuple(path)]._actions if a.dest == dest)
        assert not hasattr(action, PARAM) and dest in SPECS[tool].params


def test_a_disagreement_is_caught() -> None:
    # The check above is not vacuous: a type, choices, default or help of its own fails it.
    spec = SPECS["memory_search"].params["limit"]
    action = next(a for a, s in _made(("search",)) if s == ("memory_search", "limit"))
    assert _agrees(action, spec) == []
    assert _agrees(action, spec._replace(default=20)) != []
    assert _agrees(action, spec._replace(schema={"type": "number"})) != []
    assert _agrees(action, spec._replace(description="Something else.")) != []
    mode = SPECS["memory_search"].params["mode"]
    action = next(a for a, s in _made(("search",)) if s == ("memory_search", "mode"))
    assert _agrees(action, mode._replace(schema={"type": "string", "enum": ["auto"]})) != []


def test_a_wrong_choice_is_refused_in_the_apis_words() -> None:
    action = next(a for a, s in _made(("task", "update")) if s[1] == "step_status")
    assert action.type is not None
    with pytest.raises(argparse.ArgumentTypeError, match="is not one of: pending, active"):
        action.type("done")
