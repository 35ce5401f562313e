"""Smart waits, a service of the Memory facade: a task waits for a command to succeed, a file
to appear, a local URL to answer, a time to come, or someone to say so.

A wait is added, polled by the worker (`clew work`, the library's worker thread, or
`check_waits`) and ends resolved, timed out, in error or cancelled; the end is journaled with
its evidence and posts a message to the task ("[wait resolved] ..."). A poll runs with no
transaction open (a command may take its whole time limit) and then writes in one: the
bookkeeping row always, a `wait.checked` event only when what it saw changed.

A wait that makes the host act (a command, a file, a URL) is added only as the caller's
`HostRules` allow (origin.py: the host's own user anything, a server's admin key what the
operator allowed) and is sealed then with this host's sealing key (sealing.py): the seal
goes into its `wait.added` event and its row. A poll checks the seal before it looks
(probes.unsealed); a wait whose seal does not verify (one imported, pushed, written into the
store by other means, or sealed by another host) never runs: it ends in error, saying so.
"""

from __future__ import annotations

import os
from typing import Any

from clew.core import checks, origin
from clew.core.clock import parse, stamp
from clew.core.ids import new_id
from clew.core.lifecycle import (
    DEFAULT_POLL,
    DEFAULT_RUN_TIMEOUT,
    DEFAULT_TIMEOUT,
    MAX_POLL,
    MAX_RUN_TIMEOUT,
    MIN_POLL,
    POLLED,
    Wait,
    WaitCheck,
    WaitKind,
    WaitStatus,
    cancelled_text,
    error_text,
    next_poll,
    plus,
    resolved_text,
    seal_fields,
    seconds,
    timed_out_text,
)
from clew.errors import ValidationError
from clew.kernel import Service
from clew.models import CLOSED_TASK_STATUSES
from clew.tasks import rules as tasks

AUTO = "auto"


