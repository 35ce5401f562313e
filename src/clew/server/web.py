"""The dashboard's routes: thin handlers that read or write through the facade (in a worker
thread) and hand records to the pure pages of dashboard.py.

How a browser is let in: a key, always. It may come as `Authorization` (Bearer, or Basic
with the key as password), or from the login form, which keeps the keys a person gave in one
HttpOnly, SameSite=Strict cookie; the first is the one in use, and the space picker moves
another to the front. The space is always that key's: no URL or form field names a space.
The cookie is read on the dashboard's own paths only, never on /api/v1 or /mcp.

Edits are POSTed forms that need a write key, a CSRF token bound to the key (an HMAC with
a secret the server draws at start) and, when the browser says where the form came from,
the same origin. Each edit runs inside a correlation id `web:<key prefix>:<id>`, so the
journal says which key made it: the timeline's "by" column.

Live updates: `/events` is a server-sent event stream per space. One loop polls the head seq
of the spaces someone follows, once a second whatever the number of listeners, and wakes
their streams when it moves.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import AsyncIterator, Callable
from importlib import resources
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, quote

import anyio
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Route

from clew.core.credentials import Caller
from clew.core.ids import new_id
from clew.errors import (
    AmbiguousIdError,
    AuthenticationError,
    ClewError,
    NotFoundError,
    ValidationError,
)
from clew.server import api, dashboard, edge, markup
from clew.tasks.history import actor_of
from clew.tasks.history import history as words

if TYPE_CHECKING:
    from clew.memory import Memory
    from clew.server.app import Server, Spaces

COOKIE = "clew_keys"
MAX_KEYS = 8  # keys one browser keeps
MAX_FORM = 256 * 1024
STREAM_SECONDS = 300.0  # a stream ends after this; EventSource reconnects by itself
KEEPALIVE_SECONDS = 15.0
WRITE_SCOPES = ("write", "admin")
ACTIONS = ("resolve", "supersede", "constraint", "note", "pause", "resume", "archive", "unarchive")
PUBLIC = frozenset({"/login", "/static/live.js"})


def is_dashboard(path: str) -> bool:
    """Whether `path` is the dashboard's (where the key cookie counts), not the API's or MCP's."""
    return not path.startswith((api.PREFIX, "/mcp"))


def cookie_keys(header: str) -> list[str]:
    """The keys a Cookie header carries in clew's cookie, the one in use first."""
    for part in header.split(";"):
        name, _, value = part.strip().partition("=")
        if name == COOKIE:
            return [k for k in value.split(".") if k][:MAX_KEYS]
    return []


def actor(caller: Caller, door: str = "web") -> str:
    """The correlation id a write by `caller` through `door` (web, api, mcp) is journaled
    under: `<door>:<key prefix>:<id>`; the tools' own groups inside it keep that prefix."""
    return f"{door}:{caller.prefix or 'local'}:{new_id()}"


class Heads:
    """The journal's head seq of each followed space, polled by one loop for every listener."""

    def __init__(self, spaces: Spaces, every: float = 1.0) -> None:
        self.spaces = spaces
        self.every = every
        self._heads: dict[str, int] = {}
        self._moved: dict[str, anyio.Event] = {}
        self._listeners: dict[str, int] = {}

    async def run(self) -> None:
        """Poll the followed spaces until cancelled."""
        while True:
            await anyio.sleep(self.every)
            for space in [s for s, n in self._listeners.items() if n > 0]:
                try:
                    head = await anyio.to_thread.run_sync(self.spaces.get(space).journal_head)
                except ClewError:  # busy: the next poll sees it
                    continue
                if head != self._heads.get(space):
                    self._heads[space] = head
                    moved = self._moved.pop(space, None)
                    if moved is not None:
                        moved.set()

    async def follow(self, space: str, lifetime: float) -> AsyncIterator[int | None]:
        """The head now, then each new head (None: nothing moved for a while)."""
        self._listeners[space] = self._listeners.get(space, 0) + 1
        try:
            if space not in self._heads:
                mem = self.spaces.get(space)
                self._heads[space] = await anyio.to_thread.run_sync(mem.journal_head)
            yield self._heads[space]
            end = anyio.current_time() + lifetime
            while anyio.current_time() < end:
                moved = self._moved.setdefault(space, anyio.Event())
                with anyio.move_on_after(min(KEEPALIVE_SECONDS, end - anyio.current_time())):
                    await moved.wait()
                yield self._heads[space] if moved.is_set() else None
        finally:
            self._listeners[space] -= 1


