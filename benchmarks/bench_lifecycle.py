"""Benchmark the lifecycle: what lazy maintenance adds to `clew prime`, what polling waits
costs, and how little an unchanged poll writes to the journal.

    python benchmarks/bench_lifecycle.py [--runs 30] [--base-src PATH]

`clew prime` is measured as a whole process against one store (3 active tasks of 12 steps,
20 decisions and 5 errors each), the variants taking turns so that machine noise hits them
alike: maintenance switched off (the floor: what prime cost before it existed), on and not due
(every prime but one an interval), and on and due (the schedule row cleared before each run).
With --base-src (the `src` folder of an older clew, e.g. `git archive BASE src | tar -x`) the
older code's prime on a copy of the store is measured too.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import header, table

SEED = """
import clew, sys
with clew.open(sys.argv[1]) as m:
    for n in range(3):
        t = m.create_task(f"Deploy service {n}", [f"Step {i}: do thing {i}" for i in range(12)],
                          goal="ship it", workspace=sys.argv[2])
        for i in range(1, 5):
            m.update_step(t.id, i, status="completed", summary=f"did {i}")
        m.update_step(t.id, 5, status="active")
        for i in range(20):
            m.add_decision(t.id, f"decision {i} about the database layer")
        for i in range(5):
            m.add_error(t.id, f"error {i}: connection refused on port 5432")
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=30, help="runs per variant")
    parser.add_argument("--base-src", help="the src folder of an older clew to compare with")
    args = parser.parse_args()
    header("clew lifecycle", ("runs", args.runs))
    here = str(Path(__file__).resolve().parent.parent / "src")
    with tempfile.TemporaryDirectory() as tmp:
        ws = os.path.join(tmp, "ws")
        os.makedirs(ws)
        env = {**os.environ, "CLEW_WORKER": "off", "XDG_CACHE_HOME": os.path.join(tmp, "c"),
               "XDG_CONFIG_HOME": os.path.join(tmp, "cfg")}  # fmt: skip
        env.pop("CLEW_MAINTENANCE", None)
        seed_src = args.base_src or here
        first = os.path.join(tmp, "seed", "clew.db")
        os.makedirs(os.path.dirname(first))
        subprocess.run([sys.executable, "-c", SEED, first, ws], check=True,
                       env={**env, "PYTHONPATH": seed_src})  # fmt: skip
        variants: dict[str, tuple[str, str, dict[str, str]]] = {}
        for name, src, extra in (
            ("maintenance off (floor)", here, {"CLEW_MAINTENANCE": "0"}),
            ("maintenance on, not due", here, {}),
            ("maintenance on, due", here, {}),
            *([("older clew (--base-src)", args.base_src, {})] if args.base_src else []),
        ):
            db = os.path.join(tmp, name.split()[0] + str(len(variants)), "clew.db")
            os.makedirs(os.path.dirname(db))
            shutil.copy(first, db)
            variants[name] = (src, db, {**env, **extra, "PYTHONPATH": src, "CLEW_DB": db})

        def run(name: str) -> float:
            _, db, e = variants[name]
            if name.endswith(", due"):
                conn = sqlite3.connect(db)
                with contextlib.suppress(sqlite3.OperationalError):  # not migrated yet
                    conn.execute("DELETE FROM schedule WHERE key = 'maintenance'")
                    conn.commit()
                conn.close()
            t0 = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "clew", "prime"], env=e, cwd=ws,
                                  capture_output=True)  # fmt: skip
            assert done.returncode == 0, done.stderr
            return (time.perf_counter() - t0) * 1000

        for name in variants:  # warm: migrate, learn token counts
            for _ in range(3):
                run(name)
        times: dict[str, list[float]] = {name: [] for name in variants}
        names = list(variants)
        for i in range(args.runs):
            for name in names if i % 2 else names[::-1]:
                times[name].append(run(name))
        floor = statistics.median(times[names[0]])
        rows = []
        for name, ms in times.items():
            median = statistics.median(ms)
            p90 = statistics.quantiles(ms, n=10)[-1]
            rows.append([name, f"{median:.0f}", f"{p90:.0f}", f"{median / floor:.2f}x"])
        print("\n## `clew prime`, whole process (ms)\n")
        print(table(["variant", "median", "p90", "vs floor"], rows))

        sys.path.insert(0, here)
        import clew

        db = os.path.join(tmp, "waits", "clew.db")
        with clew.open(db) as mem:
            task = mem.create_task("Waits", ["a"])
            for n in range(50):
                mem.add_wait(task.id, "file", os.path.join(tmp, f"never-{n}"), poll_every=1)
            mem.check_waits()
            before = mem.journal()
            lap = []
            for _ in range(20):
                conn = sqlite3.connect(db)  # each due again, without waiting a second
                conn.execute("UPDATE schedule SET last_at = '2000-01-01T00:00:00.000000Z'")
                conn.commit()
                conn.close()
                t0 = time.perf_counter()
                checked = mem.check_waits()
                lap.append((time.perf_counter() - t0) * 1000)
                assert len(checked) == 50
            grew = len(mem.journal()) - len(before)
        print("\n## Polling 50 file waits that see nothing new\n")
        print(table(
            ["figure", "value"],
            [["one round (50 polls), median ms", f"{statistics.median(lap):.1f}"],
             ["per poll, µs", f"{statistics.median(lap) * 1000 / 50:.0f}"],
             ["journal events written by 1,000 unchanged polls", grew]],
        ))  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
