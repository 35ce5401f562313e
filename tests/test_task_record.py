"""The complete task record (seed 003, seed 002): every field set through the API comes
back through the record, the state, the brief, `task show` (text and JSON), the tools and
the mirror; the phase follows the status through one state machine, with timestamps from
the injectable clock; entities are extracted precisely from realistic records."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

import clew
from clew.models import Phase, PlanSource, Priority
from clew.tasks.entities import extract
from clew.tasks.record import estimate, format_duration
from clew.tools import registry as tools
from tests.conftest import FakeClock, Result

Cli = Callable[..., Result]
T0 = "2026-11-22T09:00:00.000000Z"


def stamp(clock: FakeClock) -> str:
    return clock.now.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def full_record(mem: clew.Memory) -> str:
    """A deploy task with every record field set, through the API."""
    task = mem.create_task(
        "Deploy coursefolio",
        ["Build image", "Push image", "Run container"],
        goal="coursefolio runs on prod-1",
        domain="infra",
        priority="high",
        estimate="1h30m",
    )
    mem.update_task(
        task.id,
        step=1,
        step_status="completed",
        step_agent="builder",
        step_outcome="success",
        step_artifacts=["ghcr.io/acme/coursefolio:v1.4.0", "dist/coursefolio.tar.gz"],
    )
    mem.update_task(task.id, step=3, depends_on=[1, 2])
    mem.update_task(
        task.id,
        answer="coursefolio v1.4.0 runs on prod-1 behind nginx",
        outcome="success",
        confidence=0.85,
        entities={"services": ["coursefolio"]},
    )
    return task.id


def test_every_field_round_trips_through_the_record(mem: clew.Memory) -> None:
    tid = full_record(mem)
    rec = mem.task_record(tid)
    steps = mem.get_task(tid).plan
    assert (rec.domain, rec.priority, rec.estimate_seconds) == ("infra", Priority.HIGH, 5400.0)
    assert rec.plan_source is PlanSource.AGENT  # a plan given at creation is the agent's
    assert (rec.answer, rec.outcome, rec.confidence) == (
        "coursefolio v1.4.0 runs on prod-1 behind nginx",
        "success",
        0.85,
    )
    first = rec.steps[steps[0].id]
    assert (first.agent, first.outcome) == ("builder", "success")
    assert first.artifacts == ("ghcr.io/acme/coursefolio:v1.4.0", "dist/coursefolio.tar.gz")
    assert steps[2].depends_on == (steps[0].id, steps[1].id)
    assert rec.entities["services"] == ("coursefolio",)  # given ones come first
    assert mem.verify().ok


@pytest.mark.sqlite_only("the file mirror lives beside a SQLite store")
def test_the_record_is_in_the_state_brief_show_json_tools_and_mirror(
    tmp_path: Path, clock: FakeClock, cli: Cli, db: Path
) -> None:
    with clew.open(db, clock=clock, mirror=True) as mem:
        tid = full_record(mem)
        state = yaml.safe_load(mem.state(tid).text)
        brief = mem.where(tid)
        via_tool = tools.call(mem, "task_state", {"task_id": tid})
    head = state["task"]
    assert (head["phase"], head["domain"], head["priority"], head["estimate"]) == (
        "executing",
        "infra",
        "high",
        "1h30m",
    )
    assert head["confidence"] == 0.85 and head["plan_source"] == "agent"
    assert state["timestamps"]["created"] == "2026-11-22T09:00Z"
    assert state["outcome"] == "success"
    assert state["final_answer"].startswith("coursefolio v1.4.0 runs")
    assert state["subtasks"][0]["agent"] == "builder"
    assert state["subtasks"][0]["artifacts"][0] == "ghcr.io/acme/coursefolio:v1.4.0"
    assert state["subtasks"][2]["depends_on"] == [1, 2]
    assert state["identified_entities"]["services"] == ["coursefolio"]
    assert "Record: phase executing, priority high, domain infra" in brief.text
    assert "Outcome: success" in brief.text and brief.phase == "executing"
    assert via_tool.data["record"]["answer"].startswith("coursefolio v1.4.0")
    assert "final_answer" in via_tool.text
    mirrored = yaml.safe_load((db.parent / "tasks" / tid / "state.yaml").read_text())
    assert mirrored["final_answer"] == state["final_answer"]
    shown = cli("task", "show", tid)
    assert "phase: executing   priority: high   domain: infra   estimate: 1h30m" in shown.out
    assert "agent builder; outcome success; artifacts ghcr.io/acme/coursefolio:v1.4.0" in shown.out
    assert "final answer: coursefolio v1.4.0 runs on prod-1 behind nginx" in shown.out
    as_json = json.loads(cli("task", "show", tid, "--json").out)["record"]
    assert as_json["priority"] == "high" and as_json["estimate_seconds"] == 5400.0
    assert [s["agent"] for s in as_json["steps"].values()] == ["builder"]


def test_the_cli_and_the_tools_set_every_field(cli: Cli, mem: clew.Memory) -> None:
    made = cli(
        "task",
        "new",
        "Migrate",
        "--plan",
        "Dump",
        "Load",
        "--domain",
        "db",
        "--priority",
        "critical",
        "--estimate",
        "2h",
        "--plan-source",
        "user",
    )
    tid = made.out.strip()
    step_one = ("--step", "1", "--step-status", "completed", "--agent", "dba")
    assert (
        cli("task", "update", tid, *step_one, "--outcome", "success", "--artifact", "dump.sql").code
        == 0
    )
    assert cli("task", "update", tid, "--step", "2", "--depends-on", "1").code == 0
    assert (
        cli(
            "task",
            "update",
            tid,
            "--outcome",
            "partial",
            "--answer",
            "half loaded",
            "--confidence",
            "0.4",
            "--error-summary",
            "disk full",
            "--failed-step",
            "2",
            "--status",
            "failed",
        ).code
        == 0
    )
    rec = mem.task_record(tid)
    plan = mem.get_task(tid).plan
    assert (rec.domain, rec.priority, rec.estimate_seconds, rec.plan_source) == (
        "db",
        Priority.CRITICAL,
        7200.0,
        PlanSource.USER,
    )
    assert (rec.outcome, rec.answer, rec.confidence) == ("partial", "half loaded", 0.4)
    assert (rec.error_reason, rec.error_step_id) == ("disk full", plan[1].id)
    assert rec.steps[plan[0].id].outcome == "success" and rec.steps[plan[0].id].agent == "dba"
    assert plan[1].depends_on == (plan[0].id,)
    assert rec.phase is Phase.FAILED_EXECUTION
    made = tools.call(
        mem,
        "task_register",
        {
            "name": "Research",
            "plan": ["Read", "Write"],
            "domain": "docs",
            "priority": "low",
            "estimate": 900,
            "plan_source": "template",
        },
    )
    rid = made.data["task_id"]
    done = tools.call(
        mem,
        "task_update",
        {
            "task_id": rid,
            "step": 1,
            "step_status": "completed",
            "step_agent": "reader",
            "step_outcome": "ok",
            "step_artifacts": ["notes.md"],
            "confidence": 0.7,
            "answer": "42",
            "outcome": "success",
            "entities": {"papers": ["arXiv:1706.03762"]},
        },
    )
    assert not done.is_error, done.text
    tools.call(mem, "task_update", {"task_id": rid, "step": 2, "depends_on": [1]})
    r = mem.task_record(rid)
    assert (r.domain, r.priority, r.estimate_seconds, r.plan_source) == (
        "docs",
        Priority.LOW,
        900.0,
        PlanSource.TEMPLATE,
    )
    assert (r.answer, r.outcome, r.confidence) == ("42", "success", 0.7)
    assert r.entities["papers"] == ("arXiv:1706.03762",)
    assert mem.get_task(rid).plan[1].depends_on == (mem.get_task(rid).plan[0].id,)
    bad = tools.call(mem, "task_update", {"task_id": rid, "confidence": 1.5})
    assert bad.is_error and "confidence" in bad.text
    assert mem.verify().ok


# -- one state machine: the phase follows the status and the plan ------------------------------


def test_the_phase_and_its_timestamps_follow_the_work(mem: clew.Memory, clock: FakeClock) -> None:
    task = mem.create_task("Plan later")
    assert mem.task_record(task.id).phase is Phase.RECEIVED
    clock.advance(60)
    mem.replan(task.id, [clew.AddStep("a"), clew.AddStep("b")])
    planned = stamp(clock)
    rec = mem.task_record(task.id)
    assert (rec.phase, rec.plan_generated_at, rec.created_at) == (Phase.PLANNED, planned, T0)
    clock.advance(60)
    mem.update_task(task.id, step=1, step_status="active")
    started = stamp(clock)
    assert mem.task_record(task.id).phase is Phase.EXECUTING
    clock.advance(60)
    mem.update_task(task.id, step=1, step_status="completed")
    mem.update_task(task.id, step=2, step_status="skipped")
    synthesis = stamp(clock)
    rec = mem.task_record(task.id)
    assert rec.phase is Phase.SYNTHESIZING and rec.synthesis_started_at == synthesis
    clock.advance(60)
    mem.replan(task.id, [clew.AddStep("c")])  # more work: synthesis is over
    assert mem.task_record(task.id).phase is Phase.EXECUTING
    assert mem.task_record(task.id).synthesis_started_at is None
    mem.update_task(task.id, step=3, step_status="completed")
    resynthesis = stamp(clock)
    clock.advance(60)
    mem.update_task(task.id, status="completed")
    rec = mem.task_record(task.id)
    assert rec.phase is Phase.COMPLETED
    assert (rec.plan_generated_at, rec.execution_started_at) == (planned, started)
    assert (rec.synthesis_started_at, rec.completed_at) == (resynthesis, stamp(clock))
    mem.update_task(task.id, status="active")  # reopened: one machine, the status
    assert mem.task_record(task.id).phase is Phase.SYNTHESIZING
    assert mem.verify().ok


@pytest.mark.parametrize(
    ("work", "phase"),
    [
        ([], Phase.FAILED_PLANNING),
        ([("step", 1, "active")], Phase.FAILED_EXECUTION),
        ([("action",)], Phase.FAILED_EXECUTION),
        ([("step", 1, "completed"), ("step", 2, "completed")], Phase.FAILED_SYNTHESIS),
    ],
    ids=["no plan", "a step begun", "a command run", "every step done"],
)
def test_a_failed_task_fails_in_the_phase_it_was_in(
    mem: clew.Memory, work: list[tuple[Any, ...]], phase: Phase
) -> None:
    task = mem.create_task("T", ["a", "b"] if work else [])
    for item in work:
        if item[0] == "step":
            mem.update_task(task.id, step=item[1], step_status=item[2])
        else:
            mem.record_action(task.id, command="make", exit_code=0)
    mem.update_task(task.id, status="failed")
    assert mem.task_record(task.id).phase is phase


def test_paused_and_cancelled_are_phases_of_their_own(mem: clew.Memory) -> None:
    task = mem.create_task("T", ["a"])
    mem.update_task(task.id, status="paused")
    assert mem.task_record(task.id).phase is Phase.PAUSED
    mem.update_task(task.id, status="cancelled")
    assert mem.task_record(task.id).phase is Phase.CANCELLED


def test_phase_timestamps_replay_exactly(mem: clew.Memory, clock: FakeClock) -> None:
    task = mem.create_task("T", ["a", "b"])
    for step, status in ((1, "active"), (1, "completed"), (2, "completed"), (2, "pending")):
        clock.advance(30)
        mem.update_task(task.id, step=step, step_status=status)
    clock.advance(30)
    mem.record_action(task.id, command="true", exit_code=0)
    report = mem.verify()
    assert report.ok, report.differences
    assert report.rows["task_records"] == 1


# -- the error summary -------------------------------------------------------------------------


def test_a_failed_tasks_error_summary_comes_from_its_records(mem: clew.Memory) -> None:
    task = mem.create_task("Deploy", ["Build", "Push"])
    mem.update_task(task.id, step=1, step_status="completed")
    mem.update_task(task.id, step=2, step_status="failed")
    mem.record_action(
        task.id,
        command="docker push ghcr.io/acme/app:v2",
        exit_code=1,
        step=2,
        stderr="denied: permission_denied: write_package",
    )
    mem.update_task(task.id, status="failed")
    rec = mem.task_record(task.id)
    assert rec.error_reason == (
        "docker push ghcr.io/acme/app:v2 exited 1: denied: permission_denied: write_package"
    )
    assert rec.error_step_id == task.plan[1].id
    mem.add_error(task.id, "the token lacks write:packages", step=2)
    assert mem.task_record(task.id).error_reason == "the token lacks write:packages"
    mem.set_task_record(task.id, error="no registry credentials on the runner")
    assert mem.task_record(task.id).error_reason == "no registry credentials on the runner"
    assert yaml.safe_load(mem.state(task.id).text)["error_summary"] == {
        "reason": "no registry credentials on the runner",
        "failed_step": 2,
    }
    assert "Failed (step 2): no registry credentials" in mem.where(task.id).text


def test_an_active_task_has_no_derived_error_summary(mem: clew.Memory) -> None:
    task = mem.create_task("T", ["a"])
    mem.record_action(task.id, command="make", exit_code=2, stderr="boom")
    assert mem.task_record(task.id).error_reason is None


# -- identified entities -----------------------------------------------------------------------


def test_entities_are_extracted_precisely_from_realistic_records(mem: clew.Memory) -> None:
    task = mem.create_task(
        "Deploy coursefolio",
        ["Build", "Push", "Restart"],
        goal="coursefolio v1.4.0 live on prod-1.example.com",
    )
    commands = [
        "docker build -t ghcr.io/acme/coursefolio:v1.4.0 .",
        "docker push ghcr.io/acme/coursefolio:v1.4.0",
        "ssh deploy@prod-1.example.com 'sudo systemctl restart nginx'",
        "kubectl rollout restart deployment/coursefolio-api -n prod",
        "docker run -d -p 8080:80 --name web -e MODE=prod ghcr.io/acme/coursefolio:v1.4.0",
        "curl -fsS https://coursefolio.example.com/healthz",
        "pytest tests/test_auth.py -x -q",
        "git commit -am 'fix the and/or typo, see OPS-311'",
    ]
    for c in commands:
        mem.record_action(task.id, command=c, exit_code=0, stdout="a lot of output with words")
    mem.add_message(task.id, "Step 1 done. The user says use port 8080 and call 10.0.4.17 first.")
    mem.add_decision(task.id, "Going with nginx in front, per PR #88")
    mem.record_files(task.id, created=["deploy/nginx.conf"], modified=["src/app/settings.py"])
    found = {k: set(v) for k, v in mem.task_record(task.id).entities.items()}
    assert found == {
        "files": {"deploy/nginx.conf", "src/app/settings.py", "tests/test_auth.py"},
        "urls": {"https://coursefolio.example.com/healthz"},
        "hosts": {"ghcr.io", "prod-1.example.com", "coursefolio.example.com", "10.0.4.17"},
        "services": {"nginx", "coursefolio-api"},
        "images": {"ghcr.io/acme/coursefolio:v1.4.0"},
        "versions": {"v1.4.0"},
        "tickets": {"OPS-311", "#88"},
    }
    # The most used first: the image was built, pushed and run.
    assert mem.task_record(task.id).entities["hosts"][0] == "ghcr.io"


def test_plain_prose_yields_no_entities() -> None:
    prose = [
        "Step 2 done, finished pushing the image and/or tagging it.",
        "We decided to go with bcrypt, e.g. cost 12; it took 3/4 of the time (12.5 seconds).",
        "Use UTF-8 and TLS-1 nowhere; ISO-8601 dates only. Done: yes/no.",
    ]
    assert extract(texts=prose) == {}


def test_a_models_or_agents_entities_come_first_and_merge(mem: clew.Memory) -> None:
    task = mem.create_task("T")
    mem.record_action(task.id, command="systemctl restart redis", exit_code=0)
    mem.set_task_record(task.id, entities={"services": ["payments"]}, source="model")
    mem.set_task_record(task.id, entities={"Services": ["payments", "ledger"]})
    assert mem.task_record(task.id).entities == {"services": ("payments", "ledger", "redis")}
    history = [e for e in mem.journal(task_id=task.id) if e.type == "task.record_set"]
    assert [e.data["source"] for e in history] == ["model", "agent"]


# -- estimates ----------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 366 * 86400))
def test_an_estimate_said_briefly_reads_back_to_its_minutes(seconds: int) -> None:
    said = format_duration(seconds)
    back = estimate(said)
    assert back is not None and 0 < back <= seconds
    # Two units at most: whatever is cut is below the second unit shown.
    assert seconds - back < 86400


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("90s", 90),
        ("30m", 1800),
        ("1h30m", 5400),
        ("2 days", 172800),
        ("1.5h", 5400),
        (45, 45),
        (0.5, 0.5),
        ("1w", 604800),
    ],
)
def test_estimates_read_as_durations(text: object, seconds: float) -> None:
    assert estimate(text) == seconds


def test_a_configured_model_names_entities_through_its_extraction(
    mem: clew.Memory, clock: FakeClock
) -> None:
    from tests.test_utility import Scripted, finished_step, with_models

    answer = json.dumps(
        {
            "entries": [{"type": "discovery", "summary": "the build links statically"}],
            "entities": {"services": ["billing-api"], "people": ["Dana"], "bad kind!": ["x"]},
        }
    )
    broken = json.dumps({"entries": [], "entities": {"!!": ["x"]}})
    with_models(mem, Scripted([answer, broken]))
    task_id = finished_step(mem, clock)
    (done,) = mem.run_jobs()
    assert done.result["source"] == "model" and "entities" not in done.result
    found = mem.task_record(task_id).entities
    assert found["services"][0] == "billing-api" and found["people"] == ("Dana",)
    assert found["bad_kind"] == ("x",)  # kinds are made words, not refused for spelling
    sources = [
        e.data["source"] for e in mem.journal(task_id=task_id) if e.type == "task.record_set"
    ]
    assert sources == ["model"]
    mem.update_task(task_id, step=2, step_status="completed")
    mem.run_jobs()  # entities the model got wrong are left out; its entries still count
    assert mem.task_record(task_id).entities["people"] == ("Dana",)
    assert mem.verify().ok


def test_a_tasks_head_is_its_newest_event_read_through_its_own_index(mem: clew.Memory) -> None:
    """`task_head` (every `where` and `state`): SQLite's planner took the space's index on
    (space, seq) for `space = ?` and walked the space's events back from the newest until one
    of the task's appeared, all of them for an old task; it reads the task's index, as do the
    other reads of one task's events."""
    old = mem.create_task("Old task", ["One"])
    mem.update_task(old.id, step=1, step_status="active")
    new = mem.create_task("New task", ["One", "Two"])
    for n in range(3):
        mem.update_task(new.id, message=f"note {n}")
    store: Any = mem._store
    newest = {t: max(e.seq for e in mem.journal(task_id=t)) for t in (old.id, new.id)}
    assert {t: store.task_head(t) for t in newest} == newest
    assert store.task_head("0" * 10) == 0
    if not hasattr(store, "_conn"):
        return  # PostgreSQL: its events_task index leads with space
    seen: list[str] = []
    store._conn.set_trace_callback(seen.append)
    try:
        store.task_head(old.id)
        store.last_event_at(old.id, "task.status_changed")
        store.list_events(task_id=old.id)
        store.list_events(task_id=old.id, after=1, types=("task.created",))
        store.raw_events([old.id, new.id])
    finally:
        store._conn.set_trace_callback(None)
    reads = [s for s in seen if "FROM events" in s]
    assert len(reads) == 5
    for sql in reads:
        plan = " ".join(str(tuple(r)) for r in store._conn.execute("EXPLAIN QUERY PLAN " + sql))
        assert "events_task" in plan, (sql, plan)
