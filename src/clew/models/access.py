"""PostgreSQL's roles as clew sees them: what granting or revoking a role does, and
the kind each role's rights match.

Like every module of clew.models, this one does without `from __future__ import
annotations`: NamedTuple compiles each field's annotation that is a string, and the hook
path imports every record (see the package's docstring).
"""

from typing import NamedTuple


class RoleGrant(NamedTuple):
    """What `grant_role` or `revoke_role` does to a PostgreSQL role: the statements, in
    order, and whether they were run (`applied`) or only made."""

    role: str
    kind: str | None  # server, member or reader; None when everything was taken away
    statements: tuple[str, ...]
    applied: bool


class DatabaseRole(NamedTuple):
    """A PostgreSQL role that can reach a store's tables, and the kind its rights match:
    owner, superuser or bypassrls (row-level security holds neither), server, member,
    reader, or other (then `differences` says how it differs from the `nearest` kind:
    '+RIGHT table' held beyond it, '-RIGHT table' lacking)."""

    role: str
    kind: str
    login: bool
    nearest: str | None = None
    differences: tuple[str, ...] = ()
