"""The ASGI app of `clew serve` (and of `clew mcp --port`): keys, the request log, the rate
limit, and the routes, each a thin call of the facade or of the operations (api.py).

The keys rule: a request's key (`Authorization: Bearer clew_...`, the password of HTTP Basic,
or on the dashboard's paths the key cookie of web.py) names its space and scope; nothing in the
request can name another space. A store with no key at all is served only on loopback, to any
local user, as the server's own space with every right (a local user can open the store file
anyway); once a key exists, every request needs one, on loopback too. Bound elsewhere, the
server refuses to start without a key.

Before any of that, the edge (edge.py): a request whose path, query or headers hold bytes no
route could take is answered 400, one whose Host the server does not answer to 421, one a
browser sent from another site's page 403; and the client's address is the socket's, or what
a listed proxy says it is.

The request log: each request's line goes to a spill file before its answer begins, and the
files are folded into the store about once a second, in one transaction with the keys' last
use (requestlog.py): a store write per request would double the store's writes. A refused
request is logged with the key prefix it tried and that key's space, so an admin of the space
sees the attempts on its keys.

The background tasks (the log's flusher, the dashboard's head poller, MCP's session manager)
each run under `kept`: a failure is said on stderr and the task started again, so none of
them can take MCP, `/events` or the log down with it.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import threading
import time
import traceback
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any, NamedTuple

import anyio
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from clew import __version__
from clew.core.clock import stamp, utcnow
from clew.core.credentials import Caller, RequestLine
from clew.core.origin import NOTHING, HostRules, Origin, for_scope
from clew.errors import AuthenticationError, ClewError, StoreBusyError, ValidationError
from clew.models import to_jsonable
from clew.server import api, edge, markup, web
from clew.server.bodies import body_lines, exported, json_arguments, json_error
from clew.server.callers import Said, is_local, key_of
from clew.server.checkpoints import EVERY_SECONDS, Keeper, answer
from clew.server.limits import RateLimit, retry_after
from clew.server.mcp_endpoint import McpEndpoint
from clew.server.requestlog import RequestLog, default_folder
from clew.tasks.history import actor_of
from clew.tools import registry as tools

if TYPE_CHECKING:
    from clew.memory import Memory

PUBLIC = frozenset({f"{api.PREFIX}/openapi.json"})
PAGE_POLICY = edge.page_policy(
    markup.STYLE
)  # the dashboard's pages' Content-Security-Policy  # no key needed: they reveal no record
FLUSH_SECONDS = 1.0
PRUNE_SECONDS = 3600.0  # how often the request log drops what is older than --log-days


is_loopback = edge.is_loopback


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


def _scope_refusal(caller: Caller, needed: str, what: str) -> Response | None:
    """The 403 a caller whose key's scope is below `needed` gets for `what`, or None."""
    try:
        api.check_scope(caller.scope, needed, what)
    except ClewError as exc:
        return json_error(api.status_of(exc), api.error_text(exc))
    return None


