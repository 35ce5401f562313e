"""The dashboard over real HTTP (uvicorn on 127.0.0.1, both backends): each page shows its
records, hostile text stays text, a person logs in with keys and switches space, edits go
through forms with a CSRF token and land in the journal with the key as their actor, and the
event stream says when the journal moves. The pages' HTML is also checked as pure functions.
The same pages in a real browser: tests/test_browser.py."""

from __future__ import annotations

import contextlib
import http.client
import re
import socket
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import clew
from clew.models import (
    Action,
    ActionStatus,
    ActionType,
    PlanItem,
    StepStatus,
    Task,
    TaskStatus,
)
from clew.server import dashboard, markup, web
from clew.state.document import State
from clew.tasks.history import HistoryItem, actor_of
from tests.test_server import SECRET, Served, running, seed

HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


@contextlib.contextmanager
def running_site(db: Path) -> Iterator[Served]:
    """A server whose home space is A, with read, write and admin keys of A and a write key
    of B; the browser's cookie is a header these tests set by hand."""
    keys = (("read", "a", "read"), ("write", "a", "write"), ("other", "b", "write"))
    with running(db, keys) as result:
        yield result


@pytest.fixture
def site(db: Path, backend: str) -> Iterator[Served]:
    """The running site (see running_site) on the test's backend."""
    with running_site(db) as found:
        yield found


def _raw(
    s: Served, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], str]:
    """One request, redirects not followed (to see a login's cookie)."""
    parsed = urllib.parse.urlsplit(s.url)
    conn = http.client.HTTPConnection(parsed.hostname or "", parsed.port, timeout=30)
    try:
        sent = {"Content-Type": "application/x-www-form-urlencoded", **(headers or {})}
        conn.request(method, path, body=body or None, headers=sent)
        reply = conn.getresponse()
        return reply.status, {k.lower(): v for k, v in reply.getheaders()}, reply.read().decode()
    finally:
        conn.close()


def _login(s: Served, token: str, cookie: str = "") -> str:
    """Log in with `token` (on top of `cookie`); the browser's cookie afterwards."""
    headers = {"Cookie": cookie} if cookie else {}
    status, got, _ = _raw(
        s, "POST", "/login", urllib.parse.urlencode({"key": token}).encode(), headers
    )
    assert status == 303, status
    return got["set-cookie"].split(";")[0]


def _csrf(text: str) -> str:
    return re.search(r'name=csrf value="([^"]+)"', text)[1]  # type: ignore[index]


def _act(s: Served, cookie: str, task_id: str, **fields: str) -> tuple[int, str]:
    page = _raw(s, "GET", f"/tasks/{task_id}", headers={"Cookie": cookie})[2]
    body = urllib.parse.urlencode({"csrf": _csrf(page), **fields}).encode()
    status, _, text = _raw(s, "POST", f"/tasks/{task_id}/act", body, {"Cookie": cookie})
    return status, text


def test_each_page_shows_its_records(site: Served) -> None:
    s = site
    ids = seed(s)
    mem = s.mems[next(iter(s.mems))]
    mem.replan(ids["task"], [clew.AddStep("Verify")], reason="forgot to verify")
    tasks = s.call("GET", "/", key="read")
    assert tasks.status == 200 and f"Deploy {SECRET}" in tasks.text
    assert "<h2>active (1)</h2>" in tasks.text and '<progress value="0" max="3">' in tasks.text

    task = s.call("GET", f"/tasks/{ids['task']}", key="read").text
    state = mem.state(ids["task"])
    for expected in (
        f"make {SECRET}",  # the ledger, with its output in <details>
        "<summary>stdout</summary>",
        f"Use {SECRET} registry",  # a decision
        f"ImportError {SECRET}",  # an error
        f"keep {SECRET}",  # a constraint
        f"approval of {SECRET}",  # a wait
        "forgot to verify",  # a replan's reason
        f"({state.tokens} tokens",  # the state the agent sees, with its count
        "<th>seq</th>",  # the timeline
        'class="pending current"',  # the step to do next
    ):
        assert expected in task, expected
    assert markup.escape(state.text) in task  # the exact YAML the agent sees
    assert "<form" not in task.split("<main>")[1]  # a read key sees no edits

    sessions = s.call("GET", "/sessions", key="read").text
    assert ids["session"] in sessions
    talk = s.call("GET", f"/sessions/{ids['session']}", key="read").text
    assert f"the password is {SECRET}" in talk and 'id="turn-2"' in talk

    found = s.call("GET", f"/search?q={SECRET}", key="read").text
    assert f"/tasks/{ids['task']}" in found and f"/sessions/{ids['session']}#turn-1" in found
    only = s.call("GET", f"/search?q={SECRET}&kinds=turn", key="read").text
    assert f"/sessions/{ids['session']}#turn-1" in only and "<span class=tag>entry" not in only
    missing = s.call("GET", "/tasks/zzzzzz", key="read")
    assert missing.status == 404 and "zzzzzz" in missing.text and "tasks" in missing.text


