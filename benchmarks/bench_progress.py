"""Benchmark progress inference and stuck detection: how well, and what they cost.

Prints markdown tables; a script, not a timed test:

    python benchmarks/bench_progress.py

1. The labelled set (`benchmarks/data/progress_messages.json`: 75 messages written the way
   agents write them, 44 completions among them, 39 messages that complete nothing) read by
   three rules: the original `infer_plan_progress` (a completion word anywhere and half the
   step's words), the rule clew had before (the same, with negations next to the word, step
   numbers, and two shared words), and `clew.tasks.progress.infer` (clause by clause). Counted per
   (message, step): precision, recall, and false completions on the negative messages; for
   clew's rule also what `progress = "apply"` would apply.
2. What each rule costs per message.
3. What stuck detection adds to the reads that run it (`Memory.state`, `Memory.where`) and to
   recording a failed command (which may post an alert), on a task with 2,000 commands (each
   with 20 KB of output) and 500 messages, with detection on and off, alternating.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "src"))

import clew  # noqa: E402
from clew.tasks.progress import _infer, _read, to_apply  # noqa: E402
from common import alternating_ms, header, pct, table  # noqa: E402

Rule = Callable[[Sequence[str], str], set[int]]


def seed_rule(plan: Sequence[str], text: str) -> set[int]:
    """Seed 001's heuristic, as written there."""
    completed = set()
    content = text.lower()
    for i, step in enumerate(plan):
        if any(signal in content for signal in ["done", "completed", "finished", "✓"]):
            words = set(step.lower().split()) - {"the", "a", "an", "to", "and", "or"}
            overlap = words & set(content.split())
            if len(overlap) >= len(words) * 0.5:
                completed.add(i + 1)
    return completed


_SIGNALS = frozenset({"done", "completed", "complete", "finished", "✓", "✔", "succeeded"})
_NEGATIONS = frozenset({"not", "never", "isn't", "wasn't", "haven't", "hasn't", "no"})
_STOP = frozenset({"the", "a", "an", "to", "and", "or", "of", "in", "on", "for", "with"})
_WORD = re.compile(r"[\w'✓✔]+")
_STEP = re.compile(r"\bstep\s*#?(\d+)\b", re.IGNORECASE)


def previous_rule(plan: Sequence[str], text: str) -> set[int]:
    """clew's rule before this one (brief.infer_completed, for one message)."""
    words = _WORD.findall(text.lower())
    if not any(w in _SIGNALS and (i == 0 or words[i - 1] not in _NEGATIONS)
               for i, w in enumerate(words)):  # fmt: skip
        return set()
    named = {int(n) for n in _STEP.findall(text)}
    present = set(words)
    found = set()
    for number, title in enumerate(plan, 1):
        title_words = set(_WORD.findall(title.lower())) - _STOP
        if named:
            hit = number in named
        else:
            need = max(0.5 * len(title_words), min(2, len(title_words)))
            hit = bool(title_words) and len(title_words & present) >= need
        if hit:
            found.add(number)
    return found


def clew_rule(plan: Sequence[str], text: str) -> set[int]:
    return set(_read(tuple(plan), text))  # uncached: the Memory's cache would hide the cost


def apply_rule(plan: Sequence[str], text: str) -> set[int]:
    items = [
        clew.PlanItem(f"s{n}", "d", "t", n, t, clew.StepStatus.PENDING, None, None, None, None,
                      None, (), False, "x", "x")
        for n, t in enumerate(plan, 1)
    ]  # fmt: skip
    _infer.cache_clear()
    return {int(step.id[1:]) for step, _ in to_apply(items, text)}


