"""Benchmark clew's task-tracker write path and CLI start, each next to a floor.

Prints markdown tables; it is a script, not a timed test:

    python benchmarks/bench_tracker.py                  # sizes 10000,100000 (a few minutes)
    python benchmarks/bench_tracker.py --sizes 10000    # one size
    python benchmarks/bench_tracker.py --quick          # smoke run, well under 20 s

For each size N, two fresh stores are seeded with the same realistic journal of N
events (tasks with plans, step progress, commands with 1-2 KB of output,
messages, logs, replans, closes): one through the clew API, the other with raw
inserts. Then, alternating sample by sample so machine noise hits both alike:

- task update: `Memory.update_task(task, message=..., step=k, step_status=...)`;
- recorded action: `Memory.record_action(task, command=..., exit_code=...,
  stdout=~1.5 KB, stderr=..., step=k)`;

each against two floors, stdlib sqlite3 with clew's schema and connection settings (WAL,
synchronous=NORMAL, foreign_keys=ON, autocommit driver), one BEGIN IMMEDIATE ... COMMIT
per operation:

- the floor (the aims are judged against it): what clew's guarantees require and no more.
  Under the write lock it reads the task's status and the named step's id, status and
  start (one statement: what refusing a bad call before writing needs), chains every event
  to the space's head (read once per transaction, hashed as clew's chain does), and writes
  the rows clew's projection writes: the events (same JSON), the message row, the step's
  row, the task record's phase stamps, a finished step's extraction job (its event and
  row), the action's row with its seq and output kinds, tasks.updated_at;
- bare (the older floor, printed beside it): the same events and main rows, with no hash
  chain, no reads, no task record stamps and no job.

Neither floor runs what clew adds as features rather than guarantees: after a successful
command, the check for open errors of its earlier failed runs (one read; it resolves them);
after a failed one, stuck detection (3-5 reads; it may post an alert); both only write when
they find something. The values clew derives from an action's output (its error lines and
a failure's fingerprint) are derived for the floor before its clock starts.

Finally the hook path, as an assistant's hooks run it: `clew prime`, `clew prime --hook`
(the hook's JSON on stdin, run from another folder), `clew task show` and `clew task
update` as whole processes on the biggest store, each with a task in the store's project
folder, beside two floors in the same rotation (`python -c pass`, `python -c "import
sqlite3"`). Each process's CPU time is the rusage delta of this script's children, with
the wall time beside it; aim: <= 100 ms CPU. Three ways users run clew: bytecode cached
(any run after the first), PYTHONDONTWRITEBYTECODE=1 with no cached bytecode of clew's own
(an editable checkout that never wrote any: every start compiles clew), and a non-editable
install (`--installed V/bin/python` after `python -m venv V && V/bin/pip install .`); pip
compiles bytecode when it installs, so that one is cached whatever the variable says.

    python benchmarks/bench_tracker.py --hooks-only --sizes 100000 --keep DIR
    python benchmarks/bench_tracker.py --store DIR/project-100000/.clew/clew.db \
        --installed V/bin/python --compare "before=OLD/bin/python"

Stdlib and clew only.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import gc
import json
import os
import platform
import random
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

import clew
from clew.archive.error_lines import error_lines
from clew.archive.trace import failure_fingerprint
from clew.core import chain
from clew.models import AddStep
from clew.store.projection import record as projection_record
from clew.store.sqlite.store import connect, migrate
from common import header, pct, table

SPACE = "default"
ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
LIVE_TASKS = 4  # tasks the measured operations report on
LIVE_STEPS = 12
AIM_RATIO = 0.8  # a write's throughput against its floor
AIM_READ_FACTOR = 1.5  # a read's time against the same statements run raw
LIVE_TASK = "Ship the billing fix"  # the task the hook path reports on
AIM_HOOK_CPU_MS = 100.0  # CPU of a whole hook-path process

Op = tuple[Any, ...]

# -- realistic content -------------------------------------------------------------------------

_MODULES = ("store", "billing", "auth", "api", "worker", "cache", "ingest", "report", "search")
_NAMES = ("append_event", "refund", "login", "rotate_keys", "retry", "flush", "parse_row")
_COMMANDS = (
    "pytest -q tests/test_{m}.py",
    "make build",
    "git status --short",
    "ruff check src/app/{m}.py",
    "docker build -t {m}:dev .",
    "npm run test -- --watch=false",
    "kubectl rollout status deploy/{m}",
    "alembic upgrade head",
    "curl -sf http://localhost:8080/{m}/healthz",
    "python scripts/migrate_{m}.py --dry-run",
)
_OUT_LINES = (
    "tests/test_{m}.py::test_{n}[case-{i}] PASSED{pad}[{p:3d}%]",
    "tests/test_{m}.py::test_{n} FAILED",
    '  File "src/app/{m}.py", line {l}, in {n}',
    "src/app/{m}.py:{l}:{c}: E501 line too long ({i} > 100 characters)",
    "Step {i}/12 : RUN pip install --no-cache-dir -r requirements.txt",
    " ---> Running in {h}",
    "INFO  [alembic.runtime.migration] Running upgrade {h} -> {h2}, add {n} column",
    "{m}.c:{l}:{c}: warning: unused variable '{n}' [-Wunused-variable]",
    "Downloading {m}-{i}.{c}.0-py3-none-any.whl ({l}.{c} kB)",
    'deployment "{m}" successfully rolled out',
    " M src/app/{m}.py",
    "{p} passed, {i} skipped, 1 warning in {c}.{l}s",
)
_ERR_LINES = (
    "WARNING: Running pip as the 'root' user can result in broken permissions",
    "DeprecationWarning: datetime.utcnow() is deprecated; use timezone-aware objects",
    "error: could not connect to server: Connection refused (port {l})",
    "npm WARN deprecated {n}@{i}.{c}.0: this package is no longer supported",
)
_MESSAGES = (
    "Step {k}: {n} in {m} works locally; running the {m} suite before moving on.",
    "Found the cause of the {m} failure: {n} reads a stale config. Patching it now.",
    "Waiting for the {m} deployment to roll out ({i} of 12 pods ready).",
    "Tests for {m} pass ({p} passed); next: update the docs and the changelog.",
    "Blocked on credentials for the {m} staging cluster; asked the user for them.",
    "Refactored {n} out of src/app/{m}.py; {i} call sites updated, lint is clean.",
)
_STEPS = (
    "Reproduce the {m} bug",
    "Read the {m} module and its tests",
    "Write a failing test for {n}",
    "Fix {n} in {m}",
    "Run the {m} test suite",
    "Update the {m} docs",
    "Build and push the {m} image",
    "Deploy {m} to staging",
    "Check {m} metrics after the deploy",
    "Open the pull request",
)


def _fill(rng: random.Random, template: str, **extra: Any) -> str:
    return template.format(
        m=rng.choice(_MODULES),
        n=rng.choice(_NAMES),
        i=rng.randint(1, 99),
        l=rng.randint(10, 900),
        c=rng.randint(1, 80),
        p=rng.randint(0, 100),
        h=f"{rng.getrandbits(48):012x}",
        h2=f"{rng.getrandbits(48):012x}",
        pad=" " * rng.randint(1, 12),
        **extra,
    )


def _text(rng: random.Random, lines: Sequence[str], size: int) -> str:
    out: list[str] = []
    total = 0
    while total < size:
        line = _fill(rng, rng.choice(lines))
        out.append(line)
        total += len(line) + 1
    return "\n".join(out) + "\n"


def _message(rng: random.Random, k: int) -> str:
    return _fill(rng, rng.choice(_MESSAGES), k=k)


def _command(rng: random.Random) -> tuple[str, int, str, str, float]:
    """A command with its exit code, ~1-2 KB of stdout, a little stderr and a duration."""
    code = 0 if rng.random() < 0.8 else rng.choice((1, 2, 127))
    stdout = _text(rng, _OUT_LINES, rng.randint(1000, 2000))
    stderr = _text(rng, _ERR_LINES, rng.randint(60, 300)) if rng.random() < 0.4 else ""
    return _fill(rng, rng.choice(_COMMANDS)), code, stdout, stderr, round(rng.uniform(0.1, 90), 3)


# -- the seed: one deterministic stream of operations, applied to either store ------------------

# Events each operation journals (clew's own count; the floor mirrors it).
EVENTS = {
    "create": 1,
    "step": 2,
    "action": 1,
    "finish": 1,
    "message": 1,
    "log": 1,
    "replan": 1,
    "close": 2,
}


def _session(rng: random.Random, tkey: int, akeys: Iterator[int]) -> Iterator[Op]:
    """One finished task: a plan worked step by step, commands, notes, a close."""
    plan = [_fill(rng, t) for t in rng.sample(_STEPS, rng.randint(4, 8))]
    goal = _fill(rng, "{n} in {m} behaves as documented and ships to staging")
    yield ("create", tkey, _fill(rng, "Fix {n} in {m}"), goal, f"/srv/repos/{tkey}", plan)
    steps = len(plan)
    k = 1
    while k <= steps:
        yield ("step", tkey, k, "active", _message(rng, k), None)
        for _ in range(rng.randint(2, 5)):
            akey = next(akeys)
            cmd, code, out, err, secs = _command(rng)
            started = rng.random() < 0.08
            yield ("action", tkey, k, akey, cmd, code, out, err, secs, started)
            if started:
                yield ("finish", akey, code, out)
            if rng.random() < 0.1:
                yield ("log", tkey, akey, _fill(rng, "retrying {n} after a timeout ({i}s)"))
        if rng.random() < 0.25:
            yield ("message", tkey, _message(rng, k))
        if rng.random() < 0.04:
            steps += 1
            yield ("replan", tkey, _fill(rng, "Follow up on {n} in {m}"), "found more work")
        summary = _fill(rng, "{n} done; results in build/{m}-report.txt")
        yield ("step", tkey, k, "completed", _message(rng, k), summary)
        k += 1
    yield ("close", tkey, _fill(rng, "Done: {n} in {m} is fixed and deployed to staging."))


def seed_ops(total: int, seed: int = 7) -> Iterator[Op]:
    """Exactly `total` events: finished sessions, then LIVE_TASKS fresh tasks, then padding."""
    rng = random.Random(seed)
    counter = iter(range(10**9))
    count = 0
    tkey = 0
    stop = False
    while not stop:
        for op in _session(rng, tkey, counter):
            if count + EVENTS[op[0]] > total - LIVE_TASKS:
                stop = True
                break
            count += EVENTS[op[0]]
            yield op
        tkey += 1
    live = []
    for i in range(LIVE_TASKS):
        plan = [f"{_fill(rng, rng.choice(_STEPS))} (part {s})" for s in range(1, LIVE_STEPS + 1)]
        live.append(tkey + i)
        yield ("create", tkey + i, f"Live task {i}", "measured by the benchmark", None, plan)
    count += LIVE_TASKS
    for i in range(total - count):
        yield ("message", live[i % LIVE_TASKS], _message(rng, 1))


class ClewSeeder:
    """Applies seed operations through the public API; remembers the ids it got."""

    def __init__(self, mem: clew.Memory) -> None:
        self.mem = mem
        self.tasks: dict[int, str] = {}
        self.actions: dict[int, str] = {}

    def apply(self, op: Op) -> None:
        mem, kind = self.mem, op[0]
        if kind == "create":
            _, key, name, goal, workspace, plan = op
            self.tasks[key] = mem.create_task(name, plan, goal=goal, workspace=workspace).id
        elif kind == "step":
            _, key, k, status, message, summary = op
            mem.update_task(
                self.tasks[key], message=message, step=k, step_status=status, step_summary=summary
            )
        elif kind == "action":
            _, key, k, akey, cmd, code, out, err, secs, started = op
            action = mem.record_action(
                self.tasks[key],
                command=cmd,
                exit_code=None if started else code,
                duration_seconds=None if started else secs,
                stdout=None if started else out,
                stderr=(err or None) if not started else None,
                status="started" if started else None,
                step=k,
            )
            self.actions[akey] = action.id
        elif kind == "finish":
            _, akey, code, out = op
            mem.finish_action(self.actions[akey], exit_code=code, stdout=out)
        elif kind == "message":
            mem.add_message(self.tasks[op[1]], op[2])
        elif kind == "log":
            mem.log_action(self.actions[op[2]], op[3])
        elif kind == "replan":
            mem.replan(self.tasks[op[1]], [AddStep(op[2])], reason=op[3])
        elif kind == "close":
            mem.update_task(self.tasks[op[1]], status="completed", message=op[2])


# -- the floors: raw sqlite3 doing the same writes, with clew's guarantees and bare -------------


def _dumps(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def _stamp() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class Floor:
    """The least a journal-plus-projection store must do per operation, in raw SQL: `checked_step`
    and `checked_action` with clew's guarantees (the floor the aims are judged against),
    `step` and `action` bare (no hash chain, no reads, fewer rows: the older floor, printed
    beside it). The seeding is bare: its events carry no hash (it is not measured)."""

    def __init__(self, path: str) -> None:
        self.conn = connect(path)  # clew's pragmas: WAL, synchronous=NORMAL, foreign_keys=ON
        migrate(self.conn)  # clew's schema, indexes included
        self.conn.row_factory = None
        self._rng = random.Random(11)
        self.tasks: dict[int, tuple[str, list[str]]] = {}
        self.actions: dict[int, str] = {}
        self._head: str | None = None  # the space's head, once read in a transaction

    def new_id(self) -> str:
        return "".join(self._rng.choices(ALPHABET, k=10))

    def close(self) -> None:
        self.conn.close()

    def _event(self, type: str, task_id: str, cid: str, data: Any, at: str) -> None:
        self.conn.execute(
            "INSERT INTO events (id, space, task_id, correlation_id, type, data, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (self.new_id(), SPACE, task_id, cid, type, _dumps(data), at),
        )

    def _touch(self, task_id: str, at: str) -> None:
        self.conn.execute("UPDATE tasks SET updated_at = ? WHERE id = ?", (at, task_id))

    def _add_message(self, task_id: str, cid: str, content: str, kind: str, at: str) -> None:
        mid = self.new_id()
        data = {"message": {"id": mid, "role": "agent", "type": kind, "content": content}}
        self._event("message.added", task_id, cid, data, at)
        self.conn.execute(
            "INSERT INTO task_messages (id, space, task_id, role, type, content, created_at)"
            " VALUES (?, ?, ?, 'agent', ?, ?, ?)",
            (mid, SPACE, task_id, kind, content, at),
        )

    # Each method below is one clew call's worth of writes; the caller owns the transaction.

    def create(
        self, key: int, name: str, goal: str, workspace: str | None, plan: list[str]
    ) -> None:
        at, tid, cid = _stamp(), self.new_id(), self.new_id()
        steps = [{"id": self.new_id(), "title": t} for t in plan]
        task: dict[str, Any] = {"id": tid, "name": name, "goal": goal, "workspace": workspace}
        task["metadata"] = {}
        self._event("task.created", tid, cid, {"task": task, "plan": steps}, at)
        self.conn.execute(
            "INSERT INTO tasks (id, space, name, goal, workspace, status, metadata, plan_version,"
            " created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'active', '{}', 1, ?, ?)",
            (tid, SPACE, name, goal, workspace, at, at),
        )
        self.conn.executemany(
            "INSERT INTO plan_items (id, space, task_id, ordinal, title, status, depends_on,"
            " created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'pending', '[]', ?, ?)",
            [(s["id"], SPACE, tid, n, s["title"], at, at) for n, s in enumerate(steps, start=1)],
        )
        self.conn.execute(  # the task's record row, as clew's task.created makes it
            "INSERT INTO task_records (id, space, plan_source, entities, plan_generated_at,"
            " updated_at) VALUES (?, ?, 'agent', '{}', ?, ?)",
            (tid, SPACE, at if steps else None, at),
        )
        self.tasks[key] = (tid, [s["id"] for s in steps])

    def step(self, key: int, k: int, status: str, message: str, summary: str | None) -> None:
        at, cid = _stamp(), self.new_id()
        tid, steps = self.tasks[key]
        sid = steps[k - 1]
        self._add_message(tid, cid, message, "progress", at)
        changes: dict[str, str] = {"status": status}
        if summary is not None:
            changes["summary"] = summary
        self._event(
            "step.updated", tid, cid, {"task_id": tid, "step_id": sid, "changes": changes}, at
        )
        if status == "active":
            sql = (
                "UPDATE plan_items SET status = ?, summary = coalesce(?, summary), started_at = ?,"
                " completed_at = NULL, duration_seconds = NULL, updated_at = ?4 WHERE id = ?5"
            )
        else:
            sql = (
                "UPDATE plan_items SET status = ?, summary = coalesce(?, summary),"
                " completed_at = ?3,"
                " duration_seconds = round((julianday(?3) - julianday(started_at)) * 86400, 6),"
                " updated_at = ?4 WHERE id = ?5"
            )
        self.conn.execute(sql, (status, summary, at, at, sid))
        self._touch(tid, at)

    def action(
        self,
        key: int,
        k: int,
        akey: int,
        cmd: str,
        code: int | None,
        out: str | None,
        err: str | None,
        secs: float | None,
        status: str,
    ) -> None:
        at, cid, aid = _stamp(), self.new_id(), self.new_id()
        tid, steps = self.tasks[key]
        action = {
            "id": aid,
            "type": "cli",
            "summary": cmd,
            "status": status,
            "input": None,
            "output": None,
            "command": cmd,
            "cwd": None,
            "exit_code": code,
            "duration_seconds": secs,
            "stdout": out,
            "stderr": err,
            "plan_item_id": steps[k - 1],
        }
        self._event("action.recorded", tid, cid, {"action": action}, at)
        self.conn.execute(
            "INSERT INTO actions (id, space, task_id, plan_item_id, type, summary, status,"
            " command, exit_code, duration_seconds, stdout, stderr, created_at, updated_at)"
            " VALUES (?, ?, ?, ?, 'cli', ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (aid, SPACE, tid, steps[k - 1], cmd, status, cmd, code, secs, out, err, at, at),
        )
        self._touch(tid, at)
        self.actions[akey] = aid

    # -- with clew's guarantees: what a correct write must do, and no more ---------------------
    #
    # Under the write lock (the caller's BEGIN IMMEDIATE): read the few columns that decide
    # whether the call is refused (the task's status, the named step's id, status and start),
    # refuse before writing anything, chain each event to the space's head (read once per
    # transaction, hashed as clew's chain does) and write the rows clew's projection writes:
    # the event's seq in each row, the task record's phase stamps, the extraction job a
    # finished step queues. Values clew derives from an action's output (its error lines,
    # a failure's fingerprint) are derived before the clock starts (`Schedule.derived`).

    _STEP = (
        "SELECT t.status, p.id, p.status, p.started_at FROM tasks t LEFT JOIN (SELECT id,"
        " status, started_at FROM plan_items WHERE task_id = ?1 AND removed = 0"
        " ORDER BY ordinal LIMIT 1 OFFSET ?2) p WHERE t.id = ?1"
    )
    _CLOSED = ("completed", "failed", "cancelled")

    def _chained(self, type: str, task_id: str, cid: str, data: Any, at: str) -> int:
        """Insert an event chained to the space's head; return its seq."""
        if self._head is None:
            row = self.conn.execute(
                "SELECT hash FROM events WHERE space = ? ORDER BY seq DESC LIMIT 1", (SPACE,)
            ).fetchone()
            self._head = (row[0] or "") if row else ""
        eid, text = self.new_id(), _dumps(data)
        digest = chain.event_hash(
            self._head, id=eid, space=SPACE, task_id=task_id, correlation_id=cid, type=type,
            digest=chain.data_digest(text), created_at=at,
        )  # fmt: skip
        (seq,) = self.conn.execute(
            "INSERT INTO events (id, space, task_id, correlation_id, type, data, created_at,"
            " hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq",
            (eid, SPACE, task_id, cid, type, text, at, digest),
        ).fetchone()
        self._head = digest
        return int(seq)

    def _checked(self, tid: str, k: int) -> tuple[str, str | None, str | None]:
        """The named step's id, status and start, or a refusal (nothing written yet)."""
        self._head = None  # a new transaction: the head is read again under its lock
        row = self.conn.execute(self._STEP, (tid, k - 1)).fetchone()
        if row is None or row[0] in self._CLOSED or row[1] is None:
            raise ValueError(f"refused: task {tid} step {k}: {row}")
        return row[1], row[2], row[3]

    def checked_step(self, key: int, k: int, status: str, message: str) -> None:
        """update_task(message=, step=k, step_status=status) with clew's guarantees."""
        at, cid, mid = _stamp(), self.new_id(), self.new_id()
        tid = self.tasks[key][0]
        sid, old, started = self._checked(tid, k)
        data: dict[str, Any] = {
            "message": {"id": mid, "role": "agent", "type": "progress", "content": message}
        }
        seq = self._chained("message.added", tid, cid, data, at)
        self.conn.execute(
            "INSERT INTO task_messages (id, space, task_id, role, type, content, created_at,"
            " seq) VALUES (?, ?, ?, 'agent', 'progress', ?, ?, ?)",
            (mid, SPACE, tid, message, at, seq),
        )
        if status != old:
            if status == "active":
                timing: dict[str, Any] = {"started_at": at, "completed_at": None,
                                          "duration_seconds": None}  # fmt: skip
            else:
                secs = None
                if started:
                    delta = datetime.fromisoformat(at) - datetime.fromisoformat(started)
                    secs = round(delta.total_seconds(), 6)
                timing = {"completed_at": at, "duration_seconds": secs}
            data = {"task_id": tid, "step_id": sid, "changes": {"status": status},
                    "timing": timing}  # fmt: skip
            self._chained("step.updated", tid, cid, data, at)
            self.conn.execute(
                "UPDATE plan_items SET status = ?, started_at = coalesce(?, started_at),"
                " completed_at = ?, duration_seconds = ?, updated_at = ? WHERE id = ?",
                (status, timing.get("started_at"), timing["completed_at"],
                 timing["duration_seconds"], at, sid),
            )  # fmt: skip
            projection_record.step_changed(self.conn, tid, status, at)  # clew's one statement
            if status == "completed":  # a finished step queues its extraction
                jid = self.new_id()
                data = {"job": {"id": jid, "kind": "extract", "step_id": sid}}
                seq = self._chained("job.queued", tid, cid, data, at)
                self.conn.execute(
                    "INSERT INTO jobs (id, space, kind, task_id, step_id, created_at,"
                    " updated_at, seq) VALUES (?, ?, 'extract', ?, ?, ?, ?, ?)",
                    (jid, SPACE, tid, sid, at, at, seq),
                )
        self._touch(tid, at)

    def checked_action(
        self,
        key: int,
        k: int,
        cmd: str,
        code: int,
        out: str,
        err: str | None,
        secs: float,
        derived: dict[str, Any],
    ) -> None:
        """record_action(command=, exit_code=, stdout=, stderr=, step=k) with clew's
        guarantees (`derived`: the output's error lines and a failure's fingerprint)."""
        at, cid, aid = _stamp(), self.new_id(), self.new_id()
        tid = self.tasks[key][0]
        sid = self._checked(tid, k)[0]
        status = "completed" if code == 0 else "failed"
        action = {
            "id": aid, "type": "cli", "summary": cmd, "status": status, "input": None,
            "output": None, "command": cmd, "cwd": None, "exit_code": code,
            "duration_seconds": secs, "stdout": out, "stderr": err, "tool": None,
            "cpu_seconds": None, "memory_mb": None, **derived, "plan_item_id": sid,
        }  # fmt: skip
        seq = self._chained("action.recorded", tid, cid, {"action": action}, at)
        self.conn.execute(
            "INSERT INTO actions (id, space, task_id, plan_item_id, type, summary, status,"
            " command, exit_code, duration_seconds, stdout, stderr, stdout_kind, stderr_kind,"
            " fingerprint, stdout_errors, stderr_errors, seq, created_at, updated_at)"
            " VALUES (?, ?, ?, ?, 'cli', ?, ?, ?, ?, ?, ?, ?, 'text', ?, ?, ?, ?, ?, ?, ?)",
            (aid, SPACE, tid, sid, cmd, status, cmd, code, secs, out, err,
             None if err is None else "text", derived.get("fingerprint"),
             derived["stdout_errors"], derived["stderr_errors"], seq, at, at),
        )  # fmt: skip
        projection_record.acted(self.conn, tid, at)
        self._touch(tid, at)

    def apply(self, op: Op) -> None:
        kind = op[0]
        if kind == "create":
            self.create(*op[1:])
        elif kind == "step":
            self.step(*op[1:])
        elif kind == "action":
            _, key, k, akey, cmd, code, out, err, secs, started = op
            if started:
                self.action(key, k, akey, cmd, None, None, None, None, "started")
            else:
                state = "completed" if code == 0 else "failed"
                self.action(key, k, akey, cmd, code, out, err or None, secs, state)
        else:
            self._apply_rare(op)

    def _apply_rare(self, op: Op) -> None:
        kind, at, cid = op[0], _stamp(), self.new_id()
        if kind == "finish":
            _, akey, code, out = op
            aid = self.actions[akey]
            tid = self.conn.execute("SELECT task_id FROM actions WHERE id = ?", (aid,)).fetchone()
            state = "completed" if code == 0 else "failed"
            changes = {"status": state, "exit_code": code, "stdout": out}
            self._event("action.updated", tid[0], cid, {"action_id": aid, "changes": changes}, at)
            self.conn.execute(
                "UPDATE actions SET status = ?, exit_code = ?, stdout = ?, updated_at = ?"
                " WHERE id = ?",
                (state, code, out, at, aid),
            )
            self._touch(tid[0], at)
            return
        tid, steps = self.tasks[op[1]]
        data: dict[str, Any]
        if kind == "message":
            self._add_message(tid, cid, op[2], "text", at)
        elif kind == "log":
            lid, aid = self.new_id(), self.actions[op[2]]
            data = {"log": {"id": lid, "action_id": aid, "type": "info", "content": op[3]}}
            self._event("action.logged", tid, cid, data, at)
            self.conn.execute(
                "INSERT INTO action_logs (id, space, task_id, action_id, type, content,"
                " created_at) VALUES (?, ?, ?, ?, 'info', ?, ?)",
                (lid, SPACE, tid, aid, op[3], at),
            )
        elif kind == "replan":
            sid = self.new_id()
            steps.append(sid)
            plan = [{"id": s, "title": "step", "depends_on": []} for s in steps]
            data = {"task_id": tid, "reason": op[3], "plan": plan, "added": [sid]}
            self._event("plan.revised", tid, cid, data, at)
            self.conn.execute(
                "INSERT INTO plan_items (id, space, task_id, ordinal, title, status, depends_on,"
                " created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'pending', '[]', ?, ?)",
                (sid, SPACE, tid, len(steps), op[2], at, at),
            )
            self.conn.execute(
                "UPDATE tasks SET plan_version = plan_version + 1, last_replanned_at = ?"
                " WHERE id = ?",
                (at, tid),
            )
        elif kind == "close":
            self._add_message(tid, cid, op[2], "text", at)
            data = {"task_id": tid, "from": "active", "to": "completed"}
            self._event("task.status_changed", tid, cid, data, at)
            self.conn.execute(
                "UPDATE tasks SET status = 'completed', completed_at = ? WHERE id = ?", (at, tid)
            )
        if kind != "replan":
            self._touch(tid, at)

    def seed(self, ops: Iterator[Op], batch: int = 500) -> None:
        """Apply seed operations, `batch` to a transaction."""
        self.conn.execute("BEGIN IMMEDIATE")
        for n, op in enumerate(ops, start=1):
            self.apply(op)
            if n % batch == 0:
                self.conn.execute("COMMIT")
                self.conn.execute("BEGIN IMMEDIATE")
        self.conn.execute("COMMIT")

    def transaction(self, fn: Callable[[], None]) -> None:
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            fn()
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")


