"""The continuity promise: after a compaction, a restart or a crash, the brief and the state
say exactly where a task was. A few short scripted tasks of the continuity benchmark run
here with every kind of interruption (real processes, a real SIGKILL); the fixes it led
to are tested one by one below: one failure is one open error, a later decision on a
topic replaces the earlier one, every active step is named, an old open wait stays."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from benchmarks.continuity import drive, score
from benchmarks.continuity.script import INTERRUPTIONS, KINDS, generate
from hypothesis import given, settings
from hypothesis import strategies as st

import clew
from clew.archive.linking import same_command, same_decision, same_topic
from tests.conftest import FakeClock

# -- the benchmark, small -----------------------------------------------------------------


def test_the_suite_is_thirty_long_varied_tasks_and_the_same_for_a_seed() -> None:
    scripts = [generate(11, i) for i in range(30)]
    assert scripts[4] == generate(11, 4)
    assert {s.kind for s in scripts} == set(KINDS)
    assert all(20 <= s.steps <= 200 for s in scripts)
    assert min(s.steps for s in scripts) < 60 and max(s.steps for s in scripts) > 150
    kinds = {op.kind for s in scripts for op in s.ops}
    assert kinds >= {
        "replan",
        "fail",
        "error",
        "resolve",
        "decide",
        "constrain",
        "ask",
        "answer",
        "wait",
        "unwait",
        "run",
        "message",
    }
    cuts = {op.args["kind"] for s in scripts for op in s.ops if op.kind == "interrupt"}
    assert cuts == set(INTERRUPTIONS)
    decided = [op for s in scripts for op in s.ops if op.kind == "decide"]
    assert any(op.args["supersedes"] for op in decided)  # reversed explicitly
    assert any(not op.args["supersedes"] for op in decided)  # and by a later decision


def _all_right(outcomes: list[drive.Outcome]) -> None:
    wrong = [o for o in outcomes if any(v is False for v in o.checks.values())]
    assert not wrong, "\n\n".join(f"{o.kind} at op {o.at}: {o.detail}" for o in wrong)


def test_a_short_task_survives_compaction_restart_and_sigkill(tmp_path: Path) -> None:
    script = generate(3, 1, steps=22)
    outcomes = drive.run(script, str(tmp_path / "task.db"))
    assert {o.kind for o in outcomes} == set(INTERRUPTIONS)
    kills = [o for o in outcomes if o.kind == "sigkill" and o.acked[1]]
    assert kills and all(o.acked[0] == o.acked[1] for o in kills)  # nothing acked was lost
    _all_right(outcomes)
    with clew.open(tmp_path / "task.db") as mem:
        assert mem.verify().ok  # everything the fixes derived is rebuilt from the journal


@pytest.mark.parametrize("index", [0, 2, 4, 6])
def test_short_tasks_of_every_kind_come_back_whole(tmp_path: Path, index: int) -> None:
    script = generate(5, index, steps=20)
    _all_right(drive.run(script, str(tmp_path / "task.db"), processes=False))


def test_the_scorer_fails_what_is_missing_or_wrong(tmp_path: Path) -> None:
    script = generate(3, 1, steps=22)
    outcomes = drive.run(script, str(tmp_path / "task.db"), processes=False)
    last = script.ops[-1].args["expect"]
    with clew.open(tmp_path / "task.db") as mem:
        task = mem.list_tasks()[0].id
        brief, state, tokens = drive.render(mem, task)
    assert all(v is not False for v in score.check(last, brief, state, tokens).values())
    assert outcomes[-1].tokens == tokens
    lines = brief.splitlines()
    cut = "\n".join(line for line in lines if not line.startswith("Completed"))
    data = yaml.safe_load(state)
    data.pop("subtasks", None)
    assert score.check(last, cut, yaml.safe_dump(data), tokens)["completed"] is False
    assert score.check(last, brief, state, 1801)["budget"] is False
    if last.constraints:
        data = yaml.safe_load(state)
        data["constraints"] = data["constraints"][1:]
        assert score.check(last, brief, yaml.safe_dump(data), tokens)["constraints"] is False
    if last.decisions:
        subject, _, _ = last.decisions[0]
        other = f"Use something else for the {subject}"
        data = yaml.safe_load(state)
        data["decisions_log"] = [other]
        quiet = "\n".join(line for line in lines if not line.startswith("Decided"))
        assert score.check(last, quiet, yaml.safe_dump(data), tokens)["decisions_latest"] is False


# -- (a) one failure, one open error ---------------------------------------------------------


def _failing_push(mem: clew.Memory, task: str, step: int = 1) -> clew.Action:
    return mem.record_action(
        task,
        command="docker push ghcr.io/acme/api:v1",
        exit_code=1,
        step=step,
        stderr="pushing layers\nerror: connection reset by peer",
    )


def _open_errors(mem: clew.Memory, task: str) -> list[str]:
    return [e.id for e in mem.list_entries(task, type="error", status="active")]


def test_the_agents_record_and_the_extracted_copy_are_one_open_error(mem: clew.Memory) -> None:
    task = mem.create_task("Deploy", ["Push", "Run"]).id
    mem.update_step(task, 1, status="active")
    failed = _failing_push(mem, task)
    mine = mem.add_error(task, "Push failed", command="docker push ghcr.io/acme/api:v1", step=1)
    assert ("action", failed.id) in mine.sources  # linked by the command
    mem.update_step(task, 1, status="failed")
    mem.run_jobs()  # the extraction finds the failed command already recorded
    assert _open_errors(mem, task) == [mine.id]
    brief = mem.where(task)
    state = yaml.safe_load(mem.state(task).text)
    assert len(brief.open_errors) == 1 and "Recent failure" not in brief.text
    assert [e["id"] for e in state["errors_encountered"]] == [mine.id]


def test_a_retry_of_a_recorded_failure_stays_that_error_when_the_recorded_run_is_older(
    mem: clew.Memory,
) -> None:
    """The agent records an error for a failed run, the retry fails too, and the agent
    resolves the error; later work pushes the recorded run out of the brief's window while
    the retry is still in it: the retry is still that error's, not a new failure."""
    from clew.state.working import BRIEF_ACTIONS

    task = mem.create_task("Audit", ["Check tables"]).id
    command = "psql -c 'select count(*) from audit_p1'"
    said = "ModuleNotFoundError: No module named 'audit_p1'"
    mem.record_action(task, command=command, exit_code=1, stderr=said)
    mine = mem.add_error(task, f"{command} failed", command=command)
    mem.record_action(task, command=command, exit_code=1, stderr=said)
    mem.resolve(mine.id, "installed it by hand")
    for n in range(BRIEF_ACTIONS - 1):  # the retry is the oldest action the brief reads
        mem.record_action(task, command=f"make check-{n}", exit_code=0)
    assert "audit_p1" not in mem.where(task).text


