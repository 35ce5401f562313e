"""`clew serve`: one ASGI app (Starlette, uvicorn) with the JSON API at /api/v1, MCP at /mcp
and a dashboard at /, each request's space taken from its key (see docs/server.md).

`app.py` assembles the app and its keys rule, `edge.py` the rules a request meets before
its key (its Host, its client behind a listed proxy, the bytes refused), `requestlog.py` the
request log's spill files, `api.py` the routes generated from the tool registry, `limits.py`
the per-key rate limit, `web.py` the dashboard's routes, `dashboard.py` and `markup.py` its
pages; `mcp_server.py` the MCP server (stdio for `clew mcp`, mounted at /mcp here).

May import: the facade (`clew.memory`, `clew`), the tool registry (`clew.tools`), the
integrations, and the values below them; never `clew.store` but its contract's protocols.
"""
