"""Claude Code's settings, edited for clew: the hooks that capture the transcript and put the
task state back, and the MCP server. Pure: settings in, settings out; the CLI reads and
writes the files (`clew integrate claude-code`).

Only clew's own entries are touched: a hook is clew's when its command runs `clew capture
--hook` or `clew prime --hook` (whatever the path of `clew`), and the MCP server is the one
named `clew`. Installing removes clew's entries and adds them afresh, so running it twice
changes nothing and a moved `clew` is updated; uninstalling removes them and whatever they
leave empty, and nothing else.
"""

from __future__ import annotations

import copy
import shlex
from typing import Any

__all__ = [
    "CAPTURE_EVENTS",
    "SERVER",
    "install_hooks",
    "install_server",
    "uninstall_hooks",
    "uninstall_server",
]

SERVER = "clew"
# The events whose hook archives what the transcript gained; SessionStart also primes.
CAPTURE_EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PostToolUse",
    "PreCompact",
    "Stop",
    "SubagentStop",
    "SessionEnd",
)
_MATCHERS = {"SessionStart": "startup|resume|clear|compact", "PostToolUse": "*"}
_CAPTURE_TIMEOUT, _PRIME_TIMEOUT = 30, 10  # seconds; capture fails open long before


def _hook(command: str, timeout: int) -> dict[str, Any]:
    return {"type": "command", "command": command, "timeout": timeout}


def _is_clew(hook: object) -> bool:
    """Whether a hook entry is one clew installs: a command ending in `capture --hook` or
    `prime --hook`, run by a program named clew (or `python -m clew`)."""
    if not isinstance(hook, dict) or not isinstance(hook.get("command"), str):
        return False
    try:
        words = shlex.split(hook["command"])
    except ValueError:
        return False
    if len(words) < 3 or words[-1] != "--hook" or words[-2] not in ("capture", "prime"):
        return False
    program = words[:-2]
    return program[-1].rsplit("/", 1)[-1] == "clew" or program[-2:] == ["-m", "clew"]


def uninstall_hooks(settings: dict[str, Any]) -> dict[str, Any]:
    """The settings without clew's hooks (and without the groups and events that leaves
    empty); everything else as it was."""
    result = copy.deepcopy(settings)
    hooks = result.get("hooks")
    if not isinstance(hooks, dict):
        return result
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept = []
        for group in groups:
            inner = group.get("hooks") if isinstance(group, dict) else None
            if isinstance(inner, list) and any(_is_clew(h) for h in inner):
                group = {**group, "hooks": [h for h in inner if not _is_clew(h)]}
                if not group["hooks"]:
                    continue
            kept.append(group)
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    if not hooks:
        del result["hooks"]
    return result


def install_hooks(settings: dict[str, Any], clew: str) -> dict[str, Any]:
    """The settings with clew's hooks (run by the command `clew`), replacing any earlier
    ones of clew's: capture on every event of CAPTURE_EVENTS, prime at session start."""
    result = uninstall_hooks(settings)
    hooks = result.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise ValueError("its `hooks` is not a JSON object")
    for event in CAPTURE_EVENTS:
        entries = [_hook(f"{clew} capture --hook", _CAPTURE_TIMEOUT)]
        if event == "SessionStart":
            entries.append(_hook(f"{clew} prime --hook", _PRIME_TIMEOUT))
        group: dict[str, Any] = {"hooks": entries}
        if event in _MATCHERS:
            group = {"matcher": _MATCHERS[event], **group}
        existing = hooks.setdefault(event, [])
        if not isinstance(existing, list):
            raise ValueError(f"its hooks for {event} are not a list")
        existing.append(group)
    return result


def install_server(config: dict[str, Any], clew: str) -> dict[str, Any]:
    """The MCP config (a project's .mcp.json, or ~/.claude.json) with clew's server."""
    result = copy.deepcopy(config)
    servers = result.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise ValueError("its `mcpServers` is not a JSON object")
    words = shlex.split(clew)
    servers[SERVER] = {"type": "stdio", "command": words[0], "args": [*words[1:], "mcp"]}
    return result


def uninstall_server(config: dict[str, Any]) -> dict[str, Any]:
    """The MCP config without clew's server (and without an `mcpServers` left empty)."""
    result = copy.deepcopy(config)
    servers = result.get("mcpServers")
    if isinstance(servers, dict) and SERVER in servers:
        del servers[SERVER]
        if not servers:
            del result["mcpServers"]
    return result
