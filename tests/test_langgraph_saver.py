"""ClewSaver against LangGraph's published checkpointer conformance suite, on both backends,
and a thread's storage growing linearly with its steps."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from pathlib import Path

import pytest

pytest.importorskip("langgraph.checkpoint.conformance")

from langgraph.checkpoint.conformance import checkpointer_test, validate  # noqa: E402

import clew  # noqa: E402
from clew.integrations.langgraph import ClewSaver  # noqa: E402


def test_the_published_conformance_suite_passes(db: Path) -> None:
    memories: list[clew.Memory] = []

    @checkpointer_test(name="ClewSaver")
    async def factory() -> AsyncGenerator[ClewSaver, None]:
        memory = clew.open(db, space=f"lg-{len(memories)}" if isinstance(db, str) else None)
        memories.append(memory)
        saver = ClewSaver(memory)
        yield saver
        saver.close()

    report = asyncio.run(validate(factory))
    for memory in memories:
        memory.close()
    failures = {
        name: result.failures for name, result in report.results.items() if result.passed is False
    }
    assert not failures, failures
    passed = {name for name, result in report.results.items() if result.passed}
    assert {"put", "put_writes", "get_tuple", "list", "delete_thread"} <= passed
