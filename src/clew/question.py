"""Understanding a question as an agent asks it, without a model. Pure.

`understand` reduces "which registry did we pick, and why?" to what is worth looking for:
the content words, OR'd into a `search.Query` for the backends' compilers (bm25 ranks rows
by how many of them they hold and how rare they are, so no word is a gate); the phrases and
identifiers written exactly (for an exact bonus); the known speakers and tools it names (to
boost their turns and calls); and the time it speaks of ("last week", "in May", "on
2026-05-03"), resolved against a given `now` into a window.

Invariants:
- Stop words, question words and words that only say what kind of thing is asked ("tell
  me", "remind me", "again") never reach the query: they would rank short chatty rows
  first. They are one constant, STOP_WORDS.
- An identifier (ERR_CONN_RESET, src/auth.py, v1.2.3, a1b2c3d, `--no-cache`, AuthService,
  snake_case) is one term as written AND its parts are terms of their own: a row that
  names it exactly ranks first, a row that speaks of its parts is still found.
- The words of a time expression are taken out of the query: they say when, not what.
- `content_words` is the normalisation of `words`, so a record's text and a question are
  compared alike (lower case, possessives dropped, plurals made singular).
- Every regular expression here is linear in its input: a long hostile text is slow only
  in proportion to its length.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Collection, Iterable
from datetime import datetime, timedelta
from typing import NamedTuple

from clew.errors import ValidationError
from clew.pattern import LazyPattern, lazy
from clew.search import MAX_TERMS, OPERATORS, Query, Term

__all__ = [
    "STOP_WORDS",
    "Question",
    "TimeHint",
    "asks_when",
    "content_words",
    "related",
    "says_when",
    "understand",
]

# Words that only make text a question or a request, or are too common to tell records
# apart: pronouns, auxiliaries, prepositions, question words, and the verbs of asking.
STOP_WORDS = frozenset(
    {
        # The pieces a tokenizer makes of negations ("didn't" -> didn + t).
        "ain", "aren", "couldn", "didn", "doesn", "don", "hadn", "hasn", "haven", "isn",
        "mightn", "mustn", "needn", "shan", "shouldn", "wasn", "weren", "wouldn",
        "a", "about", "above", "actually", "after", "again", "against", "ago", "all", "also",
        "always", "am", "an", "and", "any", "anybody", "anyone", "anything", "are", "aren't",
        "around", "as", "ask", "asked", "at", "back", "be", "been", "before", "being", "below",
        "between", "both", "but", "by", "can", "can't", "cannot", "could", "couldn't", "did",
        "didn't", "do", "does", "doesn't", "doing", "don't", "done", "down", "during", "each",
        "either", "else", "ever", "every", "exactly", "few", "find", "first", "for", "from",
        "further", "get", "gets", "getting", "go", "goes", "going", "got", "gotten", "had",
        "hadn't", "happen", "happened", "happens", "has", "hasn't", "have", "haven't", "having",
        "he", "he's", "her", "here", "hers", "herself", "him", "himself", "his", "how", "how's",
        "however", "i", "i'd", "i'll", "i'm", "i've", "if", "in", "into", "is", "isn't", "it",
        "it's", "its", "itself", "just", "kind", "know", "last", "let", "let's", "look", "may",
        "me", "mention", "mentioned", "might", "mine", "more", "most", "much", "must", "my",
        "myself", "need", "needed", "no", "nor", "not", "now", "of", "off", "often", "oh", "ok",
        "okay", "on", "once", "one", "only", "onto", "or", "other", "ought", "our", "ours",
        "ourselves", "out", "over", "own", "please", "quite", "rather", "really", "recall",
        "remember", "remind", "said", "same", "say", "says", "shall", "she", "she's", "should",
        "shouldn't", "show", "since", "so", "some", "something", "sometime", "somewhere", "sort",
        "still", "stuff", "such", "talk", "talked", "talking", "tell", "than", "that", "that's",
        "the", "their", "theirs", "them", "themselves", "then", "there", "there's", "these", "they",
        "they'd", "they'll", "they're", "they've", "thing", "things", "think", "thinks", "this",
        "those", "though", "through", "thus", "to", "too", "under", "until", "up", "upon", "us",
        "use", "used", "uses", "using", "very", "via", "want", "wanted", "was", "wasn't", "we",
        "we'd", "we'll", "we're", "we've", "were", "weren't", "what", "what's", "whatever", "when",
        "when's", "whenever", "where", "where's", "wherever", "whether", "which", "while", "who",
        "who's", "whoever", "whom", "whose", "why", "why's", "will", "with", "within", "without",
        "won't", "would", "wouldn't", "yeah", "yes", "yet", "you", "you'd", "you'll", "you're",
        "you've", "your", "yours", "yourself", "yourselves",
    }
)  # fmt: skip


class TimeHint(NamedTuple):
    """The time a question speaks of, as a window [start, end) in `now`'s time zone."""

    start: datetime
    end: datetime
    exact: bool  # a named day, month or year; False for a span counted back loosely
    text: str  # the words that said it, as written


