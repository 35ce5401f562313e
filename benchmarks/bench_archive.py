"""Benchmark layer 2: recording entries and searching them, each next to a raw floor.

Prints markdown tables; a script, not a timed test:

    python benchmarks/bench_archive.py                 # 100k and 1M entries (~6 minutes)
    python benchmarks/bench_archive.py --sizes 100000  # one size
    python benchmarks/bench_archive.py --quick         # smoke run

Record: `Memory.add_entry(type, summary, task_id=..., detail=~600 bytes, tags=[2])`
alternating with the floor: raw stdlib sqlite3 on clew's schema doing the same writes in one
transaction (the event's JSON, the entry row with FTS5 kept by clew's triggers, two label
rows, the task's updated_at), no reads.

Search: a store seeded with N synthetic coding-agent entries (summaries of 8-25 words,
details of 200-1,500 characters of tool output, logs and prose), with planted terms of known
selectivity: a rare identifier in exactly 3 entries, a phrase in ~1%, and a word in ~20%.
`Memory.search` (safe parsing, bm25 over the newest 5,000 matches, snippets, records built)
runs next to the floor: the plain FTS5 query `MATCH ? ORDER BY rank LIMIT 10` on the same
file.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime

import clew
from clew.core.ids import new_id
from common import alternating_ms, header, pct, table

RARE = "ERR_QUOTA_7731"  # exactly 3 entries
PHRASE = "stale lockfile"  # ~1% of entries
COMMON = "timeout"  # ~20% of entries
_WORD_TEXT = (
    "parse the config read schema write index cache retry build deploy image container"
    " registry token request response handler worker queue batch stream log trace span"
    " migrate column table query plan step test suite fixture mock patch module import"
    " function class method argument return value error warning failed passed skipped"
)
_WORDS = _WORD_TEXT.split()
_LOG = (
    "INFO  worker.{n} processed batch {i} in {t}ms",
    "WARN  cache miss for key user:{i}:{n}",
    "ERROR request {i} failed: connection refused (port {t})",
    "tests/test_{w}.py::test_{w}_{i} PASSED",
    '  File "src/app/{w}.py", line {i}, in {w}',
    "{w}.{w}({i}, {t}) -> {n}",
)


def _sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(words)).capitalize() + "."


def _detail(rng: random.Random) -> str:
    out: list[str] = []
    size = rng.randint(200, 1500)
    while sum(len(line) + 1 for line in out) < size:
        if rng.random() < 0.5:
            line = rng.choice(_LOG).format(
                n=rng.randint(1, 9),
                i=rng.randint(1, 9999),
                t=rng.randint(1, 900),
                w=rng.choice(_WORDS),
            )
        else:
            line = _sentence(rng, rng.randint(6, 18))
        out.append(line)
    return "\n".join(out)


def entry_data(rng: random.Random, n: int, total: int) -> dict[str, object]:
    """The n-th synthetic entry; planted terms at known rates."""
    summary = _sentence(rng, rng.randint(8, 25))
    detail = _detail(rng)
    if n in (total // 7, total // 2, total - 5):
        detail += f"\nquota exceeded: {RARE} for project p-{n}"
    if n % 100 == 37:
        summary = summary.rstrip(".") + f", caused by a {PHRASE}."
    if rng.random() < 0.2:
        detail += f"\nrequest {n} hit a {COMMON} after 30s"
    kinds = ("discovery", "tool_result", "decision", "error", "context", "artifact")
    return {
        "id": new_id(),
        "type": kinds[n % len(kinds)],
        "summary": summary,
        "detail": detail,
        "tags": [rng.choice(_WORDS), f"t{n % 50}"],
    }


def seed(mem: clew.Memory, task_id: str, total: int, batch: int = 5000) -> float:
    """Seed `total` entries through clew's own journal and projections, in batches (the
    same rows the API writes, without a transaction per entry)."""
    rng = random.Random(5)
    t0 = time.perf_counter()
    store = mem._store  # the benchmark's bulk path: one write transaction per batch
    stamp = datetime(2026, 1, 1, tzinfo=UTC)
    for start in range(0, total, batch):
        with store.transaction(write=True):
            for n in range(start, min(start + batch, total)):
                at = f"{stamp.isoformat()[:19]}.{n:06d}Z"
                store.append(
                    type="entry.added",
                    task_id=task_id,
                    correlation_id=new_id(),
                    data={"entry": entry_data(rng, n, total)},
                    created_at=at,
                )
        print(f"[bench] seeded {min(start + batch, total):,} entries", file=sys.stderr, flush=True)
    return time.perf_counter() - t0


class Floor:
    """Raw sqlite3 writing what add_entry writes, on clew's schema."""

    def __init__(self, path: str, task_id: str) -> None:
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.execute("PRAGMA synchronous = NORMAL")
        self.task_id = task_id

    def record(self, entry: dict[str, object]) -> None:
        at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        c = self.conn
        c.execute("BEGIN IMMEDIATE")
        c.execute(
            "INSERT INTO events (id, space, task_id, correlation_id, type, data, created_at)"
            " VALUES (?, 'default', ?, ?, 'entry.added', ?, ?)",
            (
                new_id(),
                self.task_id,
                new_id(),
                json.dumps({"entry": entry}, separators=(",", ":")),
                at,
            ),
        )
        c.execute(
            "INSERT INTO entries (id, space, task_id, type, summary, detail, tags, created_at,"
            " updated_at) VALUES (?, 'default', ?, ?, ?, ?, ?, ?, ?)",
            (entry["id"], self.task_id, entry["type"], entry["summary"], entry["detail"],
             json.dumps(entry["tags"]), at, at),
        )  # fmt: skip
        for tag in entry["tags"]:  # type: ignore[attr-defined]
            c.execute(
                "INSERT INTO entry_labels VALUES (?, 'default', ?, 'tag', ?)",
                (f"{entry['id']}/tag/{tag}", entry["id"], tag),
            )
        c.execute("UPDATE tasks SET updated_at = ? WHERE id = ?", (at, self.task_id))
        c.execute("COMMIT")


