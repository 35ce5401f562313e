"""Coding assistants' transcripts archived as sessions: a Claude Code session's JSONL (as its
hooks capture it, line by line as it grows) and a Codex CLI rollout (`clew import --from
codex`), over the realistic samples in tests/data/.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import clew
from clew.conversations.capture import _after
from clew.conversations.transcripts import CLAUDE_KEPT, claude_id, claude_message
from tests.conftest import run_in_lockstep

DATA = Path(__file__).parent / "data"
CLAUDE = DATA / "claude-code" / "7f3c2a91-4b6e-4d2a-9c1f-2e8b5d0a6c13.jsonl"
CLAUDE_ID = "7f3c2a91-4b6e-4d2a-9c1f-2e8b5d0a6c13"
CODEX = DATA / "codex" / "rollout-2026-11-21T10-02-11-0199a1c2-7d3e-7b41-9f0a-5c2e8d4b1a67.jsonl"
CODEX_ID = "0199a1c2-7d3e-7b41-9f0a-5c2e8d4b1a67"


def lines_of(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines(keepends=True)


def kept(path: Path) -> list[dict[str, Any]]:
    """The sample's lines that are messages, as a capture keeps them."""
    found = [claude_message(json.loads(line)) for line in lines_of(path)]
    return [m for m in found if m is not None]


# -- Claude Code ---------------------------------------------------------------------------


def test_a_claude_code_transcript_is_kept_verbatim_with_its_kinds(mem: clew.Memory) -> None:
    done = mem.capture_transcript(str(CLAUDE), workspace="/home/dev/coursefolio")
    raw = [json.loads(line) for line in lines_of(CLAUDE)]
    turns = mem.list_turns(CLAUDE_ID)
    # Every line but the file-history snapshot and the turn's duration is a turn, in order,
    # its message the line's message with its ids, times and markers: nothing rewritten.
    assert [r["type"] for r in raw if claude_message(r) is None] == [
        "file-history-snapshot",
        "system",
    ]
    assert done.added == len(turns) == len(raw) - 2 and done.skipped == 2 and done.bad == 0
    assert [t.message for t in turns] == kept(CLAUDE)
    for turn, line in zip(turns, [r for r in raw if claude_message(r) is not None], strict=True):
        assert turn.message == {k: line[k] for k in CLAUDE_KEPT if k in line}
        if "timestamp" in line:
            assert turn.created_at.startswith(line["timestamp"][:19])
    assert done.session.key == CLAUDE_ID and done.session.workspace == "/home/dev/coursefolio"
    assert done.session.started_at.startswith("2026-11-20T09:14:01")
    by_kind: dict[str, list[Any]] = {}
    for turn in turns:
        by_kind.setdefault(turn.role, []).append(turn)
    # The summary line and the compaction's boundary are system turns, as they are.
    summary, boundary = by_kind["system"]
    assert (
        summary.message["type"] == "summary"
        and summary.text == "JWT refresh tokens for the auth API"
    )
    assert boundary.message["subtype"] == "compact_boundary"
    assert boundary.message["compactMetadata"] == {"trigger": "manual", "preTokens": 48213}
    # Thinking is kept (and searchable), with its signature.
    thinking = next(t for t in turns if "thinking" in json.dumps(t.message.get("message")))
    assert thinking.role == "assistant" and "Rotating refresh tokens" in (thinking.text or "")
    assert thinking.message["message"]["content"][0]["signature"].startswith("EqQB")
    # Each tool call is paired with its result: the result knows its tool and its call's turn.
    results = by_kind["tool"]
    assert [t.tool_name for t in results] == ["Read", "Bash", "Grep", "Task", "Edit", "Bash"]
    for result in results:
        call = mem.list_turns(CLAUDE_ID, first=result.call_turn, last=result.call_turn)[0]
        assert call.tool_calls[0][0] == result.tool_call_id
    failing = results[1]
    assert "KeyError: 'iat'" in (failing.text or "")
    assert failing.message["message"]["content"][0]["is_error"] is True
    # The subagent's lines are kept, marked as its sidechain.
    side = [t for t in turns if t.message.get("isSidechain")]
    assert len(side) == 4 and {t.message["agentId"] for t in side} == {"a3f9c2e1"}
    assert side[0].message["parentUuid"] is None
    # Meta lines and the compaction's summary keep their markers.
    assert turns[1].message["isMeta"] is True
    assert any(t.message.get("isCompactSummary") for t in turns)
    assert mem.verify().ok


