"""Benchmark moving a store: export, import into a fresh store, push, and a push of nothing.

Prints markdown tables; a script, not a timed test:

    python benchmarks/bench_move.py           # 2,000 tasks' work, about a minute
    python benchmarks/bench_move.py --quick   # a smoke run

The store: per task, a 3-step plan, two step updates with messages, two commands (one
failing, with a few KB of output), a decision, and four conversation turns. Next to each
figure, the time the same events took to write through the facade in the first place (one
transaction per call), which is what replaying them through the projection compares with.
"""

from __future__ import annotations

import argparse
import io
import os
import tempfile
import time

import clew
from common import header, table


def fill(mem: clew.Memory, tasks: int) -> None:
    session = mem.start_session(workspace="/w")
    for n in range(tasks):
        task = mem.create_task(f"Task {n}", ["Build", "Test", "Ship"], goal="ship it")
        mem.update_task(task.id, step=1, step_status="active", message=f"building {n}")
        mem.record_action(task.id, command=f"make -j4 target{n}", exit_code=0, stdout="ok\n" * 200)
        mem.record_action(task.id, command="pytest -x", exit_code=1, stderr="E  boom\n" * 300)
        mem.add_decision(task.id, f"Use cache layer {n % 7} for build {n}")
        mem.update_task(task.id, step=1, step_status="completed", message="built")
        for role in ("user", "assistant", "user", "assistant"):
            mem.append_turn(session.id, {"role": role, "content": f"turn about task {n}"})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a smoke run")
    tasks = 100 if parser.parse_args().quick else 2000
    with tempfile.TemporaryDirectory() as folder:
        source = os.path.join(folder, "source.db")
        with clew.open(source) as mem:
            t0 = time.perf_counter()
            fill(mem, tasks)
            written = time.perf_counter() - t0
            events = len(mem.journal())
            t0 = time.perf_counter()
            out = io.StringIO()
            mem.export_events(out)
            exported = time.perf_counter() - t0
            text = out.getvalue()
            t0 = time.perf_counter()
            mem.push(os.path.join(folder, "team.db"))
            pushed = time.perf_counter() - t0
            t0 = time.perf_counter()
            mem.push(os.path.join(folder, "team.db"))
            nothing = time.perf_counter() - t0
        with clew.open(os.path.join(folder, "fresh.db")) as fresh:
            t0 = time.perf_counter()
            fresh.import_events(text)
            imported = time.perf_counter() - t0
            t0 = time.perf_counter()
            fresh.import_events(text)
            again = time.perf_counter() - t0
        header(
            "Moving a store",
            ("tasks", f"{tasks:,}"),
            ("events", f"{events:,}"),
            ("journal file", f"{len(text.encode()) / 2**20:.1f} MB"),
        )

        def row(name: str, seconds: float) -> list[object]:
            return [name, f"{seconds:.2f}", f"{events / seconds:,.0f}"]

        print(
            table(
                ["step", "seconds", "events/s"],
                [
                    row("written through the facade (one call per transaction)", written),
                    row("export (read as stored, chain checked, lines written)", exported),
                    row("import into a fresh store (one transaction)", imported),
                    row("import the same file again (nothing to add)", again),
                    row("push into a fresh SQLite store (batches of 500)", pushed),
                    row("push again (nothing to send)", nothing),
                ],
            )
        )


if __name__ == "__main__":
    main()
