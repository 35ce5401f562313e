"""Crash safety: a writer killed with SIGKILL mid-stream loses nothing it acknowledged.

A child process writes a stream of mixed writes (progress updates with a message and
a step change, actions with outputs from empty to megabytes, replans) and prints a
line for each write only after the call returned. The parent kills it at a random
moment, then checks that the store opens, `verify()` finds no drift, and every
acknowledged write is there, whole, with all of its events.
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import clew

ROUNDS = 3
SIZES = (0, 1, 100, 10_000, 200_000, 1_500_000)

# The child: each write runs under its own correlation id ("r<round>w<n>") so the parent
# can find every event of an acknowledged call in the journal; output content is derived
# from the write's number and size, so the parent can check it byte for byte.
CHILD = r"""
import json, random, sys
import clew
from clew.models import AddStep

db, task_id, round_no, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
rng = random.Random(seed)
sizes = json.loads(sys.argv[5])


def output(n, size, binary):
    unit = (b"\xff\xfe%d|" % n) if binary else f"{n}:héllo|"
    return (unit * (size // len(unit) + 1))[:size]


def ack(record):
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()


with clew.open(db) as mem:
    n = 0
    while True:
        n += 1
        cid = f"r{round_no}w{n}"
        kind = rng.choice(("update", "update", "action", "action", "replan"))
        with mem.correlation(cid):
            if kind == "update":
                step = rng.randint(1, 3)
                status = rng.choice(("active", "completed", "pending"))
                mem.update_task(
                    task_id,
                    message=f"progress {cid}",
                    step=step,
                    step_status=status,
                    step_summary=f"summary {cid}",
                )
                ack({"cid": cid, "kind": kind, "step": step, "status": status})
            elif kind == "action":
                size = rng.choice(sizes)
                binary = rng.random() < 0.3
                action = mem.record_action(
                    task_id,
                    command=f"cmd {cid}",
                    exit_code=rng.choice((0, 1)),
                    stdout=output(n, size, binary),
                    stderr=f"err {cid}",
                )
                ack({"cid": cid, "kind": kind, "id": action.id, "n": n, "size": size,
                     "binary": binary})
            else:
                task = mem.replan(task_id, [AddStep(f"step {cid}")], reason=f"because {cid}")
                ack({"cid": cid, "kind": kind, "version": task.plan_version})
"""


def expected_output(n: int, size: int, binary: bool) -> str | bytes:
    """The same content the child wrote for write `n`."""
    unit: str | bytes = (b"\xff\xfe%d|" % n) if binary else f"{n}:héllo|"
    return (unit * (size // len(unit) + 1))[:size]


def run_and_kill(db: Path, task_id: str, round_no: int, rng: random.Random) -> list[dict[str, Any]]:
    """Start a writer, SIGKILL it after a random number of acks, return every ack it printed."""
    args = [str(db), task_id, str(round_no), str(rng.randrange(2**32)), json.dumps(SIZES)]
    with subprocess.Popen(
        [sys.executable, "-c", CHILD, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    ) as proc:
        watchdog = threading.Timer(30, proc.kill)  # never hang the suite if the child stalls
        watchdog.start()
        try:
            assert proc.stdout is not None and proc.stderr is not None
            target = rng.randint(8, 25)
            lines: list[bytes] = []
            while len(lines) < target:
                line = proc.stdout.readline()
                if not line:
                    proc.wait()
                    pytest.fail(f"writer died on its own: {proc.stderr.read().decode()}")
                lines.append(line)
            # The child is already busy with its next write: land the kill inside it.
            time.sleep(rng.uniform(0, 0.02))
            proc.send_signal(signal.SIGKILL)
            rest = proc.stdout.read()
            stderr = proc.stderr.read().decode()
            proc.wait()
        finally:
            watchdog.cancel()
    assert proc.returncode == -signal.SIGKILL, stderr
    lines += rest.splitlines(keepends=True)
    # A line cut short by the kill was never acknowledged.
    return [json.loads(line) for line in lines if line.endswith(b"\n")]


def check_acknowledged(db: Path, task_id: str, acked: list[dict[str, Any]]) -> None:
    with clew.open(db) as mem:
        report = mem.verify()
        assert report.ok, report.differences
        events: dict[str, list[str]] = {}
        for event in mem.journal():
            events.setdefault(event.correlation_id, []).append(event.type)
        messages = {m.content for m in mem.list_messages(task_id)}
        task = mem.get_task(task_id)
        titles = {s.title for s in task.plan}
        for ack in acked:
            cid = ack["cid"]
            if ack["kind"] == "update":
                written = events.get(cid, [])
                # A step that became completed also queued its extraction, in the same call.
                if "job.queued" in written:
                    assert ack["status"] == "completed", cid
                    written.remove("job.queued")
                assert written == ["message.added", "step.updated"], cid
                assert f"progress {cid}" in messages
            elif ack["kind"] == "action":
                written = events.get(cid, [])
                # A failure that made the task stuck also posted its alert, in the same call.
                if written[1:] == ["message.added", "task.stuck_alerted"]:
                    del written[1:]
                assert written == ["action.recorded"], cid
                action = mem.get_action(ack["id"])
                want = expected_output(ack["n"], ack["size"], ack["binary"])
                # An empty output is stored as such; valid UTF-8 bytes come back as text.
                got = action.stdout
                if isinstance(want, bytes) and isinstance(got, str):
                    got = got.encode()
                assert got == want, (cid, ack["size"])
                assert action.stderr == f"err {cid}"
                assert action.command == f"cmd {cid}"
            else:
                assert events.get(cid) == ["plan.revised"], cid
                assert f"step {cid}" in titles
                assert task.plan_version >= ack["version"]


def test_acknowledged_writes_survive_sigkill(tmp_path: Path) -> None:
    db = tmp_path / "crash.db"
    with clew.open(db) as mem:
        task_id = mem.create_task("Crash me", ["Build", "Test", "Ship"]).id
    rng = random.Random(20261122)
    acked: list[dict[str, Any]] = []
    for round_no in range(1, ROUNDS + 1):
        new = run_and_kill(db, task_id, round_no, rng)
        assert len(new) >= 8
        acked += new
        # Each round reopens the store the previous kill left behind and keeps writing.
        check_acknowledged(db, task_id, acked)
    kinds = {a["kind"] for a in acked}
    assert kinds == {"update", "action", "replan"}, kinds
