"""The kernel every service of the Memory facade is handed: the store, the clock, one write
transaction per call with one correlation id and timestamp, and id resolution.

Each public mutating method validates its arguments, then, in one write transaction
(`_write`), reads what it must check and journals one or more events that the store
applies to its tables. Events from one call share a correlation id (a fresh one per call,
or the caller's from `correlation()`). Ids may be given as any unambiguous prefix.

Side effects are subscriptions, declared on the methods that do them, never overridden
hooks: `@reacts(signal)` runs inside the write when the facade signals something (a step
finished, a message added...), so what it journals commits with the write or not at all;
`@after_commit(order)` runs once a call's transaction has committed, in ascending order,
each isolated (a failing subscriber is logged and counted, and the write stays written);
`@handles_job(kind)` does the queued jobs of one kind. The Memory's own life has hooks
marked the same way: `@on_open(order)` runs when the store is opened or primed,
`@in_background(order)` is part of a worker's round, `@on_close(order)` runs when the
Memory closes, before its store does. A capability adds a method with a decorator; nothing
else is edited, and no method is overridden by name.
"""

from __future__ import annotations

import contextlib
import contextvars
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any, NamedTuple, Self, TypeVar

from clew.core import checks
from clew.core.clock import Clock, stamp, utcnow
from clew.core.ids import ID_LENGTH, is_id_prefix, new_id
from clew.errors import NotFoundError, ValidationError
from clew.models import Event, Job
from clew.privacy.redaction import Found
from clew.settings import Settings as Settings
from clew.store import Store
from clew.store.contract import CheckpointStore

_correlation: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "clew_correlation", default=None
)


class _Call:
    """What the current call wrote, for what runs after its commit (mirrors, the worker)
    and for update_task, which builds the task it returns from it."""

    __slots__ = ("bare", "jobs", "tasks", "types")

    def __init__(self) -> None:
        self.tasks: set[str] = set()
        self.jobs = 0
        self.types: dict[str, set[str]] = {}  # task id -> the types of its events
        # Whether the write open now is an `atomic()` block's, not a call's: a call made
        # there runs in a savepoint of its own (_Savepoint).
        self.bare = False


_call: contextvars.ContextVar[_Call | None] = contextvars.ContextVar("clew_call", default=None)


class Committed(NamedTuple):
    """What one call's committed transaction wrote: what after-commit subscribers get."""

    tasks: tuple[str, ...]  # the tasks it journaled events of, sorted
    types: frozenset[str]  # the types of those events
    jobs: int  # the events that give the worker something to do (a job, a wait)


_F = TypeVar("_F", bound=Callable[..., Any])
# The attribute a decorator marks a method (of the kernel or a service) with: (registry, key,
# order).
_MARK = "_clew_subscription"


def reacts(signal: str, order: int = 100) -> Callable[[_F], _F]:
    """Mark a method to run inside the write whenever `signal` is raised."""
    return _marked("react", signal, order)


def after_commit(order: int) -> Callable[[_F], _F]:
    """Mark a method `(self, Committed)` to run after each call's commit."""
    return _marked("commit", "", order)


def handles_job(kind: str) -> Callable[[_F], _F]:
    """Mark a method `(self, Job)` as what does queued jobs of `kind`."""
    return _marked("job", kind, 0)


def on_open(order: int) -> Callable[[_F], _F]:
    """Mark a method `(self, trigger)` to run, in ascending order, when the store is
    opened (`clew.open`: trigger "open") or primed (`prime`: trigger "prime"). It must
    never fail the call it rides on."""
    return _marked("open", "", order)


def in_background(order: int) -> Callable[[_F], _F]:
    """Mark a method `(self) -> float | None` as part of a worker's round besides
    jobs, in ascending order: it returns the seconds until it wants another round, or
    None when it has nothing left to do."""
    return _marked("background", "", order)


def on_close(order: int) -> Callable[[_F], _F]:
    """Mark a method `(self)` to run when the Memory closes, before its store
    closes: in descending order (the reverse of the others: what started last stops first)."""
    return _marked("close", "", order)


def _marked(registry: str, key: str, order: int) -> Callable[[_F], _F]:
    def mark(fn: _F) -> _F:
        setattr(fn, _MARK, (registry, key, order))
        return fn

    return mark


class _Registry(NamedTuple):
    """A class's subscriptions, by method name (bound per instance)."""

    reactions: dict[str, tuple[str, ...]]  # signal -> methods, in order
    commits: tuple[str, ...]  # after-commit methods, in order
    jobs: dict[str, str]  # job kind -> method
    opens: tuple[str, ...]  # on-open hooks, in order
    rounds: tuple[str, ...]  # background hooks, in order
    closes: tuple[str, ...]  # on-close hooks, in the order they run (descending)


