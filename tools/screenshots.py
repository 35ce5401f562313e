"""Remake the dashboard's screenshots in docs/img/ (task list, task page, session, search).

    python tools/screenshots.py [--out docs/img] [--chromium /usr/bin/chromium]

It fills a temporary store with a coding agent's afternoon, serves it on a free port of
127.0.0.1 with a key, and photographs the pages in Debian's chromium through Playwright
(the dev extra; no browser is downloaded).
"""

from __future__ import annotations

import argparse
import socket
import tempfile
import threading
import time
from pathlib import Path

import clew
from clew.server.app import Server, Spaces, build_app

STDOUT = """\
#12 [build 4/6] RUN pip install -r requirements.txt
#12 4.113 Successfully installed gunicorn-22.0.0 django-5.1.3
#14 [stage-1 2/3] COPY --from=build /app /app
#15 exporting to image
#15 naming to registry.example.com/coursefolio:1.4.2 done
"""
PUSH_ERROR = """\
The push refers to repository [registry.example.com/coursefolio]
denied: requested access to the resource is denied
"""


def fill(mem: clew.Memory) -> tuple[str, str]:
    """A task and a session as an agent leaves them mid-way; their ids."""
    task = mem.create_task(
        "Deploy coursefolio",
        goal="Ship coursefolio 1.4.2 to production behind the existing nginx",
        plan=[
            "Build the Docker image",
            "Push the image to the registry",
            "SSH into the production server",
            "Pull the image and run the container",
            "Check the health endpoint",
        ],
    )
    mem.add_constraint(task.id, "Keep the old container until /health answers 200")
    mem.update_step(task.id, 1, status="active")
    mem.record_action(task.id, command="docker build -t coursefolio:1.4.2 .", exit_code=0,
                      stdout=STDOUT, duration_seconds=84.2)  # fmt: skip
    mem.update_step(task.id, 1, status="completed", summary="image coursefolio:1.4.2 built")
    mem.add_decision(task.id, "Tag images by version, never push :latest")
    mem.update_step(task.id, 2, status="active")
    mem.record_action(task.id, command="docker push registry.example.com/coursefolio:1.4.2",
                      exit_code=1, stderr=PUSH_ERROR, duration_seconds=3.1)  # fmt: skip
    error = mem.add_error(task.id, "docker push: denied: requested access is denied",
                          command="docker push registry.example.com/coursefolio:1.4.2")  # fmt: skip
    mem.record_action(task.id, command="docker login registry.example.com", exit_code=0,
                      stdout="Login Succeeded", duration_seconds=1.4)  # fmt: skip
    mem.resolve(error.id, "logged in to the registry with the deploy token")
    mem.record_action(task.id, command="docker push registry.example.com/coursefolio:1.4.2",
                      exit_code=0, stdout="1.4.2: digest: sha256:9f2c... size: 2419",
                      duration_seconds=22.7)  # fmt: skip
    mem.update_step(task.id, 2, status="completed", summary="pushed after docker login")
    mem.replan(task.id, [clew.AddStep("Run the database migrations", position=4)],
               reason="1.4.2 adds a column: migrate before the new container serves")  # fmt: skip
    mem.update_step(task.id, 3, status="active")
    mem.add_wait(task.id, "manual", "approval from ops to restart production")
    other = mem.create_task("Rotate the TLS certificate", plan=["Renew", "Install", "Reload"])
    mem.update_step(other.id, 1, status="completed")
    done = mem.create_task("Fix flaky login test", plan=["Reproduce", "Fix", "Verify"])
    for n in (1, 2, 3):
        mem.update_step(done.id, n, status="completed")
    mem.update_task(done.id, status="completed")

    session = mem.open_session("deploy-chat", title="Deploy coursefolio", task_id=task.id)
    mem.append_turns(session.id, [
        {"role": "user", "content": "Deploy coursefolio 1.4.2 today. Don't touch the old "
                                    "container until the new one is healthy."},
        {"role": "assistant", "content": "I'll build, push, then run it next to the old one."},
        {"role": "assistant", "content": None, "tool_calls": [{
            "id": "call_1", "type": "function", "function": {
                "name": "shell", "arguments": '{"cmd": "docker push registry.example.com/'
                                             'coursefolio:1.4.2"}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": PUSH_ERROR},
        {"role": "assistant", "content": "The registry refused the push: I'll log in with the "
                                         "deploy token and retry."},
        {"role": "user", "content": "The token is in the vault under deploy/registry."},
    ])  # fmt: skip
    return task.id, session.id


def main() -> None:
    """Fill a store, serve it, photograph four pages."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="docs/img")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    import uvicorn
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as folder:
        mem = clew.open(Path(folder) / "clew.db", space="team")
        task_id, session_id = fill(mem)
        key = mem.create_key("team", "write", name="alice").token
        app, _ = build_app(Server(Spaces(mem, None), loopback=True))
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        config = uvicorn.Config(
            app, host="127.0.0.1", port=port, log_level="warning", timeout_graceful_shutdown=1
        )
        runner = uvicorn.Server(config)
        thread = threading.Thread(target=runner.run, daemon=True)
        thread.start()
        while not runner.started:
            time.sleep(0.02)
        url = f"http://127.0.0.1:{port}"
        try:
            with sync_playwright() as driver:
                browser = driver.chromium.launch(executable_path=args.chromium,
                                                 args=["--no-sandbox"])  # fmt: skip
                page = browser.new_page(viewport={"width": 1200, "height": 860})
                page.goto(url + "/")
                page.fill("input[name=key]", key)
                page.click("text=open")
                page.wait_for_selector("#tasks")
                shots = {
                    "dashboard-tasks.png": "/",
                    "dashboard-task.png": f"/tasks/{task_id}",
                    "dashboard-session.png": f"/sessions/{session_id}",
                    "dashboard-search.png": "/search?q=docker+push+denied",
                }
                for name, path in shots.items():
                    page.goto(url + path)
                    if name == "dashboard-task.png":
                        page.click("#ledger summary >> nth=1")  # one command's output, open
                    page.screenshot(path=str(out / name), full_page=name != "dashboard-task.png")
                    print(out / name)
                browser.close()
        finally:
            runner.should_exit = True
            thread.join(timeout=10)
            mem.close()


if __name__ == "__main__":
    main()
