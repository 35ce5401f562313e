"""What understanding a question costs, against the parsers it sits beside.

Prints markdown tables; it is a script, not a timed test:

    python benchmarks/bench_question.py            # 20,000 samples per row
    python benchmarks/bench_question.py --quick    # smoke run, a second

`question.understand` (content words, identifiers whole and split, phrases, known speakers
and tools, a time window) against `search.parse` (the user syntax only) on the same agent
questions, taking turns question by question so machine noise hits both alike; then
`question.content_words` on a 2 KB record against the floor of `str.split` and `casefold`.
Wall time and CPU time per call, in microseconds. Stdlib and clew only.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime

from clew.core import query as search
from clew.search.question import content_words, understand
from common import header, pct, table

QUESTIONS = (
    "which registry did we pick, and why?",
    "when did the auth tests last fail?",
    "what did Melanie say about her pottery class last month?",
    "where is ERR_CONN_RESET handled?",
    "what port does the dev server use",
    "what changed in src/auth.py since v1.2.3?",
    "remind me which flag disables the cache, `--no-cache`?",
    "how does AuthService refresh tokens?",
    "what did Caroline do a couple of weeks ago?",
    "what did we deploy on 2026-05-03?",
    "why did the migration fail on PostgreSQL yesterday?",
    "what did commit a1b2c3d fix",
)
SPEAKERS = ("Melanie", "Caroline", "user", "assistant")
TOOLS = ("bash", "read_file", "grep", "edit_file")
NOW = datetime(2026, 5, 20, 15, 30, tzinfo=UTC)
RECORD = (
    "Ran the auth tests again after the retry change: 41 passed, 2 failed. The failures are "
    "in tests/test_auth.py::test_refresh_token and test_expired_session, both with "
    "ERR_CONN_RESET from the token service. Melanie's note says the dev server listens on "
    "port 8080 and the registry we picked is npm because the private one timed out. "
) * 6


def samples(calls: list[tuple[Callable[[], object], list[float], list[float]]], runs: int) -> None:
    """Run each call `runs` times, taking turns at going first; microseconds, wall and CPU."""
    for i in range(runs):
        order = calls if i % 2 else calls[::-1]
        for fn, wall, cpu in order:
            w0, c0 = time.perf_counter(), time.process_time()
            fn()
            cpu.append((time.process_time() - c0) * 1e6)
            wall.append((time.perf_counter() - w0) * 1e6)


def row(name: str, wall: list[float], cpu: list[float]) -> list[object]:
    return [
        name,
        round(statistics.median(wall), 1),
        round(pct(wall, 95), 1),
        round(statistics.mean(cpu), 1),
    ]


def main() -> None:
    """Measure, print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run")
    args = parser.parse_args()
    runs = 1000 if args.quick else 20000
    header("Query understanding", ("samples", runs), ("questions", len(QUESTIONS)))
    u_wall: list[float] = []
    u_cpu: list[float] = []
    p_wall: list[float] = []
    p_cpu: list[float] = []
    for i in range(runs):
        asked = QUESTIONS[i % len(QUESTIONS)]
        samples(
            [
                (
                    lambda q=asked: understand(q, now=NOW, speakers=SPEAKERS, tools=TOOLS),
                    u_wall,
                    u_cpu,
                ),
                (lambda q=asked: search.parse(q, any_terms=True), p_wall, p_cpu),
            ][:: 1 if i % 2 else -1],  # each goes first as often
            1,
        )
    c_wall: list[float] = []
    c_cpu: list[float] = []
    f_wall: list[float] = []
    f_cpu: list[float] = []
    samples(
        [
            (lambda: content_words(RECORD), c_wall, c_cpu),
            (lambda: set(RECORD.casefold().split()), f_wall, f_cpu),
        ],
        runs // 10,
    )
    print()
    print(
        table(
            ["call", "p50 µs", "p95 µs", "CPU mean µs"],
            [
                row("question.understand", u_wall, u_cpu),
                row("search.parse (floor: syntax only)", p_wall, p_cpu),
                row(f"content_words, {len(RECORD):,} chars", c_wall, c_cpu),
                row("floor: casefold + split + set", f_wall, f_cpu),
            ],
        )
    )


if __name__ == "__main__":
    main()
