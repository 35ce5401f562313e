"""What searching the outline (task names, goals, plan steps, final answers, patterns,
guardrails) costs, before and after its search index (migration 26), on stores of 2,000 and
20,000 tasks.

    python benchmarks/bench_outline.py --before REV         # 2,000 and 20,000 tasks
    python benchmarks/bench_outline.py --before REV --after REV2  # two commits
    python benchmarks/bench_outline.py --before REV --quick # 500 tasks, a few rounds
    python benchmarks/bench_outline.py --before REV --postgres URL  # on PostgreSQL

Each store is built once by the `--before` commit's clew (checked out in a temporary git
worktree) through its public API: tasks of five steps with goals, issues on some steps,
step summaries, answers on a third, 1% of tasks holding a rare word, a pattern and a
guardrail every tenth task. The after side opens a copy, which migrates it (the time of
that backfill is reported). Then two worker processes, one per side, take turns question by
question (the first of the pair alternating) so that machine noise hits both alike; each
sample is one `search_all` in keyword mode, its wall and CPU time (the worker's own
process time). Writes are sampled the same way: `create_task` with five steps and a goal.
Stdlib and clew only; a script, not a timed test.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from common import header, pct, table

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = (
    "which registry did we pick?",
    "why did the deploy to staging fail?",
    "zero downtime rollout",
    "what is blocking the release?",
    "flaky test shard",
    "rotate the api keys",
    "lock timeout in the orders migration",
    "quetzal",  # the rare word: 1% of the tasks
)
OUTLINE = ("task", "goal", "step", "answer", "pattern", "guardrail")

# What a worker runs: build a store, or answer "search" / "write" lines with timings.
WORKER = r"""
import json, random, sys, time
import clew
from clew.models import OUTLINE_KINDS

VERBS = ["Deploy", "Build", "Test", "Migrate", "Backfill", "Rotate", "Publish", "Review",
         "Fix", "Profile", "Upgrade", "Document"]
THINGS = ["the staging cluster", "the api keys", "the orders table", "the release image",
          "the flaky test shard", "the registry mirror", "the billing service",
          "the search index", "the web frontend", "the docs site", "the payment gateway",
          "the auth tokens", "the nightly job", "the cache layer", "the mobile app"]
ISSUES = ["lock timeout on orders_p004", "registry rate-limits pulls", "shard 7 flaky again",
          "certificate expired", "disk full on the runner", "OOM in the worker pool"]

def build(db, tasks, seed):
    rng = random.Random(seed)
    with clew.open(db) as mem:
        for i in range(tasks):
            rare = " quetzal" if i % 100 == 0 else ""
            name = f"{rng.choice(VERBS)} {rng.choice(THINGS)}{rare} #{i}"
            steps = [f"{rng.choice(VERBS)} {rng.choice(THINGS)}" for _ in range(5)]
            goal = f"{rng.choice(THINGS)} works with zero downtime, release {i % 40}"
            task = mem.create_task(name, steps, goal=goal)
            mem.update_task(task.id, step=1, step_status="completed",
                            step_summary=f"done: {rng.choice(THINGS)} checked")
            if i % 4 == 0:
                mem.update_task(task.id, step=2, step_status="active",
                                active_issue=rng.choice(ISSUES))
            if i % 3 == 0:
                mem.set_task_record(task.id, answer=f"Shipped {rng.choice(THINGS)}; "
                                    f"{rng.choice(ISSUES)} was worked around")
            if i % 10 == 0:
                mem.add_pattern("ops", f"{rng.choice(VERBS)} {rng.choice(THINGS)} safely",
                                description=f"avoid {rng.choice(ISSUES)}")
                mem.add_guardrail(f"never {rng.choice(VERBS).lower()} {rng.choice(THINGS)}"
                                  " without review")

def serve(db, questions, outline):
    started = time.perf_counter()
    mem = clew.open(db)
    print(json.dumps({"opened": time.perf_counter() - started}), flush=True)
    kinds = {"every kind": None, "outline only": list(outline)}
    for q in questions:  # warm: pages cached, modules imported
        for k in kinds.values():
            mem.search_all(q, kinds=k, mode="keyword")
    n = 0
    for line in sys.stdin:
        op, _, arg = line.strip().partition(" ")
        w0, c0 = time.perf_counter(), time.process_time()
        if op == "search":
            name, _, q = arg.partition("|")
            mem.search_all(q, kinds=kinds[name], mode="keyword")
        else:
            n += 1
            mem.create_task(f"Write sample {n}", [f"step {j}" for j in range(5)],
                            goal="measure the write path")
        print(json.dumps([time.perf_counter() - w0, time.process_time() - c0]), flush=True)
    mem.close()

