"""The agents' own plans survive (issue 27, point 7): Claude Code's todo list (TodoWrite, or
TaskCreate/TaskUpdate) and Codex's plan (update_plan), read from their transcripts by
capture, come back from `clew prime --hook` after a compaction, a /clear or a resume, and
`clew where` answers for them. The transcripts are in tests/data/plans/ (README.md there
says which published formats they follow), cut into the parts a hook would see.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import clew
from clew.conversations.agent_plans import AgentList, Call, Item, fold, plan_calls
from clew.core.checks import MIN_BUDGET
from clew.core.tokens import counter
from clew.models import PlanItem, StepStatus, TaskStatus, to_jsonable
from clew.state.checklist import render_checklist

PLANS = Path(__file__).parent / "data" / "plans"
TODOS = PLANS / "claude-todowrite.jsonl"
TODOS_ID = "5d1e8a3c-2b7f-4c19-8e6a-0f4b9d2c7a15"
TASKS = PLANS / "claude-tasks.jsonl"
TASKS_ID = "9a0c4e7b-6d21-4f83-b5c8-3e1d7f0a2b46"
CODEX = PLANS / "rollout-2026-11-27T15-00-00-0199b3d4-1e2f-7a80-9c3b-6d4e5f708192.jsonl"


def lines_of(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines(keepends=True)


def upto(path: Path, tool_use_id: str) -> int:
    """How many lines of a Claude Code transcript come up to the result of that call."""
    for n, line in enumerate(lines_of(path), 1):
        content = json.loads(line).get("message", {}).get("content")
        if isinstance(content, list) and any(
            b.get("tool_use_id") == tool_use_id for b in content if isinstance(b, dict)
        ):
            return n
    raise AssertionError(f"no result of {tool_use_id}")


def run(cwd: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """`clew ARGS` as a hook runs it: its own process, in `cwd`, the event on stdin."""
    env = {k: v for k, v in os.environ.items() if k not in ("CLEW_DB", "CLEW_SPACE")}
    return subprocess.run(
        [sys.executable, "-m", "clew", *args],
        input=stdin, capture_output=True, text=True, cwd=cwd, env=env, timeout=60,
    )  # fmt: skip


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / ".clew").mkdir(parents=True)
    with clew.open(folder / ".clew" / "clew.db"):
        pass
    return folder


class Session:
    """A Claude Code session as its hooks see it: the transcript grows, the hooks run."""

    def __init__(self, project: Path, source: Path, session_id: str) -> None:
        self.project, self.lines, self.id = project, lines_of(source), session_id
        self.path = project.parent / "transcripts" / f"{session_id}.jsonl"
        self.path.parent.mkdir(exist_ok=True)
        self.path.write_text("", encoding="utf-8")
        self.written = 0

    def write_upto(self, count: int) -> None:
        """Write the transcript's lines up to `count`, stamped now, as Claude Code writes."""
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")
        with self.path.open("a", encoding="utf-8") as out:
            for line in self.lines[self.written : count]:
                out.write(json.dumps({**json.loads(line), "timestamp": now}) + "\n")
        self.written = count

    def hook(self, name: str, *command: str, **extra: Any) -> str:
        event = {"session_id": self.id, "transcript_path": str(self.path),
                 "cwd": str(self.project), "hook_event_name": name, **extra}  # fmt: skip
        # Started elsewhere, as Claude Code starts hooks: the event's cwd finds the store.
        done = run(
            self.project.parent, *(command or ("capture", "--hook")), stdin=json.dumps(event)
        )
        assert done.returncode == 0 and done.stderr == "", done.stderr
        return done.stdout

    def task(self) -> clew.Task:
        with clew.open(self.project / ".clew" / "clew.db") as mem:
            task_id = mem.get_session(self.id).task_id
            assert task_id is not None
            return mem.get_task(task_id)


def titles(task: clew.Task) -> list[tuple[str, str]]:
    return [(s.title, s.status.value) for s in task.plan]


# -- Claude Code: TodoWrite ------------------------------------------------------------------


