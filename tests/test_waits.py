"""Smart waits against real things: a command, a file that appears, an HTTP server on
127.0.0.1, a time, a manual condition; timeouts, restarts, the message each end posts, and
the brief and state that always name an open wait."""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import clew
from clew.core.lifecycle import Waiting, seconds, words
from clew.core.tokens import byte_counter
from clew.state.document import LEVELS, MIN_BUDGET, Snapshot, render_lines, render_state
from clew.tools import registry as tools
from tests.conftest import FakeClock, Result
from tests.test_state import STAMP, any_text, snapshots

Cli = Callable[..., Result]


def wait_events(mem: clew.Memory, kind: str) -> list[clew.Event]:
    return [e for e in mem.journal() if e.type == kind]


def system_messages(mem: clew.Memory, task_id: str) -> list[str]:
    return [m.content for m in mem.list_messages(task_id) if m.type.value == "wait"]


@pytest.fixture
def task(mem: clew.Memory) -> clew.Task:
    task = mem.create_task("Deploy", ["Build", "Push", "Run"], goal="ship v1.2")
    mem.update_step(task.id, 1, status="active")
    return task


# -- each kind against the real thing ---------------------------------------------------------


def test_a_command_wait_resolves_when_the_command_succeeds(
    mem: clew.Memory, task: clew.Task, tmp_path: Path, clock: FakeClock
) -> None:
    marker = tmp_path / "built"
    wait = mem.add_wait(
        task.id,
        "command",
        f"test -f {marker} && echo image ready",
        contains="ready",
        poll_every="10s",
        step=1,
        description="the image is built",
    )
    assert wait.status.value == "watching" and wait.step_id == task.plan[0].id
    first = mem.check_waits()
    assert [c.outcome for c in first] == ["pending"] and first[0].observation == "exit 1"
    assert mem.check_waits() == []  # not due again before its interval
    for _ in range(4):  # polls that see nothing new journal nothing
        clock.advance(10)
        assert [c.outcome for c in mem.check_waits()] == ["pending"]
    assert len(wait_events(mem, "wait.checked")) == 1
    assert mem.get_wait(wait.id).polls == 5
    marker.write_text("x")
    clock.advance(10)
    [done] = mem.check_waits()
    assert done.outcome == "resolved" and "image ready" in done.evidence
    assert done.wait.status.value == "resolved" and "image ready" in (done.wait.result or "")
    [posted] = system_messages(mem, task.id)
    assert posted.startswith("[wait resolved] the image is built: exit 0")
    assert mem.verify().ok


def test_a_command_criterion_on_exit_code_and_regex(mem: clew.Memory, task: clew.Task) -> None:
    wait = mem.add_wait(
        task.id, "command", "echo build 42 failed; exit 3", exit_code=3, regex=r"build \d+ failed"
    )
    assert mem.check_waits(wait.id)[0].outcome == "resolved"


def test_a_command_that_runs_too_long_is_killed_and_stays_pending(
    mem: clew.Memory, task: clew.Task
) -> None:
    wait = mem.add_wait(task.id, "command", "sleep 30", run_timeout=0.3)
    [check] = mem.check_waits(wait.id)
    assert check.outcome == "pending" and check.observation == "ran over 0.3s"


def test_a_command_output_is_read_with_a_cap(mem: clew.Memory, task: clew.Task) -> None:
    # 20 MB of output: read and dropped past the first and last 32 KB.
    cmd = f"{sys.executable} -c \"import sys; sys.stdout.write('y' * 20_000_000 + 'END')\""
    wait = mem.add_wait(task.id, "command", cmd, contains="END")
    [check] = mem.check_waits(wait.id)
    assert check.outcome == "resolved"
    assert len(check.evidence) < 1000 and check.evidence.endswith("END")


def test_a_file_wait_resolves_when_the_file_appears_with_its_content(
    mem: clew.Memory, task: clew.Task, tmp_path: Path, clock: FakeClock
) -> None:
    path = tmp_path / "out" / "report.json"
    wait = mem.add_wait(task.id, "file", str(path), contains='"ok": true', poll_every=5)
    assert mem.check_waits()[0].observation == "absent"
    path.parent.mkdir()
    path.write_text('{"ok": false}')
    clock.advance(5)
    assert mem.check_waits()[0].outcome == "pending"
    path.write_text('{"ok": true}')
    clock.advance(5)
    [check] = mem.check_waits()
    assert check.outcome == "resolved" and str(path) in check.evidence
    assert [e.data["observation"] for e in wait_events(mem, "wait.checked")] == [
        "absent",
        "present, output lacks '\"ok\": true'",
    ]
    assert mem.get_wait(wait.id).status.value == "resolved"