class Question(NamedTuple):
    """What a question asks for, reduced for the search engine."""

    query: Query | None  # content words OR'd; None when nothing is left to look for
    words: tuple[str, ...]  # content words, normalised as `content_words` does
    phrases: tuple[str, ...]  # quoted phrases, then runs of content words as written
    identifiers: tuple[str, ...]  # identifiers as written (each also a whole query term)
    speakers: tuple[str, ...]  # the known speakers it names, in the order it names them
    tools: tuple[str, ...]  # the known tools it names, in the order it names them
    when: TimeHint | None
    exact_text: str  # the question with its white space folded


def understand(
    text: str,
    *,
    now: datetime,
    speakers: Collection[str] = (),
    tools: Collection[str] = (),
) -> Question:
    """Reduce a question to what to search for, who and what it names, and when."""
    if not isinstance(text, str):
        raise ValidationError(f"a question must be text, not {type(text).__name__}")
    if not isinstance(now, datetime):
        raise ValidationError(f"`now` must be a datetime, not {type(now).__name__}")
    known_speakers = _names(speakers, "speaker")
    known_tools = _names(tools, "tool")
    exact_text = " ".join(text.replace("\x00", " ").split())
    when, spans = _times(exact_text, now)
    # A comma where a time was: the words on either side were never one phrase.
    rest = _cut(_typographic(exact_text), spans)
    parsed = _Parsed()
    for raw in _TOKEN.findall(rest):
        if raw not in OPERATORS:  # FTS5's operators typed as words: no terms
            parsed.read(raw)
    pieces = " " + " ".join(_PIECE.findall(rest.casefold())) + " " if speakers or tools else ""
    return Question(
        parsed.query(),
        tuple(dict.fromkeys(parsed.words)),
        tuple(dict.fromkeys(parsed.phrases)),
        tuple(dict.fromkeys(parsed.identifiers)),
        _named(known_speakers, pieces),
        _named(known_tools, pieces),
        when,
        exact_text,
    )


def related(words: Iterable[str]) -> tuple[tuple[str, ...], ...]:
    """For each content word, the words closest to it in meaning that are not among the
    words themselves (from the packaged table tools/build_related_words.py made; empty
    for a word it does not hold): what a search may also look for, at a lower weight, when
    no record holds the question's own words."""
    table = _related_table()
    words = tuple(words)
    own = set(words)
    return tuple(tuple(r for r in table.get(w, ()) if r not in own) for w in words)


# A path string (os.path, not pathlib: the hook path imports this module and not pathlib).
RELATED_WORDS = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "words_data", "related.tsv"
)


@functools.lru_cache(maxsize=1)
def _related_table() -> dict[str, tuple[str, ...]]:
    """The packaged related words, read at their first use (a search that needs none of
    them never reads the file): `word<TAB>related related`, `#` lines aside."""
    try:
        with open(RELATED_WORDS, encoding="utf-8") as f:
            text = f.read()
    except OSError:  # an install without the data: no expansion, nothing else changes
        return {}
    table: dict[str, tuple[str, ...]] = {}
    for line in text.splitlines():
        word, tab, rest = line.partition("\t")
        if tab and not word.startswith("#"):
            table[word] = tuple(rest.split())
    return table


def content_words(text: str) -> tuple[str, ...]:
    """The content words of a text, each once, normalised as a question's `words` are."""
    if not isinstance(text, str):
        raise ValidationError(f"text must be text, not {type(text).__name__}")
    return tuple(dict.fromkeys(_normalised(_typographic(text))))


# -- words --------------------------------------------------------------------------------

