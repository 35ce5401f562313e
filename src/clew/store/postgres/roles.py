"""Database roles on a PostgreSQL store: what each kind of role may do to each of clew's
tables, the statements that give it (`clew db grant ROLE --as KIND`), and what the roles of
a server hold now (`clew db roles`).

The kinds (docs/team-store.md, section 2, has the whole table):
- owner: the role that made the schema (`clew init`, the migrations). PostgreSQL lets an
  owner do anything to its tables; clew never grants this kind, and upgrades run as it.
- server: what `clew serve` needs: task memory in every space, the journal to append to, and
  the server's keys and request log. It owns nothing, so it cannot change the schema, turn
  row-level security off or drop the journal's append-only guard.
- member: an agent's: task memory in every space and the journal to append to; never the
  keys nor the request log.
- reader: dashboards and reports: reads task memory, writes nothing, never the keys nor the log.

Invariants:
- The walls are PostgreSQL's own: table privileges (whether a role may touch a table at all)
  and row-level security (which rows). No setting a client can make (`clew.space`,
  `clew.all_spaces`) reaches the keys or the request log: their row-level security has no
  policy but each server role's own (migration 23), so a role not granted `--as server` sees
  and writes no row of them even if someone grants it the tables by hand.
- A grant first revokes all the role held on clew's tables and drops its policies, so it can
  run again (after an upgrade adds a table) or with another kind, and leaves exactly the new
  kind's rights; then, before committing, it checks what the role can really do (with what
  it inherits from other roles and PUBLIC) against the kind, and changes nothing if more.
- clew's task-memory tables are found in the catalog, not listed here: each has the
  `<table>_space` policy that pg_migrations.table gives it (pg_vectors' table too), so a new
  one made that way is granted by the next `clew db grant`. Any other table must be named in
  RIGHTS (and in migrations.ADMIN_TABLES, with row-level security and no policy, if only the
  owner and the server may reach it): tests/test_db_roles.py fails on a table that is neither.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any, NamedTuple

from clew.errors import StoreError, ValidationError
from clew.models import DatabaseRole
from clew.store.migrations import ADMIN_TABLES

KINDS = ("server", "member", "reader")
JOURNAL = "events"
MIGRATIONS = "clew_migrations"
PRIVILEGES = ("SELECT", "INSERT", "UPDATE", "DELETE", "TRUNCATE", "REFERENCES", "TRIGGER")
_CHANGE = ("SELECT", "INSERT", "UPDATE", "DELETE")

# What each kind may do to each kind of table: "memory" is every task-memory table (those
# with a space policy) but the journal, from which no role may delete (its trigger refuses
# even the owner; a privilege refuses the others first). Only the server may update it, as
# an admin key's forget does: the trigger lets no update through but forgetting's (an
# event's content replaced with its tombstone set), and a member or reader forgets nothing.
RIGHTS: dict[str, dict[str, tuple[str, ...]]] = {
    "server": {
        "memory": _CHANGE,
        JOURNAL: ("SELECT", "INSERT", "UPDATE"),
        MIGRATIONS: ("SELECT",),
        "clew_keys": ("SELECT", "INSERT", "UPDATE"),  # made, used (last_used_at), revoked
        "clew_requests": ("SELECT", "INSERT", "DELETE"),  # logged, listed, pruned
    },
    "member": {"memory": _CHANGE, JOURNAL: ("SELECT", "INSERT"), MIGRATIONS: ("SELECT",)},
    "reader": {"memory": ("SELECT",), JOURNAL: ("SELECT",), MIGRATIONS: ("SELECT",)},
}


def quoted(name: str) -> str:
    """`name` as an SQL identifier, double-quoted: read back exactly as it is, whatever its
    case, spaces, quotes or keywords (a role's name comes from the command line)."""
    return '"' + name.replace('"', '""') + '"'


def role_name(role: object) -> str:
    """Return `role` if it can name a PostgreSQL role, else raise ValidationError."""
    if not isinstance(role, str) or not role.strip():
        raise ValidationError("name the database role, e.g. clew_member")
    if "\x00" in role or len(role.encode("utf-8", "surrogateescape")) > 63:
        raise ValidationError(
            f"{role[:80]!r} cannot be a PostgreSQL role name (at most 63 bytes, no NUL)"
        )
    return role


def kind_name(kind: object) -> str:
    """Return `kind` if it is one of KINDS, else raise ValidationError naming them."""
    if kind not in KINDS:
        raise ValidationError(f"a role is granted as one of: {', '.join(KINDS)}; not {kind!r}")
    return str(kind)


def server_policy(role: str) -> str:
    """The name of a server role's policy on the keys and the request log (at most 63 bytes:
    a long role name is shortened to a digest, the policy's TO clause names the role)."""
    name = f"server {role}"
    if len(name.encode("utf-8")) <= 63:
        return name
    return "server " + hashlib.blake2b(role.encode("utf-8"), digest_size=12).hexdigest()


class Catalog(NamedTuple):
    """clew's tables in the store's schema, and the server policies one role has there."""

    schema: str
    memory: tuple[str, ...]  # tables with a space policy, the journal left out
    policies: tuple[tuple[str, str], ...]  # (table, policy) naming the role alone


def table_class(table: str) -> str:
    """The key of RIGHTS a table of clew's falls under."""
    return table if table in (JOURNAL, MIGRATIONS, *ADMIN_TABLES) else "memory"


def tables(catalog: Catalog) -> tuple[str, ...]:
    """Every table of clew's, task memory first."""
    return (*catalog.memory, JOURNAL, MIGRATIONS, *ADMIN_TABLES)


def rights(kind: str, table: str) -> tuple[str, ...]:
    """What a role of `kind` may do to `table`."""
    return RIGHTS[kind].get(table_class(table), ())


def statements(role: str, kind: str | None, catalog: Catalog) -> list[str]:
    """The statements that give `role` exactly what `kind` may do (None: nothing)."""
    who = quoted(role)
    every = tables(catalog)
    found = [f"REVOKE ALL ON TABLE {', '.join(quoted(t) for t in every)} FROM {who}"]
    found += [f"DROP POLICY {quoted(p)} ON {quoted(t)}" for t, p in catalog.policies]
    if kind is None:
        return [*found, f"REVOKE USAGE ON SCHEMA {quoted(catalog.schema)} FROM {who}"]
    found.append(f"GRANT USAGE ON SCHEMA {quoted(catalog.schema)} TO {who}")
    by_rights: dict[tuple[str, ...], list[str]] = {}
    for table in every:
        if rights(kind, table):
            by_rights.setdefault(rights(kind, table), []).append(quoted(table))
    for granted, named in by_rights.items():
        found.append(f"GRANT {', '.join(granted)} ON TABLE {', '.join(named)} TO {who}")
    if kind == "server":
        policy = quoted(server_policy(role))
        found += [
            f"CREATE POLICY {policy} ON {t} TO {who} USING (true) WITH CHECK (true)"
            for t in ADMIN_TABLES
        ]
    return found


# -- the catalog ------------------------------------------------------------------------------

_CATALOG = """
SELECT current_schema(),
       coalesce(array_agg(tablename::text ORDER BY tablename)
                FILTER (WHERE policyname = tablename || '_space' AND tablename <> 'events'), '{}'),
       coalesce(array_agg(tablename::text || ' ' || policyname::text ORDER BY tablename)
                FILTER (WHERE tablename = ANY(%(admin)s) AND roles = ARRAY[%(role)s]::name[]
                        AND policyname LIKE 'server %%'), '{}')
FROM pg_policies WHERE schemaname = current_schema()
"""

# The role, and the owner of clew's tables (that of the journal, which the migrations made).
_ROLE = """
SELECT r.rolsuper, r.rolbypassrls, pg_has_role(r.oid, t.relowner, 'MEMBER'),
       has_schema_privilege(r.oid, t.relnamespace, 'CREATE'), pg_get_userbyid(t.relowner),
       current_user::text,
       pg_has_role(current_user, t.relowner, 'USAGE')
           OR (SELECT rolsuper FROM pg_roles WHERE rolname = current_user),
       t.relnamespace::regnamespace::text
FROM pg_roles r, pg_class t WHERE r.rolname = %(role)s AND t.oid = 'events'::regclass
"""


def catalog(raw: Any, role: str) -> Catalog:
    """Read clew's tables and `role`'s server policies from the catalog."""
    row = raw.execute(_CATALOG, {"admin": list(ADMIN_TABLES), "role": role}).fetchone()
    pairs = tuple(tuple(p.split(" ", 1)) for p in row[2])
    return Catalog(row[0], tuple(row[1]), pairs)


def _check_role(raw: Any, role: str, kind: str | None, *, applying: bool) -> None:
    """Refuse a role that does not exist, or that row-level security or ownership would let
    past what `kind` may do; refuse to apply when this connection's role may not grant."""
    row = raw.execute(_ROLE, {"role": role}).fetchone()
    if row is None:
        folded = raw.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role.lower(),))
        hint = (
            f" (did you mean {role.lower()}? unquoted names are folded to lower case)"
            if role != role.lower() and folded.fetchone()
            else ""
        )
        raise ValidationError(
            f"there is no role {role!r} on this server{hint}: make it first, as a superuser"
            f" (CREATE ROLE {quoted(role)} LOGIN PASSWORD '...')"
        )
    superuser, bypasses, owns, creates, owner, me, may_grant, schema = row
    if applying and not may_grant:
        raise StoreError(
            f"only the owner of clew's tables ({owner!r}) or a superuser may grant or revoke"
            f" what roles do to them, and this connection is role {me!r}; run it as"
            f" {owner!r}, or print the statements with --sql for them to run"
        )
    if superuser or bypasses:
        what = "a superuser" if superuser else "a role with BYPASSRLS"
        raise ValidationError(
            f"role {role!r} is {what}: row-level security does not hold it, so no grant can"
            " hold it to a kind; grant an ordinary role (NOSUPERUSER NOBYPASSRLS)"
        )
    if owns:
        whose = "owns clew's tables" if role == owner else f"is a member of {owner!r}, which"
        raise ValidationError(
            f"role {role!r} {whose}{' owns them' if role != owner else ''}: it may do anything"
            " to them already; give each use a role of its own (docs/team-store.md, section 2)"
        )
    if kind is not None and creates:
        raise ValidationError(
            f"role {role!r} may create objects in the schema clew uses, and so plant a"
            " function that the server's queries would call; as the schema's owner, run"
            f" REVOKE CREATE ON SCHEMA {schema} FROM PUBLIC (PostgreSQL before 15 grants it"
            f" to every role on public), and from {quoted(role)} if it was granted, then"
            " grant again"
        )