class Waits(Service):
    """Smart waits (a service of Memory): upkeep times out and cancels them
    (`_expired_waits`, `_time_out`, `_cancel`) and polls them in the worker's round."""

    def add_wait(
        self,
        task_id: str,
        kind: str | WaitKind,
        target: str,
        *,
        step: int | str | None = None,
        description: str | None = None,
        exit_code: int | None = None,
        contains: str | None = None,
        regex: str | None = None,
        status: int | None = None,
        poll_every: float | str = DEFAULT_POLL,
        timeout: float | str | None = AUTO,
        run_timeout: float | str = DEFAULT_RUN_TIMEOUT,
        cwd: str | None = None,
        allowed: origin.HostRules = origin.LOCAL,
    ) -> Wait:
        """Wait for something on a task's behalf: a command (until it exits with
        `exit_code`, 0 by default, and its output has `contains` / matches `regex`), a file
        (to exist, with that content), a URL on this machine (to answer `status`, any 2xx by
        default), a time (an ISO time or a delay like 10m) or a manual condition (resolved
        with `resolve_wait`). It is polled every `poll_every` until `timeout` (1h for the
        polled kinds, none for time and manual waits; None: never). A command, file or URL
        wait must be one `allowed` lets the caller add (a server passes what its operator
        allowed; ScopeError naming the option if not), and is sealed with this host's key."""
        if not isinstance(allowed, origin.HostRules):
            raise ValidationError(f"allowed must be HostRules, not {type(allowed).__name__}")
        tid = self._task_id(task_id)
        what = checks.choice(kind, WaitKind, "wait kind")
        target = checks.text(target, "target", max_chars=4000).strip()
        if not target:
            raise ValidationError("target cannot be empty: say what to wait for")
        note = checks.optional_text(description, "description")
        from clew.tasks import probes  # only waits need it: keep it off the CLI's start-up path

        criteria = probes.criteria_of(
            what, {"exit_code": exit_code, "contains": contains, "regex": regex, "status": status}
        )
        poll, limit, run = _timings(what, poll_every, timeout, run_timeout)
        folder = None
        if what in (WaitKind.COMMAND, WaitKind.FILE):
            folder = os.path.abspath(checks.text(cwd, "cwd") if cwd else os.getcwd())
        now = self._clock()
        if what is WaitKind.TIME and _is_delay(target):
            delay = seconds(target, "time")
            target = stamp(plus(now, delay or 0))
        target = probes.target_of(what, target, now, folder)
        within = origin.permit(what.value, target, allowed)
        wait_id = new_id()
        wait: dict[str, Any] = {
            "id": wait_id,
            "kind": what.value,
            "target": target,
            "criteria": criteria,
            "description": note,
            "cwd": folder,
            "poll_seconds": poll,
            "timeout_seconds": limit,
            "run_timeout": run,
            "deadline": stamp(plus(now, limit)) if limit else None,
        }
        if within is not None:
            wait["confined_to"] = within
        if what in POLLED:
            from clew.privacy import sealing

            wait["seal"] = sealing.seal("wait", seal_fields(self.space, tid, wait))
        with self._write() as at:
            task = self._store.get_task(tid)
            tasks.check_open(task.status, tid)
            if step is not None:
                wait["step_id"] = tasks.find_step(task.plan, step, tid).id
            self._emit("wait.added", tid, {"wait": wait}, at)
            return self._store.get_wait(wait_id)

    def get_wait(self, wait_id: str) -> Wait:
        """Return one wait, with when it was last checked and what that saw."""
        return self._store.get_wait(self._resolve("wait", wait_id))

    def list_waits(
        self,
        task_id: str | None = None,
        *,
        status: str | WaitStatus | None = None,
        limit: int | None = 50,
    ) -> list[Wait]:
        """Waits, newest first: a task's or the space's, of one status if given."""
        tid = None if task_id is None else self._task_id(task_id)
        statuses = () if status is None else (checks.choice(status, WaitStatus, "wait status"),)
        count = None if limit is None else checks.count(limit, "limit")
        return self._store.list_waits(task_id=tid, statuses=statuses, limit=count)

    def check_waits(self, wait_id: str | None = None) -> list[WaitCheck]:
        """Poll the waits that are due now (or one wait, due or not) and return what each
        check found; a met criterion resolves its wait, a passed deadline times it out."""
        if wait_id is not None:
            wait = self.get_wait(wait_id)
            if wait.status is not WaitStatus.WATCHING:
                raise ValidationError(
                    f"wait {wait.id} is {wait.status.value}: there is nothing left to check"
                )
            due = [wait]
        else:
            now = self._clock()
            due = []
            for wait in self._store.list_waits(statuses=(WaitStatus.WATCHING,)):
                when = next_poll(wait, parse)
                if when is not None and when <= now:
                    due.append(wait)
        return [self._check(wait) for wait in reversed(due)]  # oldest first

    def _check(self, wait: Wait) -> WaitCheck:
        from clew.tasks import probes

        status = self._store.get_task_status(wait.task_id)
        if status in CLOSED_TASK_STATUSES:  # nothing left to wait for: no command runs
            with self._write() as at:
                current = self._store.get_wait(wait.id)
                if current.status is WaitStatus.WATCHING:
                    self._cancel(current, f"the task is {status.value}", at)
                after = self._store.get_wait(wait.id)
            return WaitCheck(after, after.status.value, "task closed", after.result or "")
        now = self._clock()
        found = probes.probe(wait, now)
        past = wait.deadline is not None and now >= parse(wait.deadline)
        outcome = "pending"
        with self._write() as at:
            current = self._store.get_wait(wait.id)
            if current.status is not WaitStatus.WATCHING:  # resolved or cancelled meanwhile
                return WaitCheck(current, current.status.value, found.observation, found.evidence)
            self._store.mark_schedule(f"wait:{wait.id}", at, found.observation)
            data: dict[str, Any] = {"wait_id": wait.id, "observation": found.observation}
            if found.outcome == "refused":  # never looked at: it ends, whatever its deadline
                outcome = "error"
                data["error"] = found.evidence
                self._emit("wait.failed", wait.task_id, data, at)
                self._post(wait, error_text(wait, found.evidence), at)
            elif found.outcome == "met":
                outcome = "resolved"
                data.update(evidence=found.evidence, by="check")
                self._emit("wait.resolved", wait.task_id, data, at)
                self._post(wait, resolved_text(wait, found.evidence), at)
            elif past:
                outcome = "timed_out"
                data["evidence"] = f"last check: {found.evidence}"
                self._emit("wait.timed_out", wait.task_id, data, at)
                self._post(wait, timed_out_text(wait, data["evidence"]), at)
            elif found.outcome == "broken":
                outcome = "error"
                data["error"] = found.evidence
                self._emit("wait.failed", wait.task_id, data, at)
                self._post(wait, error_text(wait, found.evidence), at)
            elif found.observation != current.observation:
                self._emit("wait.checked", wait.task_id, data, at)
            after = self._store.get_wait(wait.id)
        return WaitCheck(after, outcome, found.observation, found.evidence)

    def resolve_wait(self, wait_id: str, evidence: str | None = None) -> Wait:
        """Mark a wait met by hand (a manual condition, or anything you saw happen), with
        what shows it; a message goes to its task."""
        wid = self._resolve("wait", wait_id)
        said = checks.optional_text(evidence, "evidence") or "resolved by hand"
        with self._write() as at:
            wait = self._open_wait(wid)
            data = {"wait_id": wid, "evidence": said, "by": "agent"}
            self._emit("wait.resolved", wait.task_id, data, at)
            self._post(wait, resolved_text(wait, said), at)
            return self._store.get_wait(wid)

    def cancel_wait(self, wait_id: str, reason: str | None = None) -> Wait:
        """Stop waiting; a message goes to its task."""
        wid = self._resolve("wait", wait_id)
        why = checks.optional_text(reason, "reason")
        with self._write() as at:
            wait = self._open_wait(wid)
            self._cancel(wait, why, at)
            return self._store.get_wait(wid)

    def _cancel(self, wait: Wait, why: str | None, at: str) -> None:
        self._emit("wait.cancelled", wait.task_id, {"wait_id": wait.id, "reason": why}, at)
        self._post(wait, cancelled_text(wait, why), at)

    def _time_out(self, wait: Wait, at: str) -> None:
        seen = wait.seen or wait.observation or "never checked"
        data = {"wait_id": wait.id, "evidence": f"last check: {seen}"}
        self._emit("wait.timed_out", wait.task_id, data, at)
        self._post(wait, timed_out_text(wait, data["evidence"]), at)

    def _open_wait(self, wid: str) -> Wait:
        wait = self._store.get_wait(wid)
        if wait.status is not WaitStatus.WATCHING:
            raise ValidationError(
                f"wait {wid} is already {wait.status.value.replace('_', ' ')}; list the open"
                " ones with `clew wait list`"
            )
        return wait

    def _post(self, wait: Wait, text: str, at: str) -> None:
        """Post a wait's news to its task as a system message."""
        message = {"id": new_id(), "role": "system", "type": "wait", "content": text}
        self._emit("message.added", wait.task_id, {"message": message}, at)

    def _expired_waits(self, now: str) -> tuple[list[Wait], list[tuple[Wait, str]]]:
        """Watching waits past their deadline, and those whose task is closed (with why)."""
        late: list[Wait] = []
        orphaned: list[tuple[Wait, str]] = []
        statuses: dict[str, Any] = {}
        for wait in self._store.list_waits(statuses=(WaitStatus.WATCHING,)):
            if wait.task_id not in statuses:
                statuses[wait.task_id] = self._store.get_task_status(wait.task_id)
            status = statuses[wait.task_id]
            if status in CLOSED_TASK_STATUSES:
                orphaned.append((wait, f"the task is {status.value}"))
            elif wait.deadline is not None and wait.deadline <= now:
                late.append(wait)
        return late, orphaned

    def _next_poll_in(self) -> float | None:
        """Seconds until the next wait is due (0 if one is), None if none is watched."""
        now = self._clock()
        soonest = None
        for wait in self._store.list_waits(statuses=(WaitStatus.WATCHING,)):
            when = next_poll(wait, parse)
            if when is not None and (soonest is None or when < soonest):
                soonest = when
        return None if soonest is None else max(0.0, (soonest - now).total_seconds())