def test_an_error_recorded_after_extraction_replaces_the_extracted_copy(
    mem: clew.Memory,
) -> None:
    task = mem.create_task("Deploy", ["Push", "Run"]).id
    mem.update_step(task, 1, status="active")
    failed = _failing_push(mem, task)
    mem.update_step(task, 1, status="failed")
    mem.run_jobs()
    [extracted] = mem.list_entries(task, type="error", status="active")
    assert ("action", failed.id) in extracted.sources
    # The agent's text quotes the telling line: that links it to the command.
    mine = mem.add_error(task, "The push died: error: connection reset by peer")
    assert mine.supersedes == extracted.id
    assert _open_errors(mem, task) == [mine.id]
    mem.resolve(mine.id, "Retried on a stable network")
    assert _open_errors(mem, task) == []
    assert mem.verify().ok


def test_resolving_an_error_leaves_the_agents_other_errors_alike_open(mem: clew.Memory) -> None:
    task = mem.create_task("Debug", ["Look"]).id
    first = mem.add_error(task, "ValueError: bad header in /tmp/a.json", command="./load")
    second = mem.add_error(task, "ValueError: bad header in /tmp/b.json", command="./load")
    other = mem.add_error(task, "KeyError: 'user'")
    assert first.fingerprint == second.fingerprint != other.fingerprint
    mem.resolve(second.id, "Strip the BOM before parsing")
    # Alike is not the same: the agent's other record is the agent's to resolve.
    assert sorted(_open_errors(mem, task)) == sorted([first.id, other.id])


