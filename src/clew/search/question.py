"""Understanding a question as an agent asks it, without a model. Pure.

`understand` reduces "which registry did we pick, and why?" to what is worth looking for:
the content words, OR'd into a `search.Query` for the backends' compilers (bm25 ranks rows
by how many of them they hold and how rare they are, so no word is a gate); the phrases and
identifiers written exactly (for an exact bonus); the known speakers and tools it names (to
boost their turns and calls); and the time it speaks of ("last week", "in May", "on
2026-05-03"), resolved against a given `now` into a window (times.py reads it).

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
from collections.abc import Collection, Iterable
from datetime import datetime
from typing import NamedTuple

from clew.core.pattern import lazy
from clew.core.query import MAX_TERMS, OPERATORS, Query, Term
from clew.errors import ValidationError
from clew.search.times import TimeHint, asks_when, read_time, says_when

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
    """
    ain aren couldn didn doesn don hadn hasn haven isn mightn mustn needn shan shouldn wasn weren
    wouldn a about above actually after again against ago all also always am an and any anybody
    anyone anything are aren't around as ask asked at back be been before being below between both
    but by can can't cannot could couldn't did didn't do does doesn't doing don't done down during
    each either else ever every exactly few find first for from further get gets getting go goes
    going got gotten had hadn't happen happened happens has hasn't have haven't having he he's her
    here hers herself him himself his how how's however i i'd i'll i'm i've if in into is isn't it
    it's its itself just kind know last let let's look may me mention mentioned might mine more most
    much must my myself need needed no nor not now of off often oh ok okay on once one only onto or
    other ought our ours ourselves out over own please quite rather really recall remember remind
    said same say says shall she she's should shouldn't show since so some something sometime
    somewhere sort still stuff such talk talked talking tell than that that's the their theirs them
    themselves then there there's these they they'd they'll they're they've thing things think
    thinks this those though through thus to too under until up upon us use used uses using very via
    want wanted was wasn't we we'd we'll we're we've were weren't what what's whatever when when's
    whenever where where's wherever whether which while who who's whoever whom whose why why's will
    with within without won't would wouldn't yeah yes yet you you'd you'll you're you've your yours
    yourself yourselves
    """.split()
)


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
    when, spans = read_time(exact_text, now)
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
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "words_data", "related.tsv"
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
