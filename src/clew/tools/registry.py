"""The agent tool surface: one registry of tools over the Memory facade, each with a JSON
Schema and a description written for a model. The MCP server (`mcp_server.py`), the
function-calling export (`clew tools --format ...`) and `dispatch` all read this registry.

A call never raises for anything the model did: unknown tools, arguments that do not match
the schema, ids that match nothing, invalid transitions all come back as a `ToolResult`
with `is_error=True` and one sentence that says what to do instead.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from clew.core import checks, origin
from clew.core.text import clip
from clew.errors import ClewError, NotFoundError, ScopeError, ValidationError
from clew.models import (
    AddStep,
    MoveStep,
    PlanOp,
    RemoveStep,
    RenameStep,
    StepStatus,
    Task,
    to_jsonable,
)
from clew.state.brief import current_step
from clew.tools.schema import check_arguments
from clew.tools.spec import SPECS, Spec
from clew.tools.views import explain_line, label_of

if TYPE_CHECKING:
    from clew.memory import Memory


class ToolResult(NamedTuple):
    """What a tool call returns: `text` for the model, `data` for programs."""

    text: str
    data: Any = None
    is_error: bool = False


class Context(NamedTuple):
    """What the door running the tools supplies: the conversation session and the workspace
    by default, and what the caller may make this host do through a wait (the host's own
    user anything; a server passes what its operator allowed its caller, origin.py)."""

    session: str | None = None
    workspace: str | None = None
    host: origin.HostRules = origin.LOCAL


Handler = Callable[["Memory", dict[str, Any], Context], ToolResult]


class Tool(NamedTuple):
    name: str
    description: str
    schema: dict[str, Any]  # JSON Schema of the arguments
    run: Handler
    read_only: bool  # changes nothing (MCP hosts may call it without asking)


TOOLS: dict[str, Tool] = {}


def tool(handler: Handler) -> Handler:
    """Register a handler as the tool of its name: its description and the schema of its
    arguments are the tool's spec (toolspec.py), which the CLI's options share."""
    name = handler.__name__
    spec: Spec = SPECS[name]
    TOOLS[name] = Tool(name, spec.description, spec.schema(), handler, spec.read_only)
    return handler


def _defaults(name: str, args: dict[str, Any]) -> dict[str, Any]:
    """The arguments with the defaults of the parameters left out that have one."""
    spec = SPECS.get(name)
    if spec is None:
        return args
    given = {k: p.default for k, p in spec.params.items() if p.default is not None}
    return {**given, **args}


# -- the tools --------------------------------------------------------------------------------


def _position(task: Task) -> str:
    """Where a task is, on one line: its status and current step."""
    found = current_step(task.plan)
    done = sum(1 for s in task.plan if s.status.value == "completed")
    where = (
        f"current step {found[0]} '{clip(found[1].title, 60)}' ({found[1].status.value})"
        if found is not None
        else "no step left"
    )
    name, status = clip(task.name, 60), task.status.value
    return f"task {task.id} '{name}' {status}, {done}/{len(task.plan)} steps done, {where}"


@tool
def task_register(mem: Memory, args: dict[str, Any], ctx: Context) -> ToolResult:
    with mem.correlation():
        task = mem.create_task(
            args["name"],
            args.get("plan", []),
            goal=args.get("goal"),
            workspace=args.get("workspace") or ctx.workspace,
            domain=args.get("domain"),
            priority=args.get("priority"),
            estimate=args.get("estimate"),
            plan_source=args.get("plan_source"),
        )
        for constraint in args.get("constraints", []):
            mem.add_constraint(task.id, constraint)
    text = (
        f'Registered {_position(task)}. Report progress with task_update(task_id="{task.id}",'
        " step=..., step_status=..., message=...); after a context loss call"
        f' task_update(task_id="{task.id}", query="where was I?").'
    )
    return ToolResult(text, {"task_id": task.id, "task": to_jsonable(task)})


@tool
def task_update(mem: Memory, args: dict[str, Any], ctx: Context) -> ToolResult:
    task_id = args["task_id"]
    renamed = {"error_summary": "error", "failed_step": "error_step"}
    changes = {renamed.get(k, k): args[k] for k in args if k not in ("task_id", "query")}
    data: dict[str, Any] = {}
    lines = []
    if changes:
        before = mem.get_task(task_id) if "message" in changes else None
        task = mem.update_task(task_id, **changes)
        lines.append(f"Updated {_position(task)}.")
        if before is not None:
            lines += _progress_lines(mem, before, task, changes)
        data["task"] = to_jsonable(task)
    if args.get("query"):
        answer = mem.ask(task_id, args["query"])
        lines.append(answer.text)
        if answer.note:
            lines.append(f"({answer.note})")
        data["answer"] = to_jsonable(answer)
    if not lines:
        raise ValidationError(
            "task_update needs something to do: a message, a step and step_status, a status,"
            ' or a query such as "where was I?"'
        )
    return ToolResult("\n".join(lines), data)


def _progress_lines(mem: Memory, before: Task, after: Task, changes: dict[str, Any]) -> list[str]:
    """What a progress message did to the plan: steps it completed (stated, with progress =
    "apply"), or steps it suggests are done, with the call that confirms one."""
    if mem.settings.progress == "off":
        return []
    from clew.tasks.progress import infer

    was = {s.id: s.status for s in before.plan}
    explicit = str(changes.get("step", ""))
    lines = []
    for n, _ in sorted(infer([s.title for s in after.plan], changes["message"]).items()):
        step = after.plan[n - 1]
        if str(n) == explicit or step.id == explicit:
            continue
        if step.status is StepStatus.COMPLETED and was.get(step.id) is not StepStatus.COMPLETED:
            lines.append(
                f"Marked step {n} completed (your message says so); if it is not, call"
                f' task_update(task_id="{after.id}", step={n}, step_status="pending").'
            )
        elif step.status not in (StepStatus.COMPLETED, StepStatus.SKIPPED):
            lines.append(
                f"Your message suggests step {n} is done; if it is, call task_update("
                f'task_id="{after.id}", step={n}, step_status="completed").'
            )
    return lines


@tool
def task_plan(mem: Memory, args: dict[str, Any], ctx: Context) -> ToolResult:
    ops: list[PlanOp] = []
    for n, op in enumerate(args["operations"], 1):
        kind = op["op"]
        needed = {
            "add": ("title",),
            "remove": ("step",),
            "move": ("step", "position"),
            "rename": ("step", "title"),
        }[kind]
        missing = [k for k in needed if k not in op]
        if missing:
            raise ValidationError(f"operation {n} ({kind}) needs {', '.join(missing)}")
        if kind == "add":
            ops.append(AddStep(op["title"], op.get("position")))
        elif kind == "remove":
            ops.append(RemoveStep(op["step"]))
        elif kind == "move":
            ops.append(MoveStep(op["step"], op["position"]))
        else:
            ops.append(RenameStep(op["step"], op["title"]))
    task = mem.replan(args["task_id"], ops, reason=args.get("reason"))
    plan = "\n".join(
        f"  {n}. [{s.status.value}] {clip(s.title, 80)}" for n, s in enumerate(task.plan, 1)
    )
    return ToolResult(f"Replanned {_position(task)}:\n{plan}", {"task": to_jsonable(task)})


_RECORDS = {
    "decision": "add_decision",
    "error": "add_error",
    "finding": "add_finding",
    "constraint": "add_constraint",
    "question": "add_question",
}


@tool
def task_record(mem: Memory, args: dict[str, Any], ctx: Context) -> ToolResult:
    task_id = args["task_id"]
    if ("keep_open" in args or "command" in args) and "error" not in args:
        raise ValidationError("keep_open and command go with error (the error they describe)")
    recorded: list[Any] = []
    with mem.correlation():
        for kind, method in _RECORDS.items():
            if kind in args:
                extra: dict[str, Any] = {}
                if kind == "error" and "resolution" in args:
                    extra["resolution"] = args["resolution"]
                if kind == "error" and args.get("keep_open"):
                    extra["keep_open"] = args["keep_open"]
                if kind == "error" and "command" in args:
                    extra["command"] = args["command"]
                recorded.append(
                    getattr(mem, method)(task_id, args[kind], step=args.get("step"), **extra)
                )
        if "resolves" in args:
            if "resolution" not in args:
                raise ValidationError("resolves needs a resolution: say how the error was fixed")
            recorded.append(mem.resolve(args["resolves"], args["resolution"], task_id=task_id))
        if "keeps_open" in args:
            recorded.append(mem.keep_open(args["keeps_open"], task_id=task_id))
    if not recorded:
        raise ValidationError(
            "task_record needs one of: decision, error, finding, constraint, question,"
            " resolves with a resolution, or keeps_open"
        )
    lines = [
        f"Recorded {e.type.value} {e.id}: {clip(e.summary, 80)}"
        + (f" (replaces {e.supersedes})" if e.supersedes else "")
        + (" (kept open until you resolve it)" if e.keep_open else "")
        for e in recorded
    ]
    return ToolResult("\n".join(lines), {"entries": to_jsonable(recorded)})


@tool
def task_state(mem: Memory, args: dict[str, Any], ctx: Context) -> ToolResult:
    task_id = args.get("task_id")
    if task_id is None:
        primer = mem.prime(args.get("workspace") or ctx.workspace)
        return ToolResult(primer.text, to_jsonable(primer))
    from clew.state.document import MAX_BUDGET

    budget = MAX_BUDGET if args.get("full") else args.get("budget")
    state = mem.state(task_id, budget=budget)
    text = state.text
    if args.get("full"):
        text += "\n" + mem.where(task_id).text
    data = {**to_jsonable(state), "record": to_jsonable(mem.task_record(task_id))}
    return ToolResult(text, data)


@tool
def task_list(mem: Memory, args: dict[str, Any], ctx: Context) -> ToolResult:
    if args.get("all"):
        found = mem.list_tasks(args.get("status"))
    else:
        found = mem.workspace_tasks(args.get("workspace") or ctx.workspace)
    if not found:
        return ToolResult(
            "No tasks match. Register long work with task_register(name=..., plan=[...]).", []
        )
    return ToolResult("\n".join(_position(t) for t in found), to_jsonable(found))


@tool
def memory_search(mem: Memory, args: dict[str, Any], ctx: Context) -> ToolResult:
    hits = mem.search_all(
        args["query"],
        kinds=args.get("kinds"),
        task_id=args.get("task_id"),
        session_id=args.get("session"),
        step=args.get("step"),
        type=args.get("type"),
        tags=args.get("tags", ()),
        since=args.get("since"),
        until=args.get("until"),
        mode=args["mode"],
        limit=args["limit"],
        explain=bool(args.get("explain")),
        include_superseded=bool(args.get("include_superseded")),
    )
    if not hits:
        return ToolResult(f"Nothing recorded matches {args['query']!r}.", [])
    lines = []
    for h in hits:
        where = f" task {h.task_id}" if h.task_id else ""
        where += f" session {h.session_id} turn {h.turn}" if h.session_id else ""
        sure = " (confident)" if h.confident else ""
        opener = h.open
        if h.kind == "turn":  # a model opens a turn with the tool it already has
            opener = (
                f'conversation_recall(action="around", session="{h.session_id}", turn={h.turn})'
            )
        line = (
            f"{h.score:.2f} {h.kind} {h.id} [{label_of(h)}]{where} {h.created_at[:16]}{sure}"
            f" {clip(h.title, 120)}\n   {clip(' '.join(h.snippet.split()), 160)}\n   open: {opener}"
        )
        if h.explain is not None:
            line += f"\n   why: {explain_line(h.explain)}"
        lines.append(line)
    return ToolResult("\n".join(lines), to_jsonable(hits))


@tool
def memory_query(mem: Memory, args: dict[str, Any], ctx: Context) -> ToolResult:
    if "relevant_to" in args:
        if "task_id" not in args:
            raise ValidationError("relevant_to needs task_id: the step belongs to a task")
        entries = mem.query_relevant(args["task_id"], args["relevant_to"], limit=args["limit"])
    else:
        entries = mem.list_entries(
            args.get("task_id"),
            type=args.get("type"),
            status=args.get("status"),
            step=args.get("step"),
            tags=args.get("tags", ()),
            since=args.get("since"),
            until=args.get("until"),
            limit=args["limit"],
        )
    if not entries:
        return ToolResult("No entries match.", [])
    lines = []
    for e in entries:
        state = "" if e.status.value == "active" else f" ({e.status.value})"
        line = f"{e.id} [{e.type.value}]{state} {clip(e.summary, 160)}"
        if e.detail:
            line += f"\n   {clip(e.detail, 300)}"
        if e.resolution:
            line += f"\n   -> {clip(e.resolution, 160)}"
        lines.append(line)
    return ToolResult("\n".join(lines), to_jsonable(entries))


@tool
def conversation_recall(mem: Memory, args: dict[str, Any], ctx: Context) -> ToolResult:
    session = args.get("session")
    where = ctx.workspace or os.getcwd()
    options = {k: v for k, v in args.items() if k not in ("session", "action")}
    if session is None and args["action"] == "search":
        # Search looks through every session of the workspace unless one is named.
        found = mem.recall(None, "search", workspace=where, **options)
        return ToolResult(found.text, to_jsonable(found._replace(turns=())))
    session = session or ctx.session
    chosen = ""
    if session is None:
        # No session named and no server default: the workspace's newest, said so.
        newest = mem.list_sessions(where, limit=1)
        if not newest:
            raise ValidationError(
                f"no session belongs to the workspace {where}; session_list (all=true) lists"
                " the sessions: pass one's id or key as session"
            )
        session = newest[0].id
        chosen = f"(Session {session}: the newest of workspace {where}.)\n"
    found = mem.recall(session, args["action"], **options)
    return ToolResult(chosen + found.text, to_jsonable(found._replace(turns=())))


@tool
def session_list(mem: Memory, args: dict[str, Any], ctx: Context) -> ToolResult:
    where = None if args.get("all") else args.get("workspace") or ctx.workspace or os.getcwd()
    found = mem.list_sessions(where, active_only=bool(args.get("active")), limit=args["limit"])
    if not found:
        scope = "" if where is None else f" of workspace {where} (all=true lists every one)"
        return ToolResult(f"No sessions{scope}.", [])
    lines = []
    for s in found:
        name = f" {s.key!r}" if s.key else ""
        title = f" '{clip(s.title, 60)}'" if s.title else ""
        state = "active" if s.active else "ended"
        task = f", task {s.task_id}" if s.task_id else ""
        lines.append(
            f"{s.id}{name}{title}: {s.turn_count} turns, {state}, last active"
            f" {s.last_active_at[:16]}, workspace {s.workspace or '-'}{task}"
        )
    return ToolResult("\n".join(lines), to_jsonable(found))


def _wait_line(wait: Any) -> str:
    seen = wait.seen or wait.observation
    if wait.status.value == "watching":
        state = f"watching (last check: {seen})" if wait.polled_at else "watching (not checked yet)"
    else:
        state = f"{wait.status.value}: {clip(wait.result or '', 200)}"
    return f"wait {wait.id} on task {wait.task_id}: {clip(wait.label, 100)} — {state}"


@tool
def smart_wait(mem: Memory, args: dict[str, Any], ctx: Context) -> ToolResult:
    action = args["action"]
    needs = {
        "add": ("task_id", "kind", "target"),
        "resolve": ("wait_id",),
        "cancel": ("wait_id",),
    }.get(action, ())
    missing = [k for k in needs if k not in args]
    if missing:
        raise ValidationError(f"action={action} needs {', '.join(missing)}")
    if action == "add":
        keys = (
            "step",
            "description",
            "exit_code",
            "contains",
            "regex",
            "status",
            "poll_every",
            "timeout",
        )
        options = {k: args[k] for k in keys if k in args}
        if "timeout" in options and options["timeout"] == "never":
            options["timeout"] = None
        wait = mem.add_wait(
            args["task_id"],
            args["kind"],
            args["target"],
            cwd=ctx.workspace,
            allowed=ctx.host,
            **options,
        )
        return ToolResult(
            f"Added {_wait_line(wait)}. It is polled every {wait.poll_seconds:g}s; carry on"
            " with other work.",
            to_jsonable(wait),
        )
    if action == "list":
        found = mem.list_waits(args.get("task_id"), status="watching")
        if not found:
            return ToolResult("No wait is being watched.", [])
        return ToolResult("\n".join(_wait_line(w) for w in found), to_jsonable(found))
    if action == "check":
        checks = mem.check_waits(args.get("wait_id"))
        if not checks:
            return ToolResult("No wait was due for a check.", [])
        lines = [f"{_wait_line(c.wait)} ({c.outcome}: {clip(c.evidence, 200)})" for c in checks]
        return ToolResult("\n".join(lines), to_jsonable(checks))
    if action == "resolve":
        wait = mem.resolve_wait(args["wait_id"], args.get("evidence"))
    else:
        wait = mem.cancel_wait(args["wait_id"], args.get("reason"))
    return ToolResult(f"{_wait_line(wait)}.", to_jsonable(wait))


# -- calling ------------------------------------------------------------------------------------


NO_CONTEXT = Context()


# What a model can call to find the right id, when the one it gave matches nothing.
_FIND = {
    "task": "task_list (all=true for every task) shows the ids",
    "entry": "memory_search or memory_query find entries and their ids",
    "session": "session_list (all=true for every workspace) lists the sessions and their ids",
    "turn": "conversation_recall action=search finds turns",
    "wait": "smart_wait action=list shows the waits being watched",
}


def call(
    mem: Memory, name: str, arguments: Mapping[str, Any] | str | None, context: Context = NO_CONTEXT
) -> ToolResult:
    """Run a tool by name with its arguments (a mapping, or JSON text as models write it)."""
    try:
        return run(mem, name, arguments, context)
    except ClewError as exc:
        return _error(error_text(exc))


def run(
    mem: Memory, name: str, arguments: Mapping[str, Any] | str | None, context: Context = NO_CONTEXT
) -> ToolResult:
    """Run a tool as `call` does, but raise the ClewError a failed call is (for adapters that
    map its type, such as the HTTP API's status codes); `error_text` words it for a model."""
    tool = TOOLS.get(name)
    if tool is None:
        raise NotFoundError(
            "tool", name, message=f"no tool is called {name!r}; the tools are: {', '.join(TOOLS)}"
        )
    args = _arguments(arguments)
    check_arguments(tool.schema, args)
    return tool.run(mem, _defaults(name, args), context)


def error_text(exc: ClewError) -> str:
    """The one line a failed call answers with: what is wrong and what to call instead."""
    if isinstance(exc, NotFoundError):
        hint = _FIND.get(exc.kind)
        return f"no {exc.kind} matches {exc.shown}; {hint}" if hint else str(exc)
    return str(exc)


def _arguments(arguments: Mapping[str, Any] | str | None) -> dict[str, Any]:
    if arguments is None or arguments == "":
        return {}
    if isinstance(arguments, str):
        try:
            arguments = checks.json_value(arguments, "the arguments' JSON")
        except checks.NotJson as exc:
            raise ValidationError(f"the arguments are not valid JSON: {exc.reason}") from None
    if not isinstance(arguments, Mapping):
        raise ValidationError("the arguments must be a JSON object")
    return dict(arguments)


def _error(message: str) -> ToolResult:
    return ToolResult(f"Error: {message}", {"error": message}, True)


def guidance() -> str:
    """The system-prompt text that tells a model when to call which tool (`clew prompt`)."""
    from importlib.resources import files

    return files("clew").joinpath("prompts", "guidance.md").read_text(encoding="utf-8")


# -- function calling -------------------------------------------------------------------------


def schemas(format: str = "openai") -> list[dict[str, Any]]:
    """The tools' schemas for a function-calling API: openai, anthropic or mcp."""
    if format == "openai":
        return [
            {
                "type": "function",
                "function": {"name": t.name, "description": t.description, "parameters": t.schema},
            }
            for t in TOOLS.values()
        ]
    if format == "anthropic":
        return [
            {"name": t.name, "description": t.description, "input_schema": t.schema}
            for t in TOOLS.values()
        ]
    if format == "mcp":
        return [
            {"name": t.name, "description": t.description, "inputSchema": t.schema}
            for t in TOOLS.values()
        ]
    raise ValidationError(f"format {format!r} is not one of: openai, anthropic, mcp")


def dispatch(mem: Any, payload: Mapping[str, Any], context: Context = NO_CONTEXT) -> dict[str, Any]:
    """Run the tool call a model asked for and return the message that answers it, in the
    payload's own shape: an OpenAI chat tool call gets a `tool` message, a Responses
    `function_call` item a `function_call_output`, an Anthropic `tool_use` block a
    `tool_result` block."""
    if not isinstance(payload, Mapping):
        raise ValidationError("a tool call must be a JSON object")
    kind = payload.get("type")
    if kind == "tool_use":
        result = call(mem, str(payload.get("name")), payload.get("input"), context)
        return {
            "type": "tool_result",
            "tool_use_id": payload.get("id"),
            "content": result.text,
            "is_error": result.is_error,
        }
    if kind == "function_call":
        result = call(mem, str(payload.get("name")), payload.get("arguments"), context)
        return {
            "type": "function_call_output",
            "call_id": payload.get("call_id"),
            "output": result.text,
        }
    function = payload.get("function")
    if isinstance(function, Mapping):
        result = call(mem, str(function.get("name")), function.get("arguments"), context)
        return {"role": "tool", "tool_call_id": payload.get("id"), "content": result.text}
    raise ValidationError(
        "unknown tool call shape: expected an OpenAI tool call ({'function': ...}), a Responses"
        " function_call item or an Anthropic tool_use block"
    )


# -- scopes of a server's keys ------------------------------------------------------------------


def scope_needed(
    name: str, arguments: Mapping[str, Any] | None, served: origin.HostRules = origin.NOTHING
) -> str:
    """The scope of key a server needs to let a call of tool `name` through: read for the
    read-only tools, admin for a wait that runs a command, reads a file or fetches a URL on
    the server's host, write for the rest (unknown tools: read, so that the call says it is
    unknown). Such a wait also needs the operator's leave (`served`: what the server was
    started to allow): without it no key may add one, and ScopeError names the option.
    Where a file or URL wait may point is checked when it is added (Memory.add_wait)."""
    tool = TOOLS.get(name)
    if tool is None or tool.read_only:
        return "read"
    args = arguments if isinstance(arguments, Mapping) else {}
    kind = args.get("kind")
    if name == "smart_wait" and args.get("action") == "add" and kind in origin.HOST_KINDS:
        closed = origin.closed(str(kind), served)
        if closed is not None:
            raise ScopeError(closed)
        return "admin"
    return "write"
