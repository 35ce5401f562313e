"""Dense recall on the labelled set: where the answers rank by meaning, and what hybrid
search gives with each way of finding the nearest records.

    python benchmarks/retrieval/dense.py                        # the packaged static model
    python benchmarks/retrieval/dense.py --model minilm-onnx-int8
    python benchmarks/retrieval/dense.py --model minilm-onnx-int8 base prf k200

One hybrid pass over the 303 questions keeps what the engine hands `ranking.rank` (as
`variants.py --replay` does); then each variant finds the nearest records its own way,
from the store's vectors in memory, and ranks the same keyword matches with them. The
table gives, over answerable questions, the share whose first answer is among the nearest
60 / 200 records by meaning (recall of the dense half, whatever the fusion), dense-only
hit@5, and hybrid hit@1/5/10 and MRR, overall and hit@5 per category.

Variants (none reads a question's label; each is one idea of issue 13's list):
- base: the question's vector, its 60 nearest (what the engine does).
- k100, k200: more of the nearest.
- words: the vector of the question's content words; avg: the mean of both forms.
- prf: the question's vector moved toward the mean vector of the top PRF_DOCS keyword hits
  (Rocchio, weight PRF_WEIGHT), then its nearest.
- reply: a turn also scores REPLY of the turn before it (a reply answers the question its
  previous turn asked); prev: REPLY of its next turn too.
- chunks: a record longer than the model's window is scored by its best window.
- ctx: a turn also scored by its vector embedded with the end of the turn before it;
  ctx-only: by that vector instead of its own.
- slotsN: the N nearest kept among the first five (at its last places); -winN: also the N
  nearest of the time the question names; slot-timed: the nearest of that time instead,
  when it names one; -cosC: only a nearest of cosine C or more; win-nofloor: the time's
  nearest without MIN_COSINE.
- shipped: what the engine does (avg and slot-timed; the engine keeps the place at
  ranking.MEANING_PLACE, 2, where these variants use 5: the same hit@5, variants.py
  measures the place).
The engine's own kept place is off while the variants rank (ranking.MEANING_PLACE = 0), so
"base" is the engine as it was before it.
"""

from __future__ import annotations

import sqlite3
import statistics
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.retrieval import run
from benchmarks.retrieval.variants import hybrid_pass

from clew.search import coverage, ranking, retrieval

POOL = 60
PRF_DOCS = 3
PRF_WEIGHT = 0.5
REPLY = 0.9
CHUNK_TOKENS = 200  # of a long record's window, in the model's word pieces
CHUNK_STRIDE = 150
CONTEXT_CHARS = 400  # of the turn before, embedded with a turn in the ctx variants


