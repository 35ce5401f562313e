"""The continuity benchmark: can an agent get back exactly where it was?

    python benchmarks/continuity/run.py               # 30 tasks, seed 11 (a few minutes)
    python benchmarks/continuity/run.py --tasks 5     # a quick look
    python benchmarks/continuity/run.py --show-failures

Thirty scripted long tasks (deploys, migrations, debugging sessions, flaky tests,
pipelines, research, refactors; 20-200 steps) are driven through clew's public API with
the extraction jobs on (no model: the rules run) and interrupted at scripted points by a
compaction, a process restart, or a SIGKILL mid-write. After each, the brief and the
state (1,800 tokens together at most) are scored against the script's ground truth:
every completed step, the current and next step, every open error (and no resolved one
as open, and no failure twice), every live constraint, the latest decision on each topic
(and no reversed one), every pending question and every pending wait.

Prints markdown tables: per field, per interruption kind, and the share of interruptions
where every check passes.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.continuity import drive, score
from benchmarks.continuity.script import generate

FIELDS = (*score.FIELDS, "acked")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=30)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--show-failures", action="store_true")
    args = parser.parse_args()
    drive.os.environ.update(drive.environment())
    started = time.perf_counter()
    outcomes: list[drive.Outcome] = []
    steps = []
    with tempfile.TemporaryDirectory() as tmp:
        for index in range(args.tasks):
            script = generate(args.seed, index)
            steps.append(script.steps)
            found = drive.run(script, str(Path(tmp) / f"task{index}.db"))
            outcomes += found
            print(
                f"task {index:2} {script.kind:12} {script.steps:3} steps {len(script.ops):5} ops "
                f"{len(found):2} interruptions, all right: "
                f"{sum(all(v is not False for v in o.checks.values()) for o in found)}",
                file=sys.stderr,
            )
    seconds = time.perf_counter() - started
    print(f"\n{args.tasks} tasks (seed {args.seed}), {min(steps)}-{max(steps)} steps, "
          f"{len(outcomes)} interruptions, {seconds:.0f} s\n")  # fmt: skip
    print("| check | right | checked | share |")
    print("|---|---:|---:|---:|")
    for field in FIELDS:
        values = [o.checks.get(field) for o in outcomes]
        checked = [v for v in values if v is not None]
        right = sum(1 for v in checked if v)
        share = f"{100 * right / len(checked):.1f}%" if checked else "-"
        print(f"| {field} | {right} | {len(checked)} | {share} |")
    print("\n| interruption | count | every check right | tokens (max) |")
    print("|---|---:|---:|---:|")
    kinds: dict[str, list[drive.Outcome]] = defaultdict(list)
    for o in outcomes:
        kinds[o.kind].append(o)
    for kind in ("compaction", "restart", "sigkill"):
        group = kinds.get(kind, [])
        good = sum(all(v is not False for v in o.checks.values()) for o in group)
        share = f"{100 * good / len(group):.1f}%" if group else "-"
        most = max((o.tokens for o in group), default=0)
        print(f"| {kind} | {len(group)} | {good} ({share}) | {most} |")
    good = sum(all(v is not False for v in o.checks.values()) for o in outcomes)
    print(f"| all | {len(outcomes)} | {good} ({100 * good / max(1, len(outcomes)):.1f}%) | "
          f"{max((o.tokens for o in outcomes), default=0)} |")  # fmt: skip
    if args.show_failures:
        for o in outcomes:
            if o.detail:
                wrong = [k for k, v in o.checks.items() if v is False]
                print(f"\ntask {o.task} op {o.at} ({o.kind}) wrong: {wrong}\n{o.detail}")


if __name__ == "__main__":
    main()
