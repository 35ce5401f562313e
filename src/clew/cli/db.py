"""`clew db`: the database roles of a PostgreSQL store (grant, revoke, roles).

What each kind may do is store/postgres/roles.py's, documented in docs/team-store.md (section 2).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from clew.cli.common import Commands, open_memory, print_json, show_lines
from clew.models import DatabaseRole, RoleGrant

_KINDS = ("server", "member", "reader")
_MAY = {
    "server": "what `clew serve` needs: task memory in every space, the journal to append to,"
    " the keys and the request log",
    "member": "task memory in every space and the journal to append to; not the keys nor"
    " the request log",
    "reader": "read task memory; write nothing; not the keys nor the request log",
}


def _report(args: argparse.Namespace, done: RoleGrant) -> int:
    """Under --sql the statements (run nothing); else one line saying what the role may do."""
    if args.json:
        print_json(done)
    elif not done.applied:
        for statement in done.statements:
            print(f"{statement};")
        print("clew: nothing was run: run these as the owner of clew's tables", file=sys.stderr)
    elif done.kind is None:
        print(f"role {done.role!r} may no longer reach clew's tables")
    else:
        print(f"role {done.role!r} may now do what a {done.kind} does: {_MAY[done.kind]}")
    return 0


def cmd_grant(args: argparse.Namespace) -> int:
    with open_memory(args) as mem:
        done = mem.grant_role(args.role, args.kind, apply=not args.sql)
    return _report(args, done)


def cmd_revoke(args: argparse.Namespace) -> int:
    with open_memory(args) as mem:
        done = mem.revoke_role(args.role, apply=not args.sql)
    return _report(args, done)


_SAID = {
    "owner": "owns clew's tables: may do anything to them (upgrades run as it)",
    "superuser": "skips row-level security: connect as it only to administer",
    "bypassrls": "skips row-level security: connect as it only to administer",
    **_MAY,
}


def _role_line(found: DatabaseRole) -> str:
    login = "" if found.login else " (cannot log in)"
    said = _SAID.get(found.kind) or (
        f"nearest {found.nearest}, but {' '.join(found.differences)}; make it one with"
        f" `clew db grant {found.role} --as {found.nearest}`"
    )
    return f"{found.role:<20} {found.kind:<9} {said}{login}"


def cmd_roles(args: argparse.Namespace) -> int:
    with open_memory(args) as mem:
        found = mem.database_roles()
    return show_lines(args, found, _role_line, "No role can reach clew's tables.")


def register(commands: Any, command: Commands) -> None:
    """Add `clew db`."""
    from clew.cli.common import Parser

    db_parser = commands.add_parser(
        "db",
        help="PostgreSQL roles: grant a role what a server, member or reader may do",
        description="The database roles of a PostgreSQL store: what each may do to clew's"
        " tables, by PostgreSQL's own privileges and row-level security (docs/team-store.md,"
        " section 2). Run as the owner of clew's tables.",
    )
    db = db_parser.add_subparsers(dest="db_command", metavar="DB_COMMAND", parser_class=Parser)
    db.required = True
    p = command(
        db,
        "grant",
        cmd_grant,
        "give a role exactly what a server, member or reader may do to clew's tables",
        "Give the PostgreSQL role ROLE exactly what --as KIND may do to every table of clew's:"
        " server (clew serve: task memory, the keys and the request log), member (agents:"
        " task memory, never the keys nor the log) or reader (dashboards: read task memory)."
        " It first takes away what the role had, so run it again after an upgrade adds a"
        " table, or with another kind. --sql prints the statements instead of running them.",
    )
    p.add_argument("role", help="the PostgreSQL role (made first with CREATE ROLE)")
    p.add_argument("--as", dest="kind", choices=_KINDS, required=True, help="what the role is for")
    p.add_argument("--sql", action="store_true", help="print the statements, run nothing")
    p = command(
        db,
        "revoke",
        cmd_revoke,
        "take from a role everything it may do to clew's tables",
        "Take from the PostgreSQL role ROLE every right on clew's tables, and its policies."
        " --sql prints the statements instead of running them.",
    )
    p.add_argument("role", help="the PostgreSQL role")
    p.add_argument("--sql", action="store_true", help="print the statements, run nothing")
    command(
        db,
        "roles",
        cmd_roles,
        "list the roles that can reach clew's tables, and what kind each one's rights are",
        "List every PostgreSQL role that can reach clew's tables: the owner, superusers"
        " (row-level security does not hold them), and each role holding a right on a table,"
        " with the kind its rights match (server, member, reader) or, when none does, how"
        " they differ from the nearest.",
    )
