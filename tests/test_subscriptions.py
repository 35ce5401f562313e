"""Side effects are subscriptions: reactions inside the write, after-commit subscribers in a
documented order with failures isolated from the write, and jobs done by the handler
registered for their kind (so a new kind needs no edit of the worker)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

import clew
from clew.kernel import Committed, _registry, after_commit, handles_job, reacts
from clew.memory import Memory
from clew.models import Job, JobStatus


def _queue(mem: clew.Memory, kind: str, task_id: str) -> None:
    with mem._write() as at:  # type: ignore[attr-defined]
        mem.jobs._enqueue(kind, task_id, None, at)


def test_an_added_job_kind_runs_through_the_worker(mem: clew.Memory) -> None:
    task = mem.create_task("index", ["a"])
    seen: list[Job] = []
    mem._register_job("embed", seen.append)  # type: ignore[attr-defined]
    _queue(mem, "embed", task.id)
    (done,) = mem.run_jobs()
    assert (done.kind, done.status) == ("embed", JobStatus.DONE)
    assert [j.id for j in seen] == [done.id]
    assert mem.verify().ok


def test_a_job_kind_nobody_handles_fails_with_its_name(mem: clew.Memory) -> None:
    task = mem.create_task("index", ["a"])
    _queue(mem, "embed", task.id)
    (job,) = mem.run_jobs(limit=1)
    assert job.status is JobStatus.PENDING  # retried later, up to its attempts
    assert "unknown job kind 'embed'" in (job.error or "")


class _Vectors(Memory):
    """A capability as a later layer adds one: methods with marks, no other edit."""

    embedded: list[str]
    committed: list[Committed]

    @handles_job("embed")
    def _embed(self, job: Job) -> None:
        self.embedded.append(job.task_id or "")

    @reacts("step.finished")
    def _queue_embedding(self, task_id: str, step_id: str, status: Any, at: str) -> None:
        self.jobs._enqueue("embed", task_id, step_id, at)

    @after_commit(30)
    def _note(self, done: Committed) -> None:
        self.committed.append(done)


def test_a_capability_registers_by_marks(mem: clew.Memory) -> None:
    vectors = _Vectors(mem._store, settings=mem.settings)  # type: ignore[attr-defined]
    vectors.embedded, vectors.committed = [], []
    assert _registry(_Vectors).commits == ("_note",)
    # With the services' marks, in one order: layer 1's mirror first (10), the jobs
    # service's wake (20), the note last.
    order = [sub.__name__ for sub in vectors._subscribers]  # type: ignore[attr-defined]
    assert order == ["_refresh_mirrors", "_wake_worker", "_note"]
    task = vectors.create_task("t", ["a"])
    vectors.update_task(task.id, step=1, step_status="completed")
    kinds = sorted(j.kind for j in vectors.list_jobs())
    assert kinds == ["embed", "extract"]  # the reaction's job, queued in the same write
    last = vectors.committed[-1]
    assert last.tasks == (task.id,) and "step.updated" in last.types and last.jobs == 2
    vectors.run_jobs()
    assert vectors.embedded == [task.id]


def test_a_failing_subscriber_never_loses_the_write(
    mem: clew.Memory, caplog: pytest.LogCaptureFixture
) -> None:
    calls: list[str] = []

    def broken(done: Committed) -> None:
        raise RuntimeError("subscriber bug")

    mem._subscribe(broken)  # type: ignore[attr-defined]
    mem._subscribe(lambda done: calls.extend(done.tasks))  # type: ignore[attr-defined]
    with caplog.at_level(logging.ERROR, logger="clew"):
        task = mem.create_task("kept", ["a"])  # returns: the write committed
    assert mem.get_task(task.id).name == "kept"
    assert calls == [task.id]  # the next subscriber still ran
    assert mem.subscriber_failures == 1  # type: ignore[attr-defined]
    assert "broken" in caplog.text and "subscriber bug" in caplog.text
    assert mem.verify().ok


def test_a_failing_reaction_fails_its_write_whole(mem: clew.Memory) -> None:
    task = mem.create_task("t", ["a"])

    def refuse(*args: object) -> None:
        raise clew.ValidationError("not now")

    mem._reactions.setdefault("step.finished", []).append(refuse)  # type: ignore[attr-defined]
    with pytest.raises(clew.ValidationError, match="not now"):
        mem.update_task(task.id, step=1, step_status="completed")
    assert mem.get_task(task.id).plan[0].status.value == "pending"
    assert mem.list_jobs() == []
