"""The store's rough edges: command-line bytes that are not UTF-8, a damaged SQLite file, a
store another process holds in exclusive mode, stores of every older schema, and `clew init`
in a git work tree. Each is one line and a clear exit, never a traceback."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import pty
import select
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import clew
from clew.cli import main
from clew.core import chain
from clew.store.migrations import LATEST
from tests.conftest import Result
from tests.old_stores import as_released, store_at
from tests.test_docs import leaves

NOT_UTF8 = "ab\udcffc"  # what Python makes of the bytes b"ab\xffc" on a command line


def one_line(result: Result) -> str:
    """The error line of a refused command: exit 2, exactly one line on stderr."""
    assert result.code == 2, result
    assert result.err.count("\n") == 1 and result.err.startswith("clew: error: "), result.err
    return result.err


def run(argv: list[str]) -> Result:
    """`clew ARGV` in this process; an exception that escapes main fails the test."""
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv, stderr=err)
    except SystemExit as exc:  # argparse's --help and its own exits
        code = int(exc.code or 0)
    return Result(code, out.getvalue(), err.getvalue())


# -- bytes that are not UTF-8 --------------------------------------------------------------


def test_every_argument_that_is_not_utf8_is_refused_in_one_line_or_answered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every command, with that text as each positional argument and as each option's value
    in turn: refused in one line (exit 2) or answered, never a traceback."""
    monkeypatch.chdir(tmp_path)  # an --output of that name lands here
    db = str(tmp_path / "s.db")
    with clew.open(db) as mem:
        mem.create_task("t", ["a"])
        mem.start_session(key="k")
    skipped = {"serve", "mcp", "work", "demo", "integrate", "init"}  # long-running or global
    tried = 0
    for path, parser, _ in leaves():
        if path[0] in skipped:
            continue
        actions = [a for a in parser._actions if not isinstance(a, argparse._SubParsersAction)]
        base = [NOT_UTF8 for a in actions if not a.option_strings and a.nargs not in ("?", "*")]
        options = [a.option_strings[-1] for a in actions if a.option_strings and a.nargs != 0]
        for extra in [[], *([o, NOT_UTF8] for o in options if o != "--db")]:
            result = run(["--db", db, *path, *base, *extra])
            if result.code == 2:
                one_line(result)
            tried += 1
    assert tried > 300


@pytest.mark.parametrize(
    "args",
    [
        ["search", NOT_UTF8],
        ["recall", "--search", NOT_UTF8],
        ["recall", "k", "--search", NOT_UTF8],
        ["recall", "k", "--tool-calls", NOT_UTF8],
        ["session", "show", NOT_UTF8],
        ["session", "end", NOT_UTF8],
        ["context", "{task}", "--session", NOT_UTF8],
        ["session", "context", NOT_UTF8],
        ["keys", "revoke", NOT_UTF8],
    ],
)
def test_search_recall_sessions_and_keys_refuse_text_that_is_not_utf8(
    cli: Callable[..., Result], args: list[str]
) -> None:
    assert cli("session", "new", "--key", "k").code == 0
    task = cli("task", "new", "t").out.strip()
    assert "not valid UTF-8" in one_line(cli(*(a.replace("{task}", task) for a in args)))


def test_a_value_no_check_saw_is_still_refused_by_the_store(mem: clew.Memory) -> None:
    store = mem._store  # type: ignore[attr-defined]
    with pytest.raises(clew.ValidationError, match="not valid UTF-8"):
        store.find_session(NOT_UTF8)


# -- a damaged file ------------------------------------------------------------------------------

COMMANDS = (
    ["verify"],
    ["task", "list"],
    ["where"],
    ["search", "hello"],
    ["journal", "--limit", "5"],
    ["export"],
    ["session", "list", "--all"],
    ["entries"],
    ["task", "new", "more"],
    ["checkpoint", "--file", "{tmp}/cp.jsonl"],
)


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("filled") / "clew.db"
    with clew.open(db) as mem:
        for i in range(60):
            task = mem.create_task(f"task {i} " + "words " * 30, ["build", "ship"])
            mem.update_task(task.id, message="hello " * 40, step=1, step_status="completed")
            mem.record_action(task.id, command=f"make {i}", exit_code=i % 2, stdout="ok " * 100)
        session = mem.start_session(key="chat")
        for i in range(40):
            mem.append_turn(session.id, {"role": "user", "content": f"hello {i} " * 20})
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # every page in the main file
    conn.close()
    return db


