"""Checkpoints: sealed records of where each space's journal ended, written to a file outside
the store, and checked against it later (the line format: checkpointfile.py).

Writing appends whole lines under an exclusive lock of the file (O_APPEND, then fsync), so a
server and a `clew checkpoint` run by cron can share one file; a line torn by a crash is
ended before the next is added, so it costs that line only. Reading takes a file of any
length a line at a time, each line bounded (checkpointfile.MAX_LINE), and never follows
anything a line says: a line is data to compare, nothing more.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator, Mapping
from typing import BinaryIO

from clew.errors import ValidationError
from clew.kernel import Service
from clew.models import (
    ChainHead,
    Checkpoint,
    CheckpointCheck,
    CheckpointReport,
    CheckpointStatus,
)

NOT_SEALED = (
    "its seal does not check with this sealing key ({key}): the line was changed, made"
    " without the key (forged), or sealed with another user's key"
)


class Checkpoints(Service):
    """Make checkpoints of the journal's heads, and check a file of them against the store."""

    def checkpoint(
        self,
        file: str | os.PathLike[str] | None = None,
        *,
        all_spaces: bool = False,
        since: Mapping[str, Checkpoint] | None = None,
    ) -> list[Checkpoint]:
        """Seal a checkpoint of this space's journal head (of every space's with
        `all_spaces`), appending each as a line to `file` when one is given. `since` holds
        earlier checkpoints of this store by space (a server's newest): counting goes on
        from each one the journal still holds."""
        from clew.journal import checkpointfile

        known = {s: ChainHead(c.events, c.last, c.head) for s, c in (since or {}).items()}
        heads = self._store.chain_heads(known, all_spaces=all_spaces)
        store, at = checkpointfile.store_id(self.path), self._now()
        made = [checkpointfile.make(store, s, heads[s], at) for s in sorted(heads)]
        if file is not None:
            append(os.fspath(file), [checkpointfile.line(c) for c in made])
        return made

    def check_checkpoints(
        self, source: str | os.PathLike[str] | Iterable[str], *, all_spaces: bool = False
    ) -> CheckpointReport:
        """Check checkpoint lines (a file's path, or the lines themselves) against this
        store: each line of this space (of every space with `all_spaces`) holds, is behind
        or diverges, or is not checkable (its seal does not verify with this user's sealing
        key); lines of other stores and other spaces are counted, not checked. A line that
        holds vouches for every event up to it only where the chain is whole up to there:
        `verify(checkpoint=...)` walks the chain too."""
        from clew.journal import checkpointfile
        from clew.privacy import sealing

        key = sealing.secret(create=False)
        if isinstance(source, str | os.PathLike):
            name, lines = os.fspath(source), _file_lines(os.fspath(source))
        else:
            name, lines = "the lines given", _given_lines(source)
        mine = checkpointfile.store_id(self.path, key=key)
        checks: list[CheckpointCheck] = []
        wanted: list[tuple[int, Checkpoint]] = []
        other_stores = other_spaces = 0
        for number, got in lines:
            if isinstance(got, str):
                checks.append(_unchecked(number, None, got))
            elif not checkpointfile.sealed(got, key=key):
                checks.append(_unchecked(number, got, NOT_SEALED.format(key=sealing.secret_path())))
            elif got.store != mine:
                other_stores += 1
            elif not all_spaces and got.space != self.space:
                other_spaces += 1
            else:
                wanted.append((number, got))
        if wanted:
            heads = self._store.chain_heads(all_spaces=all_spaces)
            counts = {space: head.events for space, head in heads.items()}
            positions: dict[str, set[int]] = {}
            for _, c in wanted:
                if 0 < c.events <= counts.get(c.space, 0):
                    positions.setdefault(c.space, set()).add(c.events)
            found = self._store.chain_hashes(positions)
            for number, c in wanted:
                count, there = counts.get(c.space, 0), found.get((c.space, c.events))
                status, detail = checkpointfile.judge(c, count, there)
                checks.append(CheckpointCheck(number, status, c, count, there, detail))
        checks.sort(key=lambda check: check.line)
        return CheckpointReport(name, tuple(checks), other_stores, other_spaces)


def _unchecked(number: int, checkpoint: Checkpoint | None, why: str) -> CheckpointCheck:
    return CheckpointCheck(
        number, CheckpointStatus.NOT_CHECKABLE, checkpoint, None, None, f"not checkable: {why}"
    )


def _given_lines(lines: Iterable[str]) -> Iterator[tuple[int, Checkpoint | str]]:
    from clew.journal import checkpointfile

    for number, text in enumerate(lines, 1):
        if not isinstance(text, str):
            raise ValidationError("checkpoint lines must be text (a str each)")
        if text.strip():
            yield number, checkpointfile.read(text)


def _file_lines(path: str) -> Iterator[tuple[int, Checkpoint | str]]:
    """Each non-empty line of the file with what it holds; the file is opened now, so a
    missing one is an error before anything is read."""
    return _read(os.fdopen(_open(path, os.O_RDONLY, "read checkpoints from"), "rb"))


def _read(handle: BinaryIO) -> Iterator[tuple[int, Checkpoint | str]]:
    from clew.journal import checkpointfile

    with handle:
        number = 0
        while raw := handle.readline(checkpointfile.MAX_LINE + 1):
            number += 1
            if len(raw) > checkpointfile.MAX_LINE and not raw.endswith(b"\n"):
                while (rest := handle.readline(65536)) and not rest.endswith(b"\n"):
                    pass  # the rest of an over-long line: skipped, never held
                yield number, f"longer than {checkpointfile.MAX_LINE} bytes: not a checkpoint line"
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                yield number, "not UTF-8 text: not a checkpoint line"
                continue
            if text.strip():
                yield number, checkpointfile.read(text)


def _open(path: str, flags: int, doing: str) -> int:
    """Open a regular file (a FIFO or device is refused, never waited on); its descriptor."""
    try:
        # O_NONBLOCK: a FIFO must not block the open; it is refused just below.
        fd = os.open(path, flags | getattr(os, "O_NONBLOCK", 0), 0o600)
    except OSError as exc:
        raise ValidationError(f"cannot {doing} {path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ValidationError(f"cannot {doing} {path}: it is not a regular file")
    return fd


def append(path: str, lines: list[str]) -> None:
    """Append `lines` to the checkpoint file at `path` (made, with its folder, if missing;
    readable by this user only), under an exclusive lock, and fsync it. With no lines it
    only makes sure the file can be written (the server's check before it serves)."""
    doing = "write checkpoints to"
    try:
        os.makedirs(os.path.dirname(os.path.abspath(path)), mode=0o700, exist_ok=True)
    except OSError as exc:
        raise ValidationError(f"cannot {doing} {path}: {exc.strerror or exc}") from None
    # Read and write: the last byte is read to find a torn line; O_APPEND puts every write
    # at the end whatever another writer did.
    fd = _open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, doing)
    try:
        _lock(fd)
        size = os.fstat(fd).st_size
        # A line torn by a crash is ended first, so it spoils only itself.
        torn = size > 0 and os.pread(fd, 1, size - 1) != b"\n"
        data = memoryview((("\n" if torn else "") + "".join(f"{t}\n" for t in lines)).encode())
        while data:
            data = data[os.write(fd, data) :]
        os.fsync(fd)
    except OSError as exc:
        raise ValidationError(f"cannot {doing} {path}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)  # closing releases the lock


def _lock(fd: int) -> None:
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: O_APPEND alone
        return
    fcntl.flock(fd, fcntl.LOCK_EX)
