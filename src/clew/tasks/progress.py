"""Progress as agents report it: which plan steps a message says are done. Pure.

A message can say a step is done in two ways, and clew treats them apart:

- **Stated**: it names the step unambiguously — by number ("step 2 done", "Completed
  steps 1-3", "✅ Step 4") or by its exact title ("Finished Build image", "Build image:
  done", a checked box "- [x] Build image") — with a completion word in the same clause.
  By default (`progress = "apply"`) a stated step is completed at once, journaled as
  inferred from that message, and the brief says which message it came from.
- **Suggested**: the message shares words with a step's title and says something is done
  ("Pushed the image" for "Push image to registry"). It is only shown, with the message
  as evidence; the agent decides. A suggestion never comes from a message that names a
  step (by number or title: it speaks of that step, not of others), from words of the
  step's own title ("verified" in "Backfill email_verified" is not a completion word for
  it), nor from words other steps' titles share (a version or an identifier in two
  titles says nothing of either).

A message is read the way a person does, clause by clause:

1. The message is cut into sentences (at `.`, `!`, `?` or `;` before a space, and at line
   ends) and each sentence into clauses (at commas, dashes, "but", "however", "then"...).
   Step references ("step 2", "steps 1-3", "steps 1, 2 and 4", "the second step") and
   exact titles (the longest first) are read from the whole sentence first, so a list or
   a title is not cut apart by its commas.
2. A clause says something is done when it holds a completion word ("done", "completed",
   "finished", "✓"...) or, for a step named by number or only by its words, a past-tense
   verb of the step's own title ("pushed the image" for "Push image"), and nothing that
   takes it back: a negation ("not", "n't", "no", "yet"), intent, hedging or work still
   going on ("will", "going to", "need to", "picking up", "starting", "working on",
   "next", "still", "being"), a failure ("failed", "error", "rejected"), a question ("?",
   or a clause that starts like one: "is step 2 done"), or a condition ("once", "if",
   "when"; "after" and "before" at the clause's start). A failure said in a clause of its
   own that names no step ("pushed the image but the registry rejected it") takes back
   the whole sentence. "No errors" and "without errors" are not failures. A title right
   after "for", "before", "after", "towards" or "until" is mentioned, not said done.
3. A clause that names steps says those steps are done (stated). A message that names no
   step suggests the steps whose title words (stemmed: "pushing", "pushed" and "push" are
   one word; stop words left out) one of its clauses shares: at least half of them and
   two unless the title has one, among them a word no other title has; only the best
   matching steps of the clause are suggested.

Modes (`[progress] mode`, `CLEW_PROGRESS`): `apply` (the default) completes stated steps
and shows suggestions; `suggest` completes nothing and shows both as suggestions; `off`
reads no message for progress.
"""

import functools
import itertools
import math
import operator
import re
from collections.abc import Sequence
from typing import Any, NamedTuple

from clew.models import FINISHED_STEP_STATUSES, Message, PlanItem, StepStatus

MODES = ("apply", "suggest", "off")
DEFAULT_MODE = "apply"


class Inferred(NamedTuple):
    """A step a message says is done, and how that was read."""

    step: int  # 1-based position in the plan
    how: str  # "number" or "title" (the message names the step), "words" (it shares them)
    stated: bool  # named unambiguously with a completion word: applied by default
    clause: str  # the words that said it

    @property
    def sure(self) -> bool:
        """Whether it is safe to apply without asking: the message states it."""
        return self.stated


class Suggestion(NamedTuple):
    """A step the messages say is done while its status says otherwise."""

    step: int
    title: str
    message: str
    message_id: str = ""
    sure: bool = False  # stated (named by number or title), not only suggested by words


