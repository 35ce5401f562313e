"""The JSON API's operations: every tool of the registry (tools.py), and what the tools do not
cover (a task's history, the ledger, sessions' turns and context). One source of truth: an
operation's JSON Schema is its request body, checked by the same code as a tool call's, and
the OpenAPI document is built from the same schemas.

Each operation is `POST /api/v1/<name>` with a JSON object body; it answers 200 with
`{"text": ..., "data": ...}` (what a model and a program read), or an error status with
`{"error": "<one line>"}`, the line a tool call answers with. Pure: no HTTP here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from clew.core import credentials
from clew.core.origin import NOTHING, HostRules
from clew.errors import (
    AmbiguousIdError,
    AuthenticationError,
    ClewError,
    NotFoundError,
    ScopeError,
    StoreBusyError,
    StoreError,
    ValidationError,
)
from clew.models import to_jsonable
from clew.tools import registry as tools
from clew.tools.registry import Context, Tool, ToolResult
from clew.tools.schema import check_arguments
from clew.tools.spec import object_schema as _object  # the registry's shape, for extra routes

if TYPE_CHECKING:
    from clew.memory import Memory

PREFIX = "/api/v1"
_SESSION = {"type": "string", "description": "The session's id (or an unambiguous prefix) or key."}
_TASK = {"type": "string", "description": "The task's id (or an unambiguous prefix)."}
_BUDGET = {"type": "integer", "minimum": 200, "maximum": 200_000, "description": "Token budget."}


def _task_history(mem: Memory, args: dict[str, Any], ctx: Context) -> ToolResult:
    items = mem.history(args["task_id"])
    text = "\n".join(
        f"{i.at[:19]} {i.type} {i.text}" + (f" ({i.by})" if i.by else "") for i in items
    )
    return ToolResult(text or "No history.", to_jsonable(items))


def _ledger(mem: Memory, args: dict[str, Any], ctx: Context) -> ToolResult:
    found = mem.commands(
        args.get("task_id"),
        failed=args.get("failed"),
        step=args.get("step"),
        contains=args.get("contains"),
        exit_code=args.get("exit_code"),
        limit=args.get("limit", 50),
    )
    text = "\n".join(
        f"{a.id} exit {a.exit_code if a.exit_code is not None else '-'} {a.command or a.summary}"
        for a in found
    )
    return ToolResult(text or "No commands recorded.", to_jsonable(found))


def _session_append(mem: Memory, args: dict[str, Any], ctx: Context) -> ToolResult:
    try:
        session = mem.get_session(args["session"])
    except NotFoundError:  # a new key starts its session, as adapters name theirs
        session = mem.open_session(args["session"], title=args.get("title"))
    turns = mem.append_turns(session.id, args["messages"])
    text = f"Appended turns {turns[0].number}-{turns[-1].number} to session {session.id}."
    return ToolResult(text, {"session_id": session.id, "turns": [t.number for t in turns]})


def _session_turns(mem: Memory, args: dict[str, Any], ctx: Context) -> ToolResult:
    found = mem.list_turns(
        args["session"], first=args.get("first"), last=args.get("last"), newest=args.get("newest")
    )
    text = "\n".join(f"{t.number} {t.role}: {t.text or ''}" for t in found)
    return ToolResult(text or "No turns.", to_jsonable(found))


def _session_context(mem: Memory, args: dict[str, Any], ctx: Context) -> ToolResult:
    found = mem.assemble_context(
        args["session"], budget=args.get("budget", 8000), task_id=args.get("task_id")
    )
    return ToolResult(f"{len(found.messages)} messages, {found.tokens} tokens.", to_jsonable(found))


def _session_resume(mem: Memory, args: dict[str, Any], ctx: Context) -> ToolResult:
    found = mem.resume(args["session"], budget=args.get("budget", 8000))
    text = (
        f"Resumed session {found.session.id}: {len(found.context.messages)} messages,"
        f" {found.context.tokens} tokens."
    )
    return ToolResult(text, to_jsonable(found))


# What the tools do not cover, in the tools' shape (read_only: a read key may call it).
EXTRA: dict[str, Tool] = {
    t.name: t
    for t in (
        Tool(
            "task_history",
            "A task's history in order: every change, message, command and entry.",
            _object({"task_id": _TASK}, ("task_id",)),
            _task_history,
            True,
        ),
        Tool(
            "ledger",
            "The command ledger, newest first: every recorded command with its exit code, by"
            " task, step, outcome and text.",
            _object(
                {
                    "task_id": _TASK,
                    "failed": {"type": "boolean", "description": "Only failed (or passed) ones."},
                    "step": {"type": ["integer", "string"], "description": "A step of the task."},
                    "contains": {"type": "string", "description": "Text the command holds."},
                    "exit_code": {"type": "integer", "description": "Only this exit code."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 500},
                }
            ),
            _ledger,
            True,
        ),
        Tool(
            "session_append",
            "Archive messages of a conversation verbatim, in order, all or none; a session key"
            " that names no session starts one.",
            _object(
                {
                    "session": _SESSION,
                    "messages": {
                        "type": "array",
                        "minItems": 1,
                        "maxItems": 1000,
                        "items": {"type": "object"},
                        "description": "Chat messages ({role, content, ...}) in order.",
                    },
                    "title": {"type": "string", "description": "A new session's title."},
                },
                ("session", "messages"),
            ),
            _session_append,
            False,
        ),
        Tool(
            "session_turns",
            "A session's turns in order: numbers first..last, or the newest N.",
            _object(
                {
                    "session": _SESSION,
                    "first": {"type": "integer", "minimum": 1},
                    "last": {"type": "integer", "minimum": 1},
                    "newest": {"type": "integer", "minimum": 1, "maximum": 1000},
                },
                ("session",),
            ),
            _session_turns,
            True,
        ),
        Tool(
            "session_context",
            "The prompt to send next for a session: its system prompt, task state, session"
            " state and as many recent turns as fit in the budget.",
            _object({"session": _SESSION, "budget": _BUDGET, "task_id": _TASK}, ("session",)),
            _session_context,
            True,
        ),
        Tool(
            "session_resume",
            "Go on with a session: it becomes active again, and its prompt is assembled.",
            _object({"session": _SESSION, "budget": _BUDGET}, ("session",)),
            _session_resume,
            False,
        ),
    )
}
OPERATIONS: dict[str, Tool] = {**tools.TOOLS, **EXTRA}

# `POST /api/v1/forget` (admin keys only; no tool forgets): its body, as `clew forget` takes it.
FORGET = _object(
    {
        "kind": {
            "type": "string",
            "enum": ["entry", "turn", "action", "message"],
            "description": "The kind of record whose content to forget (an action: its output).",
        },
        "id": {"type": "string", "description": "The record's id (or an unambiguous prefix)."},
        "pattern": {
            "type": "string",
            "description": "A regular expression: forget every match of it in the space's"
            " content instead of a record.",
        },
        "dry_run": {
            "type": "boolean",
            "description": "Say what would be forgotten; change nothing.",
        },
    }
)


def forget(mem: Memory, arguments: Any, by: str) -> ToolResult:
    """Forget what a request's body names (`FORGET`), as `by`; raise the ClewError a refusal is."""
    from clew.tools.views import forget_view

    if not isinstance(arguments, dict):
        raise ValidationError("the request body must be a JSON object")
    args = dict(arguments)
    check_arguments(FORGET, args)
    report = mem.forget(
        args.get("kind"),
        args.get("id"),
        pattern=args.get("pattern"),
        dry_run=bool(args.get("dry_run", False)),
        by=by,
    )
    return ToolResult(forget_view(report), to_jsonable(report))


