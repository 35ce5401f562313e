"""A new user's first hour at the command line: bare `clew` explains itself, a typo is
answered with the closest command, `clew where` needs no id, `clew recall --range` takes
the forms people type, the demo ends with commands that work, and the docs speak of
clew's own features."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import clew
from clew.cli import MODULES, main
from clew.cli.overview import commands
from tests.conftest import Result

ROOT = Path(__file__).resolve().parent.parent
Cli = Callable[..., Result]


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "clew", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        check=False,
    )


def test_bare_clew_prints_the_commands_grouped_core_first() -> None:
    done = run()
    assert done.returncode == 0 and done.stderr == ""
    text = done.stdout
    headings = [line for line in text.splitlines() if re.fullmatch(r"[A-Z][a-z ]+:", line)]
    assert headings == ["Everyday:", "Memory:", "For agents:", "Maintenance:", "Examples:"]
    everyday = text.split("Everyday:\n", 1)[1].split("\n\n", 1)[0]
    assert [line.split()[0] for line in everyday.splitlines()] == [
        "task",
        "state",
        "where",
        "search",
        "recall",
        "session",
    ]
    maintenance = text.split("Maintenance:\n", 1)[1].split("\n\n", 1)[0]
    assert {"init", "verify", "journal", "work", "jobs", "usage", "demo"} <= {
        line.split()[0] for line in maintenance.splitlines()
    }
    assert "clew where" in text and "docs/cli.md" in text
    assert run("--help").stdout == text  # the same overview, exit 0
    assert run("-h").returncode == 0


def test_the_overview_lists_every_command_once() -> None:
    listed = commands()
    assert len(listed) == len(set(listed))
    assert sorted(listed) == sorted(name for names in MODULES.values() for name in names)


def test_the_overview_examples_are_real_commands(cli: Cli) -> None:
    from clew.cli.overview import EXAMPLES

    task_id = cli("task", "new", "Deploy", "--plan", "Build image", "Push", "Run").out.strip()
    for example, _ in EXAMPLES:
        words = shlex.split(example)[1:]
        words = [task_id if w == "ID" else w for w in words]
        if "SESSION" in words:
            continue  # needs a conversation; `recall --range` has its own test
        result = cli(*words)
        assert result.code == 0, (example, result.err)


def test_a_command_help_still_shows_its_options() -> None:
    done = run("task", "--help")
    assert done.returncode == 0 and "update" in done.stdout


def test_an_unknown_command_suggests_the_closest_in_a_real_process() -> None:
    done = run("serch", "permission")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (
        "clew: error: unknown command 'serch'; did you mean 'search'? (see `clew --help`)\n"
    )
    far = run("frobnicate")
    assert far.stderr == "clew: error: unknown command 'frobnicate' (see `clew --help`)\n"


def test_where_answers_for_this_folders_active_task(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    here, elsewhere = tmp_path / "project", tmp_path / "other"
    here.mkdir()
    elsewhere.mkdir()
    monkeypatch.chdir(here)
    none = cli("where")
    assert none.code == 2 and none.err == (
        "clew: error: no active task for this folder; give a task id"
        " (`clew task list` lists them)\n"
    )
    mine = cli("task", "new", "Mine", "--plan", "One", "--workspace", str(here)).out.strip()
    other = cli("task", "new", "Other", "--plan", "One", "--workspace", str(elsewhere)).out.strip()
    found = cli("where")
    assert found.code == 0 and f"({mine})" in found.out and other not in found.out
    assert f"({other})" in cli("where", other[:6]).out  # an id still wins
    assert json.loads(cli("where", "--json").out)["task_id"] == mine


def test_ask_without_a_task_id_asks_about_this_folders_active_task(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    none = cli("ask", "what did we decide?")
    assert none.code == 2 and "no active task for this folder" in none.err
    task = cli("task", "new", "Deploy", "--plan", "Push", "--workspace", str(tmp_path)).out.strip()
    cli("task", "record", task, "--decision", "Push to ghcr.io instead of docker hub")
    answer = cli("ask", "what did we decide about docker hub?")
    assert answer.code == 0 and "Push to ghcr.io instead of docker hub" in answer.out
    assert cli("ask", task[:5], "what did we decide about docker hub?").out == answer.out


def test_recall_range_takes_every_form_and_says_cli_options(cli: Cli, tmp_path: Path) -> None:
    chat = tmp_path / "chat.jsonl"
    chat.write_text(
        "".join(
            json.dumps({"role": "user" if n % 2 else "assistant", "content": f"turn {n}"}) + "\n"
            for n in range(1, 7)
        )
    )
    session = cli("session", "import", str(chat)).out.strip()
    spaced = cli("recall", session, "--range", "2", "4").out
    for form in ("2-4", "2..4"):
        assert cli("recall", session, "--range", form).out == spaced
    assert "Turns 2-4" in spaced and "turn 4" in spaced and "turn 5" not in spaced
    assert "Turns 3-3" in cli("recall", session, "--range", "3").out
    summary = cli("recall", session, "--summary").out
    missing = cli("recall", session, "--search", "zebra").out
    for text in (summary, missing, spaced):
        assert "conversation_recall" not in text and "start_turn" not in text
    assert f"`clew recall {session} --range A-B`" in summary
    assert f"`clew recall {session} --summary`" in missing


def test_clipped_recall_in_the_cli_names_only_cli_commands(
    cli: Cli, db: Path, tmp_path: Path
) -> None:
    chat = tmp_path / "long.jsonl"
    long_text = "\n".join(f"line {n} of a long tool output" for n in range(400))
    chat.write_text(
        "".join(
            json.dumps({"role": "user", "content": f"{long_text}\nturn {n}"}) + "\n"
            for n in range(1, 30)
        )
    )
    session = cli("session", "import", str(chat)).out.strip()
    out = cli("recall", session, "--range", "1-29", "--budget", "1000").out
    assert "left out" in out and f"`clew recall {session} --range " in out
    assert "conversation_recall" not in out and "start_turn" not in out
    # The tool keeps speaking in its own arguments.
    with clew.open(db) as mem:
        raw = mem.recall(session, "range", start_turn=1, end_turn=29, budget=1000).text
    assert "conversation_recall action=range start_turn=" in raw


def test_demo_ends_with_three_commands_that_work(tmp_path: Path) -> None:
    done = run("demo", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    tail = done.stdout.rstrip().split("Three commands to try next\n", 1)[1].splitlines()
    assert len(tail) == 3
    for line in tail:  # on a store of the user's own, made by the first of them
        words = shlex.split(line.strip())
        assert words[0] == "clew"
        assert run(*words[1:], cwd=tmp_path).returncode == 0, line
    kept = run("demo", "--keep", cwd=tmp_path)
    lines = kept.stdout.rstrip().split("Three commands to try next\n", 1)[1].splitlines()
    assert len(lines) == 3
    for line in lines:  # on the kept demo store
        result = run(*shlex.split(line.strip())[1:], cwd=tmp_path)
        assert result.returncode == 0 and result.stdout.strip(), line
    store = re.search(r"The demo store is kept at (\S+)\. ", kept.stdout)
    assert store is not None and Path(store.group(1)).exists()
    shutil.rmtree(Path(store.group(1)).parent)


def test_demo_json_prints_one_json_object(tmp_path: Path) -> None:
    done = run("demo", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    outcome = json.loads(done.stdout)
    assert outcome["store"] is None and outcome["verified"] is True
    assert outcome["task"]["name"] == "Deploy coursefolio"
    assert "step 4" in outcome["where"] and outcome["state"].startswith("task:")
    assert outcome["next"][0] == "clew init" and len(outcome["next"]) == 3


def test_user_docs_speak_of_clews_own_features() -> None:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    help_text = main_help_texts()
    for page in pages:
        found = re.findall(r"\bseeds?\b", page.read_text(), re.I)
        assert not found, f"{page.name} mentions {found}"
    assert not re.search(r"\bseeds?\b", help_text, re.I)
    for prompt in (ROOT / "src" / "clew" / "prompts").glob("*.toml"):
        assert not re.search(r"\bseeds?\b", prompt.read_text(), re.I), prompt.name


def main_help_texts() -> str:
    """Every command's --help, concatenated."""
    from clew.cli import build_parser
    from tests.test_docs import commands as walk

    return "\n".join(parser.format_help() for _, parser, _ in walk(build_parser()))


def test_main_without_arguments_in_process(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 0
    assert capsys.readouterr().out.startswith("clew ")
