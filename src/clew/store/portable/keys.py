"""The HTTP server's keys and request log (migration 17), on both backends.

Server administration, outside the journal and across spaces: a key is found by its prefix
before any space is known, and an admin lists and revokes the keys of every space. So these
reads are not held to the store's space, and the writes (each in the caller's write
transaction) are not journaled; `contract.KeyStore` says why.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from clew.core.credentials import ApiKey, RequestLine
from clew.store.rows import RowReader, limited
from clew.store.sql import Row, param

_KEY_COLUMNS = "prefix, space, scope, name, created_at, last_used_at, revoked_at"


def _key(row: Row) -> ApiKey:
    return ApiKey(*tuple(row))


class KeyStore(RowReader):
    """The server's keys and request log: a part both stores hold (their `_keys`)."""

    def put_key(self, key: ApiKey, hash: str) -> None:
        conn, _ = self._writer()
        conn.execute(
            f"INSERT INTO clew_keys ({_KEY_COLUMNS}, hash) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            (*key, hash),
        )

    def find_key(self, prefix: str) -> tuple[ApiKey, str] | None:
        rows = self._rows(
            f"SELECT {_KEY_COLUMNS}, hash FROM clew_keys WHERE prefix = $1", (prefix,)
        )
        if not rows:
            return None
        values = tuple(rows[0])
        return ApiKey(*values[:-1]), str(values[-1])

    def list_keys(self, space: str | None = None) -> list[ApiKey]:
        sql = f"SELECT {_KEY_COLUMNS} FROM clew_keys"
        params: list[Any] = []
        if space is not None:
            sql += f" WHERE space = {param(params, space)}"
        return [_key(r) for r in self._rows(f"{sql} ORDER BY created_at, prefix", params)]

    def any_key(self) -> bool:
        return bool(self._rows("SELECT 1 FROM clew_keys WHERE revoked_at IS NULL LIMIT 1"))

    def revoke_key(self, prefix: str, at: str) -> None:
        conn, _ = self._writer()
        conn.execute(
            "UPDATE clew_keys SET revoked_at = $1 WHERE prefix = $2 AND revoked_at IS NULL",
            (at, prefix),
        )

    def touch_key(self, prefix: str, at: str) -> None:
        conn, _ = self._writer()
        conn.execute("UPDATE clew_keys SET last_used_at = $1 WHERE prefix = $2", (at, prefix))

    def log_requests(self, lines: Sequence[RequestLine]) -> None:
        conn, _ = self._writer()
        # A spill file folded twice (a crash between the commit and its removal) brings
        # lines whose ids are here already: kept once (migration 24's index).
        conn.executemany(
            "INSERT INTO clew_requests (space, key_prefix, method, route, status, created_at,"
            " ms, line_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
            " ON CONFLICT (space, line_id) DO NOTHING",
            [tuple(line) for line in lines],
        )

    def list_requests(
        self, space: str | None = None, *, limit: int | None = 100
    ) -> list[RequestLine]:
        sql = (
            "SELECT space, key_prefix, method, route, status, created_at, ms, line_id"
            " FROM clew_requests"
        )
        params: list[Any] = []
        if space is not None:
            sql += f" WHERE space = {param(params, space)}"
        sql += " ORDER BY seq DESC"
        rows = self._rows(*limited(sql, params, limit))
        return [
            RequestLine(r[0], r[1], r[2], r[3], int(r[4]), r[5], float(r[6]), r[7]) for r in rows
        ]

    def prune_requests(self, before: str) -> int:
        conn, _ = self._writer()
        found = conn.execute("DELETE FROM clew_requests WHERE created_at < $1", (before,))
        return int(found.rowcount)
