"""The dashboard's pages against the API calls that read the same records, on one server.

Prints markdown tables; it is a script, not a timed test:

    python benchmarks/bench_dashboard.py            # 200 samples each
    python benchmarks/bench_dashboard.py --quick    # 40 samples

A SQLite store holds a busy task (6 steps, 300 commands with 1-3 KB of output, 150 entries,
a replan, 200 messages: about 1,000 journal events) and 30 small tasks. One `clew serve` app
runs in this process under uvicorn on 127.0.0.1; one keep-alive connection asks, taking turns
(the order rotating each sample):

- `GET /tasks/<id>` (the task page: task, state, 200 commands, entries, waits, journal,
  history, rendered), against `task_state` and `task_history` through the API (what an agent
  reads of the same task: the comparator);
- `GET /` (the task list) against the API's `task_list`.

Wall and process CPU milliseconds (client and server are one process), p50 and p90. Then the
live updates' poll: `Memory.journal_head` against the same statement on a raw sqlite3
connection (the floor).
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import socket
import sqlite3
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import clew
from clew.server.app import Server, Spaces, build_app
from common import alternating_cpu, header, pct, table


def fill(mem: clew.Memory, rng: random.Random) -> str:
    """The busy task and the small ones; the busy task's id."""
    steps = [f"step {n}" for n in range(1, 7)]
    task = mem.create_task("Deploy coursefolio", goal="ship it", plan=steps)
    for n in range(300):
        out = "\n".join(
            f"line {i} of output {rng.random():.6f}" for i in range(rng.randint(40, 100))
        )
        mem.record_action(
            task.id, command=f"make target-{n}", exit_code=int(n % 7 == 0), stdout=out
        )
    for n in range(150):
        kind = ("decision", "error", "constraint", "discovery")[n % 4]
        mem.add_entry(kind, f"{kind} number {n} about the cache", task_id=task.id)
    for n in range(200):
        mem.update_task(task.id, message=f"progress note {n}")
    mem.replan(task.id, [clew.AddStep("verify")], reason="forgot to verify")
    for n in range(30):
        mem.create_task(f"small task {n}", plan=["a", "b", "c"])
    return task.id


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    runs = 40 if args.quick else 200
    import uvicorn

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "clew.db"
        mem = clew.open(path, space="team")
        task_id = fill(mem, random.Random(7))
        key = mem.create_key("team", "read", name="bench").token
        server = Server(Spaces(mem, None), loopback=True, rate=1e6, burst=10**6)
        app, _ = build_app(server)
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
        runner = uvicorn.Server(config)
        thread = threading.Thread(target=runner.run, daemon=True)
        thread.start()
        while not runner.started:
            time.sleep(0.02)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        auth = {"Authorization": f"Bearer {key}"}

        def get(path: str) -> None:
            conn.request("GET", path, headers=auth)
            reply = conn.getresponse()
            assert reply.status == 200, reply.status
            reply.read()

        def api(name: str, body: dict[str, object]) -> None:
            conn.request("POST", f"/api/v1/{name}", body=json.dumps(body), headers=auth)
            reply = conn.getresponse()
            assert reply.status == 200, reply.status
            reply.read()

        events = len(mem.journal(task_id=task_id))
        header(
            "clew serve: the dashboard's pages against the API",
            ("busy task's events", events),
            ("samples", runs),
        )
        sides = {
            "GET /tasks/<id> (page)": lambda i: get(f"/tasks/{task_id}"),
            "task_state (API)": lambda i: api("task_state", {"task_id": task_id}),
            "task_history (API)": lambda i: api("task_history", {"task_id": task_id}),
            "GET / (page)": lambda i: get("/"),
            "task_list (API)": lambda i: api("task_list", {"all": True}),
        }
        wall, cpu = alternating_cpu(list(sides.values()), runs, warm=5)
        rows = [
            [name, f"{pct(w, 50):.2f}", f"{pct(w, 90):.2f}", f"{pct(c, 50):.2f}"]
            for name, w, c in zip(sides, wall, cpu, strict=True)
        ]
        print()
        print(table(["request", "wall p50 ms", "wall p90 ms", "cpu p50 ms"], rows))

        raw = sqlite3.connect(path)
        statement = "SELECT coalesce(max(seq), 0) FROM events WHERE space = ?"
        polls = {
            "Memory.journal_head": lambda i: mem.journal_head(),
            "raw sqlite3, same statement": lambda i: raw.execute(statement, ("team",)).fetchone(),
        }
        wall, cpu = alternating_cpu(list(polls.values()), runs * 10, warm=20)
        print()
        rows = [
            [name, f"{pct(w, 50) * 1000:.1f}", f"{pct(w, 90) * 1000:.1f}"]
            for name, w in zip(polls, wall, strict=True)
        ]
        print(table(["the live updates' poll", "p50 µs", "p90 µs"], rows))
        raw.close()
        conn.close()
        runner.should_exit = True
        thread.join(timeout=10)
        mem.close()


if __name__ == "__main__":
    main()