def test_a_todo_list_comes_back_after_compaction_as_its_last_rewrite_left_it(
    project: Path,
) -> None:
    session = Session(project, TODOS, TODOS_ID)
    session.hook("SessionStart", source="startup")
    # The first TodoWrite, as PostToolUse captures it: the list is a task of the workspace.
    session.write_upto(upto(TODOS, "toolu_01TodoA1"))
    assert session.hook("PostToolUse", tool_name="TodoWrite") == ""  # capture prints nothing
    task = session.task()
    assert task.workspace == str(project) and task.status is TaskStatus.ACTIVE
    assert titles(task) == [
        ("Issue refresh tokens at login", "active"),
        ("Rotate refresh tokens on /refresh", "pending"),
        ("Write the token tests", "pending"),
    ]
    assert task.metadata["captured_plan"]["tool"] == "TodoWrite"
    # The second call rewrites the whole list: a step done, one inserted, one reworded (a
    # rewritten list has no ids: the reworded item is a new step, the old one removed).
    session.write_upto(upto(TODOS, "toolu_01TodoA2"))
    session.hook("PostToolUse", tool_name="TodoWrite")
    task = session.task()
    assert titles(task) == [
        ("Issue refresh tokens at login", "completed"),
        ("Store refresh tokens hashed", "active"),
        ("Rotate refresh tokens on POST /refresh", "pending"),
        ("Write the token tests", "pending"),
    ]
    assert task.plan_version == 2
    with clew.open(project / ".clew" / "clew.db") as mem:
        removed = mem.removed_steps(task.id)
    assert [s.title for s in removed] == ["Rotate refresh tokens on /refresh"]
    # The compaction empties Claude Code's list; the hook at its SessionStart puts it back.
    session.write_upto(upto(TODOS, "toolu_01TodoA3") - 2)  # the /compact, before the next call
    start = {"source": "compact"}
    session.hook("SessionStart", **start)
    primed = session.hook("SessionStart", "prime", "--hook", **start)
    assert "clew kept your own task list from your TodoWrite calls" in primed
    assert "Current: step 2 — Store refresh tokens hashed" in primed
    assert "Completed steps 1 of 4: Issue refresh tokens at login." in primed
    # The list itself, as the agent would write it back, within the state's budget.
    listed = primed.split('tool="TodoWrite"', 1)[1].split("</clew-agent-list>")[0]
    assert listed.splitlines()[1:] == [
        "[x] 1. Issue refresh tokens at login",
        "[>] 2. Store refresh tokens hashed",
        "[ ] 3. Rotate refresh tokens on POST /refresh",
        "[ ] 4. Write the token tests",
    ]
    # `clew where`, in the project, answers for the list.
    where = run(project, "where")
    assert where.returncode == 0 and "Current: step 2 — Store refresh tokens hashed" in where.stdout
    # The list goes on after the compaction.
    session.write_upto(len(session.lines))
    session.hook("Stop")
    assert titles(session.task())[1:3] == [
        ("Store refresh tokens hashed", "completed"),
        ("Rotate refresh tokens on POST /refresh", "active"),
    ]


def test_after_clear_the_new_session_gets_the_list_back(project: Path) -> None:
    # /clear starts a new session (a new id, its transcript not written yet); the list kept
    # from the session before is the workspace's, so its SessionStart hook primes it.
    before = Session(project, TODOS, TODOS_ID)
    before.write_upto(upto(TODOS, "toolu_01TodoA2"))
    before.hook("PostToolUse")
    after = Session(project, TODOS, "c1ea2000-0000-4000-8000-00000000c1ea")
    after.path.unlink()
    after.hook("SessionStart", source="clear")
    primed = after.hook("SessionStart", "prime", "--hook", source="clear")
    assert "clew kept your own task list from your TodoWrite calls" in primed
    assert "Current: step 2 — Store refresh tokens hashed" in primed


def test_capturing_the_same_lines_again_changes_nothing(mem: clew.Memory, tmp_path: Path) -> None:
    transcript = tmp_path / f"{TODOS_ID}.jsonl"
    transcript.write_text("".join(lines_of(TODOS)[: upto(TODOS, "toolu_01TodoA2")]))
    mem.capture_transcript(str(transcript), workspace=str(tmp_path))
    task_id = mem.get_session(TODOS_ID).task_id
    assert task_id is not None
    before = mem.get_task(task_id)
    events = len(mem.journal(task_id=task_id))
    for _ in range(2):
        assert mem.capture_transcript(str(transcript)).added == 0
    assert mem.get_task(task_id) == before and len(mem.journal(task_id=task_id)) == events
    # A transcript rewritten under the archive (read whole, each line checked) neither.
    transcript.write_text("".join(lines_of(TODOS)[: upto(TODOS, "toolu_01TodoA2")]) + "\n")
    mem.capture_transcript(str(transcript))
    assert mem.get_task(task_id) == before and len(mem.journal(task_id=task_id)) == events
    # Only one task per session, however many captures; and it is ordinary task events,
    # which the projections are rebuilt from.
    assert [t.id for t in mem.list_tasks()] == [task_id]
    assert mem.verify().ok