# A token: a quoted phrase (maybe excluded), a `code span`, or a run of non-space.
_TOKEN = lazy(r'-?"[^"]*"|`[^`]*`|\S+')
# Punctuation or `_` between word parts: a tokenizer cuts the term into pieces (linear: no
# lazy run to backtrack over one long token).
_SPLIT_BY_TOKENIZER = lazy(r"[^\W_](?:_|[^\w\s])+[^\W_]")
_WORD = lazy(r"[^\W_]")  # a letter or digit: what a tokenizer indexes
_PIECE = lazy(r"[^\W_]+")  # what a tokenizer indexes as one token
_CAMEL = lazy(r"[a-z][A-Z]|[A-Z]{2}[a-z]")
_CAMEL_PARTS = lazy(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
# What a tokenizer leaves of a contraction's tail ("we'll" -> we + ll, "didn't" -> didn + t;
# the one-letter tails are dropped as single letters, the negated verbs are stop words).
_TAILS = frozenset({"re", "ve", "ll"})
_ORDINAL = lazy(r"\d+(?:st|nd|rd|th)")
_HAS_DIGIT = lazy(r"\d")
_HAS_LETTER = lazy(r"[^\W\d_]")
_FLAG_NOUNS = frozenset({"flag", "flags", "option", "options", "switch", "argument", "arg"})
_EDGE = "\"'()[]{}<>,;!?"  # taken from a token's ends; `.` and `:` only from its end
_BREAK = frozenset(",;!?.:")  # a token ending in one ends a run of words (a phrase)
_SUFFIXES = ("'re", "'ve", "'ll", "'d", "'m")
_MAX_PHRASE = 4  # a longer run of content words is a list of keywords, not a phrase


def _typographic(text: str) -> str:
    """Typographic quotes as the plain ones a tokenizer and the syntax expect."""
    if text.isascii():
        return text
    return text.translate(_QUOTES)


_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


class _Parsed:
    """What the tokens of a question have given so far (one pass, in order)."""

    def __init__(self) -> None:
        self.terms: list[Term] = []  # whole words, identifiers and phrases
        self.parts: list[Term] = []  # the parts of identifiers (dropped first past the cap)
        self.exclude: list[Term] = []
        self.words: list[str] = []
        self.phrases: list[str] = []
        self.identifiers: list[str] = []
        self.run: list[str] = []  # adjacent content words, as written
        self.seen: set[str] = set()
        self.pending_flag = ""  # `-x` waiting to learn if "flag" follows it

    def read(self, raw: str) -> None:
        if self.pending_flag:
            flag, self.pending_flag = self.pending_flag, ""
            if raw.strip(_EDGE + ".:").casefold() in _FLAG_NOUNS:
                self.identifier(flag, prefix=False)
            else:
                self.exclude.append(Term(flag[1:], False))
        if raw.isalpha():  # a plain word, the common case
            self.plain(raw, ends_run=False)
            return
        if raw[-1] in _BREAK and raw[:-1].isalpha():  # one that ends a clause
            self.plain(raw[:-1], ends_run=True)
            return
        if raw.startswith(('"', '-"')) and raw.endswith('"') and len(raw) >= 2 + (raw[0] == "-"):
            self.quoted(raw)
            return
        if raw.startswith("`") and raw.endswith("`") and len(raw) >= 2:
            self.code(raw[1:-1].strip())
            return
        core = raw.strip(_EDGE).rstrip(".:").strip(_EDGE)
        ends_run = raw.rstrip("\"')]}>*")[-1:] in _BREAK
        prefix = core.endswith("*")
        if prefix:
            core = core.rstrip("*").rstrip(".:").strip(_EDGE)
        if not _WORD.search(core):
            self.end_run()
            return
        if core.startswith("-") and not core.startswith("--") and _is_plain_word(core[1:]):
            self.end_run()
            self.pending_flag = core  # an exclusion, unless "flag" or "option" follows
            return
        folded = core.casefold()
        if folded in STOP_WORDS or (folded.endswith("n't") and len(folded) > 3):
            self.end_run()
            return
        core, possessive = _without_possessive(core)
        for suffix in _SUFFIXES:
            if folded.endswith(suffix):
                core, possessive = core[: -len(suffix)], True
        folded = core.casefold()
        if not _WORD.search(core) or folded in STOP_WORDS:
            self.end_run()
        elif _is_identifier(core):
            self.end_run()
            self.identifier(core, prefix)
        elif len(core) == 1 and not core.isdigit():
            self.end_run()
        else:
            self.word(core, prefix)
            if possessive or ends_run:
                self.end_run()
        if ends_run:
            self.end_run()

    def plain(self, core: str, *, ends_run: bool) -> None:
        """A run of letters: a stop word, a CamelCase identifier, or a content word."""
        folded = core.casefold()
        if folded in STOP_WORDS or len(core) == 1:
            self.end_run()
        elif _is_identifier(core):
            self.end_run()
            self.identifier(core, prefix=False)
        else:
            self.word(core, prefix=False)
        if ends_run:
            self.end_run()

    def quoted(self, raw: str) -> None:
        self.end_run()
        negative = raw.startswith("-")
        inner = " ".join(raw[2 if negative else 1 : -1].split())
        if not _WORD.search(inner):
            return
        if negative:
            self.exclude.append(Term(inner, False))
            return
        self.add(self.terms, inner, False)
        self.phrases.append(inner)
        self.words += _normalised(inner)

    def code(self, inner: str) -> None:
        """A `code span` is written exactly: one identifier, or a phrase with spaces."""
        self.end_run()
        if not _WORD.search(inner):
            return
        if " " in inner:
            self.add(self.terms, inner, False)
            self.phrases.append(inner)
            self.words += _normalised(inner)
        else:
            self.identifier(inner, prefix=False)

    def identifier(self, core: str, prefix: bool) -> None:
        self.add(self.terms, core, prefix)
        self.identifiers.append(core)
        for part in _parts(core):
            self.add(self.parts, part, False)
        self.words += _normalised(core)

    def word(self, core: str, prefix: bool) -> None:
        self.add(self.terms, core, prefix)
        self.words += _normalised(core)
        self.run.append(core)

    def add(self, terms: list[Term], text: str, prefix: bool) -> None:
        key = text.casefold() + ("*" if prefix else "")
        if key not in self.seen:
            self.seen.add(key)
            terms.append(Term(text, prefix))

    def end_run(self) -> None:
        if 2 <= len(self.run) <= _MAX_PHRASE:
            self.phrases.append(" ".join(self.run))
        self.run = []

    def query(self) -> Query | None:
        if self.pending_flag:  # the question ended on `-x`: an exclusion
            self.exclude.append(Term(self.pending_flag[1:], False))
            self.pending_flag = ""
        self.end_run()
        include = (self.terms + self.parts)[:MAX_TERMS]
        if not include:
            return None
        kept = {t.text for t in include}
        # An identifier past the cap is not in the query, so it is no promise of one.
        self.identifiers = [i for i in self.identifiers if i in kept]
        return Query(
            tuple(include),
            tuple(self.exclude[:MAX_TERMS]),
            True,
            tuple(dict.fromkeys(i for i in self.identifiers if _SPLIT_BY_TOKENIZER.search(i))),
            tuple(t.text for t in include),
        )


def _is_plain_word(text: str) -> bool:
    return len(text) >= 3 and text.isalpha()


def _without_possessive(core: str) -> tuple[str, bool]:
    if len(core) > 2 and core[-2:] in ("'s", "'S"):
        return core[:-2], True
    if len(core) > 2 and core[-1] == "'" and core[-2] in "sS":
        return core[:-1], True
    return core, False


def _is_identifier(core: str) -> bool:
    """Whether a token is a name written as code rather than a word of prose."""
    if core.isalpha() and (core.islower() or core.isupper() or core[1:].islower()):
        return False  # a word of prose, the common case
    if core.startswith("-") or _SPLIT_BY_TOKENIZER.search(core) or _CAMEL.search(core):
        return True
    return bool(
        _HAS_DIGIT.search(core) and _HAS_LETTER.search(core) and not _ORDINAL.fullmatch(core)
    )


def _parts(identifier: str) -> list[str]:
    """The words an identifier is made of, worth looking for alone."""
    parts: list[str] = []
    for piece in _PIECE.findall(identifier):
        pieces = _CAMEL_PARTS.findall(piece) if _CAMEL.search(piece) else [piece]
        parts += pieces if len(pieces) > 1 or piece != identifier else []
    return [
        p
        for p in parts
        if len(p) >= 2 and p.casefold() not in STOP_WORDS and not (p.isdigit() and len(p) < 3)
    ]


def _normalised(text: str) -> list[str]:
    """Lower-case content words of a text, each piece a tokenizer makes, singular."""
    if text.isalpha() and text.islower():  # one plain word, the common case
        folded = text.casefold()
        if folded in STOP_WORDS or len(folded) == 1:
            return []
        single = _singular(folded)  # "looks" is "look", a stop word, as the loop below finds
        return [] if single in STOP_WORDS else [single]
    out: list[str] = []
    for piece in dict.fromkeys(_PIECE.findall(text)):
        folded = piece.casefold()
        # "caroline's" is cut into caroline + s, "we'll" into we + ll: a tail is no word.
        if folded in STOP_WORDS or folded in _TAILS or (len(folded) == 1 and not folded.isdigit()):
            continue
        if not piece.islower() and not piece.isupper() and _CAMEL.search(piece):
            out += [p.casefold() for p in _CAMEL_PARTS.findall(piece) if len(p) > 1]
        out.append(_singular(folded))
    return [w for w in dict.fromkeys(out) if w not in STOP_WORDS]


def _singular(word: str) -> str:
    """A plural made singular by its spelling alone (the same on both sides of a match)."""
    if len(word) <= 3 or not word.endswith("s") or word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "shes", "xes", "zzes", "tches")):
        return word[:-2]
    if word.endswith("ches") and not word.endswith("aches"):
        return word[:-2]
    return word[:-1]


