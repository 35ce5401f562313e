"""Checkpoints: a sealed head of each space's journal kept outside the store, and what `clew
verify --checkpoint` says of a store rolled back, rewritten, or checked with a forged line; on
SQLite and PostgreSQL (the server's header, route and file too)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import clew
from clew.core import chain
from clew.journal import checkpointfile
from clew.models import ChainHead, Checkpoint
from tests.conftest import Result, free_port, new_space, wait_listening

KEY = bytes(range(32))


def work(mem: clew.Memory, n: int = 3) -> None:
    for i in range(n):
        task = mem.create_task(f"task {i}", ["build", "ship"])
        mem.update_task(task.id, step=1, step_status="completed", message=f"built {i}")


def statuses(report: Any) -> list[str]:
    return [c.status.value for c in report.checks]


# -- tampering as someone with the database's rights does it -----------------------------------


class Raw:
    """SQL on the store itself, past clew: the append-only guard off (SQLite's triggers
    dropped; PostgreSQL's skipped by session_replication_role, as its superuser can)."""

    def __init__(self, db: Path, backend: str) -> None:
        self.backend = backend
        if backend == "postgres":
            import psycopg

            self.conn: Any = psycopg.connect(str(db), autocommit=True)
            self.conn.execute("SET session_replication_role = replica")
            self.mark = "%s"
        else:
            self.conn = sqlite3.connect(db, isolation_level=None)
            self.conn.execute("DROP TRIGGER IF EXISTS events_no_update")
            self.conn.execute("DROP TRIGGER IF EXISTS events_no_delete")
            self.mark = "?"

    def run(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        cursor = self.conn.execute(sql.replace("?", self.mark), params)
        return list(cursor.fetchall()) if cursor.description else []

    def links(self, space: str) -> list[chain.Link]:
        rows = self.run(
            "SELECT seq, id, space, task_id, correlation_id, type, data, created_at, hash"
            " FROM events WHERE space = ? ORDER BY seq",
            (space,),
        )
        return [chain.Link(*row) for row in rows]

    def rewrite(self, space: str, at: int, edit: Callable[[str], str]) -> None:
        """Edit the data of the space's event number `at` (from 1) and re-chain every hash
        from it on, so the chain is whole again: what a rewrite with the clew source does."""
        links = self.links(space)
        previous = links[at - 2].hash if at > 1 else ""
        for n, link in enumerate(links[at - 1 :]):
            link = link._replace(data=edit(link.data)) if n == 0 else link
            previous = chain.row_hash(previous or "", link)
            self.run(
                "UPDATE events SET data = ?, hash = ? WHERE seq = ?",
                (link.data, previous, link.seq),
            )

    def cut(self, space: str, keep: int) -> None:
        """Remove the space's events after its first `keep` (a rollback of the journal)."""
        links = self.links(space)
        self.run("DELETE FROM events WHERE space = ? AND seq > ?", (space, links[keep - 1].seq))

    def close(self) -> None:
        self.conn.close()


# -- the line -----------------------------------------------------------------------------------


heads = st.builds(
    ChainHead,
    events=st.integers(1, 2**40),
    last=st.text(min_size=1, max_size=12),
    head=st.text("0123456789abcdef", min_size=64, max_size=64),
)


@given(heads, st.text(min_size=1, max_size=30), st.sampled_from(Checkpoint._fields))
def test_a_line_reads_back_sealed_and_any_change_breaks_its_seal(
    head: ChainHead, space: str, field: str
) -> None:
    made = checkpointfile.make("0123456789abcdef", space, head, "2026-11-22T09:00:00Z", key=KEY)
    line = checkpointfile.line(made)
    assert line.isascii() and "\n" not in line  # a file's line, or an HTTP header's value
    assert checkpointfile.read(line) == made
    assert checkpointfile.sealed(made, key=KEY)
    assert not checkpointfile.sealed(made, key=bytes(32))  # another user's key
    if field != "seal":
        value = getattr(made, field)
        changed = value + 1 if isinstance(value, int) else (value or "") + "0"
        assert not checkpointfile.sealed(made._replace(**{field: changed}), key=KEY)


def test_a_line_names_its_store_by_a_keyed_digest_never_its_path_or_password(
    tmp_path: Path,
) -> None:
    path = str(tmp_path / "secret-project" / "clew.db")
    made = checkpointfile.store_id(path, key=KEY)
    assert len(made) == 16 and "secret-project" not in made
    assert made != checkpointfile.store_id(path, key=bytes(32))
    os.makedirs(tmp_path / "secret-project")
    os.symlink(tmp_path / "secret-project", tmp_path / "link")
    assert checkpointfile.store_id(str(tmp_path / "link" / "clew.db"), key=KEY) == made
    one = checkpointfile.location("postgresql://ops:pw1@db.example:5432/team")
    assert one == checkpointfile.location("postgresql://app:***@db.example/team")
    assert "pw1" not in one and "ops" not in one


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("hello", "not JSON"),
        ('{"clew": "journal"}', 'no "checkpoint" key'),
        ('{"checkpoint": 2}', "format 2"),
        ('{"checkpoint": true}', "format True"),
        ('{"checkpoint": 1, "space": "x"}', "keys are not"),
        ("x" * 5000, "longer than"),
    ],
)
def test_what_is_not_a_checkpoint_line_says_so(text: str, why: str) -> None:
    found = checkpointfile.read(text)
    assert isinstance(found, str) and why in found


