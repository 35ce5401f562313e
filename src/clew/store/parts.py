"""The parts a store is made of, and the contract's flat methods each part answers.

Both stores (sqlite/store.py, postgres/store.py) are composed, not mixed: each builds its parts in
`__init__`, each part handed the store as what it reads and writes through (rows.StoreHost:
its reads, write connection, transactions, space and dialect), and takes `Parts` as its one
base, which is nothing but this table: each contract method a `forward` to the part the store
holds under that name. The portable parts are the same on both backends (`_hold_portable`
builds them); the rest are each backend's own, named in its `__init__`: the text and vector
indexes, the journal's heads, verify, the write path's backend side and the session a turn
is appended to.
"""

from __future__ import annotations

from clew.core.forwarding import forward
from clew.store import contract as c
from clew.store.portable.archive import ArchiveReads
from clew.store.portable.conversations import ConversationReads
from clew.store.portable.journal import JournalBackend, JournalHost, JournalReads, JournalWrites
from clew.store.portable.keys import KeyStore
from clew.store.portable.record import RecordReads
from clew.store.portable.search import TextIndex
from clew.store.portable.tasks import TaskReads
from clew.store.portable.trace import TraceReads
from clew.store.portable.utility import UtilityReads
from clew.store.portable.vectors import VectorStore
from clew.store.portable.waits import WaitReads


