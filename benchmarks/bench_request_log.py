"""What the server's spilled request log costs: on a request's path, and once a second.

Prints markdown tables; it is a script, not a timed test:

    python benchmarks/bench_request_log.py
    python benchmarks/bench_request_log.py --store postgresql://root@127.0.0.1:5432/clew_bench_log

On the request's path, `RequestLog.note` (the line as JSON, one write() to the spill file under
a lock) against the floor it replaced: appending the line to a list in memory (what the server
did before it spilled, losing up to a second of answered requests to a SIGKILL). Batches of
1,000 lines, taking turns at going first; wall and CPU time per line.

Once a second, off the request's path: `RequestLog.fold` of 1,000 spilled lines (rotate the
file, read and parse it, insert the lines keeping each id once, remove the file) against the
floor of writing the same 1,000 lines from memory with `log_requests` (the old flush), on the
same store.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import clew
from clew.core.clock import stamp, utcnow
from clew.core.credentials import RequestLine
from clew.server.requestlog import RequestLog
from common import header, table


def line(n: int) -> RequestLine:
    return RequestLine(
        "bench", "0123456789ab", "POST", f"/api/v1/task_update/{n % 7}", 200, stamp(utcnow()), 1.5
    )


def per_line(batches: int, size: int, log: RequestLog) -> list[list[object]]:
    """Microseconds per line of note() and of the floor, wall and CPU, alternating."""
    kept: list[RequestLine] = []
    spent = {"note": [0.0, 0.0], "floor": [0.0, 0.0]}
    lines = [line(n) for n in range(size)]

    def note() -> None:
        for one in lines:
            log.note(one)

    def floor() -> None:
        for one in lines:
            kept.append(one)

    for i in range(batches):
        pair = [("note", note), ("floor", floor)]
        for name, fn in pair if i % 2 else pair[::-1]:
            w0, c0 = time.perf_counter(), time.process_time()
            fn()
            spent[name][0] += time.perf_counter() - w0
            spent[name][1] += time.process_time() - c0
        kept.clear()
        log.fold()  # keeps the spill file small, as the server's flusher does
    total = batches * size
    rows: list[list[object]] = []
    for name, label in (("note", "spill: note() (JSON + write)"), ("floor", "floor: list.append")):
        wall, cpu = spent[name]
        rows.append([label, total, f"{wall / total * 1e6:.2f}", f"{cpu / total * 1e6:.2f}"])
    return rows


def folds(rounds: int, size: int, home: clew.Memory, log: RequestLog) -> list[list[object]]:
    """Milliseconds per 1,000 lines of fold() and of log_requests from memory, alternating."""
    spent = {"fold": [0.0, 0.0], "floor": [0.0, 0.0]}

    def fold() -> None:
        for n in range(size):
            log.note(line(n))
        w0, c0 = time.perf_counter(), time.process_time()
        assert log.fold() == size
        spent["fold"][0] += time.perf_counter() - w0
        spent["fold"][1] += time.process_time() - c0

    def floor() -> None:
        lines = [line(n) for n in range(size)]
        w0, c0 = time.perf_counter(), time.process_time()
        home.log_requests(lines)
        spent["floor"][0] += time.perf_counter() - w0
        spent["floor"][1] += time.process_time() - c0

    for i in range(rounds):
        pair = [fold, floor]
        for fn in pair if i % 2 else pair[::-1]:
            fn()
    rows: list[list[object]] = []
    for name, label in (
        ("fold", "fold(): read, parse, insert once"),
        ("floor", "floor: log_requests"),
    ):
        wall, cpu = spent[name]
        per = rounds * size / 1000
        rows.append([label, rounds * size, f"{wall / per * 1e3:.1f}", f"{cpu / per * 1e3:.1f}"])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--store", help="a postgresql:// URL (default: a SQLite file)")
    parser.add_argument("--batches", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-request-log-"))
    store = args.store or str(folder / "clew.db")
    with clew.open(store, space="bench") as home:
        log = RequestLog(home, str(folder / "spill"))
        log.open()
        try:
            notes = per_line(args.batches, 1000, log)
            folded = folds(args.rounds, 1000, home, log)
        finally:
            log.close()
    kind = "PostgreSQL" if args.store else "SQLite"
    header("The request log's spill file", ("store", kind), ("spill folder", folder / "spill"))
    print("\n## On the request's path\n")
    print(table(["per line", "lines", "µs wall", "µs CPU"], notes))
    print("\n## Once a second, off the request's path\n")
    print(table(["per 1,000 lines", "lines", "ms wall", "ms CPU"], folded))


if __name__ == "__main__":
    main()
