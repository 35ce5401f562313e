"""The ASGI app of `clew serve` (and of `clew mcp --port`): keys, the request log, the rate
limit, and the routes, each a thin call of the facade or of the operations (api.py).

The keys rule: a request's key (`Authorization: Bearer clew_...`, the password of HTTP Basic,
or on the dashboard's paths the key cookie of web.py) names its space and scope; nothing in the
request can name another space. A store with no key at all is served only on loopback, to any
local user, as the server's own space with every right (a local user can open the store file
anyway); once a key exists, every request needs one, on loopback too. Bound elsewhere, the
server refuses to start without a key.

The request log is kept in memory and written about once a second (and at shutdown), in one
transaction with the keys' last use: a write per request would double the store's writes.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import json
import queue
import sys
import threading
import time
import traceback
from collections.abc import AsyncIterator, Callable, Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

import anyio
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from clew import __version__, tools
from clew.clock import stamp, utcnow
from clew.credentials import RequestLine
from clew.errors import AuthenticationError, ClewError, ValidationError
from clew.history import actor_of
from clew.models import to_jsonable
from clew.origin import NOTHING, HostRules, Origin, for_scope
from clew.server import api, markup, web
from clew.server.checkpoints import EVERY_SECONDS, Keeper, answer
from clew.server.limits import RateLimit, retry_after

if TYPE_CHECKING:
    from clew.memory import Memory

MAX_BODY = 64 * 1024 * 1024  # the most a request body may hold (as the CLI's --max-input-mb)
PUBLIC = frozenset({f"{api.PREFIX}/openapi.json"})  # no key needed: they reveal no record
FLUSH_SECONDS = 1.0
PRUNE_SECONDS = 3600.0  # how often the request log drops what is older than --log-days


class Caller(NamedTuple):
    """Who a request is: its key's prefix (None: a keyless loopback store), space, scope."""

    prefix: str | None
    space: str
    scope: str
    name: str | None = None  # the key's name, shown as who is looking


def is_loopback(host: str) -> bool:
    """Whether binding `host` serves this machine only."""
    return host in ("localhost", "::1", "[::1]") or host.startswith("127.")


class Spaces:
    """One Memory per space, opened on first use (the server's own space is `home`)."""

    def __init__(self, home: Memory, opener: Callable[[str], Memory] | None) -> None:
        self.home = home
        self._opener = opener
        self._open: dict[str, Memory] = {home.space: home}
        self._lock = threading.Lock()

    def get(self, space: str) -> Memory:
        """The Memory of `space`."""
        with self._lock:
            found = self._open.get(space)
            if found is None:
                if self._opener is None:
                    raise AuthenticationError(
                        f"this server serves only space {self.home.space!r}; use a key of it"
                    )
                found = self._opener(space)
                if found.settings.worker == "process":  # a server lives long: a thread
                    found.settings = found.settings._replace(worker="thread")
                self._open[space] = found
            return found

    def close(self) -> None:
        """Close every Memory this opened (not `home`, which its opener closes)."""
        with self._lock:
            for mem in self._open.values():
                if mem is not self.home:
                    mem.close()
            self._open = {self.home.space: self.home}


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=headers)


