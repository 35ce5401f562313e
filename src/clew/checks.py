"""Input validation shared by every entry point; each failure is a ValidationError
whose message names the field, what is wrong and what is allowed."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any, TypeVar

from clew.errors import ValidationError
from clew.models import Output

E = TypeVar("E", bound=StrEnum)

MAX_NAME_CHARS = 1_000
MAX_TEXT_CHARS = 1_000_000  # a message, a summary, an entry: longer belongs in a detail


def text(value: object, field: str, *, max_chars: int | None = None) -> str:
    """Return `value` as non-empty UTF-8 text (surrounding whitespace kept), or raise."""
    if not isinstance(value, str):
        raise ValidationError(f"{field} must be text, not {type(value).__name__}")
    if not value.strip():
        raise ValidationError(f"{field} is empty; give it some text")
    if max_chars is not None and len(value) > max_chars:
        raise ValidationError(f"{field} is {len(value)} characters long; the limit is {max_chars}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValidationError(
            f"{field} is not valid UTF-8 text; pass it as command output if it is raw bytes"
        ) from None
    return value


def optional_text(value: object, field: str, *, max_chars: int | None = None) -> str | None:
    """Like `text`, but None (and, for convenience, the empty string) mean 'not given'."""
    if value is None or value == "":
        return None
    return text(value, field, max_chars=max_chars)


def name(value: object, field: str) -> str:
    """Return a one-line name, stripped."""
    return text(value, field, max_chars=MAX_NAME_CHARS).strip()


def output(value: object, field: str) -> Output | None:
    """Return command output verbatim: text when it is valid UTF-8, the exact bytes otherwise."""
    if value is None:
        return None
    if isinstance(value, bytes | bytearray | memoryview):
        raw = bytes(value)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return raw
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            # Text that came from undecodable bytes (surrogateescape): keep the bytes.
            return output(value.encode("utf-8", "surrogateescape"), field)
    raise ValidationError(f"{field} must be text or bytes, not {type(value).__name__}")


def choice(value: object, kind: type[E], field: str) -> E:
    """Return `value` as a member of `kind`, or raise naming the allowed values."""
    try:
        return kind(value)  # type: ignore[arg-type]  # any value may be tried; bad ones raise
    except ValueError:
        allowed = ", ".join(m.value for m in kind)
        raise ValidationError(f"{field} {value!r} is not one of: {allowed}") from None


def json_object(value: object, field: str) -> dict[str, Any]:
    """Return a JSON-serialisable dict with text keys (itself if it is plain JSON data, else
    a normalised copy), or raise."""
    if not isinstance(value, dict):
        raise ValidationError(f"{field} must be a JSON object (a dict), not {type(value).__name__}")
    if _plain(value):  # already JSON data: no copy needed (the common case, and cheaper)
        return value
    try:
        encoded = json.dumps(value, allow_nan=False, ensure_ascii=False)
        encoded.encode("utf-8")
        normalized: dict[str, Any] = json.loads(encoded)
    except UnicodeEncodeError:
        raise ValidationError(f"{field} holds text that is not valid UTF-8") from None
    except (TypeError, ValueError) as exc:
        raise ValidationError(f"{field} is not valid JSON data: {exc}") from None
    if _has_non_text_keys(value):
        raise ValidationError(f"{field} has a key that is not text; JSON keys must be strings")
    return normalized


def _plain(value: object, depth: int = 0) -> bool:
    """Whether `value` is JSON data as it is: dicts with text keys, lists, text that is
    valid UTF-8, finite numbers, booleans and None."""
    if value is None or isinstance(value, bool | int):
        return True
    if isinstance(value, str):
        return value.isascii() or _utf8(value)
    if isinstance(value, float):
        return math.isfinite(value)
    if depth > 100:
        return False
    if type(value) is dict:
        items = value.items()
        return all(isinstance(k, str) and _plain(k) and _plain(v, depth + 1) for k, v in items)
    if type(value) is list:
        return all(_plain(v, depth + 1) for v in value)
    return False


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _has_non_text_keys(value: object) -> bool:
    if isinstance(value, dict):
        return any(not isinstance(k, str) or _has_non_text_keys(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(_has_non_text_keys(v) for v in value)
    return False


def integer(value: object, field: str) -> int:
    """Return `value` as an int (bools refused), or raise."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(f"{field} must be a whole number, not {value!r}")
    return value


def duration(value: object, field: str) -> float | None:
    """Return a non-negative number of seconds, or None."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValidationError(f"{field} must be a number of seconds, not {value!r}")
    if value < 0:
        raise ValidationError(f"{field} cannot be negative ({value})")
    return float(value)


def budget(value: object, field: str = "budget") -> int:
    """Return a token budget within what a render can honour, or raise."""
    from clew.state import MAX_BUDGET, MIN_BUDGET

    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(f"{field} must be a whole number of tokens, not {value!r}")
    if not MIN_BUDGET <= value <= MAX_BUDGET:
        raise ValidationError(
            f"{field} {value} is out of range: use {MIN_BUDGET}-{MAX_BUDGET} tokens"
        )
    return value


def strings(values: object, field: str) -> tuple[str, ...]:
    """Return a list of one-line texts (stripped, without duplicates), or raise."""
    if isinstance(values, str) or not isinstance(values, list | tuple | set | frozenset):
        raise ValidationError(f"{field} must be a list of texts, not {type(values).__name__}")
    out: dict[str, None] = {}
    for value in values:
        item = name(value, field)
        if "\n" in item:
            raise ValidationError(f"{field} {item!r} spans lines; give one line each")
        out[item] = None
    return tuple(out)


def sequence(values: object, field: str) -> list[object]:
    """Return a list of items (a list or tuple, never a bare string), or raise."""
    if isinstance(values, str) or not isinstance(values, list | tuple):
        raise ValidationError(f"{field} must be a list, not {type(values).__name__}")
    return list(values)


def count(value: object, field: str) -> int:
    """Return a whole number of at least 1, or raise."""
    number = integer(value, field)
    if number < 1:
        raise ValidationError(f"{field} must be at least 1, not {number}")
    return number


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def moment(value: object, field: str, now: datetime) -> str:
    """Return a point in time as a store timestamp: a datetime, an ISO date or time
    ("2026-11-22", "2026-11-22T09:30"; UTC unless it says otherwise) or an age ("90m",
    "2h", "7d": that long before `now`)."""
    from clew.clock import stamp

    if isinstance(value, datetime):
        moment_ = value if value.tzinfo else value.replace(tzinfo=UTC)
        return stamp(moment_)
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(f"{field} must be a date, a time or an age like 2h, not {value!r}")
    text = value.strip()
    unit = _UNITS.get(text[-1:])
    if unit is not None and text[:-1].replace(".", "", 1).isdigit():
        return stamp(now - timedelta(seconds=float(text[:-1]) * unit))
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValidationError(
            f"{field} {value!r} is not a date (2026-11-22), a time (2026-11-22T09:30)"
            " or an age (90m, 2h, 7d)"
        ) from None
    return stamp(parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC))
