"""The `confident` mark of search, judged: on the held-out conversations
(benchmarks/retrieval/heldout.py, provenance in benchmarks/retrieval/heldout.md), is a top
hit marked confident the turn labelled as the answer?

One row per category of question and one for all: tp = the top hit is marked confident and is
evidence, fp = marked and not evidence, fn = evidence but not marked. Keyword search (the core
install: no model, the same on every machine). `data/retrieval.jsonl` lists the questions
(the conversations are in heldout_data.py); the scorer checks the two agree.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.retrieval import heldout  # noqa: E402
from benchmarks.retrieval.conversations import run  # noqa: E402

DATA = HERE / "data" / "retrieval.jsonl"


def cases() -> list[dict[str, Any]]:
    """The held-out questions, one a line, as the data file lists them."""
    return [
        {"conversation": c.name, "category": q.category, "question": q.question,
         "evidence": list(q.evidence), "asked_at": q.at.isoformat() if q.at else None}
        for c in heldout.load() for q in c.questions
    ]  # fmt: skip


def score() -> list[dict[str, Any]]:
    import clew

    if not hasattr(clew.Memory, "search_all"):
        raise RuntimeError("this clew has no search_all: nothing to judge")
    listed = [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]
    if listed != cases():
        raise RuntimeError(f"{DATA.name} and heldout_data.py disagree: write it again")
    with tempfile.TemporaryDirectory() as cache:
        rows = run(heldout.load(), ["keyword"], cache=Path(cache))
    out = []
    for kind in (*heldout.CATEGORIES, "all"):
        mine = [r for r in rows if kind in ("all", r["category"])]
        right = [bool(r["ranks"]) and r["ranks"][0] == 1 for r in mine]
        tp = sum(1 for r, ok in zip(mine, right, strict=True) if r["confident"] and ok)
        fp = sum(1 for r, ok in zip(mine, right, strict=True) if r["confident"] and not ok)
        fn = sum(1 for r, ok in zip(mine, right, strict=True) if ok and not r["confident"])
        out.append({"kind": kind, "cases": len(mine), "tp": tp, "fp": fp, "fn": fn,
                    "precision": tp / (tp + fp) if tp + fp else None,
                    "recall": tp / (tp + fn) if tp + fn else None})  # fmt: skip
    return out


def main() -> int:
    if "--write" in sys.argv:
        DATA.write_text("".join(json.dumps(c) + "\n" for c in cases()))
        return 0
    print(f"{'kind':<17} {'cases':>5} {'tp':>4} {'fp':>4} {'fn':>4} {'precision':>9} {'recall':>7}")
    for r in score():
        p = "n/a" if r["precision"] is None else f"{r['precision']:.3f}"
        q = "n/a" if r["recall"] is None else f"{r['recall']:.3f}"
        counts = f"{r['cases']:>5} {r['tp']:>4} {r['fp']:>4} {r['fn']:>4}"
        print(f"{r['kind']:<17} {counts} {p:>9} {q:>7}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
