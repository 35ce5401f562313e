"""Progress the way agents report it: a labelled set of messages read for completed steps
(precision and recall asserted), suggestions and their applied form (journaled as inferred
with the message that said it), and the model's running summary refining the state's
progress summary and next objective."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

import clew
from clew.providers import Completion, Message
from clew.tasks.progress import infer, stem, to_apply
from tests.conftest import FakeClock

LABELLED = Path(__file__).resolve().parent.parent / "benchmarks" / "data" / "progress_messages.json"
DEPLOY = ["Build the image", "Push image", "SSH into the server", "Run the container"]


def labelled() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(LABELLED.read_text(encoding="utf-8"))
    return data


def scores(cases: Sequence[dict[str, Any]], plans: dict[str, list[str]]) -> tuple[int, int, int]:
    """True positives, false positives, false negatives, counted per (message, step)."""
    tp = fp = fn = 0
    for case in cases:
        got, want = set(infer(plans[case["plan"]], case["message"])), set(case["done"])
        tp, fp, fn = tp + len(got & want), fp + len(got - want), fn + len(want - got)
    return tp, fp, fn


def test_the_labelled_set_is_read_with_no_false_completion() -> None:
    data = labelled()
    cases = data["cases"]
    negatives = [c for c in cases if not c["done"]]
    assert len(cases) >= 60 and len(negatives) >= 30
    tp, fp, fn = scores(cases, data["plans"])
    # Measured: 43 of 44 completions found (recall 0.977), none invented (precision 1.0).
    # The miss: "Backup done." for "Back up the database" (one shared word is not enough).
    assert fp == 0
    assert tp / (tp + fn) >= 0.97
    # What would be applied: nothing at all from the negative set, and never a wrong step.
    for case in cases:
        plan = [_item(n, title) for n, title in enumerate(data["plans"][case["plan"]], 1)]
        applied = {plan.index(step) + 1 for step, _ in to_apply(plan, case["message"])}
        assert applied <= set(case["done"]), case


def _item(n: int, title: str) -> clew.PlanItem:
    return clew.PlanItem(
        f"s{n:09d}",
        "default",
        "t",
        n,
        title,
        clew.StepStatus.PENDING,
        None,
        None,
        None,
        None,
        None,
        (),
        False,
        "2026-11-22T09:00:00.000000Z",
        "2026-11-22T09:00:00.000000Z",
    )


@pytest.mark.parametrize("word", ["done", "finished", "completed", "complete"])
@given(n=st.integers(1, 6), pad=st.sampled_from(["", "Note: ", "ok so ", "hmm, "]))
@settings(max_examples=25, deadline=None)
def test_a_negated_or_planned_step_is_never_done(word: str, n: int, pad: str) -> None:
    titles = [f"Task part {k}" for k in range(1, 7)]
    for text in (
        f"{pad}Step {n} is not {word} yet",
        f"{pad}step {n} isn't {word}",
        f"{pad}will get step {n} {word} next",
        f"{pad}Is step {n} {word}?",
        f"{pad}step {n} failed, not {word}",
        f"{pad}once step {n} is {word} we move on",
    ):
        assert infer(titles, text) == {}, text
    assert set(infer(titles, f"{pad}Step {n} {word}")) == {n}


# Text made of the pieces the reader looks for (and its own private marker) finds the corners.
PIECES = st.text(alphabet="step 0123456789,-\u2013and done not?.\ue000#", max_size=80)


@given(st.lists(st.text(max_size=30), min_size=1, max_size=8), st.text(max_size=300) | PIECES)
@settings(max_examples=150, deadline=None)
def test_any_message_reads_without_error_and_names_only_plan_steps(
    titles: list[str], text: str
) -> None:
    found = infer(titles, text)
    assert all(1 <= n <= len(titles) for n in found)


def test_stems_join_the_forms_of_one_word() -> None:
    assert stem("pushed") == stem("pushing") == stem("push") == stem("pushes")
    assert stem("built") == stem("build") and stem("verified") == stem("verify")
    assert stem("images") == stem("image") and stem("created") == stem("create")


# -- through the API --------------------------------------------------------------------------


def progress(mem: clew.Memory, mode: str) -> clew.Memory:
    mem.settings = mem.settings._replace(progress=mode)
    return mem


def test_by_default_a_message_that_only_shares_words_suggests_and_changes_nothing(
    mem: clew.Memory, clock: FakeClock
) -> None:
    task = mem.create_task("Deploy", DEPLOY)
    mem.update_task(task.id, step=1, step_status="completed")
    clock.advance(5)
    mem.update_task(task.id, message="Finished pushing the image to ghcr.io")
    brief = mem.where(task.id)
    assert [(s.step, s.sure) for s in brief.suggestions] == [(2, False)]
    assert 'Messages suggest step 2 is done: "Finished pushing' in brief.text
    assert mem.get_task(task.id).step(2).status is clew.StepStatus.PENDING
    # The step changes later: the older message no longer suggests anything about it.
    clock.advance(5)
    mem.update_step(task.id, 2, status="active")
    assert mem.where(task.id).suggestions == ()


def test_stated_progress_is_applied_by_default_and_journaled_with_its_message(
    mem: clew.Memory, clock: FakeClock
) -> None:
    task = mem.create_task("Deploy", DEPLOY)
    mem.update_task(task.id, step=1, step_status="completed", message="Step 1 done")
    clock.advance(5)
    # The call's own step change is its own; step 2 is applied from the message.
    mem.update_task(task.id, message="Finished Push image, moving on", step=3, step_status="active")
    after = mem.get_task(task.id)
    assert [s.status.value for s in after.plan] == ["completed", "completed", "active", "pending"]
    (message,) = [m for m in mem.list_messages(task.id) if m.content.startswith("Finished")]
    updates = [e for e in mem.journal(task_id=task.id) if e.type == "step.updated"]
    inferred = [e for e in updates if e.data.get("inferred")]
    assert len(inferred) == 1 and inferred[0].data["step_id"] == after.step(2).id
    assert inferred[0].data["message_id"] == message.id and inferred[0].data["how"] == "title"
    brief = mem.where(task.id).text
    assert f'Step 2 counts as done from message {message.id}: "Finished Push image' in brief
    assert not any(e.data.get("inferred") for e in updates if e.data["step_id"] != after.step(2).id)
    assert any(f"inferred from message {message.id}" in h.text for h in mem.history(task.id))
    # A finished step queues its extraction, as any completion does.
    assert [j.step_id for j in mem.list_jobs(task_id=task.id)][:1] == [after.step(2).id]
    assert mem.verify().ok


@pytest.mark.parametrize(
    "text",
    [
        "Step 2 is not done yet",
        "Will finish step 3 next",
        "Step 2 failed: registry denied the push",
        "Pushed the image but the registry rejected it",
        "Is step 2 done?",
    ],
)
def test_apply_never_completes_a_step_the_message_does_not_say_is_done(
    mem: clew.Memory, text: str
) -> None:
    progress(mem, "apply")
    task = mem.create_task("Deploy", DEPLOY)
    mem.add_message(task.id, text)
    assert all(s.status is clew.StepStatus.PENDING for s in mem.get_task(task.id).plan)


def test_apply_leaves_guesses_system_notes_and_closed_tasks_alone(
    mem: clew.Memory,
) -> None:
    task = mem.create_task("Ship", ["Push image to staging", "Push image to prod"])
    mem.add_message(task.id, "pushed the image")  # no word only one title has: nothing
    assert mem.where(task.id).suggestions == ()
    mem.add_message(task.id, "pushed the image to staging")  # only suggested
    assert [s.step for s in mem.where(task.id).suggestions] == [1]
    mem.add_message(task.id, "[wait resolved] step 1 done", role="system")
    assert all(s.status is clew.StepStatus.PENDING for s in mem.get_task(task.id).plan)
    mem.update_task(task.id, status="completed")
    mem.add_message(task.id, "step 1 done")
    assert all(s.status is clew.StepStatus.PENDING for s in mem.get_task(task.id).plan)


def test_off_neither_suggests_nor_applies(mem: clew.Memory) -> None:
    progress(mem, "off")
    task = mem.create_task("Deploy", DEPLOY)
    mem.add_message(task.id, "Step 1 done")
    assert mem.where(task.id).suggestions == ()
    assert mem.get_task(task.id).step(1).status is clew.StepStatus.PENDING


@pytest.mark.sqlite_only("reads config.toml beside the store file (a team store has none)")
def test_the_mode_comes_from_the_environment_or_config(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLEW_PROGRESS", "apply")
    with clew.open(db) as mem:
        assert mem.settings.progress == "apply"
    monkeypatch.delenv("CLEW_PROGRESS")
    (db.parent / "config.toml").write_text('[progress]\nmode = "off"\n')
    with clew.open(db) as mem:
        assert mem.settings.progress == "off"
    monkeypatch.setenv("CLEW_PROGRESS", "sometimes")
    with pytest.raises(clew.ValidationError, match="apply, suggest, off"):
        clew.open(db)


def test_the_task_update_tool_says_what_the_message_did(mem: clew.Memory) -> None:
    from clew.tools.registry import call

    task = mem.create_task("Deploy", DEPLOY)
    said = call(mem, "task_update", {"task_id": task.id, "message": "Pushed the image"})
    assert "suggests step 2 is done" in said.text and 'step_status="completed"' in said.text
    said = call(mem, "task_update", {"task_id": task.id, "message": "Step 2 done"})
    assert "Marked step 2 completed" in said.text and 'step_status="pending"' in said.text
    assert mem.get_task(task.id).step(2).status is clew.StepStatus.COMPLETED
    progress(mem, "suggest")
    said = call(mem, "task_update", {"task_id": task.id, "message": "Step 3 done"})
    assert "suggests step 3 is done" in said.text
    assert mem.get_task(task.id).step(3).status is clew.StepStatus.PENDING


# -- the model refines the progress summary and next objective --------------------------------


class Scripted:
    """A provider that answers from a script; `during` runs while it 'thinks'."""

    name = "scripted"
    model = "scripted-small"

    def __init__(self, answers: list[str], during: Any = None) -> None:
        self.answers, self.during = answers, during

    def complete(
        self, messages: Sequence[Message], *, max_tokens: int = 1024, temperature: float = 0.0
    ) -> Completion:
        if self.during is not None:
            self.during()
        return Completion(self.answers.pop(0), 10, 10, self.model)


SUMMARY = (
    "Steps 1-2 are done; the image v1.2.3 is in ghcr.io.\n"
    "PROGRESS: Image built and pushed (v1.2.3); the server is next.\n"
    "NEXT: SSH into the server and pull v1.2.3."
)


def summarized(mem: clew.Memory, provider: Scripted) -> str:
    mem.settings = mem.settings._replace(small=provider, summary_every=2, worker="off")
    task = mem.create_task("Deploy", DEPLOY)
    mem.add_message(task.id, "built v1.2.3")
    mem.add_message(task.id, "pushed to ghcr.io")
    mem.run_jobs()
    return task.id


def test_the_models_summary_refines_the_state_and_is_attributed(mem: clew.Memory) -> None:
    task_id = summarized(mem, Scripted([SUMMARY]))
    task = mem.get_task(task_id)
    assert task.summary == "Image built and pushed (v1.2.3); the server is next."
    assert task.next_objective == "SSH into the server and pull v1.2.3."
    assert (
        mem.running_summary(task_id).text == "Steps 1-2 are done; the image v1.2.3 is in ghcr.io."
    )
    state = yaml.safe_load(mem.state(task_id).text)
    assert state["progress_summary"] == task.summary and state["next_objective"]
    (update,) = [e for e in mem.journal(task_id=task_id) if e.type == "task.updated"]
    assert update.data["by"]["model"] == "scripted-small" and update.data["by"]["job_id"]
    assert any("by the model scripted-small" in h.text for h in mem.history(task_id))
    assert mem.verify().ok


def test_the_agents_own_change_during_the_models_call_wins(mem: clew.Memory, db: Path) -> None:
    def agent_writes() -> None:
        with clew.open(db) as other:
            (task,) = other.list_tasks()
            other.update_task(task.id, next_objective="Roll back first")

    task_id = summarized(mem, Scripted([SUMMARY], during=agent_writes))
    task = mem.get_task(task_id)
    assert task.next_objective == "Roll back first"  # the agent's, set while the model ran
    assert task.summary == "Image built and pushed (v1.2.3); the server is next."


def test_a_summary_without_the_two_lines_is_the_progress_summary(mem: clew.Memory) -> None:
    task_id = summarized(mem, Scripted(["Steps 1-2 done; on step 3."]))
    task = mem.get_task(task_id)
    assert task.summary == "Steps 1-2 done; on step 3." and task.next_objective is None


# -- the judgement set (issue 25): stated progress applied, guesses only suggested ------------


def test_the_judgement_set_holds_the_floors(monkeypatch: pytest.MonkeyPatch) -> None:
    """benchmarks/judgement/data/progress.jsonl read through the API with its defaults:
    what is applied is right 99.5% of the time and what is suggested 95%, on the whole set
    and on each held-out part."""
    import importlib.util

    monkeypatch.delenv("CLEW_PROGRESS", raising=False)
    monkeypatch.setenv("CLEW_WORKER", "off")
    monkeypatch.setenv("CLEW_MAINTENANCE", "off")
    path = LABELLED.parent.parent / "judgement" / "progress.py"
    spec = importlib.util.spec_from_file_location("judgement_progress", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    cases = module.cases()
    assert len(cases) >= 400
    assert sum(c["split"] == "held-out" for c in cases) >= 100
    rows = {r["kind"]: r for r in module.score(cases)}
    for part in ("", "/held-out", "/held-out-1"):
        assert rows[f"applied{part}"]["precision"] >= 0.995, rows[f"applied{part}"]
        assert rows[f"suggested{part}"]["precision"] >= 0.95, rows[f"suggested{part}"]
    # Measured (this commit): applied recall 0.992, suggested recall 0.739 on the whole set.
    assert rows["applied"]["recall"] >= 0.95 and rows["suggested"]["recall"] >= 0.65


def test_the_task_memory_designs_example_leaves_steps_1_to_3_done(mem: clew.Memory) -> None:
    """The design's example: three messages that plainly say steps 1-3 are done leave
    them done in the brief, by default, each naming the message it came from."""
    task = mem.create_task(
        "Deploy coursefolio",
        [
            "Build docker image",
            "Push to registry",
            "SSH into server",
            "Pull image and run container",
        ],
    )
    for text in (
        "Step 1 done — image built as v1.2.3",
        "Step 2 done — pushed to ghcr.io",
        "Step 3 done — SSH connected to server",
    ):
        mem.update_task(task.id, message=text)
    brief = mem.where(task.id)
    assert [s.number for s in brief.completed] == [1, 2, 3]
    assert "Completed steps 1-3 of 4" in brief.text and "No step of 4" not in brief.text
    assert "next up is step 4 — Pull image and run container" in brief.text
    assert "Step 3 counts as done from message" in brief.text and brief.suggestions == ()


def test_the_issues_failures_are_neither_applied_nor_suggested(mem: clew.Memory) -> None:
    release = mem.create_task(
        "Release search-gateway",
        [
            "Build image search-gateway:v2.19.2",
            "Run smoke tests",
            "Push image",
            "Tag v2.19.2",
            "Update changelog",
            "Deploy v2.19.2 to staging",
        ],
    )
    mem.add_message(release.id, "Finished Build image search-gateway:v2.19.2")
    statuses = [s.status.value for s in mem.get_task(release.id).plan]
    assert statuses == ["completed"] + ["pending"] * 5
    assert mem.where(release.id).suggestions == ()
    backfill = mem.create_task("Verify emails", ["Add email_verified", "Backfill email_verified"])
    mem.add_message(backfill.id, "Picking up Backfill email_verified…")
    mem.add_message(backfill.id, "Backfill email_verified: starting, 0 of 2.4M rows")
    assert mem.where(backfill.id).suggestions == ()
    assert all(s.status.value == "pending" for s in mem.get_task(backfill.id).plan)


def test_the_agents_later_status_outranks_an_applied_message(
    mem: clew.Memory, clock: FakeClock
) -> None:
    """A step applied from a message and set back by the agent stays as the agent set it:
    the message is not applied or suggested again, whatever is written after it."""
    task = mem.create_task("Deploy", DEPLOY)
    mem.add_message(task.id, "Step 2 done")
    assert mem.get_task(task.id).step(2).status is clew.StepStatus.COMPLETED
    clock.advance(5)
    mem.update_step(task.id, 2, status="pending")
    clock.advance(5)
    mem.add_message(task.id, "Built the image (sha256:ab12)")  # suggests step 1 only
    mem.update_task(task.id, step=1, step_status="completed", message="Step 1 done")
    assert mem.get_task(task.id).step(2).status is clew.StepStatus.PENDING
    brief = mem.where(task.id)
    assert brief.suggestions == () and "Step 2 counts as done" not in brief.text


TITLE_WORDS = st.sampled_from(
    [
        "verified",
        "done",
        "complete",
        "finished",
        "build",
        "image",
        "deploy",
        "v2.19.2",
        "email_verified",
        "backfill",
        "tests",
        "passed",
        "rows",
        "staging",
        "node",
        "pool",
    ]
)


@given(
    st.lists(st.lists(TITLE_WORDS, min_size=1, max_size=4).map(" ".join), min_size=2, max_size=6),
    st.integers(0, 5),
    st.sampled_from(
        [
            "{}",
            "Picking up {}",
            "Starting {}",
            "Working on {}",
            "Next: {}",
            "About to {}",
            "Is {} done?",
            "{} is not done yet",
            "Will finish {}",
        ]
    ),
)
@settings(max_examples=150, deadline=None)
def test_a_title_alone_or_in_intent_says_nothing_of_any_step(
    titles: list[str], pick: int, form: str
) -> None:
    """Words inside a step's title are never completion words for it, and a message that
    names one step (or merely starts on it) says nothing of the others."""
    title = titles[pick % len(titles)]
    if any(t.lower() != title.lower() and t.lower() in title.lower() for t in titles):
        return  # the title holds another step's title ("verified done" holds "verified")
    assert infer(titles, form.format(title)) == {}, (titles, form.format(title))


@given(
    st.lists(st.lists(TITLE_WORDS, min_size=1, max_size=4).map(" ".join), min_size=2, max_size=6),
    st.integers(0, 5),
    st.sampled_from(["Finished {}", "{}: done", "{} — done", "✅ {}", "- [x] {}", "Completed {}"]),
)
@settings(max_examples=150, deadline=None)
def test_an_exact_title_with_a_completion_word_is_stated_for_that_step_alone(
    titles: list[str], pick: int, form: str
) -> None:
    title = titles[pick % len(titles)]
    if sum(t.lower() == title.lower() for t in titles) > 1:
        return  # a title two steps share names neither
    text = form.format(title)
    if title.lower() in {"finished", "done", "completed", "complete"}:
        return  # "Finished finished": the completion word is the title itself
    if any(t.lower() != title.lower() and t.lower() in text.lower() for t in titles):
        return  # another title is in the message too (or holds this one): it names that
    found = infer(titles, text)
    n = titles.index(title) + 1
    assert set(found) == {n} and found[n].stated, (titles, text, found)


def test_suggest_mode_applies_nothing_and_shows_stated_steps_as_sure(mem: clew.Memory) -> None:
    progress(mem, "suggest")
    task = mem.create_task("Deploy", DEPLOY)
    mem.add_message(task.id, "Step 1 done")
    mem.add_message(task.id, "Pushed the image")
    assert all(s.status is clew.StepStatus.PENDING for s in mem.get_task(task.id).plan)
    brief = mem.where(task.id)
    assert [(s.step, s.sure) for s in brief.suggestions] == [(1, True), (2, False)]
    assert "counts as done from message" not in brief.text


def test_the_words_before_step_name_one_step_as_a_suggestion() -> None:
    migrate = [
        "Back up the database",
        "Convert the schema",
        "Migrate the data",
        "Verify row counts",
    ]
    found = infer(migrate, "Done with the migration step")
    assert set(found) == {3} and not found[3].stated
    assert set(infer(migrate, "Done with the verify step, not the migration step")) == {4}
    assert infer(migrate, "Not done with the migration step") == {}
    assert infer(["Push image to staging", "Push image to prod"], "Done with the push step") == {}


def test_the_cli_says_which_steps_a_message_completed(cli: Any) -> None:
    task = cli("task", "new", "Deploy", "--plan", *DEPLOY, "--json")
    tid = json.loads(task.out)["id"]
    said = cli("task", "update", tid, "-m", "Step 1 done", "--step", "2", "--step-status", "active")
    assert said.code == 0 and "1/4 steps completed" in said.out
    assert (
        f"step 1 completed: your message says it is done (if not: clew task update {tid}"
        in said.out
    )
    said = cli(
        "task", "update", tid, "-m", "Step 2 done", "--step", "2", "--step-status", "completed"
    )
    assert "step 2 completed: your message" not in said.out  # the call's own change
    assert "step" not in cli("task", "update", tid, "-m", "Pushed the image").out.split("\n", 1)[1]
