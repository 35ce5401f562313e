"""The episodic trace and the command ledger: a service of Memory (`memory.ledger`).

One ledger: every command, tool call and other action is a row of `actions` (recorded
with `record_action`, or `record_tool_call` for a tool call of the trace). The trace adds
the agent's decisions (what it did, with which model and tokens, how it turned out) and
their validations. Each question an agent asks of it is one call: the last green test
run, the commands that failed more than once, every tool call of a step (`list_actions`
with a step), the history of a task in order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any, NamedTuple

from clew.archive.error_lines import error_lines
from clew.core import checks
from clew.core.clock import seconds_between
from clew.core.ids import new_id
from clew.errors import ValidationError
from clew.kernel import Service
from clew.models import (
    Action,
    ActionLog,
    ActionStatus,
    ActionType,
    RepeatedFailure,
    TraceDecision,
    TraceValidation,
)
from clew.privacy.redaction import Found
from clew.tasks import rules as tasks

if TYPE_CHECKING:
    from clew.tasks.history import HistoryItem

# What a "test run" looks like when no pattern is given: the usual test runners.
TEST_RUNNERS = (
    "pytest",
    "test",
    "jest",
    "vitest",
    "mocha",
    "rspec",
    "phpunit",
    "tox",
    "nox",
    "spec",
)
LEDGER_LIMIT = 50
# What record_action redacts itself, before deriving the error lines and the fingerprint.
_ACTION_DONE = frozenset({"action.summary", "action.command", "action.stdout", "action.stderr"})


class Outcome(StrEnum):
    SUCCESS = "success"
    FAILURE = "failure"
    RETRY = "retry"


class Trace(NamedTuple):
    """A task's trace: decisions, their validations and the tool calls, each oldest first."""

    decisions: tuple[TraceDecision, ...]
    validations: tuple[TraceValidation, ...]
    tool_calls: tuple[Action, ...]