class Server:
    """The app's state: the spaces, the rate limit, the log; the Door the MCP server asks."""

    def __init__(
        self,
        spaces: Spaces,
        *,
        loopback: bool,
        context: tools.Context = tools.NO_CONTEXT,
        rate: float = 20.0,
        burst: int = 60,
        log_days: int = 30,
        clock: Callable[[], float] = time.monotonic,
        allow: HostRules = NOTHING,
        checkpoints: Keeper | None = None,
    ) -> None:
        self.spaces = spaces
        self.checkpoints = checkpoints or Keeper(spaces)
        self.loopback = loopback
        self.context = context
        self.allow = allow  # what waits may make this host do, for admin keys (origin.py)
        self.limit = RateLimit(rate, burst)
        self._clock = clock
        self._log: list[RequestLine] = []
        self._log_lock = threading.Lock()
        self.log_days = log_days
        self._pruned = -PRUNE_SECONDS  # when the log was last pruned (monotonic)

    # -- the Door of mcp_server ---------------------------------------------------------

    def memory(self, request: Any) -> Memory:
        """The Memory of the request's space."""
        return self.spaces.get(self.caller(request).space)

    def scope(self, request: Any) -> str:
        """The request's key's scope."""
        return self.caller(request).scope

    def actor(self, request: Any) -> str:
        """The correlation id the request's writes are journaled under (its key's prefix)."""
        return web.actor(self.caller(request), "mcp")

    def tool_context(self, request: Any) -> tools.Context:
        """The tools' context for the request: the server's defaults, and what its key may
        make this host do (an admin what the operator allowed, other keys nothing)."""
        return self.context_of(self.caller(request))

    def context_of(self, caller: Caller) -> tools.Context:
        """The tools' context for `caller` (see `tool_context`)."""
        return self.context._replace(host=for_scope(caller.scope, self.allow))

    @property
    def served(self) -> HostRules:
        """What the operator allowed waits to make this host do (to admin keys)."""
        return self.allow

    def caller(self, request: Any) -> Caller:
        """Who the request is (set by the keys middleware before any route runs)."""
        found = request.scope.get("clew.caller") if request is not None else None
        if not isinstance(found, Caller):
            raise AuthenticationError("no key was checked for this request")
        return found

    # -- keys --------------------------------------------------------------------------

    def take(self, who: str) -> float:
        """Take one request from `who`'s bucket: 0, or the seconds to wait."""
        return self.limit.take(who, self._clock())

    def identify(self, headers: dict[str, str], path: str = "") -> Caller:
        """The caller a request's Authorization header names (on the dashboard's paths, or
        its key cookie); AuthenticationError if none."""
        token = _token(headers.get("authorization", ""))
        if token is None and web.is_dashboard(path):
            held = web.cookie_keys(headers.get("cookie", ""))
            token = held[0] if held else None
        home = self.spaces.home
        if token is None:
            if self.loopback and _local(headers) and not home.has_keys():
                return Caller(None, home.space, "admin")
            raise AuthenticationError(
                "this server needs a key: send 'Authorization: Bearer clew_...' with a key"
                " from `clew keys create`"
            )
        key = home.authenticate(token, touch=False)  # the log records its use
        self.spaces.get(key.space)  # a server of one space refuses another's key here
        return Caller(key.prefix, key.space, key.scope, key.name)

    # -- the request log -----------------------------------------------------------------

    def note(self, caller: Caller | None, method: str, path: str, status: int, ms: float) -> None:
        """Keep a request for the log (written by `flush`)."""
        line = RequestLine(
            caller.space if caller else "",
            caller.prefix if caller else None,
            method,
            path[:300],
            status,
            stamp(utcnow()),
            round(ms, 3),
        )
        with self._log_lock:
            self._log.append(line)

    def flush(self) -> None:
        """Write the requests kept so far to the store's log."""
        with self._log_lock:
            lines, self._log = self._log, []
        home = self.spaces.home
        try:
            if lines:
                home.log_requests(lines)
            if self._clock() - self._pruned >= PRUNE_SECONDS:
                self._pruned = self._clock()
                home.prune_requests(self.log_days)  # the log of a long-lived server stays small
        except ClewError:
            with self._log_lock:  # kept for the next flush: a busy store loses nothing
                self._log[:0] = lines

    # -- the middleware ------------------------------------------------------------------

    def keys(self, app: ASGIApp) -> ASGIApp:
        """Wrap `app`: check each request's key and rate, set its caller, log it."""

        async def checked(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http":
                await app(scope, receive, send)
                return
            started = time.perf_counter()
            status = [500]

            async def sending(message: Message) -> None:
                if message["type"] == "http.response.start":
                    status[0] = int(message["status"])
                await send(message)

            caller: Caller | None = None
            path = str(scope["path"])
            try:
                if path in PUBLIC or path in web.PUBLIC:
                    await app(scope, receive, sending)
                    return
                headers = {
                    k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]
                }
                try:
                    caller = await anyio.to_thread.run_sync(self.identify, headers, path)
                except ClewError as exc:
                    # Refusals count against the client's address: a flood of wrong keys
                    # is slowed down like a flood of right ones.
                    client = scope.get("client") or ("?", 0)
                    wait = self.limit.take(f"address {client[0]}", self._clock())
                    if wait > 0:
                        await self._limited(wait)(scope, receive, sending)
                        return
                    if web.is_dashboard(path) and path != "/events":  # a person: the form
                        said = "" if "authorization" not in headers else api.error_text(exc)
                        login = HTMLResponse(markup.login(said), 401)
                        await login(scope, receive, sending)
                        return
                    challenge = {"WWW-Authenticate": 'Bearer realm="clew"'}
                    await _error(401, api.error_text(exc), challenge)(scope, receive, sending)
                    return
                wait = self.limit.take(caller.prefix or "-", self._clock())
                if wait > 0:
                    await self._limited(wait)(scope, receive, sending)
                    return
                scope["clew.caller"] = caller
                await app(scope, receive, sending)
            finally:
                ms = (time.perf_counter() - started) * 1000
                self.note(caller, str(scope["method"]), path, status[0], ms)

        return checked

    def _limited(self, wait: float) -> Response:
        return _error(
            429,
            f"rate limited: a key (or an address without one) may make {self.limit.rate:g}"
            f" requests a second ({self.limit.burst} at once); retry after"
            f" {retry_after(wait)} s",
            {"Retry-After": retry_after(wait)},
        )

    # -- the routes ----------------------------------------------------------------------

    async def operation(self, request: Request) -> Response:
        """POST /api/v1/<name>: a tool, or another operation, with a JSON body."""
        name = str(request.path_params["name"])
        caller = self.caller(request)
        if name not in api.OPERATIONS:
            return _error(
                404, f"no operation is called {name!r}; the operations: {', '.join(api.OPERATIONS)}"
            )
        arguments = await _arguments(request)
        if isinstance(arguments, Response):
            return arguments

        def call() -> tools.ToolResult:
            mem = self.spaces.get(caller.space)
            with mem.correlation(web.actor(caller, "api")):
                return api.run(mem, name, arguments, self.context_of(caller))

        try:
            api.check_scope(caller.scope, api.scope_needed(name, arguments, self.allow), name)
            result = await anyio.to_thread.run_sync(call)
        except ClewError as exc:
            status = api.status_of(exc)
            headers = {"Retry-After": "1"} if status == 503 else None
            return _error(status, api.error_text(exc), headers)
        except Exception as exc:  # a bug of clew's: say so, keep serving
            traceback.print_exc(file=sys.stderr)
            return _error(500, f"clew failed inside {name} ({type(exc).__name__}); a bug in clew")
        return JSONResponse({"text": result.text, "data": to_jsonable(result.data)})

    async def forget(self, request: Request) -> Response:
        """POST /api/v1/forget: remove content, for an admin key; the tombstones name it."""
        caller = self.caller(request)
        try:
            api.check_scope(caller.scope, "admin", "forget")
        except ClewError as exc:
            return _error(api.status_of(exc), api.error_text(exc))
        arguments = await _arguments(request)
        if isinstance(arguments, Response):
            return arguments
        door = web.actor(caller, "api")

        def call() -> tools.ToolResult:
            mem = self.spaces.get(caller.space)
            with mem.correlation(door):
                return api.forget(mem, arguments, actor_of(door))

        try:
            result = await anyio.to_thread.run_sync(call)
        except ClewError as exc:
            status = api.status_of(exc)
            return _error(
                status, api.error_text(exc), {"Retry-After": "1"} if status == 503 else None
            )
        return JSONResponse({"text": result.text, "data": to_jsonable(result.data)})

    async def export(self, request: Request) -> Response:
        """GET /api/v1/export: the space's journal file, streamed as it is read."""
        mem = self.spaces.get(self.caller(request).space)
        return StreamingResponse(_exported(mem), media_type="application/x-ndjson")

    async def import_(self, request: Request) -> Response:
        """POST /api/v1/import: replay a journal file into the space, streamed: the body is
        read a line at a time into the facade's streamed import (one transaction, as `clew
        import` does), so a file of any length takes constant memory and a bad line anywhere
        leaves nothing imported."""
        caller = self.caller(request)
        try:
            api.check_scope(caller.scope, "write", "import")
        except ClewError as exc:
            return _error(api.status_of(exc), api.error_text(exc))
        mem = self.spaces.get(caller.space)
        # Who imports, from the key: a file may add only what this key could add itself (a
        # forget in it may rewrite content the space holds only for an admin key).
        by = Origin("api", caller.prefix, for_scope(caller.scope, self.allow), caller.scope)
        send, receive = anyio.create_memory_object_stream[bytes](16)

        async def take() -> bytes | None:
            try:
                return await receive.receive()
            except anyio.EndOfStream:
                return None

        def replay() -> Any:
            try:
                lines = body_lines(lambda: anyio.from_thread.run(take))
                return mem.import_events(lines, by=by)
            finally:  # the feeder stops at its next chunk
                anyio.from_thread.run_sync(receive.close)

        async def feed() -> None:
            async with send:
                with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                    async for chunk in request.stream():
                        await send.send(chunk)

        outcome: Any = None
        async with anyio.create_task_group() as group:
            group.start_soon(feed)
            try:
                outcome = await anyio.to_thread.run_sync(replay)
            except ClewError as exc:
                outcome = _error(api.status_of(exc), api.error_text(exc))
            finally:
                group.cancel_scope.cancel()  # a body cut short: the feeder waits no more
        return outcome if isinstance(outcome, Response) else JSONResponse(to_jsonable(outcome))

    async def key(self, request: Request) -> Response:
        """GET /api/v1/key: the request's key, its space and scope."""
        return JSONResponse(self.caller(request)._asdict())

    async def requests(self, request: Request) -> Response:
        """GET /api/v1/requests: the space's request log (admin keys)."""
        caller = self.caller(request)
        try:
            api.check_scope(caller.scope, "admin", "the request log")
        except ClewError as exc:
            return _error(api.status_of(exc), api.error_text(exc))
        try:
            limit = int(request.query_params.get("limit", "100"))
        except ValueError:
            return _error(400, "limit must be a whole number (1-1000)")
        if not 1 <= limit <= 1000:
            return _error(400, "limit must be a whole number (1-1000)")
        await anyio.to_thread.run_sync(self.flush)
        found = await anyio.to_thread.run_sync(
            lambda: self.spaces.home.list_requests(caller.space, limit=limit)
        )
        return JSONResponse({"requests": to_jsonable(found)})

    async def checkpoint(self, request: Request) -> Response:
        """GET /api/v1/checkpoint: a sealed checkpoint of the key's space, to keep."""
        space = self.caller(request).space
        try:
            made = await anyio.to_thread.run_sync(self.checkpoints.of, space)
        except ClewError as exc:
            return _error(api.status_of(exc), api.error_text(exc))
        return JSONResponse(answer(made))

    async def openapi(self, request: Request) -> Response:
        """GET /api/v1/openapi.json: the API's OpenAPI 3.1 document."""
        return JSONResponse(api.openapi(__version__))