def test_capturing_again_adds_only_the_new_lines(mem: clew.Memory, tmp_path: Path) -> None:
    lines = lines_of(CLAUDE)
    transcript = tmp_path / f"{CLAUDE_ID}.jsonl"
    transcript.write_text("".join(lines[:12]), encoding="utf-8")
    first = mem.capture_transcript(str(transcript))
    # The session is keyed and placed by what the transcript's lines say.
    assert first.session.key == CLAUDE_ID
    assert first.session.workspace == "/home/dev/coursefolio"
    assert mem.capture_transcript(str(transcript)).added == 0
    with transcript.open("a", encoding="utf-8") as out:
        out.write("".join(lines[12:]))
    second = mem.capture_transcript(str(transcript))
    assert first.added + second.added == len(kept(CLAUDE))
    assert [t.message for t in mem.list_turns(CLAUDE_ID)] == kept(CLAUDE)
    assert mem.capture_transcript(str(transcript)).added == 0


def test_a_line_still_being_written_waits_for_the_next_capture(
    mem: clew.Memory, tmp_path: Path
) -> None:
    lines = lines_of(CLAUDE)
    transcript = tmp_path / f"{CLAUDE_ID}.jsonl"
    transcript.write_text("".join(lines[:6]) + lines[6][:40], encoding="utf-8")  # half a line
    assert mem.capture_transcript(str(transcript)).added == 5  # the snapshot is no message
    transcript.write_text("".join(lines[:7]), encoding="utf-8")
    assert mem.capture_transcript(str(transcript)).added == 1
    assert [t.message for t in mem.list_turns(CLAUDE_ID)] == kept(CLAUDE)[:6]


def test_a_transcript_without_messages_yet_makes_no_session(
    mem: clew.Memory, tmp_path: Path
) -> None:
    lines = lines_of(CLAUDE)
    transcript = tmp_path / f"{CLAUDE_ID}.jsonl"
    transcript.write_text(lines[1], encoding="utf-8")  # a file-history snapshot only
    done = mem.capture_transcript(str(transcript))
    assert done.session is None and done.added == 0 and done.skipped == 1
    assert mem.list_sessions() == []
    rollout = tmp_path / "rollout.jsonl"
    rollout.write_text(lines_of(CODEX)[0], encoding="utf-8")  # its session_meta only
    assert mem.capture_transcript(str(rollout), format="codex").session is None
    assert mem.list_sessions() == []


def test_a_transcript_rewritten_under_the_archive_adds_no_duplicates(
    mem: clew.Memory, tmp_path: Path
) -> None:
    lines = lines_of(CLAUDE)
    transcript = tmp_path / f"{CLAUDE_ID}.jsonl"
    transcript.write_text("".join(lines[:20]), encoding="utf-8")
    mem.capture_transcript(str(transcript))
    # The newest archived line is gone and the lines around it are reordered: each line is
    # then checked by its uuid, and only the ones never seen are added.
    rewritten = [*lines[:10], "not json\n", *lines[20:], *lines[10:19]]
    transcript.write_text("".join(rewritten), encoding="utf-8")
    done = mem.capture_transcript(str(transcript))
    assert done.bad == 1
    ids = [claude_id(t.message) for t in mem.list_turns(CLAUDE_ID)]
    assert len(ids) == len(set(ids)) == len(kept(CLAUDE))


