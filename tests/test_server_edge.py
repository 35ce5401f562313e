"""`clew serve` at its edge (tests/test_server.py has the routes): the Host a request names,
the client behind a listed proxy, hostile bytes in every part of every route, background tasks
that fail and come back, and the trail a refused request leaves in the request log; on SQLite
and PostgreSQL, over real HTTP on 127.0.0.1 (uvicorn in a thread, or a real `clew serve`)."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import ipaddress
import json
import os
import re
import signal
import socket
import subprocess
import sys
import urllib.parse
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import clew
from clew.core.clock import stamp, utcnow
from clew.core.credentials import RequestLine
from clew.errors import ClewError, ValidationError
from clew.server import api, edge
from clew.server.app import Server, Spaces
from clew.server.edge import Hosts, Proxies
from clew.server.limits import RateLimit
from clew.server.requestlog import RequestLog
from tests.conftest import free_port, wait_listening
from tests.test_server import Reply, Served, _every_request, running, seed, serve_in_thread

ROOT = Path(__file__).resolve().parent.parent
KEYS = (("write", "a", "write"), ("admin", "a", "admin"), ("revoked", "a", "write"))


@contextlib.contextmanager
def serving(db: Path, **options: Any) -> Iterator[Served]:
    """A server of `db` (home space A) with a write, an admin and a revoked key of A."""
    with running(db, KEYS, **options) as found:
        found.server.spaces.home.revoke_key(found.tokens["revoked"])
        yield found


def raw(s: Served, method: str, target: bytes | str, body: bytes = b"", headers: Any = ()) -> Reply:
    """One request sent as given: the target, header names and values are bytes on the wire
    (http.client would refuse the hostile ones)."""
    port = int(s.url.rsplit(":", 1)[1])
    head = [b"%s %s HTTP/1.1" % (method.encode(), _b(target))]
    named = {(_b(k)).lower() for k, _ in headers}
    if b"host" not in named:
        head.append(b"Host: 127.0.0.1:%d" % port)
    head += [b"%s: %s" % (_b(k), _b(v)) for k, v in headers]
    head += [b"Content-Length: %d" % len(body), b"Connection: close"]
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(b"\r\n".join(head) + b"\r\n\r\n" + body)
        reply = http.client.HTTPResponse(sock)
        try:
            reply.begin()
            return Reply(reply.status, reply.read(), dict(reply.getheaders()))
        finally:
            reply.close()


def _b(value: bytes | str) -> bytes:
    return value if isinstance(value, bytes) else value.encode("latin-1")


def one_line(reply: Reply) -> str:
    """The one line a refusal says (JSON's error, or a page's alert)."""
    if reply.headers.get("content-type", "").startswith("application/json"):
        said = json.loads(reply.body)
        said = said.get("error") or said.get("error", {}).get("message") or json.dumps(said)
    else:
        found = re.search(r"role=alert>([^<]*)<", reply.text)
        said = found[1] if found else reply.text.strip()
    assert said and "\n" not in str(said) and "Traceback" not in reply.text, reply.text[:300]
    return str(said)


# -- the Host rule, the proxy rule, the bytes refused: pure ------------------------------------

HOST_RULE = [
    # bind, listed names, Host, served (the server listens on port 8080)
    ("127.0.0.1", (), "127.0.0.1:8080", True),
    ("127.0.0.1", (), "localhost:8080", True),
    ("127.0.0.1", (), "LocalHost:8080", True),
    ("127.0.0.1", (), "127.0.0.1:8081", False),
    ("127.0.0.1", (), "127.0.0.1", False),  # port 80
    ("127.0.0.1", (), "127.attacker.example:8080", False),  # issue 24's rebinding
    ("127.0.0.1", (), "127.0.0.2:8080", False),
    ("127.0.0.1", (), "[::1]:8080", False),
    ("127.0.0.1", (), "attacker.example:8080", False),
    ("127.0.0.1", (), "", False),
    ("127.0.0.1", (), "evil@127.0.0.1:8080", False),
    ("127.0.0.1", (), "127.0.0.1:8080/x", False),
    ("127.0.0.1", ("memory.example.com",), "memory.example.com", True),
    ("127.0.0.1", ("memory.example.com",), "MEMORY.example.com:443", True),
    ("127.0.0.1", ("memory.example.com",), "memory.example.com.", True),
    ("127.0.0.1", ("memory.example.com",), "evil.memory.example.com", False),
    ("127.0.0.1", ("memory.example.com",), "memory.example.com.evil", False),
    ("127.0.0.1", (".example.com",), "a.b.example.com", True),
    ("127.0.0.1", (".example.com",), "example.com", True),
    ("127.0.0.1", (".example.com",), "badexample.com", False),
    ("::1", (), "[::1]:8080", True),
    ("::1", (), "[0:0:0:0:0:0:0:1]:8080", True),
    ("::1", (), "localhost:8080", True),
    ("::1", (), "127.0.0.1:8080", False),
    ("localhost", (), "127.0.0.1:8080", True),
    ("localhost", (), "[::1]:8080", True),
    ("0.0.0.0", (), "192.0.2.7:8080", True),  # an IP literal cannot be rebound
    ("0.0.0.0", (), "[2001:db8::1]:8080", True),
    ("0.0.0.0", (), "localhost:8080", True),
    ("0.0.0.0", (), "192.0.2.7:9999", False),
    ("0.0.0.0", (), "memory.example.com:8080", False),  # names must be listed
    ("0.0.0.0", ("memory.example.com",), "memory.example.com", True),
    ("::", (), "[2001:db8::1]:8080", True),
    ("192.0.2.7", (), "192.0.2.7:8080", True),
    ("192.0.2.7", (), "192.0.2.8:8080", False),
    ("192.0.2.7", (), "localhost:8080", False),
]


@pytest.mark.parametrize(("bind", "listed", "host", "served"), HOST_RULE)
def test_the_host_rule(bind: str, listed: tuple[str, ...], host: str, served: bool) -> None:
    assert Hosts(bind, listed).allows(host, 8080) is served


def test_allowed_hosts_and_proxies_that_are_not_refuse_in_one_line() -> None:
    for bad in ("*", "http://memory.example.com", "memory.example.com:443", "a/b", ""):
        with pytest.raises(ValidationError, match="--allowed-host") as said:
            Hosts("127.0.0.1", [bad])
        assert "\n" not in str(said.value)
    for bad in ("*", "nginx", "10.0.0.0/33"):
        with pytest.raises(ValidationError, match="--forwarded-allow-ips"):
            Proxies([bad])
    assert Proxies(["127.0.0.1, 10.0.0.0/8", "::1"]).trusts("10.9.8.7")


def test_an_origin_is_this_site_only_when_it_names_the_same_host_and_port() -> None:
    for origin, host, same in [
        (None, "127.0.0.1:8080", True),
        ("http://127.0.0.1:8080", "127.0.0.1:8080", True),
        ("https://memory.example.com", "memory.example.com", True),
        ("https://memory.example.com:443", "memory.example.com", True),
        ("http://127.0.0.1:3000", "127.0.0.1:8080", False),  # another local site's page
        ("http://localhost:8080", "127.0.0.1:8080", False),
        ("null", "127.0.0.1:8080", False),
        ("http://127.0.0.1:8080.evil", "127.0.0.1:8080", False),
    ]:
        assert edge.same_origin(origin, host) is same, (origin, host)


_addresses = st.one_of(
    st.ip_addresses(v=4).filter(lambda a: a not in ipaddress.ip_network("10.0.0.0/8")),
    st.ip_addresses(v=6),
).map(str)


@given(spoofed=st.lists(st.text(max_size=30), max_size=6), real=_addresses, peer=_addresses)
def test_a_client_cannot_choose_its_address_through_a_listed_proxy(
    spoofed: list[str], real: str, peer: str
) -> None:
    """Whatever a client puts in X-Forwarded-For, the proxy's own entry (the last) is what
    counts; from a peer no one listed, the header counts for nothing."""
    proxies = Proxies(["127.0.0.1", "10.0.0.0/8"])
    sent = ", ".join([*spoofed, real])  # nginx's $proxy_add_x_forwarded_for
    assert proxies.client("127.0.0.1", sent) == real
    assert proxies.client("10.0.0.5", f"{sent}, 10.1.2.3") == real  # two proxies
    assert proxies.client("127.0.0.1", real) == real  # the recipe's $remote_addr
    assert proxies.client(peer, sent) == peer  # not a listed proxy
    assert Proxies().client("127.0.0.1", sent) == "127.0.0.1"  # the default: none listed


@given(
    burst=st.integers(1, 5),
    tries=st.lists(st.tuples(st.integers(0, 30), st.floats(0, 2)), min_size=1, max_size=300),
)
def test_forgetting_full_buckets_keeps_memory_bounded_and_lifts_no_limit(
    burst: int, tries: list[tuple[int, float]]
) -> None:
    """With room for 4 buckets, clients from 31 addresses: a client never gets more than
    its burst plus its refill, and the buckets kept stay within twice the live ones."""
    limit, rate = RateLimit(0.5, burst, most=4), 0.5
    now, passed = 0.0, dict[int, int]()
    for who, gap in tries:
        now += gap
        passed[who] = passed.get(who, 0) + (limit.take(str(who), now) == 0)
        assert len(limit) <= max(8, 2 * 31)
    assert all(n <= burst + rate * now + 1e-6 for n in passed.values())


@given(st.text(max_size=200))
def test_a_route_in_the_log_is_always_storable_and_plain_text_is_itself(text: str) -> None:
    route = edge.route_of(urllib.parse.quote(text, safe="/").encode("ascii"))
    assert edge.safe(route) == route and "\x00" not in route
    route.encode("utf-8")  # no lone surrogate
    plain = "".join(c for c in text if c.isprintable() and c not in "\\")[:300]
    assert edge.route_of(urllib.parse.quote(plain, safe="/").encode("ascii")) == plain


def test_the_route_of_hostile_paths_keeps_what_was_sent_escaped() -> None:
    assert edge.route_of(b"/%00") == "/\\x00"
    assert edge.route_of(b"/tasks/%ff%fe") == "/tasks/\\xff\\xfe"
    assert edge.route_of(b"/%ED%A0%80") == "/\\xed\\xa0\\x80"  # a surrogate's bytes
    assert edge.route_of(b"/a%5Cx00") == "/a\\\\x00"  # a backslash, not a NUL
    assert edge.route_of(b"/caf%C3%A9") == "/café"
    assert len(edge.route_of(b"/" + b"x" * 5000)) == edge.ROUTE_CHARS


@pytest.mark.parametrize(
    ("path", "query", "headers", "said"),
    [
        (b"/%00", b"", [], "NUL"),
        (b"/tasks/%ff", b"", [], "not UTF-8"),
        (b"/tasks/%ED%A0%80", b"", [], "not UTF-8"),
        (b"/tasks/%0a", b"", [], "control character"),
        (b"/" + b"x" * 3000, b"", [], "the path is 3,001 bytes"),
        (b"/search", b"q=%00", [], "query string holds the NUL"),
        (b"/search", b"q=%ff", [], "query string is not UTF-8"),
        (b"/search", b"q=a%1bb", [], "query string holds a control"),
        (b"/search", b"q=" + b"x" * 5000, [], "query string is 5,002 bytes"),
        (b"/", b"", [(b"Authorization", b"Bearer \xff")], "authorization is not UTF-8"),
        (b"/", b"", [(b"Cookie", b"clew_keys=\x01")], "cookie holds a control"),
        (b"/", b"", [(b"X-Other", b"a" * 9000)], "x-other is 9,000 bytes"),
        (b"/", b"", [(b"X-Other", b"\x00")], "x-other holds the NUL"),
        (b"/tasks/abc", b"q=caf%C3%A9+%E2%9C%93", [(b"User-Agent", b"\xe9t\xe9")], None),
    ],
)
def test_what_the_edge_refuses(
    path: bytes, query: bytes, headers: list[tuple[bytes, bytes]], said: str | None
) -> None:
    found = edge.refusal(path, query, headers)
    assert (found is None) if said is None else (found is not None and said in found), found


# -- hosts and proxies over HTTP ------------------------------------------------------------------


def _routes(ids: dict[str, str]) -> list[tuple[str, str, Any]]:
    """Every route: tests/test_server.py's list and the public ones."""
    return [
        *_every_request(ids),
        ("GET", "/api/v1/openapi.json", None),
        ("GET", "/login", None),
        ("POST", "/login", b"key=x"),
        ("GET", "/static/live.js", None),
        ("GET", "/events", None),
        ("POST", "/use", b"prefix=x"),
        ("POST", "/logout", b"csrf=x"),
    ]


