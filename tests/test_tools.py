"""The tool registry: schemas, argument checking, dispatch of function-calling payloads,
`clew tools`, and the recipes of docs/agents.md run as written."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import clew
from clew.tools import registry as tools
from clew.tools.schema import check_arguments
from tests.conftest import Result
from tests.test_providers import FakeAPI

ROOT = Path(__file__).resolve().parent.parent
AGENTS_DOC = (ROOT / "docs" / "agents.md").read_text()


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)\n```", AGENTS_DOC, re.S)


def test_every_schema_is_valid_json_schema_and_documented() -> None:
    for tool in tools.TOOLS.values():
        jsonschema.Draft202012Validator.check_schema(tool.schema)
        assert tool.schema["additionalProperties"] is False
        assert len(tool.description) > 40, tool.name
        assert f"`{tool.name}`" in AGENTS_DOC, f"docs/agents.md does not list {tool.name}"
    for format, key in (
        ("openai", "function"),
        ("anthropic", "input_schema"),
        ("mcp", "inputSchema"),
    ):
        exported = tools.schemas(format)
        assert len(exported) == len(tools.TOOLS) and all(key in t for t in exported)
    with pytest.raises(clew.ValidationError, match="not one of"):
        tools.schemas("gemini")


def test_the_calls_the_state_names_for_hidden_things_exist(mem: clew.Memory) -> None:
    """The state lists what it hides with the tool call that recalls it: those calls work."""
    task = mem.create_task("Big", [f"step {n}" for n in range(40)])
    for n in range(30):
        mem.add_decision(task.id, f"decision {n}")
    hidden = mem.state(task.id, budget=800).hidden
    assert hidden
    for item in hidden:
        name, _, rest = item.tool.partition("(")
        arguments = dict(pair.split("=") for pair in rest.rstrip(")").split(", "))
        parsed = {k: (v == "true") if v in ("true", "false") else v for k, v in arguments.items()}
        result = tools.call(mem, name, parsed)
        assert not result.is_error, (item.tool, result.text)


def test_arguments_are_checked_with_a_sentence_to_act_on() -> None:
    schema = tools.TOOLS["task_plan"].schema
    cases: list[tuple[dict[str, Any], str]] = [
        ({}, "the required argument 'task_id' is missing"),
        ({"task_id": 3, "operations": []}, "task_id must be string, not 3"),
        ({"task_id": "t", "operations": []}, "operations needs at least 1 item"),
        ({"task_id": "t", "operations": [{"op": "zap"}]}, "operations[1].op is 'zap'"),
        ({"task_id": "t", "operations": [{}]}, "the required argument 'op' of operations[1]"),
        ({"task_id": "t", "operations": [{"op": "move", "position": 0}]}, "at least 1"),
        ({"task_id": "t", "operations": [{"op": "add", "step": True}]}, "integer or string"),
        ({"task_id": "t", "operations": [{"op": "add"}], "why": "x"}, "unknown argument 'why'"),
    ]
    for arguments, message in cases:
        with pytest.raises(clew.ValidationError) as raised:
            check_arguments(schema, arguments)
        assert message in str(raised.value), (arguments, str(raised.value))
    check_arguments(schema, {"task_id": "t", "operations": [{"op": "add", "title": "x"}]})


def test_dispatch_answers_in_the_shape_of_the_call(mem: clew.Memory) -> None:
    task = mem.create_task("T", ["a", "b"])
    arguments = {"task_id": task.id, "step": 1, "step_status": "completed"}
    function = {"name": "task_update", "arguments": json.dumps(arguments)}
    openai = tools.dispatch(mem, {"id": "call_1", "type": "function", "function": function})
    assert openai["role"] == "tool" and openai["tool_call_id"] == "call_1"
    assert "1/2 steps done" in openai["content"]
    item = {
        "type": "function_call",
        "call_id": "fc_1",
        "name": "task_state",
        "arguments": json.dumps({"task_id": task.id}),
    }
    responses = tools.dispatch(mem, item)
    assert responses["type"] == "function_call_output" and "title: b" in responses["output"]
    anthropic = tools.dispatch(
        mem,
        {
            "type": "tool_use",
            "id": "tu_1",
            "name": "task_update",
            "input": {"task_id": "nope", "message": "x"},
        },
    )
    assert anthropic["is_error"] and "no task matches 'nope'" in anthropic["content"]
    with pytest.raises(clew.ValidationError, match="unknown tool call shape"):
        tools.dispatch(mem, {"name": "task_state"})
    assert tools.call(mem, "task_update", "{not json").is_error
    assert "where was I" in tools.call(mem, "task_update", {"task_id": task.id}).text


def test_clew_tools_prints_schemas_and_calls_one(cli: Callable[..., Result]) -> None:
    listed = json.loads(cli("tools", "--format", "anthropic").out)
    assert [t["name"] for t in listed] == list(tools.TOOLS)
    made = cli("tools", "--call", "task_register", "--arguments", '{"name": "T", "plan": ["a"]}')
    assert made.code == 0 and "Registered task" in made.out
    bad = cli("tools", "--call", "task_update", "--arguments", "{}")
    assert bad.code == 1 and "required argument 'task_id'" in bad.out
    assert "conversation_recall" in cli("prompt").out


# -- the recipes of docs/agents.md, as written --------------------------------------------------


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project with a store in .clew/ and one active task."""
    folder = tmp_path / "project"
    (folder / ".clew").mkdir(parents=True)
    with clew.open(folder / ".clew" / "clew.db") as mem:
        mem.create_task("Ship it", ["build", "deploy"], goal="v2 live", workspace=str(folder))
    return folder


