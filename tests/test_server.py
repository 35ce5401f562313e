"""`clew serve` over real HTTP on 127.0.0.1 (uvicorn in a thread, urllib as the client), on
SQLite and PostgreSQL: every route, the keys rule, isolation between spaces, the request
log, the rate limit, MCP at /mcp with a key."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import clew
from clew.core.origin import HostRules
from clew.errors import ValidationError
from clew.server import api
from clew.server.app import Server, Spaces, build_app, check_bind, uvicorn_config
from clew.server.limits import RateLimit
from clew.tools import registry as tools
from tests.conftest import free_port, new_space, wait_listening


@dataclass
class Reply:
    status: int
    body: bytes
    headers: dict[str, str]

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


@dataclass
class Served:
    url: str
    server: Server
    mems: dict[str, clew.Memory]
    tokens: dict[str, str] = field(default_factory=dict)

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        key: str | None = "write",
        raw: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> Reply:
        data = raw if raw is not None else None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method)
        if key is not None:
            request.add_header("Authorization", f"Bearer {self.tokens.get(key, key)}")
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return Reply(response.status, response.read(), dict(response.headers))
        except urllib.error.HTTPError as error:
            return Reply(error.code, error.read(), dict(error.headers))

    def op(self, name: str, body: dict[str, Any], key: str | None = "write") -> Reply:
        return self.call("POST", f"/api/v1/{name}", body, key=key)


def serve_in_thread(server: Server) -> tuple[str, Callable[[], None]]:
    """Run the app on a free port of 127.0.0.1 in a thread, as `clew serve` runs it; return
    its URL and a stop."""
    import uvicorn

    app, _ = build_app(server)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    runner = uvicorn.Server(uvicorn_config(app, "127.0.0.1", port))
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not runner.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)

    def stop() -> None:
        runner.should_exit = True
        thread.join(timeout=20)

    return f"http://127.0.0.1:{port}", stop


@contextlib.contextmanager
def running(db: Path, keys: tuple[tuple[str, str, str], ...], **options: Any) -> Iterator[Served]:
    """A server of `db` in a thread whose home space is A, with these keys (name, "a" or
    "b", scope): result.tokens[name], and "space-b" for B's name; `options` are the
    Server's (rate and burst default to 1000)."""
    a, b = new_space(), new_space()
    home = clew.open(db, space=a)
    opened: dict[str, clew.Memory] = {a: home}

    def opener(space: str) -> clew.Memory:
        opened[space] = clew.open(db, space=space)
        return opened[space]

    server = Server(Spaces(home, opener), loopback=True, **{"rate": 1000, "burst": 1000, **options})
    url, stop = serve_in_thread(server)
    result = Served(url, server, opened)
    for name, which, scope in keys:
        result.tokens[name] = home.create_key(a if which == "a" else b, scope, name=name).token
    result.tokens["space-b"] = b
    try:
        yield result
    finally:
        stop()
        for space, mem in list(opened.items()):
            if space != a:
                mem.close()
        home.close()


@pytest.fixture
def served(db: Path, backend: str) -> Iterator[Served]:
    """A server whose home space is A, with keys of A (read, write, admin, one revoked) and
    of B (write, admin); A holds a task and a session whose words B must never see."""
    keys = (
        ("read", "a", "read"),
        ("write", "a", "write"),
        ("admin", "a", "admin"),
        ("revoked", "a", "write"),
        ("other", "b", "write"),
        ("other-admin", "b", "admin"),
    )
    with running(db, keys) as result:
        result.server.spaces.home.revoke_key(result.tokens["revoked"])
        yield result


SECRET = "zebra-7f3a-unique"


