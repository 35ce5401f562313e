"""The MCP server end to end with the SDK's own client: `clew mcp` as a real process over
stdio (as an assistant's config starts it) and over streamable HTTP on 127.0.0.1; every
tool called, bad arguments, resources, the resume prompt."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client, MCPError, StdioServerParameters

import clew
from clew.server.mcp_server import build_server
from clew.tools import registry as tools
from tests.conftest import free_port, wait_listening
from tests.test_conversations import CONVERSATION


def text(result: types.CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))


def child_env() -> dict[str, str]:
    """The SDK starts stdio servers with a bare environment: pass what the tests need."""
    keep = ("PATH", "HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "CLEW_WORKER")
    return {k: os.environ[k] for k in keep if k in os.environ}


@pytest.fixture
def store(db: Path, tmp_path: Path) -> tuple[Path, Path]:
    """A store holding one archived conversation (key "chat-1"), and a workspace folder."""
    workspace = tmp_path / "project"
    workspace.mkdir()
    with clew.open(db) as mem:
        session = mem.start_session(key="chat-1", workspace=str(workspace))
        mem.append_turns(session.id, CONVERSATION)
    return db, workspace


async def every_tool(client: Client, workspace: Path) -> None:
    """Call each tool as a model would, and check what it reads back."""
    assert client.instructions is not None and "conversation_recall" in client.instructions
    listed = (await client.list_tools()).tools
    assert [t.name for t in listed] == list(tools.TOOLS)
    assert all(t.input_schema["type"] == "object" for t in listed)
    by_name = {t.name: t for t in listed}
    assert by_name["memory_search"].annotations.read_only_hint  # type: ignore[union-attr]

    made = await client.call_tool(
        "task_register",
        {
            "name": "Add JWT auth",
            "plan": ["Design", "Build", "Test"],
            "goal": "tokens work",
            "constraints": ["raw SQL only"],
            "workspace": str(workspace),
        },
    )
    assert not made.is_error, text(made)
    task_id = made.structured_content["task_id"]  # type: ignore[index]
    calls: list[tuple[str, dict[str, Any], str]] = [
        (
            "task_update",
            {
                "task_id": task_id,
                "step": 1,
                "step_status": "completed",
                "message": "designed the token table",
            },
            "1/3 steps done",
        ),
        ("task_update", {"task_id": task_id[:5], "query": "where was I?"}, "Build"),
        (
            "task_plan",
            {
                "task_id": task_id,
                "operations": [{"op": "add", "title": "Document the API", "position": 4}],
                "reason": "docs",
            },
            "4. [pending] Document the API",
        ),
        (
            "task_record",
            {"task_id": task_id, "decision": "PyJWT for tokens", "error": "ImportError: jwt"},
            "Recorded decision",
        ),
        ("task_state", {"task_id": task_id}, "raw SQL only"),
        ("task_state", {"task_id": task_id, "full": True}, "Completed steps 1 of 4"),
        ("task_state", {}, task_id),
        ("task_list", {"all": True}, "Add JWT auth"),
        ("memory_search", {"query": "PyJWT"}, "PyJWT for tokens"),
        ("memory_query", {"task_id": task_id, "type": "error"}, "ImportError: jwt"),
        ("conversation_recall", {"action": "search", "query": "refresh token"}, "(match)"),
        (
            "conversation_recall",
            {"action": "tool_calls", "tool_name": "bash", "session": "chat-1"},
            'tool:bash(command="pytest -q")',
        ),
    ]
    for name, arguments, expected in calls:
        result = await client.call_tool(name, arguments)
        assert not result.is_error, (name, text(result))
        assert expected in text(result), (name, text(result))

    bad: list[tuple[str, dict[str, Any], str]] = [
        ("task_update", {}, "the required argument 'task_id' is missing"),
        ("task_update", {"task_id": task_id, "step_status": "done"}, "must be one of"),
        ("task_update", {"task_id": task_id, "step": 1.5}, "step must be integer or string"),
        ("task_update", {"task_id": "zzzzz", "message": "x"}, "no task matches 'zzzzz'; task_list"),
        ("task_update", {"task_id": task_id, "step": 9, "step_status": "active"}, "step 9"),
        ("task_register", {"name": "x", "colour": "red"}, "unknown argument 'colour'"),
        (
            "conversation_recall",
            {"action": "range", "start_turn": 1, "end_turn": 999},
            "out of range",
        ),
        ("no_such_tool", {}, "no tool is called 'no_such_tool'"),
    ]
    for name, arguments, expected in bad:
        result = await client.call_tool(name, arguments)
        assert result.is_error, (name, arguments)
        assert expected in text(result), (name, text(result))

    resources = (await client.list_resources()).resources
    uris = {str(r.uri) for r in resources}
    assert f"clew://task/{task_id}/state" in uris
    read = await client.read_resource(f"clew://task/{task_id}/state")
    content = read.contents[0]
    assert isinstance(content, types.TextResourceContents) and "goal: tokens work" in content.text
    session_state = await client.read_resource("clew://session/chat-1/state")
    assert "current_focus" in session_state.contents[0].text  # type: ignore[union-attr]
    with pytest.raises(MCPError):
        await client.read_resource("clew://task/nosuchtask/state")
    templates = (await client.list_resource_templates()).resource_templates
    assert {t.uri_template for t in templates} == {
        "clew://task/{id}/state",
        "clew://session/{id}/state",
    }
    prompt = await client.get_prompt("resume_work", {"workspace": str(workspace)})
    message = prompt.messages[0].content
    assert isinstance(message, types.TextContent)
    assert task_id in message.text and "## Your memory (clew)" in message.text


def test_stdio_server_serves_every_tool(store: tuple[Path, Path]) -> None:
    db, workspace = store
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "clew", "--db", str(db), "mcp", "--session", "chat-1"],
        env=child_env(),
        cwd=str(workspace),
    )

    async def session() -> None:
        async with Client(params, mode="legacy") as client:  # what deployed hosts speak
            await every_tool(client, workspace)

    asyncio.run(session())
    with clew.open(db) as mem:
        assert mem.verify().ok


def test_http_server_on_loopback(store: tuple[Path, Path]) -> None:
    db, workspace = store
    port = free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "clew",
            "--db",
            str(db),
            "mcp",
            "--port",
            str(port),
            "--session",
            "chat-1",
        ],
        cwd=workspace,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_listening(server, port)

        async def session() -> None:
            async with Client(f"http://127.0.0.1:{port}/mcp", mode="auto") as client:
                await every_tool(client, workspace)

        asyncio.run(session())
    finally:
        server.terminate()
        _, err = server.communicate(timeout=20)
    assert b"Traceback" not in err, err.decode()


def test_a_failure_inside_clew_is_a_tool_error(
    mem: clew.Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any) -> tools.ToolResult:
        raise RuntimeError("disk on fire")

    monkeypatch.setitem(tools.TOOLS, "task_list", tools.TOOLS["task_list"]._replace(run=broken))

    async def session() -> None:
        async with Client(build_server(mem)) as client:
            result = await client.call_tool("task_list", {})
            assert result.is_error and "bug in clew" in text(result)
            assert not (await client.call_tool("task_state", {})).is_error  # still serving

    asyncio.run(session())


def test_the_mcp_command_explains_a_bad_port(cli: Any) -> None:
    result = cli("mcp", "--port", "70000")
    assert result.code != 0 and "not a TCP port" in result.err
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = cli("mcp", "--port", str(taken.getsockname()[1]))
    assert busy.code != 0 and "choose another --port" in busy.err


def test_without_the_mcp_extra_the_command_says_what_to_install(
    cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delitem(sys.modules, "clew.server.mcp_server", raising=False)
    monkeypatch.setitem(sys.modules, "mcp_types", None)  # as if the mcp extra were not installed
    result = cli("mcp")
    from clew.core.installation import install_command

    assert result.code != 0 and result.err.endswith(f": {install_command('mcp')}\n")
    assert "install -e '" in result.err and "[mcp]'" in result.err  # this checkout's command
