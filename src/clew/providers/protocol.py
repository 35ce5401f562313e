"""What every utility model provider speaks: messages in, a completion out, and how to reach
one model. Below the providers and the package that picks one, so each imports it alone."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, Protocol


class Message(NamedTuple):
    role: str  # system, user or assistant
    content: str


class Completion(NamedTuple):
    """A model's answer and what it cost."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    model: str


class Provider(Protocol):
    """Anything that completes a conversation."""

    name: str  # "openai" or "anthropic", or a test's own
    model: str

    def complete(
        self, messages: Sequence[Message], *, max_tokens: int = 1024, temperature: float = 0.0
    ) -> Completion: ...


class ModelSettings(NamedTuple):
    """How to reach one model (from config.toml or the environment)."""

    provider: str
    model: str
    base_url: str | None = None
    api_key: str | None = None
    timeout: float = 30.0
    retries: int = 3
