"""The Memory's own life has hooks, registered by marks like its subscriptions and never
overridden by name: on open (and prime), in a worker's round, on close. And the rule that
keeps it so: no name is defined by two classes of Memory's MRO."""

from __future__ import annotations

from pathlib import Path

import pytest

import clew
from clew.kernel import _registry, in_background, on_close, on_open
from clew.memory import Memory
from tests.conftest import FakeClock

# What Python itself puts in every class's namespace: not a definition of anyone's.
_EVERY_CLASS = frozenset(
    {
        "__module__",
        "__qualname__",
        "__doc__",
        "__dict__",
        "__weakref__",
        "__annotations__",
        "__firstlineno__",
        "__static_attributes__",
        "__orig_bases__",
        "__parameters__",
        "__type_params__",
    }
)

# Names two classes of Memory's MRO may both define, each with the reason. Keep it empty:
# a behaviour that extends another is a hook (kernel.py), a dependency a distinct name.
_ALLOWED: dict[str, str] = {
    "__init__": "Memory's constructor is the composition root: the kernel's, then its services",
}


def test_no_name_is_defined_by_two_classes_of_memory() -> None:
    owners: dict[str, list[str]] = {}
    for cls in Memory.__mro__:
        if cls is object:
            continue
        for name in vars(cls):
            if name not in _EVERY_CLASS:
                owners.setdefault(name, []).append(f"{cls.__module__}.{cls.__qualname__}")
    overridden = {n: o for n, o in owners.items() if len(o) > 1 and n not in _ALLOWED}
    assert overridden == {}, "overridden by name (make it a hook, or give it its own name)"


def test_memorys_hooks_are_the_documented_ones(mem: clew.Memory) -> None:
    hooks = mem._hooks  # type: ignore[attr-defined]  # its services' marks, bound
    assert [h.__name__ for h in hooks.opens] == ["_maintain_lazily"]
    assert [h.__name__ for h in hooks.rounds] == ["_upkeep_round"]
    assert [h.__name__ for h in hooks.closes] == ["_stop_worker"]


class _Hooked(Memory):
    """A capability with hooks of its own, as a later layer adds one: marks, no override."""

    calls: list[str]
    fail: bool = False

    @on_open(5)
    def _first_open(self, trigger: str) -> None:
        self.calls.append(f"open 5 {trigger}")

    @on_open(50)
    def _last_open(self, trigger: str) -> None:
        self.calls.append(f"open 50 {trigger}")

    @in_background(5)
    def _rarely(self) -> float | None:
        return 300.0

    @in_background(50)
    def _soon(self) -> float | None:
        return 2.5

    @on_close(5)
    def _first_close(self) -> None:
        self.calls.append("close 5")

    @on_close(50)
    def _last_close(self) -> None:
        self.calls.append("close 50")
        if self.fail:
            raise RuntimeError("close hook bug")


def _hooked(mem: clew.Memory) -> _Hooked:
    hooked = _Hooked(mem._store, clock=mem._clock, settings=mem.settings)  # type: ignore[attr-defined]
    hooked.calls = []
    return hooked


def test_open_hooks_run_in_order_with_their_trigger(mem: clew.Memory) -> None:
    hooked = _hooked(mem)
    hooked._opened("open")
    hooked.prime()
    assert hooked.calls == ["open 5 open", "open 50 open", "open 5 prime", "open 50 prime"]
    assert _registry(_Hooked).opens == ("_first_open", "_last_open")
    opens = [h.__name__ for h in hooked._hooks.opens]  # type: ignore[attr-defined]
    assert opens == ["_first_open", "_maintain_lazily", "_last_open"]  # upkeep's, between


def test_a_worker_round_wants_the_soonest_of_its_hooks(mem: clew.Memory) -> None:
    assert mem.run_background() is None  # nothing watched, nothing due
    assert _hooked(mem).run_background() == 2.5


def test_close_runs_every_hook_newest_first_then_closes_the_store(
    db: Path, clock: FakeClock
) -> None:
    hooked = _hooked(clew.open(db, clock=clock))  # its own store: this test closes it
    hooked.fail = True
    with pytest.raises(RuntimeError, match="close hook bug"):
        hooked.close()
    # Descending order, the one after the failing hook still ran, and the store closed.
    assert hooked.calls == ["close 50", "close 5"]
    assert _registry(_Hooked).closes == ("_last_close", "_first_close")
    closes = [h.__name__ for h in hooked._hooks.closes]  # type: ignore[attr-defined]
    assert closes == ["_last_close", "_stop_worker", "_first_close"]  # the jobs service's
    with pytest.raises(clew.StoreError):  # the store is closed
        hooked.list_tasks()


def test_a_worker_asks_whether_a_job_is_due(mem: clew.Memory) -> None:
    assert not mem.jobs_due()
    task = mem.create_task("t", ["a"])
    with mem._write() as at:  # type: ignore[attr-defined]
        mem.jobs._enqueue("extract", task.id, None, at)
    assert mem.jobs_due()
    mem.run_jobs()
    assert not mem.jobs_due()
