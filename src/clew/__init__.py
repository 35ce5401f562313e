"""clew: a task memory for LLM agents that never loses the thread.

import clew
with clew.open("memory.db") as mem:
    task = mem.create_task("Deploy", ["Build image", "Push", "Run"])
    mem.update_task(task.id, step=1, step_status="completed", message="image built")
    print(mem.where(task.id).text)
"""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from clew.aio import AsyncMemory
    from clew.core.clock import Clock
    from clew.errors import (
        AmbiguousIdError,
        ClewError,
        InvalidTransitionError,
        NotFoundError,
        StoreBusyError,
        StoreError,
        StoreReadOnlyError,
        ValidationError,
    )
    from clew.memory import Memory
    from clew.models import (
        Action,
        ActionLog,
        ActionStatus,
        ActionType,
        AddStep,
        Checkpoint,
        CheckpointCheck,
        CheckpointReport,
        CheckpointStatus,
        Entry,
        EntryStatus,
        EntryType,
        Event,
        FileChanges,
        Message,
        MessageRole,
        MessageType,
        MoveStep,
        PlanItem,
        RemoveStep,
        RenameStep,
        StepStatus,
        Task,
        TaskStatus,
        VerifyReport,
    )
    from clew.state.brief import Brief
    from clew.state.mirror import MirrorWarning

# The package's version: pyproject.toml reads it from here, CHANGELOG.md's newest release names it.
__version__ = "0.2.0"

__all__ = [
    "Action",
    "ActionLog",
    "ActionStatus",
    "ActionType",
    "AddStep",
    "AmbiguousIdError",
    "AsyncMemory",
    "Brief",
    "Checkpoint",
    "CheckpointCheck",
    "CheckpointReport",
    "CheckpointStatus",
    "ClewError",
    "Entry",
    "EntryStatus",
    "EntryType",
    "Event",
    "FileChanges",
    "InvalidTransitionError",
    "Memory",
    "Message",
    "MessageRole",
    "MessageType",
    "MirrorWarning",
    "MoveStep",
    "NotFoundError",
    "PlanItem",
    "Primer",
    "RemoveStep",
    "RenameStep",
    "State",
    "StepStatus",
    "StoreBusyError",
    "StoreError",
    "StoreReadOnlyError",
    "Task",
    "TaskStatus",
    "ValidationError",
    "VerifyReport",
    "__version__",
    "open",
    "open_async",
]


# Public names load on first use (PEP 562), so `clew --version` and hooks start fast.
_LAZY = {
    "AsyncMemory": "clew.aio",
    "Brief": "clew.state.brief",
    "Memory": "clew.memory",
    "MirrorWarning": "clew.state.mirror",
    "Primer": "clew.state.working",
    "State": "clew.state.document",
    **dict.fromkeys(
        [
            "AmbiguousIdError",
            "ClewError",
            "InvalidTransitionError",
            "NotFoundError",
            "StoreBusyError",
            "StoreError",
            "StoreReadOnlyError",
            "ValidationError",
        ],
        "clew.errors",
    ),
    **dict.fromkeys(
        [
            "Action",
            "ActionLog",
            "ActionStatus",
            "ActionType",
            "AddStep",
            "Checkpoint",
            "CheckpointCheck",
            "CheckpointReport",
            "CheckpointStatus",
            "Entry",
            "EntryStatus",
            "EntryType",
            "Event",
            "FileChanges",
            "Message",
            "MessageRole",
            "MessageType",
            "MoveStep",
            "PlanItem",
            "RemoveStep",
            "RenameStep",
            "StepStatus",
            "Task",
            "TaskStatus",
            "VerifyReport",
        ],
        "clew.models",
    ),
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'clew' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


def open(  # clew.open mirrors the builtin on purpose: it opens a store
    path: str | os.PathLike[str] | None = None,
    *,
    space: str | None = None,
    busy_timeout: float | None = None,
    clock: Clock | None = None,
    state_budget: int | None = None,
    mirror: bool | None = None,
) -> Memory:
    """Open (creating if needed) the store at `path` and return its Memory.

    Without a path the store is found like git finds `.git`: $CLEW_DB, then the
    nearest `.clew/` upward from the working directory, then a per-user default.
    `state_budget` (tokens for the task state; $CLEW_STATE_BUDGET) and `mirror` (write
    tasks/<id>/state.yaml and journal.jsonl beside the store; $CLEW_MIRROR) default to
    the environment, then the store's config.toml, which also configures the utility
    model, its caps and its worker (see docs/models.md). `busy_timeout` (seconds a write
    waits for another writer; $CLEW_BUSY_TIMEOUT, else 5) bounds the wait before
    StoreBusyError. A store this user cannot write (a read-only file, folder or mount)
    opens for reading; its writes raise StoreReadOnlyError. Opening runs maintenance when
    it is due (`[maintenance]` in config.toml; at most once an hour by default).
    """
    from clew import config
    from clew.core import checks
    from clew.core.clock import utcnow
    from clew.core.location import resolve_busy_timeout, resolve_space, resolve_store
    from clew.memory import Memory
    from clew.store import open_store

    chosen = checks.space(resolve_space(space))
    location = resolve_store(path)
    settings = config.settings(location, state_budget=state_budget, mirror=mirror)
    store = open_store(location, chosen, resolve_busy_timeout(busy_timeout))
    try:
        memory = Memory(store, clock=clock or utcnow, settings=settings)
    except BaseException:
        store.close()
        raise
    memory._opened("open")  # maintenance, when it is due (never fails the open)
    return memory


def open_async(
    path: str | os.PathLike[str] | None = None,
    *,
    space: str | None = None,
    busy_timeout: float | None = None,
    clock: Clock | None = None,
    state_budget: int | None = None,
    mirror: bool | None = None,
) -> AsyncMemory:
    """Open the store like `open` and return the AsyncMemory over it."""
    from clew.aio import AsyncMemory

    return AsyncMemory(
        open(
            path,
            space=space,
            busy_timeout=busy_timeout,
            clock=clock,
            state_budget=state_budget,
            mirror=mirror,
        )
    )
