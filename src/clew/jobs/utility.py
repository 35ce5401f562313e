"""The utility model, a service of the Memory facade: write-time extraction, running
summaries and live questions, each with a no-model path. Their work is queued jobs (the
jobs service, jobs.py), done by the handlers registered here for their kinds; the model is
routed and capped by the governor (governor.py). A model that is slow, fails, answers
nonsense or is over its caps never loses anything: the deterministic rules answer instead,
and the reason is recorded.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from clew.archive.entries import Archive, action_hit, entry_hit
from clew.core import checks
from clew.core.ids import new_id
from clew.errors import ModelError, ValidationError
from clew.jobs.governor import Governor, Usage
from clew.jobs.outbox import Jobs
from clew.kernel import Kernel, Service, handles_job
from clew.models import (
    EntryFilter,
    Job,
    RecordHit,
    RunningSummary,
    Task,
)
from clew.providers import Message
from clew.search.retrieval import Retrieval
from clew.state.working import Working

if TYPE_CHECKING:
    from clew.archive.extraction import Draft
    from clew.state import summaries
    from clew.state.summaries import Answer

MAX_SOURCES = 20
SUMMARY_MESSAGES = 200  # the newest messages a running summary reads
RECENT_MESSAGES = 50  # messages since the summary that a question reads
ANSWER_HITS = 3  # records an answer from the records shows

__all__ = ["Usage", "Utility"]


class Utility(Service):
    """The utility model's calls (a service of Memory): its job handlers finish their jobs
    through the jobs service; a question without a model is answered from layer 1's brief
    and the archive's records, found by retrieval."""

    def __init__(
        self,
        kernel: Kernel,
        jobs: Jobs,
        working: Working,
        archive: Archive,
        retrieval: Retrieval,
        governor: Governor,
    ) -> None:
        super().__init__(kernel)
        self.jobs = jobs  # a handler's results and job.done, written by the outbox
        self.working = working  # layer 1: "where was I?" answers a question on rules alone
        self.archive = archive  # the newest records of a kind, when search finds none
        self.retrieval = retrieval  # the records a question is about
        self.governor = governor  # routes each model call, caps it and records it

    # -- extraction -----------------------------------------------------------------------

    @handles_job("extract")
    def _extract(self, job: Job) -> None:
        from clew.archive import extraction
        from clew.archive.extraction import ExtractionError
        from clew.state import summaries  # lazily: not on the hook path

        if job.step_id is None:
            raise ValidationError("an extraction job needs a step")
        with self._store.transaction():
            task = self._store.get_task(job.task_id)
            plan = self._store.get_plan(job.task_id, include_removed=True)
            step = next(s for s in plan if s.id == job.step_id)
            actions = self._store.list_actions(job.task_id, plan_item_id=step.id)
            start, end = step.started_at or step.created_at, step.completed_at or job.created_at
            messages = [
                m
                for m in self._store.list_messages(job.task_id, limit=500)
                if start <= m.created_at <= end
            ]
            events = self._store.list_events(task_id=job.task_id, types=("task.files_changed",))
            existing = self._store.list_entries(EntryFilter(task_id=job.task_id))
        files = [f["path"] for e in events if start <= e.created_at <= end for f in e.data["files"]]
        drafts = extraction.rules(step, actions, messages, files)
        result: dict[str, Any] = {"source": "rules"}
        model = self.governor._model_for("extract")
        refusal = None if model is None else self.governor._refusal(job.task_id)
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
                answer = self.governor._call(model, "extract", job.task_id, prompt)
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
        self.jobs._finish(job, _new_only(drafts, existing), result)

    # -- running summaries and questions --------------------------------------------------

    @handles_job("summarize")
    def _summarize(self, job: Job) -> None:
        from clew.state import summaries  # lazily: not on the hook path

        model = self.governor._model_for("summarize")
        with self._store.transaction():
            task = self._store.get_task(job.task_id)
            messages = self._store.list_messages(job.task_id, limit=SUMMARY_MESSAGES)
            count = self._store.count_messages(job.task_id)
        result: dict[str, Any] = {"source": "none"}
        summary = None
        refusal = "no model is configured" if model is None else self.governor._refusal(job.task_id)
        if model is not None and refusal is None:
            try:
                prompt = summaries.summary_prompt(task, messages)
                answer = self.governor._call(model, "summarize", job.task_id, prompt)
            except ModelError as exc:
                refusal = f"the model failed: {exc}"
            else:
                refined = summaries.split_summary(answer.text)
                summary = {
                    "id": new_id(),
                    "text": refined.text,
                    "message_count": count,
                    "source": "model",
                    "model": answer.model,
                }
                result = {"source": "model", "model": answer.model}
        if refusal is not None:
            result["note"] = refusal
        if summary is not None and summary["text"]:
            with self._write() as at:
                if self.jobs._still_mine(job):
                    self._emit("summary.recorded", job.task_id, {"summary": summary}, at)
                    self._refine(job, task, refined, str(summary["model"]), at)
        self.jobs._finish(job, [], result)

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
        from clew.state import summaries  # lazily: not on the hook path

        tid = self._task_id(task_id)
        found = self._store.latest_summary(tid)
        if found is not None:
            return found
        task = self._store.get_task(tid)
        brief = self.working.where(tid)
        messages = self._store.list_messages(tid, limit=SUMMARY_MESSAGES)
        text = summaries.rules_summary(task, brief, messages)
        count = self._store.count_messages(tid)
        return RunningSummary("", self.space, tid, text, count, "rules", None, self._now())

    def ask(self, task_id: str, question: str) -> Answer:
        """Answer a free question about a task: "where was I?", "what failed?", "should I
        change the plan?". With a model, from the running summary and the messages since
        (simple questions to the small model, complex ones to the large one if configured);
        without one, or if it fails or is over a cap, from the records, saying why."""
        from clew.state import summaries  # lazily: not on the hook path
        from clew.state.summaries import Answer

        tid = self._task_id(task_id)
        text = checks.text(question, "question", max_chars=4000)
        model = self.governor._model_for("ask", text)
        note = "no model is configured" if model is None else self.governor._refusal(tid)
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
                answer = self.governor._call(model, "ask", tid, prompt)
            except ModelError as exc:
                note = f"the model failed: {exc}"
            else:
                return Answer(answer.text.strip(), "model", answer.model)
        return self._answer_from_records(tid, text, note or "")

    def _answer_from_records(self, tid: str, question: str, note: str) -> Answer:
        """Answer without a model: from the brief for where / next / what failed, else with
        the best records of the kinds the question is about, found by search (then any kind,
        then the newest of its kind)."""
        from clew.state import summaries  # lazily: not on the hook path

        found = summaries.intent(question)
        if found.name == "brief":
            return summaries.rules_answer(question, self.working.where(tid), note)
        words = summaries.search_words(question)
        hits = self._find(words, found, tid)
        exact = bool(hits)
        if not hits and found is not summaries.GENERAL:
            hits = self._find(words, summaries.GENERAL, tid)
            if not hits:
                hits = self._newest(found, tid)
        if not hits and found is summaries.GENERAL:
            return summaries.rules_answer(question, self.working.where(tid), note)
        from clew.search.ranking import asks_for_history

        hits, only_history = _current(hits)
        if only_history and not asks_for_history(question):
            said = "only superseded or resolved records match: this is history"
            note = f"{note}; {said}" if note else said
        entries = {h.id: self._store.get_entry(h.id) for h in hits if h.kind == "entry"}
        return summaries.records_answer(found, words, hits, entries, note, exact=exact)

    def _find(self, words: str, found: summaries.Intent, tid: str) -> list[RecordHit]:
        if not words or not found.kinds:
            return []
        try:
            return self.retrieval.search_all(
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
                for e in self.archive.list_entries(
                    tid, type=found.types, status=status, limit=ANSWER_HITS
                )
            ]
        if "action" in found.kinds:
            return [action_hit(a) for a in self._store.list_actions(tid, limit=ANSWER_HITS)]
        return []


def _current(hits: Sequence[RecordHit]) -> tuple[list[RecordHit], bool]:
    """The hits an answer is made from: the current ones when any is (a superseded
    decision or a resolved error is not what holds now), else the history, saying so."""
    from clew.search.ranking import is_history

    now = [h for h in hits if not is_history(h)]
    return (now, False) if now else (list(hits), bool(hits))


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
