"""Benchmark the agent tool surface: the hook path, and tools over MCP.

Prints markdown tables; a script, not a timed test:

    python benchmarks/bench_agent.py           # about a minute
    python benchmarks/bench_agent.py --quick   # a smoke run

The store: the layer-1 benchmark's task (200 steps, 1,000 decisions, 500 errors...) in a
project folder, as an assistant would find it.

Hook: `clew prime --hook` as a coding assistant's session-start / after-compaction hook runs
it: a new process, the hook's JSON event on stdin, the store found from the event's `cwd`.
Next to it, `python -c pass` (the interpreter alone) and a floor process that imports only
`sqlite3` and reads the task's rows.

MCP: `clew mcp` over stdio with the SDK's own client: from spawning the server to the first
tool result, then tool calls over the open session, next to the same registry call made
in-process (`tools.call`), which is what the protocol and the process hop add to.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence

import clew
from bench_state import seed
from clew.tools import registry as tools
from common import header, pct, table

FLOOR = (
    "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]);"
    " c.execute('SELECT * FROM tasks WHERE status = \\'active\\'').fetchall();"
    " c.execute('SELECT * FROM plan_items WHERE task_id = ?', (sys.argv[2],)).fetchall();"
    " c.execute('SELECT * FROM entries WHERE task_id = ? ORDER BY created_at DESC LIMIT 60',"
    " (sys.argv[2],)).fetchall()"
)


def process_ms(command: list[str], runs: int, cwd: str, stdin: str = "") -> list[float]:
    times = []
    for _ in range(runs + 2):  # two warm-up runs fill the OS and clew caches
        t0 = time.perf_counter()
        subprocess.run(command, cwd=cwd, input=stdin.encode(), check=True, capture_output=True)
        times.append((time.perf_counter() - t0) * 1000)
    return times[2:]


async def mcp_session(db: str, workspace: str, task_id: str, runs: int) -> dict[str, list[float]]:
    from mcp import Client, StdioServerParameters

    env = {k: os.environ[k] for k in ("PATH", "HOME", "XDG_CACHE_HOME") if k in os.environ}
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "clew", "--db", db, "mcp"], env=env, cwd=workspace
    )
    out: dict[str, list[float]] = {"first": [], "task_state": [], "task_update": []}
    t0 = time.perf_counter()
    async with Client(params, mode="legacy") as client:
        await client.call_tool("task_state", {"task_id": task_id})
        out["first"].append((time.perf_counter() - t0) * 1000)
        for n in range(runs):
            for name, arguments in (
                ("task_state", {"task_id": task_id}),
                ("task_update", {"task_id": task_id, "message": f"progress {n}"}),
            ):
                t1 = time.perf_counter()
                result = await client.call_tool(name, arguments)
                out[name].append((time.perf_counter() - t1) * 1000)
                assert not result.is_error
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20, help="runs per measurement")
    parser.add_argument("--quick", action="store_true", help="few runs")
    args = parser.parse_args(argv)
    runs = 3 if args.quick else args.runs
    header("clew agent surface benchmark")
    with tempfile.TemporaryDirectory(prefix="clew-bench-agent-") as tmp:
        workspace = os.path.join(tmp, "project")
        os.makedirs(os.path.join(workspace, ".clew"))
        db = os.path.join(workspace, ".clew", "clew.db")
        os.environ["XDG_CACHE_HOME"] = os.path.join(tmp, "cache")
        with clew.open(db) as mem:
            task_id = seed(mem, workspace)
        elsewhere = os.path.join(tmp, "elsewhere")
        os.makedirs(elsewhere)
        event = json.dumps({"hook_event_name": "SessionStart", "source": "compact",
                            "cwd": workspace, "session_id": "s1"})  # fmt: skip
        rows = []
        for label, command, stdin, cwd in (
            ("`python -c pass`", [sys.executable, "-c", "pass"], "", workspace),
            ("floor: python + sqlite3 reading the task",
             [sys.executable, "-c", FLOOR, db, task_id], "", workspace),
            ("`clew prime --hook` (event on stdin, run from elsewhere)",
             [sys.executable, "-m", "clew", "prime", "--hook"], event, elsewhere),
            ("`clew prime` (in the project)",
             [sys.executable, "-m", "clew", "prime"], "", workspace),
        ):  # fmt: skip
            times = process_ms(command, runs, cwd, stdin)
            rows.append([label, f"{statistics.median(times):.0f}", f"{max(times):.0f}"])
        print(f"\n## The hook path: whole processes ({runs} runs; ms); aim: <= 150 ms\n")
        print(table(["command", "median", "max"], rows))

        measured = asyncio.run(mcp_session(db, workspace, task_id, runs * 5))
        with clew.open(db) as mem:
            direct: dict[str, list[float]] = {"task_state": [], "task_update": []}
            for n in range(runs * 5):
                for name, arguments in (
                    ("task_state", {"task_id": task_id}),
                    ("task_update", {"task_id": task_id, "message": f"direct {n}"}),
                ):
                    t0 = time.perf_counter()
                    tools.call(mem, name, arguments)
                    direct[name].append((time.perf_counter() - t0) * 1000)
        rows = [["spawn `clew mcp`, initialize, first task_state", f"{measured['first'][0]:.0f}",
                 "", ""]]  # fmt: skip
        for name in ("task_state", "task_update"):
            over, local = measured[name], direct[name]
            rows.append([f"{name} over MCP (stdio)", f"{pct(over, 50):.1f}",
                         f"{pct(over, 95):.1f}", f"{pct(local, 50):.1f}"])  # fmt: skip
        print(f"\n## Tools over MCP ({runs * 5} calls each; ms)\n")
        print(table(["what", "p50", "p95", "in-process p50"], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
