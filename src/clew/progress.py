"""Progress as agents report it: which plan steps a message says are done. Pure.

The original rule marked a step done when a message held a completion word ("done",
"finished") and half of the step's words. That rule reads "step 2 is not done yet", "will
finish step 3 next" and "step 2 failed" as completions. This one reads a message the way
a person does, clause by clause:

1. The message is cut into sentences (at `.`, `!`, `?` or `;` before a space, and at line
   ends) and each sentence into clauses (at commas, dashes, "but", "however", "then"...).
   Step references ("step 2", "steps 1-3", "steps 1, 2 and 4", "the second step") are
   read from the whole sentence first, so a list is not cut apart by its commas.
2. A clause says something is done when it holds a completion word ("done", "completed",
   "finished", "✓"...) or a past-tense verb of the step's own title ("pushed the image"
   for "Push image"), and nothing that takes it back: a negation ("not", "n't", "no",
   "yet"), intent or hedging ("will", "going to", "need to", "should", "almost"), an
   ongoing action ("being", "still"), a failure ("failed", "error", "rejected"), a
   question ("?", or a clause that starts like one: "is step 2 done"), or a condition
   ("once", "if", "when"; "after" and "before" at the clause's start). A failure said in a
   clause of its own that names no step ("pushed the image but the registry rejected it")
   takes back the whole sentence. "No errors" and "without errors" are not failures.
3. A clause that names steps by number marks those steps. One that names none marks the
   steps whose title words (stemmed: "pushing", "pushed" and "push" are one word; stop
   words left out) it shares: at least half of them, and two unless the title has one.

Each inference says how it was made: by number, or by title (and whether the title
match was the only one for its clause). The facade shows inferences as suggestions, or,
with `progress = "apply"`, applies those made by number or by a title that alone matched,
journaled as inferred with the message that caused them.
"""

import functools
import math
import operator
import re
from collections.abc import Sequence
from typing import Any, NamedTuple

from clew.models import FINISHED_STEP_STATUSES, Message, PlanItem, StepStatus

MODES = ("suggest", "apply", "off")
DEFAULT_MODE = "suggest"


class Inferred(NamedTuple):
    """A step a message says is done, and how that was read."""

    step: int  # 1-based position in the plan
    how: str  # "number" (the message names the step) or "title" (it shares its words)
    unique: bool  # for a title match: no other step matched the same clause
    clause: str  # the words that said it

    @property
    def sure(self) -> bool:
        """Whether it is safe to apply without asking: by number, or the only title match."""
        return self.how == "number" or self.unique


class Suggestion(NamedTuple):
    """A step the messages say is done while its status says otherwise."""

    step: int
    title: str
    message: str
    message_id: str = ""
    sure: bool = False


_DONE = frozenset(
    {"done", "completed", "complete", "finished", "succeeded", "passed", "accomplished",
     "✓", "✔", "✅", "☑"}
)  # fmt: skip
_NEGATIONS = frozenset(
    {"not", "never", "no", "nothing", "none", "nor", "cannot", "yet", "without", "neither"}
)
_INTENT = frozenset(
    {"will", "shall", "going", "gonna", "about", "plan", "planning", "intend", "need",
     "needs", "must", "should", "would", "could", "might", "may", "maybe", "hopefully",
     "expect", "expected", "soon", "later", "tomorrow", "todo", "want", "wants", "let",
     "let's", "try", "trying", "attempt", "attempting", "almost", "nearly", "partially",
     "partly", "half", "mostly", "unless", "whether", "probably", "supposed", "being",
     "still", "currently", "ongoing", "waiting", "pending", "remaining", "redo", "undo",
     "undone", "until"}
)  # fmt: skip
_FAILURE = frozenset(
    {"failed", "fail", "fails", "failing", "failure", "failures", "error", "errors", "broke",
     "broken", "crash", "crashed", "crashes", "rejected", "denied", "timeout", "timed",
     "blocked", "blocker", "stuck", "reverted", "revert", "rollback", "rolled", "retry",
     "retrying", "exception", "traceback", "refused", "aborted", "unable", "flaky"}
)  # fmt: skip
_HARMLESS = frozenset({"issues", "issue", "problems", "problem", "warnings", "warning"})
_NONE_OF = frozenset({"no", "without", "zero", "0"})
_QUESTION_START = frozenset(
    {"is", "are", "was", "were", "has", "have", "had", "did", "does", "do", "can", "could",
     "should", "shall", "will", "would", "am"}
)  # fmt: skip
_CONDITION_START = frozenset({"before", "after"})  # at a clause's start: "after step 2 is done"
_CONDITIONS = frozenset({"if", "once", "when", "whenever", "unless", "until"})  # anywhere
_IMPERATIVE = frozenset({"complete", "finish", "done"})  # "Complete step 3" is an order
_STOPWORDS = frozenset(
    {"the", "a", "an", "to", "and", "or", "of", "in", "on", "for", "with", "into", "onto",
     "from", "at", "by", "it", "its", "is", "be", "up", "our", "my", "this", "that", "as",
     "i", "we", "all", "new"}
)  # fmt: skip
_IRREGULAR = {
    "built": "build", "ran": "run", "wrote": "write", "written": "write", "made": "make",
    "sent": "send", "got": "get", "gotten": "get", "took": "take", "taken": "take",
    "found": "find", "brought": "bring", "set": "set", "put": "put",
    "rebuilt": "rebuild", "rewrote": "rewrite", "rewritten": "rewrite", "kept": "keep",
    "left": "leave", "read": "read", "split": "split", "shut": "shut", "cut": "cut",
    "hit": "hit", "won": "win", "drew": "draw", "drawn": "draw", "did": "do", "done": "do",
    "began": "begin", "begun": "begin", "bought": "buy", "caught": "catch", "led": "lead",
    "paid": "pay", "sold": "sell", "told": "tell", "thought": "think", "understood":
    "understand", "spun": "spin", "wound": "wind", "bound": "bind", "fed": "feed",
}  # fmt: skip
_NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5,
    "sixth": 6, "seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10,
}  # fmt: skip


