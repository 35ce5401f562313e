"""What reading an ADK session costs from ClewSessionService, next to ADK's own
InMemorySessionService (the floor: no storage at all) in the same run.

Prints a markdown table; a script, not a timed test:

    python benchmarks/bench_adk_session.py           # a session of 1,000 events
    python benchmarks/bench_adk_session.py --quick   # 200 events

Both services get the same events (a sentence of the benchmark workload each, every tenth
with a state delta). Then, alternating samples: the whole session, and its newest 5 events
(`num_recent_events`, what ADK's runner and memory tools ask for), each with its state.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.dirname(__file__))

from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.sessions.base_session_service import GetSessionConfig
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.genai import types

import clew
from clew.integrations.adk import ClewSessionService
from common import header, table
from workload import messages


async def _sample(
    services: dict[str, Any], config: GetSessionConfig | None, runs: int
) -> list[str]:
    walls: dict[str, list[float]] = {n: [] for n in services}
    cpus: dict[str, list[float]] = {n: [] for n in services}
    for i in range(runs):
        order = list(services.items())
        for name, service in order if i % 2 else order[::-1]:
            wall, cpu = time.perf_counter(), time.process_time()
            got = await service.get_session(app_name="a", user_id="u", session_id="s",
                                            config=config)  # fmt: skip
            walls[name].append(1000 * (time.perf_counter() - wall))
            cpus[name].append(1000 * (time.process_time() - cpu))
            assert got is not None and got.state["k"] >= 0
    return [
        f"{statistics.median(walls[n]):.2f} / {statistics.median(cpus[n]):.2f}" for n in services
    ]


async def run(total: int) -> None:
    texts = [m["content"][:300] for m in messages(total) if m["role"] != "tool"]
    texts = (texts * (total // max(len(texts), 1) + 1))[:total]
    header(
        "ADK sessions: ClewSessionService beside InMemorySessionService",
        ("events", total),
        ("comparator", "google-adk InMemorySessionService (no storage), same run"),
    )
    with tempfile.TemporaryDirectory() as folder, clew.open(Path(folder) / "clew.db") as memory:
        services: dict[str, Any] = {
            "clew": ClewSessionService(memory),
            "InMemory": InMemorySessionService(),  # type: ignore[no-untyped-call]
        }
        for service in services.values():
            session = await service.create_session(app_name="a", user_id="u", session_id="s")
            for i, text in enumerate(texts):
                event = Event(
                    id=f"e{i}", author="user" if i % 2 else "helper", invocation_id=f"i{i // 2}",
                    timestamp=1_000_000.0 + i,
                    content=types.Content(role="user" if i % 2 else "model",
                                          parts=[types.Part(text=text)]),
                    actions=EventActions(state_delta={"k": i} if i % 10 == 0 else {}),
                )  # fmt: skip
                await service.append_event(session, event)
        rows = [
            ["the whole session", *await _sample(services, None, 20)],
            [
                "its newest 5 events",
                *await _sample(services, GetSessionConfig(num_recent_events=5), 40),
            ],
        ]
        print(table(["get_session (ms, median wall / cpu)", "clew", "InMemory"], rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run: 200 events")
    args = parser.parse_args()
    asyncio.run(run(200 if args.quick else 1000))


if __name__ == "__main__":
    main()
