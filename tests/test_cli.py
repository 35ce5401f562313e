"""The `clew` command, run in-process through its main() and as a real process."""

from __future__ import annotations

import io
import json
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import clew
from clew.cli import main
from tests.conftest import Result

Cli = Callable[..., Result]


def new_task(cli: Cli, *args: str) -> str:
    result = cli("task", "new", "Deploy", "--plan", "Build", "Push", "Run", *args)
    assert result.code == 0, result.err
    return result.out.strip()


def test_task_new_prints_the_id_and_json_gives_the_record(cli: Cli) -> None:
    task_id = new_task(cli, "--goal", "ship", "--meta", "owner=alex", "--meta", "prio=2")
    assert len(task_id) == 10
    shown = json.loads(cli("task", "show", task_id, "--json").out)
    assert shown["task"]["goal"] == "ship"
    assert shown["task"]["metadata"] == {"owner": "alex", "prio": 2}
    assert [s["title"] for s in shown["task"]["plan"]] == ["Build", "Push", "Run"]
    created = json.loads(cli("task", "new", "Other", "--json").out)
    assert created["name"] == "Other" and created["status"] == "active"


def test_task_list_shows_tasks_and_filters_by_status(cli: Cli) -> None:
    assert "no tasks" in cli("task", "list").out
    first = new_task(cli)
    second = new_task(cli)
    assert cli("task", "update", second, "--status", "paused").code == 0
    listed = cli("task", "list").out
    assert first in listed and second in listed and "0/3 steps" in listed
    active = json.loads(cli("task", "list", "--status", "active", "--json").out)
    assert [t["id"] for t in active] == [first]
    assert cli("task", "list", "--status", "bogus").code == 2


def test_update_steps_messages_and_status(cli: Cli) -> None:
    task_id = new_task(cli)
    assert cli("task", "update", task_id[:4], "--step", "1").code == 0  # --step alone: active
    result = cli(
        "task",
        "update",
        task_id,
        "-m",
        "built",
        "--step",
        "1",
        "--step-status",
        "completed",
        "--summary",
        "image v1.2.3",
    )
    assert result.code == 0 and "1/3 steps completed" in result.out
    shown = cli("task", "show", task_id).out
    assert "[x]  1. Build" in shown and "summary: image v1.2.3" in shown
    assert "agent/progress: built" in shown
    done = cli("task", "update", task_id, "--status", "completed", "--json")
    assert json.loads(done.out)["status"] == "completed"


def test_action_output_from_file_and_stdin_is_kept_exactly(
    cli: Cli,
    db: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    task_id = new_task(cli)
    blob = tmp_path / "out.bin"
    blob.write_bytes(b"ok\n\xff\xfe\x00raw")
    result = cli(
        "task",
        "action",
        task_id,
        "--command",
        "make",
        "--exit-code",
        "2",
        "--stdout-file",
        str(blob),
        "--step",
        "2",
        "--cwd",
        "/src",
        "--duration",
        "1.5",
    )
    action_id = result.out.strip()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"from stdin\n")))
    piped = cli("task", "action", task_id, "-c", "echo", "--exit-code", "0", "--stderr-file", "-")
    assert cli("task", "output", piped.out.strip(), "--stderr").out == "from stdin\n"
    with clew.open(db) as mem:
        action = mem.get_action(action_id)
    assert action.stdout == b"ok\n\xff\xfe\x00raw"
    assert (action.status.value, action.exit_code, action.cwd) == ("failed", 2, "/src")
    info = cli("task", "output", action_id, "--info").out
    assert "binary, 9 bytes" in info and "exit code: 2" in info


def test_finish_and_log_an_action(cli: Cli) -> None:
    task_id = new_task(cli)
    action_id = cli("task", "action", task_id, "-c", "pytest", "--status", "started").out.strip()
    assert cli("task", "log", action_id, "collected 10 items").code == 0
    assert cli("task", "finish", action_id, "--exit-code", "0").out.strip().endswith("completed")
    shown = json.loads(cli("task", "output", action_id, "--json").out)
    assert shown["action"]["status"] == "completed"
    assert [x["content"] for x in shown["logs"]] == ["collected 10 items"]