def _names(names: Collection[str], what: str) -> list[tuple[str, str]]:
    """Known names with the pieces a question must hold to name them."""
    if isinstance(names, str):
        raise ValidationError(f"known {what}s must be a collection of names, not one text")
    known: list[tuple[str, str]] = []
    for name in names:
        if not isinstance(name, str):
            raise ValidationError(f"a {what} name must be text, not {type(name).__name__}")
        key = " ".join(_PIECE.findall(name.casefold()))
        if key:
            known.append((name, f" {key} "))
    return known


def _named(known: Iterable[tuple[str, str]], pieces: str) -> tuple[str, ...]:
    """The known names a question holds as whole words, in the order it names them."""
    found = [(at, name) for name, key in known if (at := pieces.find(key)) >= 0]
    return tuple(dict.fromkeys(name for _, name in sorted(found, key=lambda f: f[0])))


def _cut(text: str, spans: list[tuple[int, int]]) -> str:
    for start, end in reversed(spans):
        text = text[:start] + " , " + text[end:]
    return text


# -- times --------------------------------------------------------------------------------

_DAY = timedelta(days=1)
_MONTHS = {
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
    "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12,
}  # fmt: skip
_WEEKDAYS = {"mon": 0, "tue": 1, "wed": 2, "thu": 3, "fri": 4, "sat": 5, "sun": 6}
_COUNTS = {
    "a": (1, 1), "an": (1, 1), "one": (1, 1), "two": (2, 2), "three": (3, 3),
    "four": (4, 4), "five": (5, 5), "six": (6, 6), "seven": (7, 7), "eight": (8, 8),
    "nine": (9, 9), "ten": (10, 10), "eleven": (11, 11), "twelve": (12, 12),
    "couple": (1, 3), "few": (2, 5), "several": (2, 7),
}  # fmt: skip
# A unit's length, and how far a loose "N of them ago" may be from it either way.
_UNITS = {
    "minute": (timedelta(minutes=1), timedelta(minutes=10)),
    "hour": (timedelta(hours=1), timedelta(hours=1)),
    "day": (_DAY, _DAY),
    "week": (timedelta(days=7), timedelta(days=3)),
    "month": (timedelta(days=30), timedelta(days=10)),
    "year": (timedelta(days=365), timedelta(days=60)),
}
_MONTH = (
    r"(?P<month>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b\.?"
)
_WEEKDAY = r"(?P<weekday>(?:mon|tues|wednes|thurs|fri|satur|sun)day)\b"
_COUNT = (
    r"(?P<count>\d{1,4}|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
    r"|(?:a\s+)?couple(?:\s+of)?|(?:a\s+)?few|several)"
)
_UNIT = r"(?P<unit>minute|hour|day|week|month|year)s?\b"
_YEAR = r"(?P<year>\d{4})\b"
_DATE_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?\b"

