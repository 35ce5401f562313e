"""Benchmark forgetting (docs/architecture.md, "Forgetting") on the design's workload.

Prints markdown tables; a script, not a timed test:

    python benchmarks/bench_forget.py                        # migration at 100k and 1M events
    python benchmarks/bench_forget.py --sizes 100000         # one size
    python benchmarks/bench_forget.py --quick                # smoke run

The hash: CPU microseconds per event of chaining one workload turn event with version 2 of
the hash (`chain.data_digest` of its data, then `chain.event_hash` over that digest: what
every write does since migration 21) and with version 1 (`chain.event_hash_v1` over the data
itself: what it did before), alternating batches of 1,000 events.

The upgrade: migration 21 re-chains every event of a store (one pass in seq order, a new
hash written into every row). Timed opening a store of N workload events at schema 19
(`clew.open` migrates it), next to the floor measured on the same file just before: raw
stdlib sqlite3 in one transaction reading every event's data and writing one new value into
every row's hash column, which any re-chain must at least do. One sample per side (the
upgrade happens once), wall and CPU time, and the write-ahead log the migration leaves.

A forget: on a store of N imported workload turns, `forget("turn", id)` of an early turn
(it reads every later turn of the session: their state changes may carry it), `forget(
pattern=RARE)` (every event of the space read and decoded), next to the floor of the
pattern forget: raw sqlite3 reading every event's data and `json.loads` of each.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import clew
from clew.core import chain
from common import alternating_cpu, header, pct, table
from workload import RARE, messages, stream

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/old_stores
from tests.old_stores import undo_migration_21

_BATCH = 1000


def hash_cost(samples: int) -> None:
    """Per-event CPU of the two versions of the hash, on workload turn events."""
    work = [
        json.dumps({"session_id": "s", "turn": {"number": n, "message": m}}, ensure_ascii=False)
        for n, m in enumerate(messages(_BATCH))
    ]
    fields = {"id": "abcdefghij", "space": "default", "task_id": None, "correlation_id": "c"}

    def v2(_: int) -> None:
        previous = ""
        for text in work:
            previous = chain.event_hash(
                previous, **fields, type="turn.appended", digest=chain.data_digest(text),
                created_at="2026-11-28T00:00:00.000000Z",
            )  # fmt: skip

    def v1(_: int) -> None:
        previous = ""
        for text in work:
            previous = chain.event_hash_v1(
                previous, **fields, type="turn.appended", data=text,
                created_at="2026-11-28T00:00:00.000000Z",
            )  # fmt: skip

    _, cpu = alternating_cpu([v2, v1], samples, warm=2)
    rows = [
        [name, f"{pct(ms, 50) * 1000 / _BATCH:.2f}", f"{pct(ms, 90) * 1000 / _BATCH:.2f}"]
        for name, ms in (("version 2 (digest, then link)", cpu[0]), ("version 1 (data)", cpu[1]))
    ]
    size = sum(len(t.encode()) for t in work) / len(work)
    print(f"## The hash, per event ({size:,.0f} bytes of data on average, {samples} batches)\n")
    print(table(["side", "CPU µs p50", "CPU µs p90"], rows) + "\n")


def _schema_19_store(path: str, size: int) -> None:
    """A store of `size` workload turn events at schema 19 (chained with version 1)."""
    clew.open(path).close()
    conn = sqlite3.connect(path, isolation_level=None)
    undo_migration_21(conn)
    conn.execute("BEGIN")
    previous = ""
    rows = []
    for n, message in enumerate(stream(size)):
        text = json.dumps({"session_id": "s", "turn": {"number": n, "message": message}},
                          ensure_ascii=False, separators=(",", ":"))  # fmt: skip
        eid = f"{n:010d}"
        previous = chain.event_hash_v1(
            previous, id=eid, space="default", task_id=None, correlation_id=eid,
            type="turn.appended", data=text, created_at="2026-11-28T00:00:00.000000Z",
        )  # fmt: skip
        rows.append((eid, eid, text, previous))
        if len(rows) == 5000:
            _insert(conn, rows)
    _insert(conn, rows)
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def _insert(conn: sqlite3.Connection, rows: list[tuple[str, str, str, str]]) -> None:
    conn.executemany(
        "INSERT INTO events (id, space, task_id, correlation_id, type, data, created_at, hash)"
        " VALUES (?, 'default', NULL, ?, 'turn.appended', ?, '2026-11-28T00:00:00.000000Z', ?)",
        rows,
    )
    rows.clear()


def _timed(fn: object) -> tuple[float, float]:
    c0, t0 = time.process_time(), time.perf_counter()
    fn()  # type: ignore[operator]
    return time.perf_counter() - t0, time.process_time() - c0


def _floor(path: str) -> None:
    """What any re-chain must at least do: read every event, write every row's hash (in
    one transaction, rolled back: the store stays at schema 19 for the migration)."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("DROP TRIGGER events_no_update")
    seq = 0
    while batch := conn.execute(
        "SELECT seq, data FROM events WHERE seq > ? ORDER BY seq LIMIT 5000", (seq,)
    ).fetchall():
        conn.executemany(
            "UPDATE events SET hash = ? WHERE seq = ?", [(f"{s:064x}", s) for s, _ in batch]
        )
        seq = batch[-1][0]
    conn.execute("ROLLBACK")
    conn.close()


