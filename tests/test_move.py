"""Moving a store: export the journal, import it anywhere, push to another store.

The round trip is checked row by row (tests/roundtrip.py), with the same verify and the
same hashes; what a file can get wrong is refused before anything is written."""

from __future__ import annotations

import io
import json
import sqlite3
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import clew
from clew.core import chain
from clew.errors import ClewError, ValidationError
from clew.journal import journalfile
from clew.models import EVENT_TYPES
from clew.store import projection
from clew.store.portable.journal import JournalWrites
from tests.conftest import FakeClock, Result
from tests.roundtrip import assert_same_store, rows

Cli = Callable[..., Result]


def exported(mem: clew.Memory, **cut: Any) -> str:
    out = io.StringIO()
    mem.export_events(out, **cut)
    return out.getvalue()


def split(text: str) -> list[str]:
    """A journal file's lines: only "\n" ends one (str.splitlines would also split at the
    U+2028 that `work` puts inside a message)."""
    return text.removesuffix("\n").split("\n")


def work(mem: clew.Memory) -> str:
    """A little of everything the journal records; returns the task's id."""
    task = mem.create_task("Deploy coursefolio", ["Build image", "Push", "Run"], goal="ship")
    mem.update_task(task.id, step=1, step_status="active", message="building\u2028now")
    done = mem.record_action(task.id, command="make", exit_code=0, stdout=b"\xff\xfebuilt")
    mem.log_action(done.id, "compiled 3 files")
    mem.record_action(task.id, command="pytest -x", exit_code=1, stderr="E   ConnectionReset")
    error = mem.add_error(task.id, "ConnectionReset in test_api", command="pytest -x")
    mem.resolve(error.id, "retry with backoff")
    mem.add_decision(task.id, "Push images to ghcr.io", tags=["registry", "$odd"])
    mem.update_task(task.id, step=1, step_status="completed", metadata={"$bytes": "no"})
    mem.replan(task.id, [clew.AddStep("Smoke test")], reason="found a gap")
    mem.trace_decision(task.id, "use docker buildx", context={"why": "multi-arch"})
    mem.add_pattern("ci", "retry flaky network tests")
    mem.add_guardrail("no force push", pattern=r"git push .*--force", enforcement="block")
    session = mem.start_session(workspace="/w", task_id=task.id)
    mem.append_turn(session.id, {"role": "user", "content": "deploy it, é ☃"})
    mem.append_turn(session.id, {"role": "assistant", "content": "on it"})
    mem.add_wait(task.id, "manual", "the DNS change is live")
    other = mem.create_task("Old chore", ["x"])
    mem.update_task(other.id, status="completed")
    mem.archive_task(other.id)
    return task.id


def test_every_event_type_is_one_the_projection_handles() -> None:
    import clew.store.sqlite.store  # noqa: F401  (registers every handler)

    assert set(projection._HANDLERS) == EVENT_TYPES


def test_a_store_moved_through_a_file_into_a_fresh_store_is_the_same_row_for_row(
    mem: clew.Memory, tmp_path: Path
) -> None:
    work(mem)
    text = exported(mem)
    with clew.open(tmp_path / "fresh.db") as fresh:
        report = fresh.import_events(text)
        assert (report.added, report.skipped) == (len(mem.journal()), 0)
        assert report.head == mem.verify().heads["default"]  # type: ignore[index]
    assert_same_store(mem.path, str(tmp_path / "fresh.db"))
    # and back again: the file the moved store writes is the same file
    with clew.open(tmp_path / "fresh.db") as fresh:
        assert exported(fresh) == text


def test_importing_twice_adds_nothing_and_changes_nothing(mem: clew.Memory, tmp_path: Path) -> None:
    work(mem)
    text = exported(mem)
    with clew.open(tmp_path / "b.db") as target:
        target.import_events(text)
        before = rows(target.path)
        again = target.import_events(text)
        assert (again.added, again.skipped, again.head) == (0, again.events, None)
        assert rows(target.path) == before