class Server:
    """The app's state: the spaces, the edge's rules, the rate limit, the log; the Door the
    MCP server asks."""

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
        bind: str = "127.0.0.1",
        allowed_hosts: tuple[str, ...] = (),
        forwarded_allow_ips: tuple[str, ...] = (),
        log_folder: str | None = None,
        allow: HostRules = NOTHING,
        checkpoints: Keeper | None = None,
    ) -> None:
        self.spaces = spaces
        self.checkpoints = checkpoints or Keeper(spaces)
        self.loopback = loopback
        self.context = context
        self.allow = allow  # what waits may make this host do, for admin keys (origin.py)
        self.limit = RateLimit(rate, burst)
        self.hosts = edge.Hosts(bind, allowed_hosts)
        self.proxies = edge.Proxies(forwarded_allow_ips)
        self._clock = clock
        self.log = RequestLog(spaces.home, log_folder or default_folder(spaces.home))
        self.log_days = log_days
        self._pruned = -PRUNE_SECONDS  # when the log was last pruned (monotonic)
        self._failing = ""  # the flush failure last said on stderr
        self.mcp: McpEndpoint | None = None  # the /mcp endpoint, once build_app made it

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

    def identify(self, headers: dict[str, str], path: str = "", client: str = "") -> Caller:
        """The caller a request's Authorization header names (on the dashboard's paths, or
        its key cookie); AuthenticationError if none, naming the key prefix tried."""
        token = key_of(headers.get("authorization", ""))
        if token is None and web.is_dashboard(path):
            held = web.cookie_keys(headers.get("cookie", ""))
            token = held[0] if held else None
        home = self.spaces.home
        if token is None:
            if self.loopback and is_local(headers, client) and not home.has_keys():
                return Caller(None, home.space, "admin")
            raise AuthenticationError(
                "this server needs a key: send 'Authorization: Bearer clew_...' with a key"
                " from `clew keys create`"
            )
        key = home.authenticate(token, touch=False)  # the log records its use
        try:
            self.spaces.get(key.space)  # a server of one space refuses another's key here
        except AuthenticationError as exc:
            raise AuthenticationError(str(exc), prefix=key.prefix, space=key.space) from None
        return Caller(key.prefix, key.space, key.scope, key.name)

    # -- the request log -----------------------------------------------------------------

    def start(self) -> None:
        """Begin the request log's spill file (OSError if its folder cannot be written) and
        fold in what a server of this store left unfolded."""
        if not self.log.is_open:
            self.log.open()
        self.flush()

    def note(self, said: Said, method: str, route: str, ms: float) -> None:
        """Log a request, before its answer goes out (requestlog.py)."""
        said.noted = True
        line = RequestLine(
            said.space,
            said.prefix,
            edge.safe(method)[:20],
            route,
            said.status,
            stamp(utcnow()),
            round(ms, 3),
        )
        self.log.note(line)

    def flush(self) -> None:
        """Fold the request log's spill files into the store (and prune it, hourly). A
        failure is said on stderr, once until a flush succeeds; its lines wait in their
        files for the next flush."""
        home = self.spaces.home
        try:
            self.log.fold()
            if self._clock() - self._pruned >= PRUNE_SECONDS:
                self._pruned = self._clock()
                home.prune_requests(self.log_days)  # the log of a long-lived server stays small
            self._failing = ""
        except StoreBusyError:  # the next flush, a second on, tries again
            pass
        except Exception as exc:
            said = f"{type(exc).__name__}: {exc}"
            if said != self._failing:
                self._failing = said
                print(
                    f"clew: the request log could not be written to the store ({said}); its"
                    f" lines wait in {self.log.folder}",
                    file=sys.stderr,
                )

    def close(self) -> None:
        """Fold what is left of the request log and close it."""
        self.log.close()

    # -- the middleware ------------------------------------------------------------------

    def refusal(self, scope: Scope, headers: dict[str, str]) -> tuple[int, str] | None:
        """The status and line a request is refused at the edge with, before its key is
        read: hostile bytes (400), a Host this server does not answer to (421), a page of
        another site (403). None: it goes on."""
        said = edge.refusal(_raw_path(scope), scope.get("query_string", b""), scope["headers"])
        if said is not None:
            return 400, f"{said}; nothing was done"
        server = scope.get("server")
        host = headers.get("host", "")
        if not self.hosts.allows(host, server[1] if server else None):
            return 421, self.hosts.refused(host)
        origin = headers.get("origin")
        if not edge.same_origin(origin, host):
            return 403, (
                f"this request came from a page of another site ({edge.safe(origin or '')[:100]});"
                " clew answers pages of its own host only"
            )
        return None

    def keys(self, app: ASGIApp) -> ASGIApp:
        """Wrap `app`: check each request's edge, key and rate, set its caller, log it."""

        async def checked(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http":
                await app(scope, receive, send)
                return
            started = time.perf_counter()
            said = Said()
            route = edge.route_of(_raw_path(scope))

            async def sending(message: Message) -> None:
                if message["type"] == "http.response.start":
                    message["headers"] = edge.guarded(message.get("headers", ()), PAGE_POLICY)
                if message["type"] == "http.response.start" and not said.noted:
                    said.status = int(message["status"])
                    tried = scope.get("clew.tried")  # the login form's key
                    if said.prefix is None and isinstance(tried, Caller):
                        said.prefix, said.space = tried.prefix, tried.space
                    ms = (time.perf_counter() - started) * 1000
                    self.note(said, str(scope["method"]), route, ms)
                await send(message)

            try:
                headers = {
                    k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]
                }
                peer = scope.get("client") or ("", 0)
                client = self.proxies.client(peer[0], headers.get("x-forwarded-for"))
                scope["client"] = (client, peer[1] if client == peer[0] else 0)
                scope["scheme"] = self.proxies.scheme(
                    peer[0], headers.get("x-forwarded-proto"), str(scope.get("scheme", "http"))
                )
                refused = self.refusal(scope, headers)
                if refused is not None:
                    await _refused(str(scope["path"]), *refused)(scope, receive, sending)
                    return
                path = str(scope["path"])
                if path in PUBLIC or path in web.PUBLIC:
                    await app(scope, receive, sending)
                    return
                try:
                    caller = await anyio.to_thread.run_sync(self.identify, headers, path, client)
                except ClewError as exc:
                    said.prefix = getattr(exc, "prefix", None)
                    said.space = getattr(exc, "space", None) or ""
                    # Refusals count against the client's address: a flood of wrong keys
                    # is slowed down like a flood of right ones.
                    wait = self.limit.take(f"address {client}", self._clock())
                    if wait > 0:
                        await self._limited(wait)(scope, receive, sending)
                        return
                    if web.is_dashboard(path) and path != "/events":  # a person: the form
                        text = "" if "authorization" not in headers else api.error_text(exc)
                        login = HTMLResponse(markup.login(text), 401)
                        await login(scope, receive, sending)
                        return
                    challenge = {"WWW-Authenticate": 'Bearer realm="clew"'}
                    await json_error(401, api.error_text(exc), challenge)(scope, receive, sending)
                    return
                said.prefix, said.space = caller.prefix, caller.space
                wait = self.limit.take(caller.prefix or "-", self._clock())
                if wait > 0:
                    await self._limited(wait)(scope, receive, sending)
                    return
                scope["clew.caller"] = caller
                await app(scope, receive, sending)
            finally:
                if not said.noted:  # no answer began: an error, or the client went away
                    ms = (time.perf_counter() - started) * 1000
                    self.note(said, str(scope["method"]), route, ms)

        return checked

    def _limited(self, wait: float) -> Response:
        return json_error(
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
            return json_error(
                404, f"no operation is called {name!r}; the operations: {', '.join(api.OPERATIONS)}"
            )
        arguments = await json_arguments(request)
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
            return json_error(status, api.error_text(exc), headers)
        except Exception as exc:  # a bug of clew's: say so, keep serving
            traceback.print_exc(file=sys.stderr)
            failed = f"clew failed inside {name} ({type(exc).__name__}); a bug in clew"
            return json_error(500, failed)
        return JSONResponse({"text": result.text, "data": to_jsonable(result.data)})

    async def forget(self, request: Request) -> Response:
        """POST /api/v1/forget: remove content, for an admin key; the tombstones name it."""
        caller = self.caller(request)
        refused = _scope_refusal(caller, "admin", "forget")
        if refused is not None:
            return refused
        arguments = await json_arguments(request)
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
            return json_error(
                status, api.error_text(exc), {"Retry-After": "1"} if status == 503 else None
            )
        return JSONResponse({"text": result.text, "data": to_jsonable(result.data)})

    async def export(self, request: Request) -> Response:
        """GET /api/v1/export: the space's journal file, streamed as it is read."""
        mem = self.spaces.get(self.caller(request).space)
        return StreamingResponse(exported(mem), media_type="application/x-ndjson")

    async def import_(self, request: Request) -> Response:
        """POST /api/v1/import: replay a journal file into the space, streamed: the body is
        read a line at a time into the facade's streamed import (one transaction, as `clew
        import` does), so a file of any length takes constant memory and a bad line anywhere
        leaves nothing imported."""
        caller = self.caller(request)
        refused = _scope_refusal(caller, "write", "import")
        if refused is not None:
            return refused
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
                outcome = json_error(api.status_of(exc), api.error_text(exc))
            finally:
                group.cancel_scope.cancel()  # a body cut short: the feeder waits no more
        return outcome if isinstance(outcome, Response) else JSONResponse(to_jsonable(outcome))

    async def key(self, request: Request) -> Response:
        """GET /api/v1/key: the request's key, its space and scope."""
        return JSONResponse(self.caller(request)._asdict())

    async def requests(self, request: Request) -> Response:
        """GET /api/v1/requests: the space's request log (admin keys)."""
        caller = self.caller(request)
        refused = _scope_refusal(caller, "admin", "the request log")
        if refused is not None:
            return refused
        try:
            limit = int(request.query_params.get("limit", "100"))
        except ValueError:
            return json_error(400, "limit must be a whole number (1-1000)")
        if not 1 <= limit <= 1000:
            return json_error(400, "limit must be a whole number (1-1000)")
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
            return json_error(api.status_of(exc), api.error_text(exc))
        return JSONResponse(answer(made))

    async def openapi(self, request: Request) -> Response:
        """GET /api/v1/openapi.json: the API's OpenAPI 3.1 document."""
        return JSONResponse(api.openapi(__version__))


def _raw_path(scope: Scope) -> bytes:
    raw = scope.get("raw_path")
    return raw if isinstance(raw, bytes) else str(scope["path"]).encode("utf-8", "surrogatepass")


def _refused(path: str, status: int, message: str) -> Response:
    """The answer of a request refused at the edge: a page for a person, JSON for a program."""
    if web.is_dashboard(path):
        return web.refused(status, message)
    return json_error(status, message)


async def _not_found(request: Request, exc: Exception) -> Response:
    code = exc.status_code if isinstance(exc, HTTPException) else 500
    if web.is_dashboard(request.url.path):  # a person's browser: a page with a way back
        said = {404: "no such page", 405: "this page does not take that method"}
        return web.refused(code, said.get(code, "the request could not be served"))
    said = {
        404: "no such route; the API is described at /api/v1/openapi.json",
        405: "this route does not take that method; see /api/v1/openapi.json",
    }
    return json_error(code, said.get(code, "the request could not be served"))


def build_app(
    server: Server, *, mcp: bool = True
) -> tuple[Starlette, Callable[[], contextlib.AbstractAsyncContextManager[None]]]:
    """The Starlette app of `server`: its routes, the keys middleware around them, and MCP
    at /mcp; with the lifespan that starts the request log and keeps the background tasks
    (MCP's session manager, the log's flusher, the dashboard's head poller) running."""
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
    door = server.mcp = McpEndpoint(server.context, server) if mcp else None
    if door is not None:
        routes = [Route("/mcp", endpoint=door), *routes]

    @contextlib.asynccontextmanager
    async def lifespan(app: Any = None) -> AsyncIterator[None]:
        await anyio.to_thread.run_sync(server.start)
        try:
            async with anyio.create_task_group() as group:
                if door is not None:
                    group.start_soon(kept, "MCP's session manager", door.run)
                    await door.running.wait()
                group.start_soon(kept, "the request log's flusher", lambda: _flushing(server))
                group.start_soon(kept, "the dashboard's head poller", board.heads.run)
                if server.checkpoints.file is not None:
                    group.start_soon(kept, "the checkpoint writer", server.checkpoints.run)
                try:
                    yield
                finally:
                    group.cancel_scope.cancel()
        finally:
            await anyio.to_thread.run_sync(server.close)
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


async def kept(name: str, run: Callable[[], Awaitable[None]], pause: float = 0.5) -> None:
    """Run `run` until cancelled, starting it again whenever it fails (each failure said on
    stderr with its traceback) or stops, after a pause that doubles up to 30 s while it
    keeps failing: a background task never takes the server down with it."""
    wait = pause
    while True:
        began = anyio.current_time()
        try:
            await run()
            print(f"clew: {name} stopped; starting it again", file=sys.stderr)
        except Exception:
            print(f"clew: {name} failed; starting it again in {wait:g} s", file=sys.stderr)
            traceback.print_exc(file=sys.stderr)
        if anyio.current_time() - began > 60:  # it ran a while: not failing in a loop
            wait = pause
        await anyio.sleep(wait)
        wait = min(wait * 2, 30.0)


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


class Options(NamedTuple):
    """What the operator chose for a server (the options of `clew serve` and `clew mcp
    --port`)."""

    rate: float = 20.0
    burst: int = 60
    log_days: int = 30
    allowed_hosts: tuple[str, ...] = ()
    forwarded_allow_ips: tuple[str, ...] = ()
    log_folder: str | None = None  # the request log's spill files (default: requestlog.py)
    allow: HostRules = NOTHING  # what admin keys' waits may make this host do (origin.py)
    checkpoint_file: str | None = None  # where the spaces' checkpoints go (checkpoints.py)
    checkpoint_every: float = EVERY_SECONDS


DEFAULTS = Options()


def make_server(
    home: Memory,
    host: str,
    options: Options = DEFAULTS,
    *,
    opener: Callable[[str], Memory] | None = None,
    context: tools.Context = tools.NO_CONTEXT,
) -> Server:
    """The Server of `home` bound to `host` with `options`; ValidationError for a wide bind
    without a key, a bad option, or a request log folder that cannot be written."""
    loopback = check_bind(home, host)
    spaces = Spaces(home, opener)
    server = Server(
        spaces,
        loopback=loopback,
        context=context,
        rate=options.rate,
        burst=options.burst,
        log_days=options.log_days,
        bind=host,
        allowed_hosts=options.allowed_hosts,
        forwarded_allow_ips=options.forwarded_allow_ips,
        log_folder=options.log_folder,
        allow=options.allow,
        checkpoints=Keeper(spaces, options.checkpoint_file, options.checkpoint_every),
    )
    try:
        server.log.open()
    except OSError as exc:
        raise ValidationError(
            f"cannot write the request log's folder {server.log.folder} ({exc.strerror or exc});"
            " choose a folder this user may write with --request-log DIR"
        ) from None
    return server


def uvicorn_config(app: ASGIApp, host: str, port: int) -> Any:
    """uvicorn's settings for the app (also for tests that run it in a thread)."""
    import uvicorn

    # proxy_headers off: uvicorn would believe X-Forwarded-For from 127.0.0.1 by default;
    # the edge believes it only from the proxies the operator lists. Open event streams
    # would hold a stop for their lifetime: they are cut after a moment.
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=2,
        proxy_headers=False,
    )