def test_a_line_written_twice_is_archived_once(mem: clew.Memory, tmp_path: Path) -> None:
    lines = lines_of(CLAUDE)
    transcript = tmp_path / f"{CLAUDE_ID}.jsonl"
    transcript.write_text("".join([*lines[:9], lines[8], *lines[9:]]), encoding="utf-8")
    assert mem.capture_transcript(str(transcript)).added == len(kept(CLAUDE))
    assert [t.message for t in mem.list_turns(CLAUDE_ID)] == kept(CLAUDE)


def test_a_line_quoting_the_newest_uuid_is_not_taken_for_it(
    mem: clew.Memory, tmp_path: Path
) -> None:
    lines = lines_of(CLAUDE)
    transcript = tmp_path / f"{CLAUDE_ID}.jsonl"
    transcript.write_text("".join(lines[:8]), encoding="utf-8")
    mem.capture_transcript(str(transcript))
    newest = json.loads(lines[7])["uuid"]
    # A later tool result that quotes the uuid (an agent grepping its own transcript), and
    # the next line, whose parentUuid is it: neither is the archived line.
    quoting = json.loads(lines[9])
    quoting["message"]["content"][0]["content"] = f'"uuid":"{newest}"'
    with transcript.open("a", encoding="utf-8") as out:
        out.write(lines[8] + json.dumps(quoting) + "\n")
    assert mem.capture_transcript(str(transcript)).added == 2
    assert len(mem.list_turns(CLAUDE_ID)) == len(kept(CLAUDE)[:9])


class Counting(io.BytesIO):
    """A file that counts the bytes read from it."""

    read_bytes = 0

    def read(self, size: int | None = -1) -> bytes:
        data = super().read(size)
        self.read_bytes += len(data)
        return data


def test_finding_the_newest_archived_line_reads_only_the_end() -> None:
    # A hook runs after every tool call: on a long transcript it must not read it all.
    lines = lines_of(CLAUDE)
    filler = "".join(lines[7] for _ in range(20_000)).encode()  # ~22 MB of older lines
    newest = json.loads(lines[-1])
    tail = "".join(lines[-3:]).encode()
    handle = Counting(filler + tail + b'{"type":"file-history-snapshot"}\n')
    at = _after(handle, newest["uuid"])
    assert at == len(filler) + len(tail)
    assert handle.read_bytes < 200_000 < len(filler)
    assert _after(Counting(filler), "no-such-uuid") is None


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.integers(0, 31), max_size=6), st.sampled_from([1000, 3]))
def test_any_sequence_of_captures_archives_the_transcript_once(
    tmp_path_factory: pytest.TempPathFactory, cuts: list[int], batch: int
) -> None:
    # However the hooks fall (after any line, several times at the same point), and
    # whatever the size of a capture's transactions, the session ends with every message of
    # the transcript once, in order.
    import clew.conversations.capture

    folder = tmp_path_factory.mktemp("cuts")
    lines = lines_of(CLAUDE)
    transcript = folder / f"{CLAUDE_ID}.jsonl"
    default, clew.conversations.capture._BATCH = clew.conversations.capture._BATCH, batch
    try:
        with clew.open(folder / "clew.db") as mem:
            for cut in [*sorted(cuts), len(lines)]:
                transcript.write_text("".join(lines[:cut]), encoding="utf-8")
                mem.capture_transcript(str(transcript))
            assert [t.message for t in mem.list_turns(CLAUDE_ID)] == kept(CLAUDE)
    finally:
        clew.conversations.capture._BATCH = default


CAPTURE = """
import sys
import clew
import clew.conversations.capture
clew.conversations.capture._BATCH = int(sys.argv[3])
mem = clew.open(sys.argv[1])
print("ready", flush=True)
sys.stdin.readline()
done = mem.capture_transcript(sys.argv[2])
print(done.added)
"""