def _send(s: Served, method: str, path: str, body: Any, headers: dict[str, str]) -> Reply:
    data = body if isinstance(body, bytes) else b"" if body is None else json.dumps(body).encode()
    sent = {"Authorization": f"Bearer {s.tokens['admin']}", **headers}
    if path == "/mcp":
        sent |= {
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
        }
    return raw(s, method, path, data, list(sent.items()))


def test_a_host_the_server_does_not_answer_to_is_refused_on_every_route(tmp_path: Path) -> None:
    """One rule for every route, MCP's included: a rebound name is 421 with one line, a page
    of another site 403; a listed name is served."""
    with serving(tmp_path / "s.db", allowed_hosts=("memory.example.com",)) as s:
        ids = seed(s)
        port = s.url.rsplit(":", 1)[1]
        for method, path, body in _routes(ids):
            for host in (f"127.attacker.example:{port}", f"attacker.example:{port}", "127.0.0.1"):
                reply = _send(s, method, path, body, {"Host": host})
                assert reply.status == 421, (path, host, reply.status)
                assert "does not answer to Host" in one_line(reply)
            foreign = _send(s, method, path, body, {"Origin": "http://127.0.0.1:3000"})
            assert foreign.status == 403 and "another site" in one_line(foreign), path
            if path != "/events":  # a stream: answered, then held open
                listed = _send(s, method, path, body, {"Host": "memory.example.com"})
                assert listed.status not in (421, 500), (path, listed.status, listed.text)
                assert "another site" not in listed.text, path
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
        assert _send(s, "POST", "/mcp", initialize, {"Host": f"localhost:{port}"}).status == 200


