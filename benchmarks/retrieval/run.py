"""The retrieval benchmark: how well does one search find the record that answers an
agent's question, and how fast?

    python benchmarks/retrieval/run.py                      # every system, every question
    python benchmarks/retrieval/run.py --systems floor,keyword --explain-failures 5
    python benchmarks/retrieval/run.py --scale 1m           # latency (and quality) at 1M
    python benchmarks/retrieval/run.py --store DIR          # a copy of a built set, as it is
    python benchmarks/retrieval/run.py --model minilm-onnx-int8   # dense/hybrid with that model

Builds the labelled set's store once (cached under benchmarks/retrieval/.cache/ by a hash
of the generator), then asks every question of every system and prints, per category and
overall, hit@1, hit@5, hit@10, MRR and recall@10; for unanswerable questions, the share
whose top hit is `confident` (lower is better). Then latency p50/p95, wall and CPU.

Systems: `floor` is raw FTS5 bm25 over a separate SQLite table with one document per
record (porter unicode61), the question's content words OR-ed; `keyword`, `dense` and
`hybrid` are `Memory.search_all(question, mode=..., limit=10)`. Before the engine takes
`mode`, `keyword` is the current `search_all(question, limit=10)` and the other two are
n/a. `--model` names the embedding model of dense and hybrid (CLEW_EMBED_MODEL; default
clew's default); the store's records are embedded with it before the first question (vectors
are keyed by model, so each model's live side by side in the cached store). Each question
is asked with the store's clock at its `asked_at`, so "yesterday" means the day before it.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.retrieval import words
from benchmarks.retrieval.build import Clock, cached, open_store
from benchmarks.retrieval.corpus import CATEGORIES, NOW, Question
from benchmarks.retrieval.facts_extra import book

SYSTEMS = ("floor", "keyword", "dense", "hybrid")
SCALES = {"10k": 10_000, "100k": 100_000, "1m": 1_000_000}
TOP = 10
Hit = tuple[str, str, str]  # kind, id, a line of text to show


class Unavailable(Exception):
    """This system cannot run against this clew (the engine does not offer it yet)."""


class Floor:
    """FTS5 bm25 over one document per record; the question's content words OR-ed."""

    def __init__(self, path: Path) -> None:
        self.db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)

    def search(self, question: str) -> list[Hit]:
        terms = words.content(question)
        if not terms:
            return []
        match = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
        rows = self.db.execute(
            "SELECT d.kind, d.ref_id, substr(f.body, 1, 100) FROM docs_fts f"
            " JOIN docs d ON d.id = f.rowid WHERE docs_fts MATCH ? ORDER BY rank LIMIT ?",
            (match, TOP),
        ).fetchall()
        return [(k, r, t.replace("\n", " ")) for k, r, t in rows]


class Engine:
    """clew's own search over everything, in one mode."""

    def __init__(self, mem: Any, mode: str) -> None:
        self.mem, self.mode = mem, mode
        self.fallback = False  # the engine takes no `mode` yet: the current search_all
        self.last: list[Any] = []

    def search(self, question: str) -> list[Hit]:
        from clew.errors import ValidationError

        try:
            if self.fallback:
                hits = self.mem.search_all(question, limit=TOP)
            else:
                hits = self.mem.search_all(question, mode=self.mode, limit=TOP)
        except TypeError:
            if self.mode != "keyword":
                raise Unavailable(f"{self.mode}: search_all takes no mode yet") from None
            self.fallback = True
            return self.search(question)
        except ValidationError:  # nothing to look for in the question
            hits = []
        self.last = hits
        return [(h.kind, h.id, f"{h.title} | {h.snippet}".replace("\n", " ")[:100]) for h in hits]

    def confident(self) -> bool | None:
        """Whether the engine says its top hit answers (None: it does not say)."""
        if not self.last:
            return False
        return getattr(self.last[0], "confident", None)


def rank_of(hits: Sequence[Hit], answers: set[tuple[str, str]]) -> list[int]:
    """1-based ranks of the hits that are answers."""
    return [n for n, (kind, ident, _) in enumerate(hits, 1) if (kind, ident) in answers]


