"""`forward`: a method of one object that calls the same method on a part it holds. Memory
forwards its flat API to its services with it, and each store its contract's search, vector
and import calls to the parts it holds."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Concatenate, ParamSpec, TypeVar

_S = TypeVar("_S")
_P = ParamSpec("_P")
_R = TypeVar("_R")


def forward(
    part: str, method: Callable[Concatenate[_S, _P], _R]
) -> Callable[Concatenate[Any, _P], _R]:
    """A method that calls the method named as `method` on the part its object holds as
    `part`, with `method`'s name, signature and docstring. By name, not `method` itself:
    `method` may be a protocol's, each backend's part a class of its own."""
    name = method.__name__

    def call(self: Any, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        found: Callable[_P, _R] = getattr(getattr(self, part), name)
        return found(*args, **kwargs)

    call.__name__ = name
    call.__qualname__ = method.__qualname__
    call.__doc__ = method.__doc__
    call.__module__ = method.__module__
    call.__wrapped__ = method  # type: ignore[attr-defined]  # inspect.signature reads it
    call.__forward_part__ = part  # type: ignore[attr-defined]  # bind_forwards reads it
    return call


def bind_forwards(obj: object) -> None:
    """Set each forwarded call of `obj` on `obj` itself as its part's bound method, once the
    parts are built (they are never replaced): a call then costs what a call to the part
    costs, where the class's forward looks two names up on every call (the store's write
    path makes dozens of them a write). The class keeps the forwards, for types and docs."""
    for name, part in _forwards(type(obj)):
        setattr(obj, name, getattr(getattr(obj, part), name))


_FORWARDS: dict[type, tuple[tuple[str, str], ...]] = {}


def _forwards(cls: type) -> tuple[tuple[str, str], ...]:
    """(name, part) of each forwarded call of `cls`, its bases' included, found once a class:
    a store is opened many times a process."""
    known = _FORWARDS.get(cls)
    if known is not None:
        return known
    found: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        for name, value in vars(klass).items():
            part = getattr(value, "__forward_part__", None)
            if part is not None:
                found[name] = part
            else:
                found.pop(name, None)  # a subclass that defines the call itself
    _FORWARDS[cls] = tuple(found.items())
    return _FORWARDS[cls]