_DONE = frozenset(
    """
    done completed complete finished succeeded passed accomplished ✓ ✔ ✅ ☑
    """.split()
)
_NEGATIONS = frozenset(
    {"not", "never", "no", "nothing", "none", "nor", "cannot", "yet", "without", "neither"}
)
_INTENT = frozenset(
    """
    will shall going gonna plan planning intend need needs must should would could might may maybe
    hopefully expect expected soon later tomorrow todo want wants let let's try trying attempt
    attempting almost nearly partially partly half mostly unless whether probably supposed being
    still currently ongoing waiting pending remaining redo undo undone until picking pick starting
    start starts begin beginning begins working next queued queue kicking kick wip resuming resume
    continuing continue
    """.split()
)
_FAILURE = frozenset(
    """
    failed fail fails failing failure failures error errors broke broken crash crashed crashes
    rejected denied timeout timed blocked blocker stuck reverted revert rollback rolled retry
    retrying exception traceback refused aborted unable flaky
    """.split()
)
_HARMLESS = frozenset({"issues", "issue", "problems", "problem", "warnings", "warning"})
_NONE_OF = frozenset({"no", "without", "zero", "0"})
_QUESTION_START = frozenset(
    """
    is are was were has have had did does do can could should shall will would am
    """.split()
)
_CONDITION_START = frozenset({"before", "after"})  # at a clause's start: "after step 2 is done"
_CONDITIONS = frozenset({"if", "once", "when", "whenever", "unless", "until"})  # anywhere
_IMPERATIVE = frozenset({"complete", "finish", "done"})  # "Complete step 3" is an order
_STOPWORDS = frozenset(
    """
    the a an to and or of in on for with into onto from at by it its is be up our my this that as i
    we all new
    """.split()
)
_IRREGULAR = {
    "built": "build",
    "ran": "run",
    "wrote": "write",
    "written": "write",
    "made": "make",
    "sent": "send",
    "got": "get",
    "gotten": "get",
    "took": "take",
    "taken": "take",
    "found": "find",
    "brought": "bring",
    "set": "set",
    "put": "put",
    "rebuilt": "rebuild",
    "rewrote": "rewrite",
    "rewritten": "rewrite",
    "kept": "keep",
    "left": "leave",
    "read": "read",
    "split": "split",
    "shut": "shut",
    "cut": "cut",
    "hit": "hit",
    "won": "win",
    "drew": "draw",
    "drawn": "draw",
    "did": "do",
    "done": "do",
    "began": "begin",
    "begun": "begin",
    "bought": "buy",
    "caught": "catch",
    "led": "lead",
    "paid": "pay",
    "sold": "sell",
    "told": "tell",
    "thought": "think",
    "understood": "understand",
    "spun": "spin",
    "wound": "wind",
    "bound": "bind",
    "fed": "feed",
}
_NUMBER_WORDS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "first": 1,
    "second": 2,
    "third": 3,
    "fourth": 4,
    "fifth": 5,
    "sixth": 6,
    "seventh": 7,
    "eighth": 8,
    "ninth": 9,
    "tenth": 10,
}


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
_ONLY_REFS = _Lazy(rf"[\s:#*`'\"]*(?:{MARK}\d+[\s:#*`'\"]*)+")
_TOKEN = _Lazy(MARK + r"\d+|[\w'✓✔✅☑]+")
# A cheap first look: a message with none of these says nothing is done.
_MAYBE_DONE = _Lazy(
    r"done|complete|finished|succeeded|passed|accomplished|[✓✔✅☑☒]|\[[xX]\]|\w{3}ed\b|\b(?:"
    + "|".join(sorted(_IRREGULAR))
    + r")\b",
    re.IGNORECASE,
)
# A checklist line: "- [x] Build image" is done, "- [ ] Build image" is not.
# Claude Code's todo list shows ☒ and ☐, Codex's plan ✔ and □.
_CHECKED = _Lazy(r"^\s*(?:[-*+]\s*)?(?:\[[xX]\]|☒)\s*", re.MULTILINE)
_UNCHECKED = _Lazy(r"^\s*(?:[-*+]\s*)?(?:\[\s\]|☐|□)\s*", re.MULTILINE)
# Before a title, these make it a mention ("the prerequisites for Deploy to staging are
# done"), not the step said done.
_MENTION_BEFORE = frozenset(
    """
    for before after towards toward until till unblock unblocks unblocked unblocking blocks blocking
    prerequisite prerequisites
    """.split()
)


def may_say_done(text: str) -> bool:
    """A cheap first look: False when the message holds no completion word, checked box or
    past tense, so it cannot say any step is done."""
    return _MAYBE_DONE.get().search(text) is not None


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
    """The stems of a step title's words, stop words left out (but a last one-letter word,
    a label: "Upgrade node pool A" is not "Upgrade node pool B")."""
    words = _TOKEN.get().findall(title.lower().replace("\u2019", "'"))
    kept = {stem(w) for w in words if w not in _STOPWORDS and not w.startswith(MARK)}
    if words and len(words[-1]) == 1 and len(words) > 1:
        kept.add(words[-1])
    return frozenset(kept)


