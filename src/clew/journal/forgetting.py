"""Forgetting, a service of the Memory facade: `forget` removes the content of a record, or
every match of a pattern, and leaves tombstones (docs/architecture.md, "Forgetting").

A forget is one write transaction: it reads the events that hold the content (a record's,
a page at a time, or every event of the space for a pattern), works out the fields to
replace in each (forgettable.py), and journals `journal.forgotten` events naming them; the
store applies each as it is journaled (store/forgetting.py). After the commit it empties
what the store's files still hold of the old pages (`Store.purge`) and rewrites the file
mirrors of the tasks it touched whole (their journal files only ever grew). `dry_run`
reads the same and writes nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

from clew.core import chain, checks, codec
from clew.core.chain import Link
from clew.errors import ValidationError
from clew.kernel import Kernel, Service
from clew.models import Field, ForgetItem, ForgetReport
from clew.state.working import Working
from clew.store.portable.journal import FORGOTTEN

if TYPE_CHECKING:
    import re

LOCAL_USER = "local user"
PER_EVENT = 500  # events one journal.forgotten event names
_PAGE = 1000  # events read at a time


class _Planned(NamedTuple):
    """One event to rewrite: as read (its data left out: a pattern may plan thousands), its
    fields, and its data's digests before and after."""

    link: Link
    fields: list[Field]
    before: str
    after: str
    record: tuple[str, str] | None


class Forgetting(Service):
    """`forget` (a service of `Memory`): handed the kernel and layer 1 (`working`), which
    rewrites the mirror of what was forgotten."""

    def __init__(self, kernel: Kernel, working: Working) -> None:
        super().__init__(kernel)
        self.working = working

    def forget(
        self,
        kind: str | None = None,
        ident: str | None = None,
        *,
        pattern: str | None = None,
        dry_run: bool = False,
        by: str | None = None,
    ) -> ForgetReport:
        """Remove the content of one record (`kind`: entry, turn, action (its output) or
        message; `ident` its id or a prefix), or every match of `pattern` (a regular
        expression) in the space's content, leaving a tombstone naming `by` (who forgets: the
        local user by default; a server says which key) and the time; with `dry_run`, report
        what would be forgotten and write nothing."""

        who = LOCAL_USER if by is None else checks.text(by, "by", max_chars=200).strip()
        if not who:
            raise ValidationError("by must name who forgets")
        regex, record = self._what(kind, ident, pattern)
        if dry_run:
            with self._store.transaction():
                planned, left = self._plan(record, regex)
            return _report(who, True, planned, left)
        with self._write() as at:
            planned, left = self._plan(record, regex)
            forgets = []
            for start in range(0, len(planned), PER_EVENT):
                part = planned[start : start + PER_EVENT]
                data = _forget_data(who, record, pattern if regex else None, part)
                forgets.append(self._emit(FORGOTTEN, None, data, at).id)
        note = self._store.purge() if planned else None
        self._forgotten_in({p.link.task_id for p in planned if p.link.task_id})
        return _report(who, False, planned, left, tuple(forgets), note)

    def _what(
        self, kind: str | None, ident: str | None, pattern: str | None
    ) -> tuple[re.Pattern[str] | None, tuple[str, str] | None]:
        """The forget asked for: a pattern, or a record (its kind and whole id)."""
        from clew.journal import forgettable

        if pattern is not None:
            if kind is not None or ident is not None:
                raise ValidationError("give a record (kind and id) or a pattern, not both")
            return forgettable.compiled(pattern), None
        if kind is None or ident is None:
            raise ValidationError(
                "say what to forget: a record (entry, turn, action or message, and its id) or"
                " a pattern"
            )
        if kind not in forgettable.KINDS:
            raise ValidationError(
                f"no record of kind {kind!r} can be forgotten; the kinds:"
                f" {', '.join(forgettable.KINDS)} (or give a pattern)"
            )
        return None, (kind, self._resolve(kind, checks.text(ident, f"{kind} id")))

    def _plan(
        self, record: tuple[str, str] | None, regex: re.Pattern[str] | None
    ) -> tuple[list[_Planned], list[ForgetItem]]:
        """The events to rewrite, and (for a pattern) those where it would still match."""
        from clew.journal import forgettable
        from clew.store import forgetting as stored

        planned: list[_Planned] = []
        left: list[ForgetItem] = []
        turn = forgettable.Turn(record[1]) if record and record[0] == "turn" else None
        for link in self._links(record):
            try:
                event = stored.event_of(link)
            except ValueError:
                continue  # data that cannot be read holds nothing to find (verify says so)
            data = stored.base(event)
            if regex is not None:
                fields = forgettable.pattern_fields(regex, event.type, data)
                still = forgettable.remaining(regex, data, fields)
                if still:
                    left.append(_item(link, None, [forgettable.dotted(p) for p in still], 0))
            else:
                assert record is not None
                fields = forgettable.record_fields(*record, event.type, data, turn)
            if not fields:
                continue
            if event.type == "turn.appended" and "role" not in data.get("turn", {}):
                raise ValidationError(
                    f"turn event #{link.seq} was written by a clew older than turns carrying"
                    " what was derived from them, so a replay would derive its session state"
                    " from the text forgotten: this clew cannot forget it"
                )
            new = stored.rewrite(data, fields)
            before, after = chain.data_digest(link.data), chain.data_digest(codec.dumps(new))
            if before == after:
                continue  # forgotten already
            owner = forgettable.record_of(event.type, data)
            if all(f.path[:2] == ("turn", "state") for f in fields):
                owner = None  # only the session state changed: the turn's own text did not
            planned.append(_Planned(link._replace(data=""), fields, before, after, owner))
        return planned, left

    def _links(self, record: tuple[str, str] | None) -> Iterator[Link]:
        """The events a forget reads, a page at a time: a record's, or the whole space's."""
        after = 0
        while True:
            if record is None:
                page = self._store.stored_links(after=after, limit=_PAGE)
            else:
                page = self._store.record_links(*record, after=after, limit=_PAGE)
            yield from page
            if len(page) < _PAGE:
                return
            after = page[-1].seq

    def _forgotten_in(self, task_ids: set[str]) -> None:
        """After a forget's commit: rewrite the mirror files of the tasks it touched whole
        (their journal file only grows), and delete the space's approximate-index files,
        which hold the dropped vectors until they are built again."""
        import shutil

        from clew.search import ann

        for task_id in sorted(task_ids):
            self.working._rewrite_mirror(task_id, whole=True)
        folder = ann.folder(self._store.path, self.space)
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)


