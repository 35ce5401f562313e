"""Benchmark the conversation archive on the design's workload (benchmarks/workload.py).

Prints markdown tables; a script, not a timed test:

    python benchmarks/bench_conversations.py                  # 100k and 1M turns
    python benchmarks/bench_conversations.py --sizes 100000   # one size
    python benchmarks/bench_conversations.py --quick          # smoke run

Append: `Memory.append_turn(session, message)`, durable and searchable when it returns,
alternating with the floor: raw stdlib sqlite3 on clew's schema writing the same event JSON,
the turn row (FTS5 kept by clew's trigger) and the session's counters, one transaction per
turn. Both sides append the same message at each step. For reference, the Agents SDK's own
`SQLiteSession.add_items([item])` (no search) appends the same messages, as shipped (WAL,
synchronous=FULL: an fsync every commit) and at clew's durability (WAL, synchronous=NORMAL:
fsyncs at checkpoints); every row says its durability, read from its connection.

Recall: `Memory.recall(session, "search", query=...)` (safe parsing, bm25 over the newest
5,000 matches, exact matches first, each hit with its neighbours, formatted within 8,000
tokens) next to the floor: the plain FTS5 query `MATCH ? ORDER BY rank LIMIT 10`.

Context: `assemble_context` of the seeded session (its newest turns up to the budget), the
first time in a process (every turn counted by the tokenizer) and again (counts remembered).
Resume: `Memory.resume`, and the `clew session resume` command as a new process.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import clew
from clew.ids import new_id
from clew.turns import parse
from common import alternating_ms, header, pct, table, timed_ms
from workload import PHRASE, RARE, TRACEBACK, messages

BATCH = 2000


def seed(mem: clew.Memory, total: int) -> tuple[str, float]:
    """A session of `total` workload turns, appended through the API in batches."""
    session = mem.start_session(workspace="/bench", model="bench")
    t0 = time.perf_counter()
    all_messages = messages(total)
    for start in range(0, total, BATCH):
        mem.append_turns(session.id, all_messages[start : start + BATCH])
        if (start // BATCH) % 50 == 49:
            print(f"[bench] seeded {start + BATCH:,} turns", file=sys.stderr, flush=True)
    return session.id, time.perf_counter() - t0


class Floor:
    """Raw sqlite3 writing what append_turn writes, on clew's schema."""

    def __init__(self, path: str, session_id: str) -> None:
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.execute("PRAGMA synchronous = NORMAL")
        self.session_id = session_id
        self.number = 10**9

    def append(self, message: dict[str, Any]) -> None:
        at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        self.number += 1
        parts = parse(message)
        content = message.get("content") if isinstance(message.get("content"), str) else None
        stored = json.dumps({**message, "content": None} if content is not None else message)
        turn = {"id": new_id(), "number": self.number, "message": message, "token_count": 1}
        c = self.conn
        c.execute("BEGIN IMMEDIATE")
        c.execute(
            "INSERT INTO events (id, space, task_id, correlation_id, type, data, created_at)"
            " VALUES (?, 'default', NULL, ?, 'turn.appended', ?, ?)",
            (new_id(), new_id(), json.dumps({"session_id": self.session_id, "turn": turn}), at),
        )
        c.execute(
            "INSERT INTO turns (id, space, session_id, turn, role, content, text_content,"
            " tool_calls, tool_call_id, message, token_count, created_at)"
            " VALUES (?, 'default', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (turn["id"], self.session_id, self.number, parts.role, parts.text,
             int(content is not None),
             json.dumps([list(x) for x in parts.tool_calls]) if parts.tool_calls else None,
             parts.tool_call_id, stored, 1, at),
        )  # fmt: skip
        c.execute(
            "UPDATE sessions SET turn_count = turn_count + 1, total_tokens = total_tokens + 1,"
            " last_active_at = ? WHERE id = ?",
            (at, self.session_id),
        )
        c.execute("COMMIT")


_SYNCHRONOUS = {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}


def durability(conn: sqlite3.Connection) -> str:
    """What a connection's commits survive, read from it: journal mode and synchronous."""
    mode = str(conn.execute("PRAGMA journal_mode").fetchone()[0]).upper()
    sync = _SYNCHRONOUS.get(conn.execute("PRAGMA synchronous").fetchone()[0], "?")
    fsync = {"FULL": "fsync every commit", "EXTRA": "fsync every commit",
             "NORMAL": "fsync at checkpoints" if mode == "WAL" else "fsync every commit",
             "OFF": "no fsync"}.get(sync, "?")  # fmt: skip
    return f"{mode}, synchronous={sync} ({fsync})"


