"""Fusion rules, measured from one pass: how hybrid search joins its keyword and dense halves.

    python benchmarks/retrieval/fusion.py --set locomo --data DIR     # LoCoMo ($CLEW_LOCOMO)
    python benchmarks/retrieval/fusion.py --set labelled              # the 303-question set
    python benchmarks/retrieval/fusion.py --set heldout               # aggregate figures only
    python benchmarks/retrieval/fusion.py --set locomo before shipped --categories

Each question is searched once in hybrid mode and what the engine hands `ranking.rank` is
kept (as `variants.py --replay` does); then each rule ranks the same keyword matches and
nearest records again. `keyword` is that ranking without the nearest, `dense` the nearest
alone (by cosine), `shipped` what the engine does, `before` the fusion before its rules
(the nearest record always kept at ranking.MEANING_PLACE, meaning alone able to make a hit
confident), and one rule changed at a time. The table gives hit@1/5/10, MRR, how often the
top hit is marked confident and how often rightly, and `lost`/`won`: the questions whose
answer keyword or dense alone had in its first five and the rule does not (lost), and those
it has that neither half had (won).
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.retrieval.build import Clock, open_store, quiet

from clew.search import ranking

TOP = 10
# name: the ranking constants the rule sets
RULES: dict[str, dict[str, Any]] = {
    "keyword": {},
    "dense": {},
    "shipped": {},
    # Before the fusion rules: the nearest always keeps its place; meaning can lead alone.
    "before": {"WEAK_COVER": math.inf, "FLAT": -math.inf, "words_lead": False},
    "place-always": {"WEAK_COVER": math.inf, "FLAT": -math.inf},
    "place-never": {"MEANING_PLACE": 0},
    "mix-when-strong": {"STRONG_DENSE": 1.0, "FLAT": -math.inf},  # only the place is gated
    "no-sharpness": {"FLAT": -math.inf},
    "place-if-cover<0.5": {"WEAK_COVER": 0.5},
    "place-if-cover<1": {"WEAK_COVER": 1.0},
    "no-lead": {"words_lead": False},
}

Case = dict[str, Any]  # category, answers (keys), args and kwargs of ranking.rank


def _capturing(
    mem: Any, question: str, at: Any, clock: Clock
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The arguments of the last `ranking.rank` call of one hybrid search."""
    from clew.errors import ValidationError

    captured: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
    real = ranking.rank

    def keep(*args: Any, **kwargs: Any) -> list[ranking.Ranked]:
        captured.append((args, kwargs))
        return real(*args, **kwargs)

    clock.now = at
    ranking.rank = keep  # type: ignore[assignment]
    try:
        with quiet():
            mem.search_all(question, mode="hybrid", limit=TOP)
    except ValidationError:
        pass
    finally:
        ranking.rank = real  # type: ignore[assignment]
    return captured[-1] if captured else ((), {})


def conversation_cases(conversations: Sequence[Any], cache: Path | None = None) -> list[Case]:
    """One hybrid pass over conversations (conversations.py): each question's case."""
    from benchmarks.retrieval.conversations import CACHE, _embed, stored

    cases: list[Case] = []
    for conv in conversations:
        store, refs = stored(conv, cache or CACHE)
        asked_at = conv.asked_at or (conv.sittings[-1].at + timedelta(days=1))
        clock = Clock(asked_at)
        mem = open_store(store, clock)
        try:
            _embed(mem)
            for q in conv.questions:
                wanted = {("turn", refs[r]) for r in q.evidence if r in refs}
                if not wanted:
                    continue
                args, kwargs = _capturing(mem, q.question, q.at or asked_at, clock)
                cases.append({"category": q.category, "answers": wanted, "args": args,
                              "kwargs": kwargs})  # fmt: skip
        finally:
            mem.close()
        print(f"{conv.name}: {len(conv.questions)} questions", file=sys.stderr)
    return cases


def labelled_cases() -> list[Case]:
    """One hybrid pass over the 303-question set (answerable questions)."""
    from benchmarks.retrieval.variants import book_pass

    passed = book_pass()
    return [{"category": q.category, "answers": answers, "args": a, "kwargs": kw}
            for q, answers, a, kw in passed if answers]  # fmt: skip


def ranked_by(rule: str, case: Case) -> list[ranking.Ranked]:
    """The first TOP records of one case by one rule, after the steps the engine takes
    after ranking (the kind asked for, identifiers as written)."""
    if not case["args"]:
        return []
    asked, found, nearest = case["args"][0], case["args"][1], case["args"][2]
    kwargs = dict(case["kwargs"])
    settings = RULES[rule]
    if rule == "keyword":
        nearest = ()
    elif rule == "dense":
        found = {}  # what dense mode hands the ranking
    settings = {n: v for n, v in settings.items() if n != "words_lead"}
    saved = {n: getattr(ranking, n) for n in settings}
    for n, value in settings.items():
        setattr(ranking, n, value)
    try:
        ranked = [r for r in ranking.rank(asked, found, nearest, **kwargs) if r.score > 0]
    finally:
        for n, value in saved.items():
            setattr(ranking, n, value)
    ranked = ranking.asked_kind_first(ranked, found, asked)
    ranked = ranking.identifiers_first(ranked, found, ranking.identifiers(asked))
    return ranked[:TOP]


