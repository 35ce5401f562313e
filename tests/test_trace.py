"""The one ledger of commands and tool calls, the episodic trace, and semantic memory:
patterns ranked by evidence and guardrails checked on commands."""

from __future__ import annotations

import pytest

import clew
from clew.archive.semantic import evidence
from clew.models import MoveStep, RemoveStep, TaskStatus
from tests.conftest import FakeClock


def test_trace_decisions_validations_and_tool_calls(mem: clew.Memory, clock: FakeClock) -> None:
    task = mem.create_task("Auth", ["hashing", "routes"])
    plan = mem.trace_decision(
        task.id,
        "plan the hashing utilities",
        state="PLANNING",
        agent="planner",
        context={"goal": "bcrypt", "files": ["auth.py"]},
        prompt_tokens=1200,
        completion_tokens=300,
        model="gpt-4o-mini",
        temperature=0.2,
        step=1,
    )
    clock.advance(5)
    act = mem.trace_decision(
        task.id,
        "write auth.py",
        state="EXECUTING",
        agent="executor",
        parent=plan.id,
        artifacts={"files": ["auth.py"], "lines": 87},
        outcome="retry",
        error="ruff found 2 problems",
    )
    assert act.trace_id == plan.trace_id and act.parent_id == plan.id
    call = mem.record_tool_call(
        task.id,
        "write_file",
        params={"path": "auth.py"},
        result={"bytes": 2048},
        decision=act.id,
        started_at="2026-11-22T09:00:05Z",
        ended_at="2026-11-22T09:00:07.500Z",
        cpu_seconds=0.4,
        memory_mb=31.5,
        step=1,
    )
    assert (call.type.value, call.tool, call.duration_seconds) == ("tool", "write_file", 2.5)
    assert call.input == {"path": "auth.py"} and call.output == {"bytes": 2048}
    check = mem.trace_validation(
        act.id, passed=False, validator="functional", violations=["E501", {"line": 3}]
    )
    assert check.violations == ["E501", {"line": 3}]
    trace = mem.trace(task.id)
    assert [d.id for d in trace.decisions] == [plan.id, act.id]
    assert trace.decisions[0].context == {"goal": "bcrypt", "files": ["auth.py"]}
    assert trace.decisions[1].validation_status == "failed"
    assert [c.id for c in trace.tool_calls] == [call.id]
    # Every tool call of a step, in one call.
    assert [a.id for a in mem.list_actions(task.id, step=1)] == [call.id]
    assert mem.verify().ok


def test_ledger_answers_in_one_call_each(mem: clew.Memory, clock: FakeClock) -> None:
    task = mem.create_task("CI", ["test", "lint"])
    other = mem.create_task("Other", ["x"])
    for code in (1, 1, 0, 1):
        clock.advance(10)
        mem.record_action(task.id, command="pytest -q tests/", exit_code=code, step=1)
    clock.advance(10)
    green = mem.record_action(other.id, command="npm test", exit_code=0)
    clock.advance(10)
    mem.record_action(task.id, command="ruff check src", exit_code=1, step=2)
    mem.record_action(task.id, command="make build", exit_code=0)
    assert mem.last_green() == mem.get_action(green.id)
    assert mem.last_green(task.id).command == "pytest -q tests/"
    assert mem.last_green(task.id, contains="ruff") is None
    repeated = mem.repeated_failures()
    assert [(r.command, r.failures) for r in repeated] == [("pytest -q tests/", 3)]
    assert mem.repeated_failures(min_failures=1)[1].command == "ruff check src"
    failed = mem.commands(task.id, failed=True)
    assert [a.command for a in failed] == ["ruff check src", *["pytest -q tests/"] * 3]
    assert len(mem.commands(task.id, step=1)) == 4
    assert [a.command for a in mem.commands(contains=["make", "npm"])] == ["make build", "npm test"]
    history = mem.history(task.id)
    assert history[0].text == "created 'CI' with 2 steps"
    assert history[1].text == "ran `pytest -q tests/` (step 1) -> failed, exit 1"
    assert [h.seq for h in history] == sorted(h.seq for h in history)


def test_trace_bad_input_writes_nothing(mem: clew.Memory) -> None:
    task = mem.create_task("T", ["a"])
    other = mem.create_task("U", ["a"])
    decision = mem.trace_decision(task.id, "x")
    before = len(mem.journal())
    for call, says in (
        (lambda: mem.trace_decision(task.id, "x", outcome="maybe"), "not one of"),
        (lambda: mem.trace_decision(task.id, "x", prompt_tokens=-1), "negative"),
        (lambda: mem.trace_decision(other.id, "x", parent=decision.id), "another task"),
        (lambda: mem.trace_decision(task.id, "x", context=["a"]), "JSON object"),
        (lambda: mem.trace_validation(decision.id, passed="yes"), "true or false"),
        (lambda: mem.trace_validation("zzzz", passed=True), "no decision"),
        (
            lambda: mem.record_tool_call(task.id, "t", decision=decision.id, started_at="soon"),
            "not a date",
        ),
        (lambda: mem.record_tool_call(other.id, "t", decision=decision.id), "another task"),
        (
            lambda: mem.record_tool_call(
                task.id, "t", started_at="2026-11-22T10:00", ended_at="2026-11-22T09:00"
            ),
            "before",
        ),
        (lambda: mem.repeated_failures(min_failures=0), "at least 1"),
        (lambda: mem.commands(step=1), "belongs to a task"),
    ):
        with pytest.raises(clew.ClewError, match=says):
            call()  # type: ignore[no-untyped-call]
    assert len(mem.journal()) == before


