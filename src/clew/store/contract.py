"""The backend contract: what the facade needs of a store, one protocol per subject.

A backend provides a journal core (`Journal`: transactions, appending events, resolving ids,
the events themselves, verify) and the reads of each subject: tasks, the archive, the
ledger (actions, commands, the trace, semantic memory), conversations, jobs and model use,
the lifecycle (waits, schedules, archived tasks), the task record and the vector index
(its writes too: derived rows, outside the journal). `Store` is their union. Nothing here
names a SQL dialect or a driver type: search takes a structured `search.Query`, which each
backend compiles.

Rules every method keeps unless its docstring says otherwise:

- Scope: a store is opened on one space and reads only that space's rows.
- Not found: a `get_*` of an id the space does not have raises `NotFoundError`; a `find_*`,
  `*_by_*` or `latest_*` returns None; a listing returns an empty list.
- Order: newest first is by `created_at`, ties broken by `seq` (the journal seq of the
  event that made the row), so rows written at one moment keep their write order;
  oldest first is the reverse. Every listing has a total order.
- Limits: `limit=None` is no limit; a limit keeps the first `limit` rows of that order.
- Reads inside `transaction()` see one snapshot; outside, each call is its own.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, NamedTuple, Protocol

from clew.core.chain import Link
from clew.core.credentials import ApiKey, RequestLine
from clew.core.lifecycle import Wait, WaitStatus
from clew.core.query import Query
from clew.models import (
    Action,
    ActionLog,
    ActionStatus,
    Attempt,
    ChainHead,
    DatabaseRole,
    Entry,
    EntryFilter,
    EntryStatus,
    EntryType,
    Event,
    FileChanges,
    Fix,
    Guardrail,
    ImportRecord,
    Job,
    JobStatus,
    Message,
    ModelCall,
    NewVector,
    Pattern,
    PendingText,
    PlanItem,
    RecordHit,
    Redaction,
    RepeatedFailure,
    RunningSummary,
    SearchHit,
    Session,
    StoredVector,
    Task,
    TaskStatus,
    TraceDecision,
    TraceValidation,
    Turn,
    VerifyReport,
)


class GraphCheckpoint(NamedTuple):
    """One LangGraph checkpoint as stored: the checkpoint without its channel values and its
    metadata, each serialized by the saver (a type name and bytes)."""

    thread_id: str
    ns: str  # the checkpoint namespace ("" for the root graph)
    checkpoint_id: str  # sorts in the order checkpoints were made
    parent_id: str | None
    checkpoint_type: str
    checkpoint: bytes
    metadata_type: str
    metadata: bytes


class GraphBlob(NamedTuple):
    """One channel value of a LangGraph thread at one version: the value serialized, or
    ("empty", None) for a channel with no value there; a list that grew by appending is
    stored as what was appended to `base_version`'s first `base_length` items."""

    thread_id: str
    ns: str
    channel: str
    version: str
    value_type: str
    value: bytes | None
    base_version: str | None = None
    base_length: int | None = None


class GraphWrite(NamedTuple):
    """One pending write of a task for a checkpoint (`idx` its place among the task's)."""

    thread_id: str
    ns: str
    checkpoint_id: str
    task_id: str
    idx: int
    channel: str
    value_type: str
    value: bytes | None
    task_path: str = ""


class GraphMetadata(NamedTuple):
    """A checkpoint's key and serialized metadata, without the checkpoint itself."""

    thread_id: str
    ns: str
    checkpoint_id: str
    metadata_type: str
    metadata: bytes