def measure_append(tmp: str, samples: int) -> list[list[object]]:
    """clew and the floor append the same message, turn by turn, taking turns at going
    first; the Agents SDK then appends the same messages in the same order, as shipped and
    at clew's durability."""
    path = os.path.join(tmp, "append.db")
    warm = samples // 10
    work = messages(samples + warm, seed=11)
    with clew.open(path) as mem:
        clew_session = mem.start_session()
        floor = Floor(path, mem.start_session().id)
        clew_ms, floor_ms = alternating_ms(
            lambda i: mem.append_turn(clew_session.id, work[i]),
            lambda i: floor.append(work[i]),
            samples,
            warm,
        )
        clew_durability = durability(mem._store._conn)  # type: ignore[attr-defined]
        floor_durability = durability(floor.conn)
        floor.conn.close()
    sdk_ms, sdk_durability = measure_sdk(tmp, work, warm, "sdk-shipped.db", synchronous=None)
    sdk_same_ms, sdk_same_durability = measure_sdk(
        tmp, work, warm, "sdk-normal.db", synchronous="NORMAL"
    )
    sides = (
        ("clew append_turn", clew_ms, clew_durability),
        ("floor: raw sqlite3 + FTS5, same rows and event", floor_ms, floor_durability),
        ("Agents SDK SQLiteSession.add_items, as shipped (no search)", sdk_ms, sdk_durability),
        ("Agents SDK SQLiteSession.add_items, at clew's durability", sdk_same_ms,
         sdk_same_durability),
    )  # fmt: skip
    rate = {label: 1e3 / statistics.fmean(values) for label, values, _ in sides}
    clew_rate = rate["clew append_turn"]
    rows: list[list[object]] = []
    for label, values, durable in sides:
        ratio = "" if label.startswith("clew") else f"{clew_rate / rate[label]:.2f}"
        rows.append([label, durable, f"{pct(values, 50) * 1000:.0f}",
                     f"{pct(values, 99) * 1000:.0f}", f"{rate[label]:,.0f}", ratio])  # fmt: skip
    return rows


def measure_sdk(
    tmp: str, work: list[dict[str, Any]], warm: int, name: str, *, synchronous: str | None
) -> tuple[list[float], str]:
    """The Agents SDK's SQLiteSession appending the same messages one by one (ms), and its
    connections' durability; `synchronous` overrides the setting it ships with."""
    from agents import SQLiteSession

    class Session(SQLiteSession):
        @staticmethod
        def _configure_connection(conn: sqlite3.Connection) -> None:
            SQLiteSession._configure_connection(conn)  # WAL, as shipped
            if synchronous is not None:
                conn.execute(f"PRAGMA synchronous = {synchronous}")

    session = Session("bench", os.path.join(tmp, name))

    async def run() -> list[float]:
        out = []
        for message in work:
            t0 = time.perf_counter()
            await session.add_items([message])  # type: ignore[list-item]
            out.append((time.perf_counter() - t0) * 1000)
        return out[warm:]

    try:
        times = asyncio.run(run())
        # A connection configured as the writes' were (they ran on a worker thread's own).
        probe = sqlite3.connect(os.path.join(tmp, name))
        Session._configure_connection(probe)
        described = durability(probe)
        probe.close()
        return times, described
    finally:
        session.close()


