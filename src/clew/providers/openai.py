"""The OpenAI-compatible chat-completions API: OpenAI, Ollama, vLLM, llama.cpp's server,
LM Studio, OpenRouter, and anything else that speaks it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from clew.errors import ModelError
from clew.providers.http import post_json
from clew.providers.protocol import Completion, Message, ModelSettings

DEFAULT_URL = "https://api.openai.com/v1"


class OpenAICompatible:
    """A model behind a `/chat/completions` endpoint."""

    name = "openai"

    def __init__(self, settings: ModelSettings) -> None:
        self.settings = settings
        self.model = settings.model
        self.url = (settings.base_url or DEFAULT_URL).rstrip("/") + "/chat/completions"

    def complete(
        self, messages: Sequence[Message], *, max_tokens: int = 1024, temperature: float = 0.0
    ) -> Completion:
        """Send the conversation; return the reply and its token usage."""
        headers = {}
        if self.settings.api_key:
            headers["Authorization"] = f"Bearer {self.settings.api_key}"
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "max_tokens": max_tokens,
            "temperature": temperature,
        }
        answer = post_json(
            self.url,
            payload,
            headers=headers,
            timeout=self.settings.timeout,
            retries=self.settings.retries,
            model=self.model,
        )
        try:
            text = answer["choices"][0]["message"]["content"] or ""
        except (KeyError, IndexError, TypeError):
            raise ModelError(f"{self.url} answered without choices[0].message.content") from None
        usage = answer.get("usage") or {}
        return Completion(
            text=str(text),
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
            model=str(answer.get("model") or self.model),
        )