class CheckpointStore(Protocol):
    """LangGraph's checkpoints (integrations/langgraph_saver.py's `ClewSaver`): framework
    state kept beside the journal, not in it, so no event is written, `verify` does not
    rebuild them, and export and push do not carry them (docs/architecture.md). Values are
    bytes the saver serialized; the store never decodes them.

    Scoped by the store's space like every other row. Each method is one transaction of its
    own, or joins the one open (`transaction`); the saver opens one around a read of several
    calls (one snapshot) and around a change of several (all or nothing)."""

    def transaction(self, *, write: bool = False) -> AbstractContextManager[None]:
        """`Journal.transaction`: the calls inside run in one transaction."""
        ...

    def put_graph_checkpoint(self, checkpoint: GraphCheckpoint, blobs: Sequence[GraphBlob]) -> None:
        """Store a checkpoint (replacing one of the same thread, namespace and id) and the
        channel values new at it, in one write transaction; a value already stored for its
        (thread, namespace, channel, version) stays as it is (a version names one value)."""
        ...

    def put_graph_writes(self, writes: Sequence[GraphWrite], *, replace: bool) -> None:
        """Store pending writes in one write transaction: one already stored at its (thread,
        namespace, checkpoint, task, idx) stays, unless `replace` (LangGraph's special
        writes: an error or an interrupt replaces the one before it)."""
        ...

    def find_graph_checkpoint(
        self, thread_id: str, ns: str, checkpoint_id: str | None = None
    ) -> GraphCheckpoint | None:
        """The checkpoint of a thread's namespace with this id, or its newest (the highest
        id) when no id is given; None if none."""
        ...

    def list_graph_checkpoints(
        self,
        *,
        thread_id: str | None = None,
        ns: str | None = None,
        checkpoint_id: str | None = None,
        before: str | None = None,
        limit: int | None = None,
    ) -> list[GraphCheckpoint]:
        """Checkpoints of the space, by id descending (ties by thread, then namespace);
        of one thread, one namespace (None: any), one id, with an id below `before`."""
        ...

    def graph_checkpoint_metadata(self) -> list[GraphMetadata]:
        """Every checkpoint of the space with its metadata, in no set order (what deleting
        a run's checkpoints reads: the checkpoints themselves may be large)."""
        ...

    def newest_graph_checkpoints(self, thread_id: str) -> dict[str, str]:
        """The id of the newest checkpoint of each namespace of a thread, by namespace."""
        ...

    def graph_writes(self, thread_id: str, ns: str, checkpoint_id: str) -> list[GraphWrite]:
        """The pending writes of a checkpoint, in no set order (the saver orders them as
        LangGraph does)."""
        ...

    def graph_blobs(
        self, thread_id: str, ns: str, versions: Sequence[tuple[str, str]]
    ) -> list[GraphBlob]:
        """The stored values of these (channel, version) pairs of a thread's namespace, in
        no set order; a pair not stored adds nothing."""
        ...

    def graph_blob_chain(
        self, thread_id: str, ns: str, channel: str, version: str
    ) -> list[GraphBlob]:
        """The value of a channel at `version` and every value it was appended to, back to
        the first one stored in full: oldest first, so the first has no `base_length` unless
        a base is missing (then the chain stops at the last value still stored)."""
        ...

    def graph_blob_bases(self, thread_id: str, ns: str) -> dict[tuple[str, str], str | None]:
        """Every stored (channel, version) of a thread's namespace, with the version its
        value was appended to (None: stored in full)."""
        ...

    def delete_graph_checkpoints(
        self, thread_id: str, ns: str, checkpoint_id: str, *, others: bool = False
    ) -> None:
        """Delete a checkpoint of a thread's namespace (with `others`, every checkpoint of it
        but this one) and its pending writes, in one write transaction; the channel values
        stay (`delete_graph_blobs` takes those no checkpoint needs)."""
        ...

    def delete_graph_blobs(self, thread_id: str, ns: str, keys: Sequence[tuple[str, str]]) -> None:
        """Delete these (channel, version) values of a thread's namespace, in one write
        transaction; a key not stored is no error."""
        ...

    def delete_graph_thread(self, thread_id: str) -> None:
        """Delete a thread's checkpoints, values and pending writes, in one write transaction."""
        ...

    def copy_graph_thread(self, source: str, target: str) -> None:
        """Copy a thread's checkpoints, values and pending writes to another thread id, in one
        write transaction; rows the target already has at the same keys stay as they are."""
        ...