class Dashboard:
    """The dashboard's handlers over a Server (its spaces, its callers, its rate limit)."""

    def __init__(self, server: Server, *, every: float = 1.0) -> None:
        self.server = server
        self.heads = Heads(server.spaces, every)
        self._secret = secrets.token_bytes(32)  # CSRF tokens die with the process

    # -- who is asking ------------------------------------------------------------------

    def csrf(self, caller: Caller) -> str:
        """The CSRF token of `caller`'s forms."""
        said = f"{caller.prefix or '-'}|{caller.space}".encode()
        return hmac.new(self._secret, said, hashlib.sha256).hexdigest()[:32]

    def _nav(self, request: Request, caller: Caller, mem: Memory) -> markup.Nav:
        others = []
        for token in cookie_keys(request.headers.get("cookie", ""))[1:]:
            try:
                key = self.server.spaces.home.authenticate(token, touch=False)
            except ClewError:
                continue  # revoked since: not offered
            if key.prefix != caller.prefix:
                others.append((key.prefix, key.space))
        who = caller.name or caller.prefix or "local user"
        return markup.Nav(
            caller.space, who, caller.scope, tuple(others), self.csrf(caller), mem.journal_head()
        )

    async def _read(
        self, request: Request, read: Callable[[Memory, markup.Nav], str], status: int = 200
    ) -> Response:
        caller = self.server.caller(request)
        mem = self.server.spaces.get(caller.space)
        nav: markup.Nav | None = None

        def run() -> str:
            nonlocal nav
            nav = self._nav(request, caller, mem)
            return read(mem, nav)

        try:
            text = await anyio.to_thread.run_sync(run)
        except ClewError as exc:
            code = api.status_of(exc)
            return HTMLResponse(dashboard.error_page(code, api.error_text(exc), nav), code)
        return HTMLResponse(text, status, headers={"Cache-Control": "no-store"})

    # -- pages --------------------------------------------------------------------------

    async def tasks(self, request: Request) -> Response:
        """GET /: the tasks by status."""
        return await self._read(
            request,
            lambda mem, nav: dashboard.task_list(mem.list_tasks(include_archived=True), nav),
        )

    async def task(self, request: Request) -> Response:
        """GET /tasks/<id>: one task in full."""
        caller = self.server.caller(request)
        tid = str(request.path_params["task_id"])
        can_edit = caller.scope in WRITE_SCOPES
        return await self._read(
            request,
            lambda mem, nav: dashboard.task_page(read_task(mem, tid), nav, can_edit=can_edit),
        )

    async def sessions(self, request: Request) -> Response:
        """GET /sessions: the conversation sessions."""
        return await self._read(
            request, lambda mem, nav: dashboard.session_list(mem.list_sessions(limit=500), nav)
        )

    async def session(self, request: Request) -> Response:
        """GET /sessions/<id>: every turn of a session."""
        sid = str(request.path_params["session_id"])

        def read(mem: Memory, nav: markup.Nav) -> str:
            found = mem.get_session(sid)
            turns = mem.list_turns(found.id, newest=SESSION_TURNS)
            more = max(0, found.turn_count - len(turns))
            return dashboard.session_page(found, turns, nav, more=more)

        return await self._read(request, read)

    async def search(self, request: Request) -> Response:
        """GET /search?q=...&kinds=...: search over everything, as `clew search`."""
        query = request.query_params.get("q", "").strip()
        kinds = [k for k in request.query_params.getlist("kinds") if k]

        def read(mem: Memory, nav: markup.Nav) -> str:
            if not query:
                return dashboard.search_page("", kinds, [], nav)
            try:
                hits = mem.search_all(query, kinds=kinds or None, limit=50)
            except ValidationError as exc:
                return dashboard.search_page(query, kinds, [], nav, api.error_text(exc))
            return dashboard.search_page(query, kinds, hits, nav)

        return await self._read(request, read)

    async def events(self, request: Request) -> Response:
        """GET /events: the journal's head seq of the key's space, whenever it moves."""
        space = self.server.caller(request).space

        async def stream() -> AsyncIterator[str]:
            yield "retry: 2000\n\n"
            async for head in self.heads.follow(space, STREAM_SECONDS):
                yield ": still here\n\n" if head is None else f"event: journal\ndata: {head}\n\n"

        headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
        return StreamingResponse(stream(), media_type="text/event-stream", headers=headers)

    async def script(self, request: Request) -> Response:
        """GET /static/live.js: the one script (public: it holds no record)."""
        text = resources.files("clew.server").joinpath("static/live.js").read_text("utf-8")
        cache = {"Cache-Control": "max-age=300"}
        return Response(text, media_type="text/javascript", headers=cache)

    # -- writes -------------------------------------------------------------------------

    async def act(self, request: Request) -> Response:
        """POST /tasks/<id>/act: one edit by a person, journaled with the key as its actor."""
        caller = self.server.caller(request)
        tid = str(request.path_params["task_id"])
        form = await self._form(request, caller)
        if isinstance(form, Response):
            return form
        mem = self.server.spaces.get(caller.space)

        def run() -> str:
            api.check_scope(caller.scope, "write", "an edit")
            with mem.correlation(actor(caller)):
                return edit(mem, tid, form)

        try:
            task_id = await anyio.to_thread.run_sync(run)
        except ClewError as exc:
            code = api.status_of(exc)
            return HTMLResponse(dashboard.error_page(code, api.error_text(exc), None), code)
        return RedirectResponse(f"/tasks/{quote(task_id)}", 303)

    async def forget_form(self, request: Request) -> Response:
        """GET /forget: the form that forgets (admin keys)."""
        caller = self.server.caller(request)
        if caller.scope != "admin":
            return refused(
                403, f"forgetting needs an admin key; this key's scope is {caller.scope}"
            )
        return await self._read(request, lambda mem, nav: dashboard.forget_page(nav, {}))

    async def forget(self, request: Request) -> Response:
        """POST /forget: forget what the form names, with the key as who forgot."""
        caller = self.server.caller(request)
        form = await self._form(request, caller)
        if isinstance(form, Response):
            return form
        if caller.scope != "admin":
            return refused(
                403, f"forgetting needs an admin key; this key's scope is {caller.scope}"
            )
        door = actor(caller)
        kind, ident = form.get("kind") or None, form.get("id", "").strip() or None
        pattern, dry_run = form.get("pattern") or None, bool(form.get("dry_run"))
        shown = {k: form.get(k, "") for k in ("kind", "id", "dry_run")}  # never the pattern

        def read(mem: Memory, nav: markup.Nav) -> str:
            try:
                with mem.correlation(door):
                    report = mem.forget(
                        kind, ident, pattern=pattern, dry_run=dry_run, by=actor_of(door)
                    )
            except (ValidationError, NotFoundError, AmbiguousIdError) as exc:
                return dashboard.forget_page(nav, shown, None, api.error_text(exc))
            return dashboard.forget_page(nav, shown, report)

        return await self._read(request, read)

    async def use(self, request: Request) -> Response:
        """POST /use: put another key this browser holds first (the space picker)."""
        caller = self.server.caller(request)
        form = await self._form(request, caller)
        if isinstance(form, Response):
            return form
        prefix = form.get("prefix", "")
        held = cookie_keys(request.headers.get("cookie", ""))
        chosen = [k for k in held if k.startswith(f"clew_{prefix}_")] if prefix else []
        if not chosen:
            return refused(400, "that key is not among the keys this browser holds")
        response = RedirectResponse("/", 303)
        _keep(response, request, chosen[:1] + [k for k in held if k not in chosen])
        return response

    async def logout(self, request: Request) -> Response:
        """POST /logout: forget every key this browser holds."""
        form = await self._form(request, self.server.caller(request))
        if isinstance(form, Response):
            return form
        response = RedirectResponse("/login", 303)
        response.delete_cookie(COOKIE, httponly=True, samesite="strict")
        return response

    async def login_page(self, request: Request) -> Response:
        """GET /login: the form that takes a key."""
        return HTMLResponse(markup.login(), headers={"Cache-Control": "no-store"})

    async def login(self, request: Request) -> Response:
        """POST /login: check a key and keep it in this browser, first."""
        client = request.client.host if request.client else "?"
        wait = self.server.take(f"address {client}")
        if wait > 0:
            return HTMLResponse(markup.login("too many tries: wait a few seconds"), 429)
        if not _same_origin(request.headers):
            return HTMLResponse(markup.login("that form came from another site"), 403)
        form = await _parse(request)
        if isinstance(form, Response):
            return form
        token = form.get("key", "").strip()
        try:
            key = await anyio.to_thread.run_sync(lambda: _check(self.server.spaces, token))
        except ClewError as exc:
            # The log names the key tried, and its space where a key has that prefix.
            tried = (getattr(exc, "prefix", None), getattr(exc, "space", None) or "")
            request.scope["clew.tried"] = Caller(tried[0], tried[1], "")
            return HTMLResponse(markup.login(api.error_text(exc)), 401)
        request.scope["clew.tried"] = key
        held = cookie_keys(request.headers.get("cookie", ""))
        response = RedirectResponse("/", 303)
        _keep(response, request, [token] + [k for k in held if k != token])
        return response

    async def _form(self, request: Request, caller: Caller) -> dict[str, str] | Response:
        """The posted form, once its CSRF token and origin are checked."""
        if not _same_origin(request.headers):
            return refused(403, "that form came from another site")
        form = await _parse(request)
        if isinstance(form, Response):
            return form
        if not hmac.compare_digest(form.get("csrf", ""), self.csrf(caller)):
            said = "the form is stale or came from elsewhere (its token does not match): reload"
            return refused(403, said)
        return form

    def routes(self) -> list[Route]:
        """The dashboard's routes."""
        return [
            Route("/", self.tasks, methods=["GET"]),
            Route("/tasks/{task_id}", self.task, methods=["GET"]),
            Route("/tasks/{task_id}/act", self.act, methods=["POST"]),
            Route("/sessions", self.sessions, methods=["GET"]),
            Route("/sessions/{session_id}", self.session, methods=["GET"]),
            Route("/search", self.search, methods=["GET"]),
            Route("/forget", self.forget_form, methods=["GET"]),
            Route("/forget", self.forget, methods=["POST"]),
            Route("/events", self.events, methods=["GET"]),
            Route("/static/live.js", self.script, methods=["GET"]),
            Route("/login", self.login_page, methods=["GET"]),
            Route("/login", self.login, methods=["POST"]),
            Route("/use", self.use, methods=["POST"]),
            Route("/logout", self.logout, methods=["POST"]),
        ]