Window = tuple[datetime, datetime, bool]
_Rule = Callable[[re.Match[str], datetime], Window | None]


# Times are looked for in a question's head: a text longer than this is no question, and a
# time expression in it costs a resolve each.
_TIME_SCAN = 2000
_DIGIT = "0"  # the cue of rules that need a digit in the text


def _rule(pattern: str, cues: Iterable[str]) -> Callable[[_Rule], _Rule]:
    """Register a time expression; it is looked for only in a text holding one of its cue
    words (most questions hold none, and a question should cost microseconds)."""

    def register(resolve: _Rule) -> _Rule:
        _RULES.append((frozenset(cues), lazy(r"(?<![\w-])" + pattern, re.I), resolve))
        return resolve

    return register


_RULES: list[tuple[frozenset[str], LazyPattern, _Rule]] = []
_MONTH_WORDS = frozenset(
    {"january", "february", "march", "april", "june", "july", "august", "sept", "september",
     "october", "november", "december", *_MONTHS}
)  # fmt: skip
_WEEKDAY_WORDS = frozenset(
    f"{d}day" for d in ("mon", "tues", "wednes", "thurs", "fri", "satur", "sun")
)
_UNIT_WORDS = frozenset({*_UNITS, *(f"{u}s" for u in _UNITS)})


def _times(text: str, now: datetime) -> tuple[TimeHint | None, list[tuple[int, int]]]:
    """The time a text speaks of, and the spans of every time expression in it."""
    found: list[tuple[int, int, Window]] = []
    text = text[:_TIME_SCAN]
    words = set(_PIECE.findall(text.casefold()))
    if _HAS_DIGIT.search(text):
        words.add(_DIGIT)
    cued = words & _CUE_WORDS
    if not cued:
        return None, []  # most questions: no word that could say a time
    for cues, pattern, resolve in _RULES:
        if cues.isdisjoint(cued):
            continue
        for match in pattern.finditer(text):
            try:
                window = resolve(match, now)
            except (ValueError, OverflowError):  # no such date, or out of datetime's range
                window = None
            if window is not None and window[0] < window[1]:
                found.append((match.start(), match.end(), window))
    # Longest first where they overlap ("May 3, 2025" over "May 3"), then in text order.
    found.sort(key=lambda f: (f[0], f[0] - f[1]))
    kept: list[tuple[int, int, Window]] = []
    for start, end, window in found:
        if not kept or start >= kept[-1][1]:
            kept.append((start, end, window))
    if not kept:
        return None, []
    spans: list[tuple[int, int]] = []
    hints: list[TimeHint] = []
    tomorrow = _midnight(now) + _DAY
    for start, end, (first, last, exact) in kept:
        # "since May": from then until now.
        if text[max(0, start - 6) : start].casefold() == "since ":
            start, last = start - 6, tomorrow
        elif text[start : start + 5].casefold() == "since":
            last = tomorrow
        spans.append((start, end))
        if first < min(last, tomorrow):
            hints.append(TimeHint(first, min(last, tomorrow), exact, text[start:end]))
    if not hints:
        return None, spans
    # An exact time says more than a loose one; the first of each kind wins.
    best = min(range(len(hints)), key=lambda i: not hints[i].exact)
    return hints[best], spans


def _midnight(moment: datetime) -> datetime:
    return moment.replace(hour=0, minute=0, second=0, microsecond=0)


def _month_start(year: int, month: int, like: datetime) -> datetime:
    year, month = year + (month - 1) // 12, (month - 1) % 12 + 1
    return like.replace(year=year, month=month, day=1, hour=0, minute=0, second=0, microsecond=0)


def _month(year: int, month: int, now: datetime) -> Window | None:
    start = _month_start(year, month, now)
    return (start, _month_start(year, month + 1, now), True) if start <= now else None


def _day(year: int, month: int, day: int, now: datetime) -> Window:
    start = _midnight(now).replace(year=year, month=month, day=day)
    return start, start + _DAY, True


def _month_number(name: str) -> int:
    return _MONTHS[name[:3].casefold()]


def _last_dated(month: int, day: int, now: datetime) -> Window:
    """The most recent `month` `day` not after today."""
    year = now.year
    if (month, day) > (now.month, now.day):
        year -= 1
    return _day(year, month, day, now)


@_rule(r"(?:on\s+)?(?P<iso>\d{4}-\d{2}-\d{2})(?![\w-])", [_DIGIT])
def _iso(match: re.Match[str], now: datetime) -> Window | None:
    year, month, day = (int(p) for p in match["iso"].split("-"))
    window = _day(year, month, day, now)
    return window if window[0] <= now else None