def _title_body(title: str) -> str | None:
    """A title as the message may write it: any case, any run of spaces; None for a title
    too bare to name a step (no letters)."""
    words = title.strip().rstrip(".:;!").split()
    if not words or not any(c.isalpha() for c in title):
        return None
    return r"\s+".join(re.escape(w) for w in words)


@functools.lru_cache(maxsize=1024)
def _title_pattern(titles: tuple[str, ...]) -> tuple[re.Pattern[str] | None, tuple[int, ...]]:
    """One pattern for the plan's titles, the longest first, so "Push image to prod" is read
    before "Push image" (a title two steps share names neither), and the step each of its
    groups stands for."""
    counts: dict[str, int] = {}
    for t in titles:
        key = " ".join(t.lower().split())
        counts[key] = counts.get(key, 0) + 1
    bodies, steps = [], []
    for n, t in sorted(enumerate(titles, 1), key=lambda x: -len(x[1])):
        body = _title_body(t)
        if body is not None and counts[" ".join(t.lower().split())] == 1:
            bodies.append(f"({body})")
            steps.append(n)
    if not bodies:
        return None, ()
    either = "|".join(bodies)
    edge = rf"[\w{MARK}]"
    pattern = re.compile(rf"(?<!{edge})[`'\"]?(?:{either})[`'\"]?(?!{edge})", re.IGNORECASE)
    return pattern, tuple(steps)


class _Ref(NamedTuple):
    steps: frozenset[int]  # the plan's step numbers it names
    how: str  # "number" or "title"
    mention: bool  # a title right after "for", "before"...: named, not said done


def _refs(sentence: str, titles: tuple[str, ...]) -> tuple[str, list[_Ref]]:
    """Replace each step reference in a sentence (exact titles first, then numbers) with a
    token (MARK k); return the sentence and what each reference names."""
    found: list[_Ref] = []
    steps = len(titles)

    def token(ref: _Ref) -> str:
        found.append(ref)
        return f" {MARK}{len(found) - 1} "

    def title(match: re.Match[str]) -> str:
        n = steps_of[(match.lastindex or 1) - 1]
        before = re.findall(r"[\w']+", match.string[: match.start()].lower())[-1:]
        mention = bool(before) and before[0] in _MENTION_BEFORE
        return token(_Ref(frozenset({n}), "title", mention))

    pattern, steps_of = _title_pattern(titles)
    text = sentence if pattern is None else pattern.sub(title, sentence)

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
        return token(_Ref(frozenset(n for n in picked if 1 <= n <= steps), "number", False))

    def word(match: re.Match[str]) -> str:
        n = _NUMBER_WORDS[(match.group(1) or match.group(2)).lower()]
        return token(_Ref(frozenset({n} if 1 <= n <= steps else ()), "number", False))

    def every(match: re.Match[str]) -> str:
        return token(_Ref(frozenset(range(1, steps + 1)), "number", False))

    text = _ALL_STEPS.get().sub(every, text)
    text = _STEP_LIST.get().sub(numbers, text)
    return _STEP_WORD.get().sub(word, text), found


class _Clause(NamedTuple):
    text: str
    words: tuple[str, ...]  # lowercased tokens, references as MARK k
    refs: tuple[_Ref, ...]  # the step references it holds
    blocked: bool  # negated, hedged, a question, a condition, a failure
    failure: bool  # it speaks of a failure
    done: bool  # it holds a completion word


_ONGOING = frozenset({("in", "progress"), ("under", "way"), ("in", "flight")})
_FRACTION = _Lazy(r"(?<![\w.])(\d+)\s*/\s*(\d+)(?![\w.%])")


def _partial(words: Sequence[str], text: str) -> bool:
    """Whether a clause counts part of something: "9 of 14", "2/3" (a smaller number of a
    larger one), as in "9 of 14 nodes upgraded"."""
    for a, b, c in zip(words, words[1:], words[2:], strict=False):
        if b == "of" and a.isdigit() and c.isdigit() and int(a) < int(c):
            return True
    plain = re.sub(MARK + r"\d+", " ", text)
    return any(int(a) < int(b) for a, b in _FRACTION.get().findall(plain))


