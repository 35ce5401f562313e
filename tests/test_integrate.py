"""`clew integrate claude-code`: clew's hooks and MCP server merged into Claude Code's
settings without touching anyone else's entries, idempotent, and removed by --uninstall; the
installed hooks run as Claude Code runs them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import clew
from clew.cli import main
from clew.integrations.claude_code import (
    CAPTURE_EVENTS,
    install_hooks,
    install_server,
    uninstall_hooks,
    uninstall_server,
)

CLEW = f"{sys.executable} -m clew"
SAMPLE = (
    Path(__file__).parent / "data" / "claude-code" / "7f3c2a91-4b6e-4d2a-9c1f-2e8b5d0a6c13.jsonl"
)

# A project's settings with other people's hooks, permissions and an MCP server of theirs.
THEIRS: dict[str, Any] = {
    "permissions": {"allow": ["Bash(npm run test:*)"], "deny": ["Read(./.env)"]},
    "env": {"NODE_ENV": "development"},
    "hooks": {
        "PostToolUse": [
            {
                "matcher": "Edit|Write",
                "hooks": [{"type": "command", "command": 'npx prettier --write "$FILE"'}],
            },
        ],
        "SessionStart": [
            {"matcher": "startup", "hooks": [{"type": "command", "command": "./scripts/hello.sh"}]},
        ],
        "Notification": [{"hooks": [{"type": "command", "command": "notify-send claude"}]}],
    },
}
THEIR_SERVERS = {"mcpServers": {"github": {"type": "http", "url": "https://api.example.com/mcp"}}}


def integrate(folder: Path, *args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["integrate", "claude-code", "--dir", str(folder), "--command", CLEW, *args])
    out, err = capsys.readouterr()
    return code, out, err


def read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def clew_commands(settings: dict[str, Any]) -> dict[str, list[str]]:
    return {
        event: [h["command"] for g in groups for h in g["hooks"] if "clew" in h["command"]]
        for event, groups in settings.get("hooks", {}).items()
    }


def test_install_into_an_empty_project_twice_changes_nothing_the_second_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = integrate(tmp_path, capsys=capsys)
    assert code == 0 and out.startswith("installed:")
    settings, servers = tmp_path / ".claude" / "settings.json", tmp_path / ".mcp.json"
    installed = clew_commands(read(settings))
    assert list(installed) == list(CAPTURE_EVENTS)
    assert all(commands[0] == f"{CLEW} capture --hook" for commands in installed.values())
    assert installed["SessionStart"] == [f"{CLEW} capture --hook", f"{CLEW} prime --hook"]
    start = read(settings)["hooks"]["SessionStart"][0]
    assert start["matcher"] == "startup|resume|clear|compact"
    server = read(servers)["mcpServers"]["clew"]
    assert server == {"type": "stdio", "command": sys.executable, "args": ["-m", "clew", "mcp"]}
    before = settings.read_bytes(), servers.read_bytes()
    code, out, _ = integrate(tmp_path, capsys=capsys)
    assert code == 0 and out.startswith("already installed:")
    assert (settings.read_bytes(), servers.read_bytes()) == before
    # Uninstalling what only clew wrote leaves no file behind.
    code, out, _ = integrate(tmp_path, "--uninstall", capsys=capsys)
    assert code == 0 and not settings.exists() and not servers.exists()
    assert not (tmp_path / ".claude").exists()


def test_others_entries_are_kept_and_uninstall_restores_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings, servers = tmp_path / ".claude" / "settings.json", tmp_path / ".mcp.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps(THEIRS), encoding="utf-8")
    servers.write_text(json.dumps(THEIR_SERVERS), encoding="utf-8")
    assert integrate(tmp_path, capsys=capsys)[0] == 0
    merged = read(settings)
    assert merged["permissions"] == THEIRS["permissions"] and merged["env"] == THEIRS["env"]
    assert merged["hooks"]["PostToolUse"][0] == THEIRS["hooks"]["PostToolUse"][0]
    assert merged["hooks"]["SessionStart"][0] == THEIRS["hooks"]["SessionStart"][0]
    assert merged["hooks"]["Notification"] == THEIRS["hooks"]["Notification"]
    assert read(servers)["mcpServers"]["github"] == THEIR_SERVERS["mcpServers"]["github"]
    # A clew moved elsewhere replaces its old entries rather than adding more.
    capsys.readouterr()
    assert (
        main(
            ["integrate", "claude-code", "--dir", str(tmp_path), "--command", "/opt/clew/bin/clew"]
        )
        == 0
    )
    again = clew_commands(read(settings))
    assert again["SessionStart"] == [
        "/opt/clew/bin/clew capture --hook",
        "/opt/clew/bin/clew prime --hook",
    ]
    assert sum(len(c) for c in again.values()) == len(CAPTURE_EVENTS) + 1
    assert integrate(tmp_path, "--uninstall", capsys=capsys)[0] == 0
    assert read(settings) == THEIRS and read(servers) == THEIR_SERVERS


@pytest.mark.parametrize("broken", ["settings", "mcp"])
def test_a_malformed_file_is_named_and_nothing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], broken: str
) -> None:
    settings, servers = tmp_path / ".claude" / "settings.json", tmp_path / ".mcp.json"
    settings.parent.mkdir()
    bad = settings if broken == "settings" else servers
    bad.write_text('{"hooks": {"Stop": [}', encoding="utf-8")
    code, out, err = integrate(tmp_path, capsys=capsys)
    assert code == 2 and out == ""
    assert err.startswith(f"clew: error: {bad} is not valid JSON") and err.count("\n") == 1
    assert "nothing was written" in err
    assert bad.read_text(encoding="utf-8") == '{"hooks": {"Stop": [}'
    other = servers if broken == "settings" else settings
    assert not other.exists()
    # A file that is JSON but not settings (hooks as a list) is refused the same way.
    bad.write_text('{"hooks": []}' if broken == "settings" else '{"mcpServers": 3}')
    code, _, err = integrate(tmp_path, capsys=capsys)
    assert code == 2 and "nothing was written" in err and not other.exists()


def test_user_settings_go_to_the_home_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    state = {"numStartups": 12, "projects": {"/home/dev/x": {"allowedTools": []}}}
    (tmp_path / ".claude.json").write_text(json.dumps(state), encoding="utf-8")
    capsys.readouterr()
    assert main(["integrate", "claude-code", "--user", "--command", CLEW]) == 0
    assert list(clew_commands(read(tmp_path / ".claude" / "settings.json"))) == list(CAPTURE_EVENTS)
    user = read(tmp_path / ".claude.json")
    assert user["numStartups"] == 12 and user["projects"] == state["projects"]
    assert user["mcpServers"]["clew"]["args"] == ["-m", "clew", "mcp"]
    assert main(["integrate", "claude-code", "--user", "--uninstall"]) == 0
    assert read(tmp_path / ".claude.json") == state


def test_the_installed_hooks_run_as_claude_code_runs_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = tmp_path / "project"
    (project / ".clew").mkdir(parents=True)
    with clew.open(project / ".clew" / "clew.db") as mem:
        mem.create_task("Refresh tokens", ["Issue", "Test"], workspace=str(project))
    assert integrate(project, capsys=capsys)[0] == 0
    transcript = tmp_path / SAMPLE.name
    shutil.copy(SAMPLE, transcript)
    session = SAMPLE.stem
    event = {
        "session_id": session,
        "transcript_path": str(transcript),
        "cwd": str(project),
        "hook_event_name": "SessionStart",
        "source": "compact",
    }
    printed = []
    env = {k: v for k, v in os.environ.items() if k not in ("CLEW_DB", "CLEW_SPACE")}
    for group in read(project / ".claude" / "settings.json")["hooks"]["SessionStart"]:
        for hook in group["hooks"]:
            done = subprocess.run(
                hook["command"],
                shell=True,
                input=json.dumps(event),
                capture_output=True,
                text=True,
                cwd=tmp_path,
                env=env,
                timeout=hook["timeout"] * 4,
            )
            assert done.returncode == 0, done.stderr
            printed.append(done.stdout)
    assert printed[0] == "" and "Refresh tokens" in printed[1]
    with clew.open(project / ".clew" / "clew.db") as mem:
        assert mem.get_session(session).turn_count == 29


# -- the edits, as a property --------------------------------------------------------------

_COMMANDS = st.sampled_from(
    [
        "./x.sh",
        "npx prettier",
        "clew prime",
        "clew capture --hook",
        "/usr/bin/clew prime --hook",
        "python -m clew capture --hook",
        "echo 'clew prime --hook'",
    ]
)
_GROUP = st.fixed_dictionaries(
    {
        "hooks": st.lists(
            st.fixed_dictionaries({"type": st.just("command"), "command": _COMMANDS}), max_size=3
        )
    },
    optional={"matcher": st.sampled_from(["*", "Edit|Write", "startup"])},
)
_SETTINGS = st.fixed_dictionaries(
    {},
    optional={
        "hooks": st.dictionaries(
            st.sampled_from([*CAPTURE_EVENTS, "Notification"]),
            st.lists(_GROUP, min_size=1, max_size=3),
            max_size=4,
        ),
        "model": st.just("sonnet"),
    },
)


# The sampled commands that are clew's own hooks (the others only look like them).
_CLEW_S = {"clew capture --hook", "/usr/bin/clew prime --hook", "python -m clew capture --hook"}


def commands(settings: dict[str, Any]) -> list[str]:
    hooks = settings.get("hooks", {})
    return [h["command"] for groups in hooks.values() for g in groups for h in g["hooks"]]


@given(_SETTINGS, st.sampled_from([CLEW, "/opt/bin/clew", "clew"]))
def test_install_then_uninstall_leaves_only_what_was_not_clew_s(
    settings: dict[str, Any], command: str
) -> None:
    installed = install_hooks(settings, command)
    assert install_hooks(installed, command) == installed  # idempotent
    assert uninstall_hooks(installed) == uninstall_hooks(settings)
    # Others' hooks, even those that merely mention clew, survive in their order.
    assert commands(uninstall_hooks(installed)) == [
        c for c in commands(settings) if c not in _CLEW_S
    ]
    assert settings.get("model") == installed.get("model")


@given(
    st.dictionaries(
        st.sampled_from(["a", "b", "clew"]),
        st.fixed_dictionaries({"command": st.just("x")}),
        max_size=3,
    )
)
def test_the_server_entry_round_trips(servers: dict[str, Any]) -> None:
    config = {"mcpServers": servers} if servers else {}
    installed = install_server(config, "/bin/clew")
    assert installed["mcpServers"]["clew"]["command"] == "/bin/clew"
    others = {k: v for k, v in servers.items() if k != "clew"}
    assert uninstall_server(installed) == ({"mcpServers": others} if others else {})


# -- Codex -------------------------------------------------------------------------------

CODEX_SAMPLE = (
    Path(__file__).parent
    / "data"
    / "codex"
    / "rollout-2026-11-21T10-02-11-0199a1c2-7d3e-7b41-9f0a-5c2e8d4b1a67.jsonl"
)
THEIR_TOML = """# my Codex settings
model = "gpt-5-codex"
approval_policy = "on-request"

