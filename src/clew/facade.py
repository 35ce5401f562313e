"""The plumbing every part of the Memory facade shares: the store, the clock, one write
transaction per call with one correlation id and timestamp, and id resolution.

Each public mutating method validates its arguments, then, in one write transaction
(`_write`), reads what it must check and journals one or more events that the store
applies to its tables. Events from one call share a correlation id (a fresh one per call,
or the caller's from `correlation()`). Ids may be given as any unambiguous prefix.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, NamedTuple, Self

from clew import checks
from clew.clock import Clock, stamp, utcnow
from clew.errors import ValidationError
from clew.ids import new_id
from clew.lifecycle import MaintenanceSettings
from clew.location import is_url
from clew.models import Event
from clew.store import Store
from clew.stuck import StuckRules

if TYPE_CHECKING:
    from clew.providers import Provider

_correlation: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "clew_correlation", default=None
)


class _Call:
    """What the current call wrote, for what runs after its commit (mirrors, the worker)
    and for update_task, which builds the task it returns from it."""

    __slots__ = ("jobs", "tasks", "types")

    def __init__(self) -> None:
        self.tasks: set[str] = set()
        self.jobs = 0
        self.types: dict[str, set[str]] = {}  # task id -> the types of its events


_call: contextvars.ContextVar[_Call | None] = contextvars.ContextVar("clew_call", default=None)


class Settings(NamedTuple):
    """How a Memory behaves beyond its store (see `clew.open` and config.py)."""

    state_budget: int = 1500
    mirror: bool = False
    small: Provider | None = None  # the utility model: extraction, summaries, questions
    large: Provider | None = None  # for complex questions, if configured
    limits: dict[str, int] | None = None  # the cost governor's caps (config.LIMIT_DEFAULTS)
    summary_every: int = 5  # messages between running summaries
    # Who does queued jobs: a thread of this process, a detached `clew work` process, or
    # nobody until run_jobs(); "auto" is a thread in a library and a process for the CLI.
    worker: str = "auto"
    # Messages that say a step is done: shown as suggestions, applied, or ignored.
    progress: str = "suggest"
    stuck: StuckRules = StuckRules()  # when a task counts as stuck, how often to alert
    maintenance: MaintenanceSettings = MaintenanceSettings()  # [maintenance] in config.toml


_HINTS = {
    "task": "list tasks with `clew task list`",
    "action": "see a task's actions with `clew task show TASK`",
    "entry": "list a task's entries with `clew entries --task TASK`",
    "message": "see a task's messages with `clew task show TASK`",
    "decision": "see a task's trace with `clew trace show TASK`",
    "pattern": "list patterns with `clew pattern list --all`",
    "guardrail": "list guardrails with `clew guard list --all`",
    "session": "list sessions with `clew session list --all`",
    "turn": "find turns with `clew recall SESSION --search TEXT`",
    "wait": "list waits with `clew wait list`",
}

# Events that give the worker something to do after their commit: a job, or a wait to poll.
_WORK_EVENTS = frozenset({"job.queued", "wait.added"})


class Facade:
    """The shared plumbing of `Memory`; not used on its own."""

    def __init__(
        self, store: Store, *, clock: Clock = utcnow, settings: Settings | None = None
    ) -> None:
        self._store = store
        self._clock = clock
        self.settings = settings or Settings()
        self.state_budget = checks.budget(self.settings.state_budget)
        # The files mirror a store beside its own file: a team store (a URL) has none.
        wanted = self.settings.mirror and store.path != ":memory:" and not is_url(store.path)
        self._mirror = _mirror_for(store.path) if wanted else None

    # -- lifecycle ------------------------------------------------------------------------

    @property
    def path(self) -> str:
        """The store's location."""
        return self._store.path

    @property
    def space(self) -> str:
        """The namespace every record of this Memory belongs to."""
        return self._store.space

    @property
    def read_only(self) -> bool:
        """Whether the store opened for reading only (a file, folder or mount not writable)."""
        return self._store.read_only

    def close(self) -> None:
        """Close the store."""
        self._store.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def correlation(self, correlation_id: str | None = None) -> Iterator[str]:
        """Group every event written inside the block under one correlation id."""
        cid = checks.text(correlation_id, "correlation id") if correlation_id else new_id()
        token = _correlation.set(cid)
        try:
            yield cid
        finally:
            _correlation.reset(token)

    # -- plumbing -------------------------------------------------------------------------

    def _now(self) -> str:
        return stamp(self._clock())

    def _emit(self, type: str, task_id: str | None, data: dict[str, Any], at: str) -> Event:
        cid = _correlation.get() or new_id()
        call = _call.get()
        if call is not None:
            if task_id is not None:
                call.tasks.add(task_id)
                call.types.setdefault(task_id, set()).add(type)
            call.jobs += type in _WORK_EVENTS
        return self._store.append(
            type=type, task_id=task_id, correlation_id=cid, data=data, created_at=at
        )

    @contextlib.contextmanager
    def _write(self) -> Iterator[str]:
        """Open a write transaction with one correlation id and one timestamp for the call;
        after it commits, refresh the mirrors of the tasks it wrote and start queued jobs."""
        if _call.get() is not None:  # inside another call's write: that call finishes it
            with self._store.transaction(write=True):
                yield self._now()
            return
        call = _Call()
        token = _call.set(call)
        try:
            with contextlib.ExitStack() as stack:
                if _correlation.get() is None:
                    stack.enter_context(self.correlation())
                stack.enter_context(self._store.transaction(write=True))
                yield self._now()
        finally:
            _call.reset(token)
        if call.tasks or call.jobs:
            self._after_commit(sorted(call.tasks), call.jobs)

    def _in_call(self) -> bool:
        """Say whether this runs inside another call's write."""
        return _call.get() is not None

    def _written(self, task_id: str) -> set[str]:
        """The types of the events the current call wrote for a task."""
        call = _call.get()
        return call.types.get(task_id, set()) if call is not None else set()

    def _after_commit(self, task_ids: list[str], jobs: int) -> None:
        """Run after a call's transaction commits, with the tasks it wrote and the number
        of jobs it queued. Mixins extend it (calling super())."""

    def _action_recorded(self, task_id: str, failed: bool, at: str) -> None:
        """Run inside the write that records or finishes an action (stuck detection
        extends it)."""

    def _lazy(self, trigger: str) -> None:
        """What runs lazily when the store is opened or primed (maintenance when due);
        the lifecycle mixin does it."""

    def _background(self) -> float | None:
        """A worker's round besides jobs (polling waits, maintenance); return the seconds
        until it wants another, or None when nothing is left."""
        return None

    def _command_succeeded(self, task_id: str, command: str, action_id: str, at: str) -> None:
        """Called inside the write that records a command as succeeded; the archive extends
        it (a later successful run ends the failure of earlier runs)."""

    def _resolve(self, kind: str, ident: str) -> str:
        """Return the full id of the `kind` record named by `ident` (an id or its prefix)."""
        if not isinstance(ident, str):
            raise ValidationError(f"{kind} id must be text, not {type(ident).__name__}")
        return self._store.resolve(kind, ident, _HINTS[kind])

    def _task_id(self, ident: str) -> str:
        return self._resolve("task", ident)


def _mirror_for(path: str) -> Any:
    from clew.mirror import Mirror

    return Mirror.beside(path)