def test_a_wildcard_bind_takes_ip_literals_and_listed_names_only(tmp_path: Path) -> None:
    with serving(tmp_path / "s.db", bind="0.0.0.0") as s:  # listening on 127.0.0.1 still
        port = s.url.rsplit(":", 1)[1]
        served = (
            (f"127.0.0.1:{port}", 200),
            (f"localhost:{port}", 200),
            (f"memory.example.com:{port}", 421),
            ("127.0.0.1:1", 421),
        )
        for host, status in served:
            assert _send(s, "GET", "/api/v1/key", None, {"Host": host}).status == status, host


def _recipe() -> tuple[dict[str, str], list[str]]:
    """docs/server.md's nginx recipe: the headers it sets (name: value with nginx's
    variables), and the options of the `clew serve` line that goes with it."""
    page = (ROOT / "docs" / "server.md").read_text(encoding="utf-8")
    nginx = re.search(r"```nginx\n(.*?)```", page, re.S)
    assert nginx, "docs/server.md has an nginx block"
    sets = dict(re.findall(r"proxy_set_header\s+(\S+)\s+(.+?);", nginx[1]))
    line = re.search(r"clew [^\n]*serve[^\n]*--forwarded-allow-ips[^\n]*", page)
    assert line, "docs/server.md says how to start clew serve behind nginx"
    return sets, line[0].split("#")[0].split()


