"""The agent tools' parameters, each defined once: its JSON Schema, its one description and
the default the tool passes when it is left out. The tool registry (`tools.py`) makes each
tool's JSON Schema from these, and the `clew` commands that do what a tool does make their
options from them (`cli/options.py`), so a parameter means the same at every door.

Kept apart from the handlers (and their imports) so that a hook's `clew task update` reads
its options without loading the registry.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from clew.archive.entries import RELEVANT_LIMIT, SEARCH_LIMIT
from clew.conversations.recall import RECALL_ACTIONS
from clew.conversations.recollection import RECALL_LIMIT
from clew.models import SEARCH_KINDS, EntryType, StepStatus, TaskStatus

STEP_STATUSES = [s.value for s in StepStatus]
TASK_STATUSES = [s.value for s in TaskStatus]
ENTRY_TYPES = [t.value for t in EntryType]
PRIORITY = ["low", "normal", "high", "critical"]
PLAN_SOURCES = ["agent", "user", "model", "template"]
SEARCH_MODES = ["auto", "keyword", "dense", "hybrid"]
ENTRY_STATUSES = ["active", "superseded", "resolved"]
WAIT_KINDS = ["command", "file", "url", "time", "manual"]


class Param(NamedTuple):
    """One parameter of a tool."""

    schema: dict[str, Any]  # the JSON Schema of its value, without the description
    description: str
    default: Any = None  # what the tool passes when it is left out (None: the API's own)

    def json_schema(self) -> dict[str, Any]:
        return {**self.schema, "description": self.description}


class Spec(NamedTuple):
    """A tool, without its handler: what it does, for a model, and its parameters."""

    description: str
    params: dict[str, Param]
    required: tuple[str, ...] = ()
    read_only: bool = False  # changes nothing (MCP hosts may call it without asking)

    def schema(self) -> dict[str, Any]:
        """The JSON Schema of the tool's arguments."""
        return object_schema(self.params, self.required)


def object_schema(
    properties: Mapping[str, Param | dict[str, Any]], required: tuple[str, ...] = ()
) -> dict[str, Any]:
    """The JSON Schema of an object with these properties (Params, or schemas as they are)."""
    return {
        "type": "object",
        "properties": {
            name: p.json_schema() if isinstance(p, Param) else p for name, p in properties.items()
        },
        "required": list(required),
        "additionalProperties": False,
    }


def text(description: str) -> Param:
    return Param({"type": "string"}, description)


def strings(description: str) -> Param:
    return Param({"type": "array", "items": {"type": "string"}}, description)


def choice(values: Sequence[str], description: str, default: str | None = None) -> Param:
    return Param({"type": "string", "enum": list(values)}, description, default)


def number(
    description: str, low: int = 1, high: int | None = None, *, default: int | None = None
) -> Param:
    schema: dict[str, Any] = {"type": "integer", "minimum": low}
    if high is not None:
        schema["maximum"] = high
    return Param(schema, description, default)


def flag(description: str) -> Param:
    return Param({"type": "boolean"}, description)


