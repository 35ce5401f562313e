"""A conversation's key decisions say only what was said: the session state's labelled set
held to the issue's floor (precision at least 95%, on this area's own messages and on the
extraction set's), and the cheap prefilter that spares most turns the sentence rules never
hides a claim the rules would find."""

from __future__ import annotations

import pytest
from benchmarks.judgement import extract, session
from hypothesis import given, settings
from hypothesis import strategies as st

from clew.archive.claims import DECISION_WORDS, RULE_WORDS, claims


def test_key_decisions_hold_the_floor_on_the_labelled_set() -> None:
    everything = session.cases()
    assert len(everything) >= 400 and sum(c["set"] == "session" for c in everything) >= 150
    rows = {row["kind"]: row for row in session.score()}
    for label in ("", ", own set", ", extract set", ", user", ", assistant"):
        row = rows[f"session_decision{label}"]
        assert row["precision"] >= 0.95, row
        assert row["tp"] >= 20, row  # a floor met by saying nothing would prove nothing
    assert rows["session_decision"]["recall"] >= 0.85


@pytest.mark.parametrize(
    ("role", "words", "kinds"),
    [
        ("user", DECISION_WORDS + RULE_WORDS, {"decision", "user_instruction"}),
        ("agent", DECISION_WORDS, {"decision"}),
    ],
)
def test_the_prefilter_words_keep_every_claim_of_their_kinds(
    role: str, words: tuple[str, ...], kinds: set[str]
) -> None:
    texts = [c["text"] for c in extract.cases() + session.cases() if "text" in c]
    kept = 0
    for text in texts:
        every = [c for c in claims(text, role) if c.kind in kinds]
        if every:
            assert any(w in text.lower() for w in words), text
            kept += 1
        assert [c for c in claims(text, role, holding=words) if c.kind in kinds] == every, text
    assert kept >= 100


# Words the claims rules are made of, and others, joined as agents write (one space).
_VOCABULARY = [
    "i",
    "we",
    "so",
    "ok",
    "then",
    "let's",
    "we'll",
    "i'll",
    "i've",
    "we've",
    "just",
    "now",
    "decided",
    "chose",
    "opted",
    "picked",
    "settled",
    "on",
    "went",
    "go",
    "going",
    "with",
    "decision:",
    "final",
    "the",
    "picking",
    "over",
    "sticking",
    "forward,",
    "instead",
    "of",
    "rather",
    "than",
    "switch",
    "switching",
    "switched",
    "to",
    "because",
    "use",
    "keep",
    "stick",
    "never",
    "don't",
    "dont",
    "do",
    "not",
    "always",
    "avoid",
    "must",
    "mustn't",
    "stick",
    "make",
    "sure",
    "ensure",
    "only",
    "touch",
    "keep",
    "all",
    "no",
    "new",
    "you",
    "should",
    "can't",
    "cannot",
    "may",
    "are",
    "allowed",
    "leave",
    "it",
    "alone",
    "want",
    "please",
    "can",
    "could",
    "would",
    "turns",
    "out",
    "found",
    "postgres",
    "redis",
    "it",
    "is",
    "was",
    "a",
    "fix",
    "tests",
    "up",
    "yet",
    "nothing",
    "maybe",
]
_SAID = st.lists(st.sampled_from(_VOCABULARY), min_size=1, max_size=12).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(text=st.lists(_SAID, min_size=1, max_size=3).map(". ".join))
def test_the_prefilter_never_hides_a_claim(text: str) -> None:
    for role, words, kinds in (
        ("user", DECISION_WORDS + RULE_WORDS, {"decision", "user_instruction"}),
        ("agent", DECISION_WORDS, {"decision"}),
    ):
        every = [c for c in claims(text, role) if c.kind in kinds]
        assert [c for c in claims(text, role, holding=words) if c.kind in kinds] == every