_REGISTRIES: dict[type, _Registry] = {}


def _registry(cls: type) -> _Registry:
    """Collect the marked methods of `cls` (once per class): ordered by their order, then
    by name, so the sequence is documented by the marks alone."""
    found = _REGISTRIES.get(cls)
    if found is not None:
        return found
    marks: list[tuple[str, str, int, str]] = []
    for name in dir(cls):
        mark = getattr(getattr(cls, name, None), _MARK, None)
        if mark is not None:
            marks.append((*mark, name))
    marks.sort(key=lambda m: (m[2], m[3]))
    reactions: dict[str, list[str]] = {}
    for registry, key, _, name in marks:
        if registry == "react":
            reactions.setdefault(key, []).append(name)
    commits = tuple(name for registry, _, _, name in marks if registry == "commit")
    jobs = {key: name for registry, key, _, name in marks if registry == "job"}
    opens = tuple(name for registry, _, _, name in marks if registry == "open")
    rounds = tuple(name for registry, _, _, name in marks if registry == "background")
    closes = tuple(name for registry, _, _, name in reversed(marks) if registry == "close")
    found = _Registry(
        {k: tuple(v) for k, v in reactions.items()}, commits, jobs, opens, rounds, closes
    )
    _REGISTRIES[cls] = found
    return found


_MARKS: dict[type, list[tuple[int, str, str, str]]] = {}


def _marks(cls: type) -> list[tuple[int, str, str, str]]:
    """The marked methods of `cls` as (order, name, registry, key), found once per class."""
    found = _MARKS.get(cls)
    if found is None:
        found = []
        for name in dir(cls):
            mark = getattr(getattr(cls, name, None), _MARK, None)
            if mark is not None:
                registry, key, order = mark
                found.append((order, name, registry, key))
        _MARKS[cls] = found
    return found


class _Hooks(NamedTuple):
    """The bound open, background and close hooks of a Memory and its services."""

    opens: list[Callable[[str], None]]  # in ascending order
    rounds: list[Callable[[], float | None]]  # in ascending order
    closes: list[Callable[[], None]]  # in descending order: what started last stops first


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


