"""Layer 1 through the API: decisions, errors, findings, constraints and questions stored
once as entries; workspace changes; "where was I?" within 300 tokens with suggestions
from the messages; the workspace primer; bad input that changes nothing."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

import clew
from clew.core.tokens import counter
from clew.models import EntryStatus, EntryType, Message, MessageRole, MessageType, to_jsonable
from clew.state.brief import BRIEF_BUDGET, build_brief, infer_completed
from tests.conftest import FakeClock
from tests.test_state import exact_tokens


def snapshot(mem: clew.Memory) -> list[tuple[int, str]]:
    return [(e.seq, e.type) for e in mem.journal()]


def test_entries_are_stored_once_and_journaled(mem: clew.Memory) -> None:
    task = mem.create_task("Migrate", ["Backup", "Convert schema", "Move data"])
    decision = mem.add_decision(task.id, "Using pgloader", detail="handles type coercion")
    error = mem.add_error(task.id, "SPATIAL index not supported", step=2, tags=["pgloader", "db"])
    finding = mem.add_finding(task.id, "3 undocumented tables", step="2")
    constraint = mem.add_constraint(task.id, "No downtime")
    question = mem.add_question(task.id, "Keep ENUMs?")
    assert (decision.type, finding.type, constraint.type, question.type) == (
        EntryType.DECISION,
        EntryType.DISCOVERY,
        EntryType.CONSTRAINT,
        EntryType.QUESTION,
    )
    assert decision.detail == "handles type coercion"
    step2 = mem.get_task(task.id).step(2).id
    assert error.subtask_id == step2 and error.tags == ("pgloader", "db")
    resolved = mem.resolve(error.id[:5], "index created after the migration", task_id=task.id)
    assert resolved.status is EntryStatus.RESOLVED
    assert resolved.resolution == "index created after the migration" and resolved.resolved_at
    assert mem.get_entry(error.id).summary == "SPATIAL index not supported"  # both texts stay
    kinds = [e.type for e in mem.journal(task_id=task.id)]
    assert kinds.count("entry.added") == 5 and kinds.count("entry.resolved") == 1
    assert [e.id for e in mem.list_entries(task.id, type="error")] == [error.id]
    assert [e.id for e in mem.list_entries(task.id, step=2)] == [finding.id, error.id]
    assert mem.list_entries(task.id, status="resolved") == [mem.get_entry(error.id)]
    assert len(mem.list_entries(task.id, type=["decision", "constraint"])) == 2
    # One fact, one row: the state shows the same rows.
    data = yaml.safe_load(mem.state(task.id).text)
    assert data["decisions_log"] == ["Using pgloader"]
    assert data["errors_encountered"][0]["resolution"] == "index created after the migration"
    assert mem.verify().ok


def test_an_error_recorded_with_its_resolution_is_resolved(mem: clew.Memory) -> None:
    task = mem.create_task("T", ["a"])
    error = mem.add_error(task.id, "flaky test", resolution="retried, passed")
    assert error.status is EntryStatus.RESOLVED and error.resolution == "retried, passed"


def test_entries_may_stand_without_a_task(mem: clew.Memory) -> None:
    entry = mem.add_entry("context", "The project uses Express with TypeORM", tags=["stack"])
    assert entry.task_id is None
    assert mem.list_entries(type="context") == [entry]
    assert mem.verify().ok


BAD_CALLS: dict[str, tuple[Callable[[clew.Memory, str], object], type[Exception], str]] = {
    "unknown task": (lambda m, t: m.add_decision("zzzzzz", "x"), clew.NotFoundError, "no task"),
    "empty text": (lambda m, t: m.add_decision(t, "  "), clew.ValidationError, "empty"),
    "oversized": (
        lambda m, t: m.add_finding(t, "x" * 1_000_001),
        clew.ValidationError,
        "the limit is 1000000",
    ),
    "bad type": (
        lambda m, t: m.add_entry("rumour", "x", task_id=t),
        clew.ValidationError,
        "not one of",
    ),
    "step of no task": (
        lambda m, t: m.add_entry("decision", "x", step=1),
        clew.ValidationError,
        "belongs to a task",
    ),
    "step out of range": (
        lambda m, t: m.add_error(t, "x", step=9),
        clew.ValidationError,
        "out of range",
    ),
    "resolution on a decision": (
        lambda m, t: m.add_entry("decision", "x", task_id=t, resolution="y"),
        clew.ValidationError,
        "only errors and questions",
    ),
    "tags not a list": (
        lambda m, t: m.add_decision(t, "x", tags="a,b"),
        clew.ValidationError,
        "list of texts",
    ),
    "empty tag": (
        lambda m, t: m.add_decision(t, "x", tags=["ok", " "]),
        clew.ValidationError,
        "empty",
    ),
    "files: nothing": (lambda m, t: m.record_files(t), clew.ValidationError, "at least one"),
    "files: two lines": (
        lambda m, t: m.record_files(t, created=["a\nb"]),
        clew.ValidationError,
        "spans lines",
    ),
    "next objective too long": (
        lambda m, t: m.update_task(t, next_objective="x" * 1_000_001),
        clew.ValidationError,
        "the limit",
    ),
}


@pytest.mark.parametrize("name", BAD_CALLS)
def test_bad_input_is_refused_and_changes_nothing(mem: clew.Memory, name: str) -> None:
    task = mem.create_task("T", ["a", "b"])
    before = snapshot(mem)
    call, error, says = BAD_CALLS[name]
    with pytest.raises(error, match=says):
        call(mem, task.id)
    assert snapshot(mem) == before


def test_resolving_is_for_open_errors_and_questions_only(mem: clew.Memory) -> None:
    task = mem.create_task("T", ["a"])
    other = mem.create_task("U", ["a"])
    decision = mem.add_decision(task.id, "d")
    error = mem.add_error(task.id, "e")
    mem.resolve(error.id, "fixed")
    before = snapshot(mem)
    with pytest.raises(clew.ValidationError, match="only errors and questions"):
        mem.resolve(decision.id, "x")
    with pytest.raises(clew.ValidationError, match=r"already resolved \(resolution: fixed\)"):
        mem.resolve(error.id, "again")
    with pytest.raises(clew.ValidationError, match="does not belong to task"):
        mem.resolve(mem.add_error(task.id, "f").id, "x", task_id=other.id)
    with pytest.raises(clew.NotFoundError, match="no entry matches"):
        mem.resolve("zzzzzzzz", "x")
    assert snapshot(mem)[: len(before)] == before


def test_workspace_changes_count_paths_once(mem: clew.Memory) -> None:
    task = mem.create_task("T", ["a"])
    mem.record_files(task.id, created=["new.py"], modified=["old.py"])
    changes = mem.record_files(task.id, modified=["new.py", "old.py", "other.py"])
    assert (changes.created, changes.modified) == (1, 2)
    assert set(mem.file_changes(task.id).newest) == {"new.py", "old.py", "other.py"}
    assert mem.verify().ok


# -- where was I? ---------------------------------------------------------------------------


def test_where_reports_errors_decisions_waits_and_suggestions(
    mem: clew.Memory, clock: FakeClock
) -> None:
    task = mem.create_task(
        "Deploy coursefolio",
        ["Build the image", "Push the image", "Pull and run the container", "Check health"],
    )
    mem.update_task(task.id, step=1, step_status="completed", message="Step 1 done: built")
    clock.advance(60)
    mem.update_task(task.id, step=2, step_status="active", message="pushing")
    clock.advance(60)
    mem.update_task(task.id, message="Pushed the image, it is in ghcr.io")
    mem.add_error(task.id, "registry denied the pull", step=3)
    mem.add_decision(task.id, "Use a read-only token on the server")
    mem.record_action(task.id, type="wait", summary="CI pipeline #412", status="started")
    clock.advance(300)
    brief = mem.where(task.id)
    assert "Completed steps 1 of 4" in brief.text
    assert "Current: step 2 — Push the image (active, started 6m ago)." in brief.text
    assert "Open error" in brief.text and "registry denied the pull" in brief.text
    assert "Decided: Use a read-only token on the server" in brief.text
    assert "Waiting: CI pipeline #412 (since 5m ago)." in brief.text
    assert [s.step for s in brief.suggestions] == [2]
    assert "Messages suggest step 2 is done" in brief.text
    # A suggestion never changes a status.
    assert mem.get_task(task.id).step(2).status.value == "active"
    assert brief.text.rstrip().endswith(
        "Next: step 3 — Pull and run the container; step 4 — Check health."
    )
    assert exact_tokens(brief.text) <= BRIEF_BUDGET and brief.tokens >= exact_tokens(brief.text)
    as_json = json.loads(json.dumps(to_jsonable(brief)))
    assert as_json["current"]["number"] == 2 and as_json["suggestions"][0]["step"] == 2


def message(text: str, n: int = 0) -> Message:
    return Message(
        f"m{n:09d}",
        "s",
        "t",
        MessageRole.AGENT,
        MessageType.TEXT,
        text,
        f"2026-11-22T09:00:{n:02d}Z",
    )


@pytest.mark.parametrize(
    ("text", "steps"),
    [
        ("Step 3 done — SSH connected", [3]),
        ("step #1 and step 2 completed", [1, 2]),
        # "built" and "pushed" are the title verbs of steps 1 and 2: each shares two words.
        ("Image built and pushed: done", [1, 2]),
        ("Image: done", []),  # one shared word ("image") is not enough
        ("Docker image build finished", [1]),
        ("Build not done yet", []),
        ("The docker image is being built", []),
        ("done", []),
        ("✓ run the container", [4]),
    ],
)
def test_plan_progress_inference(mem: clew.Memory, text: str, steps: list[int]) -> None:
    task = mem.create_task(
        "T", ["Build the docker image", "Push image to registry", "SSH in", "Run the container"]
    )
    found = infer_completed(task.plan, [message(text)])
    assert sorted(found) == steps


def test_the_brief_fits_300_tokens_whatever_the_content(mem: clew.Memory, clock: FakeClock) -> None:
    long = "é🙂 " * 400
    task = mem.create_task(long[:999], [long[:900] + str(n) for n in range(40)], goal=long)
    for n in range(1, 20):
        mem.update_step(task.id, n, status="completed")
    mem.update_step(task.id, 21, status="failed")
    mem.update_step(task.id, 22, status="active", active_issue=long)
    for n in range(5):
        mem.add_error(task.id, long)
        mem.add_decision(task.id, long)
        mem.record_action(task.id, command=long, exit_code=1, stderr=long)
        mem.update_task(task.id, message=f"step {n} done " + long)
    brief = mem.where(task.id)
    assert exact_tokens(brief.text) <= BRIEF_BUDGET
    assert "Current: step 22" in brief.text and "Next: step 23" in brief.text


def test_build_brief_is_pure_and_deterministic(mem: clew.Memory, clock: FakeClock) -> None:
    task = mem.create_task("T", ["a", "b"])
    now = clock()
    one = build_brief(task, [], [], now, counter=counter())
    two = build_brief(task, [], [], now, counter=counter())
    assert one == two and one.text.startswith(f"Task 'T' ({task.id}) is active")


# -- the workspace primer -------------------------------------------------------------------


def test_prime_shows_the_active_tasks_of_this_workspace(mem: clew.Memory, tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    here = mem.create_task("Here", ["a", "b"], workspace=str(project))
    mem.create_task("Elsewhere", ["a"], workspace=str(tmp_path / "other"))
    paused = mem.create_task("Paused here", ["a"], workspace=str(project))
    mem.update_task(paused.id, status="paused")
    loose = mem.create_task("No workspace", ["a"])
    primer = mem.prime(str(project / "src"))
    assert primer.task_ids == (here.id,)
    assert f'<clew-task-state task="{here.id}"' in primer.text
    assert "Task 'Here'" in primer.text and "Elsewhere" not in primer.text
    state = primer.text.split(">\n", 1)[1].split("</clew-task-state>")[0]
    assert yaml.safe_load(state)["task"]["name"] == "Here"
    # No task for a folder: the ones without a workspace.
    assert mem.prime(str(tmp_path / "nowhere")).task_ids == (loose.id,)
    mem.update_task(loose.id, status="completed")
    empty = mem.prime(str(tmp_path / "nowhere"))
    assert empty.task_ids == () and "no active task" in empty.text
    with pytest.raises(clew.ValidationError):
        mem.prime(limit=0)


def test_prime_limits_the_number_of_tasks(mem: clew.Memory, clock: FakeClock) -> None:
    for n in range(5):
        clock.advance(1)
        mem.create_task(f"T{n}", ["a"])
    primer = mem.prime("/", limit=2)
    assert len(primer.task_ids) == 2 and primer.more == 3
    assert "3 more: `clew task list`" in primer.text