def test_a_later_passing_run_is_evidence_on_the_agents_error_never_its_resolution(
    mem: clew.Memory,
) -> None:
    task = mem.create_task("Deploy", ["Push", "Run"]).id
    mem.update_step(task, 1, status="active")
    _failing_push(mem, task)
    mem.update_step(task, 1, status="completed")
    mem.run_jobs()
    mine = mem.add_error(task, "push keeps failing", command="docker push ghcr.io/acme/api:v1")
    assert len(_open_errors(mem, task)) == 1  # the agent's record replaced the copy
    mem.update_step(task, 2, status="active")
    # Another version is another command: no resolution, no evidence.
    mem.record_action(task, command="docker push ghcr.io/acme/api:v2", exit_code=0, step=2)
    assert mem.get_entry(mine.id).evidence == ()
    passed = mem.record_action(
        task, command="docker push  ghcr.io/acme/api:v1", exit_code=0, step=2
    )
    assert _open_errors(mem, task) == [mine.id]  # the agent resolves its own error
    [evidence] = mem.get_entry(mine.id).evidence
    assert evidence.action_id == passed.id
    assert evidence.command == "docker push  ghcr.io/acme/api:v1"
    brief = mem.where(task).text
    assert f"Open error {mine.id}: push keeps failing [a later run of" in brief
    [row] = yaml.safe_load(mem.state(task).text)["errors_encountered"]
    assert row["resolution"] is None and passed.id in row["evidence"]
    assert "Recent failure" not in brief
    mem.resolve(mine.id, "the registry was down; it pushes now")
    assert _open_errors(mem, task) == []
    assert mem.verify().ok


def test_a_passing_run_resolves_only_clews_own_copy_of_that_same_command(
    mem: clew.Memory,
) -> None:
    task = mem.create_task("Test", ["Shards"]).id
    mem.update_step(task, 1, status="active")
    for group in (22, 23):
        mem.record_action(
            task,
            command=f"pytest --group {group}",
            exit_code=1,
            step=1,
            stderr=f"FAILED tests/test_orders.py::test_shard_{group} - AssertionError",
        )
    mem.update_step(task, 1, status="failed")
    mem.run_jobs()
    copies = {e.summary.split("`")[1]: e for e in mem.list_entries(task, type="error")}
    assert set(copies) == {"pytest --group 22", "pytest --group 23"}
    assert all(e.origin == "extracted" for e in copies.values())
    mem.record_action(task, command="pytest --group 23", exit_code=0)
    assert mem.get_entry(copies["pytest --group 22"].id).status.value == "active"
    assert mem.get_entry(copies["pytest --group 23"].id).status.value == "resolved"
    # Kept open by the agent, clew's own copy is the agent's to resolve too.
    kept = mem.keep_open(copies["pytest --group 22"].id)
    assert kept.keep_open
    mem.record_action(task, command="pytest --group 22", exit_code=0)
    again = mem.get_entry(kept.id)
    assert again.status.value == "active" and len(again.evidence) == 1
    assert mem.verify().ok


