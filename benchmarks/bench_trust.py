"""Benchmark what trust costs (issue 24): sealing a wait, checking a seal before a poll, and
an import's checks of who may add what and its record of who imported.

Prints markdown tables; a script, not a timed test:

    python benchmarks/bench_trust.py           # about half a minute
    python benchmarks/bench_trust.py --quick   # a smoke run

Each figure is CPU time (user + system of this process) with wall time beside it, next to a
floor measured in the same run, the samples taking turns at going first:
- adding a command wait (sealed) against adding a manual wait (nothing to seal);
- checking a seal against running `true`, the cheapest command a poll can run;
- importing a journal file as a server's admin key (every event checked against what the
  key may add, the import recorded) and as the host's user (recorded, nothing to check),
  against adopting the same events into the store with no check and no record.
"""

from __future__ import annotations

import argparse
import functools
import io
import os
import statistics
import tempfile
import time
from collections.abc import Callable

import clew
from clew.core.origin import HostRules, Origin
from clew.journal import journalfile
from clew.tasks import probes
from common import header, table


def cpu_and_wall(fn: Callable[[], object]) -> tuple[float, float]:
    """Milliseconds of CPU and of wall time one call of `fn` takes."""
    c0, w0 = time.process_time(), time.perf_counter()
    fn()
    return (time.process_time() - c0) * 1000, (time.perf_counter() - w0) * 1000


def taking_turns(runs: int, **fns: Callable[[int], object]) -> dict[str, list[tuple[float, float]]]:
    """(CPU ms, wall ms) of each fn(i) for i in range(runs), the order rotating each round."""
    out: dict[str, list[tuple[float, float]]] = {name: [] for name in fns}
    names = list(fns)
    for i in range(runs):
        turn = names[i % len(names) :] + names[: i % len(names)]
        for name in turn:
            out[name].append(cpu_and_wall(functools.partial(fns[name], i)))
    return out


def median(samples: list[tuple[float, float]], which: int) -> float:
    return statistics.median(s[which] for s in samples)


def waits(folder: str, runs: int) -> list[list[object]]:
    with clew.open(os.path.join(folder, "waits.db")) as mem:
        task = mem.create_task("Deploy", ["Build"])
        mem.add_wait(task.id, "command", "true")  # the sealing key, made and cached
        found = taking_turns(
            runs,
            sealed=lambda i: mem.add_wait(task.id, "command", f"test -f /tmp/x{i}"),
            manual=lambda i: mem.add_wait(task.id, "manual", f"approval {i}"),
        )
        wait = mem.add_wait(task.id, "command", "true")
        checked = taking_turns(
            runs,
            seal=lambda i: [probes.unsealed(wait) for _ in range(100)],
            run=lambda i: probes.run_bounded("true", 10, None),
        )
    rows = []
    for name, samples, per in (
        ("add a command wait (sealed)", found["sealed"], 1),
        ("add a manual wait (floor: nothing to seal)", found["manual"], 1),
        ("check a wait's seal", checked["seal"], 100),
        ("run `true` (floor: the cheapest poll)", checked["run"], 1),
    ):
        rows.append([name, f"{median(samples, 0) / per:.3f}", f"{median(samples, 1) / per:.3f}"])
    return rows


def fill(mem: clew.Memory, tasks: int) -> None:
    for n in range(tasks):
        task = mem.create_task(f"Task {n}", ["Build", "Test", "Ship"], goal="ship it")
        mem.update_task(task.id, step=1, step_status="active", message=f"building {n}")
        mem.record_action(task.id, command=f"make target{n}", exit_code=0, stdout="ok\n" * 50)
        mem.add_wait(task.id, "command", f"test -f /tmp/built-{n}")
        mem.add_decision(task.id, f"Use cache layer {n % 7} for build {n}")


def imports(folder: str, tasks: int, runs: int) -> tuple[int, list[list[object]]]:
    with clew.open(os.path.join(folder, "source.db"), space="bench") as mem:
        fill(mem, tasks)
        out = io.StringIO()
        mem.export_events(out)
    text = out.getvalue()
    admin = Origin("api", "0123456789ab", HostRules(True, (), ()), "admin")
    events = journalfile.parse(text).events

    def fresh(i: int, name: str) -> clew.Memory:
        return clew.open(os.path.join(folder, f"{name}-{i}.db"), space="bench")

    def checked(i: int) -> None:
        with fresh(i, "admin") as mem:
            mem.import_events(text, by=admin)

    def local(i: int) -> None:
        with fresh(i, "local") as mem:
            mem.import_events(text)

    def floor(i: int) -> None:
        with fresh(i, "floor") as mem:
            store = mem._store
            moved = journalfile.parse(text).events  # parsed as the imports parse it
            with store.transaction(write=True), store.bulk_turns():
                for m in moved:
                    store.adopt(m.event)

    for warm in range(2):  # the first stores of each kind pay for the template and caches
        checked(-1 - warm), local(-1 - warm), floor(-1 - warm)
    found = taking_turns(runs, admin=checked, local=local, floor=floor)
    rows = []
    for name, label in (
        ("admin", "import as a server's admin key (every event checked, recorded)"),
        ("local", "import as the host's user (recorded)"),
        ("floor", "adopt the same events, no check, no record (floor)"),
    ):
        cpu, wall = median(found[name], 0), median(found[name], 1)
        floor_cpu = median(found["floor"], 0)
        rows.append([label, f"{cpu:.0f}", f"{wall:.0f}", f"{cpu / floor_cpu:.3f}"])
    return len(events), rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a smoke run")
    quick = parser.parse_args().quick
    with tempfile.TemporaryDirectory() as folder:
        os.environ.setdefault("CLEW_SECRET_FILE", os.path.join(folder, "secret.key"))
        wait_rows = waits(folder, 20 if quick else 200)
        count, import_rows = imports(folder, 50 if quick else 500, 3 if quick else 7)
    header("What trust costs", ("journal imported", f"{count:,} events"))
    print(table(["per call", "CPU ms", "wall ms"], wait_rows))
    print()
    print(table(["one import (one transaction)", "CPU ms", "wall ms", "CPU / floor"], import_rows))


if __name__ == "__main__":
    main()