def _timings(
    what: WaitKind, poll_every: float | str, timeout: float | str | None, run_timeout: float | str
) -> tuple[float, float | None, float]:
    """A wait's poll interval, timeout (None: never; AUTO: an hour for the polled kinds)
    and a command's run timeout, in seconds; ValidationError for one out of its bounds."""
    poll = seconds(poll_every, "poll interval", allow_never=False)
    assert poll is not None
    if not MIN_POLL <= poll <= MAX_POLL:
        raise ValidationError(f"poll interval must be 1s-1d, not {poll:g}s")
    if timeout == AUTO:
        limit = DEFAULT_TIMEOUT if what in POLLED else None
    else:
        limit = seconds(timeout, "timeout")
        if limit is not None and limit <= 0:
            raise ValidationError("timeout must be more than 0 (or never)")
    run = seconds(run_timeout, "run timeout", allow_never=False)
    assert run is not None
    if not 0 < run <= MAX_RUN_TIMEOUT:
        raise ValidationError(f"run timeout must be over 0s and at most {MAX_RUN_TIMEOUT:g}s")
    return poll, limit, run


def _is_delay(text: str) -> bool:
    """A time wait's target given as a delay (10m, 2h) rather than a moment."""
    return text[-1:] in "smhdw" and text[:-1].replace(".", "", 1).isdigit()