[mcp_servers.github]
command = "github-mcp"
args = ["--stdio"]

[projects."/home/dev/coursefolio"]
trust_level = "trusted"
"""


def codex(home: Path, *args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["integrate", "codex", "--command", CLEW, *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_codex_config_gets_notify_and_the_server_and_uninstall_restores_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import tomllib

    monkeypatch.setenv("CODEX_HOME", str(tmp_path))
    config = tmp_path / "config.toml"
    config.write_text(THEIR_TOML, encoding="utf-8")
    assert codex(tmp_path, capsys=capsys)[0] == 0
    parsed = tomllib.loads(config.read_text(encoding="utf-8"))
    assert parsed["notify"] == [sys.executable, "-m", "clew", "capture", "--codex-notify"]
    assert parsed["mcp_servers"]["clew"] == {
        "command": sys.executable,
        "args": ["-m", "clew", "mcp"],
    }
    assert parsed["mcp_servers"]["github"] == {"command": "github-mcp", "args": ["--stdio"]}
    assert parsed["model"] == "gpt-5-codex" and parsed["projects"]
    before = config.read_bytes()
    code, out, _ = codex(tmp_path, capsys=capsys)
    assert code == 0 and out.startswith("already installed") and config.read_bytes() == before
    assert codex(tmp_path, "--uninstall", capsys=capsys)[0] == 0
    assert config.read_text(encoding="utf-8") == THEIR_TOML


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('notify = ["notify-send"]\n', "already has a notify program"),
        ('[mcp_servers.clew]\ncommand = "other"\n', "already has an MCP server named clew"),
        ("model = \n", "is not valid TOML"),
    ],
)
def test_a_codex_config_clew_cannot_share_is_refused_untouched(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    text: str,
    says: str,
) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path))
    config = tmp_path / "config.toml"
    config.write_text(text, encoding="utf-8")
    code, out, err = codex(tmp_path, capsys=capsys)
    assert code == 2 and out == "" and says in err and "nothing was written" in err
    assert config.read_text(encoding="utf-8") == text
    assert main(["integrate", "codex", "--project"]) == 2


def test_codex_s_notify_archives_the_session_after_each_turn(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import tomllib

    home, project = tmp_path / "codex-home", tmp_path / "project"
    (project / ".clew").mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLEW_")}
    env["CODEX_HOME"] = str(home)
    subprocess.run(
        [sys.executable, "-m", "clew", "integrate", "codex", "--command", CLEW],
        env=env,
        check=True,
        capture_output=True,
    )
    notify = tomllib.loads((home / "config.toml").read_text(encoding="utf-8"))["notify"]
    rollout = home / "sessions" / "2026" / "11" / "21" / CODEX_SAMPLE.name
    rollout.parent.mkdir(parents=True)
    lines = CODEX_SAMPLE.read_text(encoding="utf-8").splitlines(keepends=True)
    thread = "0199a1c2-7d3e-7b41-9f0a-5c2e8d4b1a67"
    event = {
        "type": "agent-turn-complete",
        "thread-id": thread,
        "turn-id": "1",
        "cwd": str(project),
        "input-messages": ["fix the build"],
        "last-assistant-message": "Fixed.",
    }
    for cut in (12, len(lines)):  # two turns: the rollout grows between them
        rollout.write_text("".join(lines[:cut]), encoding="utf-8")
        done = subprocess.run(
            [*notify, json.dumps(event)], env=env, cwd=tmp_path, capture_output=True, text=True
        )
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    with clew.open(project / ".clew" / "clew.db") as mem:
        assert mem.get_session(thread).turn_count == 16
    # Another kind of notification is nothing to capture; a session with no rollout fails open.
    other = subprocess.run(
        [*notify, '{"type": "approval-requested"}'], env=env, capture_output=True, text=True
    )
    assert (other.returncode, other.stdout, other.stderr) == (0, "", "")
    lost = subprocess.run(
        [*notify, json.dumps({**event, "thread-id": "nope"})],
        env=env,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert (
        lost.returncode == 0 and lost.stdout == "" and "no rollout of session nope" in lost.stderr
    )
