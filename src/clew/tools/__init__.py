"""The agent tool surface: one registry of tools over the Memory facade (`registry`), each
tool's parameters defined once (`spec`), arguments checked against the tools' JSON Schemas
(`schema`), and the plain-text views of records people and models read (`views`). The MCP
server, the HTTP API, the CLI and function calling all read this one registry.

The names below are the public API (`from clew.tools import schemas, dispatch, ...`).
May import: `clew.memory` and everything below it; never the doors above.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from clew.tools.registry import (
        NO_CONTEXT,
        TOOLS,
        Context,
        Tool,
        ToolResult,
        call,
        dispatch,
        guidance,
        run,
        schemas,
    )

__all__ = [
    "NO_CONTEXT",
    "TOOLS",
    "Context",
    "Tool",
    "ToolResult",
    "call",
    "dispatch",
    "guidance",
    "run",
    "schemas",
]


def __getattr__(name: str) -> Any:
    """The public names, imported from the registry on first use: the CLI's hook path imports
    `clew.tools.spec` for its options, and must not pay for the registry and its views."""
    if name in __all__:
        return getattr(importlib.import_module("clew.tools.registry"), name)
    raise AttributeError(f"module 'clew.tools' has no attribute {name!r}")
