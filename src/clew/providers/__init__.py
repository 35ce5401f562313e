"""Utility models behind one protocol: messages in, text and token usage out.

`OpenAICompatible` speaks the chat-completions API that OpenAI, Ollama, vLLM, llama.cpp's
server, LM Studio and OpenRouter share; `Anthropic` speaks the Messages API. Both use the
standard library's HTTP client (no SDK to install), with a timeout, retries with backoff on
429 and 5xx (honouring Retry-After), and errors a person can act on: a refused key is a
`ModelAuthError`, an unknown model a `ModelNotFoundError`, a model that never answers a
`ModelUnavailableError`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, Protocol

from clew.errors import ValidationError


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


PROVIDERS = ("openai", "anthropic")


def connect(settings: ModelSettings) -> Provider:
    """The provider for `settings`."""
    if settings.provider == "openai":
        from clew.providers.openai import OpenAICompatible

        return OpenAICompatible(settings)
    if settings.provider == "anthropic":
        from clew.providers.anthropic import Anthropic

        return Anthropic(settings)
    raise ValidationError(
        f"model provider {settings.provider!r} is not one of: {', '.join(PROVIDERS)}"
    )


__all__ = ["Completion", "Message", "ModelSettings", "Provider", "connect"]