def seed(s: Served) -> dict[str, str]:
    """Space A's records through the API: a task with a decision, an error, a command, a
    session; returns their ids."""
    task = s.op(
        "task_register",
        {"name": f"Deploy {SECRET}", "plan": ["Build", "Ship"], "constraints": [f"keep {SECRET}"]},
    )
    assert task.status == 200, task.text
    task_id = task.json()["data"]["task_id"]
    record = s.op(
        "task_record",
        {
            "task_id": task_id,
            "decision": f"Use {SECRET} registry",
            "error": f"ImportError {SECRET}",
        },
    )
    assert record.status == 200, record.text
    entries = record.json()["data"]["entries"]
    mem = s.mems[next(iter(s.mems))]
    action = mem.record_action(task_id, command=f"make {SECRET}", exit_code=2, stdout=SECRET)
    turns = s.op(
        "session_append",
        {
            "session": "chat-a",
            "messages": [
                {"role": "user", "content": f"the password is {SECRET}"},
                {"role": "assistant", "content": "noted"},
            ],
        },
    )
    assert turns.status == 200, turns.text
    wait = s.op(
        "smart_wait",
        {"action": "add", "task_id": task_id, "kind": "manual", "target": f"approval of {SECRET}"},
    )
    assert wait.status == 200, wait.text
    return {
        "task": task_id,
        "decision": entries[0]["id"],
        "error": entries[1]["id"],
        "action": action.id,
        "session": turns.json()["data"]["session_id"],
        "wait": wait.json()["data"]["id"],
    }


# -- route by route ------------------------------------------------------------------------


def test_every_route_answers_with_its_data(served: Served, backend: str) -> None:
    s = served
    ids = seed(s)
    task = ids["task"]
    checks: list[tuple[str, dict[str, Any], str]] = [
        (
            "task_update",
            {"task_id": task, "step": 1, "step_status": "completed", "message": "built it"},
            "1/2 steps done",
        ),
        ("task_update", {"task_id": task, "query": "where was I?"}, "Ship"),
        (
            "task_plan",
            {
                "task_id": task,
                "operations": [{"op": "add", "title": "Verify"}],
                "reason": "check it",
            },
            "Verify",
        ),
        ("task_record", {"task_id": task, "finding": "cache is cold"}, "Recorded discovery"),
        ("task_state", {"task_id": task}, "Ship"),
        ("task_list", {"all": True}, SECRET),
        ("memory_search", {"query": "registry"}, SECRET),
        ("memory_query", {"task_id": task, "type": "decision"}, SECRET),
        (
            "conversation_recall",
            {"action": "range", "session": "chat-a", "start_turn": 1, "end_turn": 2},
            SECRET,
        ),
        ("session_list", {"all": True}, ids["session"]),
        ("smart_wait", {"action": "list", "task_id": task}, "approval"),
        ("task_history", {"task_id": task}, "task.created"),
        ("ledger", {"task_id": task}, f"make {SECRET}"),
        ("session_turns", {"session": "chat-a"}, SECRET),
        ("session_context", {"session": "chat-a"}, SECRET),
        ("session_resume", {"session": "chat-a"}, ids["session"]),
        ("smart_wait", {"action": "resolve", "wait_id": ids["wait"], "evidence": "ok"}, "resolved"),
    ]
    called = set()
    for name, body, expected in checks:
        reply = s.op(name, body)
        assert reply.status == 200, (name, reply.text)
        assert expected in reply.text, (name, reply.text[:400])
        assert set(reply.json()) == {"text", "data"}
        called.add(name)
    assert called | {"task_register", "session_append"} == set(api.OPERATIONS)

    key = s.call("GET", "/api/v1/key").json()
    assert key["scope"] == "write" and key["space"] == s.mems[next(iter(s.mems))].space

    page = s.call("GET", "/")
    assert page.status == 200 and SECRET in page.text and "<progress" in page.text
    assert (
        s.call(
            "GET",
            "/",
            key=None,
            headers={
                "Authorization": "Basic "
                + base64.b64encode(f"me:{s.tokens['read']}".encode()).decode()
            },
        ).status
        == 200
    )

    document = s.call("GET", "/api/v1/openapi.json", key=None)
    assert document.status == 200
    spec = document.json()
    assert spec["openapi"] == "3.1.0"
    for name, op in api.OPERATIONS.items():
        body = spec["paths"][f"/api/v1/{name}"]["post"]["requestBody"]
        assert body["content"]["application/json"]["schema"] == op.schema

    # Export streams the journal; importing it into space B adds every event, twice none.
    exported = s.call("GET", "/api/v1/export")
    assert exported.status == 200 and exported.headers["content-type"].startswith(
        "application/x-ndjson"
    )
    lines = exported.text.splitlines()
    assert json.loads(lines[0])["clew"] == "journal" and json.loads(lines[-1])["clew"] == "end"
    events = len(lines) - 2
    again = s.call("POST", "/api/v1/import", raw=exported.body)
    assert again.json()["added"] == 0 and again.json()["skipped"] == events
    into_b = s.call("POST", "/api/v1/import", raw=exported.body, key="other")
    if backend == "sqlite":  # one SQLite file keeps ids unique across its spaces: said so
        assert into_b.status == 400 and "another space" in into_b.json()["error"]
    else:
        assert into_b.status == 200, into_b.text
        assert into_b.json()["added"] == events
        assert s.mems[s.tokens["space-b"]].verify().ok
    assert s.mems[next(iter(s.mems))].verify().ok


