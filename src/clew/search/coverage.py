"""What of a question a record holds. Pure.

The question as the ranking reads it (`Asked`), a record found (`Found`), and how much of
the question a record's text holds: each word's light stem found at the start of a word of
the text (`coverage`; a word related in meaning to one of the question's counts RELATED of
it), weighed by how few of the records found hold it (`word_weights`, for the turns of a
conversation), and whether a record is of the kind a question asks for (`is_kind`).
ranking.py makes one ranked list of them.

Invariants:
- A question's words are stemmed and compiled into one expression once per question
  (`looked_for`), and each record's text is searched once per expression (`prefixes_held`):
  a search asks this of a few hundred records several times.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping
from datetime import datetime
from typing import NamedTuple

from clew.models import RecordHit

Key = tuple[str, str]  # (kind, id)

_SUFFIXES = ("ingly", "edly", "ies", "ing", "ied", "ed", "es", "ly", "s")


class Asked(NamedTuple):
    """What the ranking needs to know of a question."""

    words: tuple[str, ...]  # content words, lower-case
    phrases: tuple[str, ...]  # phrases written in it (quoted, or names of several words)
    identifiers: tuple[str, ...]  # identifiers written in it
    exact_text: str  # the question, white space folded
    speakers_or_tools: frozenset[str]  # the question's words, for speaker and tool names
    when: tuple[datetime, datetime, bool] | None  # (start, end, exact) of a time it names
    kinds: tuple[str, ...] = ()  # the kinds of record it asks for ("decision", "error"...)
    # Words related in meaning to each of `words` (question.related), when the search
    # looked for them: a record holding one instead of the word counts RELATED of it.
    related: tuple[tuple[str, ...], ...] = ()


class Found(NamedTuple):
    """A record found by keyword search, by meaning, or as a neighbour of a turn found."""

    hit: RecordHit  # hit.score is the index's raw bm25 (lower is better; 0 if not matched)
    text: str  # what coverage and exact matches are checked in
    speaker: str | None = None  # a turn's speaker, when it names one
    tool: str | None = None  # the tool a turn called or answers for
    # The share of the question's words a record found for its kind alone counts as
    # holding (kind_fallback): a current decision, for a question asking for one.
    assumed: float = 0.0


def stem(word: str) -> str:
    """A light suffix stripping for comparing words (the indexes stem with porter; this
    only needs "registries" and "registry", "failed" and "fail" to meet)."""
    word = word.casefold()
    if word.endswith("'s"):
        word = word[:-2]
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    return word[:-1] if word.endswith("e") and len(word) > 4 else word


def coverage(asked: Asked, text: str) -> float:
    """The share of the question's distinct content words the text holds: each word's
    stem found at the start of a word of the text ("registr" in "registries"), one regular
    expression over the text (stemming every word of every record found cost more than the
    search)."""
    return coverages(asked, text)[0]


def coverages(asked: Asked, text: str) -> tuple[float, float]:
    """The share of the question's words the text holds, and the same counting a word
    RELATED when the text holds only a word related to it (asked.related)."""
    wanted, alike, pattern = looked_for(asked.words, asked.related)
    if not wanted:
        return 0.0, 0.0
    held = prefixes_held(pattern, text)
    exact = sum(1 for p in wanted if p in held)
    near = sum(1 for p in wanted if p not in held and alike.get(p, frozenset()) & held)
    return exact / len(wanted), (exact + RELATED * near) / len(wanted)


@functools.lru_cache(maxsize=512)
def prefixes_held(pattern: re.Pattern[str], text: str) -> frozenset[str]:
    """The prefixes of `pattern` a text holds. A search asks this of each record up to
    three times with one expression (whether to look for related words, coverage, the
    rarest word), and a record's text is one string object throughout: remembered, not
    searched again."""
    return frozenset(m.casefold() for m in pattern.findall(text))


@functools.lru_cache(maxsize=64)
def looked_for(
    words: tuple[str, ...], related: tuple[tuple[str, ...], ...]
) -> tuple[tuple[str, ...], dict[str, frozenset[str]], re.Pattern[str]]:
    """What coverage looks for, once per question (not once per record: stemming every
    related word for each of a few hundred records cost more than the search): the
    words' distinct prefixes, each one's related words' prefixes, and one expression
    finding any of them."""
    wanted = tuple(dict.fromkeys(prefix_of(stem(w)) for w in words))
    alike: dict[str, set[str]] = {}  # a word's prefix -> its related words' prefixes
    for word, near in zip(words, related, strict=False):
        if near:
            alike.setdefault(prefix_of(stem(word)), set()).update(prefix_of(stem(r)) for r in near)
    every = set(wanted).union(*alike.values())
    frozen = {p: frozenset(a) for p, a in alike.items()}
    return wanted, frozen, prefix_pattern(tuple(sorted(every)))


def prefix_of(stemmed: str) -> str:
    """What a stem is matched by: all of a short one, a long one less its last letter
    (so "registry" meets "registries")."""
    return stemmed if len(stemmed) <= 4 else stemmed[:-1]


@functools.lru_cache(maxsize=256)
def prefix_pattern(prefixes: tuple[str, ...]) -> re.Pattern[str]:
    """One expression finding any of the prefixes at the start of a word."""
    alternatives = "|".join(re.escape(p) for p in sorted(prefixes, key=len, reverse=True))
    return re.compile(rf"(?<![^\W_])({alternatives})", re.IGNORECASE)


def said(found: Found) -> str:
    """What a record holds for coverage: its text, and for a turn its speaker's name too.
    A turn is said by its speaker whether or not it names them ("what does Caroline plan?"
    is answered by Caroline's own turns, which seldom say "Caroline"; the other person's
    turns that address her by name do, and would otherwise cover the question better)."""
    if found.speaker is None:
        return found.text
    return _with_speaker(found.text, found.speaker)


@functools.lru_cache(maxsize=512)
def _with_speaker(text: str, speaker: str) -> str:
    # One string per turn, so prefixes_held's cache keeps working across a search's calls.
    return f"{speaker}: {text}"


def folded_text(text: str) -> str:
    return " ".join(text.split()).casefold()


RELATED = 0.5  # what a word related to a question's word counts for, of the word itself


# What each kind of record a question can ask for is, by a hit's kind and label.
_KIND_LABELS = {
    "decision": (("entry", "decision"), ("decision", "")),
    "error": (
        ("entry", "error"),
        ("action", "failed"),
        ("action", "timeout"),
        ("decision", "decision failure"),
    ),
    "constraint": (("entry", "constraint"), ("entry", "user_instruction")),
    "question": (("entry", "question"),),
    "command": (("action", ""),),
}


KINDS_ASKED = frozenset(_KIND_LABELS)


def is_kind(asked_for: str, hit: RecordHit) -> bool:
    """Whether a hit is a record of the kind a question asks for: an entry of that type,
    a failed command for an error, any command for a command."""
    return any(
        hit.kind == kind and hit.label.startswith(label)
        for kind, label in _KIND_LABELS.get(asked_for, ())
    )


# -- a rare word of the question counts for more than a common one ---------------------------

# The share of coverage that counts the question's words by how few of the records found
# hold them (0: every word alike). A turn of the person asked about holds their name, and
# "enjoy" is in many turns: neither says much of what is asked ("which bands...").
RARITY = 1.0
RARITY_KINDS = frozenset({"turn"})  # the records coverage counts so (what a conversation holds)


def word_weights(asked: Asked, found: Mapping[Key, Found]) -> dict[str, float] | None:
    """Each of the question's words (its prefix) weighed by how few of the keyword matches
    hold it, as inverse document frequency weighs it: log(1 + N / (1 + holders)). None
    when RARITY is off or the question has fewer than two words."""
    wanted, _, pattern = looked_for(asked.words, asked.related)
    if not RARITY or len(wanted) < 2:
        return None
    held = [
        prefixes_held(pattern, said(f))
        for f in found.values()
        if f.hit.score < 0 and f.hit.kind in RARITY_KINDS
    ]
    n = len(held)
    return {w: math.log(1 + n / (1 + sum(1 for h in held if w in h))) for w in wanted}


def weighted(asked: Asked, found: Found, cov: float, weights: Mapping[str, float] | None) -> float:
    """A record's coverage with RARITY of it counted by word_weights (the weight of the words
    it holds over the weight of them all), for the kinds of RARITY_KINDS: the turns of a
    conversation, where a person's name and the chatter of every day fill most turns. A
    record of work (a command, an entry) is terse, and there a common word is often the
    one that tells it apart from a look-alike ("the nightly run that was red": measured on
    benchmarks/retrieval, counting them so cost its temporal questions 3 first places)."""
    if not weights or found.hit.kind not in RARITY_KINDS:
        return cov
    _, _, pattern = looked_for(asked.words, asked.related)
    held = prefixes_held(pattern, said(found))
    total = sum(weights.values())
    share = sum(w for p, w in weights.items() if p in held) / total if total > 0 else 0.0
    return (1 - RARITY) * cov + RARITY * share
