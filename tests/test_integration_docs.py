"""The recipes of docs/integrations/ run exactly as written: each fenced `sh` block, in order,
in a project folder with a home of its own, where Claude Code's hooks are played from the
settings the recipe installed, on the realistic transcripts of tests/data/.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

import clew

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data"
CLAUDE_ID = "7f3c2a91-4b6e-4d2a-9c1f-2e8b5d0a6c13"
CODEX_ID = "0199a1c2-7d3e-7b41-9f0a-5c2e8d4b1a67"
CODEX = DATA / "codex" / "rollout-2026-11-21T10-02-11-0199a1c2-7d3e-7b41-9f0a-5c2e8d4b1a67.jsonl"


def blocks(page: str) -> list[str]:
    return re.findall(r"```sh\n(.*?)```", (ROOT / "docs" / "integrations" / page).read_text(), re.S)


class Shell:
    """Runs a recipe's blocks as a user would: bash, in the project, `clew` on the PATH."""

    def __init__(self, tmp: Path) -> None:
        self.home, self.project = tmp / "home", tmp / "project"
        self.home.mkdir()
        self.project.mkdir()
        bin_dir = tmp / "bin"
        bin_dir.mkdir()
        shim = bin_dir / "clew"  # `clew` as an install puts it on the PATH
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m clew "$@"\n')
        shim.chmod(0o755)
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("CLEW_")}
        self.env.update(HOME=str(self.home), PATH=f"{bin_dir}:{os.environ['PATH']}")

    def run(self, script: str, stdin: str = "") -> str:
        done = subprocess.run(
            ["bash", "-e", "-c", script],
            input=stdin,
            capture_output=True,
            text=True,
            cwd=self.project,
            env=self.env,
            timeout=120,
        )
        assert done.returncode == 0, f"{script}\n{done.stdout}\n{done.stderr}"
        return done.stdout

    def store(self) -> clew.Memory:
        return clew.open(self.project / ".clew" / "clew.db")


def transcript_in(shell: Shell, source: Path, target: Path, **changes: str) -> Path:
    """A copy of a sample transcript as the assistant would have written it here: its folder
    is the project (and, with `sessionId`, its session another)."""
    lines = []
    for line in source.read_text(encoding="utf-8").splitlines():
        value: Any = json.loads(line)
        if "cwd" in value:
            value["cwd"] = str(shell.project)
        if isinstance(value.get("payload"), dict) and "cwd" in value["payload"]:
            value["payload"]["cwd"] = str(shell.project)
        if "sessionId" in value and "sessionId" in changes:
            value["sessionId"] = changes["sessionId"]
            value["uuid"] = value["uuid"][:-4] + "beef"
        lines.append(json.dumps(value) + "\n")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("".join(lines), encoding="utf-8")
    return target


def test_the_claude_code_recipe_runs_as_written(tmp_path: Path) -> None:
    install, look_back, before, remove = blocks("claude-code.md")
    shell = Shell(tmp_path)
    shell.run(install)
    settings = json.loads((shell.project / ".claude" / "settings.json").read_text())
    assert json.loads((shell.project / ".mcp.json").read_text())["mcpServers"]["clew"]
    # Claude Code runs the installed hooks as a session goes; its transcripts live in ~.
    folder = shell.home / ".claude" / "projects" / str(shell.project).replace("/", "-")
    transcript = transcript_in(
        shell, DATA / "claude-code" / f"{CLAUDE_ID}.jsonl", folder / f"{CLAUDE_ID}.jsonl"
    )
    for name in ("SessionStart", "UserPromptSubmit", "PostToolUse", "Stop"):
        event = {
            "session_id": CLAUDE_ID,
            "transcript_path": str(transcript),
            "cwd": str(shell.project),
            "hook_event_name": name,
            "source": "startup",
        }
        for group in settings["hooks"][name]:
            for hook in group["hooks"]:
                shell.run(hook["command"], json.dumps(event))
    with shell.store() as mem:
        assert mem.get_session(CLAUDE_ID).turn_count == 29
    shown = shell.run(look_back)
    assert CLAUDE_ID in shown and "refresh" in shown.lower()
    # A session from before the hooks: imported by the loop, the captured one left as it is.
    older = "0b1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f"
    transcript_in(
        shell,
        DATA / "claude-code" / f"{CLAUDE_ID}.jsonl",
        folder / f"{older}.jsonl",
        sessionId=older,
    )
    imported = shell.run(before)
    assert f"session {older}: 29 new turns" in imported
    assert f"session {CLAUDE_ID}: 0 new turns" in imported
    shell.run(remove)
    assert not (shell.project / ".claude").exists() and not (shell.project / ".mcp.json").exists()
    with shell.store() as mem:
        assert mem.get_session(older).workspace == str(shell.project)
        assert mem.verify().ok