class Ledger(Service):
    """The command ledger and the episodic trace (a service of Memory)."""

    # -- the ledger: actions ------------------------------------------------------------

    def record_action(
        self,
        task_id: str,
        *,
        type: str | ActionType = ActionType.CLI,
        summary: str | None = None,
        command: str | None = None,
        cwd: str | None = None,
        exit_code: int | None = None,
        duration_seconds: float | None = None,
        stdout: str | bytes | None = None,
        stderr: str | bytes | None = None,
        input: dict[str, Any] | None = None,
        output: dict[str, Any] | None = None,
        status: str | ActionStatus | None = None,
        step: int | str | None = None,
        tool: str | None = None,
        decision: str | None = None,
        started_at: str | datetime | None = None,
        ended_at: str | datetime | None = None,
        cpu_seconds: float | None = None,
        memory_mb: float | None = None,
    ) -> Action:
        """Record something the agent did; a command keeps its exit code and exact output.

        Without a status, a command with exit code 0 is completed, any other exit
        code is failed, and an action with no exit code is completed. A failed command
        gets its error's fingerprint (see `seen_before`). The trace's tool calls are
        actions too: `tool` names the tool, `decision` is the trace decision that made
        the call, with its start, end and resource use. A failure that makes the task
        stuck (the same error again and again) posts a stuck alert in the same write,
        unless one was posted within the cooldown.
        """
        tid = self._whole_task_id(task_id)
        kind = checks.choice(type, ActionType, "action type")
        # Secrets out before anything is derived: the error lines, the fingerprint, the
        # command matched against earlier failures, the action returned.
        found: Found = {}
        command = self._redacted(checks.optional_text(command, "command"), "action.command", found)
        if summary is None and command is None:
            raise ValidationError("an action needs a summary or a command")
        code = None if exit_code is None else checks.integer(exit_code, "exit code")
        state = _action_status(status, code)
        action_id = new_id()
        action: dict[str, Any] = {
            "id": action_id,
            "type": kind.value,
            "summary": command
            if summary is None
            else self._redacted(checks.text(summary, "summary"), "action.summary", found),
            "status": state.value,
            "input": None if input is None else checks.json_object(input, "input"),
            "output": None if output is None else checks.json_object(output, "output"),
            "command": command,
            "cwd": checks.optional_text(cwd, "cwd"),
            "exit_code": code,
            "duration_seconds": checks.duration(duration_seconds, "duration"),
            "stdout": self._redacted(checks.output(stdout, "stdout"), "action.stdout", found),
            "stderr": self._redacted(checks.output(stderr, "stderr"), "action.stderr", found),
            "tool": checks.optional_text(tool, "tool"),
            "cpu_seconds": checks.duration(cpu_seconds, "cpu seconds"),
            "memory_mb": checks.duration(memory_mb, "memory (MB)"),
        }
        # What search keeps of the middle of a long output, derived once, here.
        for name in ("stdout", "stderr"):
            action[f"{name}_errors"] = error_lines(action[name])
        _add_times(action, started_at, ended_at, self._clock())
        if state in (ActionStatus.FAILED, ActionStatus.TIMEOUT):
            action["fingerprint"] = failure_fingerprint(command, action)
        decision_id = None if decision is None else self._resolve("decision", decision)
        at = self._write_action(tid, action, step, decision_id, found)
        if action["input"] is not None or action["output"] is not None:
            return self._store.get_action(action_id)  # JSON: as the store gives it back
        return as_recorded(action, kind, state, self.space, tid, at)

    def _write_action(
        self,
        tid: str,
        action: dict[str, Any],
        step: int | str | None,
        decision_id: str | None,
        found: Found,
    ) -> str:
        """Record `action` of an open task in one write, with its step and decision (each
        checked to be the task's), and signal it; returns when it was written."""
        with self._write() as at:
            with self._known_task(tid):
                if step is None:
                    task_status = self._store.get_task_status(tid)
                else:  # the status and the steps' ids in one read, not the plan's rows
                    task_status, ids = self._store.get_task_steps(tid)
            tasks.check_open(task_status, tid)
            if step is not None:
                action["plan_item_id"] = ids[tasks.step_index(ids, step, tid)]
            if decision_id is not None:
                if self._store.get_trace_decision(decision_id).task_id != tid:
                    raise ValidationError(f"decision {decision_id} belongs to another task")
                action["decision_id"] = decision_id
            self._emit("action.recorded", tid, {"action": action}, at, found, _ACTION_DONE)
            self._signal("action.recorded", tid, "fingerprint" in action, at)
            command = action["command"]
            if command is not None and action["status"] == ActionStatus.COMPLETED.value:
                self._signal("command.succeeded", tid, command, action["id"], at)
        return at

    def finish_action(
        self,
        action_id: str,
        *,
        status: str | ActionStatus | None = None,
        exit_code: int | None = None,
        duration_seconds: float | None = None,
        stdout: str | bytes | None = None,
        stderr: str | bytes | None = None,
        output: dict[str, Any] | None = None,
        summary: str | None = None,
    ) -> Action:
        """Complete an action recorded as started, with its result."""
        aid = self._resolve("action", action_id)
        code = None if exit_code is None else checks.integer(exit_code, "exit code")
        if status is not None:
            state = checks.choice(status, ActionStatus, "action status")
        else:
            state = ActionStatus.FAILED if code not in (None, 0) else ActionStatus.COMPLETED
        changes: dict[str, Any] = {"status": state.value}
        found: Found = {}
        for key, value in (
            ("exit_code", code),
            ("duration_seconds", checks.duration(duration_seconds, "duration")),
            ("stdout", self._redacted(checks.output(stdout, "stdout"), "changes.stdout", found)),
            ("stderr", self._redacted(checks.output(stderr, "stderr"), "changes.stderr", found)),
            ("output", None if output is None else checks.json_object(output, "output")),
            (
                "summary",
                None
                if summary is None
                else self._redacted(checks.text(summary, "summary"), "changes.summary", found),
            ),
        ):
            if value is not None:
                changes[key] = value
        for name in ("stdout", "stderr"):
            if name in changes:
                changes[f"{name}_errors"] = error_lines(changes[name])
        with self._write() as at:
            current = self._store.get_action(aid)
            if current.status is not ActionStatus.STARTED:
                raise ValidationError(
                    f"action {aid} is already {current.status.value}; only a started action "
                    "can be finished"
                )
            if state in (ActionStatus.FAILED, ActionStatus.TIMEOUT):
                result = {**current._asdict(), **changes}
                changes["fingerprint"] = failure_fingerprint(current.command, result)
            data = {"action_id": aid, "changes": changes}
            self._emit("action.updated", current.task_id, data, at, found)
            self._signal("action.recorded", current.task_id, "fingerprint" in changes, at)
            if current.command is not None and state is ActionStatus.COMPLETED:
                self._signal("command.succeeded", current.task_id, current.command, aid, at)
        return self._store.get_action(aid)

    def get_action(self, action_id: str) -> Action:
        """Return one action with its full output."""
        return self._store.get_action(self._resolve("action", action_id))

    def list_actions(
        self, task_id: str, *, step: int | str | None = None, limit: int | None = None
    ) -> list[Action]:
        """Return a task's actions, newest first, optionally for one step."""
        tid = self._task_id(task_id)
        step_id = None
        if step is not None:
            step_id = tasks.find_step(self._store.get_plan(tid), step, tid).id
        limit = checks.optional_count(limit, "limit")
        return self._store.list_actions(tid, plan_item_id=step_id, limit=limit)

    def log_action(self, action_id: str, content: str, *, type: str = "info") -> ActionLog:
        """Append a log line to an action."""
        aid = self._resolve("action", action_id)
        kind = checks.name(type, "log type")
        found: Found = {}
        content = self._redacted(checks.text(content, "log content"), "log.content", found)
        with self._write() as at:
            task_id = self._store.get_action(aid).task_id
            log = ActionLog(new_id(), self.space, task_id, aid, kind, content, at)
            data = {"id": log.id, "action_id": aid, "type": kind, "content": content}
            self._emit("action.logged", task_id, {"log": data}, at, found)
            return log

    def list_action_logs(self, action_id: str) -> list[ActionLog]:
        """Return an action's log lines, oldest first."""
        return self._store.list_action_logs(self._resolve("action", action_id))

    # -- the trace -----------------------------------------------------------------------

    def trace_decision(
        self,
        task_id: str,
        action: str,
        *,
        outcome: str | Outcome = Outcome.SUCCESS,
        state: str | None = None,
        agent: str | None = None,
        context: dict[str, Any] | None = None,
        prompt_tokens: int | None = None,
        completion_tokens: int | None = None,
        model: str | None = None,
        temperature: float | None = None,
        artifacts: dict[str, Any] | None = None,
        error: str | None = None,
        trace_id: str | None = None,
        parent: str | None = None,
        step: int | str | None = None,
    ) -> TraceDecision:
        """Record one decision of the agent: the action taken and how it turned out, with
        the state machine's state, the agent, a snapshot of its context, the model and its
        token counts. A child decision (`parent`) joins its parent's trace."""
        tid = self._task_id(task_id)
        decision: dict[str, Any] = {
            "id": new_id(),
            "action": checks.text(action, "action", max_chars=checks.MAX_TEXT_CHARS),
            "outcome": checks.choice(outcome, Outcome, "outcome").value,
            "state": checks.optional_text(state, "state"),
            "agent": checks.optional_text(agent, "agent"),
            "context": None if context is None else checks.json_object(context, "context"),
            "prompt_tokens": _tokens(prompt_tokens, "prompt tokens"),
            "completion_tokens": _tokens(completion_tokens, "completion tokens"),
            "model": checks.optional_text(model, "model"),
            "temperature": checks.duration(temperature, "temperature"),
            "artifacts": None if artifacts is None else checks.json_object(artifacts, "artifacts"),
            "error": checks.optional_text(error, "error"),
        }
        parent_id = None if parent is None else self._resolve("decision", parent)
        with self._write() as at:
            self._store.get_task_status(tid)
            if parent_id is not None:
                above = self._store.get_trace_decision(parent_id)
                if above.task_id != tid:
                    raise ValidationError(f"parent decision {parent_id} belongs to another task")
                decision.update(parent_id=parent_id, trace_id=above.trace_id)
            decision.setdefault("trace_id", checks.optional_text(trace_id, "trace id") or new_id())
            if step is not None:
                plan = self._store.get_plan(tid)
                decision["plan_item_id"] = tasks.find_step(plan, step, tid).id
            self._emit("trace.decision_recorded", tid, {"decision": decision}, at)
        return self._store.get_trace_decision(decision["id"])

    def trace_validation(
        self,
        decision_id: str,
        *,
        passed: bool,
        validator: str = "functional",
        requirements: Sequence[Any] | None = None,
        violations: Sequence[Any] | None = None,
        feedback: str | None = None,
    ) -> TraceValidation:
        """Record a validation of a decision (schema, functional, semantic...); the decision's
        validation status follows the newest one."""
        did = self._resolve("decision", decision_id)
        if not isinstance(passed, bool):
            raise ValidationError("passed must be true or false")
        validation: dict[str, Any] = {
            "id": new_id(),
            "decision_id": did,
            "validator": checks.name(validator, "validator"),
            "passed": passed,
            "requirements": _json_list(requirements, "requirements"),
            "violations": _json_list(violations, "violations"),
            "feedback": checks.optional_text(feedback, "feedback"),
        }
        with self._write() as at:
            task_id = self._store.get_trace_decision(did).task_id
            self._emit("trace.validation_recorded", task_id, {"validation": validation}, at)
        _, validations, _ = self._store.trace(task_id)
        return next(v for v in validations if v.id == validation["id"])

    def record_tool_call(
        self,
        task_id: str,
        tool: str,
        *,
        params: dict[str, Any] | None = None,
        result: dict[str, Any] | None = None,
        status: str | ActionStatus | None = None,
        summary: str | None = None,
        command: str | None = None,
        exit_code: int | None = None,
        stdout: str | bytes | None = None,
        stderr: str | bytes | None = None,
        started_at: str | datetime | None = None,
        ended_at: str | datetime | None = None,
        duration_seconds: float | None = None,
        cpu_seconds: float | None = None,
        memory_mb: float | None = None,
        decision: str | None = None,
        step: int | str | None = None,
    ) -> Action:
        """Record a tool call of the trace: an action of type `tool` in the one ledger."""
        name = checks.name(tool, "tool")
        return self.record_action(
            task_id,
            type=ActionType.TOOL,
            summary=summary or name,
            command=command,
            exit_code=exit_code,
            duration_seconds=duration_seconds,
            stdout=stdout,
            stderr=stderr,
            input=params,
            output=result,
            status=status,
            step=step,
            tool=name,
            decision=decision,
            started_at=started_at,
            ended_at=ended_at,
            cpu_seconds=cpu_seconds,
            memory_mb=memory_mb,
        )

    def trace(self, task_id: str) -> Trace:
        """A task's trace: its decisions, their validations and its tool calls, in order."""
        decisions, validations, calls = self._store.trace(self._task_id(task_id))
        return Trace(tuple(decisions), tuple(validations), tuple(calls))

    def commands(
        self,
        task_id: str | None = None,
        *,
        failed: bool | None = None,
        step: int | str | None = None,
        contains: str | Sequence[str] | None = None,
        exit_code: int | None = None,
        limit: int | None = LEDGER_LIMIT,
    ) -> list[Action]:
        """The command ledger, newest first: every recorded command, by task, step, outcome
        (`failed`), exit code and text (`contains`: any of these substrings)."""
        tid = None if task_id is None else self._task_id(task_id)
        step_id = None
        if step is not None:
            if tid is None:
                raise ValidationError("a step belongs to a task: give task_id with step")
            step_id = tasks.find_step(self._store.get_plan(tid), step, tid).id
        if failed is None:
            statuses: tuple[ActionStatus, ...] = ()
        elif failed:
            statuses = (ActionStatus.FAILED, ActionStatus.TIMEOUT)
        else:
            statuses = (ActionStatus.COMPLETED,)
        return self._store.commands(
            task_id=tid,
            plan_item_id=step_id,
            statuses=statuses,
            exit_code=None if exit_code is None else checks.integer(exit_code, "exit code"),
            contains=_needles(contains),
            limit=None if limit is None else checks.count(limit, "limit"),
        )

    def last_green(
        self, task_id: str | None = None, *, contains: str | Sequence[str] | None = None
    ) -> Action | None:
        """The newest command that exited 0 and looks like a test run (or holds `contains`)."""
        found = self.commands(task_id, exit_code=0, contains=contains or TEST_RUNNERS, limit=1)
        return found[0] if found else None

    def repeated_failures(
        self, task_id: str | None = None, *, min_failures: int = 2, limit: int = LEDGER_LIMIT
    ) -> list[RepeatedFailure]:
        """Commands that failed at least `min_failures` times (exact text), most first."""
        tid = None if task_id is None else self._task_id(task_id)
        return self._store.repeated_failures(
            task_id=tid,
            min_failures=checks.count(min_failures, "min failures"),
            limit=checks.count(limit, "limit"),
        )

    def history(self, task_id: str) -> list[HistoryItem]:
        """The history of a task in order: every change, message, command and entry, each
        with who made it (an imported event: who imported it, and whom it claims)."""
        tid = self._task_id(task_id)
        with self._store.transaction():
            events = self._store.list_events(task_id=tid)
            plan = self._store.get_plan(tid)
            imports = self._store.imports_between(events[0].seq, events[-1].seq) if events else []
        from clew.tasks.history import history  # lazily: not on the hook path

        return history(events, {s.id: n for n, s in enumerate(plan, 1)}, imports)