def test_what_the_agent_recorded_through_clew_outranks_its_list(
    mem: clew.Memory, tmp_path: Path
) -> None:
    transcript = tmp_path / f"{TODOS_ID}.jsonl"
    lines = lines_of(TODOS)
    transcript.write_text("".join(lines[: upto(TODOS, "toolu_01TodoA1")]))
    mem.capture_transcript(str(transcript), workspace=str(tmp_path))
    kept = mem.get_session(TODOS_ID).task_id
    assert kept is not None
    # The agent says through clew that the tests step is skipped; its next TodoWrite leaves
    # that item pending (unchanged in its list), so clew keeps what the agent recorded.
    mem.update_step(kept, 3, status="skipped")
    # It also registers a task of its own in the workspace.
    own = mem.create_task("Refresh tokens", ["Design", "Build"], workspace=str(tmp_path))
    transcript.write_text("".join(lines[: upto(TODOS, "toolu_01TodoA2")]))
    mem.capture_transcript(str(transcript))
    task = mem.get_task(kept)
    assert task.plan[-1].title == "Write the token tests"
    assert task.plan[-1].status is StepStatus.SKIPPED
    # The list's own changes still apply: step 1 done, the new step active.
    assert task.plan[0].status is StepStatus.COMPLETED
    assert task.plan[1].status is StepStatus.ACTIVE
    # The kept task was changed last, yet the agent's own task is the workspace's first.
    assert [t.id for t in mem.workspace_tasks(str(tmp_path))] == [own.id, kept]
    assert mem.prime(str(tmp_path)).task_ids == (own.id, kept)
    # A task the agent cancelled is left alone by later calls.
    mem.update_task(kept, status="cancelled")
    cancelled = mem.get_task(kept)
    transcript.write_text("".join(lines))
    mem.capture_transcript(str(transcript))
    assert mem.get_task(kept) == cancelled


# -- Claude Code: TaskCreate and TaskUpdate ------------------------------------------------


def test_tasks_made_and_updated_one_by_one_come_back(project: Path) -> None:
    session = Session(project, TASKS, TASKS_ID)
    # A hook after every line, as PostToolUse and the others fall.
    for n in range(1, len(session.lines) + 1):
        session.write_upto(n)
        session.hook("PostToolUse")
    task = session.task()
    # Task 1 done, task 2 renamed and in progress, task 3 deleted (its step removed).
    assert titles(task) == [
        ("Fix the Dockerfile", "completed"),
        ("Push the image to registry.example.com", "active"),
    ]
    assert task.metadata["captured_plan"]["tool"] == "TaskCreate"
    primed = session.hook("SessionStart", "prime", "--hook", source="resume")
    assert "from your TaskCreate and TaskUpdate calls" in primed
    assert "Current: step 2 — Push the image to registry.example.com" in primed


def test_a_resumed_session_numbering_its_tasks_again_is_followed() -> None:
    # After a resume Claude Code numbers tasks from 1 again (its issue 76844): the result
    # says which number the new task got, and updates of that number reach it.
    before = AgentList((Item("Old", "completed", "1", step="s1"), Item("Older", "pending", "2")),
                       "TaskCreate", 2)  # fmt: skip
    calls = [
        Call("TaskCreate", {"subject": "New"}, "toolu_1"),
        Call("result", {"text": "Task #1 created successfully: New"}, "toolu_1"),
        Call("TaskUpdate", {"taskId": "1", "status": "in_progress"}, "toolu_2"),
    ]
    after = fold(before, calls)
    assert after is not None
    assert [(i.title, i.status, i.key) for i in after.items] == [
        ("Old", "completed", None),
        ("Older", "pending", "2"),
        ("New", "in_progress", "1"),
    ]
    assert after.pending == ()
    assert AgentList.from_json(json.loads(json.dumps(after.to_json()))) == after


# -- Codex: update_plan --------------------------------------------------------------------


