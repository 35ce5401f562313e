"""Write-time extraction: when a step completes, what is worth remembering from
it becomes typed archive entries. Pure: records in, drafts out.

With a utility model, the extractor prompt (prompts/extractor.toml) runs over the
step's tool calls and messages, and `parse` reads its answer robustly: from a code fence or
from prose around the JSON, an array or a single object. Anything malformed is refused as
a whole, so a half-understood answer never stores some entries and not others.

With no model, `rules` extracts deterministically and says less rather than guess: a failed
command becomes an error (not a grep that found nothing or a diff that saw a difference), a
file written an artifact, and a message what it plainly claims (claims.py): an agent's
decision ("Decided to...", "Going with..."), finding ("Turns out...") or relayed constraint
("The user said not to..."), a user's instruction ("Never force-push to main"). Status
chatter ("Build image: running it using the standard script") is none of them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, NamedTuple

from clew.archive.claims import claims
from clew.archive.claims import sentences as sentences  # here before claims.py: callers import it
from clew.archive.fingerprint import telling_line
from clew.core.text import clip
from clew.models import Action, ActionStatus, Message, PlanItem

MODEL_TYPES = ("decision", "error", "tool_result", "discovery", "constraint", "artifact", "context")
SUMMARY_CHARS = 300  # the prompt asks for 150; longer is cut, not refused
DETAIL_CHARS = 20_000
OUTPUT_TAIL = 4_000  # characters of a command's output shown to the model or kept

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.S)


class Draft(NamedTuple):
    """An entry to store: what the extractor found, before it has an id."""

    type: str
    summary: str
    detail: str | None = None
    tags: tuple[str, ...] = ()
    relevance_to: tuple[str, ...] = ()  # step ids
    sources: tuple[tuple[str, str], ...] = ()
    command: str | None = None  # for an error: the command that failed


class ExtractionError(ValueError):
    """The model's answer could not be read as entries."""


def _text(value: object) -> str:
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    return value if isinstance(value, str) else ""


def _tail(text: str, limit: int = OUTPUT_TAIL) -> str:
    return text if len(text) <= limit else "…" + text[-limit:]


# Programs whose exit status answers a question ("no match", "the files differ", "not
# there", "not an ancestor", "inactive") rather than reporting a failure: with nothing on
# stderr, such a run is no error. Status 1 for most; `systemctl is-active` says 3.
_ANSWERING = frozenset(
    """
    grep egrep fgrep rg ag ack diff cmp test [ [[ pgrep which command type hash
    """.split()
)
_ALSO_ANSWERING = re.compile(
    r"^(?:git\s+(?:grep\b|diff\b.*\s--(?:quiet|exit-code)\b|merge-base\s+--is-ancestor\b"
    r"|show-ref\b.*\s--quiet\b)|(?:npm|yarn|pnpm)\s+outdated\b"
    r"|systemctl\s+is-(?:active|enabled|failed)\b)"
)

# `terraform plan` and `helm diff` with --detailed-exitcode: 2 says there are changes.
_PLAN_CHANGES = re.compile(r"^(?:terraform\s+plan|helm\s+diff)\b.*\s--?detailed-exitcode\b")


def answers_no(action: Action) -> bool:
    """Whether a failed command only answered "no" (grep found nothing, diff saw a
    difference, `test` was false): nothing on stderr, from a program that answers so. In
    `a && b` with no output at all, `a` answered (b never ran or said nothing)."""
    command = (action.command or "").strip()
    if action.exit_code in (None, 0) or _text(action.stderr).strip() or not command:
        return False
    if "&&" in command and not _text(action.stdout).strip():
        command = command.split("&&", 1)[0].strip()
    if any(mark in command for mark in ("|", "&&", ";")):
        return False  # a pipeline's status is its last part's: too much to read into it
    if _PLAN_CHANGES.match(command):
        return action.exit_code == 2
    if _ALSO_ANSWERING.match(command):
        return True
    program = command.split()[0].rsplit("/", 1)[-1]
    return action.exit_code == 1 and program in _ANSWERING


def rules(
    step: PlanItem | None,
    actions: Sequence[Action],
    messages: Sequence[Message],
    files: Sequence[str],
) -> list[Draft]:
    """Extract entries from a step's records by deterministic rules (no model)."""
    subtask = (step.id,) if step is not None else ()
    drafts: list[Draft] = []
    for action in actions:
        if action.status not in (ActionStatus.FAILED, ActionStatus.TIMEOUT):
            continue
        if action.status is ActionStatus.FAILED and answers_no(action):
            continue
        output = _text(action.stderr).strip() or _text(action.stdout).strip()
        what = f"`{clip(action.command, 80)}`" if action.command else clip(action.summary, 80)
        code = f" (exit {action.exit_code})" if action.exit_code is not None else ""
        line = telling_line(output)
        summary = f"{what} failed{code}" + (f": {line}" if line else "")
        program = (action.command or action.tool or action.type.value).split()[0]
        drafts.append(
            Draft(
                "error",
                clip(summary, SUMMARY_CHARS),
                _tail(output) or None,
                ("command", clip(program.rsplit("/", 1)[-1], 40)),
                subtask,
                (("action", action.id),),
                action.command,
            )
        )
    for path in files:
        wrote = clip(f"Wrote {path}", SUMMARY_CHARS)
        drafts.append(Draft("artifact", wrote, None, ("file",), subtask))
    for message in messages:
        for claim in claims(message.content, message.role.value):
            summary = clip(claim.sentence, SUMMARY_CHARS)
            source = (("message", message.id),)
            drafts.append(Draft(claim.kind, summary, message.content, (), subtask, source))
    return drafts


