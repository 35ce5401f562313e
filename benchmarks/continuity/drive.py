"""Drive a script through clew's public API (`clew.open` and Memory methods), with the
extraction jobs on (no model: the deterministic rules run), and interrupt it.

The worker is switched off (`CLEW_WORKER=off`) and the driver runs the queued jobs after
every op, as an eager worker would, so a run is deterministic. The clock is injected:
op number i happens at BASE + i minutes, in whichever process runs it.

Interruptions:
- compaction: only the brief and the state survive; they are rendered here and scored;
- restart: the store is closed, and a new process opens it and renders them;
- sigkill: a child process does the ops since the previous interruption, acknowledging
  each, then starts a large write and is killed (SIGKILL) mid-write; the store is opened
  again, every acknowledged write must be there, and the brief and state are scored.

Run as a module for the child processes:
    python -m benchmarks.continuity.drive render PATH TASK TICK
    python -m benchmarks.continuity.drive child PATH SEED INDEX STEPS START END  (ids on stdin)
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, NamedTuple

from benchmarks.continuity import score
from benchmarks.continuity.script import Op, Script, generate

import clew
from clew.core.tokens import counter
from clew.models import AddStep, RemoveStep

ROOT = Path(__file__).resolve().parents[2]
BASE = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
NOISE = "x" * 2_000_000  # the write in flight when the child is killed


class Clock:
    """The injected clock: op number `tick` happens at BASE + tick minutes."""

    def __init__(self) -> None:
        self.tick = 0

    def __call__(self) -> datetime:
        return BASE + timedelta(minutes=self.tick)


class Outcome(NamedTuple):
    """One interruption, scored."""

    task: int
    kind: str
    at: int  # op number
    checks: dict[str, bool | None]
    tokens: int
    acked: tuple[int, int] = (0, 0)  # (acknowledged writes found, acknowledged writes)
    detail: str = ""


def environment() -> dict[str, str]:
    """The environment of the driver and its children: no worker, no model, this tree."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLEW_")}
    env["CLEW_WORKER"] = "off"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def open_store(path: str, clock: Clock) -> clew.Memory:
    return clew.open(path, clock=clock)


# -- waits: one adapter, so the benchmark can move to smart waits -------------------------


def start_wait(mem: clew.Memory, task_id: str, text: str, step: int) -> str:
    """Record a wait the agent starts: a smart wait on a condition the agent resolves."""
    return mem.add_wait(task_id, "manual", text, step=step).id


def end_wait(mem: clew.Memory, wait_id: str) -> None:
    """Record that a wait ended: the agent saw its condition met."""
    mem.resolve_wait(wait_id)


# -- ops ----------------------------------------------------------------------------------


def apply(mem: clew.Memory, ids: dict[str, str], op: Op) -> dict[str, str]:
    """Do one op through the public API; return the ids it created, by script key."""
    a = op.args
    task = ids.get("task", "")
    made: dict[str, str] = {}
    if op.kind == "create":
        made["task"] = mem.create_task(a["name"], a["plan"], goal=a["goal"]).id
    elif op.kind == "start":
        mem.update_step(task, a["step"], status="active")
    elif op.kind == "complete":
        mem.update_step(task, a["step"], status="completed", summary=a["summary"])
    elif op.kind == "fail":
        mem.update_step(task, a["step"], status="failed", active_issue=a["issue"])
    elif op.kind == "replan":
        ops: list[Any] = []
        if "remove" in a:
            ops.append(RemoveStep(a["remove"]))
        ops.append(AddStep(a["add"], a.get("position")))
        mem.replan(task, ops, reason=a["reason"])
    elif op.kind == "run":
        action = mem.record_action(
            task, command=a["command"], exit_code=a["exit"], step=a["step"],
            stdout=a.get("out"), stderr=a.get("err"), duration_seconds=1.5,
        )  # fmt: skip
        made[f"action{len(ids)}"] = action.id
    elif op.kind == "message":
        made[f"message{len(ids)}"] = mem.add_message(task, a["text"]).id
    elif op.kind == "error":
        made[a["key"]] = mem.add_error(task, a["text"], step=a["step"], command=a.get("command")).id
    elif op.kind in ("resolve", "answer"):
        mem.resolve(ids[a["key"]], a["text"])
    elif op.kind == "decide":
        old = ids[a["supersedes"]] if a["supersedes"] else None
        made[a["key"]] = mem.add_entry(
            "decision", a["text"], task_id=task, step=a["step"], supersedes=old
        ).id
    elif op.kind == "constrain":
        old = ids[a["supersedes"]] if a["supersedes"] else None
        made[a["key"]] = mem.add_entry("constraint", a["text"], task_id=task, supersedes=old).id
    elif op.kind == "ask":
        made[a["key"]] = mem.add_question(task, a["text"]).id
    elif op.kind == "wait":
        made[a["key"]] = start_wait(mem, task, a["text"], a["step"])
    elif op.kind == "unwait":
        end_wait(mem, ids[a["key"]])
    else:
        raise ValueError(f"unknown op {op.kind}")
    mem.run_jobs()  # the worker, done eagerly: extraction runs after every write
    return made


def render(mem: clew.Memory, task_id: str) -> tuple[str, str, int]:
    """What survives a compaction: the brief and the state, and their tokens together."""
    brief = mem.where(task_id).text
    state = mem.state(task_id).text
    lines = [*brief.splitlines(), *state.splitlines()]
    return brief, state, counter().count(lines, score.BUDGET).tokens