def test_a_relative_file_is_found_from_where_the_wait_was_added(
    mem: clew.Memory, task: clew.Task, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    wait = mem.add_wait(task.id, "file", "done.flag")
    assert wait.target == str(tmp_path / "done.flag")


class _Server(http.server.BaseHTTPRequestHandler):
    ready = False

    def do_GET(self) -> None:
        if self.path == "/moved":
            self.send_response(302)
            self.send_header("Location", "http://example.com/")
            self.end_headers()
            return
        body = b'{"status": "healthy"}' if _Server.ready else b"starting"
        self.send_response(200 if _Server.ready else 503)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    _Server.ready = False
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Server)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_url_wait_resolves_when_the_local_server_answers(
    mem: clew.Memory, task: clew.Task, server: str, clock: FakeClock
) -> None:
    wait = mem.add_wait(task.id, "url", f"{server}/health", contains="healthy", poll_every=2)
    [check] = mem.check_waits()
    assert check.outcome == "pending" and check.observation == "HTTP 503"
    _Server.ready = True
    clock.advance(2)
    [check] = mem.check_waits()
    assert check.outcome == "resolved" and "HTTP 200" in check.evidence
    assert "healthy" in (mem.get_wait(wait.id).result or "")


def test_a_url_wait_never_follows_a_redirect_off_the_machine(
    mem: clew.Memory, task: clew.Task, server: str
) -> None:
    wait = mem.add_wait(task.id, "url", f"{server}/moved")
    [check] = mem.check_waits(wait.id)
    assert check.outcome == "pending" and check.observation == "HTTP 302"
    exact = mem.add_wait(task.id, "url", f"{server}/moved", status=302)
    assert mem.check_waits(exact.id)[0].outcome == "resolved"


def test_a_url_wait_with_nobody_listening_is_pending(mem: clew.Memory, task: clew.Task) -> None:
    wait = mem.add_wait(task.id, "url", "http://localhost:9/", run_timeout=2)
    [check] = mem.check_waits(wait.id)
    assert check.outcome == "pending" and check.observation.startswith("no answer")


def test_a_time_wait_resolves_when_the_time_comes(
    mem: clew.Memory, task: clew.Task, clock: FakeClock
) -> None:
    wait = mem.add_wait(task.id, "time", "10m")
    assert wait.target == "2026-11-22T09:10:00.000000Z"
    assert mem.check_waits() == []  # not due before its time
    clock.advance(601)
    [check] = mem.check_waits()
    assert check.outcome == "resolved"
    at = mem.add_wait(task.id, "time", "2026-11-22T12:00Z")
    assert at.target == "2026-11-22T12:00:00.000000Z"


def test_a_manual_wait_is_resolved_by_hand_and_says_so(
    mem: clew.Memory, task: clew.Task, clock: FakeClock
) -> None:
    wait = mem.add_wait(task.id, "manual", "Alex approves the migration PR")
    clock.advance(7200)
    assert mem.check_waits() == []  # nothing to poll and no deadline
    done = mem.resolve_wait(wait.id, "approved in PR #42")
    assert done.status.value == "resolved" and done.result == "approved in PR #42"
    assert system_messages(mem, task.id) == [
        "[wait resolved] Alex approves the migration PR: approved in PR #42"
    ]
    with pytest.raises(clew.ValidationError, match="already resolved"):
        mem.cancel_wait(wait.id)


def test_a_cancelled_wait_posts_why(mem: clew.Memory, task: clew.Task) -> None:
    wait = mem.add_wait(task.id, "command", "false", description="staging is up")
    mem.cancel_wait(wait.id, "deploying to prod directly")
    assert mem.get_wait(wait.id).status.value == "cancelled"
    assert system_messages(mem, task.id) == [
        "[wait cancelled] staging is up: deploying to prod directly"
    ]
    assert mem.check_waits() == []


# -- timeouts, restarts -----------------------------------------------------------------------


def test_a_wait_times_out_after_its_deadline_with_the_last_evidence(
    mem: clew.Memory, task: clew.Task, clock: FakeClock
) -> None:
    wait = mem.add_wait(task.id, "command", "echo not yet; exit 1", poll_every=20, timeout="1m")
    assert wait.deadline == "2026-11-22T09:01:00.000000Z"
    mem.check_waits()
    clock.advance(61)
    [check] = mem.check_waits()
    assert check.outcome == "timed_out"
    assert check.wait.status.value == "timed_out" and "not yet" in (check.wait.result or "")
    [posted] = system_messages(mem, task.id)
    assert posted.startswith("[wait timed out] `echo not yet; exit 1` after 1m: last check: exit 1")


def test_a_wait_met_at_its_deadline_is_resolved_not_timed_out(
    mem: clew.Memory, task: clew.Task, clock: FakeClock
) -> None:
    mem.add_wait(task.id, "command", "true", timeout=30)
    clock.advance(31)
    assert [c.outcome for c in mem.check_waits()] == ["resolved"]


