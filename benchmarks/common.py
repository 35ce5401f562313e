"""What the benchmark scripts share: percentiles and markdown tables."""

from __future__ import annotations

import os
import platform
import sqlite3
import statistics
import time
from collections.abc import Callable, Sequence


def pct(values: Sequence[float], q: int) -> float:
    """The q-th percentile (inclusive method) of `values`."""
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def header(title: str, *extra: tuple[str, object]) -> None:
    """Print a benchmark's title and the facts of the machine and run it measured on."""
    facts: list[list[object]] = [
        ["date", time.strftime("%Y-%m-%d %H:%M")],
        ["python", f"{platform.python_version()} ({platform.python_implementation()})"],
        ["sqlite", sqlite3.sqlite_version],
        ["cpus", os.cpu_count()],
        *([k, v] for k, v in extra),
    ]
    print(f"# {title}\n")
    print(table(["fact", "value"], facts))


def timed_ms(fn: Callable[[], object], runs: int) -> list[float]:
    """Milliseconds of `runs` calls of `fn`."""
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1000)
    return out


def alternating_ms(
    clew: Callable[[int], object], floor: Callable[[int], object], runs: int, warm: int = 0
) -> tuple[list[float], list[float]]:
    """Milliseconds of clew(i) and floor(i) for i in range(warm + runs), taking turns at
    going first so that machine noise hits both alike; the first `warm` runs are dropped."""
    clew_ms: list[float] = []
    floor_ms: list[float] = []
    for i in range(warm + runs):
        pair = [(clew, clew_ms), (floor, floor_ms)]
        for fn, out in pair if i % 2 else pair[::-1]:
            t0 = time.perf_counter()
            fn(i)
            if i >= warm:
                out.append((time.perf_counter() - t0) * 1000)
    return clew_ms, floor_ms


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    cells = [[str(h) for h in headers], *[[str(c) for c in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    right = [i > 0 and all(_numeric(row[i]) for row in cells[1:]) for i in range(len(headers))]

    def line(row: list[str]) -> str:
        parts = [
            c.rjust(w) if r else c.ljust(w) for c, w, r in zip(row, widths, right, strict=True)
        ]
        return "| " + " | ".join(parts) + " |"

    rule = (
        "|"
        + "|".join(
            ("-" * (w + 1) + ":") if r else "-" * (w + 2)
            for w, r in zip(widths, right, strict=True)
        )
        + "|"
    )
    return "\n".join([line(cells[0]), rule, *(line(r) for r in cells[1:])])


def _numeric(text: str) -> bool:
    """Right-align columns of numbers (blank cells allowed)."""
    return not text or text.lstrip("+-").replace(",", "").replace(".", "").isdigit()


def alternating_cpu(
    sides: Sequence[Callable[[int], object]], runs: int, warm: int = 0
) -> tuple[list[list[float]], list[list[float]]]:
    """Wall and process CPU milliseconds of each side(i) for i in range(warm + runs), every
    side once a step, the order rotating each step so that machine noise hits all alike; the
    first `warm` steps are dropped. CPU time is the process's (threads included)."""
    wall: list[list[float]] = [[] for _ in sides]
    cpu: list[list[float]] = [[] for _ in sides]
    order = list(range(len(sides)))
    for i in range(warm + runs):
        for k in order[i % len(order) :] + order[: i % len(order)]:
            c0, t0 = time.process_time(), time.perf_counter()
            sides[k](i)
            t1, c1 = time.perf_counter(), time.process_time()
            if i >= warm:
                wall[k].append((t1 - t0) * 1000)
                cpu[k].append((c1 - c0) * 1000)
    return wall, cpu