def scope_needed(
    name: str, arguments: Mapping[str, Any] | None, served: HostRules = NOTHING
) -> str:
    """The scope a key needs to call operation `name` with `arguments` on a server that
    allows `served` (ScopeError for what it allows no key)."""
    extra = EXTRA.get(name)
    if extra is not None:
        return "read" if extra.read_only else "write"
    return tools.scope_needed(name, arguments, served)


def check_scope(scope: str, needed: str, what: str) -> None:
    """Raise ScopeError unless a key of `scope` may do `what`, which needs `needed`."""
    if not credentials.allows(scope, needed):
        raise ScopeError(f"{what} needs a key of scope {needed}; this key's scope is {scope}")


def run(mem: Memory, name: str, arguments: Any, context: Context) -> ToolResult:
    """Run an operation; raise the ClewError a failed call is."""
    extra = EXTRA.get(name)
    if extra is None:
        return tools.run(mem, name, arguments, context)
    if not isinstance(arguments, dict):
        raise ValidationError("the request body must be a JSON object")
    args = dict(arguments)
    check_arguments(extra.schema, args)
    return extra.run(mem, args, context)


def status_of(exc: ClewError) -> int:
    """The HTTP status of a failed call."""
    if isinstance(exc, AuthenticationError):
        return 401
    if isinstance(exc, ScopeError):
        return 403
    if isinstance(exc, NotFoundError):
        return 404
    if isinstance(exc, ValidationError | AmbiguousIdError):
        return 400
    if isinstance(exc, StoreBusyError):
        return 503
    if isinstance(exc, StoreError):
        return 500
    return 400


