"""Coding assistants' transcript files archived as sessions: a service of the Memory facade.

`capture_transcript` appends to the session keyed by the transcript's own session id only the
lines it does not hold yet, so a hook can run it after every prompt and tool call:

- **Idempotent and safe when hooks race**: which lines are new is decided inside the write
  transaction, whose lock (SQLite's, PostgreSQL's per space) makes a second process wait and
  then find them archived. Claude Code's lines are told apart by their uuid: the newest
  archived one is looked for from the end of the file, and what follows it is new.
- **Fast on a long transcript**: that look from the end reads only what was written since the
  last capture (in doubling windows), not the file; only a transcript rewritten under it (the
  newest archived line gone) is read whole, each line checked against the archived ids.
- A line not complete yet (no newline) waits for the next capture; a line that is not JSON
  is skipped and counted.

Codex rollouts carry no ids; they only grow, so the n-th kept item is the n-th turn (checked
by the newest turn; failing that, each item is compared with the session's turns).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from typing import IO, Any, NamedTuple

from clew.conversations import transcripts
from clew.conversations.plan_capture import PlanCapture
from clew.conversations.sessions import Sessions
from clew.core import checks
from clew.errors import ValidationError
from clew.kernel import Kernel, Service
from clew.models import Session

__all__ = ["Capture", "Captured"]

_WINDOW = 64 * 1024  # the first look back from a transcript's end; doubled while needed
_BATCH = 1000  # turns appended at a time
_ORIGIN_LINES = 20  # the first lines looked at for the transcript's session id and folder


class Captured(NamedTuple):
    """What one capture did."""

    session: Session | None  # None: the transcript holds no message yet, and none was kept
    added: int  # turns appended now
    skipped: int  # lines that are not messages, or not JSON
    bad: int  # of those, lines that are not JSON


class Capture(Service):
    """Transcript capture (a service of Memory): it archives through the sessions service,
    and keeps the agent's own list of its work through the plan capture."""

    def __init__(self, kernel: Kernel, sessions: Sessions, plans: PlanCapture) -> None:
        super().__init__(kernel)
        self._sessions = sessions
        self._plans = plans

    def capture_transcript(
        self,
        path: str,
        *,
        format: str = "claude-code",
        key: str | None = None,
        workspace: str | None = None,
        end: bool = False,
    ) -> Captured:
        """Archive the messages of an assistant's transcript file (`claude-code`: a Claude
        Code session's JSONL; `codex`: a Codex CLI rollout) that the session keyed `key`
        does not hold yet (default key: the transcript's session id; default workspace:
        the folder it names), verbatim, in transactions of 1,000 messages (a capture
        stopped midway keeps what it committed). Run it again at any time: it appends only
        what is new (a line written twice is kept once). `end` marks the session ended
        afterwards (a later capture resumes it)."""
        if format not in transcripts.FORMATS:
            raise ValidationError(
                f"transcript format {format!r} is not one of: {', '.join(transcripts.FORMATS)}"
            )
        where = checks.text(path, "transcript path")
        if workspace is not None:
            workspace = checks.text(workspace, "workspace")
        key = checks.optional_text(key, "session key", max_chars=checks.MAX_NAME_CHARS)
        if os.path.exists(where) and not os.path.isfile(where):  # a FIFO would never end
            raise ValidationError(f"the transcript {where} is not a regular file")
        try:
            handle = open(where, "rb")  # noqa: SIM115 (closed below, whatever happens)
        except OSError as exc:
            raise ValidationError(
                f"cannot read the transcript {where}: {exc.strerror or exc}"
            ) from None
        with handle:
            if format == "codex":
                return self._capture_codex(handle, where, key, workspace, end)
            return self._capture_claude(handle, where, key, workspace, end)

    # -- Claude Code -----------------------------------------------------------------------

    def _capture_claude(
        self, handle: IO[bytes], where: str, key: str | None, workspace: str | None, end: bool
    ) -> Captured:
        said_id, said_cwd = _claude_origin(handle)
        name = key or said_id or _claude_session_id(where)
        workspace = workspace or said_cwd
        added = consumed = bad = 0
        # Where this call's last batch ended (the offset after its newest line, that line's
        # id) and, once a rewritten file made every line be checked, the ids archived.
        mark: tuple[int, str | None] | None = None
        known: set[str | None] | None = None
        seen: set[str | None] = set()  # the ids this call appended: a line written twice once
        while True:
            with self._write():
                held = self._store.session_by_key(name)
                start = 0
                if held is not None and held.turn_count:
                    newest = self._store.get_turns(held.id, newest=1)[0].message
                    ident = transcripts.claude_id(newest)
                    if mark is not None and mark[1] == ident:
                        start = mark[0]  # nobody wrote since our last batch: go on from it
                    else:
                        known = None
                        found = _after(handle, ident) if ident is not None else None
                        if found is None:  # rewritten under us: every line checked by its id
                            known = self._claude_ids(held.id)
                        else:
                            start = found
                batch = _claude_batch(handle, start, known, seen)
                if held is None and not batch.messages:  # no message yet: no session either
                    return Captured(None, 0, consumed + batch.lines, bad + batch.bad)
                times = [m.get("timestamp") for m in batch.messages]
                session = self._open_captured(name, workspace, times)
                added += self._append_captured(session, batch.messages, times)
                self._keep_plans(session, batch.messages, times)
                consumed, bad = consumed + batch.lines, bad + batch.bad
                if end and not batch.more:
                    self._sessions.end_session(session.id)
                if not batch.more:
                    final = self._store.get_session(session.id)
                    return Captured(final, added, consumed - added, bad)
            mark = (batch.end, transcripts.claude_id(batch.messages[-1]))

    def _claude_ids(self, session_id: str) -> set[str | None]:
        ids: set[str | None] = set()
        for turn in self._store.get_turns(session_id, include_hidden=True):
            ids.add(transcripts.claude_id(turn.message))
        return ids

    # -- Codex -----------------------------------------------------------------------------

    def _capture_codex(
        self, handle: IO[bytes], where: str, key: str | None, workspace: str | None, end: bool
    ) -> Captured:
        lines = (raw for raw in _complete_lines(handle, 0) if raw.strip())
        first = next(lines, None)
        try:
            meta = transcripts.codex_meta(json.loads(first) if first else None, where)
        except ValueError:
            meta = transcripts.codex_meta(None, where)  # raises: not a rollout
        items, times, model, bad, count = [], [], None, 0, 1
        for line in lines:
            count += 1
            try:
                value = json.loads(line)
            except ValueError:
                bad += 1
                continue
            model = model or transcripts.codex_model(value)
            item = transcripts.codex_item(value)
            if item is not None:
                items.append(item)
                times.append(value.get("timestamp"))
        with self._write():
            if not items and self._store.session_by_key(key or meta.id) is None:
                return Captured(None, 0, count, bad)
            session = self._open_captured(
                key or meta.id, workspace or meta.cwd, [meta.started, *times], model=model
            )
            new = self._codex_new(session, items)
            fresh = [items[i] for i in new]
            added = self._append_captured(session, fresh, [times[i] for i in new])
            self._keep_plans(session, fresh, [times[i] for i in new])
            if end:
                self._sessions.end_session(session.id)
            return Captured(self._store.get_session(session.id), added, count - added, bad)

    def _codex_new(self, session: Session, items: list[dict[str, Any]]) -> list[int]:
        """Which of a rollout's items the session does not hold. A rollout only grows, so
        the session's turns are its first items, checked by the newest one; if that does not
        match (a session resumed into a new file, an item added by hand), every item is
        compared with every turn."""
        held = session.turn_count
        if held == 0:
            return list(range(len(items)))
        newest = self._store.get_turns(session.id, newest=1)[0].message
        if held <= len(items) and items[held - 1] == newest:
            return list(range(held, len(items)))
        stored = {_canonical(t.message) for t in self._store.get_turns(session.id)}
        return [i for i, item in enumerate(items) if _canonical(item) not in stored]

    # -- both ------------------------------------------------------------------------------

    def _keep_plans(
        self, session: Session, messages: list[dict[str, Any]], times: list[Any]
    ) -> None:
        """Keep the agent's own list from the messages just appended (said at `times`, the
        transcript's stamps), in the same write, so each line's calls are applied once. A
        list clew cannot keep, or a fault in keeping it, undoes only its own savepoint and
        never costs the transcript its capture."""

        def newest() -> str | None:  # read only when the lines hold a list's calls
            return next((t for t in reversed(self._said_at(times)) if t is not None), None)

        try:
            self._plans._keep_plans(session, messages, newest)
        except Exception:  # the transcript matters more than the list it holds
            return

    def _open_captured(
        self, key: str, workspace: str | None, times: list[Any], model: str | None = None
    ) -> Session:
        """The session keyed `key`: started, if it is new, when its transcript began."""
        if self._store.session_by_key(key) is None:
            started = next((t for t in self._said_at(times) if t is not None), None)
            return self._sessions.start_session(
                key=key, workspace=workspace, model=model, at=started
            )
        return self._sessions.open_session(key)

    def _said_at(self, times: list[Any]) -> list[str | None]:
        """A transcript's stamps as store times (None where one is missing or not a time)."""
        said: list[str | None] = []
        for value in times:
            try:
                said.append(checks.moment(value, "timestamp", self._clock()) if value else None)
            except ValidationError:
                said.append(None)
        return said

    def _append_captured(
        self, session: Session, messages: list[dict[str, Any]], times: list[Any]
    ) -> int:
        """Append messages said at `times` (a transcript's stamps; one it lacks, or that is
        not a time, is taken as the one before it, or the first one after it, or now)."""
        if not messages:
            return 0
        found = self._said_at(times)
        last = next((s for s in found if s is not None), None) or self._now()
        said: list[str] = []
        for value in found:
            last = value or last
            said.append(last)
        with self._store.bulk_turns() if len(messages) >= _BATCH else contextlib.nullcontext():
            for first in range(0, len(messages), _BATCH):
                batch = messages[first : first + _BATCH]
                self._sessions.append_turns(session.id, batch, at=said[first : first + _BATCH])
        return len(messages)