def _held(raw: Any, role: str, every: Sequence[str]) -> dict[str, set[str]]:
    """What `role` can do to each table, with what it inherits (has_table_privilege)."""
    checks = ", ".join(
        f"has_table_privilege(%(role)s, %(t{i})s, '{p}')"
        for i in range(len(every))
        for p in PRIVILEGES
    )
    names = {f"t{i}": t for i, t in enumerate(every)}
    row = raw.execute(f"SELECT {checks}", {"role": role, **names}).fetchone()
    held: dict[str, set[str]] = {}
    for i, table in enumerate(every):
        flags = row[i * len(PRIVILEGES) : (i + 1) * len(PRIVILEGES)]
        held[table] = {p for p, on in zip(PRIVILEGES, flags, strict=True) if on}
    return held


def _admin_policies(raw: Any, role: str) -> list[str]:
    """The policies of the keys and the request log that apply to `role`: its own, those of
    roles it is a member of, and those for PUBLIC."""
    rows = raw.execute(
        "SELECT tablename || ': ' || policyname FROM pg_policies"
        " WHERE schemaname = current_schema() AND tablename = ANY(%s)"
        " AND EXISTS (SELECT 1 FROM unnest(roles) AS r(name) WHERE CASE r.name"
        " WHEN 'public' THEN true ELSE pg_has_role(%s, r.name, 'MEMBER') END) ORDER BY 1",
        (list(ADMIN_TABLES), role),
    )
    return [str(r[0]) for r in rows.fetchall()]


