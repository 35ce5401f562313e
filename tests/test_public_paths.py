"""The import paths users rely on keep working when modules move (issue 26 point 6): each path
the README and docs/ show a user, in a fresh interpreter so nothing imported before helps."""

from __future__ import annotations

import json
import subprocess
import sys

# What the user pages show being imported or called by its dotted name, and a name of each.
PUBLIC = (
    ("clew", ("open", "open_async", "Memory", "AsyncMemory", "ValidationError", "NotFoundError")),
    ("clew.tools", ("schemas", "dispatch", "call", "guidance", "Context", "ToolResult", "TOOLS")),
    ("clew.agents_sdk", ("ClewSession",)),
    ("clew.models", ("Task", "Entry", "Turn", "Event", "MoveReport", "to_jsonable", "EVENT_TYPES")),
    ("clew.errors", ("ClewError", "ValidationError", "ScopeError")),
    ("clew.store", ("Store", "open_store")),
    ("clew.store.contract", ("CheckpointStore", "Journal", "ArchiveReads")),
    ("clew.store.conformance", ("StoreConformance",)),
    ("clew.store.sqlite", ("SQLiteStore",)),
    ("clew.store.postgres", ("PostgresStore",)),
    ("clew.integrations.langgraph", ("ClewSaver", "ClewStore")),
    ("clew.integrations.claude_code", ()),
    ("clew.integrations.codex", ()),
)


def test_every_public_path_imports_with_its_names() -> None:
    """One fresh interpreter for them all (each import costs a process start otherwise); it
    names every path or name that fails, not only the first."""
    code = "import importlib, json\nfailed = []\n"
    code += f"for module, names in {PUBLIC!r}:\n"
    code += "    try:\n        m = importlib.import_module(module)\n"
    code += "        failed += [f'{module}.{n}' for n in names if not hasattr(m, n)]\n"
    code += "    except Exception as e:\n        failed.append(f'{module}: {e!r}')\n"
    code += "print(json.dumps(failed))\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-600:]
    assert json.loads(done.stdout) == []


def test_a_public_name_star_imports_from_the_tool_registry() -> None:
    """`clew.tools` lends its names lazily (the hook path must not load the registry): a star
    import and `dir()` still see them."""
    code = "from clew.tools import *\nschemas('openai'); Context()\nimport clew.tools as t\n"
    code += "assert {'schemas', 'dispatch'} <= set(dir(t)) | set(t.__all__)\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-600:]
