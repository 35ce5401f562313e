"""The task lifecycle around the steps: smart waits and the maintenance that runs by itself.

Value types and pure rules, no I/O: what a wait is, when it is due, the message it posts to
its task when it ends, durations in words, and the maintenance settings and report.

A wait is a row (`waits`), written only from journal events, so it survives restarts and
`verify` rebuilds it. When a wait was last *polled* is not a fact about the task but the
poller's bookkeeping: it lives in `schedule`, a table outside the journal (like the search
indexes, a cache: losing it only makes the next poll come sooner). A poll journals
`wait.checked` only when what it saw changed, so a wait polled every 10 s for a day writes a
handful of events, not 8,640.
"""

import json
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, NamedTuple

from clew.errors import ValidationError


class WaitKind(StrEnum):
    COMMAND = "command"  # run a command until it meets its criterion (exit code, output)
    FILE = "file"  # a file appears (with some content)
    URL = "url"  # a local URL answers (status, body)
    TIME = "time"  # a moment comes
    MANUAL = "manual"  # a condition someone resolves by hand


class WaitStatus(StrEnum):
    WATCHING = "watching"
    RESOLVED = "resolved"
    TIMED_OUT = "timed_out"
    CANCELLED = "cancelled"
    ERROR = "error"


POLLED = frozenset({WaitKind.COMMAND, WaitKind.FILE, WaitKind.URL})
# The criteria each kind accepts; a command needs exit code 0 unless told otherwise, a URL
# a 2xx status.
CRITERIA: dict[WaitKind, tuple[str, ...]] = {
    WaitKind.COMMAND: ("exit_code", "contains", "regex"),
    WaitKind.FILE: ("contains", "regex"),
    WaitKind.URL: ("status", "contains", "regex"),
    WaitKind.TIME: (),
    WaitKind.MANUAL: (),
}
DEFAULT_POLL = 30.0
MIN_POLL = 1.0
MAX_POLL = 86_400.0
DEFAULT_TIMEOUT = 3600.0  # for the polled kinds; time and manual waits have none by default
DEFAULT_RUN_TIMEOUT = 30.0  # one check: a command's run, an HTTP request
MAX_RUN_TIMEOUT = 600.0
MAX_REGEX = 500
LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


class Wait(NamedTuple):
    """Something a task waits for, polled until it is met, times out or is cancelled."""

    id: str
    space: str
    task_id: str
    step_id: str | None
    kind: WaitKind
    target: str  # the command line, path, URL, ISO time or condition in words
    criteria: dict[str, Any]
    description: str | None
    cwd: str | None  # where a command runs
    poll_seconds: float
    timeout_seconds: float | None
    run_timeout: float
    deadline: str | None
    status: WaitStatus
    observation: str | None  # what the last journaled check saw
    checked_at: str | None
    result: str | None  # the evidence it ended with
    ended_at: str | None
    created_at: str
    updated_at: str
    polls: int = 0  # checks made (bookkeeping, not journaled)
    polled_at: str | None = None  # the last check, journaled or not
    seen: str | None = None  # what the last check saw
    seal: str | None = None  # a host wait's seal, made when it was added here (origin.py)
    confined_to: str | None = None  # the folder a file wait added through a server is kept in

    @property
    def label(self) -> str:
        """The wait in words: its description, else its kind and target."""
        if self.description:
            return self.description
        if self.kind is WaitKind.COMMAND:
            return f"`{self.target}`"
        if self.kind is WaitKind.MANUAL:
            return self.target  # the condition, in words
        if self.kind is WaitKind.TIME:
            return f"until {self.target[:16]}Z"
        return f"{self.kind.value} {self.target}"


class WaitCheck(NamedTuple):
    """What one poll of a wait found and did."""

    wait: Wait  # as it stands after the check
    outcome: str  # resolved, pending, timed_out, error, cancelled
    observation: str
    evidence: str


class MaintenanceSettings(NamedTuple):
    """What maintenance does and how often (config `[maintenance]`)."""

    enabled: bool = True
    interval: float = 3600.0  # at most one run per this many seconds
    pause_after: float | None = 86_400.0  # idle active tasks are paused
    archive_after: float | None = 7 * 86_400.0  # closed tasks are archived
    prune_patterns: bool = True  # the pruning rule: under 70% after 10 trials


class MaintenanceAction(NamedTuple):
    """One thing maintenance did (or would do)."""

    action: str  # paused, archived, deprecated, timed_out, cancelled
    id: str  # the task, pattern or wait
    detail: str


