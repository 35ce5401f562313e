"""The same workloads on a SQLite store and a PostgreSQL (team) store, side by side.

Prints markdown tables; it is a script, not a timed test:

    python benchmarks/bench_backends.py            # 3,000 records, 500 samples, 50 searches
    python benchmarks/bench_backends.py --quick    # smoke run, under 20 s

Needs a PostgreSQL server (default postgresql://root@127.0.0.1:5432/postgres to administer,
$CLEW_BENCH_ADMIN): the script (re)creates its own database `clew_bench`, owned by an
ordinary role, so row-level security is in force as on a team store.

Both stores get the same corpus (tasks with plans, messages, commands with ~1.5 KB of output,
decisions, conversation turns; one rare word in a handful of records, one common word in most)
and then the same calls, taking turns sample by sample (the order rotates) so that machine
noise, and the other engineers' test suites on this machine, hit all sides alike:

- task update: `update_task(task, message=..., step=k, step_status=...)`
- record action: `record_action(task, command=..., exit_code=..., stdout=~1.5 KB, stderr=...)`
- append turn: `append_turn(session, role=..., content=...)`
- search rare / common: `search_all(word)` over every kind of record
- where / state: `where(task)`, `state(task)` of a task with a history

Durability is not the same by default, and the tables say so: SQLite runs WAL with
synchronous=NORMAL (a commit does not wait for fsync; a power cut may lose the last
commits, never the store's consistency), PostgreSQL's default synchronous_commit=on waits
for the WAL flush at every commit. So the writes also run on PostgreSQL with
synchronous_commit=off for the session (a crash of the server may lose the last commits,
never consistency): the comparison at equal durability. After the corpus is written the
script runs ANALYZE on the PostgreSQL tables, as autovacuum would on a server at its defaults
(this machine's server runs with autovacuum off; without statistics a filled table is planned
as if empty).

For each call: p50 and p95 wall ms; the client's CPU ms (process time of this Python
process: for SQLite that includes the engine, which runs in-process); the server's CPU ms
per call (utime + stime of the PostgreSQL backend processes serving this client, from
/proc/<pid>/stat, found by application_name in pg_stat_activity; clock ticks, so a total
over all samples divided by their count); statements per call (SQLite: the connection's
trace callback; PostgreSQL: a wrapper around psycopg's cursor counting what is sent, with
round trips beside it, since the store's BEGIN carries its lock and settings in one).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import clew
from clew.errors import StoreError
from common import header, pct, table
from pg_common import (
    TICK_MS,
    ServerCpu,
    Statements,
    analyze,
    fresh_database,
    server_facts,
    with_options,
)

RARE = "kestrelgrid"  # in a handful of records
COMMON = "build"  # in most records
WORDS = ("deploy", "cache", "token", "image", "nginx", "timeout", "retry", "docker", "worker",
         "queue", "auth", "session", "report", "ingest", "billing", "refund")  # fmt: skip
STEPS = 12


def text(rng: random.Random, chars: int, common: bool = True) -> str:
    """Log-like text of about `chars` characters."""
    out: list[str] = []
    size = 0
    while size < chars:
        words = [rng.choice(WORDS) for _ in range(9)]
        if common and rng.random() < 0.7:
            words[rng.randrange(9)] = COMMON
        line = " ".join(words) + f" src/app/{rng.choice(WORDS)}.py:{rng.randrange(900)}\n"
        out.append(line)
        size += len(line)
    return "".join(out)


@dataclass
class Side:
    """One backend under test: its Memory, live task and session, and what was measured."""

    name: str
    mem: clew.Memory
    count: Callable[[], int]  # statements sent so far
    trips: Callable[[], int]  # round trips so far
    cpu: ServerCpu | None = None
    writes_only: bool = False
    task: str = ""
    session: str = ""
    wall: dict[str, list[float]] = field(default_factory=dict)
    client: dict[str, float] = field(default_factory=dict)
    server: dict[str, int] = field(default_factory=dict)
    sent: dict[str, int] = field(default_factory=dict)
    sent_trips: dict[str, int] = field(default_factory=dict)


def fill(mem: clew.Memory, records: int, rng: random.Random) -> tuple[str, str]:
    """Write the corpus: about `records` messages, commands, decisions and turns over several
    tasks and sessions. Returns the live task and session the samples use."""
    tasks = [mem.create_task(f"service {n}", [f"step {k}" for k in range(STEPS)]).id
             for n in range(8)]  # fmt: skip
    sessions = [mem.start_session(title=f"chat {n}").id for n in range(4)]
    rare_at = set(rng.sample(range(records), 5))
    for i in range(records):
        tid = tasks[i % len(tasks)]
        body = text(rng, 300)
        if i in rare_at:
            body += f" {RARE} timeout\n"
        kind = i % 4
        if kind == 0:
            mem.update_task(tid, message=body[:400], step=i % STEPS + 1, step_status="active")
        elif kind == 1:
            mem.record_action(tid, command=f"make {rng.choice(WORDS)}", exit_code=i % 3,
                              stdout=body + text(rng, 1200), stderr=body[:200])  # fmt: skip
        elif kind == 2:
            mem.add_decision(tid, body[:160], detail=body[:400])
        else:
            mem.append_turn(sessions[i % len(sessions)], role=rng.choice(("user", "assistant")),
                            content=body)  # fmt: skip
    return tasks[0], sessions[0]


def calls(side: Side, rng: random.Random) -> dict[str, Callable[[int], object]]:
    mem, tid, sid = side.mem, side.task, side.session
    outputs = [text(random.Random(n), 1500) for n in range(32)]
    statuses = ("active", "completed")
    return {
        "task update": lambda i: mem.update_task(
            tid,
            message=f"step {i % STEPS + 1}: {outputs[i % 32][:160]}",
            step=i % STEPS + 1,
            step_status=statuses[i % 2],
        ),
        "record action": lambda i: mem.record_action(
            tid,
            command="pytest -q tests/test_auth.py",
            exit_code=i % 2,
            stdout=outputs[i % 32],
            stderr=outputs[(i + 1) % 32][:200],
        ),
        "append turn": lambda i: mem.append_turn(
            sid, role=("user", "assistant")[i % 2], content=outputs[i % 32][:600]
        ),
        "search rare": lambda i: mem.search_all(RARE),
        "search common": lambda i: mem.search_all(COMMON),
        "where": lambda i: mem.where(tid),
        "state": lambda i: mem.state(tid),
    }


WRITES = ("task update", "record action", "append turn")


def measure(sides: list[Side], samples: int, searches: int, warm: int, rng: random.Random) -> None:
    """Run every call on every side, rotating which side goes first, sample by sample."""
    plans = {s.name: calls(s, rng) for s in sides}
    for name in plans[sides[0].name]:
        # Reads on PostgreSQL with synchronous_commit=off are the same reads: skip them.
        racing = [s for s in sides if name in WRITES or not s.writes_only]
        racing = [s for s in racing if _available(s, plans[s.name][name])]
        count = searches if name.startswith("search") else samples
        for side in racing:
            side.wall[name] = []
            side.client[name] = side.server[name] = side.sent[name] = side.sent_trips[name] = 0
            if side.cpu is not None:
                side.cpu.refresh()
        for i in range(warm + count):
            shift = i % len(racing)
            for side in racing[shift:] + racing[:shift]:
                fn = plans[side.name][name]
                before = (side.count(), side.trips(), side.cpu.ticks() if side.cpu else 0)
                c0 = time.process_time()
                t0 = time.perf_counter()
                fn(i)
                wall = (time.perf_counter() - t0) * 1000
                cpu = (time.process_time() - c0) * 1000
                if i < warm:
                    continue
                side.wall[name].append(wall)
                side.client[name] += cpu
                side.sent[name] += side.count() - before[0]
                side.sent_trips[name] += side.trips() - before[1]
                if side.cpu is not None:
                    side.server[name] += side.cpu.ticks() - before[2]


def _available(side: Side, fn: Callable[[int], object]) -> bool:
    """Whether this build of clew can do the call on this backend (a build whose
    PostgreSQL store does not search yet says so instead of failing the run)."""
    try:
        fn(0)
    except StoreError as exc:
        print(f"{side.name}: {exc}", file=sys.stderr)
        return False
    return True


def report(sides: list[Side]) -> None:
    rows: list[list[object]] = []
    for name in sides[0].wall:
        for side in sides:
            if name not in side.wall:
                continue
            ms = side.wall[name]
            samples = len(ms)
            server = f"{side.server[name] * TICK_MS / samples:.2f}" if side.cpu else ""
            trips = f"{side.sent_trips[name] / samples:g}" if side.cpu else ""
            rows.append([
                name, side.name, f"{statistics.median(ms):.2f}", f"{pct(ms, 95):.2f}",
                f"{side.client[name] / samples:.2f}", server,
                f"{side.sent[name] / samples:g}", trips,
            ])  # fmt: skip
    print("\n## Per call: wall ms (p50, p95), CPU ms per call, statements per call\n")
    print(
        table(
            [
                "call",
                "backend",
                "p50",
                "p95",
                "client CPU",
                "server CPU",
                "statements",
                "round trips",
            ],
            rows,
        )
    )


def open_sqlite(folder: str) -> Side:
    mem = clew.open(Path(folder) / "clew.db", space="bench", mirror=False)
    counted = [0]
    conn = mem._store._conn  # type: ignore[attr-defined]
    conn.set_trace_callback(lambda s: counted.__setitem__(0, counted[0] + (s[:2] != "--")))
    return Side("sqlite (WAL, synchronous=NORMAL)", mem, lambda: counted[0], lambda: counted[0])


def open_postgres(url: str, counter: Statements, sync: str) -> Side:
    application = f"clew-bench-sync-{sync}"
    settings = {} if sync == "on" else {"synchronous_commit": "off"}
    mem = clew.open(with_options(url, application, **settings), space="bench", mirror=False)
    return Side(
        f"postgresql (synchronous_commit={sync})",
        mem,
        lambda: counter.statements,
        lambda: counter.round_trips,
        cpu=ServerCpu(url, application),
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run, under 20 s")
    parser.add_argument("--records", type=int, help="records in the corpus (3000)")
    parser.add_argument("--samples", type=int, help="measured calls per call and side (500)")
    parser.add_argument("--searches", type=int, help="measured searches per word and side (50)")
    args = parser.parse_args()
    records = args.records or (300 if args.quick else 3000)
    samples = args.samples or (30 if args.quick else 500)
    searches = args.searches or (5 if args.quick else 50)
    warm = 3 if args.quick else 20
    os.environ["CLEW_WORKER"] = "off"  # no background extraction competing with the samples
    url = fresh_database()
    header(
        "Backends: the same calls on SQLite and PostgreSQL",
        ("records in the corpus", f"{records:,}"),
        ("samples per call and side", f"{samples} ({searches} per search)"),
        *server_facts(url),
    )
    rng = random.Random(7)
    counter = Statements()
    with tempfile.TemporaryDirectory() as folder, counter.installed():
        sides = [open_sqlite(folder), open_postgres(url, counter, "on")]
        off = open_postgres(url, counter, "off")  # the same space as "on": writes only
        for side in sides:
            t0 = time.perf_counter()
            side.task, side.session = fill(side.mem, records, random.Random(11))
            print(f"filled {side.name} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        analyze(url)  # what autovacuum would have done by now (it is off on this machine)
        off.task, off.session, off.writes_only = sides[1].task, sides[1].session, True
        sides.append(off)
        counter.counting = True
        measure(sides, samples, searches, warm, rng)
        counter.counting = False
        report(sides)
        for side in sides:
            verified = side.mem.verify()
            print(f"\nverify {side.name}: {'OK' if verified.ok else verified}", end="")
            side.mem.close()
            if side.cpu is not None:
                side.cpu.close()
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