class _Lazy:
    """A regular expression compiled when first used: compiling them all costs an import
    (and so `clew prime`, which never reads a message this way) tens of milliseconds."""

    __slots__ = ("args", "compiled")

    def __init__(self, *args: Any) -> None:
        self.args = args
        self.compiled: re.Pattern[str] | None = None

    def get(self) -> re.Pattern[str]:
        if self.compiled is None:
            self.compiled = re.compile(*self.args)
        return self.compiled


_NUM = r"(?:#\s*)?(\d{1,4})"
_DASHES = "-\u2013\u2014"  # hyphen, en dash, em dash
_RANGE = frozenset({"-", "\u2013", "\u2014", "to", "through", "thru"})
_STEP_LIST = _Lazy(
    rf"\b(?:steps?|subtasks?|stages?)\s*{_NUM}((?:\s*(?:,|/|&|\+|[{_DASHES}]|and|to|through|thru)\s*"
    rf"(?:and\s+)?{_NUM}\b)*)",
    re.IGNORECASE,
)
_STEP_WORD = _Lazy(
    r"\b(?:steps?\s+(one|two|three|four|five|six|seven|eight|nine|ten)\b|"
    r"(?:the\s+)?(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth)\s+step)\b",
    re.IGNORECASE,
)
_ALL_STEPS = _Lazy(
    r"\b(?:all|every|each)\s+(?:of\s+)?(?:the\s+)?(?:(?:\d+|two|three|four|five|six|seven|eight|"
    r"nine|ten)\s+)?(?:steps|step|subtasks)\b",
    re.IGNORECASE,
)
_CONTINUATION = _Lazy(rf"(,|/|&|\+|[{_DASHES}]|and|to|through|thru)?\s*(?:and\s+)?#?\s*(\d{{1,4}})")
_SENTENCES = _Lazy(r"(?<=[.!?;])\s+|\n+")
_CLAUSES = _Lazy(
    "\\s*[,\u2013\u2014]\\s*|\\s+-\\s+|"
    r"\s+(?:but|however|though|although|whereas|while|then|and then|"
    r"except|otherwise|meanwhile)\s+",
    re.IGNORECASE,
)
# A step reference becomes MARK and its index: a private-use character no message keeps.
MARK = "\ue000"
_TOKEN = _Lazy(MARK + r"\d+|[\w'✓✔✅☑]+")
# A cheap first look: a message with none of these says nothing is done.
_MAYBE_DONE = _Lazy(
    r"done|complete|finished|succeeded|passed|accomplished|[✓✔✅☑]|\w{3}ed\b|\b(?:"
    + "|".join(sorted(_IRREGULAR))
    + r")\b",
    re.IGNORECASE,
)


