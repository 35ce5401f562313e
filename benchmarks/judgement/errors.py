"""Score clew's error judgement on `data/errors.jsonl` (written by errors_cases.py): does it
resolve only what it may (its own extracted copy of a failed command, on a pass of that same
command in the same task), and add evidence where the agent must judge?

    python benchmarks/judgement/errors.py

Each case is a short history driven through the public API in a task of its own (a second
task where the history says so), in one store: commands recorded with `record_action`,
errors with `add_error`, clew's copies made by ending the step and running the extraction
job, `keep_open` where the agent keeps an error open. Kinds:

- `auto_resolve`: clew resolved error E (predicted) against "should clew have resolved E?";
  precision must be 1.0 (the issue's floor), recall is reported.
- `evidence`: E is open with evidence of a passing run, against "should E carry evidence?".

Each kind is scored on the whole set, and again on its held-out part alone. An earlier clew
without `keep_open` is driven the way an agent spoke then (it says it leaves the error open
in a message), and one without evidence is scored as adding none.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "errors.jsonl"
STEPS = 8  # a case's task has this many steps; each extraction ends one


def cases() -> list[dict[str, Any]]:
    """The labelled histories."""
    return [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]


@contextmanager
def _quiet_env() -> Iterator[None]:
    """No worker thread (jobs run when the scorer says), no maintenance, no user config."""
    saved = dict(os.environ)
    with tempfile.TemporaryDirectory() as home:
        os.environ.update(CLEW_WORKER="off", CLEW_MAINTENANCE="off", XDG_CONFIG_HOME=home)
        try:
            yield
        finally:
            os.environ.clear()
            os.environ.update(saved)


class _Run:
    """One case's tasks in a shared store."""

    def __init__(self, mem: Any, case: dict[str, Any]) -> None:
        self.mem = mem
        self.tasks: dict[int, str] = {}
        self.step: dict[int, int] = {}
        self.runs: list[str] = []
        self.keys: dict[str, str] = {}
        self.case = case

    def task(self, n: int) -> str:
        if n not in self.tasks:
            plan = [f"Step {i}" for i in range(1, STEPS + 1)]
            self.tasks[n] = self.mem.create_task(f"{self.case['id']} task {n}", plan).id
            self.step[n] = 1
            self.mem.update_step(self.tasks[n], 1, status="active")
        return self.tasks[n]

    def do(self, op: dict[str, Any]) -> None:
        mem, kind = self.mem, op["op"]
        if kind == "run":
            tid = self.task(op["task"])
            action = mem.record_action(
                tid, command=op["command"], exit_code=op["exit"], step=self.step[op["task"]],
                stdout=op.get("stdout"), stderr=op.get("stderr"), duration_seconds=1.0,
            )  # fmt: skip
            self.runs.append(action.id)
        elif kind == "message":
            mem.add_message(self.task(op["task"]), op["text"])
        elif kind == "error":
            tid = self.task(op["task"])
            extra: dict[str, Any] = {}
            if op.get("keep_open"):
                if hasattr(mem, "keep_open"):
                    extra["keep_open"] = True
                else:  # before keep_open, an agent could only say so
                    mem.add_message(tid, "Leaving this error open until I have checked it.")
            made = mem.add_error(tid, op["text"], command=op.get("command"), **extra)
            self.keys[op["key"]] = made.id
        elif kind == "extract":
            tid = self.task(1)
            step = self.step[1]
            mem.update_step(tid, step, status="failed")
            mem.run_jobs()
            self.step[1] = step + 1
            mem.update_step(tid, step + 1, status="active")
            run = self.runs[op["run"]]
            copies = [
                e for e in mem.list_entries(tid, type="error") if ("action", run) in e.sources
            ]
            if not copies:
                raise RuntimeError(f"case {self.case['id']}: no extracted copy of run {op['run']}")
            self.keys[op["key"]] = copies[0].id
        elif kind == "keep_open":
            if hasattr(mem, "keep_open"):
                mem.keep_open(self.keys[op["key"]])
            else:
                mem.add_message(self.task(1), "Leaving this error open until I have checked it.")
        else:
            raise ValueError(f"unknown op {kind!r}")

    def verdict(self) -> tuple[bool, bool]:
        """(clew resolved E, E is open with evidence)."""
        entry = self.mem.get_entry(self.keys[self.case["error"]])
        resolved = entry.status.value == "resolved"
        evidence = bool(getattr(entry, "evidence", ())) and entry.status.value == "active"
        return resolved, evidence


def judge(rows: list[dict[str, Any]]) -> list[tuple[dict[str, Any], bool, bool]]:
    """Each case with what clew did: (case, resolved, evidence)."""
    import clew

    out = []
    with _quiet_env(), tempfile.TemporaryDirectory() as folder:
        mem = clew.open(os.path.join(folder, "errors.db"))
        try:
            for case in rows:
                run = _Run(mem, case)
                for op in case["history"]:
                    run.do(op)
                out.append((case, *run.verdict()))
        finally:
            mem.close()
    return out


def _row(kind: str, pairs: list[tuple[bool, bool]]) -> dict[str, Any]:
    """Precision and recall of predictions against labels: (predicted, wanted) pairs."""
    tp = sum(1 for p, w in pairs if p and w)
    fp = sum(1 for p, w in pairs if p and not w)
    fn = sum(1 for p, w in pairs if w and not p)
    return {
        "kind": kind, "cases": len(pairs), "tp": tp, "fp": fp, "fn": fn,
        # Nothing predicted: right only if there was nothing to find.
        "precision": tp / (tp + fp) if tp + fp else float(tp + fn == 0),
        "recall": tp / (tp + fn) if tp + fn else 1.0,
    }  # fmt: skip


def score() -> list[dict[str, Any]]:
    """One row per kind, on the whole set and on its held-out part."""
    done = judge(cases())
    rows = []
    for part, label in (("", None), (" (held-out)", "held_out")):
        chosen = [d for d in done if label is None or d[0]["split"] == label]
        rows.append(_row(f"auto_resolve{part}", [(r, c["resolve"]) for c, r, _ in chosen]))
        rows.append(_row(f"evidence{part}", [(e, c["evidence"]) for c, _, e in chosen]))
    return rows


def mistakes() -> list[str]:
    """The cases clew gets wrong, one line each (for reading, not for the table)."""
    out = []
    for case, resolved, evidence in judge(cases()):
        if resolved != case["resolve"] or evidence != case["evidence"]:
            out.append(
                f"{case['id']} {case['family']} / {case['variant']}: resolved {resolved}"
                f" (want {case['resolve']}), evidence {evidence} (want {case['evidence']})"
            )
    return out


def main() -> int:
    rows = score()
    print("| kind | cases | tp | fp | fn | precision | recall |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['kind']} | {r['cases']} | {r['tp']} | {r['fp']} | {r['fn']}"
              f" | {r['precision']:.3f} | {r['recall']:.3f} |")  # fmt: skip
    if "--mistakes" in sys.argv:
        print("\n".join(mistakes()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
