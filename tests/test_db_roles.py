"""PostgreSQL's roles (docs/team-store.md, section 2; docs/security.md, "Database roles"):
each documented role connects with psycopg and tries what it may and may not do to every kind
of table; the catalog's rights of every table match what its kind may do; `clew` commands run
as each role; `clew db grant` refuses the roles it cannot hold; an upgraded store takes back
what the old set-up gave away.

One database of the module's own, owned by an ordinary role, as docs/team-store.md sets it up;
every attempt that changes something runs in a transaction rolled back after it."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import clew
from clew.cli import main
from clew.core.credentials import RequestLine
from clew.errors import AuthenticationError
from clew.store.migrations import OUTLINE_COLUMNS
from clew.store.postgres import migrations as pg_migrations
from tests.conftest import (
    FakeClock,
    free_port,
    new_space,
    postgres_url,
    row_security_gaps,
    wait_listening,
)

psycopg = pytest.importorskip("psycopg")

KINDS = ("server", "member", "reader")


def as_role(url: str, role: str, database: str | None = None) -> str:
    """`url` with `role` as its user (and `database`, if given)."""
    parts = urlsplit(url)
    host = parts.netloc.rsplit("@", 1)[-1]
    path = f"/{database}" if database else parts.path
    return parts._replace(netloc=f"{role}@{host}", path=path).geturl()


class Team(NamedTuple):
    """The module's database: a URL per role kind (and "superuser"), the role names, two
    spaces with a task each, a key of each (A admin, B read) and one logged request."""

    urls: dict[str, str]
    roles: dict[str, str]
    a: str
    b: str
    tokens: dict[str, str]


def make_roles(superuser: str, kinds: tuple[str, ...]) -> dict[str, str]:
    suffix = uuid.uuid4().hex[:8]
    roles = {kind: f"clew_{kind}_{suffix}" for kind in kinds}
    with psycopg.connect(superuser, autocommit=True) as su:
        for name in roles.values():
            su.execute(f"CREATE ROLE {name} LOGIN")
    return roles


def drop(superuser: str, database: str, roles: dict[str, str]) -> None:
    with psycopg.connect(superuser, autocommit=True) as su:
        su.execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
        for name in roles.values():
            su.execute(f"DROP ROLE IF EXISTS {name}")


@pytest.fixture(scope="module")
def team() -> Iterator[Team]:
    superuser = postgres_url()
    roles = make_roles(superuser, ("owner", *KINDS))
    database = f"clew_roles_{uuid.uuid4().hex[:8]}"
    try:
        with psycopg.connect(superuser, autocommit=True) as su:
            su.execute(f"CREATE DATABASE {database} OWNER {roles['owner']}")
        urls = {kind: as_role(superuser, name, database) for kind, name in roles.items()}
        urls["superuser"] = urlsplit(superuser)._replace(path=f"/{database}").geturl()
        a, b = new_space(), new_space()
        # As docs/team-store.md says: the owner makes the schema, then grants each role.
        with clew.open(urls["owner"], space=a, clock=FakeClock()) as owner:
            for kind in KINDS:
                owner.grant_role(roles[kind], kind)
            tokens = {
                "a": owner.create_key(a, "admin").token,
                "b": owner.create_key(b, "read").token,
            }
            owner.create_task("ours", ["x"])
            prefix = tokens["a"].split("_")[1]
            owner.log_requests(
                [RequestLine(a, prefix, "GET", "/", 200, "2026-11-22T09:00:00Z", 1.0)]
            )
        with clew.open(urls["owner"], space=b) as other:
            other.create_task("theirs", [])
        yield Team(urls, roles, a, b, tokens)
    finally:
        drop(superuser, database, roles)


@pytest.fixture(scope="module")
def conns(team: Team) -> Iterator[dict[str, Any]]:
    """A psycopg connection as each role kind (and the owner)."""
    opened = {kind: psycopg.connect(team.urls[kind]) for kind in ("owner", *KINDS)}
    yield opened
    for conn in opened.values():
        conn.close()


def attempt(conn: Any, sql: str, space: str) -> int:
    """Run `sql` in a transaction whose clew.space is `space`, then roll it back; return the
    rows it read or changed."""
    try:
        conn.execute("SELECT set_config('clew.space', %s, true)", (space,))
        cursor = conn.execute(sql.encode())
        return len(cursor.fetchall()) if cursor.description is not None else cursor.rowcount
    finally:
        conn.rollback()


# -- every table ---------------------------------------------------------------------------


def test_every_table_has_row_level_security_or_says_why(conns: dict[str, Any]) -> None:
    assert row_security_gaps(conns["owner"]) == []


def memory_tables(conn: Any) -> list[str]:
    """The tables of task memory: those with a policy by space (the journal among them)."""
    rows = conn.execute(
        "SELECT tablename FROM pg_policies WHERE schemaname = current_schema()"
        " AND policyname = tablename || '_space' ORDER BY 1"
    )
    return [r[0] for r in rows.fetchall()]


PRIVILEGES = ("SELECT", "INSERT", "UPDATE", "DELETE", "TRUNCATE", "REFERENCES", "TRIGGER")
CHANGE = {"SELECT", "INSERT", "UPDATE", "DELETE"}
# What each kind may do to the tables that are not task memory (the spec, written out).
NAMED = {
    "events": {
        "server": {"SELECT", "INSERT", "UPDATE"},  # an admin key's forget
        "member": {"SELECT", "INSERT"},
        "reader": {"SELECT"},
    },
    "clew_migrations": {kind: {"SELECT"} for kind in KINDS},
    "clew_keys": {"server": {"SELECT", "INSERT", "UPDATE"}, "member": set(), "reader": set()},
    "clew_requests": {"server": {"SELECT", "INSERT", "DELETE"}, "member": set(), "reader": set()},
}


def test_each_role_holds_exactly_its_kind_s_rights_on_every_table(
    team: Team, conns: dict[str, Any]
) -> None:
    owner = conns["owner"]
    every = owner.execute(
        "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1"
    ).fetchall()
    memory = set(memory_tables(owner))
    unnamed = [t for (t,) in every if t not in memory and t not in NAMED]
    assert unnamed == [], "neither task memory nor named: say what each role may do to it"
    for kind in KINDS:
        for (table,) in every:
            wanted = (
                NAMED[table][kind]
                if table in NAMED
                else (CHANGE if kind != "reader" else {"SELECT"})
            )
            held = {
                p
                for p in PRIVILEGES
                if owner.execute(
                    "SELECT has_table_privilege(%s, %s, %s)", (team.roles[kind], table, p)
                ).fetchone()[0]
            }
            assert held == wanted, (kind, table)
        # No right on any sequence (an identity column needs none): counts stay unread.
        sequences = owner.execute(
            "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE c.relkind = 'S' AND n.nspname = current_schema()"
            " AND (has_sequence_privilege(%s, c.oid, 'SELECT')"
            "      OR has_sequence_privilege(%s, c.oid, 'USAGE'))",
            (team.roles[kind], team.roles[kind]),
        ).fetchall()
        assert sequences == [], kind
    owner.rollback()


# -- what each role tries ------------------------------------------------------------------

DENIED = "permission denied for table"
OWNER = "must be owner"
SCHEMA = "permission denied for schema"
POLICY = "row-level security"
OK, NONE = 1, 0  # succeeds, changing or reading some rows / none

# (what, SQL (with {a}, {b}: the spaces, {owner}: the owner role), what each kind gets: an
# error's words, OK or NONE). Run in space A, each in a transaction rolled back after it.
ATTACKS: list[tuple[str, str, dict[str, str | int]]] = [
    ("read the key hashes", "SELECT hash FROM clew_keys",
     {"owner": OK, "server": OK, "member": DENIED, "reader": DENIED}),
    ("mint an admin key",
     "INSERT INTO clew_keys VALUES ('f0f0f0f0f0f0', '{a}', 'admin', NULL, 'h', 't', NULL, NULL)",
     {"owner": OK, "server": OK, "member": DENIED, "reader": DENIED}),
    ("widen a key's scope", "UPDATE clew_keys SET scope = 'admin'",
     {"owner": OK, "server": OK, "member": DENIED, "reader": DENIED}),
    ("delete the keys", "DELETE FROM clew_keys",
     {"owner": OK, "server": DENIED, "member": DENIED, "reader": DENIED}),
    ("read the request log", "SELECT * FROM clew_requests",
     {"owner": OK, "server": OK, "member": DENIED, "reader": DENIED}),
    ("forge a request line",
     "INSERT INTO clew_requests (space, key_prefix, method, route, status, created_at, ms)"
     " VALUES ('{a}', NULL, 'GET', '/', 200, 't', 1)",
     {"owner": OK, "server": OK, "member": DENIED, "reader": DENIED}),
    ("erase the request log", "DELETE FROM clew_requests",
     {"owner": OK, "server": OK, "member": DENIED, "reader": DENIED}),
    ("empty the request log", "TRUNCATE clew_requests",
     {"owner": NONE, "server": DENIED, "member": DENIED, "reader": DENIED}),
    ("turn the keys' row-level security off", "ALTER TABLE clew_keys DISABLE ROW LEVEL SECURITY",
     {"owner": NONE, "server": OWNER, "member": OWNER, "reader": OWNER}),
    ("open the keys to every role", "CREATE POLICY open ON clew_keys USING (true)",
     {"owner": NONE, "server": OWNER, "member": OWNER, "reader": OWNER}),
    ("rewrite an event", "UPDATE events SET data = '{{}}'",
     {"owner": "append-only", "server": "append-only", "member": DENIED, "reader": DENIED}),
    ("delete the journal", "DELETE FROM events",
     {"owner": "append-only", "server": DENIED, "member": DENIED, "reader": DENIED}),
    ("empty the journal", "TRUNCATE events",
     {"owner": NONE, "server": DENIED, "member": DENIED, "reader": DENIED}),
    ("drop the journal's append-only guard", "DROP TRIGGER events_append_only ON events",
     {"owner": NONE, "server": OWNER, "member": OWNER, "reader": OWNER}),
    ("skip every trigger", "SET LOCAL session_replication_role = replica",
     dict.fromkeys(("owner", *KINDS), "permission denied to set parameter")),
    ("empty task memory", "TRUNCATE tasks CASCADE",
     {"owner": NONE, "server": DENIED, "member": DENIED, "reader": DENIED}),
    ("stop holding task memory to its space", "ALTER TABLE tasks NO FORCE ROW LEVEL SECURITY",
     {"owner": NONE, "server": OWNER, "member": OWNER, "reader": OWNER}),
    ("record a schema step", "INSERT INTO clew_migrations VALUES (99, 'x', 't', 'f')",
     {"owner": OK, "server": DENIED, "member": DENIED, "reader": DENIED}),
    ("make a table", "CREATE TABLE planted (a int)",
     {"owner": NONE, "server": SCHEMA, "member": SCHEMA, "reader": SCHEMA}),
    ("plant a function the server would call",
     "CREATE FUNCTION public.clew_planted() RETURNS int LANGUAGE sql AS 'SELECT 1'",
     {"owner": NONE, "server": SCHEMA, "member": SCHEMA, "reader": SCHEMA}),
    ("become the owner", "SET ROLE {owner}",
     {"owner": NONE, "server": "permission denied to set role",
      "member": "permission denied to set role", "reader": "permission denied to set role"}),
    # Task memory, in the transaction's space: what members and the server are for.
    ("read the migrations' record", "SELECT number FROM clew_migrations",
     dict.fromkeys(("owner", *KINDS), OK)),
    ("read this space's tasks", "SELECT name FROM tasks", dict.fromkeys(("owner", *KINDS), OK)),
    ("add a task",
     "INSERT INTO tasks (id, space, name, status, created_at, updated_at)"
     " VALUES ('tskadded', '{a}', 'x', 'active', 't', 't')",
     {"owner": OK, "server": OK, "member": OK, "reader": DENIED}),
    ("rename a task", "UPDATE tasks SET name = 'renamed'",
     {"owner": OK, "server": OK, "member": OK, "reader": DENIED}),
    ("append an event",
     "INSERT INTO events (id, space, correlation_id, type, data, created_at)"
     " VALUES ('evtadded', '{a}', 'c', 'task.updated', '{{}}', 't')",
     {"owner": OK, "server": OK, "member": OK, "reader": DENIED}),
    ("add a task to another space than the transaction's",
     "INSERT INTO tasks (id, space, name, status, created_at, updated_at)"
     " VALUES ('tskforged', '{b}', 'x', 'active', 't', 't')",
     {"owner": POLICY, "server": POLICY, "member": POLICY, "reader": DENIED}),
    ("read another space's tasks without naming it", "SELECT name FROM tasks WHERE space = '{b}'",
     dict.fromkeys(("owner", *KINDS), NONE)),
]  # fmt: skip


@pytest.mark.parametrize("kind", ["owner", *KINDS])
@pytest.mark.parametrize(("what", "sql", "outcomes"), ATTACKS, ids=[a[0] for a in ATTACKS])
def test_each_role_can_do_only_what_its_kind_may(
    team: Team, conns: dict[str, Any], kind: str, what: str, sql: str, outcomes: dict[str, Any]
) -> None:
    statement = sql.format(a=team.a, b=team.b, owner=team.roles["owner"])
    expected = outcomes[kind]
    if isinstance(expected, str):
        with pytest.raises(psycopg.Error, match=expected):
            attempt(conns[kind], statement, team.a)
    elif expected == OK:
        assert attempt(conns[kind], statement, team.a) >= 1
    else:
        assert attempt(conns[kind], statement, team.a) in (0, -1)


def test_a_member_who_names_another_space_reads_it_but_never_the_keys(
    team: Team, conns: dict[str, Any]
) -> None:
    """A space is not a login (docs/team-store.md, section 5): any role may set clew.space
    or clew.all_spaces. The keys and the request log do not depend on either."""
    member = conns["member"]
    try:
        member.execute("SELECT set_config('clew.space', %s, true)", (team.b,))
        assert member.execute("SELECT name FROM tasks").fetchall() == [("theirs",)]
        member.execute("SELECT set_config('clew.all_spaces', 'on', true)")
        assert {r[0] for r in member.execute("SELECT name FROM tasks")} >= {"ours", "theirs"}
        for table in ("clew_keys", "clew_requests"):
            member.execute("SAVEPOINT s")
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match=DENIED):
                member.execute(f"SELECT * FROM {table}")
            member.execute("ROLLBACK TO SAVEPOINT s")
        member.execute("SELECT set_config('clew.space', %s, true)", (team.a,))
        renamed = member.execute("UPDATE tasks SET name = 'renamed' WHERE space = %s", (team.b,))
        assert renamed.rowcount == 0  # clew.all_spaces is for reading: B's rows stay B's
    finally:
        member.rollback()


def test_a_granted_table_of_the_keys_still_shows_a_member_no_row(
    team: Team, conns: dict[str, Any]
) -> None:
    """The second wall: with a right on the keys granted by hand, row-level security (no
    policy for the member) shows it none and refuses its rows."""
    owner, member = conns["owner"], conns["member"]
    owner.execute(f"GRANT SELECT, INSERT ON clew_keys TO {team.roles['member']}")
    owner.commit()
    try:
        assert attempt(member, "SELECT hash FROM clew_keys", team.a) == 0
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match=POLICY):
            attempt(
                member,
                "INSERT INTO clew_keys VALUES ('f0f0f0f0f0f0', 'x', 'admin', NULL, 'h', 't',"
                " NULL, NULL)",
                team.a,
            )
    finally:
        owner.execute(f"REVOKE ALL ON clew_keys FROM {team.roles['member']}")
        owner.commit()


# -- clew as each role ---------------------------------------------------------------------


def run(capsys: pytest.CaptureFixture[str], url: str, *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["--db", url, *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def refused(outcome: tuple[int, str, str], words: str) -> None:
    code, _, err = outcome
    assert code == 2 and err.count("\n") == 1 and words in err, err
    assert "Traceback" not in err


def test_a_member_keeps_task_memory_through_the_cli(
    team: Team, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url, space = team.urls["member"], new_space()
    code, task_id, _ = run(
        capsys, url, "--space", space, "task", "new", "Ship it", "--plan", "a", "b"
    )
    assert code == 0
    steps = (
        (
            "task",
            "update",
            task_id.strip(),
            "--step",
            "1",
            "--step-status",
            "completed",
            "-m",
            "done",
        ),
        ("note", task_id.strip(), "--type", "decision", "--summary", "use the blue registry"),
    )
    for args in steps:
        assert run(capsys, url, "--space", space, *args)[0] == 0, args
    code, out, _ = run(capsys, url, "--space", space, "where")
    assert code == 0 and "Ship it" in out
    messages = tmp_path / "turns.json"
    messages.write_text(json.dumps([{"role": "user", "content": "the blue registry, please"}]))
    assert run(capsys, url, "--space", space, "session", "new", "--key", "chat")[0] == 0
    assert run(capsys, url, "--space", space, "session", "append", "chat", str(messages))[0] == 0
    code, out, _ = run(capsys, url, "--space", space, "search", "registry")
    assert code == 0 and "blue registry" in out
    code, out, _ = run(capsys, url, "--space", space, "verify")
    assert code == 0 and out.startswith("ok")
    assert run(capsys, url, "--space", space, "verify", "--all-spaces")[0] == 0


def test_a_member_is_refused_the_keys_the_log_and_the_grants_in_one_line(
    team: Team, capsys: pytest.CaptureFixture[str]
) -> None:
    url = team.urls["member"]
    prefix = team.tokens["a"].split("_")[1]
    for args in (
        ("keys", "list"),
        ("keys", "create", "--space", team.a, "--scope", "admin"),
        ("keys", "revoke", prefix),
        ("keys", "log"),
    ):
        refused(run(capsys, url, *args), "keys and request log")
    refused(
        run(capsys, url, "db", "grant", team.roles["reader"], "--as", "member"), "only the owner"
    )
    with (
        clew.open(url, space=team.a) as member,
        pytest.raises(clew.StoreError, match="permission denied for table clew_keys"),
    ):
        member.authenticate(team.tokens["a"])


def test_a_reader_reads_and_verifies_but_writes_nothing(
    team: Team, capsys: pytest.CaptureFixture[str]
) -> None:
    url = team.urls["reader"]
    code, out, _ = run(capsys, url, "--space", team.a, "task", "list")
    assert code == 0 and "ours" in out
    refused(run(capsys, url, "--space", team.a, "task", "new", "x"), "may only read it")
    refused(run(capsys, url, "keys", "list"), "keys and request log")
    code, out, _ = run(capsys, url, "--space", team.a, "verify")
    assert code == 0 and out.startswith("ok")
    with clew.open(url, space=team.a) as reader:
        assert reader._store.read_only
        with pytest.raises(clew.StoreReadOnlyError, match="clew db grant ROLE --as member"):
            reader.create_task("x")


@pytest.mark.parametrize("kind", ["owner", "server"])
def test_the_owner_and_a_server_role_find_any_space_s_key_by_its_prefix(
    team: Team, kind: str
) -> None:
    home = new_space()
    with clew.open(team.urls[kind], space=home, clock=FakeClock()) as mem:
        key = mem.authenticate(team.tokens["b"])  # a key of space B, from another space
        assert (key.space, key.scope) == (team.b, "read")
        made = mem.create_key(home, "write", name=kind)
        assert mem.authenticate(made.token).space == home
        mem.log_requests(
            [RequestLine(home, made.key.prefix, "GET", "/x", 200, "2026-10-01T09:00:00Z", 2.0)]
        )
        assert [r.route for r in mem.list_requests(home)] == ["/x"]
        assert mem.revoke_key(made.key.prefix).revoked_at is not None
        assert mem.prune_requests(30) >= 1 and mem.list_requests(home) == []


def test_clew_serve_runs_as_a_server_role_and_refuses_to_run_as_a_member(
    team: Team, tmp_path: Path
) -> None:
    refusal = subprocess.run(
        [sys.executable, "-m", "clew", "--db", team.urls["member"], "serve", "--port", "0"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert refusal.returncode == 2 and refusal.stderr.count("\n") == 1, refusal.stderr
    assert "keys and request log" in refusal.stderr
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "clew", "--db", team.urls["server"], "--space", team.a,
         "serve", "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        wait_listening(server, port)
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/api/v1/task_list",
            data=b'{"all": true}',
            headers={
                "Authorization": f"Bearer {team.tokens['b']}",
                "Content-Type": "application/json",
            },
        )
        with urllib.request.urlopen(request, timeout=20) as answer:
            listed = json.loads(answer.read())
        assert [t["name"] for t in listed["data"]] == ["theirs"]  # the key's space
        prefix = team.tokens["b"].split("_")[1]
        with clew.open(team.urls["owner"], space=team.a) as owner:
            wait_for(lambda: any(r.key_prefix == prefix for r in owner.list_requests(team.b)))
    finally:
        server.terminate()
        _, err = server.communicate(timeout=20)
    assert b"Traceback" not in err, err.decode()


def wait_for(condition: Callable[[], bool], seconds: float = 30) -> None:
    """Return once `condition()` holds; fail after `seconds`."""
    import time

    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.05)


# -- clew db -------------------------------------------------------------------------------


@pytest.fixture
def extra_role(team: Team) -> Iterator[Callable[[str], str]]:
    """Make roles (`make(options)` returns the name) dropped after the test."""
    made: list[str] = []

    def make(options: str = "") -> str:
        name = f"clew_extra_{uuid.uuid4().hex[:8]}"
        with psycopg.connect(team.urls["superuser"], autocommit=True) as su:
            su.execute(f"CREATE ROLE {name} LOGIN {options}")
        made.append(name)
        return name

    yield make
    with psycopg.connect(team.urls["superuser"], autocommit=True) as su:
        for name in made:
            su.execute(f"DROP OWNED BY {name}")
            su.execute(f"DROP ROLE {name}")


def rights_of(team: Team, role: str, table: str = "tasks") -> set[str]:
    with psycopg.connect(team.urls["owner"]) as conn:
        return {
            p
            for p in PRIVILEGES
            if conn.execute("SELECT has_table_privilege(%s, %s, %s)", (role, table, p)).fetchone()[
                0
            ]
        }


def test_grant_prints_its_sql_runs_again_after_a_new_table_and_revoke_takes_all(
    team: Team, capsys: pytest.CaptureFixture[str], extra_role: Callable[[str], str]
) -> None:
    owner, role = team.urls["owner"], extra_role("")
    code, out, err = run(capsys, owner, "db", "grant", role, "--as", "reader", "--sql")
    assert code == 0 and "GRANT SELECT ON TABLE" in out and f'"{role}"' in out
    assert "nothing was run" in err and rights_of(team, role) == set()
    assert run(capsys, owner, "db", "grant", role, "--as", "reader")[0] == 0
    assert rights_of(team, role) == {"SELECT"}
    # An upgrade adds a table of task memory: the same grant, run again, covers it.
    with psycopg.connect(owner) as conn:
        for statement in pg_migrations.table(
            "clew_roles_added", "space text NOT NULL, id text, PRIMARY KEY (space, id)"
        ):
            conn.execute(statement)
    try:
        assert rights_of(team, role, "clew_roles_added") == set()
        assert run(capsys, owner, "db", "grant", role, "--as", "member")[0] == 0
        assert rights_of(team, role, "clew_roles_added") == CHANGE
        code, out, _ = run(capsys, owner, "db", "roles")
        assert code == 0 and any(line.split()[:2] == [role, "member"] for line in out.splitlines())
    finally:
        with psycopg.connect(owner) as conn:
            conn.execute("DROP TABLE clew_roles_added")
    code, out, _ = run(capsys, owner, "db", "revoke", role, "--sql")
    assert code == 0 and "REVOKE ALL ON TABLE" in out and rights_of(team, role) == CHANGE
    code, out, _ = run(capsys, owner, "db", "revoke", role)
    assert code == 0 and out == f"role {role!r} may no longer reach clew's tables\n"
    assert rights_of(team, role) == set() and rights_of(team, role, "events") == set()
    assert role not in run(capsys, owner, "db", "roles")[1]


def test_grant_refuses_the_roles_it_cannot_hold_and_changes_nothing(
    team: Team, extra_role: Callable[[str], str]
) -> None:
    inherits = extra_role(f"IN ROLE {team.roles['server']}")  # a member of the server role
    creates = extra_role("")
    with psycopg.connect(team.urls["owner"], autocommit=True) as conn:
        conn.execute(f"GRANT CREATE ON SCHEMA public TO {creates}")
    cases = {
        extra_role("SUPERUSER"): "is a superuser",
        extra_role("BYPASSRLS"): "BYPASSRLS",
        team.roles["owner"]: "owns clew's tables",
        extra_role(f"IN ROLE {team.roles['owner']}"): f"is a member of '{team.roles['owner']}'",
        inherits: "would still be able to do more than a member may (UPDATE events, SELECT"
        " clew_keys",
        creates: "may create objects in the schema",
        "no_such_role_here": "there is no role",
    }
    with clew.open(team.urls["owner"], space=team.a) as owner:
        for role, words in cases.items():
            with pytest.raises(clew.ValidationError, match=words.replace("(", r"\(")):
                owner.grant_role(role, "member")
        assert rights_of(team, inherits, "events") == {"SELECT", "INSERT", "UPDATE"}  # the server's
        assert rights_of(team, creates) == set()
        with pytest.raises(clew.ValidationError, match="one of: server, member, reader"):
            owner.grant_role(creates, "admin")
    with (
        clew.open(team.urls["server"], space=team.a) as server,
        pytest.raises(clew.StoreError, match="only the owner of clew's tables"),
    ):
        server.grant_role(creates, "reader")


def test_db_commands_on_a_sqlite_store_say_a_file_has_no_roles(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "s.db")
    for args in (("db", "grant", "x", "--as", "member"), ("db", "revoke", "x"), ("db", "roles")):
        refused(run(capsys, db, *args), "a SQLite file, which has no database roles")


def test_a_key_hash_read_from_the_store_is_not_a_key(tmp_path: Path) -> None:
    """Whoever reads a store's keys table (any local user who can read a SQLite file, the
    owner of a PostgreSQL one) learns each key's prefix and SHA-256, which do not open it."""
    import sqlite3

    with clew.open(tmp_path / "s.db", space="a") as mem:
        made = mem.create_key("a", "admin")
        conn = sqlite3.connect(tmp_path / "s.db")
        prefix, digest = conn.execute("SELECT prefix, hash FROM clew_keys").fetchone()
        conn.close()
        assert digest not in made.token
        with pytest.raises(AuthenticationError):
            mem.authenticate(f"clew_{prefix}_{digest}")