@pytest.mark.parametrize("batch", [1000, 4])
def test_hooks_racing_archive_each_line_once(db: Path, tmp_path: Path, batch: int) -> None:
    # Three captures at once: with one transaction for the whole transcript, one process
    # archives it and the others find nothing new; with transactions of 4 messages they
    # interleave, each batch deciding under the lock what is still new.
    transcript = tmp_path / f"{CLAUDE_ID}.jsonl"
    shutil.copy(CLAUDE, transcript)
    with clew.open(db) as mem:  # the store made before the race, as a project's is
        mem.list_sessions()
    results = run_in_lockstep([[CAPTURE, str(db), str(transcript), str(batch)] for _ in range(3)])
    assert all(code == 0 for code, _, _ in results), results
    added = sorted(int(out) for _, out, _ in results)
    assert sum(added) == len(kept(CLAUDE))
    if batch == 1000:
        assert added == [0, 0, len(kept(CLAUDE))]  # one archived it; the others waited
    with clew.open(db) as mem:
        assert [t.message for t in mem.list_turns(CLAUDE_ID)] == kept(CLAUDE)
        assert mem.verify().ok


def test_a_capture_stopped_midway_keeps_its_batches_and_the_next_completes_it(
    mem: clew.Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    import clew.conversations.capture

    monkeypatch.setattr(clew.conversations.capture, "_BATCH", 5)
    appended = clew.conversations.capture.Capture._append_captured
    calls = []

    def failing(self: Any, *args: Any) -> int:
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt  # the hook's timeout, in the third batch
        return appended(self, *args)

    monkeypatch.setattr(clew.conversations.capture.Capture, "_append_captured", failing)
    with pytest.raises(KeyboardInterrupt):
        mem.capture_transcript(str(CLAUDE))
    assert [t.message for t in mem.list_turns(CLAUDE_ID)] == kept(CLAUDE)[:10]
    done = mem.capture_transcript(str(CLAUDE))
    assert done.added == len(kept(CLAUDE)) - 10
    assert [t.message for t in mem.list_turns(CLAUDE_ID)] == kept(CLAUDE)


# -- the hook ------------------------------------------------------------------------------


def hook(cwd: Path, event: dict[str, Any] | str, *args: str) -> subprocess.CompletedProcess[str]:
    """`clew capture --hook` (or ARGS) as Claude Code runs it: its own process, the event
    on stdin, started in another folder than the project's."""
    env = {k: v for k, v in os.environ.items() if k not in ("CLEW_DB", "CLEW_SPACE")}
    return subprocess.run(
        [sys.executable, "-m", "clew", *(args or ("capture", "--hook"))],
        input=event if isinstance(event, str) else json.dumps(event),
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=60,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / ".clew").mkdir(parents=True)
    with clew.open(folder / ".clew" / "clew.db") as mem:
        task = mem.create_task(
            "Refresh tokens", ["Issue", "Refresh", "Test"], workspace=str(folder)
        )
        mem.update_task(task.id, step=1, step_status="active", message="issuing tokens")
    return folder


def event(project: Path, transcript: Path, name: str, **extra: Any) -> dict[str, Any]:
    return {
        "session_id": CLAUDE_ID,
        "transcript_path": str(transcript),
        "cwd": str(project),
        "hook_event_name": name,
        "permission_mode": "default",
        **extra,
    }


def test_the_hook_captures_into_the_project_store_and_prints_nothing(
    project: Path, tmp_path: Path
) -> None:
    transcript = tmp_path / "transcripts" / f"{CLAUDE_ID}.jsonl"
    transcript.parent.mkdir()
    shutil.copy(CLAUDE, transcript)
    done = hook(tmp_path, event(project, transcript, "UserPromptSubmit", prompt="go on"))
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    with clew.open(project / ".clew" / "clew.db") as mem:
        session = mem.get_session(CLAUDE_ID)
        assert session.turn_count == len(kept(CLAUDE)) and session.active
        assert session.workspace == str(project)
    # SessionEnd captures what is left and ends the session; the next one resumes it.
    done = hook(tmp_path, event(project, transcript, "SessionEnd", reason="exit"))
    assert done.returncode == 0 and done.stdout == ""
    with clew.open(project / ".clew" / "clew.db") as mem:
        assert not mem.get_session(CLAUDE_ID).active
    hook(tmp_path, event(project, transcript, "SessionStart", source="resume"))
    with clew.open(project / ".clew" / "clew.db") as mem:
        assert mem.get_session(CLAUDE_ID).active


def test_after_a_compaction_prime_still_puts_the_state_back(project: Path, tmp_path: Path) -> None:
    transcript = tmp_path / f"{CLAUDE_ID}.jsonl"
    shutil.copy(CLAUDE, transcript)
    start = event(project, transcript, "SessionStart", source="compact")
    captured = hook(tmp_path, start)
    primed = hook(tmp_path, start, "prime", "--hook")
    assert captured.stdout == "" and captured.returncode == 0
    assert primed.returncode == 0 and "Refresh tokens" in primed.stdout
    assert "issuing tokens" in primed.stdout


@pytest.mark.parametrize(
    "stdin",
    [
        "",
        "not json",
        "[1, 2]",
        json.dumps({"cwd": "/", "session_id": "x"}),  # no transcript_path
        json.dumps({"transcript_path": "/dev/zero", "session_id": "x"}),  # never ends
    ],
)
def test_the_hook_fails_open(project: Path, stdin: str) -> None:
    done = hook(project, stdin)
    assert done.returncode == 0 and done.stdout == ""
    assert done.stderr.startswith("clew capture: ") and done.stderr.count("\n") == 1


def test_a_subagent_s_own_transcript_goes_to_its_own_session(project: Path, tmp_path: Path) -> None:
    # Newer Claude Codes keep a subagent's lines in a file of their own, named at SubagentStop.
    lines = lines_of(CLAUDE)
    transcript = tmp_path / f"{CLAUDE_ID}.jsonl"
    transcript.write_text("".join(lines[:13]), encoding="utf-8")  # up to the Task call
    agent = tmp_path / CLAUDE_ID / "subagents" / "agent-a3f9c2e1.jsonl"
    agent.parent.mkdir(parents=True)
    agent.write_text("".join(lines[13:17]), encoding="utf-8")  # the sidechain's four lines
    stop = event(
        project,
        transcript,
        "SubagentStop",
        agent_id="a3f9c2e1",
        agent_type="Explore",
        agent_transcript_path=str(agent),
        stop_hook_active=False,
    )
    done = hook(tmp_path, stop)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    with clew.open(project / ".clew" / "clew.db") as mem:
        side = mem.list_turns(f"{CLAUDE_ID}/agent-a3f9c2e1")
        assert [t.message for t in side] == kept(CLAUDE)[12:16]
        assert all(t.message["isSidechain"] for t in side)
        assert not mem.get_session(f"{CLAUDE_ID}/agent-a3f9c2e1").active  # it has stopped
        assert mem.get_session(CLAUDE_ID).turn_count == 12


def test_a_transcript_not_written_yet_is_nothing_to_capture(project: Path) -> None:
    # At a session's start Claude Code may not have made its transcript yet.
    missing = {
        "transcript_path": str(project / "none.jsonl"),
        "session_id": "x",
        "cwd": str(project),
        "hook_event_name": "SessionStart",
    }
    done = hook(project, missing)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_the_hook_fails_open_on_a_broken_store(project: Path, tmp_path: Path) -> None:
    (project / ".clew" / "clew.db").write_bytes(b"this is not a database" * 100)
    transcript = tmp_path / f"{CLAUDE_ID}.jsonl"
    shutil.copy(CLAUDE, transcript)
    done = hook(tmp_path, event(project, transcript, "Stop"))
    assert done.returncode == 0 and done.stdout == "" and "clew capture: " in done.stderr


# -- Codex ---------------------------------------------------------------------------------


def test_a_codex_rollout_imports_as_its_session(cli: Any, mem: clew.Memory) -> None:
    done = cli("import", "--from", "codex", str(CODEX))
    assert done.code == 0, done.err
    assert done.out.startswith(f"session {CODEX_ID}: 16 new turns")
    session = mem.get_session(CODEX_ID)
    assert session.workspace == "/home/dev/coursefolio" and session.model == "gpt-5-codex"
    assert session.started_at.startswith("2026-11-21T10:02:11")
    raw = [json.loads(line) for line in lines_of(CODEX)]
    items = [r["payload"] for r in raw if r["type"] == "response_item"]
    turns = mem.list_turns(CODEX_ID)
    # The Responses items, as they are, and the compaction's summary where it came.
    assert [t.message for t in turns if t.message.get("type") != "compacted"] == items
    compacted = turns[-2]
    assert compacted.role == "system" and "requirements.txt" in (compacted.text or "")
    assert turns[-1].text == "Now run it on the server with port 8000 published."
    # function_call and custom_tool_call outputs are paired with their calls.
    outputs = [t for t in turns if t.role == "tool"]
    assert [t.tool_name for t in outputs] == ["shell", "shell", "apply_patch", "shell"]
    assert all(t.call_turn is not None for t in outputs)
    reasoning = [t for t in turns if t.message.get("type") == "reasoning"]
    assert len(reasoning) == 2 and "Inspecting the Dockerfile" in (reasoning[0].text or "")
    # Again: nothing new.
    again = cli("import", "--from", "codex", str(CODEX), "--json")
    assert json.loads(again.out)["added"] == 0
    assert len(mem.list_turns(CODEX_ID)) == 16


def test_a_grown_codex_rollout_adds_only_its_new_items(mem: clew.Memory, tmp_path: Path) -> None:
    lines = lines_of(CODEX)
    rollout = tmp_path / CODEX.name
    rollout.write_text("".join(lines[:10]), encoding="utf-8")
    first = mem.capture_transcript(str(rollout), format="codex")
    rollout.write_text("".join(lines), encoding="utf-8")
    second = mem.capture_transcript(str(rollout), format="codex")
    assert first.added + second.added == 16 == len(mem.list_turns(CODEX_ID))


def test_import_of_a_journal_file_is_unchanged(cli: Any, tmp_path: Path) -> None:
    assert cli("note", "--type", "decision", "--summary", "keep the journal import").code == 0
    exported = tmp_path / "journal.jsonl"
    assert cli("export", "-o", str(exported)).code == 0
    done = cli("import", str(exported))
    assert done.code == 0 and "were already there" in done.out


def test_a_codex_session_resumed_into_a_new_file_adds_only_its_new_items(
    mem: clew.Memory, tmp_path: Path
) -> None:
    lines = lines_of(CODEX)
    first, resumed = tmp_path / "first.jsonl", tmp_path / "resumed.jsonl"
    first.write_text("".join(lines[:12]), encoding="utf-8")
    held = mem.capture_transcript(str(first), format="codex").added
    # The resumed file names the same session and holds only what came after.
    resumed.write_text(lines[0] + "".join(lines[12:]), encoding="utf-8")
    done = mem.capture_transcript(str(resumed), format="codex")
    assert held + done.added == 16
    assert mem.capture_transcript(str(resumed), format="codex").added == 0
    assert mem.capture_transcript(str(CODEX), format="codex").added == 0
    items = [json.loads(line)["payload"] for line in lines if '"response_item"' in line]
    assert [t.message for t in mem.list_turns(CODEX_ID) if t.role != "system"] == items


_TEXT = st.text(max_size=12)
_TEXT_BLOCK = st.fixed_dictionaries({"type": st.just("text"), "text": _TEXT})
_BLOCK = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": _TEXT}),
    st.fixed_dictionaries({"type": st.just("thinking"), "thinking": _TEXT, "signature": _TEXT}),
    st.fixed_dictionaries(
        {
            "type": st.just("tool_use"),
            "id": _TEXT,
            "name": _TEXT,
            "input": st.dictionaries(_TEXT, _TEXT | st.integers(), max_size=2),
        }
    ),
    st.fixed_dictionaries(
        {
            "type": st.just("tool_result"),
            "tool_use_id": _TEXT | st.none(),
            "content": _TEXT | st.lists(_TEXT_BLOCK, max_size=2),
        },
        optional={"is_error": st.booleans()},
    ),
    st.dictionaries(_TEXT, _TEXT, max_size=2),  # a block of a kind clew does not know
)
_MESSAGE = st.fixed_dictionaries(
    {
        "role": st.sampled_from(["user", "assistant"]),
        "content": _TEXT | st.lists(_BLOCK, max_size=4),
    }
)
_LINE = st.one_of(
    st.fixed_dictionaries(
        {
            "type": st.sampled_from(["user", "assistant"]),
            "uuid": _TEXT,
            "message": _MESSAGE | st.dictionaries(_TEXT, _TEXT, max_size=2),
        }
    ),
    st.fixed_dictionaries({"type": st.just("summary"), "summary": _TEXT, "leafUuid": _TEXT}),
    st.fixed_dictionaries({"type": st.just("system"), "uuid": _TEXT, "content": _TEXT}),
    st.dictionaries(_TEXT, _TEXT | st.none(), max_size=3),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_LINE, max_size=6))
