"""`clew.agents_sdk.ClewSession`, the OpenAI Agents SDK's session over clew's conversation
archive, at the path users import; its code is `clew.integrations.agents_sdk`."""

from __future__ import annotations

from clew.integrations.agents_sdk import ClewSession

__all__ = ["ClewSession"]