def test_replan_keeps_the_order_of_operations(cli: Cli) -> None:
    task_id = new_task(cli)
    result = cli(
        "task",
        "replan",
        task_id,
        "--add",
        "Verify",
        "--insert",
        "1",
        "Login",
        "--move",
        "5",
        "2",
        "--rename",
        "3",
        "Build image",
        "--remove",
        "4",
        "--reason",
        "auth",
    )
    assert result.code == 0, result.err
    plan = json.loads(cli("task", "show", task_id, "--json").out)["task"]
    assert plan["plan_version"] == 2
    assert [s["title"] for s in plan["plan"]] == ["Login", "Verify", "Build image", "Run"]
    assert cli("task", "replan", task_id).code == 2  # no operation given


def test_where_text_and_json(cli: Cli) -> None:
    task_id = new_task(cli)
    cli("task", "update", task_id, "--step", "1", "--step-status", "completed", "-m", "built")
    cli("task", "action", task_id, "-c", "docker push", "--exit-code", "1", "--stderr", "denied")
    text = cli("task", "where", task_id).out
    assert "Completed steps 1 of 3: Build." in text and "`docker push` exited 1" in text
    brief = json.loads(cli("task", "where", task_id, "--json").out)
    assert brief["current"]["number"] == 2 and brief["last_update"] == "built"


def test_archive_hides_from_list(cli: Cli) -> None:
    task_id = new_task(cli)
    assert cli("task", "archive", task_id).out.strip().endswith("archived")
    assert task_id not in cli("task", "list").out
    assert task_id in cli("task", "list", "--all").out
    assert cli("task", "archive", task_id, "--undo").code == 0
    assert task_id in cli("task", "list").out


def test_journal_and_verify(cli: Cli, db: Path) -> None:
    task_id = new_task(cli)
    cli("task", "update", task_id, "-m", "hi")
    lines = cli("journal", "--task", task_id[:3]).out.splitlines()
    assert [line.split()[2] for line in lines] == ["task.created", "message.added"]
    events = json.loads(cli("journal", "--json", "--after", "1").out)
    assert [e["type"] for e in events] == ["message.added"]
    ok = cli("verify")
    assert ok.code == 0 and ok.out.startswith("ok: 2 journal events")
    sqlite3.connect(db, isolation_level=None).execute("UPDATE tasks SET name = 'forged'")
    bad = cli("verify")
    assert bad.code == 1 and "MISMATCH" in bad.out and "forged" in bad.out
    assert json.loads(cli("verify", "--json").out)["ok"] is False


