"""clew's memory for a program built on the Claude Agent SDK (`claude-agent-sdk`), in one call.

`options(...)` returns `ClaudeAgentOptions` with:

- **hooks** (in-process callbacks) that archive every message of the session as Claude Code
  writes it to its transcript (UserPromptSubmit, PostToolUse, PreCompact, Stop, SubagentStop:
  `Memory.capture_transcript`, only what is new), and put the task state back (`Memory.prime`,
  as `additionalContext`) with the session's first prompt and after every compaction: the SDK
  has no SessionStart callback, so the state rides on the first UserPromptSubmit or
  PostToolUse after the session starts or PreCompact fires;
- **clew's tools** as an MCP server: in process (`server="sdk"`, the default: the SDK's own
  MCP server running `clew.tools.registry`), or `clew mcp` over stdio (`server="stdio"`);
  allowed, so
  the agent can call them without a permission prompt.

A hook never fails the agent: an error is one line on stderr and the hook answers `{}`. The
store is used from one worker thread of its own, so nothing blocks the event loop.
"""

from __future__ import annotations

import asyncio
import functools
import os
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal, TypeVar, cast

from clew.core.installation import missing_extra

try:
    from claude_agent_sdk import (
        ClaudeAgentOptions,
        HookCallback,
        HookMatcher,
        SdkMcpTool,
        create_sdk_mcp_server,
    )
except ImportError as exc:  # a person reads this: say what to install, not a traceback's tail
    raise missing_extra("claude-agent-sdk", exc) from None

import clew
from clew.conversations import transcripts
from clew.errors import ValidationError
from clew.memory import Memory

__all__ = ["CAPTURE_EVENTS", "SERVER", "ClewHooks", "mcp_server", "options"]

SERVER = "clew"
CAPTURE_EVENTS = ("UserPromptSubmit", "PostToolUse", "PreCompact", "Stop", "SubagentStop")
# The events whose answer may carry additional context into the conversation.
_CONTEXT_EVENTS = ("UserPromptSubmit", "PostToolUse")
T = TypeVar("T")