def _canonical(message: dict[str, Any]) -> str:
    return json.dumps(message, sort_keys=True, ensure_ascii=False)


def _claude_origin(handle: IO[bytes]) -> tuple[str | None, str | None]:
    """The session id and folder a Claude Code transcript's first lines name (its summary
    and snapshot lines name neither), if they do."""
    handle.seek(0)
    for _ in range(_ORIGIN_LINES):
        raw = handle.readline()
        if not raw.endswith(b"\n"):
            break
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        if isinstance(line, dict) and isinstance(line.get("sessionId"), str):
            cwd = line.get("cwd")
            return line["sessionId"], cwd if isinstance(cwd, str) else None
    return None, None


def _claude_session_id(path: str) -> str:
    """A Claude Code transcript's session id: its file's name (`<session id>.jsonl`)."""
    name = os.path.basename(path)
    return name[: -len(".jsonl")] if name.endswith(".jsonl") else name


def _after(handle: IO[bytes], ident: str) -> int | None:
    """Where the line named `ident` ends in the transcript (the offset of what follows
    it), looked for from the end in doubling windows; None if no line is it."""
    needle = (ident.removeprefix("summary:")).encode()
    size = handle.seek(0, os.SEEK_END)
    window = _WINDOW
    searched = size  # the window's part not searched yet ends here
    while True:
        start = max(0, size - window)
        handle.seek(start)
        block = handle.read(size - start)
        # Only lines that end inside the part not searched yet are new to this window.
        at = block.rfind(needle, 0, searched - start)
        while at != -1:
            head = block.rfind(b"\n", 0, at) + 1
            tail = block.find(b"\n", at)
            if head == 0 and start > 0:
                break  # the line begins before the window: the next, wider one has it
            if tail != -1:
                try:
                    line = transcripts.claude_message(json.loads(block[head:tail]))
                except ValueError:
                    line = None
                if line is not None and transcripts.claude_id(line) == ident:
                    return start + tail + 1
            at = block.rfind(needle, 0, head)
        if start == 0:
            return None
        # Search the next window up to where a line cut by this one's edge could end.
        first_newline = block.find(b"\n")
        searched = start + (first_newline + 1 if first_newline != -1 else len(block))
        window *= 2


