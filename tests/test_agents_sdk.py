"""ClewSession against the real OpenAI Agents SDK: Runner.run with a session, a tool call,
history carried into the next run, pop and clear hiding items that recall still finds.

The model is the only scripted part (no network here): a Model subclass that answers from
a script and records the input the SDK sends it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from agents import Agent, Runner, function_tool, set_tracing_disabled
from agents.items import ModelResponse
from agents.memory import Session
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

import clew
from clew.integrations.agents_sdk import ClewSession

set_tracing_disabled(True)  # its exporter would send traces to OpenAI


def say(text: str) -> ResponseOutputMessage:
    return ResponseOutputMessage(
        id="msg_1",
        type="message",
        role="assistant",
        status="completed",
        content=[ResponseOutputText(type="output_text", text=text, annotations=[])],
    )


class Scripted(Model):
    """Answers with the next output of a script; keeps what it was sent."""

    def __init__(self, outputs: list[list[Any]]) -> None:
        self.outputs = outputs
        self.inputs: list[Any] = []

    async def get_response(
        self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
    ) -> ModelResponse:
        self.inputs.append(input)
        return ModelResponse(output=self.outputs.pop(0), usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


@function_tool
def lookup_weather(city: str) -> str:
    """The weather of a city."""
    return f"sunny in {city}"


def test_clew_session_satisfies_the_sdk_protocol(tmp_path: Path) -> None:
    assert isinstance(ClewSession("x", tmp_path / "c.db"), Session)


def test_runner_keeps_the_conversation_in_clew(tmp_path: Path) -> None:
    db = tmp_path / "clew.db"
    model = Scripted(
        [
            [
                ResponseFunctionToolCall(
                    type="function_call",
                    call_id="call_1",
                    name="lookup_weather",
                    arguments='{"city": "Oslo"}',
                    id="fc_1",
                    status="completed",
                )
            ],
            [say("It is sunny in Oslo.")],
            [say("You asked about Oslo.")],
        ]
    )
    agent = Agent(name="helper", instructions="Be brief.", model=model, tools=[lookup_weather])

    async def scenario() -> None:
        session = ClewSession("user-42", db, workspace=str(tmp_path))
        first = await Runner.run(agent, "Weather in Oslo?", session=session)
        assert first.final_output == "It is sunny in Oslo."
        # A new session object (a restarted process) sees the whole history ...
        again = ClewSession("user-42", db)
        items = await again.get_items()
        kinds = [i.get("type") or i.get("role") for i in items]
        assert kinds == ["user", "function_call", "function_call_output", "message"]
        assert await again.get_items(limit=1) == items[-1:]
        # ... and the next run sends it to the model.
        await Runner.run(agent, "What did I ask?", session=again)
        sent = model.inputs[-1]
        assert sent[0] == {"content": "Weather in Oslo?", "role": "user"}
        assert any(i.get("output") == "sunny in Oslo" for i in sent)
        # pop and clear hide items from the session, never from the archive.
        popped = await again.pop_item()
        assert popped is not None and popped["content"][0]["text"] == "You asked about Oslo."
        await again.clear_session()
        assert await again.get_items() == [] and await again.pop_item() is None
        await again.memory.close()
        await session.memory.close()

    asyncio.run(scenario())
    with clew.open(db) as mem:
        [stored] = mem.list_sessions()
        assert stored.key == "user-42" and stored.turn_count == 6
        found = mem.recall("user-42", "search", query="Oslo")
        assert {t.number for t in found.turns} >= {1, 3, 4}
        weather = mem.recall("user-42", "tool_calls", tool_name="lookup_weather")
        assert "sunny in Oslo" in weather.text and 'city="Oslo"' in weather.text
        assert mem.verify().ok