# -- measuring ----------------------------------------------------------------------------------


def _progress(text: str) -> None:
    print(f"[bench] {text}", file=sys.stderr, flush=True)


def _count_events(path: str) -> int:
    """The tracker's events: a finished step also queues its extraction (a `job.queued`
    event in the same transaction), which the floor's (bare) seeding has no counterpart for."""
    conn = sqlite3.connect(path)
    try:
        sql = "SELECT count(*) FROM events WHERE type NOT LIKE 'job.%'"
        return int(conn.execute(sql).fetchone()[0])
    finally:
        conn.close()


def _size_mb(path: str) -> float:
    files = (path, path + "-wal")
    return sum(os.path.getsize(f) for f in files if os.path.exists(f)) / 1e6


def derived(cmd: str, code: int, out: str, err: str, secs: float) -> dict[str, Any]:
    """What clew derives from a command's output and journals with it: the error lines of
    each output's middle, and a failure's fingerprint."""
    values: dict[str, Any] = {"stdout_errors": error_lines(out), "stderr_errors": error_lines(err)}
    if code != 0:
        values["fingerprint"] = failure_fingerprint(cmd, {"stdout": out, "stderr": err or None})
    return values


class Schedule:
    """What the i-th measured operation reports: the same on both sides."""

    def __init__(self, rng: random.Random, pool: int = 64) -> None:
        self.messages = [_message(rng, 1 + i % LIVE_STEPS) for i in range(pool)]
        self.commands = [_command(rng) for _ in range(pool)]
        self.derived = [derived(*command) for command in self.commands]

    @staticmethod
    def step(i: int) -> tuple[int, int, str]:
        """(live task, step number, new step status) for sample i."""
        task, turn = i % LIVE_TASKS, i // LIVE_TASKS
        return task, (turn // 2) % LIVE_STEPS + 1, "active" if turn % 2 == 0 else "completed"


Sides = tuple[Callable[[int], None], ...]  # clew's call, then its floors', for sample i
WRITE_SIDES = ("clew", "floor", "bare")  # the floor with clew's guarantees; the bare one


def write_pairs(
    mem: clew.Memory, seeder: ClewSeeder, floor: Floor, live: list[int], schedule: Schedule
) -> dict[str, Sides]:
    """The measured operations: clew's call, the floor's transaction with clew's guarantees
    and the bare floor's, for sample i."""
    pool = len(schedule.messages)

    def clew_update(i: int) -> None:
        task, k, status = schedule.step(i)
        message = schedule.messages[i % pool]
        mem.update_task(seeder.tasks[live[task]], message=message, step=k, step_status=status)

    def floor_update(i: int) -> None:
        task, k, status = schedule.step(i)
        message = schedule.messages[i % pool]
        floor.transaction(lambda: floor.checked_step(live[task], k, status, message))

    def bare_update(i: int) -> None:
        task, k, status = schedule.step(i)
        message = schedule.messages[i % pool]
        floor.transaction(lambda: floor.step(live[task], k, status, message, None))

    def clew_action(i: int) -> None:
        task, k, _ = schedule.step(i)
        cmd, code, out, err, secs = schedule.commands[i % pool]
        mem.record_action(
            seeder.tasks[live[task]],
            command=cmd,
            exit_code=code,
            duration_seconds=secs,
            stdout=out,
            stderr=err or None,
            step=k,
        )

    def floor_action(i: int) -> None:
        task, k, _ = schedule.step(i)
        cmd, code, out, err, secs = schedule.commands[i % pool]
        extra = schedule.derived[i % pool]
        floor.transaction(
            lambda: floor.checked_action(live[task], k, cmd, code, out, err or None, secs, extra)
        )

    def bare_action(i: int) -> None:
        task, k, _ = schedule.step(i)
        cmd, code, out, err, secs = schedule.commands[i % pool]
        state = "completed" if code == 0 else "failed"
        floor.transaction(
            lambda: floor.action(live[task], k, -i - 1, cmd, code, out, err or None, secs, state)
        )

    return {
        "task update": (clew_update, floor_update, bare_update),
        "recorded action": (clew_action, floor_action, bare_action),
    }


def measure_writes(
    pairs: dict[str, Sides], samples: int, warmup: int
) -> dict[tuple[str, str], tuple[list[int], list[int]]]:
    """Alternate clew and its floors, sample by sample, for both operations: (wall ns, CPU
    ns) of each sample (CPU: this process's, which runs nothing else while it measures)."""
    results: dict[tuple[str, str], tuple[list[int], list[int]]] = {
        (op, side): ([], []) for op in pairs for side in WRITE_SIDES
    }
    gc.collect()
    for i in range(warmup + samples):
        for op, fns in pairs.items():
            alternate(results, op, list(zip(WRITE_SIDES, fns, strict=True)), i, keep=i >= warmup)
    return results


def alternate(
    results: dict[tuple[str, str], tuple[list[int], list[int]]],
    op: str,
    sides: Sequence[tuple[str, Callable[[int], object]]],
    i: int,
    *,
    keep: bool,
) -> None:
    """Run sample i of every side, each side first in turn, and keep their wall and CPU ns."""
    wall, cpu = time.perf_counter_ns, time.process_time_ns
    first = i % len(sides)
    for side, fn in [*sides[first:], *sides[:first]]:
        c0, t0 = cpu(), wall()
        fn(i)
        t1, c1 = wall(), cpu()
        if keep:
            results[op, side][0].append(t1 - t0)
            results[op, side][1].append(c1 - c0)


def captured(mem: clew.Memory, call: Callable[[], object]) -> list[str]:
    """The statements one clew call runs against SQLite, with their values in (SQLite's
    trace), minus the transaction's BEGIN and COMMIT and FTS5's internal statements: what
    the read floor runs raw."""
    conn = mem._store._conn  # type: ignore[attr-defined]  # the SQLite store's connection
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    try:
        call()
    finally:
        conn.set_trace_callback(None)
    return [q for q in seen if not q.startswith("--") and q not in ("BEGIN", "COMMIT")]


def read_pairs(
    mem: clew.Memory, db: str, task_ids: Sequence[str]
) -> tuple[dict[str, tuple[Callable[[int], None], Callable[[int], None]]], sqlite3.Connection]:
    """`where` and `state` on each task in turn, against a floor that runs the very statements
    clew ran for that task (captured once) on a raw connection in one read transaction,
    fetching every row and building nothing: the cost of the reads themselves."""
    raw = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    raw.row_factory = None

    def floor_of(statements: list[str]) -> Callable[[], None]:
        def run() -> None:
            raw.execute("BEGIN")
            for sql in statements:
                raw.execute(sql).fetchall()
            raw.execute("COMMIT")

        return run

    pairs: dict[str, tuple[Callable[[int], None], Callable[[int], None]]] = {}
    for name in ("where", "state"):
        method = getattr(mem, name)
        floors = [floor_of(captured(mem, functools.partial(method, t))) for t in task_ids]

        def clew_read(i: int, method: Callable[[str], object] = method) -> None:
            method(task_ids[i % len(task_ids)])

        def floor_read(i: int, floors: list[Callable[[], None]] = floors) -> None:
            floors[i % len(floors)]()

        pairs[name] = (clew_read, floor_read)
    return pairs, raw


def top_costs(call: Callable[[int], object], runs: int, shown: int = 8) -> list[str]:
    """Where a clew call's time goes: cProfile's functions by own CPU time over `runs` calls,
    as lines of µs per call (the profiler's overhead included, so read the shares). CPU
    time, as the aims are: on a loaded machine a wall-clock profile charges other
    processes' time to whatever was running."""
    import cProfile
    import pstats

    profile = cProfile.Profile(time.process_time)
    profile.enable()
    for i in range(runs):
        call(i)
    profile.disable()
    stats = pstats.Stats(profile)
    rows = sorted(stats.stats.items(), key=lambda kv: kv[1][2], reverse=True)  # type: ignore[attr-defined]
    total = sum(v[2] for _, v in rows) or 1.0
    lines = []
    for (file, line, func), (_, calls, own, _cum, _) in rows[:shown]:
        where = f"{os.path.basename(file)}:{line}" if line else file
        share = f"{own / runs * 1e6:7.1f} µs/call ({own / total:4.0%}) {calls / runs:5.1f}x"
        lines.append(f"{share} {func} ({where})")
    return lines


def ratio_rows(
    size: int,
    results: dict[tuple[str, str], tuple[list[int], list[int]]],
    ops: Sequence[str],
    *,
    reads: bool,
) -> tuple[list[list[object]], list[str]]:
    """Table rows (wall and CPU p50/p99 µs, ops/s, and the ratio of the means on wall and
    on CPU) and the operations whose aim, on the CPU ratio against the floor, was not met.
    Writes: clew's throughput over the floor's (with clew's guarantees), aim >= 0.8, and
    over the bare floor's beside it; reads: clew's time over the floor's, <= 1.5."""
    rows: list[list[object]] = []
    missed: list[str] = []
    for name in ops:
        sides = [side for side in (*WRITE_SIDES,) if (name, side) in results]
        means = {
            side: (
                statistics.fmean(results[name, side][0]),
                statistics.fmean(results[name, side][1]),
            )
            for side in sides
        }
        wall_ratio = means["floor"][0] / means["clew"][0]
        cpu_ratio = means["floor"][1] / means["clew"][1]
        if reads:
            wall_ratio, cpu_ratio = 1 / wall_ratio, 1 / cpu_ratio
        met = cpu_ratio <= AIM_READ_FACTOR if reads else cpu_ratio >= AIM_RATIO
        if not met:
            missed.append(name)
        for side in sides:
            wall, cpu = results[name, side]
            mine = side == "clew"
            row: list[object] = [
                f"{size:,}", name, side,
                f"{statistics.median(wall) / 1000:.0f}", f"{pct(wall, 99) / 1000:.0f}",
                f"{statistics.median(cpu) / 1000:.0f}", f"{pct(cpu, 99) / 1000:.0f}",
                f"{1e9 / means[side][0]:,.0f}",
                f"{wall_ratio:.2f}" if mine else "", f"{cpu_ratio:.2f}" if mine else "",
            ]  # fmt: skip
            if "bare" in means:
                bare = means["bare"][1] / means["clew"][1]
                row.append(f"{bare:.2f}" if mine else "")
            rows.append([*row, ("yes" if met else "no") if mine else ""])
    return rows, missed


def child_cpu_ms() -> float:
    """CPU time (user + system) of this process's finished children, in milliseconds."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (used.ru_utime + used.ru_stime) * 1000


class Process(NamedTuple):
    """One command measured as a whole process: what it runs, where, with what input."""

    argv: list[str]
    cwd: str
    stdin: bytes = b""
    env: dict[str, str] | None = None


def measure_processes(
    commands: dict[str, Process], runs: int, warmup: int
) -> dict[str, tuple[list[float], list[float]]]:
    """CPU and wall milliseconds of whole processes, in rotating order (each run starts with
    the next command), so machine noise hits every command alike. The CPU time is the
    children's rusage delta around each run: the process and whatever it waited for."""
    out: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in commands}
    names = list(commands)
    for name in names:  # fail loudly, once, if a command is broken
        p = commands[name]
        subprocess.run(p.argv, cwd=p.cwd, env=p.env, input=p.stdin, check=True, capture_output=True)
    for r in range(warmup + runs):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            p = commands[name]
            cpu0, t0 = child_cpu_ms(), time.perf_counter()
            subprocess.run(
                p.argv, cwd=p.cwd, env=p.env, input=p.stdin, stdout=subprocess.DEVNULL, check=True
            )
            wall, cpu = (time.perf_counter() - t0) * 1000, child_cpu_ms() - cpu0
            if r >= warmup:
                out[name][0].append(cpu)
                out[name][1].append(wall)
    return out