SESSION_TURNS = 2000  # newest turns a session page shows
TIMELINE = 500  # newest journal events a task page reads for its timeline


def read_task(mem: Memory, task_id: str) -> dashboard.TaskView:
    """Everything the task page shows, read through the facade."""
    task = mem.get_task(task_id)
    # Only the journal's newest items (a tail read along the task's index), so a task with a
    # long journal costs the page no more than one with 500 events; replans are read apart.
    events = mem.journal(task_id=task.id, limit=TIMELINE, newest=True)
    # Who brought the imported ones: the store's records, not the events' own claims.
    imports = mem.import_records(events[0].seq, events[-1].seq) if events else []
    # The words of each event, from the events already read (what Memory.history does with
    # its own read of them).
    steps = {s.id: n for n, s in enumerate(task.plan, 1)}
    history = words(events, steps, imports)[-TIMELINE:]
    return dashboard.TaskView(
        task=task,
        state=mem.state(task.id),
        commands=mem.commands(task.id, limit=200),
        entries=mem.list_entries(task.id, type=("decision", "error", "constraint"), limit=300),
        waits=mem.list_waits(task.id, limit=100),
        replans=mem.journal(task_id=task.id, types=("plan.revised",)),
        timeline=[(h, h.by) for h in history],
    )


def edit(mem: Memory, task_id: str, form: dict[str, str]) -> str:
    """Apply one edit from the task page's forms; return the task's id."""
    do = form.get("do", "")
    if do not in ACTIONS:
        raise ValidationError(f"no edit is called {do!r}; the edits: {', '.join(ACTIONS)}")
    text, entry = form.get("text", ""), form.get("entry", "")
    tid = mem.get_task(task_id).id
    if do in ("resolve", "supersede") and not entry:
        raise ValidationError(f"{do} needs an entry: pick one")
    if do == "resolve":
        mem.resolve(entry, text, task_id=tid)
    elif do == "supersede":
        mem.add_entry("decision", text, task_id=tid, supersedes=entry)
    elif do == "constraint":
        mem.add_constraint(tid, text)
    elif do == "note":
        mem.update_task(tid, message=text, role="user")
    elif do in ("pause", "resume"):
        mem.update_task(tid, status="paused" if do == "pause" else "active")
    else:
        mem.archive_task(tid, do == "archive")
    return tid