def test_any_transcript_lines_are_kept_exactly_or_refused_whole(lines: list[Any]) -> None:
    # Whatever a transcript holds, a line is either no message (left out), or a turn whose
    # message comes back exactly; a message clew cannot take is refused with a
    # ValidationError and nothing of the batch is stored, never another error.
    with clew.open(":memory:") as mem:
        session = mem.start_session().id
        messages = [m for m in (claude_message(line) for line in lines) if m is not None]
        try:
            mem.append_turns(session, messages)
        except clew.ValidationError:
            assert mem.export_session(session) == []
            return
        assert mem.export_session(session) == messages


# -- Anthropic messages in a prompt ----------------------------------------------------------


def test_anthropic_parallel_calls_answered_in_one_message_need_no_repair(mem: clew.Memory) -> None:
    # The Messages API answers every tool_use of a reply in one user message of tool_results.
    session = mem.start_session().id
    asked = {"role": "user", "content": "Read both files."}
    calls = {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Reading them."},
            {"type": "tool_use", "id": "toolu_a", "name": "read", "input": {"path": "a.py"}},
            {"type": "tool_use", "id": "toolu_b", "name": "read", "input": {"path": "b.py"}},
        ],
    }
    results = {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_a", "content": "A = 1"},
            {"type": "tool_result", "tool_use_id": "toolu_b", "content": "B = 2"},
        ],
    }
    mem.append_turns(session, [asked, calls, results])
    context = mem.assemble_context(session, budget=4000)
    assert context.repairs == ()
    assert list(context.messages[1:]) == [asked, calls, results]
    turn = mem.list_turns(session)[2]
    assert (turn.role, turn.tool_name, turn.call_turn) == ("tool", "read", 2)


def test_an_anthropic_call_without_its_result_is_repaired_in_its_own_shape(
    mem: clew.Memory,
) -> None:
    session = mem.start_session().id
    calls = {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": "toolu_c", "name": "bash", "input": {"command": "make"}},
        ],
    }
    mem.append_turns(session, [{"role": "user", "content": "Build it."}, calls])
    context = mem.assemble_context(session, budget=4000)
    assert len(context.repairs) == 1
    assert context.messages[-1] == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_c",
                "content": "[clew: no result was recorded for this tool call]",
                "is_error": True,
            },
        ],
    }
