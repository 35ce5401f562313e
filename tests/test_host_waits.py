"""Nothing from outside becomes a command, a file read or a URL fetch (issue 24, must-have 1),
on SQLite and PostgreSQL, with a real server (uvicorn on 127.0.0.1) where one is involved."""

from __future__ import annotations

from pathlib import Path

import pytest

import clew
from clew.cli import main
from tests.test_server import running


@pytest.fixture
def other_host(tmp_path: Path) -> Path:
    """The sealing key of another host (a file no other test uses)."""
    return tmp_path / "other-host" / "secret.key"


def _side_export(tmp_path: Path, space: str, marker: Path, secret: Path) -> str:
    """The issue's reproduction, in a side store of the served space's name, as another host
    (its own sealing key): a task, `clew wait add T --command 'id > MARKER'`, `clew export`."""
    side = tmp_path / "side" / "clew.db"
    side.parent.mkdir(parents=True, exist_ok=True)
    env = {"CLEW_SECRET_FILE": str(secret)}
    with pytest.MonkeyPatch.context() as patch:
        for name, value in env.items():
            patch.setenv(name, value)
        with clew.open(side, space=space) as src:
            task = src.create_task("Harmless", ["Step"])
        argv = ["--db", str(side), "--space", space]
        assert main([*argv, "wait", "add", task.id, "--command", f'id > "{marker}"']) == 0
        out = tmp_path / "side.jsonl"
        assert main([*argv, "export", "--output", str(out)]) == 0
    return out.read_text(encoding="utf-8")


def test_a_write_keys_import_of_a_command_wait_is_refused_naming_the_line(
    db: Path, tmp_path: Path, other_host: Path
) -> None:
    """The issue's reproduction: a write key imports a journal file that adds a command wait,
    then asks smart_wait to check it. The import is refused, naming the line; nothing runs."""
    keys = (("write", "a", "write"), ("admin", "a", "admin"))
    with running(db, keys) as s:
        home = s.server.spaces.home
        marker = tmp_path / "PWNED"
        text = _side_export(tmp_path, home.space, marker, other_host)
        before = home.journal_head()
        reply = s.call("POST", "/api/v1/import", raw=text.encode(), key="write")
        assert reply.status == 403, reply.text
        error = reply.json()["error"]
        assert error == (
            "line 3 of the journal file adds a wait that runs a command, which this key may"
            " not add; nothing was imported"
        )
        assert home.journal_head() == before
        check = s.op("smart_wait", {"action": "check"}, key="write")
        assert check.status == 200, check.text
        assert not marker.exists()