def main(argv: Sequence[str] | None = None) -> int:
    import os

    import numpy as np
    from benchmarks.retrieval.build import Clock, cached, open_store
    from benchmarks.retrieval.corpus import NOW
    from benchmarks.retrieval.facts_extra import book

    args = list(argv if argv is not None else sys.argv[1:])
    if "--help" in args or "-h" in args:
        print(__doc__)
        return 0
    if "--model" in args:
        at = args.index("--model")
        os.environ["CLEW_EMBED_MODEL"] = args[at + 1]
        del args[at : at + 2]
    the_book = book()
    store, _, refs = cached(book, 1)
    clock = Clock(NOW)
    mem = open_store(store, clock)
    run.embed_all(mem)
    embedder = mem.vectors._embedder()
    weight = ranking.dense_weight(embedder.model_id)
    asked = [
        {"q": q, "answers": answers, "args": a, "kwargs": kw}
        for q, answers, a, kw in hybrid_pass(mem, the_book.questions, refs, clock)
    ]
    real = ranking.rank  # restored by the pass: the ranking itself, to replay with

    # Each variant says which record keeps a place among the first five (_slotted), so the
    # ranking's own keeping is off here: "base" is the engine as it was before it.
    ranking.MEANING_PLACE = 0
    cache = mem.vectors._matrix(embedder.model_id)
    live = np.flatnonzero(cache.alive[: cache.n])
    vectors = cache.vectors[live]
    keys = [cache.keys[i] for i in live]
    at = cache.at[live]
    row_of = {k: i for i, k in enumerate(keys)}
    # each turn's previous and next turn's row, for the reply variants
    db = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    place = {(s, n): i for i, s, n in db.execute("SELECT id, session_id, turn FROM turns")}
    numbered = {i: (s, n) for (s, n), i in place.items()}
    before = np.full(len(keys), -1)
    after = np.full(len(keys), -1)
    for r, (kind, ident) in enumerate(keys):
        if kind == "turn" and ident in numbered:
            s, n = numbered[ident]
            for arr, m in ((before, n - 1), (after, n + 1)):
                other = place.get((s, m))
                if other is not None and ("turn", other) in row_of:
                    arr[r] = row_of[("turn", other)]
    chunk_rows, chunk_of = _chunks(mem, embedder, keys, row_of)
    ctx_rows, ctx_of = np.zeros((0, 1), dtype=np.float32), np.zeros(0, dtype=np.int64)
    if any(variants_wanted(args, "ctx")):
        texts = _texts(mem)
        pairs = [(r, texts[keys[int(before[r])]][-CONTEXT_CHARS:] + "\n" + texts[keys[r]])
                 for r in range(len(keys)) if before[r] >= 0 and keys[r] in texts
                 and keys[int(before[r])] in texts]  # fmt: skip
        ctx_rows = embedder.embed([t for _, t in pairs])
        ctx_of = np.array([r for r, _ in pairs])

    def qvec(text: str) -> Any:
        return np.asarray(embedder.embed([text])[0], dtype=np.float32)

    def window_mask(a: coverage.Asked) -> Any:
        if a.when is None:
            return None
        start, end, _ = a.when
        lo = np.datetime64(start.replace(tzinfo=None), "us").astype(np.int64)
        hi = np.datetime64(end.replace(tzinfo=None), "us").astype(np.int64)
        return (at >= lo) & (at < hi)

    def top(
        scores: Any, k: int, mask: Any = None, floor: float | None = None
    ) -> list[tuple[Any, float]]:
        s = scores if mask is None else np.where(mask, scores, -np.inf)
        order = np.argsort(-s, kind="stable")[:k]
        least = retrieval.MIN_COSINE if floor is None else floor
        return [(keys[i], float(s[i])) for i in order if s[i] >= least and s[i] > -np.inf]

    def keyword_top(item: dict[str, Any], m: int) -> list[int]:
        a, found = item["args"][0], item["args"][1]
        ranked = [r for r in real(a, found, ()) if r.score > 0]
        return [row_of[r.key] for r in ranked[:m] if r.key in row_of]

    def scores_for(
        item: dict[str, Any], form: str, prf: int, reply: str, chunked: bool, ctx: str = ""
    ) -> Any:
        q = item["q"].question
        a = item["args"][0]
        if form == "raw":
            v = qvec(q)
        elif form == "words":
            v = qvec(" ".join(a.words) or q)
        else:
            v = qvec(q) + qvec(" ".join(a.words) or q)
        if prf:
            tops = keyword_top(item, prf)
            if tops:
                centroid = vectors[tops].mean(axis=0)
                v = v / (np.linalg.norm(v) or 1) + PRF_WEIGHT * centroid
        v = v / (np.linalg.norm(v) or 1)
        s = vectors @ v
        if ctx and len(ctx_rows):
            cs = ctx_rows @ v
            if ctx == "max":
                np.maximum.at(s, ctx_of, cs)
            else:
                s = s.copy()
                s[ctx_of] = cs
        if chunked and len(chunk_rows):
            cs = chunk_rows @ v
            np.maximum.at(s, chunk_of, cs)
        if reply:
            lifted = s.copy()
            has = before >= 0
            lifted[has] = np.maximum(lifted[has], REPLY * s[before[has]])
            if reply == "both":
                has = after >= 0
                lifted[has] = np.maximum(lifted[has], REPLY * s[after[has]])
            s = lifted
        return s

    variants: dict[str, dict[str, Any]] = {
        "base": {},
        "k100": {"k": 100},
        "k200": {"k": 200},
        "words": {"form": "words"},
        "avg": {"form": "avg"},
        "prf": {"prf": PRF_DOCS},
        "prf-k200": {"prf": PRF_DOCS, "k": 200},
        "reply": {"reply": "prev"},
        "reply-both": {"reply": "both"},
        "chunks": {"chunked": True},
        "prf-reply": {"prf": PRF_DOCS, "reply": "prev"},
        "prf-reply-chunks": {"prf": PRF_DOCS, "reply": "prev", "chunked": True},
        "prf-reply-chunks-k200": {"prf": PRF_DOCS, "reply": "prev", "chunked": True, "k": 200},
    }
    for n in (1, 2):
        variants[f"slots{n}"] = {"slots": n}
        variants[f"avg-slots{n}"] = {"slots": n, "form": "avg"}
    for c in (0.4, 0.5):
        variants[f"slots1-cos{c}"] = {"slots": 1, "min_cos": c}
        variants[f"slots2-cos{c}"] = {"slots": 2, "min_cos": c}
    variants["slots1-win1"] = {"slots": 1, "win_slots": 1}
    variants["win-nofloor"] = {"win_floor": -1.0}
    variants["slots1-win1-nofloor"] = {"slots": 1, "win_slots": 1, "win_floor": -1.0}
    variants["avg-slots1-win1"] = {"slots": 1, "win_slots": 1, "form": "avg"}
    variants["slots2-win1"] = {"slots": 2, "win_slots": 1}
    variants["slot-timed"] = {"slots": 1, "timed": True}
    variants["avg-slot-timed"] = {"slots": 1, "timed": True, "form": "avg"}
    variants["ctx"] = {"ctx": "max"}
    variants["ctx-only"] = {"ctx": "only"}
    variants["avg-slot-timed-ctx"] = {"slots": 1, "timed": True, "form": "avg", "ctx": "max"}
    variants["shipped"] = {"slots": 1, "timed": True, "form": "avg"}
    misses = "--misses" in args
    names = [n for n in args if n in variants] or list(variants)
    cats = [c for c in run.CATEGORIES if c != "unanswerable"]
    print(f"model {embedder.model_id}, {len(keys)} vectors, {len(chunk_rows)} extra windows\n")
    print("| variant | in 60 | in 200 | dense hit@5 | hit@1 | hit@5 | hit@10 | MRR | "
          + " | ".join(cats) + " | unanswerable confident |")  # fmt: skip
    print("|---|--:|--:|--:|--:|--:|--:|--:|" + "--:|" * len(cats) + "--:|")
    for name in names:
        v = variants[name]
        rows, dense_ranks = [], []
        for item in asked:
            q, answers, a_kw = item["q"], item["answers"], item["args"]
            ranked: list[ranking.Ranked] = []
            first = None
            if a_kw:
                a, found = a_kw[0], a_kw[1]
                s = scores_for(item, v.get("form", "raw"), v.get("prf", 0),
                               v.get("reply", ""), v.get("chunked", False),
                               v.get("ctx", ""))  # fmt: skip
                order = np.argsort(-s, kind="stable")
                ranks = [n for n, i in enumerate(order[:200], 1) if keys[i] in answers]
                first = ranks[0] if ranks else None
                k = v.get("k", POOL)
                nearest = top(s, k)
                timely: frozenset[Any] = frozenset()
                then: list[tuple[Any, float]] = []
                mask = window_mask(a)
                if mask is not None and mask.any():
                    then = top(s, k, mask, v.get("win_floor"))
                    timely = frozenset(key for key, _ in then)
                    nearest = sorted(dict(nearest + then).items(), key=lambda n: -n[1])
                kw = dict(item["kwargs"])
                kw["timely"] = timely
                ranked = [r for r in real(a, found, nearest, **kw) if r.score > 0]
                pool_of_slots = then if (v.get("timed") and then) else nearest
                slot_keys = [
                    key
                    for key, c in pool_of_slots[: v.get("slots", 0)]
                    if c >= v.get("min_cos", 0.0)
                ]
                slot_keys += [key for key, _ in then[: v.get("win_slots", 0)]
                              if key not in slot_keys]  # fmt: skip
                ranked = _slotted(ranked, slot_keys)
                ranked = ranked[: run.TOP]
            if answers:
                dense_ranks.append((q.category, first))
            got = [n for n, r in enumerate(ranked, 1) if r.key in answers]
            if misses and answers and not (got and got[0] <= 5):
                kwr = [n for n, r in enumerate(real(a_kw[0], a_kw[1], ()), 1)
                       if r.key in answers][:1] if a_kw else []  # fmt: skip
                print(
                    f"  miss {q.category:11} kw={kwr} dense={first} hyb={got[:1]}"
                    f" when={a_kw[0].when is not None if a_kw else None} {q.question}"
                )
            sure = bool(ranked) and ranking.confident(ranked[0])
            rows.append({"category": q.category, "answers": len(q.answers), "ranks": got,
                         "confident": sure})  # fmt: skip
        per = {c: run.score([r for r in rows if r["category"] == c]) for c in run.CATEGORIES}
        overall = run.score([r for r in rows if r["answers"]])
        in60 = statistics.fmean(f is not None and f <= 60 for _, f in dense_ranks)
        in200 = statistics.fmean(f is not None for _, f in dense_ranks)
        d5 = statistics.fmean(f is not None and f <= 5 for _, f in dense_ranks)
        cells = " | ".join(f"{per[c]['hit@5']:.3f}" for c in cats)
        para = [f for c, f in dense_ranks if c == "paraphrase"]
        print(f"| {name} | {in60:.3f} | {in200:.3f} | {d5:.3f} | {overall['hit@1']:.3f} |"
              f" {overall['hit@5']:.3f} | {overall['hit@10']:.3f} | {overall['mrr']:.3f} |"
              f" {cells} | {per['unanswerable'].get('confident', 0):.3f} |"
              f"  para in60 {statistics.fmean(f is not None and f <= 60 for f in para):.2f}",
              flush=True)  # fmt: skip
    _ = weight
    mem.close()
    return 0