async def run_server(
    home: Memory,
    *,
    host: str,
    port: int,
    opener: Callable[[str], Memory] | None = None,
    context: tools.Context = tools.NO_CONTEXT,
    options: Options = DEFAULTS,
    ready: Callable[[int], None] | None = None,
    allow: HostRules = NOTHING,
    checkpoint_file: str | None = None,
    checkpoint_every: float = EVERY_SECONDS,
) -> None:
    """Serve until interrupted (`ready` is told the port once it listens); admin keys may
    add the waits `allow` lets them (nothing by default); with `checkpoint_file`, append the
    spaces' checkpoints to it (server/checkpoints.py)."""
    import uvicorn

    server = make_server(home, host, options, opener=opener, context=context)
    # The first checkpoints now: a file that cannot be written stops the start, in one line.
    await anyio.to_thread.run_sync(server.checkpoints.write)
    app, _ = build_app(server)
    runner = uvicorn.Server(uvicorn_config(app, host, port))
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
        server.spaces.close()


def serve(
    home: Memory,
    *,
    host: str,
    port: int,
    opener: Callable[[str], Memory] | None = None,
    context: tools.Context = tools.NO_CONTEXT,
    options: Options = DEFAULTS,
) -> None:
    """Run the server in this thread until interrupted, saying where it listens."""

    def said(bound: int) -> None:
        shown = f"[{host}]" if ":" in host else host
        print(f"clew: serving http://{shown}:{bound}/ (API /api/v1, MCP /mcp)", file=sys.stderr)

    anyio.run(
        lambda: run_server(
            home,
            host=host,
            port=port,
            opener=opener,
            context=context,
            options=options,
            ready=said,
        )
    )
