"""Utility models behind one protocol: messages in, text and token usage out.

`OpenAICompatible` speaks the chat-completions API that OpenAI, Ollama, vLLM, llama.cpp's
server, LM Studio and OpenRouter share; `Anthropic` speaks the Messages API. Both use the
standard library's HTTP client (no SDK to install), with a timeout, retries with backoff on
429 and 5xx (honouring Retry-After), and errors a person can act on: a refused key is a
`ModelAuthError`, an unknown model a `ModelNotFoundError`, a model that never answers a
`ModelUnavailableError`.

May import: `clew.errors` and the standard library only (a provider is handed its messages).
"""

from __future__ import annotations

from clew.errors import ValidationError
from clew.providers.protocol import Completion, Message, ModelSettings, Provider

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