def test_a_file_is_versioned_and_says_how_it_ends(mem: clew.Memory) -> None:
    work(mem)
    lines = split(exported(mem))
    head, last = json.loads(lines[0]), json.loads(lines[-1])
    assert head == {
        "clew": "journal",
        "version": 2,
        "space": "default",
        "schema": head["schema"],
        "after": None,
    }
    events = mem.journal()
    assert last == {
        "clew": "end",
        "events": len(events),
        "head": events[-1].hash,
        "last": events[-1].id,
    }
    first = json.loads(lines[1])
    assert list(first) == list(journalfile.EVENT_KEYS)
    # the data is the stored text itself, in place: its hash checks from the line alone
    text = lines[1].split(',"data":', 1)[1][:-1]
    stored = sqlite3.connect(mem.path).execute("SELECT data FROM events WHERE seq = 1").fetchone()
    assert text == stored[0]
    fields = ("id", "space", "task_id", "correlation_id", "type", "created_at")
    digest = chain.data_digest(text)  # version 2: the hash covers the data's digest
    assert chain.event_hash("", **{k: first[k] for k in fields}, digest=digest) == first["hash"]
    assert first["forgotten"] is None


def test_an_event_of_the_older_shape_moves_as_stored_and_replays_the_same(
    mem: clew.Memory, tmp_path: Path
) -> None:
    session = mem.start_session(workspace="/w")
    call = {"id": "call_1", "type": "function", "function": {"name": "grep", "arguments": "{}"}}
    mem.append_turn(session.id, {"role": "assistant", "content": None, "tool_calls": [call]})
    old = {
        "session_id": session.id,
        "turn": {
            "id": "oldshape01",
            "number": 2,
            "message": {"role": "tool", "tool_call_id": "call_1", "content": "3 hits"},
            "token_count": 3,
        },
    }
    store = mem._store  # type: ignore[attr-defined]
    with store.transaction(write=True):
        store.append(
            type="turn.appended",
            task_id=None,
            correlation_id="old",
            data=old,
            created_at="2026-01-01T00:00:00.000000Z",
        )
    text = exported(mem)
    assert '"call_turn"' not in split(text)[-2]  # not upgraded on the way out
    with clew.open(tmp_path / "b.db") as target:
        target.import_events(text)
        assert target.list_turns(session.id)[-1].call_turn == 1
    assert_same_store(mem.path, str(tmp_path / "b.db"))


def test_an_export_continues_after_an_event_and_imports_on_top_of_the_earlier_one(
    mem: clew.Memory, tmp_path: Path
) -> None:
    task = work(mem)
    first = exported(mem)
    last = json.loads(split(first)[-1])["last"]
    mem.update_task(task, step=2, step_status="active", message="pushing")
    mem.add_finding(task, "the registry rate-limits at 100/min")
    rest = exported(mem, after=last)
    assert json.loads(split(rest)[0])["after"]["id"] == last
    new = len(mem.journal()) - len(split(first)) + 2
    assert len(split(rest)) == new + 2  # the header, the new events, the last line
    seq = next(e.seq for e in mem.journal() if e.id == last)
    assert exported(mem, since_seq=seq) == rest
    assert exported(mem, after=json.loads(split(rest)[-1])["last"]).count("\n") == 2
    assert "building\u2028now" in first
    with clew.open(tmp_path / "b.db") as target:
        with pytest.raises(ValidationError, match=f"continues after event {last}"):
            target.import_events(rest)
        assert target.journal() == []
        target.import_events(first)
        assert target.import_events(rest).added == new
    assert_same_store(mem.path, str(tmp_path / "b.db"))