def hook_environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLEW_DB")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def test_the_hook_recipe_prints_the_state_after_compaction(project: Path, tmp_path: Path) -> None:
    settings = next(json.loads(b) for b in blocks("json") if "SessionStart" in b)
    [entry] = settings["hooks"]["SessionStart"]
    assert set(entry["matcher"].split("|")) >= {"startup", "compact"}
    [hook] = entry["hooks"]
    event = {
        "session_id": "s1",
        "hook_event_name": "SessionStart",
        "source": "compact",
        "cwd": str(project),
        "transcript_path": "/tmp/t.jsonl",
    }
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    ran = subprocess.run(
        ["sh", "-c", hook["command"]],
        input=json.dumps(event),
        capture_output=True,
        text=True,
        cwd=elsewhere,
        env=hook_environment(),
        timeout=hook["timeout"],
    )
    assert ran.returncode == 0, ran.stderr
    assert "goal: v2 live" in ran.stdout and "<clew-where-was-i" in ran.stdout
    broken = project / "broken"
    broken.mkdir()
    (broken / ".clew").mkdir()
    (broken / ".clew" / "clew.db").write_text("not a database")
    event["cwd"] = str(broken)
    failed = subprocess.run(
        ["sh", "-c", hook["command"]],
        input=json.dumps(event),
        capture_output=True,
        text=True,
        cwd=elsewhere,
        env=hook_environment(),
        timeout=hook["timeout"],
    )
    assert failed.returncode == 0 and failed.stdout == ""
    assert failed.stderr.startswith("clew: ") and failed.stderr.count("\n") == 1


def test_the_mcp_config_snippet_starts_clew_mcp() -> None:
    config = next(json.loads(b) for b in blocks("json") if "mcpServers" in b)
    server = config["mcpServers"]["clew"]
    # The client is given the full path of the checkout's clew command (README's set-up).
    assert server["command"] == "/path/to/clew/.venv/bin/clew" and server["args"] == ["mcp"]
    assert Path(sys.executable).parent.joinpath("clew").exists()


def reply(message: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
    body = {
        "id": "c1",
        "object": "chat.completion",
        "created": 0,
        "model": "gpt-5-mini",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }
    return 200, {"Content-Type": "application/json"}, json.dumps(body).encode()


def test_the_python_agent_loop_runs_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The loop of docs/agents.md against a local OpenAI-compatible server (the only stand-in:
    the model); clew, the openai client and HTTP are real."""
    [code] = [b for b in blocks("python") if "def ask" in b]
    api = FakeAPI()
    arguments = {"name": "Deploy coursefolio", "plan": ["Build", "Push", "Run"]}
    api.replies = [
        reply(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "task_register", "arguments": json.dumps(arguments)},
                    }
                ],
            }
        ),
        reply({"role": "assistant", "content": "Registered the task; building now."}),
    ]
    db = tmp_path / "agent.db"
    monkeypatch.setenv("CLEW_DB", str(db))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", api.url + "/v1")
    monkeypatch.chdir(tmp_path)
    try:
        exec(compile(code, "docs/agents.md", "exec"), {"__name__": "agent"})
    finally:
        api.close()
    assert capsys.readouterr().out.strip() == "Registered the task; building now."
    with clew.open(db) as mem:
        [task] = mem.list_tasks()
        assert task.name == "Deploy coursefolio" and len(task.plan) == 3
        roles = [t.role for t in mem.list_turns("my-agent")]
        assert roles == ["user", "assistant", "tool", "assistant"]
    first_request = api.requests[0][2]
    assert first_request["messages"][0]["role"] == "system"
    assert "## Your memory (clew)" in first_request["messages"][0]["content"]
    assert {t["function"]["name"] for t in first_request["tools"]} == set(tools.TOOLS)
    second = api.requests[1][2]["messages"]
    assert second[-1]["role"] == "tool" and second[-1]["tool_call_id"] == "call_1"


def test_task_record_keeps_an_error_open_and_shows_its_evidence(mem: clew.Memory) -> None:
    task = mem.create_task("Shards", ["Run"]).id
    mem.record_action(task, command="pytest --group 22", exit_code=1, stderr="FAILED x")
    said = tools.call(
        mem,
        "task_record",
        {
            "task_id": task,
            "error": "group 22 is flaky",
            "command": "pytest --group 22",
            "keep_open": True,
        },
    )
    assert not said.is_error and "kept open until you resolve it" in said.text
    [error] = said.data["entries"]
    assert error["keep_open"] is True and error["origin"] == "agent"
    mem.record_action(task, command="pytest --group 22", exit_code=0)
    state = tools.call(mem, "task_state", {"task_id": task})
    assert "a later run of `pytest --group 22` passed" in state.text
    assert mem.get_entry(error["id"]).status.value == "active"
    other = mem.add_error(task, "lint fails")
    kept = tools.call(mem, "task_record", {"task_id": task, "keeps_open": other.id})
    assert not kept.is_error and mem.get_entry(other.id).keep_open