def excess(raw: Any, role: str, kind: str | None, catalog: Catalog) -> list[str]:
    """What `role` can do beyond `kind` (None: beyond nothing), as 'PRIVILEGE table' and
    'policy table: name' phrases: rights it inherits, or holds through PUBLIC."""
    found = []
    for table, held in _held(raw, role, tables(catalog)).items():
        allowed = set(rights(kind, table)) if kind is not None else set()
        found += [f"{p} {table}" for p in PRIVILEGES if p in held - allowed]
    if kind != "server":
        found += [f"policy {p}" for p in _admin_policies(raw, role)]
    return found


def grant(raw: Any, role: str, kind: str | None, *, apply: bool, lock: int) -> list[str]:
    """Give `role` exactly what `kind` may do (None: nothing) on a connection in autocommit
    mode, in one transaction holding the migrations' lock `lock` (no upgrade adds a table
    half-way); return the statements. With apply=False, only return them."""
    raw.execute("BEGIN")
    try:
        raw.execute("SELECT pg_advisory_xact_lock(%s)", (lock,))
        _check_role(raw, role, kind, applying=apply)
        found = catalog(raw, role)
        made = statements(role, kind, found)
        if apply:
            for statement in made:
                raw.execute(statement.encode())
            extra = excess(raw, role, kind, found)
            if extra:
                raise ValidationError(
                    f"role {role!r} would still be able to do more than a"
                    f" {kind or 'role granted nothing'} may ({', '.join(extra[:4])}"
                    f"{', ...' if len(extra) > 4 else ''}), through PUBLIC or a role it is a"
                    " member of; revoke that first. Nothing was changed"
                )
            raw.execute("COMMIT")
        else:
            raw.execute("ROLLBACK")
    except BaseException:
        raw.execute("ROLLBACK")
        raise
    return made


