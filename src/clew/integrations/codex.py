"""The Codex CLI's config, edited for clew, and its rollouts found: pure text edits plus one
folder walk. The CLI reads and writes the file (`clew integrate codex`).

Codex runs one `notify` program after each agent turn, with a JSON event as its last argument
(`{"type": "agent-turn-complete", "thread-id": ..., "cwd": ...}`); clew's is `clew capture
--codex-notify`, which finds the session's rollout by its thread id and archives what it
gained. The MCP server is a `[mcp_servers.clew]` table. clew's lines are told apart by the
comment that ends each (`MARK`), so uninstalling removes exactly them. Codex allows one
`notify`: a config that has another is refused rather than changed.
"""

from __future__ import annotations

import json
import os
import shlex

__all__ = ["MARK", "find_rollout", "install", "uninstall"]

MARK = "# clew (clew integrate codex)"


def _toml_list(words: list[str]) -> str:
    # A JSON string is a TOML basic string for any text a path holds.
    return "[" + ", ".join(json.dumps(w) for w in words) + "]"


def uninstall(text: str) -> str:
    """The config without clew's lines."""
    kept = [line for line in text.splitlines(keepends=True) if not line.rstrip().endswith(MARK)]
    return "".join(kept)


def install(text: str, clew: str, theirs: dict[str, object]) -> str:
    """The config with clew's notify (first, where top-level keys go) and MCP server (last),
    replacing any earlier ones of clew's. `theirs`: the config without clew's lines, parsed;
    a `notify` or an MCP server named clew there is someone else's, and refused."""
    if "notify" in theirs:
        raise ValueError(
            "it already has a notify program, and Codex runs only one; remove it (or make it"
            " run `clew capture --codex-notify` as well) and try again"
        )
    servers = theirs.get("mcp_servers")
    if isinstance(servers, dict) and "clew" in servers:
        raise ValueError("it already has an MCP server named clew, not written by clew")
    words = shlex.split(clew)
    rest = uninstall(text)
    notify = f"notify = {_toml_list([*words, 'capture', '--codex-notify'])}  {MARK}\n"
    server = (  # no blank line before it: every line clew adds is one uninstall removes
        f"[mcp_servers.clew]  {MARK}\n"
        f"command = {json.dumps(words[0])}  {MARK}\n"
        f"args = {_toml_list([*words[1:], 'mcp'])}  {MARK}\n"
    )
    if rest and not rest.endswith("\n"):
        rest += "\n"
    return notify + rest + server


def find_rollout(home: str, thread: str) -> str | None:
    """The rollout of the Codex session `thread` under `home` (sessions/YYYY/MM/DD/
    rollout-<time>-<id>.jsonl), looked for newest day first; None if there is none."""
    suffix = f"-{thread}.jsonl"
    root = os.path.join(home, "sessions")
    for year in _newest_first(root):
        for month in _newest_first(year):
            for day in _newest_first(month):
                for entry in os.scandir(day):
                    if entry.name.startswith("rollout-") and entry.name.endswith(suffix):
                        return entry.path
    return None


def _newest_first(folder: str) -> list[str]:
    try:
        names = sorted((e.name for e in os.scandir(folder) if e.is_dir()), reverse=True)
    except OSError:
        return []
    return [os.path.join(folder, n) for n in names]