def test_waits_survive_a_restart_and_are_polled_after_it(
    db: Path, clock: FakeClock, tmp_path: Path
) -> None:
    flag = tmp_path / "deployed"
    with clew.open(db, clock=clock) as mem:
        task = mem.create_task("Deploy", ["Roll out"])
        wait = mem.add_wait(task.id, "file", str(flag), poll_every=30)
        assert mem.check_waits()[0].outcome == "pending"
    flag.write_text("ok")
    clock.advance(30)
    with clew.open(db, clock=clock) as mem:
        assert mem.get_wait(wait.id).polls == 1  # the bookkeeping survived too
        [check] = mem.check_waits()
        assert check.wait.id == wait.id and check.outcome == "resolved"
        assert mem.verify().ok


def test_a_background_worker_process_polls_until_the_wait_is_met(db: Path, tmp_path: Path) -> None:
    flag = tmp_path / "ready"
    with clew.open(db) as mem:
        task = mem.create_task("Build", ["Wait for CI"])
        wait = mem.add_wait(task.id, "file", str(flag), poll_every=1, timeout="5m")
    env = {**os.environ, "CLEW_WORKER": "off"}
    worker = subprocess.Popen(
        [sys.executable, "-m", "clew", "--db", str(db), "work", "--background"], env=env
    )
    try:
        with clew.open(db) as mem:  # the worker stays while the wait is watched
            for _ in range(600):
                if mem.get_wait(wait.id).polls:
                    break
                time.sleep(0.05)
            assert mem.get_wait(wait.id).status.value == "watching"
        flag.write_text("green")
        assert worker.wait(timeout=60) == 0  # it leaves once nothing is watched
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()
    with clew.open(db) as mem:
        assert mem.get_wait(wait.id).status.value == "resolved"
        assert "[wait resolved]" in mem.list_messages(task.id)[0].content


