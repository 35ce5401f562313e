"""What keeping the error lines of the middle of long command output costs on the write path.

Prints markdown tables; it is a script, not a timed test:

    python benchmarks/bench_error_lines.py             # 40 samples per size
    python benchmarks/bench_error_lines.py --quick     # smoke run

Two fresh stores get the same `record_action` calls, taking turns sample by sample so that
machine noise hits both alike: one as clew makes it, the other with the write path's error
lines switched off (the write path before migration 14: head and tail only). Each output is
a build log with one traceback in its middle. Reported: wall and CPU milliseconds per write,
and the extraction alone (`error_lines`) per output, CPU. Stdlib and clew only.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import clew
from clew.archive import trace
from clew.archive.error_lines import error_lines
from common import header, table

SIZES = (100_000, 1_000_000, 4_000_000)


def build_log(size: int, seed: int) -> str:
    """A build log of about `size` characters, a traceback in its middle."""
    line = "compiling module_{0} ok: wrote {1} bytes to build/obj_{0}.o\n"
    half = "".join(line.format(i, (i * 7 + seed) % 9973) for i in range(size // 110))
    error = 'Traceback (most recent call last):\n  File "src/auth.py", line 88\n'
    error += f"ValueError: ERR_TOKEN_EXPIRED refresh {seed}\n"
    return half + error + half


def measure(fn: Callable[[], object]) -> tuple[float, float]:
    """Wall and CPU milliseconds of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return (time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    runs = 4 if args.quick else 40
    header("Error lines of long command output: the write path", ("samples", runs))
    shipped = trace.error_lines
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        kept = clew.open(Path(tmp) / "kept.db", mirror=False)
        plain = clew.open(Path(tmp) / "plain.db", mirror=False)
        tasks = {id(m): m.create_task("Build", ["compile"]).id for m in (kept, plain)}
        for size in SIZES:
            logs = [build_log(size, seed) for seed in range(runs)]
            samples: dict[str, list[tuple[float, float]]] = {"kept": [], "plain": []}
            for i, log in enumerate(logs):
                order = [("kept", kept), ("plain", plain)]
                for name, mem in order if i % 2 else order[::-1]:
                    trace.error_lines = shipped if name == "kept" else lambda v: None
                    try:
                        samples[name].append(measure(lambda m=mem, o=log: m.record_action(
                            tasks[id(m)], command="make all", exit_code=2, stdout=o)))  # fmt: skip
                    finally:
                        trace.error_lines = shipped
            extract = [measure(lambda o=log: error_lines(o))[1] for log in logs]
            kw, kc = (statistics.median(s) for s in zip(*samples["kept"], strict=True))
            pw, pc = (statistics.median(s) for s in zip(*samples["plain"], strict=True))
            rows.append([f"{size:,}", f"{pw:.1f}", f"{kw:.1f}", f"{pc:.1f}", f"{kc:.1f}",
                         f"{kc / pc:.2f}", f"{statistics.median(extract):.1f}"])  # fmt: skip
        kept.close()
        plain.close()
    print(table(["output chars", "head+tail wall ms", "with error lines wall ms",
                 "head+tail CPU ms", "with error lines CPU ms", "CPU ratio",
                 "error_lines alone CPU ms"], rows))  # fmt: skip


if __name__ == "__main__":
    main()