def test_hostile_text_from_the_store_stays_text(site: Served) -> None:
    s = site
    mem = s.mems[next(iter(s.mems))]
    task = mem.create_task(HOSTILE, goal=HOSTILE, plan=[HOSTILE])
    mem.add_error(task.id, HOSTILE)
    mem.record_action(task.id, command=HOSTILE, exit_code=1, stdout=HOSTILE, stderr=HOSTILE)
    session = mem.open_session("chat", title=HOSTILE)
    mem.append_turns(
        session.id,
        [
            {"role": "user", "content": HOSTILE},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": HOSTILE, "arguments": HOSTILE},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": HOSTILE},
        ],
    )
    for path in (
        "/",
        f"/tasks/{task.id}",
        "/sessions",
        f"/sessions/{session.id}",
        "/search?q=alert",
        "/search?q=" + urllib.parse.quote(HOSTILE),
    ):
        text = s.call("GET", path, key="write").text
        assert "<script>alert" not in text and "<img" not in text, path
        assert "&lt;script&gt;alert" in text, path


def test_edits_are_journaled_with_the_key_as_their_actor(site: Served) -> None:
    s = site
    ids = seed(s)
    mem = s.mems[next(iter(s.mems))]
    cookie = _login(s, s.tokens["write"])
    prefix = mem.authenticate(s.tokens["write"]).prefix
    before = mem.journal_head()
    for fields in (
        {"do": "note", "text": "look at the logs"},
        {"do": "constraint", "text": "no deploys on friday"},
        {"do": "resolve", "entry": ids["error"], "text": "pinned the version"},
        {"do": "supersede", "entry": ids["decision"], "text": "use the other registry"},
        {"do": "pause"},
        {"do": "resume"},
        {"do": "archive"},
        {"do": "unarchive"},
    ):
        status, text = _act(s, cookie, ids["task"], **fields)
        assert status == 303, (fields, text)
    written = mem.journal(after=before)
    assert written and all(e.correlation_id.startswith(f"web:{prefix}:") for e in written)
    types = {e.type for e in written}
    assert {"message.added", "entry.added", "task.archived"} <= types, types
    assert mem.get_entry(ids["error"]).status.value == "resolved"
    assert mem.get_entry(ids["decision"]).status.value == "superseded"
    page = _raw(s, "GET", f"/tasks/{ids['task']}", headers={"Cookie": cookie})[2]
    assert f"key {prefix} (dashboard)" in page and "no deploys on friday" in page
    assert mem.verify().ok


def test_forms_need_a_write_key_their_token_and_this_origin(site: Served) -> None:
    s = site
    ids = seed(s)
    mem = s.mems[next(iter(s.mems))]
    before = mem.journal_head()
    writer = _login(s, s.tokens["write"])
    page = _raw(s, "GET", f"/tasks/{ids['task']}", headers={"Cookie": writer})[2]
    good = {"csrf": _csrf(page), "do": "note", "text": "x"}
    path = f"/tasks/{ids['task']}/act"

    def post(fields: dict[str, str], **headers: str) -> int:
        body = urllib.parse.urlencode(fields).encode()
        return _raw(s, "POST", path, body, {"Cookie": writer, **headers})[0]

    assert post({**good, "csrf": "0" * 32}) == 403
    assert post({k: v for k, v in good.items() if k != "csrf"}) == 403
    assert post(good, Origin="http://evil.example") == 403
    assert post(good, Referer="http://evil.example/page") == 403
    assert post({**good, "do": "delete"}) == 400
    reader = _login(s, s.tokens["read"], writer)  # with the writer behind it: a picker
    token = _csrf(_raw(s, "GET", "/", headers={"Cookie": reader})[2])  # the picker's form
    body = urllib.parse.urlencode({**good, "csrf": token}).encode()
    assert _raw(s, "POST", path, body, {"Cookie": reader})[0] == 403
    assert mem.journal_head() == before  # none of them wrote
    # The cookie counts on the dashboard only: the API wants its Authorization header.
    assert _raw(s, "POST", "/api/v1/task_list", b"{}", {"Cookie": writer})[0] == 401