def test_a_codex_plan_comes_back_with_its_explanation(project: Path, tmp_path: Path) -> None:
    # The rollout as Codex writes it as it goes: stamped now.
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    rollout = tmp_path / CODEX.name
    rollout.write_text("".join(json.dumps({**json.loads(x), "timestamp": now}) + "\n"
                               for x in lines_of(CODEX)))  # fmt: skip
    done = run(project, "capture", "--format", "codex", "--workspace", str(project), str(rollout))
    assert done.returncode == 0, done.stderr
    primed = run(project, "prime", "--hook", stdin=json.dumps({"cwd": str(project)}))
    assert "from your update_plan calls" in primed.stdout
    assert "Current: step 3 — Build and push the image" in primed.stdout
    assert "Completed steps 1-2 of 3" in primed.stdout
    assert "requirement.txt; the file is requirements.txt" in primed.stdout  # explanation
    where = run(project, "where")
    assert "Current: step 3 — Build and push the image" in where.stdout


def test_the_codex_plan_calls_are_read_from_their_json_arguments() -> None:
    given = {"plan": [{"step": "Build", "status": "in_progress"}]}
    item = {"type": "function_call", "name": "update_plan", "call_id": "call_1",
            "arguments": json.dumps(given)}  # fmt: skip
    assert plan_calls(item) == [
        Call("update_plan", {"plan": [{"step": "Build", "status": "in_progress"}]}, "call_1")
    ]
    # Arguments that are not a plan's, and other calls, are no list.
    assert plan_calls({**item, "arguments": "{not json"}) == []
    assert plan_calls({**item, "name": "shell"}) == []


# -- whatever the list holds, the transcript is captured -----------------------------------


def test_a_list_clew_cannot_keep_never_costs_the_capture(mem: clew.Memory, tmp_path: Path) -> None:
    line = json.loads(lines_of(TODOS)[upto(TODOS, "toolu_01TodoA1") - 2])
    assert line["message"]["content"][0]["name"] == "TodoWrite"
    odd = [{"todos": "all of it"}, {"todos": [{"content": "  ", "status": "done"}, 7]}]
    text = ""
    for n, written in enumerate(odd):
        line["message"]["content"][0]["input"] = written
        line["uuid"] = f"0000000{n}-0000-4000-8000-000000000000"
        text += json.dumps(line) + "\n"
    transcript = tmp_path / f"{TODOS_ID}.jsonl"
    transcript.write_text(text)
    done = mem.capture_transcript(str(transcript), workspace=str(tmp_path))
    assert done.added == 2 and done.session is not None and done.session.task_id is None
    assert mem.list_tasks() == []


def test_a_list_all_done_completes_its_task_and_a_new_item_reopens_it(
    mem: clew.Memory, tmp_path: Path
) -> None:
    line = json.loads(lines_of(TODOS)[upto(TODOS, "toolu_01TodoA1") - 2])
    transcript = tmp_path / f"{TODOS_ID}.jsonl"
    lists = [
        [{"content": "Ship it", "status": "in_progress", "activeForm": "Shipping it"}],
        [{"content": "Ship it", "status": "completed", "activeForm": "Shipping it"}],
        [{"content": "Ship it", "status": "completed", "activeForm": "Shipping it"},
         {"content": "Announce it", "status": "pending", "activeForm": "Announcing it"}],
    ]  # fmt: skip
    statuses = []
    for n, todos in enumerate(lists):
        line["message"]["content"][0]["input"] = {"todos": todos}
        line["uuid"] = f"0000000{n}-0000-4000-8000-000000000000"
        with transcript.open("a") as out:
            out.write(json.dumps(line) + "\n")
        mem.capture_transcript(str(transcript), workspace=str(tmp_path))
        task_id = mem.get_session(TODOS_ID).task_id
        assert task_id is not None
        statuses.append(mem.get_task(task_id).status)
    assert statuses == [TaskStatus.ACTIVE, TaskStatus.COMPLETED, TaskStatus.ACTIVE]