def accuracy(rules: dict[str, Rule]) -> None:
    data = json.loads((HERE / "data" / "progress_messages.json").read_text(encoding="utf-8"))
    cases = data["cases"]
    rows = []
    for name, rule in rules.items():
        tp = fp = fn = bad_negatives = 0
        for case in cases:
            got, want = rule(data["plans"][case["plan"]], case["message"]), set(case["done"])
            tp, fp, fn = tp + len(got & want), fp + len(got - want), fn + len(want - got)
            bad_negatives += bool(got) and not want
        negatives = sum(1 for c in cases if not c["done"])
        rows.append([
            name, f"{tp / (tp + fp):.3f}" if tp + fp else "-", f"{tp / (tp + fn):.3f}",
            tp, fp, fn, f"{bad_negatives} of {negatives}",
        ])  # fmt: skip
    print(f"\n## The labelled set ({len(cases)} messages)\n")
    print(table(["rule", "precision", "recall", "right", "invented", "missed",
                 "negative messages read as done"], rows))  # fmt: skip

    print("\n## Cost per message\n")
    texts = [(data["plans"][c["plan"]], c["message"]) for c in cases]
    rows = []
    for name, rule in rules.items():
        t0 = time.perf_counter()
        for _ in range(20):
            for plan, text in texts:
                rule(plan, text)
        rows.append([name, f"{(time.perf_counter() - t0) / (20 * len(texts)) * 1e6:.1f}"])
    print(table(["rule", "µs per message"], rows))


def stuck_cost() -> None:
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "bench.db"
        with clew.open(db) as mem:
            mem.settings = mem.settings._replace(worker="off")
            task = mem.create_task("Long", [f"Step {n}" for n in range(1, 41)])
            mem.update_task(task.id, step=1, step_status="active")
            out = "x" * 20_000
            for n in range(2000):
                mem.record_action(task.id, command=f"make target{n % 7}", exit_code=0, stdout=out)
                if n % 4 == 0:
                    mem.add_message(task.id, f"progress note {n}")
            on = mem.settings
            off = on._replace(stuck=on.stuck._replace(enabled=False))

            def reading(fn: Callable[[], object]) -> tuple[list[float], list[float]]:
                def run(settings: object) -> Callable[[int], object]:
                    def go(_: int) -> object:
                        mem.settings = settings  # type: ignore[assignment]
                        return fn()

                    return go

                return alternating_ms(run(on), run(off), runs=100, warm=10)

            rows = []
            for name, fn in (
                ("Memory.state (budget 1500)", lambda: mem.state(task.id)),
                ("Memory.where", lambda: mem.where(task.id)),
            ):
                with_ms, without_ms = reading(fn)
                rows.append([name, f"{pct(with_ms, 50):.2f}", f"{pct(without_ms, 50):.2f}",
                             f"{pct(with_ms, 50) - pct(without_ms, 50):+.2f}"])  # fmt: skip

            def fail(settings: object) -> Callable[[int], object]:
                def go(i: int) -> object:
                    mem.settings = settings  # type: ignore[assignment]
                    return mem.record_action(
                        task.id, command="pytest -x", exit_code=1,
                        stderr=f"E   AssertionError: assert {i} == 0\n",
                    )  # fmt: skip

                return go

            with_ms, without_ms = alternating_ms(fail(on), fail(off), runs=100, warm=10)
            rows.append(["record a failed command (repeats, alert due)", f"{pct(with_ms, 50):.2f}",
                         f"{pct(without_ms, 50):.2f}",
                         f"{pct(with_ms, 50) - pct(without_ms, 50):+.2f}"])  # fmt: skip
            mem.settings = on
            stuck = mem.stuck(task.id)
    print("\n## What stuck detection costs (2,000 commands of 20 KB, 500 messages)\n")
    print(table(["call", "p50 ms, detection on", "p50 ms, off", "difference"], rows))
    print(f"\nAt the end the task is stuck for: {', '.join(c.reason for c in stuck) or 'nothing'}")


def main() -> None:
    header("Progress inference and stuck detection")
    accuracy({
        "the original rule": seed_rule, "clew's previous rule": previous_rule,
        "clew.tasks.progress.infer (suggest)": clew_rule, "clew.tasks.progress (apply)": apply_rule,
    })  # fmt: skip
    stuck_cost()


if __name__ == "__main__":
    main()
