"""The archive's reads: typed entries, their sources and fixes. Part of the backend contract
(store/contract/__init__.py states the rules every method keeps)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from clew.models import (
    Entry,
    EntryFilter,
    EntryStatus,
    EntryType,
    Fix,
)


class ArchiveReads(Protocol):
    """The archive: entries (decisions, errors, findings, ...), their fixes and search."""

    def get_entry(self, entry_id: str) -> Entry:
        """One entry by id, with its sources in the order they were given. NotFoundError."""
        ...

    def list_entries(self, filters: EntryFilter, *, limit: int | None = None) -> list[Entry]:
        """Entries matching every filter exactly (a tag matches whole), newest first."""
        ...

    def relevant_entries(self, task_id: str, subtask_id: str, *, limit: int) -> list[Entry]:
        """A step's own entries, those naming it in relevance_to, and the task's decisions,
        errors and user instructions; newest first."""
        ...

    def newest_entries(
        self, task_id: str, types: tuple[EntryType, ...], per_group: int
    ) -> dict[tuple[EntryType, EntryStatus], list[Entry]]:
        """The newest `per_group` entries of each (type, status) of a task; groups with no
        entry are absent."""
        ...

    def count_entries(self, task_id: str) -> dict[tuple[EntryType, EntryStatus], int]:
        """How many entries a task has of each (type, status); absent means none."""
        ...

    def replacements(self, entry_ids: Sequence[str]) -> dict[str, str]:
        """The entry that supersedes each of these (those superseded by one), by old id."""
        ...

    def entries_with_fingerprint(self, key: str, *, limit: int = 50) -> list[Entry]:
        """Error entries with this fingerprint, in any task of the space, newest first."""
        ...

    def fixes_for(self, key: str) -> list[Fix]:
        """The fixes tried for an error fingerprint, newest first."""
        ...

    def linked_actions(self, action_ids: Sequence[str]) -> dict[str, str | None]:
        """Which of these actions an error entry names as a source: each with None while
        such an entry is active, else when the last of them was closed; others absent."""
        ...

    def fts_check(self) -> str | None:
        """Check the archive's search index against the entries; None when it is sound,
        else what is wrong (a backend without a separate index returns None)."""
        ...
