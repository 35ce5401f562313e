"""A restructuring's two promises, checked against an earlier commit: no slower on the write
path, `open` and `prime`, and the same outputs on the continuity and retrieval benchmarks
(issue 26 point 9). A script, not a timed test:

    python benchmarks/bench_same.py                      # this tree against main
    python benchmarks/bench_same.py --against REV --runs 20
    python benchmarks/bench_same.py --outputs            # also diff the benchmarks' outputs

Each side runs in a long-lived child process whose `sys.path` starts with that side's `src`
(the earlier commit checked out in a temporary git worktree), so both sides do the same work
through the same public API on the same kind of SQLite file. The parent asks the sides for
one sample each in turn, the order rotating every step, so that a busy machine slows both
alike; each sample reports its wall and its process CPU time (CPU is the steadier figure on
a shared machine). The outputs are compared line by line, the lines that report a time left
out.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common import header, pct, table

ROOT = Path(__file__).resolve().parents[1]

# The child: reads one workload name a line, answers one JSON line of its wall and CPU ms.
CHILD = r"""
import json, os, resource, subprocess, sys, tempfile, time
import clew

OPS = int(os.environ["SAME_OPS"])
PLAN = ["Read the code", "Write the change", "Run the tests", "Review", "Ship"]


def write(root):
    mem = clew.open(os.path.join(root, "w.db"))
    try:
        task = mem.create_task("Bench the write path", PLAN, goal="measure")
        for i in range(OPS):
            kind = i % 4
            if kind == 0:
                mem.add_message(task.id, f"Step note {i}: ran the suite, 3 failures in shard {i}")
            elif kind == 1:
                mem.add_decision(task.id, f"Use retry budget {i} for the flaky shard")
            elif kind == 2:
                mem.add_error(task.id, f"pytest -k shard{i} failed: AssertionError at line {i}")
            else:
                mem.add_finding(task.id, f"The cache key {i} misses the locale")
    finally:
        mem.close()


def filled(root):
    mem = clew.open(os.path.join(root, "p.db"))
    for t in range(3):
        task = mem.create_task(f"Task {t}", PLAN, goal=f"goal {t}", workspace="/w")
        for i in range(60):
            mem.add_message(task.id, f"Task {t} note {i}: checked shard {i} of the build")
            if i % 5 == 0:
                mem.add_decision(task.id, f"Pin dependency {i} for task {t}")
            if i % 7 == 0:
                mem.add_error(task.id, f"make shard{i} failed with exit 2 in task {t}")
    return mem


ROOTS = tempfile.mkdtemp(prefix="clew-same-")
primed = None
for line in sys.stdin:
    name = line.strip()
    if name == "prime" and primed is None:
        primed = filled(ROOTS)
    root = tempfile.mkdtemp(dir=ROOTS)
    c0, t0 = time.process_time(), time.perf_counter()
    if name == "write":
        write(root)
    elif name == "open":
        for _ in range(10):
            clew.open(os.path.join(root, "o.db")).close()
    elif name == "prime":
        for _ in range(10):
            primed.prime("/w")
    elif name == "hook":  # the command a hook runs, a fresh interpreter each time: its imports
        if primed is None:
            primed = filled(ROOTS)
        c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        c0 = c0.ru_utime + c0.ru_stime
        for _ in range(3):
            command = [sys.executable, "-m", "clew", "--db", os.path.join(ROOTS, "p.db"), "prime",
                       "--workspace", "/w"]
            subprocess.run(command, check=True, capture_output=True)
        c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        c1 = c1.ru_utime + c1.ru_stime
        t1 = time.perf_counter()
        print(json.dumps({"wall": (t1 - t0) * 1000, "cpu": (c1 - c0) * 1000}), flush=True)
        continue
    t1, c1 = time.perf_counter(), time.process_time()
    print(json.dumps({"wall": (t1 - t0) * 1000, "cpu": (c1 - c0) * 1000}), flush=True)
"""

WORKLOADS = {  # name: what one sample is
    "write": "a new store, a task and OPS writes (messages, decisions, errors, findings)",
    "open": "10 opens and closes of a new store",
    "prime": "10 primes of 3 active tasks of about 80 records each",
    "hook": "3 runs of `clew prime` in a fresh interpreter (the hook path: imports and all)",
}


class Side:
    """A child process running one tree's clew."""

    def __init__(self, src: Path, ops: int) -> None:
        env = {**os.environ, "PYTHONPATH": str(src), "SAME_OPS": str(ops)}
        env.pop("CLEW_EMBED_MODEL", None)
        self.proc = subprocess.Popen(
            [sys.executable, "-c", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            text=True, env=env, cwd=tempfile.gettempdir(),
        )  # fmt: skip

    def sample(self, name: str) -> dict[str, float]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(name + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"bench_same: a side ended during {name!r}")
        return dict(json.loads(line))

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait()


def worktree(rev: str, into: Path) -> Path:
    """`rev` checked out (detached) at `into`; its src folder."""
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(into), rev],
                   check=True)  # fmt: skip
    return into / "src"