def test_a_browser_keeps_its_keys_and_switches_space(site: Served) -> None:
    s = site
    seed(s)
    assert "name=key" in _raw(s, "GET", "/")[2]  # no key: the login form, 401
    status, _, said = _raw(s, "POST", "/login", b"key=clew_0123456789ab_" + b"x" * 43)
    assert status == 401 and "name=key" in said
    mine = _login(s, s.tokens["write"])
    both = _login(s, s.tokens["other"], mine)
    page = _raw(s, "GET", "/", headers={"Cookie": both})[2]
    assert SECRET not in page  # B's space is in use: none of A's tasks
    home = s.mems[next(iter(s.mems))]
    a_prefix = home.authenticate(s.tokens["write"]).prefix
    assert f'<option value="{a_prefix}">' in page  # the picker offers A
    body = urllib.parse.urlencode({"csrf": _csrf(page), "prefix": a_prefix}).encode()
    status, got, _ = _raw(s, "POST", "/use", body, {"Cookie": both})
    assert status == 303
    switched = got["set-cookie"].split(";")[0]
    assert SECRET in _raw(s, "GET", "/", headers={"Cookie": switched})[2]
    unknown = urllib.parse.urlencode({"csrf": _csrf(page), "prefix": "0" * 12}).encode()
    assert _raw(s, "POST", "/use", unknown, {"Cookie": both})[0] == 400
    token = _csrf(_raw(s, "GET", "/", headers={"Cookie": switched})[2])
    forget = urllib.parse.urlencode({"csrf": token}).encode()
    assert _raw(s, "POST", "/logout", b"csrf=x", {"Cookie": switched})[0] == 403
    status, got, _ = _raw(s, "POST", "/logout", forget, {"Cookie": switched})
    assert status == 303 and 'clew_keys=""' in got["set-cookie"]  # forgotten
    assert _raw(s, "GET", "/nowhere", headers={"Cookie": switched})[0] == 404
    home.revoke_key(s.tokens["other"])  # a revoked key in the cookie lets nothing in
    assert "name=key" in _raw(s, "GET", "/", headers={"Cookie": both})[2]


def test_the_event_stream_says_when_the_journal_moves(site: Served) -> None:
    s = site
    ids = seed(s)
    mem = s.mems[next(iter(s.mems))]
    parsed = urllib.parse.urlsplit(s.url)
    with socket.create_connection((parsed.hostname or "", parsed.port or 80), timeout=20) as sock:
        token = s.tokens["read"]
        sock.sendall(
            f"GET /events HTTP/1.1\r\nHost: {parsed.netloc}\r\nAuthorization: Bearer {token}"
            "\r\n\r\n".encode()
        )
        seen = b""

        def heads() -> list[int]:
            return [int(n) for n in re.findall(rb"event: journal\ndata: (\d+)", seen)]

        while not heads():
            seen += sock.recv(4096)
        assert b"text/event-stream" in seen and heads()[0] == mem.journal_head()
        s.op("task_update", {"task_id": ids["task"], "message": "still going"})
        while len(heads()) < 2:  # bounded by the socket's timeout
            seen += sock.recv(4096)
        assert heads()[-1] == mem.journal_head() > heads()[0]


# -- the pages as pure functions --------------------------------------------------------------


def _task(name: str, step: str) -> Task:
    at = "2026-11-25T10:00:00Z"
    plan = (
        PlanItem(
            "s1",
            "sp",
            "t1",
            1,
            step,
            StepStatus.ACTIVE,
            at,
            None,
            None,
            step,
            step,
            (),
            False,
            at,
            at,
        ),
    )
    return Task(
        "t1",
        "sp",
        name,
        name,
        None,
        TaskStatus.ACTIVE,
        False,
        {},
        1,
        None,
        at,
        at,
        None,
        name,
        name,
        plan,
    )