def format_calls(actions: Sequence[Action]) -> str:
    """A step's tool calls and commands, oldest first, as the extractor prompt shows them."""
    blocks = []
    for action in sorted(actions, key=lambda a: a.created_at):
        kind = action.tool or action.type.value
        head = f"$ {action.command}" if action.command else f"[{kind}] {action.summary}"
        if action.exit_code is not None:
            head += f"  (exit {action.exit_code})"
        head += f"  [{action.status.value}]  (action {action.id})"
        parts = [head]
        if action.input:
            parts.append(f"input: {json.dumps(action.input)[:1000]}")
        for label, stream in (("stdout", action.stdout), ("stderr", action.stderr)):
            text = _text(stream).strip()
            if text:
                parts.append(f"{label}:\n{_tail(text, 1500)}")
        if action.output:
            parts.append(f"result: {json.dumps(action.output)[:1000]}")
        blocks.append("\n".join(parts))
    return "\n\n".join(blocks) or "(none)"


def _json_candidates(text: str) -> list[Any]:
    """Every JSON value the text holds: fenced blocks first, then raw arrays and objects."""
    found: list[Any] = []
    for block in _FENCE.findall(text):
        try:
            found.append(json.loads(block))
        except ValueError:
            continue
    decoder = json.JSONDecoder()
    for index, char in enumerate(text):
        if char in "[{":
            try:
                value, _ = decoder.raw_decode(text, index)
            except ValueError:
                continue
            found.append(value)
            break  # the first complete value; what follows is prose or its own parts
    return found


def _labels(value: object, field: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        items = value.split(",")
    elif isinstance(value, list):
        items = [str(v) for v in value]
    else:
        raise ExtractionError(f"{field} is neither a comma-separated text nor a list")
    return tuple(dict.fromkeys(i.strip() for i in items if i.strip()))


def entities(text: str) -> dict[str, list[str]] | None:
    """The entities a model's answer names beside its entries ({"entries": [...],
    "entities": {kind: [names]}}), validated; None if it names none or they are unusable
    (the entries still stand)."""
    from clew.errors import ValidationError
    from clew.tasks.record import entities as checked

    candidates = _json_candidates(text)
    value = candidates[0] if candidates else None
    if not isinstance(value, dict) or not isinstance(value.get("entities"), dict):
        return None
    try:
        return checked(value["entities"]) or None
    except ValidationError:
        return None


def parse(text: str, step_ids: dict[str, str]) -> list[Draft]:
    """Read a model's answer as drafts, or raise ExtractionError saying why not.

    `step_ids` maps what the model may name a step by (its id, its number as text) to the
    step's id; unknown names in relevance_to are dropped, since the fact still stands.
    """
    candidates = _json_candidates(text)
    if not candidates:
        raise ExtractionError("the answer holds no JSON array or object")
    value = candidates[0]
    if isinstance(value, dict):
        value = value.get("entries", [value]) if "type" not in value else [value]
    if not isinstance(value, list):
        raise ExtractionError("the JSON is neither an array of entries nor an entry")
    drafts = []
    for number, item in enumerate(value, 1):
        if not isinstance(item, dict):
            raise ExtractionError(f"entry {number} is not an object")
        kind = str(item.get("type", "")).strip().lower()
        if kind not in MODEL_TYPES:
            raise ExtractionError(f"entry {number} has type {kind!r}, not one of {MODEL_TYPES}")
        summary = item.get("summary")
        if not isinstance(summary, str) or not summary.strip():
            raise ExtractionError(f"entry {number} has no summary")
        detail = item.get("detail")
        if detail is not None and not isinstance(detail, str):
            detail = json.dumps(detail)
        named = _labels(item.get("relevance_to"), "relevance_to")
        relevance = tuple(step_ids[name] for name in named if name in step_ids)
        drafts.append(
            Draft(
                kind,
                clip(summary, SUMMARY_CHARS),
                detail[:DETAIL_CHARS] if detail else None,
                _labels(item.get("tags"), "tags"),
                tuple(dict.fromkeys(relevance)),
            )
        )
    return drafts