def test_a_line_with_a_field_of_the_wrong_type_is_none() -> None:
    made = checkpointfile.make("0123456789abcdef", "s", ChainHead(3, "e", "a" * 64), "t", key=KEY)
    for field, value in (("events", -1), ("events", True), ("head", "zz"), ("chain", 0)):
        line = json.loads(checkpointfile.line(made))
        line[field] = value
        found = checkpointfile.read(json.dumps(line))
        assert isinstance(found, str) and "wrong type" in found, field


# -- the store's reads ----------------------------------------------------------------------------


def test_chain_heads_count_and_count_on_from_a_head_still_held(mem: clew.Memory) -> None:
    store = mem._store  # type: ignore[attr-defined]
    assert store.chain_heads() == {mem.space: ChainHead(0, None, None)}
    work(mem, 2)
    events = mem.journal()
    first = store.chain_heads()[mem.space]
    assert first == ChainHead(len(events), events[-1].id, events[-1].hash)
    work(mem, 1)
    events = mem.journal()
    expected = ChainHead(len(events), events[-1].id, events[-1].hash)
    assert store.chain_heads({mem.space: first}) == {mem.space: expected}
    # A head the journal does not hold (another hash) is not counted on from: all is counted.
    stale = first._replace(events=10**6, head="0" * 64)
    assert store.chain_heads({mem.space: stale}) == {mem.space: expected}


def test_chain_hashes_are_the_events_hashes_by_position(mem: clew.Memory) -> None:
    work(mem, 3)
    hashes = [e.hash for e in mem.journal()]
    wanted = {mem.space: [len(hashes), 1, 3, 3, 0, len(hashes) + 1]}
    found = mem._store.chain_hashes(wanted)  # type: ignore[attr-defined]
    assert found == {(mem.space, n): hashes[n - 1] for n in (1, 3, len(hashes))}


def test_every_space_is_checkpointed_with_all_spaces(db: Path, tmp_path: Path) -> None:
    a, b = new_space(), new_space()
    with clew.open(db, space=a) as one, clew.open(db, space=b) as two:
        work(one, 2)
        work(two, 1)
        made = {c.space: c for c in one.checkpoint(all_spaces=True)}
        assert made[a].events == len(one.journal()) and made[b].events == len(two.journal())
        assert {c.space for c in one.checkpoint()} == {a}
        file = tmp_path / "cp.jsonl"
        one.checkpoint(file, all_spaces=True)  # (on PostgreSQL, other tests' spaces too)
        report = two.check_checkpoints(file)
        assert statuses(report) == ["holds"] and report.other_spaces == len(made) - 1
        report = two.check_checkpoints(file, all_spaces=True)
        assert statuses(report) == ["holds"] * len(made) and report.other_spaces == 0


# -- what verify says ------------------------------------------------------------------------------


def test_a_store_rewritten_and_rechained_diverges(
    db: Path, backend: str, tmp_path: Path, cli: Callable[..., Result]
) -> None:
    file = tmp_path / "checkpoints.jsonl"
    with clew.open(db) as mem:
        work(mem, 3)
        space = mem.space
        assert cli("checkpoint", "--file", str(file)).code == 0
    raw = Raw(db, backend)
    try:
        at = next(n for n, link in enumerate(raw.links(space), 1) if "task 1" in link.data)
        raw.rewrite(space, at, lambda data: data.replace("task 1", "task X"))
    finally:
        raw.close()
    with clew.open(db) as mem:
        report = mem.verify()
        assert not any("chain" in d.problem for d in report.differences)  # the chain is whole
        checked = mem.verify(checkpoint=file)
    assert not checked.ok and statuses(checked.checkpoints) == ["diverges"]
    said = cli("verify", "--checkpoint", str(file))
    assert said.code == 1
    assert "ROLLED BACK OR REWRITTEN" in said.out and "diverges: event" in said.out


