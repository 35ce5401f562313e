"""Layer 2's archive entries, as part of the Memory facade: one fact, one row.

A decision, an error, a finding, a constraint, a pending question, and every other
typed entry is stored once, in full, in `entries`; the layer-1 state and the brief show
views of the newest ones. Entries may belong to a task and to one of its steps, or stand
alone. Errors and questions are resolved (with a resolution or an answer), never edited
away: both texts stay.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from clew import checks, tasks
from clew.errors import ValidationError
from clew.facade import Facade
from clew.ids import new_id
from clew.models import Entry, EntryStatus, EntryType

# Entries that can be resolved, and what their resolution is called.
RESOLVABLE = {EntryType.ERROR: "resolution", EntryType.QUESTION: "answer"}


class Archive(Facade):
    """The facade's archive methods (mixed into `Memory`)."""

    def add_entry(
        self,
        type: str | EntryType,
        summary: str,
        *,
        task_id: str | None = None,
        detail: str | None = None,
        step: int | str | None = None,
        tags: Sequence[str] = (),
        relevance_to: Sequence[int | str] = (),
        resolution: str | None = None,
    ) -> Entry:
        """Store one typed entry, in full; `step` and `relevance_to` name plan steps of the task."""
        kind = checks.choice(type, EntryType, "entry type")
        text = checks.text(summary, "summary", max_chars=checks.MAX_TEXT_CHARS)
        if resolution is not None and kind not in RESOLVABLE:
            raise ValidationError(f"only errors and questions have a resolution, not a {kind}")
        entry: dict[str, Any] = {
            "id": new_id(),
            "type": kind.value,
            "summary": text,
            "detail": None if detail is None else checks.text(detail, "detail"),
            "tags": list(checks.strings(tags, "tags")),
        }
        if resolution is not None:
            entry["resolution"] = checks.text(
                resolution, "resolution", max_chars=checks.MAX_TEXT_CHARS
            )
            entry["status"] = EntryStatus.RESOLVED.value
        if task_id is None and (step is not None or relevance_to):
            raise ValidationError(
                "a step belongs to a task: give task_id with step or relevance_to"
            )
        tid = None if task_id is None else self._task_id(task_id)
        with self._write() as at:
            if tid is not None and (step is not None or relevance_to):
                plan = self._store.get_plan(tid)
                if step is not None:
                    entry["subtask_id"] = tasks.find_step(plan, step, tid).id
                entry["relevance_to"] = [tasks.find_step(plan, r, tid).id for r in relevance_to]
            self._emit("entry.added", tid, {"entry": entry}, at)
        return self._store.get_entry(entry["id"])

    def add_decision(
        self,
        task_id: str,
        text: str,
        *,
        detail: str | None = None,
        step: int | str | None = None,
        tags: Sequence[str] = (),
    ) -> Entry:
        """Record a decision the agent made (shown in the state's decisions log)."""
        return self.add_entry(
            EntryType.DECISION, text, task_id=task_id, detail=detail, step=step, tags=tags
        )

    def add_error(
        self,
        task_id: str,
        text: str,
        *,
        resolution: str | None = None,
        detail: str | None = None,
        step: int | str | None = None,
        tags: Sequence[str] = (),
    ) -> Entry:
        """Record an error met; with a resolution it is recorded as already resolved."""
        return self.add_entry(
            EntryType.ERROR,
            text,
            task_id=task_id,
            detail=detail,
            step=step,
            tags=tags,
            resolution=resolution,
        )

    def add_finding(
        self,
        task_id: str,
        text: str,
        *,
        detail: str | None = None,
        step: int | str | None = None,
        tags: Sequence[str] = (),
    ) -> Entry:
        """Record something learned (a `discovery` entry, shown as a key finding)."""
        return self.add_entry(
            EntryType.DISCOVERY, text, task_id=task_id, detail=detail, step=step, tags=tags
        )

    def add_constraint(
        self, task_id: str, text: str, *, detail: str | None = None, tags: Sequence[str] = ()
    ) -> Entry:
        """Record a constraint the work must respect."""
        return self.add_entry(EntryType.CONSTRAINT, text, task_id=task_id, detail=detail, tags=tags)

    def add_question(
        self,
        task_id: str,
        text: str,
        *,
        detail: str | None = None,
        step: int | str | None = None,
        tags: Sequence[str] = (),
    ) -> Entry:
        """Record a question that needs an answer; `resolve` it with the answer."""
        return self.add_entry(
            EntryType.QUESTION, text, task_id=task_id, detail=detail, step=step, tags=tags
        )

    def resolve(self, entry_id: str, resolution: str, *, task_id: str | None = None) -> Entry:
        """Resolve an open error (with its resolution) or question (with its answer)."""
        eid = self._resolve("entry", entry_id)
        text = checks.text(resolution, "resolution", max_chars=checks.MAX_TEXT_CHARS)
        tid = None if task_id is None else self._task_id(task_id)
        with self._write() as at:
            entry = self._store.get_entry(eid)
            if tid is not None and entry.task_id != tid:
                raise ValidationError(f"entry {eid} does not belong to task {tid}")
            if entry.type not in RESOLVABLE:
                raise ValidationError(
                    f"entry {eid} is a {entry.type.value}; only errors and questions are resolved"
                )
            if entry.status is not EntryStatus.ACTIVE:
                raise ValidationError(
                    f"{entry.type.value} {eid} is already {entry.status.value}"
                    + (
                        f" ({RESOLVABLE[entry.type]}: {entry.resolution})"
                        if entry.resolution
                        else ""
                    )
                )
            data = {"entry_id": eid, "resolution": text}
            self._emit("entry.resolved", entry.task_id, data, at)
        return self._store.get_entry(eid)

    def get_entry(self, entry_id: str) -> Entry:
        """Return one entry, in full."""
        return self._store.get_entry(self._resolve("entry", entry_id))

    def list_entries(
        self,
        task_id: str | None = None,
        *,
        type: str | EntryType | Sequence[str | EntryType] | None = None,
        status: str | EntryStatus | None = None,
        step: int | str | None = None,
        limit: int | None = None,
    ) -> list[Entry]:
        """Return entries, newest first, by task, type, status and step (all exact)."""
        wanted: Sequence[str | EntryType]
        wanted = () if type is None else (type,) if isinstance(type, str) else type
        kinds = tuple(checks.choice(t, EntryType, "entry type") for t in wanted)
        statuses = () if status is None else (checks.choice(status, EntryStatus, "entry status"),)
        if limit is not None and checks.integer(limit, "limit") < 0:
            raise ValidationError("limit cannot be negative")
        tid = None if task_id is None else self._task_id(task_id)
        subtask = None
        if step is not None:
            if tid is None:
                raise ValidationError("a step belongs to a task: give task_id with step")
            subtask = tasks.find_step(self._store.get_plan(tid), step, tid).id
        return self._store.list_entries(
            task_id=tid, types=kinds, statuses=statuses, subtask_id=subtask, limit=limit
        )
