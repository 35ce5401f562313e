"""The job outbox, a service of the Memory facade: what queues work on the write path, and
the worker's side of a job (claim, run, finish).

A write that calls for work (a step finishing, every Nth message) queues a job in the same
transaction (`job.queued`), by reacting to the facade's signals; after the commit the
`_wake_worker` subscriber starts a worker (worker.py): a thread of this process, a detached
`clew work` process (the CLI), or nobody until `run_jobs` is called. A job is claimed with
a lease and done by the handler registered for its kind (`@handles_job`: the kernel's
registry, which the utility service's handlers join); its results and `job.done` are
written in one transaction, so a crash leaves the job to be done again and a job done
twice stores nothing twice.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from datetime import UTC, timedelta
from typing import TYPE_CHECKING, Any, cast

from clew.core import checks
from clew.core.ids import new_id
from clew.errors import ClewError, ValidationError
from clew.jobs.governor import Governor
from clew.kernel import Committed, Kernel, Service, after_commit, on_close, reacts
from clew.models import (
    ActionStatus,
    EntryFilter,
    EntryStatus,
    EntryType,
    Job,
    JobStatus,
    StepStatus,
)
from clew.tasks.taskrecord import TaskRecords

if TYPE_CHECKING:  # the extraction rules load with the first extraction job
    from clew.archive.extraction import Draft

LEASE = timedelta(minutes=10)
ATTEMPTS = 3
LATER_ACTIONS = 200  # the newest commands checked for a later successful run

# A failure an error stands for: (command or None, fingerprint, when the error was closed or
# None while it is open); see `Jobs._failures`.
_Failure = tuple[str | None, str | None, str | None]


class Jobs(Service):
    """Queued jobs (a service of Memory): queueing on the write path, and the worker's
    claim, run and finish; the utility model's handlers finish their jobs through it
    (`_finish`, `_still_mine`) and upkeep starts the worker by it (`_start_worker`)."""

    def __init__(self, kernel: Kernel, governor: Governor, task_records: TaskRecords) -> None:
        super().__init__(kernel)
        self.governor = governor  # the model's routing: a summary is queued only with a model
        self.task_records = task_records  # where a job's entities go: the task's record

    # -- queueing, on the write path -----------------------------------------------------

    def _enqueue(self, kind: str, task_id: str, step_id: str | None, at: str) -> None:
        job = {"id": new_id(), "kind": kind}
        if step_id is not None:
            job["step_id"] = step_id
        self._emit("job.queued", task_id, {"job": job}, at)

    @reacts("step.finished")
    def _queue_extraction(self, task_id: str, step_id: str, status: StepStatus, at: str) -> None:
        """When a step completes or fails: queue its extraction."""
        if status in (StepStatus.COMPLETED, StepStatus.FAILED):
            self._enqueue("extract", task_id, step_id, at)

    @reacts("message.added")
    def _queue_summary(self, task_id: str, at: str) -> None:
        """After each message the tracker adds: every Nth queues a running summary."""
        if self.governor._model_for("summarize") is None:
            return  # without a model the summary is computed when asked for
        if self._store.count_messages(task_id) % self.settings.summary_every == 0:
            self._enqueue("summarize", task_id, None, at)

    @after_commit(20)  # after the mirrors (10): a worker's writes come after the call's
    def _wake_worker(self, done: Committed) -> None:
        """After a call that queued work: start the worker (as the settings say)."""
        if done.jobs:
            self._start_worker()

    # -- the worker ---------------------------------------------------------------------------

    def run_jobs(self, *, limit: int | None = None) -> list[Job]:
        """Do queued jobs (oldest first) until none is left or `limit` are done; return them."""
        from clew.core import meter  # here: the hook path imports this module, not meter

        limit = checks.optional_count(limit, "limit")
        done: list[Job] = []
        while limit is None or len(done) < limit:
            job = self._claim()
            if job is None:
                break
            done.append(self._run(job))
            meter.report("doing jobs", len(done), limit)
        return done

    def list_jobs(
        self, *, status: str | JobStatus | None = None, task_id: str | None = None, limit: int = 50
    ) -> list[Job]:
        """Jobs, newest first: pending, running, done (with their result) or failed."""
        statuses = () if status is None else (checks.choice(status, JobStatus, "job status"),)
        tid = None if task_id is None else self._task_id(task_id)
        return self._store.list_jobs(
            statuses=statuses, task_id=tid, limit=checks.count(limit, "limit")
        )

    def jobs_due(self) -> bool:
        """For workers: whether a queued job is ready to be done now (pending, or running
        on a lease that ran out)."""
        return self._store.next_job(self._now()) is not None

    def _claim(self) -> Job | None:
        with self._write() as at:
            job = self._store.next_job(at)
            if job is None:
                return None
            lease = (self._clock() + LEASE).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
            data = {"job_id": job.id, "lease_until": lease}
            self._emit("job.claimed", job.task_id, data, at)
        return self._store.get_job(job.id)

    def _run(self, job: Job) -> Job:
        try:
            handler = self._kernel._job_handlers.get(job.kind)
            if handler is None:
                raise ValidationError(f"unknown job kind {job.kind!r}")
            handler(job)
            # A handler that stored nothing itself (`_finish` does for extraction) is done
            # when it returns: marked here, so a new kind needs no bookkeeping of its own.
            with self._write() as at:
                if self._still_mine(job):
                    self._emit("job.done", job.task_id, {"job_id": job.id, "result": {}}, at)
        except ClewError as exc:
            retry = job.attempts < ATTEMPTS
            with self._write() as at:
                if self._still_mine(job):
                    data = {"job_id": job.id, "error": str(exc), "retry": retry}
                    self._emit("job.failed", job.task_id, data, at)
        return self._store.get_job(job.id)

    def _still_mine(self, job: Job) -> bool:
        """Inside a write: whether this worker's claim on the job still holds."""
        now = self._store.get_job(job.id)
        return now.status is JobStatus.RUNNING and now.attempts == job.attempts

    def _finish(self, job: Job, drafts: Sequence[Draft], result: dict[str, Any]) -> None:
        """Store the job's entries and mark it done, in one transaction; or store nothing if
        another worker finished it first (a lease ran out while this one worked)."""
        # Who recorded them: the rules' copy of a failed command is clew's own, which clew
        # may resolve when that same command passes; the model's are not (issue 25).
        origin = "model" if result.get("source") == "model" else "extracted"
        entries = [_entry(d, origin) for d in drafts]  # fingerprints before taking the lock
        with self._write() as at:
            if not self._still_mine(job):
                return
            entries = self._settle(job.task_id, entries)
            for entry in entries:
                self._emit("entry.added", job.task_id, {"entry": entry}, at)
            named = result.pop("entities", None)
            if named:  # the task record's entities, as the model named them
                task = self._store.get_task(job.task_id)
                self.task_records._set_record(task, {"entities": named}, at, source="model")
            done = {**result, "entries": [e["id"] for e in entries]}
            self._emit("job.done", job.task_id, {"job_id": job.id, "result": done}, at)

    def _settle(self, task_id: str, entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Inside the write that stores a job's entries: fit them to what the task holds
        now, so one fact stays one record. An error from a failed command that another
        error already stands for (a repeat of its command with the same fingerprint) is
        dropped; one whose command later succeeded is stored resolved. A decision already
        recorded, or one the task has moved past (a decision on its topic recorded after
        the message it came from), or on a topic the agent has an active record of, is
        dropped; one newer than the decisions drawn from earlier messages on its topic
        replaces them."""
        decisions = self._store.list_entries(EntryFilter(task_id, (EntryType.DECISION,)))
        taken, failures = self._failures(task_id)
        kept: list[dict[str, Any]] = []
        for entry in entries:
            if entry["type"] == EntryType.ERROR.value:
                keep = self._settle_error(task_id, entry, taken, failures)
            elif entry["type"] == EntryType.DECISION.value:
                keep = self._settle_decision(entry, decisions)
            else:
                keep = True
            if keep:
                kept.append(entry)
        return _newest_per_topic(kept)

    def _failures(self, task_id: str) -> tuple[set[str], list[_Failure]]:
        """The failures the task's errors stand for, and the actions they are linked to
        (an error is drawn once per failed command, so those are taken)."""
        errors = self._store.list_entries(
            EntryFilter(task_id, (EntryType.ERROR,), (EntryStatus.ACTIVE, EntryStatus.RESOLVED))
        )
        taken: set[str] = set()
        # Each error's failures: (command, fingerprint) of the commands it is linked to, or
        # (None, its own fingerprint); with None while it is open, else when it was closed.
        failures: list[_Failure] = []
        for error in errors:
            closed = None if error.status is EntryStatus.ACTIVE else error.resolved_at or ""
            linked = [i for k, i in error.sources if k == "action"]
            taken.update(linked)
            for ident in linked:
                run = self._store.get_action(ident)
                failures.append((run.command, run.fingerprint, closed))
            if not linked:
                failures.append((None, error.fingerprint, closed))
        return taken, failures

    def _settle_error(
        self, task_id: str, entry: dict[str, Any], taken: set[str], failures: list[_Failure]
    ) -> bool:
        """Whether to keep an error drawn from a failed command; one kept is fitted in
        place (the command's fingerprint, resolved if a later run passed) and, while open,
        joins `taken` and `failures` so a second draft of the same job is not stored too."""
        action_ids = [i for k, i in entry["sources"] if k == "action"]
        if not action_ids:
            return True  # not from a command: nothing to compare it with
        action = self._store.get_action(action_ids[0])
        if action.id in taken or _stands_for(action, failures, self.settings.volatile):
            return False
        if action.fingerprint:
            entry["fingerprint"] = action.fingerprint
        success = self._later_success(task_id, action)
        if success is not None:
            entry["status"] = EntryStatus.RESOLVED.value
            entry["resolution"] = (
                f"a later run of `{success.command}` succeeded (action {success.id})"
            )
        else:
            failures.append((action.command, action.fingerprint, None))
            taken.add(action.id)
        return True

    def _later_success(self, task_id: str, action: Any) -> Any | None:
        """The oldest successful run of the same command after this failed one, among the
        newest LATER_ACTIONS of the task (a failure older than those finds none and its
        error is stored open)."""
        from clew.archive import linking  # lazily: not on the hook path

        newest = self._store.list_actions(task_id, limit=LATER_ACTIONS)
        ids = [a.id for a in newest]
        later = newest[: ids.index(action.id)] if action.id in ids else []
        return next(
            (
                a
                for a in reversed(later)
                if a.status is ActionStatus.COMPLETED
                and linking.same_command(a.command, action.command, self.settings.volatile)
            ),
            None,
        )

    def _settle_decision(self, entry: dict[str, Any], decisions: Sequence[Any]) -> bool:
        """Whether to keep a decision drawn from the task, given the decisions it holds;
        one kept names the active ones on its topic it supersedes, and when it was said
        (`said_at`, for `_newest_per_topic`)."""
        from clew.archive import linking  # lazily: not on the hook path

        said = [i for k, i in entry["sources"] if k == "message"]
        when = self._store.get_message(said[0]).created_at if said else None
        same = [
            d
            for d in decisions
            if linking.same_topic(entry["summary"], d.summary, entry["tags"], d.tags)
        ]
        if any(linking.same_decision(entry["summary"], d.summary) for d in same):
            return False  # already recorded (and perhaps reversed since)
        if when is not None and any(d.created_at >= when for d in same):
            return False  # the agent moved past it after saying so
        live = [d.id for d in same if d.status is EntryStatus.ACTIVE]
        if any(not _from_message(d) for d in same if d.status is EntryStatus.ACTIVE):
            return False  # the agent's own record of the topic stands until it says so
        if live:
            entry["supersedes"] = live[0]
            entry["topic_inferred"] = True
            if live[1:]:
                entry["also_supersedes"] = live[1:]
        entry["said_at"] = when or ""
        return True

    def _start_worker(self) -> None:
        mode = self.settings.worker
        if mode not in ("thread", "auto", "process"):
            return
        from clew.jobs import worker  # lazily: only a call that queued work needs it

        if mode == "process":
            worker.spawn(self.path, self.space)
        else:  # the thread does the Memory's calls for workers: the kernel is that Memory
            worker.Worker.start(cast("worker.Workplace", self._kernel))

    @on_close(10)
    def _stop_worker(self) -> None:
        """On close: let this Memory's worker thread end, if one is waiting."""
        worker = sys.modules.get("clew.jobs.worker")  # imported once work was queued, not before
        if worker is not None:
            worker.Worker.stop(self._kernel)


def _entry(draft: Draft, origin: str) -> dict[str, Any]:
    """The entry.added data of a draft (an error gets its fingerprint)."""
    from clew.archive.fingerprint import fingerprint

    entry: dict[str, Any] = {
        "id": new_id(),
        "type": draft.type,
        "origin": origin,
        "summary": draft.summary,
        "detail": draft.detail,
        "tags": list(draft.tags),
        "relevance_to": list(draft.relevance_to),
        "sources": [list(s) for s in draft.sources],
    }
    if draft.relevance_to:
        entry["subtask_id"] = draft.relevance_to[0]
    if draft.type == EntryType.ERROR.value:
        entry["fingerprint"] = fingerprint(draft.detail or draft.summary, draft.command).key
    return entry


def _stands_for(action: Any, failures: list[_Failure], volatile: Sequence[str]) -> bool:
    """Whether an error stands for this failed command already: a repeat of a command it
    is linked to (numbers included) with the same fingerprint, or an unlinked error with
    its fingerprint; an error closed before the command ran does not (the failure came
    back)."""
    from clew.archive import linking  # lazily: not on the hook path

    return any(
        print_ == action.fingerprint
        and (command is None or linking.same_command(command, action.command, volatile))
        and (closed is None or action.created_at <= closed)
        for command, print_, closed in failures
    )


def _from_message(entry: Any) -> bool:
    """Whether an entry was drawn from a task message (not recorded by the agent itself)."""
    return any(kind == "message" for kind, _ in entry.sources)


def _newest_per_topic(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Of one job's decisions on one topic, keep the one said last (drafts come in any
    order); `said_at` is only for this choice and leaves the entry here."""
    from clew.archive import linking  # lazily: not on the hook path

    said = [(e, e.pop("said_at")) for e in entries if "said_at" in e]
    out = []
    for entry in entries:
        mine = next((at for e, at in said if e is entry), None)
        if mine is not None and any(
            at > mine and linking.same_topic(entry["summary"], other["summary"])
            for other, at in said
        ):
            continue
        out.append(entry)
    return out
