"""What `verify` finds and reports on both backends (sqlite/verify.py, postgres/verify.py replay the
journal each their own way): the event a journal row holds, the findings of a broken chain, an
event that cannot be replayed, a row that differs and a tombstone that does not check out, and
how many of them a report keeps."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from clew.core import chain, codec
from clew.models import Difference, Event, VerifyReport
from clew.store.portable.journal import FORGOTTEN

if TYPE_CHECKING:
    from clew.store.forgetting import TombstoneCheck

MAX_DIFFERENCES = 100
MAX_FORGOTTEN = 100  # forgotten events a report lists (it counts them all)
# Tables whose `seq` is their own integer key, numbered across the file's spaces (the other
# tables' `seq` is the journal seq of the event that made the row, the same in a replay).
SELF_NUMBERED = frozenset({"entries", "turns"})


def replayable(link: chain.Link) -> tuple[Event | None, str]:
    """The event a journal row holds, or None and why it cannot be replayed."""
    try:
        data = codec.loads(link.data)
    except (ValueError, TypeError, RecursionError) as exc:
        return None, f"its data is not valid JSON ({exc})"
    if not isinstance(data, dict):
        return None, "its data is not a JSON object"
    return Event(
        link.seq,
        link.id,
        link.space,
        link.task_id,
        link.correlation_id,
        link.type,
        data,
        link.created_at,
        link.hash,
    ), ""


class Unreplayable(Exception):
    """An event could not be applied in a replay without savepoints."""


def see_tombstone(
    kept: TombstoneCheck, link: chain.Link, event: Event, findings: list[Difference]
) -> None:
    """Take an event into the check of tombstones; what is wrong at once is a finding."""
    if link.forgotten is None and link.type != FORGOTTEN:
        return  # nearly every event: nothing to check, nothing to build
    try:
        tombstone = chain.tombstone(link.forgotten)
    except ValueError as exc:
        findings.append(_tombstone_finding(link.seq, link.type, f"{exc}"))
        tombstone = None
    problem = kept.see(link.seq, event._replace(forgotten=tombstone), link.data)
    if problem is not None:
        findings.append(_tombstone_finding(link.seq, link.type, problem))


def with_tombstones(report: VerifyReport, kept: TombstoneCheck) -> VerifyReport:
    """`report` with what the check of tombstones found once the journal was walked, and
    the forgotten events it saw (the first MAX_FORGOTTEN of them)."""
    found = [_tombstone_finding(p.line, "", p.text) for p in kept.findings()]
    room = max(0, MAX_DIFFERENCES - len(report.differences))
    forgotten = kept.forgotten()
    return report._replace(
        differences=(*report.differences, *found[:room]),
        truncated=report.truncated or len(found) > room,
        forgotten=tuple(forgotten[:MAX_FORGOTTEN]),
        forgotten_count=len(forgotten),
    )


def _tombstone_finding(seq: int, type: str, problem: str) -> Difference:
    what = f" ({type})" if type else ""
    return Difference(
        "events",
        f"#{seq}",
        "forgotten",
        None,
        None,
        f"journal event #{seq}{what}: {problem}: its content was forgotten outside clew, or"
        " the tombstone or the forget was changed",
    )


def chain_finding(link: chain.Link, expected: str) -> Difference:
    return Difference(
        "events",
        f"#{link.seq}",
        "hash",
        link.hash,
        expected,
        f"the journal chain of space {link.space!r} breaks at event #{link.seq} ({link.type}):"
        " this event or the one before it in the space was changed, removed or inserted"
        " outside clew",
    )


def event_finding(link: chain.Link, why: str) -> Difference:
    data = link.data if len(link.data) <= 80 else link.data[:77] + "..."
    return Difference(
        "events",
        f"#{link.seq}",
        "data",
        data,
        None,
        f"journal event #{link.seq} ({link.type}) is skipped in the replay: {why}",
    )


def diff_rows(
    table: str,
    columns: Sequence[str],
    stored: Iterable[Sequence[Any]],
    rebuilt: Iterable[Sequence[Any]],
    counts: dict[str, int],
    *,
    skip: bool = False,
) -> Iterator[Difference]:
    """Merge-walk two id-ordered streams of rows (values in the order of `columns`) and
    yield every disagreement (of every column but `seq` when `skip`: a self-numbered
    table's numbers are compared by their order)."""
    key = columns.index("id")
    ours, theirs = iter(stored), iter(rebuilt)
    a, b = next(ours, None), next(theirs, None)
    while a is not None or b is not None:
        if b is None or (a is not None and a[key] < b[key]):
            counts[table] += 1
            yield Difference(table, a[key], "*", "present", "missing")  # type: ignore[index]
            a = next(ours, None)
        elif a is None or b[key] < a[key]:
            yield Difference(table, b[key], "*", "missing", "present")
            b = next(theirs, None)
        elif a == b:  # the same values in the same columns: nothing to look at one by one
            counts[table] += 1
            a, b = next(ours, None), next(theirs, None)
        else:
            counts[table] += 1
            for i, column in enumerate(columns):
                if a[i] != b[i] and not (skip and column == "seq"):
                    yield Difference(table, a[key], column, a[i], b[i])
            a, b = next(ours, None), next(theirs, None)