def test_global_options_work_before_and_after_the_command(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["task", "new", "X", "--db", str(db), "--space", "s1"]) == 0
    capsys.readouterr()
    assert main(["--db", str(db), "--space", "s1", "task", "list", "--json"]) == 0
    assert [t["name"] for t in json.loads(capsys.readouterr().out)] == ["X"]
    assert main(["--db", str(db), "task", "list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []  # the default space is another namespace


def test_store_is_found_like_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("CLEW_DB", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    project = tmp_path / "project"
    deep = project / "src" / "pkg"
    deep.mkdir(parents=True)
    monkeypatch.chdir(project)
    assert main(["init"]) == 0
    assert (project / ".clew" / "clew.db").exists()
    monkeypatch.chdir(deep)
    assert main(["task", "new", "found upward"]) == 0
    with clew.open(project / ".clew" / "clew.db") as mem:
        assert [t.name for t in mem.list_tasks()] == ["found upward"]
    monkeypatch.chdir(tmp_path)  # no .clew/ here or above: the per-user store
    assert main(["task", "new", "user level"]) == 0
    assert (tmp_path / "xdg" / "clew" / "clew.db").exists()
    monkeypatch.setenv("CLEW_DB", str(tmp_path / "env.db"))
    assert main(["task", "new", "from env"]) == 0
    with clew.open(tmp_path / "env.db") as mem:
        assert [t.name for t in mem.list_tasks()] == ["from env"]
    capsys.readouterr()


def test_help_everywhere_and_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"clew {clew.__version__}"
    with pytest.raises(SystemExit):
        main(["task", "replan", "--help"])
    assert "--insert POS TITLE" in capsys.readouterr().out


def test_the_installed_command_runs_as_a_process(tmp_path: Path) -> None:
    exe = shutil.which("clew", path=str(Path(sys.executable).parent))
    assert exe is not None, "the clew console script is installed next to python"
    db = str(tmp_path / "p.db")
    made = subprocess.run(
        [exe, "--db", db, "task", "new", "P", "--plan", "a"],
        capture_output=True,
        text=True,
        check=True,
    )
    shown = subprocess.run(
        [sys.executable, "-m", "clew", "--db", db, "task", "show", made.stdout.strip()],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "[ ]  1. a" in shown.stdout
    bad = subprocess.run([exe, "--db", db, "task", "show", "zz"], capture_output=True, text=True)
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines() == [
        "clew: error: no task matches 'zz'; list tasks with `clew task list`"
    ]


def test_tidy_from_the_command_line(cli: Cli) -> None:
    task_id = new_task(cli)
    assert cli("task", "tidy").out.strip() == "nothing to tidy"
    result = cli("task", "tidy", "--pause-after", "0s", "--dry-run")
    assert result.out.strip() == f"{task_id} would be paused"
    assert json.loads(cli("task", "tidy", "--pause-after", "0s", "--json").out) == [
        {"task_id": task_id, "action": "paused"}
    ]
    bad = cli("task", "tidy", "--pause-after", "soon")
    assert bad.code == 2
    assert "not like 90s" in bad.err


def test_an_error_recorded_or_kept_open_gets_evidence_not_resolution(cli: Cli) -> None:
    task_id = new_task(cli)
    for command in ("pytest -n 4 --group 22", "make lint"):
        assert cli("task", "action", task_id, "--command", command, "--exit-code", "1").code == 0
    flaky = cli(
        "task",
        "record",
        task_id,
        "--error",
        "group 22 is flaky",
        "--command",
        "pytest -n 4 --group 22",
        "--keep-open",
    ).out.strip()
    lint = cli("task", "record", task_id, "--error", "lint", "--command", "make lint").out.strip()
    for command in ("pytest -n 4 --group 23", "pytest -n 4 --group 22", "make lint"):
        assert cli("task", "action", task_id, "--command", command, "--exit-code", "0").code == 0
    shown = cli("entries", flaky).out
    assert "kept open: yes" in shown and "recorded by: the agent" in shown
    for error, command in ((flaky, "pytest -n 4 --group 22"), (lint, "make lint")):
        # One piece of evidence each: the other shard's pass is not it.
        [evidence] = [x for x in cli("entries", error).out.splitlines() if "evidence" in x]
        assert evidence.startswith(f"evidence: a later run of `{command}` passed at ")
    errors = json.loads(cli("entries", "--task", task_id, "--type", "error", "--json").out)
    assert {e["status"] for e in errors} == {"active"}
    assert "evidence: a later run of `make lint`" in cli("entries", "--task", task_id).out
    assert cli("task", "keep-open", task_id, lint).out.strip() == f"{lint} kept open"
    assert cli("task", "keep-open", task_id, lint, "--release").out.strip() == (
        f"{lint} no longer kept open"
    )
    bad = cli("task", "record", task_id, "--decision", "x", "--keep-open")
    assert bad.code == 2 and "go with --error" in bad.err
    cli("task", "resolve", task_id, flaky, "--resolution", "passed five times in a row")
    again = cli("task", "keep-open", task_id, flaky)
    assert again.code == 2 and "already resolved" in again.err


def test_record_resolve_and_list_entries(cli: Cli) -> None:
    task_id = new_task(cli)
    decision = cli("task", "record", task_id, "--decision", "Use ghcr.io", "--tags", "infra,ci")
    assert decision.code == 0, decision.err
    error = cli("task", "record", task_id[:5], "--error", "pull denied", "--step", "2").out.strip()
    fixed = cli("task", "record", task_id, "--error", "flaky", "--resolution", "retried")
    assert fixed.code == 0
    finding = cli("task", "record", task_id, "--finding", "3 tables", "--detail", "a, b, c")
    assert (
        json.loads(cli("entries", "--task", task_id, "--type", "discovery", "--json").out)[0][
            "detail"
        ]
        == "a, b, c"
        and finding.code == 0
    )
    assert cli("task", "record", task_id, "--constraint", "no downtime").code == 0
    assert cli("task", "record", task_id, "--question", "which port?").code == 0
    assert cli("task", "resolve", task_id, error[:6], "--resolution", "token").out.strip() == (
        f"{error} resolved"
    )
    listed = cli("entries", "--task", task_id).out
    assert "Use ghcr.io" in listed and "#infra #ci" in listed and "-> token" in listed
    errors = json.loads(cli("entries", "--task", task_id, "--type", "error", "--json").out)
    assert {e["status"] for e in errors} == {"resolved"}
    assert "Use ghcr.io" in cli("task", "show", task_id).out
    # A reversed decision names the one it replaces; search shows the new one first, the old
    # one labelled.
    dockerhub = cli("task", "record", task_id, "--decision", "Push to Docker Hub").out.strip()
    ghcr = cli(
        "task",
        "record",
        task_id,
        "--decision",
        "Push to ghcr.io: Docker Hub rate-limits pulls",
        "--supersedes",
        dockerhub[:6],
    ).out.strip()
    hits = json.loads(cli("search", "which registry did we push to?", "--json").out)
    ids = [h["id"] for h in hits]
    assert ids.index(ghcr) < ids.index(dockerhub)
    assert "superseded" in hits[ids.index(dockerhub)]["label"]
    # Bad input: one line, exit 2, nothing written.
    for args, says in (
        (["task", "record", task_id], "one of the arguments"),
        (["task", "record", task_id, "--decision", "a", "--error", "b"], "not allowed with"),
        (["task", "record", task_id, "--decision", "x", "--resolution", "y"], "goes with --error"),
        (["task", "resolve", task_id, error, "--resolution", "again"], "already resolved"),
        (["task", "resolve", task_id, "zzzz", "--resolution", "x"], "no entry matches"),
        (["task", "record", task_id, "--decision", "x", "--supersedes", "zzzz"], "no entry"),
        (["entries", "--type", "rumour"], "not one of"),
    ):
        result = cli(*args)
        assert result.code == 2 and says in result.err and len(result.err.splitlines()) == 1


def test_state_prime_and_files(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import yaml

    monkeypatch.chdir(tmp_path)
    task_id = new_task(cli, "--goal", "v1 live", "--workspace", str(tmp_path))
    assert cli("task", "files", task_id, "--created", "a.py", "--modified", "b.py").code == 0
    assert "1 created, 1 modified" in cli("task", "files", task_id).out
    assert cli("task", "update", task_id, "--next", "push it", "--progress", "built").code == 0
    state = yaml.safe_load(cli("state", task_id).out)
    assert state["task"]["goal"] == "v1 live" and state["next_objective"] == "push it"
    as_json = json.loads(cli("state", task_id, "--budget", "800", "--json").out)
    assert as_json["budget"] == 800 and as_json["tokens"] <= 800
    bad = cli("state", task_id, "--budget", "10")
    assert bad.code == 2 and "out of range" in bad.err
    primed = cli("prime")
    assert primed.code == 0 and f'<clew-task-state task="{task_id}"' in primed.out
    assert json.loads(cli("prime", "--json").out)["task_ids"] == [task_id]
    elsewhere = cli("prime", "--workspace", str(tmp_path.parent / "elsewhere"))
    assert "no active task" in elsewhere.out


def test_note_search_seen_and_fix(cli: Cli) -> None:
    task_id = new_task(cli)
    made = cli(
        "note",
        task_id,
        "--type",
        "error",
        "--summary",
        "upload failed",
        "--detail",
        "ConnectionError: ERR_CONN_RESET after 30s",
        "--tags",
        "net,upload",
        "--subtask",
        "2",
        "--command",
        "curl -T big.bin https://x",
        "--source",
        "entry:" + task_id[:0] + "zz",
    )
    assert made.code == 2 and "no entry matches" in made.err
    error_id = cli(
        "note",
        task_id,
        "--type",
        "error",
        "--summary",
        "upload failed",
        "--detail",
        "ConnectionError: ERR_CONN_RESET after 30s",
        "--tags",
        "net,upload",
        "--subtask",
        "2",
        "--command",
        "curl -T big.bin https://x",
    ).out.strip()
    assert cli("note", "--type", "context", "--summary", "the CDN is in eu-west").code == 0
    found = cli("search", "ERR_CONN_RESET")
    assert error_id in found.out and "CONN" in found.out
    assert json.loads(cli("search", "cdn", "--json").out)[0]["title"].startswith("the CDN")
    assert "nothing found" in cli("search", "zebra").out
    for hostile in ('"', "(", "AND", "-", "a:b"):
        result = cli("search", hostile)
        assert result.code in (0, 2) and "Traceback" not in result.err
    assert cli("fix", error_id, "retried", "--failed").code == 0
    assert "worked" in cli("fix", error_id, "used --retry 5", "--worked").out
    seen = cli(
        "seen",
        "ConnectionError: ERR_CONN_RESET after 45s",
        "--command",
        "curl -T other.bin https://y",
    )
    assert "seen once" in seen.out and "WORKED" in seen.out and "used --retry 5" in seen.out
    assert json.loads(cli("seen", "KeyError: 'x'", "--json").out)["seen"] is False
    relevant = json.loads(cli("entries", "--task", task_id, "--relevant-to", "1", "--json").out)
    assert [e["id"] for e in relevant] == [error_id]  # errors always matter
    tagged = json.loads(cli("entries", "--tag", "net", "--tag", "upload", "--json").out)
    assert [e["id"] for e in tagged] == [error_id]


def test_ledger_trace_and_history(cli: Cli) -> None:
    task_id = new_task(cli)
    for code in ("1", "1", "0"):
        assert cli("task", "action", task_id, "-c", "pytest -q", "--exit-code", code).code == 0
    assert "`pytest -q`" in cli("ledger", "--last-green").out
    assert "2x  `pytest -q`" in cli("ledger", "--repeated").out
    assert len(json.loads(cli("ledger", "--failed", "--json").out)) == 2
    decision = cli(
        "trace",
        "decide",
        task_id,
        "--action",
        "run the tests",
        "--agent",
        "executor",
        "--model",
        "m",
        "--prompt-tokens",
        "10",
        "--completion-tokens",
        "5",
        "--context",
        '{"why": "check"}',
    ).out.strip()
    assert (
        cli(
            "task",
            "action",
            task_id,
            "--tool",
            "run_tests",
            "--type",
            "tool",
            "--summary",
            "ran them",
            "--decision",
            decision,
            "--started-at",
            "2026-11-22T09:00:00Z",
            "--ended-at",
            "2026-11-22T09:00:03Z",
        ).code
        == 0
    )
    assert "passed" in cli("trace", "validate", decision, "--passed", "--feedback", "ok").out
    shown = cli("trace", "show", task_id).out
    assert (
        "[executor]" in shown
        and "run_tests completed 3.0s" in shown
        and "passed functional" in shown
    )
    history = cli("task", "history", task_id).out
    assert "ran `pytest -q` -> failed, exit 1" in history and "decided by executor" in history


def test_patterns_and_guardrails_from_the_shell(cli: Cli) -> None:
    pattern_id = cli("pattern", "add", "api", "validate input").out.strip()
    for _ in range(3):
        assert cli("pattern", "observe", pattern_id, "--success").code == 0
    assert "3/3 worked" in cli("pattern", "list").out
    assert "nothing to prune" in cli("pattern", "prune", "--dry-run").out
    assert cli("guard", "defaults").code == 0
    blocked = cli("guard", "check", "rm -rf /")
    assert blocked.code == 1 and "block: Never delete" in blocked.out
    assert cli("guard", "check", "ls -la").code == 0
    bad = cli("guard", "add", "no ls", "--pattern", "ls", "--good", "ls -la")
    assert bad.code == 2 and "catches the good example" in bad.err
    rule_id = json.loads(cli("guard", "list", "--json").out)[0]["id"]
    assert "disabled" in cli("guard", "disable", rule_id).out
    assert cli("guard", "check", "rm -rf /").code == 0
    assert "Never delete" in cli("guard", "list", "--all").out


def test_ask_work_jobs_usage_and_summary(cli: Cli) -> None:
    task_id = new_task(cli)
    assert cli("task", "action", task_id, "-c", "make", "--exit-code", "2", "--step", "1").code == 0
    assert cli("task", "update", task_id, "--step", "1", "--step-status", "completed").code == 0
    pending = json.loads(cli("jobs", "--status", "pending", "--json").out)
    assert [j["kind"] for j in pending] == ["extract"]
    worked = cli("work")
    assert "extract done (rules, 1 entries)" in worked.out
    assert "no queued jobs" in cli("work").out
    assert "`make` failed (exit 2)" in cli("entries", "--task", task_id).out
    answer = cli("ask", task_id, "what failed?")
    assert (
        "make" in answer.out and "answered from the records: no model is configured" in answer.out
    )
    assert json.loads(cli("ask", task_id, "where am I?", "--json").out)["source"] == "rules"
    assert "Completed steps 1 of 3." in cli("task", "summary", task_id).out
    usage = cli("usage")
    assert (
        usage.out.startswith("0 model calls, 0 tokens in 7 days")
        and "calls per day 2,000" in usage.out
    )
    bad = cli("ask", task_id, "   ")
    assert bad.code == 2 and "question is empty" in bad.err