# -- what the roles hold now -------------------------------------------------------------------


def held_roles(raw: Any) -> list[DatabaseRole]:
    """Every role that can reach clew's tables: the owner, superusers and roles that skip
    row-level security, and every role holding a right on one of the tables; each with the
    kind its rights match."""
    found = catalog(raw, "")
    every = tables(found)
    rows = raw.execute(
        "SELECT r.rolname::text, r.rolcanlogin, CASE WHEN r.rolsuper THEN 'superuser'"
        " WHEN r.rolbypassrls THEN 'bypassrls' END,"
        " pg_has_role(r.oid, t.relowner, 'MEMBER')"
        " FROM pg_roles r, pg_class t WHERE t.oid = 'events'::regclass"
        " AND r.rolname NOT LIKE 'pg\\_%%' ORDER BY r.rolname"
    ).fetchall()
    result = []
    for name, login, skips, owns in rows:
        if skips or owns:
            result.append(DatabaseRole(name, skips or "owner", login))
            continue
        held = _held(raw, name, every)
        policies = set(_admin_policies(raw, name))
        if any(held.values()) or policies:
            result.append(_matched(name, login, held, policies))
    return result


def _matched(role: str, login: bool, held: dict[str, set[str]], policies: set[str]) -> DatabaseRole:
    """The role with the kind whose rights `held` and `policies` are exactly, or as "other"
    with its differences from the nearest kind ('+RIGHT table' beyond it, '-RIGHT table'
    lacking)."""
    best: tuple[str, list[str]] | None = None
    passed = {p.split(":", 1)[0] for p in policies}  # the tables whose rows it reaches
    for kind in KINDS:
        diff = []
        for table, has in held.items():
            wanted = set(rights(kind, table))
            diff += [f"+{p} {table}" for p in PRIVILEGES if p in has - wanted]
            diff += [f"-{p} {table}" for p in PRIVILEGES if p in wanted - has]
        rows = set(ADMIN_TABLES) if kind == "server" else set()
        diff += [f"-policy {t}" for t in sorted(rows - passed)]
        diff += [f"+policy {t}" for t in sorted(passed - rows)]
        if not diff:
            return DatabaseRole(role, kind, login)
        if best is None or len(diff) < len(best[1]):
            best = (kind, diff)
    assert best is not None
    return DatabaseRole(role, "other", login, best[0], tuple(best[1]))