def test_a_failure_retried_before_extraction_is_stored_resolved(mem: clew.Memory) -> None:
    task = mem.create_task("Deploy", ["Push"]).id
    mem.update_step(task, 1, status="active")
    _failing_push(mem, task)
    mem.record_action(task, command="docker push ghcr.io/acme/api:v1", exit_code=0, step=1)
    mem.update_step(task, 1, status="completed")
    mem.run_jobs()
    [error] = mem.list_entries(task, type="error")
    assert error.status.value == "resolved" and "succeeded" in (error.resolution or "")


def test_a_different_command_does_not_close_an_error(mem: clew.Memory) -> None:
    task = mem.create_task("Test", ["Run"]).id
    mem.record_action(task, command="pytest tests/a.py", exit_code=1, stderr="FAILED a")
    mine = mem.add_error(task, "a.py fails", command="pytest tests/a.py")
    mem.record_action(task, command="pytest tests/b.py", exit_code=0)
    assert _open_errors(mem, task) == [mine.id]


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("docker push img:v1.2.3", "docker push  img:v1.2.3", True),
        ("docker push img:v1.2.3", "docker push img:v1.2.4", False),
        ("deploy --timeout=30", "deploy --timeout=60", False),
        ("pytest --group 22", "pytest --group 23", False),
        ("backfill orders_p004", "backfill orders_p005", False),
        ("pytest --basetemp /tmp/tmpa8x_q2", "pytest --basetemp /tmp/tmpzz91k0", True),
        ("pytest tests/a.py", "pytest tests/b.py", False),
        ("make build", "make test", False),
        ("", "make", False),
    ],
)
def test_runs_of_the_same_command(a: str, b: str, same: bool) -> None:
    assert same_command(a, b) is same


# -- (b) decisions: the latest on each topic -----------------------------------------------

TOPIC_PAIRS = [
    ("Deploy strategy: canary", "Deploy strategy: blue-green", True),
    ("Use COPY batches for bulk data transfer", "Use pgloader for bulk data transfer", True),
    ("Going with Postgres 16 for the database", "Use Postgres 14 for the database", True),
    ("Do not use Redis for caching", "Use Redis for caching", True),
    ("Use Python 3.12", "Use Python 3.11", True),
    ("Pin numpy to 2.0.2", "Pin numpy to 1.26.4", True),
    ("Going with Postgres 14 for the database.", "Use Postgres 14", True),
    ("Use Redis for caching", "Use Redis for the job queue", False),
    ("Use ghcr.io for the image registry", "Base image: alpine", False),
    ("Decision 11: because of reasons", "Decision 10: because of reasons", False),
    ("Add an index on users.email", "Use Postgres 16", False),
    ("Pin numpy to 2.0.2", "Pin django to 5.0.9", False),
    ("Use pytest-xdist for the test run", "Pin numpy to 1.26", False),
    ("Rollout strategy: canary releases", "Deploy strategy: canary releases", False),
]


@pytest.mark.parametrize(("new", "old", "same"), TOPIC_PAIRS)
def test_decisions_on_one_topic_labelled_pairs(new: str, old: str, same: bool) -> None:
    assert same_topic(new, old) is same
    assert same_topic(old, new) is same


def test_topic_tags_decide_when_both_carry_them() -> None:
    assert same_topic("Use A", "Use B", ["topic:db"], ["topic:db"])
    assert not same_topic(
        "Use Redis for caching", "Use Redis for caching", ["topic:a"], ["topic:b"]
    )
    assert same_decision("Going with Postgres 14 for the database", "Use Postgres 14 for database")
    assert not same_decision("Use Postgres 16 for the database", "Use Postgres 14 for database")