def refused(status: int, message: str) -> HTMLResponse:
    """A page saying what is wrong, in one line, with the status."""
    return HTMLResponse(dashboard.error_page(status, message, None), status)


def _check(spaces: Spaces, token: str) -> Caller:
    if not token:
        raise AuthenticationError("give a key (clew_...) from `clew keys create`")
    key = spaces.home.authenticate(token, touch=False)
    try:
        spaces.get(key.space)  # a server of one space refuses another's key here too
    except AuthenticationError as exc:
        raise AuthenticationError(str(exc), prefix=key.prefix, space=key.space) from None
    return Caller(key.prefix, key.space, key.scope, key.name)


def _same_origin(headers: Any) -> bool:
    """Whether a browser's Origin (or, lacking it, Referer) names this server's own host;
    a request that names neither is no browser's cross-site form (browsers send Origin
    with every cross-site POST), and its CSRF token still has to match."""
    said = headers.get("origin") or headers.get("referer")
    if not said:
        return True
    return edge.same_origin(said, headers.get("host", ""))


async def _parse(request: Request) -> dict[str, str] | Response:
    """A urlencoded form body, each field's first value."""
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM:
            return refused(400, "the form is too large")
    try:
        fields = parse_qs(
            body.decode("utf-8"), keep_blank_values=True, max_num_fields=20, errors="strict"
        )
    except (UnicodeDecodeError, ValueError):
        return refused(400, "the form is not valid UTF-8 text")
    form = {k: v[0] for k, v in fields.items()}
    if any(_CONTROL.search(k) or _CONTROL.search(v) for k, v in form.items()):
        return refused(400, "the form holds a control character (NUL, escape...): send text")
    return form


# What a person cannot type into a form: control characters but tab and line breaks.
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _keep(response: Response, request: Request, keys: list[str]) -> None:
    response.set_cookie(
        COOKIE,
        ".".join(keys[:MAX_KEYS]),
        max_age=30 * 86400,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )
