"""Search answers the question asked, current first (issue 25, must-have 5): every kind a user
calls recorded is found, a superseded record ranks below the one that replaced it and says
so, an identifier as written ranks above meaning, and the README's example works with the
core install (keyword search, no vectors)."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import clew
from clew.errors import ValidationError
from clew.models import OUTLINE_KINDS, SEARCH_KINDS, AddStep
from clew.search import coverage, ranking

CORE = (  # a `clew` process as the core install runs it: the vectors extra unavailable
    "import sys, clew.search.vectors as v, clew.search.embedding as e;"
    " v.embedder_available = e.available = lambda name=None: False;"
    " from clew.cli import main; sys.exit(main(sys.argv[1:]))"
)


def _clew(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    src = str(Path(clew.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": src}
    return subprocess.run(
        [sys.executable, "-c", CORE, "--db", str(db), *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


def _readme(mem: clew.Memory) -> tuple[str, str, str]:
    """The README's shell example, through the API: a task, a replan naming the registry,
    a decision to push to Docker Hub superseded by one to push to ghcr.io."""
    task = mem.create_task("Deploy", ["Build", "Push", "Run"], goal="v1.2.3 live")
    mem.replan(task.id, [AddStep("Log in to the registry", 3)], reason="pull was denied")
    old = mem.add_entry("decision", "Push to Docker Hub", task_id=task.id)
    new = mem.add_entry(
        "decision",
        "Push to ghcr.io instead of Docker Hub: Docker Hub rate-limits pulls",
        task_id=task.id,
        supersedes=old.id,
    )
    return task.id, old.id, new.id


def test_the_readme_example_in_a_real_process_with_the_core_install(tmp_path: Path) -> None:
    db = tmp_path / "clew.db"
    made = _clew(
        db,
        "--create",
        "task",
        "new",
        "Deploy",
        "--plan",
        "Build",
        "Push",
        "Run",
        "--goal",
        "v1.2.3 live",
    )
    assert made.returncode == 0, made.stderr
    tid = made.stdout.strip()
    assert (
        _clew(
            db,
            "task",
            "replan",
            tid,
            "--insert",
            "3",
            "Log in to the registry",
            "--reason",
            "pull was denied",
        ).returncode
        == 0
    )
    old = _clew(db, "task", "record", tid, "--decision", "Push to Docker Hub").stdout.strip()
    new = _clew(
        db,
        "note",
        tid,
        "--type",
        "decision",
        "--summary",
        "Push to ghcr.io instead of Docker Hub: Docker Hub rate-limits pulls",
        "--supersedes",
        old,
    ).stdout.strip()
    found = _clew(db, "search", "which registry did we pick?", "--json")
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)
    assert hits[0]["id"] == new and hits[0]["label"] == "decision"
    pushing = json.loads(
        _clew(db, "search", "what did we decide about pushing the image?", "--json").stdout
    )
    ids = [h["id"] for h in pushing]
    assert ids[0] == new and ids.index(new) < ids.index(old)
    shown = pushing[ids.index(old)]
    assert shown["label"] == "decision, superseded" and shown["superseded_by"] == new
    text = _clew(db, "search", "what did we decide about pushing the image?").stdout
    assert f"[decision, superseded by {new}]" in text
    history = json.loads(
        _clew(
            db,
            "search",
            "what did we decide about pushing the image?",
            "--include-superseded",
            "--json",
        ).stdout
    )
    assert {h["id"] for h in history[:2]} == {old, new}  # alongside, as they match
    answer = _clew(db, "ask", tid, "what did we decide about pushing the image?")
    assert "ghcr.io" in answer.stdout and "Push to Docker Hub\n" not in answer.stdout


@pytest.mark.parametrize("mode", ["keyword", "auto"])
def test_current_first_on_both_backends(mem: clew.Memory, mode: str) -> None:
    _, old, new = _readme(mem)
    for question in ("which registry did we pick?", "what did we decide about pushing the image?"):
        hits = mem.search_all(question, mode=mode)
        ids = [h.id for h in hits]
        assert ids[0] == new, (question, hits)
        if old in ids:
            assert ids.index(old) > ids.index(new)
            assert hits[ids.index(old)].superseded_by == new


def test_a_superseded_hit_brings_its_replacement_even_unmatched(mem: clew.Memory) -> None:
    old = mem.add_entry("decision", "Store sessions in memcached")
    new = mem.add_entry("decision", "Use Redis instead: it persists", supersedes=old.id)
    hits = mem.search_all("memcached", mode="keyword")
    assert [h.id for h in hits][:2] == [new.id, old.id]
    assert hits[1].label == "decision, superseded" and hits[1].superseded_by == new.id
    assert [h.id for h in mem.search_all("memcached", mode="keyword", include_superseded=True)] == [
        old.id
    ]


def test_a_chain_of_replacements_leads_to_the_current_one(mem: clew.Memory) -> None:
    a = mem.add_entry("decision", "Deploy with fabric scripts")
    b = mem.add_entry("decision", "Deploy with ansible", supersedes=a.id)
    c = mem.add_entry("decision", "Deploy with kamal", supersedes=b.id)
    hits = mem.search_all("fabric scripts", mode="keyword")
    assert hits[0].id == c.id and hits[1].superseded_by == c.id


def test_every_new_kind_is_searched_and_narrowed_by_kind(mem: clew.Memory) -> None:
    task = mem.create_task(
        "Migrate billing to stripe",
        ["Export invoices", "Backfill ledger"],
        goal="zero double charges",
    )
    mem.update_task(task.id, step=2, step_status="active", active_issue="ledger_p004 lock timeout")
    mem.set_task_record(task.id, answer="Invoices moved; ledger backfilled in 3 partitions")
    mem.add_pattern("deploys", "blue-green rollout", description="two fleets, switch traffic")
    mem.add_guardrail("never force-push to main", pattern=r"git push .*--force")
    expected = {
        "task": "stripe billing",
        "goal": "double charges",
        "step": "ledger_p004",
        "answer": "partitions backfilled",
        "pattern": "blue-green",
        "guardrail": "force-push",
    }
    for kind, words in expected.items():
        hits = mem.search_all(words, kinds=kind, mode="keyword")
        assert hits and hits[0].kind == kind, (kind, hits)
        assert hits[0].open.startswith("clew ")
    assert {h.kind for h in mem.search_all("ledger", mode="keyword")} >= {"step", "answer"}
    assert set(OUTLINE_KINDS) <= set(SEARCH_KINDS)


def test_search_kind_pattern_in_the_cli(cli: object, mem: clew.Memory) -> None:
    mem.add_pattern("deploys", "blue-green rollout", description="two fleets, switch traffic")
    run = cli  # type: ignore[assignment]
    result = run("search", "blue-green", "--kind", "pattern", "--json")  # type: ignore[operator]
    assert result.code == 0, result.err
    assert json.loads(result.out)[0]["kind"] == "pattern"
    bad = run("search", "x", "--kind", "patterns")  # type: ignore[operator]
    assert bad.code == 2 and "pattern" in bad.err and "Traceback" not in bad.err


def test_history_of_the_outline_is_labelled_and_ranked_last(mem: clew.Memory) -> None:
    kept = mem.add_guardrail("never force-push to main without review")
    gone = mem.add_guardrail("never force-push to main")
    mem.set_guardrail(gone.id, enabled=False)
    hits = mem.search_all("force-push to main", kinds="guardrail", mode="keyword")
    assert [h.id for h in hits] == [kept.id, gone.id]
    assert hits[-1].label.endswith(", disabled")


def test_an_identifier_as_written_ranks_above_meaning(mem: clew.Memory) -> None:
    task = mem.create_task("Backfill orders", ["Backfill partitions"])
    mem.update_task(task.id, message="Backfilling the orders partitions one by one, slowly")
    exact = mem.add_entry("error", "orders_p004 backfill failed: lock timeout", task_id=task.id)
    hits = mem.search_all("why did the orders backfill of orders_p004 fail?", mode="auto")
    assert hits[0].id == exact.id
    f2000 = mem.add_entry("discovery", "f2000 flag hides the beta banner")
    hits = mem.search_all("what does f2000 do to the banner", mode="auto")
    assert hits[0].id == f2000.id


def test_ask_answers_from_current_records_and_says_when_only_history(mem: clew.Memory) -> None:
    task = mem.create_task("Release v2.19.2", ["Build", "Publish"])
    old = mem.add_entry("decision", "Publish the release to Docker Hub", task_id=task.id)
    mem.add_entry(
        "decision",
        "Publish the release to ghcr.io: Docker Hub rate-limits pulls",
        task_id=task.id,
        supersedes=old.id,
    )
    answer = mem.ask(task.id, "which registry did we pick for the release?")
    assert "ghcr.io" in answer.text
    assert f"{old.id} [decision" not in answer.text
    err = mem.add_entry(
        "error",
        "flaky checkout of the release assets",
        task_id=task.id,
        resolution="retried with a cache",
    )
    answer = mem.ask(task.id, "what went wrong with the checkout of the assets?")
    assert err.id in answer.text and "history" in (answer.note or "")


def test_the_ranking_rules_are_pure() -> None:
    asked = coverage.Asked(("f2000",), (), (), "f2000", frozenset(), None)
    assert ranking.identifiers(asked) == ("f2000",)
    assert ranking.identifiers(asked._replace(words=("release", "3pm"))) == ()
    assert ranking.asks_for_history("what did we use before ghcr?")
    assert not ranking.asks_for_history("which registry did we pick?")
    with pytest.raises(ValidationError):
        clew.open(":memory:").search_all("x", kinds="nope")


def _blue_green(mem: clew.Memory) -> str:
    mem.add_pattern(
        "deploys",
        "retry with exponential backoff and jitter",
        description="when a remote API answers 429 or 503",
    )
    mem.add_pattern(
        "testing", "one database per test worker", description="isolates tests that share state"
    )
    rollout = mem.add_pattern(
        "deploys",
        "blue-green rollout",
        description="run two identical"
        " fleets and switch traffic to the new one, so a new version never"
        " leaves users without the site",
    )
    task = mem.create_task(
        "Deploy the API", ["Cut the release"], goal="zero downtime for the release"
    )
    content = mem.assemble(task=task.id).messages[0]["content"]
    return str(content) if rollout else ""


@pytest.mark.skipif(
    not importlib.import_module("clew.search.vectors").embedder_available(),
    reason="the vectors extra is not installed",
)
def test_a_pattern_reaches_the_task_context_by_meaning(mem: clew.Memory) -> None:
    text = _blue_green(mem)
    assert "blue-green rollout" in text
    assert "one database per test worker" not in text


def test_without_vectors_the_context_takes_patterns_by_their_words(
    mem: clew.Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    from clew.search import retrieval

    monkeypatch.setattr(retrieval, "embedder_available", lambda: False)
    assert "blue-green rollout" not in _blue_green(mem)


def test_ask_what_is_blocking_the_release_from_the_open_error(mem: clew.Memory) -> None:
    task = mem.create_task("Release v2.19.2", ["Build image", "Push image", "Tag release"])
    old = mem.add_entry("decision", "Push to Docker Hub", task_id=task.id)
    mem.add_entry(
        "decision",
        "Push to ghcr.io instead of Docker Hub: Docker Hub rate-limits pulls",
        task_id=task.id,
        supersedes=old.id,
    )
    fixed = mem.add_entry(
        "error",
        "docker push to Docker Hub blocked the release: rate limit",
        task_id=task.id,
        resolution="moved to ghcr.io",
    )
    now = mem.add_entry(
        "error",
        "ghcr.io push denied: the token lacks write:packages, blocking the release",
        task_id=task.id,
    )
    answer = mem.ask(task.id, "what is blocking the release?")
    assert now.id in answer.text and fixed.id not in answer.text and old.id not in answer.text


@pytest.mark.parametrize("mode", ["keyword", "auto"])
def test_the_readme_example_in_a_store_of_other_work(mem: clew.Memory, mode: str) -> None:
    other = mem.create_task("Billing service", ["Schema", "API", "Deploy"])
    for said in (
        "Use PostgreSQL 16 for billing",
        "Expose billing over gRPC",
        "Run migrations with alembic",
        "Cache invoices in Redis for an hour",
        "Deploy billing with kamal",
    ):
        mem.add_entry("decision", said, task_id=other.id)
    mem.update_task(other.id, message="Looking at image registries again: pulls are slow")
    _, old, new = _readme(mem)
    mem.update_task(_, message="[stuck] the push step failed three times in a row")
    hits = mem.search_all("which registry did we pick?", mode=mode)
    assert hits[0].id == new, hits
    ids = [h.id for h in mem.search_all("what did we decide about pushing the image?", mode=mode)]
    assert ids[0] == new and (old not in ids or ids.index(old) > ids.index(new))


def test_the_tool_labels_history_and_takes_include_superseded(mem: clew.Memory) -> None:
    from clew.tools import registry as tools

    _, old, new = _readme(mem)
    found = tools.call(mem, "memory_search", {"query": "Docker Hub", "mode": "keyword"})
    assert f"[decision, superseded by {new}]" in found.text
    assert found.text.index(new) < found.text.index(f"{old} [decision, superseded")
    alongside = tools.call(
        mem, "memory_search", {"query": "Docker Hub", "mode": "keyword", "include_superseded": True}
    )
    assert old in alongside.text
    step = tools.call(mem, "memory_search", {"query": "registry", "kinds": ["step"]})
    assert "Log in to the registry" in step.text and "step" in step.text
