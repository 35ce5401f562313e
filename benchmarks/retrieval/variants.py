"""The ranking's choices, measured: each variant of clew's search on the labelled set.

    python benchmarks/retrieval/variants.py            # every variant below
    python benchmarks/retrieval/variants.py mix-0.35 rrf
    python benchmarks/retrieval/variants.py --model minilm-onnx-int8 shipped mix-0.5

Each variant sets ranking.py's weights (the shipped ones are `shipped`) and runs the
harness (run.py) on one system; the table gives overall hit@1, hit@5, hit@10 and MRR, and
hit@5 per category, so that a choice (the weight of meaning, RRF against the score mix,
neighbouring turns, related words for a weakly matched question) is kept because it
measured better, not because it sounded right.
`--model` names the embedding model of the dense and hybrid variants (run.py's option).

`--replay` measures every variant from one pass: each question is searched once in hybrid
mode, what the engine hands `ranking.rank` (the keyword matches and the nearest records) is
kept, and each variant ranks it again; keyword-only is that ranking without the nearest,
dense-only without the keyword matches (what those modes hand it). Ranking is pure, so this
gives the figures the full runs give, in a fraction of the time (no latency figures).
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

from clew.search import ranking, retrieval

# name: (system, the ranking constants it sets)
VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {
    "shipped": ("hybrid", {}),
    "keyword": ("keyword", {}),
    "keyword-no-neighbours": ("keyword", {"NEIGHBOURS": False}),
    "keyword-no-coverage": ("keyword", {"FLOOR": 1.0}),
    "keyword-no-related-words": ("keyword", {"retrieval.EXPAND": False}),
    "shipped-no-related-words": ("hybrid", {"retrieval.EXPAND": False}),
    "dense": ("dense", {}),
    "mix-0.2": ("hybrid", {"DENSE": 0.2, "ADAPT": 0.0}),
    "mix-0.35": ("hybrid", {"DENSE": 0.35, "ADAPT": 0.0}),
    "mix-0.5": ("hybrid", {"DENSE": 0.5, "ADAPT": 0.0}),
    "rrf": ("hybrid", {"FUSION": "rrf", "DENSE": 0.5, "ADAPT": 0.0}),
    "adaptive-0.2+0.3": ("hybrid", {"DENSE": 0.2, "ADAPT": 0.3}),
    "adaptive-0.2+0.5": ("hybrid", {"DENSE": 0.2, "ADAPT": 0.5}),
    "adaptive-0.35+0.35": ("hybrid", {"DENSE": 0.35, "ADAPT": 0.35}),
    "mix-0.65": ("hybrid", {"DENSE": 0.65, "ADAPT": 0.0}),
    "adaptive-0.35+0.2": ("hybrid", {"DENSE": 0.35, "ADAPT": 0.2}),
    "adaptive-0.5+0.2": ("hybrid", {"DENSE": 0.5, "ADAPT": 0.2}),
    "adaptive-0.5+0.3": ("hybrid", {"DENSE": 0.5, "ADAPT": 0.3}),
    "rrf-0.65": ("hybrid", {"FUSION": "rrf", "DENSE": 0.65, "ADAPT": 0.0}),
    # The place kept for the record nearest in meaning (0: none; 2 ships).
    "meaning-place-0": ("hybrid", {"MEANING_PLACE": 0}),
    "meaning-place-5": ("hybrid", {"MEANING_PLACE": 5}),
    "meaning-place-3": ("hybrid", {"MEANING_PLACE": 3}),
    "meaning-place-10": ("hybrid", {"MEANING_PLACE": 10}),
}


def _owner(name: str) -> tuple[Any, str]:
    """The module a setting is in (ranking's, or `retrieval.NAME`) and its name there."""
    module, _, attribute = name.rpartition(".")
    return ({"": ranking, "retrieval": retrieval}[module], attribute)


def measure(system: str, settings: dict[str, Any], model: str | None = None) -> dict[str, Any]:
    """The harness's report for one system with these ranking constants (and this
    embedding model)."""
    if "DENSE" in settings:  # the variant's weight of meaning, whatever the model
        settings = {"DENSE_BY_MODEL": {}, **settings}
    saved = {name: getattr(*_owner(name)) for name in settings}
    for name, value in settings.items():
        setattr(*_owner(name), value)
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            run.main(["--systems", system, "--json", *(["--model", model] if model else [])])
    finally:
        for name, value in saved.items():
            setattr(*_owner(name), value)
    text = out.getvalue()  # the store's first build prints its progress before the JSON
    report: dict[str, Any] = json.loads(text[text.index("\n{") + 1 :] if text[:1] != "{" else text)
    return report["systems"][system]


Asked = tuple[Any, set[tuple[str, str]], tuple[Any, ...], dict[str, Any]]


def hybrid_pass(mem: Any, questions: Sequence[Any], refs: Any, clock: Any) -> list[Asked]:
    """One hybrid search per question, each at the time it is asked: (question, the
    (kind, id) of its answers, and the arguments the ranking was called with), so that
    variants of the ranking can be replayed on the same candidates without searching again."""
    from benchmarks.retrieval.corpus import NOW

    captured: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
    real = ranking.rank

    def keep(*args: Any, **kwargs: Any) -> list[ranking.Ranked]:
        captured.append((args, kwargs))
        return real(*args, **kwargs)

    asked: list[Asked] = []
    ranking.rank = keep  # type: ignore[assignment]
    try:
        for q in questions:
            clock.now = run._moment(q.asked_at) if q.asked_at else NOW
            captured.clear()
            mem.search_all(q.question, mode="hybrid", limit=run.TOP)
            answers = {(refs[k]["kind"], refs[k]["id"]) for k in q.answers}
            args, kwargs = captured[-1] if captured else ((), {})
            asked.append((q, answers, args, kwargs))
    finally:
        ranking.rank = real  # type: ignore[assignment]
    return asked


def book_pass() -> list[Asked]:
    """One hybrid pass over the 303-question set, its store built once and embedded."""
    from benchmarks.retrieval.build import Clock, cached, open_store
    from benchmarks.retrieval.corpus import NOW
    from benchmarks.retrieval.facts_extra import book

    the_book = book()
    store, _, refs = cached(book, 1)
    clock = Clock(NOW)
    mem = open_store(store, clock)
    run.embed_all(mem)
    try:
        return hybrid_pass(mem, the_book.questions, refs, clock)
    finally:
        mem.close()


def replay(names: Sequence[str], model: str | None) -> dict[str, dict[str, Any]]:
    """Each variant's scores, per category and overall, from one hybrid pass."""
    import os

    if model is not None:
        os.environ["CLEW_EMBED_MODEL"] = model
    asked = book_pass()
    real = ranking.rank
    reports = {}
    for name in names:
        system, settings = VARIANTS[name]
        if any("." in n for n in settings):  # a search setting changes what is found
            print(f"{name}: not replayable (it changes the search, not the ranking)",
                  file=sys.stderr)  # fmt: skip
            continue
        if "DENSE" in settings:
            settings = {"DENSE_BY_MODEL": {}, **settings}
        saved = {n: getattr(ranking, n) for n in settings}
        for n, value in settings.items():
            setattr(ranking, n, value)
        try:
            rows = []
            for q, answers, args, kwargs in asked:
                ranked: list[ranking.Ranked] = []
                if args:
                    a, found, nearest = args[0], args[1], args[2] if len(args) > 2 else ()
                    kw = dict(kwargs)
                    if system == "keyword":
                        nearest = ()
                    elif system == "dense":
                        found = {}
                    if "DENSE" in settings:  # the variant's weight, not the model's
                        kw.pop("dense_weight", None)
                    ranked = [r for r in real(a, found, nearest, **kw) if r.score > 0][: run.TOP]
                ranks = [n for n, r in enumerate(ranked, 1) if r.key in answers]
                sure = bool(ranked) and ranking.confident(ranked[0])
                rows.append({"category": q.category, "answers": len(q.answers), "ranks": ranks,
                             "confident": sure})  # fmt: skip
        finally:
            for n, value in saved.items():
                setattr(ranking, n, value)
        per = {c: run.score([r for r in rows if r["category"] == c]) for c in run.CATEGORIES}
        per["overall"] = run.score([r for r in rows if r["answers"]])
        reports[name] = per
    return reports


def main(argv: Sequence[str] | None = None) -> int:
    names = list(argv if argv is not None else sys.argv[1:])
    model = None
    if "--model" in names:
        at = names.index("--model")
        if at + 1 >= len(names):
            print("--model needs a model name")
            return 2
        model = names[at + 1]
        del names[at : at + 2]
    replaying = "--replay" in names
    names = [n for n in names if n != "--replay"] or list(VARIANTS)
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        print(f"unknown variant(s): {', '.join(unknown)}; known: {', '.join(VARIANTS)}")
        return 2
    categories = [c for c in run.CATEGORIES if c != "unanswerable"]
    print("| variant | hit@1 | hit@5 | hit@10 | MRR | " + " | ".join(categories)
          + " | unanswerable confident |")  # fmt: skip
    print("|---|--:|--:|--:|--:|" + "--:|" * len(categories) + "--:|")
    replayed = replay(names, model) if replaying else {}
    for name in names:
        system, settings = VARIANTS[name]
        scores = replayed[name] if replaying else measure(system, settings, model)["scores"]
        overall = scores["overall"]
        per = " | ".join(f"{scores[c]['hit@5']:.3f}" for c in categories)
        sure = scores["unanswerable"].get("confident")
        print(f"| {name} | {overall['hit@1']:.3f} | {overall['hit@5']:.3f} |"
              f" {overall['hit@10']:.3f} | {overall['mrr']:.3f} | {per} |"
              f" {'n/a' if sure is None else f'{sure:.3f}'} |", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