def _tokens(value: int | None, field: str) -> int | None:
    if value is None:
        return None
    number = checks.integer(value, field)
    if number < 0:
        raise ValidationError(f"{field} cannot be negative ({number})")
    return number


def _json_list(values: Sequence[Any] | None, field: str) -> list[Any] | None:
    if values is None:
        return None
    items = checks.sequence(values, field)
    return checks.json_object({"v": items}, field)["v"]  # type: ignore[no-any-return]


def _needles(contains: str | Sequence[str] | None) -> tuple[str, ...]:
    if contains is None:
        return ()
    if isinstance(contains, str):
        contains = (contains,)
    return tuple(checks.name(c, "contains") for c in contains)


def as_recorded(
    action: Mapping[str, Any],
    kind: ActionType,
    state: ActionStatus,
    space: str,
    task_id: str,
    at: str,
) -> Action:
    """The action an `action.recorded` event of `action` writes, without reading it back:
    each field is the value the projection stores (text and numbers come back as they went
    in; JSON input and output are read back instead)."""
    get = action.get
    return Action(
        action["id"],
        space,
        task_id,
        get("plan_item_id"),
        kind,
        action["summary"],
        state,
        None,
        None,
        action["command"],
        action["cwd"],
        action["exit_code"],
        action["duration_seconds"],
        action["stdout"],
        action["stderr"],
        at,
        at,
        action["tool"],
        get("decision_id"),
        get("started_at"),
        get("ended_at"),
        action["cpu_seconds"],
        action["memory_mb"],
        get("fingerprint"),
    )