STEP = Param(
    {"type": ["integer", "string"]}, "A step: its number in the plan (1 = first) or its id."
)
TASK_ID = text("The task's id (or an unambiguous prefix).")
ESTIMATE = Param(
    {"type": ["number", "string"]},
    "Estimated duration: seconds, or text like '45m', '2h', '1h30m'.",
)
ENTITIES = Param(
    {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string"}}},
    'Entities the task touched, by kind: {"hosts": ["db-1"], "services":'
    ' ["api"]}. Files, URLs, hosts, services, images, versions and tickets in your'
    " commands and messages are found without this.",
)
SPECS: dict[str, Spec] = {
    "task_register": Spec(
        "Register a long task with its plan before you start it. clew keeps the plan, your"
        " progress, decisions and errors outside your context window, so they survive"
        " compaction and restarts. Returns the task id: keep it.",
        {
            "name": text("A short name for the task."),
            "plan": strings("The steps, in order."),
            "goal": text("What done looks like."),
            "constraints": strings("Rules the work must keep (e.g. 'no ORM')."),
            "workspace": text("The folder the task works in."),
            "domain": text("The task's domain, e.g. 'backend_api' or 'infra'."),
            "priority": choice(PRIORITY, "How urgent the task is."),
            "estimate": ESTIMATE,
            "plan_source": choice(PLAN_SOURCES, "Who made the plan (default: agent)."),
        },
        ("name",),
    ),
    "task_update": Spec(
        "Report progress on a task: a message, a step's new status, the task's status. After a"
        ' context loss, or whenever unsure where you are, pass query="where was I?" (or any'
        " question about the task) and get an exact answer from the records.",
        {
            "task_id": TASK_ID,
            "message": text(
                "What happened (e.g. 'Step 2 done, pushed v1.2.3'). A message that says a step is"
                " done by its number or exact title completes that step."
            ),
            "step": STEP,
            "step_status": choice(
                STEP_STATUSES, "The step's new status (with step; step alone marks it active)."
            ),
            "step_summary": text("A one-line summary of the step's outcome."),
            "active_issue": text("What blocks the step now, if anything."),
            "status": choice(TASK_STATUSES, "The task's new status."),
            "next_objective": text("What you will do next."),
            "summary": text("A summary of progress so far."),
            "answer": text("The task's final answer, when you have it."),
            "outcome": text("How the task turned out, briefly (e.g. 'success', 'deployed v2')."),
            "confidence": Param(
                {"type": "number", "minimum": 0, "maximum": 1},
                "Your confidence (0 to 1) that the goal is or will be met.",
            ),
            "error_summary": text("Why the task failed (with status=failed)."),
            "failed_step": STEP,
            "domain": text("The task's domain."),
            "priority": choice(PRIORITY, "How urgent the task is."),
            "estimate": ESTIMATE,
            "entities": ENTITIES,
            "step_agent": text("With step: the agent doing the step."),
            "step_outcome": text("With step: how the step turned out (e.g. 'success')."),
            "step_artifacts": strings("With step: what the step made (paths, URLs, image tags)."),
            "depends_on": Param(
                {"type": "array", "items": {"type": ["integer", "string"]}},
                "With step: the steps it depends on (numbers or ids).",
            ),
            "query": text("A question about the task, e.g. 'where was I?'."),
        },
        ("task_id",),
    ),
    "task_plan": Spec(
        "Change a task's plan: add, remove, move or rename steps, in order, as one new plan"
        " version. Removed steps keep their history.",
        {
            "task_id": TASK_ID,
            "operations": Param(
                {
                    "type": "array",
                    "minItems": 1,
                    "items": object_schema(
                        {
                            "op": choice(["add", "remove", "move", "rename"], "What to do."),
                            "step": STEP,
                            "title": text("The step's (new) title: add, rename."),
                            "position": number("Where it goes: move, add (else appended)."),
                        },
                        ("op",),
                    ),
                },
                "The changes, applied in order.",
            ),
            "reason": text("Why the plan changes."),
        },
        ("task_id", "operations"),
    ),
    "task_record": Spec(
        "Record on a task what you decided, what broke, what you found, a constraint to keep or"
        " an open question. Decisions, errors and constraints stay in the task's state, which is"
        " always in your prompt. To mark an error fixed, pass resolves (its id) and resolution."
        " A later decision on the same topic replaces the earlier one (name the topic: 'Database:"
        " Postgres 16' or 'Use Postgres 16 for the database'); an error that quotes a failed"
        " command is linked to it and stays open until you resolve it: a later passing run of"
        " that same command is shown beside it as evidence. keep_open (with error), or"
        " keeps_open (an open error's id), marks one you leave open on purpose.",
        {
            "task_id": TASK_ID,
            "decision": text("A decision and its reason."),
            "error": text("An error you met (with resolution if already fixed)."),
            "finding": text("Something you found out."),
            "constraint": text("A rule the work must keep."),
            "question": text("An open question."),
            "resolves": text("The id of an open error (or question) now resolved."),
            "resolution": text("How the error was fixed, or the question's answer."),
            "command": text("With error: the command that failed (links the error to its run)."),
            "keep_open": flag(
                "With error: leave it open until you resolve it (one flaky pass is not a fix)."
            ),
            "keeps_open": text("The id of an open error to leave open until you resolve it."),
            "step": STEP,
        },
        ("task_id",),
    ),
    "task_state": Spec(
        "The task state: goal, plan, current and next steps, constraints, decisions, errors,"
        " findings, questions. full=true shows everything (nothing hidden) and the 'where was I?'"
        " brief. Without task_id: the active tasks of this workspace.",
        {
            "task_id": TASK_ID,
            "full": flag("Show everything, not the budgeted view."),
            "budget": number(
                "Token budget of the view (default: the configured state budget, 1500).",
                800,
                200_000,
            ),
            "workspace": text("Without task_id: this folder's active tasks."),
        },
        read_only=True,
    ),
    "task_list": Spec(
        "List tasks: this workspace's active ones, or with all=true every task (of one status).",
        {
            "all": flag("Every task, not only this workspace's active ones."),
            "status": choice(TASK_STATUSES, "With all: only tasks of this status."),
            "workspace": text("The folder whose tasks to list."),
        },
        read_only=True,
    ),
    "memory_search": Spec(
        "Search everything recorded, best first: decisions, errors, findings and other entries,"
        " task messages, commands with their output, conversation turns, the trace's"
        " decisions (what the agent did, how it turned out), task names, goals and final"
        " answers, plan steps and their issues, patterns and guardrails; each hit with its"
        ' score, kind, id and the clew command that opens it. Ask in plain words ("which'
        ' registry did we pick, and why?"); exact phrases, identifiers like ERR_CONN_RESET or'
        " src/auth.py, a speaker, a tool or a time named in the question count too. What holds"
        " now ranks first: a superseded or resolved record is labelled so ([decision,"
        " superseded], with the entry that replaced it) and ranks below its replacement"
        " (include_superseded to rank history as it matches). kinds, task_id, session, step"
        " and since/until narrow it.",
        {
            "query": text("What to look for: a question or words."),
            "kinds": Param(
                {"type": "array", "items": {"type": "string", "enum": list(SEARCH_KINDS)}},
                "Only these kinds: entry, message, action (commands), turn,"
                " decision (the trace's decisions), task (names), goal, step (titles and"
                " issues), answer (a task's final answer), pattern, guardrail.",
            ),
            "task_id": TASK_ID,
            "session": text("Only the turns of this session (id or key)."),
            "step": STEP,
            "type": choice(ENTRY_TYPES, "Only entries of this type (entries only)."),
            "tags": strings("Only entries with all these tags (entries only)."),
            "since": text("Created at or after: 2026-11-22, 2026-11-22T09:30, or 2h, 7d."),
            "until": text("Created before: a date, a time or an age."),
            "mode": choice(
                SEARCH_MODES,
                "How to rank: keyword, dense (by meaning), hybrid; auto (the default): hybrid"
                " with the vectors extra.",
                default="auto",
            ),
            "explain": flag("Say why each hit ranked where it did."),
            "include_superseded": flag(
                "Rank superseded and resolved records as they match, not below the current."
            ),
            "limit": number("At most this many hits (10).", 1, 100, default=SEARCH_LIMIT),
        },
        ("query",),
        read_only=True,
    ),
    "memory_query": Spec(
        "Exact lookup of recorded entries by task, type, status, step, tags and time, newest"
        " first; or relevant_to=STEP for what matters for a step (its entries, those relevant to"
        " it, and the task's decisions, errors and user instructions).",
        {
            "task_id": TASK_ID,
            "type": choice(ENTRY_TYPES, "Only entries of this type."),
            "status": choice(ENTRY_STATUSES, "Only entries in this status."),
            "step": STEP,
            "relevant_to": STEP,
            "tags": strings("Only entries with all these tags."),
            "since": text("Created at or after: 2026-11-22, 2026-11-22T09:30, or 2h, 7d."),
            "until": text("Created before: a date, a time or an age."),
            "limit": number("At most this many entries (20).", 1, 200, default=RELEVANT_LIMIT),
        },
        read_only=True,
    ),
    "conversation_recall": Spec(
        "Your context window holds only recent turns; the whole conversation is archived. Search"
        " it (action=search, query), fetch turns by number (range, start_turn, end_turn), the"
        " results of a tool's past calls (tool_calls, tool_name), the turns around one (around,"
        " turn), the turns an entry came from (source, entry_id), or a summary. Use it before"
        " asking the user to repeat anything.",
        {
            "action": choice(RECALL_ACTIONS, "What to fetch."),
            "session": text(
                "The session's id, prefix or key (default: search looks through every session of"
                " this workspace; the other actions take this server's session, else the"
                " workspace's newest)."
            ),
            "query": text("For search: what to look for."),
            "tool_name": text("For tool_calls: the tool's name."),
            "start_turn": number("For range: the first turn."),
            "end_turn": number("For range: the last turn."),
            "turn": number("For around: the turn in the middle."),
            "entry_id": text("For source: the entry's id."),
            "limit": number(
                "Hits (search, tool_calls) or turns each side (around).",
                1,
                50,
                default=RECALL_LIMIT,
            ),
        },
        ("action",),
        read_only=True,
    ),
    "session_list": Spec(
        "List conversation sessions, most recently active first: this workspace's, or with"
        " all=true every session. Pass a session's id to conversation_recall.",
        {
            "all": flag("Every session, not only this workspace's."),
            "workspace": text("The folder whose sessions to list (default: the one you work in)."),
            "active": flag("Only sessions that have not ended."),
            "limit": number("At most this many sessions (20).", 1, 200, default=20),
        },
        read_only=True,
    ),
    "smart_wait": Spec(
        "Wait for something on a task's behalf instead of polling it yourself: a command to"
        " succeed (exit code, output), a file to appear, a URL on this machine (127.0.0.1,"
        " localhost) to answer, a time, or a manual condition. clew polls it in the background;"
        " when it is met or times out, a '[wait resolved] ...' message with the evidence lands on"
        " the task and shows in its state. action=add (task_id, kind, target), list, check"
        " (poll now), resolve (wait_id, evidence), cancel (wait_id, reason).",
        {
            "action": choice(["add", "list", "check", "resolve", "cancel"], "What to do."),
            "task_id": TASK_ID,
            "wait_id": text("For check, resolve, cancel: the wait's id."),
            "kind": choice(WAIT_KINDS, "For add: what to await."),
            "target": text(
                "For add: the command line, file path, local URL, ISO time or delay (10m), or the"
                " condition in words."
            ),
            "step": STEP,
            "description": text("For add: what is awaited, in words."),
            "exit_code": number("For a command: the exit code wanted (default 0).", 0, 255),
            "contains": text("Text the output, file or body must contain."),
            "regex": text("A regular expression the output, file or body must match."),
            "status": number("For a URL: the HTTP status wanted (default any 2xx).", 100, 599),
            "poll_every": Param(
                {"type": ["number", "string"]},
                "How often to check (default 30s, at least 1s): seconds, or text like 30s, 5m, 1h.",
                "30s",
            ),
            "timeout": Param(
                {"type": ["number", "string"]},
                "Give up after this long: seconds, or text like 30s, 5m, 1h (default 1h; none"
                " for a time or a manual wait); never for no timeout.",
            ),
            "evidence": text("For resolve: what shows it is met."),
            "reason": text("For cancel: why."),
        },
        ("action",),
    ),
}
