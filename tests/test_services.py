"""Memory's services (issue 26: composition, not a lattice): each subject's calls live in a
service handed the kernel, and Memory forwards every public call of each one under the same
name, signature and docstring, so its flat API does not change."""

from __future__ import annotations

import inspect
from collections.abc import Iterator

import pytest

import clew
from clew.facade import Facade, Service
from clew.memory import Memory


def _composed() -> Iterator[tuple[str, type[Service]]]:
    """The services a Memory holds, by attribute, read off a Memory's own constructor."""
    source = inspect.getsource(Memory.__init__)
    for cls in Service.__subclasses__():
        for line in source.splitlines():
            if f"= {cls.__name__}(self" in line:
                yield line.split("=")[0].strip().removeprefix("self."), cls


SERVICES = sorted(_composed(), key=lambda pair: pair[0])


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
    assert not issubclass(cls, Facade)
    assert part not in vars(Memory) or not callable(vars(Memory)[part])


def test_a_memory_exposes_its_services(tmp_path: object) -> None:
    with clew.open(f"{tmp_path}/s.db") as mem:
        for part, cls in SERVICES:
            service = getattr(mem, part)
            assert isinstance(service, cls)
            assert service._kernel is mem
        made = mem.create_key("default", "read", name="ci")  # through the forward
        assert [k.prefix for k in mem.keys.list_keys()] == [made.key.prefix]