def _read_clause(
    text: str, refs: list[_Ref], question: bool, named: frozenset[str] = frozenset()
) -> _Clause:
    """Read one clause; `named`: the words of the plan's titles, which name a step and so
    say no failure ("Fixed the broken links" for "Fix broken links")."""
    words = tuple(_TOKEN.get().findall(text.lower().replace("\u2019", "'")))
    held = tuple(refs[int(w[1:])] for w in words if w.startswith(MARK))
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
    failure = any(w in _FAILURE and w not in named for w in kept)
    negated = any(w in _NEGATIONS or w.endswith("n't") for w in kept)
    intent = any(w in _INTENT or w in _CONDITIONS or w.endswith("'ll") for w in kept)
    intent = intent or any(pair == ("about", "to") for pair in itertools.pairwise(kept))
    # Work under way: "in progress", "underway", "9 of 14 nodes", "290/312 converted".
    intent = intent or any(pair in _ONGOING for pair in itertools.pairwise(kept))
    intent = intent or "underway" in kept or _partial(kept, text)
    first = words[0] if words else ""  # a step reference counts: "step 2 is done"
    starts = first in _QUESTION_START or first in _CONDITION_START
    starts = starts or " ".join(words[:3]).startswith("as soon as")
    imperative = first in _IMPERATIVE and first != "done" and len(words) > 1
    done = any(w in _DONE for w in kept) and not imperative
    blocked = failure or negated or intent or starts or question
    return _Clause(text, words, held, blocked, failure, done)


def infer(titles: Sequence[str], text: str) -> dict[int, Inferred]:
    """Return {step number: how} for the steps one message says (stated) or suggests
    (words) are done."""
    return dict(_infer(tuple(titles), text))


@functools.lru_cache(maxsize=2048)  # a brief rereads the same messages each time it is built
def _infer(titles: tuple[str, ...], text: str) -> tuple[tuple[int, Inferred], ...]:
    return tuple(_read(titles, text).items())


def _read(titles: tuple[str, ...], text: str) -> dict[int, Inferred]:
    found: dict[int, Inferred] = {}
    if not _MAYBE_DONE.get().search(text):
        return found  # no completion word and no past tense: nothing can be done
    stems = _stems(titles)
    text = _UNCHECKED.get().sub(" not done: ", _CHECKED.get().sub(" \u2705 ", text))
    sentences = []
    for sentence in _SENTENCES.get().split(text.strip()):
        sentence = sentence.strip()
        if sentence:
            sentences.append(
                (sentence.rstrip().endswith("?"), *_refs(sentence.replace(MARK, " "), titles))
            )
    # A message that names a step speaks of that step: its words suggest no other.
    named = any(refs for _, _, refs in sentences)
    for question, marked, refs in sentences:
        clauses = [
            _read_clause(part, refs, question, stems.named)
            for part in _parts(marked)
            if part.strip()
        ]
        if any(c.failure and not c.refs for c in clauses):
            continue  # "pushed the image but the registry rejected it"
        if clauses and _conditional(clauses[0]):
            continue  # "if the suite passes three times, step 4 is done"
        for clause in clauses:
            if clause.blocked:
                continue
            hits = _stated(clause, titles, stems) if named else _suggested(clause, titles, stems)
            for hit in hits:
                if hit.step not in found or (hit.stated and not found[hit.step].stated):
                    found[hit.step] = hit
    return found


def _conditional(clause: _Clause) -> bool:
    """A sentence that opens with a condition ("If...", "Once...", "When...") says
    nothing is done in any of its clauses."""
    first = clause.words[0] if clause.words else ""
    return first in _CONDITIONS or " ".join(clause.words[:3]) == "as soon as"


def _parts(marked: str) -> list[str]:
    """A sentence's clauses; a clause that is only step references ("Step 2", a title)
    keeps the clause after it: "Build image — done", "Step 2 — pushed the image"."""
    parts: list[str] = []
    for part in _CLAUSES.get().split(marked):
        if parts and _ONLY_REFS.get().fullmatch(parts[-1]):
            parts[-1] = f"{parts[-1]} {part}"
        else:
            parts.append(part)
    return parts


class _Stems(NamedTuple):
    words: tuple[frozenset[str], ...]  # each title's stems
    literal: tuple[frozenset[str], ...]  # each title's words as written, lowercased
    named: frozenset[str]  # every title's words as written