class Kernel:
    """What every service shares (the store, clock, settings, the write transaction, events,
    signals and the registries): Memory's one base, handed to each service it composes."""

    def __init__(
        self, store: Store, *, clock: Clock = utcnow, settings: Settings | None = None
    ) -> None:
        self._store = store
        self._clock = clock
        self.settings = settings or Settings()
        self.state_budget = checks.budget(self.settings.state_budget)
        self._reactions: dict[str, list[Callable[..., None]]] = {}
        self._subscribers: list[Callable[[Committed], None]] = []
        self._job_handlers: dict[str, Callable[[Job], None]] = {}
        self._hooks = _Hooks([], [], [])  # the open, background and close hooks, bound
        self._marks: list[tuple[int, str, str, str, Callable[..., Any]]] = []
        self.subscriber_failures = 0  # after-commit subscribers that raised (each logged)
        self._composing = False  # while a Memory builds its services (see `_composed`)
        self._adopt(self)

    def _adopt(self, part: object) -> None:
        """Take the marked methods of `part` (this kernel, or a service composed into it)
        into the registries, ordered with those already taken by their order, then name."""
        for order, name, registry, key in _marks(type(part)):
            bound = getattr(part, name)
            if registry == "job":
                self._job_handlers[key] = bound
            else:
                self._marks.append((order, name, registry, key, bound))
        if not self._composing:
            self._register()

    @contextlib.contextmanager
    def _composed(self) -> Iterator[None]:
        """Build the registries once, after the services made inside this block have been
        adopted, not once a service (an open of a Memory composes some thirty)."""
        self._composing = True
        try:
            yield
        finally:
            self._composing = False
            self._register()

    def _register(self) -> None:
        """The registries from the marks taken: ordered by their order, then name."""
        self._marks.sort(key=lambda m: (m[0], m[1]))
        self._reactions = {}
        for _, _, registry, key, bound in self._marks:
            if registry == "react":
                self._reactions.setdefault(key, []).append(bound)
        # Parts are adopted while the Memory is made, before `_subscribe` can add any.
        self._subscribers = [m[4] for m in self._marks if m[2] == "commit"]
        self._hooks = _Hooks(
            [m[4] for m in self._marks if m[2] == "open"],
            [m[4] for m in self._marks if m[2] == "background"],
            [m[4] for m in reversed(self._marks) if m[2] == "close"],
        )

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

    @property
    def graph_checkpoints(self) -> CheckpointStore:
        """The store's LangGraph checkpoints (what `ClewSaver` keeps them in): framework
        state beside the journal, not in it. Its calls block: from async code, run them
        off the event loop."""
        return self._store.graph_checkpoints

    def close(self) -> None:
        """Close this Memory: stop what it started (its worker thread, if one is waiting),
        then close the store."""
        failure: BaseException | None = None
        for hook in self._hooks.closes:
            try:
                hook()
            except BaseException as exc:  # the next hook still runs, and the store closes
                if failure is None:
                    failure = exc
        try:
            self._store.close()
        finally:
            if failure is not None:
                raise failure

    def _opened(self, trigger: str) -> None:
        """Run the on-open hooks: the store was just opened ("open") or primed ("prime")."""
        for hook in self._hooks.opens:
            hook(trigger)

    def run_background(self) -> float | None:
        """For workers: do a round of the background work besides jobs (maintenance when
        due, the waits that are due); return the seconds until the next round is wanted,
        or None when nothing is left to watch."""
        soonest: float | None = None
        for hook in self._hooks.rounds:
            wanted = hook()
            if wanted is not None and (soonest is None or wanted < soonest):
                soonest = wanted
        return soonest

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def atomic(self) -> AbstractContextManager[None]:
        """Make the calls in the block one transaction: all of them commit, or none.

        `with memory.atomic(): ...` takes the store's write lock at its start, so what a
        call inside reads still holds when a later one writes; the events written inside
        share one correlation id (unless a `correlation()` block gives one) and commit
        together, and after-commit work (mirrors, the worker) runs once, after the commit.
        An exception that leaves the block rolls it all back. A call that journals events
        runs in a savepoint of its own: one that raises inside the block undoes only what
        it wrote, so catching its error and going on is safe (an import, or a write
        outside the journal such as a key or the vector index, joins the block as it is).
        A nested `atomic()` block is a savepoint, undone alone by an exception that leaves
        it. On a read-only store it raises StoreReadOnlyError. On AsyncMemory it takes a function:
        `await amemory.atomic(fn)` runs `fn(memory)` (the sync Memory) inside `atomic()` on
        the worker thread and returns what it returns, so no other call interleaves."""
        return _Atomic(self)

    @contextlib.contextmanager
    def correlation(self, correlation_id: str | None = None) -> Iterator[str]:
        """Group every event written inside the block under one correlation id."""
        if correlation_id:
            cid = checks.text(correlation_id, "correlation id")
        else:
            # A fresh group inside an actor's block (`<door>:<who>:<id>`, e.g. a server's
            # request) keeps the actor: a tool's own grouping must not hide who called it.
            outer = _correlation.get()
            who = outer.rsplit(":", 1)[0] if outer and outer.count(":") >= 2 else ""
            cid = f"{who}:{new_id()}" if who else new_id()
        token = _correlation.set(cid)
        try:
            yield cid
        finally:
            _correlation.reset(token)

    # -- plumbing -------------------------------------------------------------------------

    def _now(self) -> str:
        return stamp(self._clock())

    def _emit(
        self,
        type: str,
        task_id: str | None,
        data: dict[str, Any],
        at: str,
        found: Found | None = None,
        done: frozenset[str] = frozenset(),
    ) -> Event:
        """Journal one event. Its free-text fields are redacted here, the one place every
        write passes through, before the event is made (the data is what is stored and
        chained); `found` is what the caller redacted itself before deriving anything from
        its input (a turn's message, a command), counted with the rest, and `done` the
        fields it redacted so (with `_redacted`, in this call: never a value it read)."""
        data = self.settings.redaction.event(type, data, found, done)
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

    def _write(self) -> AbstractContextManager[str]:
        """Open a write transaction with one correlation id and one timestamp for the call;
        after it commits, refresh the mirrors of the tasks it wrote and start queued jobs.
        Calls made inside join it (`atomic()`, the public way to wrap several calls in
        one transaction, opens it)."""
        return _Write(self)

    def _redacted(self, value: Any, field: str, found: Found) -> Any:
        """Text, bytes or JSON an agent handed clew with its secrets redacted now, before
        anything is derived from it (counted in `found` under `field`)."""
        redaction = self.settings.redaction
        if value is None or not redaction.enabled:
            return value
        if isinstance(value, str):
            return redaction.text(value, found, field)
        if isinstance(value, bytes):
            return redaction.output(value, found, field)
        return redaction.json(value, found, field)

    def _publish(self, committed: Committed) -> None:
        """Run the after-commit subscribers in order. The write has committed, so a failing
        one must not fail the call: it is logged and counted, and the next still runs."""
        for subscriber in self._subscribers:
            try:
                subscriber(committed)
            except Exception:
                import logging  # lazily: ~10 ms of imports a hook never needs

                self.subscriber_failures += 1
                name = getattr(subscriber, "__name__", repr(subscriber))
                logging.getLogger("clew").exception("clew: after-commit subscriber %s failed", name)

    def _subscribe(self, subscriber: Callable[[Committed], None]) -> None:
        """Add an after-commit subscriber to this Memory, after the declared ones."""
        self._subscribers.append(subscriber)

    def _signal(self, signal: str, *args: Any) -> None:
        """Inside a write: run the reactions to `signal` in order. One that raises fails
        the write, like any check: what the reactions journal commits with it or not at all."""
        for reaction in self._reactions.get(signal, ()):
            reaction(*args)

    def _register_job(self, kind: str, handler: Callable[[Job], None]) -> None:
        """Make `handler` do this Memory's queued jobs of `kind`."""
        self._job_handlers[kind] = handler

    def _in_call(self) -> bool:
        """Say whether this runs inside another call's write."""
        return _call.get() is not None

    def _written(self, task_id: str) -> set[str]:
        """The types of the events the current call wrote for a task."""
        call = _call.get()
        return call.types.get(task_id, set()) if call is not None else set()

    def _resolve(self, kind: str, ident: str) -> str:
        """Return the full id of the `kind` record named by `ident` (an id or its prefix)."""
        if not isinstance(ident, str):
            raise ValidationError(f"{kind} id must be text, not {type(ident).__name__}")
        if len(ident) > checks.MAX_NAME_CHARS:  # no id, nor a key named as one, is that long
            raise ValidationError(
                f"{kind} id is {len(ident):,} characters long; an id is {ID_LENGTH} (or the"
                " start of one)"
            )
        return self._store.resolve(kind, ident, _HINTS[kind])

    def _task_id(self, ident: str) -> str:
        return self._resolve("task", ident)

    def _whole_task_id(self, ident: str) -> str:
        """A task id as given when it is a whole id, else resolved: for a call whose first
        read is of the task itself (through `_known_task`), which proves it exists, so the
        id is not looked up twice."""
        if isinstance(ident, str) and len(ident) == ID_LENGTH and is_id_prefix(ident):
            return ident
        return self._task_id(ident)

    @contextlib.contextmanager
    def _known_task(self, ident: str) -> Iterator[None]:
        """Around the first read of a task named by `_whole_task_id`: a task that is not
        there is reported as resolving its id would have reported it."""
        try:
            yield
        except NotFoundError as exc:
            if exc.kind != "task" or exc.ident != ident:
                raise
            raise NotFoundError("task", ident, _HINTS["task"]) from None


