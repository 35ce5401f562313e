"""Timestamps: ISO 8601 in UTC with microseconds, so text order is time order."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

Clock = Callable[[], datetime]


def utcnow() -> datetime:
    """Return the current time in UTC."""
    return datetime.now(UTC)


def stamp(moment: datetime) -> str:
    """Format `moment` as the store's timestamp text."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse(text: str) -> datetime:
    """Parse a store timestamp back into an aware datetime."""
    # A stamp of the store's exact shape goes to fromisoformat, a C parser: the first strptime
    # of a process imports _strptime and compiles its locale's patterns (~10 ms of a hook's
    # start). Anything else meets strptime, so what is accepted or refused is unchanged.
    if _stamp_shaped(text):
        try:
            return datetime.fromisoformat(text[:26]).replace(tzinfo=UTC)
        except ValueError:  # a month 13 and the like: strptime says what is wrong
            pass
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)


def _stamp_shaped(text: str) -> bool:
    """Whether `text` looks like YYYY-MM-DDTHH:MM:SS.ffffffZ, in ASCII digits."""
    if len(text) != 27 or not text.isascii() or text[19] != "." or text[26] != "Z":
        return False
    if text[4] != "-" or text[7] != "-" or text[10] != "T" or text[13] != ":" or text[16] != ":":
        return False
    digits = text[:4] + text[5:7] + text[8:10] + text[11:13] + text[14:16] + text[17:19]
    return (digits + text[20:26]).isdigit()


def seconds_between(start: str, end: str) -> float:
    """Return the seconds from `start` to `end` (both store timestamps)."""
    return round((parse(end) - parse(start)).total_seconds(), 6)


def ago(then: str, now: datetime) -> str:
    """Say how long ago `then` was, coarsely: '45s ago', '3m ago', '2h ago', '4d ago'."""
    seconds = max(0, int((now - parse(then)).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit} ago"
    return f"{seconds}s ago"
