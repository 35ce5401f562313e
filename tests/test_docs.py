"""The docs stay true: every command has help and a docs entry naming each of its options;
the README keeps its two set-up commands and CI runs the test one; the public names resolve."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import clew
from clew.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent


def commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser, str | None]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            for name, sub in action.choices.items():
                yield (*path, name), sub, helps.get(name)
                yield from commands(sub, (*path, name))


def leaves() -> list[tuple[tuple[str, ...], argparse.ArgumentParser, str | None]]:
    found = list(commands(build_parser()))
    parents = {path[:-1] for path, _, _ in found}
    return [c for c in found if c[0] not in parents]


def test_every_command_has_help() -> None:
    for path, parser, help_text in commands(build_parser()):
        assert help_text, f"`clew {' '.join(path)}` has no help"
        assert parser.description, f"`clew {' '.join(path)}` has no description"
        for action in parser._actions:
            if not isinstance(action, argparse._SubParsersAction):
                assert action.help, f"an argument of `clew {' '.join(path)}` has no help"


def test_every_command_and_option_is_documented() -> None:
    text = (ROOT / "docs" / "cli.md").read_text()
    sections = dict(re.findall(r"### `clew ([^`]+)`\n(.*?)(?=\n### |\Z)", text, re.S))
    for path, parser, _ in leaves():
        name = " ".join(path)
        assert name in sections, f"docs/cli.md has no section for `clew {name}`"
        for action in parser._actions:
            for option in action.option_strings:
                if option.startswith("--") and option not in (
                    "--help",
                    "--db",
                    "--space",
                    "--json",
                    "--create",
                    "--busy-timeout",
                    "--max-input-mb",
                ):
                    assert option in sections[name], f"`clew {name}`: {option} is not documented"


def test_readme_has_the_two_set_up_commands_and_ci_runs_the_test_one() -> None:
    readme = (ROOT / "README.md").read_text()
    setup = readme.split("## Set up", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)\n```", setup, re.S)
    assert len(blocks) == 2
    run_demo, run_tests = blocks
    assert run_demo.strip().endswith("clew demo")
    assert run_tests.strip().endswith("pytest")
    assert run_tests.strip() in (ROOT / ".ci" / "run").read_text()


def test_readme_python_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    readme = (ROOT / "README.md").read_text()
    code = readme.split("## Five lines of Python", 1)[1].split("```python\n", 1)[1].split("```")[0]
    assert len(code.strip().splitlines()) == 5
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md", "exec"), {})
    assert (tmp_path / ".clew" / "clew.db").exists()


def test_public_names_all_resolve() -> None:
    for name in clew.__all__:
        assert getattr(clew, name) is not None, name
    assert sorted(dir(clew)) == sorted(clew.__all__)


def test_every_command_is_mapped_to_its_module() -> None:
    """The CLI builds only the module a command line names; the map must be complete."""
    from clew.cli import MODULES, command_name

    top = {path[0] for path, _, _ in commands(build_parser())}
    assert top == {name for names in MODULES.values() for name in names}
    for name in top:
        assert command_name(["--db", "x.db", "--json", name, "--json"]) == name
        parser = build_parser([name])
        assert {path[0] for path, _, _ in commands(parser)} >= {name}
