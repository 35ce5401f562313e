"""JSON over HTTP for model providers: a timeout, retries with backoff, clear errors.

Retried: 429, 500-599 and network failures, up to `retries` times, waiting 0.5 s, 1 s, 2 s...
(or what Retry-After asks, at most 30 s), with jitter. Not retried: 400-499 but 429, which
are the caller's to fix: 401/403 become ModelAuthError, 404 ModelNotFoundError.
"""

from __future__ import annotations

import json
import random
import time
import urllib.error
import urllib.request
from typing import Any

from clew.errors import ModelAuthError, ModelError, ModelNotFoundError, ModelUnavailableError

MAX_WAIT = 30.0


def _wait(attempt: int, retry_after: str | None) -> float:
    if retry_after:
        try:
            return min(MAX_WAIT, max(0.0, float(retry_after)))
        except ValueError:
            pass
    return float(min(MAX_WAIT, 0.5 * 2**attempt) * random.uniform(0.8, 1.2))


def _detail(body: bytes) -> str:
    """The error message an API put in its body, on one line."""
    try:
        data = json.loads(body)
    except ValueError:
        return " ".join(body.decode("utf-8", "replace").split())[:300]
    error = data.get("error", data) if isinstance(data, dict) else data
    if isinstance(error, dict):
        return str(error.get("message") or error.get("type") or error)[:300]
    return str(error)[:300]


def post_json(
    url: str,
    payload: dict[str, Any],
    *,
    headers: dict[str, str],
    timeout: float,
    retries: int,
    model: str,
    sleep: Any = time.sleep,
) -> dict[str, Any]:
    """POST `payload` as JSON and return the JSON answer, retrying what can be retried."""
    data = json.dumps(payload).encode("utf-8")
    last = ""
    for attempt in range(retries + 1):
        request = urllib.request.Request(
            url, data=data, headers={"Content-Type": "application/json", **headers}
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                body = response.read()
            try:
                answer = json.loads(body)
            except ValueError:
                raise ModelError(f"{url} answered with something that is not JSON") from None
            if not isinstance(answer, dict):
                raise ModelError(f"{url} answered with JSON that is not an object")
            return answer
        except urllib.error.HTTPError as exc:
            body = exc.read()
            detail = _detail(body)
            if exc.code in (401, 403):
                raise ModelAuthError(
                    f"the model API at {url} refused the key (HTTP {exc.code}: {detail});"
                    " check the API key setting"
                ) from None
            if exc.code == 404 or "model_not_found" in detail or "does not exist" in detail:
                raise ModelNotFoundError(
                    f"the model API at {url} does not know model {model!r} (HTTP {exc.code}:"
                    f" {detail}); check the model name"
                ) from None
            if exc.code != 429 and exc.code < 500:
                raise ModelError(f"the model API at {url} said HTTP {exc.code}: {detail}") from None
            last = f"HTTP {exc.code}: {detail}"
            retry_after = exc.headers.get("Retry-After") if exc.headers else None
        except (urllib.error.URLError, OSError) as exc:  # refused, reset, timed out
            reason = getattr(exc, "reason", exc)
            last = f"{type(reason).__name__}: {reason}" if str(reason) else type(reason).__name__
            retry_after = None
        if attempt < retries:
            sleep(_wait(attempt, retry_after))
    raise ModelUnavailableError(
        f"the model API at {url} did not answer after {retries + 1} tries ({last})"
    )