class _Batch(NamedTuple):
    messages: list[dict[str, Any]]
    lines: int  # lines read (messages, others, not JSON)
    bad: int  # lines that are not JSON
    end: int  # the offset after the last line read
    more: bool  # whether the batch stopped full, before the file's end


def _claude_batch(
    handle: IO[bytes], start: int, known: set[str | None] | None, seen: set[str | None]
) -> _Batch:
    """The next messages of a Claude Code transcript from `start`, at most _BATCH of them
    (one transaction's worth: a first capture of a long transcript commits as it goes, so a
    hook stopped by its timeout keeps what it did), leaving out those whose id is in `seen`
    or in `known` (both then hold the ids taken)."""
    messages: list[dict[str, Any]] = []
    lines = bad = 0
    offset = start
    for raw in _complete_lines(handle, start):
        if len(messages) == _BATCH:
            return _Batch(messages, lines, bad, offset, True)
        offset += len(raw)
        if not raw.strip():
            continue
        lines += 1
        try:
            message = transcripts.claude_message(json.loads(raw))
        except ValueError:
            bad += 1
            continue
        if message is None:
            continue
        ident = transcripts.claude_id(message)
        if ident in seen or (known is not None and ident in known):
            continue
        seen.add(ident)
        if known is not None:
            known.add(ident)
        messages.append(message)
    return _Batch(messages, lines, bad, offset, False)


def _complete_lines(handle: IO[bytes], start: int) -> Iterator[bytes]:
    """The file's complete lines (ended by a newline) from `start`, blank ones too."""
    handle.seek(start)
    for raw in handle:
        if not raw.endswith(b"\n"):
            return  # still being written: the next capture reads it
        yield raw
