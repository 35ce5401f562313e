"""Search over long conversations (issue 25, must-have 6): a question whose evidence is spread
over several sittings finds the later pieces through the words of the first (feedback)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

import pytest

import clew
from clew.search import ranking, retrieval

Said = tuple[str, str]  # (speaker, text)

SITTINGS: list[list[Said]] = [
    [
        ("Ana", "Work was long again, so I took up bouldering at the gym to unwind."),
        ("Ben", "Nice! Is it hard on the hands?"),
        ("Ana", "Very, my fingers are sore, but I love it."),
        ("Ben", "I spent the weekend fixing the fence in the garden."),
    ],
    [
        ("Ben", "How was your week, Ana?"),
        ("Ana", "Busy. The quarterly report is finally out the door."),
        ("Ben", "My sister visited, we cooked paella together."),
        ("Ana", "Sounds lovely. I burnt the rice last time I tried."),
    ],
    [
        ("Ana", "Went bouldering again on Saturday and finally sent the overhang route."),
        ("Ben", "That is great, the overhang looked impossible last month."),
        ("Ben", "Thanks for the book, Ana, I finished it yesterday."),
        ("Ana", "The new manager wants a weekly status meeting."),
    ],
]


def converse(mem: clew.Memory, clock: Callable[[], datetime]) -> dict[str, str]:
    """The sittings written a week apart, each turn with its speaker's name: text -> turn id."""
    ids = {}
    start = datetime.fromisoformat("2026-03-02T18:00:00+00:00")
    for week, sitting in enumerate(SITTINGS):
        clock.now = start + timedelta(weeks=week)  # type: ignore[attr-defined]
        session = mem.start_session(title=f"chat {week + 1}").id
        for speaker, text in sitting:
            turn = mem.append_turn(session, {"role": "user", "name": speaker, "content": text})
            ids[text] = turn.id
    return ids


def test_a_later_sitting_is_found_through_the_words_of_the_first(
    mem: clew.Memory, clock: Callable[[], datetime], monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = converse(mem, clock)
    later = ids[SITTINGS[2][0][1]]  # says "bouldering", not "unwind"
    monkeypatch.setattr(retrieval, "FEEDBACK", False)
    before = [h.id for h in mem.search_all("What does Ana do to unwind?", mode="keyword")]
    monkeypatch.setattr(retrieval, "FEEDBACK", True)
    hits = mem.search_all("What does Ana do to unwind?", mode="keyword", explain=True)
    found = [h.id for h in hits]
    assert later not in before
    assert found[0] == ids[SITTINGS[0][0][1]]  # the question's own words still rank first
    assert later in found[:5]


def test_feedback_adds_nothing_when_the_first_hits_have_no_rarer_word(
    mem: clew.Memory, clock: Callable[[], datetime], monkeypatch: pytest.MonkeyPatch
) -> None:
    converse(mem, clock)
    monkeypatch.setattr(retrieval, "FEEDBACK", True)
    assert mem.search_all("nothing recorded says xylophone", mode="keyword") == []


def test_what_a_person_says_later_on_the_same_thing_ranks_first(
    mem: clew.Memory, clock: Callable[[], datetime], monkeypatch: pytest.MonkeyPatch
) -> None:
    start = datetime.fromisoformat("2026-01-05T09:00:00+00:00")
    said = [
        ("Noor", "My rent is 1200, the rent for the flat."),
        ("Sam", "That is a fair price for the area."),
        ("Noor", "The landlord raised the rent, it is 1350 from March."),
        ("Sam", "Ouch. Will you stay?"),
    ]
    ids = []
    for month, (speaker, text) in enumerate(said):
        clock.now = start + timedelta(days=30 * month)  # type: ignore[attr-defined]
        session = mem.start_session(title=f"chat {month}").id
        ids.append(mem.append_turn(session, {"role": "user", "name": speaker, "content": text}).id)
    monkeypatch.setattr(ranking, "LATER", False)
    words = [h.id for h in mem.search_all("how much is Noor's rent?", mode="keyword")]
    assert words.index(ids[0]) < words.index(ids[2])  # the words alone put it first
    monkeypatch.setattr(ranking, "LATER", True)
    hits = mem.search_all("how much is Noor's rent now?", mode="keyword", explain=True)
    assert [h.id for h in hits][:2] == [ids[2], ids[0]]
    assert hits[0].explain is not None
    assert any(b.startswith("said later on the same words") for b in hits[0].explain.boosts)
    past = mem.search_all("what was Noor's rent at first?", mode="keyword")
    assert [h.id for h in past].index(ids[0]) < [h.id for h in past].index(ids[2])