def timings(sides: Sequence[Side], runs: int, warm: int) -> list[list[object]]:
    """Per workload and side: median and p90 of wall and CPU ms, and now / then in CPU."""
    rows: list[list[object]] = []
    for name in WORKLOADS:
        got: list[list[dict[str, float]]] = [[] for _ in sides]
        for i in range(warm + runs):
            order = [0, 1] if i % 2 else [1, 0]
            for k in order:
                sample = sides[k].sample(name)
                if i >= warm:
                    got[k].append(sample)
        cpu = [statistics.median(s["cpu"] for s in g) for g in got]
        for k, label in enumerate(("then", "now")):
            wall = [s["wall"] for s in got[k]]
            cpus = [s["cpu"] for s in got[k]]
            rows.append([
                name, label, f"{statistics.median(wall):.1f}", f"{pct(wall, 90):.1f}",
                f"{statistics.median(cpus):.1f}", f"{pct(cpus, 90):.1f}",
                f"{cpu[1] / cpu[0]:.3f}" if k == 1 else "",
            ])  # fmt: skip
    return rows


# What reports how long something took or how many tokens a random id took, not what was
# found: such lines, and such columns of a table (the tokens of a brief vary with its ids).
TIMING = re.compile(r"\b(ms|µs|wall|cpu|p\d\d|date|elapsed|tokens)\b|\d ?s$", re.I)


def _kept(lines: Sequence[str]) -> list[str]:
    """`lines` without timings: a table's timing columns are dropped, its other cells kept."""
    out: list[str] = []
    drop: set[int] = set()
    for line in lines:
        if not line.startswith("|"):
            drop = set()
            if not TIMING.search(line):
                out.append(line)
            continue
        cells = line.strip("|").split("|")
        if not drop and not set(line) <= set("|-: "):
            drop = {i for i, cell in enumerate(cells) if TIMING.search(cell)} or {-1}
        out.append("|".join(c for i, c in enumerate(cells) if i not in drop))
    return out


def outputs(src: Path, script: str, args: Sequence[str]) -> list[str]:
    """The lines a side's own benchmark script prints with that side's clew, timings left
    out: each tree's script, since a script names modules where its tree has them."""
    root = src.parent
    env = {**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{root}"}
    env.pop("CLEW_EMBED_MODEL", None)
    done = subprocess.run(
        [sys.executable, str(root / script), *args],
        cwd=root,  # a script's children import its tree's benchmarks, not this one's
        env=env,
        text=True,
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        return [f"(exit {done.returncode}) {done.stderr.strip()[-300:]}"]
    return _kept(done.stdout.splitlines())


OUTPUTS = (  # the benchmarks whose outputs must not change, and their arguments
    ("benchmarks/continuity/run.py", ["--tasks", "10"]),
    ("benchmarks/retrieval/run.py", ["--systems", "keyword"]),
)


def built_set() -> list[str]:
    """The retrieval set's store as this tree builds it, copied aside: both sides then search
    the same store. A build gives its records random ids, and the ranking breaks exact ties
    by id, so two builds can order tied records apart with the same code; and each tree's
    script keys its cache on its own text, so each would build its own."""
    outputs(ROOT / "src", "benchmarks/retrieval/run.py", ["--systems", "keyword", "--limit", "1"])
    cache = ROOT / "benchmarks" / "retrieval" / ".cache"
    built = max((p.parent for p in cache.glob("set-*/store.db")), key=lambda p: p.stat().st_mtime)
    copy = Path(tempfile.mkdtemp(prefix="clew-same-set-")) / "set"
    shutil.copytree(built, copy)
    return ["--store", str(copy)]


def compared(then: Path, script: str, extra: Sequence[str]) -> str:
    """Whether `script` prints the same with the earlier side's clew as with this tree's,
    and the first lines that differ."""
    if script == "benchmarks/retrieval/run.py":
        extra = [*extra, *built_set()]
    before, after = outputs(then, script, extra), outputs(ROOT / "src", script, extra)
    differ = [(a, b) for a, b in zip(before, after, strict=False) if a != b]
    said = f"{script} {' '.join(a for a in extra if not a.startswith(tempfile.gettempdir()))}: "
    if not differ and len(before) == len(after):
        return said + "the same"
    lines = [f"  then: {a}\n  now:  {b}" for a, b in differ[:10]]
    return "\n".join(
        [said + f"{len(differ)} lines differ ({len(before)} then, {len(after)} now)", *lines]
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", default="main", help="the commit to compare with")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--warm", type=int, default=2)
    parser.add_argument("--ops", type=int, default=200, help="writes in a write sample")
    parser.add_argument("--outputs", action="store_true", help="also diff the benchmarks' outputs")
    args = parser.parse_args()
    if args.runs < 2:
        parser.error("--runs must be at least 2 (a p90 needs two samples)")
    header(f"The same, no slower: this tree against {args.against}", ("runs", args.runs),
           ("writes a sample", args.ops))  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="clew-then-") as tmp:
        then = worktree(args.against, Path(tmp) / "then")
        try:
            sides = [Side(then, args.ops), Side(ROOT / "src", args.ops)]
            try:
                rows = timings(sides, args.runs, args.warm)
            finally:
                for side in sides:
                    side.close()
            print("\nms per sample (" + "; ".join(
                f"{k}: {v.replace('OPS', str(args.ops))}" for k, v in WORKLOADS.items()
            ) + ")\n")  # fmt: skip
            print(table(["workload", "side", "wall p50", "p90", "CPU p50", "p90",
                         "CPU now / then"], rows))  # fmt: skip
            if args.outputs:
                print()
                for script, extra in OUTPUTS:
                    print(compared(then, script, extra))
        finally:
            remove = ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(then.parent)]
            subprocess.run(remove, check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