def row(ranked: Sequence[ranking.Ranked], case: Case, rule: str) -> dict[str, Any]:
    """A case's ranks of its answers and whether the top hit is marked confident, as the
    engine marks it (in a search by meaning, only when words lead: ranking.words_lead)."""
    ranks = [n for n, r in enumerate(ranked, 1) if r.key in case["answers"]]
    asked = case["args"][0] if case["args"] else None
    sure = bool(ranked) and ranking.confident(
        ranked[0], ranked[1] if len(ranked) > 1 else None, asked.identifiers if asked else ()
    )
    if rule != "keyword" and RULES[rule].get("words_lead", True):
        sure = sure and ranking.words_lead(ranked)
    return {"category": case["category"], "ranks": ranks, "confident": sure}


def _hit5(r: dict[str, Any]) -> bool:
    return bool(r["ranks"]) and r["ranks"][0] <= 5


def scores(
    rows: Sequence[dict[str, Any]], halves: Sequence[Sequence[dict[str, Any]]]
) -> dict[str, float]:
    out: dict[str, float] = {"n": len(rows)}
    for k in (1, 5, 10):
        out[f"hit@{k}"] = statistics.fmean(bool(r["ranks"]) and r["ranks"][0] <= k for r in rows)
    out["mrr"] = statistics.fmean(1 / r["ranks"][0] if r["ranks"] else 0.0 for r in rows)
    sure = [r for r in rows if r["confident"]]
    out["fires"] = len(sure) / len(rows)
    out["precision"] = statistics.fmean(r["ranks"][:1] == [1] for r in sure) if sure else 0.0
    either = [any(_hit5(h[i]) for h in halves) for i in range(len(rows))]
    out["lost"] = sum(e and not _hit5(r) for e, r in zip(either, rows, strict=True))
    out["won"] = sum(not e and _hit5(r) for e, r in zip(either, rows, strict=True))
    return out


def report(cases: Sequence[Case], rules: Sequence[str], per_category: bool) -> str:
    rows = {rule: [row(ranked_by(rule, c), c, rule) for c in cases] for rule in dict.fromkeys(
        ["keyword", "dense", *rules])}  # fmt: skip
    halves = [rows["keyword"], rows["dense"]]
    categories = list(dict.fromkeys(c["category"] for c in cases)) if per_category else []
    out = [f"{'rule':<20} {'category':<16} {'n':>5} {'hit@1':>6} {'hit@5':>6} {'hit@10':>6}"
           f" {'MRR':>6} {'conf%':>6} {'conf-prec':>9} {'lost':>5} {'won':>5}"]  # fmt: skip
    for rule in rules:
        for category in (*categories, "all"):
            pick = [i for i, c in enumerate(cases) if category in ("all", c["category"])]
            s = scores([rows[rule][i] for i in pick], [[h[i] for i in pick] for h in halves])
            out.append(
                f"{rule:<20} {category:<16} {s['n']:>5.0f} {100 * s['hit@1']:>6.1f}"
                f" {100 * s['hit@5']:>6.1f} {100 * s['hit@10']:>6.1f} {100 * s['mrr']:>6.1f}"
                f" {100 * s['fires']:>6.1f} {100 * s['precision']:>9.1f}"
                f" {s['lost']:>5.0f} {s['won']:>5.0f}"
            )
    return "\n".join(out)


def cases_of(which: str, data: Path | None) -> list[Case]:
    if which == "labelled":
        return labelled_cases()
    if which == "heldout":
        from benchmarks.retrieval.heldout import load as heldout

        return conversation_cases(heldout())
    from benchmarks.retrieval.locomo import load as locomo

    assert data is not None
    return conversation_cases(locomo(data))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rules", nargs="*", default=list(RULES))
    parser.add_argument("--set", choices=("locomo", "labelled", "heldout"), default="locomo")
    parser.add_argument("--data", type=Path, default=os.environ.get("CLEW_LOCOMO"))
    parser.add_argument("--model", default=None, help="the embedding model of the dense half")
    parser.add_argument("--categories", action="store_true", help="a line per category too")
    args = parser.parse_args(argv)
    unknown = [r for r in args.rules if r not in RULES]
    if unknown:
        print(f"unknown rule(s): {', '.join(unknown)}; known: {', '.join(RULES)}", file=sys.stderr)
        return 2
    if args.set == "locomo" and (args.data is None or not args.data.is_dir()):
        print("--data DIR (or $CLEW_LOCOMO): LoCoMo's data folder", file=sys.stderr)
        return 2
    if args.model is not None:
        from clew.search import embedding

        os.environ[embedding.ENV] = args.model
    # The heldout set is a judge: its per-category figures are printed, never its questions.
    print(report(cases_of(args.set, args.data), args.rules, args.categories))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
