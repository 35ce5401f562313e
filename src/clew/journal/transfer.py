"""Moving a journal: export a space's journal to a file, import one, push to another store.

A store is moved by its journal alone: the events, as stored, replayed into the target
through the store contract (`Store.event_ids`, `Store.adopt`), whose projection rebuilds
every row. So any backend can take any other's journal, and the target's `verify` holds.

- **Export** reads the space's events as stored (never upgraded: the hash covers the
  stored data), checks the hash chain as it reads, and writes `journalfile` lines. A
  journal whose chain is broken is not exported (`clew verify` says where).
- **Import** checks the whole file first (`journalfile.parse`: shape, data, chain, count),
  then, in ONE write transaction, checks it against the store and adopts every event the
  store does not hold. All or nothing: a file is bounded by the input limit, and a refusal
  or a crash half-way must leave the store as it was.
- **Push** is an import without a file, in batches of events, each batch one transaction:
  the target always holds a prefix of the journal, so a push that stops (interrupted, or
  refused at an event) resumes where it stopped the next time. Every check runs once
  over all events before the first batch is written, so a refusal normally writes nothing.

Who may move what: a caller may import or push only events it could have written directly.
A `wait.added` of a wait that makes the host act (a command, a file, a URL) is refused,
naming its line, unless the caller's `Origin` allows that wait (origin.py: the host's own
user any; a server's admin key what the operator allowed; other keys none). Even then an
imported wait never runs unless its seal verifies with this host's key (waits.py). Who
imported is the store's own record (`Store.record_import`: the key or the host's user, the
door, the time, the seq range), written in each transaction that adopts events and never
journaled: an event's correlation id says who made it where it came from, a claim.

Events are matched by id: an event the target already holds is skipped, so importing or
pushing twice adds nothing. The events it holds must be a prefix of the ones sent (a gap
would put them out of order), and a file that continues an earlier export needs the event
it continues from. A task created by a sent event must not exist in the target already
(that would be another task with the same id), and an event of a task must find its task
in the target or earlier in what is sent.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence, Sized
from typing import IO, TYPE_CHECKING

from clew.core import chain, checks, codec, origin
from clew.core.chain import Link
from clew.core.origin import Origin
from clew.errors import (
    NotFoundError,
    ScopeError,
    StoreBusyError,
    StoreError,
    StoreReadOnlyError,
    ValidationError,
)
from clew.journal.forgetting import Forgetting
from clew.kernel import Kernel, Service
from clew.models import Event, ImportRecord, MoveReport
from clew.privacy.redaction import Redactor
from clew.store import Store
from clew.store.portable.journal import FORGOTTEN

if TYPE_CHECKING:
    from clew.journal.journalfile import After, Moved

_PAGE = 1000  # events read from the store at a time
PUSH_BATCH = 500  # events written to a target per transaction


class _Refusal:
    """How a refusal names an event and what it says happened: a file's line, or a
    store's event."""

    def __init__(self, where: Callable[[Moved], str], outcome: str) -> None:
        self.where = where
        self.outcome = outcome

    def __call__(
        self, moved: Moved, why: str, error: type[ValidationError | ScopeError] = ValidationError
    ) -> ValidationError | ScopeError:
        return error(f"{self.where(moved)} {why}; {self.outcome}")


_FILE = _Refusal(lambda m: f"line {m.line} of the journal file", "nothing was imported")


def _pushed(outcome: str) -> _Refusal:
    return _Refusal(lambda m: f"event #{m.line} ({m.event.type} {m.event.id})", outcome)


