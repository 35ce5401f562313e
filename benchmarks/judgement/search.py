"""Score the search judgement set (data/search.jsonl; search.md says where it comes from):
for each case a small store built through clew's API, one question, the record expected.

    python benchmarks/judgement/search.py              # keyword search (the core install)
    python benchmarks/judgement/search.py --hybrid     # and hybrid (the vectors extra)

Per kind: `tp` cases whose first hit is the expected record, `fp` those whose first hit is
another, `fn` those without the expected record in the first five; precision is hit@1 and
recall hit@5. A `label` case counts as right only when the superseded record is labelled
so, names its replacement and ranks below it. Keyword search (the core install), each case
in a fresh in-memory store.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
KINDS = ("current_first", "identifier", "kind_coverage", "label")


def _build(mem: Any, records: list[dict[str, Any]]) -> dict[str, str]:
    """Make a case's records; returns each ref's id."""
    task = mem.create_task("Ship the release", ["Build", "Publish"])
    refs: dict[str, str] = {}
    for r in records:
        op, text = r["op"], r["text"]
        if op == "decision":
            old = refs.get(r.get("supersedes", ""))
            ident = mem.add_entry("decision", text, task_id=task.id, supersedes=old).id
        elif op == "error":
            ident = mem.add_entry("error", text, task_id=task.id).id
        elif op == "message":
            ident = mem.update_task(task.id, message=text).id
        elif op == "step" and "ref" not in r:
            from clew.models import AddStep

            ident = mem.replan(task.id, [AddStep(text)], reason="more to do").plan[-1].id
        elif op == "task":
            ident = mem.create_task(text, ["Plan it"]).id
        elif op == "goal":
            ident = mem.create_task("Another piece of work", ["Plan it"], goal=text).id
        elif op == "step":
            ident = mem.create_task("Another piece of work", ["Plan it", text]).plan[1].id
        elif op == "issue":
            other = mem.create_task("Another piece of work", ["Plan it", "Ship it"])
            ident = other.plan[0].id
            mem.update_task(other.id, step=1, step_status="active", active_issue=text)
        elif op == "answer":
            other = mem.create_task("Another piece of work", ["Plan it"])
            mem.set_task_record(other.id, answer=text)
            ident = other.id
        elif op == "pattern":
            ident = mem.add_pattern("ops", text).id
        elif op == "guardrail":
            ident = mem.add_guardrail(text).id
        else:
            raise ValueError(f"unknown op {op!r}")
        if "ref" in r:
            refs[r["ref"]] = ident
    return refs


def judge(case: dict[str, Any], mode: str = "keyword") -> tuple[bool, bool]:
    """(the first hit is right, the expected record is in the first five) for one case."""
    import clew

    with clew.open(":memory:") as mem:
        refs = _build(mem, case["records"])
        kinds = case.get("search_kind")
        hits = mem.search_all(case["question"], kinds=kinds, mode=mode, limit=10)
    ids = [h.id for h in hits]
    want = refs[case["expect"]]
    if case["kind"] == "label":
        new = refs["new"]
        if want not in ids or new not in ids:
            return False, False
        hit = hits[ids.index(want)]
        right = (hit.label.endswith(", superseded") and hit.superseded_by == new
                 and ids.index(new) < ids.index(want))  # fmt: skip
        return right, right
    return bool(ids) and ids[0] == want, want in ids[:5]


def cases(held_out: bool | None = None) -> list[dict[str, Any]]:
    lines = (HERE / "data" / "search.jsonl").read_text(encoding="utf-8").splitlines()
    found = [json.loads(line) for line in lines if line.strip()]
    return [c for c in found if held_out is None or c["held_out"] == held_out]


def score(held_out: bool | None = None, mode: str = "keyword") -> list[dict[str, object]]:
    """One row per kind: cases, tp, fp, fn, precision (hit@1), recall (hit@5); `mode` is
    search's (hybrid needs the vectors extra)."""
    import clew.models

    if not hasattr(clew.models, "SEARCH_KINDS"):
        raise RuntimeError("this clew has no search over tasks, steps, patterns (issue 25)")
    rows = []
    chosen = cases(held_out)
    for kind in KINDS:
        mine = [c for c in chosen if c["kind"] == kind]
        judged = [judge(c, mode) for c in mine]
        tp = sum(1 for first, _ in judged if first)
        fn = sum(1 for _, five in judged if not five)
        n = len(mine)
        rows.append({"kind": kind, "cases": n, "tp": tp, "fp": n - tp, "fn": fn,
                     "precision": round(tp / n, 4) if n else None,
                     "recall": round((n - fn) / n, 4) if n else None})  # fmt: skip
    return rows


def _table(rows: list[dict[str, object]]) -> str:
    lines = ["| kind | cases | tp | fp | fn | precision (hit@1) | recall (hit@5) |",
             "|---|--:|--:|--:|--:|--:|--:|"]  # fmt: skip
    for r in rows:
        lines.append(f"| {r['kind']} | {r['cases']} | {r['tp']} | {r['fp']} | {r['fn']} |"
                     f" {r['precision']} | {r['recall']} |")  # fmt: skip
    return "\n".join(lines)


if __name__ == "__main__":
    modes = ["keyword"]
    if "--hybrid" in sys.argv[1:]:
        modes.append("hybrid")
    for mode in modes:
        for name, part in (("all", None), ("tuned on", False), ("held out", True)):
            print(f"## {mode}, {name}\n\n{_table(score(part, mode))}\n")
    sys.exit(0)