def _drop_bytecode(package: str) -> int:
    """Remove the cached bytecode of a package's own modules (clew's, not the stdlib's), so
    a run with PYTHONDONTWRITEBYTECODE=1 compiles them as a checkout that never wrote any
    does; return how many files went."""
    removed = 0
    for cache in Path(package).rglob("__pycache__"):
        removed += sum(1 for _ in cache.iterdir())
        shutil.rmtree(cache, ignore_errors=True)
    return removed


def hook_commands(
    python: str, db: str, workspace: str, elsewhere: str, task_id: str, env: dict[str, str]
) -> dict[str, Process]:
    """The floors and the hook-path commands, run as `python -m clew` by `python`."""
    event = json.dumps({"hook_event_name": "SessionStart", "source": "compact", "cwd": workspace})
    clew_cmd = [python, "-m", "clew"]
    update = [*clew_cmd, "task", "update", task_id, "-m", "hook benchmark: still on step 2"]
    return {
        "floor: python -c pass": Process([python, "-c", "pass"], workspace, env=env),
        "floor: python -c 'import sqlite3'": Process(
            [python, "-c", "import sqlite3"], workspace, env=env
        ),
        "clew prime": Process([*clew_cmd, "prime"], workspace, env=env),
        "clew prime --hook": Process(
            [*clew_cmd, "prime", "--hook"], elsewhere, event.encode(), env
        ),
        "clew task show": Process([*clew_cmd, "task", "show", task_id, "--db", db], workspace,
                                  env=env),
        "clew task update": Process(update, workspace, env=env),
    }  # fmt: skip