class Journal(Protocol):
    """The core: the append-only journal of events and the transaction around writes."""

    path: str  # where the store is (a file path, or a URL without its password)
    space: str  # the namespace every read and write is scoped to
    read_only: bool  # opened for reading only: every write raises StoreReadOnlyError

    @property
    def graph_checkpoints(self) -> CheckpointStore:
        """LangGraph's checkpoints in this store, beside the journal (a composed object,
        made on first use: a store that never holds any loads none of its code)."""
        ...

    def transaction(self, *, write: bool = False) -> AbstractContextManager[None]:
        """A block run in one transaction; nests (an inner block joins the outer one). A
        write transaction takes the space's write lock up front, so a check made inside it
        still holds when the block writes; a write cannot start inside a read block
        (RuntimeError). Raises StoreBusyError when the lock is not had in the busy timeout,
        StoreReadOnlyError for a write on a read-only store. An exception rolls back."""
        ...

    def savepoint(self) -> AbstractContextManager[None]:
        """A block inside `transaction(write=True)` (RuntimeError outside one) that an
        exception undoes alone: what the block wrote is rolled back, with what the store
        keeps in memory of it (the journal's head, the projection's bookkeeping), and the
        exception goes on; the enclosing transaction stays open and commits what was written
        before and after the block. Nests (an inner block is a savepoint of its own)."""
        ...

    @property
    def in_transaction(self) -> bool:
        """Whether a transaction is open on this store now (so a write would have to join
        it): work that may be put off, like embedding, is then left for later."""
        ...

    def append(
        self,
        *,
        type: str,
        task_id: str | None,
        correlation_id: str,
        data: dict[str, Any],
        created_at: str,
    ) -> Event:
        """Journal one event (hash-chained to the space's previous one) and apply it to the
        projections, in the current write transaction (RuntimeError outside one). Returns
        the event with its `seq`: increasing in commit order across the whole store. A
        `journal.forgotten` event is applied as it is journaled (appended or adopted): the
        events it names are rewritten with their tombstones, and their rows, search
        documents and vectors follow (store/forgetting.py); ValueError, and nothing written,
        when it cannot be applied exactly."""
        ...

    def adopt(self, event: Event, *, forgets: bool = True) -> Event:
        """Journal an event recorded elsewhere and apply it to the projections, as `append`
        does (inside `transaction(write=True)`): its id, task id, correlation id, type, data,
        created_at and tombstone (`forgotten`) are kept exactly; its seq is this store's, its
        space this store's, and its hash is chained to this space's newest event (over the
        tombstone's digest when it has one). Returns the event as stored. A
        `journal.forgotten` event that would rewrite an event this space holds with its
        content raises ValueError unless `forgets` (the adopter may forget)."""
        ...

    def bulk_turns(self) -> AbstractContextManager[None]:
        """A block of many turn writes inside `transaction(write=True)` (RuntimeError
        outside one), for a bulk import: the backend may index the block's turns for search
        at its end rather than one by one. Whatever it does, the rows and the search index
        after the block are those the writes one by one would make. Nests (an inner block
        joins the outer one)."""
        ...

    def event_ids(self, ids: Sequence[str]) -> set[str]:
        """Return which of these event ids this store's space already holds (any number of
        ids; an id of another space is not held)."""
        ...

    def close(self) -> None:
        """Release the connection; the store is not used after."""
        ...

    def resolve(self, kind: str, ident: str, hint: str = "") -> str:
        """The full id of the `kind` record (task, step, action, entry, message, session,
        ...) whose id is `ident` or starts with it. NotFoundError (with `hint`, what to run
        to find one) when none does, AmbiguousIdError naming the candidates when several do."""
        ...

    def list_events(
        self,
        *,
        task_id: str | None = None,
        after: int = 0,
        limit: int | None = None,
        types: tuple[str, ...] = (),
        as_stored: bool = False,
        newest: bool = False,
    ) -> list[Event]:
        """Events with seq above `after`, in seq (commit) order; of one task, of some types;
        with `newest`, the newest `limit` of them (a tail read, from the index's end), still
        oldest first. Their data is upgraded to the current shape unless `as_stored` (the
        data as journalled, which is what its hash covers: export and push use it)."""
        ...

    def stored_links(self, *, after: int = 0, limit: int = 1000) -> list[Link]:
        """Return up to `limit` of this space's events after seq `after`, in commit order,
        exactly as stored: their data as the JSON text the hash covers, never decoded (what
        moving a journal reads, a page at a time)."""
        ...

    def record_links(
        self, kind: str, record_id: str, *, after: int = 0, limit: int = 1000
    ) -> list[Link]:
        """Up to `limit` events after seq `after`, in seq order and exactly as stored, among
        which are all the events that wrote the record of `kind` (message, action, entry,
        turn) with id `record_id`, and for a turn those of the later turns of its session
        (their state change may carry what it said): a superset, whose data the caller reads
        (what a forget of the record reads, a page at a time). ValueError for another kind."""
        ...

    def purge(self) -> str | None:
        """After a forget has committed, clear what the store's files still hold of the data
        as it was, where the backend can (SQLite empties its write-ahead log); None when
        nothing is left, else one line saying what is and until when."""
        ...

    def count_events(self) -> int:
        """How many events the space's journal holds."""
        ...

    def list_redactions(
        self,
        *,
        task_id: str | None = None,
        session_id: str | None = None,
        kind: str | None = None,
        limit: int | None = None,
    ) -> list[Redaction]:
        """What redaction took out of the space's events (the `redactions` projection), the
        newest first, of one task, session or kind when given."""
        ...

    def raw_events(self, task_ids: Sequence[str]) -> list[Any]:
        """The journal rows of these tasks as stored (data as its text, so an event that
        no longer parses is still exported), in seq order; unknown ids add nothing."""
        ...

    def verify(self, *, all_spaces: bool = False) -> VerifyReport:
        """Walk the space's hash chain, replay its journal into a scratch store and compare
        every projection row and the search indexes; `all_spaces` checks every space."""
        ...

    def chain_heads(
        self, since: Mapping[str, ChainHead] | None = None, *, all_spaces: bool = False
    ) -> dict[str, ChainHead]:
        """The end of this space's journal (with `all_spaces`, of every space that has an
        event, this one always included), read in one snapshot: how many events, and the
        newest one's id and hash (ChainHead(0, None, None) for a space with none). A head
        in `since` that the space's journal still holds (the same event, the same hash)
        is counted on from, so only the events after it are counted."""
        ...

    def chain_hashes(self, positions: Mapping[str, Collection[int]]) -> dict[tuple[str, int], str]:
        """The hash of the event at each 1-based position (in seq order) of each space's
        journal, keyed by (space, position), for the positions the journal reaches. Spaces
        other than this one are read as `verify(all_spaces=True)` reads them."""
        ...


