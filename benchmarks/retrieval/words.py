"""Content words: the floor's query words and the paraphrase check's. Pure.

A short stop list of our own (question words, auxiliaries, pronouns, articles,
prepositions, fillers); words are lower-cased runs of letters and digits, and compared by
a crude stem (a few English suffixes cut) so "failed" and "fails" count as one word.
"""

from __future__ import annotations

import re

STOP = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "done",
        "down",
        "during",
        "each",
        "either",
        "else",
        "ever",
        "every",
        "few",
        "for",
        "from",
        "further",
        "get",
        "got",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "him",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "let",
        "me",
        "might",
        "more",
        "most",
        "much",
        "must",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "ought",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "please",
        "same",
        "shall",
        "she",
        "should",
        "so",
        "some",
        "such",
        "tell",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "us",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "anything",
        "something",
        "thing",
        "things",
        "again",
        "also",
        "one",
        "ones",
        "know",
        "say",
        "said",
        "way",
        "there's",
        "what's",
        "it's",
        "i'm",
        "we're",
    ]
)
_WORD = re.compile(r"[^\W_]+(?:'[a-z]+)?", re.UNICODE)
_SUFFIXES = ("ing", "edly", "ed", "es", "s", "ly", "er", "est")


def words(text: str) -> list[str]:
    """The lower-cased words of a text, in order, possessives dropped."""
    return [w.split("'")[0] for w in _WORD.findall(text.lower())]


def content(text: str) -> list[str]:
    """The words of a text that are not stop words, in order, each once."""
    return list(dict.fromkeys(w for w in words(text) if w not in STOP))


def stem(word: str) -> str:
    """A crude stem: one common suffix cut from a word of five letters or more."""
    for suffix in _SUFFIXES:
        if len(word) >= len(suffix) + 4 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def shared(question: str, text: str) -> set[str]:
    """The content words (by stem) a question shares with a text."""
    return {stem(w) for w in content(question)} & {stem(w) for w in content(text)}