def hook_table(
    variant: str, times: dict[str, tuple[list[float], list[float]]], floor: float
) -> list[list[object]]:
    """Rows of the hook table: CPU and wall p50/p90 of each command, and its CPU beyond
    `floor` (the CPU ms of `python -c pass` in the same rotation)."""
    rows: list[list[object]] = []
    for name, (cpu, wall) in times.items():
        median = statistics.median(cpu)
        verdict = ("yes" if median <= AIM_HOOK_CPU_MS else "no") if name.startswith("clew") else ""
        rows.append([variant, name, f"{median:.0f}", f"{_p90(cpu):.0f}",
                     f"{statistics.median(wall):.0f}", f"{_p90(wall):.0f}",
                     f"{median - floor:+.0f}", verdict])  # fmt: skip
    return rows


def _p90(values: Sequence[float]) -> float:
    return statistics.quantiles(values, n=10, method="inclusive")[8]


def measure_hooks(
    db: str, task_id: str, runs: int, installed: str | None, compare: Sequence[str] = ()
) -> list[list[object]]:
    """The hook path as whole processes on the store `db`: with bytecode cached (as after any
    first run), from a non-editable install (`installed`: its python) and from the `compare`
    installs (LABEL=PYTHON), all in one rotation so that they see the same machine; then,
    apart, with PYTHONDONTWRITEBYTECODE=1 and no cached bytecode of clew's own (each start
    compiles clew: the cached variant in the same rotation would write it back)."""
    workspace = os.path.dirname(os.path.dirname(db))
    elsewhere = os.path.join(os.path.dirname(workspace), "elsewhere")
    os.makedirs(elsewhere, exist_ok=True)
    base = {k: v for k, v in os.environ.items() if not k.startswith(("CLEW_", "PYTHON"))}
    base["CLEW_WORKER"] = "off"  # no detached worker competing with the samples
    together = [("bytecode cached", sys.executable)]
    if installed:
        together.append(("non-editable install", installed))
    for other in compare:  # LABEL=PYTHON: another install (an older clew)
        label, _, python = other.partition("=")
        together.append((label, python))
    commands: dict[str, Process] = {}
    for variant, python in together:
        for name, process in hook_commands(python, db, workspace, elsewhere, task_id, base).items():
            if variant == together[0][0] or not name.startswith("floor"):
                commands[f"{variant}|{name}"] = process
    times = measure_processes(commands, runs, warmup=2)
    floor = statistics.median(times[f"{together[0][0]}|floor: python -c pass"][0])
    rows: list[list[object]] = []
    for variant, _ in together:
        mine = {n.split("|", 1)[1]: t for n, t in times.items() if n.startswith(f"{variant}|")}
        rows += hook_table(variant, mine, floor)
    _progress("hook path measured: " + ", ".join(v for v, _ in together))
    _drop_bytecode(os.path.dirname(clew.__file__))
    env = {**base, "PYTHONDONTWRITEBYTECODE": "1"}
    cold = measure_processes(
        hook_commands(sys.executable, db, workspace, elsewhere, task_id, env), runs, warmup=2
    )
    rows += hook_table(
        "PYTHONDONTWRITEBYTECODE=1", cold, statistics.median(cold["floor: python -c pass"][0])
    )
    _progress("hook path measured: PYTHONDONTWRITEBYTECODE=1")
    return rows