def test_push_twice_sends_nothing_the_second_time_and_only_new_events_later(
    mem: clew.Memory, tmp_path: Path
) -> None:
    task = work(mem)
    team = str(tmp_path / "team.db")
    sent = mem.push(team)
    assert (sent.added, sent.skipped) == (len(mem.journal()), 0)
    assert mem.push(team).added == 0
    mem.update_task(task, message="one more")
    again = mem.push(team, batch=1)
    assert (again.added, again.skipped) == (1, len(mem.journal()) - 1)
    assert_same_store(mem.path, team)


def test_an_interrupted_push_resumes_where_it_stopped(
    mem: clew.Memory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work(mem)
    team = str(tmp_path / "team.db")
    # The target store adopts each event through its journal's write part (store/parts.py).
    adopt, calls = JournalWrites.adopt, []

    def dies_on_the_seventh(self: JournalWrites, event: Any, **options: Any) -> Any:
        calls.append(event.id)
        if len(calls) == 7:
            raise KeyboardInterrupt
        return adopt(self, event, **options)

    monkeypatch.setattr(JournalWrites, "adopt", dies_on_the_seventh)
    with pytest.raises(KeyboardInterrupt):
        mem.push(team, batch=3)
    monkeypatch.setattr(JournalWrites, "adopt", adopt)
    with clew.open(team) as target:
        assert [e.id for e in target.journal()] == calls[:6]  # two whole batches
        assert target.verify().ok
    resumed = mem.push(team, batch=3)
    assert (resumed.added, resumed.skipped) == (len(mem.journal()) - 6, 6)
    assert_same_store(mem.path, team)


def test_several_local_stores_push_into_one_team_store(tmp_path: Path) -> None:
    team = str(tmp_path / "team.db")
    for name in ("alice", "bob"):
        with clew.open(tmp_path / f"{name}.db") as local:
            local.create_task(f"{name}'s task", ["a"])
            local.push(team)
    with clew.open(team) as shared:
        assert sorted(t.name for t in shared.list_tasks()) == ["alice's task", "bob's task"]
        assert shared.verify().ok
    with clew.open(tmp_path / "alice.db") as local:
        assert local.push(team).added == 0


def test_a_space_can_be_pushed_into_another_space_name(mem: clew.Memory, tmp_path: Path) -> None:
    work(mem)
    team = str(tmp_path / "team.db")
    assert mem.push(team, space="alice").space == "alice"
    with clew.open(team, space="alice") as shared:
        assert len(shared.journal()) == len(mem.journal())
        assert shared.verify().ok
    with clew.open(team) as shared:
        assert shared.journal() == []


# -- what a file can get wrong --------------------------------------------------------------


def rechained(lines: list[str]) -> list[str]:
    """Lines with every hash (and the last line) recomputed, as a careful forger would."""
    previous, out = "", [lines[0]]
    for line in lines[1:-1]:
        head, text = line.split(',"data":', 1)
        row = json.loads(head + "}")
        row["hash"] = previous = chain.event_hash(
            previous,
            id=row["id"],
            space=row["space"],
            task_id=row["task_id"],
            correlation_id=row["correlation_id"],
            type=row["type"],
            digest=chain.data_digest(text[:-1]),
            created_at=row["created_at"],
        )
        out.append(
            json.dumps(row, ensure_ascii=False, separators=(",", ":"))[:-1] + ',"data":' + text
        )
    last = json.loads(lines[-1])
    last["head"], last["events"] = previous or None, len(out) - 1
    return [*out, json.dumps(last, separators=(",", ":"))]


def refused(mem: clew.Memory, text: str, says: str) -> None:
    before = mem.journal()
    with pytest.raises(ValidationError, match=says):
        mem.import_events(text)
    assert mem.journal() == before


@pytest.fixture
def lines(tmp_path: Path, clock: FakeClock) -> list[str]:
    with clew.open(tmp_path / "source.db", clock=clock) as source:
        work(source)
        return split(exported(source))


def test_a_tampered_reordered_or_cut_file_is_refused_naming_the_line(
    tmp_path: Path, lines: list[str]
) -> None:
    with clew.open(tmp_path / "target.db") as target:
        changed = [*lines]
        changed[4] = changed[4].replace('"data":{', '"data":{"x":1,', 1)
        refused(target, "\n".join(changed), "line 5 .* does not follow")
        swapped = [lines[0], lines[2], lines[1], *lines[3:]]
        refused(target, "\n".join(swapped), "line 2 .* does not follow")
        dropped = [*lines[:3], *lines[4:]]
        refused(target, "\n".join(dropped), "line 4 .* does not follow")
        cut = "\n".join(lines)[: -len(lines[-1]) - 40]
        refused(target, cut, f"line {len(lines) - 1} .* not valid JSON")
        refused(target, "\n".join(lines[:-1]), f"line {len(lines)} .* cut short")
        refused(target, "\n".join(lines[:-2] + lines[-1:]), "lines were removed or added")
        refused(target, "\n".join([*lines, lines[-1]]), "comes after the journal's last line")


def test_a_file_that_cannot_be_stored_exactly_is_refused(tmp_path: Path, lines: list[str]) -> None:
    with clew.open(tmp_path / "target.db") as target:
        spaced = [*lines]
        spaced[1] = spaced[1].replace('"data":{"task":{', '"data":{"task": {', 1)
        refused(target, "\n".join(rechained(spaced)), "line 2 .* in the form clew stores")
        unknown = [*lines]
        unknown[2] = unknown[2].replace('"type":"', '"type":"x.', 1)
        refused(target, "\n".join(rechained(unknown)), "line 3 .* does not know")
        newer = [lines[0].replace('"version":2', '"version":3'), *lines[1:]]
        refused(target, "\n".join(newer), "line 1 .* newer clew")
        later = [lines[0].replace('"schema":', '"schema":9999,"x":'), *lines[1:]]
        refused(target, "\n".join(later), "newer clew")


def test_a_task_that_clashes_with_a_different_one_is_refused(
    tmp_path: Path, lines: list[str]
) -> None:
    with clew.open(tmp_path / "target.db") as target:
        target.import_events("\n".join(lines))
        # The same task id created by another event: another task that happens to share it.
        event_id = json.loads(lines[1].split(',"data":')[0] + "}")["id"]
        other = lines[1].replace(f'"id":"{event_id}"', '"id":"zzzzzzzzzz"', 1)
        forged = rechained([lines[0], other, '{"clew":"end","events":1,"head":null}'])
        refused(target, "\n".join(forged), "line 2 .* creates task .* a different task")
        # Held events after one that is not: the store would get them out of order.
        refused(
            target,
            "\n".join(rechained([lines[0], other, *lines[2:]])),
            "line 3 .* already in the store but line 2 .* before it is not",
        )


def test_an_event_of_a_task_no_one_creates_is_refused(tmp_path: Path, lines: list[str]) -> None:
    without_creation = [lines[0], *lines[2:]]
    with clew.open(tmp_path / "target.db") as target:
        refused(target, "\n".join(rechained(without_creation)), "line 2 .* which this store")


def test_an_export_refuses_a_journal_whose_chain_is_broken(mem: clew.Memory) -> None:
    work(mem)
    conn = sqlite3.connect(mem.path)
    conn.execute("DROP TRIGGER events_no_update")
    conn.execute("UPDATE events SET data = replace(data, 'Deploy', 'Dep') WHERE seq = 1")
    conn.commit()
    with pytest.raises(clew.StoreError, match=r"event #1 .* `clew verify`"):
        exported(mem)


# -- the property: any mix of work moves exactly -------------------------------------------

words = st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=12).filter(
    str.strip
)
operations = st.lists(
    st.one_of(
        st.tuples(st.just("task"), words, st.integers(0, 3)),
        st.tuples(
            st.just("step"),
            st.integers(0, 5),
            st.integers(1, 3),
            st.sampled_from(["active", "completed", "failed", "skipped"]),
        ),
        st.tuples(
            st.just("action"),
            st.integers(0, 5),
            words,
            st.integers(0, 2),
            st.one_of(words, st.binary(max_size=8)),
        ),
        st.tuples(
            st.just("entry"),
            st.integers(0, 5),
            words,
            st.sampled_from(["decision", "error", "discovery"]),
        ),
        st.tuples(st.just("turn"), st.sampled_from(["user", "assistant"]), words),
        st.tuples(st.just("close"), st.integers(0, 5)),
    ),
    max_size=12,
)