def present(mem: clew.Memory, key: str, ident: str) -> bool:
    """Whether a record an acknowledged op created is in the store."""
    try:
        if key == "task":
            mem.get_task(ident)
        elif key.startswith("w"):
            mem.get_wait(ident)
        elif key.startswith("action"):
            mem.get_action(ident)
        elif key.startswith("message"):
            mem.get_message(ident)
        else:
            mem.get_entry(ident)
    except clew.ClewError:
        return False
    return True


# -- the run ------------------------------------------------------------------------------


def _segments(script: Script) -> Iterator[tuple[int, int]]:
    """(first op, interrupt op) of each stretch between interruptions."""
    start = 0
    for number, op in enumerate(script.ops):
        if op.kind == "interrupt":
            yield start, number
            start = number + 1


def run(script: Script, path: str, *, processes: bool = True) -> list[Outcome]:
    """Drive `script` in a fresh store at `path`; return each interruption, scored.
    With `processes` false, restarts and kills are done in-process (close and reopen),
    which tests use when they only need the logic."""
    os.environ.update({"CLEW_WORKER": "off"})
    clock = Clock()
    ids: dict[str, str] = {}
    outcomes: list[Outcome] = []
    mem = open_store(path, clock)
    try:
        for start, stop in _segments(script):
            kind = script.ops[stop].args["kind"]
            acked = (0, 0)
            if kind == "sigkill" and processes and "task" in ids:
                mem.close()
                made = _killed_child(path, script, start, stop, ids)
                ids.update(made)
                mem = open_store(path, clock)
                found = sum(present(mem, k, v) for k, v in made.items())
                acked = (found, len(made))
                clock.tick = stop
                mem.run_jobs()  # a job the child queued is done by the next worker
            else:
                for number in range(start, stop):
                    clock.tick = number
                    ids.update(apply(mem, ids, script.ops[number]))
            clock.tick = stop
            if kind == "restart" and processes:
                mem.close()
                brief, state, tokens = _rendered_elsewhere(path, ids["task"], stop)
                mem = open_store(path, clock)
            else:
                if kind != "compaction":  # in-process restart or kill: close and reopen
                    mem.close()
                    mem = open_store(path, clock)
                brief, state, tokens = render(mem, ids["task"])
            expect = script.ops[stop].args["expect"]
            checks = score.check(expect, brief, state, tokens)
            if acked[1]:
                checks = {**checks, "acked": acked[0] == acked[1]}
            detail = (
                ""
                if all(v is not False for v in checks.values())
                else (score.why(expect, brief, state))
            )
            outcomes.append(Outcome(script.index, kind, stop, checks, tokens, acked, detail))
    finally:
        mem.close()
    return outcomes


def _rendered_elsewhere(path: str, task_id: str, tick: int) -> tuple[str, str, int]:
    argv = [sys.executable, "-m", "benchmarks.continuity.drive", "render", path, task_id,
            str(tick)]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, env=environment(), check=True)
    got = json.loads(done.stdout)
    return got["brief"], got["state"], got["tokens"]


def _killed_child(
    path: str, script: Script, start: int, stop: int, ids: dict[str, str]
) -> dict[str, str]:
    """Run ops [start, stop) in a child, kill it mid-write, return what it acknowledged."""
    numbers = (script.seed, script.index, script.steps, start, stop)
    argv = [sys.executable, "-m", "benchmarks.continuity.drive", "child", path]
    argv += [str(n) for n in numbers]
    child = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=environment()
    )
    assert child.stdin is not None and child.stdout is not None
    child.stdin.write(json.dumps(ids))
    child.stdin.close()
    made: dict[str, str] = {}
    for line in child.stdout:
        if line.startswith("inflight"):
            os.kill(child.pid, signal.SIGKILL)
            break
        made.update(json.loads(line))
    child.wait()
    child.stdout.close()
    if child.returncode != -signal.SIGKILL:
        raise RuntimeError(f"the child ended with {child.returncode} before it was killed")
    return made


def _child(path: str, seed: int, index: int, steps: int, start: int, stop: int) -> None:
    ids = json.loads(sys.stdin.read())
    script = generate(seed, index, steps=steps)
    clock = Clock()
    mem = open_store(path, clock)
    for number in range(start, stop):
        clock.tick = number
        made = apply(mem, ids, script.ops[number])
        ids.update(made)
        print(json.dumps(made), flush=True)  # acknowledged: the write has committed
    clock.tick = stop
    print("inflight", flush=True)
    while True:  # killed somewhere in here, mid-write
        mem.record_action(ids["task"], type="other", summary="checkpoint", stdout=NOISE)


def _render(path: str, task_id: str, tick: int) -> None:
    clock = Clock()
    clock.tick = tick
    with open_store(path, clock) as mem:
        brief, state, tokens = render(mem, task_id)
    print(json.dumps({"brief": brief, "state": state, "tokens": tokens}))


if __name__ == "__main__":
    if sys.argv[1] == "render":
        _render(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif sys.argv[1] == "child":
        seed, index, steps, start, stop = (int(a) for a in sys.argv[3:8])
        _child(sys.argv[2], seed, index, steps, start, stop)