def failure_fingerprint(command: str | None, action: Mapping[str, Any]) -> str:
    """The fingerprint key of a failed action's error: from the tail of its stderr, else of
    its stdout, else its summary."""
    from clew.archive.fingerprint import fingerprint

    for stream in (action.get("stderr"), action.get("stdout")):
        if isinstance(stream, bytes):
            stream = stream[-4096:].decode("utf-8", "replace")
        if isinstance(stream, str) and stream.strip():
            return fingerprint(stream[-4096:], command).key
    return fingerprint(str(action.get("summary") or command or "failed"), command).key


def _action_status(status: str | ActionStatus | None, code: int | None) -> ActionStatus:
    """An action's status: as given, else failed for a command that exited other than 0,
    else completed."""
    if status is not None:
        return checks.choice(status, ActionStatus, "action status")
    if code is not None and code != 0:
        return ActionStatus.FAILED
    return ActionStatus.COMPLETED


def _add_times(
    action: dict[str, Any],
    started_at: str | datetime | None,
    ended_at: str | datetime | None,
    now: datetime,
) -> None:
    """Set an action's start and end as given (checked, in order) and its duration from
    them when it has none."""
    for key, value in (("started_at", started_at), ("ended_at", ended_at)):
        if value is not None:
            action[key] = checks.moment(value, key.replace("_", " "), now)
    if action.get("started_at") and action.get("ended_at"):
        if action["ended_at"] < action["started_at"]:
            raise ValidationError("ended_at is before started_at")
        if action["duration_seconds"] is None:
            action["duration_seconds"] = seconds_between(action["started_at"], action["ended_at"])