class Service:
    """A subject's calls (keys, roles, checkpoints, ...) composed into Memory: handed the
    kernel (its store, clock, settings, write transaction, events and
    registries), never inheriting it, and taking the other services it uses as arguments.
    Its marked methods (`after_commit`, `reacts`, `handles_job`, the hooks) join the
    kernel's registries when it is made."""

    def __init__(self, kernel: Kernel) -> None:
        self._kernel = kernel
        kernel._adopt(self)

    # The kernel's plumbing, under the names a subject's code has always read it by.

    @property
    def _store(self) -> Store:
        return self._kernel._store

    @property
    def _clock(self) -> Clock:
        return self._kernel._clock

    @property
    def settings(self) -> Settings:
        return self._kernel.settings

    @property
    def path(self) -> str:
        return self._kernel.path

    @property
    def space(self) -> str:
        return self._kernel.space

    def _now(self) -> str:
        return self._kernel._now()

    def _write(self) -> AbstractContextManager[str]:
        return self._kernel._write()

    def _emit(
        self,
        type: str,
        task_id: str | None,
        data: dict[str, Any],
        at: str,
        found: Found | None = None,
        done: frozenset[str] = frozenset(),
    ) -> Event:
        return self._kernel._emit(type, task_id, data, at, found, done)

    def _known_task(self, ident: str) -> AbstractContextManager[None]:
        return self._kernel._known_task(ident)

    def _redacted(self, value: Any, field: str, found: Found) -> Any:
        return self._kernel._redacted(value, field, found)

    @property
    def read_only(self) -> bool:
        return self._kernel.read_only

    def _resolve(self, kind: str, ident: str) -> str:
        return self._kernel._resolve(kind, ident)

    def _signal(self, signal: str, *args: Any) -> None:
        self._kernel._signal(signal, *args)

    def _task_id(self, ident: str) -> str:
        return self._kernel._task_id(ident)

    def _whole_task_id(self, ident: str) -> str:
        return self._kernel._whole_task_id(ident)


