"""What checkpoints cost: making one, checking a file of them, and the header on API answers.

Prints markdown tables; a script, not a timed test:

    python benchmarks/bench_checkpoints.py                  # 100,000 events, SQLite
    python benchmarks/bench_checkpoints.py --quick          # 20,000 events
    python benchmarks/bench_checkpoints.py --store postgresql://root@127.0.0.1:5432/clew_bench_cp

1. On one space of N events: `checkpoint()` counting the whole journal, `checkpoint(since=)`
   counting on from the previous one (what the server does on each answer), and
   `journal_head()` beside them, the floor: one read of the index's end. Samples alternate.
2. Checking: 1 and 1,000 lines spread over the journal, beside `verify()` of the same space,
   which a check rides on (`clew verify --checkpoint` runs both).
3. Over HTTP: the same `task_state` call to two servers of the same store in this process,
   one adding the `Clew-Checkpoint` header and one not, requests alternating; wall time per
   request (p50, p99), and this process's CPU per request over alternating blocks.
"""

from __future__ import annotations

import argparse
import http.client
import json
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import clew
from clew.journal import checkpointfile
from clew.models import ChainHead
from common import alternating_ms, header, pct, table


def fill(mem: clew.Memory, events: int) -> str:
    """A journal of about `events` events: tasks with plans and messages, 500 per commit."""
    task = mem.create_task("bench", ["build", "ship"])
    written = len(mem.journal(newest=True, limit=1))
    store = mem._store  # type: ignore[attr-defined]
    while written < events:
        with store.transaction(write=True):
            for _ in range(min(500, events - written)):
                mem.add_message(task.id, f"note {written}: built the image and pushed it")
                written += 1
    return task.id


def row(name: str, ms: list[float], cpu: float | None = None) -> list[object]:
    shown = f"{cpu:.3f}" if cpu is not None else ""
    return [name, len(ms), f"{pct(ms, 50):.3f}", f"{pct(ms, 99):.3f}", shown]


def making(mem: clew.Memory, runs: int) -> None:
    print("\n## Making a checkpoint\n")
    first = mem.checkpoint()
    full, floor = alternating_ms(lambda i: mem.checkpoint(), lambda i: mem.journal_head(), runs)
    since = {mem.space: first[0]}
    on, floor2 = alternating_ms(
        lambda i: mem.checkpoint(since=since), lambda i: mem.journal_head(), runs
    )
    print(table(["call", "runs", "p50 ms", "p99 ms"], [
        row("checkpoint(): counts the whole journal", full)[:4],
        row("checkpoint(since=previous): counts on", on)[:4],
        row("journal_head(): the floor, one index read", floor + floor2)[:4],
    ]))  # fmt: skip


def checking(mem: clew.Memory, events: int) -> None:
    print("\n## Checking checkpoints\n")
    store = mem._store  # type: ignore[attr-defined]
    heads = store.chain_heads()[mem.space]
    positions = [max(1, heads.events * k // 1000) for k in range(1, 1001)]
    hashes = store.chain_hashes({mem.space: positions})
    at, ident = "2026-11-22T09:00:00Z", checkpointfile.store_id(mem.path)
    made = [
        checkpointfile.make(ident, mem.space, ChainHead(p, "x", hashes[(mem.space, p)]), at)
        for p in positions
    ]
    lines = [checkpointfile.line(c) for c in made]
    rows = []
    for name, given in (("1 line", lines[-1:]), ("1,000 lines", lines)):
        cpu = time.process_time()
        ms = []
        for _ in range(3):
            t0 = time.perf_counter()
            report = mem.check_checkpoints(given)
            ms.append((time.perf_counter() - t0) * 1000)
        assert report.ok and len(report.checks) == len(given)
        spent = (time.process_time() - cpu) / 3 * 1000
        rows.append([f"check {name}", f"{min(ms):.1f}", f"{spent:.1f}"])
    cpu = time.process_time()
    t0 = time.perf_counter()
    assert mem.verify().ok
    wall, spent = (time.perf_counter() - t0) * 1000, (time.process_time() - cpu) * 1000
    rows.append(["verify() of the space (the comparator)", f"{wall:.1f}", f"{spent:.1f}"])
    print(table(["what", "wall ms (best of 3)", "cpu ms"], rows))


def served(mem: clew.Memory, task_id: str, requests: int) -> None:
    import uvicorn

    from clew.server import checkpoints
    from clew.server.app import Server, Spaces, build_app

    print("\n## The header on API answers\n")
    urls = []
    runners = []
    for stamped in (True, False):
        server = Server(Spaces(mem, None), loopback=True, rate=1e6, burst=10**6)
        if not stamped:  # the same app, without the header
            server.checkpoints.headers = lambda app, **_: app  # type: ignore[method-assign]
        app, _ = build_app(server, loopback=True, mcp=False)
        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning",
                                timeout_keep_alive=600)  # fmt: skip
        runner = uvicorn.Server(config)
        threading.Thread(target=runner.run, daemon=True).start()
        while not runner.started:
            time.sleep(0.01)
        urls.append(runner.servers[0].sockets[0].getsockname()[1])
        runners.append(runner)
    conns = [http.client.HTTPConnection("127.0.0.1", port) for port in urls]
    body = json.dumps({"task_id": task_id})

    def call(which: int) -> None:
        conns[which].request("POST", "/api/v1/task_state", body,
                             {"Content-Type": "application/json"})  # fmt: skip
        reply = conns[which].getresponse()
        reply.read()
        has = reply.getheader(checkpoints.HEADER) is not None
        assert reply.status == 200 and has == (which == 0)

    with_ms, without_ms = alternating_ms(lambda i: call(0), lambda i: call(1), requests, warm=20)
    cpu = {0: 0.0, 1: 0.0}
    block = 100
    for i in range(10):
        for which in (i % 2, 1 - i % 2):
            start = time.process_time()
            for _ in range(block):
                call(which)
            cpu[which] += time.process_time() - start
    print(table(["server", "requests", "p50 ms", "p99 ms", "cpu ms a request"], [
        row("with the Clew-Checkpoint header", with_ms, cpu[0] / (5 * block) * 1000),
        row("without it (the comparator)", without_ms, cpu[1] / (5 * block) * 1000),
    ]))  # fmt: skip
    for runner in runners:
        runner.should_exit = True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--store", help="a postgresql:// URL (default: a SQLite file)")
    args = parser.parse_args()
    events = 20_000 if args.quick else 100_000
    runs = 50 if args.quick else 200
    with tempfile.TemporaryDirectory() as folder:
        location = args.store or str(Path(folder) / "bench.db")
        header("clew checkpoints", ("store", "PostgreSQL" if args.store else "SQLite"),
               ("events", f"{events:,}"))  # fmt: skip
        with clew.open(location, space=f"bench-{int(time.time())}") as mem:
            mem.settings = mem.settings._replace(worker="off")
            task_id = fill(mem, events)
            making(mem, runs)
            checking(mem, events)
            served(mem, task_id, runs * 2)


if __name__ == "__main__":
    main()
