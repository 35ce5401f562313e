"""Reads of the layer-2 archive on both backends: entries with their sources, exact filters,
`query_relevant`, and what an error fingerprint has been seen with.

Tags and `relevance_to` are matched through `entry_labels` (one row per value, indexed),
so `db` never matches `db-migrate`. Full-text search is each backend's own
(`sqlite/search.py`, `postgres/search.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from clew.core import codec
from clew.errors import NotFoundError
from clew.models import Entry, EntryFilter, EntryStatus, EntryType, Evidence, Fix
from clew.store.rows import RowReader, json_ids, limited
from clew.store.sql import Row, numbered, param, param_list

# All but `sources`, which come from entry_sources (and evidence's commands, from actions).
ENTRY_COLUMNS = tuple(f for f in Entry._fields if f != "sources")
_COLUMNS = ", ".join(ENTRY_COLUMNS)
_E_COLUMNS = ", ".join(f"e.{c}" for c in ENTRY_COLUMNS)
_TYPE = {t.value: t for t in EntryType}
_STATUS = {s.value: s for s in EntryStatus}
RARE_TAG = 16  # entries a tag may carry for a tag-filtered list to be read from its index


def entry_from_row(row: Row | tuple[Any, ...]) -> Entry:
    (
        id,
        space,
        task_id,
        subtask_id,
        type,
        summary,
        detail,
        tags,
        relevance_to,
        status,
        resolution,
        resolved_at,
        supersedes,
        fingerprint,
        created_at,
        updated_at,
        origin,
        keep_open,
        evidence,
    ) = tuple(row)[: len(ENTRY_COLUMNS)]
    return Entry(
        id,
        space,
        task_id,
        subtask_id,
        _TYPE[type],
        summary,
        detail,
        json_ids(tags),
        json_ids(relevance_to),
        _STATUS[status],
        resolution,
        resolved_at,
        supersedes,
        fingerprint,
        created_at,
        updated_at,
        (),
        origin,
        bool(keep_open),
        tuple(Evidence(str(a), str(at)) for a, at in codec.loads(evidence or "[]")),
    )


def _fix(row: Row) -> Fix:
    return Fix(
        id=row["id"],
        space=row["space"],
        fingerprint=row["fingerprint"],
        entry_id=row["entry_id"],
        task_id=row["task_id"],
        description=row["description"],
        worked=bool(row["worked"]),
        created_at=row["created_at"],
    )


def entry_filter(filters: EntryFilter, alias: str, params: list[Any]) -> str:
    """SQL conditions (after `WHERE space = $1`) for `filters`, their values added to
    `params` (the statement's so far)."""
    a = alias
    sql = ""
    for column, value in (
        ("task_id", filters.task_id),
        ("subtask_id", filters.subtask_id),
    ):
        if value is not None:
            sql += f" AND {a}{column} = {param(params, value)}"
    for column, values in (("type", filters.types), ("status", filters.statuses)):
        if values:
            sql += f" AND {a}{column} IN ({param_list(params, [v.value for v in values])})"
    if filters.since is not None:
        sql += f" AND {a}created_at >= {param(params, filters.since)}"
    if filters.until is not None:
        sql += f" AND {a}created_at < {param(params, filters.until)}"
    for tag in filters.tags:
        sql += (
            " AND EXISTS (SELECT 1 FROM entry_labels l WHERE l.kind = 'tag'"
            f" AND l.value = {param(params, tag)} AND l.entry_id = {a}id AND l.space = {a}space)"
        )
    return sql


class ArchiveReads(RowReader):
    """The archive's reads (a part both stores hold)."""

    def _with_sources(self, entries: list[Entry]) -> list[Entry]:
        if not entries:
            return entries
        ids = [e.id for e in entries]
        found: dict[str, list[tuple[str, str]]] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            for row in self._rows(
                "SELECT entry_id, kind, source_id FROM entry_sources"
                f" WHERE space = $1 AND entry_id IN ({numbered(len(chunk), 2)}) ORDER BY position",
                [self.space, *chunk],
            ):
                found.setdefault(row[0], []).append((row[1], row[2]))
        entries = [e._replace(sources=tuple(found[e.id])) if e.id in found else e for e in entries]
        return self._with_evidence(entries)

    def _with_evidence(self, entries: list[Entry]) -> list[Entry]:
        """Each piece of evidence with its command, read from the action that passed."""
        wanted = sorted({x.action_id for e in entries for x in e.evidence})
        if not wanted:
            return entries
        commands: dict[str, str | None] = {}
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            for row in self._rows(
                "SELECT id, command FROM actions WHERE space = $1"
                f" AND id IN ({numbered(len(chunk), 2)})",
                [self.space, *chunk],
            ):
                commands[row[0]] = row[1]
        out = []
        for e in entries:
            found = tuple(x._replace(command=commands.get(x.action_id)) for x in e.evidence)
            out.append(e._replace(evidence=found) if found else e)
        return out

    def get_entry(self, entry_id: str) -> Entry:
        """Return one archive entry by id."""
        rows = self._rows(
            f"SELECT {_COLUMNS} FROM entries WHERE id = $1 AND space = $2", (entry_id, self.space)
        )
        if not rows:
            raise NotFoundError("entry", entry_id)
        return self._with_sources([entry_from_row(rows[0])])[0]

    def list_entries(self, filters: EntryFilter, *, limit: int | None = None) -> list[Entry]:
        """Return archive entries, newest first, filtered exactly."""
        # Which plan only: both give the same entries, so the two reads need not be one.
        rare = self._rare_tag(filters.tags)
        if rare is None:
            params: list[Any] = [self.space]
            where = entry_filter(filters, "e.", params)
            rows = self._rows(
                *limited(
                    f"SELECT {_E_COLUMNS} FROM entries e WHERE e.space = $1{where}"
                    " ORDER BY e.created_at DESC, e.seq DESC",
                    params,
                    limit,
                )
            )
        else:
            # The few entries carrying the tag, read through its index (CROSS JOIN keeps
            # SQLite's join order: the labels first), then the other filters and the sort.
            params = [rare, self.space, self.space]
            where = entry_filter(filters, "e.", params)
            rows = self._rows(
                *limited(
                    f"SELECT {_E_COLUMNS} FROM entry_labels l CROSS JOIN entries e"
                    " WHERE l.kind = 'tag' AND l.value = $1 AND l.space = $2"
                    f" AND e.id = l.entry_id AND e.space = $3{where}"
                    " ORDER BY e.created_at DESC, e.seq DESC",
                    params,
                    limit,
                )
            )
        return self._with_sources([entry_from_row(r) for r in rows])

    def _rare_tag(self, tags: tuple[str, ...]) -> str | None:
        """The filter's tag carried by the fewest entries, if at most RARE_TAG carry it.

        A tag filter otherwise walks the space's entries newest first testing each (cheap
        for a common tag, which matches early); a rare one, such as the key that names a
        LangGraph item, is read from the tag's index instead. Counting stops past
        RARE_TAG, so asking costs a few index steps whatever the tag."""
        best: tuple[int, str] | None = None
        for tag in tags:
            rows = self._rows(
                "SELECT count(*) FROM (SELECT 1 FROM entry_labels"
                " WHERE kind = 'tag' AND value = $1 AND space = $2 LIMIT $3) AS t",
                (tag, self.space, RARE_TAG + 1),
            )
            count = rows[0][0]
            if count <= RARE_TAG and (best is None or count < best[0]):
                best = (count, tag)
                if count <= 1:  # none can be rarer: ask no more
                    break
        return best[1] if best else None

    def relevant_entries(self, task_id: str, subtask_id: str, *, limit: int) -> list[Entry]:
        """`query_relevant`: the subtask's own entries, entries that name it in
        relevance_to, and the task's decisions, errors and user instructions; newest first."""
        kinds = ("decision", "error", "user_instruction")
        rows = self._rows(
            f"SELECT {_COLUMNS} FROM entries WHERE task_id = $1 AND space = $2 AND ("
            " subtask_id = $3 OR type IN ($4, $5, $6) OR id IN (SELECT entry_id FROM entry_labels"
            " WHERE kind = 'relevance' AND value = $7 AND space = $8))"
            " ORDER BY created_at DESC, seq DESC LIMIT $9",
            (task_id, self.space, subtask_id, *kinds, subtask_id, self.space, limit),
        )
        return self._with_sources([entry_from_row(r) for r in rows])

    def newest_entries(
        self, task_id: str, types: tuple[EntryType, ...], per_group: int
    ) -> dict[tuple[EntryType, EntryStatus], list[Entry]]:
        """Return the newest `per_group` entries of each (type, status) of a task."""
        # One indexed range scan per group (task, type, status, newest first), all in one
        # statement: far cheaper than ranking every entry of the task with a window.
        groups_wanted = [(t, s) for t in types for s in EntryStatus]
        params: list[Any] = [task_id, self.space, per_group]
        parts = [
            f"SELECT * FROM (SELECT {_COLUMNS} FROM entries WHERE task_id = $1 AND space = $2"
            f" AND type = {param(params, kind.value)} AND status = {param(params, status.value)}"
            " ORDER BY created_at DESC, seq DESC LIMIT $3) AS g"
            for kind, status in groups_wanted
        ]
        rows = self._rows(" UNION ALL ".join(parts), params)
        groups: dict[tuple[EntryType, EntryStatus], list[Entry]] = {}
        for entry in self._with_sources([entry_from_row(row) for row in rows]):
            groups.setdefault((entry.type, entry.status), []).append(entry)
        return groups

    def count_entries(self, task_id: str) -> dict[tuple[EntryType, EntryStatus], int]:
        """Return how many entries a task has of each type and status."""
        rows = self._rows(
            "SELECT type, status, count(*) FROM entries WHERE task_id = $1 AND space = $2"
            " GROUP BY type, status",
            (task_id, self.space),
        )
        return {(_TYPE[r[0]], _STATUS[r[1]]): r[2] for r in rows}

    def replacements(self, entry_ids: Sequence[str]) -> dict[str, str]:
        """The entry that supersedes each of these (those superseded by one), by old id:
        search ranks a superseded entry below the one that replaced it."""
        if not entry_ids:
            return {}
        olds = self._rows(
            f"SELECT id, created_at FROM entries WHERE space = $1"
            f" AND id IN ({numbered(len(entry_ids), 2)})",
            [self.space, *entry_ids],
        )
        types = [t.value for t in EntryType]
        at_least, superseding = len(types) + 2, len(types) + 3  # after space and the types
        found: dict[str, str] = {}
        for old, at in olds:
            # A replacement is newer (of any type: a decision may replace a question): the
            # (space, type, created_at) index, every type listed, bounds the walk to the
            # entries since the old one instead of the whole space.
            rows = self._rows(
                f"SELECT id FROM entries WHERE space = $1 AND type IN ({numbered(len(types), 2)})"
                f" AND created_at >= ${at_least} AND supersedes = ${superseding}"
                " ORDER BY created_at LIMIT 1",
                (self.space, *types, at, old),
            )
            if rows:
                found[old] = rows[0][0]
        return found

    def entries_with_fingerprint(self, key: str, *, limit: int = 50) -> list[Entry]:
        """Error entries with this fingerprint, newest first, in any task of the space."""
        rows = self._rows(
            f"SELECT {_COLUMNS} FROM entries WHERE fingerprint = $1 AND space = $2"
            " ORDER BY created_at DESC, seq DESC LIMIT $3",
            (key, self.space, limit),
        )
        return self._with_sources([entry_from_row(r) for r in rows])

    def fixes_for(self, key: str) -> list[Fix]:
        """The fixes tried for a fingerprint, newest first."""
        rows = self._rows(
            "SELECT * FROM fixes WHERE fingerprint = $1 AND space = $2"
            " ORDER BY created_at DESC, seq DESC",
            (key, self.space),
        )
        return [_fix(r) for r in rows]