class TaskReads(Protocol):
    """Tasks and their plans, messages and changed files."""

    def get_task(self, task_id: str) -> Task:
        """One task with its current plan (steps in plan order). NotFoundError if none."""
        ...

    def get_task_status(self, task_id: str) -> TaskStatus:
        """Just a task's status (the write path's check). NotFoundError if no such task."""
        ...

    def get_task_steps(self, task_id: str) -> tuple[TaskStatus, tuple[str, ...]]:
        """A task's status and its current steps' ids in plan order, in one read (the check
        of a write that names a step). NotFoundError if no such task."""
        ...

    def outline_rows(
        self,
        kind: str,
        *,
        task_id: str | None = None,
        step_id: str | None = None,
        limit: int,
    ) -> list[tuple[Any, ...]]:
        """The newest `limit` rows of one kind of the outline (task, goal, step, answer,
        pattern, guardrail: portable_tasks.OUTLINE_SQL's columns), of one task or step."""
        ...

    def list_tasks(
        self, statuses: tuple[TaskStatus, ...] = (), *, include_archived: bool = False
    ) -> list[Task]:
        """Tasks with their plans, most recently updated first (ties by id); of these
        statuses if any; archived tasks only with `include_archived`. One read, whatever
        the number of tasks."""
        ...

    def get_plan(self, task_id: str, *, include_removed: bool = False) -> tuple[PlanItem, ...]:
        """A task's steps in plan order (empty for an unknown task); removed steps after
        the others when asked for."""
        ...

    def get_step(self, step_id: str) -> PlanItem:
        """One plan step by id. NotFoundError if none."""
        ...

    def list_messages(self, task_id: str, *, limit: int | None = None) -> list[Message]:
        """A task's messages, newest first."""
        ...

    def get_message(self, message_id: str) -> Message:
        """One task message by id. NotFoundError if none."""
        ...

    def count_messages(self, task_id: str) -> int:
        """How many messages a task has."""
        ...

    def last_message_at(self, task_id: str, type: str) -> str | None:
        """When the newest message of this type was added to a task; None if none was."""
        ...

    def last_event_at(self, task_id: str, type: str) -> str | None:
        """When the newest event of this type was journaled for a task; None if none was."""
        ...

    def file_changes(self, task_id: str, *, newest: int | None = 5) -> FileChanges:
        """How many files a task created and modified, and its `newest` changed paths
        (most recently changed first, ties by path)."""
        ...


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

    def search_entries(self, query: Query, filters: EntryFilter, *, limit: int) -> list[SearchHit]:
        """The best `limit` entries matching the query and the filters, best first (lower
        score is better; rare terms weigh more), each with a snippet with the matched
        words in [brackets]. A very common term may be ranked among its newest matches
        only (SQLite: 5,000), which keeps it fast at any size."""
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

    def search_outline(
        self,
        query: Query,
        kinds: Sequence[str],
        *,
        task_id: str | None = None,
        step_id: str | None = None,
        since: str | None = None,
        until: str | None = None,
        limit: int,
    ) -> list[tuple[str, float, tuple[Any, ...]]]:
        """The outline's records matching the query (task names, goals, plan steps with
        their issue and summary, final answers, patterns, guardrails: the `kinds` asked
        for), of one task or step, made within `since` (inclusive) and `until`
        (exclusive), by their search index: the best `limit`, best first, as (kind, score,
        row of portable_tasks.OUTLINE_SQL's columns), the score comparable across these
        kinds (bm25, lower is better)."""
        ...

    def search_records(
        self,
        query: Query,
        kinds: Sequence[str],
        *,
        task_id: str | None = None,
        step_id: str | None = None,
        session_ids: Sequence[str] | None = None,
        since: str | None = None,
        until: str | None = None,
        limit: int,
    ) -> list[RecordHit]:
        """Messages, commands (command line and output), trace decisions (action, and
        outcome, error, state, agent, context, artifacts) and conversation turns matching
        the query, of the `kinds` asked for (message, action, decision, turn), in a time range
        (`since` inclusive, `until` exclusive); each kind's best `limit`, ranked within its
        own kind with scores comparable across kinds (raw bm25, lower is better); the
        caller merges them. A `step_id` keeps the commands and decisions of that step
        (and no messages or turns); `session_ids` keeps the turns of those sessions (and
        nothing else)."""
        ...

    def records_between(
        self,
        kinds: Sequence[str],
        *,
        since: str,
        until: str,
        task_id: str | None = None,
        session_ids: Sequence[str] | None = None,
        limit: int,
    ) -> list[tuple[str, str]]:
        """The (kind, id) of the messages, commands, trace decisions and turns of the `kinds`
        asked for made in a time range (`since` inclusive, `until` exclusive), whatever
        their words; newest first, at most `limit` of each kind. `session_ids` keeps the
        turns of those sessions (and nothing else)."""
        ...

    def fts_check(self) -> str | None:
        """Check the archive's search index against the entries; None when it is sound,
        else what is wrong (a backend without a separate index returns None)."""
        ...


