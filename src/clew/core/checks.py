"""Input validation shared by every entry point; each failure is a ValidationError
whose message names the field, what is wrong and what is allowed."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any, TypeVar

from clew.errors import ValidationError
from clew.models import Output

E = TypeVar("E", bound=StrEnum)

MAX_NAME_CHARS = 1_000
MAX_TEXT_CHARS = 1_000_000  # a message, a summary, an entry: longer belongs in a detail
# SQLite stores integers in 64 bits; a larger one would fail deep in the store.
MIN_INT, MAX_INT = -(2**63), 2**63 - 1
BEYOND_64_BITS = f"out of range: use a whole number from {MIN_INT} to {MAX_INT}"
# Deeper JSON is no one's data, and Python's json (recursive) fails near 1,000 levels.
MAX_JSON_DEPTH = 200
MAX_SECONDS = 100 * 366 * 86400  # any duration longer is a mistake (and overflows a date)
# Python refuses to print an int of more than 4,300 digits (sys.int_info); 14,000 bits
# is about 4,200 digits, so every number kept can be written back out as JSON.
_MAX_JSON_INT_BITS = 14_000
# The token budgets a state render can honour (state.py renders within them): its core level
# always fits MIN_BUDGET UTF-8 bytes. Here, below the renderer, so checking a budget needs no
# renderer.
MIN_BUDGET = 800
MAX_BUDGET = 200_000


class NotJson(ValidationError):
    """Text that is not JSON at all (as opposed to JSON clew refuses to keep)."""

    def __init__(self, field: str, error: json.JSONDecodeError) -> None:
        self.reason = error.msg  # what is wrong, without the position
        super().__init__(f"{field} is not valid JSON: {error}")


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


def unicode(value: str, field: str) -> str:
    """Return `value` if it is text UTF-8 can hold, else raise: a command line hands over
    bytes that are not UTF-8 as lone surrogates, which no store can keep or look up."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValidationError(
            f"{field} is not valid UTF-8 text (it holds bytes that are not); give it as UTF-8"
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


def space(value: object) -> str:
    """Return a space's name: one line of printable text, stripped."""
    chosen = name(value, "space")
    if not chosen.isprintable():
        raise ValidationError(
            f"space {chosen!r} holds a control character or a line break; give a printable name"
        )
    return chosen


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


def shown(value: object) -> str:
    """A value as an error message shows it: its repr, or its size when that is long."""
    try:
        text = repr(value)
    except (RecursionError, ValueError):  # nested too deep, or an int of thousands of digits
        return f"a value too large to show ({type(value).__name__})"
    return text if len(text) <= 40 else f"{text[:16]}… ({len(text):,} characters)"


class _NotANumber(Exception):
    """A constant (NaN, Infinity) or a number too large, met while parsing: `json_value`
    names the field, which the decoder (made once) does not know."""

    def __init__(self, text: str, constant: bool) -> None:
        self.text, self.constant = text, constant


def _constant(name: str) -> Any:
    raise _NotANumber(name, True)


def _number(digits: str) -> float:
    parsed = float(digits)
    if not math.isfinite(parsed):
        raise _NotANumber(digits, False)
    return parsed


# One decoder for every call: json.loads with hooks builds a decoder and its scanner each
# time, a cost as large as parsing a short message (session import parses a line a message).
_DECODER = json.JSONDecoder(parse_constant=_constant, parse_float=_number)


def json_value(text: str, field: str, *, bound: bool = True) -> Any:
    """Parse JSON text into data clew can keep (no NaN, nesting and numbers within bounds),
    or raise: NotJson when it is not JSON at all, ValidationError when it is JSON too deep
    or with too long a number. `bound=False` leaves the bounds to a check that follows at
    once and makes them itself (`json_object`), so the value is not walked twice."""
    try:
        if text.startswith("\ufeff"):  # as json.loads refuses it
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
        value = _DECODER.decode(text)
    except _NotANumber as exc:
        if exc.constant:
            raise ValidationError(f"{field} holds {exc.text}, which is not a JSON number") from None
        raise ValidationError(f"{field} holds {shown(exc.text)}, a number too large") from None
    except json.JSONDecodeError as exc:
        raise NotJson(field, exc) from None
    except RecursionError:
        raise ValidationError(_too_deep(field)) from None
    except ValueError:  # ints longer than sys.int_info.str_digits_check_threshold
        raise ValidationError(f"{field} holds a number with too many digits") from None
    if bound:
        bounded(value, field)
    return value


def _too_deep(field: str) -> str:
    return f"{field} is nested more than {MAX_JSON_DEPTH} levels deep; flatten it"


def bounded(value: object, field: str) -> None:
    """Raise unless `value` is nested at most MAX_JSON_DEPTH deep and its ints can be
    written as JSON; walks without recursion, so any depth (even a cycle) is refused."""
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, int) and item.bit_length() > _MAX_JSON_INT_BITS:
            raise ValidationError(f"{field} holds a number with too many digits")
        children: Any = ()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list | tuple):
            children = item
        if children and depth >= MAX_JSON_DEPTH:
            raise ValidationError(_too_deep(field))
        stack.extend((child, depth + 1) for child in children)


def json_object(value: object, field: str) -> dict[str, Any]:
    """Return a JSON-serialisable dict with text keys (itself if it is plain JSON data, else
    a normalised copy), or raise."""
    if not isinstance(value, dict):
        raise ValidationError(f"{field} must be a JSON object (a dict), not {type(value).__name__}")
    if _bounded_plain(value, field):  # already JSON data: no copy (the common case)
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


