"""The /mcp endpoint of `clew serve`: MCP's streamable HTTP transport, through the MCP SDK's
session manager, behind the same edge and keys as every other route (app.py).

A session manager runs only once: when one stops or fails, `kept` (app.py) runs `run`
again, which makes the next; a request between the two is answered 503 with Retry-After.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio
from starlette.types import Receive, Scope, Send

from clew.server.bodies import json_error
from clew.tools import registry as tools

if TYPE_CHECKING:
    from clew.server.mcp_server import Door


class McpEndpoint:
    """The /mcp endpoint: the MCP SDK's session manager, made again whenever one stops (a
    manager runs only once), so MCP outlives a failure of its own."""

    def __init__(self, context: tools.Context, door: Door) -> None:
        from clew.server.mcp_server import build_server

        self._app = build_server(None, context, door=door)
        self.manager: Any = None
        self.running = anyio.Event()  # the first manager runs

    def _make(self) -> Any:
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
        from mcp.server.transport_security import TransportSecuritySettings

        # The SDK's own Host and Origin check is off: the edge's (edge.py) holds for every
        # route, /mcp included, so there is one rule, not two.
        security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
        return StreamableHTTPSessionManager(app=self._app, security_settings=security)

    async def run(self) -> None:
        """Run one session manager until it stops (`kept` makes the next)."""
        manager = self._make()
        async with manager.run():
            self.manager = manager
            self.running.set()
            try:
                await anyio.sleep_forever()
            finally:
                self.manager = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        manager = self.manager
        if manager is None:  # between one manager and the next
            busy = json_error(503, "MCP is starting again; retry in a second", {"Retry-After": "1"})
            await busy(scope, receive, send)
            return
        await manager.handle_request(scope, receive, send)