class LedgerReads(Protocol):
    """The ledger: actions and their logs, commands, the trace, patterns and guardrails."""

    def get_action(self, action_id: str) -> Action:
        """One action by id, its output as recorded (text stays text, bytes stay bytes).
        NotFoundError if none."""
        ...

    def action_commands(
        self, action_ids: Sequence[str], *, failed: bool = False
    ) -> dict[str, str | None]:
        """The command of each action named that exists (that failed or timed out, with
        `failed`), by id, in one read."""
        ...

    def list_actions(
        self, task_id: str, *, plan_item_id: str | None = None, limit: int | None = None
    ) -> list[Action]:
        """A task's actions (of one step if given), newest first."""
        ...

    def recent_actions(self, task_id: str, *, limit: int) -> list[Action]:
        """A task's newest actions, newest first, without their output (stdout, stderr,
        input and output None): cheap whatever the output's size."""
        ...

    def recent_attempts(self, task_id: str, *, limit: int) -> list[Attempt]:
        """A task's newest actions, newest first, as stuck detection reads them: the few
        fields of `Attempt` only."""
        ...

    def list_action_logs(self, action_id: str) -> list[ActionLog]:
        """An action's log lines, oldest first."""
        ...

    def commands(
        self,
        *,
        task_id: str | None = None,
        plan_item_id: str | None = None,
        statuses: tuple[ActionStatus, ...] = (),
        exit_code: int | None = None,
        contains: tuple[str, ...] = (),
        limit: int | None = None,
    ) -> list[Action]:
        """Actions with a command line, newest first, filtered exactly; `contains`: the
        command holds any of these texts, ignoring ASCII case (no wildcards)."""
        ...

    def repeated_failures(
        self, *, task_id: str | None = None, min_failures: int = 2, limit: int = 50
    ) -> list[RepeatedFailure]:
        """Command lines (exact text) that failed at least `min_failures` times, most
        failures first, then most recently failed."""
        ...

    def failed_actions_matching(self, query: Query, *, limit: int = 50) -> list[Action]:
        """Failed commands whose command line or output matches the query, newest first
        (a candidate set: the caller confirms the text is there verbatim)."""
        ...

    def actions_with_fingerprint(self, key: str, *, limit: int = 50) -> list[Action]:
        """Failed commands whose error has this fingerprint, newest first."""
        ...

    def open_waits(self, task_id: str) -> int:
        """How many waits of a task are open: smart waits still watching, and wait actions
        still started."""
        ...

    def get_trace_decision(self, decision_id: str) -> TraceDecision:
        """One decision of the trace by id. NotFoundError if none."""
        ...

    def trace(
        self, task_id: str
    ) -> tuple[list[TraceDecision], list[TraceValidation], list[Action]]:
        """A task's trace, each list oldest first: its decisions, their validations, and
        its tool calls (actions made by a decision or of type tool)."""
        ...

    def get_pattern(self, pattern_id: str) -> Pattern:
        """One pattern of semantic memory by id. NotFoundError if none."""
        ...

    def list_patterns(
        self, *, domain: str | None = None, include_deprecated: bool = False
    ) -> list[Pattern]:
        """Patterns, oldest first; of one domain; deprecated ones only when asked for."""
        ...

    def get_guardrail(self, guardrail_id: str) -> Guardrail:
        """One guardrail by id. NotFoundError if none."""
        ...

    def list_guardrails(self, *, enabled_only: bool = False) -> list[Guardrail]:
        """Guardrails, oldest first; only enabled ones when asked for."""
        ...


