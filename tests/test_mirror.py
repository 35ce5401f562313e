"""File mirrors: tasks/<id>/state.yaml beside the store, rewritten atomically after each
change, and journal.jsonl, appended to (never rewritten); a writer killed mid-append can
leave a torn last line, which the next write cuts back and writes again."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

import clew
from clew.models import Event
from clew.state.mirror import Mirror, check_task_id, journal_line


def mirror_files(db: Path, task_id: str) -> tuple[Path, Path]:
    folder = db.parent / "tasks" / task_id
    return folder / "state.yaml", folder / "journal.jsonl"


def journal_records(path: Path) -> list[dict[str, object]]:
    data = path.read_bytes()
    assert data == b"" or data.endswith(b"\n"), "the journal file ends mid-line"
    return [json.loads(line) for line in data.decode("utf-8").splitlines()]


def whole_records(path: Path) -> list[dict[str, object]]:
    """The journal's whole lines, as a reader must take them while a writer may append."""
    data = path.read_bytes()
    return [json.loads(line) for line in data[: data.rfind(b"\n") + 1].splitlines()]


def test_every_change_rewrites_the_state_and_extends_the_journal(tmp_path: Path) -> None:
    db = tmp_path / ".clew" / "clew.db"
    with clew.open(db, mirror=True) as mem:
        task = mem.create_task("Deploy", ["Build", "Push"], goal="v1 live")
        state, journal = mirror_files(db, task.id)
        assert state.read_text() == mem.state(task.id).text
        mem.update_task(task.id, step=1, step_status="completed", message="built")
        mem.add_decision(task.id, "Use ghcr.io")
        mem.record_files(task.id, created=["Dockerfile"])
        assert state.read_text() == mem.state(task.id).text
        assert yaml.safe_load(state.read_text())["decisions_log"] == ["Use ghcr.io"]
        records = journal_records(journal)
        events = mem.journal(task_id=task.id)
        assert [r["seq"] for r in records] == [e.seq for e in events]
        assert [r["type"] for r in records] == [e.type for e in events]
        assert records[0]["details"]["task"]["name"] == "Deploy"
        other = mem.create_task("Other", ["x"])
        assert mirror_files(db, other.id)[0].exists()
        assert [r["seq"] for r in journal_records(journal)] == [e.seq for e in events]
        assert not [p for p in state.parent.iterdir() if p.name.endswith(".tmp")]


def test_mirrors_are_off_unless_enabled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "store.db"
    with clew.open(db) as mem:
        task = mem.create_task("T", ["a"])
    assert not (tmp_path / "tasks").exists()
    monkeypatch.setenv("CLEW_MIRROR", "1")
    with clew.open(db) as mem:
        mem.update_task(task.id, message="now mirrored")
    state, journal = mirror_files(db, task.id)
    assert state.exists() and len(journal_records(journal)) == 2  # caught up from the start
    monkeypatch.delenv("CLEW_MIRROR")
    (tmp_path / "config.toml").write_text("[state]\nmirror = true\n")
    with clew.open(db) as mem:
        mem.update_task(task.id, message="from config")
    assert len(journal_records(journal)) == 3
    monkeypatch.setenv("CLEW_MIRROR", "perhaps")
    with pytest.raises(clew.ValidationError, match="mirror must be true or false"):
        clew.open(db)


def test_a_mirror_that_cannot_be_written_warns_and_loses_nothing(tmp_path: Path) -> None:
    db = tmp_path / "store.db"
    (tmp_path / "tasks").write_text("a file where the folder should be")
    with clew.open(db, mirror=True) as mem:
        with pytest.warns(clew.MirrorWarning, match="could not update the mirror"):
            task = mem.create_task("T", ["a"])
        assert mem.get_task(task.id).name == "T"
        assert mem.verify().ok


@pytest.mark.parametrize("bad", ["../etc", "a/b", "", "i" * 10, "../../../x", "..", "abc"])
def test_task_ids_in_paths_are_validated(tmp_path: Path, bad: str) -> None:
    with pytest.raises(clew.ValidationError, match="not a task id"):
        check_task_id(bad)
    with pytest.raises(clew.ValidationError):
        Mirror(str(tmp_path)).folder(bad)


