"""What the search index of task messages, commands and trace decisions costs on the write
path, and what search over everything costs to read.

Prints markdown tables; it is a script, not a timed test:

    python benchmarks/bench_records_index.py             # 2,000 samples per operation
    python benchmarks/bench_records_index.py --quick     # smoke run, a few seconds

Two fresh stores get the same writes, taking turns sample by sample so machine noise hits
both alike: one as clew makes it, the other with the index's triggers dropped (the write
path as it was before the index). Operations: `record_action` with 1.5 KB of output,
`record_action` with 1 MB of output, a progress message (`update_task(message=...)`) and a
trace decision with an error, a context and artifacts (`trace_decision`). Then `search_all`
against `search` (entries only), and `search_all` of decisions only, on the indexed store.
Stdlib and clew only.
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import statistics
import tempfile
from pathlib import Path

import clew
from common import alternating_ms, header, pct, table, timed_ms

TRIGGERS = (
    "records_action_insert",
    "records_action_update",
    "records_action_delete",
    "records_message_insert",
    "records_message_delete",
    "records_decision_insert",
    "records_decision_delete",
)
WORDS = ("build", "deploy", "cache", "token", "image", "nginx", "timeout", "retry", "docker",
         "kestrel", "worker", "queue")  # fmt: skip


def text(rng: random.Random, chars: int) -> str:
    """Log-like text of about `chars` characters."""
    out: list[str] = []
    size = 0
    while size < chars:
        line = " ".join(rng.choice(WORDS) for _ in range(10)) + f" {rng.randrange(10**6)}\n"
        out.append(line)
        size += len(line)
    return "".join(out)


def main() -> None:
    """Measure, print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run")
    args = parser.parse_args()
    runs = 200 if args.quick else 2000
    big_runs = 20 if args.quick else 100
    header("The records index: write cost and search", ("samples", runs))
    os.environ["CLEW_WORKER"] = "off"  # no background extraction competing with the samples
    rng = random.Random(7)
    small = [text(rng, 1500) for _ in range(50)]
    big = text(rng, 1024 * 1024)
    with tempfile.TemporaryDirectory() as folder:
        clew.open(Path(folder) / "plain.db").close()
        conn = sqlite3.connect(Path(folder) / "plain.db")
        for name in TRIGGERS:  # the write path as it was before the index
            conn.execute(f"DROP TRIGGER {name}")
        conn.commit()
        conn.close()
        indexed = clew.open(Path(folder) / "indexed.db")
        plain = clew.open(Path(folder) / "plain.db")
        tasks = [m.create_task("Bench", ["one", "two"]).id for m in (indexed, plain)]

        def action(mem: clew.Memory, task: str, out: str) -> None:
            mem.record_action(task, command="make test", exit_code=1, stdout=out, stderr=out[:300])

        rows = []
        for name, count, make in (
            ("record_action, 1.5 KB output", runs, lambda i: small[i % len(small)]),
            ("record_action, 1 MB output", big_runs, lambda i: big),
        ):
            with_index, without = alternating_ms(
                lambda i, make=make: action(indexed, tasks[0], make(i)),
                lambda i, make=make: action(plain, tasks[1], make(i)),
                count,
                warm=5,
            )
            rows.append(_row(name, with_index, without))
        with_index, without = alternating_ms(
            lambda i: indexed.update_task(tasks[0], message=small[i % len(small)][:200]),
            lambda i: plain.update_task(tasks[1], message=small[i % len(small)][:200]),
            runs,
            warm=5,
        )
        rows.append(_row("progress message", with_index, without))

        def decide(mem: clew.Memory, task: str, i: int) -> None:
            mem.trace_decision(task, f"retry the {WORDS[i % len(WORDS)]} step {i}",
                               outcome="failure", error=small[i % len(small)][:200],
                               agent="executor", state="EXECUTING",
                               context={"notes": small[i % len(small)][:600]},
                               artifacts={"file": f"out/{i}.log"})  # fmt: skip

        with_index, without = alternating_ms(
            lambda i: decide(indexed, tasks[0], i), lambda i: decide(plain, tasks[1], i),
            runs, warm=5,
        )  # fmt: skip
        rows.append(_row("trace_decision, 0.8 KB", with_index, without))
        print("\n## Write path, median and p95 ms\n")
        print(table(["operation", "indexed", "p95", "no index", "p95", "ratio"], rows))
        for n in range(200):
            indexed.add_decision(tasks[0], f"use {rng.choice(WORDS)} {n} for the build")
        everything = timed_ms(lambda: indexed.search_all("docker kestrel"), 50)
        entries = timed_ms(lambda: indexed.search("docker kestrel"), 50)
        decisions = timed_ms(lambda: indexed.search_all("docker kestrel", kinds="decision"), 50)
        print(
            f"\n## Search at {len(indexed.journal()):,} events, median ms\n\n"
            + table(
                ["call", "median", "p95"],
                [
                    ["search_all (every kind)", _ms(everything), _ms95(everything)],
                    ["search (entries)", _ms(entries), _ms95(entries)],
                    ["search_all (decisions)", _ms(decisions), _ms95(decisions)],
                ],
            )
        )
        indexed.close()
        plain.close()


def _ms(values: list[float]) -> str:
    return f"{statistics.median(values):.3f}"


def _ms95(values: list[float]) -> str:
    return f"{pct(values, 95):.3f}" if len(values) > 1 else _ms(values)


def _row(name: str, with_index: list[float], without: list[float]) -> list[object]:
    ratio = statistics.median(with_index) / statistics.median(without)
    return [name, _ms(with_index), _ms95(with_index), _ms(without), _ms95(without), f"{ratio:.2f}"]


if __name__ == "__main__":
    main()
