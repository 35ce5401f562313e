"""Nothing from outside becomes a command, a file read or a URL fetch (issue 24, must-have 1),
on SQLite and PostgreSQL, with a real server (uvicorn on 127.0.0.1) where one is involved.

A wait that makes the host act (a command, a file, a URL) runs only if its seal verifies with
this host's sealing key, which only an allowed origin's `add_wait` makes: the host's own user,
or a server's admin key within what the operator allowed (--allow-commands, --allow-wait-path,
--allow-wait-url). Imports refuse what their caller could not add."""

from __future__ import annotations

import ast
import asyncio
import http.server
import io
import json
import os
import re
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import clew
from clew.cli import main
from clew.core import chain, origin
from clew.core.origin import HostRules
from clew.errors import ScopeError, ValidationError
from clew.jobs.worker import drain
from clew.privacy import sealing
from clew.tasks import probes
from tests.conftest import Result
from tests.test_server import Served, running

ADMIN_AND_WRITE = (("write", "a", "write"), ("admin", "a", "admin"))


@pytest.fixture
def other_host(tmp_path: Path) -> Path:
    """The sealing key of another host (a file no other test uses)."""
    return tmp_path / "other-host" / "secret.key"


def _side_export(tmp_path: Path, space: str, marker: Path, secret: Path) -> str:
    """The issue's reproduction, in a side store of the served space's name, as another host
    (its own sealing key): a task, `clew wait add T --command 'id > MARKER'`, `clew export`."""
    side = tmp_path / "side" / "clew.db"
    side.parent.mkdir(parents=True, exist_ok=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CLEW_SECRET_FILE", str(secret))
        with clew.open(side, space=space) as src:
            task = src.create_task("Harmless", ["Step"])
        argv = ["--db", str(side), "--space", space]
        assert main([*argv, "wait", "add", task.id, "--command", f'id > "{marker}"']) == 0
        out = tmp_path / "side.jsonl"
        assert main([*argv, "export", "--output", str(out)]) == 0
    return out.read_text(encoding="utf-8")


def _error_messages(mem: clew.Memory) -> list[str]:
    return [
        m.content
        for t in mem.list_tasks()
        for m in mem.list_messages(t.id)
        if m.content.startswith("[wait error]")
    ]


# -- the reproduction ---------------------------------------------------------------------------


def test_a_write_keys_import_of_a_command_wait_is_refused_naming_the_line(
    db: Path, tmp_path: Path, other_host: Path
) -> None:
    """The issue's reproduction: a write key imports a journal file that adds a command wait,
    then asks smart_wait to check it. The import is refused, naming the line; nothing runs."""
    with running(db, ADMIN_AND_WRITE) as s:
        home = s.server.spaces.home
        marker = tmp_path / "PWNED"
        text = _side_export(tmp_path, home.space, marker, other_host)
        before = home.journal_head()
        reply = s.call("POST", "/api/v1/import", raw=text.encode(), key="write")
        assert reply.status == 403, reply.text
        assert reply.json()["error"] == (
            "line 3 of the journal file adds a wait that runs a command, which this key may"
            " not add; nothing was imported"
        )
        assert home.journal_head() == before
        check = s.op("smart_wait", {"action": "check"}, key="write")
        assert check.status == 200, check.text
        assert not marker.exists()
        # an admin key of a server without --allow-commands could not add one either
        reply = s.call("POST", "/api/v1/import", raw=text.encode(), key="admin")
        assert reply.status == 403 and "--allow-commands" in reply.json()["error"]
        assert home.journal_head() == before


def test_an_imported_wait_never_runs_even_when_its_importer_may_add_one(
    db: Path, tmp_path: Path, other_host: Path
) -> None:
    """An admin key of a server that allows commands may import a command wait, and the
    local command line imports anything; neither makes it run: another host sealed it."""
    allow = HostRules(True, (), ())
    with running(db, ADMIN_AND_WRITE, allow=allow) as s:
        home = s.server.spaces.home
        marker = tmp_path / "PWNED"
        text = _side_export(tmp_path, home.space, marker, other_host)
        reply = s.call("POST", "/api/v1/import", raw=text.encode(), key="admin")
        assert reply.status == 200, reply.text
        check = s.op("smart_wait", {"action": "check"}, key="write")
        assert check.status == 200 and "error" in check.text, check.text
        assert not marker.exists()
        [wait] = home.list_waits()
        assert wait.status.value == "error" and (wait.result or "").startswith(probes.NOT_SEALED)
        assert _error_messages(home) == [f"[wait error] {wait.label}: {wait.result}"]
        assert home.verify().ok


def test_the_command_line_imports_a_foreign_wait_that_then_never_runs(
    db: Path, tmp_path: Path, other_host: Path, cli: Any
) -> None:
    marker = tmp_path / "PWNED"
    with clew.open(db) as mem:
        space = mem.space
    text = _side_export(tmp_path, space, marker, other_host)
    (tmp_path / "in.jsonl").write_text(text, encoding="utf-8")
    done: Result = cli("import", str(tmp_path / "in.jsonl"))
    assert done.code == 0, done.err
    checked: Result = cli("wait", "check")
    assert checked.code == 0 and "never run" in checked.out, checked.out
    assert not marker.exists()


# -- rows that got in another way ------------------------------------------------------------------


def _connect(db: Path) -> tuple[Any, str]:
    """A raw connection to the store (as a database role or the file's owner has one) and
    its placeholder."""
    if str(db).startswith("postgresql"):
        import psycopg

        return psycopg.connect(str(db), autocommit=True), "%s"
    import sqlite3

    return sqlite3.connect(db, isolation_level=None), "?"


def _raw_command_wait(
    db: Path, space: str, task_id: str, command: str, at: str, **extra: Any
) -> str:
    """Write a command wait into the store with plain SQL, as a database role could: its
    `wait.added` event (chained to the space's head, so `verify` still passes) and its row."""
    conn, mark = _connect(db)
    wait_id = "w" + os.urandom(5).hex()[:9]
    wait = {
        "id": wait_id,
        "kind": "command",
        "target": command,
        "criteria": {},
        "cwd": "/",
        "poll_seconds": 30.0,
        "timeout_seconds": None,
        "run_timeout": 30.0,
        "deadline": None,
        **extra,
    }
    data = json.dumps({"wait": wait}, separators=(",", ":"), ensure_ascii=False)
    q = lambda sql: sql.replace("?", mark)  # noqa: E731
    try:
        if mark == "%s":
            conn.execute("SELECT set_config('clew.space', %s, false)", (space,))
        head = conn.execute(
            q("SELECT hash FROM events WHERE space = ? ORDER BY seq DESC LIMIT 1"), (space,)
        ).fetchone()
        event_id = "e" + os.urandom(5).hex()[:9]
        digest = chain.event_hash(
            head[0] if head else "",
            id=event_id,
            space=space,
            task_id=task_id,
            correlation_id="web:forged:x",
            type="wait.added",
            digest=chain.data_digest(data),
            created_at=at,
        )
        conn.execute(
            q(
                "INSERT INTO events (id, space, task_id, correlation_id, type, data, created_at,"
                " hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
            ),
            (event_id, space, task_id, "web:forged:x", "wait.added", data, at, digest),
        )
        conn.execute(
            q(
                "INSERT INTO waits (id, space, task_id, kind, target, criteria, cwd, poll_seconds,"
                " timeout_seconds, run_timeout, deadline, seal, created_at, updated_at) VALUES"
                " (?, ?, ?, 'command', ?, '{}', '/', 30.0, NULL, 30.0, NULL, ?, ?, ?)"
            ),
            (wait_id, space, task_id, command, extra.get("seal"), at, at),
        )
        conn.execute(q("UPDATE tasks SET updated_at = ? WHERE id = ?"), (at, task_id))
    finally:
        conn.close()
    return wait_id


def test_a_command_wait_written_into_the_store_by_other_means_never_runs(
    mem: clew.Memory, db: Path, tmp_path: Path
) -> None:
    """A `wait.added` event and its row inserted with plain SQL (a database role, the file's
    owner, another program): the journal is whole and `verify` passes, yet the worker and
    `check_waits` refuse to run it, end it and say why on its task."""
    task = mem.create_task("Deploy", ["Build"])
    first, second = tmp_path / "one", tmp_path / "two"
    at = mem._now()
    one = _raw_command_wait(db, mem.space, task.id, f"touch {first}", at)
    # a seal made up by the writer: of the right shape, not by this host's key
    two = _raw_command_wait(db, mem.space, task.id, f"touch {second}", at, seal="0" * 64)
    assert mem.verify().ok
    [checked] = mem.check_waits(one)
    assert checked.outcome == "error" and checked.evidence.startswith(probes.NOT_SEALED)
    drain(mem)  # the background worker's way: it polls the due waits
    assert mem.get_wait(two).status.value == "error"
    assert not first.exists() and not second.exists()
    assert len(_error_messages(mem)) == 2
    assert all("add it again here" in m for m in _error_messages(mem))
    assert mem.verify().ok


def test_a_sealed_wait_whose_row_is_changed_never_runs(
    mem: clew.Memory, db: Path, tmp_path: Path
) -> None:
    """The seal covers what runs: a row whose command was changed afterwards (an UPDATE a
    database role can make) no longer verifies."""
    task = mem.create_task("Deploy", ["Build"])
    marker = tmp_path / "changed"
    wait = mem.add_wait(task.id, "command", "true")
    conn, mark = _connect(db)
    try:
        if mark == "%s":
            conn.execute("SELECT set_config('clew.space', %s, false)", (mem.space,))
        conn.execute(
            f"UPDATE waits SET target = {mark} WHERE id = {mark}", (f"touch {marker}", wait.id)
        )
    finally:
        conn.close()
    [checked] = mem.check_waits(wait.id)
    assert checked.outcome == "error" and checked.evidence.startswith(probes.NOT_SEALED)
    assert not marker.exists()


def test_a_wait_sealed_with_another_sealing_key_never_runs(
    mem: clew.Memory, tmp_path: Path, other_host: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same store, the same space, a wait added by another host's clew (its own key):
    this host never runs it. The host's own later wait runs as ever."""
    task = mem.create_task("Deploy", ["Build"])
    marker = tmp_path / "foreign"
    monkeypatch.setenv("CLEW_SECRET_FILE", str(other_host))
    foreign = mem.add_wait(task.id, "command", f"touch {marker}")
    monkeypatch.delenv("CLEW_SECRET_FILE")
    [checked] = mem.check_waits(foreign.id)
    assert checked.outcome == "error" and checked.evidence.startswith(probes.NOT_SEALED)
    assert not marker.exists()
    own = mem.add_wait(task.id, "command", f"touch {marker}")
    assert mem.check_waits(own.id)[0].outcome == "resolved" and marker.exists()


def test_a_wait_imported_into_another_space_of_the_same_host_never_runs(
    mem: clew.Memory, db: Path, tmp_path: Path
) -> None:
    """The seal names the space: this host's own wait, moved into another space by the
    local user (a file of its own: a SQLite file keeps ids unique across its spaces), is not
    the wait that was sealed."""
    task = mem.create_task("Deploy", ["Build"])
    marker = tmp_path / "moved"
    mem.add_wait(task.id, "command", f"touch {marker}")
    out = io.StringIO()
    mem.export_events(out)
    with clew.open(tmp_path / "copy.db", space=f"{mem.space}-copy") as other:
        other.import_events(out.getvalue())
        [checked] = other.check_waits()
        assert checked.outcome == "error" and checked.evidence.startswith(probes.NOT_SEALED)
    assert not marker.exists()


def test_without_a_sealing_key_no_host_wait_runs(
    mem: clew.Memory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    task = mem.create_task("Deploy", ["Build"])
    wait = mem.add_wait(task.id, "command", "true")
    monkeypatch.setenv("CLEW_SECRET_FILE", str(tmp_path / "gone" / "secret.key"))
    [checked] = mem.check_waits(wait.id)
    assert checked.outcome == "error" and checked.evidence.startswith(probes.NOT_SEALED)
    assert "no sealing key" in checked.evidence
    assert not (tmp_path / "gone").exists()  # checking never makes a key


# -- the server's options --------------------------------------------------------------------------


def test_an_admin_of_a_server_that_allows_commands_adds_and_runs_one(
    db: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    with running(db, ADMIN_AND_WRITE, allow=HostRules(True, (), ())) as s:
        task = s.op("task_register", {"name": "Deploy", "plan": ["Build"]}).json()["data"]
        body = {
            "action": "add",
            "task_id": task["task_id"],
            "kind": "command",
            "target": f"touch {marker} && echo built",
        }
        refused = s.op("smart_wait", body, key="write")
        assert refused.status == 403 and "scope admin" in refused.json()["error"]
        added = s.op("smart_wait", body, key="admin")
        assert added.status == 200, added.text
        assert added.json()["data"]["seal"]
        check = s.op("smart_wait", {"action": "check"}, key="write")  # any key may poll
        assert check.status == 200 and "resolved" in check.text, check.text
        assert marker.exists()
        # file and URL waits stay shut: only --allow-commands was given
        for kind, option in (("file", "--allow-wait-path"), ("url", "--allow-wait-url")):
            body = {
                "action": "add",
                "task_id": task["task_id"],
                "kind": kind,
                "target": "http://127.0.0.1:1/" if kind == "url" else str(marker),
            }
            refused = s.op("smart_wait", body, key="admin")
            assert refused.status == 403 and option in refused.json()["error"], refused.text


def test_mcp_through_the_server_keeps_the_same_rules(db: Path, tmp_path: Path) -> None:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    marker = tmp_path / "via-mcp"

    async def add(s: Served, key: str, task_id: str) -> str:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {s.tokens[key]}"})
        async with http, Client(streamable_http_client(f"{s.url}/mcp", http_client=http)) as c:
            done = await c.call_tool(
                "smart_wait",
                {
                    "action": "add",
                    "task_id": task_id,
                    "kind": "command",
                    "target": f"touch {marker}",
                },
            )
            return done.content[0].text  # type: ignore[union-attr]

    for allow in (origin.NOTHING, HostRules(True, (), ())):
        with running(db, ADMIN_AND_WRITE, allow=allow) as s:
            task = s.op("task_register", {"name": "D", "plan": ["B"]}).json()["data"]["task_id"]
            said = asyncio.run(add(s, "admin", task))
            if not allow.commands:
                assert said.startswith("Error:") and "--allow-commands" in said
                continue
            assert "scope admin" in asyncio.run(add(s, "write", task))
            assert said.startswith("Added wait"), said
            s.op("smart_wait", {"action": "check"}, key="write")
            assert marker.exists()


@pytest.fixture
def folders(tmp_path: Path) -> dict[str, Path]:
    """An allowed folder with a file, a secret outside it, and a link inside pointing out."""
    allowed, outside = tmp_path / "allowed", tmp_path / "outside"
    allowed.mkdir()
    outside.mkdir()
    (allowed / "ready.txt").write_text("ready")
    (outside / "secret.txt").write_text("hunter2")
    (allowed / "link").symlink_to(outside / "secret.txt")
    (allowed / "linked-dir").symlink_to(outside)
    return {"allowed": allowed, "outside": outside}


class _Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"healthy"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def service() -> Iterator[int]:
    """A local HTTP service: its port."""
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Health)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield int(httpd.server_address[1])
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_file_and_url_waits_through_a_server_keep_to_the_operators_lists(
    db: Path, folders: dict[str, Path], service: int
) -> None:
    allowed, outside = folders["allowed"], folders["outside"]
    rules = HostRules(
        False,
        (origin.folder_rule(str(allowed)),),
        (origin.url_rule(f"http://127.0.0.1:{service}/health"),),
    )
    accepted = {
        "file": [str(allowed / "ready.txt"), str(allowed / "later" / "x.flag")],
        "url": [
            f"http://127.0.0.1:{service}/health",
            f"http://127.0.0.1:{service}/health/db",
            f"http://127.0.0.1:{service}/health?verbose=1",
        ],
    }
    refused = {
        "file": [
            str(outside / "secret.txt"),  # outside
            str(allowed / ".." / "outside" / "secret.txt"),  # `..` out of it
            str(allowed / "link"),  # a link inside pointing out
            str(allowed / "linked-dir" / "secret.txt"),  # through a linked folder
            "/etc/passwd",
        ],
        "url": [
            "http://169.254.169.254/latest/meta-data/",  # the cloud's metadata service
            f"http://127.0.0.1:{service + 1}/health",  # another port: another service
            f"http://127.0.0.1:{service}/healthz",  # a string prefix, not a path prefix
            f"http://127.0.0.1:{service}/admin",  # another path
            f"http://127.0.0.1:{service}/health/../admin",  # a dot segment
            f"http://127.0.0.1:{service}/health/%2e%2e/admin",  # an encoded one
            f"http://user:pw@127.0.0.1:{service}/health",  # userinfo
            f"http://127.0.0.1:{service}@169.254.169.254/health",  # userinfo hiding a host
            f"http://localhost:{service}/health",  # another host name, not the listed one
            f"https://127.0.0.1:{service}/health",  # another scheme
        ],
    }
    with running(db, ADMIN_AND_WRITE, allow=rules) as s:
        task = s.op("task_register", {"name": "D", "plan": ["B"]}).json()["data"]["task_id"]

        def add(kind: str, target: str, key: str = "admin") -> Any:
            body = {"action": "add", "task_id": task, "kind": kind, "target": target}
            return s.op("smart_wait", body, key=key)

        for kind, targets in accepted.items():
            for target in targets:
                reply = add(kind, target)
                assert reply.status == 200, (target, reply.text)
                assert add(kind, target, key="write").status == 403
        for kind, targets in refused.items():
            for target in targets:
                reply = add(kind, target)
                assert reply.status in (400, 403), (target, reply.text)
                error = reply.json()["error"]
                assert "\n" not in error
                if reply.status == 403:
                    assert ("--allow-wait-path" if kind == "file" else "--allow-wait-url") in error
        assert (
            s.op(
                "smart_wait",
                {"action": "add", "task_id": task, "kind": "command", "target": "true"},
                key="admin",
            ).status
            == 403
        )
        check = s.op("smart_wait", {"action": "check"}, key="admin")
        assert check.status == 200, check.text
        home = s.server.spaces.home
        ends = {w.target: w.status.value for w in home.list_waits()}
        assert ends[str(allowed / "ready.txt")] == "resolved"
        assert ends[f"http://127.0.0.1:{service}/health"] == "resolved"
        assert ends[str(allowed / "later" / "x.flag")] == "watching"  # absent, not refused


def test_a_file_wait_whose_path_is_turned_into_a_link_out_is_refused_when_checked(
    db: Path, folders: dict[str, Path]
) -> None:
    """Where a file wait may read is checked again at each check: a link made after it was
    added, pointing out of the allowed folder, makes it end unread."""
    allowed, outside = folders["allowed"], folders["outside"]
    rules = HostRules(False, (origin.folder_rule(str(allowed)),), ())
    with running(db, ADMIN_AND_WRITE, allow=rules) as s:
        task = s.op("task_register", {"name": "D", "plan": ["B"]}).json()["data"]["task_id"]
        target = allowed / "soon.txt"
        body = {
            "action": "add",
            "task_id": task,
            "kind": "file",
            "target": str(target),
            "contains": "hunter2",
        }
        added = s.op("smart_wait", body, key="admin")
        assert added.status == 200, added.text
        assert added.json()["data"]["confined_to"] == str(allowed.resolve())
        target.symlink_to(outside / "secret.txt")
        check = s.op("smart_wait", {"action": "check"}, key="admin")
        assert check.status == 200, check.text  # it would resolve, had the secret been read
        [wait] = s.server.spaces.home.list_waits()
        assert wait.status.value == "error" and "now resolves outside" in (wait.result or "")


def test_an_admins_import_keeps_to_the_same_lists(
    db: Path, tmp_path: Path, folders: dict[str, Path]
) -> None:
    """A file wait in an imported journal must be one its importer could add: an admin of a
    server that lets waits read one folder cannot import one reading another."""
    src = tmp_path / "src" / "clew.db"
    src.parent.mkdir()
    rules = HostRules(False, (origin.folder_rule(str(folders["allowed"])),), ())
    with running(db, ADMIN_AND_WRITE, allow=rules) as s:
        with clew.open(src, space=s.server.spaces.home.space) as side:
            task = side.create_task("D", ["B"])
            side.add_wait(task.id, "file", str(folders["outside"] / "secret.txt"))
            out = io.StringIO()
            side.export_events(out)
        reply = s.call("POST", "/api/v1/import", raw=out.getvalue().encode(), key="admin")
        assert reply.status == 403, reply.text
        assert reply.json()["error"].startswith(
            "line 3 of the journal file adds a wait that reads a file of this host, which this"
            " key may not add ("
        )
        assert "--allow-wait-path" in reply.json()["error"]


# -- the options themselves ------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["serve", "mcp"])
def test_the_command_lines_options_reach_the_server(
    tmp_path: Path, folders: dict[str, Path], command: str
) -> None:
    """`clew serve` and `clew mcp --port` as processes, keyless on loopback (the local user
    is admin): what their options allow is allowed, and nothing else."""
    import subprocess
    import sys

    from tests.conftest import free_port, wait_listening

    db, port, marker = tmp_path / "s.db", free_port(), tmp_path / "ran"
    with clew.open(db) as mem:
        task = mem.create_task("Deploy", ["Build"]).id
    argv = [
        sys.executable,
        "-m",
        "clew",
        "--db",
        str(db),
        command,
        "--port",
        str(port),
        "--allow-commands",
        "--allow-wait-path",
        str(folders["allowed"]),
    ]
    server = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_listening(server, port)
        s = Served(f"http://127.0.0.1:{port}", None, {}, {})  # type: ignore[arg-type]

        def add(kind: str, target: str) -> int:
            body = {"action": "add", "task_id": task, "kind": kind, "target": target}
            return s.op("smart_wait", body, key=None).status

        assert add("command", f"touch {marker}") == 200
        assert add("file", str(folders["allowed"] / "ready.txt")) == 200
        assert add("file", str(folders["outside"] / "secret.txt")) == 403
        assert add("url", "http://127.0.0.1:1/") == 403
        assert s.op("smart_wait", {"action": "check"}, key=None).status == 200
        assert marker.exists()
    finally:
        server.terminate()
        _, err = server.communicate(timeout=20)
    assert b"Traceback" not in err, err.decode()


@pytest.mark.parametrize(
    ("option", "value", "said"),
    [
        ("--allow-wait-path", "/no/such/folder", "no such folder"),
        ("--allow-wait-url", "http://169.254.169.254/", "loopback"),
        ("--allow-wait-url", "http://u:p@127.0.0.1/", "user name"),
        ("--allow-wait-url", "ftp://127.0.0.1/", "http://"),
        ("--allow-wait-url", "http://127.0.0.1/a/../b", ".."),
        ("--allow-wait-url", "http://127.0.0.1/a?x=1", "query"),
        ("--allow-wait-url", "http://127.0.0.1/a\x00b", "control characters"),
        ("--allow-wait-path", "/tmp\x00", "no folder's path"),
    ],
)
def test_a_bad_allow_option_stops_the_server_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str, value: str, said: str
) -> None:
    db = tmp_path / "clew.db"
    assert main(["--db", str(db), "serve", "--port", "0", option, value]) == 2
    err = capsys.readouterr().err
    assert said in err and option in err and err.count("\n") == 1, err


def test_clew_mcp_takes_the_folder_and_url_options_only_with_a_port(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for option in (["--allow-wait-path", str(tmp_path)], ["--allow-wait-url", "http://[::1]/"]):
        assert main(["--db", str(tmp_path / "clew.db"), "mcp", *option]) == 2
        assert "for --port" in capsys.readouterr().err


def test_a_command_wait_over_stdio_mcp_needs_the_users_allow_commands(tmp_path: Path) -> None:
    """The model behind an MCP client chooses its calls: over stdio as over a server, a wait
    that runs a command is added only when the user who configured `clew mcp` allowed it;
    file and URL waits read what this user may read."""
    from mcp import Client, StdioServerParameters

    from tests.test_mcp import child_env

    db = tmp_path / "clew.db"
    with clew.open(db) as mem:
        task = mem.create_task("deploy", ["build"]).id
    marker = tmp_path / "ran"

    async def add(*extra: str) -> tuple[bool, str, bool]:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "clew", "--db", str(db), "mcp", *extra],
            env=child_env(),
            cwd=str(tmp_path),
        )
        async with Client(params, mode="legacy") as client:
            made = await client.call_tool(
                "smart_wait",
                {
                    "action": "add",
                    "task_id": task,
                    "kind": "command",
                    "target": f"touch {marker}",
                },
            )
            said = made.content[0].text  # type: ignore[union-attr]
            checked = await client.call_tool("smart_wait", {"action": "check"})
            filed = await client.call_tool(
                "smart_wait",
                {
                    "action": "add",
                    "task_id": task,
                    "kind": "file",
                    "target": str(marker),
                },
            )
            return made.is_error, said, bool(checked.is_error) or filed.is_error

    refused, said, failed = asyncio.run(add())
    assert refused and "--allow-commands" in said and not failed
    assert not marker.exists()
    refused, said, failed = asyncio.run(add("--allow-commands"))
    assert not refused and not failed, said
    assert marker.exists()


def test_the_rules_refuse_in_one_line_naming_the_option() -> None:
    assert origin.refusal("command", "true", origin.LOCAL) is None
    for kind in origin.HOST_KINDS:
        why = origin.refusal(kind, "/x" if kind == "file" else "http://127.0.0.1/", origin.NOTHING)
        assert why is not None and origin.OPTIONS[kind] in why
        with pytest.raises(ScopeError, match=origin.OPTIONS[kind]):
            origin.permit(kind, "/x", origin.NOTHING)
    assert origin.refusal("time", "10m", origin.NOTHING) is None
    assert origin.for_scope("write", HostRules(True, None, None)) == origin.NOTHING
    with pytest.raises(ValidationError):
        origin.folder_rule("")


_SEGMENTS = st.sampled_from(
    ["health", "healthz", "..", ".", "%2e%2e", "%2E", "a%2fb", "a\\b", "", "db", "x;y", "@"]
)


@given(st.lists(_SEGMENTS, max_size=5), st.sampled_from(["", ":8000", ":8001", ":80"]))
def test_a_url_rule_admits_only_paths_under_its_prefix(segments: list[str], port: str) -> None:
    """Whatever the path, a URL the rule admits is on the rule's port and, read the way any
    server would read it (decoded, dot segments resolved), under the rule's path."""
    import posixpath
    from urllib.parse import unquote

    rule = origin.url_rule("http://127.0.0.1:8000/health")
    rules = HostRules(False, (), (rule,))
    url = f"http://127.0.0.1{port}/" + "/".join(segments)
    if origin.refusal("url", url, rules) is None:
        assert port == ":8000"
        path = posixpath.normpath(unquote(url.split(":8000", 1)[1].split("?")[0]))
        assert path == "/health" or path.startswith("/health/"), url


def test_the_seal_binds_every_field_that_decides_what_runs(mem: clew.Memory) -> None:
    task = mem.create_task("Deploy", ["Build"])
    wait = mem.add_wait(task.id, "command", "echo hi", contains="hi", cwd="/tmp")
    assert probes.unsealed(wait) is None
    changes: dict[str, Any] = {
        "target": "echo bye",
        "cwd": "/",
        "criteria": {"contains": "bye"},
        "run_timeout": 31.0,
        "poll_seconds": 1.0,
        "task_id": "zzzzzzzzzz",
        "space": "elsewhere",
        "id": "zzzzzzzzzz",
        "confined_to": "/tmp",
    }
    for field, value in changes.items():
        assert probes.unsealed(wait._replace(**{field: value})) == probes.NOT_SEALED, field
    assert sealing.check("wait", (), wait.seal) is False


def test_no_caller_may_point_a_url_wait_off_this_host(mem: clew.Memory) -> None:
    """Not even the host's own user: a URL wait asks 127.0.0.1, localhost or ::1 only."""
    task = mem.create_task("Deploy", ["Build"])
    elsewhere = (
        "http://169.254.169.254/latest/meta-data/",
        "http://example.com/",
        "http://127.0.0.1.example.com/",
        "http://[fe80::1]/",
        "file:///etc/passwd",
    )
    for url in elsewhere:
        with pytest.raises(ValidationError):
            mem.add_wait(task.id, "url", url)


# -- the audit -------------------------------------------------------------------------------------


def test_no_tool_or_operation_takes_a_host_path_or_url_but_a_waits_target() -> None:
    """What a server's caller can name on the host: a wait's target (held by the rules and
    the seal) and a workspace (only resolved to compare folders, never read). A new argument
    that names a path, a URL or a command fails this until the audit takes it in."""
    from clew.server import api

    named: set[tuple[str, str]] = set()

    def walk(operation: str, schema: dict[str, Any], prefix: str = "") -> None:
        for key, value in schema.get("properties", {}).items():
            named.add((operation, prefix + key))
            if isinstance(value, dict) and value.get("type") == "object":
                walk(operation, value, f"{prefix}{key}.")
            items = value.get("items") if isinstance(value, dict) else None
            if isinstance(items, dict) and items.get("type") == "object":
                walk(operation, items, f"{prefix}{key}[].")

    for name, operation in api.OPERATIONS.items():
        walk(name, operation.schema)
    hostish = re.compile(r"path|file|url|dir|command|cwd|workspace|target|location|db|host|^to$")
    assert {n for n in named if hostish.search(n[1])} == {
        ("smart_wait", "target"),
        # The command an error came from: text compared with later runs, never run.
        ("task_record", "command"),
        ("task_register", "workspace"),
        ("task_state", "workspace"),
        ("task_list", "workspace"),
        ("session_list", "workspace"),
    }


_SINKS = {
    "subprocess": {"Popen", "run", "call", "check_call", "check_output"},
    "os": {"posix_spawn", "system", "execv", "execvp", "popen", "open", "fdopen"},
    "request": {"urlopen"},
    "socket": {"socket", "create_connection"},
    "np": {"load"},
}


_MAYBE = re.compile(
    r"open\(|subprocess|posix_spawn|os\.system|os\.exec|urlopen|socket|"
    r"read_text|read_bytes|\.load\("
)


def _call_sites() -> set[str]:
    """Every function of the package that runs a program, opens a file or a socket, or
    fetches a URL: `clew.module.function` names, found in the source."""
    root = Path(clew.__file__).parent
    found: set[str] = set()
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        source = path.read_text(encoding="utf-8")
        if not _MAYBE.search(source):  # parse only what could hold a call (most modules don't)
            continue
        tree = ast.parse(source)
        own_open = any(isinstance(n, ast.FunctionDef) and n.name == "open" for n in tree.body)
        _visit(tree, (module,), own_open, found)
    return found


def _visit(node: ast.AST, where: tuple[str, ...], own_open: bool, found: set[str]) -> None:
    for child in ast.iter_child_nodes(node):
        inner = where
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            inner = (*where, child.name)
        if isinstance(child, ast.Call) and _is_sink(child.func, own_open):
            found.add(".".join(where))
        _visit(child, inner, own_open, found)


def _is_sink(func: ast.expr, own_open: bool) -> bool:
    if isinstance(func, ast.Name):
        return func.id == "open" and not own_open  # clew.open is the store, not a file
    if not isinstance(func, ast.Attribute):
        return False
    base = ast.unparse(func.value).split(".")[-1]
    if func.attr in _SINKS.get(base, ()):
        return True
    if func.attr in ("read_text", "read_bytes"):
        return True
    return func.attr == "open" and base not in ("clew", "_store", "store")  # a Path's, an opener's


def test_every_call_that_runs_opens_or_fetches_is_in_the_audit() -> None:
    """docs/security.md lists every function that runs a program, reads or writes a file, or
    fetches a URL, with who can reach it and what guards it: a new one fails this until it is
    listed, and a listed one that is gone fails it too."""
    text = (Path(__file__).parent.parent / "docs" / "security.md").read_text(encoding="utf-8")
    section = text.split("## Every path from data to a program, a file or the network", 1)[1]
    listed = {
        name
        for line in section.splitlines()
        if line.startswith("| `clew.")
        for name in re.findall(r"`(clew\.[\w.]+)`", line.split(" | ")[0])
    }
    sites = _call_sites()
    assert sites - listed == set(), "call sites missing from the audit"
    assert listed - sites == set(), "audit rows that name no call site"
