"""The MCP server: clew's tool registry, task and session states as resources, and a
"resume work" prompt, with the official `mcp` SDK (2.x, the `mcp` extra). `clew mcp` serves
it over stdio here; `clew mcp --port` over streamable HTTP on 127.0.0.1 through `clew serve`'s
app (server/app.py), which imports this module, never the other way.

A thin adapter: every tool call goes to `tools.call` on a worker thread (Memory serialises
its own calls), and whatever goes wrong comes back as a tool error the model can read, never
as a protocol failure. The SDK does not check arguments against the schemas it lists;
`tools.call` does.
"""

from __future__ import annotations

import sys
import traceback
from typing import Any, Protocol

import anyio
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.shared.uri_template import UriTemplate

from clew import __version__
from clew.core.credentials import allows
from clew.core.origin import HostRules
from clew.errors import ClewError
from clew.memory import Memory
from clew.tools import registry as tools

TASK_STATE = "clew://task/{id}/state"
SESSION_STATE = "clew://session/{id}/state"
_TASK_URI = UriTemplate.parse(TASK_STATE)
_SESSION_URI = UriTemplate.parse(SESSION_STATE)
RESOURCES_LISTED = 50  # newest sessions listed as resources (any can be read by its URI)


class Door(Protocol):
    """What an HTTP server in front says of each request: the Memory of its key's space, and
    its key's scope (`clew serve`: server/app.py)."""

    def memory(self, request: Any) -> Memory:
        """The Memory of the request's space."""
        ...

    def scope(self, request: Any) -> str:
        """The scope of the request's key: read, write or admin."""
        ...

    def actor(self, request: Any) -> str:
        """The correlation id the request's writes go under, naming its key."""
        ...

    def tool_context(self, request: Any) -> tools.Context:
        """The tools' context for the request: the server's defaults, and what its key may
        make this host do through a wait (origin.py)."""
        ...

    @property
    def served(self) -> HostRules:
        """What the server's operator allowed waits to make this host do (to an admin)."""
        ...


def build_server(
    mem: Memory | None, context: tools.Context = tools.NO_CONTEXT, door: Door | None = None
) -> Server[Any]:
    """An MCP server over `mem`, or over the Memory `door` picks for each HTTP request (the
    space of its key); `context` gives conversation_recall its default session and
    task_state / task_list their default workspace."""
    handlers = _Handlers(mem, context, door)
    return Server(
        "clew",
        version=__version__,
        instructions=tools.guidance(),
        on_list_tools=handlers.list_tools,
        on_call_tool=handlers.call_tool,
        on_list_resources=handlers.list_resources,
        on_list_resource_templates=_list_resource_templates,
        on_read_resource=handlers.read_resource,
        on_list_prompts=_list_prompts,
        on_get_prompt=handlers.get_prompt,
    )


class _Handlers:
    """The server's answers to each request, over one Memory or the one a door picks."""

    def __init__(self, mem: Memory | None, context: tools.Context, door: Door | None) -> None:
        self.mem = mem
        self.context = context
        self.door = door

    def memory(self, ctx: ServerRequestContext[Any]) -> Memory:
        if self.door is not None:
            return self.door.memory(ctx.request)
        assert self.mem is not None, "build_server needs a Memory or a door"
        return self.mem

    def listed(self, ctx: ServerRequestContext[Any]) -> list[tools.Tool]:
        if self.door is None or allows(self.door.scope(ctx.request), "write"):
            return list(tools.TOOLS.values())
        return [t for t in tools.TOOLS.values() if t.read_only]

    async def list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=t.name,
                    description=t.description,
                    input_schema=t.schema,
                    annotations=types.ToolAnnotations(
                        read_only_hint=t.read_only, destructive_hint=False
                    ),
                )
                for t in self.listed(ctx)
            ]
        )

    def permitted(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> tools.Context | types.CallToolResult:
        """The tools' context of a call its key may make, else the refusal to answer with."""
        door = self.door
        if door is None:
            return self.context
        try:
            needed = tools.scope_needed(params.name, params.arguments, door.served)
        except ClewError as exc:
            return _refused(f"Error: {exc}")
        if not allows(door.scope(ctx.request), needed):
            return _refused(
                f"Error: this call needs a key of scope {needed}; the key sent has a"
                f" narrower scope ({door.scope(ctx.request)})"
            )
        return door.tool_context(ctx.request)

    async def call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        given = self.permitted(ctx, params)
        if isinstance(given, types.CallToolResult):
            return given
        mem = self.memory(ctx)
        actor = self.door.actor(ctx.request) if self.door is not None else None
        result = await _call(mem, params, given, actor)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=result.text)],
            structured_content=result.data if isinstance(result.data, dict) else None,
            is_error=result.is_error,
        )

    async def list_resources(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        mem = self.memory(ctx)
        found = await anyio.to_thread.run_sync(_resources, mem)
        return types.ListResourcesResult(resources=found)

    async def read_resource(
        self, ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        mem = self.memory(ctx)

        def render() -> str:
            task = _TASK_URI.match(uri)
            if task is not None:
                return str(mem.state(str(task["id"])).text)
            session = _SESSION_URI.match(uri)
            if session is not None:
                return str(mem.session_state(str(session["id"])).text)
            raise ClewError(f"no resource {uri}; try {TASK_STATE} or {SESSION_STATE}")

        try:
            text = await anyio.to_thread.run_sync(render)
        except ClewError as exc:
            raise MCPError(code=types.INVALID_PARAMS, message=str(exc), data={"uri": uri}) from None
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type="text/yaml", text=text)]
        )

    async def get_prompt(
        self, ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        if params.name != "resume_work":
            raise MCPError(code=types.INVALID_PARAMS, message=f"no prompt {params.name!r}")
        arguments = dict(params.arguments or {})
        mem = self.memory(ctx)
        default = self.context.workspace
        try:
            text = await anyio.to_thread.run_sync(_resume_text, mem, arguments, default)
        except ClewError as exc:
            raise MCPError(code=types.INVALID_PARAMS, message=str(exc)) from None
        return types.GetPromptResult(
            description="Resume work from clew's records",
            messages=[
                types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))
            ],
        )