def test_errors_are_one_line_json_with_a_status(served: Served) -> None:
    s = served
    task = seed(s)["task"]
    cases = [
        (s.op("task_update", {"task_id": "zzzzzz", "message": "x"}), 404, "task_list"),
        (s.op("task_update", {"task_id": task, "status": "sideways"}), 400, "one of"),
        (s.op("task_update", {"task_id": task}), 400, "needs something to do"),
        (s.op("task_register", {"plan": ["a"]}), 400, "name"),
        (s.op("no_such_tool", {}), 404, "the operations"),
        (s.call("POST", "/api/v1/task_list", raw=b"{not json"), 400, "not valid JSON"),
        (s.call("POST", "/api/v1/task_list", raw=b"[1, 2]"), 400, "JSON object"),
        (s.call("GET", "/api/v1/task_list"), 405, "method"),
        (s.call("GET", "/api/v1/no/where"), 404, "openapi"),  # the dashboard answers a page
        (s.op("task_register", {"name": "x"}, key="read"), 403, "scope write"),
        (s.op("task_list", {}, key=None), 401, "needs a key"),
        (s.call("GET", "/api/v1/requests", key="write"), 403, "admin"),
        (s.call("GET", "/api/v1/requests?limit=x", key="admin"), 400, "limit"),
    ]
    for reply, status, words in cases:
        assert reply.status == status, (status, reply.text)
        error = reply.json()["error"]
        assert words in error and "\n" not in error, error
        assert "Traceback" not in reply.text


def test_host_waits_need_the_operators_option_and_an_admin_key(served: Served) -> None:
    """Without --allow-commands no key adds a command wait; with it, only an admin key
    (tests/test_host_waits.py tries every kind, option and door)."""
    task = seed(served)["task"]
    body = {"action": "add", "task_id": task, "kind": "command", "target": "true"}
    for key in ("write", "admin"):
        refused = served.op("smart_wait", body, key=key)
        assert refused.status == 403 and "--allow-commands" in refused.json()["error"]
    served.server.allow = HostRules(True, (), ())
    refused = served.op("smart_wait", body)
    assert refused.status == 403 and "scope admin" in refused.json()["error"]
    assert served.op("smart_wait", body, key="admin").status == 200


# -- isolation ----------------------------------------------------------------------------------


def _every_request(ids: dict[str, str]) -> list[tuple[str, str, Any]]:
    """Every route, aimed at space A's records."""
    task = ids["task"]
    bodies: dict[str, dict[str, Any]] = {
        "task_register": {"name": "intruder"},
        "task_update": {"task_id": task, "message": "hijacked", "query": "where was I?"},
        "task_plan": {"task_id": task, "operations": [{"op": "remove", "step": 1}]},
        "task_record": {"task_id": task, "resolves": ids["error"], "resolution": "x"},
        "task_state": {"task_id": task, "full": True},
        "task_list": {"all": True},
        "memory_search": {"query": SECRET},
        "memory_query": {"task_id": task},
        "conversation_recall": {"action": "search", "session": ids["session"], "query": SECRET},
        "session_list": {"all": True},
        "smart_wait": {"action": "resolve", "wait_id": ids["wait"]},
        "task_history": {"task_id": task},
        "ledger": {"contains": SECRET},
        "session_append": {
            "session": ids["session"],
            "messages": [{"role": "user", "content": "hi"}],
        },
        "session_turns": {"session": ids["session"]},
        "session_context": {"session": ids["session"]},
        "session_resume": {"session": ids["session"]},
    }
    assert set(bodies) == set(api.OPERATIONS)
    found: list[tuple[str, str, Any]] = [
        ("POST", f"/api/v1/{name}", body) for name, body in bodies.items()
    ]
    found += [
        ("GET", "/api/v1/export", None),
        ("POST", "/api/v1/import", b""),
        ("GET", "/api/v1/key", None),
        ("GET", "/api/v1/requests", None),
        ("GET", "/", None),
        ("GET", f"/tasks/{task}", None),
        ("POST", f"/tasks/{task}/act", b"do=note&text=hijacked&csrf=x"),
        ("GET", "/sessions", None),
        ("GET", f"/sessions/{ids['session']}", None),
        ("GET", "/search?q=Deploy", None),
        (
            "POST",
            "/mcp",
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "task_list", "arguments": {"all": True}},
            },
        ),
    ]
    return found