def _through_nginx(
    sets: dict[str, str], client: str, host: str, sent: dict[str, str]
) -> dict[str, str]:
    """The headers nginx sends on with `sets` for a request from `client` with `sent`."""
    before = [sent["X-Forwarded-For"]] if "X-Forwarded-For" in sent else []
    values = {
        "$remote_addr": client,
        "$host": host.split(":")[0],
        "$scheme": "https",
        "$http_host": host,
        "$proxy_add_x_forwarded_for": ", ".join([*before, client]),
    }
    out = dict(sent)
    for name, value in sets.items():
        out = {k: v for k, v in out.items() if k.lower() != name.lower()}
        out[name] = re.sub(r"\$\w+", lambda m: values[m[0]], value)
    return out


def test_the_nginx_recipe_keeps_the_per_address_limit_whatever_a_client_sends(
    tmp_path: Path,
) -> None:
    """The test plays nginx as docs/server.md configures it (a listed proxy on 127.0.0.1
    that sets the headers of its recipe) in front of `clew serve` with the recipe's options:
    wrong keys and the login form, each with a different X-Forwarded-For of the client's
    own, are limited by the client's real address all the same."""
    from clew.cli import build_parser
    from clew.cli.server import server_options

    sets, line = _recipe()
    assert sets.get("X-Forwarded-For") == "$remote_addr" and sets.get("Host") == "$host"
    args = build_parser(line[1:]).parse_args([a for a in line[1:] if a != "clew"])
    options = server_options(args)
    assert options.forwarded_allow_ips and options.allowed_hosts
    public = options.allowed_hosts[0]
    with serving(
        tmp_path / "s.db",
        rate=0.001,
        burst=3,
        bind="127.0.0.1",
        allowed_hosts=options.allowed_hosts,
        forwarded_allow_ips=options.forwarded_allow_ips,
    ) as s:
        tries = (
            ("203.0.113.7", "POST", "/api/v1/task_list", b"{}"),
            ("198.51.100.9", "POST", "/login", b"key=clew_x"),
        )
        for client, method, path, body in tries:
            statuses = []
            for n in range(8):
                sent = {
                    "X-Forwarded-For": f"10.0.0.{n}",
                    "Authorization": f"Bearer clew_{n}",
                    "Forwarded": f"for=10.1.0.{n}",  # nginx passes it on: never read
                    "Content-Type": "application/x-www-form-urlencoded",
                }
                headers = _through_nginx(sets, client, public, sent)
                statuses.append(raw(s, method, path, body, list(headers.items())).status)
            assert statuses == [401] * 3 + [429] * 5, (client, statuses)
        # Another real client is not slowed by them; the log names the real addresses' requests.
        other = _through_nginx(sets, "192.0.2.99", public, {"Authorization": "Bearer clew_y"})
        assert raw(s, "POST", "/api/v1/task_list", b"{}", list(other.items())).status == 401


def test_a_keyless_server_serves_nothing_that_came_through_a_proxy(tmp_path: Path) -> None:
    """With no key in the store a loopback server serves the local user, but not a client a
    listed proxy forwards: that client is not on this machine."""
    with clew.open(tmp_path / "s.db", space="a") as home:
        server = Server(Spaces(home, None), loopback=True, forwarded_allow_ips=("127.0.0.1",))
        url, stop = serve_in_thread(server)
        try:
            s = Served(url, server, {"a": home})
            assert s.op("task_list", {}, key=None).status == 200  # the local user
            proxied = raw(
                s, "POST", "/api/v1/task_list", b"{}", [("X-Forwarded-For", "203.0.113.7")]
            )
            assert proxied.status == 401 and "needs a key" in one_line(proxied)
        finally:
            stop()


def test_x_forwarded_for_from_an_unlisted_peer_moves_nothing(tmp_path: Path) -> None:
    """The default: no proxy listed, so 500 wrong keys each claiming another address are one
    address's tries (issue 24: they never got a 429), and so are the login form's."""
    with serving(tmp_path / "s.db", rate=0.001, burst=3) as s:
        statuses = [
            raw(
                s,
                "POST",
                "/api/v1/task_list",
                b"{}",
                [
                    ("X-Forwarded-For", f"10.{n // 250}.0.{n % 250}"),
                    ("Authorization", "Bearer clew_0123456789ab_" + "x" * 43),
                ],
            ).status
            for n in range(500)
        ]
        assert statuses[:3] == [401] * 3 and set(statuses[3:]) == {429}
        login = raw(
            s,
            "POST",
            "/login",
            b"key=x",
            [
                ("X-Forwarded-For", "10.9.9.9"),
                ("Content-Type", "application/x-www-form-urlencoded"),
            ],
        )
        assert login.status == 429