def _item(link: Link, record: tuple[str, str] | None, fields: list[str], count: int) -> ForgetItem:
    owner = None if record is None else f"{record[0]} {record[1]}"
    return ForgetItem(link.seq, link.id, link.type, owner, tuple(fields), count)


def _report(
    who: str,
    dry_run: bool,
    planned: list[_Planned],
    left: list[ForgetItem],
    forgets: tuple[str, ...] = (),
    note: str | None = None,
) -> ForgetReport:
    from clew.journal.forgettable import dotted

    items = tuple(
        _item(
            p.link,
            p.record,
            [dotted(f.path) for f in p.fields],
            sum(1 if f.spans is None else len(f.spans) for f in p.fields),
        )
        for p in planned
    )
    return ForgetReport(who, dry_run, items, forgets, tuple(left), note)


def _forget_data(
    who: str, record: tuple[str, str] | None, pattern: str | None, part: list[_Planned]
) -> dict[str, Any]:
    """A journal.forgotten event's data: who, what (a record, or the pattern's seal: never
    its text, which may be the secret itself), and each event's fields and digests."""
    from clew.store.forgetting import field_json

    what: dict[str, Any] = {"by": who}
    if record is not None:
        what["forgot"], what["record"] = record
    else:
        from clew.privacy import sealing

        what["forgot"], what["pattern"] = "pattern", sealing.seal("forget.pattern", (pattern,))
    what["events"] = [
        {
            "id": p.link.id,
            "task_id": p.link.task_id,
            "record": None if p.record is None else list(p.record),
            "fields": [field_json(f) for f in p.fields],
            "before": p.before,
            "after": p.after,
        }
        for p in part
    ]
    return what
