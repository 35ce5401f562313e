"""File mirrors of a task: `tasks/<id>/state.yaml` and `tasks/<id>/journal.jsonl`
beside the store, for tools and people that read files.

The database stays the truth; the files are renderings, written after each committed
change and never read back as state (only the journal file's last line is read, to know
where to continue). The state file is replaced atomically: the new content goes to a
temporary file in the same folder, is fsynced, and is renamed over the old one, so a
reader or a crash sees the old file or the new one. The journal file only grows: new
lines are appended (O_APPEND, then fsync), so a write costs the size of the change, not
of the journal. A crash mid-append can leave a torn last line; the next write finds it,
cuts the file back to its last whole line and continues from that line's seq. A lock
file serialises writers of one task, so a slower process cannot put back an older state
after a newer one.
"""

from __future__ import annotations

import contextlib
import json
import os
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import BinaryIO

from clew.core.ids import ID_LENGTH, is_id_prefix
from clew.errors import ValidationError
from clew.models import Event, to_jsonable

TASKS_DIR = "tasks"
STATE_FILE = "state.yaml"
JOURNAL_FILE = "journal.jsonl"


class MirrorWarning(UserWarning):
    """A mirror file could not be written; the change itself is stored."""


def check_task_id(task_id: str) -> str:
    """Return `task_id` if it is a whole clew id, safe as a folder name, or raise."""
    if not isinstance(task_id, str) or len(task_id) != ID_LENGTH or not is_id_prefix(task_id):
        raise ValidationError(f"{task_id!r} is not a task id; a mirror folder needs a whole id")
    return task_id


def journal_line(event: Event) -> str:
    """One journal event as a line of JSON (the journal entry, from the store's event)."""
    record = {
        "seq": event.seq,
        "timestamp": event.created_at,
        "type": event.type,
        "correlation_id": event.correlation_id,
        "details": to_jsonable(event.data),
    }
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


def write_atomically(path: str, data: bytes) -> None:
    """Replace `path` with `data`, atomically: a temporary file, fsynced, renamed over it."""
    with replacing(path) as handle:
        handle.write(data)


@contextlib.contextmanager
def replacing(path: str) -> Iterator[BinaryIO]:
    """Write a new `path` through the handle yielded, atomically: into a temporary file,
    fsynced and renamed over `path` when the block ends; if it fails, `path` is untouched."""
    temporary = f"{path}.{os.getpid()}.tmp"
    try:
        with open(temporary, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    _fsync_dir(os.path.dirname(path))


def append_durably(path: str, data: bytes) -> None:
    """Add `data` at the end of `path` (which exists) and fsync it."""
    handle = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(handle, view) :]
        os.fsync(handle)
    finally:
        os.close(handle)


class Mirror:
    """Writes the mirror files of tasks under one folder."""

    def __init__(self, root: str) -> None:
        self.root = root

    @classmethod
    def beside(cls, store_path: str) -> Mirror:
        """The mirror of a store: `tasks/` in the folder that holds the store file."""
        return cls(os.path.join(os.path.dirname(os.path.abspath(store_path)), TASKS_DIR))

    def folder(self, task_id: str) -> str:
        return os.path.join(self.root, check_task_id(task_id))

    def write(
        self,
        task_id: str,
        content: Callable[[int], tuple[str, Sequence[Event]]],
        *,
        whole: bool = False,
    ) -> None:
        """Rewrite the task's state file and append its new journal events (with `whole`,
        write its journal file whole again: events in it were rewritten, by a forget).

        `content(after_seq)` returns the current state text and the task's events after
        `after_seq`; it is called with the task's lock held, so it reads the newest state.
        A failure to write is a MirrorWarning, never an exception: the store has the change.
        """
        try:
            folder = self.folder(task_id)
            os.makedirs(folder, exist_ok=True)
            with _locked(os.path.join(folder, ".lock")):
                _remove_leftovers(folder)
                journal = os.path.join(folder, JOURNAL_FILE)
                last = None if whole else _last_seq(journal)
                state, events = content(last or 0)
                write_atomically(os.path.join(folder, STATE_FILE), state.encode("utf-8"))
                lines = "".join(journal_line(e) + "\n" for e in events).encode("utf-8")
                if last is None:  # missing, or its last whole line unreadable: write it whole
                    write_atomically(journal, lines)
                elif lines:
                    append_durably(journal, lines)
        except OSError as exc:
            warnings.warn(
                f"clew could not update the mirror files of task {task_id}: {exc}",
                MirrorWarning,
                stacklevel=4,
            )


def _remove_leftovers(folder: str) -> None:
    """Delete temporary files of writers that died mid-write (the caller holds the lock,
    so no live writer owns one)."""
    for name in os.listdir(folder):
        if name.endswith(".tmp"):
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(folder, name))


def _last_seq(journal: str) -> int | None:
    """The seq of the last whole event in a journal file, after cutting off a torn last line
    (a crash mid-append): 0 for an empty file, None when the file is missing or its last
    whole line cannot be read (then it is written whole again)."""
    try:
        handle = open(journal, "rb+")  # noqa: SIM115 - closed below, after the repair
    except FileNotFoundError:
        return None
    with handle:
        size = handle.seek(0, os.SEEK_END)
        if size and _byte_at(handle, size - 1) != b"\n":
            size = _line_start(handle, size)
            handle.truncate(size)
            os.fsync(handle.fileno())
        if size == 0:
            return 0
        start = _line_start(handle, size - 1)
        handle.seek(start)
        try:
            return int(json.loads(handle.read(size - start))["seq"])
        except (ValueError, KeyError, TypeError):
            return None


def _byte_at(handle: BinaryIO, offset: int) -> bytes:
    handle.seek(offset)
    return handle.read(1)


def _line_start(handle: BinaryIO, end: int) -> int:
    """The offset just past the last newline before `end` (0 when there is none)."""
    position = end
    while position > 0:
        start = max(0, position - 65_536)
        handle.seek(start)
        found = handle.read(position - start).rfind(b"\n")
        if found >= 0:
            return start + found + 1
        position = start
    return 0


class _locked:
    """An exclusive advisory lock on a file, where the platform has one (fcntl)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.handle: int | None = None

    def __enter__(self) -> None:
        self.handle = os.open(self.path, os.O_CREAT | os.O_RDWR, 0o644)
        try:
            import fcntl

            fcntl.flock(self.handle, fcntl.LOCK_EX)
        except ImportError:  # Windows: one writer per task is the caller's business
            pass

    def __exit__(self, *exc: object) -> None:
        if self.handle is not None:
            os.close(self.handle)  # closing releases the lock


def _fsync_dir(folder: str) -> None:
    """Make a rename durable: fsync the folder that holds the file (POSIX only)."""
    try:
        handle = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(handle)
    except OSError:
        pass
    finally:
        os.close(handle)