# -- hostile bytes in every part of every route, on both backends ----------------------------------

LONG = "x" * 1_000_001  # past every text limit (a message, an entry: 1,000,000 characters)
HOSTILE_TEXT = {"NUL": "\x00", "a lone surrogate": "\ud800", "an over-long value": LONG}
# In a path or query, as a client sends them: NUL, a surrogate's UTF-8 (not UTF-8 at all),
# a byte that is not UTF-8, a control character, and a value past the edge's limit.
HOSTILE_URL = {
    "NUL": "%00",
    "a lone surrogate": "%ED%A0%80",
    "invalid UTF-8": "%FF",
    "a control character": "%1B",
    "an over-long value": "x" * 5000,
}
HOSTILE_HEADER = {
    "invalid UTF-8": b"\xff\xfe",
    "a control character": b"a\x1bb",
    "an over-long value": b"k" * 9000,
}


def _leaves(value: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Where the strings of a JSON value are (paths of keys and indexes)."""
    if isinstance(value, str):
        yield at
    elif isinstance(value, dict):
        for key, child in value.items():
            yield from _leaves(child, (*at, key))
    elif isinstance(value, list):
        for n, child in enumerate(value):
            yield from _leaves(child, (*at, n))


def _put(value: Any, at: tuple[Any, ...], new: Any) -> Any:
    if not at:
        return new
    copy = list(value) if isinstance(value, list) else dict(value)
    copy[at[0]] = _put(value[at[0]], at[1:], new)
    return copy


def _mcp(s: Served, body: dict[str, Any], session: str = "") -> Reply:
    headers = [
        ("Authorization", f"Bearer {s.tokens['write']}"),
        ("Accept", "application/json, text/event-stream"),
        ("Content-Type", "application/json"),
        ("MCP-Protocol-Version", "2025-06-18"),
    ]
    if session:
        headers.append(("Mcp-Session-Id", session))
    return raw(s, "POST", "/mcp", json.dumps(body).encode(), headers)


def _mcp_said(reply: Reply) -> dict[str, Any]:
    """The JSON-RPC message an MCP answer holds (as JSON, or as a server-sent event)."""
    text = reply.text
    if "data: " in text:
        text = [ln[6:] for ln in text.splitlines() if ln.startswith("data: ")][-1]
    return dict(json.loads(text))


def test_hostile_bytes_anywhere_get_one_line_and_break_nothing(db: Path, backend: str) -> None:
    """NUL, a lone surrogate, bytes that are not UTF-8, control characters and over-long
    values, in the path, the query, the headers, the body and the ids of every route (every
    operation, export, import, key, requests, openapi, each page and form of the dashboard,
    /events, /mcp, /login): each is refused with one line (400, or a tool error on /mcp),
    never a 500. Then MCP still initializes, /events still announces a write, and the log
    holds every one of those requests, its route stored as an escape."""
    with serving(db) as s:
        ids = seed(s)
        home = s.server.spaces.home
        began = stamp(utcnow())
        key = [("Authorization", f"Bearer {s.tokens['write']}")]
        form = [*key, ("Content-Type", "application/x-www-form-urlencoded")]
        refused: list[tuple[str, Reply]] = []  # (what was sent, the answer): each a 400

        def send(
            what: str, method: str, target: str | bytes, body: bytes = b"", headers: Any = ()
        ) -> None:
            refused.append((what, raw(s, method, target, body, [*key, *headers])))

        routes = _routes(ids)
        # The body: each string of each operation's arguments, and a key, made hostile.
        for _, path, body in routes:
            name = path.rsplit("/", 1)[-1]
            if name not in api.OPERATIONS:
                continue
            for kind, value in HOSTILE_TEXT.items():
                places = list(_leaves(body))
                for at in places if kind != "an over-long value" else places[:1]:
                    sent = json.dumps(_put(body, at, value)).encode()
                    send(f"{kind} in {name}'s {at}", "POST", path, sent)
                if kind != "an over-long value":
                    send(
                        f"{kind} in a key of {name}",
                        "POST",
                        path,
                        json.dumps({**body, value: 1}).encode(),
                    )
            send(f"invalid UTF-8 in {name}'s body", "POST", path, b'{"x": "\xff\xfe"}')
        # A journal file to import with each hostile value in an event.
        journal = s.call("GET", "/api/v1/export").body.splitlines(keepends=True)
        for kind, value in (("NUL", "\\u0000"), ("a lone surrogate", "\\ud800")):
            line = journal[1].replace(b'"id":', f'"hostile": "{value}", "id":'.encode(), 1)
            send(
                f"{kind} in an imported event",
                "POST",
                "/api/v1/import",
                b"".join([journal[0], line, *journal[2:]]),
            )
        send(
            "invalid UTF-8 in an imported event",
            "POST",
            "/api/v1/import",
            b"".join([journal[0], journal[1][:-3] + b"\xff}\n", *journal[2:]]),
        )
        # Ids in the path, and the path itself.
        for kind, value in HOSTILE_URL.items():
            for target in (
                f"/tasks/{value}",
                f"/tasks/{value}/act",
                f"/sessions/{value}",
                f"/api/v1/{value}",
                f"/{value}",
                f"/mcp/{value}",
            ):
                method = "POST" if target.startswith(("/api", "/mcp")) or "act" in target else "GET"
                send(f"{kind} in the path {target[:40]}", method, target)
        # The query of every route, and the headers of every route.
        for method, path, body in routes:
            data = body if isinstance(body, bytes) else json.dumps(body or {}).encode()
            for kind, value in HOSTILE_URL.items():
                send(f"{kind} in {path}'s query", method, f"{path}?q={value}", data)
            for kind, raw_value in HOSTILE_HEADER.items():
                for header in (
                    "Authorization",
                    "Cookie",
                    "Origin",
                    "X-Forwarded-For",
                    "Mcp-Session-Id",
                ):
                    sent = [(header, raw_value)]
                    if header == "Authorization":  # instead of the good key
                        refused.append(
                            (f"{kind} in {path}'s {header}", raw(s, method, path, data, sent))
                        )
                    else:
                        send(f"{kind} in {path}'s {header}", method, path, data, sent)
        # The dashboard's forms: a good token, a hostile field.
        cookie = [("Cookie", f"clew_keys={s.tokens['write']}")]
        page = raw(s, "GET", f"/tasks/{ids['task']}", b"", [*cookie]).text
        token = re.search(r'name=csrf value="([^"]+)"', page)[1]  # type: ignore[index]
        for kind, value in HOSTILE_URL.items():
            if kind == "an over-long value":
                value = "x" * (300 * 1024)  # past the form's limit
            for path, fields in (
                (f"/tasks/{ids['task']}/act", f"do=note&csrf={token}&text="),
                ("/login", "key="),
                ("/use", f"csrf={token}&prefix="),
                ("/logout", "csrf="),
            ):
                refused.append(
                    (
                        f"{kind} in the form of {path}",
                        raw(s, "POST", path, (fields + value).encode(), [*form[1:], *cookie]),
                    )
                )
        for what, reply in refused:
            assert reply.status == 400, (what, reply.status, reply.text[:300])
            one_line(reply)
        # NUL in a header line: the HTTP parser (h11) refuses it, 400, before clew sees it.
        below = raw(s, "GET", "/api/v1/key", b"", [*key, ("X-Other", b"a\x00b")])
        assert below.status == 400 and "\n" not in below.text.strip()

        # /mcp: hostile arguments to a tool are a tool error the model can act on; a body
        # that is not JSON text (a lone surrogate) is the protocol's parse error, 400.
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
        opened = _mcp(s, initialize)
        assert opened.status == 200, opened.text
        session = opened.headers["mcp-session-id"]
        _mcp(s, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
        tool_errors = 0
        for kind, value in HOSTILE_TEXT.items():
            tries = [{"task_id": value, "message": "x"}]
            if kind != "an over-long value":  # a message has no limit short of the body's
                tries += [{"task_id": ids["task"], "message": value}, {value: 1}]
            for args in tries:
                call = {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "tools/call",
                    "params": {"name": "task_update", "arguments": args},
                }
                reply = _mcp(s, call, session)
                if kind == "a lone surrogate":
                    assert reply.status == 400, reply.text[:300]
                    continue
                assert reply.status == 200, (kind, reply.text[:300])
                result = _mcp_said(reply)["result"]
                assert result["isError"], (kind, result)
                assert "\n" not in result["content"][0]["text"]
                tool_errors += 1
        assert tool_errors == 4
        assert home.get_task(ids["task"]).name.startswith("Deploy")  # none of it written

        # Nothing broke: MCP initializes through the SDK's client, /events announces a write.
        asyncio.run(_mcp_lists_tools(s))
        _events_announce_a_write(s, ids["task"])
        # The log holds every hostile request (those the HTTP parser let through: all of
        # these), routes stored as escapes.
        s.server.flush()
        logged = [r for r in home.list_requests(None, limit=100_000) if r.created_at >= began]
        statuses = [r.status for r in logged]
        assert statuses.count(400) >= len(refused) + 2, (statuses.count(400), len(refused))
        routes_logged = {r.route for r in logged}
        for expected in (
            "/\\x00",
            "/tasks/\\xff",
            "/tasks/\\xed\\xa0\\x80",
            "/api/v1/\\x1b",
            "/sessions/" + "x" * 290,
        ):
            assert any(r.startswith(expected) for r in routes_logged), expected


async def _mcp_lists_tools(s: Served) -> None:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {s.tokens['write']}"})
    async with http, Client(streamable_http_client(f"{s.url}/mcp", http_client=http)) as c:
        assert "task_update" in [t.name for t in (await c.list_tools()).tools]


def _events_announce_a_write(
    s: Served, task_id: str, meanwhile: Callable[[], None] = lambda: None
) -> None:
    """Follow /events, write through the API (after `meanwhile`), hear the new head."""
    port = int(s.url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(
            f"GET /events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer"
            f" {s.tokens['write']}\r\n\r\n".encode()
        )
        seen = b""

        def heads() -> list[int]:
            return [int(n) for n in re.findall(rb"event: journal\ndata: (\d+)", seen)]

        while not heads():
            seen += sock.recv(4096)
        meanwhile()
        assert s.op("task_update", {"task_id": task_id, "message": "still here"}).status == 200
        while len(heads()) < 2:  # bounded by the socket's timeout
            seen += sock.recv(4096)
        assert heads()[-1] > heads()[0]


# -- background tasks fail and come back ----------------------------------------------------------


def test_a_failing_background_task_is_said_and_started_again(
    db: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """The log's store write failing (not as a busy store: a bug, a driver error), the head
    poller failing, MCP's session manager stopping: each is said on stderr and started
    again; MCP, /events and the API keep answering, and no logged line is lost."""
    with serving(db) as s:
        ids = seed(s)
        home = s.server.spaces.home
        began = stamp(utcnow())
        real_log, real_head = home.log_requests, home.journal_head

        def broken_log(lines: Any) -> None:
            raise RuntimeError("the disk is on fire")

        home.log_requests = broken_log  # type: ignore[method-assign]
        answered = [s.call("GET", "/api/v1/key").status for _ in range(5)]
        s.server.flush()  # fails: said, the lines kept in their spill file
        assert answered == [200] * 5

        fails = [1]

        def head_once() -> int:
            if fails and fails.pop():
                raise RuntimeError("the poller tripped")
            return real_head()

        def trip_the_poller() -> None:
            home.journal_head = head_once  # type: ignore[method-assign]

        _events_announce_a_write(s, ids["task"], trip_the_poller)
        assert not fails  # the poller did fail, and a new one announced the write

        door = s.server.mcp
        assert door is not None and door.manager is not None
        first = door.manager
        group = first._task_group  # the SDK's own: stopping it stops the manager
        loop = group.cancel_scope._host_task.get_loop()
        loop.call_soon_threadsafe(group.cancel_scope.cancel)
        asyncio.run(_mcp_lists_tools_again(s, first))

        home.log_requests = real_log  # type: ignore[method-assign]
        home.journal_head = real_head  # type: ignore[method-assign]
        s.server.flush()
        logged = [r for r in home.list_requests(home.space, limit=1000) if r.created_at >= began]
        assert [r.route for r in logged].count("/api/v1/key") == 5
    err = capfd.readouterr().err
    assert "the request log could not be written to the store (RuntimeError: the disk is" in err
    assert "clew: the dashboard's head poller failed; starting it again" in err
    assert "clew: MCP's session manager stopped; starting it again" in err


async def _mcp_lists_tools_again(s: Served, gone: Any) -> None:
    """MCP answers through a new session manager (waiting for it to start, not for time)."""
    import anyio

    door = s.server.mcp
    assert door is not None
    while door.manager is None or door.manager is gone:
        await anyio.sleep(0.02)
    await _mcp_lists_tools(s)


# -- the audit trail ----------------------------------------------------------------------------


def test_refused_requests_are_logged_with_the_key_tried_and_its_space(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A wrong secret for a known key, a revoked key, the login form's wrong key and the 429
    that follows are logged with the key's prefix and space, so the space's admin sees the
    attempts on its keys (the API and `clew keys log`); an unknown prefix is logged with
    no space; a refused try is no use of the key."""
    from clew.cli import main

    with serving(db, rate=0.001, burst=4) as s:
        home = s.server.spaces.home
        a = home.space
        mine, revoked = (s.tokens[k].split("_")[1] for k in ("write", "revoked"))
        wrong = f"clew_{mine}_{'x' * 43}"
        stranger = "clew_0123456789ab_" + "y" * 43
        assert s.op("task_list", {}, key=wrong).status == 401
        assert s.op("task_list", {}, key=s.tokens["revoked"]).status == 401
        assert s.op("task_list", {}, key=stranger).status == 401
        login = raw(
            s,
            "POST",
            "/login",
            f"key={wrong}".encode(),
            [("Content-Type", "application/x-www-form-urlencoded")],
        )
        assert login.status == 401
        assert s.op("task_list", {}, key=wrong).status == 429  # the address's fifth try
        assert s.call("GET", "/api/v1/requests", key="write").status == 403
        seen = s.call("GET", "/api/v1/requests", key="admin").json()["requests"]
        tried = [(r["key_prefix"], r["route"], r["status"]) for r in seen]
        assert (mine, "/api/v1/task_list", 401) in tried
        assert (revoked, "/api/v1/task_list", 401) in tried
        assert (mine, "/login", 401) in tried
        assert (mine, "/api/v1/task_list", 429) in tried
        assert (mine, "/api/v1/requests", 403) in tried
        assert {r["space"] for r in seen} == {a}
        assert "0123456789ab" not in {r["key_prefix"] for r in seen}  # no space's to show
        everyone = home.list_requests(None, limit=10_000)
        assert any(r.key_prefix == "0123456789ab" and r.space == "" for r in everyone)
        keys = {k.prefix: k for k in home.list_keys(a)}
        assert keys[revoked].last_used_at is None  # tried, refused: not a use
        capsys.readouterr()
        assert main(["--db", str(db), "keys", "log", "--space", a]) == 0
        shown = capsys.readouterr().out
        assert f"401  POST   /api/v1/task_list  key {revoked}" in shown
        assert f"401  POST   /login  key {mine}" in shown


# -- the request log survives a SIGKILL ------------------------------------------------------------


def test_a_sigkilled_server_loses_no_answered_request(db: Path, tmp_path: Path) -> None:
    """A real `clew serve` answers N requests and is killed with SIGKILL at once; started
    again, its log holds all N, once each."""
    space = os.environ.get("CLEW_SPACE", "default")
    with clew.open(db, space=space) as home:
        token = home.create_key(space, "read").token
    prefix = token.split("_")[1]
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "clew",
        "--db",
        str(db),
        "serve",
        "--port",
        str(port),
        "--rate",
        "1000",
        "--burst",
        "1000",
    ]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_listening(server, port)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        n = 150
        for _ in range(n):
            conn.request("GET", "/api/v1/key", headers={"Authorization": f"Bearer {token}"})
            reply = conn.getresponse()
            assert reply.status == 200
            reply.read()
        server.send_signal(signal.SIGKILL)  # straight after the last answer
        conn.close()
        server.wait(timeout=30)
    finally:
        server.kill()
        server.communicate(timeout=30)
    again = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_listening(again, port)  # the spill file is folded before it listens
        with clew.open(db, space=space) as home:
            mine = [r for r in home.list_requests(space, limit=10_000) if r.key_prefix == prefix]
        assert len(mine) == n and len({r.id for r in mine}) == n
    finally:
        again.terminate()
        _, err = again.communicate(timeout=30)
    assert b"Traceback" not in err, err.decode()


