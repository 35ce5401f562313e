"""Score progress read from messages (issue 25, must-have 3): which steps a message makes
done (applied) and which it only suggests, against `data/progress.jsonl`.

Each case is a plan and one message, labelled with the steps it states are done
(`applied`: named by number or exact title, with a completion word) and the steps it says
are done less plainly (`suggested`). Every case is read through clew's public API with its
default configuration, as an agent meets it: a task with the plan, then `add_message`; the
steps whose status became completed were applied, and the brief's `suggestions` are what
was suggested. So an earlier commit is measured by what its default did.

Kinds, counted per (message, step):

- `applied`: a step completed from the message; right when labelled `applied`.
- `suggested`: a step the brief suggests; right when labelled `suggested`, wrong when the
  message does not say it is done (neither label); a step labelled `applied` and only
  suggested counts neither way here (it is an `applied` miss: timid, not invented). Missed
  when labelled `suggested` and neither applied nor suggested.
- `shown done`: applied or suggested at all, against either label: what the brief says.

Each kind is reported for the whole set, for its held-out part (`/held-out`: written before
any rule ran on it, never looked at while tuning) and for the first held-out part
(`/held-out-1`: its first run is recorded in progress.md; its misses were looked at since).

    python benchmarks/judgement/progress.py
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data" / "progress.jsonl"
KINDS = ("applied", "suggested", "shown done")
PARTS = ("all", "held-out", "held-out-1")


def cases() -> list[dict[str, Any]]:
    """The labelled set, one case per line."""
    lines = DATA.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def outcomes(items: list[dict[str, Any]]) -> Iterator[tuple[dict[str, Any], set[int], set[int]]]:
    """Each case with the steps clew applied and suggested, its defaults in force."""
    os.environ.pop("CLEW_PROGRESS", None)  # the default is what is judged
    os.environ.setdefault("CLEW_WORKER", "off")
    os.environ.setdefault("CLEW_MAINTENANCE", "off")
    import clew

    with tempfile.TemporaryDirectory() as folder, clew.open(Path(folder) / "clew.db") as mem:
        if not hasattr(mem, "where"):
            raise RuntimeError("this clew has no brief (Memory.where) to read suggestions from")
        for case in items:
            task = mem.create_task(case["id"], case["plan"])
            mem.add_message(task.id, case["message"])
            done = mem.get_task(task.id).plan
            applied = {n for n, s in enumerate(done, 1) if s.status.value == "completed"}
            suggested = {s.step for s in mem.where(task.id).suggestions} - applied
            yield case, applied, suggested


def _row(kind: str, n: int, tp: int, fp: int, fn: int) -> dict[str, Any]:
    return {
        "kind": kind,
        "cases": n,
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "precision": round(tp / (tp + fp), 4) if tp + fp else 1.0,
        "recall": round(tp / (tp + fn), 4) if tp + fn else 1.0,
    }


def score(items: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """One row per kind, for the whole set and for each held-out part."""
    counts = {(k, part): [0, 0, 0, 0] for k in KINDS for part in PARTS}
    for case, applied, suggested in outcomes(cases() if items is None else items):
        want_a, want_s = set(case["applied"]), set(case["suggested"])
        said = want_a | want_s
        got = applied | suggested
        found = {
            "applied": (applied & want_a, applied - want_a, want_a - applied),
            "suggested": (suggested & want_s, suggested - said, want_s - got),
            "shown done": (got & said, got - said, said - got),
        }
        for part in ("all", case["split"]):
            if part not in PARTS:
                continue
            for kind, (tp, fp, fn) in found.items():
                c = counts[(kind, part)]
                c[0] += 1
                c[1] += len(tp)
                c[2] += len(fp)
                c[3] += len(fn)
    return [
        _row(kind if part == "all" else f"{kind}/{part}", *counts[(kind, part)])
        for part in PARTS
        for kind in KINDS
    ]


def misses(items: list[dict[str, Any]] | None = None) -> Iterator[str]:
    """The cases clew reads otherwise than labelled, one line each (for looking, not scoring)."""
    for case, applied, suggested in outcomes(cases() if items is None else items):
        if applied != set(case["applied"]) or not suggested <= set(case["applied"]) | set(
            case["suggested"]
        ):
            yield (
                f"{case['id']} applied {sorted(applied)} (want {case['applied']}), suggested"
                f" {sorted(suggested)} (want {case['suggested']}): {case['message']!r}"
            )


if __name__ == "__main__":
    import sys

    if "--misses" in sys.argv:
        split = sys.argv[sys.argv.index("--misses") + 1] if len(sys.argv) > 2 else "tuning"
        for line in misses([c for c in cases() if c["split"] == split]):
            print(line)
        raise SystemExit(0)
    print("| kind | cases | tp | fp | fn | precision | recall |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in score():
        print(
            f"| {r['kind']} | {r['cases']} | {r['tp']} | {r['fp']} | {r['fn']} |"
            f" {r['precision']:.3f} | {r['recall']:.3f} |"
        )
