"""JSON for journal data that round-trips exactly, bytes included.

Bytes (non-UTF-8 command output) become {"$bytes": base64}. So that no value of
the caller's can be mistaken for that marker, every dict key that starts with
"$" is written with one more "$" and read back with one less.
"""

from __future__ import annotations

import base64
import json
from typing import Any


def _wrap(value: Any) -> Any:
    if isinstance(value, bytes):
        return {"$bytes": base64.b64encode(value).decode("ascii")}
    if isinstance(value, dict):
        return {("$" + k if k.startswith("$") else k): _wrap(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_wrap(v) for v in value]
    return value


def _unwrap(obj: dict[str, Any]) -> Any:
    if len(obj) == 1 and "$bytes" in obj:
        return base64.b64decode(obj["$bytes"])
    if any(k.startswith("$") for k in obj):
        return {(k[1:] if k.startswith("$") else k): v for k, v in obj.items()}
    return obj


class _HasBytes(Exception):
    pass


def _no_bytes(value: Any) -> Any:
    raise _HasBytes


# What json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False,
# default=_no_bytes) builds on each call, built once (every event is encoded with it).
_ENCODER = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=_no_bytes
)


def dumps(value: Any) -> str:
    """Serialize journal data to compact JSON text."""
    # Most data has no bytes and no text starting with "$": then it needs no wrapping,
    # and one pass of the encoder is enough.
    try:
        text = _ENCODER.encode(value)
    except _HasBytes:
        text = '"$'
    if '"$' not in text:
        return text
    return json.dumps(_wrap(value), ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def loads(text: str) -> Any:
    """Parse JSON text written by `dumps`, restoring bytes."""
    if '"$' not in text:  # no key or marker that `dumps` wrapped: nothing to unwrap
        return json.loads(text)
    return json.loads(text, object_hook=_unwrap)
