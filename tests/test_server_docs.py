"""docs/server.md's main recipe runs as written: make a key, start `clew serve`, call the API
and read the dashboard with curl, export the space and restore it into another store, in a
folder with a home of its own. Only the placeholders a reader fills in are filled in (the key
the first command printed, the task id the API answered, a free port for 8080).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import free_port

ROOT = Path(__file__).resolve().parent.parent
PAGE = (ROOT / "docs" / "server.md").read_text(encoding="utf-8")

pytest.importorskip("uvicorn")
pytestmark = pytest.mark.skipif(shutil.which("curl") is None, reason="the recipe uses curl")


def block(containing: str) -> str:
    """Return the page's one `sh` block holding a line."""
    found = [b for b in re.findall(r"```sh\n(.*?)```", PAGE, re.S) if containing in b]
    assert len(found) == 1, containing
    return str(found[0])


class Shell:
    """Runs lines as a user would: bash, in a folder, `clew` on the PATH, no CLEW_ variables."""

    def __init__(self, tmp: Path, port: int) -> None:
        self.home, self.folder, self.port = tmp / "home", tmp / "work", port
        self.home.mkdir()
        self.folder.mkdir()
        bin_dir = tmp / "bin"
        bin_dir.mkdir()
        shim = bin_dir / "clew"
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m clew "$@"\n')
        shim.chmod(0o755)
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("CLEW_")}
        self.env.update(HOME=str(self.home), PATH=f"{bin_dir}:{os.environ['PATH']}")

    def local(self, script: str) -> str:
        return script.replace("localhost:8080", f"localhost:{self.port}").replace(
            "--port 8080", f"--port {self.port}"
        )

    def run(self, script: str) -> str:
        done = subprocess.run(
            ["bash", "-e", "-c", self.local(script)],
            capture_output=True,
            text=True,
            cwd=self.folder,
            env=self.env,
            timeout=120,
        )
        assert done.returncode == 0, f"{script}\n{done.stdout}\n{done.stderr}"
        return done.stdout


@pytest.fixture
def shell(tmp_path: Path) -> Shell:
    return Shell(tmp_path, free_port())


def test_the_server_recipe_runs_as_written(shell: Shell) -> None:
    start = [ln for ln in block("serve --port 8080").splitlines() if ln.strip()]
    assert start[0].startswith("pip install")  # done: this checkout is installed
    key = shell.run(start[1]).splitlines()[0]
    assert re.fullmatch(r"clew_[0-9a-f]{12}_\S+", key)
    server = subprocess.Popen(
        ["bash", "-c", "exec " + shell.local(start[2]).split("#")[0]],
        cwd=shell.folder,
        env=shell.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{shell.port}/api/v1/openapi.json"):
                    break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline, "no server"
                time.sleep(0.2)

        api = block("api/v1/task_register").replace("KEY=clew_...", f"KEY={key}")
        register, rest = api.split('# {"text"', 1)
        answer = json.loads(shell.run(register))
        task_id = answer["data"]["task_id"]
        assert answer["text"].startswith(f"Registered task {task_id} 'Deploy'")
        rest = rest.split("\n", 1)[1].replace("k3v9w2m8qa", task_id)
        out = shell.run(register.splitlines()[0] + "\n" + rest)
        where, end = json.JSONDecoder().raw_decode(out)  # curl adds no newline
        pages = out[end:]
        assert "next up is step 1 — Build" in where["text"]
        assert "Deploy" in pages and "Build" in pages and "<html" in pages

        backup = block("--space team verify")
        verified = shell.run(f"KEY={key}\n{backup}")
        assert "imported 1 event into space 'team'" in verified
        assert "\nok: 1 journal events of space team, chained unbroken" in verified
        served = (shell.folder / "team.jsonl").read_text(encoding="utf-8")
        assert served == (shell.folder / "team-cli.jsonl").read_text(encoding="utf-8")
    finally:
        server.terminate()
        server.wait(timeout=30)