def test_no_route_reveals_or_changes_another_space(served: Served) -> None:
    s = served
    ids = seed(s)
    home = s.mems[next(iter(s.mems))]
    before = len(home.journal())
    forged = s.tokens["write"].rsplit("_", 1)[0] + "_" + "x" * 43
    secretless = s.tokens["write"].rsplit("_", 1)[0]  # the prefix alone
    strangers: dict[str, str | None] = {
        "another space's key": s.tokens["other"],
        "another space's admin key": s.tokens["other-admin"],
        "a revoked key": s.tokens["revoked"],
        "no key": None,
        "a forged key": forged,
        "a key's prefix alone": secretless,
        "garbage": "clew_nothing",
    }
    for method, path, body in _every_request(ids):
        for who, token in strangers.items():
            raw = body if isinstance(body, bytes) else None
            reply = s.call(
                method,
                path,
                None if raw is not None else body,
                raw=raw,
                key=token,
                headers={"Accept": "application/json, text/event-stream"},
            )
            asked = (json.dumps(body) if not isinstance(body, bytes) else "") + path
            assert SECRET not in reply.text or SECRET in asked, (who, path, reply.text[:300])
            for record in ("task", "decision", "error", "action", "wait"):
                assert ids[record] not in reply.text or ids[record] in asked, (
                    who,
                    path,
                    record,
                    reply.text[:300],
                )
            if token is not None and "another space" in who:
                # B's own key works in B, which holds none of A's records.
                assert reply.status in (200, 202, 400, 403, 404, 406), (who, path, reply.text[:300])
            else:
                assert reply.status == 401, (who, path, reply.status, reply.text[:300])
                if path.startswith(("/api", "/mcp")):
                    assert set(reply.json()) == {"error"}
                else:  # a person is asked for a key
                    assert "name=key" in reply.text
    # A read key of A is refused every route that writes, and its tries change nothing.
    for method, path, body in _every_request(ids):
        name = path.rsplit("/", 1)[-1]
        if (name in api.OPERATIONS and api.scope_needed(name, body) != "read") or name in (
            "import",
            "requests",
        ):
            raw = body if isinstance(body, bytes) else None
            reply = s.call(method, path, None if raw is not None else body, raw=raw, key="read")
            assert reply.status == 403, (path, reply.text)
    assert len(home.journal()) == before  # nothing written to A by any of them
    assert home.get_task(ids["task"]).name == f"Deploy {SECRET}"


def test_a_request_cannot_name_another_space(served: Served) -> None:
    """No field, header or query names the space: the key's is used whatever is said."""
    s = served
    seed(s)
    b = s.tokens["space-b"]
    reply = s.call(
        "POST",
        "/api/v1/task_list?space=" + next(iter(s.mems)),
        {"all": True},
        key="other",
        headers={"X-Clew-Space": next(iter(s.mems))},
    )
    assert reply.status == 200 and SECRET not in reply.text
    assert s.op("task_list", {"all": True, "space": "x"}, key="other").status == 400
    assert s.call("GET", "/api/v1/key", key="other").json()["space"] == b


# -- the keys rule, the log, the rate limit ------------------------------------------------------


