"""Anthropic's Messages API."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from clew.errors import ModelError
from clew.providers.http import post_json
from clew.providers.protocol import Completion, Message, ModelSettings

DEFAULT_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"


class Anthropic:
    """A Claude model behind `/v1/messages`."""

    name = "anthropic"

    def __init__(self, settings: ModelSettings) -> None:
        self.settings = settings
        self.model = settings.model
        self.url = (settings.base_url or DEFAULT_URL).rstrip("/") + "/v1/messages"

    def complete(
        self, messages: Sequence[Message], *, max_tokens: int = 1024, temperature: float = 0.0
    ) -> Completion:
        """Send the conversation (system messages become the system prompt)."""
        headers = {"anthropic-version": API_VERSION}
        if self.settings.api_key:
            headers["x-api-key"] = self.settings.api_key
        system = "\n\n".join(m.content for m in messages if m.role == "system")
        payload: dict[str, Any] = {
            "model": self.model,
            "max_tokens": max_tokens,
            "temperature": temperature,
            "messages": [
                {"role": m.role, "content": m.content} for m in messages if m.role != "system"
            ],
        }
        if system:
            payload["system"] = system
        answer = post_json(
            self.url,
            payload,
            headers=headers,
            timeout=self.settings.timeout,
            retries=self.settings.retries,
            model=self.model,
        )
        try:
            text = "".join(
                block.get("text", "") for block in answer["content"] if block.get("type") == "text"
            )
        except (KeyError, TypeError, AttributeError):
            raise ModelError(f"{self.url} answered without content blocks") from None
        usage = answer.get("usage") or {}
        return Completion(
            text=text,
            prompt_tokens=int(usage.get("input_tokens") or 0),
            completion_tokens=int(usage.get("output_tokens") or 0),
            model=str(answer.get("model") or self.model),
        )