def stem(word: str) -> str:
    """A crude stem that makes the forms of one verb or noun equal: pushed, pushing and
    push; images and image; created and create (a trailing 'e' is dropped everywhere)."""
    word = word.lower().strip("'")
    if word in _IRREGULAR:
        word = _IRREGULAR[word]
    elif len(word) > 4 and word.endswith(("ied", "ies")):
        word = word[:-3] + "y"  # verified -> verify, copies -> copy
    elif len(word) > 4:
        for suffix in ("ing", "ed", "es", "s", "ion"):
            if word.endswith(suffix) and len(word) - len(suffix) >= 3:
                word = word[: -len(suffix)]
                if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiouls":
                    word = word[:-1]  # stopped -> stop, running -> run
                break
    if len(word) > 3 and word.endswith("e"):
        word = word[:-1]
    return word


def _is_past(word: str) -> bool:
    return word in _IRREGULAR or (len(word) > 4 and word.endswith("ed"))


@functools.lru_cache(maxsize=4096)
def title_words(title: str) -> frozenset[str]:
    """The stems of a step title's words, stop words left out."""
    words = _TOKEN.get().findall(title.lower().replace("\u2019", "'"))
    return frozenset(stem(w) for w in words if w not in _STOPWORDS and not w.startswith(MARK))


def _refs(sentence: str, steps: int) -> tuple[str, list[set[int]]]:
    """Replace each step reference in a sentence with a token (MARK k); return the sentence and
    the step numbers of each reference."""
    found: list[set[int]] = []

    def numbers(match: re.Match[str]) -> str:
        picked = {int(match.group(1))}
        last = int(match.group(1))
        for sep, value in _CONTINUATION.get().findall(match.group(2) or ""):
            n = int(value)
            if sep in _RANGE and last < n <= last + 100:
                picked.update(range(last + 1, n + 1))
            else:
                picked.add(n)
            last = n
        found.append({n for n in picked if 1 <= n <= steps})
        return f" {MARK}{len(found) - 1} "

    def word(match: re.Match[str]) -> str:
        n = _NUMBER_WORDS[(match.group(1) or match.group(2)).lower()]
        found.append({n} if 1 <= n <= steps else set())
        return f" {MARK}{len(found) - 1} "

    def every(match: re.Match[str]) -> str:
        found.append(set(range(1, steps + 1)))
        return f" {MARK}{len(found) - 1} "

    text = _ALL_STEPS.get().sub(every, sentence)
    text = _STEP_LIST.get().sub(numbers, text)
    return _STEP_WORD.get().sub(word, text), found


class _Clause(NamedTuple):
    text: str
    words: tuple[str, ...]  # lowercased tokens, references as MARK k
    refs: frozenset[int]  # step numbers it names
    blocked: bool  # negated, hedged, a question, a condition, a failure
    failure: bool  # it speaks of a failure
    done: bool  # it holds a completion word


def _read_clause(text: str, refs: list[set[int]], question: bool) -> _Clause:
    words = tuple(_TOKEN.get().findall(text.lower().replace("\u2019", "'")))
    named: set[int] = set()
    for w in words:
        if w.startswith(MARK):
            named |= refs[int(w[1:])]
    plain = [w for w in words if not w.startswith(MARK)]
    # "no errors", "without issues": not a failure, and not a negation of what was done.
    kept: list[str] = []
    skip = False
    for i, w in enumerate(plain):
        if skip:
            skip = False
            continue
        after = plain[i + 1] if i + 1 < len(plain) else ""
        if w in _NONE_OF and (after in _FAILURE or after in _HARMLESS):
            skip = True
            continue
        kept.append(w)
    failure = any(w in _FAILURE for w in kept)
    negated = any(w in _NEGATIONS or w.endswith("n't") for w in kept)
    intent = any(w in _INTENT or w in _CONDITIONS or w.endswith("'ll") for w in kept)
    first = words[0] if words else ""  # a step reference counts: "step 2 is done"
    starts = first in _QUESTION_START or first in _CONDITION_START
    starts = starts or " ".join(words[:3]).startswith("as soon as")
    imperative = first in _IMPERATIVE and first != "done" and len(words) > 1
    done = any(w in _DONE for w in kept) and not imperative
    blocked = failure or negated or intent or starts or question
    return _Clause(text, words, frozenset(named), blocked, failure, done)


def infer(titles: Sequence[str], text: str) -> dict[int, Inferred]:
    """Return {step number: how} for the steps one message says are done."""
    return dict(_infer(tuple(titles), text))


@functools.lru_cache(maxsize=2048)  # a brief rereads the same messages each time it is built
def _infer(titles: tuple[str, ...], text: str) -> tuple[tuple[int, Inferred], ...]:
    return tuple(_read(titles, text).items())