def test_the_codex_recipe_runs_as_written(tmp_path: Path) -> None:
    recipe, as_you_go = blocks("codex.md")
    shell = Shell(tmp_path)
    rollout = shell.home / ".codex" / "sessions" / "2026" / "11" / "21" / CODEX.name
    transcript_in(shell, CODEX, rollout)
    shown = shell.run(recipe)
    assert "session 0199a1c2-7d3e-7b41-9f0a-5c2e8d4b1a67: 16 new turns" in shown
    assert "requirements.txt" in shown and "(match)" in shown
    again = shell.run(recipe)
    assert ": 0 new turns" in again
    # As you go: the notify program installed, then run as Codex runs it after a turn of a
    # new session, from wherever Codex was started.
    shell.run(as_you_go)
    config = (shell.home / ".codex" / "config.toml").read_text(encoding="utf-8")
    notify = tomllib.loads(config)["notify"]
    later = "0199b7e4-1a2b-7c3d-8e4f-5a6b7c8d9e0f"
    text = rollout.read_text(encoding="utf-8").replace(CODEX_ID, later)
    (rollout.parent / rollout.name.replace(CODEX_ID, later)).write_text(text, encoding="utf-8")
    event = {"type": "agent-turn-complete", "thread-id": later, "cwd": str(shell.project)}
    done = subprocess.run(
        [*notify, json.dumps(event)], env=shell.env, cwd=tmp_path, capture_output=True, text=True
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    with shell.store() as mem:
        assert mem.get_session(later).turn_count == 16


def test_the_claude_agent_sdk_recipe_runs_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The SDK starts Claude Code as a subprocess; here Claude Code is scripted
    # (tests/test_claude_agent_sdk.py), and the recipe runs unchanged in a project.
    from claude_agent_sdk._internal.transport import subprocess_cli

    from tests.test_claude_agent_sdk import SESSION, FakeClaudeCode

    page = (ROOT / "docs" / "integrations" / "claude-agent-sdk.md").read_text()
    (recipe,) = re.findall(r"```python\n(.*?)```", page, re.S)
    project = tmp_path / "project"
    (project / ".clew").mkdir(parents=True)
    with clew.open(project / ".clew" / "clew.db") as mem:
        mem.create_task("Billing export", ["Query", "Upload"], workspace=str(project))
    fake = FakeClaudeCode(project, tmp_path / f"{SESSION}.jsonl")
    monkeypatch.setattr(subprocess_cli, "SubprocessCLITransport", lambda **_: fake)
    monkeypatch.chdir(project)
    exec(compile(recipe, "claude-agent-sdk.md", "exec"), {"__name__": "__main__"})
    printed = capsys.readouterr().out
    assert "AssistantMessage" in printed and "ResultMessage" in printed
    assert any("Billing export" in str(answer) for _, answer in fake.hook_answers)
    with clew.open(project / ".clew" / "clew.db") as mem:
        assert mem.get_session(SESSION).turn_count == 4


def test_the_adk_recipe_runs_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # No model runs here: ADK's registry hands the agent a scripted one for the recipe's name.
    from google.adk.models.registry import LLMRegistry

    from tests.test_adk import Scripted, reply

    page = (ROOT / "docs" / "integrations" / "adk.md").read_text()
    (recipe,) = re.findall(r"```python\n(.*?)```", page, re.S)
    (install, search) = blocks("adk.md")
    assert install.strip() == "pip install -e '.[adk]'"
    model = Scripted(
        script=[
            reply("Noted: badge 7731. Try holding the power button."),
            reply("Your badge number is 7731."),
        ]
    )
    monkeypatch.setattr(LLMRegistry, "new_llm", staticmethod(lambda name: model))
    shell = Shell(tmp_path)
    (shell.project / ".clew").mkdir()
    monkeypatch.chdir(shell.project)
    exec(compile(recipe, "adk.md", "exec"), {"__name__": "__main__"})
    printed = capsys.readouterr().out
    assert "helpdesk: Your badge number is 7731." in printed
    # the second session's prompt carried the first one's fact, found in clew's memory
    assert "7731" in " ".join(p.text or "" for c in model.asked[1].contents for p in c.parts or [])
    assert "My badge number is 7731" in shell.run(search)


def test_the_langgraph_recipe_runs_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("langgraph.graph")
    page = (ROOT / "docs" / "integrations" / "langgraph.md").read_text()
    (recipe,) = re.findall(r"```python\n(.*?)```", page, re.S)
    monkeypatch.chdir(tmp_path)
    exec(compile(recipe, "langgraph.md", "exec"), {"__name__": "__main__"})
    assert capsys.readouterr().out.splitlines() == [
        "approved: yes",
        "deploy-v2 deploy v2 approved: yes",
    ]
    with clew.open(tmp_path / "agent.db") as mem:
        assert mem.verify().ok
        assert [hit.entry.type for hit in mem.search("approved")] == ["context"]
