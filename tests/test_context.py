"""Token-aware context assembly: tiers within their budgets, the whole within its budget,
tool calls never separated from their results, an explain record that adds up."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import clew
from clew.conversations.context import NO_RESULT
from clew.core.tokens import counter
from tests.test_conversations import call, result

SLOW = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]


def calls_and_results_pair(messages: tuple[dict[str, Any], ...]) -> None:
    """Every result follows its call, every call has its result (chat or Responses form)."""
    pending: set[str] = set()
    for m in messages:
        for c in m.get("tool_calls") or []:
            pending.add(c["id"])
        if m.get("type") == "function_call":
            pending.add(m["call_id"])
        answered = m.get("tool_call_id") or (
            m.get("call_id") if m.get("type") == "function_call_output" else None
        )
        if answered is not None:
            assert answered in pending, f"result {answered} without its call"
            pending.discard(answered)
    assert not pending, f"calls without results: {pending}"


def chat(n: int, size: int = 40) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in range(n):
        out += [
            {"role": "user", "content": f"request {i}: " + "word " * size},
            call(f"c{i}", "bash", command=f"make step{i}"),
            result(f"c{i}", f"output of step {i}\n" * (size // 4 + 1)),
            {"role": "assistant", "content": f"step {i} done"},
        ]
    return out


def test_tiers_are_explained_and_the_total_is_within_budget(mem: clew.Memory) -> None:
    task = mem.create_task("auth", ["design", "build"], goal="JWT auth")
    mem.add_decision(task.id, "tokens live 15 minutes")
    mem.add_guardrail("never push to main", enforcement="block")
    session = mem.start_session(system_prompt="You are careful.", task_id=task.id)
    mem.append_turns(session.id, chat(200))
    context = mem.assemble_context(session.id, budget=6000)
    tiers = {t.name: t for t in context.tiers}
    assert list(tiers) == [
        "system_prompt",
        "task_state",
        "session_state",
        "guardrails",
        "entries",
        "retrieved",
        "turns",
    ]
    assert context.tokens == sum(t.tokens for t in context.tiers) <= 6000
    assert all(t.tokens <= t.budget for t in context.tiers if t.budget is not None)
    system = context.messages[0]["content"]
    assert system.startswith("You are careful.")
    assert "## Task state" in system and "goal: JWT auth" in system
    assert "## Guardrails\n- [block] never push to main" in system
    assert "tokens live 15 minutes" in system  # a relevant entry
    turns = tiers["turns"]
    assert turns.included == len(context.turns) < 800 and turns.left_out == 800 - turns.included
    assert context.turns[-1] == 800 and "left out" in turns.note
    # The recount of what is sent is no more than the accounting.
    sent = (
        counter().text(system)
        + 4
        + sum(counter().text(m.get("content") or "") + 4 for m in context.messages[1:])
    )
    assert sent <= context.tokens
    assert mem.assemble_context(session.id, budget=6000) == context  # deterministic


def test_tier_budgets_can_be_changed_and_turned_off(mem: clew.Memory) -> None:
    session = mem.start_session()
    mem.append_turns(session.id, chat(3))
    context = mem.assemble_context(session.id, budget=4000, tiers={"session_state": 0})
    assert "## Session state" not in context.messages[0]["content"]
    off = next(t for t in context.tiers if t.name == "session_state")
    assert off.tokens == 0 and "turned off" in off.note
    with pytest.raises(clew.ValidationError, match="cannot be negative"):
        mem.assemble_context(session.id, tiers={"entries": -1})
    with pytest.raises(clew.ValidationError, match="no tier is called 'turnz'"):
        mem.assemble_context(session.id, tiers={"turnz": 5})
    with pytest.raises(clew.ValidationError, match="system prompt alone"):
        mem.assemble_context(session.id, budget=1000, system_prompt="word " * 2000)
    with pytest.raises(clew.ValidationError, match="out of range"):
        mem.assemble_context(session.id, budget=10)


def test_retrieved_context_is_included_within_its_tier(mem: clew.Memory) -> None:
    session = mem.start_session()
    mem.append_turns(session.id, chat(2))
    recalled = mem.recall(session.id, "range", start_turn=1, end_turn=2).text
    context = mem.assemble_context(session.id, retrieved=recalled)
    assert "## Retrieved from the archive\nTurns 1-2" in context.messages[0]["content"]
    capped = mem.assemble_context(session.id, retrieved="line\n" * 5000, tiers={"retrieved": 600})
    tier = next(t for t in capped.tiers if t.name == "retrieved")
    assert tier.tokens <= 600 and tier.left_out > 0


def test_every_turn_that_fits_is_included_across_pages(mem: clew.Memory) -> None:
    session = mem.start_session()
    mem.append_turns(session.id, chat(300, size=2))  # 1,200 turns: several pages
    context = mem.assemble_context(session.id, budget=200_000)
    assert context.turns == tuple(range(1, 1201))
    assert next(t for t in context.tiers if t.name == "turns").left_out == 0


def test_dangling_calls_are_repaired_and_orphans_dropped(mem: clew.Memory) -> None:
    session = mem.start_session()
    mem.append_turns(
        session.id,
        [
            {"role": "user", "content": "go"},
            result("ghost", "a result whose call was never archived"),
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "a", "type": "function", "function": {"name": "x", "arguments": "{}"}},
                    {"id": "b", "type": "function", "function": {"name": "y", "arguments": "{}"}},
                ],
            },
            result("b", "b done"),  # the crash came before a's result
            {"role": "user", "content": "are you there?"},
        ],
    )
    context = mem.assemble_context(session.id)
    calls_and_results_pair(context.messages)
    assert {"role": "tool", "tool_call_id": "a", "content": NO_RESULT} in context.messages
    assert not any(m.get("tool_call_id") == "ghost" for m in context.messages)
    assert any("call a" in r for r in context.repairs) and any(
        "turn 2" in r for r in context.repairs
    )
    resumed = mem.resume(session.id)
    calls_and_results_pair(resumed.context.messages)


def test_the_hint_comes_only_when_earlier_turns_are_out_of_the_window(mem: clew.Memory) -> None:
    session = mem.start_session()
    mem.append_turns(session.id, chat(2))
    mem.append_turn(session.id, role="user", content="Now fix that error.")
    assert mem.assemble_context(session.id).hint is None  # everything is in view
    mem.append_turns(session.id, chat(100))
    mem.append_turn(session.id, role="user", content="Go back to the previous approach.")
    context = mem.assemble_context(session.id, budget=3000)
    assert context.hint is not None and context.hint in context.messages[0]["content"]
    assert "conversation_recall" in context.hint


def _conversation(draw: st.DrawFn) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for g in range(draw(st.integers(1, 12))):
        messages.append({"role": "user", "content": "u" * draw(st.integers(1, 3000))})
        n_calls = draw(st.integers(0, 3))
        ids = [f"g{g}c{k}" for k in range(n_calls)]
        if draw(st.booleans()):  # Responses items, one call each, outputs after
            messages += [
                {"type": "function_call", "call_id": i, "name": "f", "arguments": "{}"} for i in ids
            ]
            answered = draw(st.permutations(ids))
            messages += [
                {"type": "function_call_output", "call_id": i, "output": "o" * 500}
                for i in answered[: draw(st.integers(0, len(ids)))]
            ]
        elif ids:
            messages.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}}
                        for i in ids
                    ],
                }
            )
            answered = draw(st.permutations(ids))
            messages += [
                result(i, "r" * draw(st.integers(0, 4000)))
                for i in answered[: draw(st.integers(0, len(ids)))]
            ]
        if draw(st.booleans()):
            messages.append(result(f"orphan{g}", "nobody asked"))
        messages.append({"role": "assistant", "content": "a" * draw(st.integers(1, 2000))})
    return messages


@settings(max_examples=40, deadline=None, suppress_health_check=SLOW)
@given(data=st.data(), budget=st.integers(1000, 12_000))
def test_any_conversation_assembles_within_budget_with_pairs_whole(
    mem: clew.Memory, data: st.DataObject, budget: int
) -> None:
    messages = data.draw(st.composite(_conversation)())
    session = mem.start_session(system_prompt="sys")
    mem.append_turns(session.id, messages)
    context = mem.assemble_context(session.id, budget=budget)
    assert context.tokens <= budget
    calls_and_results_pair(context.messages)
    # The turns sent are the newest ones, in order, with nothing skipped in between
    # (orphan results aside).
    numbers = context.turns
    assert list(numbers) == sorted(numbers)
    if numbers:
        orphans = {
            n
            for n, m in enumerate(messages, 1)
            if str(m.get("tool_call_id", "")).startswith("orphan")
        }
        assert set(range(numbers[0], len(messages) + 1)) - orphans <= set(numbers) | orphans
        assert numbers[-1] == max(set(range(1, len(messages) + 1)) - orphans)
    assert json.dumps(context.messages)  # sendable