def test_a_journal_cut_back_is_behind(
    db: Path, backend: str, tmp_path: Path, cli: Callable[..., Result]
) -> None:
    file = tmp_path / "checkpoints.jsonl"
    with clew.open(db) as mem:
        work(mem, 1)
        kept = len(mem.journal())
        mem.checkpoint(file)
        work(mem, 2)
        mem.checkpoint(file)
        space = mem.space
    raw = Raw(db, backend)
    try:
        raw.cut(space, kept)
    finally:
        raw.close()
    said = cli("verify", "--checkpoint", str(file), "--json")
    found = json.loads(said.out)
    assert said.code == 1 and found["ok"] is False
    checks = found["checkpoints"]["checks"]
    assert [c["status"] for c in checks] == ["holds", "behind"]
    assert checks[1]["events"] == kept and "removed" in checks[1]["detail"]


@pytest.mark.sqlite_only("copies the store's file back, as a rollback to a backup does")
def test_a_store_rolled_back_to_an_older_copy_is_behind_though_it_verifies(
    db: Path, tmp_path: Path, cli: Callable[..., Result]
) -> None:
    with clew.open(db) as mem:
        work(mem, 1)
    shutil.copy(db, tmp_path / "backup.db")
    with clew.open(db) as mem:
        work(mem, 2)
    assert cli("checkpoint").code == 0  # the default file, outside the store's folder
    os.replace(tmp_path / "backup.db", db)
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    assert cli("verify").code == 0  # the older copy is whole in itself
    said = cli("verify", "--checkpoint")
    assert said.code == 1 and "behind: at" in said.out


@pytest.mark.sqlite_only("the export, edit, re-chain and import of the issue, on files")
def test_an_exported_edited_rechained_and_imported_journal_diverges(
    db: Path, tmp_path: Path, cli: Callable[..., Result]
) -> None:
    with clew.open(db) as mem:
        work(mem, 2)
    assert cli("checkpoint").code == 0
    exported = tmp_path / "journal.jsonl"
    assert cli("export", "--out", str(exported)).code == 0
    lines = exported.read_text().splitlines()
    previous = ""
    for n, text in enumerate(lines[1:-1], 1):  # each event line: edit one, re-chain all
        event = json.loads(text)
        data = json.dumps(event["data"], separators=(",", ":"))
        data = data.replace("built 0", "built by someone else")
        fields = ("id", "space", "task_id", "correlation_id", "type")
        link = chain.Link(0, *(event[f] for f in fields), data, event["created_at"], "")
        previous = event["hash"] = chain.row_hash(previous, link)
        event["data"] = json.loads(data)
        lines[n] = json.dumps(event, separators=(",", ":"))
    end = json.loads(lines[-1])
    end["head"] = previous
    lines[-1] = json.dumps(end)
    exported.write_text("\n".join(lines) + "\n")
    forged = tmp_path / "forged" / "clew.db"
    forged.parent.mkdir()
    assert cli("--db", str(forged), "import", str(exported)).code == 0
    os.replace(forged, db)  # the forged store where the real one was
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    assert cli("verify").code == 0  # alone, verify cannot tell
    said = cli("verify", "--checkpoint")
    assert said.code == 1 and "diverges" in said.out