def test_a_later_decision_on_the_topic_replaces_the_earlier_and_says_so(
    mem: clew.Memory,
) -> None:
    task = mem.create_task("Migrate", ["Copy"]).id
    first = mem.add_decision(task, "Use pgloader for bulk data transfer")
    other = mem.add_decision(task, "Keep ENUM columns as VARCHAR with CHECK")
    later = mem.add_decision(task, "Use COPY batches for bulk data transfer")
    assert later.supersedes == first.id
    assert mem.get_entry(first.id).status.value == "superseded"
    assert mem.get_entry(other.id).status.value == "active"
    log = yaml.safe_load(mem.state(task).text)["decisions_log"]
    assert log == [
        "Use COPY batches for bulk data transfer (was: Use pgloader for bulk data transfer)",
        "Keep ENUM columns as VARCHAR with CHECK",
    ]
    assert "pgloader" not in "\n".join(mem.where(task).decisions)
    assert mem.verify().ok


def test_an_extracted_decision_goes_when_the_agent_supersedes_its_record(
    mem: clew.Memory, clock: FakeClock
) -> None:
    task = mem.create_task("Deploy", ["Build", "Ship"]).id
    mem.update_step(task, 1, status="active")
    clock.advance(60)
    mem.add_message(task, "Going with ghcr.io for the image registry.")
    clock.advance(60)
    mem.update_step(task, 1, status="completed")
    mem.run_jobs()
    [extracted] = mem.list_entries(task, type="decision")
    assert "ghcr.io" in extracted.summary
    clock.advance(60)
    mine = mem.add_decision(task, "Use ghcr.io for the image registry")  # the same decision
    clock.advance(60)
    mem.add_entry(
        "decision", "Use Amazon ECR for the image registry", task_id=task, supersedes=mine.id
    )
    [current] = mem.list_entries(task, type="decision", status="active")
    assert "ECR" in current.summary
    state = mem.state(task).text
    assert all(
        "ghcr.io" not in d.split(" (was: ")[0] for d in yaml.safe_load(state)["decisions_log"]
    )


def test_a_decision_said_before_a_reversal_is_not_brought_back_by_extraction(
    mem: clew.Memory, clock: FakeClock
) -> None:
    task = mem.create_task("Debug", ["Fix"]).id
    mem.update_step(task, 1, status="active")
    mem.add_message(task, "Going with a lock for the fix approach.")
    clock.advance(60)
    mem.add_decision(task, "Use idempotent writes for the fix approach")
    clock.advance(60)
    mem.update_step(task, 1, status="completed")
    mem.run_jobs()  # the message's decision is older than the record on its topic
    [current] = mem.list_entries(task, type="decision", status="active")
    assert "idempotent" in current.summary


# -- (c) every active step, (d) every open wait ---------------------------------------------


@pytest.mark.parametrize("budget", [1500, 800])
def test_every_active_step_is_named(mem: clew.Memory, budget: int) -> None:
    task = mem.create_task("Pipeline", [f"Stage {n}" for n in range(1, 31)]).id
    for n in (3, 17, 25):
        mem.update_step(task, n, status="active")
    brief = mem.where(task).text
    assert "step 3 —" in brief and "Also active: step 17 — Stage 17; step 25 — Stage 25" in brief
    data = yaml.safe_load(mem.state(task, budget=budget).text)
    named = [data["current_step"]["n"]]
    named += [a["n"] if isinstance(a, dict) else a for a in data["also_active"]]
    assert named == [3, 17, 25]


def test_an_open_wait_older_than_the_newest_actions_stays_in_the_brief(
    mem: clew.Memory,
) -> None:
    task = mem.create_task("Release", ["Ship"]).id
    wait = mem.record_action(task, type="wait", summary="CI on main", status="started")
    for n in range(30):
        mem.record_action(task, command=f"echo {n}", exit_code=0)
    brief = mem.where(task)
    assert brief.waits == ("CI on main",) and "Waiting: CI on main" in brief.text
    mem.finish_action(wait.id, status="completed")
    assert mem.where(task).waits == ()


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=120), st.text(max_size=120))
def test_topics_and_commands_are_symmetric_for_any_text(a: str, b: str) -> None:
    assert same_topic(a, b) is same_topic(b, a)
    assert same_decision(a, b) is same_decision(b, a)
    assert same_command(a, b) is same_command(b, a)
    assert same_command(a, a) is bool(a.strip())