def test_a_spill_file_folded_twice_adds_its_lines_once(tmp_path: Path) -> None:
    """A crash between a fold's commit and the file's removal leaves the file: folded again
    at the next start, it adds nothing twice. A line the spill file cannot take waits in
    memory, and a torn last line (a process killed inside its write) is skipped, said."""
    with clew.open(tmp_path / "s.db", space="a") as home:
        log = RequestLog(home, str(tmp_path / "spill"))
        log.open()
        for n in range(3):
            log.note(RequestLine("a", None, "GET", f"/{n}", 200, stamp(utcnow()), 1.0))
        kept = list((tmp_path / "spill").iterdir())
        saved = kept[0].read_bytes()
        assert log.fold() == 3
        kept[0].write_bytes(saved + b'{"id": "torn')  # back, as if never removed; cut
        assert log.fold() == 3 and len(home.list_requests("a")) == 3
        spill, log._fd = log._fd, os.open("/dev/full", os.O_WRONLY)  # the disk is full
        log.note(RequestLine("a", None, "GET", "/later", 200, stamp(utcnow()), 1.0))
        os.close(log._fd)
        log._fd = spill
        assert log.fold() == 1
        assert [r.route for r in home.list_requests("a")] == ["/later", "/2", "/1", "/0"]
        log.close()
        assert not list((tmp_path / "spill").iterdir())