@_rule(
    r"(?:on\s+)?(?:the\s+)?" + _MONTH + r"\s+" + _DATE_DAY + r"(?:,?\s+" + _YEAR + ")?",
    _MONTH_WORDS,
)
def _month_day(match: re.Match[str], now: datetime) -> Window | None:
    month, day = _month_number(match["month"]), int(match["day"])
    if match["year"]:
        window = _day(int(match["year"]), month, day, now)
        return window if window[0] <= now else None
    return _last_dated(month, day, now)


@_rule(
    r"(?:on\s+)?(?:the\s+)?" + _DATE_DAY + r"\s+(?:of\s+)?" + _MONTH + r"(?:,?\s+" + _YEAR + ")?",
    _MONTH_WORDS,
)
def _day_month(match: re.Match[str], now: datetime) -> Window | None:
    return _month_day(match, now)


@_rule(r"(?:(?:in|during|back\s+in|since)\s+)?" + _MONTH + r",?\s+" + _YEAR, _MONTH_WORDS)
def _month_year(match: re.Match[str], now: datetime) -> Window | None:
    return _month(int(match["year"]), _month_number(match["month"]), now)


@_rule(
    r"(?P<which>in|during|back\s+in|early\s+in|late\s+in|last|this|since)\s+"
    + _MONTH
    + r"(?!,?\s+\d)",  # a day or year after the month is another rule's
    _MONTH_WORDS,
)
def _named_month(match: re.Match[str], now: datetime) -> Window | None:
    month = _month_number(match["month"])
    which = match["which"].casefold()
    year = now.year if month <= now.month else now.year - 1
    if which == "last" and month == now.month:
        year -= 1  # "last May", said in May, is a year ago
    if which == "this" and month > now.month:
        return None  # still to come
    return _month(year, month, now)


def _month_of(match: re.Match[str], now: datetime) -> tuple[datetime, datetime] | None:
    """The start and end of the month a match names (its `month`, and its `year` or the
    latest such month up to now)."""
    month = _month_number(match["month"])
    year = int(match["year"]) if match["year"] else (
        now.year if month <= now.month else now.year - 1
    )  # fmt: skip
    whole = _month(year, month, now)
    return None if whole is None else (whole[0], whole[1])


@_rule(
    r"(?:(?:in|during)\s+)?(?:the\s+)?(?P<part>early|mid|late|start\s+of|beginning\s+of"
    r"|middle\s+of|end\s+of)(?:\s+|-)(?:the\s+month\s+of\s+)?"
    + _MONTH
    + r"(?:,?\s+"
    + _YEAR
    + r")?(?!,?\s+\d{1,2}\b)",  # "late May 3" is a day: another rule's
    _MONTH_WORDS,
)
def _part_of_month(match: re.Match[str], now: datetime) -> Window | None:
    """`early May`, `mid-May`, `late May`, `the end of May`: a third of the month, loosely
    (the days either side are not out of it)."""
    whole = _month_of(match, now)
    if whole is None:
        return None
    start, end = whole
    part = match["part"].split()[0].casefold()
    first, last = {"early": (1, 11), "start": (1, 11), "beginning": (1, 11),
                   "mid": (11, 21), "middle": (11, 21)}.get(part, (21, 0))  # fmt: skip
    return (
        start.replace(day=first),
        end if last == 0 else start.replace(day=last),
        False,
    )


@_rule(
    r"(?:(?:in|during)\s+)?(?:the\s+)?week\s+(?P<from>of|starting|beginning)\s+(?:on\s+)?(?:the\s+)?"
    r"(?:"
    + _MONTH
    + r"\s+"
    + _DATE_DAY
    + r"|(?P<day2>\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?"
    + _MONTH.replace("?P<month>", "?P<month2>")
    + r")(?:,?\s+"
    + _YEAR
    + ")?",
    ["week"],
)
def _week_of(match: re.Match[str], now: datetime) -> Window | None:
    """`the week of May 11`: Monday to Sunday of the week holding that day; `the week
    starting May 14`: seven days from it."""
    month = _month_number(match["month"] or match["month2"])
    day = int(match["day"] or match["day2"])
    if match["year"]:
        start = _day(int(match["year"]), month, day, now)[0]
    else:
        start = _last_dated(month, day, now)[0]
    if start > now:
        return None
    if match["from"].casefold() == "of":
        start -= timedelta(days=start.weekday())
    return start, start + timedelta(days=7), True


@_rule(r"(?:in|during|since|back\s+in)\s+" + _YEAR, [_DIGIT])
def _in_year(match: re.Match[str], now: datetime) -> Window | None:
    year = int(match["year"])
    if not 1900 <= year <= now.year:
        return None
    start = _month_start(year, 1, now)
    return start, _month_start(year + 1, 1, now), True


@_rule(r"yesterday(?:\s+(?:morning|afternoon|evening|night))?\b", ["yesterday"])
def _yesterday(match: re.Match[str], now: datetime) -> Window:
    today = _midnight(now)
    return today - _DAY, today, True


@_rule(r"(?:earlier\s+|later\s+)?today\b", ["today"])
def _today(match: re.Match[str], now: datetime) -> Window:
    today = _midnight(now)
    return today, today + _DAY, True