def test_the_brief_names_every_open_error_and_never_counts_one_as_resolved(
    mem: clew.Memory,
) -> None:
    from clew.state.brief import OPEN_ERRORS_NAMED, OPEN_ERRORS_SHOWN

    task = mem.create_task("Backfill", ["Partitions"]).id
    made = [mem.add_error(task, f"backfill orders_p{n:03d} timed out") for n in range(14)]
    # Alike (one fingerprint), but each partition is its own error: resolving one is not
    # resolving the others.
    for e in made[:2]:
        mem.resolve(e.id, "reran it with a longer timeout")
    still = made[2:][::-1]  # newest first, as the brief lists them
    brief = mem.where(task)
    text = brief.text
    for e in still[:OPEN_ERRORS_SHOWN]:
        assert f"Open error {e.id}: {e.summary}" in text
    rest = still[OPEN_ERRORS_SHOWN:]
    assert f"{len(rest)} more open errors: " in text
    for e in rest[:OPEN_ERRORS_NAMED]:
        assert e.id in text
    assert f"and {len(rest) - OPEN_ERRORS_NAMED} more: `clew entries --task {task}" in text
    assert not any(e.id in text for e in made[:2])
    assert brief.tokens <= 300


def test_the_operator_lists_the_parts_of_a_command_that_vary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLEW_WORKER", "off")
    (tmp_path / "config.toml").write_text('[errors]\nvolatile = ["--run-id=\\\\w+"]\n')
    with clew.open(tmp_path / "s.db") as mem:
        task = mem.create_task("Nightly", ["Run"]).id
        mem.update_step(task, 1, status="active")
        mem.record_action(
            task, command="./nightly --run-id=a1 --all", exit_code=1, stderr="E", step=1
        )
        mem.update_step(task, 1, status="failed")
        mem.run_jobs()
        [copy] = mem.list_entries(task, type="error")
        mem.record_action(task, command="./nightly --run-id=b7 --some", exit_code=0)
        assert mem.get_entry(copy.id).status.value == "active"  # other arguments
        mem.record_action(task, command="./nightly --run-id=b7 --all", exit_code=0)
        assert mem.get_entry(copy.id).status.value == "resolved"  # only the run id differs


def test_a_project_config_that_calls_every_argument_volatile_never_closes_the_agents_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/security.md: a project's config (it may come with a clone) may widen which passing
    runs close clew's own copies, never an error the agent recorded: that one gets evidence."""
    monkeypatch.setenv("CLEW_WORKER", "off")
    (tmp_path / "config.toml").write_text('[errors]\nvolatile = ["\\\\S+"]\n')
    with clew.open(tmp_path / "s.db") as mem:
        task = mem.create_task("Deploy", ["Run"]).id
        mem.record_action(task, command="./deploy --region eu", exit_code=1, stderr="E: denied")
        mine = mem.add_error(task, "deploy to eu denied", command="./deploy --region eu")
        passed = mem.record_action(task, command="rm -rf build", exit_code=0)
        after = mem.get_entry(mine.id)
        assert after.status.value == "active"
        assert [e.action_id for e in after.evidence] == [passed.id]


@pytest.mark.parametrize(
    ("said", "refused"),
    [
        ('volatile = "tmp"', "must be a list of regular expressions"),
        ('volatile = ["("]', "not a valid regular expression"),
        ('volatile = [".*"]', "matches empty text"),
        ("volatiles = []", "unknown setting errors.volatiles"),
    ],
)
def test_a_bad_volatile_setting_is_refused_in_one_line(
    tmp_path: Path, said: str, refused: str
) -> None:
    (tmp_path / "config.toml").write_text(f"[errors]\n{said}\n")
    with pytest.raises(clew.ValidationError, match=refused):
        clew.open(tmp_path / "s.db")