def _local(headers: dict[str, str]) -> bool:
    """Whether a request without a key comes from this machine's own pages and tools: its
    Host is a loopback name and any Origin is too. A web page elsewhere can make a browser
    send a request to 127.0.0.1 (or rebind its own name to it), but not with these."""

    def loopback(netloc: str) -> bool:
        host = netloc.rsplit("@", 1)[-1]
        host = host[1 : host.index("]")] if host.startswith("[") and "]" in host else host
        return is_loopback(host.split(":")[0] if host.count(":") <= 1 else host)

    origin = headers.get("origin")
    if origin is not None and not loopback(origin.partition("://")[2].split("/")[0]):
        return False
    return loopback(headers.get("host", ""))


def _token(header: str) -> str | None:
    """The key an Authorization header carries: Bearer KEY, or Basic with KEY as password."""
    kind, _, value = header.strip().partition(" ")
    if kind.lower() == "bearer" and value.strip():
        return value.strip()
    if kind.lower() == "basic" and value.strip():
        try:
            decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            return ""  # a malformed header is a wrong key, not no key
        return decoded.partition(":")[2]
    return "" if header.strip() else None


async def _arguments(request: Request) -> dict[str, Any] | Response:
    """A request's JSON object body (none: an empty object), or the 400 it gets."""
    raw = await _body(request)
    if isinstance(raw, Response):
        return raw
    try:
        arguments = json.loads(raw) if raw.strip() else {}
    except (ValueError, RecursionError):
        return _error(400, "the request body is not valid JSON: send a JSON object")
    if not isinstance(arguments, dict):
        return _error(400, "the request body must be a JSON object")
    return arguments


