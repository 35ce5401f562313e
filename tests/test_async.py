"""AsyncMemory: the same names as Memory, and the event loop keeps running during writes."""

from __future__ import annotations

import asyncio
import inspect
import time
from pathlib import Path

import clew
from clew.aio import AsyncMemory


def public(cls: type) -> set[str]:
    return {name for name in dir(cls) if not name.startswith("_")}


def test_async_twin_has_exactly_the_same_public_names() -> None:
    assert public(AsyncMemory) - {"sync"} == public(clew.Memory)
    assert inspect.iscoroutinefunction(AsyncMemory.close)
    for name in public(clew.Memory):
        sync_member = getattr(clew.Memory, name)
        if inspect.isfunction(sync_member) and name not in ("correlation", "close"):
            assert inspect.iscoroutinefunction(getattr(AsyncMemory, name)), name
            assert getattr(AsyncMemory, name).__doc__ == sync_member.__doc__


def test_async_calls_work_end_to_end(tmp_path: Path) -> None:
    async def scenario() -> str:
        async with clew.open_async(tmp_path / "a.db") as mem:
            with mem.correlation("run-7"):
                task = await mem.create_task("Async", ["one", "two"])
                await mem.update_task(task.id, step=1, step_status="completed", message="one done")
            action = await mem.record_action(task.id, command="ls", exit_code=0, step=2)
            assert (await mem.get_action(action.id)).plan_item_id == task.plan[1].id
            assert {e.correlation_id for e in await mem.journal()}.issuperset({"run-7"})
            assert (await mem.verify()).ok
            return (await mem.where(task.id)).text

    assert "Completed steps 1 of 2: one." in asyncio.run(scenario())


async def _ticks_during(write: object, tick: float = 0.001) -> tuple[int, float]:
    """Run `write` (a coroutine) beside a heartbeat; count beats while the write ran."""
    beats: list[float] = []
    stop = asyncio.Event()

    async def heartbeat() -> None:
        while not stop.is_set():
            beats.append(time.perf_counter())
            await asyncio.sleep(tick)

    beating = asyncio.create_task(heartbeat())
    await asyncio.sleep(0.01)
    start = time.perf_counter()
    await write  # type: ignore[misc]
    end = time.perf_counter()
    stop.set()
    await beating
    return sum(1 for b in beats if start < b < end), end - start


def test_heartbeat_keeps_ticking_while_a_large_write_runs(tmp_path: Path) -> None:
    big = "x" * 12_000_000  # a 12 MB output: long enough to starve a blocked loop of beats

    async def scenario() -> tuple[int, int]:
        async with clew.open_async(tmp_path / "a.db") as mem:
            task = await mem.create_task("Big")
            off_loop, _ = await _ticks_during(mem.record_action(task.id, command="c", stdout=big))

            async def blocking() -> None:  # the same write made on the loop's own thread
                mem.sync.record_action(task.id, command="c", stdout=big)

            on_loop, _ = await _ticks_during(blocking())
            return off_loop, on_loop

    off_loop, on_loop = asyncio.run(scenario())
    assert on_loop == 0  # control: a write on the loop's thread stops the heartbeat
    assert off_loop >= 3
