"""The server's request log on its way to the store, kept so that a request a client was
answered about is not lost when the server's process dies.

Each line goes to a spill file with one write() before the answer to its request begins. A
write() that returned is in the operating system's page cache, which outlives the process (a
SIGKILL, a crash, the OOM killer), though not a power cut or a kernel panic before the cache
is written back (Linux writes dirty pages back within about 30 s). About once a second, and
when the server starts and stops, the spill files are folded into the store and removed.
A line is never written straight to the store on its request's path: that would be a store
write per request, doubling the store's writes (docs/benchmarks.md measures the spill).

Invariants:
- A spill file is written by one server, which holds an exclusive lock (flock) on it while
  it may write. A file nobody holds is a closed one or a dead server's: any server whose
  folder it is folds it, so servers sharing a store and a folder fold each other's leftovers
  but never a file being written.
- Each line has an id, unique to the server's run; the store keeps a line once per id
  (migration 24), so a file folded again after a crash between its commit and its removal
  adds nothing twice.
- Folding drops no line: a file the store refuses stays, and is tried again at the next fold
  before this server starts another. What a file holds is made safe to store (controls and
  lone surrogates escaped) as it is folded, whatever wrote it.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import secrets
import sys
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING

from clew.core.credentials import RequestLine
from clew.core.location import is_url
from clew.server.edge import ROUTE_CHARS, safe

if TYPE_CHECKING:
    from clew.memory import Memory

SUFFIX = ".requests"
FOLD_LINES = 5000  # lines per transaction when folding a file


def default_folder(home: Memory) -> str:
    """Where the spill files of a server of `home`'s store go: beside a SQLite file
    (`clew.db-requests`), else under $XDG_STATE_HOME/clew/requests/ by the store's URL."""
    path = home.path
    if not is_url(path) and path != ":memory:":
        return os.path.abspath(path) + "-requests"
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "state"
    )
    named = hashlib.sha256(path.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return os.path.join(base, "clew", "requests", named)


class RequestLog:
    """The spill files of one server: `note` appends a line, `fold` moves lines to the
    store, `close` folds what is left and removes the last file."""

    def __init__(self, home: Memory, folder: str) -> None:
        self.home = home
        self.folder = folder
        self._lock = threading.Lock()  # the file being written
        self._folding = threading.Lock()  # one fold at a time
        self._fd: int | None = None
        self._path = ""
        self._written = 0
        self._run = f"{os.getpid()}-{secrets.token_hex(6)}"
        self._files = itertools.count(1)
        self._lines = itertools.count(1)
        self._memory: list[RequestLine] = []  # lines no spill file took
        self._failing = ""  # the spill failure last said on stderr

    @property
    def is_open(self) -> bool:
        """Whether a spill file is open (between `open` and `close`)."""
        return self._fd is not None

    def open(self) -> None:
        """Make the folder (this user's only) and begin a spill file; OSError if it cannot."""
        os.makedirs(self.folder, mode=0o700, exist_ok=True)
        with self._lock:
            self._fd, self._path = self._begin()

    def _begin(self) -> tuple[int, str]:
        import fcntl  # POSIX: `clew serve` runs on Linux and macOS

        path = os.path.join(self.folder, f"{self._run}-{next(self._files)}{SUFFIX}")
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_CLOEXEC
        fd = os.open(path, flags, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        return fd, path

    def note(self, line: RequestLine) -> RequestLine:
        """Give `line` an id and append it to the spill file, in one write. When the write
        fails (a full disk, a folder removed) the line is kept in memory until the next fold
        instead, and that is said on stderr once: the answer goes out either way, since the
        request has been carried out by then."""
        line = line._replace(id=f"{self._run}-{next(self._lines)}")
        data = (json.dumps(line._asdict(), ensure_ascii=True) + "\n").encode("ascii")
        with self._lock:
            try:
                if self._fd is None:
                    raise OSError("no spill file is open")
                written = os.write(self._fd, data)
                self._written += written
                if written != len(data):
                    raise OSError(f"a spill file took {written} of {len(data)} bytes")
                self._failing = ""
            except OSError as exc:
                self._memory.append(line)
                if str(exc) != self._failing:
                    self._failing = str(exc)
                    print(
                        f"clew: the request log cannot write its spill file in {self.folder}"
                        f" ({exc}); until it can, its lines wait in memory, and a crash"
                        " would lose them",
                        file=sys.stderr,
                    )
        return line

    def fold(self) -> int:
        """Fold into the store every spill file no live server holds, this server's current
        file included once it holds a line (a new one is begun); return the lines read.
        Raises what the store raised: the file it refused stays for the next fold."""
        with self._folding:
            read = sum(self._fold_file(p) for p in self._waiting())
            if self._rotated():
                read += sum(self._fold_file(p) for p in self._waiting())
            with self._lock:
                kept, self._memory = self._memory, []
            try:
                if kept:
                    self.home.log_requests(kept)
            except BaseException:
                with self._lock:
                    self._memory[:0] = kept
                raise
            return read + len(kept)

    def _waiting(self) -> list[str]:
        """The spill files of the folder but the one being written, oldest first."""
        try:
            names = os.listdir(self.folder)
        except FileNotFoundError:
            return []
        found = [os.path.join(self.folder, n) for n in names if n.endswith(SUFFIX)]
        found = [p for p in found if p != self._path]
        return sorted(found, key=_modified)

    def _rotated(self) -> bool:
        """Close the current file and begin another, if the current one holds a line."""
        with self._lock:
            if self._fd is None or self._written == 0:
                return False
            try:
                fd, path = self._begin()
            except OSError as exc:  # keep writing the one there is
                print(f"clew: cannot begin a new request log spill file: {exc}", file=sys.stderr)
                return False
            old, self._fd, self._path, self._written = self._fd, fd, path, 0
        os.close(old)  # its lock goes with it: now any fold may take it
        return True

    def _fold_file(self, path: str) -> int:
        import fcntl

        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:  # folded by another server meanwhile
            return 0
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:  # a live server writes it
                return 0
            if os.fstat(fd).st_nlink == 0:  # folded and removed while this waited
                return 0
            with os.fdopen(os.dup(fd), "rb") as handle:
                lines = list(parse(handle.read(), path))
            for start in range(0, len(lines), FOLD_LINES):
                self.home.log_requests(lines[start : start + FOLD_LINES])
            os.unlink(path)
            return len(lines)
        finally:
            os.close(fd)

    def close(self) -> None:
        """Fold what is left (a failure is said on stderr; the files stay for the next
        start) and remove this server's empty last file."""
        try:
            self.fold()
        except Exception as exc:  # the store is gone: the files wait for the next start
            print(
                f"clew: the request log keeps unfolded lines in {self.folder}: {exc}",
                file=sys.stderr,
            )
        with self._lock:
            fd, self._fd = self._fd, None
            if fd is None:
                return
            if self._written == 0:
                os.unlink(self._path)
            os.close(fd)


def _modified(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except FileNotFoundError:
        return 0.0


def parse(data: bytes, path: str = "") -> Iterator[RequestLine]:
    """The lines of a spill file, each made safe to store. An unreadable line (only the last
    can be, cut by a process killed inside its write, before its answer) is said on stderr."""
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        try:
            found = json.loads(raw)
            yield RequestLine(
                safe(str(found["space"])),
                None if found["key_prefix"] is None else safe(str(found["key_prefix"]))[:100],
                safe(str(found["method"]))[:20],
                safe(str(found["route"]))[: ROUTE_CHARS * 6],
                int(found["status"]),
                safe(str(found["created_at"]))[:40],
                float(found["ms"]),
                safe(str(found["id"]))[:100],
            )
        except (ValueError, KeyError, TypeError) as exc:
            shown = safe(raw[:200].decode("utf-8", "backslashreplace"))
            print(f"clew: skipped an unreadable line of {path} ({exc}): {shown}", file=sys.stderr)
