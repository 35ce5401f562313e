"""Write the transcripts of this folder (see README.md): python tests/data/plans/make.py"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
CWD = "/home/dev/coursefolio"


def _uuid(n: int, salt: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"{salt}/{n}"))


class Claude:
    """Lines of a Claude Code transcript, each with its uuid, parent and time."""

    def __init__(self, session: str, version: str) -> None:
        self.session, self.version = session, version
        self.lines: list[dict[str, Any]] = []
        self.parent: str | None = None
        self.second = 0

    def _line(self, kind: str, **fields: Any) -> dict[str, Any]:
        self.second += 1
        ident = _uuid(len(self.lines), self.session)
        line = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": CWD,
            "sessionId": self.session,
            "version": self.version,
            "gitBranch": "main",
            "type": kind,
            **fields,
            "uuid": ident,
            "timestamp": f"2026-11-27T14:{self.second // 60:02d}:{self.second % 60:02d}.000Z",
        }
        self.lines.append(line)
        self.parent = ident
        return line

    def user(self, text: str, **extra: Any) -> None:
        self._line("user", message={"role": "user", "content": text}, **extra)

    def say(self, text: str) -> None:
        self._assistant({"type": "text", "text": text})

    def call(self, ident: str, name: str, given: dict[str, Any]) -> None:
        self._assistant({"type": "tool_use", "id": ident, "name": name, "input": given})

    def result(self, ident: str, text: str, result: Any) -> None:
        block = {"tool_use_id": ident, "type": "tool_result", "content": text}
        self._line("user", message={"role": "user", "content": [block]}, toolUseResult=result)

    def _assistant(self, block: dict[str, Any]) -> None:
        n = len(self.lines)
        message = {
            "model": "claude-sonnet-4-5-20250929",
            "id": f"msg_01Plan{n:04d}",
            "type": "message",
            "role": "assistant",
            "content": [block],
            "stop_reason": "tool_use" if block["type"] == "tool_use" else None,
            "stop_sequence": None,
            "usage": {
                "input_tokens": 4,
                "cache_creation_input_tokens": 812,
                "cache_read_input_tokens": 14211,
                "output_tokens": 96,
                "service_tier": "standard",
            },
        }
        self._line("assistant", message=message, requestId=f"req_011Plan{n:04d}")

    def compact(self) -> None:
        self.user(
            "<command-name>/compact</command-name>\n            <command-message>compact"
            "</command-message>\n            <command-args></command-args>"
        )
        self.parent = None
        self._line(
            "system",
            subtype="compact_boundary",
            content="Conversation compacted",
            isMeta=False,
            level="info",
            compactMetadata={"trigger": "manual", "preTokens": 91544},
        )
        self.user(
            "This session is being continued from a previous conversation that ran out"
            " of context. The conversation is summarized below:\nThe user asked for"
            " refresh tokens; the work is under way.",
            isCompactSummary=True,
            isVisibleInTranscriptOnly=True,
        )

    def write(self, name: str) -> None:
        text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in self.lines)
        (HERE / name).write_text(text, encoding="utf-8")


TODOS_OK = (
    "Todos have been modified successfully. Ensure that you continue to use the todo"
    " list to track your progress. Please proceed with the current tasks if applicable"
)


def todos(*items: tuple[str, str, str]) -> list[dict[str, str]]:
    return [{"content": c, "status": s, "activeForm": f} for c, s, f in items]


def todowrite() -> None:
    t = Claude("5d1e8a3c-2b7f-4c19-8e6a-0f4b9d2c7a15", "2.0.31")
    t.user("Add refresh tokens to the auth API: issue them at login, rotate them on refresh.")
    t.say("I'll plan this out and work through it.")
    first = todos(
        ("Issue refresh tokens at login", "in_progress", "Issuing refresh tokens at login"),
        ("Rotate refresh tokens on /refresh", "pending", "Rotating refresh tokens"),
        ("Write the token tests", "pending", "Writing the token tests"),
    )
    t.call("toolu_01TodoA1", "TodoWrite", {"todos": first})
    t.result("toolu_01TodoA1", TODOS_OK, {"oldTodos": [], "newTodos": first})
    t.call(
        "toolu_01Edit1",
        "Edit",
        {
            "file_path": f"{CWD}/src/auth.py",
            "old_string": "def login(user):",
            "new_string": "def login(user, refresh=True):",
        },
    )
    t.result("toolu_01Edit1", f"The file {CWD}/src/auth.py has been updated.", {})
    second = todos(
        ("Issue refresh tokens at login", "completed", "Issuing refresh tokens at login"),
        ("Store refresh tokens hashed", "in_progress", "Storing refresh tokens hashed"),
        ("Rotate refresh tokens on POST /refresh", "pending", "Rotating refresh tokens"),
        ("Write the token tests", "pending", "Writing the token tests"),
    )
    t.call("toolu_01TodoA2", "TodoWrite", {"todos": second})
    t.result("toolu_01TodoA2", TODOS_OK, {"oldTodos": first, "newTodos": second})
    t.compact()
    third = todos(
        ("Issue refresh tokens at login", "completed", "Issuing refresh tokens at login"),
        ("Store refresh tokens hashed", "completed", "Storing refresh tokens hashed"),
        ("Rotate refresh tokens on POST /refresh", "in_progress", "Rotating refresh tokens"),
        ("Write the token tests", "pending", "Writing the token tests"),
    )
    t.call("toolu_01TodoA3", "TodoWrite", {"todos": third})
    t.result("toolu_01TodoA3", TODOS_OK, {"oldTodos": second, "newTodos": third})
    t.write("claude-todowrite.jsonl")


def tasks() -> None:
    t = Claude("9a0c4e7b-6d21-4f83-b5c8-3e1d7f0a2b46", "2.1.30")
    t.user("Move the image build to the registry and deploy it.")
    subjects = [
        ("Fix the Dockerfile", "Fixing the Dockerfile"),
        ("Push the image to the registry", "Pushing the image"),
        ("Deploy to staging", "Deploying to staging"),
    ]
    for n, (subject, form) in enumerate(subjects, 1):
        ident = f"toolu_01Make{n}"
        t.call(
            ident,
            "TaskCreate",
            {
                "subject": subject,
                "description": f"{subject}, then check it worked.",
                "activeForm": form,
            },
        )
        t.result(
            ident,
            f"Task #{n} created successfully: {subject}",
            {"task": {"id": str(n), "subject": subject}},
        )
    for ident, given in [
        ("toolu_01Upd1", {"taskId": "1", "status": "in_progress"}),
        ("toolu_01Upd2", {"taskId": "1", "status": "completed"}),
        (
            "toolu_01Upd3",
            {
                "taskId": "2",
                "status": "in_progress",
                "subject": "Push the image to registry.example.com",
            },
        ),
        ("toolu_01Upd4", {"taskId": "3", "status": "deleted"}),
    ]:
        t.call(ident, "TaskUpdate", given)
        t.result(
            ident,
            f"Updated task #{given['taskId']} {', '.join(k for k in given if k != 'taskId')}",
            {
                "success": True,
                "taskId": given["taskId"],
                "updatedFields": [k for k in given if k != "taskId"],
            },
        )
    t.write("claude-tasks.jsonl")


def codex() -> None:
    session = "0199b3d4-1e2f-7a80-9c3b-6d4e5f708192"
    lines: list[dict[str, Any]] = []
    second = 0

    def line(kind: str, payload: dict[str, Any]) -> None:
        nonlocal second
        second += 1
        lines.append(
            {"timestamp": f"2026-11-27T15:00:{second:02d}.000Z", "type": kind, "payload": payload}
        )

    line(
        "session_meta",
        {
            "id": session,
            "timestamp": "2026-11-27T15:00:00.000Z",
            "cwd": CWD,
            "originator": "codex_cli_rs",
            "cli_version": "0.58.0",
            "instructions": None,
            "source": "cli",
            "model_provider": "openai",
        },
    )
    line(
        "turn_context",
        {
            "cwd": CWD,
            "approval_policy": "on-request",
            "model": "gpt-5-codex",
            "effort": "medium",
            "summary": "auto",
        },
    )
    line(
        "response_item",
        {
            "type": "message",
            "role": "user",
            "content": [
                {
                    "type": "input_text",
                    "text": "The Docker build fails on the server; fix it, then"
                    " build and push the image.",
                }
            ],
        },
    )

    def plan(call: str, explanation: str | None, steps: list[tuple[str, str]]) -> None:
        given: dict[str, Any] = {"plan": [{"step": s, "status": st} for s, st in steps]}
        if explanation:
            given = {"explanation": explanation, **given}
        line(
            "response_item",
            {
                "type": "function_call",
                "name": "update_plan",
                "arguments": json.dumps(given),
                "call_id": call,
            },
        )
        line("event_msg", {"type": "plan_update", **given})
        line(
            "response_item",
            {"type": "function_call_output", "call_id": call, "output": "Plan updated"},
        )

    plan(
        "call_Plan01",
        None,
        [
            ("Read the Dockerfile and the build log", "in_progress"),
            ("Fix the requirements path", "pending"),
            ("Build and push the image", "pending"),
        ],
    )
    line(
        "response_item",
        {
            "type": "function_call",
            "name": "shell",
            "arguments": json.dumps({"command": ["bash", "-lc", "cat Dockerfile"], "workdir": CWD}),
            "call_id": "call_Sh01",
        },
    )
    line(
        "response_item",
        {
            "type": "function_call_output",
            "call_id": "call_Sh01",
            "output": json.dumps(
                {"output": "RUN pip install -r requirement.txt\n", "metadata": {"exit_code": 0}}
            ),
        },
    )
    plan(
        "call_Plan02",
        "The Dockerfile names requirement.txt; the file is requirements.txt.",
        [
            ("Read the Dockerfile and the build log", "completed"),
            ("Fix the requirements path", "completed"),
            ("Build and push the image", "in_progress"),
        ],
    )
    text = "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines)
    (HERE / f"rollout-2026-11-27T15-00-00-{session}.jsonl").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    todowrite()
    tasks()
    codex()
