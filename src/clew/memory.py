"""The Memory facade: every behaviour of clew, over one store; here, its composition.

How a call writes (validate, one write transaction, journal events) is in `kernel.py`.
"""

from __future__ import annotations

from clew.access.keys import Keys
from clew.access.roles import Roles
from clew.archive.entries import Archive
from clew.archive.semantic import Semantic
from clew.archive.trace import Ledger
from clew.conversations.assembly import Assembly
from clew.conversations.capture import Capture
from clew.conversations.plan_capture import PlanCapture
from clew.conversations.prompting import Conversations
from clew.conversations.recollection import Recollection
from clew.conversations.sessions import Sessions
from clew.core.clock import Clock, utcnow
from clew.core.forwarding import forward
from clew.jobs.governor import Governor
from clew.jobs.outbox import Jobs
from clew.jobs.upkeep import Upkeep
from clew.jobs.utility import Utility
from clew.journal.audit import Audit
from clew.journal.checkpoints import Checkpoints
from clew.journal.forgetting import Forgetting
from clew.journal.transfer import Transfer
from clew.kernel import Kernel, Settings
from clew.search.retrieval import Retrieval
from clew.search.vectors import Vectors
from clew.state.working import Working
from clew.store import Store
from clew.tasks.taskrecord import TaskRecords
from clew.tasks.tracker import Tracker
from clew.tasks.waits import Waits
from clew.tasks.watch import Watch