def measure_store(
    tmp: str, size: int, runs: int
) -> tuple[list[list[object]], list[list[object]], list[list[object]]]:
    path = os.path.join(tmp, f"turns-{size}.db")
    searches: list[list[object]] = []
    contexts: list[list[object]] = []
    resumes: list[list[object]] = []
    with clew.open(path) as mem:
        session_id, seconds = seed(mem, size)
        mem.recall(session_id, "search", query="warm up")  # loads the tokenizer, once a process
        conn = sqlite3.connect(path)
        for label, query, fts in (
            (f"rare identifier (3 turns): {RARE}", RARE, f'"{RARE}"'),
            (f"traceback in ~0.5%: {TRACEBACK}", TRACEBACK, f'"{TRACEBACK}"'),
            (f'phrase in ~1%: "{PHRASE}"', f'"{PHRASE}"', f'"{PHRASE}"'),
        ):
            matches = conn.execute(
                "SELECT count(*) FROM turns_fts WHERE turns_fts MATCH ?", (fts,)
            ).fetchone()[0]
            clew_ms, floor_ms = alternating_ms(
                lambda i, q=query: mem.recall(session_id, "search", query=q),
                lambda i, f=fts: conn.execute(
                    "SELECT rowid, bm25(turns_fts) FROM turns_fts WHERE turns_fts MATCH ?"
                    " ORDER BY rank LIMIT 10",
                    (f,),
                ).fetchall(),
                runs,
            )
            figures = [f"{pct(v, q):.1f}" for v in (clew_ms, floor_ms) for q in (50, 95)]
            searches.append([f"{size:,}", label, f"{matches:,}", *figures])
        conn.close()
        for budget in (32_000, 128_000):
            mem._measured.clear()  # the first assembly of a process counts every turn
            first = timed_ms(lambda b=budget: mem.assemble_context(session_id, budget=b), 1)[0]
            again = timed_ms(lambda b=budget: mem.assemble_context(session_id, budget=b), runs)
            shown = len(mem.assemble_context(session_id, budget=budget).turns)
            contexts.append([f"{size:,}", f"{budget:,}", f"{shown:,}", f"{first:.0f}",
                             f"{pct(again, 50):.1f}", f"{pct(again, 95):.1f}"])  # fmt: skip
        api = timed_ms(lambda: mem.resume(session_id), runs)
    cli = []
    for _ in range(5):
        t0 = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "clew", "--db", path, "session", "resume", session_id,
             "--json"], check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        cli.append((time.perf_counter() - t0) * 1000)
    resumes.append([f"{size:,}", "Memory.resume (32k budget)", f"{pct(api, 50):.1f}",
                    f"{pct(api, 95):.1f}"])  # fmt: skip
    resumes.append([f"{size:,}", "`clew session resume --json` (new process)",
                    f"{statistics.median(cli):.0f}", f"{max(cli):.0f}"])  # fmt: skip
    size_mb = os.path.getsize(path) / 1e6
    os.unlink(path)
    print(f"[bench] {size:,} turns: seeded in {seconds:.0f} s ({size / seconds:,.0f} turns/s in"
          f" batches of {BATCH}), {size_mb:,.0f} MB", file=sys.stderr)  # fmt: skip
    return searches, contexts, resumes


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", help="session sizes in turns, comma-separated")
    parser.add_argument("--quick", action="store_true", help="small sizes, few samples")
    parser.add_argument("--samples", type=int, help="append samples per side")
    parser.add_argument("--runs", type=int, help="runs per query and side")
    args = parser.parse_args(argv)
    sizes = [
        int(s) for s in (args.sizes or ("3000" if args.quick else "100000,1000000")).split(",")
    ]
    samples = args.samples or (100 if args.quick else 1000)
    runs = args.runs or (10 if args.quick else 40)
    header("clew conversation archive benchmark")
    with tempfile.TemporaryDirectory(prefix="clew-bench-turns-") as tmp:
        print(f"\n## Append one turn ({samples} samples per side); aim: clew/floor >= 0.8\n")
        print(table(["side", "durability", "p50 µs", "p99 µs", "turns/s", "clew / side"],
                    measure_append(tmp, samples)))  # fmt: skip
        sys.stdout.flush()
        searches, contexts, resumes = [], [], []
        for size in sizes:
            s, c, r = measure_store(tmp, size, runs)
            searches += s
            contexts += c
            resumes += r
        print(f"\n## Recall search, top 10 ({runs} runs per query and side)\n")
        print(table(["turns", "query", "matches", "clew p50 ms", "clew p95 ms", "floor p50 ms",
                     "floor p95 ms"], searches))  # fmt: skip
        print(f"\n## Context assembly ({runs} runs after the first)\n")
        print(table(["turns", "budget", "turns in", "first ms", "p50 ms", "p95 ms"], contexts))
        print(f"\n## Resume ({runs} runs; the command 5)\n")
        print(table(["turns", "how", "p50 ms", "p95 / max ms"], resumes))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
