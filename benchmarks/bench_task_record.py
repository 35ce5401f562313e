"""Benchmark the task record and task-level context assembly, next to what they add to.

Prints markdown tables; a script, not a timed test:

    python benchmarks/bench_task_record.py            # a few seconds

The task of bench_state.py (200 steps, 1,000 decisions, 500 errors...) plus 30 commands and
30 messages naming images, hosts and tickets, with every record field set. Alternating
sample by sample in one process:

- `state()` as it is (the record read, its entities extracted, rendered) against the same
  call with the record left out of the snapshot: what the record costs the state;
- `where()` likewise, for the brief;
- `task_record()` alone, remembered (the task unchanged since the last read, as in a
  long-lived server) and read afresh (as a new process, a hook, reads it), and the entity
  extraction alone (pure);
- `assemble(task=...)` (2,000 tokens) against `state()` at a 1,000-token budget, the tier it
  always holds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from collections.abc import Callable
from typing import Any

import clew
from bench_state import seed
from clew.tasks.entities import extract
from common import alternating_ms, header, pct, table


def _row(name: str, ms: list[float], floor: list[float]) -> list[Any]:
    p50, base = statistics.median(ms), statistics.median(floor)
    return [name, f"{p50 * 1000:.0f}", f"{pct(ms, 99) * 1000:.0f}", f"{p50 / base:.2f}x"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=200)
    runs = parser.parse_args().samples
    header("clew task record benchmark", ("samples", runs))
    with tempfile.TemporaryDirectory() as folder:
        mem = clew.open(os.path.join(folder, "clew.db"))
        tid = seed(mem, folder)
        for i in range(30):
            mem.record_action(
                tid, command=f"docker push ghcr.io/acme/app:v1.{i}.0", exit_code=0,
                stdout="pushed layer " * 200,
            )  # fmt: skip
            mem.add_message(tid, f"pushed v1.{i}.0 to ghcr.io and restarted api, see OPS-{i + 10}")
        mem.set_task_record(
            tid, answer="deployed", outcome="success", confidence=0.8, domain="infra",
            priority="high", estimate="2h",
        )  # fmt: skip
        records = mem.task_records
        real = records._record_of
        without: Callable[..., Any] = lambda task: None  # noqa: E731

        def bare(call: Callable[[], object]) -> Callable[[int], object]:
            def run(_: int) -> object:
                records._record_of = without  # type: ignore[method-assign]
                try:
                    return call()
                finally:
                    records._record_of = real  # type: ignore[method-assign]

            return run

        rows = []
        state, state_bare = alternating_ms(
            lambda _: mem.state(tid), bare(lambda: mem.state(tid)), runs, warm=10
        )
        rows.append(_row("state() with the record", state, state_bare))
        rows.append(_row("state() without it", state_bare, state_bare))
        where, where_bare = alternating_ms(
            lambda _: mem.where(tid), bare(lambda: mem.where(tid)), runs, warm=10
        )
        rows.append(_row("where() with the record", where, where_bare))
        rows.append(_row("where() without it", where_bare, where_bare))
        record, _ = alternating_ms(lambda _: mem.task_record(tid), lambda _: None, runs, warm=10)
        rows.append(_row("task_record(), remembered", record, state_bare))

        def fresh(_: int) -> object:
            mem.__dict__.get("_records", {}).clear()  # as a new process (a hook) reads it
            return mem.task_record(tid)

        cold, _ = alternating_ms(fresh, lambda _: None, runs, warm=10)
        rows.append(_row("task_record(), first read", cold, state_bare))
        commands, texts, paths = mem._store.entity_sources(tid, limit=25)
        found, _ = alternating_ms(
            lambda _: extract(commands=commands, texts=texts, paths=paths),
            lambda _: None, runs, warm=10,
        )  # fmt: skip
        rows.append(_row("  entity extraction (pure)", found, state_bare))
        context, small = alternating_ms(
            lambda _: mem.assemble(task=tid), lambda _: mem.state(tid, budget=1000), runs, warm=10
        )
        rows.append(_row("assemble(task=...), 2,000 tokens", context, small))
        rows.append(_row("state(budget=1000)", small, small))
        print()
        print(table(["operation", "p50 µs", "p99 µs", "vs comparator"], rows))
        shown = mem.assemble(task=tid)
        print(f"\nassembled: {shown.tokens} tokens of {shown.budget}; tiers:")
        for tier in shown.tiers:
            print(f"  {tier.name}: {tier.tokens} tokens, {tier.included} in, {tier.left_out} out")
        print("entities:", dict(mem.task_record(tid).entities))
        mem.close()


if __name__ == "__main__":
    main()
