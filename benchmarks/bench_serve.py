"""`clew serve` under load: N concurrent clients, mixed reads and writes, nothing lost.

Prints markdown tables; it is a script, not a timed test:

    python benchmarks/bench_serve.py                 # 16 clients, 20 s each run
    python benchmarks/bench_serve.py --quick         # 8 clients, 4 s: a smoke run
    python benchmarks/bench_serve.py --store postgresql://root@127.0.0.1:5432/clew_bench_serve

The server is a real `clew serve` process on 127.0.0.1 (a free port), with a write key per
client space; each client is a thread with its own keep-alive connection, doing in a loop
(seeded, the same mix every run): 30% task_update with a message, 10% task_record, 10%
session_append, 25% task_state, 15% task_list, 10% memory_search. Every request is timed from
send to last byte; the table gives each route's count, throughput, p50 and p99, and the
server process's CPU seconds beside the wall time.

The comparator, in the same run: the same clients and mix calling the same tool handlers
in-process (`tools.call` on one Memory per space, threads, no HTTP), so the difference is what
HTTP, keys, the rate limit and the request log cost.

Then nothing may be lost: each client's task holds exactly the messages and entries whose
calls were answered 200, each session exactly its appended turns, and `verify` passes on every
space.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import clew
from clew.errors import ClewError
from clew.tools import registry as tools
from common import header, pct, table

MIX = (
    ("task_update", 30), ("task_record", 10), ("session_append", 10),
    ("task_state", 25), ("task_list", 15), ("memory_search", 10),
)  # fmt: skip
WORDS = [
    "deploy",
    "build",
    "image",
    "registry",
    "cache",
    "timeout",
    "retry",
    "schema",
    "index",
    "migrate",
    "token",
]


def body(name: str, task_id: str, session: str, rng: random.Random, n: int) -> dict[str, Any]:
    words = " ".join(rng.choice(WORDS) for _ in range(12))
    if name == "task_update":
        return {"task_id": task_id, "message": f"step note {n}: {words}"}
    if name == "task_record":
        return {"task_id": task_id, "finding": f"finding {n}: {words}"}
    if name == "session_append":
        return {"session": session, "messages": [{"role": "user", "content": words}]}
    if name == "task_state":
        return {"task_id": task_id}
    if name == "task_list":
        return {"all": True}
    return {"query": rng.choice(WORDS)}


class Tally:
    def __init__(self) -> None:
        self.ms: dict[str, list[float]] = defaultdict(list)
        self.ok: dict[tuple[int, str], int] = defaultdict(int)  # (client, route) -> 200s
        self.failed: list[str] = []
        self.busy = 0  # refused as busy (503, StoreBusyError): nothing written, said so
        self.lock = threading.Lock()

    def add(self, client: int, name: str, ms: float, good: bool, why: str = "") -> None:
        with self.lock:
            self.ms[name].append(ms)
            if good:
                self.ok[(client, name)] += 1
            elif "is busy" in why:
                self.busy += 1
            else:
                self.failed.append(f"{name}: {why[:200]}")


def choose(rng: random.Random) -> str:
    return rng.choices([n for n, _ in MIX], [w for _, w in MIX])[0]


def over_http(port: int, token: str, client: int, ids: tuple[str, str], seconds: float,
              tally: Tally) -> None:  # fmt: skip
    rng = random.Random(client)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    end, n = time.monotonic() + seconds, 0
    while time.monotonic() < end:
        name = choose(rng)
        payload = json.dumps(body(name, *ids, rng, n)).encode()
        t0 = time.perf_counter()
        conn.request("POST", f"/api/v1/{name}", payload, headers)
        response = conn.getresponse()
        data = response.read()
        ms = (time.perf_counter() - t0) * 1000
        tally.add(client, name, ms, response.status == 200, data.decode(errors="replace"))
        n += 1
    conn.close()


def in_process(mem: clew.Memory, client: int, ids: tuple[str, str], seconds: float,
               tally: Tally) -> None:  # fmt: skip
    rng = random.Random(client)
    end, n = time.monotonic() + seconds, 0
    while time.monotonic() < end:
        name = choose(rng)
        args = body(name, *ids, rng, n)
        t0 = time.perf_counter()
        try:
            if name == "session_append":
                mem.append_turns(ids[1], args["messages"])
                good, why = True, ""
            else:
                result = tools.call(mem, name, args)
                good, why = not result.is_error, result.text
        except ClewError as exc:  # a busy store: refused, as the server's 503 is counted
            good, why = False, str(exc)
        tally.add(client, name, (time.perf_counter() - t0) * 1000, good, why)
        n += 1


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def set_up(store: str, spaces: list[str]) -> dict[str, tuple[str, str, str]]:
    """A task and a session per client space, and a write key of it."""
    made = {}
    for space in spaces:
        with clew.open(store, space=space) as mem:
            task = mem.create_task(f"load {space}", ["one", "two"])
            session = mem.start_session(key=f"chat-{space}")
            token = mem.create_key(space, "write").token
            made[space] = (task.id, session.id, token)
    return made


def check(store: str, made: dict[str, tuple[str, str, str]], tally: Tally, base: int) -> str:
    """Nothing lost: every answered write is in the store; verify passes."""
    for client, (space, (task_id, session_id, _)) in enumerate(made.items()):
        with clew.open(store, space=space) as mem:
            messages = mem._store.count_messages(task_id)
            entries = len(mem.list_entries(task_id, type="discovery"))
            turns = len(mem.list_turns(session_id))
            want = tally.ok[(client, "task_update")]
            assert messages == want, (space, messages, want)
            assert entries == tally.ok[(client, "task_record")], (space, entries)
            assert turns == tally.ok[(client, "session_append")], (space, turns)
            report = mem.verify()
            assert report.ok, report
    return "every answered write found; verify ok on every space"


def rows(tally: Tally, seconds: float) -> list[list[object]]:
    out = []
    for name, _ in MIX:
        ms = tally.ms[name]
        if len(ms) < 2:
            continue
        out.append([name, len(ms), f"{len(ms) / seconds:.0f}", f"{pct(ms, 50):.1f}",
                    f"{pct(ms, 99):.1f}"])  # fmt: skip
    every = [m for v in tally.ms.values() for m in v]
    out.append(["all", len(every), f"{len(every) / seconds:.0f}", f"{pct(every, 50):.1f}",
                f"{pct(every, 99):.1f}"])  # fmt: skip
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--store", help="a postgresql:// URL (default: a SQLite file)")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.clients, args.seconds = 8, 4.0
    folder = Path(tempfile.mkdtemp(prefix="bench-serve-"))
    results = []
    for run in ("http", "in-process"):
        if args.store:
            import psycopg

            name = f"clew_bench_serve_{run.replace('-', '_')}"
            root = args.store.rsplit("/", 1)[0]
            with psycopg.connect(f"{root}/postgres", autocommit=True) as admin:
                admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
                admin.execute(f"CREATE DATABASE {name}")
            store = f"{root}/{name}"
        else:
            store = str(folder / f"{run}.db")
        spaces = [f"s{i}" for i in range(args.clients)]
        made = set_up(store, spaces)
        tally = Tally()
        threads: list[threading.Thread] = []
        if run == "http":
            port = free_port()
            env = {**os.environ, "CLEW_WORKER": "off", "CLEW_MAINTENANCE": "off"}
            server = subprocess.Popen(
                [sys.executable, "-m", "clew", "--db", store, "--space", "s0", "serve",
                 "--port", str(port), "--rate", "100000", "--burst", "100000"],
                env=env, stderr=subprocess.PIPE, text=True,
            )  # fmt: skip
            assert server.stderr is not None
            server.stderr.readline()  # "clew: serving ..." once it listens
            cpu0 = cpu_seconds(server.pid)
            for i, (_, (task_id, session_id, token)) in enumerate(made.items()):
                threads.append(threading.Thread(
                    target=over_http, args=(port, token, i, (task_id, session_id),
                                            args.seconds, tally)))  # fmt: skip
        else:
            mems = {s: clew.open(store, space=s) for s in spaces}
            for i, (space, (task_id, session_id, _)) in enumerate(made.items()):
                threads.append(threading.Thread(
                    target=in_process, args=(mems[space], i, (task_id, session_id),
                                             args.seconds, tally)))  # fmt: skip
        t0, c0 = time.perf_counter(), time.process_time()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - t0
        if run == "http":
            cpu = cpu_seconds(server.pid) - cpu0
            server.terminate()
            server.wait(timeout=30)
        else:
            cpu = time.process_time() - c0
            for mem in mems.values():
                mem.close()
        assert not tally.failed, tally.failed[:5]
        verdict = check(store, made, tally, 0)
        results.append((run, tally, wall, cpu, verdict))

    kind = "PostgreSQL" if args.store else "SQLite"
    header(
        f"clew serve under load ({kind})",
        ("clients", args.clients), ("seconds a run", args.seconds),
        ("store", kind),
    )  # fmt: skip
    for run, tally, wall, cpu, verdict in results:
        where = "server process" if run == "http" else "this process"
        print(f"\n## {run}: {wall:.1f} s wall, {cpu:.1f} s CPU of the {where}\n")
        print(table(["route", "requests", "per s", "p50 ms", "p99 ms"], rows(tally, wall)))
        print(f"\n{verdict}; {tally.busy} requests refused as busy (nothing written)")


if __name__ == "__main__":
    main()