def _upgrade(path: str, size: int) -> list[list[object]]:
    _schema_19_store(path, size)
    megabytes = os.path.getsize(path) / 1e6
    wall_f, cpu_f = _timed(lambda: _floor(path))
    opened: list[clew.Memory] = []
    wall_m, cpu_m = _timed(lambda: opened.append(clew.open(path)))
    wal = os.path.getsize(f"{path}-wal") / 1e6  # until a checkpoint (the last close)
    opened[0].close()
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(f"{path}{suffix}"):
            os.unlink(f"{path}{suffix}")
    return [
        [f"{size:,}", f"{megabytes:,.0f}", "migration 21", f"{wall_m:.1f}", f"{cpu_m:.1f}",
         f"{wal:,.0f}"],
        [f"{size:,}", f"{megabytes:,.0f}", "floor: read all, write every hash", f"{wall_f:.1f}",
         f"{cpu_f:.1f}", "-"],
    ]  # fmt: skip


def migration_cost(sizes: Sequence[int], folder: str) -> None:
    rows = []
    for size in sizes:
        rows += _upgrade(os.path.join(folder, f"upgrade-{size}.db"), size)
    print("## The upgrade: migration 21 re-chains every event\n")
    print(table(["events", "MB", "side", "wall s", "CPU s", "WAL MB after"], rows) + "\n")


def forget_cost(size: int, folder: str) -> None:
    path = os.path.join(folder, "forget.db")
    with clew.open(path) as mem:
        session = mem.import_session(list(messages(size)))
        turn = mem.list_turns(session.id, first=10, last=10)[0].id
        conn = sqlite3.connect(path)

        def floor() -> None:
            for (data,) in conn.execute("SELECT data FROM events"):
                json.loads(data)

        sides = [
            ("forget('turn', an early turn)", lambda: mem.forget("turn", turn)),
            (f"forget(pattern={RARE!r})", lambda: mem.forget(pattern=RARE)),
            ("floor: read and decode every event", floor),
        ]
        rows = []
        for name, fn in sides:
            wall, cpu = _timed(fn)
            rows.append([name, f"{wall:.2f}", f"{cpu:.2f}"])
        conn.close()
        assert mem.verify().ok
    print(f"## A forget, on a store of {size:,} turns\n")
    print(table(["side", "wall s", "CPU s"], rows) + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", help="events for the upgrade, comma-separated")
    parser.add_argument("--forget-size", type=int, default=20_000, help="turns for a forget")
    parser.add_argument("--samples", type=int, default=30, help="batches of the hash")
    parser.add_argument("--quick", action="store_true", help="small sizes, few samples")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else [100_000, 1_000_000]
    if args.quick:
        sizes, args.samples, args.forget_size = [5_000], 5, 2_000
    header("Forgetting", ("upgrade sizes", ", ".join(f"{s:,}" for s in sizes)))
    hash_cost(args.samples)
    folder = tempfile.mkdtemp(prefix="clew-bench-forget-")
    try:
        migration_cost(sizes, folder)
        forget_cost(args.forget_size, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