class Transfer(Service):
    """Export, import and push of a space's journal (see the module docstring): a service
    of `Memory`, handed the kernel and `forgetting`, which finishes what an imported
    forget touched (the store's files, the mirrors)."""

    def __init__(self, kernel: Kernel, forgetting: Forgetting) -> None:
        super().__init__(kernel)
        self.forgetting = forgetting

    def export_events(
        self, out: IO[str], *, after: str | None = None, since_seq: int | None = None
    ) -> int:
        """Write this space's journal to `out` as a journal file (JSON lines, each event
        with its hash); only the events after event `after` (an id) or after seq
        `since_seq` when given. Return the number of events written."""
        from clew.journal import journalfile  # lazily: not on the hook path

        if after is not None and since_seq is not None:
            raise ValidationError("give after (an event id) or since_seq, not both")
        cut = None if after is None else checks.text(after, "after").strip().lower()
        since = None if since_seq is None else checks.count(since_seq, "since_seq")
        from clew.core import meter  # here: the hook path imports this module, not meter
        from clew.store.migrations import LATEST

        whole, seen, headed = cut is None and since is None, False, False
        previous: Link | None = None
        count = 0
        total = self._store.count_events()
        with contextlib.closing(self._stored_links()) as links:
            for read, event in enumerate(links, 1):
                if read % _PAGE == 0:
                    meter.report("exporting", read, total)
                if whole or seen or (since is not None and event.seq > since):
                    if not headed:  # a cut file continues from the event before its first
                        out.write(journalfile.header_line(self.space, LATEST, _after(previous)))
                        out.write("\n")
                        headed = True
                    # The data as stored, never decoded: the text the hash was checked over.
                    out.write(journalfile.event_line(event) + "\n")
                    count += 1
                seen = seen or event.id == cut
                previous = event
        if cut is not None and not seen:
            raise ValidationError(
                f"no event {cut!r} in space {self.space!r}'s journal; give a whole event id"
                " (`clew journal --json` lists them; an export's last line names its last)"
            )
        if not headed:  # no events to write: the file continues from the newest one
            start = None if whole else _after(previous)
            out.write(journalfile.header_line(self.space, LATEST, start) + "\n")
        last = previous if count else None
        out.write(journalfile.end_line(count, last and last.hash, last and last.id) + "\n")
        return count

    def import_events(
        self, text: str | Iterable[str], *, by: Origin = origin.HOST_USER
    ) -> MoveReport:
        """Replay a journal file (the text `export_events` writes) into this space: the
        whole file is checked first, then every event this space does not hold is added,
        all in one transaction; events it holds are skipped. Given its lines instead (any
        iterable of text lines, an open file included), it is read a line at a time, each
        line checked as it is replayed, still in one transaction: a file of any length
        imports in constant memory, and a fault anywhere in it leaves nothing. `by` is who
        imports (a server passes its caller's key and what it may do): a file adding a wait
        it could not add directly is refused (ScopeError naming the line), and the store
        records who imported the events it adds. A forget in the file is applied to the
        events this space holds; one that would rewrite content this space holds needs a
        caller who may forget (the host's user, an admin key), or it is refused, naming its
        line."""
        from clew.journal import journalfile  # lazily: not on the hook path

        if not isinstance(by, Origin):
            raise ValidationError(f"by must be an Origin, not {type(by).__name__}")
        adoption = _Adoption(by, self._now(), self.settings.redaction)
        if isinstance(text, str):
            moved = journalfile.parse(text)
            _known_schema(moved.schema)
            report = replay(self._store, moved.after, moved.events, refuse=_FILE, adoption=adoption)
        else:
            if isinstance(text, bytes | bytearray | dict) or not isinstance(text, Iterable):
                raise ValidationError(f"a journal file is text, not {type(text).__name__}")
            _space, schema, after, events = journalfile.stream(_numbered(text))
            _known_schema(schema)
            report = replay(
                self._store, after, events, refuse=_FILE, streamed=True, adoption=adoption
            )
        if adoption.forgot:
            self._store.purge()
            self.forgetting._forgotten_in(adoption.tasks)
        return report

    def push(
        self,
        to: str,
        *,
        space: str | None = None,
        batch: int = PUSH_BATCH,
        busy_timeout: float | None = None,
    ) -> MoveReport:
        """Send this space's events that the store at `to` (a location `clew.open` takes)
        does not hold to its space `space` (this one's name by default), in order, `batch`
        events per transaction; a second push sends nothing, a stopped one resumes. The
        target records each batch as pushed by its own user (the database role of a team
        store); the host waits pushed never run there unless their seal verifies there."""
        location = checks.text(to, "to").strip()
        chosen = self.space if space is None else checks.space(space)
        size = checks.count(batch, "batch")
        if size < 1:
            raise ValidationError("batch must be at least 1")
        from clew.core.location import resolve_busy_timeout
        from clew.store import open_store

        journal = _Journal(self)  # read twice (checks, then writes), a page at a time
        target = open_store(location, chosen, resolve_busy_timeout(busy_timeout))
        adoption = _Adoption(Origin("push"), self._now(), self.settings.redaction)
        try:
            refuse = _pushed("nothing was pushed")
            report = replay(target, None, journal, refuse=refuse, batch=size, adoption=adoption)
            if adoption.forgot:  # a forget made here reaches the target's files too
                target.purge()
            return report
        finally:
            target.close()

    def import_records(self, first_seq: int = 0, last_seq: int | None = None) -> list[ImportRecord]:
        """The store's records of who imported or pushed this space's events (those that
        added any event of seq `first_seq`..`last_seq`), oldest first."""
        first = checks.integer(first_seq, "first_seq")
        last = checks.MAX_INT if last_seq is None else checks.integer(last_seq, "last_seq")
        return self._store.imports_between(first, last)

    def _stored_links(self) -> Generator[Link]:
        """Yield this space's events as stored (their data as text, never decoded), a page
        at a time in one read transaction, checking that each follows from the one before
        in the hash chain."""
        previous, seq = "", 0
        with self._store.transaction():
            while True:
                page = self._store.stored_links(after=seq, limit=_PAGE)
                for link in page:
                    if link.hash != chain.row_hash(previous, link):
                        raise StoreError(
                            f"event #{link.seq} ({link.type}) of space {self.space!r} does"
                            " not follow from the journal before it, so the journal cannot be"
                            " moved exactly; `clew verify` says what is wrong"
                        )
                    previous = str(link.hash)
                    yield link
                if len(page) < _PAGE:
                    return
                seq = page[-1].seq


