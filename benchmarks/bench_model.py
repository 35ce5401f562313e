"""Benchmark the utility model's cost and its effect on the write path.

Prints markdown tables; a script, not a timed test:

    python benchmarks/bench_model.py          # about a minute

A local OpenAI-compatible server on 127.0.0.1 (real HTTP) stands in for the model: it
answers every request after `--delay` seconds (default 0.1, a fast local model) with a valid
extraction or summary and reports token usage from the request's size (4 characters a token).

The workload: a task of 20 steps and 100 task updates (each with a message; every 5th
completes a step and starts the next; every 4th records a command, one in three failing), then
10 questions. Per setting (no model, a small model, a small and a large one) it reports the
model calls and tokens, and the entries extraction stored. Then the write path: `update_task`
latency with no model against the same with a model configured and a worker thread doing the
queued jobs (model calls included) while the writes go on.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import clew
from common import pct, table

EXTRACTION = json.dumps(
    [
        {"type": "discovery", "summary": "The build needs libfoo 2.3", "tags": "build,deps"},
        {"type": "decision", "summary": "Pin libfoo to 2.3.1", "tags": "deps"},
    ]
)


QUESTIONS = (
    "where was I?", "what failed?", "what is next?", "which step is done?",
    "should I change the plan?", "why did the tests fail?", "what version?",
    "how should I deploy this?", "what did we decide?", "status?",
)  # fmt: skip


class LocalModel:
    """A model server on 127.0.0.1 that answers after a delay."""

    def __init__(self, delay: float) -> None:
        self.requests = 0

        class Handler(BaseHTTPRequestHandler):
            def do_POST(handler) -> None:
                body = json.loads(handler.rfile.read(int(handler.headers["Content-Length"])))
                self.requests += 1
                time.sleep(delay)
                prompt = sum(len(m["content"]) for m in body["messages"])
                text = EXTRACTION if "memory extraction" in json.dumps(body) else "On step 3 of 20."
                payload = json.dumps({
                    "model": body["model"],
                    "choices": [{"message": {"content": text}}],
                    "usage": {"prompt_tokens": prompt // 4, "completion_tokens": len(text) // 4},
                }).encode()  # fmt: skip
                handler.send_response(200)
                handler.send_header("Content-Length", str(len(payload)))
                handler.end_headers()
                handler.wfile.write(payload)

            def log_message(handler, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def configure(folder: str, model_url: str | None, large: bool) -> None:
    lines = []
    if model_url:
        lines += ["[model]", f'base_url = "{model_url}"', 'model = "small-local"', ""]
        if large:
            lines += ["[model.large]", f'base_url = "{model_url}"', 'model = "large-remote"', ""]
    with open(os.path.join(folder, "config.toml"), "w") as handle:
        handle.write("\n".join(lines))


def workload(mem: clew.Memory, updates: int) -> list[int]:
    """The task updates; returns each update_task's latency in ns."""
    task = mem.create_task("Port the service", [f"Step {n}" for n in range(1, 21)])
    mem.update_task(task.id, step=1, step_status="active")
    step, latencies = 1, []
    for n in range(1, updates + 1):
        if n % 4 == 0:
            failed = n % 12 == 0
            mem.record_action(
                task.id,
                command=f"make test-{n}",
                exit_code=1 if failed else 0,
                stderr=f"error: test {n} failed: expected 3, got 4\n" if failed else None,
                step=step,
            )
        finishing = n % 5 == 0 and step < 20
        said = f"update {n}: step {step} " + ("done" if finishing else "in progress")
        if n % 10 == 0:
            said += f"; decided to keep the v{n // 10} cache layer"
        t0 = time.perf_counter_ns()
        mem.update_task(
            task.id, message=said, step=step, step_status="completed" if finishing else "active"
        )
        latencies.append(time.perf_counter_ns() - t0)
        if finishing:
            step += 1
            mem.update_task(task.id, step=step, step_status="active")
    return latencies


def run_setting(name: str, url: str | None, large: bool, updates: int) -> list[object]:
    with tempfile.TemporaryDirectory(prefix="clew-bench-model-") as folder:
        configure(folder, url, large)
        os.environ["CLEW_WORKER"] = "off"
        with clew.open(os.path.join(folder, "clew.db")) as mem:
            workload(mem, updates)
            task_id = mem.list_tasks()[0].id
            jobs = mem.run_jobs()
            for question in QUESTIONS:
                mem.ask(task_id, question)
            usage = mem.usage()
            entries = len(mem.list_entries(task_id))
            by_role: dict[str, int] = {}
            for call in mem._store.model_calls():
                by_role[call.role] = by_role.get(call.role, 0) + 1
    roles = ", ".join(f"{r} {c}" for r, c in sorted(by_role.items())) or "-"
    kinds = {k: sum(1 for j in jobs if j.kind == k) for k in ("extract", "summarize")}
    return [
        name,
        kinds["extract"],
        kinds["summarize"],
        usage.calls,
        roles,
        f"{usage.tokens:,}",
        entries,
    ]


def write_path(url: str, updates: int) -> list[list[object]]:
    rows = []
    for name, model, worker in (
        ("no model", None, "off"),
        ("model configured, jobs only queued", url, "off"),
        ("model + worker thread in the process", url, "thread"),
        ("model + worker process (detached)", url, "process"),
    ):
        with tempfile.TemporaryDirectory(prefix="clew-bench-write-") as folder:
            configure(folder, model, False)
            os.environ["CLEW_WORKER"] = worker
            path = os.path.join(folder, "clew.db")
            with clew.open(path) as mem:
                latencies = workload(mem, updates)
                deadline = time.monotonic() + 120
                while worker != "off" and time.monotonic() < deadline:
                    if not mem.list_jobs(status="pending") and not mem.list_jobs(status="running"):
                        break
                    time.sleep(0.05)
                calls = mem.usage().calls
        rows.append([name, f"{pct(latencies, 50) / 1000:.0f}", f"{pct(latencies, 99) / 1000:.0f}",
                     f"{statistics.fmean(latencies) / 1000:.0f}", calls])  # fmt: skip
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--delay", type=float, default=0.1, help="model latency, seconds")
    parser.add_argument("--updates", type=int, default=100, help="task updates per run")
    args = parser.parse_args(argv)
    model = LocalModel(args.delay)
    try:
        when = time.strftime("%Y-%m-%d %H:%M")
        print(f"# clew utility-model benchmark\n\n{when}, model latency {args.delay * 1000:.0f} ms")
        print(f"(local HTTP), {args.updates} task updates\n")
        print("## Model calls and tokens per 100 task updates (and 10 questions)\n")
        rows = [
            run_setting("no model", None, False, args.updates),
            run_setting("small model", model.url, False, args.updates),
            run_setting("small + large", model.url, True, args.updates),
        ]
        print(table(["setting", "extractions", "summaries", "model calls", "by role", "tokens",
                     "entries"], rows))  # fmt: skip
        print("\n## The write path: update_task latency (µs)\n")
        print(
            table(
                ["setting", "p50", "p99", "mean", "model calls done"],
                write_path(model.url, args.updates),
            )
        )
    finally:
        model.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
