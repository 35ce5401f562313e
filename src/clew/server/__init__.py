"""`clew serve`: one ASGI app (Starlette, uvicorn) with the JSON API at /api/v1, MCP at /mcp
and a page of tasks at /, each request's space taken from its key (see docs/server.md).

`app.py` assembles the app and its keys rule, `api.py` the routes generated from the tool
registry, `limits.py` the per-key rate limit, `page.py` the HTML of `/`."""