class ClewHooks:
    """The hook callbacks over one store, run on a worker thread of their own."""

    def __init__(
        self,
        memory: Memory,
        *,
        capture: bool = True,
        prime: bool = True,
        workspace: str | None = None,
    ) -> None:
        self.memory = memory
        self.capture = capture
        self.prime = prime
        # What clew's tools take as "this session" and "this workspace": the newest session
        # a hook named, and its folder (else the options' cwd).
        self.session: str | None = None
        self.workspace = workspace
        self._owed: set[str] = set()  # sessions owed the state: started, or just compacted
        self._seen: set[str] = set()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="clew-hooks")

    async def run(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """Run a Memory call on this store's worker thread."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, functools.partial(fn, *args, **kwargs))

    async def __call__(
        self, hook_input: Any, tool_use_id: str | None, context: Any
    ) -> dict[str, Any]:
        """A HookCallback: archive what the transcript gained; answer with the task state
        when it is owed."""
        try:
            return await self._handle(hook_input if isinstance(hook_input, dict) else {})
        except Exception as exc:
            print(f"clew hook: {exc}".replace("\n", " "), file=sys.stderr)
            return {}

    async def _handle(self, event: dict[str, Any]) -> dict[str, Any]:
        name, session = event.get("hook_event_name"), event.get("session_id")
        path, cwd = event.get("transcript_path"), event.get("cwd")
        session = session if isinstance(session, str) and session else None
        if session is not None:
            self.session = session
        if isinstance(cwd, str) and cwd:
            self.workspace = cwd
        # A transcript not written yet is nothing to capture; a capture that fails still
        # lets the state through.
        if self.capture and isinstance(path, str) and path and os.path.exists(path):
            try:
                await self.run(
                    self.memory.capture_transcript,
                    path,
                    key=session,
                    workspace=cwd if isinstance(cwd, str) and cwd else None,
                )
            except Exception as exc:  # a hook must never fail the agent
                print(f"clew hook: {exc}".replace("\n", " "), file=sys.stderr)
        agent = transcripts.subagent(event) if self.capture else None
        if agent is not None and os.path.exists(agent[0]):
            where = cwd if isinstance(cwd, str) and cwd else None
            await self.run(
                self.memory.capture_transcript, agent[0], key=agent[1], workspace=where, end=True
            )
        if not self.prime or session is None:
            return {}
        if session not in self._seen:  # a new session: the state goes with its first turn
            self._seen.add(session)
            self._owed.add(session)
        if name == "PreCompact":
            self._owed.add(session)
            return {}
        if name not in _CONTEXT_EVENTS or session not in self._owed:
            return {}
        primer = await self.run(self.memory.prime, cwd if isinstance(cwd, str) else None)
        self._owed.discard(session)
        if not primer.text.strip():
            return {}
        return {"hookSpecificOutput": {"hookEventName": name, "additionalContext": primer.text}}

    def close(self) -> None:
        """Stop the worker thread (the store stays open: it is the caller's)."""
        self._executor.shutdown(wait=True)


def _tool(hooks: ClewHooks, name: str, description: str, schema: dict[str, Any]) -> SdkMcpTool[Any]:
    from clew.tools import registry as tools

    async def handler(arguments: dict[str, Any]) -> dict[str, Any]:
        context = tools.Context(session=hooks.session, workspace=hooks.workspace)
        result = await hooks.run(tools.call, hooks.memory, name, arguments, context)
        return {"content": [{"type": "text", "text": result.text}], "is_error": result.is_error}

    return SdkMcpTool(name=name, description=description, input_schema=schema, handler=handler)


def mcp_server(hooks: ClewHooks) -> Any:
    """clew's tools as the SDK's in-process MCP server (an McpSdkServerConfig)."""
    from clew.tools import registry as tools

    made = [
        _tool(hooks, s["name"], s["description"], s["inputSchema"]) for s in tools.schemas("mcp")
    ]
    return create_sdk_mcp_server(SERVER, version=clew.__version__, tools=made)


def _stdio(memory: Memory, command: str | None) -> dict[str, Any]:
    """`clew mcp` over stdio, on the same store."""
    import shlex
    import shutil

    words = shlex.split(command) if command else None
    if words is None:
        found = shutil.which("clew")
        words = [found] if found else [sys.executable, "-m", "clew"]
    args = [*words[1:], "--db", memory.path, "--space", memory.space, "mcp"]
    return {"type": "stdio", "command": words[0], "args": args}


def options(
    memory: Memory | str | None = None,
    *,
    server: Literal["sdk", "stdio"] = "sdk",
    capture: bool = True,
    prime: bool = True,
    command: str | None = None,
    **fields: Any,
) -> ClaudeAgentOptions:
    """Return ClaudeAgentOptions that give the agent clew's memory: hooks archiving every
    message and putting the task state back after compaction, and clew's tools as an MCP server
    (`server`: "sdk" in process, "stdio" for `clew mcp`, run as `command`). `memory` is
    a Memory, a store's path or URL, or None for the store clew finds from this folder.
    `fields` are any other ClaudeAgentOptions fields; hooks, MCP servers and allowed tools
    given there are kept beside clew's."""
    mem = memory if isinstance(memory, Memory) else clew.open(memory)
    where = fields.get("cwd")
    hooks = ClewHooks(
        mem,
        capture=capture,
        prime=prime,
        workspace=str(where) if where is not None else os.getcwd(),
    )
    given_hooks: dict[str, list[HookMatcher]] = dict(fields.pop("hooks", None) or {})
    for event in CAPTURE_EVENTS:
        matcher = HookMatcher(hooks=[cast("HookCallback", hooks)], timeout=60)
        given_hooks[event] = [*given_hooks.get(event, []), matcher]
    servers: dict[str, Any] = dict(fields.pop("mcp_servers", None) or {})
    if server == "sdk":
        servers[SERVER] = mcp_server(hooks)
    elif server == "stdio":
        servers[SERVER] = _stdio(mem, command)
    else:
        raise ValidationError(f"server {server!r} is not one of: sdk, stdio")
    from clew.tools import registry as tools

    allowed = [*fields.pop("allowed_tools", [])]
    allowed += [f"mcp__{SERVER}__{s['name']}" for s in tools.schemas("mcp")]
    return ClaudeAgentOptions(
        hooks=given_hooks,  # type: ignore[arg-type]
        mcp_servers=servers,
        allowed_tools=allowed,
        **fields,
    )