def test_loopback_without_keys_serves_the_local_user_until_a_key_exists(db: Path) -> None:
    space = new_space()
    with clew.open(db, space=space) as home:
        server = Server(Spaces(home, None), loopback=True)
        url, stop = serve_in_thread(server)
        try:
            s = Served(url, server, {space: home})
            if home.has_keys():  # PostgreSQL: other tests' keys share the database
                assert s.op("task_list", {}, key=None).status == 401
                return
            assert s.op("task_register", {"name": "local"}, key=None).status == 200
            # A page elsewhere cannot use the keyless server through a visitor's browser:
            # another site's page is refused (403), a rebound name is not this server (421).
            for header, status in (
                ({"Origin": "https://evil.example"}, 403),
                ({"Host": "evil.example:80"}, 421),
                ({"Host": "127.attacker.example:" + url.rsplit(":", 1)[1]}, 421),
                ({"Origin": "http://127.0.0.1:1"}, 403),
            ):
                forged = s.call("POST", "/api/v1/task_list", {}, key=None, headers=header)
                assert forged.status == status, header
                assert "\n" not in forged.json()["error"]
            local = {"Origin": url, "Host": url.split("//")[1]}
            assert s.call("POST", "/api/v1/task_list", {}, key=None, headers=local).status == 200
            token = home.create_key(space, "read").token
            assert s.op("task_list", {"all": True}, key=None).status == 401
            assert "local" in s.op("task_list", {"all": True}, key=token).text
        finally:
            stop()


def test_binding_beyond_loopback_needs_a_key(tmp_path: Path) -> None:
    with clew.open(tmp_path / "s.db", space="a") as home:
        with pytest.raises(ValidationError, match=r"refusing to serve on 0\.0\.0\.0 with no key"):
            check_bind(home, "0.0.0.0")
        assert check_bind(home, "127.0.0.1") is True
        home.create_key("a", "admin")
        assert check_bind(home, "0.0.0.0") is False


def test_the_serve_command_refuses_a_wide_bind_without_keys_in_one_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "clew",
            "--db",
            str(tmp_path / "s.db"),
            "serve",
            "--host",
            "0.0.0.0",
            "--port",
            "0",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "clew keys create" in done.stderr


def test_every_request_is_logged_for_admins(served: Served) -> None:
    s = served
    s.op("task_list", {})
    s.op("task_register", {"name": "x"}, key="read")
    s.op("task_list", {}, key=s.tokens["other"])
    log = s.call("GET", "/api/v1/requests", key="admin").json()["requests"]
    prefix = s.tokens["read"].split("_")[1]
    mine = [(r["route"], r["status"]) for r in log]
    assert ("/api/v1/task_register", 403) in mine and ("/api/v1/task_list", 200) in mine
    assert any(r["key_prefix"] == prefix and r["status"] == 403 for r in log)
    assert {r["space"] for r in log} == {next(iter(s.mems))}  # B's request is not A's to see
    assert all(r["ms"] >= 0 and r["created_at"] and r["method"] in ("GET", "POST") for r in log)
    keys = {k.prefix: k for k in s.mems[next(iter(s.mems))].list_keys()}
    assert keys[prefix].last_used_at is not None


def test_a_key_past_its_rate_gets_429_with_retry_after(db: Path) -> None:
    space = new_space()
    with clew.open(db, space=space) as home:
        token = home.create_key(space, "read").token
        server = Server(Spaces(home, None), loopback=True, rate=0.5, burst=3)
        url, stop = serve_in_thread(server)
        try:
            s = Served(url, server, {space: home})
            statuses = [s.op("task_list", {}, key=token).status for _ in range(5)]
            assert statuses[:3] == [200, 200, 200] and statuses[3:] == [429, 429]
            refused = s.op("task_list", {}, key=token)
            assert refused.headers["retry-after"] == "2"
            assert "rate limited" in refused.json()["error"]
            # Wrong keys are limited by the address they come from.
            wrong = [s.op("task_list", {}, key="clew_nope").status for _ in range(5)]
            assert wrong[:3] == [401, 401, 401] and wrong[3:] == [429, 429]
        finally:
            stop()


