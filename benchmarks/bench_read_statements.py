"""Where `where` and `state` spend their time over their raw reads: the connection or clew.

On a store kept by `bench_tracker.py --keep DIR` (its live tasks, and its oldest task), each
read is captured once as the statements it runs (with their parameters, and as SQLite's trace
gives them with the values in: what bench_tracker's floor replays), then timed, alternating
sample by sample, as:

- `clew`: the call itself (`mem.where(task)` / `mem.state(task)`);
- `clew's connection, params`: the same statements with their parameters on clew's own
  connection (its settings, `sqlite3.Row`), in one read transaction, fetching every row;
- `raw, params`: the same on a fresh `sqlite3` connection (default settings, tuples);
- `raw, literal (floor)`: the traced statements on the raw connection, as bench_tracker does.

If the connection cost anything (a hook, a pragma, the row factory, the statement cache), the
second row would stand above the third. A last table times `task_head`'s statement (every
`where` and `state`) on the newest and the oldest task, as SQLite plans it with `space = ?`
and with `+space = ?`.

    python benchmarks/bench_read_statements.py --store DIR/project-10000/.clew/clew.db
"""

from __future__ import annotations

import argparse
import functools
import gc
import sqlite3
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import clew
from bench_tracker import LIVE_TASKS, SPACE
from common import table

Statement = tuple[str, Sequence[Any]]


class _Recorder:
    """Stands in for the store's connection while one call runs: notes each statement."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.seen: list[Statement] = []

    def execute(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Cursor:
        self.seen.append((sql, params))
        return self.conn.execute(sql, params)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.conn, name)


def capture(mem: clew.Memory, call: Callable[[], object]) -> tuple[list[Statement], list[str]]:
    """The statements one call runs: with their parameters, and as SQLite's trace has them."""
    store: Any = mem._store
    conn: sqlite3.Connection = store._conn
    recorder, traced = _Recorder(conn), list[str]()
    store._conn = recorder
    conn.set_trace_callback(traced.append)
    try:
        call()
    finally:
        store._conn = conn
        conn.set_trace_callback(None)
    skip = ("BEGIN", "COMMIT")
    params = [(q, p) for q, p in recorder.seen if q not in skip]
    literal = [q for q in traced if not q.startswith("--") and q not in skip]
    return params, literal


def replay(conn: sqlite3.Connection, statements: Sequence[Statement]) -> None:
    conn.execute("BEGIN")
    for sql, params in statements:
        conn.execute(sql, params).fetchall()
    conn.execute("COMMIT")


def sample(fn: Callable[[], object]) -> tuple[float, float]:
    wall, cpu = time.perf_counter_ns(), time.process_time_ns()
    fn()
    return (time.perf_counter_ns() - wall) / 1e3, (time.process_time_ns() - cpu) / 1e3


def measure(
    sides: dict[str, Callable[[int], object]], samples: int, warmup: int
) -> dict[str, tuple[list[float], list[float]]]:
    """Each side once per sample, the order rotating; (wall µs, CPU µs) lists per side."""
    out: dict[str, tuple[list[float], list[float]]] = {s: ([], []) for s in sides}
    names = list(sides)
    gc.collect()
    for i in range(warmup + samples):
        shift = i % len(names)
        for name in names[shift:] + names[:shift]:
            wall, cpu = sample(functools.partial(sides[name], i))
            if i >= warmup:
                out[name][0].append(wall)
                out[name][1].append(cpu)
    return out


def read_sides(
    mem: clew.Memory, raw: sqlite3.Connection, name: str, tasks: Sequence[str]
) -> tuple[dict[str, Callable[[int], object]], int]:
    """The four ways of running `name` (a read of Memory) on the tasks in turn."""
    method = getattr(mem, name)
    store: Any = mem._store
    caps = [capture(mem, functools.partial(method, t)) for t in tasks]
    n = len(tasks)

    def call(i: int) -> object:
        return method(tasks[i % n])

    def on_clew(i: int) -> None:
        replay(store._conn, caps[i % n][0])

    def on_raw(i: int) -> None:
        replay(raw, caps[i % n][0])

    def floor(i: int) -> None:
        replay(raw, [(q, ()) for q in caps[i % n][1]])

    sides: dict[str, Callable[[int], object]] = {
        "clew": call,
        "clew's connection, params": on_clew,
        "raw, params": on_raw,
        "raw, literal (floor)": floor,
    }
    return sides, len(caps[0][0])


def head_side(raw: sqlite3.Connection, sql: str, task: str) -> Callable[[int], object]:
    return lambda i: raw.execute(sql, (task, SPACE)).fetchall()


def rows_of(
    label: str, got: dict[str, tuple[list[float], list[float]]], floor: str
) -> list[list[str]]:
    base = statistics.fmean(got[floor][1])
    rows = []
    for side, (wall, cpu) in got.items():
        q = statistics.quantiles(cpu, n=100)
        rows.append(
            [label, side, f"{statistics.median(cpu):.0f}", f"{q[98]:.0f}",
             f"{statistics.median(wall):.0f}", f"{statistics.fmean(cpu) / base:.2f}x"]
        )  # fmt: skip
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--store", required=True, help="PROJECT/.clew/clew.db kept by bench_tracker"
    )
    parser.add_argument("--samples", type=int, default=500, help="samples per side")
    args = parser.parse_args(argv)
    warmup = max(10, args.samples // 10)
    mem = clew.open(args.store, space=SPACE)
    raw = sqlite3.connect(args.store, isolation_level=None, check_same_thread=False)
    by_name = {t.name: t.id for t in mem.list_tasks("active")}
    tasks = [by_name[f"Live task {k}"] for k in range(LIVE_TASKS)]
    headers = ["read", "side", "CPU p50 µs", "CPU p99 µs", "wall p50 µs", "CPU vs floor"]
    rows: list[list[str]] = []
    for name in ("where", "state"):
        sides, count = read_sides(mem, raw, name, tasks)
        got = measure(sides, args.samples, warmup)
        rows += rows_of(f"`{name}` ({count} statements)", got, "raw, literal (floor)")
    print(f"# `where` and `state` against their statements on {args.store}\n")
    print(f"{args.samples} samples per side, alternating; CPU time of this process\n")
    print(table(headers, rows))

    oldest, newest = (
        raw.execute(
            "SELECT task_id FROM events WHERE task_id IS NOT NULL AND space = ?"
            f" GROUP BY task_id ORDER BY max(seq) {order} LIMIT 1",
            (SPACE,),
        ).fetchone()[0]
        for order in ("", "DESC")
    )
    head = "SELECT max(seq) FROM events WHERE task_id = ? AND {}space = ?"
    heads = {
        f"{which}, `{plus}space`": head_side(raw, head.format(plus), task)
        for which, task in (("newest task", newest), ("oldest task", oldest))
        for plus in ("", "+")
    }
    got = measure(heads, args.samples, warmup)
    plans = {
        plus: raw.execute("EXPLAIN QUERY PLAN " + head.format(plus), (oldest, SPACE)).fetchone()[3]
        for plus in ("", "+")
    }
    print(f"\n# task_head's statement: `space = ?` ({plans['']}) against `+space = ?` "
          f"({plans['+']}), raw connection\n")  # fmt: skip
    rows = []
    for side, (wall, cpu) in got.items():
        rows.append([side, f"{statistics.median(cpu):.1f}", f"{statistics.median(wall):.1f}"])
    print(table(["task, form", "CPU p50 µs", "wall p50 µs"], rows))
    print(f"\nevents in the store: {raw.execute('SELECT count(*) FROM events').fetchone()[0]:,}")
    mem.close()
    raw.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
