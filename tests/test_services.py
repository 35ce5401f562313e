"""Memory's services (issue 26: composition, not a lattice): each subject's calls live in a
service handed the kernel, and Memory forwards every public call of each one under the same
name, signature and docstring, so its flat API does not change."""

from __future__ import annotations

import importlib.util
import inspect
from pathlib import Path
from typing import Any

import pytest

import clew
from clew import memory as memory_module
from clew.kernel import Kernel, Service
from clew.memory import Memory


def _generator() -> Any:
    """tools/forwards.py, which writes Memory's forwarded calls."""
    path = Path(__file__).resolve().parents[1] / "tools" / "forwards.py"
    spec = importlib.util.spec_from_file_location("forwards", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FORWARDS = _generator()
MEMORY_SOURCE = FORWARDS.MEMORY.read_text(encoding="utf-8")
# The services a Memory holds, by attribute, read off a Memory's own constructor.
SERVICES = sorted(
    ((part, getattr(memory_module, name)) for part, name in FORWARDS.composed(MEMORY_SOURCE)),
    key=lambda pair: pair[0],
)


def _public(cls: type) -> list[str]:
    return sorted(n for n, v in vars(cls).items() if callable(v) and not n.startswith("_"))


def test_every_service_is_composed() -> None:
    assert {cls for _, cls in SERVICES} == set(Service.__subclasses__())


@pytest.mark.parametrize(("part", "cls"), SERVICES, ids=[p for p, _ in SERVICES])
def test_memory_forwards_every_public_call_of_a_service(part: str, cls: type) -> None:
    for name in _public(cls):
        forwarded = vars(Memory).get(name)
        assert forwarded is not None, f"Memory.{name} is not forwarded to {part}"
        assert forwarded.__wrapped__ is vars(cls)[name]
        assert forwarded.__doc__ == vars(cls)[name].__doc__
        assert inspect.signature(forwarded) == inspect.signature(vars(cls)[name])


def test_nothing_is_forwarded_to_a_call_a_service_does_not_have() -> None:
    forwarded = {n for n, v in vars(Memory).items() if hasattr(v, "__wrapped__")}
    assert forwarded == {n for _, cls in SERVICES for n in _public(cls)}


@pytest.mark.parametrize(("part", "cls"), SERVICES, ids=[p for p, _ in SERVICES])
def test_a_service_is_handed_the_kernel_never_inherits_it(part: str, cls: type) -> None:
    assert cls.__bases__ == (Service,)
    assert not issubclass(cls, Kernel)
    assert part not in vars(Memory) or not callable(vars(Memory)[part])


def test_a_memory_exposes_its_services(tmp_path: object) -> None:
    with clew.open(f"{tmp_path}/s.db") as mem:
        for part, cls in SERVICES:
            service = getattr(mem, part)
            assert isinstance(service, cls)
            assert service._kernel is mem
        made = mem.create_key("default", "read", name="ci")  # through the forward
        assert [k.prefix for k in mem.keys.list_keys()] == [made.key.prefix]


def test_the_forwarded_calls_are_the_generated_ones() -> None:
    # A call added to a service is forwarded by running tools/forwards.py, never by hand.
    assert FORWARDS.rewritten(MEMORY_SOURCE) == MEMORY_SOURCE, "run python tools/forwards.py"


def test_memory_has_one_base_the_kernel() -> None:
    assert Memory.__bases__ == (Kernel,)
