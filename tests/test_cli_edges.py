"""The smaller edges a new user meets at the command line (issue 27, point 6), each through
`clew.cli.main` on a real store, as a user would run it."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import Result

Cli = Callable[..., Result]


def test_counts_take_the_noun_in_their_number(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    cli("task", "new", "Deploy", "--workspace", str(tmp_path))
    assert "clew: 1 active task for this workspace." in cli("prime").out
    cli("task", "new", "Other", "--workspace", str(tmp_path))
    assert "clew: 2 active tasks for this workspace." in cli("prime").out
    assert "(1 more active task here: `clew task list`)" in cli("where").out
    assert "(s)" not in cli("prime").out


def stuck_deploy(cli: Cli, *, stream: str = "--stdout") -> tuple[str, str]:
    """A deploy whose `make` failed three times (its error on `stream`), with messages that
    suggest step 2 is done: a `where` too long for its quotes. Return the task and the
    newest failed action."""
    task = cli(
        "task",
        "new",
        "Deploy coursefolio to production",
        "--goal",
        "coursefolio v1.2.3 serving on the production server behind the balancer",
        "--plan",
        "Build the Docker image for the release",
        "Push the image to ghcr.io",
        "SSH into the production server prod-1",
        "Pull the image and run the container",
        "Check the health endpoint",
    ).out.strip()
    cli("task", "update", task, "--step", "1", "--step-status", "completed", "-m", "built")
    finished = "Finished pushing the image to ghcr.io; the registry shows the new tag v1.2.3"
    cli("task", "update", task, "--step", "2", "-m", finished + " and the digest CI printed")
    output = (
        "deploy: pulling ghcr.io/alex/coursefolio:v1.2.3\n"
        "ERROR: denied: permission_denied: read_package for the user deploy\n"
        "make: *** [Makefile:12: deploy] Error 1\n"
    )
    for _ in range(3):
        run = cli(
            "task",
            "action",
            task,
            "-c",
            "make deploy-prod ENV=production TARGET=prod-1",
            "--exit-code",
            "2",
            stream,
            output,
            "--json",
        )
        assert run.code == 0, run.err
    return task, json.loads(run.out)["id"]


def test_where_says_what_the_json_suggests_and_cuts_no_command(cli: Cli) -> None:
    task, _ = stuck_deploy(cli)
    as_json = json.loads(cli("where", task, "--json").out)
    assert [s["step"] for s in as_json["suggestions"]] == [2]
    text = cli("where", task).out
    assert "Messages suggest step 2 is done" in text
    for line in text.splitlines():
        # A command quoted whole or not at all: backticks come in pairs on every line
        # the brief writes itself (the quoted failure is clipped in its middle on purpose).
        if line.startswith(("Stuck:", "Try:")):
            assert line.count("`") % 2 == 0, line
    assert "Try: read the error with `clew task output " in text


def test_stuck_advises_the_stream_that_holds_the_error(cli: Cli) -> None:
    task, action = stuck_deploy(cli, stream="--stdout")
    shown = cli("stuck", task).out
    assert f"`clew task output {action}`" in shown and "--stderr" not in shown
    assert "permission_denied" in cli("task", "output", action).out
    other, failed = stuck_deploy(cli, stream="--stderr")
    assert f"`clew task output {failed} --stderr`" in cli("stuck", other).out


PYTEST_OUTPUT = (
    "pytest tests/\n"
    "tests/test_api.py:41: in test_login\n"
    "E   sqlite3.OperationalError: no such table: users\n"
    "make: *** [Makefile:8: test] Error 1\n"
)


def test_seen_finds_the_fix_from_the_real_error_line_and_quotes_it(cli: Cli) -> None:
    task = cli("task", "new", "Build", "--plan", "Test").out.strip()
    run = cli(
        "task",
        "action",
        task,
        "-c",
        "make test",
        "--exit-code",
        "2",
        "--stderr",
        PYTEST_OUTPUT,
        "--json",
    )
    action = json.loads(run.out)["id"]
    error = cli(
        "task",
        "record",
        task,
        "--error",
        "make test fails: no such table users",
        "--detail",
        PYTEST_OUTPUT,
        "--command",
        "make test",
    ).out.strip()
    assert cli("fix", error, "ran the migrations first: make migrate", "--worked").code == 0
    for pasted in (
        "sqlite3.OperationalError: no such table: users",  # the line a log shows
        "no such table: users",  # its message alone
        PYTEST_OUTPUT,  # the whole output
    ):
        shown = cli("seen", pasted).out
        assert "fix WORKED" in shown and "make migrate" in shown, (pasted, shown)
        assert f"error {error}" in shown and f"command {action}" in shown
        # The error's own line is quoted, not the tail make adds to every failure.
        assert "E sqlite3.OperationalError: no such table: users" in shown
        assert "make: ***" not in shown
    found = json.loads(cli("seen", "no such table: users", "--json").out)
    assert [f["description"] for f in found["fixes"]] == ["ran the migrations first: make migrate"]
    assert "fix WORKED" not in cli("seen", "no such column: name").out


def test_the_adk_recipe_says_it_needs_a_google_key_and_what_runs_without() -> None:
    page = (Path(__file__).parent.parent / "docs" / "integrations" / "adk.md").read_text()
    needs = page.index("needs a Google key")
    assert needs < page.index("```python")  # said before the recipe, not after
    assert "GOOGLE_API_KEY" in page and "GOOGLE_GENAI_USE_VERTEXAI" in page
    assert "clew itself needs no key" in page


def test_search_hits_name_steps_by_number_and_json_snippets_are_plain(cli: Cli) -> None:
    task = cli("task", "new", "Deploy", "--plan", "Build", "Push the image", "Run").out.strip()
    cli(
        "task",
        "action",
        task,
        "--step",
        "2",
        "-c",
        "docker push registry.example/app:v1",
        "--exit-code",
        "1",
        "--stderr",
        "[push] denied: the registry refused the upload",
    )
    shown = cli("search", "registry refused").out
    assert f"task {task} step 2 (Push the image)" in shown
    hits = json.loads(cli("search", "registry refused", "--json").out)
    hit = next(h for h in hits if h["kind"] == "action")
    assert hit["step"] == 2 and hit["step_title"] == "Push the image"
    snippet = hit["snippet"]
    assert "[registry]" not in snippet and "[refused]" not in snippet
    assert "[push]" in snippet  # the output's own brackets stay
    marked = {snippet[start:end].casefold() for start, end in hit["matches"]}
    assert marked <= {"registry", "refused"} and "refused" in marked


def test_wait_add_says_what_watches_the_wait_and_how_to_stop_it(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    from clew.jobs import worker

    started: list[str] = []
    monkeypatch.setattr(worker, "spawn", lambda path, space: started.append(space))
    monkeypatch.setenv("CLEW_WORKER", "auto")
    task = cli("task", "new", "Deploy").out.strip()
    added = cli("wait", "add", task, "--time", "1h", "--every", "5m")
    wait = added.out.strip()
    assert added.code == 0 and wait and started  # stdout is the id alone; a worker started
    (said,) = added.err.strip().splitlines()
    assert "a background `clew work` process checks" in said and "every 300s" in said
    assert "`clew wait list`" in said and f"`clew wait cancel {wait}` stops it" in said
    monkeypatch.setenv("CLEW_WORKER", "off")
    started.clear()
    quiet = cli("wait", "add", task, "--time", "1h")
    assert not started and "no background worker (worker = off)" in quiet.err
    manual = cli("wait", "add", task, "--manual", "the reviewer says yes")
    assert manual.code == 0 and manual.err == ""


CODEX = next((Path(__file__).parent / "data" / "codex").glob("rollout-*.jsonl"))
CODEX_KEY = "0199a1c2-7d3e-7b41-9f0a-5c2e8d4b1a67"


def test_codex_sessions_answer_to_a_key_prefix_and_a_search_from_any_folder(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The recipe run where a user tries it: the rollout names the folder Codex ran in
    # (/home/dev/coursefolio), not this one.
    monkeypatch.chdir(tmp_path)
    imported = cli("import", "--from", "codex", str(CODEX))
    assert f"session {CODEX_KEY}: 16 new turns" in imported.out
    found = cli("recall", "--search", "requirements.txt")
    assert found.code == 0, found.err
    assert "requirements.txt" in found.out and "searched every session of this store" in found.err
    # The key the import printed, shortened as ids are.
    assert cli("recall", "0199", "--summary").out.startswith("Session ")
    assert cli("session", "show", "0199a1c2", "--json").code == 0
    assert "no session matches '0188'" in cli("recall", "0188", "--summary").err
    assert cli("session", "new", "--key", "0199-other").code == 0  # a second key that fits
    clash = cli("recall", "0199", "--summary")
    assert clash.code == 2 and "ambiguous" in clash.err and "0199-other" in clash.err
    assert cli("recall", "0199a", "--summary").code == 0


def _completion(shell: str, capsys: pytest.CaptureFixture[str]) -> str:
    from clew.cli import main

    capsys.readouterr()
    assert main(["completion", shell]) == 0
    return capsys.readouterr().out


def test_bash_completion_completes_commands_options_and_values(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "clew.bash"
    script.write_text(_completion("bash", capsys))
    probe = (
        f"source {script}\n"
        "complete -p clew\n"
        'try() { COMP_WORDS=("$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); COMPREPLY=();'
        ' _clew; echo "${COMPREPLY[*]}"; }\n'
        "try clew ta\n"
        "try clew --db x.db task re\n"
        "try clew task update abc --st\n"
        "try clew task update abc --step-status c\n"
        "try clew completion ''\n"
        'compgen -W "$(_clew_words task && echo $words)" -- sh\n'
    )
    done = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, check=True)
    lines = done.stdout.splitlines()
    assert lines[0] == "complete -F _clew clew"
    assert lines[1] == "task"
    assert lines[2].split() == ["replan", "record", "resolve"]
    assert lines[3].split() == ["--status", "--step", "--step-status"]
    assert lines[4].split() == ["completed"]
    assert lines[5].split() == ["bash", "zsh", "fish"]
    assert lines[6] == "show"


def test_zsh_and_fish_completion_name_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    from clew.cli import build_parser
    from clew.cli.completion import nodes

    top = {name for name, _ in next(nodes(build_parser())).commands}
    assert {"task", "search", "recall", "completion"} <= top
    zsh = _completion("zsh", capsys)
    assert zsh.startswith("#compdef clew") and "compdef _clew clew" in zsh
    # The root's menu: every top-level command, with its help.
    root = re.search(r"^\s+_\) commands=\((.*)\); options=", zsh, re.M)
    assert root is not None
    assert {m.split(":")[0] for m in shlex.split(root.group(1))} == top
    assert re.search(r"^\s+task\) commands=\(.*'show:", zsh, re.M)
    fish = _completion("fish", capsys)
    root_line = re.compile(r"^complete -c clew -f -n \"__clew_at ''\" -a '([^']+)'", re.M)
    offered = set(root_line.findall(fish))
    assert offered == top
    assert "complete -c clew -f -n \"__clew_at 'task'\" -a 'show'" in fish
    assert "-n \"__clew_at 'task update'\" -l 'step-status'" in fish
    assert "-l 'step-status' -x -a 'pending active completed failed skipped'" in fish