# -- an upgraded store ---------------------------------------------------------------------


def test_an_upgrade_takes_back_the_keys_the_old_set_up_gave_every_member(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Before schema 23, docs/team-store.md granted the agents' role every table, and it
    could read every key's hash and mint an admin key. Opening the store as its owner after
    the upgrade takes that back; the member alone cannot upgrade it."""
    superuser = postgres_url()
    roles = make_roles(superuser, ("owner", "member"))
    database = f"clew_upgrade_{uuid.uuid4().hex[:8]}"
    try:
        with psycopg.connect(superuser, autocommit=True) as su:
            su.execute(f"CREATE DATABASE {database} OWNER {roles['owner']}")
        owner, member = (as_role(superuser, roles[k], database) for k in ("owner", "member"))
        with clew.open(owner, space="a") as mem:
            mem.create_key("a", "admin")
        with psycopg.connect(owner, autocommit=True) as conn:  # back to schema 19, as it was
            for table in ("clew_keys", "clew_requests", "clew_migrations"):
                conn.execute(f"ALTER TABLE {table} DISABLE ROW LEVEL SECURITY")
            conn.execute("DROP POLICY clew_migrations_read ON clew_migrations")
            conn.execute("DROP INDEX clew_requests_line")  # and migration 24, after it
            conn.execute("ALTER TABLE clew_requests DROP COLUMN line_id")
            conn.execute(  # and migration 25
                "ALTER TABLE entries DROP COLUMN origin, DROP COLUMN keep_open,"
                " DROP COLUMN evidence"
            )
            for table in OUTLINE_COLUMNS:  # and migration 26
                conn.execute(f"DROP TRIGGER outline_{table} ON {table}")
            conn.execute("DROP TABLE outline_docs")
            conn.execute("DELETE FROM clew_migrations WHERE number >= 23")
            conn.execute(
                "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public"
                f" TO {roles['member']}"
            )
        with psycopg.connect(member) as conn:  # the finding
            assert len(conn.execute("SELECT hash FROM clew_keys").fetchall()) == 1
        with pytest.raises(clew.StoreError, match=r"schema \d+ of \d+.*only the owner.*clew init"):
            clew.open(member, space="a")
        assert run(capsys, owner, "init")[0] == 0
        with (
            psycopg.connect(member) as conn,
            pytest.raises(psycopg.errors.InsufficientPrivilege, match=DENIED),
        ):
            conn.execute("SELECT hash FROM clew_keys")
        _code, out, _ = run(capsys, owner, "db", "roles")
        line = next(x for x in out.splitlines() if x.startswith(roles["member"]))
        assert "other" in line and "nearest member" in line and "+UPDATE events" in line
        assert run(capsys, owner, "db", "grant", roles["member"], "--as", "member")[0] == 0
        with clew.open(member, space="a") as mem:
            mem.create_task("after the upgrade")
            assert mem.verify().ok
    finally:
        drop(superuser, database, roles)


# -- names -----------------------------------------------------------------------------------


@settings(max_examples=200)
@given(
    name=st.text(
        st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"), min_size=1
    ).filter(lambda n: len(n.encode("utf-8")) <= 63 and n.strip())
)
def test_any_role_name_is_quoted_so_postgresql_reads_it_back_exactly(
    conns: dict[str, Any], name: str
) -> None:
    """A role's name comes from the command line: quoted, PostgreSQL's parser reads back
    that name and nothing else, so no name can add a statement."""
    from clew.store.postgres.roles import quoted, role_name

    conn = conns["owner"]
    try:
        parsed = conn.execute("SELECT parse_ident(%s, true)", (quoted(role_name(name)),))
        assert parsed.fetchone() == ([name],)
    finally:
        conn.rollback()


def test_a_role_with_a_hostile_name_is_granted_and_revoked_as_itself(
    team: Team, capsys: pytest.CaptureFixture[str]
) -> None:
    name = f'Odd "x"; DROP TABLE events; -- {uuid.uuid4().hex[:6]}'
    identifier = psycopg.sql.Identifier(name)
    with psycopg.connect(team.urls["superuser"], autocommit=True) as su:
        su.execute(psycopg.sql.SQL("CREATE ROLE {} LOGIN").format(identifier))
    try:
        assert run(capsys, team.urls["owner"], "db", "grant", name, "--as", "reader")[0] == 0
        assert rights_of(team, name) == {"SELECT"}
        assert run(capsys, team.urls["owner"], "db", "revoke", name)[0] == 0
        assert rights_of(team, name) == set() and rights_of(team, name, "events") == set()
    finally:
        with psycopg.connect(team.urls["superuser"], autocommit=True) as su:
            su.execute(psycopg.sql.SQL("DROP OWNED BY {}").format(identifier))
            su.execute(psycopg.sql.SQL("DROP ROLE {}").format(identifier))