@_rule(
    r"(?:this\s+(?P<part>morning|afternoon|evening)|(?P<tonight>tonight)|last\s+night)\b",
    ["morning", "afternoon", "evening", "tonight", "night"],
)
def _part_of_day(match: re.Match[str], now: datetime) -> Window:
    today = _midnight(now)
    hours = {"morning": (0, 12), "afternoon": (12, 18), "evening": (17, 24)}
    if match["part"] or match["tonight"]:
        first, last = hours[(match["part"] or "evening").casefold()]
        return today + timedelta(hours=first), today + timedelta(hours=last), False
    return today - timedelta(hours=6), today + timedelta(hours=6), False


@_rule(r"(?:earlier\s+)?(?P<which>this|last|previous)\s+(?P<period>week|month|year)\b", _UNIT_WORDS)
def _period(match: re.Match[str], now: datetime) -> Window:
    today = _midnight(now)
    period, current = match["period"].casefold(), match["which"].casefold() == "this"
    if period == "week":
        monday = today - timedelta(days=today.weekday())
        if current:
            return monday, today + _DAY, True
        # "Last week" said on a Monday may mean two days ago: a day of slack each side.
        return monday - timedelta(days=8), monday + _DAY, False
    if period == "month":
        start = _month_start(now.year, now.month - (0 if current else 1), now)
        return start, (today + _DAY if current else _month_start(now.year, now.month, now)), True
    start = _month_start(now.year - (0 if current else 1), 1, now)
    return start, (today + _DAY if current else _month_start(now.year, 1, now)), True


@_rule(
    r"(?:(?:in|over|during|within)\s+)?(?:(?P<the>the)\s+)?(?P<which>last|past)\s+"
    r"(?:" + _COUNT + r"\s+)?" + _UNIT,
    _UNIT_WORDS,
)
def _rolling(match: re.Match[str], now: datetime) -> Window | None:
    """`the past week`, `the last 3 days`: a window back from now (plain `last week` is the
    calendar's, matched by `_period`)."""
    if not (match["the"] or match["count"] or match["which"].casefold() == "past"):
        return None
    low, high = _count(match["count"] or "one")
    length, _ = _UNITS[match["unit"].casefold()]
    today = _midnight(now)
    anchor = now if length < _DAY else today
    return anchor - high * length, today + _DAY, low == high


@_rule(_COUNT + r"\s+" + _UNIT + r"\s+(?:ago|back)\b", ["ago", "back"])
def _ago(match: re.Match[str], now: datetime) -> Window | None:
    low, high = _count(match["count"])
    length, slack = _UNITS[match["unit"].casefold()]
    if high * length > timedelta(days=200 * 365):
        return None
    anchor = now if length < _DAY else _midnight(now)
    day = _DAY if length >= _DAY else timedelta(0)
    return anchor - high * length - slack, anchor - low * length + slack + day, False


@_rule(r"(?P<which>on|last|this|past)\s+" + _WEEKDAY, _WEEKDAY_WORDS)
def _weekday(match: re.Match[str], now: datetime) -> Window | None:
    today = _midnight(now)
    back = (today.weekday() - _WEEKDAYS[match["weekday"][:3].casefold()]) % 7
    if back == 0 and match["which"].casefold() != "this":
        back = 7  # "on Friday", said on a Friday, is a week ago
    start = today - timedelta(days=back)
    return start, start + _DAY, True


@_rule(
    r"(?:(?P<recent>(?:quite\s+|very\s+|more\s+|most\s+)?recently|lately|of\s+late)"
    r"|(?P<other>the\s+other\s+day)|(?P<while>a\s+(?:little\s+)?while\s+(?:ago|back)))\b",
    ["recently", "lately", "late", "other", "while"],
)
def _loosely(match: re.Match[str], now: datetime) -> Window:
    today = _midnight(now)
    if match["recent"]:
        return today - timedelta(days=30), today + _DAY, False
    if match["other"]:
        return today - timedelta(days=7), today, False
    return today - timedelta(days=180), today - timedelta(days=7), False


def _count(text: str) -> tuple[int, int]:
    words = text.casefold().split()
    if words[-1] == "of":
        words.pop()
    if words[-1].isdigit():
        return int(words[-1]), int(words[-1])
    return _COUNTS[words[-1]]


def _dated(tag: str) -> str:
    """A date written with its month's name ("August 11", "11th of August, 2023", "Aug 11
    2023") or as 2023-08-11, its groups named with `tag`."""
    month = _MONTH.replace("?P<month>", f"?P<m{tag}>")
    month2 = _MONTH.replace("?P<month>", f"?P<n{tag}>")
    year, year2 = (rf"(?:,?\s*(?P<{g}{tag}>\d{{4}})\b)?" for g in "yz")
    return (
        rf"(?:{month}\s+(?P<d{tag}>\d{{1,2}})(?:st|nd|rd|th)?\b{year}"
        rf"|(?P<e{tag}>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{month2}{year2}"
        rf"|(?P<i{tag}>\d{{4}}-\d{{2}}-\d{{2}})(?![\w-]))"
    )


def _date_of(match: re.Match[str], tag: str, now: datetime, year: str | None = None) -> datetime:
    """The day a `_dated(tag)` group names (the most recent such day when no year is
    written, or in `year`)."""
    if match[f"i{tag}"]:
        y, m, d = (int(p) for p in match[f"i{tag}"].split("-"))
        return _day(y, m, d, now)[0]
    month = _month_number(match[f"m{tag}"] or match[f"n{tag}"])
    day = int(match[f"d{tag}"] or match[f"e{tag}"])
    written = match[f"y{tag}"] or match[f"z{tag}"] or year
    if written:
        return _day(int(written), month, day, now)[0]
    return _last_dated(month, day, now)[0]


