"""Database roles of a PostgreSQL store, on the Memory facade (`clew db`).

What each kind of role may do to each table is store/postgres/roles.py's; here the arguments are
checked and the store asked. Roles belong to the database, not to a space: any Memory of the
store administers them, and only a connection as the owner of clew's tables (or a superuser)
may change them.
"""

from __future__ import annotations

from clew.kernel import Service
from clew.models import DatabaseRole, RoleGrant


class Roles(Service):
    """Database roles: grant, revoke, list (a service of Memory)."""

    def grant_role(self, role: str, kind: str, *, apply: bool = True) -> RoleGrant:
        """Give database role `role` exactly what a `kind` (server, member or reader) may do
        to every table of clew's, revoking what it had first; apply=False only makes the
        statements. PostgreSQL stores only."""
        from clew.store.postgres.roles import kind_name, role_name  # not on the hook path

        name, wanted = role_name(role), kind_name(kind)
        made = self._store.grant_role(name, wanted, apply=apply)
        return RoleGrant(name, wanted, tuple(made), apply)

    def revoke_role(self, role: str, *, apply: bool = True) -> RoleGrant:
        """Take from database role `role` everything it may do to clew's tables; apply=False
        only makes the statements. PostgreSQL stores only."""
        from clew.store.postgres.roles import role_name

        name = role_name(role)
        made = self._store.grant_role(name, None, apply=apply)
        return RoleGrant(name, None, tuple(made), apply)

    def database_roles(self) -> list[DatabaseRole]:
        """Every database role that can reach the store's tables, with the kind its rights
        match (owner, superuser, bypassrls, server, member, reader, other). PostgreSQL only."""
        return self._store.database_roles()