@given(
    rate=st.floats(0.1, 100),
    burst=st.integers(1, 50),
    gaps=st.lists(st.floats(0, 5), min_size=1, max_size=200),
)
def test_a_bucket_never_lets_more_through_than_its_burst_and_rate(
    rate: float, burst: int, gaps: list[float]
) -> None:
    limit = RateLimit(rate, burst)
    now, passed = 0.0, 0
    for gap in gaps:
        now += gap
        wait = limit.take("k", now)
        assert wait >= 0
        passed += wait == 0
    assert passed <= burst + rate * now + 1e-6
    assert limit.take("other", now) == 0  # keys have buckets of their own


# -- MCP at /mcp ----------------------------------------------------------------------------------


def test_mcp_over_the_server_uses_the_keys_space_and_scope(served: Served) -> None:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    s = served
    seed(s)

    async def session(token: str) -> tuple[list[str], str, bool]:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
        async with http, Client(streamable_http_client(f"{s.url}/mcp", http_client=http)) as c:
            listed = [t.name for t in (await c.list_tools()).tools]
            found = await c.call_tool("task_list", {"all": True})
            wrote = await c.call_tool("task_register", {"name": "via mcp"})
            return listed, found.content[0].text, bool(wrote.is_error)  # type: ignore[union-attr]

    listed, found, refused = asyncio.run(session(s.tokens["read"]))
    assert set(listed) == {n for n, t in tools.TOOLS.items() if t.read_only}
    assert SECRET in found and refused
    listed, found, refused = asyncio.run(session(s.tokens["other"]))
    assert set(listed) == set(tools.TOOLS) and SECRET not in found and not refused
    assert [t.name for t in s.mems[s.tokens["space-b"]].list_tasks()] == ["via mcp"]


# -- the OpenAPI document, property-tested ----------------------------------------------------

# Bodies of JSON lines are not generated (the route test imports a real export).
_NOT_GENERATED = {"/api/v1/import"}
# Requests generated per operation: bounded so the suite stays fast; set it higher for a
# deeper search by hand (CLEW_API_EXAMPLES=500 pytest tests/test_server.py -k openapi).
EXAMPLES = int(os.environ.get("CLEW_API_EXAMPLES", "12"))


# schemathesis's generators draw from the `random` module now and then, which hypothesis
# deprecates with a warning (the suite makes warnings errors): theirs, not clew's.
@pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisDeprecationWarning")
def test_the_api_keeps_to_its_openapi_document(served: Served) -> None:
    """schemathesis generates requests from each operation's schema (valid and not) and checks
    every answer: no server error, a documented status and content type, a body that fits
    the document's schema."""
    import schemathesis
    from hypothesis import HealthCheck, Phase, settings

    # A body the schema allows can still be refused (400) for what a schema cannot say: an
    # empty name, an update with nothing to do, an id of nothing. That is checked above;
    # here, that every schema-invalid body is refused and every answer is documented.
    from schemathesis.checks import positive_data_acceptance

    seed(served)
    schema = schemathesis.openapi.from_url(f"{served.url}/api/v1/openapi.json")
    headers = {"Authorization": f"Bearer {served.tokens['write']}"}
    tried = 0
    for found in schema.get_all_operations():
        operation = found.ok()
        if operation.path in _NOT_GENERATED:
            continue

        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            database=None,
            phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        @given(case=operation.as_strategy())
        def conforms(case: Any) -> None:
            case.call_and_validate(
                base_url=served.url, headers=headers, excluded_checks=[positive_data_acceptance]
            )

        conforms()
        tried += 1
    assert tried == len(api.OPERATIONS) + 5  # export, key, requests, checkpoint, forget


# -- the keys commands and a server without its packages ------------------------------------------


def test_the_keys_commands_make_list_revoke_and_show_the_log(
    cli: Callable[..., Any], db: Path
) -> None:
    space = new_space()
    made = cli("keys", "create", "--space", space, "--scope", "read", "--name", "ci")
    assert made.code == 0 and made.out.count("\n") == 1 and made.out.startswith("clew_")
    token = made.out.strip()
    prefix = token.split("_")[1]
    assert "shown only now" in made.err
    listed = cli("keys", "list", "--space", space)
    assert prefix in listed.out and "'ci'" in listed.out and "active" in listed.out
    assert token.split("_", 2)[2] not in listed.out  # never the secret again
    with clew.open(db, space=space) as home:
        assert home.authenticate(token).scope == "read"
        from clew.core.credentials import RequestLine

        home.log_requests(
            [
                RequestLine(
                    space,
                    prefix,
                    "POST",
                    "/api/v1/task_list",
                    200,
                    "2026-11-25T10:00:00.000000Z",
                    1.5,
                )
            ]
        )
    log = cli("keys", "log", "--space", space)
    assert "/api/v1/task_list" in log.out and prefix in log.out
    assert cli("keys", "revoke", prefix).code == 0
    assert "revoked" in cli("keys", "list", "--space", space).out
    assert '"revoked_at": "2' in cli("keys", "list", "--space", space, "--json").out


