"""The utility model, with a scripted provider: write-time extraction, running summaries,
questions, the cost governor and the job outbox; and the same calls with no model."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

import clew
from clew.errors import ModelUnavailableError
from clew.models import EntryType, JobStatus
from clew.providers import Completion, Message
from tests.conftest import FakeClock


class Scripted:
    """A provider that answers from a script and remembers every prompt."""

    name = "scripted"

    def __init__(self, answers: Sequence[str | Exception] = (), model: str = "scripted-small"):
        self.answers = list(answers)
        self.model = model
        self.prompts: list[list[Message]] = []

    def complete(
        self, messages: Sequence[Message], *, max_tokens: int = 1024, temperature: float = 0.0
    ) -> Completion:
        self.prompts.append(list(messages))
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        used = sum(len(m.content) for m in messages) // 4
        return Completion(answer, used, len(answer) // 4, self.model)


def with_models(
    mem: clew.Memory, small: Scripted | None = None, large: Scripted | None = None, **limits: int
) -> clew.Memory:
    caps = {**(mem.settings.limits or {}), **limits}
    mem.settings = mem.settings._replace(small=small, large=large, limits=caps, worker="off")
    return mem


def finished_step(mem: clew.Memory, clock: FakeClock) -> str:
    """A task whose step 1 ran a failing command, wrote a file, decided something and heard
    an instruction from the user, then completed."""
    task = mem.create_task("Build", ["Compile the service", "Ship it"])
    mem.update_task(task.id, step=1, step_status="active")
    clock.advance(10)
    mem.record_action(
        task.id,
        command="make build",
        exit_code=2,
        stderr="cc -O2 main.c\nmain.c:14: error: 'foo' undeclared\nmake: *** [build] Error 1\n",
        step=1,
    )
    mem.record_action(task.id, command="make build", exit_code=0, step=1)
    mem.record_files(task.id, created=["dist/service"])
    mem.add_message(task.id, "Going with static linking so the image needs no libc.")
    mem.add_message(task.id, "Never push to the prod registry on Fridays.", role="user")
    mem.add_message(task.id, "Build is green.")
    clock.advance(10)
    mem.update_task(task.id, step=1, step_status="completed", message="Step 1 done")
    return task.id


def test_without_a_model_rules_extract_when_a_step_finishes(
    mem: clew.Memory, clock: FakeClock
) -> None:
    task_id = finished_step(mem, clock)
    (job,) = mem.list_jobs(task_id=task_id)
    assert (job.kind, job.status) == ("extract", JobStatus.PENDING)
    assert mem.list_entries(task_id) == []  # nothing on the write path
    (done,) = mem.run_jobs()
    assert done.status is JobStatus.DONE and done.result["source"] == "rules"
    entries = {e.type: e for e in mem.list_entries(task_id)}
    error = entries[EntryType.ERROR]
    assert error.summary.startswith("`make build` failed (exit 2)")
    assert "'foo' undeclared" in error.summary and error.fingerprint
    assert error.sources[0][0] == "action"
    assert entries[EntryType.ARTIFACT].summary == "Wrote dist/service"
    assert entries[EntryType.DECISION].summary == (
        "Going with static linking so the image needs no libc."
    )
    assert entries[EntryType.USER_INSTRUCTION].summary == (
        "Never push to the prod registry on Fridays."
    )
    step1 = mem.get_task(task_id).step(1).id
    assert all(e.subtask_id == step1 for e in entries.values())
    assert mem.run_jobs() == []
    assert mem.verify().ok


def test_reprocessing_is_idempotent_and_a_crash_leaves_the_job(
    mem: clew.Memory, clock: FakeClock
) -> None:
    task_id = finished_step(mem, clock)
    job = mem.jobs._claim()  # a worker claims the job, then dies before finishing
    assert job is not None and job.status is JobStatus.RUNNING
    assert mem.run_jobs() == []  # its lease still holds: nobody else takes it
    clock.advance(11 * 60)  # the lease runs out
    (redone,) = mem.run_jobs()
    assert redone.status is JobStatus.DONE and redone.attempts == 2
    made = len(mem.list_entries(task_id))
    assert made == 4
    mem.jobs._run(job)  # the first worker wakes up and finishes: its claim is stale
    assert len(mem.list_entries(task_id)) == made
    # The agent had already recorded the failure itself: the rules do not repeat it.
    other = mem.create_task("Again", ["one"])
    failed = mem.record_action(other.id, command="pytest", exit_code=1, stderr="E boom", step=1)
    mem.add_entry("error", "pytest failed: boom", task_id=other.id, sources=[("action", failed.id)])
    mem.update_task(other.id, step=1, step_status="completed")
    mem.run_jobs()
    assert [e.summary for e in mem.list_entries(other.id)] == ["pytest failed: boom"]


MODEL_ANSWER = """Here is what I found:
```json
[
  {"type": "decision", "summary": "Link statically", "detail": "no libc in the image",
   "tags": "build, linking", "relevance_to": "2"},
  {"type": "error", "summary": "foo was undeclared in main.c", "tags": ["c"],
   "relevance_to": ["nonsense"]}
]
```
Hope this helps."""


def test_a_model_extracts_with_links_and_its_cost_is_counted(
    mem: clew.Memory, clock: FakeClock
) -> None:
    small = Scripted([MODEL_ANSWER])
    with_models(mem, small)
    task_id = finished_step(mem, clock)
    (done,) = mem.run_jobs()
    assert done.result["source"] == "model" and done.result["model"] == "scripted-small"
    system, user = small.prompts[0]
    assert "memory extraction assistant" in system.content
    assert "$ make build  (exit 2)" in user.content and "'foo' undeclared" in user.content
    assert "Going with static linking" in user.content
    task = mem.get_task(task_id)
    decision, error = sorted(mem.list_entries(task_id), key=lambda e: e.type.value)
    assert decision.tags == ("build", "linking")
    assert decision.relevance_to == (task.step(1).id, task.step(2).id)
    assert error.relevance_to == (task.step(1).id,)  # an unknown step name is dropped
    assert {kind for kind, _ in decision.sources} == {"action", "message"}
    assert error.fingerprint
    usage = mem.usage()
    assert usage.calls == 1 and usage.tokens > 0 and usage.by_task[0][0] == task_id
    # The model's error is not clew's copy of one failed command: clew never resolves it,
    # and only a pass of a command that failed is evidence on it (not of one that passed).
    assert error.origin == "model" and decision.origin == "model"
    mem.record_action(task_id, command="make build", exit_code=0)
    [evidence] = mem.get_entry(error.id).evidence
    assert mem.get_entry(error.id).status.value == "active" and evidence.command == "make build"
    mem.add_message(task_id, "Going with static linking.")
    mem.record_action(task_id, command="ls dist", exit_code=0)
    assert len(mem.get_entry(error.id).evidence) == 1


@pytest.mark.parametrize(
    "answer",
    [
        "I could not find anything worth remembering.",
        '[{"type": "opinion", "summary": "x"}]',
        '[{"type": "decision", "summary": ""}]',
        '{"unrelated": true}',
        "[1, 2, 3]",
    ],
)
def test_a_malformed_answer_is_kept_verbatim_and_stores_nothing_of_it(
    mem: clew.Memory, clock: FakeClock, answer: str
) -> None:
    with_models(mem, Scripted([answer]))
    task_id = finished_step(mem, clock)
    (done,) = mem.run_jobs()
    assert done.status is JobStatus.DONE and done.result["source"] == "rules"
    assert "refused" in done.result["note"]
    (rejected,) = [e for e in mem.journal() if e.type == "model.output_rejected"]
    assert rejected.data["raw"] == answer
    # The rules still ran; nothing came from the model's answer.
    assert len(mem.list_entries(task_id)) == 4


def test_a_failing_model_falls_back_to_rules(mem: clew.Memory, clock: FakeClock) -> None:
    with_models(mem, Scripted([ModelUnavailableError("timed out")]))
    task_id = finished_step(mem, clock)
    (done,) = mem.run_jobs()
    assert done.result["source"] == "rules" and "timed out" in done.result["note"]
    assert len(mem.list_entries(task_id)) == 4
    (call,) = mem._store.model_calls()
    assert not call.ok and call.error == "timed out"


def test_the_cost_governor_caps_calls_per_task(mem: clew.Memory, clock: FakeClock) -> None:
    small = Scripted([MODEL_ANSWER, MODEL_ANSWER])
    with_models(mem, small, calls_per_task=1)
    task_id = finished_step(mem, clock)
    mem.run_jobs()
    mem.update_task(task_id, step=2, step_status="completed")
    (second, _) = mem.run_jobs(), None
    assert "calls per task cap (1) is reached" in second[0].result["note"]
    assert len(small.prompts) == 1
    answer = mem.ask(task_id, "what failed?")
    assert answer.source == "rules" and "cap" in (answer.note or "")


def test_running_summaries_every_n_messages(mem: clew.Memory) -> None:
    small = Scripted(["Steps 1-2 done; on step 3; key: v1.2.3."])
    with_models(mem, small)
    mem.settings = mem.settings._replace(summary_every=3)
    task = mem.create_task("T", ["a", "b", "c"])
    for n in range(4):
        mem.add_message(task.id, f"update {n} with v1.2.{n}")
    assert [j.kind for j in mem.list_jobs()] == ["summarize"]  # after the 3rd message only
    mem.run_jobs()
    summary = mem.running_summary(task.id)
    assert summary.source == "model" and summary.message_count == 4  # all, when it ran
    assert summary.text.startswith("Steps 1-2 done")
    assert "update 2 with v1.2.2" in small.prompts[0][0].content


def test_without_a_model_the_summary_comes_from_the_records(
    mem: clew.Memory, clock: FakeClock
) -> None:
    task_id = finished_step(mem, clock)
    mem.add_message(task_id, "deployed v1.4.2 to https://staging.example.com/app")
    assert mem.list_jobs(status="pending")[0].kind == "extract"  # no summary job without a model
    summary = mem.running_summary(task_id)
    assert summary.source == "rules"
    assert "Completed steps 1 of 2." in summary.text and "Step 2 (Ship it) is next." in summary.text
    assert "v1.4.2" in summary.text and "https://staging.example.com/app" in summary.text


@pytest.mark.search
def test_questions_without_a_model(mem: clew.Memory, clock: FakeClock) -> None:
    task_id = finished_step(mem, clock)
    mem.run_jobs()
    where = mem.ask(task_id, "where was I?")
    assert where.source == "rules" and where.note == "no model is configured"
    assert where.text.startswith("Task 'Build'") and "next up is step 2" in where.text
    nxt = mem.ask(task_id, "what is left to do?")
    assert nxt.text.splitlines() == ["No step is in progress; next up is step 2 — Ship it."]
    failed = mem.ask(task_id, "what failed?")
    # The failing `make build` ran again and passed: nothing is open, and the answer says
    # where the resolved error is.
    assert failed.text.startswith("No open errors or unfixed failures")
    [error] = mem.list_entries(task_id, type="error")
    assert error.status.value == "resolved" and "--type error" in failed.text
    other = mem.ask(task_id, "static linking")
    assert other.source == "search" and "decision" in other.text


def test_questions_are_routed_by_complexity(mem: clew.Memory, clock: FakeClock) -> None:
    small = Scripted(["You are on step 2."])
    large = Scripted(["Keep the plan; add a smoke test."], model="scripted-large")
    with_models(mem, small, large)
    task_id = finished_step(mem, clock)
    simple = mem.ask(task_id, "what step am I on?")
    assert (simple.source, simple.model, simple.text) == (
        "model",
        "scripted-small",
        "You are on step 2.",
    )
    hard = mem.ask(task_id, "should I change the plan?")
    assert hard.model == "scripted-large"
    prompt = large.prompts[0][0].content
    assert (
        "Question: should I change the plan?" in prompt and "Recent updates since summary" in prompt
    )
    assert "Step 1 done" in prompt
    with_models(mem, Scripted([ModelUnavailableError("down")]))
    fallback = mem.ask(task_id, "where was I?")
    assert fallback.source == "rules" and "down" in (fallback.note or "")


def test_a_thread_does_the_jobs_after_the_write(tmp_path: Path, clock: FakeClock) -> None:
    with clew.open(tmp_path / "t.db", clock=clock) as mem:
        mem.settings = mem.settings._replace(worker="thread")
        task_id = finished_step(mem, clock)
        deadline = time.monotonic() + 10
        while mem.list_jobs(status="pending") and time.monotonic() < deadline:
            time.sleep(0.02)
        deadline = time.monotonic() + 10
        while len(mem.list_entries(task_id)) < 4 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(mem.list_entries(task_id)) == 4


def test_the_cli_hands_jobs_to_a_detached_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import subprocess
    import sys

    db = tmp_path / "cli.db"
    env = {k: v for k, v in __import__("os").environ.items() if k != "CLEW_WORKER"}

    def clew_cli(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "clew", "--db", str(db), *args],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout.strip()

    task_id = clew_cli("task", "new", "T", "--plan", "a")
    clew_cli(
        "task", "action", task_id, "-c", "make", "--exit-code", "1", "--stderr", "E1", "--step", "1"
    )
    clew_cli("task", "update", task_id, "--step", "1", "--step-status", "completed")
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        jobs = json.loads(clew_cli("jobs", "--json"))
        if jobs and jobs[0]["status"] == "done":
            break
        time.sleep(0.1)
    assert jobs[0]["status"] == "done"
    assert "`make` failed" in clew_cli("entries", "--task", task_id)


def test_a_job_in_one_space_is_done_while_another_spaces_worker_holds_its_lock(
    tmp_path: Path,
) -> None:
    import os
    import subprocess
    import sys

    from clew.jobs.worker import worker_lock

    db = tmp_path / "spaces.db"
    env = {k: v for k, v in os.environ.items() if k != "CLEW_WORKER"}

    def clew_cli(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "clew", "--db", str(db), "--space", "mine", *args],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout.strip()

    task_id = clew_cli("task", "new", "T", "--plan", "a")
    # A worker of space "other" is busy (it holds its lock, as `clew work --background`
    # does) the whole time: the job queued in space "mine" must not wait for it.
    with worker_lock(str(db), "other") as held:
        assert held
        clew_cli(
            "task",
            "action",
            task_id,
            "-c",
            "make",
            "--exit-code",
            "1",
            "--stderr",
            "E1",
            "--step",
            "1",
        )
        clew_cli("task", "update", task_id, "--step", "1", "--step-status", "completed")
        deadline = time.monotonic() + 30  # generous: only a hang fails, never slowness
        while time.monotonic() < deadline:
            jobs = json.loads(clew_cli("jobs", "--json"))
            if jobs and jobs[0]["status"] == "done":
                break
            time.sleep(0.1)
        assert jobs[0]["status"] == "done"
