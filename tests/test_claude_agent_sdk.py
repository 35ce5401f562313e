"""clew.integrations.claude_agent_sdk against the real `claude-agent-sdk`: its options, types
and control protocol, with Claude Code itself scripted (no model, no CLI can run here).

`FakeClaudeCode` is a Transport that answers the SDK as the CLI does: it takes the initialize
request (and the hook callbacks it registers), and for each user message writes the turn to
its transcript as Claude Code does, calls the hooks, and calls clew's tools through the SDK's
in-process MCP server (JSON-RPC over `mcp_message` control requests), then answers with an
assistant message and a result.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    HookMatcher,
    ResultMessage,
    Transport,
)

import clew
from clew.integrations.claude_agent_sdk import CAPTURE_EVENTS, SERVER, options

SESSION = "5b1e9c3a-2f4d-4e8b-9a6c-7d0e1f2a3b4c"


class FakeClaudeCode(Transport):
    """Claude Code as the SDK sees it, scripted."""

    def __init__(self, cwd: Path, transcript: Path) -> None:
        self.cwd, self.transcript = cwd, transcript
        self.inbox: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self.callbacks: dict[str, list[str]] = {}  # event -> the SDK's callback ids
        self.answers: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.hook_answers: list[tuple[str, dict[str, Any]]] = []
        self.tool_results: list[dict[str, Any]] = []
        self.listed: list[str] = []
        self.ids = itertools.count(1)
        self.parent: str | None = None
        self.turns = 0
        self.compact_next = False

    # -- the Transport ------------------------------------------------------------------

    async def connect(self) -> None:
        return None

    def is_ready(self) -> bool:
        return True

    async def end_input(self) -> None:
        return None

    async def close(self) -> None:
        await self.inbox.put(None)

    async def read_messages(self) -> AsyncIterator[dict[str, Any]]:  # type: ignore[override]
        while (message := await self.inbox.get()) is not None:
            yield message

    async def write(self, data: str) -> None:
        message = json.loads(data)
        if message["type"] == "control_request":
            request = message["request"]
            if request["subtype"] == "initialize":
                for event, matchers in (request.get("hooks") or {}).items():
                    self.callbacks[event] = [c for m in matchers for c in m["hookCallbackIds"]]
            await self.inbox.put(self._success(message["request_id"], {"commands": []}))
        elif message["type"] == "control_response":
            answer = message["response"]
            self.answers.pop(answer["request_id"]).set_result(answer)
        elif message["type"] == "user":
            asyncio.get_running_loop().create_task(self.turn(message["message"]["content"]))

    @staticmethod
    def _success(request_id: str, response: dict[str, Any]) -> dict[str, Any]:
        return {
            "type": "control_response",
            "response": {"subtype": "success", "request_id": request_id, "response": response},
        }

    # -- what the CLI does --------------------------------------------------------------

    async def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        """Send the SDK a control request and wait for its answer."""
        request_id = f"cli_{next(self.ids)}"
        self.answers[request_id] = asyncio.get_running_loop().create_future()
        await self.inbox.put(
            {"type": "control_request", "request_id": request_id, "request": request}
        )
        answer = await asyncio.wait_for(self.answers[request_id], 30)
        assert answer["subtype"] == "success", answer
        return dict(answer["response"])

    async def hook(self, event: str, **extra: Any) -> None:
        data = {
            "session_id": SESSION,
            "transcript_path": str(self.transcript),
            "cwd": str(self.cwd),
            "hook_event_name": event,
            **extra,
        }
        for callback in self.callbacks.get(event, []):
            answer = await self.ask(
                {
                    "subtype": "hook_callback",
                    "callback_id": callback,
                    "input": data,
                    "tool_use_id": None,
                }
            )
            self.hook_answers.append((event, answer))

    async def mcp(self, method: str, params: dict[str, Any] | None = None) -> Any:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if not method.startswith("notifications/"):
            message["id"] = next(self.ids)
        if params is not None:
            message["params"] = params
        answer = await self.ask(
            {"subtype": "mcp_message", "server_name": SERVER, "message": message}
        )
        return answer["mcp_response"].get("result")

    def line(self, kind: str, message: dict[str, Any], **extra: Any) -> str:
        """Write a transcript line as Claude Code does."""
        line_id = str(uuid.uuid4())
        line = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": str(self.cwd),
            "sessionId": SESSION,
            "version": "2.0.31",
            "type": kind,
            "message": message,
            "uuid": line_id,
            "timestamp": "2026-11-25T10:00:00.000Z",
            **extra,
        }
        with self.transcript.open("a", encoding="utf-8") as out:
            out.write(json.dumps(line) + "\n")
        self.parent = line_id
        return line_id

    async def turn(self, prompt: str) -> None:
        self.turns += 1
        if self.compact_next:  # context full: Claude Code compacts before this turn
            await self.hook("PreCompact", trigger="auto", custom_instructions=None)
            self.line("system", None, subtype="compact_boundary", content="Conversation compacted")  # type: ignore[arg-type]
        self.line("user", {"role": "user", "content": prompt})
        await self.hook("UserPromptSubmit", prompt=prompt)
        if self.turns == 1:  # the MCP client's handshake, once
            await self.mcp(
                "initialize",
                {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "claude-code", "version": "2.0.31"},
                },
            )
            await self.mcp("notifications/initialized")
            listed = await self.mcp("tools/list")
            self.listed = [t["name"] for t in listed["tools"]]
        call_id = f"toolu_{self.turns:02d}"
        tool = f"mcp__{SERVER}__task_list"
        self.line(
            "assistant",
            {
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "id": f"msg_{self.turns}",
                "content": [{"type": "tool_use", "id": call_id, "name": tool, "input": {}}],
            },
        )
        result = await self.mcp("tools/call", {"name": "task_list", "arguments": {}})
        self.tool_results.append(result)
        self.line(
            "user",
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": call_id, "content": result["content"]}
                ],
            },
        )
        await self.hook("PostToolUse", tool_name=tool, tool_input={}, tool_response=result)
        reply = f"Turn {self.turns}: the task list is read."
        said = {
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "id": f"msg_{self.turns}b",
            "content": [{"type": "text", "text": reply}],
        }
        self.line("assistant", said)
        await self.hook("Stop", stop_hook_active=False)
        await self.inbox.put(
            {
                "type": "assistant",
                "message": said,
                "parent_tool_use_id": None,
                "session_id": SESSION,
            }
        )
        await self.inbox.put(
            {
                "type": "result",
                "subtype": "success",
                "duration_ms": 12,
                "duration_api_ms": 10,
                "is_error": False,
                "num_turns": 1,
                "session_id": SESSION,
                "result": reply,
            }
        )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / ".clew").mkdir(parents=True)
    with clew.open(folder / ".clew" / "clew.db") as mem:
        task = mem.create_task(
            "Ship the billing export", ["Query", "Format", "Upload"], workspace=str(folder)
        )
        mem.update_task(task.id, step=2, step_status="active", message="CSV columns settled")
    return folder


def test_options_are_the_sdk_s_own_types(project: Path) -> None:
    mine = HookMatcher(matcher="Bash", hooks=[])
    with clew.open(project / ".clew" / "clew.db") as mem:
        made = options(mem, hooks={"PostToolUse": [mine]}, allowed_tools=["Read"], model="sonnet")
        assert isinstance(made, ClaudeAgentOptions) and made.model == "sonnet"
        assert made.hooks is not None and set(made.hooks) == set(CAPTURE_EVENTS)
        assert made.hooks["PostToolUse"][0] is mine  # the caller's hooks are kept, first
        assert all(isinstance(m, HookMatcher) for ms in made.hooks.values() for m in ms)
        assert isinstance(made.mcp_servers, dict)
        assert made.mcp_servers[SERVER]["type"] == "sdk"
        assert (
            made.allowed_tools[0] == "Read" and f"mcp__{SERVER}__task_state" in made.allowed_tools
        )
        stdio = options(mem, server="stdio", command="/opt/clew/bin/clew")
        assert isinstance(stdio.mcp_servers, dict)
        assert stdio.mcp_servers[SERVER] == {
            "type": "stdio",
            "command": "/opt/clew/bin/clew",
            "args": ["--db", mem.path, "--space", mem.space, "mcp"],
        }
        with pytest.raises(clew.ValidationError, match="server 'http' is not one of"):
            options(mem, server="http")  # type: ignore[arg-type]


def test_a_scripted_claude_code_session_is_archived_and_primed(
    project: Path, tmp_path: Path
) -> None:
    transcript = tmp_path / f"{SESSION}.jsonl"
    fake = FakeClaudeCode(project, transcript)

    async def session() -> list[Any]:
        received: list[Any] = []
        with clew.open(project / ".clew" / "clew.db") as mem:
            async with ClaudeSDKClient(options=options(mem), transport=fake) as client:
                for prompt in ("What is left on the billing export?", "Go on with it."):
                    if prompt.startswith("Go"):
                        fake.compact_next = True
                    await client.query(prompt)
                    async for message in client.receive_response():
                        received.append(message)
        return received

    received = asyncio.run(session())
    assert [type(m) for m in received] == [AssistantMessage, ResultMessage] * 2
    # The SDK registered clew's callbacks for every capture event.
    assert set(fake.callbacks) == set(CAPTURE_EVENTS)
    # The state came with the first prompt, and again with the first prompt after compaction;
    # no other hook put anything into the context.
    contexts = [
        (e, a["hookSpecificOutput"]["additionalContext"])
        for e, a in fake.hook_answers
        if "hookSpecificOutput" in a
    ]
    assert [e for e, _ in contexts] == ["UserPromptSubmit", "UserPromptSubmit"]
    assert all("Ship the billing export" in c and "CSV columns settled" in c for _, c in contexts)
    assert all(a == {} for _, a in fake.hook_answers if "hookSpecificOutput" not in a)
    # clew's tools answered through the SDK's in-process server.
    assert {"task_state", "task_update", "conversation_recall"} <= set(fake.listed)
    assert all("Ship the billing export" in r["content"][0]["text"] for r in fake.tool_results)
    # Every line of the transcript is in the session keyed by the session id, paired.
    with clew.open(project / ".clew" / "clew.db") as mem:
        turns = mem.list_turns(SESSION)
        assert [t.role for t in turns] == [
            "user",
            "assistant",
            "tool",
            "assistant",
            "system",
            "user",
            "assistant",
            "tool",
            "assistant",
        ]
        assert [t.tool_name for t in turns if t.role == "tool"] == [f"mcp__{SERVER}__task_list"] * 2
        assert mem.get_session(SESSION).workspace == str(project)
        assert mem.verify().ok


def test_a_failing_hook_never_fails_the_agent(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with clew.open(project / ".clew" / "clew.db") as mem:
        made = options(mem)
        assert made.hooks is not None
        callback = made.hooks["Stop"][0].hooks[0]
        event = {
            "session_id": SESSION,
            "transcript_path": str(tmp_path),  # a folder
            "cwd": str(project),
            "hook_event_name": "UserPromptSubmit",
        }
        answer = asyncio.run(callback(event, None, {"signal": None}))  # type: ignore[arg-type]
        # The capture failed, said so, and the state still came with the first prompt.
        assert capsys.readouterr().err.startswith("clew hook: the transcript ")
        assert "Ship the billing export" in answer["hookSpecificOutput"]["additionalContext"]
        missing = {
            **event,
            "transcript_path": str(tmp_path / "none.jsonl"),
            "session_id": "s2",
            "hook_event_name": "Stop",
        }
        assert asyncio.run(callback(missing, None, {"signal": None})) == {}  # type: ignore[arg-type]
        assert capsys.readouterr().err == ""
        broken = {**event, "session_id": "s3", "cwd": 7}
        assert asyncio.run(callback(broken, None, {"signal": None})) is not None  # type: ignore[arg-type]