def error_text(exc: ClewError) -> str:
    """The one line of a failed call, as a tool call words it."""
    return tools.error_text(exc)


# -- the OpenAPI document -----------------------------------------------------------------------

_ERROR = {
    "type": "object",
    "properties": {"error": {"type": "string"}},
    "required": ["error"],
}
_RESULT = {
    "type": "object",
    "properties": {"text": {"type": "string"}, "data": {}},
    "required": ["text", "data"],
}


def _errors(*codes: int) -> dict[str, Any]:
    said = {
        400: "Bad input: the line says what is wrong.",
        401: "No key, or a key that is not valid.",
        403: "The key's scope does not allow this.",
        404: "Nothing of that id in the key's space.",
        429: "Rate limited: retry after Retry-After seconds.",
        503: "The store is busy: retry.",
    }
    return {
        str(code): {
            "description": said[code],
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
        }
        for code in codes
    }


_HOST_WAITS = (
    " A wait of kind command, file or url makes the server's host act: it needs an admin key"
    " and a server started with --allow-commands, --allow-wait-path or --allow-wait-url"
    " (403 naming the option otherwise)."
)
CHECKPOINT_HEADER = "Clew-Checkpoint"
_CHECKPOINT_HEADER = {
    "description": "A sealed checkpoint of the key's space after the request, as one line of"
    " JSON (what GET /api/v1/checkpoint calls `line`); absent when the store was too busy.",
    "schema": {"type": "string"},
}
_HEADER_REF = f"#/components/headers/{CHECKPOINT_HEADER}"
_CHECKPOINT = {
    "type": "object",
    "required": ["checkpoint", "line"],
    "properties": {
        "checkpoint": {
            "type": "object",
            "required": ["store", "space", "events", "head", "last", "chain", "at", "seal"],
            "properties": {
                "store": {"type": "string", "description": "a keyed digest naming the store"},
                "space": {"type": "string"},
                "events": {"type": "integer", "minimum": 0},
                "head": {"type": ["string", "null"], "description": "the last event's hash"},
                "last": {"type": ["string", "null"], "description": "the last event's id"},
                "chain": {"type": "integer", "description": "the hash chain's version"},
                "at": {"type": "string", "description": "when it was made (UTC)"},
                "seal": {"type": "string", "description": "keyed BLAKE2b of the fields"},
            },
        },
        "line": {"type": "string", "description": "the checkpoint as a line to keep"},
    },
}


def openapi(version: str) -> dict[str, Any]:
    """The OpenAPI 3.1 document of the API, from the operations' schemas."""
    paths = {**_operation_paths(), **_journal_paths(), **_server_paths()}
    _add_checkpoint_headers(paths)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "clew",
            "version": version,
            "description": "clew's task memory over HTTP. Every request sends"
            " 'Authorization: Bearer KEY'; the space is the key's.",
        },
        "paths": paths,
        "components": {
            "schemas": {"Error": _ERROR, "Result": _RESULT},
            "headers": {CHECKPOINT_HEADER: _CHECKPOINT_HEADER},
            "securitySchemes": {"key": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{"key": []}],
    }


def _operation_paths() -> dict[str, Any]:
    """The paths of the operations: one POST each, its body the tool's arguments."""
    paths: dict[str, Any] = {}
    for name, op in OPERATIONS.items():
        scope = "read" if op.read_only else "write"
        paths[f"{PREFIX}/{name}"] = {
            "post": {
                "operationId": name,
                "summary": op.description.split(". ")[0].rstrip(".") + ".",
                "description": f"{op.description}\n\nScope: {scope} (a key of scope {scope} or"
                f" above).{_HOST_WAITS if name == 'smart_wait' else ''}",
                "tags": ["tools" if name in tools.TOOLS else "more"],
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": op.schema}},
                },
                "responses": {
                    "200": {
                        "description": "What the call did: text for a model, data for programs.",
                        "content": {
                            "application/json": {"schema": {"$ref": "#/components/schemas/Result"}}
                        },
                    },
                    **_errors(400, 401, 403, 404, 429, 503),
                },
            }
        }
    return paths