def score(results: list[dict[str, Any]]) -> dict[str, float | None]:
    """hit@1/5/10, MRR and recall@10 of answerable results; the confident rate of
    unanswerable ones."""
    answerable = [r for r in results if r["answers"]]
    unanswerable = [r for r in results if not r["answers"]]
    out: dict[str, float | None] = {"n": float(len(results))}
    if answerable:
        for k in (1, 5, 10):
            out[f"hit@{k}"] = statistics.fmean(bool(r["ranks"]) and r["ranks"][0] <= k
                                               for r in answerable)  # fmt: skip
        out["mrr"] = statistics.fmean(1 / r["ranks"][0] if r["ranks"] else 0 for r in answerable)
        out["recall@10"] = statistics.fmean(len(r["ranks"]) / r["answers"] for r in answerable)
    if unanswerable:
        said = [r["confident"] for r in unanswerable]
        out["confident"] = None if None in said else statistics.fmean(bool(c) for c in said)
    return out


def _pct(values: list[float], q: int) -> float:
    if len(values) < 2:
        return values[0] if values else 0.0
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--categories", default=",".join(CATEGORIES))
    parser.add_argument("--limit", type=int, default=None, help="questions per category")
    parser.add_argument("--scale", choices=sorted(SCALES), default=None,
                        help="pad the store to this many records first")  # fmt: skip
    parser.add_argument("--store", type=Path, default=None, metavar="DIR",
                        help="a built set's folder (store.db, floor.db, refs.json) to use as"
                        " it is, e.g. a copy of a padded one with its vectors")  # fmt: skip
    parser.add_argument("--explain-failures", type=int, default=0, metavar="N")
    parser.add_argument("--json", action="store_true", help="print JSON, not tables")
    parser.add_argument("--model", default=None, help="the embedding model of dense and hybrid")
    args = parser.parse_args(argv)
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    categories = [c.strip() for c in args.categories.split(",") if c.strip()]
    for name, given, known in (("system", systems, SYSTEMS), ("category", categories,
                                                              CATEGORIES)):  # fmt: skip
        bad = [g for g in given if g not in known]
        if bad or not given:
            print(f"unknown {name} {', '.join(bad) or '(none given)'}; choose from:"
                  f" {', '.join(known)}", file=sys.stderr)  # fmt: skip
            return 2
    if args.model is not None:
        from clew.errors import ValidationError
        from clew.search import embedding

        try:
            embedding.chosen(args.model)
        except ValidationError as exc:
            print(exc, file=sys.stderr)
            return 2
        os.environ[embedding.ENV] = args.model
    if args.limit is not None and args.limit < 1:
        print("--limit must be a positive number of questions per category", file=sys.stderr)
        return 2

    the_book = book()
    questions = select(the_book.questions, categories, args.limit)
    if args.store is not None:
        store, floor_path = args.store / "store.db", args.store / "floor.db"
        if not (store.exists() and floor_path.exists() and (args.store / "refs.json").exists()):
            print(f"--store {args.store}: not a built set's folder (store.db, floor.db and"
                  " refs.json)", file=sys.stderr)  # fmt: skip
            return 2
        refs = json.loads((args.store / "refs.json").read_text())
    else:
        store, floor_path, refs = cached(book, 1, SCALES.get(args.scale or ""))
    clock = Clock(NOW)
    mem = open_store(store, clock)
    if {"dense", "hybrid"} & set(systems):
        embed_all(mem)
    runners: dict[str, Callable[[str], list[Hit]]] = {}
    engines: dict[str, Engine] = {}
    for system in systems:
        if system == "floor":
            runners[system] = Floor(floor_path).search
        else:
            engines[system] = Engine(mem, system)
            runners[system] = engines[system].search
    texts = {r.key: r.text for r in the_book.records}
    results: dict[str, list[dict[str, Any]]] = {s: [] for s in systems}
    wall: dict[str, list[float]] = {s: [] for s in systems}
    cpu: dict[str, list[float]] = {s: [] for s in systems}
    missing: set[str] = set()
    for n, q in enumerate(questions):
        clock.now = _moment(q.asked_at) if q.asked_at else NOW
        answers = {(refs[k]["kind"], refs[k]["id"]) for k in q.answers}
        order = systems[n % len(systems) :] + systems[: n % len(systems)]  # alternate
        for system in order:
            if system in missing:
                continue
            try:
                w0, c0 = time.perf_counter(), time.process_time()
                hits = runners[system](q.question)
                w1, c1 = time.perf_counter(), time.process_time()
            except Unavailable:
                missing.add(system)
                continue
            if n:  # the first question warms caches
                wall[system].append((w1 - w0) * 1000)
                cpu[system].append((c1 - c0) * 1000)
            engine = engines.get(system)
            results[system].append({
                "id": q.id, "category": q.category, "question": q.question,
                "answers": len(q.answers), "keys": list(q.answers),
                "ranks": rank_of(hits, answers), "top": hits[:3],
                "confident": engine.confident() if engine else None,
            })  # fmt: skip
    mem.close()

    report = {
        "store": str(store),
        "model": os.environ.get("CLEW_EMBED_MODEL") or "default",
        "records": _records(store),
        "questions": len(questions),
        "systems": {},
    }
    for system in systems:
        if system in missing:
            report["systems"][system] = None
            continue
        rows = results[system]
        per = {c: score([r for r in rows if r["category"] == c]) for c in categories}
        per["overall"] = score([r for r in rows if r["answers"]])
        report["systems"][system] = {
            "scores": per,
            "latency_ms": {"wall_p50": _pct(wall[system], 50), "wall_p95": _pct(wall[system], 95),
                           "cpu_p50": _pct(cpu[system], 50), "cpu_p95": _pct(cpu[system], 95)},
            "fallback": bool(engines[system].fallback) if system in engines else False,
            "results": rows,
        }  # fmt: skip
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    print_tables(report, categories)
    if args.explain_failures:
        explain(report, texts, args.explain_failures)
    return 0


