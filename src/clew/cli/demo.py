"""`clew demo`: a scripted walkthrough of the main job on a fresh temporary store.

An agent registers a task with a plan, reports progress, records commands (one
fails), a constraint, a decision and the error, then loses its context. A brand-new
process, knowing nothing but the store's path, answers "where was I?", prints the
task state it keeps in its prompt, and shows the task; the journal is verified. It ends
with three commands to try next, which work on what the user then has: their own store,
or the demo's when it is kept. With --json it prints one JSON object instead.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from datetime import datetime, timedelta

import clew
from clew.core.clock import utcnow

PLAN = [
    "Build the Docker image",
    "Push the image to the registry",
    "SSH into the production server",
    "Pull the image and run the container",
    "Check the health endpoint",
]


class _Playback:
    """A clock for the scripted agent: it starts in the past and moves on as work is done,
    so the brief printed in real time afterwards shows believable ages and durations."""

    def __init__(self, minutes_ago: float) -> None:
        self.now = utcnow() - timedelta(minutes=minutes_ago)

    def __call__(self) -> datetime:
        return self.now

    def wait(self, minutes: float) -> None:
        self.now += timedelta(minutes=minutes)


# What the agent runs for steps 1-3: command, its output, minutes taken, what it reports.
FIRST_STEPS = [
    ("docker build -t coursefolio:v1.2.3 .", "Successfully tagged v1.2.3\n", 3, "image built"),
    ("docker push ghcr.io/alex/coursefolio:v1.2.3", "digest: sha256:4f1c\n", 2, "pushed"),
    ("ssh deploy@prod-1 true", "", 1, "SSH to prod-1 works"),
]


def _say(text: str) -> None:
    print(f"\n== {text}", flush=True)


def _clew(db: str, *args: str) -> None:
    """Run the real `clew` command in a new process and show its output."""
    print(f"$ clew {' '.join(args)}", flush=True)
    result = subprocess.run(
        [sys.executable, "-m", "clew", "--db", db, *args],
        capture_output=True,
        text=True,
        check=False,
    )
    print(result.stdout.rstrip(), flush=True)
    if result.returncode:
        print(result.stderr.rstrip(), file=sys.stderr)
        raise SystemExit(result.returncode)


def next_commands(db: str | None, task_id: str) -> list[str]:
    """Three commands to try after the demo: on the kept demo store, else on a new store of
    the user's own (the demo's is gone by then)."""
    if db is not None:
        prefix = f"clew --db {shlex.quote(db)}"
        return [
            f"{prefix} where {task_id[:5]}",
            f'{prefix} search "ghcr"',
            f"{prefix} task show {task_id[:5]} --all",
        ]
    return [
        "clew init",
        'clew task new "My first task" --plan "Read the code" "Fix the bug" "Run the tests"',
        "clew where",
    ]


def run_demo(*, keep: bool = False, as_json: bool = False) -> int:
    """Run the walkthrough (or, `as_json`, its outcome as one JSON object); return the exit
    code."""
    folder = tempfile.mkdtemp(prefix="clew-demo-")
    db = os.path.join(folder, "clew.db")
    try:
        if as_json:
            with contextlib.redirect_stdout(io.StringIO()):
                task_id = _record(db)
            print(json.dumps(_outcome(db, task_id, keep), indent=2, ensure_ascii=False))
            return 0
        task_id = _record(db)
        _say("The agent's context is compacted: everything it knew is gone")
        print("A new process that knows only the store's path asks where it was:")
        _clew(db, "task", "where", task_id[:5])

        _say("The state it keeps in its prompt (YAML, always under its token budget)")
        _clew(db, "state", task_id[:5])

        _say("The task, as any person or agent can see it")
        _clew(db, "task", "show", task_id[:5])

        _say("The journal rebuilds every table exactly")
        _clew(db, "verify")

        kept = f"The demo store is kept at {db}. " if keep else ""
        _say(f"{kept}Three commands to try next")
        for line in next_commands(db if keep else None, task_id):
            print(f"  {line}")
    finally:
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)
    return 0


def _outcome(db: str, task_id: str, keep: bool) -> dict[str, object]:
    """What the demo shows, as JSON: the task, its state and its brief, and the check."""
    from clew.models import to_jsonable

    with clew.open(db) as mem:
        outcome = {
            "store": db if keep else None,
            "task": mem.get_task(task_id),
            "state": mem.state(task_id).text,
            "where": mem.where(task_id).text,
            "verified": mem.verify().ok,
            "next": next_commands(db if keep else None, task_id),
        }
    result: dict[str, object] = to_jsonable(outcome)
    return result


def _record(db: str) -> str:
    """The scripted agent's work on a new store at `db`; return its task's id."""
    _say(f"An agent registers a task with a 5-step plan (store: {db})")
    clock = _Playback(minutes_ago=25)
    with clew.open(db, clock=clock) as mem:
        task = mem.create_task(
            "Deploy coursefolio",
            PLAN,
            goal="coursefolio v1.2.3 serving on the production server",
            workspace="~/src/coursefolio",
        )
        print(f"task {task.id}: {task.name!r}, plan v{task.plan_version}, {len(PLAN)} steps")
        mem.add_constraint(task.id, "No downtime during business hours (09:00-18:00 CET)")

        _say("It works through the plan, reporting each step and recording its commands")
        for number, (command, stdout, minutes, result) in enumerate(FIRST_STEPS, 1):
            mem.update_task(task.id, step=number, step_status="active")
            clock.wait(minutes)
            mem.record_action(
                task.id,
                command=command,
                exit_code=0,
                stdout=stdout,
                step=number,
                duration_seconds=minutes * 60.0 - 5,
            )
            mem.update_task(
                task.id,
                step=number,
                step_status="completed",
                message=f"Step {number} done: {result}",
            )
            if number == 2:
                mem.add_decision(task.id, "Push to ghcr.io, not Docker Hub: CI already has a token")
        mem.record_files(task.id, created=["deploy/compose.prod.yml"], modified=["Dockerfile"])
        clock.wait(4)
        mem.update_task(task.id, step=4, step_status="active", message="Pulling the image")
        clock.wait(6)
        failed = mem.record_action(
            task.id,
            command="docker pull ghcr.io/alex/coursefolio:v1.2.3",
            cwd="/srv/coursefolio",
            exit_code=1,
            stderr="Error response from daemon: denied: permission_denied: read_package\n",
            step=4,
        )
        clock.wait(2)
        mem.add_error(task.id, "docker pull denied: permission_denied (read_package)", step=4)
        mem.update_task(
            task.id,
            step=4,
            active_issue="registry denies the pull: the server needs a read token",
            message="docker pull was denied; the server is not logged in to ghcr.io",
            next_objective="log the server in to ghcr.io with a read-only token, then pull",
        )
        print(f"3 steps completed, step 4 active; the failed pull is action {failed.id}")
    return task.id