class Parts:
    """The contract's methods of a store, each forwarded to the part that answers it."""

    _events: JournalReads
    _writes: JournalWrites
    _tasks: TaskReads
    _archive: ArchiveReads
    _trace: TraceReads
    _conversations: ConversationReads
    _utility: UtilityReads
    _waits: WaitReads
    _record: RecordReads
    _embeddings: VectorStore
    _keys: KeyStore

    def _hold_portable(self, store: JournalHost, backend: JournalBackend) -> None:
        """Build the parts both backends share, each reading through `store` (this store);
        the journal's write path is handed the backend's side of it (`backend`)."""
        self._events = JournalReads(store)
        self._tasks = TaskReads(store)
        self._archive = ArchiveReads(store)
        self._trace = TraceReads(store)
        self._conversations = ConversationReads(store)
        self._utility = UtilityReads(store)
        self._waits = WaitReads(store)
        self._record = RecordReads(store)
        self._embeddings = VectorStore(store)
        self._keys = KeyStore(store)
        self._writes = JournalWrites(store, backend, self._waits.mark_schedule)

    # -- the journal's reads (portable_journal.JournalReads)
    list_events = forward("_events", c.Journal.list_events)
    stored_links = forward("_events", c.Journal.stored_links)
    record_links = forward("_events", c.Journal.record_links)
    list_redactions = forward("_events", c.Journal.list_redactions)
    count_events = forward("_events", c.Journal.count_events)
    event_ids = forward("_events", c.Journal.event_ids)

    # -- the journal's write path (portable_journal.JournalWrites)
    append = forward("_writes", c.Journal.append)
    adopt = forward("_writes", c.Journal.adopt)

    # -- where each space's journal ends (sqlite_heads.HeadReads, pg_heads.PgHeadReads)
    chain_heads = forward("_heads", c.Journal.chain_heads)
    chain_hashes = forward("_heads", c.Journal.chain_hashes)

    # -- verify and the FTS5 check, each backend's own
    #    (sqlite_verify.Verification, postgres.PgVerification)
    verify = forward("_verification", c.Journal.verify)
    fts_check = forward("_verification", c.ArchiveReads.fts_check)

    # -- tasks, plans, steps, messages, actions (portable_tasks.TaskReads)
    outline_rows = forward("_tasks", c.TaskReads.outline_rows)
    get_plan = forward("_tasks", c.TaskReads.get_plan)
    get_task = forward("_tasks", c.TaskReads.get_task)
    get_task_status = forward("_tasks", c.TaskReads.get_task_status)
    get_task_steps = forward("_tasks", c.TaskReads.get_task_steps)
    list_tasks = forward("_tasks", c.TaskReads.list_tasks)
    get_step = forward("_tasks", c.TaskReads.get_step)
    get_action = forward("_tasks", c.LedgerReads.get_action)
    action_commands = forward("_tasks", c.LedgerReads.action_commands)
    list_actions = forward("_tasks", c.LedgerReads.list_actions)
    linked_actions = forward("_tasks", c.ArchiveReads.linked_actions)
    list_action_logs = forward("_tasks", c.LedgerReads.list_action_logs)
    list_messages = forward("_tasks", c.TaskReads.list_messages)
    get_message = forward("_tasks", c.TaskReads.get_message)
    file_changes = forward("_tasks", c.TaskReads.file_changes)

    # -- the archive's entries (portable_archive.ArchiveReads)
    get_entry = forward("_archive", c.ArchiveReads.get_entry)
    list_entries = forward("_archive", c.ArchiveReads.list_entries)
    relevant_entries = forward("_archive", c.ArchiveReads.relevant_entries)
    newest_entries = forward("_archive", c.ArchiveReads.newest_entries)
    count_entries = forward("_archive", c.ArchiveReads.count_entries)
    replacements = forward("_archive", c.ArchiveReads.replacements)
    entries_with_fingerprint = forward("_archive", c.ArchiveReads.entries_with_fingerprint)
    fixes_for = forward("_archive", c.ArchiveReads.fixes_for)

    # -- commands, the trace, patterns and guardrails (portable_trace.TraceReads)
    commands = forward("_trace", c.LedgerReads.commands)
    repeated_failures = forward("_trace", c.LedgerReads.repeated_failures)
    recent_actions = forward("_trace", c.LedgerReads.recent_actions)
    recent_attempts = forward("_trace", c.LedgerReads.recent_attempts)
    open_waits = forward("_trace", c.LedgerReads.open_waits)
    last_message_at = forward("_trace", c.TaskReads.last_message_at)
    last_event_at = forward("_trace", c.TaskReads.last_event_at)
    actions_with_fingerprint = forward("_trace", c.LedgerReads.actions_with_fingerprint)
    get_trace_decision = forward("_trace", c.LedgerReads.get_trace_decision)
    trace = forward("_trace", c.LedgerReads.trace)
    get_pattern = forward("_trace", c.LedgerReads.get_pattern)
    list_patterns = forward("_trace", c.LedgerReads.list_patterns)
    get_guardrail = forward("_trace", c.LedgerReads.get_guardrail)
    list_guardrails = forward("_trace", c.LedgerReads.list_guardrails)

    # -- sessions and turns (portable_conversations.ConversationReads)
    get_session = forward("_conversations", c.ConversationReads.get_session)
    find_session = forward("_conversations", c.ConversationReads.find_session)
    session_by_key = forward("_conversations", c.ConversationReads.session_by_key)
    list_sessions = forward("_conversations", c.ConversationReads.list_sessions)
    get_turns = forward("_conversations", c.ConversationReads.get_turns)
    turns_numbered = forward("_conversations", c.ConversationReads.turns_numbered)
    count_turns = forward("_conversations", c.ConversationReads.count_turns)
    last_user_turn = forward("_conversations", c.ConversationReads.last_user_turn)
    turns_by_id = forward("_conversations", c.ConversationReads.turns_by_id)
    tool_turns = forward("_conversations", c.ConversationReads.tool_turns)
    turn_stats = forward("_conversations", c.ConversationReads.turn_stats)

    # -- the session a turn is appended to, each backend's own
    #    (sqlite_writes.SQLiteWrites; PostgreSQL reads it: its conversations part)
    session_to_append = forward("_appending", c.ConversationReads.session_to_append)

    # -- jobs, model use, summaries (portable_utility.UtilityReads)
    get_job = forward("_utility", c.JobReads.get_job)
    next_job = forward("_utility", c.JobReads.next_job)
    list_jobs = forward("_utility", c.JobReads.list_jobs)
    count_messages = forward("_utility", c.TaskReads.count_messages)
    usage_totals = forward("_utility", c.JobReads.usage_totals)
    model_calls = forward("_utility", c.JobReads.model_calls)
    latest_summary = forward("_utility", c.JobReads.latest_summary)

    # -- waits, schedules, archived tasks (portable_waits.WaitReads)
    get_wait = forward("_waits", c.LifecycleReads.get_wait)
    list_waits = forward("_waits", c.LifecycleReads.list_waits)
    has_watching = forward("_waits", c.LifecycleReads.has_watching)
    waiting_tasks = forward("_waits", c.LifecycleReads.waiting_tasks)
    open_wait_actions = forward("_waits", c.LifecycleReads.open_wait_actions)
    schedule = forward("_waits", c.LifecycleReads.schedule)
    mark_schedule = forward("_waits", c.LifecycleReads.mark_schedule)
    archived_task_ids = forward("_waits", c.LifecycleReads.archived_task_ids)
    raw_events = forward("_waits", c.Journal.raw_events)

    # -- the task record's rows (portable_record.RecordReads)
    task_record_row = forward("_record", c.RecordReads.task_record_row)
    task_head = forward("_record", c.RecordReads.task_head)
    newest_trace_decisions = forward("_record", c.RecordReads.newest_trace_decisions)
    step_record_rows = forward("_record", c.RecordReads.step_record_rows)
    entity_sources = forward("_record", c.RecordReads.entity_sources)

    # -- the vector index's rows (portable_vectors.VectorStore)
    pending_vectors = forward("_embeddings", c.VectorReads.pending_vectors)
    vector_counts = forward("_embeddings", c.VectorReads.vector_counts)
    newest_vector = forward("_embeddings", c.VectorReads.newest_vector)
    journal_head = forward("_embeddings", c.VectorReads.journal_head)
    vector_count = forward("_embeddings", c.VectorReads.vector_count)
    vectors_after = forward("_embeddings", c.VectorReads.vectors_after)
    touch_vectors = forward("_embeddings", c.VectorWrites.touch_vectors)
    drop_vectors = forward("_embeddings", c.VectorWrites.drop_vectors)

    # -- the vector index (portable_vectors.RowVectors, pg_vectors.PgVectors)
    vector_search_native = forward("_vectors", c.VectorIndex.vector_search_native)
    nearest_vectors = forward("_vectors", c.VectorIndex.nearest_vectors)
    put_vectors = forward("_vectors", c.VectorIndex.put_vectors)

    # -- the text index (sqlite_search.Fts5Index, pg_search.TsIndex)
    search_entries = forward("_text", c.TextSearch.search_entries)
    search_turns = forward("_text", c.TextSearch.search_turns)
    search_records = forward("_text", c.TextSearch.search_records)
    records_between = forward("_text", c.TextSearch.records_between)
    search_outline = forward("_text", c.TextSearch.search_outline)
    failed_actions_matching = forward("_text", c.TextSearch.failed_actions_matching)
    outline_check = forward("_text", TextIndex.outline_check)
    records_check = forward("_text", TextIndex.records_check)

    # -- the server's keys and request log (portable_keys.KeyStore)
    put_key = forward("_keys", c.KeyStore.put_key)
    find_key = forward("_keys", c.KeyStore.find_key)
    list_keys = forward("_keys", c.KeyStore.list_keys)
    any_key = forward("_keys", c.KeyStore.any_key)
    revoke_key = forward("_keys", c.KeyStore.revoke_key)
    touch_key = forward("_keys", c.KeyStore.touch_key)
    log_requests = forward("_keys", c.KeyStore.log_requests)
    list_requests = forward("_keys", c.KeyStore.list_requests)
    prune_requests = forward("_keys", c.KeyStore.prune_requests)

    # -- the record of imports (portable_imports.Imports)
    record_import = forward("_imports", c.ImportLog.record_import)
    imports_between = forward("_imports", c.ImportLog.imports_between)