@settings(max_examples=12, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(page=st.integers(2, 10_000), spots=st.lists(st.integers(0, 7), min_size=1, max_size=4))
def test_a_damaged_file_is_one_line_from_every_command(
    filled: Path, tmp_path: Path, page: int, spots: list[int]
) -> None:
    """Bytes of a page's header flipped (its kind, cell count, where its cells start): the
    damage SQLite detects when it reads the page. (A flip inside a row's text is not
    damage SQLite can see: the row reads back changed, and verify finds the difference.)"""
    data = bytearray(filled.read_bytes())
    start = (page % (len(data) // 4096)) * 4096
    for spot in spots:
        data[start + spot] ^= 0xA5
    db = tmp_path / f"damaged-{page}.db"
    db.write_bytes(bytes(data))
    for command in COMMANDS:
        result = run(["--db", str(db), *(a.replace("{tmp}", str(tmp_path)) for a in command)])
        if result.code == 2:
            line = one_line(result)
            assert "Traceback" not in line
        else:
            assert result.code in (0, 1), result  # verify may find what the flips changed


def test_a_damaged_store_says_damaged_and_how_to_recover(filled: Path, tmp_path: Path) -> None:
    data = bytearray(filled.read_bytes())
    conn = sqlite3.connect(filled)
    root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'events'").fetchone()[0]
    conn.close()
    page = (root - 1) * 4096
    data[page + 8 : page + 12] = b"\xff\xff\xff\xff"  # the journal's root page, broken
    db = tmp_path / "damaged.db"
    db.write_bytes(bytes(data))
    for command in (["verify"], ["journal"], ["export"]):
        line = one_line(run(["--db", str(db), *command]))
        assert f"the store {db} is damaged" in line and ".recover" in line, line
    with pytest.raises(clew.StoreError, match="is damaged"), clew.open(db) as mem:
        mem.verify()


# -- a store held in exclusive mode --------------------------------------------------------------


def test_a_store_locked_in_exclusive_mode_is_busy_not_foreign(tmp_path: Path) -> None:
    db = tmp_path / "locked.db"
    with clew.open(db) as mem:
        mem.create_task("t")
    holder = subprocess.Popen(  # another process takes the file in exclusive locking mode
        [
            sys.executable,
            "-c",
            "import sqlite3, sys; c = sqlite3.connect(sys.argv[1], isolation_level=None);"
            " c.execute('PRAGMA locking_mode = EXCLUSIVE'); c.execute('BEGIN EXCLUSIVE');"
            " c.execute('COMMIT'); print('held', flush=True); sys.stdin.read()",
            str(db),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        for command in (["task", "list"], ["verify"], ["task", "new", "x"]):
            line = one_line(run(["--db", str(db), "--busy-timeout", "0.1", *command]))
            assert f"the store {db} is busy" in line and "exclusive locking mode" in line, line
            assert "not a clew store" not in line
        with pytest.raises(clew.StoreBusyError, match="busy_timeout="):
            clew.open(db, busy_timeout=0.1)
    finally:
        holder.communicate("", timeout=30)
    with clew.open(db) as mem:  # the lock gone, the store is as it was
        assert [t.name for t in mem.list_tasks()] == ["t"] and mem.verify().ok


# -- stores of every older schema ------------------------------------------------------------------


@pytest.fixture(scope="module")
def released(tmp_path_factory: pytest.TempPathFactory) -> list[chain.Link]:
    """A little work as today's clew journals it: a task, its steps, messages, a command."""
    db = tmp_path_factory.mktemp("released") / "clew.db"
    with clew.open(db) as mem:
        task = mem.create_task("Deploy", ["Build", "Ship"], goal="ship it")
        mem.update_task(task.id, step=1, step_status="active", message="building")
        mem.update_task(task.id, step=1, step_status="completed", message="built")
    conn = sqlite3.connect(db)
    rows = conn.execute(
        "SELECT seq, id, space, task_id, correlation_id, type, data, created_at, hash"
        " FROM events ORDER BY seq"
    ).fetchall()
    conn.close()
    return [chain.Link(*row) for row in rows]


@pytest.mark.parametrize("number", range(1, LATEST))
def test_a_store_of_every_older_schema_upgrades_and_verifies(
    tmp_path: Path, released: list[chain.Link], number: int
) -> None:
    db = tmp_path / f"schema-{number}.db"
    store_at(db, number, as_released(released, number))
    with clew.open(db) as mem:
        report = mem.verify()
        assert report.ok, report.differences
        assert [t.name for t in mem.list_tasks()] == ["Deploy"]
        assert [s.status.value for s in mem.get_task(mem.list_tasks()[0].id).plan] == [
            "completed",
            "pending",
        ]
        mem.create_task("after the upgrade")
        assert mem.verify().ok
    applied = sqlite3.connect(db).execute("SELECT max(number) FROM clew_migrations").fetchone()
    assert applied == (LATEST,)


def test_a_store_of_a_newer_schema_is_refused_in_one_line_naming_its_version(
    tmp_path: Path,
) -> None:
    db = tmp_path / "newer.db"
    clew.open(db).close()
    conn = sqlite3.connect(db)
    conn.execute(
        "INSERT INTO clew_migrations VALUES (?, 'from the future', 'then', 'f')", (LATEST + 1,)
    )
    conn.commit()
    conn.close()
    line = one_line(run(["--db", str(db), "task", "list"]))
    assert f"schema version {LATEST + 1}" in line and f"knows only {LATEST}" in line


# -- clew init in a git work tree ------------------------------------------------------------------


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git work tree (its .git folder is all clew looks for) with a folder to init in."""
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    folder = tmp_path / "repo" / "app"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


def test_init_outside_a_terminal_says_how_in_one_line_and_writes_nothing(repo: Path) -> None:
    result = run(["init"])
    assert result.code == 0 and result.err.count("\n") == 1
    assert "not in .gitignore" in result.err and "clew init --gitignore" in result.err
    assert not (repo / ".gitignore").exists()
    assert json.loads(run(["init", "--json"]).out)["gitignore"] == "told"
    assert run(["init", "--no-gitignore"]).err == ""


def test_init_gitignore_adds_the_line_once(repo: Path) -> None:
    (repo / ".gitignore").write_text("node_modules")  # no newline at its end
    result = run(["init", "--gitignore"])
    assert result.code == 0 and "added .clew/" in result.out and result.err == ""
    assert (repo / ".gitignore").read_text() == "node_modules\n.clew/\n"
    again = run(["init", "--gitignore", "--json"])
    assert json.loads(again.out)["gitignore"] == "ignored" and again.err == ""
    assert (repo / ".gitignore").read_text() == "node_modules\n.clew/\n"


@pytest.mark.parametrize(
    ("where", "line"),
    [
        ("repo", "/app/.clew/"),
        ("repo", ".clew"),
        ("repo", "**/.clew/"),
        ("app", "/.clew"),
        ("exclude", "app/.clew/*"),
    ],
)
def test_a_store_ignored_already_is_not_offered(repo: Path, where: str, line: str) -> None:
    files = {
        "repo": repo.parent / ".gitignore",
        "app": repo / ".gitignore",
        "exclude": repo.parent / ".git" / "info" / "exclude",
    }
    files[where].parent.mkdir(parents=True, exist_ok=True)
    files[where].write_text(f"*.pyc\n{line}\n")
    result = run(["init", "--json"])
    assert json.loads(result.out)["gitignore"] == "ignored" and result.err == ""


def test_init_outside_git_or_with_a_named_store_says_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, repo: Path
) -> None:
    assert (
        json.loads(run(["--db", str(repo / "named.db"), "init", "--json"]).out).get("gitignore")
        is None
    )
    plain = tmp_path / "plain"
    plain.mkdir()
    monkeypatch.chdir(plain)
    result = run(["init", "--json"])
    assert json.loads(result.out)["gitignore"] is None and result.err == ""


@pytest.mark.parametrize(("answer", "added"), [("\n", True), ("y\n", True), ("n\n", False)])
def test_init_on_a_terminal_asks_first(repo: Path, answer: str, added: bool) -> None:
    """A real process on a pseudo-terminal, answering the question as a person would."""
    leader, follower = pty.openpty()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLEW_")}
    process = subprocess.Popen(
        [sys.executable, "-m", "clew", "init"],
        cwd=repo,
        env=env,
        stdin=follower,
        stdout=follower,
        stderr=follower,
    )
    os.close(follower)
    seen = b""
    deadline = time.monotonic() + 30
    try:
        while b"[Y/n]" not in seen:
            assert time.monotonic() < deadline, seen
            ready, _, _ = select.select([leader], [], [], 1)
            if ready:
                seen += os.read(leader, 4096)
        os.write(leader, answer.encode())
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
        os.close(leader)
    assert (repo / ".gitignore").exists() == added
    if added:
        assert (repo / ".gitignore").read_text() == ".clew/\n"


def test_a_gitignore_that_is_not_a_file_is_one_line(repo: Path) -> None:
    (repo / ".gitignore").mkdir()
    assert "not a regular file" in one_line(run(["init", "--gitignore"]))


@pytest.mark.sqlite_only("a file's permissions: PostgreSQL's roles are test_db_roles.py's")
def test_a_new_store_is_readable_by_its_owner_alone(tmp_path: Path) -> None:
    """Another local user may not read a store clew made (what agents saw, the server's key
    hashes): the folder made for it is 0700, the file and its WAL 0600; a folder that was
    there keeps its permissions."""
    import stat

    def mode(path: Path) -> int:
        return stat.S_IMODE(path.stat().st_mode)

    made = tmp_path / "project" / ".clew" / "clew.db"
    with clew.open(made) as mem:
        mem.create_task("private")
        assert mode(made.parent) == 0o700 and mode(made) == 0o600
        assert mode(Path(f"{made}-wal")) == 0o600
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    with clew.open(shared / "clew.db"):
        assert mode(shared) == 0o755 and mode(shared / "clew.db") == 0o600