def _journal_paths() -> dict[str, Any]:
    """The paths that move a space's journal: export, import and forget."""
    paths: dict[str, Any] = {}
    paths[f"{PREFIX}/export"] = {
        "get": {
            "operationId": "export",
            "summary": "The key's space's journal as a journal file (JSON lines), streamed.",
            "description": "Scope: read. What `clew export` writes; `import` replays it.",
            "responses": {
                "200": {
                    "description": "JSON lines: a header, every event with its hash, an end line.",
                    "content": {"application/x-ndjson": {"schema": {"type": "string"}}},
                },
                **_errors(401, 429),
            },
        }
    }
    paths[f"{PREFIX}/import"] = {
        "post": {
            "operationId": "import",
            "summary": "Replay a journal file into the key's space (twice adds nothing).",
            "description": "Scope: write. The body is what `export` gives; it is checked whole"
            " and replayed in one transaction, or nothing is. A file that adds a wait the key"
            " could not add itself (a command, file or URL wait) is refused with 403 naming"
            " its line; who imported is recorded by the server, not taken from the file.",
            "requestBody": {
                "required": True,
                "content": {"application/x-ndjson": {"schema": {"type": "string"}}},
            },
            "responses": {
                "200": {
                    "description": "How many events were added and skipped.",
                    "content": {"application/json": {"schema": {"type": "object"}}},
                },
                **_errors(400, 401, 403, 429, 503),
            },
        }
    }
    paths[f"{PREFIX}/forget"] = {
        "post": {
            "operationId": "forget",
            "summary": "Remove the content of a record, or every match of a pattern.",
            "description": "Scope: admin. What `clew forget` does: the content is replaced by"
            " a tombstone naming this key, in every table, index, vector and mirror; the"
            " journal still verifies. `dry_run` says what would be forgotten.",
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": FORGET}},
            },
            "responses": {
                "200": {
                    "description": "What was forgotten: events, records and fields (never the"
                    " content).",
                    "content": {
                        "application/json": {"schema": {"$ref": "#/components/schemas/Result"}}
                    },
                },
                **_errors(400, 401, 403, 404, 429, 503),
            },
        }
    }
    return paths


def _server_paths() -> dict[str, Any]:
    """The paths of the server's own: the key, the request log and the checkpoint."""
    paths: dict[str, Any] = {}
    paths[f"{PREFIX}/key"] = {
        "get": {
            "operationId": "key",
            "summary": "The key the request sent: its prefix, space and scope.",
            "responses": {
                "200": {
                    "description": "The key (never its secret).",
                    "content": {"application/json": {"schema": {"type": "object"}}},
                },
                **_errors(401, 429),
            },
        }
    }
    paths[f"{PREFIX}/requests"] = {
        "get": {
            "operationId": "requests",
            "summary": "The request log of the key's space, newest first.",
            "description": "Scope: admin.",
            "parameters": [
                {
                    "name": "limit",
                    "in": "query",
                    "required": False,
                    "schema": {"type": "integer", "minimum": 1, "maximum": 1000},
                }
            ],
            "responses": {
                "200": {
                    "description": "The requests: time, key prefix, method, route, status, ms.",
                    "content": {"application/json": {"schema": {"type": "object"}}},
                },
                **_errors(400, 401, 403, 429),
            },
        }
    }
    paths[f"{PREFIX}/checkpoint"] = {
        "get": {
            "operationId": "checkpoint",
            "summary": "A sealed checkpoint of the key's space's journal head, to keep.",
            "description": "Scope: read. How many events the space's journal holds and the"
            " last one's hash, now, sealed with the server's sealing key; `line` is what to"
            " append to a checkpoint file. The server's operator checks kept lines with `clew"
            " verify --checkpoint FILE`: a store rolled back or rewritten since is behind or"
            " diverges. Every other answer of the API carries the same line in the"
            f" {CHECKPOINT_HEADER} header.",
            "responses": {
                "200": {
                    "description": "The checkpoint's fields and its line.",
                    "content": {"application/json": {"schema": _CHECKPOINT}},
                },
                **_errors(401, 429, 503),
            },
        }
    }
    return paths


def _add_checkpoint_headers(paths: dict[str, Any]) -> None:
    """Name the checkpoint header on every answer with a key (not the checkpoint's own)."""
    for path in paths.values():
        for operation in path.values():
            for code, response in operation["responses"].items():
                if code == "200" and operation["operationId"] != "checkpoint":
                    response["headers"] = {CHECKPOINT_HEADER: {"$ref": _HEADER_REF}}