def apply(mem: clew.Memory, ops: list[tuple[Any, ...]]) -> None:
    tasks: list[str] = []
    session: str | None = None
    for op in ops:
        kind, pick = op[0], (lambda i: tasks[i % len(tasks)])
        try:
            if kind == "task":
                tasks.append(mem.create_task(op[1], [f"step {n}" for n in range(op[2])]).id)
            elif kind == "turn":
                session = session or mem.start_session(workspace="/w").id
                mem.append_turn(session, {"role": op[1], "content": op[2]})
            elif not tasks:
                continue
            elif kind == "step":
                mem.update_task(pick(op[1]), step=op[2], step_status=op[3], message="m")
            elif kind == "action":
                mem.record_action(pick(op[1]), command=op[2], exit_code=op[3], stdout=op[4])
            elif kind == "entry":
                mem.add_entry(op[3], op[2], task_id=pick(op[1]))
            elif kind == "close":
                mem.update_task(pick(op[1]), status="completed")
                mem.archive_task(pick(op[1]))
        except ClewError:
            pass  # refused as it would be for anyone: nothing was written


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(operations)
def test_any_work_moves_exactly_through_a_file_and_through_a_push(
    ops: list[tuple[Any, ...]],
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        source, copied, pushed = (f"{folder}/{n}.db" for n in ("a", "b", "c"))
        with clew.open(source) as mem:
            apply(mem, ops)
            text = exported(mem)
            mem.push(pushed, batch=4)
        with clew.open(copied) as target:
            target.import_events(text)
        assert_same_store(source, copied)
        assert_same_store(source, pushed)


# -- the command line -----------------------------------------------------------------------


def test_cli_export_import_and_push(
    cli: Cli, mem: clew.Memory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from clew.cli import main

    work(mem)
    out = tmp_path / "journal.jsonl"
    assert cli("export", "-o", str(out)).code == 0
    assert out.read_text() == cli("export").out == exported(mem)
    target = tmp_path / "b.db"
    assert main(["--db", str(target), "import", str(out)]) == 0
    said = capsys.readouterr().out
    assert f"imported {len(mem.journal())} events into space 'default'" in said
    assert main(["--db", str(target), "import", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["added"] == 0
    assert_same_store(mem.path, str(target))
    pushed = cli("push", "--to", str(tmp_path / "team.db"))
    assert pushed.code == 0 and f"pushed {len(mem.journal())} events" in pushed.out
    assert "pushed 0 events" in cli("push", "--to", str(tmp_path / "team.db")).out
    assert_same_store(mem.path, str(tmp_path / "team.db"))


def test_cli_import_reads_stdin(
    mem: clew.Memory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from clew.cli import main

    work(mem)
    raw = exported(mem).encode("utf-8")

    class Stdin:
        buffer = io.BytesIO(raw)

    monkeypatch.setattr("sys.stdin", Stdin)
    assert main(["--db", str(tmp_path / "b.db"), "import", "-"]) == 0
    assert_same_store(mem.path, str(tmp_path / "b.db"))


def test_cli_month_export_is_unchanged_by_the_journal_export(cli: Cli, mem: clew.Memory) -> None:
    work(mem)
    month = cli("export", "--month", "2026-11").out
    assert month == "".join(f"{line}\n" for line in mem.export_month("2026-11"))
    assert not month.startswith('{"clew"')