class ConversationReads(Protocol):
    """The conversation archive: sessions and their verbatim turns."""

    def get_session(self, session_id: str) -> Session:
        """One session by its full id. NotFoundError if none."""
        ...

    def find_session(self, ident: str) -> Session | None:
        """The session whose id, else whose key, is exactly `ident`; None if none."""
        ...

    def session_by_key(self, key: str) -> Session | None:
        """The session with this key (keys are unique in a space); None if none."""
        ...

    def session_to_append(self, ident: str) -> Session | None:
        """As find_session, for the write that appends to it: its `state` may be shared
        with the store's own cache, so the caller must never change it (or hand it out)."""
        ...

    def list_sessions(
        self, *, active_only: bool = False, limit: int | None = None, offset: int = 0
    ) -> list[Session]:
        """Sessions, most recently active first (ties: the newest made first); `offset`
        skips that many first (given only with a limit)."""
        ...

    def get_turns(
        self,
        session_id: str,
        *,
        first: int | None = None,
        last: int | None = None,
        include_hidden: bool = True,
        newest: int | None = None,
    ) -> list[Turn]:
        """Turns in number order: numbers `first`..`last` (inclusive), or the `newest` N;
        an unknown session has none."""
        ...

    def turns_numbered(self, session_id: str, numbers: list[int]) -> list[Turn]:
        """These turns of a session, in number order; numbers it lacks are skipped."""
        ...

    def count_turns(self, session_id: str, *, before: int | None = None) -> int:
        """Visible (not hidden) turns, all or those numbered below `before`; 0 for an
        unknown session."""
        ...

    def last_user_turn(self, session_id: str, *, at_most: int) -> int | None:
        """The number of the newest visible user turn numbered `at_most` or below; None."""
        ...

    def turns_by_id(self, ids: list[str]) -> list[Turn]:
        """Turns by id, ordered by session then number; unknown ids are skipped."""
        ...

    def tool_turns(self, session_id: str, tool_name: str, *, limit: int) -> list[Turn]:
        """The results of one tool's calls in a session, newest first."""
        ...

    def turn_stats(self, session_id: str) -> dict[str, dict[str, int]]:
        """{"roles": turns per role, "tools": tool results per tool name}."""
        ...

    def search_turns(
        self, session_id: str | None, query: Query, *, limit: int
    ) -> list[tuple[Turn, float, str]]:
        """The best `limit` turns matching the query (of one session, or of all), as
        (turn, score, snippet), best first (lower score is better)."""
        ...


class JobReads(Protocol):
    """Background jobs, model calls and their cost, running summaries."""

    def get_job(self, job_id: str) -> Job:
        """One job by id. NotFoundError if none."""
        ...

    def next_job(self, now: str) -> Job | None:
        """The oldest job to do at `now`: pending, or running with a lease that ran out;
        None when there is none."""
        ...

    def list_jobs(
        self, *, statuses: tuple[JobStatus, ...] = (), task_id: str | None = None, limit: int = 50
    ) -> list[Job]:
        """Jobs, newest first; of these statuses, of one task."""
        ...

    def usage_totals(
        self, *, task_id: str | None = None, since: str | None = None
    ) -> tuple[int, int]:
        """(calls, tokens) of model calls: of one task, or since a time in the space."""
        ...

    def model_calls(
        self, *, task_id: str | None = None, since: str | None = None
    ) -> list[ModelCall]:
        """Model calls, oldest first; of one task, since a time."""
        ...

    def latest_summary(self, task_id: str) -> RunningSummary | None:
        """A task's newest running summary; None if it has none."""
        ...