def _event(link: Link) -> Event:
    """The event a stored link holds (its data decoded), for a replay elsewhere."""
    try:
        data = codec.loads(link.data)
    except (ValueError, TypeError, RecursionError):
        data = None
    if not isinstance(data, dict):
        raise StoreError(
            f"event #{link.seq} ({link.type}) of space {link.space!r} holds data that is not"
            " a JSON object, so it cannot be moved; `clew verify` says what is wrong"
        )
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
        forgotten=chain.tombstone(link.forgotten),
    )


def _known_schema(schema: int) -> None:
    from clew.store.migrations import LATEST

    if schema > LATEST:
        raise ValidationError(
            f"the journal file was written by a newer clew (schema {schema}; this"
            f" clew knows {LATEST}): upgrade clew; nothing was imported"
        )


def _numbered(lines: Iterable[str]) -> Iterator[tuple[int, str]]:
    """A journal file's lines numbered from 1, without their ends ("\n", or "\r\n")."""
    for number, line in enumerate(lines, 1):
        if not isinstance(line, str):
            raise ValidationError(f"line {number} of the journal file is not text")
        yield number, line.removesuffix("\n").removesuffix("\r")


def _after(event: Link | Event | None) -> After | None:
    from clew.journal.journalfile import After  # lazily: not on the hook path

    return None if event is None or event.hash is None else After(event.id, event.hash)


def replay(
    store: Store,
    after: After | None,
    events: Iterable[Moved],
    *,
    refuse: _Refusal,
    adoption: _Adoption,
    batch: int | None = None,
    streamed: bool = False,
) -> MoveReport:
    """Adopt into `store` the `events` (a journal in order, continuing from `after`) that
    it does not hold: all in one transaction, or `batch` at a time after checking them all
    first (then `events` is read twice, a part at a time: it need not fit in memory), or,
    `streamed`, all in one transaction read once a part at a time, each part checked with
    what the parts before it showed. Each transaction that adds events records who added
    them, and each event's free text is redacted as it is adopted, as a write's is
    (`adoption`), so a journal written without redaction, or by another clew, brings no
    secret in. Return what was added and skipped."""
    from clew.core import meter  # here: the hook path imports this module, not meter

    if streamed:
        return _replay_streamed(store, after, events, refuse, adoption)
    total = len(events) if isinstance(events, Sized) else None
    if batch is not None:
        with store.transaction():  # every check once, before anything is written
            checks = _Checks(store, after, refuse, adoption.by)
            for part in _parts(events, _PAGE):
                checks.part(part)
    parts = _parts(events, batch) if batch is not None else _parts(events, None)
    added, head, count, prior = 0, None, 0, after
    resumed = (
        _pushed(
            "the push stopped there; what came before it is in the target, and"
            " pushing again resumes"
        )
        if batch
        else refuse
    )
    for part in parts:
        with store.transaction(write=True), store.bulk_turns():
            todo = _Checks(store, prior, resumed if count else refuse, adoption.by).part(part)
            for n, moved in enumerate(todo, 1):
                head = adoption.adopt(store, moved, resumed if count else refuse).hash
                if n % _PAGE == 0:
                    meter.report("pushing" if batch else "importing", count + n, total)
            adoption.record(store)
        added += len(todo)
        count += len(part)
        prior = _moved_after(part[-1])
    return MoveReport(count, added, count - added, store.space, head)