def _bounded_plain(value: object, field: str) -> bool:
    """`bounded(value, field)` (raising as it does, in the same order), then whether
    `value` is JSON data as it is: dicts with text keys and lists, at most 100 deep, of
    text that is valid UTF-8, finite numbers, booleans and None. One walk for both: a
    message is checked on every append."""
    plain = True
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if item is None or isinstance(item, int):  # bool too
            if isinstance(item, int) and item.bit_length() > _MAX_JSON_INT_BITS:
                raise ValidationError(f"{field} holds a number with too many digits")
            continue
        if isinstance(item, str):
            plain = plain and (item.isascii() or _utf8(item))
            continue
        if isinstance(item, float):
            plain = plain and math.isfinite(item)
            continue
        children: Any = ()
        if isinstance(item, dict):
            children = item.values()
            plain = (
                plain
                and type(item) is dict
                and all(isinstance(k, str) and (k.isascii() or _utf8(k)) for k in item)
            )
        elif isinstance(item, list | tuple):
            children = item
            plain = plain and type(item) is list
        else:
            plain = False
        if depth > 100:  # data this deep is normalised (a copy), and bounded below
            plain = False
        if children and depth >= MAX_JSON_DEPTH:
            raise ValidationError(_too_deep(field))
        # Text cannot fail a bound: checked here, it is not pushed (most values are text).
        for child in children:
            if type(child) is str:
                plain = plain and (child.isascii() or _utf8(child))
            else:
                stack.append((child, depth + 1))
    return plain


def _finite(value: int | float) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:  # an int too large for a float
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
    """Return `value` as an int that fits in 64 bits (bools refused), or raise."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(f"{field} must be a whole number, not {shown(value)}")
    if not MIN_INT <= value <= MAX_INT:
        raise ValidationError(f"{field} {shown(value)} is {BEYOND_64_BITS}")
    return value


def optional_count(value: object, field: str) -> int | None:
    """Like `count`, but None means 'no limit'."""
    return None if value is None else count(value, field)


def duration(value: object, field: str) -> float | None:
    """Return a non-negative number of seconds, or None."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not _finite(value):
        raise ValidationError(f"{field} must be a number of seconds, not {shown(value)}")
    if value < 0:
        raise ValidationError(f"{field} cannot be negative ({value})")
    if value > MAX_SECONDS:
        raise ValidationError(f"{field} {shown(value)} is too large: at most {MAX_SECONDS:,}")
    return float(value)


def budget(value: object, field: str = "budget") -> int:
    """Return a token budget within what a render can honour, or raise."""
    value = from_digits(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(f"{field} must be a whole number of tokens, not {shown(value)}")
    if not MIN_BUDGET <= value <= MAX_BUDGET:
        raise ValidationError(
            f"{field} {value} is out of range: use {MIN_BUDGET}-{MAX_BUDGET} tokens"
        )
    return value


def from_digits(value: object) -> object:
    """A setting given as text ("1500") as its int; anything else (too many digits
    included) as it is, for the check that follows to refuse."""
    if isinstance(value, str):
        digits = value.strip()
        if digits.isascii() and digits.isdigit() and len(digits) <= 19:
            return int(digits)
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


def count(value: object, field: str, *, most: int = MAX_INT) -> int:
    """Return a whole number from 1 to `most`, or raise."""
    number = integer(value, field)
    if number < 1:
        raise ValidationError(f"{field} must be at least 1, not {number}")
    if number > most:
        raise ValidationError(f"{field} {number} is too large: use 1-{most}")
    return number


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def moment(value: object, field: str, now: datetime) -> str:
    """Return a point in time as a store timestamp: a datetime, an ISO date or time
    ("2026-11-22", "2026-11-22T09:30"; UTC unless it says otherwise) or an age ("90m",
    "2h", "7d": that long before `now`)."""
    from clew.core.clock import stamp

    if isinstance(value, datetime):
        moment_ = value if value.tzinfo else value.replace(tzinfo=UTC)
        return stamp(moment_)
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(f"{field} must be a date, a time or an age like 2h, not {value!r}")
    text = value.strip()
    unit = _UNITS.get(text[-1:])
    if unit is not None and text[:-1].replace(".", "", 1).isdigit():
        try:
            return stamp(now - timedelta(seconds=float(text[:-1]) * unit))
        except (OverflowError, ValueError):  # before the year 1, or too many digits
            raise ValidationError(
                f"{field} {shown(value)} reaches back too far; give an age of at most"
                " 100000w, or a date"
            ) from None
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValidationError(
            f"{field} {value!r} is not a date (2026-11-22), a time (2026-11-22T09:30)"
            " or an age (90m, 2h, 7d)"
        ) from None
    return stamp(parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC))


def kinds(value: object, allowed: Sequence[str]) -> tuple[str, ...]:
    """Record kinds asked for: None is all of `allowed`; one kind, a list, or a text listing
    several, comma-separated."""
    if value is None:
        return tuple(allowed)
    given = [value] if isinstance(value, str) else sequence(value, "kinds")
    names = [n.strip() for k in given for n in text(k, "kind").split(",") if n.strip()]
    for name in names:
        if name not in allowed:
            raise ValidationError(f"kind {name!r} is not one of: {', '.join(allowed)}")
    if not names:
        raise ValidationError(f"give at least one kind: {', '.join(allowed)}")
    return tuple(dict.fromkeys(names))