def live_task(db: str) -> str:
    """Register the task the hook path reports on: active, in the store's project folder,
    mid-plan, with commands, a decision and an error, as an agent would leave it."""
    workspace = os.path.dirname(os.path.dirname(db))
    with clew.open(db, space=SPACE) as mem:
        for task in mem.workspace_tasks(workspace):  # a kept store: the task of a past run
            if task.name == LIVE_TASK:
                return task.id
        plan = [step.format(m="billing", n="refund") for step in _STEPS[:6]]
        task = mem.create_task(LIVE_TASK, plan, goal="refunds post once", workspace=workspace)
        mem.update_task(task.id, step=1, step_status="completed", message="reproduced it")
        mem.update_task(task.id, step=2, step_status="active", message="reading the module")
        mem.record_action(
            task.id, command="pytest -q tests/test_billing.py", exit_code=1,
            stdout="1 failed, 41 passed", stderr="AssertionError: posted twice",
        )  # fmt: skip
        mem.add_entry("decision", "Make the refund idempotent by its key", task_id=task.id)
        return task.id


# -- reporting ----------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", help="journal sizes to seed, comma-separated (10000,100000)")
    parser.add_argument("--quick", action="store_true", help="small sizes, few samples (smoke)")
    parser.add_argument("--samples", type=int, help="measured operations per kind and side")
    parser.add_argument("--cli-runs", type=int, help="runs per command for the hook table")
    parser.add_argument(
        "--hooks-only", action="store_true", help="seed the biggest size only; time the hook path"
    )
    parser.add_argument(
        "--store", metavar="DB", help="time the hook path on this store (PROJECT/.clew/clew.db, "
        "kept by an earlier --keep run) instead of seeding one",
    )  # fmt: skip
    parser.add_argument(
        "--keep",
        metavar="DIR",
        help="seed the stores in DIR and keep them (a later run reuses them)",
    )
    parser.add_argument(
        "--writes-only", action="store_true", help="measure the writes only (no reads, no hooks)"
    )
    parser.add_argument(
        "--fill-only",
        action="store_true",
        help="with --keep: seed the stores of --sizes, measure nothing",
    )
    parser.add_argument(
        "--installed", metavar="PYTHON", help="also time a non-editable install: its python "
        "(python -m venv V && V/bin/pip install .)",
    )  # fmt: skip
    parser.add_argument(
        "--compare", metavar="LABEL=PYTHON", action="append", default=[],
        help="also time another install's python (e.g. the last release) under LABEL",
    )  # fmt: skip
    args = parser.parse_args(argv)
    sizes = [
        int(s) for s in (args.sizes or ("1000,3000" if args.quick else "10000,100000")).split(",")
    ]
    samples = args.samples or (150 if args.quick else 1000)
    warmup = max(10, samples // 10)
    cli_runs = args.cli_runs or (5 if args.quick else 20)

    header(
        "clew tracker benchmark",
        ("platform", platform.platform()),
        ("clew", clew.__version__),
        ("samples", f"{samples} per operation and side (+{warmup} warm-up)"),
        ("load average", " ".join(f"{x:.1f}" for x in os.getloadavg())),
    )
    sys.stdout.flush()

    # The write path alone: queued extraction jobs stay queued (bench_model.py measures
    # the worker), so no background thread competes with the samples.
    os.environ["CLEW_WORKER"] = "off"
    with contextlib.ExitStack() as stack:
        tmp = args.keep or stack.enter_context(tempfile.TemporaryDirectory(prefix="clew-bench-"))
        if args.fill_only or args.writes_only:
            seed_and_measure(tmp, sizes, samples, warmup, writes=True, measure=not args.fill_only,
                             reads=False)  # fmt: skip
            return 0
        if args.store:
            db, events = args.store, _count_events(args.store)
        else:
            db = seed_and_measure(tmp, sizes[-1:] if args.hooks_only else sizes, samples,
                                  warmup, writes=not args.hooks_only)  # fmt: skip
            events = sizes[-1]
        task_id = live_task(db)
        rows = measure_hooks(db, task_id, cli_runs, args.installed, args.compare)
        print(
            f"\n## The hook path as whole processes: CPU and wall ms on a store of {events:,} "
            f"events ({cli_runs} runs each, rotating order); aim: CPU <= {AIM_HOOK_CPU_MS:.0f} ms\n"
        )
        headers = ["variant", "command", "CPU p50", "CPU p90", "wall p50", "wall p90",
                   "CPU vs python -c pass", "aim met"]  # fmt: skip
        print(table(headers, rows))
        print(f"\nload average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0


def reopen(mem: clew.Memory, floor: Floor) -> tuple[ClewSeeder, list[int]]:
    """Pick up kept stores: their live tasks, found by name on both sides, as keys 0-3."""
    seeder = ClewSeeder(mem)
    floor._rng = random.Random()  # not the seeding's ids again: they are in the journal
    by_name = {t.name: t.id for t in mem.list_tasks("active")}
    for key in range(LIVE_TASKS):
        name = f"Live task {key}"
        seeder.tasks[key] = by_name[name]
        (tid,) = floor.conn.execute("SELECT id FROM tasks WHERE name = ?", (name,)).fetchone()
        steps = floor.conn.execute(
            "SELECT id FROM plan_items WHERE task_id = ? AND removed = 0 ORDER BY ordinal", (tid,)
        ).fetchall()
        floor.tasks[key] = (tid, [r[0] for r in steps])
        floor.conn.execute(  # a store filled before the floor made them
            "INSERT OR IGNORE INTO task_records (id, space, plan_source, entities,"
            " plan_generated_at, updated_at) SELECT id, space, 'agent', '{}', created_at,"
            " created_at FROM tasks WHERE id = ?",
            (tid,),
        )
    return seeder, list(range(LIVE_TASKS))


def seed_and_measure(
    tmp: str,
    sizes: Sequence[int],
    samples: int,
    warmup: int,
    *,
    writes: bool,
    measure: bool = True,
    reads: bool = True,
) -> str:
    """Seed a store per size (in PROJECT/.clew/clew.db, as a project holds it), and with
    `writes` a floor store beside it (or reuse both, kept by an earlier --keep run), and print
    the seeding, write and read tables; return the biggest store's path."""
    seed_rows: list[list[object]] = []
    write_rows: list[list[object]] = []
    read_rows: list[list[object]] = []
    costs: list[str] = []
    clew_path = ""
    for size in sizes:
        os.makedirs(os.path.join(tmp, f"project-{size}", ".clew"), exist_ok=True)
        clew_path = os.path.join(tmp, f"project-{size}", ".clew", "clew.db")
        floor_path = os.path.join(tmp, f"floor-{size}.db")
        kept = writes and os.path.exists(clew_path) and os.path.exists(floor_path)
        mem = clew.open(clew_path, space=SPACE)
        if kept:
            floor = Floor(floor_path)
            seeder, live = reopen(mem, floor)
            _progress(f"{size:,} events: reusing the kept stores")
        else:
            seeder = ClewSeeder(mem)
            t0 = time.perf_counter()
            for op in seed_ops(size):
                seeder.apply(op)
            clew_seed = time.perf_counter() - t0
            if not writes:
                mem.close()
                _progress(f"{size:,} events: seeded in {clew_seed:.1f} s")
                continue
            floor = Floor(floor_path)
            t0 = time.perf_counter()
            floor.seed(seed_ops(size))
            floor_seed = time.perf_counter() - t0
            counts = (_count_events(clew_path), _count_events(floor_path))
            if counts != (size, size):
                raise SystemExit(f"seeding went wrong: {counts} events, wanted {size}")
            seed_rows.append(
                [
                    f"{size:,}",
                    f"{len(seeder.tasks):,}",
                    f"{clew_seed:.1f}",
                    f"{size / clew_seed:,.0f}",
                    f"{floor_seed:.1f}",
                    f"{_size_mb(clew_path):.0f}",
                    f"{_size_mb(floor_path):.0f}",
                ]
            )
            live = sorted(seeder.tasks)[-LIVE_TASKS:]
        if not measure:
            mem.close()
            floor.close()
            _progress(f"{size:,} events: seeded in {clew_seed:.1f} s (floor {floor_seed:.1f} s)")
            continue
        _progress(f"{size:,} events: measuring writes")
        pairs = write_pairs(mem, seeder, floor, live, Schedule(random.Random(size)))
        results = measure_writes(pairs, samples, warmup)
        rows, missed = ratio_rows(size, results, list(pairs), reads=False)
        write_rows += rows
        for name in missed:
            costs.append(f"{size:,} events, {name}: clew's top costs")
            costs += top_costs(pairs[name][0], max(200, samples // 5))
        if not reads:
            mem.close()
            floor.close()
            _progress(f"{size:,} events: measured")
            continue
        _progress(f"{size:,} events: measuring reads")
        readers, raw = read_pairs(mem, clew_path, [seeder.tasks[k] for k in live])
        results = {}
        gc.collect()
        for i in range(warmup + samples):
            for name, (clew_fn, floor_fn) in readers.items():
                if not results:
                    results = {(n, side): ([], []) for n in readers for side in ("clew", "floor")}
                sides = [("clew", clew_fn), ("floor", floor_fn)]
                alternate(results, name, sides, i, keep=i >= warmup)
        rows, missed = ratio_rows(size, results, list(readers), reads=True)
        read_rows += rows
        for name in missed:
            costs.append(f"{size:,} events, {name}: clew's top costs")
            costs += top_costs(readers[name][0], max(200, samples // 5))
        raw.close()
        mem.close()
        floor.close()
        _progress(f"{size:,} events: measured")
    if writes and seed_rows:
        print("\n## Seeding (not measured below)\n")
        print(
            table(
                [
                    "events",
                    "tasks",
                    "clew s",
                    "clew events/s",
                    "floor s",
                    "clew MB",
                    "floor MB",
                ],
                seed_rows,
            )
        )
    if write_rows:  # (a --fill-only run measures nothing)
        headers = ["events", "operation", "side", "wall p50 µs", "wall p99 µs", "CPU p50 µs",
                   "CPU p99 µs", "ops/s (wall)"]  # fmt: skip
        print(
            f"\n## Writes: clew/floor throughput (means), wall and CPU; aim: CPU >= {AIM_RATIO}\n"
        )
        print(
            "floor: what clew's guarantees require (the named step's and the task's status read"
            " under the write lock, every event chained to the space's head, the same rows:"
            " event seqs, task record stamps, a finished step's extraction job); bare: the same"
            " events and main rows only, no chain, no reads\n"
        )
        print(table([*headers, "clew/floor wall", "clew/floor CPU", "clew/bare CPU", "aim met"],
                    write_rows))  # fmt: skip
        if read_rows:
            print(
                f"\n## Reads: clew's time over the same statements run raw, wall and CPU; aim:"
                f" CPU <= {AIM_READ_FACTOR}x\n"
            )
            print(table([*headers, "clew x floor wall", "clew x floor CPU", "aim met"], read_rows))
        if costs:
            print("\n## Where an aim is not met: the profile's top costs (own time)\n")
            print("```\n" + "\n".join(costs) + "\n```")
        sys.stdout.flush()
    return clew_path


if __name__ == "__main__":
    sys.exit(main())