if __name__ == "__main__":
    if sys.argv[1] == "build":
        build(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        serve(sys.argv[2], json.loads(sys.argv[3]), json.loads(sys.argv[4]))
"""


def _env(src: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(src), "CLEW_WORKER": "off",
            "CLEW_MAINTENANCE": "off"}  # fmt: skip


def _worker(src: Path, script: Path, db: str) -> tuple[subprocess.Popen[str], float]:
    proc = subprocess.Popen(
        [sys.executable, str(script), "serve", db, json.dumps(QUESTIONS), json.dumps(OUTLINE)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=_env(src),
    )  # fmt: skip
    assert proc.stdout is not None
    opened = json.loads(proc.stdout.readline())["opened"]
    return proc, float(opened)


def _ask(proc: subprocess.Popen[str], line: str) -> tuple[float, float]:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(line + "\n")
    proc.stdin.flush()
    wall, cpu = json.loads(proc.stdout.readline())
    return wall * 1000, cpu * 1000


def _databases(server: str, tasks: int) -> tuple[str, str]:
    """Two PostgreSQL databases' URLs on `server`, made empty: the before side's, and the
    after side's name (made from it by `_copy`)."""
    import psycopg

    names = [f"clew_outline_{side}_{tasks}" for side in ("before", "after")]
    with psycopg.connect(server, autocommit=True) as admin:
        for name in names:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {names[0]}")
    base = server.rsplit("/", 1)[0]
    return f"{base}/{names[0]}", f"{base}/{names[1]}"


def _copy(server: str, old: str, new: str) -> None:
    import psycopg

    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {new.rsplit('/', 1)[1]} TEMPLATE {old.rsplit('/', 1)[1]}")


def _drop(server: str, *urls: str) -> None:
    import psycopg

    with psycopg.connect(server, autocommit=True) as admin:
        for url in urls:
            admin.execute(f"DROP DATABASE IF EXISTS {url.rsplit('/', 1)[1]} WITH (FORCE)")


def measure(
    tasks: int, before: Path, after: Path, rounds: int, scratch: Path, server: str | None = None
) -> list[list[str]]:
    script = scratch / "worker.py"
    script.write_text(WORKER)
    if server is None:
        old, new = str(scratch / f"before-{tasks}.db"), str(scratch / f"after-{tasks}.db")
    else:
        old, new = _databases(server, tasks)
    subprocess.run([sys.executable, str(script), "build", old, str(tasks), "25"],
                   check=True, env=_env(before / "src"))  # fmt: skip
    if server is None:
        shutil.copy(old, new)
    else:
        _copy(server, old, new)
    sides = {"before": _worker(before / "src", script, old),
             "after": _worker(after / "src", script, new)}  # fmt: skip
    lines = [f"search {name}|{q}" for name in ("every kind", "outline only") for q in QUESTIONS]
    samples: dict[tuple[str, str], list[tuple[float, float]]] = {}
    rng = random.Random(7)
    order = ["before", "after"]
    for r in range(rounds):
        todo = [*lines, "write"]
        rng.shuffle(todo)
        for line in todo:
            for side in order if r % 2 else order[::-1]:
                what = "write" if line == "write" else line.split("|")[0].removeprefix("search ")
                samples.setdefault((what, side), []).append(_ask(sides[side][0], line))
            order.reverse()
    for proc, _ in sides.values():
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait()
    if server is not None:
        _drop(server, old, new)
    rows = []
    for what in ("every kind", "outline only", "write"):
        b, a = samples[(what, "before")], samples[(what, "after")]
        cells = [f"{tasks:,}", f"search_all, {what}" if what != "write" else "create_task",
                 str(len(a))]  # fmt: skip
        for got in (b, a):
            walls, cpus = [s[0] for s in got], [s[1] for s in got]
            cells += [f"{pct(walls, 50):.2f}", f"{pct(walls, 95):.2f}", f"{pct(cpus, 50):.2f}"]
        rows.append(cells)
    rows.append([f"{tasks:,}", "open (after: migration 26's backfill)", "1",
                 f"{sides['before'][1] * 1000:.0f}", "", "", f"{sides['after'][1] * 1000:.0f}",
                 "", ""])  # fmt: skip
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", required=True, help="the commit before the index")
    parser.add_argument("--after", help="the commit with it (default: this tree)")
    parser.add_argument("--sizes", default="2000,20000")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--postgres", metavar="URL",
                        help="a PostgreSQL server (a database URL whose role may create"
                        " databases): measure there instead of SQLite")  # fmt: skip
    args = parser.parse_args()
    sizes = [500] if args.quick else [int(s) for s in args.sizes.split(",")]
    rounds = 2 if args.quick else args.rounds
    header("Search of the outline, before and after its index", ("before", args.before),
           ("after", args.after or "this tree"),
           ("store", "PostgreSQL" if args.postgres else "SQLite"))  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="clew-outline-") as tmp:
        scratch = Path(tmp)
        before = scratch / "before"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(before),
                        args.before], check=True, capture_output=True)  # fmt: skip
        after = ROOT
        if args.after:
            after = scratch / "after"
            subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(after),
                            args.after], check=True, capture_output=True)  # fmt: skip
        try:
            rows = []
            for tasks in sizes:
                rows += measure(tasks, before, after, rounds, scratch, args.postgres)
        finally:
            for tree in {before, after} - {ROOT}:
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                                str(tree)], check=False, capture_output=True)  # fmt: skip
    print(
        table(
            ["tasks", "operation", "samples", "before wall p50 ms", "before wall p95",
             "before CPU p50", "after wall p50 ms", "after wall p95", "after CPU p50"],
            rows,
        )
    )  # fmt: skip


if __name__ == "__main__":
    main()
