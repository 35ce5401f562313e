"""A real LangGraph StateGraph with a scripted model checkpoints to clew, is interrupted
(by `interrupt()` and by a crash), and resumes from clew in a fresh process."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("langgraph.graph")

# The graph, as a module a second process imports too: a scripted model (a node that
# returns the next scripted AI message), a tool step that asks a person before it runs,
# and a step that fails once when told to.
GRAPH = """
import os
from pathlib import Path

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import interrupt

SCRIPT = ["I will deploy after approval.", "Deployed: all checks green."]


def model(state: MessagesState) -> dict:
    said = sum(1 for m in state["messages"] if m.type == "ai")
    return {"messages": [AIMessage(SCRIPT[said])]}


def approve(state: MessagesState) -> dict:
    answer = interrupt({"question": "deploy to production?"})
    return {"messages": [HumanMessage(f"approval: {answer}")]}


def flaky(state: MessagesState) -> dict:
    crash = os.environ.get("CRASH_ONCE")
    if crash and not Path(crash).exists():
        Path(crash).write_text("crashed")
        raise RuntimeError("the process died here")
    return {}


def build(saver, store=None):
    graph = StateGraph(MessagesState)
    graph.add_node("model", model)
    graph.add_node("approve", approve)
    graph.add_node("flaky", flaky)
    graph.add_node("model_again", model)
    graph.add_edge(START, "model")
    graph.add_edge("model", "approve")
    graph.add_edge("approve", "flaky")
    graph.add_edge("flaky", "model_again")
    graph.add_edge("model_again", END)
    return graph.compile(checkpointer=saver, store=store)
"""

RESUME = """
import sys

import clew
from langgraph.types import Command

from clew.integrations.langgraph import ClewSaver
from scripted_graph import build

with clew.open(sys.argv[1]) as memory:
    graph = build(ClewSaver(memory))
    config = {"configurable": {"thread_id": "deploy-1"}}
    state = graph.get_state(config)
    print("NEXT", ",".join(state.next))
    try:
        result = graph.invoke(Command(resume=sys.argv[2]), config)
    except RuntimeError as exc:
        print("CRASH", exc)
        sys.exit(0)
    for message in result["messages"]:
        print("MSG", message.type, message.content)
"""


def _resume_in_a_new_process(tmp_path: Path, db: Path, answer: str, crash: Path) -> str:
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "CRASH_ONCE": str(crash)}
    done = subprocess.run(
        [sys.executable, str(tmp_path / "resume.py"), str(db), answer],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_graph_interrupted_then_crashed_resumes_from_clew_in_new_processes(
    tmp_path: Path, db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import clew
    from clew.integrations.langgraph import ClewSaver

    (tmp_path / "scripted_graph.py").write_text(textwrap.dedent(GRAPH))
    (tmp_path / "resume.py").write_text(textwrap.dedent(RESUME))
    crash = tmp_path / "crashed"
    monkeypatch.setenv("CRASH_ONCE", str(crash))
    monkeypatch.syspath_prepend(str(tmp_path))
    from scripted_graph import build  # type: ignore[import-not-found]

    config = {"configurable": {"thread_id": "deploy-1"}}
    with clew.open(db) as memory:
        graph = build(ClewSaver(memory))
        first = graph.invoke({"messages": [("user", "ship it")]}, config)
        assert first["__interrupt__"][0].value == {"question": "deploy to production?"}
        assert [m.content for m in first["messages"]] == [
            "ship it",
            "I will deploy after approval.",
        ]

    # A new process resumes the interrupt; the step after it crashes the run.
    out = _resume_in_a_new_process(tmp_path, db, "yes", crash)
    assert "NEXT approve" in out and "CRASH the process died here" in out

    # Another new process picks up after the crash: the approval is not asked again.
    out = _resume_in_a_new_process(tmp_path, db, "ignored", crash)
    assert "NEXT flaky" in out
    messages = [line for line in out.splitlines() if line.startswith("MSG")]
    assert messages == [
        "MSG human ship it",
        "MSG ai I will deploy after approval.",
        "MSG human approval: yes",
        "MSG ai Deployed: all checks green.",
    ]

    with clew.open(db) as memory:
        saver = ClewSaver(memory)
        history = list(saver.list(config))
        assert len(history) >= 5  # every step kept, newest first
        assert history[0].checkpoint["channel_values"]["messages"][-1].content == (
            "Deployed: all checks green."
        )
        assert memory.verify().ok  # the checkpoints beside the journal leave it whole


def test_an_async_graph_checkpoints_through_the_same_saver(db: Path) -> None:
    import asyncio

    from langchain_core.messages import AIMessage
    from langgraph.graph import START, MessagesState, StateGraph

    import clew
    from clew.integrations.langgraph import ClewSaver

    async def model(state: MessagesState) -> dict[str, object]:
        return {"messages": [AIMessage(f"answer {len(state['messages'])}")]}

    builder = StateGraph(MessagesState)
    builder.add_node("model", model)
    builder.add_edge(START, "model")
    config = {"configurable": {"thread_id": "async-1"}}

    async def converse() -> None:
        memory = clew.open_async(db)  # an async app's memory serves the saver too
        saver = ClewSaver(memory)
        graph = builder.compile(checkpointer=saver)
        for said in ("one", "two", "three"):
            await graph.ainvoke({"messages": [("user", said)]}, config)
        saver.close()
        await memory.close()

    asyncio.run(converse())
    with clew.open(db) as memory:
        state = builder.compile(checkpointer=ClewSaver(memory)).get_state(config)
    contents = [m.content for m in state.values["messages"]]
    assert contents == ["one", "answer 1", "two", "answer 3", "three", "answer 5"]


def test_clew_and_its_cli_start_without_importing_langgraph() -> None:
    """The extra costs nothing to those who do not use it: only the adapter imports it."""
    code = (
        "import sys, clew, clew.cli, clew.integrations;"
        " print(sorted(m for m in sys.modules"
        " if m.split('.')[0] in ('langgraph', 'langchain_core')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout.strip()) == (0, "[]"), done.stderr