def variants_wanted(args: list[str], part: str) -> list[str]:
    """The variants asked for (all when none is named) whose name holds `part`."""
    named = [a for a in args if not a.startswith("--")]
    return [a for a in named if part in a] if named else [part]


def _embeddable(mem: Any) -> Iterator[Any]:
    """Every record as it is embedded (kind, ref_id, text), a page at a time: pending for a
    model no store has, so every record is."""
    from clew.models import VECTOR_KINDS

    for kind in VECTOR_KINDS:
        last = ""
        while page := mem._store.pending_vectors(kind, "no-such-model", after=last, limit=2000):
            yield from page
            last = page[-1].ref_id


def _texts(mem: Any) -> dict[Any, str]:
    """Every record's text as it is embedded, by (kind, id)."""
    return {(p.kind, p.ref_id): p.text for p in _embeddable(mem)}


def _slotted(ranked: list[ranking.Ranked], slot_keys: list[Any]) -> list[ranking.Ranked]:
    """The hybrid list with these records among its first five: those not there already
    take the last places of the five."""
    by_key = {r.key: r for r in ranked}
    wanted = [k for k in slot_keys if k in by_key]
    head = [r.key for r in ranked[:5]]
    missing = [k for k in wanted if k not in head]
    if not missing:
        return ranked
    keep = [k for k in head if k not in missing][: 5 - len(missing)]
    first = keep + missing
    rest = [r for r in ranked if r.key not in first]
    return [by_key[k] for k in first] + rest


def _chunks(mem: Any, embedder: Any, keys: list[Any], row_of: dict[Any, int]) -> tuple[Any, Any]:
    """Vectors of the windows of each record longer than one window (after its first),
    and the row each belongs to."""
    import numpy as np

    tok = embedder._tokenizer
    limit = getattr(embedder, "max_tokens", 512)
    texts: list[str] = []
    owners: list[int] = []
    for p in _embeddable(mem):
        r = row_of.get((p.kind, p.ref_id))
        if r is None:
            continue
        enc = tok.encode(p.text[:40000], add_special_tokens=False)
        if len(enc.ids) <= limit - 2:
            continue
        offsets = enc.offsets
        for start in range(CHUNK_STRIDE, len(enc.ids), CHUNK_STRIDE):
            end = min(start + CHUNK_TOKENS, len(enc.ids))
            texts.append(p.text[offsets[start][0] : offsets[end - 1][1]])
            owners.append(r)
            if end == len(enc.ids):
                break
    if not texts:
        return np.zeros((0, 1), dtype=np.float32), np.zeros(0, dtype=np.int64)
    return embedder.embed(texts), np.array(owners)


if __name__ == "__main__":
    raise SystemExit(main())
