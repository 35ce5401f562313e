"""What a server role costs `clew serve` on PostgreSQL: a request's key work as the owner of
clew's tables (no row-level security on the keys and the request log: it owns them) and as a
role granted `clew db grant ROLE --as server` (held by its policy there, `USING (true)`).

Prints markdown tables; it is a script, not a timed test:

    python benchmarks/bench_roles.py            # 1,000 samples
    python benchmarks/bench_roles.py --quick    # smoke run

Needs a PostgreSQL server (default postgresql://root@127.0.0.1:5432/postgres to administer,
$CLEW_BENCH_ADMIN): it (re)creates the database `clew_bench` owned by the ordinary role
`clew_bench` (pg_common.py), and a role `clew_bench_server` granted as a server.

The calls, each side once a step with the order alternating, wall and process CPU ms:
- authenticate: `authenticate(token)` of a key of another space: find the key by its prefix
  (among 200 keys), compare, and mark it used (a write transaction);
- log 50 requests: `log_requests` of 50 lines (what the server writes about once a second);
- list requests: `list_requests(space, limit=50)` (an admin's `GET /api/v1/requests`).
"""

from __future__ import annotations

import argparse

import psycopg

import clew
from clew.core.credentials import RequestLine
from common import alternating_cpu, header, pct, table
from pg_common import ADMIN, analyze, fresh_database, server_facts

SERVER_ROLE = "clew_bench_server"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run")
    quick = parser.parse_args().quick
    runs = 100 if quick else 1000
    owner_url = fresh_database()
    with psycopg.connect(ADMIN, autocommit=True) as admin:
        if admin.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (SERVER_ROLE,)).fetchone():
            admin.execute(f"DROP OWNED BY {SERVER_ROLE}")
        else:
            admin.execute(f"CREATE ROLE {SERVER_ROLE} LOGIN")
    server_url = owner_url.replace("clew_bench@", f"{SERVER_ROLE}@", 1)
    with clew.open(owner_url, space="home") as owner:
        owner.grant_role(SERVER_ROLE, "server")
        tokens = [owner.create_key(f"s{i}", "write").token for i in range(200)]
        owner.log_requests(
            [RequestLine("s0", None, "GET", "/", 200, "2026-11-22T09:00:00Z", 1.0)] * 5000
        )
    analyze(owner_url)
    header("A server role against the owner: a request's key work", *server_facts(owner_url))
    sides = {
        "owner": clew.open(owner_url, space="home"),
        "server": clew.open(server_url, space="home"),
    }
    line = RequestLine("s0", tokens[0].split("_")[1], "POST", "/api/v1/task_list", 200, "", 1.0)

    def authenticate(mem: clew.Memory) -> object:
        return lambda i: mem.authenticate(tokens[i % len(tokens)])

    def log(mem: clew.Memory) -> object:
        return lambda i: mem.log_requests(
            [line._replace(created_at=f"2026-11-22T09:{i % 60:02}:00Z")] * 50
        )

    def listed(mem: clew.Memory) -> object:
        return lambda i: mem.list_requests("s0", limit=50)

    rows = []
    for name, make in (
        ("authenticate", authenticate),
        ("log 50 requests", log),
        ("list requests", listed),
    ):
        wall, cpu = alternating_cpu([make(m) for m in sides.values()], runs, warm=runs // 10)  # type: ignore[list-item]
        for role, w, c in zip(sides, wall, cpu, strict=True):
            rows.append(
                [name, role, f"{pct(w, 50):.3f}", f"{pct(w, 95):.3f}", f"{sum(c) / len(c):.3f}"]
            )
    for mem in sides.values():
        mem.close()
    print(table(["call", "as", "p50 ms", "p95 ms", "client CPU ms"], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