# -- semantic memory ------------------------------------------------------------------------


def test_patterns_are_ranked_by_evidence_and_pruned(mem: clew.Memory) -> None:
    steady = mem.add_pattern("backend_api", "validate input with pydantic", example="Model(**body)")
    lucky = mem.add_pattern("backend_api", "retry on 500")
    weak = mem.add_pattern("backend_api", "catch every exception")
    mem.add_pattern("frontend", "other domain")
    for _ in range(40):
        mem.observe_pattern(steady.id, success=True)
    mem.observe_pattern(steady.id, success=False)
    mem.observe_pattern(lucky.id, success=True)
    for n in range(12):
        mem.observe_pattern(weak.id, success=n < 5)
    ranked = mem.list_patterns("backend_api")
    assert [p.id for p in ranked] == [steady.id, lucky.id, weak.id]
    assert evidence(ranked[0]) > 0.8 > evidence(ranked[1])
    assert ranked[0].last_validated is not None
    assert [p.id for p in mem.prune_patterns(dry_run=True)] == [weak.id]
    pruned = mem.prune_patterns()
    assert [p.id for p in pruned] == [weak.id]
    assert weak.id not in [p.id for p in mem.list_patterns("backend_api")]
    assert mem.list_patterns("backend_api", include_deprecated=True)[-1].deprecated
    assert mem.prune_patterns() == []
    assert mem.verify().ok


def test_guardrails_check_commands_deterministically(mem: clew.Memory) -> None:
    added = mem.add_default_guardrails()
    assert len(added) == 6 and mem.add_default_guardrails() == []
    assert mem.check_command("rm -rf /").blocked
    assert mem.check_command("sudo rm -fr /*").blocked
    assert not mem.check_command("rm -rf ./build").hits
    assert mem.check_command("git push --force origin main").blocked
    assert not mem.check_command("git push origin main").hits
    drop = mem.check_command("psql -c 'DROP TABLE users'")
    assert drop.hits and not drop.blocked  # a warning
    rule = mem.add_guardrail(
        "Never touch the production database from a laptop",
        rule_type="domain",
        enforcement="block",
        pattern=r"--host[= ]prod-db",
        invalid_examples=["psql --host prod-db"],
        valid_examples=["psql --host localhost"],
    )
    assert mem.check_command("pg_dump --host=prod-db app").blocked
    mem.set_guardrail(rule.id, enabled=False)
    assert not mem.check_command("pg_dump --host=prod-db app").hits
    text = mem.guardrails_text()
    assert text.startswith("- [block] Never delete the filesystem root")
    assert "Never touch the production database" not in text
    unchecked = mem.add_guardrail("Prefer small commits", enforcement="log")
    assert unchecked.pattern is None and "Prefer small commits" in mem.guardrails_text()
    assert mem.verify().ok


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"pattern": "(unclosed"}, "not a valid regular expression"),
        ({"pattern": "rm", "invalid_examples": ["ls"]}, "does not catch the bad example"),
        ({"pattern": "rm", "valid_examples": ["rm x"]}, "catches the good example"),
        ({"enforcement": "shout"}, "not one of"),
        ({"valid_examples": "rm"}, "list of texts"),
    ],
)
def test_a_guardrail_that_would_not_work_is_refused(
    mem: clew.Memory, kwargs: dict[str, object], says: str
) -> None:
    with pytest.raises(clew.ValidationError, match=says):
        mem.add_guardrail("a rule", **kwargs)  # type: ignore[arg-type]
    assert mem.list_guardrails() == []


def test_prime_carries_the_guardrails(mem: clew.Memory) -> None:
    mem.add_default_guardrails()
    mem.create_task("T", ["a"])
    primer = mem.prime("/")
    assert "<clew-guardrails>\n- [block] Never delete the filesystem root" in primer.text


def test_action_commands_reads_the_named_actions_at_once(mem: clew.Memory) -> None:
    task = mem.create_task("T", ["a"]).id
    failed = mem.record_action(task, command="make test", exit_code=1).id
    noted = mem.record_action(task, summary="read the logs").id
    store = mem._store  # type: ignore[attr-defined]
    found = store.action_commands([failed, noted, "nosuchaction"])
    assert found == {failed: "make test", noted: None}
    assert store.action_commands([]) == {}
    assert store.action_commands([failed, noted], failed=True) == {failed: "make test"}


def test_an_actions_step_is_found_among_the_current_steps(mem: clew.Memory) -> None:
    """A step named by number counts the steps a replan left, in plan order (the store's
    one read of the task's status and step ids, on either backend)."""
    task = mem.create_task("deploy", ["build", "push", "run"])
    mem.replan(task.id, [RemoveStep(1), MoveStep(2, 1)])  # the plan is now: run, push
    plan = mem.get_task(task.id).plan
    assert [s.title for s in plan] == ["run", "push"]
    store = mem._store  # type: ignore[attr-defined]
    assert store.get_task_steps(task.id) == (TaskStatus.ACTIVE, tuple(s.id for s in plan))
    for n, step in enumerate(plan, start=1):
        action = mem.record_action(task.id, command="make", exit_code=0, step=n)
        assert action.plan_item_id == step.id == mem.get_action(action.id).plan_item_id
    bare = mem.create_task("no plan")
    assert store.get_task_steps(bare.id) == (TaskStatus.ACTIVE, ())
