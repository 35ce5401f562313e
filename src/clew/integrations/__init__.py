"""clew inside the tools agents already run: each module is a thin adapter over the Memory
facade (or, for an installer, pure edits of the tool's own config), imported only by the
command or program that uses it, so the core install and the CLI's start do not change.

- `claude_code`: the hooks and MCP server entries `clew integrate claude-code` merges into
  Claude Code's settings;
- `codex`: the notify program and MCP server lines `clew integrate codex` adds to the Codex
  CLI's config.toml, and a session's rollout found by its id;
- `claude_agent_sdk`: `options()`, the Claude Agent SDK's options with clew's hooks and tools
  (the `claude-agent-sdk` extra);
- `adk`: Google ADK's session and memory services over a store (the `adk` extra).
- `langgraph`: `ClewSaver` (LangGraph's checkpointer, `langgraph_saver`) and `ClewStore`
  (its long-term memory store, `langgraph_store`) over a clew store (the `langgraph` extra).
- `agents_sdk`: `ClewSession`, the OpenAI Agents SDK's session (public as `clew.agents_sdk`).

May import: the facade (`clew.memory`, `clew.aio`, `clew`), the tool registry and the values
below them; never `clew.store` but its contract's protocols (`CheckpointStore`).
"""