class LifecycleReads(Protocol):
    """Smart waits, the poller's schedule, archived tasks."""

    def get_wait(self, wait_id: str) -> Wait:
        """One wait by id. NotFoundError if none."""
        ...

    def list_waits(
        self,
        *,
        task_id: str | None = None,
        statuses: tuple[WaitStatus, ...] = (),
        limit: int | None = None,
    ) -> list[Wait]:
        """Waits, newest first (ties by id); of one task, of these statuses."""
        ...

    def has_watching(self) -> bool:
        """Whether any wait of the space watches something a poller must look at."""
        ...

    def waiting_tasks(self) -> set[str]:
        """Ids of tasks with an open wait (a watching smart wait or a started wait action)."""
        ...

    def open_wait_actions(self, task_id: str, *, limit: int = 5) -> list[Action]:
        """A task's wait actions still started, newest first, however old."""
        ...

    def schedule(self, key: str) -> tuple[str, int, str | None] | None:
        """(when `key` last ran, how many times, its note); None if it never ran."""
        ...

    def mark_schedule(self, key: str, at: str, note: str | None = None) -> None:
        """Record that `key` ran at `at`, in the current write transaction. Bookkeeping, not
        journaled: the one write outside the journal (a replay does not need it)."""
        ...

    def archived_task_ids(self, month: str | None = None) -> list[tuple[str, str | None]]:
        """(task id, archived_at) of archived tasks, newest archived first (ties by id); of
        one month (YYYY-MM) if given."""
        ...


class RecordReads(Protocol):
    """The complete task record and what it is derived from."""

    def task_record_row(self, task_id: str) -> dict[str, Any] | None:
        """A task's record row (entities decoded); None if nothing was ever set."""
        ...

    def step_record_rows(self, task_id: str) -> list[dict[str, Any]]:
        """The record rows of a task's steps (artifacts decoded), in no set order."""
        ...

    def task_head(self, task_id: str) -> int:
        """The seq of a task's newest event (0 if none): a derived value is reused until it
        moves."""
        ...

    def newest_trace_decisions(self, task_id: str, limit: int) -> list[TraceDecision]:
        """A task's newest `limit` trace decisions, newest first."""
        ...

    def entity_sources(self, task_id: str, *, limit: int) -> tuple[list[str], list[str], list[str]]:
        """The newest `limit` command lines, texts (messages, then entry summaries) and
        changed paths of a task, each newest first."""
        ...


class VectorReads(Protocol):
    """The vector index: which records need a vector of a model, and the vectors stored.

    Kinds are those of `models.VECTOR_KINDS`. A record's text as embedded is made by the
    store (the same on every backend): an entry's summary, detail, tags and resolution; a
    message's or a turn's content; a command's summary or command line with the tails of
    its stderr and stdout; a trace decision's action, outcome and error."""

    def pending_vectors(
        self, kind: str, model: str, *, after: str = "", limit: int
    ) -> list[PendingText]:
        """The first `limit` records of `kind` (by id, ids above `after`: a page's last id)
        that have no vector of `model`, or whose record changed (its updated_at) since the
        vector was made; each with its text and the content hash of the vector it has."""
        ...

    def vector_counts(self, model: str) -> dict[str, tuple[int, int]]:
        """For every kind: (records with a current vector of `model`, all its records)."""
        ...

    def newest_vector(self, model: str) -> int:
        """The highest seq among the space's vectors of `model`, or 0: a cache that has
        loaded up to it has every row (rows are only ever replaced by newer ones, except
        by `drop_vectors`)."""
        ...

    def journal_head(self) -> int:
        """The highest event seq of the space, or 0 (the journal's end, cheap)."""
        ...

    def vector_count(self, model: str, *, after: int = 0) -> int:
        """How many vectors of `model` the space holds with a seq above `after`."""
        ...

    def vectors_after(
        self, model: str, after: int, *, limit: int | None = None
    ) -> list[StoredVector]:
        """Vectors of `model` with a seq above `after`, in seq order. A seq is never reused
        and grows in commit order within a space; a record embedded again gets a new one."""
        ...

    def vector_search_native(self) -> bool:
        """Whether the store searches its vectors itself (`nearest_vectors`): a PostgreSQL
        store whose server has pgvector. Otherwise `Memory.nearest` searches in process."""
        ...

    def nearest_vectors(
        self,
        model: str,
        query: Sequence[float],
        *,
        kinds: Sequence[str],
        task_id: str | None = None,
        step_id: str | None = None,
        session_ids: Sequence[str] | None = None,
        since: str | None = None,
        until: str | None = None,
        limit: int,
    ) -> list[tuple[str, str, float]]:
        """The `limit` vectors of `model` nearest to `query` (a unit vector) by cosine, as
        (kind, ref_id, cosine), best first; filters applied before the best are taken
        (`since` inclusive, `until` exclusive, store timestamps); only cosines above 0.
        Only where `vector_search_native()` is true (NotImplementedError elsewhere)."""
        ...


