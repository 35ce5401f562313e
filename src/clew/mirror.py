"""File mirrors of a task (seed 003): `tasks/<id>/state.yaml` and `tasks/<id>/journal.jsonl`
beside the store, for tools and people that read files.

The database stays the truth; the files are renderings, rewritten after each committed
change and never read back as state (only the journal file's last line is read, to know
where to continue). Every write is atomic: the new content goes to a temporary file in
the same folder, is fsynced, and is renamed over the old one, so a reader or a crash
sees the old file or the new one, never a torn one. A lock file serialises writers of one
task, so a slower process cannot put back an older state after a newer one.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import warnings
from collections.abc import Callable, Sequence

from clew.errors import ValidationError
from clew.ids import ID_LENGTH, is_id_prefix
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
    """One journal event as a line of JSON (seed 003's journal entry, from the store's event)."""
    record = {
        "seq": event.seq,
        "timestamp": event.created_at,
        "type": event.type,
        "correlation_id": event.correlation_id,
        "details": to_jsonable(event.data),
    }
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


def write_atomically(path: str, data: bytes, *, keep_prefix_of: str | None = None) -> None:
    """Replace `path` with `data` (after the bytes of `keep_prefix_of`, if given), atomically."""
    temporary = f"{path}.{os.getpid()}.tmp"
    try:
        if keep_prefix_of is not None:
            shutil.copyfile(keep_prefix_of, temporary)
        with open(temporary, "ab" if keep_prefix_of is not None else "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    _fsync_dir(os.path.dirname(path))


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

    def write(self, task_id: str, content: Callable[[int], tuple[str, Sequence[Event]]]) -> None:
        """Rewrite the task's state file and append its new journal events.

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
                last = _last_seq(journal)
                state, events = content(last or 0)
                write_atomically(os.path.join(folder, STATE_FILE), state.encode("utf-8"))
                if events or last is None:
                    lines = "".join(journal_line(e) + "\n" for e in events).encode("utf-8")
                    # Extend a good file; rewrite one that is missing or unreadable.
                    write_atomically(journal, lines, keep_prefix_of=journal if last else None)
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
    """The seq of the last event in a journal file: 0 for an empty file, None when the
    file is missing or its last line cannot be read (then it is rewritten whole)."""
    try:
        with open(journal, "rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            handle.seek(max(0, size - 1_048_576))
            tail = handle.read()
    except FileNotFoundError:
        return None
    if not tail:
        return 0
    if not tail.endswith(b"\n"):
        return None
    try:
        return int(json.loads(tail.rstrip(b"\n").rsplit(b"\n", 1)[-1])["seq"])
    except (ValueError, KeyError, TypeError):
        return None


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
