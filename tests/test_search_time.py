"""Questions about time (issue 25, must-have 6): a question whose answer is a time ranks the
record that says when above later mentions of the same event; a question that names a time
finds the records of that time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

import clew
from clew.search import ranking, retrieval
from clew.search.times import asks_when, says_when
from tests.conftest import FakeClock


@pytest.mark.parametrize(
    "question",
    [
        "When did Mia go to the pottery workshop?",
        "when was the release tagged",
        "And when is the review?",
        "What date did we move the standup?",
        "In which year did she start climbing?",
        "How long ago did the deploy break?",
        "Since when has the cache been cold?",
        "How long has Mia been climbing?",
        "How many months did the migration take?",
    ],
)
def test_a_question_whose_answer_is_a_time_asks_when(question: str) -> None:
    assert asks_when(question)


@pytest.mark.parametrize(
    "question",
    [
        "What did the pottery workshop teacher tell Mia?",
        "which registry did we pick?",
        "Where did they go when it rained?",  # a clause, not the question's ask
        "what time zone does the server use",
        "how long should the card flip animation be?",  # a length, not a time
    ],
)
def test_other_questions_do_not_ask_when(question: str) -> None:
    assert not asks_when(question)


@pytest.mark.parametrize(
    "text",
    [
        "I went to a pottery workshop yesterday!",
        "We tagged it last Friday after the review.",
        "The album finally dropped on the 11th.",
        "Three weeks ago the cache went cold.",
        "I'm flying to Lisbon next month.",
        "Moved the standup on 2026-05-03.",
        "She started climbing in 2019.",
        "It broke in early May, then again on May 20.",
        "We met on Saturday at the market.",
        "I've been climbing for three years now.",
    ],
)
def test_a_text_that_says_a_time_says_when(text: str) -> None:
    assert says_when(text)


@pytest.mark.parametrize(
    "text",
    [
        "The pottery workshop was lovely, I still think about it.",
        "May I push the branch?",  # the verb, not the month
        "Let's march on and fix the tests.",
        "I just got back and it was great.",  # no time said
        "Version 2019.3 of the tool is out.",
    ],
)
def test_a_text_that_says_no_time_does_not(text: str) -> None:
    assert not says_when(text)


FILLER = (
    ("Ben", "The football match ran late, we lost on penalties."),
    ("Mia", "Work was busy, two deadlines moved up."),
    ("Ben", "I tried a new ramen place near the station."),
    ("Mia", "My sister is visiting for a week in April."),
    ("Ben", "The car needs new tyres before the trip."),
    ("Mia", "Reading a novel about a lighthouse keeper."),
)


def _talk(mem: clew.Memory, clock: FakeClock, at: datetime, *turns: tuple[str, str]) -> list[str]:
    clock.now = at
    session = mem.start_session(title=f"chat {at:%Y-%m-%d}").id
    ids = []
    for name, text in turns:
        clock.advance(30)
        ids.append(mem.append_turn(session, {"role": "user", "name": name, "content": text}).id)
    return ids


def _pottery(mem: clew.Memory, clock: FakeClock) -> tuple[str, str]:
    """A report of a workshop that says when (the day before), among other talk, and a later
    sitting that mentions the workshop again, holding more of a question's words."""
    start = datetime(2026, 3, 2, 18, 0, tzinfo=UTC)
    _talk(mem, clock, start - timedelta(days=9), *FILLER)
    (report,) = _talk(mem, clock, start, ("Mia", "I went to a pottery workshop yesterday."))
    _talk(mem, clock, start + timedelta(days=9), *FILLER[::-1])
    (mention,) = _talk(
        mem,
        clock,
        start + timedelta(days=20),
        ("Mia", "Back at the pottery workshop, the pottery teacher says my pottery is coming on."),
    )
    clock.now = start + timedelta(days=30)
    return report, mention


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_when_did_ranks_the_report_that_says_when_above_later_mentions(
    mem: clew.Memory, clock: FakeClock, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    report, mention = _pottery(mem, clock)
    when = [h.id for h in mem.search_all("When did Mia go to the pottery workshop?", mode=mode)]
    assert when[0] == report, when
    # Asked what, not when: the fuller mention ranks first.
    what = [
        h.id for h in mem.search_all("What did the pottery workshop teacher tell Mia?", mode=mode)
    ]
    assert what[0] == mention, what
    # And without the rule the mention would have led the "when" question too.
    monkeypatch.setattr(ranking, "SAYS_WHEN", 1.0)
    when = [h.id for h in mem.search_all("When did Mia go to the pottery workshop?", mode=mode)]
    assert when[0] == mention, when


def test_a_short_time_named_finds_its_records_when_no_word_matches(
    mem: clew.Memory, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    start = datetime(2026, 3, 2, 18, 0, tzinfo=UTC)
    for days in (0, 5, 10, 15):  # other days' talk
        _talk(mem, clock, start + timedelta(days=days), *FILLER[:2])
    moving = start + timedelta(days=21, hours=3)
    (told,) = _talk(mem, clock, moving, ("Mia", "Jonah is moving to Montreal in July."))
    task = mem.create_task("Renew the certificate", ["Renew"])
    clock.advance(60)
    mem.add_message(task.id, "Renewed it with certbot; it holds until June.")
    clock.now = moving + timedelta(days=2)
    # No record holds "news": that day's records are the answer, nothing else.
    hits = mem.search_all("what news came two days ago?", mode="keyword")
    assert {h.id for h in hits} >= {told}, [h.title for h in hits]
    assert all(h.created_at and h.created_at[:10] == "2026-03-23" for h in hits)
    turns = mem.search_all("what news came two days ago?", kinds="turn", mode="keyword")
    assert [h.id for h in turns] == [told]
    said = mem.search_all("what did we write two days ago?", kinds="message", mode="keyword")
    assert [h.kind for h in said] == ["message"]
    # A time holding more records than TIME_RECORDS is no answer by itself.
    monkeypatch.setattr(retrieval, "TIME_RECORDS", 1)
    assert mem.search_all("what news came two days ago?", mode="keyword") == []


def test_the_records_of_a_time_are_read_on_both_backends(
    mem: clew.Memory, clock: FakeClock
) -> None:
    start = datetime(2026, 3, 2, 18, 0, tzinfo=UTC)
    early = _talk(mem, clock, start, ("Mia", "first"), ("Ben", "second"))
    late = _talk(mem, clock, start + timedelta(days=3), ("Mia", "third"))
    task = mem.create_task("Ship", ["Build"])
    mem.add_message(task.id, "built")
    store = mem._store
    since, until = "2026-03-02T00:00:00.000Z", "2026-03-03T00:00:00.000Z"
    assert store.records_between(["turn"], since=since, until=until, limit=10) == [
        ("turn", i) for i in reversed(early)
    ]
    assert store.records_between(["turn"], since=since, until=until, limit=1) == [
        ("turn", early[1])
    ]
    everything = store.records_between(
        ["turn", "message"],
        since="2026-03-01T00:00:00.000Z",
        until="2027-01-01T00:00:00.000Z",
        limit=10,
    )
    assert {k for k, _ in everything} == {"turn", "message"}
    assert ("turn", late[0]) in everything
    (session,) = {t.session_id for t in store.turns_by_id(late)}
    only = store.records_between(
        ["turn", "message"],
        since=since,
        until="2027-01-01T00:00:00.000Z",
        session_ids=[session],
        limit=10,
    )
    assert only == [("turn", late[0])]
