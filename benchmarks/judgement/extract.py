"""Score write-time extraction on its labelled set: the decisions, errors, findings and
constraints clew draws from a finished step's messages and command outputs, precision and
recall per kind (the whole set, then the held-out part apart).

    python benchmarks/judgement/extract.py            # the rules (no model)
    python benchmarks/judgement/extract.py --model    # the configured utility model

Each case of data/extract.jsonl is one step of its own task: an agent's or user's message,
or a command with its exit code and output. The step is completed through clew's public
API, its extraction job is run, and the entries it stored are compared with the case's
expected items: an entry matches an expected item of its kind whose `says` it contains
(case aside). A user instruction counts as a constraint. Entries of other kinds (the file an
artifact names, a tool result, context) are not judged here. See extract.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "extract.jsonl"
KINDS = ("decision", "error", "discovery", "constraint")
# What each kind clew stores is judged as (a user's instruction is a constraint).
JUDGED_AS = {"decision": "decision", "error": "error", "discovery": "discovery",
             "constraint": "constraint", "user_instruction": "constraint"}  # fmt: skip


def cases(part: str | None = None) -> list[dict[str, Any]]:
    """The labelled cases (one part of them if `part` is named)."""
    with DATA.open(encoding="utf-8") as handle:
        found = [json.loads(line) for line in handle if line.strip()]
    return [c for c in found if part is None or c["part"] == part]


def extracted(chosen: list[dict[str, Any]], *, model: bool = False) -> dict[str, list[Any]]:
    """What clew extracts from each case: case id -> [(kind, summary)], through a store of
    its own. With `model`, the utility model configured in the environment (or the store's
    config.toml) does the extraction; without it, the rules do."""
    import clew

    os.environ["CLEW_WORKER"] = "off"  # the jobs are run here, after every case is written
    with tempfile.TemporaryDirectory() as folder:
        mem = clew.open(Path(folder) / "extract.db", mirror=False)
        try:
            if model and mem.settings.small is None:
                raise RuntimeError(
                    "no utility model is configured (set CLEW_MODEL, CLEW_MODEL_PROVIDER and"
                    " CLEW_MODEL_URL, or [model] in config.toml)"
                )
            if not model:
                mem.settings = mem.settings._replace(small=None, large=None)
            tasks = {case["id"]: _write(mem, case) for case in chosen}
            mem.run_jobs()
            return {
                ident: [(JUDGED_AS[e.type.value], e.summary) for e in mem.list_entries(task_id)
                        if e.type.value in JUDGED_AS]
                for ident, task_id in tasks.items()
            }  # fmt: skip
        finally:
            mem.close()


def _write(mem: Any, case: dict[str, Any]) -> str:
    """A task whose one step holds the case, then completes (which queues its extraction)."""
    task = mem.create_task(f"Case {case['id']}", [case.get("step", "Do the step")])
    mem.update_task(task.id, step=1, step_status="active")
    if "command" in case:
        mem.record_action(
            task.id,
            command=case["command"],
            exit_code=case["exit_code"],
            stdout=case.get("stdout") or None,
            stderr=case.get("stderr") or None,
            status=case.get("status"),
            step=1,
        )
    else:
        mem.add_message(task.id, case["text"], role=case["role"])
    mem.update_task(task.id, step=1, step_status="completed")
    return str(task.id)


def judge(case: dict[str, Any], found: Iterable[tuple[str, str]]) -> dict[str, list[int]]:
    """Per kind: [tp, fp, fn] of one case. Each expected item is matched once."""
    counts = {kind: [0, 0, 0] for kind in KINDS}
    open_ = [dict(item) for item in case["expect"]]
    for kind, summary in found:
        match = next(
            (item for item in open_ if item["kind"] == kind
             and item.get("says", "").casefold() in summary.casefold()),
            None,
        )  # fmt: skip
        if match is None:
            counts[kind][1] += 1
        else:
            open_.remove(match)
            counts[kind][0] += 1
    for item in open_:
        counts[item["kind"]][2] += 1
    return counts


def rows(chosen: list[dict[str, Any]], found: dict[str, list[Any]], label: str = "") -> list[
    dict[str, Any]
]:  # fmt: skip
    """One row per kind over the chosen cases."""
    out = []
    for kind in KINDS:
        tp = fp = fn = 0
        for case in chosen:
            a, b, c = judge(case, found[case["id"]])[kind]
            tp, fp, fn = tp + a, fp + b, fn + c
        out.append({
            "kind": f"{kind}{label}",
            "cases": sum(any(i["kind"] == kind for i in c["expect"]) for c in chosen),
            "tp": tp, "fp": fp, "fn": fn,
            "precision": tp / (tp + fp) if tp + fp else 1.0,
            "recall": tp / (tp + fn) if tp + fn else 1.0,
        })  # fmt: skip
    return out


def score(*, model: bool = False) -> list[dict[str, Any]]:
    """Rows per kind on the whole set, then on its held-out part (`kind, held out`) and the
    parts written after the rules (`kind, fresh`, `kind, blind`); see extract.md.
    A kind nothing was extracted as has precision 1.0 (it said nothing wrong)."""
    everything = cases()
    found = extracted(everything, model=model)
    held = [c for c in everything if c["part"] == "held_out"]
    out = rows(everything, found) + rows(held, found, ", held out")
    for part in ("fresh", "blind"):
        out += rows([c for c in everything if c["part"] == part], found, f", {part}")
    return out


def mistakes(*, model: bool = False) -> list[str]:
    """Each case where what was extracted differs from what was expected, one line each."""
    everything = cases()
    found = extracted(everything, model=model)
    lines = []
    for case in everything:
        counts = judge(case, found[case["id"]])
        if any(fp or fn for _, fp, fn in counts.values()):
            said = case.get("text") or f"$ {case['command']} (exit {case['exit_code']})"
            lines.append(f"{case['id']}: {said[:100]!r} expected {case['expect']}"
                         f" got {found[case['id']]}")  # fmt: skip
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", action="store_true", help="score the configured model")
    parser.add_argument("--mistakes", action="store_true", help="list the cases it got wrong")
    args = parser.parse_args()
    try:
        if args.mistakes:
            print("\n".join(mistakes(model=args.model)))
            return 0
        table = score(model=args.model)
    except RuntimeError as exc:
        print(exc, file=sys.stderr)
        return 2
    print("| kind | cases | tp | fp | fn | precision | recall |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for row in table:
        print(f"| {row['kind']} | {row['cases']} | {row['tp']} | {row['fp']} | {row['fn']}"
              f" | {row['precision']:.3f} | {row['recall']:.3f} |")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
