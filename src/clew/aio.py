"""AsyncMemory: the Memory API for asyncio code, never blocking the event loop.

Each method runs the Memory method of the same name on one dedicated worker
thread (so the SQLite connection is only ever used from that thread, and calls
run in the order they were made). Method bodies are never copied: the async
methods are generated from the sync ones, keeping their signatures for type
checkers, and a test checks that both classes expose the same names.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from typing import Any, Concatenate, ParamSpec, TypeVar

from clew.errors import ValidationError
from clew.memory import Memory
from clew.store.contract import CheckpointStore

P = ParamSpec("P")
R = TypeVar("R")
S = TypeVar("S")  # the class a method is defined on: Memory, or the Kernel it extends


def _off_loop(
    method: Callable[Concatenate[S, P], R],
) -> Callable[Concatenate[AsyncMemory, P], Coroutine[Any, Any, R]]:
    async def run(self: AsyncMemory, /, *args: P.args, **kwargs: P.kwargs) -> R:
        call = functools.partial(method, self.sync, *args, **kwargs)  # type: ignore[arg-type]
        context = contextvars.copy_context()  # carries a correlation id set by the caller
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, context.run, call)

    run.__name__ = method.__name__
    run.__qualname__ = f"AsyncMemory.{method.__name__}"
    run.__doc__ = method.__doc__
    return run


class AsyncMemory:
    """The async twin of Memory: same method names, awaitable, off the event loop."""

    def __init__(self, memory: Memory) -> None:
        self.sync = memory
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="clew")

    @property
    def path(self) -> str:
        """The store's location."""
        return self.sync.path

    @property
    def space(self) -> str:
        """The namespace every record of this memory belongs to."""
        return self.sync.space

    @property
    def read_only(self) -> bool:
        """Whether the store opened for reading only (a file, folder or mount not writable)."""
        return self.sync.read_only

    async def close(self) -> None:
        """Close the store and stop the worker thread."""
        await _off_loop(Memory.close)(self)
        self._executor.shutdown(wait=True)

    async def __aenter__(self) -> AsyncMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def graph_checkpoints(self) -> CheckpointStore:
        """The store's LangGraph checkpoints (`Memory.graph_checkpoints`). Its calls block:
        run them off the event loop (ClewSaver runs them on a thread of its own)."""
        return self.sync.graph_checkpoints

    async def atomic(self, fn: Callable[[Memory], R]) -> R:
        # A function, not an `async with` block: the calls of one transaction must run on
        # the worker thread with nothing between them, and another task's awaited call
        # would otherwise join the open transaction (and be rolled back with it).
        if not callable(fn):
            raise ValidationError(
                f"atomic takes a function of the Memory (fn(memory)), not {type(fn).__name__}"
            )

        def run() -> R:
            with self.sync.atomic():
                return fn(self.sync)

        context = contextvars.copy_context()  # carries a correlation id set by the caller
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, context.run, run)

    atomic.__doc__ = Memory.atomic.__doc__

    def correlation(self, correlation_id: str | None = None) -> AbstractContextManager[str]:
        """Group every event written inside the block under one correlation id."""
        # Synchronous on purpose: it only sets a context variable, which each call carries.
        return self.sync.correlation(correlation_id)

    create_task = _off_loop(Memory.create_task)
    get_task = _off_loop(Memory.get_task)
    list_tasks = _off_loop(Memory.list_tasks)
    update_task = _off_loop(Memory.update_task)
    archive_task = _off_loop(Memory.archive_task)
    tidy = _off_loop(Memory.tidy)
    maintain = _off_loop(Memory.maintain)
    maintenance_due = _off_loop(Memory.maintenance_due)
    archived_tasks = _off_loop(Memory.archived_tasks)
    export_month = _off_loop(Memory.export_month)
    export_events = _off_loop(Memory.export_events)
    import_events = _off_loop(Memory.import_events)
    import_records = _off_loop(Memory.import_records)
    push = _off_loop(Memory.push)
    add_wait = _off_loop(Memory.add_wait)
    get_wait = _off_loop(Memory.get_wait)
    list_waits = _off_loop(Memory.list_waits)
    check_waits = _off_loop(Memory.check_waits)
    resolve_wait = _off_loop(Memory.resolve_wait)
    cancel_wait = _off_loop(Memory.cancel_wait)
    update_step = _off_loop(Memory.update_step)
    replan = _off_loop(Memory.replan)
    removed_steps = _off_loop(Memory.removed_steps)
    add_message = _off_loop(Memory.add_message)
    list_messages = _off_loop(Memory.list_messages)
    record_action = _off_loop(Memory.record_action)
    finish_action = _off_loop(Memory.finish_action)
    get_action = _off_loop(Memory.get_action)
    get_message = _off_loop(Memory.get_message)
    list_actions = _off_loop(Memory.list_actions)
    log_action = _off_loop(Memory.log_action)
    list_action_logs = _off_loop(Memory.list_action_logs)
    add_entry = _off_loop(Memory.add_entry)
    add_decision = _off_loop(Memory.add_decision)
    add_error = _off_loop(Memory.add_error)
    add_finding = _off_loop(Memory.add_finding)
    add_constraint = _off_loop(Memory.add_constraint)
    add_question = _off_loop(Memory.add_question)
    resolve = _off_loop(Memory.resolve)
    keep_open = _off_loop(Memory.keep_open)
    get_entry = _off_loop(Memory.get_entry)
    list_entries = _off_loop(Memory.list_entries)
    record_fix = _off_loop(Memory.record_fix)
    seen_before = _off_loop(Memory.seen_before)
    query_relevant = _off_loop(Memory.query_relevant)
    search = _off_loop(Memory.search)
    search_all = _off_loop(Memory.search_all)
    record_tool_call = _off_loop(Memory.record_tool_call)
    trace_decision = _off_loop(Memory.trace_decision)
    trace_validation = _off_loop(Memory.trace_validation)
    trace = _off_loop(Memory.trace)
    commands = _off_loop(Memory.commands)
    last_green = _off_loop(Memory.last_green)
    repeated_failures = _off_loop(Memory.repeated_failures)
    history = _off_loop(Memory.history)
    add_pattern = _off_loop(Memory.add_pattern)
    observe_pattern = _off_loop(Memory.observe_pattern)
    list_patterns = _off_loop(Memory.list_patterns)
    prune_patterns = _off_loop(Memory.prune_patterns)
    add_guardrail = _off_loop(Memory.add_guardrail)
    add_default_guardrails = _off_loop(Memory.add_default_guardrails)
    set_guardrail = _off_loop(Memory.set_guardrail)
    list_guardrails = _off_loop(Memory.list_guardrails)
    check_command = _off_loop(Memory.check_command)
    guardrails_text = _off_loop(Memory.guardrails_text)
    run_jobs = _off_loop(Memory.run_jobs)
    list_jobs = _off_loop(Memory.list_jobs)
    jobs_due = _off_loop(Memory.jobs_due)
    run_background = _off_loop(Memory.run_background)
    running_summary = _off_loop(Memory.running_summary)
    ask = _off_loop(Memory.ask)
    usage = _off_loop(Memory.usage)
    record_files = _off_loop(Memory.record_files)
    file_changes = _off_loop(Memory.file_changes)
    snapshot = _off_loop(Memory.snapshot)
    state = _off_loop(Memory.state)
    where = _off_loop(Memory.where)
    workspace_tasks = _off_loop(Memory.workspace_tasks)
    prime = _off_loop(Memory.prime)
    stuck = _off_loop(Memory.stuck)
    check_stuck = _off_loop(Memory.check_stuck)
    waiting = _off_loop(Memory.waiting)
    start_session = _off_loop(Memory.start_session)
    open_session = _off_loop(Memory.open_session)
    get_session = _off_loop(Memory.get_session)
    list_sessions = _off_loop(Memory.list_sessions)
    update_session = _off_loop(Memory.update_session)
    end_session = _off_loop(Memory.end_session)
    append_turn = _off_loop(Memory.append_turn)
    append_turns = _off_loop(Memory.append_turns)
    list_turns = _off_loop(Memory.list_turns)
    pop_turn = _off_loop(Memory.pop_turn)
    clear_session = _off_loop(Memory.clear_session)
    session_state = _off_loop(Memory.session_state)
    recall = _off_loop(Memory.recall)
    recall_hint = _off_loop(Memory.recall_hint)
    assemble_context = _off_loop(Memory.assemble_context)
    assemble = _off_loop(Memory.assemble)
    set_task_record = _off_loop(Memory.set_task_record)
    set_step_record = _off_loop(Memory.set_step_record)
    task_record = _off_loop(Memory.task_record)
    resume = _off_loop(Memory.resume)
    import_session = _off_loop(Memory.import_session)
    capture_transcript = _off_loop(Memory.capture_transcript)
    export_session = _off_loop(Memory.export_session)
    write_session = _off_loop(Memory.write_session)
    journal = _off_loop(Memory.journal)
    journal_head = _off_loop(Memory.journal_head)
    redactions = _off_loop(Memory.redactions)
    verify = _off_loop(Memory.verify)
    checkpoint = _off_loop(Memory.checkpoint)
    check_checkpoints = _off_loop(Memory.check_checkpoints)
    forget = _off_loop(Memory.forget)
    index_status = _off_loop(Memory.index_status)
    update_index = _off_loop(Memory.update_index)
    rebuild_index = _off_loop(Memory.rebuild_index)
    nearest = _off_loop(Memory.nearest)
    prepare_nearest = _off_loop(Memory.prepare_nearest)
    ann_status = _off_loop(Memory.ann_status)
    create_key = _off_loop(Memory.create_key)
    list_keys = _off_loop(Memory.list_keys)
    revoke_key = _off_loop(Memory.revoke_key)
    has_keys = _off_loop(Memory.has_keys)
    authenticate = _off_loop(Memory.authenticate)
    log_requests = _off_loop(Memory.log_requests)
    list_requests = _off_loop(Memory.list_requests)
    prune_requests = _off_loop(Memory.prune_requests)
    grant_role = _off_loop(Memory.grant_role)
    revoke_role = _off_loop(Memory.revoke_role)
    database_roles = _off_loop(Memory.database_roles)