async def _body(request: Request) -> bytes | Response:
    """The request's body, or the 400 that says it is too large."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY:
        return _error(400, f"the request body is larger than {MAX_BODY >> 20} MB")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            return _error(400, f"the request body is larger than {MAX_BODY >> 20} MB")
        chunks.append(chunk)
    return b"".join(chunks)


def body_lines(next_chunk: Callable[[], bytes | None], limit: int = MAX_BODY) -> Iterator[str]:
    """A request body's lines as text, from its chunks as they come (only "\n" ends a line:
    the data may hold other line breaks); ValidationError for a line that is not UTF-8 or
    longer than `limit` bytes."""
    buffer, number = bytearray(), 0

    def text(raw: bytes | bytearray) -> str:
        try:
            return bytes(raw).decode("utf-8")
        except UnicodeDecodeError:
            raise ValidationError(
                f"line {number} of the journal file is not UTF-8 text; send what export"
                " gives; nothing was imported"
            ) from None

    while (chunk := next_chunk()) is not None:
        buffer += chunk
        start = 0
        while (end := buffer.find(b"\n", start)) >= 0:
            number += 1
            yield text(buffer[start : end + 1])
            start = end + 1
        del buffer[:start]
        if len(buffer) > limit:
            raise ValidationError(
                f"line {number + 1} of the journal file is larger than {limit >> 20} MB;"
                " nothing was imported"
            )
    if buffer:
        number += 1
        yield text(buffer)


class _Pipe:
    """A text file whose writes go to a bounded queue in chunks: the export, written by its
    thread, read by the response as it goes (bounded: a slow client slows the export)."""

    CHUNK = 64 * 1024

    def __init__(self) -> None:
        self.queue: queue.Queue[bytes | BaseException | None] = queue.Queue(maxsize=16)
        self.closed = threading.Event()  # the client went away: stop writing
        self._buffer: list[str] = []
        self._size = 0

    def write(self, text: str) -> int:
        self._buffer.append(text)
        self._size += len(text)
        if self._size >= self.CHUNK:
            self.flush()
        return len(text)

    def flush(self) -> None:
        if self._buffer:
            self.put("".join(self._buffer).encode("utf-8"))
            self._buffer, self._size = [], 0

    def put(self, item: bytes | BaseException | None) -> None:
        while not self.closed.is_set():
            with contextlib.suppress(queue.Full):
                self.queue.put(item, timeout=0.5)
                return
        raise _Gone


class _Gone(Exception):
    """The client stopped reading the export."""


async def _exported(mem: Memory) -> AsyncIterator[bytes]:
    pipe = _Pipe()

    def produce() -> None:
        try:
            mem.export_events(pipe)  # type: ignore[arg-type]  # a file's write and flush
            pipe.flush()
            pipe.put(None)
        except _Gone:
            return
        except BaseException as exc:
            with contextlib.suppress(_Gone):
                pipe.put(exc)

    worker = threading.Thread(target=produce, name="clew-export", daemon=True)
    worker.start()
    try:
        while True:
            item = await anyio.to_thread.run_sync(pipe.queue.get)
            if item is None:
                return
            if isinstance(item, BaseException):
                # The status line is sent: the stream ends without its end line, which an
                # import refuses, so a cut export is never taken for a whole one.
                print(f"clew: export failed: {item}", file=sys.stderr)
                return
            yield item
    finally:
        pipe.closed.set()


async def _not_found(request: Request, exc: Exception) -> Response:
    code = exc.status_code if isinstance(exc, HTTPException) else 500
    if web.is_dashboard(request.url.path):  # a person's browser: a page with a way back
        said = {404: "no such page", 405: "this page does not take that method"}
        return web.refused(code, said.get(code, "the request could not be served"))
    said = {404: "no such route; the API is described at /api/v1/openapi.json",
            405: "this route does not take that method; see /api/v1/openapi.json"}  # fmt: skip
    return _error(code, said.get(code, "the request could not be served"))


def build_app(
    server: Server, *, loopback: bool, mcp: bool = True
) -> tuple[Starlette, Callable[[], contextlib.AbstractAsyncContextManager[None]]]:
    """The Starlette app of `server`: its routes, the keys middleware around them, and MCP
    at /mcp; with the lifespan that runs MCP's sessions and the log's flusher."""
    routes: list[Any] = [
        Route(f"{api.PREFIX}/openapi.json", server.openapi, methods=["GET"]),
        Route(f"{api.PREFIX}/export", server.export, methods=["GET"]),
        Route(f"{api.PREFIX}/import", server.import_, methods=["POST"]),
        Route(f"{api.PREFIX}/key", server.key, methods=["GET"]),
        Route(f"{api.PREFIX}/forget", server.forget, methods=["POST"]),
        Route(f"{api.PREFIX}/requests", server.requests, methods=["GET"]),
        Route(f"{api.PREFIX}/checkpoint", server.checkpoint, methods=["GET"]),
        Route(f"{api.PREFIX}/{{name}}", server.operation, methods=["POST"]),
    ]
    board = web.Dashboard(server)
    routes += board.routes()
    session_manager: Any = None
    if mcp:
        from mcp.server.transport_security import TransportSecuritySettings

        from clew.mcp_server import build_server

        mcp_server = build_server(None, server.context, door=server)
        # On loopback the SDK refuses a Host header that is not local (DNS rebinding); behind
        # a proxy the Host is the public name, and the keys are what guard the server.
        security = None if loopback else TransportSecuritySettings(
            enable_dns_rebinding_protection=False
        )  # fmt: skip
        mcp_app = mcp_server.streamable_http_app(
            streamable_http_path="/mcp", host="127.0.0.1", transport_security=security
        )
        routes = [*mcp_app.routes, *routes]
        session_manager = mcp_server.session_manager

    @contextlib.asynccontextmanager
    async def lifespan(app: Any = None) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            if session_manager is not None:
                await stack.enter_async_context(session_manager.run())
            async with anyio.create_task_group() as group:
                group.start_soon(_flushing, server)
                group.start_soon(board.heads.run)
                if server.checkpoints.file is not None:
                    group.start_soon(server.checkpoints.run)
                try:
                    yield
                finally:
                    group.cancel_scope.cancel()
            await anyio.to_thread.run_sync(server.flush)
            await anyio.to_thread.run_sync(server.checkpoints.write_quietly)

    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={HTTPException: _not_found},
    )
    # Inside the keys middleware (added after it, so it runs within): the caller is known.
    stamped = functools.partial(
        server.checkpoints.headers,
        paths=(f"{api.PREFIX}/",),
        skip=frozenset({*PUBLIC, f"{api.PREFIX}/checkpoint"}),
    )
    app.add_middleware(_Wrapped, wrap=stamped)
    app.add_middleware(_Wrapped, wrap=server.keys)
    return app, lifespan


class _Wrapped:
    """Starlette middleware that applies a function of the app (`Server.keys`)."""

    def __init__(self, app: ASGIApp, wrap: Callable[[ASGIApp], ASGIApp]) -> None:
        self._app = wrap(app)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._app(scope, receive, send)


async def _flushing(server: Server) -> None:
    while True:
        await anyio.sleep(FLUSH_SECONDS)
        await anyio.to_thread.run_sync(server.flush)


def check_bind(home: Memory, host: str) -> bool:
    """Whether `host` is loopback; refuse (ValidationError) a wider bind with no key."""
    loopback = is_loopback(host)
    # Read the keys even on loopback: a role that may not (a PostgreSQL member) is refused
    # now, in one line, rather than on every request.
    keyed = home.has_keys()
    if not loopback and not keyed:
        raise ValidationError(
            f"refusing to serve on {host} with no key: anyone who reaches it could read and"
            " change the store; make one first (clew keys create --space SPACE --scope admin),"
            " or bind 127.0.0.1"
        )
    return loopback


async def run_server(
    home: Memory,
    *,
    host: str,
    port: int,
    opener: Callable[[str], Memory] | None = None,
    context: tools.Context = tools.NO_CONTEXT,
    rate: float = 20.0,
    burst: int = 60,
    log_days: int = 30,
    ready: Callable[[int], None] | None = None,
    allow: HostRules = NOTHING,
    checkpoint_file: str | None = None,
    checkpoint_every: float = EVERY_SECONDS,
) -> None:
    """Serve until interrupted (`ready` is told the port once it listens); admin keys may
    add the waits `allow` lets them (nothing by default); with `checkpoint_file`, append the
    spaces' checkpoints to it (server/checkpoints.py)."""
    import uvicorn

    loopback = check_bind(home, host)
    spaces = Spaces(home, opener)
    keeper = Keeper(spaces, checkpoint_file, checkpoint_every)
    # The first lines now: a file that cannot be written stops the start, in one line.
    await anyio.to_thread.run_sync(keeper.write)
    server = Server(
        spaces, loopback=loopback, context=context, rate=rate, burst=burst, log_days=log_days,
        allow=allow,
        checkpoints=keeper,
    )  # fmt: skip
    app, _ = build_app(server, loopback=loopback)
    # Open event streams would hold a stop for their lifetime; cut them after a moment.
    config = uvicorn.Config(
        app, host=host, port=port, log_level="warning", lifespan="on", timeout_graceful_shutdown=2
    )
    runner = uvicorn.Server(config)
    try:
        if ready is None:
            await runner.serve()
        else:
            async with anyio.create_task_group() as group:
                group.start_soon(runner.serve)
                while not runner.started:
                    await anyio.sleep(0.02)
                ready(runner.servers[0].sockets[0].getsockname()[1])
    finally:
        spaces.close()


def serve(
    home: Memory,
    *,
    host: str,
    port: int,
    opener: Callable[[str], Memory] | None = None,
    context: tools.Context = tools.NO_CONTEXT,
    rate: float = 20.0,
    burst: int = 60,
    log_days: int = 30,
    allow: HostRules = NOTHING,
    checkpoint_file: str | None = None,
    checkpoint_every: float = EVERY_SECONDS,
) -> None:
    """Run the server in this thread until interrupted, saying where it listens."""

    def said(bound: int) -> None:
        shown = f"[{host}]" if ":" in host else host
        print(f"clew: serving http://{shown}:{bound}/ (API /api/v1, MCP /mcp)", file=sys.stderr)

    anyio.run(
        lambda: run_server(
            home, host=host, port=port, opener=opener, context=context, rate=rate, burst=burst,
            log_days=log_days, ready=said, allow=allow, checkpoint_file=checkpoint_file,
            checkpoint_every=checkpoint_every,
        )
    )  # fmt: skip
