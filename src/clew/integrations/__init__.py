"""clew inside the tools agents already run: each module is a thin adapter over the Memory
facade (or, for an installer, pure edits of the tool's own config), imported only by the
command or program that uses it, so the core install and the CLI's start do not change.

- `claude_code`: the hooks and MCP server entries `clew integrate claude-code` merges into
  Claude Code's settings.
"""
