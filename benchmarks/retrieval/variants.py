"""The ranking's choices, measured: each variant of clew's search on the labelled set.

    python benchmarks/retrieval/variants.py            # every variant below
    python benchmarks/retrieval/variants.py mix-0.35 rrf

Each variant sets ranking.py's weights (the shipped ones are `shipped`) and runs the
harness (run.py) on one system; the table gives overall hit@1, hit@5, hit@10 and MRR, and
hit@5 per category, so that a choice (the weight of meaning, RRF against the score mix,
neighbouring turns) is kept because it measured better, not because it sounded right.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.retrieval import run

from clew import ranking

# name: (system, the ranking constants it sets)
VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {
    "shipped": ("hybrid", {}),
    "keyword": ("keyword", {}),
    "keyword-no-neighbours": ("keyword", {"NEIGHBOURS": False}),
    "keyword-no-coverage": ("keyword", {"FLOOR": 1.0}),
    "dense": ("dense", {}),
    "mix-0.2": ("hybrid", {"DENSE": 0.2, "ADAPT": 0.0}),
    "mix-0.35": ("hybrid", {"DENSE": 0.35, "ADAPT": 0.0}),
    "mix-0.5": ("hybrid", {"DENSE": 0.5, "ADAPT": 0.0}),
    "rrf": ("hybrid", {"FUSION": "rrf", "DENSE": 0.5, "ADAPT": 0.0}),
    "adaptive-0.2+0.3": ("hybrid", {"DENSE": 0.2, "ADAPT": 0.3}),
    "adaptive-0.2+0.5": ("hybrid", {"DENSE": 0.2, "ADAPT": 0.5}),
    "adaptive-0.35+0.35": ("hybrid", {"DENSE": 0.35, "ADAPT": 0.35}),
}


def measure(system: str, settings: dict[str, Any]) -> dict[str, Any]:
    """The harness's report for one system with these ranking constants."""
    saved = {name: getattr(ranking, name) for name in settings}
    for name, value in settings.items():
        setattr(ranking, name, value)
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            run.main(["--systems", system, "--json"])
    finally:
        for name, value in saved.items():
            setattr(ranking, name, value)
    text = out.getvalue()  # the store's first build prints its progress before the JSON
    report: dict[str, Any] = json.loads(text[text.index("\n{") + 1 :] if text[:1] != "{" else text)
    return report["systems"][system]


def main(argv: Sequence[str] | None = None) -> int:
    names = list(argv if argv is not None else sys.argv[1:]) or list(VARIANTS)
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        print(f"unknown variant(s): {', '.join(unknown)}; known: {', '.join(VARIANTS)}")
        return 2
    categories = [c for c in run.CATEGORIES if c != "unanswerable"]
    print("| variant | hit@1 | hit@5 | hit@10 | MRR | " + " | ".join(categories) + " |")
    print("|---|--:|--:|--:|--:|" + "--:|" * len(categories))
    for name in names:
        system, settings = VARIANTS[name]
        scores = measure(system, settings)["scores"]
        overall = scores["overall"]
        per = " | ".join(f"{scores[c]['hit@5']:.3f}" for c in categories)
        print(f"| {name} | {overall['hit@1']:.3f} | {overall['hit@5']:.3f} |"
              f" {overall['hit@10']:.3f} | {overall['mrr']:.3f} | {per} |", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