def test_a_forged_or_foreign_line_is_not_checkable_and_fails_nothing(
    mem: clew.Memory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work(mem, 1)
    file = tmp_path / "cp.jsonl"
    real = mem.checkpoint(file)[0]
    forged = real._replace(events=real.events + 50)  # a line edited to accuse the store
    foreign = checkpointfile.make(
        real.store, real.space, ChainHead(99, "x", "f" * 64), real.at, key=bytes(32)
    )
    with file.open("a") as out:
        out.write(checkpointfile.line(forged) + "\n")
        out.write(checkpointfile.line(foreign) + "\n")
        out.write("not json\n\n")
        out.write("y" * 10_000 + "\n")
    with file.open("ab") as out:
        out.write(b"\xff\xfe{}\n")
    report = mem.check_checkpoints(file)
    assert report.ok and statuses(report) == ["holds"] + ["not checkable"] * 5
    assert [c.line for c in report.checks] == [1, 2, 3, 4, 6, 7]
    assert "seal does not check" in report.checks[1].detail
    assert "forged" in report.checks[2].detail
    assert mem.verify(checkpoint=file).ok


def test_lines_of_another_store_are_counted_not_checked(db: Path, tmp_path: Path) -> None:
    file = tmp_path / "cp.jsonl"
    other = tmp_path / "other.db"
    with clew.open(other) as elsewhere:
        work(elsewhere, 1)
        elsewhere.checkpoint(file)
    with clew.open(db) as mem:
        report = mem.check_checkpoints(file)
    assert report.checks == () and report.other_stores == 1 and report.ok


def test_a_checkpoint_of_an_older_chain_version_is_said_so_not_diverged(
    db: Path, backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    file = tmp_path / "cp.jsonl"
    with clew.open(db) as mem:
        work(mem, 1)
        mem.checkpoint(file)
        space = mem.space
    # As an upgrade that redefines the chain and re-chains the journal would leave it.
    monkeypatch.setattr(chain, "VERSION", b"clew-event-3")
    monkeypatch.setattr(chain, "NUMBER", 3)
    raw = Raw(db, backend)
    try:
        raw.rewrite(space, 1, lambda data: data)
    finally:
        raw.close()
    with clew.open(db) as mem:
        report = mem.check_checkpoints(file)
        assert statuses(report) == ["older chain"] and report.ok
        assert "made under chain version 2" in report.checks[0].detail
        mem.checkpoint(file)  # a new one, under the new version, holds
        assert statuses(mem.check_checkpoints(file)) == ["older chain", "holds"]


def test_the_lines_a_client_kept_are_checked_as_lines(mem: clew.Memory) -> None:
    work(mem, 1)
    line = checkpointfile.line(mem.checkpoint()[0])
    report = mem.check_checkpoints([line])
    assert statuses(report) == ["holds"] and report.source == "the lines given"
    with pytest.raises(clew.ValidationError, match="must be text"):
        mem.check_checkpoints([b"bytes"])  # type: ignore[list-item]


# -- files and keys -----------------------------------------------------------------------


def test_verify_with_no_file_or_no_key_says_so_in_one_line(
    db: Path, tmp_path: Path, cli: Callable[..., Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    said = cli("verify", "--checkpoint", str(tmp_path / "none.jsonl"))
    assert said.code == 2 and said.err.count("\n") == 1 and "cannot read checkpoints" in said.err
    os.mkfifo(tmp_path / "fifo")
    said = cli("verify", "--checkpoint", str(tmp_path / "fifo"))
    assert said.code == 2 and "not a regular file" in said.err
    said = cli("checkpoint", "--file", str(tmp_path))
    assert said.code == 2 and "cannot write checkpoints" in said.err
    (tmp_path / "cp.jsonl").write_text("")
    monkeypatch.setenv("CLEW_SECRET_FILE", str(tmp_path / "no-key"))
    said = cli("verify", "--checkpoint", str(tmp_path / "cp.jsonl"))
    assert said.code == 2 and "no sealing key" in said.err
    assert not (tmp_path / "no-key").exists()  # checking never makes a key


def test_appends_from_many_writers_stay_whole_lines_and_a_torn_line_spoils_only_itself(
    tmp_path: Path,
) -> None:
    from clew.journal.checkpoints import append

    file = tmp_path / "deep" / "cp.jsonl"
    lines = [f'{{"n": {i}, "pad": "{"x" * 3000}"}}' for i in range(40)]

    def write(chunk: list[str]) -> None:
        for text in chunk:
            append(str(file), [text])

    threads = [threading.Thread(target=write, args=(lines[i::4],)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(file.read_text().splitlines()) == sorted(lines)
    assert oct(file.stat().st_mode & 0o777) == oct(0o600)
    with file.open("a") as out:
        out.write('{"torn": ')  # a crash mid-line
    append(str(file), ['{"after": 1}'])
    assert file.read_text().splitlines()[-2:] == ['{"torn": ', '{"after": 1}']


def test_the_checkpoint_command_documents_where_it_writes(
    cli: Callable[..., Result], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    said = cli("checkpoint")
    expected = tmp_path / "state" / "clew" / "checkpoints.jsonl"
    assert said.code == 0 and str(expected) in said.out and "0 events" in said.out
    monkeypatch.setenv("CLEW_CHECKPOINT_FILE", str(tmp_path / "named.jsonl"))
    said = cli("checkpoint", "--json")
    assert json.loads(said.out)["file"] == str(tmp_path / "named.jsonl")
    assert cli("verify", "--checkpoint").code == 0


# -- the server ---------------------------------------------------------------------------


@pytest.fixture
def served(db: Path, backend: str) -> Iterator[Any]:
    from tests.test_server import running

    keys = (("write", "a", "write"), ("read", "a", "read"), ("other", "b", "write"))
    with running(db, keys) as result:
        yield result


def test_every_api_answer_carries_the_callers_space_checkpoint(served: Any) -> None:
    s = served
    made = s.op("task_register", {"name": "Deploy", "plan": ["Build"]})
    home = s.server.spaces.home
    line = made.headers["clew-checkpoint"]
    kept = checkpointfile.read(line)
    assert isinstance(kept, Checkpoint) and kept.space == home.space
    assert kept.events == len(home.journal())  # after the write it answers
    assert statuses(home.check_checkpoints([line])) == ["holds"]
    other = s.op("task_register", {"name": "B's"}, key="other")
    assert checkpointfile.read(other.headers["clew-checkpoint"]).space == s.tokens["space-b"]  # type: ignore[union-attr]
    asked = s.call("GET", "/api/v1/checkpoint", key="read")
    assert asked.status == 200 and "clew-checkpoint" not in asked.headers
    body = asked.json()
    assert body["line"] == checkpointfile.line(Checkpoint(**body["checkpoint"]))
    assert body["checkpoint"]["events"] == kept.events
    refused = s.call("GET", "/api/v1/checkpoint", key="clew_wrong_key")
    assert refused.status == 401 and "clew-checkpoint" not in refused.headers
    public = s.call("GET", "/api/v1/openapi.json", key=None)
    assert "clew-checkpoint" not in public.headers
    assert "/api/v1/checkpoint" in public.json()["paths"]


def test_serve_writes_checkpoints_at_start_when_spaces_move_and_at_shutdown(
    tmp_path: Path,
) -> None:
    db = tmp_path / "team.db"
    file = tmp_path / "checkpoints" / "server.jsonl"
    with clew.open(db, space="team") as mem:
        work(mem, 1)
        started = len(mem.journal())
    port = free_port()
    env = {**os.environ, "CLEW_WORKER": "off"}
    command = [
        sys.executable,
        "-m",
        "clew",
        "--db",
        str(db),
        "--space",
        "team",
        "serve",
        "--port",
        str(port),
        "--checkpoint-file",
        str(file),
        "--checkpoint-every",
        "1",
    ]
    server = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)

    def counts() -> list[int]:
        lines = [checkpointfile.read(t) for t in file.read_text().splitlines()]
        return [c.events for c in lines if isinstance(c, Checkpoint)]

    try:
        wait_listening(server, port)
        assert counts() == [started]  # written before it served
        with clew.open(db, space="team") as mem:
            work(mem, 1)
            moved = len(mem.journal())
        deadline = time.monotonic() + 20
        while moved not in counts():  # a round writes the move within a second
            assert time.monotonic() < deadline, "no checkpoint of the move was written"
            time.sleep(0.05)
        with clew.open(db, space="team") as mem:
            work(mem, 1)
            last = len(mem.journal())
    finally:
        server.send_signal(signal.SIGINT)
        server.communicate(timeout=30)
    written = counts()
    assert written[0] == started and written[-1] == last  # the last: shutdown's, if no round's
    assert written == sorted(set(written))  # a line only when the space moved
    with clew.open(db, space="team") as mem:
        assert mem.verify(checkpoint=file).ok


def test_serve_refuses_to_start_when_its_checkpoint_file_cannot_be_written(
    tmp_path: Path,
) -> None:
    db = tmp_path / "s.db"
    clew.open(db).close()
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "clew",
        "--db",
        str(db),
        "serve",
        "--port",
        str(port),
        "--checkpoint-file",
        str(tmp_path),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "cannot write checkpoints" in done.stderr


def test_a_failing_checkpoint_never_costs_an_answer_or_the_servers_tasks(
    served: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    keeper = served.server.checkpoints

    def broken(space: str) -> Checkpoint:
        raise RuntimeError("a bug")

    monkeypatch.setattr(keeper, "of", broken)
    reply = served.op("task_register", {"name": "still served"})
    assert reply.status == 200 and "clew-checkpoint" not in reply.headers
    keeper.file = str(tmp_path)  # a folder: the round cannot write
    keeper.write_quietly()
    monkeypatch.setattr(keeper.spaces.home, "checkpoint", lambda *a, **k: 1 / 0)
    keeper.write_quietly()
    said = capsys.readouterr().err
    assert "no checkpoint written this time: cannot write checkpoints" in said
    assert "a bug in clew" in said and "ZeroDivisionError" in said
    assert served.op("task_state", {}).status == 200
