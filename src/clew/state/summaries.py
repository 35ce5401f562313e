"""Running summaries and live questions, with their no-model answers. Pure.

A question goes to the small model if it is simple ("what step am I on?") and to the large
one, when one is configured, if it is complex ("should I change the plan?", "analyze the
errors"); `is_complex` decides, by its words and length. With no model, or past a cap, or
when the model fails, the records answer, and the answer says so: `intent` classifies the
question (a decision? an error and its fix? a constraint? a command? an open question? where
the task is?) and `search_words` drops what only makes it a question ("which", "did we",
"decide"); what is left is searched in the records of the right kinds, and `records_answer`
shows the best three with what matched. A question with no words left about where the task
is, what comes next or what failed is answered from the brief (`rules_answer`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import cache
from typing import NamedTuple

from clew.core.pattern import LazyPattern, lazy
from clew.core.text import clip
from clew.models import SEARCH_KINDS, Entry, Message, RecordHit, Task
from clew.providers import Message as Prompt
from clew.state.brief import Brief

_COMPLEX = lazy(
    r"\b(?:should|why|how|analy[sz]e|compare|recommend|suggest|plan|risk|alternative|explain|"
    r"evaluate|trade-?offs?|better|worse|improve)\b",
    re.I,
)
_WHERE = lazy(r"\b(?:where|status|progress|what step|which step|current|done|so far)\b", re.I)
_NEXT = lazy(r"\b(?:next|remaining|left|to do|todo|then)\b", re.I)
_FAILED = lazy(r"\b(?:fail\w*|error\w*|broke\w*|wrong|blocker\w*|blocked|issues?)\b", re.I)
_DETAIL = lazy(
    r"(?:https?://\S+|\bv?\d+\.\d+(?:\.\d+)+\b|(?:[\w.-]+/)+[\w.-]+|\b[\w-]+\.(?:py|js|ts|go|rs|"
    r"json|ya?ml|toml|sql|md|sh)\b)"
)


class Answer(NamedTuple):
    """The answer to a question about a task, and where it came from."""

    text: str
    source: str  # "model", "rules" or "search"
    model: str | None = None
    note: str | None = None  # why the model was not used, if it was not


@cache
def prompt(name: str) -> dict[str, str]:
    """A prompt template shipped in clew/prompts/<name>.toml."""
    import tomllib  # lazily, with importlib.resources: ~15 ms of imports on every start
    from importlib import resources

    text = resources.files("clew").joinpath(f"prompts/{name}.toml").read_text("utf-8")
    return {k: str(v).strip() for k, v in tomllib.loads(text).items()}


def is_complex(question: str) -> bool:
    """Whether a question needs judgement (the large model) rather than a lookup."""
    return bool(_COMPLEX.search(question)) or len(question.split()) > 25


def format_messages(messages: Sequence[Message]) -> str:
    """Messages oldest first, one per line, as the prompts show them."""
    ordered = sorted(messages, key=lambda m: m.created_at)
    lines = [f"[{m.created_at[:16]}] {m.role.value}: {m.content}" for m in ordered]
    return "\n".join(lines) or "None."


def plan_text(task: Task) -> str:
    return "; ".join(f"{n}. {s.title} [{s.status.value}]" for n, s in enumerate(task.plan, 1))


def summary_prompt(task: Task, messages: Sequence[Message]) -> list[Prompt]:
    """The running-summary prompt, which also asks the model to refine the task's
    progress summary and next objective."""
    user = prompt("summary")["user"].format(
        name=task.name,
        plan=plan_text(task),
        progress=clip(task.summary or "(none yet)", 600),
        objective=clip(task.next_objective or "(none yet)", 300),
        messages=format_messages(messages),
    )
    return [Prompt("user", user)]


class Refined(NamedTuple):
    """A running summary split into its text and the refinements it ends with."""

    text: str  # the summary, without the PROGRESS and NEXT lines
    progress: str | None  # the task's progress summary, refined
    next_objective: str | None


_REFINED = lazy(r"^\W*(PROGRESS|NEXT)\W*:\s*(.*)$", re.IGNORECASE)


def split_summary(answer: str) -> Refined:
    """Read a running summary: its `PROGRESS:` and `NEXT:` lines (if the model wrote them)
    refine the progress summary and next objective; without a PROGRESS line the summary
    itself is the progress summary."""
    kept: list[str] = []
    found: dict[str, str] = {}
    for line in answer.strip().splitlines():
        match = _REFINED.match(line.strip())
        if match and match.group(2).strip():
            found[match.group(1).upper()] = " ".join(match.group(2).split())
        else:
            kept.append(line)
    text = "\n".join(kept).strip()
    progress = found.get("PROGRESS") or (" ".join(text.split()) or None)
    return Refined(text or answer.strip(), progress, found.get("NEXT"))


def ask_prompt(
    task: Task, summary: str | None, since: int, recent: Sequence[Message], question: str
) -> list[Prompt]:
    """The live-query prompt: the summary, the messages after it, the question."""
    user = prompt("ask")["user"].format(
        name=task.name,
        plan=plan_text(task),
        status=task.status.value,
        summary_messages=since,
        summary=summary or "No summary yet.",
        recent=format_messages(recent),
        question=question,
    )
    return [Prompt("user", user)]


def rules_summary(task: Task, brief: Brief, messages: Sequence[Message]) -> str:
    """A summary built from the records alone: steps, the current one, blockers, details."""
    parts = []
    if brief.completed:
        done = ", ".join(str(s.number) for s in brief.completed)
        parts.append(f"Completed steps {done} of {len(task.plan)}.")
    elif task.plan:
        parts.append(f"No step of {len(task.plan)} is completed yet.")
    if brief.current is not None:
        state = "in progress" if brief.current.status == "active" else "next"
        parts.append(f"Step {brief.current.number} ({brief.current.title}) is {state}.")
    blockers = [*brief.open_errors, *(s.title for s in brief.failed)]
    if blockers:
        parts.append("Blockers: " + "; ".join(clip(b, 100) for b in blockers[:3]) + ".")
    details: dict[str, None] = {}
    for message in sorted(messages, key=lambda m: m.created_at):
        for found in _DETAIL.findall(message.content):
            details[found.rstrip(".,;:)")] = None
    if details:
        parts.append("Details: " + ", ".join(list(details)[-8:]) + ".")
    return " ".join(parts) or f"Task {task.name!r} has no plan or updates yet."


def rules_answer(question: str, brief: Brief, note: str) -> Answer:
    """Answer without a model from the brief: its lines for where / next / failed, else the
    whole brief."""
    lines = brief.text.splitlines()
    picked: list[str] = []
    if _FAILED.search(question):
        failures = ("Failed:", "Open error", "Recent failure", "Its issue")
        picked += [line for line in lines if line.startswith(failures)] or [
            "No open errors or unfixed failures are recorded (resolved ones:"
            f" clew entries --task {brief.task_id} --type error)."
        ]
    if _NEXT.search(question):
        picked += [line for line in lines if line.startswith("Next:") or "next up is" in line] or [
            "No step is left after the current one."
        ]
    if _WHERE.search(question) or not picked:
        picked = [*lines, *picked]
    return Answer("\n".join(dict.fromkeys(picked)), "rules", note=note)


class Intent(NamedTuple):
    """What a question asks about, and where its answer is recorded."""

    name: str  # question, error, decision, constraint, command, brief or general
    kinds: tuple[str, ...]  # record kinds to search (see models.RECORD_KINDS)
    types: tuple[str, ...]  # entry types, when entries are searched
    noun: str  # what the records are called in the answer


# In order: the first that matches a question decides its intent. Each pattern's words are
# also dropped from the words searched for, since records rarely say them.
_INTENTS: tuple[tuple[Intent, LazyPattern], ...] = tuple(
    (Intent(name, kinds, types, noun), lazy(pattern, re.I))
    for name, kinds, types, noun, pattern in (
        ("question", ("entry",), ("question",), "open questions",
         r"\b(?:questions?|unanswered|open|pending|outstanding|unresolved)\b"),
        ("error", ("entry", "action"), ("error",), "errors and failed commands",
         r"\b(?:fix(?:es|ed|ing)?|solv\w*|resolv\w*|errors?|fail\w*|broke|broken|crash\w*|"
         r"exceptions?|tracebacks?|wrong|bugs?|issues?|problems?)\b"),
        ("decision", ("entry",), ("decision",), "decisions",
         r"\b(?:decid\w*|decisions?|chose|choose|chosen|choices?|pick(?:ed)?|settled?(?: on)?|"
         r"opted|go(?:ing)? with|went with|prefer\w*|why did (?:we|i))\b"),
        ("constraint", ("entry",), ("constraint", "user_instruction"), "constraints and rules",
         r"\b(?:allowed|allow|constraints?|rules?|must(?:n't)?|may (?:i|we)|can (?:i|we)|"
         r"forbidden|permitted|requirements?|never|policy|okay to|ok to)\b"),
        ("command", ("action",), (), "commands",
         r"\b(?:commands?|ran|run|invoked?|executed?|shell|command line)\b"),
    )
)  # fmt: skip
_BRIEF = Intent("brief", (), (), "")
GENERAL = Intent("general", SEARCH_KINDS, (), "records")
# Words that only make text a question, or are too common to tell records apart.
_STOP = frozenset(
    """
    a about after again all also am an and any anything are as at be been before being but by can
    could did do does doing done for from get got had has have how i i'm i've if in into is it it's
    its just know let me my need needed of on or our remember said say so should some still tell
    than that that's the their them then there these they this those to up us use used using want
    was we we're were what what's when where where's which who whom whose why will with would you
    your
    """.split()
)
# Words of questions about where the task is (answered from the brief when nothing else is
# asked): they are not searched for either.
_BRIEF_WORDS = lazy(
    r"\b(?:where|status|progress|step|steps|current\w*|doing|done|so far|next|remaining|left|"
    r"to ?do|then|now|working on|up to|was i|am i)\b",
    re.I,
)
_WORD = lazy(r"[^\s?!,;()\"]+")


def intent(question: str) -> Intent:
    """Classify a question: what kind of record answers it. The kind word said first
    decides ("what did we choose for error tracking?" asks for a decision, "which errors
    did we decide to ignore?" for errors): a question names what it asks for before what
    that is about. At one place, the earlier of `_INTENTS` wins."""
    said = [
        (match.start(), order, found)
        for order, (found, pattern) in enumerate(_INTENTS)
        if (match := pattern.search(question))
    ]
    if said:
        found = min(said, key=lambda s: (s[0], s[1]))[2]
        return found if found.name != "error" or search_words(question) else _BRIEF
    if not search_words(question):
        return _BRIEF
    return GENERAL


def search_words(question: str) -> str:
    """The words of a question worth searching for: without question words, stop words and
    the words that only say what kind of record is asked for."""
    text = _BRIEF_WORDS.sub(" ", question.replace("\u2019", "'"))
    for _, pattern in _INTENTS:
        text = pattern.sub(" ", text)
    words = [w.strip(".:'") for w in _WORD.findall(text)]
    return " ".join(w for w in words if w and w.casefold() not in _STOP)


def records_answer(
    found: Intent,
    words: str,
    hits: Sequence[RecordHit],
    entries: Mapping[str, Entry],
    note: str,
    *,
    exact: bool,
) -> Answer:
    """Answer without a model from the records found: one line each, best first, with what
    matched. `exact` says whether they match the question's words (else they are the newest
    or closest records)."""
    noun = found.noun or "records"
    if exact and words:
        head = f"{noun.capitalize()} matching {words!r}, best first:"
    elif words:
        head = f"No {noun} mention {words!r}; the closest records:"
    else:
        head = f"The newest {noun}:"
    if not hits:
        that = f" that match {words!r}" if words else ""
        return Answer(f"No {noun} are recorded{that}.", "search", note=note)
    return Answer("\n".join([head, *(_record_line(h, entries) for h in hits)]), "search", note=note)


def _record_line(hit: RecordHit, entries: Mapping[str, Entry]) -> str:
    """One record in an answer: what it is, its text, its fix or detail, and why it matched."""
    line = f"- {hit.kind} {hit.id} [{hit.label}] {hit.created_at[:16]}: {clip(hit.title, 160)}"
    entry = entries.get(hit.id)
    if entry is not None and entry.resolution:
        line += f" -> {clip(entry.resolution, 160)}"
    if entry is not None and entry.detail:
        line += f" ({clip(' '.join(entry.detail.split()), 160)})"
    if entry is None and hit.snippet:  # the text around the match (an entry shows its own)
        around = " ".join(_MATCHED.sub(r"\1", hit.snippet).split())
        if around.strip("…") not in hit.title:
            line += f" | {clip(around, 160)}"
    matched = sorted({m.casefold() for m in _MATCHED.findall(hit.snippet)})
    if matched:
        line += f" (matched: {', '.join(matched)})"
    return line


_MATCHED = lazy(r"\[([^\[\]]+)\]")