def test_a_fault_midway_undoes_only_the_list_s_writes(
    mem: clew.Memory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    transcript = tmp_path / f"{TODOS_ID}.jsonl"
    lines = lines_of(TODOS)
    transcript.write_text("".join(lines[: upto(TODOS, "toolu_01TodoA1")]))
    mem.capture_transcript(str(transcript), workspace=str(tmp_path))
    task_id = mem.get_session(TODOS_ID).task_id
    assert task_id is not None
    before = mem.get_task(task_id)

    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("a fault after the replan")

    monkeypatch.setattr(mem.plan_capture._tracker, "update_step", broken)
    transcript.write_text("".join(lines[: upto(TODOS, "toolu_01TodoA2")]))
    done = mem.capture_transcript(str(transcript))
    # The lines are archived; the replan the fault followed is undone with the rest.
    assert done.added == upto(TODOS, "toolu_01TodoA2") - upto(TODOS, "toolu_01TodoA1")
    assert mem.get_task(task_id) == before


def test_a_subagent_s_list_is_not_the_session_s() -> None:
    line = json.loads(lines_of(TODOS)[upto(TODOS, "toolu_01TodoA1") - 2])
    message = {k: line[k] for k in ("type", "uuid", "isSidechain", "message")}
    assert [c.name for c in plan_calls(message)] == ["TodoWrite"]
    assert plan_calls({**message, "isSidechain": True}) == []


def test_the_list_of_an_old_session_imported_is_kept_paused(
    mem: clew.Memory, clock: Any, tmp_path: Path
) -> None:
    # Importing last week's sessions must not fill the prompt with their lists: a list last
    # written over a day ago is history, kept paused (as maintenance pauses an idle task).
    clock.advance(9 * 24 * 3600)  # the transcripts are of 2026-11-27; now is 2026-12-01
    done = mem.capture_transcript(str(TODOS), workspace=str(tmp_path))
    assert done.session is not None and done.session.task_id is not None
    task = mem.get_task(done.session.task_id)
    assert task.status is TaskStatus.PAUSED and len(task.plan) == 4
    primed = mem.prime(str(tmp_path))
    assert primed.task_ids == () and "Paused here" in primed.text
    # Picking the session up again (a new call, written now) makes it active.
    line = json.loads(lines_of(TODOS)[-2])
    line["uuid"] = "0000000a-0000-4000-8000-000000000000"
    line["timestamp"] = "2026-12-01T09:00:00.000Z"
    line["message"]["content"][0]["input"]["todos"][3]["status"] = "in_progress"
    with (tmp_path / "now.jsonl").open("w") as out:
        out.writelines([*lines_of(TODOS), json.dumps(line) + "\n"])
    mem.capture_transcript(str(tmp_path / "now.jsonl"), key=TODOS_ID)
    assert mem.get_task(task.id).status is TaskStatus.ACTIVE


def test_a_session_resumed_after_its_list_was_paused_gets_it_back(project: Path) -> None:
    # A session picked up again days later (`claude --resume`): maintenance paused its list
    # while it was away, and the hook at its SessionStart still puts the list back.
    session = Session(project, TODOS, TODOS_ID)
    session.write_upto(upto(TODOS, "toolu_01TodoA2"))
    session.hook("PostToolUse")
    task = session.task()
    with clew.open(project / ".clew" / "clew.db") as mem:
        mem.update_task(task.id, status="paused")  # as `clew task tidy` leaves an idle task
        assert mem.prime(str(project)).task_ids == ()
    primed = session.hook("SessionStart", "prime", "--hook", source="resume")
    assert "clew kept your own task list from your TodoWrite calls" in primed
    assert "Current: step 2 — Store refresh tokens hashed" in primed
    # Another session in the folder is not given a list that is not its own.
    other = {"cwd": str(project), "session_id": "another", "hook_event_name": "SessionStart"}
    done = run(project, "prime", "--hook", stdin=json.dumps(other))
    assert "TodoWrite" not in done.stdout and "Paused here" in done.stdout


# -- the list given back, within its budget ------------------------------------------------


AT = "2026-11-27T14:00:00Z"


def _task(steps: list[tuple[str, StepStatus]]) -> clew.Task:
    empty = (None, None, None, None, None, (), False, AT, AT)
    plan = tuple(
        PlanItem(f"s{n}", "default", "t1", n, title, status, *empty)
        for n, (title, status) in enumerate(steps, 1)
    )
    return clew.Task(
        "t1", "default", "list", None, None, TaskStatus.ACTIVE, False, {}, 1, None, AT, AT,
        None, None, None, plan,
    )  # fmt: skip


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    steps=st.lists(
        st.tuples(st.text(min_size=1, max_size=300), st.sampled_from(list(StepStatus))),
        max_size=120,
    ),
    budget=st.integers(min_value=MIN_BUDGET, max_value=3000),
)
def test_the_checklist_always_fits_its_budget(
    steps: list[tuple[str, StepStatus]], budget: int
) -> None:
    listed = render_checklist(_task(steps), budget, counter())
    lines = listed.text.splitlines()
    assert counter().count(lines).tokens <= budget
    first_open = next((n for n, (_, s) in enumerate(steps, 1) if s is not StepStatus.COMPLETED), 0)
    if first_open:  # the first step not done is always named
        assert any(line[4:].startswith(f"{first_open}. ") for line in lines)