class Memory(Kernel):
    """A task memory over one store, in one space. Open it with `clew.open()`.

    The methods live in services by subject: tasks, plans and messages in
    `tracker.py`; the journal read back and verified in `audit.py`; archive
    entries, search and error fingerprints in `archive.py`; the command ledger and the
    episodic trace in `trace.py`; patterns and guardrails in `semantic.py`; the layer-1
    state and "where was I?" in `working.py`; queued jobs in `jobs.py` (the worker in
    `worker.py`), the model's caps in `governor.py` and its extraction and summaries in
    `utility.py`; sessions and turns in `sessions.py`, recall in `recollection.py` and
    a session's context assembly and resume in `conversations.py`;
    smart waits in `waits.py`; maintenance and archived tasks by month in `upkeep.py`;
    `assemble` (a session's prompt, or a task's context without one) in `assembly.py`;
    export, import and push of the journal in `transfer.py`;
    checkpoints of the journal's heads, written and checked, in `checkpoints.py`;
    the HTTP server's keys and request log in `keys.py`;
    a PostgreSQL store's database roles in `roles.py`;
    the vector index (embeddings, `nearest`) in `vectors.py`;
    search over everything (the archive's words and the vectors' meaning) in `retrieval.py`;
    the complete task record (answer, outcome, phases, entities...) in `taskrecord.py`;
    the shared plumbing (transactions, ids, correlation) in `kernel.py`.
    """

    def __init__(
        self, store: Store, *, clock: Clock = utcnow, settings: Settings | None = None
    ) -> None:
        super().__init__(store, clock=clock, settings=settings)
        # Each service is handed the kernel and the services it uses, so the order here is
        # the dependency order. tools/forwards.py writes the forwarded calls below from it.
        with self._composed():  # the registries built once, when all are adopted
            self.keys = Keys(self)
            self.roles = Roles(self)
            self.checkpoints = Checkpoints(self)
            self.archive = Archive(self)
            self.vectors = Vectors(self)
            self.retrieval = Retrieval(self, self.archive, self.vectors)
            self.ledger = Ledger(self)
            self.governor = Governor(self)
            self.semantic = Semantic(self)
            self.sessions = Sessions(self)
            self.recollection = Recollection(self, self.sessions, self.archive, self.retrieval)
            self.task_records = TaskRecords(self)
            self.watch = Watch(self)
            self.waits = Waits(self)
            self.working = Working(self, self.task_records, self.watch)
            self.tracker = Tracker(self, self.task_records, self.watch)
            self.plan_capture = PlanCapture(self, self.sessions, self.tracker)
            self.capture = Capture(self, self.sessions, self.plan_capture)
            self.audit = Audit(self, self.sessions, self.checkpoints)
            self.forgetting = Forgetting(self, self.working)
            self.transfer = Transfer(self, self.forgetting)
            self.jobs = Jobs(self, self.governor, self.task_records)
            self.utility = Utility(
                self, self.jobs, self.working, self.archive, self.retrieval, self.governor
            )
            self.upkeep = Upkeep(self, self.jobs, self.semantic, self.waits, self.watch)
            self.conversations = Conversations(self, self.sessions, self.working)
            self.assembly = Assembly(self, self.conversations, self.retrieval)

    # -- forwarded calls: written by tools/forwards.py, do not edit by hand --
    create_key = forward("keys", Keys.create_key)
    list_keys = forward("keys", Keys.list_keys)
    revoke_key = forward("keys", Keys.revoke_key)
    has_keys = forward("keys", Keys.has_keys)
    authenticate = forward("keys", Keys.authenticate)
    log_requests = forward("keys", Keys.log_requests)
    list_requests = forward("keys", Keys.list_requests)
    prune_requests = forward("keys", Keys.prune_requests)
    grant_role = forward("roles", Roles.grant_role)
    revoke_role = forward("roles", Roles.revoke_role)
    database_roles = forward("roles", Roles.database_roles)
    checkpoint = forward("checkpoints", Checkpoints.checkpoint)
    check_checkpoints = forward("checkpoints", Checkpoints.check_checkpoints)
    add_entry = forward("archive", Archive.add_entry)
    add_decision = forward("archive", Archive.add_decision)
    add_error = forward("archive", Archive.add_error)
    add_finding = forward("archive", Archive.add_finding)
    add_constraint = forward("archive", Archive.add_constraint)
    add_question = forward("archive", Archive.add_question)
    resolve = forward("archive", Archive.resolve)
    keep_open = forward("archive", Archive.keep_open)
    record_fix = forward("archive", Archive.record_fix)
    get_entry = forward("archive", Archive.get_entry)
    list_entries = forward("archive", Archive.list_entries)
    query_relevant = forward("archive", Archive.query_relevant)
    search = forward("archive", Archive.search)
    index_status = forward("vectors", Vectors.index_status)
    update_index = forward("vectors", Vectors.update_index)
    rebuild_index = forward("vectors", Vectors.rebuild_index)
    nearest = forward("vectors", Vectors.nearest)
    prepare_nearest = forward("vectors", Vectors.prepare_nearest)
    ann_status = forward("vectors", Vectors.ann_status)
    search_all = forward("retrieval", Retrieval.search_all)
    seen_before = forward("retrieval", Retrieval.seen_before)
    record_action = forward("ledger", Ledger.record_action)
    finish_action = forward("ledger", Ledger.finish_action)
    get_action = forward("ledger", Ledger.get_action)
    list_actions = forward("ledger", Ledger.list_actions)
    log_action = forward("ledger", Ledger.log_action)
    list_action_logs = forward("ledger", Ledger.list_action_logs)
    trace_decision = forward("ledger", Ledger.trace_decision)
    trace_validation = forward("ledger", Ledger.trace_validation)
    record_tool_call = forward("ledger", Ledger.record_tool_call)
    trace = forward("ledger", Ledger.trace)
    commands = forward("ledger", Ledger.commands)
    last_green = forward("ledger", Ledger.last_green)
    repeated_failures = forward("ledger", Ledger.repeated_failures)
    history = forward("ledger", Ledger.history)
    usage = forward("governor", Governor.usage)
    add_pattern = forward("semantic", Semantic.add_pattern)
    observe_pattern = forward("semantic", Semantic.observe_pattern)
    list_patterns = forward("semantic", Semantic.list_patterns)
    prune_patterns = forward("semantic", Semantic.prune_patterns)
    add_guardrail = forward("semantic", Semantic.add_guardrail)
    add_default_guardrails = forward("semantic", Semantic.add_default_guardrails)
    set_guardrail = forward("semantic", Semantic.set_guardrail)
    list_guardrails = forward("semantic", Semantic.list_guardrails)
    check_command = forward("semantic", Semantic.check_command)
    guardrails_text = forward("semantic", Semantic.guardrails_text)
    start_session = forward("sessions", Sessions.start_session)
    open_session = forward("sessions", Sessions.open_session)
    get_session = forward("sessions", Sessions.get_session)
    list_sessions = forward("sessions", Sessions.list_sessions)
    update_session = forward("sessions", Sessions.update_session)
    end_session = forward("sessions", Sessions.end_session)
    append_turn = forward("sessions", Sessions.append_turn)
    append_turns = forward("sessions", Sessions.append_turns)
    list_turns = forward("sessions", Sessions.list_turns)
    pop_turn = forward("sessions", Sessions.pop_turn)
    clear_session = forward("sessions", Sessions.clear_session)
    session_state = forward("sessions", Sessions.session_state)
    import_session = forward("sessions", Sessions.import_session)
    export_session = forward("sessions", Sessions.export_session)
    write_session = forward("sessions", Sessions.write_session)
    recall = forward("recollection", Recollection.recall)
    recall_hint = forward("recollection", Recollection.recall_hint)
    set_task_record = forward("task_records", TaskRecords.set_task_record)
    set_step_record = forward("task_records", TaskRecords.set_step_record)
    task_record = forward("task_records", TaskRecords.task_record)
    waiting = forward("watch", Watch.waiting)
    stuck = forward("watch", Watch.stuck)
    check_stuck = forward("watch", Watch.check_stuck)
    add_wait = forward("waits", Waits.add_wait)
    get_wait = forward("waits", Waits.get_wait)
    list_waits = forward("waits", Waits.list_waits)
    check_waits = forward("waits", Waits.check_waits)
    resolve_wait = forward("waits", Waits.resolve_wait)
    cancel_wait = forward("waits", Waits.cancel_wait)
    record_files = forward("working", Working.record_files)
    file_changes = forward("working", Working.file_changes)
    snapshot = forward("working", Working.snapshot)
    state = forward("working", Working.state)
    where = forward("working", Working.where)
    workspace_tasks = forward("working", Working.workspace_tasks)
    prime = forward("working", Working.prime)
    create_task = forward("tracker", Tracker.create_task)
    get_task = forward("tracker", Tracker.get_task)
    list_tasks = forward("tracker", Tracker.list_tasks)
    update_task = forward("tracker", Tracker.update_task)
    archive_task = forward("tracker", Tracker.archive_task)
    update_step = forward("tracker", Tracker.update_step)
    replan = forward("tracker", Tracker.replan)
    removed_steps = forward("tracker", Tracker.removed_steps)
    add_message = forward("tracker", Tracker.add_message)
    list_messages = forward("tracker", Tracker.list_messages)
    get_message = forward("tracker", Tracker.get_message)
    capture_transcript = forward("capture", Capture.capture_transcript)
    journal = forward("audit", Audit.journal)
    redactions = forward("audit", Audit.redactions)
    journal_head = forward("audit", Audit.journal_head)
    verify = forward("audit", Audit.verify)
    forget = forward("forgetting", Forgetting.forget)
    export_events = forward("transfer", Transfer.export_events)
    import_events = forward("transfer", Transfer.import_events)
    push = forward("transfer", Transfer.push)
    import_records = forward("transfer", Transfer.import_records)
    run_jobs = forward("jobs", Jobs.run_jobs)
    list_jobs = forward("jobs", Jobs.list_jobs)
    jobs_due = forward("jobs", Jobs.jobs_due)
    running_summary = forward("utility", Utility.running_summary)
    ask = forward("utility", Utility.ask)
    tidy = forward("upkeep", Upkeep.tidy)
    maintain = forward("upkeep", Upkeep.maintain)
    maintenance_due = forward("upkeep", Upkeep.maintenance_due)
    archived_tasks = forward("upkeep", Upkeep.archived_tasks)
    export_month = forward("upkeep", Upkeep.export_month)
    assemble_context = forward("conversations", Conversations.assemble_context)
    resume = forward("conversations", Conversations.resume)
    assemble = forward("assembly", Assembly.assemble)
    # -- end of forwarded calls --
