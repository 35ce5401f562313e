"""The utility model on the Memory facade: write-time extraction, running summaries and live
questions, each with a no-model path; the job outbox and its worker; the cost governor.

Nothing here is on the write path. A write that calls for work (a step finishing, every Nth
message) queues a job in the same transaction (`job.queued`); after the commit a worker
does it: a thread of this process, a detached `clew work` process (the CLI), or nobody
until `run_jobs` is called. A job is claimed with a lease; its results and `job.done` are
written in one transaction, so a crash leaves the job to be done again and a job done twice
stores nothing twice. A model that is slow, fails, answers nonsense or is over its caps
never loses anything: the deterministic rules answer instead, and the reason is recorded.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, timedelta
from typing import Any, ClassVar, NamedTuple

from clew import checks, extraction, summaries
from clew.archive import Archive, action_hit, entry_hit
from clew.errors import ClewError, ModelError, ValidationError
from clew.extraction import Draft, ExtractionError
from clew.facade import Committed, after_commit, handles_job, reacts
from clew.ids import new_id
from clew.models import (
    ActionStatus,
    EntryFilter,
    EntryStatus,
    EntryType,
    Job,
    JobStatus,
    ModelCall,
    RecordHit,
    RunningSummary,
    StepStatus,
    Task,
)
from clew.providers import Completion, Message, Provider
from clew.summaries import Answer
from clew.working import Working

LEASE = timedelta(minutes=10)
ATTEMPTS = 3
MAX_SOURCES = 20
SUMMARY_MESSAGES = 200  # the newest messages a running summary reads
RECENT_MESSAGES = 50  # messages since the summary that a question reads
ANSWER_HITS = 3  # records an answer from the records shows
MAX_DAYS = 36_500  # a usage report reaches back at most 100 years

# A worker watching waits sleeps at least this long between rounds: a round polls every due
# wait, so "due now" right after one means a check failed (a busy store), to retry calmly.
MIN_NAP = 1.0
LATER_ACTIONS = 200  # the newest commands checked for a later successful run


class Usage(NamedTuple):
    """What the utility model cost: per day and per task, against the caps."""

    calls: int
    tokens: int
    by_day: tuple[tuple[str, int, int], ...]  # (YYYY-MM-DD, calls, tokens)
    by_task: tuple[tuple[str | None, int, int], ...]
    failed_calls: int
    limits: dict[str, int]


class Utility(Archive, Working):
    """The facade's utility-model methods (mixed into `Memory`): they use the archive's
    search and layer 1's brief, so this mixin stands on those two."""

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
        if self._model_for("summarize") is None:
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
        limit = checks.optional_count(limit, "limit")
        done: list[Job] = []
        while limit is None or len(done) < limit:
            job = self._claim()
            if job is None:
                break
            done.append(self._run(job))
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
            handler = self._job_handlers.get(job.kind)
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
        entries = [_entry(draft) for draft in drafts]  # fingerprints before taking the lock
        with self._write() as at:
            if not self._still_mine(job):
                return
            entries = self._settle(job.task_id, entries)
            for entry in entries:
                self._emit("entry.added", job.task_id, {"entry": entry}, at)
            named = result.pop("entities", None)
            if named:  # the task record's entities, as the model named them
                task = self._store.get_task(job.task_id)
                self._set_record(task, {"entities": named}, at, source="model")
            done = {**result, "entries": [e["id"] for e in entries]}
            self._emit("job.done", job.task_id, {"job_id": job.id, "result": done}, at)

    def _settle(self, task_id: str, entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Inside the write that stores a job's entries: fit them to what the task holds
        now, so one fact stays one record. An error from a failed command that another
        error already stands for (a repeat of its command with the same fingerprint) is
        dropped; one whose
        command later succeeded is stored resolved. A decision already recorded, or one
        the task has moved past (a decision on its topic recorded after the message it
        came from), or on a topic the agent has an active record of, is dropped; one newer
        than the decisions drawn from earlier messages on its topic replaces them."""
        from clew import linking  # lazily: not on the hook path

        decisions = self._store.list_entries(EntryFilter(task_id, (EntryType.DECISION,)))
        errors = self._store.list_entries(
            EntryFilter(task_id, (EntryType.ERROR,), (EntryStatus.ACTIVE, EntryStatus.RESOLVED))
        )
        taken: set[str] = set()
        # Each error's failures: (command, fingerprint) of the commands it is linked to, or
        # (None, its own fingerprint); with None while it is open, else when it was closed.
        failures: list[tuple[str | None, str | None, str | None]] = []
        for error in errors:
            closed = None if error.status is EntryStatus.ACTIVE else error.resolved_at or ""
            linked = [i for k, i in error.sources if k == "action"]
            taken.update(linked)
            for ident in linked:
                run = self._store.get_action(ident)
                failures.append((run.command, run.fingerprint, closed))
            if not linked:
                failures.append((None, error.fingerprint, closed))

        def stands_for(action: Any) -> bool:
            """Whether an error stands for this failed command already: a repeat of a
            command it is linked to (numbers aside) with the same fingerprint, or an
            unlinked error with its fingerprint; an error closed before the command ran
            does not (the failure came back)."""
            return any(
                print_ == action.fingerprint
                and (command is None or linking.same_command(command, action.command))
                and (closed is None or action.created_at <= closed)
                for command, print_, closed in failures
            )

        kept: list[dict[str, Any]] = []
        for entry in entries:
            sources = [tuple(s) for s in entry["sources"]]
            if entry["type"] == EntryType.ERROR.value:
                action_ids = [i for k, i in sources if k == "action"]
                if action_ids:
                    action = self._store.get_action(action_ids[0])
                    if action.id in taken or stands_for(action):
                        continue
                    if action.fingerprint:
                        entry["fingerprint"] = action.fingerprint
                    newest = self._store.list_actions(task_id, limit=LATER_ACTIONS)
                    ids = [a.id for a in newest]
                    later = newest[: ids.index(action.id)] if action.id in ids else []
                    success = next(
                        (
                            a
                            for a in reversed(later)
                            if a.status is ActionStatus.COMPLETED
                            and linking.same_command(a.command, action.command)
                        ),
                        None,
                    )
                    if success is not None:
                        entry["status"] = EntryStatus.RESOLVED.value
                        entry["resolution"] = (
                            f"a later run of `{success.command}` succeeded (action {success.id})"
                        )
                    else:
                        failures.append((action.command, action.fingerprint, None))
                        taken.add(action.id)
            elif entry["type"] == EntryType.DECISION.value:
                said = [i for k, i in sources if k == "message"]
                when = self._store.get_message(said[0]).created_at if said else None
                same = [
                    d
                    for d in decisions
                    if linking.same_topic(entry["summary"], d.summary, entry["tags"], d.tags)
                ]
                if any(linking.same_decision(entry["summary"], d.summary) for d in same):
                    continue  # already recorded (and perhaps reversed since)
                if when is not None and any(d.created_at >= when for d in same):
                    continue  # the agent moved past it after saying so
                live = [d.id for d in same if d.status is EntryStatus.ACTIVE]
                if any(not _from_message(d) for d in same if d.status is EntryStatus.ACTIVE):
                    continue  # the agent's own record of the topic stands until it says so
                if live:
                    entry["supersedes"] = live[0]
                    entry["topic_inferred"] = True
                    if live[1:]:
                        entry["also_supersedes"] = live[1:]
                entry["said_at"] = when or ""
            kept.append(entry)
        return _newest_per_topic(kept)

    def _start_worker(self) -> None:
        mode = self.settings.worker
        if mode in ("thread", "auto"):
            _Worker.start(self)
        elif mode == "process":
            _spawn_worker(self.path, self.space)

    # -- extraction -----------------------------------------------------------------------

    @handles_job("extract")
    def _extract(self, job: Job) -> None:
        if job.step_id is None:
            raise ValidationError("an extraction job needs a step")
        with self._store.transaction():
            task = self._store.get_task(job.task_id)
            plan = self._store.get_plan(job.task_id, include_removed=True)
            step = next(s for s in plan if s.id == job.step_id)
            actions = self._store.list_actions(job.task_id, plan_item_id=step.id)
            start, end = step.started_at or step.created_at, step.completed_at or job.created_at
            messages = [
                m for m in self._store.list_messages(job.task_id, limit=500)
                if start <= m.created_at <= end
            ]  # fmt: skip
            events = self._store.list_events(task_id=job.task_id, types=("task.files_changed",))
            existing = self._store.list_entries(EntryFilter(task_id=job.task_id))
        files = [f["path"] for e in events if start <= e.created_at <= end for f in e.data["files"]]
        drafts = extraction.rules(step, actions, messages, files)
        result: dict[str, Any] = {"source": "rules"}
        model = self._model_for("extract")
        refusal = None if model is None else self._refusal(job.task_id)
        if model is not None and refusal is None:
            numbers = {s.id: n for n, s in enumerate(task.plan, 1)}
            steps = "\n".join(f"{s.id} (step {numbers[s.id]}): {s.title}" for s in task.plan)
            template = summaries.prompt("extractor")
            said = "\n".join(m.content for m in sorted(messages, key=lambda m: m.created_at))
            user = template["user"].format(
                subtask_id=f"{step.id} ({step.title})",
                plan=steps or "(no plan)",
                tool_calls_formatted=extraction.format_calls(actions),
                model_output=said or "(none)",
            )
            prompt = [Message("system", template["system"]), Message("user", user)]
            names = {**{s.id: s.id for s in task.plan}, **{str(n): i for i, n in numbers.items()}}
            try:
                answer = self._call(model, "extract", job.task_id, prompt)
                parsed = extraction.parse(answer.text, names)
            except ModelError as exc:
                result = {"source": "rules", "note": f"the model failed: {exc}"}
            except ExtractionError as exc:
                result = {"source": "rules", "note": f"the model's answer was refused: {exc}"}
                with self._write() as at:
                    data = {"job_id": job.id, "reason": str(exc), "raw": answer.text}
                    self._emit("model.output_rejected", job.task_id, data, at)
            else:
                links = tuple(("action", a.id) for a in actions[:MAX_SOURCES])
                links += tuple(("message", m.id) for m in messages[: MAX_SOURCES - len(links)])
                drafts = [
                    d._replace(relevance_to=_first(step.id, d.relevance_to), sources=links)
                    for d in parsed
                ]
                result = {"source": "model", "model": answer.model}
                named = extraction.entities(answer.text)
                if named:
                    result["entities"] = named
        elif refusal is not None:
            result["note"] = refusal
        self._finish(job, _new_only(drafts, existing), result)

    # -- running summaries and questions --------------------------------------------------

    @handles_job("summarize")
    def _summarize(self, job: Job) -> None:
        model = self._model_for("summarize")
        with self._store.transaction():
            task = self._store.get_task(job.task_id)
            messages = self._store.list_messages(job.task_id, limit=SUMMARY_MESSAGES)
            count = self._store.count_messages(job.task_id)
        result: dict[str, Any] = {"source": "none"}
        summary = None
        refusal = "no model is configured" if model is None else self._refusal(job.task_id)
        if model is not None and refusal is None:
            try:
                prompt = summaries.summary_prompt(task, messages)
                answer = self._call(model, "summarize", job.task_id, prompt)
            except ModelError as exc:
                refusal = f"the model failed: {exc}"
            else:
                refined = summaries.split_summary(answer.text)
                summary = {
                    "id": new_id(), "text": refined.text, "message_count": count,
                    "source": "model", "model": answer.model,
                }  # fmt: skip
                result = {"source": "model", "model": answer.model}
        if refusal is not None:
            result["note"] = refusal
        if summary is not None and summary["text"]:
            with self._write() as at:
                if self._still_mine(job):
                    self._emit("summary.recorded", job.task_id, {"summary": summary}, at)
                    self._refine(job, task, refined, str(summary["model"]), at)
        self._finish(job, [], result)

    def _refine(
        self, job: Job, seen: Task, refined: summaries.Refined, model: str, at: str
    ) -> None:
        """Inside the write of a running summary: let the model's summary refine the task's
        progress summary and next objective, journaled as the model's; a field
        the agent changed while the model worked keeps the agent's value."""
        now = self._store.get_task(job.task_id)
        changes: dict[str, str] = {}
        for field, value in (
            ("summary", refined.progress),
            ("next_objective", refined.next_objective),
        ):
            if not value or getattr(now, field) != getattr(seen, field):
                continue
            if value != getattr(now, field):
                changes[field] = value[: checks.MAX_TEXT_CHARS]
        if changes:
            data = {
                "task_id": job.task_id,
                "changes": changes,
                "by": {"model": model, "job_id": job.id},
            }
            self._emit("task.updated", job.task_id, data, at)

    def running_summary(self, task_id: str) -> RunningSummary:
        """The task's running summary: the model's newest, else one built from the records."""
        tid = self._task_id(task_id)
        found = self._store.latest_summary(tid)
        if found is not None:
            return found
        task = self._store.get_task(tid)
        brief = self.where(tid)
        messages = self._store.list_messages(tid, limit=SUMMARY_MESSAGES)
        text = summaries.rules_summary(task, brief, messages)
        count = self._store.count_messages(tid)
        return RunningSummary("", self.space, tid, text, count, "rules", None, self._now())

    def ask(self, task_id: str, question: str) -> Answer:
        """Answer a free question about a task: "where was I?", "what failed?", "should I
        change the plan?". With a model, from the running summary and the messages since
        (simple questions to the small model, complex ones to the large one if configured);
        without one, or if it fails or is over a cap, from the records, saying why."""
        tid = self._task_id(task_id)
        text = checks.text(question, "question", max_chars=4000)
        model = self._model_for("ask", text)
        note = "no model is configured" if model is None else self._refusal(tid)
        if model is not None and note is None:
            with self._store.transaction():
                task = self._store.get_task(tid)
                found = self._store.latest_summary(tid)
                messages = self._store.list_messages(tid, limit=SUMMARY_MESSAGES)
                total = self._store.count_messages(tid)
            seen = found.message_count if found else 0
            ordered = sorted(messages, key=lambda m: m.created_at)
            since = min(total - seen, RECENT_MESSAGES)
            recent = ordered[-since:] if since > 0 else []
            prompt = summaries.ask_prompt(task, found.text if found else None, seen, recent, text)
            try:
                answer = self._call(model, "ask", tid, prompt)
            except ModelError as exc:
                note = f"the model failed: {exc}"
            else:
                return Answer(answer.text.strip(), "model", answer.model)
        return self._answer_from_records(tid, text, note or "")

    def _answer_from_records(self, tid: str, question: str, note: str) -> Answer:
        """Answer without a model: from the brief for where / next / what failed, else with
        the best records of the kinds the question is about, found by search (then any kind,
        then the newest of its kind)."""
        found = summaries.intent(question)
        if found.name == "brief":
            return summaries.rules_answer(question, self.where(tid), note)
        words = summaries.search_words(question)
        hits = self._find(words, found, tid)
        exact = bool(hits)
        if not hits and found is not summaries.GENERAL:
            hits = self._find(words, summaries.GENERAL, tid)
            if not hits:
                hits = self._newest(found, tid)
        if not hits and found is summaries.GENERAL:
            return summaries.rules_answer(question, self.where(tid), note)
        entries = {h.id: self._store.get_entry(h.id) for h in hits if h.kind == "entry"}
        return summaries.records_answer(found, words, hits, entries, note, exact=exact)

    def _find(self, words: str, found: summaries.Intent, tid: str) -> list[RecordHit]:
        if not words or not found.kinds:
            return []
        try:
            return self.search_all(
                words, kinds=found.kinds, type=found.types or None, task_id=tid, limit=ANSWER_HITS
            )
        except ValidationError:  # nothing searchable in the words
            return []

    def _newest(self, found: summaries.Intent, tid: str) -> list[RecordHit]:
        """The newest records of the kind a question asks about (open ones for questions)."""
        if found.types:
            status = "active" if found.name == "question" else None
            return [
                entry_hit(e)
                for e in self.list_entries(tid, type=found.types, status=status, limit=ANSWER_HITS)
            ]
        if "action" in found.kinds:
            return [action_hit(a) for a in self._store.list_actions(tid, limit=ANSWER_HITS)]
        return []

    # -- models and the cost governor ------------------------------------------------------

    def _model_for(self, purpose: str, question: str = "") -> tuple[str, Provider] | None:
        """Route: the small model first (local); a complex question to the
        large one when it is configured. None when no model is configured."""
        small, large = self.settings.small, self.settings.large
        complex_ = purpose == "ask" and summaries.is_complex(question)
        if large is not None and (small is None or complex_):
            return "large", large
        if small is not None:
            return "small", small
        return ("large", large) if large is not None else None

    def _refusal(self, task_id: str | None) -> str | None:
        """Why the cost governor refuses another call now, or None."""
        caps = self.settings.limits or {}
        day = self._clock().astimezone(UTC).strftime("%Y-%m-%dT00:00:00.000000Z")
        checks_ = []
        if task_id is not None:
            calls, tokens = self._store.usage_totals(task_id=task_id)
            checks_ += [("calls_per_task", calls), ("tokens_per_task", tokens)]
        calls, tokens = self._store.usage_totals(since=day)
        checks_ += [("calls_per_day", calls), ("tokens_per_day", tokens)]
        for key, used in checks_:
            cap = caps.get(key)
            if cap is not None and used >= cap:
                return f"the {key.replace('_', ' ')} cap ({cap:,}) is reached; rules answered"
        return None

    def _call(
        self, model: tuple[str, Provider], purpose: str, task_id: str | None, prompt: list[Message]
    ) -> Completion:
        """Call a model and record the call (and its cost), whether it answers or not."""
        role, provider = model
        started = time.perf_counter()
        try:
            answer = provider.complete(prompt, max_tokens=1500 if purpose == "extract" else 600)
        except ModelError as exc:
            self._record_call(role, provider, purpose, task_id, started, None, str(exc))
            raise
        self._record_call(role, provider, purpose, task_id, started, answer, None)
        return answer

    def _record_call(
        self,
        role: str,
        provider: Provider,
        purpose: str,
        task_id: str | None,
        started: float,
        answer: Completion | None,
        error: str | None,
    ) -> None:
        call = {
            "id": new_id(), "purpose": purpose, "role": role, "provider": provider.name,
            "model": answer.model if answer else provider.model,
            "prompt_tokens": answer.prompt_tokens if answer else 0,
            "completion_tokens": answer.completion_tokens if answer else 0,
            "seconds": round(time.perf_counter() - started, 3), "ok": answer is not None,
            "error": error,
        }  # fmt: skip
        with self._write() as at:
            self._emit("model.called", task_id, {"call": call}, at)

    def usage(self, task_id: str | None = None, *, days: int = 7) -> Usage:
        """What the utility model cost over the last `days` days (for one task or all)."""
        tid = None if task_id is None else self._task_id(task_id)
        since = (
            self._clock() - timedelta(days=checks.count(days, "days", most=MAX_DAYS))
        ).astimezone(UTC)
        calls: list[ModelCall] = self._store.model_calls(
            task_id=tid, since=since.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        )
        by_day: dict[str, list[int]] = {}
        by_task: dict[str | None, list[int]] = {}
        for call in calls:
            tokens = call.prompt_tokens + call.completion_tokens
            for key, table in ((call.created_at[:10], by_day), (call.task_id, by_task)):
                row = table.setdefault(key, [0, 0])  # type: ignore[arg-type]
                row[0] += 1
                row[1] += tokens
        return Usage(
            calls=len(calls),
            tokens=sum(c.prompt_tokens + c.completion_tokens for c in calls),
            by_day=tuple((d, v[0], v[1]) for d, v in sorted(by_day.items())),
            by_task=tuple(
                (t, v[0], v[1]) for t, v in sorted(by_task.items(), key=lambda x: -x[1][1])
            ),
            failed_calls=sum(1 for c in calls if not c.ok),
            limits=dict(self.settings.limits or {}),
        )


def _entry(draft: Draft) -> dict[str, Any]:
    """The entry.added data of a draft (an error gets its fingerprint)."""
    from clew.fingerprint import fingerprint

    entry: dict[str, Any] = {
        "id": new_id(),
        "type": draft.type,
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


def _from_message(entry: Any) -> bool:
    """Whether an entry was drawn from a task message (not recorded by the agent itself)."""
    return any(kind == "message" for kind, _ in entry.sources)


def _newest_per_topic(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Of one job's decisions on one topic, keep the one said last (drafts come in any
    order); `said_at` is only for this choice and leaves the entry here."""
    from clew import linking  # lazily: not on the hook path

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


def _first(step_id: str, relevance: tuple[str, ...]) -> tuple[str, ...]:
    """The step an entry was extracted from leads its relevance (and becomes its subtask)."""
    return (step_id, *[r for r in relevance if r != step_id])


def _new_only(drafts: Sequence[Draft], existing: Sequence[Any]) -> list[Draft]:
    """Drop drafts the task already has: the same type and summary, or an error from a
    command an entry already came from (the agent may have recorded it itself)."""
    seen = {(e.type.value, e.summary) for e in existing}
    linked = {(e.type.value, source) for e in existing for source in e.sources}
    out = []
    for draft in drafts:
        if (draft.type, draft.summary) in seen:
            continue
        if any((draft.type, tuple(s)) in linked for s in draft.sources):
            continue
        seen.add((draft.type, draft.summary))
        out.append(draft)
    return out


class _Worker:
    """A background thread that does a Memory's queued jobs, one at a time."""

    _lock = threading.Lock()
    _running: ClassVar[dict[int, _Worker]] = {}

    def __init__(self, memory: Utility) -> None:
        self.memory = memory
        self.again = threading.Event()
        self.stopping = False
        self.thread = threading.Thread(target=self.loop, name="clew-worker", daemon=True)

    @classmethod
    def start(cls, memory: Utility) -> None:
        with cls._lock:
            worker = cls._running.get(id(memory))
            if worker is not None and worker.thread.is_alive():
                worker.again.set()
                return
            worker = cls._running[id(memory)] = cls(memory)
        worker.thread.start()

    @classmethod
    def stop(cls, memory: Utility) -> None:
        """Let a Memory's worker end (its Memory is closing); it ends after what it is doing."""
        with cls._lock:
            worker = cls._running.pop(id(memory), None)
        if worker is not None:
            worker.stopping = True
            worker.again.set()

    def loop(self) -> None:
        try:
            while not self.stopping:
                self.again.clear()
                self.memory.run_jobs()
                delay = self.memory._background()
                if delay is not None:  # waits are watched: sleep until one is due (or woken)
                    self.again.wait(max(delay, MIN_NAP))
                    continue
                with self._lock:
                    if not self.again.is_set():
                        if self._running.get(id(self.memory)) is self:
                            self._running.pop(id(self.memory), None)
                        return
        except Exception:  # the store was closed under it: the queue keeps the work
            with self._lock:
                if self._running.get(id(self.memory)) is self:
                    self._running.pop(id(self.memory), None)


def _lock_path(store_path: str, space: str) -> str:
    # One lock per store and space: a worker only does its own space's jobs, so a lock
    # shared by all spaces would leave another space's queue waiting behind it. The space
    # is hashed so that any name makes a safe file name.
    import hashlib  # only the worker's lock needs it; keep it off the hook path

    tag = hashlib.blake2b(space.encode("utf-8"), digest_size=6).hexdigest()
    return f"{store_path}.worker-{tag}.lock"


@contextlib.contextmanager
def worker_lock(store_path: str, space: str) -> Iterator[bool]:
    """Hold the worker lock of a store's space if it is free (yields whether it was): one
    background worker per space is enough, and several would only fight over the same jobs."""
    try:
        import fcntl
    except ImportError:  # Windows: no advisory locks here; every worker just works
        yield True
        return
    handle = os.open(_lock_path(store_path, space), os.O_CREAT | os.O_RDWR, 0o644)
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield False
            return
        yield True
    finally:
        os.close(handle)  # closing releases the lock


def drain(memory: Utility) -> list[Job]:
    """Do every queued job of the space as its one background worker (or do nothing if
    another holds the space's lock), and keep polling the space's waits while any is
    watched. Checks again after letting go, so a job queued just as it finished is not left
    waiting for the next write."""
    done: list[Job] = []
    while True:
        with worker_lock(memory.path, memory.space) as mine:
            if not mine:
                return done
            while True:
                done += memory.run_jobs()
                delay = memory._background()
                if delay is None:
                    break
                _nap(memory, delay)
        if memory._store.next_job(memory._now()) is None:
            return done


def _nap(memory: Utility, delay: float) -> None:
    """Sleep until a wait is due, waking each second to see if a job was queued."""
    end = time.monotonic() + max(delay, MIN_NAP)
    while (left := end - time.monotonic()) > 0:
        time.sleep(min(1.0, left))
        if memory._store.next_job(memory._now()) is not None:
            return


_SPAWNED: list[int] = []  # worker processes started here, reaped when they have ended


def _spawn_worker(path: str, space: str) -> None:
    """Start `clew work --background` in a detached process (unless one is working already):
    the process that wrote returns at once. posix_spawn takes a fraction of a millisecond
    and, unlike a helper thread, never makes the writer wait for the GIL."""
    for pid in list(_SPAWNED):
        with contextlib.suppress(ChildProcessError):
            if os.waitpid(pid, os.WNOHANG)[0] == 0:
                continue
        _SPAWNED.remove(pid)
    with worker_lock(path, space) as free:
        if not free:
            return  # the running worker checks for new jobs before it stops
    argv = [sys.executable, "-m", "clew", "--db", path, "--space", space, "work", "--background"]
    env = {**os.environ, "CLEW_WORKER": "off"}
    with contextlib.suppress(OSError):  # if it cannot start, the job waits for the next one
        if not hasattr(os, "posix_spawn"):
            subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=env,
            )
            return
        devnull = os.open(os.devnull, os.O_RDWR)
        try:
            quiet = [(os.POSIX_SPAWN_DUP2, devnull, fd) for fd in (0, 1, 2)]
            _SPAWNED.append(
                os.posix_spawn(sys.executable, argv, env, file_actions=quiet, setsid=True)
            )
        finally:
            os.close(devnull)