def _opens_a_tag(text: str) -> bool:
    """Whether a browser would read markup in `text` ("<" then a letter, "/", "!" or "?"): a
    lone "<" is on every page already, as the renderer's own."""
    return re.search(r"<[A-Za-z/!?]", text) is not None


def _list_page(text: str) -> str:
    """The task list, where every stored text is `text`."""
    nav = markup.Nav(text, text, "write", ((text, text),), text, 3)
    return dashboard.task_list([_task(text, text)], nav)


@settings(max_examples=150, deadline=None)
@given(st.text(min_size=1, max_size=80))
def test_no_text_from_the_store_becomes_markup(text: str) -> None:
    page = _list_page(text)
    # Every tag on the page is one the renderer wrote: none starts inside the stored text.
    assert markup.escape(text) in page
    if _opens_a_tag(text) and text not in _list_page("x"):  # "<a" is the page's own
        assert text not in page
    assert page.count("<script") == 1  # live.js, nothing else


def _task_page(text: str) -> str:
    """A task page whose every stored text is `text`."""
    at = "2026-11-25T10:00:00Z"
    task = _task(text, text)
    state = State(task.id, text, 10, True, 1500, "cl100k_base", 0, ())
    action = Action(
        "a1",
        "sp",
        "t1",
        "s1",
        ActionType.CLI,
        text,
        ActionStatus.FAILED,
        None,
        None,
        text,
        None,
        2,
        1.0,
        text,
        text.encode("utf-8", "replace"),
        at,
        at,
    )
    view = dashboard.TaskView(
        task, state, [action], [], [], [], [(HistoryItem(1, at, text, text), text)]
    )
    nav = markup.Nav(text, text, "write", (), text, 3)
    return dashboard.task_page(view, nav, can_edit=True)


@settings(max_examples=60, deadline=None)
@given(st.text(min_size=1, max_size=60))
def test_no_text_on_a_task_page_becomes_markup(text: str) -> None:
    page = _task_page(text)
    if _opens_a_tag(text) and text not in _task_page("x"):  # "<td" is the page's own
        assert text not in page
    assert page.count("<script") == 1 and markup.escape(text) in page


def test_cookie_keys_and_actors_read_back() -> None:
    assert web.cookie_keys("a=1; clew_keys=k1.k2; b=2") == ["k1", "k2"]
    assert web.cookie_keys("other=1") == []
    assert actor_of("web:0123456789ab:zz") == "key 0123456789ab (dashboard)"
    assert actor_of("plainid") == "" and actor_of("web:x") == ""
    assert not web.is_dashboard("/api/v1/task_list") and web.is_dashboard("/tasks/x")


def test_one_poll_serves_every_listener_of_a_space() -> None:
    """The event stream's cost does not grow with the pages watching: each tick is one
    journal_head per watched space, and every listener hears each move."""
    import anyio

    class Head:
        polls = 0

        def journal_head(self) -> int:
            Head.polls += 1
            return Head.polls  # the journal moves between every two polls

    class OneSpace:
        def get(self, space: str) -> Head:
            return Head()

    heads = web.Heads(OneSpace(), every=0.005)  # type: ignore[arg-type]
    heard: dict[str, list[int]] = {"a": [], "b": [], "c": []}
    listening = anyio.Event()

    async def listen(name: str) -> None:
        async for head in heads.follow("team", 60):
            if head is not None:
                heard[name].append(head)
            if all(heard.values()):
                listening.set()
            if len(heard[name]) >= 6:
                return

    async def main() -> None:
        async with anyio.create_task_group() as group:
            async with anyio.create_task_group() as listeners:
                for name in heard:
                    listeners.start_soon(listen, name)
                # The poll starts once every listener has its first head: a listener that
                # began a poll later than the others (a loaded machine) heard other moves.
                await listening.wait()
                group.start_soon(heads.run)
            group.cancel_scope.cancel()

    anyio.run(main)
    # Each heard the head as it stood when it began, then the same moves as the others.
    assert heard["a"][1:] == heard["b"][1:] == heard["c"][1:]
    assert Head.polls <= len(heard["a"]) + 2  # one poll a tick, not one a listener