class MaintenanceReport(NamedTuple):
    """A maintenance run: when, why, and what it did."""

    ran: bool  # False when it was not due (or is switched off)
    trigger: str  # open, prime, worker, manual
    at: str
    actions: tuple[MaintenanceAction, ...] = ()
    dry_run: bool = False


class Waiting(NamedTuple):
    """An open wait as the state and the brief show it: a smart wait or a wait action."""

    id: str
    what: str
    since: str
    seen: str | None = None  # what its last check saw


class ArchivedTask(NamedTuple):
    """An archived task and the month it was archived in (YYYY-MM)."""

    month: str
    archived_at: str | None
    task: Any  # models.Task


# -- durations ------------------------------------------------------------------------------

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def seconds(value: object, field: str, *, allow_never: bool = True) -> float | None:
    """Read a duration: a number of seconds, or text like 90s, 30m, 24h, 7d; "never" (and
    None) mean none, where allowed."""
    if value is None or (isinstance(value, str) and value.strip().lower() == "never"):
        if allow_never:
            return None
        raise ValidationError(f"{field} cannot be never")
    if isinstance(value, bool):
        raise ValidationError(f"{field} must be a duration like 30s, 5m, 24h, not {value!r}")
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        text = value.strip().lower()
        unit = _UNITS.get(text[-1:], 1 if text[-1:].isdigit() else 0)
        digits = text[:-1] if text[-1:] in _UNITS else text
        try:
            if not unit:
                raise ValueError(text)
            number = float(digits) * unit
        except ValueError:
            raise ValidationError(
                f"{field} {value!r} is not a duration like 30s, 5m, 24h, 7d or never"
            ) from None
    else:
        raise ValidationError(f"{field} must be a duration like 30s, 5m, 24h, not {value!r}")
    if number != number or number in (float("inf"), float("-inf")) or number < 0:
        raise ValidationError(f"{field} must be a finite duration of at least 0, not {value!r}")
    return number


def words(secs: float | None) -> str:
    """A duration in words: 45s, 5m, 1h30m, 2d."""
    if secs is None:
        return "never"
    left = round(secs)
    if left < 60:
        return f"{left}s"
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if left >= size:
            parts.append(f"{left // size}{unit}")
            left %= size
    return "".join(parts[:2])


def plus(moment: datetime, secs: float) -> datetime:
    return moment + timedelta(seconds=secs)


# -- when a wait is due ----------------------------------------------------------------------


def next_poll(wait: Wait, parse: Callable[[str], datetime]) -> datetime | None:
    """When the wait should be looked at next (None: never by itself, a manual wait without
    a deadline). `parse` reads store timestamps (clock.parse)."""
    if wait.status is not WaitStatus.WATCHING:
        return None
    deadline = parse(wait.deadline) if wait.deadline else None
    if wait.kind in POLLED:
        when = (
            parse(wait.created_at)
            if wait.polled_at is None
            else plus(parse(wait.polled_at), wait.poll_seconds)
        )
    elif wait.kind is WaitKind.TIME:
        when = parse(wait.target)
    else:
        when = None
    if deadline is not None and (when is None or deadline < when):
        return deadline
    return when


# -- what a host wait's seal covers -----------------------------------------------------------


def seal_fields(space: str, task_id: str, wait: Mapping[str, Any]) -> tuple[str | None, ...]:
    """What the seal of a wait that makes the host act covers (`wait`: its `wait.added` data
    or its row as a mapping): where it belongs, what it runs or reads, where, and how."""
    return (
        space,
        task_id,
        wait["id"],
        str(wait["kind"]),
        wait["target"],
        wait.get("cwd"),
        wait.get("confined_to"),
        json.dumps(wait.get("criteria") or {}, sort_keys=True, separators=(",", ":")),
        repr(float(wait["run_timeout"])),
        repr(float(wait["poll_seconds"])),
    )


# -- what a wait posts to its task -----------------------------------------------------------


def resolved_text(wait: Wait, evidence: str) -> str:
    return f"[wait resolved] {wait.label}: {evidence}"


def timed_out_text(wait: Wait, evidence: str) -> str:
    return f"[wait timed out] {wait.label} after {words(wait.timeout_seconds)}: {evidence}"


def error_text(wait: Wait, why: str) -> str:
    return f"[wait error] {wait.label}: {why}"


def cancelled_text(wait: Wait, reason: str | None) -> str:
    return f"[wait cancelled] {wait.label}" + (f": {reason}" if reason else "")


class StuckRules(NamedTuple):
    """When a task counts as stuck, and how often it may be alerted about (config `[stuck]`)."""

    idle_after: float = 1800.0  # seconds without progress
    repeats: int = 3  # failures with one fingerprint
    cooldown: float = 1800.0  # seconds between two alerts of one task
    enabled: bool = True