def test_serve_without_its_packages_says_which_extra_in_one_line(
    cli: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in [m for m in sys.modules if m == "clew.server.app"]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "starlette", None)
    monkeypatch.setitem(sys.modules, "starlette.applications", None)
    refused = cli("serve")
    assert refused.code == 2 and refused.err.count("\n") == 1
    from clew.core.installation import install_command

    # The command for how clew was installed: here, this checkout (tests/test_installation.py).
    assert refused.err.endswith(f": {install_command('serve')}\n")
    assert "install -e '" in refused.err and "[serve]'" in refused.err


def test_clew_mcp_port_is_the_same_app_and_keeps_its_keys_rule(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    with clew.open(db, space="default") as home:
        token = home.create_key("default", "read").token
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "clew", "--db", str(db), "mcp", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_listening(server, port)
        s = Served(f"http://127.0.0.1:{port}", None, {}, {})  # type: ignore[arg-type]
        initialize = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
        accept = {
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
        }
        assert s.call("POST", "/mcp", initialize, key=None, headers=accept).status == 401
        answered = s.call("POST", "/mcp", initialize, key=token, headers=accept)
        assert answered.status == 200 and '"serverInfo"' in answered.text
        assert s.op("task_list", {}, key=token).status == 200  # the API is there too
    finally:
        server.terminate()
        _, err = server.communicate(timeout=20)
    assert b"Traceback" not in err, err.decode()


def test_the_request_log_forgets_what_is_older_than_its_days(db: Path, clock: Any) -> None:
    from clew.core.credentials import RequestLine

    space = new_space()
    days = [
        "2026-10-01T00:00:00.000000Z",
        "2026-11-20T00:00:00.000000Z",
        "2026-11-21T12:00:00.000000Z",
    ]
    with clew.open(db, space=space, clock=clock) as home:  # the clock says 2026-11-22 09:00
        home.log_requests([RequestLine(space, None, "GET", "/", 200, at, 1.0) for at in days])
        assert home.prune_requests(30) >= 1  # every space's: other tests' old lines go too
        assert [r.created_at for r in home.list_requests(space)] == days[:0:-1]
        assert home.prune_requests(1) >= 1
        assert [r.created_at for r in home.list_requests(space)] == days[2:]


def test_writes_through_the_api_and_mcp_name_their_key_in_the_journal(served: Served) -> None:
    """Every event a request writes carries `api:<prefix>:` or `mcp:<prefix>:`, the tools' own
    groups included, and the task page names the key beside each."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    s = served
    mem = s.mems[next(iter(s.mems))]
    write, admin = (mem.authenticate(s.tokens[k]).prefix for k in ("write", "admin"))
    before = mem.journal_head()
    task = s.op("task_register", {"name": "Ship", "plan": ["Build", "Run"]}).json()["data"]
    task_id = task["task_id"]
    assert (
        s.op("task_update", {"task_id": task_id, "step": 1, "step_status": "completed"}).status
        == 200
    )
    assert s.op("task_record", {"task_id": task_id, "decision": "use the cache"}).status == 200
    turn = {"role": "user", "content": "hi"}
    assert s.op("session_append", {"session": "s1", "messages": [turn]}).status == 200
    by_api = mem.journal(after=before)
    assert by_api and all(e.correlation_id.startswith(f"api:{write}:") for e in by_api)
    # one request, one group; two requests, two
    assert len({e.correlation_id for e in by_api}) == 4

    async def session(token: str) -> str:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
        async with http, Client(streamable_http_client(f"{s.url}/mcp", http_client=http)) as c:
            wrote = await c.call_tool("task_record", {"task_id": task_id, "finding": "via mcp"})
            return "" if not wrote.is_error else wrote.content[0].text  # type: ignore[union-attr]

    middle = mem.journal_head()
    assert asyncio.run(session(s.tokens["admin"])) == ""
    by_mcp = mem.journal(after=middle)
    assert by_mcp and all(e.correlation_id.startswith(f"mcp:{admin}:") for e in by_mcp)
    page = s.call("GET", f"/tasks/{task_id}", key="write").text
    assert f"key {write} (API)" in page and f"key {admin} (MCP)" in page
    assert mem.verify().ok


def test_a_fresh_group_inside_an_actors_block_keeps_the_actor(mem: clew.Memory) -> None:
    with mem.correlation("api:0123456789ab:outer"), mem.correlation() as inner:
        assert inner.startswith("api:0123456789ab:") and inner != "api:0123456789ab:outer"
    with mem.correlation("plain"), mem.correlation() as inner:
        assert ":" not in inner and inner != "plain"


def _journal_file(path: Path) -> list[bytes]:
    """A journal file of a task with a plan, a decision and an error, from another store."""
    import io

    with clew.open(path, space="elsewhere") as src:
        task = src.create_task("Imported", ["Build", "Run"])
        src.update_step(task.id, 1, status="completed")
        src.add_entry("decision", "imported decision", task_id=task.id)
        src.add_entry("error", "imported error", task_id=task.id)
        out = io.StringIO()
        src.export_events(out)
    return out.getvalue().encode("utf-8").splitlines(keepends=True)


def _post_chunked(s: Served, chunks: list[bytes]) -> Reply:
    """POST /api/v1/import with a chunked body, as a client streaming a file sends it."""
    import http.client

    host, port = s.url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=60)
    try:
        conn.request(
            "POST",
            "/api/v1/import",
            body=iter(chunks),
            encode_chunked=True,
            headers={"Authorization": f"Bearer {s.tokens['write']}"},
        )
        response = conn.getresponse()
        return Reply(response.status, response.read(), dict(response.getheaders()))
    finally:
        conn.close()


def test_import_streams_its_body_and_a_bad_line_leaves_nothing(
    served: Served, tmp_path: Path
) -> None:
    s = served
    mem = s.mems[next(iter(s.mems))]
    lines = _journal_file(tmp_path / "src.db")
    assert len(lines) >= 6
    before = mem.journal_head()
    for bad in (b'{"not": "an event"}\n', b"\xff\xfe not utf-8\n", b"{truncated\n"):
        body = [*lines[:3], bad, *lines[3:]]
        reply = _post_chunked(s, body)
        assert reply.status == 400, reply.text
        error = reply.json()["error"]
        assert "\n" not in error and "line 4" in error, error
        assert mem.journal_head() == before
    cut = _post_chunked(s, lines[:-1])  # no end line: a cut file
    assert cut.status == 400 and mem.journal_head() == before
    assert not [t for t in mem.list_tasks() if t.name == "Imported"]
    # the whole file, a few bytes at a time (lines split across chunks): all of it
    whole = b"".join(lines)
    reply = _post_chunked(s, [whole[i : i + 7] for i in range(0, len(whole), 7)])
    assert reply.status == 200, reply.text
    assert reply.json()["added"] == len(lines) - 2
    assert [t.name for t in mem.list_tasks() if t.name == "Imported"] == ["Imported"]
    assert mem.verify().ok


@given(st.lists(st.binary(max_size=40), max_size=12), st.data())
def test_body_lines_are_the_bodys_lines_however_it_is_chunked(
    parts: list[bytes], data: st.DataObject
) -> None:
    from clew.server.bodies import body_lines

    whole = b"\n".join(p.replace(b"\n", b" ") for p in parts).decode("latin-1").encode()
    cuts = sorted(data.draw(st.lists(st.integers(0, len(whole)), max_size=8)))
    bounds = [0, *cuts, len(whole)]
    chunks = iter([whole[a:b] for a, b in itertools.pairwise(bounds)])
    got = list(body_lines(lambda: next(chunks, None)))
    *ended, last = whole.decode("utf-8").split("\n")  # only "\n" ends a line
    assert got == [line + "\n" for line in ended] + ([last] if last else [])
