"""What clew's ADK session service costs, beside ADK's own SqliteSessionService.

Both keep a session in a SQLite file in the same folder. Each holds N events (a user turn of
~40 words, a reply of ~120 words, alternately; written through each service's own
append_event); then, in rotation so machine noise hits both alike, each sample appends one
event (what ADK's Runner does after every model or tool step) and reads the whole session
back (what the Runner does at the start of every run). Wall and CPU time (the process's,
the worker threads included), p50 and p90.

Run: `python benchmarks/bench_adk.py [--events 200,2000] [--runs 30]`.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from google.adk.events.event import Event
from google.adk.sessions.base_session_service import BaseSessionService
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.genai import types

import clew
from clew.integrations.adk import ClewSessionService
from common import alternating_cpu, header, pct, table

APP, USER = "bench", "user"
WORDS = ["the", "build", "failed", "on", "auth", "module", "because", "token", "cache",
         "expired", "before", "retry"]  # fmt: skip


def event(n: int, rng: random.Random) -> Event:
    author = "user" if n % 2 == 0 else "agent"
    text = " ".join(rng.choice(WORDS) for _ in range(40 if author == "user" else 120))
    role = "user" if author == "user" else "model"
    return Event(author=author, invocation_id=f"inv-{n // 2}",
                 content=types.Content(role=role, parts=[types.Part(text=text)]))  # fmt: skip


def sides(
    loop: asyncio.AbstractEventLoop,
    services: list[BaseSessionService],
    sessions: list[Any],
    count: int,
) -> dict[str, list[Callable[[int], object]]]:
    """For each call measured, one sample function per service."""

    def append(k: int) -> Callable[[int], object]:
        service, session, rng = services[k], sessions[k], random.Random(k)
        return lambda i: loop.run_until_complete(
            service.append_event(session, event(count + i, rng))
        )

    def read(k: int) -> Callable[[int], object]:
        return lambda i: loop.run_until_complete(
            services[k].get_session(app_name=APP, user_id=USER, session_id="s")
        )

    return {"append_event": [append(0), append(1)],
            "get_session (all events)": [read(0), read(1)]}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", default="200,2000")
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    header("ADK session service: clew against ADK's SqliteSessionService", ("runs", args.runs))
    loop = asyncio.new_event_loop()
    rows: list[list[object]] = []
    for count in (int(c) for c in args.events.split(",")):
        folder = Path(tempfile.mkdtemp(prefix="bench-adk-"))
        memory = clew.open(folder / "clew.db")
        services: list[tuple[str, BaseSessionService]] = [
            ("clew ClewSessionService", ClewSessionService(memory)),
            ("ADK SqliteSessionService", SqliteSessionService(str(folder / "adk.db"))),
        ]
        sessions: list[Any] = []
        for _, service in services:
            rng = random.Random(7)
            session = loop.run_until_complete(
                service.create_session(app_name=APP, user_id=USER, session_id="s")
            )
            for n in range(count):
                loop.run_until_complete(service.append_event(session, event(n, rng)))
            sessions.append(session)

        calls = sides(loop, [s for _, s in services], sessions, count)
        for what, pair in calls.items():
            wall, cpu = alternating_cpu(pair, args.runs, warm=2)
            for k, (name, _) in enumerate(services):
                rows.append([f"{count:,}", what, name, f"{pct(wall[k], 50):.2f}",
                             f"{pct(wall[k], 90):.2f}", f"{pct(cpu[k], 50):.2f}"])  # fmt: skip
        memory.close()
    print()
    print(table(["events", "call", "service", "wall p50", "wall p90", "cpu p50"], rows))


if __name__ == "__main__":
    main()