async def _call(
    mem: Memory, params: types.CallToolRequestParams, given: tools.Context, actor: str | None
) -> tools.ToolResult:
    """Run a tool call on a worker thread; a bug of clew's is told to the model."""

    def call() -> tools.ToolResult:
        if actor is None:
            return tools.call(mem, params.name, params.arguments, given)
        with mem.correlation(actor):  # the journal names the key that wrote
            return tools.call(mem, params.name, params.arguments, given)

    try:
        return await anyio.to_thread.run_sync(call)
    except Exception as exc:  # a bug of clew's: tell the model, keep serving
        traceback.print_exc(file=sys.stderr)
        return tools.ToolResult(
            f"Error: clew failed inside {params.name} ({type(exc).__name__}: {exc}); this"
            " is a bug in clew, not in your call",
            is_error=True,
        )


def _resources(mem: Memory) -> list[types.Resource]:
    """The states listed as resources: the active tasks' and the newest active sessions'."""
    found = [
        types.Resource(
            uri=TASK_STATE.format(id=t.id),
            name=f"task {t.id}: {t.name}",
            description=f"The state of task '{t.name}' ({t.status.value})",
            mime_type="text/yaml",
        )
        for t in mem.list_tasks("active")
    ]
    found += [
        types.Resource(
            uri=SESSION_STATE.format(id=s.id),
            name=f"session {s.id}" + (f": {s.title}" if s.title else ""),
            description=f"The state of a conversation of {s.turn_count} turns",
            mime_type="text/yaml",
        )
        for s in mem.list_sessions(active_only=True, limit=RESOURCES_LISTED)
    ]
    return found


async def _list_resource_templates(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListResourceTemplatesResult:
    return types.ListResourceTemplatesResult(
        resource_templates=[
            types.ResourceTemplate(
                uri_template=TASK_STATE,
                name="task state",
                description="Any task's state, by its id",
                mime_type="text/yaml",
            ),
            types.ResourceTemplate(
                uri_template=SESSION_STATE,
                name="session state",
                description="Any conversation session's state, by its id or key",
                mime_type="text/yaml",
            ),
        ]
    )


async def _list_prompts(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListPromptsResult:
    return types.ListPromptsResult(
        prompts=[
            types.Prompt(
                name="resume_work",
                description="Pick up where you left off: the state and 'where was I?' of"
                " this workspace's active tasks (or of one task), and how to use clew.",
                arguments=[
                    types.PromptArgument(
                        name="task_id", description="One task to resume", required=False
                    ),
                    types.PromptArgument(
                        name="workspace", description="The folder to resume", required=False
                    ),
                ],
            )
        ]
    )


def _resume_text(mem: Memory, arguments: dict[str, Any], workspace: str | None) -> str:
    """The resume_work prompt: one task's state and brief, else the workspace's tasks'."""
    task_id = arguments.get("task_id")
    if task_id:
        where = f"{mem.state(task_id).text}\n{mem.where(task_id).text}"
    else:
        where = mem.prime(arguments.get("workspace") or workspace).text
    return (
        "Resume the work below. It is the record kept outside your context window;"
        f" trust it over your memory.\n\n{where}\n\n{tools.guidance()}"
    )


def _refused(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


async def serve_stdio(mem: Memory, context: tools.Context = tools.NO_CONTEXT) -> None:
    """Serve MCP over stdin and stdout until stdin closes."""
    from mcp.server.stdio import stdio_server

    server = build_server(mem, context)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())