@_rule(
    r"(?:in\s+|during\s+|over\s+)?(?:the\s+)?(?P<edge>first|last)\s+(?:(?P<count>"
    + _COUNT.removeprefix("(?P<count>")
    + r"\s+)?(?P<unit>days?|weeks?)\s+(?:of|in)\s+(?:the\s+month\s+of\s+)?"
    + _MONTH
    + r"(?:,?\s+"
    + _YEAR
    + r")?",
    _MONTH_WORDS,
)
def _edge_of_month(match: re.Match[str], now: datetime) -> Window | None:
    """`the last week of August 2023`, `the first two weeks of May`: days at the
    start or the end of a named month (not counted back from now, as `the last week` alone
    is); loosely, as `late May` is."""
    whole = _month_of(match, now)
    if whole is None:
        return None
    start, end = whole
    count = _count(match["count"])[1] if match["count"] else 1
    unit = match["unit"].casefold().rstrip("s")
    length = count * (_DAY if unit == "day" else timedelta(days=7))
    if match["edge"].casefold() == "first":
        return start, min(start + length, end), False
    return max(end - length, start), end, False


@_rule(
    r"(?:from\s+|between\s+)(?:the\s+)?"
    + _dated("a")
    + r"\s+(?:and|to|until|till)\s+(?:the\s+)?"
    + _dated("b"),
    _MONTH_WORDS | {_DIGIT},
)
def _between(match: re.Match[str], now: datetime) -> Window | None:
    """`between August 11 and August 15 2023`, `from 3 May to 9 May`: both days, a year
    written once at the end counting for both."""
    last = _date_of(match, "b", now)
    first = _date_of(match, "a", now, str(last.year) if match["yb"] or match["zb"] else None)
    if first > last or first > now:
        return None
    return first, last + _DAY, True


# Every word that can start looking for a time (made once every rule above is registered).
_CUE_WORDS: frozenset[str] = frozenset().union(*(cues for cues, _, _ in _RULES))


# -- asking for a time, and saying one ------------------------------------------------------

# A question whose answer is a time: "when did ...", "what date ...", "in which year ...",
# "how long ago ...".
_ASKS_WHEN = lazy(
    r"^\W*(?:and\s+|so\s+|but\s+)?when\b"
    r"|\b(?:what|which)\s+(?:date|day|month|year|week|weekend|time\s+of\s+(?:the\s+)?year)\b"
    # "how long has she ...", not "how long should the timeout be": a time, not a length.
    r"|\bhow\s+long\s+(?:ago|since|has|have|had|did|were|was)\b|\bsince\s+when\b"
    r"|\bhow\s+many\s+(?:days|weeks|months|years)\b",
    re.I,
)
_MONTH_NAME = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b"
)
_DAY_NAME = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_COUNTED = (
    r"(?:\d{1,4}|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
    r"|couple(?:\s+of)?|few|several)"
)
# A text that says when something happened or will: a day named relative to it
# ("yesterday", "last Friday", "next month", "three weeks ago"), a date ("May 3", "the
# 11th", "2023-05-03", "in 2019"), a weekday. Vague words ("recently", "just") say no time.
_SAYS_WHEN = lazy(
    r"(?<![\w-])(?:"
    r"yesterday|today|tonight|tomorrow|the\s+other\s+day"
    r"|(?:last|next|this|past|coming)\s+(?:week(?:end)?|month|year|night|morning|afternoon"
    r"|evening|summer|winter|spring|autumn|fall|" + _DAY_NAME + r")"
    r"|" + _COUNTED + r"\s+(?:minute|hour|day|week|month|year)s?\s+(?:ago|back|earlier|before)"
    r"|for\s+(?:the\s+(?:last|past)\s+)?" + _COUNTED + r"\s+(?:day|week|month|year)s?\b"
    r"|(?:in|on|of|since|until|by|last|next|this|early|late|mid-?)\s+"
    + _MONTH_NAME
    + r"|"
    + _MONTH_NAME
    + r"\s+\d{1,2}(?:st|nd|rd|th)?\b"
    r"|\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH_NAME + r"|the\s+\d{1,2}(?:st|nd|rd|th)\b"
    r"|\d{4}-\d{2}-\d{2}"
    r"|(?:in|since|until|by|of)\s+(?:19|20)\d{2}\b"
    r"|(?:on\s+)?" + _DAY_NAME + r"\b"
    r")",
    re.I,
)


def asks_when(text: str) -> bool:
    """Whether a question's answer is a time ("when did we ...?", "what date ...?", "how
    long ago ...?"): then the record that says when answers it, not one that only names
    the event again."""
    return _ASKS_WHEN.search(text[:_TIME_SCAN]) is not None


def says_when(text: str) -> bool:
    """Whether a text says a time: a date, a weekday, or a day named relative to when it
    was said ("yesterday", "last week", "three days ago", "next month"). A record saying
    one can answer "when ...?", with its own date as the anchor."""
    return _SAYS_WHEN.search(text[:_TIME_SCAN]) is not None