def _replay_streamed(
    store: Store,
    after: After | None,
    events: Iterable[Moved],
    refuse: _Refusal,
    adoption: _Adoption,
) -> MoveReport:
    from clew.core import meter

    added, count, head = 0, 0, None
    with store.transaction(write=True), store.bulk_turns():
        checks = _Checks(store, after, refuse, adoption.by)
        for part in _parts(events, _PAGE):
            for moved in checks.part(part):
                head = adoption.adopt(store, moved, refuse).hash
                added += 1
            count += len(part)
            meter.report("importing", count, None)
        adoption.record(store)
    return MoveReport(count, added, count - added, store.space, head)


class _Adoption:
    """How a replay adopts events, and what it did: who adopts them (`by`, at `at`), whether
    a forget may rewrite what the target holds (a caller who may forget: the host's user,
    an admin key), the events each write transaction adopted (to record who brought them
    before it commits: within a space they are consecutive, as its writers take the space's
    lock), and what the forgets it adopted touched (so the caller purges and rewrites
    mirrors). Each event's free text is redacted before it is adopted (`redaction`), so the
    target chains an event that held a secret over what it stores; an event whose content
    was forgotten is adopted as it is (its tombstone vouches for its data as it stands)."""

    def __init__(self, by: Origin, at: str, redaction: Redactor) -> None:
        self.by, self.at, self.redaction = by, at, redaction
        self.forgets = by.scope == "admin"
        self.forgot = False
        self.tasks: set[str] = set()
        self.first: int | None = None
        self.last = 0
        self.count = 0

    def adopt(self, store: Store, moved: Moved, refuse: _Refusal) -> Event:
        """Adopt one event into `store`, redacted; a refusal names its line (or event)."""
        event = moved.event
        try:
            if event.forgotten is None:
                data = self.redaction.event(event.type, event.data)
                event = event if data is event.data else event._replace(data=data)
            event = store.adopt(event, forgets=self.forgets)
        except (StoreBusyError, StoreReadOnlyError):
            raise  # the store's state, not the event's: its own message says what to do
        except (StoreError, ValueError, KeyError, TypeError) as exc:
            why = f"cannot be added to this store ({exc})"
            if "UNIQUE" in str(exc):  # the id is taken: by a record of another space, likely
                why += (
                    ": a record with its id is already there, perhaps in another space of the"
                    " store (a SQLite file keeps ids unique across its spaces: move a space"
                    " into another file)"
                )
            raise refuse(moved, why) from None
        self.first = event.seq if self.first is None else self.first
        self.last = event.seq
        self.count += 1
        if event.type == FORGOTTEN:
            from clew.store.forgetting import items

            self.forgot = True
            self.tasks.update(i.task_id for i in items(event.data) if i.task_id)
        return event

    def record(self, store: Store) -> None:
        """Record who brought the events this transaction adopted (inside it)."""
        if self.first is not None:
            store.record_import(
                self.first, self.last, self.count, self.by.door, self.by.key, self.at
            )
        self.first, self.last, self.count = None, 0, 0


def _parts(events: Iterable[Moved], size: int | None) -> Iterator[list[Moved]]:
    """The events in lists of `size` (None: one list of all, if there are any)."""
    if size is None:
        whole = list(events)
        if whole:
            yield whole
        return
    items = iter(events)
    while part := list(itertools.islice(items, size)):
        yield part


