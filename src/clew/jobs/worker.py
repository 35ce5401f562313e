"""Who does queued jobs: a thread of this process, or a detached `clew work` process, one
per store and space (a lock file says one is at work). Imported only when work was queued.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import ClassVar, Protocol

from clew.models import Job

# A worker watching waits sleeps at least this long between rounds: a round polls every due
# wait, so "due now" right after one means a check failed (a busy store), to retry calmly.
MIN_NAP = 1.0


class Workplace(Protocol):
    """What a worker needs of a Memory: its calls for workers, and where it is."""

    @property
    def path(self) -> str: ...

    @property
    def space(self) -> str: ...

    def run_jobs(self, *, limit: int | None = None) -> list[Job]: ...

    def jobs_due(self) -> bool: ...

    def run_background(self) -> float | None: ...


class Worker:
    """A background thread that does a Memory's queued jobs, one at a time."""

    _lock = threading.Lock()
    _running: ClassVar[dict[int, Worker]] = {}

    def __init__(self, memory: Workplace) -> None:
        self.memory = memory
        self.again = threading.Event()
        self.stopping = False
        self.thread = threading.Thread(target=self.loop, name="clew-worker", daemon=True)

    @classmethod
    def start(cls, memory: Workplace) -> None:
        with cls._lock:
            worker = cls._running.get(id(memory))
            if worker is not None and worker.thread.is_alive():
                worker.again.set()
                return
            worker = cls._running[id(memory)] = cls(memory)
        worker.thread.start()

    @classmethod
    def stop(cls, memory: object) -> None:
        """Let a Memory's worker end (its Memory is closing); it ends after what it is doing."""
        with cls._lock:
            worker = cls._running.pop(id(memory), None)
        if worker is not None:
            worker.stopping = True
            worker.again.set()

    def loop(self) -> None:
        try:
            while not self.stopping:
                self.again.clear()
                self.memory.run_jobs()
                delay = self.memory.run_background()
                if delay is not None:  # waits are watched: sleep until one is due (or woken)
                    self.again.wait(max(delay, MIN_NAP))
                    continue
                with self._lock:
                    if not self.again.is_set():
                        if self._running.get(id(self.memory)) is self:
                            self._running.pop(id(self.memory), None)
                        return
        except Exception:  # the store was closed under it: the queue keeps the work
            with self._lock:
                if self._running.get(id(self.memory)) is self:
                    self._running.pop(id(self.memory), None)


def _lock_path(store_path: str, space: str) -> str:
    # One lock per store and space: a worker only does its own space's jobs, so a lock
    # shared by all spaces would leave another space's queue waiting behind it. The space
    # is hashed so that any name makes a safe file name.
    import hashlib  # only the worker's lock needs it; keep it off the hook path

    tag = hashlib.blake2b(space.encode("utf-8"), digest_size=6).hexdigest()
    from clew.core.location import is_url

    if is_url(store_path):
        # A team store has no folder: the lock is this user's, one worker per machine (jobs
        # are leased in the store, so workers on several machines never do one job twice).
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        folder = os.path.join(base, "clew", "workers")
        os.makedirs(folder, exist_ok=True)
        store = hashlib.blake2b(store_path.encode("utf-8"), digest_size=8).hexdigest()
        return os.path.join(folder, f"{store}.worker-{tag}.lock")
    return f"{store_path}.worker-{tag}.lock"


@contextlib.contextmanager
def worker_lock(store_path: str, space: str) -> Iterator[bool]:
    """Hold the worker lock of a store's space if it is free (yields whether it was): one
    background worker per space is enough, and several would only fight over the same jobs."""
    try:
        import fcntl
    except ImportError:  # Windows: no advisory locks here; every worker just works
        yield True
        return
    handle = os.open(_lock_path(store_path, space), os.O_CREAT | os.O_RDWR, 0o644)
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield False
            return
        yield True
    finally:
        os.close(handle)  # closing releases the lock


def drain(memory: Workplace) -> list[Job]:
    """Do every queued job of the space as its one background worker (or do nothing if
    another holds the space's lock), and keep polling the space's waits while any is
    watched. Checks again after letting go, so a job queued just as it finished is not left
    waiting for the next write."""
    done: list[Job] = []
    while True:
        with worker_lock(memory.path, memory.space) as mine:
            if not mine:
                return done
            while True:
                done += memory.run_jobs()
                delay = memory.run_background()
                if delay is None:
                    break
                _nap(memory, delay)
        if not memory.jobs_due():
            return done


def _nap(memory: Workplace, delay: float) -> None:
    """Sleep until a wait is due, waking each second to see if a job was queued."""
    end = time.monotonic() + max(delay, MIN_NAP)
    while (left := end - time.monotonic()) > 0:
        time.sleep(min(1.0, left))
        if memory.jobs_due():
            return


_SPAWNED: list[int] = []  # worker processes started here, reaped when they have ended


def spawn(path: str, space: str) -> None:
    """Start `clew work --background` in a detached process (unless one is working already):
    the process that wrote returns at once. posix_spawn takes a fraction of a millisecond
    and, unlike a helper thread, never makes the writer wait for the GIL."""
    for pid in list(_SPAWNED):
        with contextlib.suppress(ChildProcessError):
            if os.waitpid(pid, os.WNOHANG)[0] == 0:
                continue
        _SPAWNED.remove(pid)
    with worker_lock(path, space) as free:
        if not free:
            return  # the running worker checks for new jobs before it stops
    argv = [sys.executable, "-m", "clew", "--db", path, "--space", space, "work", "--background"]
    env = {**os.environ, "CLEW_WORKER": "off"}
    with contextlib.suppress(OSError):  # if it cannot start, the job waits for the next one
        if not hasattr(os, "posix_spawn"):
            subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=env,
            )
            return
        devnull = os.open(os.devnull, os.O_RDWR)
        try:
            quiet = [(os.POSIX_SPAWN_DUP2, devnull, fd) for fd in (0, 1, 2)]
            _SPAWNED.append(
                os.posix_spawn(sys.executable, argv, env, file_actions=quiet, setsid=True)
            )
        finally:
            os.close(devnull)