def test_the_library_worker_thread_polls_waits(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLEW_WORKER", "thread")
    flag = tmp_path / "ready"
    with clew.open(db) as mem:
        task = mem.create_task("Build", ["Wait"])
        wait = mem.add_wait(task.id, "file", str(flag), poll_every=1)
        flag.write_text("ok")
        for _ in range(1200):
            if mem.get_wait(wait.id).status.value == "resolved":
                break
            time.sleep(0.05)
        assert mem.get_wait(wait.id).status.value == "resolved"


# -- the brief and the state ------------------------------------------------------------------


def test_an_open_wait_stays_in_the_brief_and_state_however_much_follows(
    mem: clew.Memory, task: clew.Task, clock: FakeClock
) -> None:
    wait = mem.add_wait(task.id, "manual", "the DNS change propagates")
    old = mem.record_action(task.id, summary="waiting for the cert", type="wait", status="started")
    for n in range(30):
        clock.advance(1)
        mem.record_action(task.id, command=f"kubectl get pods #{n}", exit_code=0)
    brief = mem.where(task.id)
    assert f"Waiting on {wait.id}: the DNS change propagates" in brief.text
    assert "Waiting: waiting for the cert" in brief.text
    assert set(brief.waits) == {"the DNS change propagates", "waiting for the cert"}
    state = mem.state(task.id)
    assert wait.id in state.text and old.id in state.text and "waiting_on:" in state.text


_waits = st.lists(
    st.builds(
        Waiting,
        st.text("0123456789abcdefghjkmnpqrstvwxyz", min_size=10, max_size=10),
        any_text,
        st.just(STAMP),
        st.one_of(st.none(), any_text),
    ),
    max_size=12,
)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(snapshots(), _waits, st.integers(MIN_BUDGET, 2000))
def test_open_waits_are_named_at_every_level_within_the_budget(
    snap: Snapshot, waits: list[Waiting], budget: int
) -> None:
    snap = snap._replace(waits=waits)
    lines, _ = render_lines(snap, len(LEVELS) - 1)
    core = "\n".join(lines) + "\n"
    assert len(core.encode("utf-8")) <= MIN_BUDGET
    state = render_state(snap, budget, byte_counter())
    assert len(state.text.encode("utf-8")) <= budget
    if waits:
        assert waits[0].id in core and waits[0].id in state.text
        data = yaml.safe_load(state.text)
        assert data["waiting_on"][0]["id"] == waits[0].id
    if len(waits) > 1:
        shown = len(yaml.safe_load(core)["waiting_on"])
        assert shown == 1 and "open waits" in core


def test_a_wait_that_ended_since_the_agent_spoke_is_news_in_the_brief(
    mem: clew.Memory, task: clew.Task, clock: FakeClock
) -> None:
    wait = mem.add_wait(task.id, "command", "echo deployed", description="rollout finished")
    mem.check_waits()
    brief = mem.where(task.id).text
    assert f"Wait {wait.id} resolved: rollout finished: exit 0 — deployed" in brief
    clock.advance(5)
    mem.add_message(task.id, "saw the rollout, moving on")
    assert f"Wait {wait.id}" not in mem.where(task.id).text


# -- the doors --------------------------------------------------------------------------------


def test_cli_wait_commands(cli: Cli, mem: clew.Memory, task: clew.Task, tmp_path: Path) -> None:
    added = cli(
        "wait",
        "add",
        task.id,
        "--command",
        "exit 1",
        "--every",
        "5s",
        "--step",
        "1",
        "--description",
        "tests pass",
    )
    assert added.code == 0, added.err
    wait_id = added.out.strip()
    listed = cli("wait", "list")
    assert wait_id in listed.out and "tests pass" in listed.out and "not checked yet" in listed.out
    checked = cli("wait", "check", wait_id)
    assert checked.out.startswith(f"{wait_id} pending: exit 1")
    assert "last check" in cli("wait", "list", "--task", task.id).out
    manual = cli("wait", "add", task.id, "--manual", "review done").out.strip()
    assert cli("wait", "resolve", manual, "--evidence", "LGTM").out.strip() == f"{manual} resolved"
    assert cli("wait", "cancel", wait_id, "--reason", "flaky").out.strip() == f"{wait_id} cancelled"
    assert cli("wait", "list").out.startswith("no watching waits")
    every = json.loads(cli("wait", "list", "--all", "--json").out)
    assert {w["status"] for w in every} == {"resolved", "cancelled"}
    url = cli("wait", "add", task.id, "--url", "http://10.0.0.1/health")
    assert url.code == 2 and "not on this machine" in url.err


def test_the_smart_wait_tool(mem: clew.Memory, task: clew.Task, tmp_path: Path) -> None:
    flag = tmp_path / "flag"
    added = tools.call(
        mem,
        "smart_wait",
        {
            "action": "add",
            "task_id": task.id,
            "kind": "file",
            "target": str(flag),
            "poll_every": "5s",
        },
    )
    assert not added.is_error, added.text
    wait_id = added.data["id"]
    assert wait_id in tools.call(mem, "smart_wait", {"action": "list"}).text
    flag.write_text("x")
    checked = tools.call(mem, "smart_wait", {"action": "check", "wait_id": wait_id})
    assert "resolved" in checked.text
    bad = tools.call(
        mem,
        "smart_wait",
        {"action": "add", "task_id": task.id, "kind": "url", "target": "https://example.com"},
    )
    assert bad.is_error and "not on this machine" in bad.text
    missing = tools.call(mem, "smart_wait", {"action": "resolve"})
    assert missing.is_error and "needs wait_id" in missing.text
    unknown = tools.call(mem, "smart_wait", {"action": "cancel", "wait_id": "zzzzzz"})
    assert unknown.is_error and "smart_wait action=list" in unknown.text


def test_durations_read_and_say() -> None:
    assert seconds("90s", "x") == 90 and seconds("1.5h", "x") == 5400 and seconds(7, "x") == 7
    assert seconds("never", "x") is None
    assert words(5400) == "1h30m" and words(45) == "45s" and words(8 * 86400 + 60) == "8d1m"


def test_a_wait_that_cannot_be_checked_ends_in_error_and_says_why(
    mem: clew.Memory, task: clew.Task, tmp_path: Path
) -> None:
    wait = mem.add_wait(task.id, "file", str(tmp_path), contains="x")  # a folder: no content
    [check] = mem.check_waits()
    assert check.outcome == "error" and check.wait.status.value == "error"
    assert "is a folder" in (check.wait.result or "")
    [posted] = system_messages(mem, task.id)
    assert posted.startswith(f"[wait error] file {tmp_path}: ")
    assert mem.verify().ok and wait.id == check.wait.id


def test_the_brief_fits_its_budget_with_open_waits_whatever_their_text(
    mem: clew.Memory, clock: FakeClock
) -> None:
    from clew.state.brief import BRIEF_BUDGET
    from tests.test_working import exact_tokens

    long = "é🙂 " * 400
    task = mem.create_task(long[:999], [long[:900] + str(n) for n in range(40)], goal=long)
    mem.update_step(task.id, 22, status="active", active_issue=long)
    waits = [mem.add_wait(task.id, "manual", long + str(n), description=long) for n in range(5)]
    for n in range(5):
        mem.record_action(task.id, summary=long + str(n), type="wait", status="started")
        mem.add_error(task.id, long)
        mem.update_task(task.id, message=f"step {n} done " + long)
    brief = mem.where(task.id)
    assert exact_tokens(brief.text) <= BRIEF_BUDGET
    assert "Current: step 22" in brief.text and "Next: step 23" in brief.text
    assert sum(w.id in brief.text for w in waits) == 3  # three named, by id; the rest counted
    assert "(+2: `clew wait list" in brief.text