@functools.lru_cache(maxsize=1024)
def _stems(titles: tuple[str, ...]) -> _Stems:
    words = tuple(title_words(t) for t in titles)
    literal = tuple(
        frozenset(_TOKEN.get().findall(t.lower().replace("\u2019", "'"))) for t in titles
    )
    return _Stems(words, literal, frozenset().union(*literal))


def _said(clause: _Clause) -> str:
    return " ".join(w for w in clause.words if not w.startswith(MARK))


def _stated(clause: _Clause, titles: tuple[str, ...], stems: _Stems) -> list[Inferred]:
    """The steps a clause names and says are done: by a completion word, or (named by
    number) by a past-tense verb of the step's own title ("step 2: pushed the image")."""
    out = []
    for ref in clause.refs:
        if ref.mention:
            continue
        for n in sorted(ref.steps):
            past = {stem(w) for w in clause.words if _is_past(w) and w not in stems.literal[n - 1]}
            if clause.done or (ref.how == "number" and past & stems.words[n - 1]):
                out.append(Inferred(n, ref.how, True, _said(clause)))
    return out


def _names_only(n: int, shared: frozenset[str], stems: _Stems) -> bool:
    """Whether the words a clause shares with step n's title point at it alone: together
    they are in no other title, and one of them is a word, not a number or a version
    ("v2.19.2" in two titles names neither)."""
    if not any(w.isalpha() for w in shared):
        return False
    return not any(shared <= other for m, other in enumerate(stems.words, 1) if m != n)


_NAMED_STEP = _Lazy(r"\bthe\s+((?:[\w-]+\s+){0,1}[\w-]+)\s+(?:step|part|stage)\b", re.IGNORECASE)


def _suggested(clause: _Clause, titles: tuple[str, ...], stems: _Stems) -> list[Inferred]:
    """The steps whose title words a clause shares best, when it says something is done
    with words that are not the title's own."""
    present = {stem(w) for w in clause.words if not w.startswith(MARK)}
    # "the migration step": the words before "step" name one, though fewer than half.
    named = {stem(w) for m in _NAMED_STEP.get().finditer(clause.text) for w in m.group(1).split()}
    hits: list[tuple[float, int]] = []
    for n, words in enumerate(stems.words, 1):
        literal = stems.literal[n - 1]
        done = any(w in _DONE and w not in literal for w in clause.words)
        past = {stem(w) for w in clause.words if _is_past(w) and w not in literal}
        if not words or not (done or past & words):
            continue
        shared = words & present
        need = max(math.ceil(0.5 * len(words)), min(2, len(words)))
        if len(shared) >= need and _names_only(n, shared, stems):
            hits.append((len(shared) / len(words), n))
        elif (called := words & named) and _names_only(n, called, stems):
            hits.append((len(called) / len(words), n))  # "done with the migration step"
    if not hits:
        return []
    best = max(score for score, _ in hits)
    return [Inferred(n, "words", False, _said(clause)) for score, n in hits if score == best]


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


def applied_from(
    plan: Sequence[PlanItem], messages: Sequence[Message]
) -> tuple[tuple[int, Message], ...]:
    """The completed steps a message states are done, written in the same instant as the
    completion (how an applied step is journaled), each with that message: so a brief can
    say where the step's status came from. Plan order."""
    titles = tuple(s.title for s in plan)
    out = []
    for n, step in enumerate(plan, 1):
        if step.status is not StepStatus.COMPLETED or not step.completed_at:
            continue
        for m in messages:
            if m.created_at == step.completed_at and m.role != "system":
                hit = dict(_infer(titles, m.content)).get(n)
                if hit is not None and hit.stated:
                    out.append((n, m))
                    break
    return tuple(out)


def to_apply(
    plan: Sequence[PlanItem], text: str, *, exclude: str | None = None
) -> list[tuple[PlanItem, Inferred]]:
    """The steps a new message completes when progress is applied: those it states are done
    (names by number or exact title, with a completion word), that are not finished (nor
    `exclude`, a step the same call changes itself)."""
    out = []
    for n, hit in sorted(infer([s.title for s in plan], text).items()):
        step = plan[n - 1]
        if not hit.stated or step.id == exclude:
            continue
        if step.status in FINISHED_STEP_STATUSES and step.status is not StepStatus.FAILED:
            continue
        out.append((step, hit))
    return out