def test_clew_mcp_port_takes_the_servers_options(tmp_path: Path) -> None:
    """`clew mcp --port` has `clew serve`'s rate limit and Host options (issue 24: it
    limited the local user at a burst of 60, with no option)."""
    db = tmp_path / "s.db"
    with clew.open(db, space="default") as home:
        token = home.create_key("default", "read").token
    port = free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "clew",
            "--db",
            str(db),
            "mcp",
            "--port",
            str(port),
            "--burst",
            "2",
            "--rate",
            "0.01",
            "--allowed-host",
            "memory.example.com",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_listening(server, port)
        s = Served(f"http://127.0.0.1:{port}", None, {}, {"read": token})  # type: ignore[arg-type]
        named = [("Authorization", f"Bearer {token}"), ("Host", "memory.example.com")]
        assert raw(s, "GET", "/api/v1/key", b"", named).status == 200
        assert s.call("GET", "/api/v1/key", key="read").status == 200
        assert s.call("GET", "/api/v1/key", key="read").status == 429
    finally:
        server.terminate()
        _, err = server.communicate(timeout=30)
    assert b"Traceback" not in err, err.decode()


def test_every_session_operation_refuses_a_lone_surrogate_or_an_over_long_id(
    mem: clew.Memory,
) -> None:
    """Issue 24: a lone surrogate in a session id was a 500 on five session operations; with
    any entry point (the facade here, the server in the test above) it is one line."""
    mem.start_session(key="s")
    turn = [{"role": "user", "content": "hi"}]
    for bad in ("\ud800", "s\udcff", "x" * 1_001):
        calls: dict[str, Callable[[str], object]] = {
            "get_session": mem.get_session,
            "list_turns": mem.list_turns,
            "assemble_context": mem.assemble_context,
            "resume": mem.resume,
            "append_turns": lambda bad: mem.append_turns(bad, turn),
            "search_all": lambda bad: mem.search_all("hi", session_id=bad),
            "get_task": mem.get_task,  # no id: not found (the API: a 400)
        }
        for name, call in calls.items():
            with pytest.raises(ValidationError if name != "get_task" else ClewError) as refused:
                call(bad)
            said = str(refused.value)
            assert "\n" not in said and len(said) < 200, (name, said)
