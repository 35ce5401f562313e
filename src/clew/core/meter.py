"""How far a long piece of work has got, told to whoever listens: the CLI draws a bar on a
terminal from it (cli/bar.py). The library only reports; with no listener (the default, and
always outside the CLI) a report is one context-variable read. Not `progress.py`, which is
a task's progress from its messages.

A listener is set per context (`listening`), so threads and asyncio tasks that copy the
context (`asyncio.to_thread` does) report to it and others do not.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar

Listener = Callable[[str, int, "int | None"], None]
_listener: ContextVar[Listener | None] = ContextVar("clew_meter", default=None)


def report(what: str, done: int, total: int | None = None) -> None:
    """Say that `done` of `total` (None: not known) units of `what` are finished."""
    listener = _listener.get()
    if listener is not None:
        listener(what, done, total)


@contextlib.contextmanager
def listening(listener: Listener) -> Iterator[None]:
    """Send the reports made inside the block to `listener(what, done, total)`."""
    token = _listener.set(listener)
    try:
        yield
    finally:
        _listener.reset(token)
