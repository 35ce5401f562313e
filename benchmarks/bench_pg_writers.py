"""Many processes writing at once into one PostgreSQL store, several spaces, nothing lost.

Prints markdown tables; it is a script, not a timed test:

    python benchmarks/bench_pg_writers.py            # 400 writes per process
    python benchmarks/bench_pg_writers.py --quick    # smoke run, under 20 s

Needs a PostgreSQL server (see bench_backends.py); it (re)creates its own database
`clew_bench_writers`, owned by an ordinary role, so row-level security is in force.

Every writer process runs the same script of mixed writes through the public API: a new task
(with a plan) every 20 writes, `update_task` with a message and a step status,
`record_action` with ~1.5 KB of output, `append_turn`. Each write is timed; a write is
acknowledged when its call returns. The runs:

- PostgreSQL, 8 processes, 4 spaces (2 writers per space);
- PostgreSQL, 8 processes, 1 space (all 8 take turns at that space's lock);
- PostgreSQL, 1 process (no concurrency: the baseline);
- SQLite, 8 processes on one file, 4 spaces (one writer at a time for the whole file);
- SQLite, 1 process.

Then nothing may be lost: each space holds exactly the events its writers' scripts make
(the 1-process run counts what one script makes), every task, action and turn id a call
returned is in the store, and `verify` of each space (its hash chain, and a replay of its
journal compared with every projection row) is OK.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import random
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import clew
from common import header, pct, table
from pg_common import analyze, fresh_database, server_facts

WORDS = (
    "deploy",
    "cache",
    "token",
    "image",
    "nginx",
    "timeout",
    "retry",
    "docker",
    "worker",
    "queue",
    "auth",
    "session",
    "report",
    "ingest",
    "billing",
    "refund",
)
STEPS = 6


@dataclass
class Done:
    """What one writer process reports: its latencies and the ids its calls returned."""

    space: str
    ms: list[float]
    failed: int
    tasks: list[str]
    actions: list[str]
    turns: list[str]


def text(rng: random.Random, chars: int) -> str:
    out: list[str] = []
    while sum(map(len, out)) < chars:
        out.append(" ".join(rng.choice(WORDS) for _ in range(10)) + f" {rng.randrange(10**6)}\n")
    return "".join(out)


def writer(store: str, space: str, writes: int, start: Any, results: Any) -> None:
    """One process: open the store, make its session and first task, wait for the start,
    then `writes` mixed writes, each timed."""
    os.environ["CLEW_WORKER"] = "off"
    rng = random.Random(3)  # every writer writes the same script
    outputs = [text(rng, 1500) for _ in range(16)]
    mem = clew.open(store, space=space, busy_timeout=60, mirror=False)
    task = mem.create_task("writer", [f"step {k}" for k in range(1, STEPS + 1)]).id
    session = mem.start_session(title="writer").id
    done = Done(space, [], 0, [task], [], [])
    start.wait()
    for i in range(writes):
        t0 = time.perf_counter()
        try:
            kind = i % 4
            if i % 20 == 19:
                task = mem.create_task(f"writer {i}", [f"step {k}" for k in range(1, STEPS + 1)]).id
                done.tasks.append(task)
            elif kind == 0:
                step = i // 4 % STEPS + 1
                mem.update_task(
                    task,
                    message=f"step {step}: {outputs[i % 16][:200]}",
                    step=step,
                    step_status=("active", "completed")[i // 4 % 2],
                )
            elif kind == 1:
                out = outputs[i % 16]
                action = mem.record_action(
                    task, command="make test", exit_code=i % 2, stdout=out, stderr=out[:200]
                )
                done.actions.append(action.id)
            elif kind == 2:
                turn = mem.append_turn(session, role="assistant", content=outputs[i % 16][:400])
                done.turns.append(turn.id)
            else:
                mem.update_task(task, message=f"checked {rng.choice(WORDS)}")
        except clew.errors.ClewError as exc:  # not acknowledged: counted, never hidden
            done.failed += 1
            print(f"{space}: {exc}", file=sys.stderr)
            continue
        done.ms.append((time.perf_counter() - t0) * 1000)
    mem.close()
    results.put(done)


@dataclass
class Run:
    name: str
    store: str
    processes: int
    spaces: int


def run(config: Run, writes: int, tag: str) -> tuple[float, list[Done]]:
    """Start the writers, release them together, wait for all; the seconds it took."""
    ctx = mp.get_context("fork")
    start = ctx.Barrier(config.processes + 1)
    results = ctx.Queue()
    spaces = [f"{tag}-{n}" for n in range(config.spaces)]
    procs = [
        ctx.Process(
            target=writer, args=(config.store, spaces[n % config.spaces], writes, start, results)
        )
        for n in range(config.processes)
    ]
    for p in procs:
        p.start()
    start.wait()
    t0 = time.perf_counter()
    done = [results.get() for _ in procs]
    seconds = time.perf_counter() - t0
    for p in procs:
        p.join()
    return seconds, done


def check(store: str, done: list[Done], per_script: int | None) -> tuple[str, int]:
    """Nothing lost: events per space, every returned id present, verify OK. Returns the
    verdict and the events of one writer's script (as counted when `per_script` is None)."""
    problems: list[str] = []
    by_space: dict[str, list[Done]] = {}
    for d in done:
        by_space.setdefault(d.space, []).append(d)
    found_script = per_script
    for space, writers in sorted(by_space.items()):
        with clew.open(store, space=space, mirror=False) as mem:
            events = len(mem.journal())
            if found_script is None:
                found_script = events // len(writers)
            if any(d.failed for d in writers):
                problems.append(f"{space}: {sum(d.failed for d in writers)} writes refused")
            elif events != found_script * len(writers):
                problems.append(f"{space}: {events} events, {found_script * len(writers)} made")
            missing = _missing(mem, writers)
            if missing:
                problems.append(f"{space}: {missing} acknowledged records missing")
            report = mem.verify()
            if not report.ok:
                kinds = sorted({f"{d.table}.{d.column}" for d in report.differences})
                problems.append(
                    f"{space}: verify found {len(report.differences)} differences"
                    f" ({', '.join(kinds)})"
                )
    return ("OK" if not problems else "; ".join(problems)), found_script or 0