def measure_record(tmp: str, samples: int) -> list[list[object]]:
    path = os.path.join(tmp, "record.db")
    with clew.open(path) as mem:
        task = mem.create_task("Record", ["a"])
        floor = Floor(path, task.id)
        rng = random.Random(9)
        warm = samples // 10
        entries = [entry_data(rng, i, 10**9) for i in range(2 * (samples + warm))]

        def by_clew(i: int) -> None:
            e = entries[2 * i]
            mem.add_entry(
                str(e["type"]), str(e["summary"]), task_id=task.id, detail=str(e["detail"]),
                tags=list(e["tags"]),  # type: ignore[call-overload]
            )  # fmt: skip

        clew_ms, floor_ms = alternating_ms(
            by_clew, lambda i: floor.record(entries[2 * i + 1]), samples, warm
        )
        floor.conn.close()
    rows = []
    rate = {}
    for side, values in (("clew", clew_ms), ("floor", floor_ms)):
        rate[side] = 1e3 / statistics.fmean(values)
        rows.append(
            [
                side,
                f"{pct(values, 50) * 1000:.0f}",
                f"{pct(values, 99) * 1000:.0f}",
                f"{rate[side]:,.0f}",
            ]
        )
    rows[0].append(f"{rate['clew'] / rate['floor']:.2f}")
    rows[1].append("")
    return rows


def measure_search(tmp: str, size: int, runs: int) -> tuple[list[list[object]], float]:
    path = os.path.join(tmp, f"search-{size}.db")
    with clew.open(path) as mem:
        task = mem.create_task("Search", ["a"])
        seconds = seed(mem, task.id, size)
        conn = sqlite3.connect(path)
        rows = []
        for label, query, fts in (
            (f"rare identifier (3 entries): {RARE}", RARE, f'"{RARE}"'),
            (f'phrase in ~1%: "{PHRASE}"', f'"{PHRASE}"', f'"{PHRASE}"'),
            (f"word in ~20%: {COMMON}", COMMON, f'"{COMMON}"'),
        ):
            hits = conn.execute(
                "SELECT count(*) FROM entries_fts WHERE entries_fts MATCH ?", (fts,)
            )
            matches = hits.fetchone()[0]
            clew_ms, floor_ms = alternating_ms(
                lambda i, q=query: mem.search(q, limit=10),
                lambda i, f=fts: conn.execute(
                    "SELECT rowid, bm25(entries_fts) FROM entries_fts WHERE entries_fts MATCH ?"
                    " ORDER BY rank LIMIT 10",
                    (f,),
                ).fetchall(),
                runs,
            )
            figures = [f"{pct(v, q):.1f}" for v in (clew_ms, floor_ms) for q in (50, 95)]
            rows.append([f"{size:,}", label, f"{matches:,}", *figures])
        conn.close()
    size_mb = os.path.getsize(path) / 1e6
    os.unlink(path)
    print(f"[bench] {size:,} entries: seeded in {seconds:.0f} s, {size_mb:.0f} MB", file=sys.stderr)
    return rows, size_mb


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", help="entry counts to search, comma-separated")
    parser.add_argument("--quick", action="store_true", help="small sizes, few samples")
    parser.add_argument("--samples", type=int, help="record samples per side")
    parser.add_argument("--runs", type=int, help="search runs per query and side")
    args = parser.parse_args(argv)
    sizes = [
        int(s) for s in (args.sizes or ("3000" if args.quick else "100000,1000000")).split(",")
    ]
    samples = args.samples or (100 if args.quick else 1000)
    runs = args.runs or (10 if args.quick else 60)
    header("clew archive benchmark")
    with tempfile.TemporaryDirectory(prefix="clew-bench-archive-") as tmp:
        print(f"\n## Record one entry ({samples} samples per side); aim: clew/floor >= 0.8\n")
        print(
            table(
                ["side", "p50 µs", "p99 µs", "entries/s", "clew/floor"],
                measure_record(tmp, samples),
            )
        )
        sys.stdout.flush()
        rows = []
        for size in sizes:
            found, _ = measure_search(tmp, size, runs)
            rows += found
        print(f"\n## Search, top 10 ({runs} runs per query and side); aim at 1M: rare p95 < 10 ms,"
              " common p95 < 50 ms\n")  # fmt: skip
        print(
            table(
                [
                    "entries",
                    "query",
                    "matches",
                    "clew p50 ms",
                    "clew p95 ms",
                    "floor p50 ms",
                    "floor p95 ms",
                ],
                rows,
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