def test_a_long_list_comes_back_whole_while_it_fits() -> None:
    # A 43-item list, the length of the one Claude Code lost in its issue 979.
    steps = [(f"Port module {n:02d} of the billing service to the new ledger API",
              StepStatus.COMPLETED if n < 20 else StepStatus.ACTIVE if n == 20
              else StepStatus.PENDING) for n in range(1, 44)]  # fmt: skip
    listed = render_checklist(_task(steps), 1500, counter())
    assert listed.shown == 43 and listed.tokens <= 1500
    assert listed.text.splitlines()[19] == (
        "[>] 20. Port module 20 of the billing service to the new ledger API"
    )
    # Under a tight budget, the steps done before the current one fold into one line.
    tight = render_checklist(_task(steps * 3), 800, counter())
    assert tight.text.startswith("[x] 1-19. completed (clew task show t1 --all)")
    assert tight.text.endswith("more steps: clew task show t1 --all") and tight.tokens <= 800


def test_a_secret_in_an_item_is_redacted_and_the_item_keeps_its_step(
    mem: clew.Memory, tmp_path: Path
) -> None:
    line = json.loads(lines_of(TODOS)[upto(TODOS, "toolu_01TodoA1") - 2])
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    transcript = tmp_path / f"{TODOS_ID}.jsonl"
    lists = [
        [{"content": f"Rotate {token} in CI", "status": "in_progress"}],
        [{"content": f"Rotate {token} in CI", "status": "in_progress"},
         {"content": "Tell the team", "status": "pending"}],
    ]  # fmt: skip
    for n, todos in enumerate(lists):
        line["message"]["content"][0]["input"] = {"todos": todos}
        line["uuid"] = f"0000000{n}-0000-4000-8000-000000000000"
        with transcript.open("a") as out:
            out.write(json.dumps(line) + "\n")
        mem.capture_transcript(str(transcript), workspace=str(tmp_path))
    task_id = mem.get_session(TODOS_ID).task_id
    assert task_id is not None
    task = mem.get_task(task_id)
    assert token not in json.dumps(to_jsonable(task))
    assert [s.title for s in task.plan] == ["Rotate [redacted:github-token] in CI", "Tell the team"]
    assert mem.removed_steps(task_id) == []  # the same step, not a new one with the same text


def _hostile_capture(mem: clew.Memory, tmp_path: Path, hostile: list[dict[str, Any]]) -> None:
    """Capture one TodoWrite of `hostile` items: the line is archived, the store verifies,
    and whatever steps it keeps hold one line of at most 500 characters, no NUL."""
    line = json.loads(lines_of(TODOS)[upto(TODOS, "toolu_01TodoA1") - 2])
    line["message"]["content"][0]["input"] = {"todos": hostile}
    line["uuid"] = "00000009-0000-4000-8000-000000000000"
    transcript = tmp_path / f"{TODOS_ID}.jsonl"
    transcript.write_text(json.dumps(line) + "\n", encoding="utf-8")
    done = mem.capture_transcript(str(transcript), workspace=str(tmp_path))
    assert done.added == 1 and done.session is not None
    assert mem.verify().ok
    for task in mem.list_tasks():
        for step in mem.get_task(task.id).plan:
            assert "\x00" not in step.title and "\n" not in step.title
            assert len(step.title) <= 500


def test_hostile_list_items_never_cost_the_capture_nor_the_store(
    mem: clew.Memory, tmp_path: Path
) -> None:
    """Control characters and 200,000 characters in a list's items, on both backends."""
    hostile = [
        {"content": "\x1b[31mred\x07", "status": "in_progress", "activeForm": "x"},
        {"content": "two\nlines", "status": "completed"},
        {"content": "y" * 200_000, "status": "pending"},
    ]
    _hostile_capture(mem, tmp_path, hostile)


def test_a_nul_in_a_list_item_never_reaches_a_step(tmp_path: Path) -> None:
    """A NUL in an item (a SQLite file: the shared PostgreSQL test database must not keep a
    turn holding `\\u0000`, which its JSON casts refuse: see the closing note)."""
    with clew.open(tmp_path / "nul.db") as mem:
        _hostile_capture(mem, tmp_path, [{"content": "bad\x00byte", "status": "in_progress"}])
        assert mem.list_tasks(), "the list is kept, its NUL shown as '?'"
