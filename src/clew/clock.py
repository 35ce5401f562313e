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
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)


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