def test_a_damaged_journal_file_is_rewritten_whole(tmp_path: Path) -> None:
    db = tmp_path / "store.db"
    with clew.open(db, mirror=True) as mem:
        task = mem.create_task("T", ["a"])
        _, journal = mirror_files(db, task.id)
        journal.write_bytes(b'{"seq": 1, "trunc')
        mem.update_task(task.id, message="after the damage")
        assert [r["seq"] for r in journal_records(journal)] == [
            e.seq for e in mem.journal(task_id=task.id)
        ]


WRITER = r"""
import sys
import clew
db, task_id = sys.argv[1], sys.argv[2]
with clew.open(db, mirror=True) as mem:
    n = 0
    while True:
        n += 1
        mem.update_task(task_id, message=f"update {n} " + "padding " * (n % 200))
        if n % 5 == 0:
            mem.add_decision(task_id, f"decision {n} " + "because " * (n % 50))
        sys.stdout.write(f"{n}\n")
        sys.stdout.flush()
"""


def test_a_writer_killed_mid_stream_leaves_files_the_next_write_makes_whole(
    tmp_path: Path,
) -> None:
    db = tmp_path / "store.db"
    with clew.open(db, mirror=True) as mem:
        task_id = mem.create_task("Crash", ["a", "b"]).id
    state, journal = mirror_files(db, task_id)
    rng = random.Random(7)
    for _ in range(3):
        child = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(db), task_id],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert child.stdout is not None
        child.stdout.readline()
        deadline = time.monotonic() + rng.uniform(0.2, 0.6)
        while time.monotonic() < deadline:  # read the files while the writer writes
            yaml.safe_load(state.read_text())
            whole_records(journal)
        child.send_signal(signal.SIGKILL)
        child.wait()
        child.stdout.close()
        assert child.stderr is not None
        child.stderr.close()
        assert yaml.safe_load(state.read_text())["task"]["id"] == task_id
        seqs = [r["seq"] for r in whole_records(journal)]
        assert seqs == sorted(set(seqs))  # whole lines, in order, none twice
    with clew.open(db, mirror=True) as mem:
        mem.update_task(task_id, message="after the crashes")
        records = journal_records(journal)
        assert [r["seq"] for r in records] == [e.seq for e in mem.journal(task_id=task_id)]
        assert state.read_text() == mem.state(task_id).text
        assert mem.verify().ok
    assert not [name for name in os.listdir(state.parent) if name.endswith(".tmp")]


def test_the_journal_file_is_appended_to_never_rewritten(tmp_path: Path) -> None:
    db = tmp_path / "store.db"
    with clew.open(db, mirror=True) as mem:
        task = mem.create_task("T", ["a"])
        _, journal = mirror_files(db, task.id)
        before, inode = journal.read_bytes(), journal.stat().st_ino
        mem.update_task(task.id, message="one more")
        after = journal.read_bytes()
        assert journal.stat().st_ino == inode  # the same file, not a copy renamed over it
        assert after.startswith(before) and len(after) > len(before)
        assert [r["seq"] for r in journal_records(journal)] == [
            e.seq for e in mem.journal(task_id=task.id)
        ]


def _events(count: int) -> list[Event]:
    return [
        Event(
            seq, f"e{seq:09d}", "default", "t", "c", "message.added", {"n": "x" * seq * 7_000}, ""
        )
        for seq in range(1, count + 1)
    ]


@settings(max_examples=60, deadline=None)
@given(total=st.integers(1, 12), at=st.floats(0, 1), extra=st.integers(0, 3))
def test_a_torn_last_line_is_cut_back_and_written_again(total: int, at: float, extra: int) -> None:
    """Whatever byte a crash stopped the journal at, the next write makes it exact (lines
    past 64 KiB make the search for the last whole line read several blocks)."""
    import tempfile

    events = _events(total + extra)
    whole = "".join(journal_line(e) + "\n" for e in events[:total]).encode()
    with tempfile.TemporaryDirectory() as root:
        mirror = Mirror(root)
        task_id = "0123456789"
        folder = Path(mirror.folder(task_id))
        folder.mkdir(parents=True)
        kept = whole[: int(len(whole) * at)]
        (folder / "journal.jsonl").write_bytes(kept)
        asked: list[int] = []

        def content(after: int) -> tuple[str, list[Event]]:
            asked.append(after)
            return "state: x\n", [e for e in events if e.seq > after]

        mirror.write(task_id, content)
        assert [r["seq"] for r in journal_records(folder / "journal.jsonl")] == [
            e.seq for e in events
        ]
        assert asked == [kept.count(b"\n")]  # continued from the last whole line