class _Write:
    """`Kernel._write`. A class, not a generator context manager: every write runs it."""

    __slots__ = ("call", "facade", "own", "saved", "token", "txn")

    def __init__(self, facade: Kernel) -> None:
        self.facade = facade

    def __enter__(self) -> str:
        facade = self.facade
        self.txn = txn = facade._store.transaction(write=True)
        outer = _call.get()
        if outer is not None:  # inside another call's write: that call finishes it
            self.call = None
            self.saved: _Savepoint | None = None
            if outer.bare:  # a call made in an atomic() block: undone alone if it raises
                txn.__enter__()
                self.saved = _Savepoint(facade, outer, bare=False)
                try:
                    self.saved.__enter__()
                except BaseException:
                    txn.__exit__(*sys.exc_info())
                    raise
                try:
                    return facade._now()
                except BaseException as exc:
                    self.__exit__(type(exc), exc, exc.__traceback__)
                    raise
        else:
            self.call = _Call()
            self.token = _call.set(self.call)
            # The call's own correlation id unless a `correlation()` block gives one; set
            # here, not through that context manager (every write runs this).
            self.own = _correlation.set(new_id()) if _correlation.get() is None else None
        try:
            txn.__enter__()
        except BaseException:
            self._reset()
            raise
        try:
            return facade._now()
        except BaseException as exc:  # as if it had been raised inside the block
            self.__exit__(type(exc), exc, exc.__traceback__)
            raise

    def __exit__(self, kind: type[BaseException] | None, error: Any, trace: Any) -> None:
        call = self.call
        if call is None:
            if self.saved is not None:
                try:
                    self.saved.__exit__(kind, error, trace)
                finally:
                    self.txn.__exit__(kind, error, trace)
                return
            self.txn.__exit__(kind, error, trace)
            return
        try:
            self.txn.__exit__(kind, error, trace)
        finally:
            self._reset()
        if kind is None and (call.tasks or call.jobs):
            types = frozenset(t for kinds in call.types.values() for t in kinds)
            self.facade._publish(Committed(tuple(sorted(call.tasks)), types, call.jobs))

    def _reset(self) -> None:
        if self.call is None:
            return
        if self.own is not None:
            _correlation.reset(self.own)
        _call.reset(self.token)


class _Savepoint:
    """A savepoint inside a call's write, with the call's record of what it wrote put back
    as it was when the savepoint is rolled back to (so after-commit work sees only what
    committed). `bare`: whether the block is an atomic() block's (calls in it are each
    undone alone) or a call's own."""

    __slots__ = ("before", "block", "call", "inside", "was")

    def __init__(self, facade: Kernel, call: _Call, *, bare: bool) -> None:
        self.block = facade._store.savepoint()
        self.call = call
        self.inside = bare

    def __enter__(self) -> None:
        call = self.call
        self.block.__enter__()
        self.before = (set(call.tasks), call.jobs, {k: set(v) for k, v in call.types.items()})
        self.was, call.bare = call.bare, self.inside

    def __exit__(self, kind: type[BaseException] | None, error: Any, trace: Any) -> None:
        call = self.call
        call.bare = self.was
        if kind is not None:
            call.tasks, call.jobs, call.types = self.before
        self.block.__exit__(kind, error, trace)


class _Atomic:
    """`Kernel.atomic`: the outermost block is a call's write (one transaction, one
    correlation id, after-commit work once); one inside another write is a savepoint."""

    __slots__ = ("block", "facade")

    def __init__(self, facade: Kernel) -> None:
        self.facade = facade

    def __enter__(self) -> None:
        call = _call.get()
        if call is None:
            write = _Write(self.facade)
            write.__enter__()
            assert write.call is not None
            write.call.bare = True
            self.block: _Write | _Savepoint = write
            return
        self.block = _Savepoint(self.facade, call, bare=True)
        self.block.__enter__()

    def __exit__(self, kind: type[BaseException] | None, error: Any, trace: Any) -> None:
        self.block.__exit__(kind, error, trace)