def embed_all(mem: Any) -> None:
    """Embed every record with the chosen model now, not a few per search (the slower
    models would otherwise spend the first questions' latency on it); progress on stderr."""
    from clew.errors import VectorsUnavailable

    try:
        status = mem.index_status()
    except VectorsUnavailable:
        return
    if not status.pending:
        return
    w0, c0 = time.perf_counter(), time.process_time()
    done = mem.update_index()
    print(f"embedded {done} records with {status.model} in {time.perf_counter() - w0:.0f}s"
          f" ({time.process_time() - c0:.0f} CPU-s)", file=sys.stderr)  # fmt: skip


def select(questions: list[Question], categories: list[str], limit: int | None) -> list[Question]:
    """The questions of these categories, at most `limit` of each."""
    out, seen = [], dict.fromkeys(categories, 0)
    for q in questions:
        if q.category in seen and (limit is None or seen[q.category] < limit):
            seen[q.category] += 1
            out.append(q)
    return out


def _moment(text: str) -> Any:
    from datetime import UTC, datetime

    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def _records(store: Path) -> int:
    from benchmarks.retrieval.build import count_records

    return count_records(store)


def _f(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def print_tables(report: dict[str, Any], categories: list[str]) -> None:
    print(f"# Retrieval set: {report['questions']} questions over {report['records']:,} records\n")
    for system, data in report["systems"].items():
        if data is None:
            print(f"## {system}: n/a (the engine does not offer this mode yet)\n")
            continue
        note = " (current search_all: it takes no mode yet)" if data["fallback"] else ""
        print(f"## {system}{note}\n")
        print("| category | n | hit@1 | hit@5 | hit@10 | MRR | recall@10 | confident top |")
        print("|---|--:|--:|--:|--:|--:|--:|--:|")
        for cat in [*categories, "overall"]:
            s = data["scores"].get(cat)
            if not s or not s.get("n"):
                continue
            cells = [_f(s.get(k)) if k in s else "" for k in
                     ("hit@1", "hit@5", "hit@10", "mrr", "recall@10")]  # fmt: skip
            conf = _f(s["confident"]) if "confident" in s else ""
            print(f"| {cat} | {int(s['n'])} | {' | '.join(cells)} | {conf} |")
        print()
    print("## latency per question (ms)\n")
    print("| system | wall p50 | wall p95 | CPU p50 | CPU p95 |")
    print("|---|--:|--:|--:|--:|")
    for system, data in report["systems"].items():
        if data is not None:
            lat = data["latency_ms"]
            print(f"| {system} | {lat['wall_p50']:.2f} | {lat['wall_p95']:.2f} |"
                  f" {lat['cpu_p50']:.2f} | {lat['cpu_p95']:.2f} |")  # fmt: skip
    print()


def explain(report: dict[str, Any], texts: dict[str, str], limit: int) -> None:
    """Print up to `limit` misses (no answer in the top 5) per system, with the top 3 hits."""
    for system, data in report["systems"].items():
        if data is None:
            continue
        misses = [r for r in data["results"]
                  if (r["answers"] and not (r["ranks"] and r["ranks"][0] <= 5))
                  or (not r["answers"] and r["confident"])]  # fmt: skip
        print(f"## misses of {system}: {len(misses)} (showing {min(limit, len(misses))})\n")
        for r in misses[:limit]:
            print(f"- {r['id']} {r['question']!r}  ranks={r['ranks']}")
            for key in r["keys"]:
                print(f"    want {key}: {texts[key][:90]!r}")
            for kind, _, line in r["top"]:
                print(f"    got  {kind}: {line[:90]!r}")
        print()


if __name__ == "__main__":
    sys.exit(main())