def _read(titles: Sequence[str], text: str) -> dict[int, Inferred]:
    found: dict[int, Inferred] = {}
    if not _MAYBE_DONE.get().search(text):
        return found  # no completion word and no past tense: nothing can be done
    stems = [title_words(t) for t in titles]
    for sentence in _SENTENCES.get().split(text.strip()):
        sentence = sentence.strip()
        if not sentence:
            continue
        question = sentence.rstrip().endswith("?")
        marked, refs = _refs(sentence.replace(MARK, " "), len(titles))
        clauses = [
            _read_clause(part, refs, question)
            for part in _CLAUSES.get().split(marked)
            if part.strip()
        ]
        if any(c.failure and not c.refs for c in clauses):
            continue  # "pushed the image but the registry rejected it"
        for clause in clauses:
            if clause.blocked:
                continue
            for hit in _clause_steps(clause, stems):
                found.setdefault(hit.step, hit)
    return found


def _clause_steps(clause: _Clause, stems: Sequence[frozenset[str]]) -> list[Inferred]:
    said = " ".join(w for w in clause.words if not w.startswith(MARK))
    present = {stem(w) for w in clause.words if not w.startswith(MARK) and w not in _STOPWORDS}
    past = {stem(w) for w in clause.words if _is_past(w)}
    if clause.refs:
        return [
            Inferred(n, "number", True, said)
            for n in sorted(clause.refs)
            if clause.done or past & stems[n - 1]
        ]
    if any(w.startswith(MARK) for w in clause.words):
        return []  # it named steps, none of them in the plan
    hits: list[tuple[float, int]] = []
    for n, words in enumerate(stems, 1):
        if not words or not (clause.done or past & words):
            continue
        overlap = len(words & present)
        need = max(math.ceil(0.5 * len(words)), min(2, len(words)))
        if overlap >= need:
            hits.append((overlap / len(words), n))
    if not hits:
        return []
    best = max(score for score, _ in hits)
    top = [n for score, n in hits if score == best]
    return [Inferred(n, "title", len(top) == 1, said) for _, n in hits]


def infer_completed(plan: Sequence[PlanItem], messages: Sequence[Message]) -> dict[int, str]:
    """Return {step number: the message that suggests it is done}, from messages alone
    (oldest message first wins)."""
    return {n: m.content for n, (m, _) in _inferences(plan, messages).items()}


def _inferences(
    plan: Sequence[PlanItem], messages: Sequence[Message]
) -> dict[int, tuple[Message, Inferred]]:
    titles = [s.title for s in plan]
    found: dict[int, tuple[Message, Inferred]] = {}
    for message in sorted(messages, key=lambda m: m.created_at):
        if message.role.value == "system":
            continue  # clew's own notes (a wait resolved, a stuck alert) report no progress
        for n, hit in infer(titles, message.content).items():
            found.setdefault(n, (message, hit))
    return found


_written = operator.attrgetter("created_at")


def suggestions(plan: Sequence[PlanItem], messages: Sequence[Message]) -> tuple[Suggestion, ...]:
    """Steps the messages suggest are done but whose status is not finished: only from
    messages written since the step last changed (a later change of the step answers an
    older message)."""
    finished = (StepStatus.COMPLETED, StepStatus.SKIPPED)
    if all(step.status in finished for step in plan):
        return ()
    titles = tuple(s.title for s in plan)
    # Each message is read once, oldest first; each step takes the first that says it is
    # done among those written since the step last changed. A brief reads some 200 messages
    # of which few say anything is done: only those are kept (`_infer` is cached; the
    # message's role is compared as the string it is, not through the enum's `value`).
    said = []
    for m in sorted(messages, key=_written):
        if m.role != "system":
            hits = _infer(titles, m.content)
            if hits:
                said.append((m, dict(hits)))
    out = []
    for n, step in enumerate(plan, 1):
        if step.status in finished:
            continue
        for message, found in said:
            if n in found and message.created_at >= step.updated_at:
                out.append(Suggestion(n, step.title, message.content, message.id, found[n].sure))
                break
    return tuple(out)


def to_apply(
    plan: Sequence[PlanItem], text: str, *, exclude: str | None = None
) -> list[tuple[PlanItem, Inferred]]:
    """The steps a new message completes when progress is applied: those it names by
    number or by a title no other step shares, that are not finished (nor `exclude`, a step
    the same call changes itself)."""
    out = []
    for n, hit in sorted(infer([s.title for s in plan], text).items()):
        step = plan[n - 1]
        if not hit.sure or step.id == exclude:
            continue
        if step.status in FINISHED_STEP_STATUSES and step.status is not StepStatus.FAILED:
            continue
        out.append((step, hit))
    return out