def _missing(mem: clew.Memory, writers: list[Done]) -> int:
    missing = 0
    for d in writers:
        for tid in d.tasks:
            shown = mem.get_task(tid)
            missing += shown.id != tid
        found = {a.id for tid in d.tasks for a in mem.list_actions(tid)}
        missing += sum(a not in found for a in d.actions)
    turns = {t.id for s in mem.list_sessions() for t in mem.list_turns(s.id)}
    missing += sum(t not in turns for d in writers for t in d.turns)
    return missing


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run, under 20 s")
    parser.add_argument("--writes", type=int, help="timed writes per process (400)")
    args = parser.parse_args()
    writes = args.writes or (15 if args.quick else 400)
    url = fresh_database("clew_bench_writers")
    header(
        "Concurrent writers: one PostgreSQL store, several spaces, nothing lost",
        ("timed writes per process", writes),
        ("writes", "a task every 20; else update (message + step status), action, turn"),
        *server_facts(url),
    )
    rows: list[list[object]] = []
    with tempfile.TemporaryDirectory() as folder:
        sqlite = str(Path(folder) / "clew.db")
        clew.open(sqlite, mirror=False).close()
        per_script: int | None = None
        runs = [
            Run("postgresql, 1 process", url, 1, 1),
            Run("postgresql, 8 processes, 4 spaces", url, 8, 4),
            Run("postgresql, 8 processes, 1 space", url, 8, 1),
            Run("sqlite, 1 process", sqlite, 1, 1),
            Run("sqlite, 8 processes, 4 spaces (one file)", sqlite, 8, 4),
        ]
        for n, config in enumerate(runs):
            if config.store == url:
                analyze(url)  # what autovacuum would have done by now (off on this machine)
            seconds, done = run(config, writes, f"run{n}")
            verdict, per_script = check(config.store, done, per_script)
            ms = [m for d in done for m in d.ms]
            total = len(ms)
            rows.append(
                [
                    config.name,
                    f"{total:,}",
                    f"{total / seconds:,.0f}",
                    f"{total / seconds / config.processes:,.0f}",
                    f"{statistics.median(ms):.1f}",
                    f"{pct(ms, 95):.1f}",
                    f"{max(ms):.0f}",
                    verdict,
                ]
            )
            print(f"{config.name}: {seconds:.1f} s, {verdict}", file=sys.stderr)
    print(f"\n## Writes acknowledged, throughput and latency ({per_script} events a script)\n")
    print(
        table(
            [
                "run",
                "writes",
                "writes/s",
                "per process",
                "p50 ms",
                "p95 ms",
                "max ms",
                "nothing lost",
            ],
            rows,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
