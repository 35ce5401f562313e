"""Benchmark the test suite itself: wall and CPU time of `pytest -n 2`, against another commit.

Prints markdown tables; a script, not a timed test:

    python benchmarks/bench_suite.py                                # this tree, once
    python benchmarks/bench_suite.py --against e768ebf --samples 2  # and a peer, in turns
    python benchmarks/bench_suite.py --against main tests/test_store.py  # a few files only

Each sample runs pytest in a child process. CPU is that process's and its descendants' (the
xdist workers, the processes the tests start) user + system time, from
getrusage(RUSAGE_CHILDREN); the PostgreSQL server's own CPU is not in it. The peer is another
commit's tests and code (exported with `git archive`, run with its `src` first on the path),
sampled in turns with this tree so that the load of a shared machine hits both alike; the
load average is printed beside every sample. CLEW_REQUIRE_POSTGRES=1 makes a missing
PostgreSQL a failure rather than a skipped half, as in CI.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from common import header, table

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Sample:
    tree: str
    wall: float
    cpu: float
    load: float
    outcome: str
    slowest: list[str]


def cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def export(ref: str, into: Path) -> Path:
    """The tests and code of commit `ref`, as files in `into`."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def run(tree: str, folder: Path, files: list[str], workers: int) -> Sample:
    """One pytest run of the suite (or `files`) in `folder`."""
    env = dict(os.environ, PYTHONPATH=f"{folder / 'src'}{os.pathsep}{folder}")
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q"]
    command += ["-n", str(workers), "--durations=10", *files]
    load = os.getloadavg()[0]
    cpu, wall = cpu_of_children(), time.perf_counter()
    done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True)
    wall, cpu = time.perf_counter() - wall, cpu_of_children() - cpu
    lines = done.stdout.splitlines()
    outcome = next((s for s in reversed(lines) if re.search(r"\d+ (passed|failed)", s)), "?")
    for line in lines:  # what failed, by name, as it happens
        if line.startswith(("FAILED", "ERROR")):
            print(f"{tree}: {line}", file=sys.stderr)
    durations = re.compile(r"^\s*[\d.]+s (call|setup|teardown)\s")
    slowest = [s for s in lines if durations.match(s)][:10]
    return Sample(tree, wall, cpu, (load + os.getloadavg()[0]) / 2, outcome.strip("= "), slowest)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", help="test files (default: the whole suite)")
    parser.add_argument("--against", metavar="REF", help="a commit to compare with")
    parser.add_argument("--samples", type=int, default=1, help="runs of each tree (default 1)")
    parser.add_argument("--workers", type=int, default=2, help="pytest -n (default 2)")
    args = parser.parse_args()
    header(
        "The test suite: wall and CPU",
        ("workers", args.workers),
        ("files", " ".join(args.files) or "all"),
        ("CLEW_REQUIRE_POSTGRES", os.environ.get("CLEW_REQUIRE_POSTGRES", "")),
    )
    with tempfile.TemporaryDirectory(prefix="clew-suite-") as scratch:
        trees = [("this tree", ROOT)]
        if args.against:
            trees.append((args.against, export(args.against, Path(scratch))))
        samples: list[Sample] = []
        for i in range(args.samples):
            for tree, folder in trees if i % 2 == 0 else trees[::-1]:
                samples.append(run(tree, folder, args.files, args.workers))
                done = samples[-1]
                print(
                    f"sample {i + 1}: {tree}: {done.wall:.0f} s wall, {done.cpu:.0f} s CPU,"
                    f" load {done.load:.1f}: {done.outcome}",
                    file=sys.stderr,
                )
    rows = [
        [
            s.tree,
            f"{s.wall:.1f}",
            f"{s.cpu:.1f}",
            f"{s.cpu / s.wall:.2f}",
            f"{s.load:.1f}",
            s.outcome,
        ]
        for s in samples
    ]
    print(table(["tree", "wall s", "CPU s", "CPU/wall", "load avg", "outcome"], rows))
    for tree, _ in trees:
        last = [s for s in samples if s.tree == tree][-1]
        print(f"\nThe ten slowest phases, {tree} (last sample):\n")
        print("\n".join(f"    {line.strip()}" for line in last.slowest))


if __name__ == "__main__":
    main()