class VectorWrites(Protocol):
    """Writes of the vector index, inside `transaction(write=True)` (RuntimeError outside).

    Not journaled, unlike every other write: vectors are derived from records the journal
    already holds, like the full-text index, and are rebuilt from them at any time (a new
    model, an import, `clew index rebuild`). Journaling them would put megabytes of floats
    into every export and push and make replay depend on a model. So no event is written,
    `verify` does not compare them, and export, import and push do not carry them."""

    def put_vectors(self, model: str, vectors: Sequence[NewVector]) -> None:
        """Store vectors of `model`, each replacing its record's previous one (the new row
        gets a new seq)."""
        ...

    def touch_vectors(self, model: str, kind: str, marks: Sequence[tuple[str, str]]) -> None:
        """Mark these vectors of `model` current at a new source_at ((ref_id, source_at)
        pairs) when the record changed but its text did not."""
        ...

    def drop_vectors(self, model: str) -> int:
        """Delete every vector of `model` in the space; return how many there were."""
        ...


class KeyStore(Protocol):
    """The HTTP server's keys and request log: server administration, not task memory.

    Not journaled and not scoped to the store's space: a request's key is found by its
    prefix before its space is known, an admin lists and revokes every space's keys, and an
    export or push of a space must never carry credentials. `verify` does not compare them.
    Writes run inside `transaction(write=True)` (RuntimeError outside)."""

    def put_key(self, key: ApiKey, hash: str) -> None:
        """Store a new key with the digest of its secret."""
        ...

    def find_key(self, prefix: str) -> tuple[ApiKey, str] | None:
        """The key of `prefix` (of any space) and its secret's digest, or None."""
        ...

    def list_keys(self, space: str | None = None) -> list[ApiKey]:
        """The keys of `space` (None: every space), oldest first, revoked ones included."""
        ...

    def any_key(self) -> bool:
        """Whether the store holds a key that is not revoked, of any space."""
        ...

    def revoke_key(self, prefix: str, at: str) -> None:
        """Mark the key of `prefix` revoked at `at` (a revoked key stays revoked)."""
        ...

    def touch_key(self, prefix: str, at: str) -> None:
        """Record that the key of `prefix` was last used at `at`."""
        ...

    def log_requests(self, lines: Sequence[RequestLine]) -> None:
        """Append lines to the request log; a line whose id the space's log holds already is
        not added again."""
        ...

    def list_requests(
        self, space: str | None = None, *, limit: int | None = 100
    ) -> list[RequestLine]:
        """The newest `limit` requests logged of `space` (None: every space), newest first."""
        ...

    def prune_requests(self, before: str) -> int:
        """Delete the logged requests made before `before` (a store timestamp), of every
        space; return how many."""
        ...


class RoleAdmin(Protocol):
    """Database roles: what each kind of role may do to the store's tables (PostgreSQL's
    privileges and row-level security; store/pg_roles.py). A SQLite file has no roles:
    whoever can open it may do anything to it, so there each raises ValidationError."""

    def grant_role(self, role: str, kind: str | None, *, apply: bool) -> list[str]:
        """Give the database role `role` exactly what `kind` (server, member, reader; None:
        nothing) may do to every table of clew's, in one transaction; return the statements.
        With apply=False, only make and return them. ValidationError for a role that does
        not exist, owns the tables, or would keep more than `kind` (superuser, BYPASSRLS,
        inherited rights); StoreError when this connection's role may not grant."""
        ...

    def database_roles(self) -> list[DatabaseRole]:
        """Every role that can reach the store's tables, with the kind its rights match."""
        ...


class ImportLog(Protocol):
    """The store's own record of who imported or pushed which events of its space: outside
    the journal (an event's correlation id is a claim of where it came from; who brought it
    here is the store's to say), written in the write transaction that adopts the events."""

    def record_import(
        self, first_seq: int, last_seq: int, events: int, door: str, key_prefix: str | None,
        at: str,
    ) -> None:  # fmt: skip
        """Inside the write transaction that adopted events `first_seq`..`last_seq`: record
        that `key_prefix` (None: the host's user, whom the store names itself) brought them
        through `door` at `at`."""
        ...

    def imports_between(self, first_seq: int, last_seq: int) -> list[ImportRecord]:
        """The space's records of imports that added any event of seq `first_seq`..
        `last_seq`, oldest first."""
        ...


class Store(
    Journal,
    TaskReads,
    ArchiveReads,
    LedgerReads,
    ConversationReads,
    JobReads,
    LifecycleReads,
    RecordReads,
    VectorReads,
    VectorWrites,
    KeyStore,
    RoleAdmin,
    ImportLog,
    Protocol,
):
    """Everything the facade needs of a backend: the journal core and every subject's reads."""