class _Journal:
    """This space's journal as moved events, read again (a page at a time, the chain
    checked) each time it is iterated."""

    def __init__(self, source: Transfer) -> None:
        self.source = source

    def __iter__(self) -> Iterator[Moved]:
        from clew.journal.journalfile import Moved  # lazily: not on the hook path

        with contextlib.closing(self.source._stored_links()) as links:
            for link in links:
                yield Moved(link.seq, _event(link), link.data)


def _moved_after(moved: Moved) -> After:
    from clew.journal.journalfile import After  # lazily: not on the hook path

    return After(moved.event.id, moved.event.hash or "")


class _Checks:
    """The checks of a journal against a store, run over the journal in parts (in order),
    each part checked with what the parts before it showed: the events the store holds a
    prefix of the journal, the event it continues from held, no task clash, and no wait
    that the caller `by` could not have added directly."""

    def __init__(self, store: Store, after: After | None, refuse: _Refusal, by: Origin) -> None:
        self.store, self.after, self.refuse, self.by = store, after, refuse, by
        self.first_todo: Moved | None = None  # the first event the store does not hold
        self.started = False
        self.created: set[str] = set()  # tasks created by the events checked so far
        self.known: dict[str, bool] = {}  # tasks the store holds, or not, as looked up

    def part(self, events: Sequence[Moved]) -> list[Moved]:
        """Check the next events of the journal; return those the store does not hold."""
        held = self.store.event_ids([m.event.id for m in events])
        todo: list[Moved] = []
        continues = False
        for moved in events:
            if moved.event.id in held:
                if self.first_todo is not None:
                    raise self.refuse(
                        moved,
                        f"is already in the store but {self.refuse.where(self.first_todo)}"
                        " before it is not: the store holds this journal with a gap, so it"
                        " cannot be continued in order",
                    )
            else:
                if self.first_todo is None:
                    self.first_todo = moved
                    continues = not self.started and self.after is not None
                todo.append(moved)
            self.started = True
        if continues:  # after the gap check, as a whole journal checked at once would be
            self._continues(todo[0])
        for moved in todo:
            self._check_task(moved)
            self._check_origin(moved)
        return todo

    def _check_origin(self, moved: Moved) -> None:
        """Refuse a wait that makes the host act which the caller could not add itself."""
        if moved.event.type != "wait.added" or self.by.may.local:
            return
        wait = moved.event.data.get("wait")
        kind = wait.get("kind") if isinstance(wait, dict) else None
        if kind not in origin.HOST_KINDS:
            return
        assert isinstance(wait, dict)
        why = origin.refusal(str(kind), str(wait.get("target")), self.by.may)
        if why is None:
            return
        who = "this key" if self.by.key is not None else "a caller of this server"
        said = f"adds a wait that {origin.ACTS[str(kind)]}, which {who} may not add"
        if self.by.scope == "admin":  # the operator's options say why
            said += f" ({why})"
        raise self.refuse(moved, said, ScopeError)

    def _continues(self, moved: Moved) -> None:
        assert self.after is not None
        if not self.store.event_ids([self.after.id]):
            raise self.refuse(
                moved,
                f"continues after event {self.after.id}, which this store does not hold:"
                " import the journal up to that event first (or export the whole journal)",
            )

    def _holds(self, task_id: str) -> bool:
        if task_id not in self.known:
            try:
                self.store.get_task_status(task_id)
                self.known[task_id] = True
            except NotFoundError:
                self.known[task_id] = False
        return self.known[task_id]

    def _check_task(self, moved: Moved) -> None:
        """Refuse an event that creates a task the store already holds (another task with
        the same id), or that belongs to a task neither the store nor an earlier event
        creates."""
        task_id = moved.event.task_id
        if task_id is None:
            return
        if moved.event.type == "task.created":
            if task_id in self.created or self._holds(task_id):
                raise self.refuse(
                    moved,
                    f"creates task {task_id}, but this store already holds a different task"
                    " with that id",
                )
            self.created.add(task_id)
        elif task_id not in self.created and not self._holds(task_id):
            raise self.refuse(
                moved,
                f"belongs to task {task_id}, which this store does not hold and no earlier"
                " event creates: move the journal that creates it first",
            )
