"""The ranking of search hits, a pure function: coverage, exact matches, neighbours, fusion."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clew.models import RecordHit
from clew.search import coverage, ranking
from clew.search.coverage import Asked, Found

NOW = datetime(2026, 11, 23, 12, tzinfo=UTC)


def asked(
    words: str,
    *,
    exact: str = "",
    identifiers: tuple[str, ...] = (),
    when: tuple[datetime, datetime, bool] | None = None,
) -> Asked:
    split = tuple(words.split())
    return Asked(split, (), identifiers, exact or words, frozenset(split), when)


def found(
    ident: str,
    text: str,
    bm25: float,
    *,
    kind: str = "entry",
    session: str | None = None,
    turn: int | None = None,
    at: str = "2026-11-20T10:00:00+00:00",
    speaker: str | None = None,
) -> tuple[tuple[str, str], Found]:
    hit = RecordHit(kind, ident, None, session, turn, at, "", text, text, bm25, "content")
    return (kind, ident), Found(hit, text, speaker)


def test_a_record_holding_every_word_outranks_one_repeating_the_rarest() -> None:
    both = found("both", "we picked ghcr as the registry", -2.0)
    one = found("one", "registry registry registry mirror", -3.0)
    ranked = ranking.rank(asked("picked registry"), dict([both, one]))
    assert [r.key[1] for r in ranked] == ["both", "one"]
    assert ranked[0].explain.coverage == 1.0 and ranked[1].explain.coverage == 0.5
    assert ranked[1].explain.keyword_rank == 1  # bm25 alone put it first


def test_an_identifier_written_exactly_is_a_bonus() -> None:
    exact = found("exact", "failed with ERR_CONN_RESET", -1.0)
    pieces = found("pieces", "err conn reset in the pool", -2.0)
    ranked = ranking.rank(
        asked("err_conn_reset", identifiers=("ERR_CONN_RESET",)), dict([exact, pieces])
    )
    assert ranked[0].key[1] == "exact"
    assert any(b.startswith("identifier as written") for b in ranked[0].explain.boosts)


def test_a_reply_next_to_the_matching_turn_ranks_as_its_neighbour() -> None:
    question = found(
        "q", "which port should the dev server use?", -3.0, kind="turn", session="s", turn=4
    )
    reply = found("a", "use 8080, 3000 is taken", 0.0, kind="turn", session="s", turn=5)
    far = found("far", "ports are configured in env", -0.5, kind="turn", session="s", turn=9)
    found_ = dict([question, reply, far])
    ranked = {r.key[1]: r for r in ranking.rank(asked("port dev server"), found_)}
    assert ranked["a"].score > 0 and ranked["a"].explain.keyword_rank is None
    assert ranked["a"].score > ranked["far"].score
    off = {r.key[1]: r for r in ranking.rank(asked("port dev server"), found_, neighbours=False)}
    assert off["a"].score == 0


def test_a_speaker_named_in_the_question_boosts_their_turns() -> None:
    hers = found(
        "hers",
        "pottery class on tuesday",
        -1.0,
        kind="turn",
        session="s",
        turn=1,
        speaker="Melanie",
    )
    his = found(
        "his", "pottery class on tuesday", -1.0, kind="turn", session="s", turn=8, speaker="Dan"
    )
    ranked = ranking.rank(asked("melanie pottery class"), dict([hers, his]))
    assert ranked[0].key[1] == "hers"


def test_a_time_named_in_the_question_boosts_records_from_then() -> None:
    may = found("may", "deploy rolled back", -1.0, at="2026-05-12T09:00:00+00:00")
    june = found("june", "deploy rolled back", -1.0, at="2026-06-12T09:00:00+00:00")
    window = (datetime(2026, 5, 1, tzinfo=UTC), datetime(2026, 6, 1, tzinfo=UTC), False)
    ranked = ranking.rank(asked("deploy rolled back", when=window), dict([may, june]))
    assert ranked[0].key[1] == "may"


def test_meaning_ranks_a_record_with_no_shared_word() -> None:
    word = found("word", "the registry is slow today", -1.0)
    nearest = [(("entry", "meaning"), 0.8), (("entry", "word"), 0.3)]
    ranked = ranking.rank(asked("registry"), dict([word]), nearest, dense_weight=0.5)
    keys = [r.key[1] for r in ranked]
    assert set(keys) == {"word", "meaning"}
    meaning = next(r for r in ranked if r.key[1] == "meaning")
    assert meaning.explain.dense_rank == 1 and meaning.explain.keyword_rank is None


def test_confident_needs_most_words_an_exact_match_or_close_meaning() -> None:
    half = found("half", "registry mirror", -1.0)
    ranked = ranking.rank(asked("registry credentials expired"), dict([half]))
    assert not ranking.confident(ranked[0])
    whole = found("whole", "registry credentials expired yesterday", -1.0)
    assert ranking.confident(ranking.rank(asked("registry credentials expired"), dict([whole]))[0])


@settings(deadline=None)  # no timing in the suite: a loaded machine is slow
@given(
    st.lists(
        st.tuples(st.text(min_size=0, max_size=40), st.floats(-50, 0), st.booleans()),
        min_size=0,
        max_size=12,
    ),
    st.text(max_size=30),
)
def test_rank_keeps_every_record_once_best_first(
    records: list[tuple[str, float, bool]], words: str
) -> None:
    pool = dict(
        found(str(i), text, bm25, kind="turn" if is_turn else "entry", session="s", turn=i + 1)
        for i, (text, bm25, is_turn) in enumerate(records)
    )
    ranked = ranking.rank(asked(words), pool)
    assert sorted(r.key for r in ranked) == sorted(pool)
    scores = [r.score for r in ranked]
    assert scores == sorted(scores, reverse=True)
    assert all(s >= 0 for s in scores)


@settings(deadline=None)
@given(st.text(max_size=60))
def test_stem_is_idempotent_enough_and_never_empty_for_words(word: str) -> None:
    stemmed = coverage.stem(word)
    assert isinstance(stemmed, str)
    if len(word.strip()) >= 3 and word.isalpha():
        assert stemmed


def test_each_index_is_read_against_its_own_best() -> None:
    """bm25 grows with the log of its index's size: a big index's best must not make a
    small index's best look weak (the million-turn store buried the entry that answers)."""
    from clew.search.hits import per_index

    entry = found("e", "the checkout bundle must stay under 180 KB", -4.0)
    turn = found("t", "checkout logs on staging", -12.0, kind="turn", session="s", turn=1)
    weak = found("w", "checkout", -6.0, kind="turn", session="s", turn=3)
    command = found("c", "du -sh checkout", -2.0, kind="action")
    read = per_index(dict([entry, turn, weak, command]))
    scores = {key[1]: f.hit.score for key, f in read.items()}
    assert scores == {"e": -1.0, "t": -1.0, "w": -0.5, "c": -1.0}
    ranked = ranking.rank(asked("checkout bundle"), read)
    assert ranked[0].key == ("entry", "e")  # it holds both words; the turns one


def _buried(n: int) -> tuple[dict[tuple[str, str], Found], list[tuple[tuple[str, str], float]]]:
    """`n` keyword matches of the question, and records found by meaning alone."""
    pool = dict(found(f"kw{i}", "registry credentials rotated", -5.0 + i * 0.1) for i in range(n))
    nearest = [(("entry", "meaning"), 0.9), (("entry", "may"), 0.7)]
    nearest += [(("entry", f"kw{i}"), 0.3) for i in range(n)]
    return pool, nearest


def test_the_record_nearest_in_meaning_is_kept_among_the_first_five(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pool, nearest = _buried(8)
    monkeypatch.setattr(ranking, "ADAPT", 0.0)
    monkeypatch.setattr(ranking, "WEAK_COVER", math.inf)  # kept however well words match
    monkeypatch.setattr(ranking, "MEANING_PLACE", 0)
    fused = ranking.rank(asked("registry credentials"), pool, nearest, dense_weight=0.05)
    assert [r.key[1] for r in fused].index("meaning") >= 5
    monkeypatch.setattr(ranking, "MEANING_PLACE", 5)
    ranked = ranking.rank(asked("registry credentials"), pool, nearest, dense_weight=0.05)
    assert [r.key[1] for r in ranked][:5] == [*[r.key[1] for r in fused][:4], "meaning"]
    assert ranked[4].score == fused[4].score  # the score of the place it takes
    assert ranked[4].explain.score == round(fused[4].score, 4)
    assert "nearest in meaning: kept at place 5" in ranked[4].explain.boosts[-1]
    # Without keyword matches (dense mode) or without meaning (keyword mode): nothing kept.
    assert ranking.rank(asked("registry"), pool) == ranking.rank(asked("registry"), pool, ())


def test_a_question_naming_a_time_keeps_the_nearest_of_that_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pool, nearest = _buried(8)
    monkeypatch.setattr(ranking, "ADAPT", 0.0)
    monkeypatch.setattr(ranking, "WEAK_COVER", math.inf)
    ranked = ranking.rank(
        asked("registry credentials"),
        pool,
        nearest,
        dense_weight=0.05,
        timely=frozenset({("entry", "may")}),
    )
    keys = [r.key[1] for r in ranked]
    assert keys.index("may") <= 4 and keys.index("meaning") >= 5


@settings(deadline=None)
@given(
    st.lists(st.floats(-20, -0.01), min_size=0, max_size=12),
    st.lists(st.floats(0.2, 1.0), min_size=1, max_size=12),
    st.integers(0, 11),
    st.booleans(),
)
def test_keeping_the_nearest_moves_only_it_and_never_the_first_hit(
    bm25s: list[float], cosines: list[float], timely_at: int, timed: bool
) -> None:
    pool = dict(found(f"k{i}", f"word{i % 3} other", b) for i, b in enumerate(bm25s))
    # The nearest: some of the keyword matches and some records found by meaning alone.
    keys = [("entry", f"k{i}" if i % 2 else f"m{i}") for i in range(len(cosines))]
    nearest = sorted(dict(zip(keys, cosines, strict=True)).items(), key=lambda n: -n[1])
    timely = frozenset({nearest[timely_at % len(nearest)][0]}) if timed else frozenset()
    saved = ranking.MEANING_PLACE, ranking.WEAK_COVER, ranking.FLAT
    ranking.WEAK_COVER, ranking.FLAT = math.inf, -math.inf  # the place kept whatever matches
    try:
        kept = ranking.rank(asked("word0 word1"), pool, nearest, timely=timely)
        ranking.MEANING_PLACE = 0
        plain = ranking.rank(asked("word0 word1"), pool, nearest, timely=timely)
    finally:
        ranking.MEANING_PLACE, ranking.WEAK_COVER, ranking.FLAT = saved
    assert sorted(r.key for r in kept) == sorted(r.key for r in plain)
    scores = [r.score for r in kept]
    assert scores == sorted(scores, reverse=True)
    if not pool:  # dense mode: nothing is moved
        assert kept == plain
        return
    assert kept[0].key == plain[0].key
    surest = next(iter(timely)) if timely else nearest[0][0]
    before = [r.key for r in plain].index(surest)
    after = [r.key for r in kept].index(surest)
    place = ranking.MEANING_PLACE - 1
    assert after == (place if before > place and plain[place].score > 0 else before)
    moved = [r.key for r in kept if r.key != surest]
    assert moved == [r.key for r in plain if r.key != surest]  # the others keep their order


def test_a_turn_holds_its_speakers_name_for_coverage() -> None:
    # "what does Lena plan?": Lena's own turn seldom says "Lena"; the other person's turn
    # that addresses her by name must not cover the question better for it.
    own = found(
        "own",
        "I plan to hike the whole ridge in May",
        -1.0,
        kind="turn",
        session="s",
        turn=2,
        speaker="Lena",
    )
    other = found(
        "other",
        "Lena, how was the weekend at the lake",
        -1.5,
        kind="turn",
        session="s",
        turn=9,
        speaker="Omar",
    )
    ranked = {r.key[1]: r for r in ranking.rank(asked("lena plan"), dict([own, other]))}
    assert ranked["own"].explain.coverage == 1.0
    assert ranked["own"].score > ranked["other"].score


def test_the_reply_to_a_question_takes_more_of_it_and_the_question_less() -> None:
    question = found(
        "q", "Which registry did you pick in the end?", -3.0, kind="turn", session="s", turn=4
    )
    reply = found(
        "a",
        "ghcr, Docker Hub throttles us [shares a screenshot]",
        0.0,
        kind="turn",
        session="s",
        turn=5,
    )
    before = found("b", "ok", 0.0, kind="turn", session="s", turn=3)
    records = dict([question, reply, before])
    ranked = {r.key[1]: r for r in ranking.rank(asked("registry pick"), records)}
    assert ranked["a"].score > ranked["b"].score  # the reply, not the turn before the question
    assert any(b.startswith("asks a question") for b in ranked["q"].explain.boosts)
    assert ranking.asks("Which one? [shares a photo: a dog]")
    assert not ranking.asks("Why? Because it was cheaper.")


def test_confident_needs_a_clear_lead_over_the_runner_up() -> None:
    first = found("first", "registry credentials expired yesterday", -2.0)
    near = found("near", "registry credentials expired last week", -1.9)
    far = found("far", "the mirror of the registry", -0.4)
    close = ranking.rank(asked("expired registry credentials"), dict([first, near]))
    assert ranking.confident(close[0])  # alone, as before
    assert not ranking.confident(close[0], close[1])  # two turns say it: which answers?
    clear = ranking.rank(asked("expired registry credentials"), dict([first, far]))
    assert ranking.confident(clear[0], clear[1])


def test_an_identifier_as_written_is_confident_only_when_it_is_code() -> None:
    assert ranking.code_like("ERR_CONN_RESET") and ranking.code_like("src/auth.py")
    assert ranking.code_like("v2.19.2") and ranking.code_like("f2000")
    assert not ranking.code_like("self-care") and not ranking.code_like("hand-painted")
    code = found("code", "pytest failed: ERR_CONN_RESET in the pool", -1.0)
    twin = found("twin", "ERR_CONN_RESET again on retry", -1.0)
    ranked = ranking.rank(
        asked("err_conn_reset", identifiers=("ERR_CONN_RESET",)), dict([code, twin])
    )
    assert ranking.confident(ranked[0], ranked[1], ("ERR_CONN_RESET",))
    prose = found("prose", "self-care matters, I run daily", -1.0)
    other = found("other", "self-care is hard with kids", -1.0)
    ranked = ranking.rank(
        asked("self care daily", identifiers=("self-care",)), dict([prose, other])
    )
    assert not ranking.confident(ranked[0], ranked[1], ("self-care",))


def test_a_question_naming_a_speaker_ranks_the_others_turns_lower() -> None:
    # Omar's turn names Lena to address her; Lena's own turn tells what she did.
    own = found(
        "own",
        "I finally went to the pottery class",
        -1.0,
        kind="turn",
        session="s",
        turn=3,
        speaker="Lena",
    )
    other = found(
        "other",
        "Lena, the pottery class sounds lovely",
        -1.0,
        kind="turn",
        session="s",
        turn=8,
        speaker="Omar",
    )
    ranked = {r.key[1]: r for r in ranking.rank(asked("lena pottery class"), dict([own, other]))}
    assert ranked["own"].score > ranked["other"].score
    assert any(b.startswith("said by another than lena") for b in ranked["other"].explain.boosts)
    # No speaker named: nobody's turns are lowered.
    plain = {r.key[1]: r for r in ranking.rank(asked("pottery class"), dict([own, other]))}
    assert not any(b.startswith("said by another") for b in plain["other"].explain.boosts)


def test_another_speakers_turn_that_only_names_the_person_is_an_address(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ranking, "ADDRESSED", 0.5)
    hello = found("hello", "Thanks, Melanie! Talk soon.", -3.0, kind="turn", speaker="Caroline")
    fact = found("fact", "Caroline ran her first marathon", -1.0, kind="turn", speaker="Melanie")
    own = found("own", "I run to clear my head", -1.0, kind="turn", speaker="Melanie")
    question = asked("melanie run")
    ranked = {r.key[1]: r for r in ranking.rank(question, dict([hello, fact, own]))}
    assert any(b.startswith("only names melanie") for b in ranked["hello"].explain.boosts)
    assert not any(b.startswith("only names") for b in ranked["fact"].explain.boosts)
    assert ranked["own"].score > ranked["hello"].score
    monkeypatch.setattr(ranking, "ADDRESSED", 1.0)
    assert ranking.addressed(question, hello[1], {"melanie"}, []) == 1.0
    # A question naming nobody who speaks: no turn is an address.
    assert ranking.addressed(asked("marathon"), hello[1], set(), []) == 1.0


def test_feedback_words_are_the_first_hits_rarer_words_not_the_questions() -> None:
    question = asked("ana unwind")
    tops = ["Ana: I took up bouldering at the gym to unwind", "Ana: bouldering hurts the hands"]
    others = [*tops, "the gym was closed", "my hands are cold", "the gym again", "report due"]
    words = ranking.feedback_words(question, tops, others)
    assert words[0] == "bouldering"  # both tops hold it
    assert "unwind" not in words and "ana" not in words
    assert len(words) <= ranking.FEEDBACK_WORDS
    assert ranking.feedback_words(question, [], others) == ()


def test_what_a_speaker_says_later_on_the_same_words_comes_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ranking, "LATER", True)
    early = found(
        "early",
        "my rent is 1200 a month",
        -2.0,
        kind="turn",
        speaker="Noor",
        at="2026-02-01T10:00:00+00:00",
    )
    late = found(
        "late",
        "the rent went up, 1350 now",
        -1.8,
        kind="turn",
        speaker="Noor",
        at="2026-05-01T10:00:00+00:00",
    )
    other = found(
        "other",
        "rent is due on the first",
        -1.9,
        kind="turn",
        speaker="Sam",
        at="2026-06-01T10:00:00+00:00",
    )
    records = dict([early, late, other])
    question = asked("rent")
    ranked = ranking.rank(question, records)
    assert [r.key[1] for r in ranked][:2] == ["early", "other"]
    assert ranking.later_first(ranked, records, question, "how much is my rent?") == ranked
    now = ranking.later_first(ranked, records, question, "how much is my rent now?")
    assert [r.key[1] for r in now] == ["late", "other", "early"]
    assert [r.score for r in now] == sorted((r.score for r in now), reverse=True)
    assert any(b.startswith("said later on the same words") for b in now[0].explain.boosts)
    # A question about the past, or a time, keeps the order the words gave.
    for past in ("what did I pay for rent?", "what was my rent before?"):
        assert ranking.later_first(ranked, records, question, past) == ranked
    then = question._replace(when=(NOW, NOW, False))
    assert ranking.later_first(ranked, records, then, "my rent in May") == ranked
    # Far below the speaker's best on those words: not the same statement made again.
    weak = dict(
        [
            early,
            found(
                "late",
                "the rent went up, 1350 now",
                -0.2,
                kind="turn",
                speaker="Noor",
                at="2026-05-01T10:00:00+00:00",
            ),
        ]
    )
    ranked = ranking.rank(question, weak)
    assert ranking.later_first(ranked, weak, question, "how much is my rent now?") == ranked


def test_a_rare_word_of_the_question_counts_for_more_than_a_common_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    common = [
        found(f"c{n}", f"enjoy the weekend {n}", -1.0, kind="turn", speaker="Ben") for n in range(6)
    ]
    enjoy = found("enjoy", "enjoy your trip", -1.0, kind="turn", speaker="Dave")
    bands = found("bands", "so many great bands there", -1.0, kind="turn", speaker="Dave")
    records = dict([*common, enjoy, bands])
    question = asked("bands dave enjoy")
    monkeypatch.setattr(coverage, "RARITY", 0.0)
    assert coverage.word_weights(question, records) is None
    alike = {r.key[1]: r.score for r in ranking.rank(question, records)}
    assert alike["enjoy"] == alike["bands"]  # two words of three each, counted alike
    monkeypatch.setattr(coverage, "RARITY", 0.5)
    weights = coverage.word_weights(question, records)
    assert weights is not None and weights["band"] > weights["enjo"] > 0  # word prefixes
    rare = {r.key[1]: r.score for r in ranking.rank(question, records)}
    assert rare["bands"] > rare["enjoy"]


def test_the_nearest_keeps_a_place_only_when_no_keyword_match_holds_the_question(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Eight records hold every word of the question: keyword search is sure of its own, and
    # the record found by meaning alone waits below them (fusion.py: on LoCoMo such a
    # record was evidence on about 1% of questions).
    pool, nearest = _buried(8)
    monkeypatch.setattr(ranking, "ADAPT", 0.0)
    ranked = ranking.rank(asked("registry credentials"), pool, nearest, dense_weight=0.05)
    assert [r.key[1] for r in ranked].index("meaning") >= 5
    assert not any("kept at place" in b for r in ranked for b in r.explain.boosts)
    # The same records when the question has words none of them holds: keyword search
    # matched a third of it at best, and the nearest in meaning is kept at its place.
    weak = asked("registry credentials vault token lease expiry")
    ranked = ranking.rank(weak, pool, nearest, dense_weight=0.05)
    assert [r.key[1] for r in ranked].index("meaning") == ranking.MEANING_PLACE - 1


def test_keyword_weak_reads_the_best_coverage_of_the_keyword_matches() -> None:
    a, b, c = ("entry", "a"), ("entry", "b"), ("entry", "c")
    covered = {a: 0.5, b: ranking.WEAK_COVER, c: 1.0}
    assert ranking.keyword_weak(covered, [a])
    assert not ranking.keyword_weak(covered, [a, b])
    assert ranking.keyword_weak(covered, [])  # nothing matched: keyword has nothing
    assert ranking.keyword_weak(covered, [("entry", "unknown")])
    # Coverage of records not matched by keyword (neighbours, meaning) does not count.
    assert ranking.keyword_weak(covered, [a]) and covered[c] == 1.0


def test_a_hit_meaning_put_first_is_not_confident() -> None:
    # The top hit holds the question and leads clearly, but only because meaning lifted it
    # above the record keyword search ranked best: in a hybrid search that is no lead of
    # the words, and the mark is withheld (fusion.py: 80.8% -> 83.1% right on LoCoMo).
    pool = dict(
        [
            found("top", "deploy the gateway to staging", -1.0),
            found("words", "deploy the gateway to staging now", -4.0),
        ]
    )
    nearest = [(("entry", "top"), 0.95), (("entry", "other"), 0.2)]
    question = asked("deploy gateway staging friday rollback")  # weak: 3 of 5 words held
    ranked = ranking.rank(question, pool, nearest, dense_weight=0.7)
    assert ranked[0].key == ("entry", "top") and ranked[0].keyword < ranked[1].keyword
    assert not ranking.words_lead(ranked)
    alone = ranking.rank(question, pool)
    assert alone[0].key == ("entry", "words") and ranking.words_lead(alone)
    assert ranking.words_lead([])


@settings(deadline=None)
@given(
    st.lists(st.floats(-20, -0.01), min_size=1, max_size=10),
    st.lists(st.floats(0.2, 1.0), min_size=0, max_size=10),
)
def test_words_lead_whenever_keyword_alone_ranks_the_same_first(
    bm25s: list[float], cosines: list[float]
) -> None:
    pool = dict(found(f"k{i}", f"word{i % 3} other", b) for i, b in enumerate(bm25s))
    nearest = sorted(
        ((("entry", f"k{i}"), c) for i, c in enumerate(cosines[: len(bm25s)])), key=lambda n: -n[1]
    )
    ranked = ranking.rank(asked("word0 word1"), pool, nearest)
    # Keyword mode: the first always leads by words (ties aside, its keyword is the best).
    assert ranking.words_lead(ranking.rank(asked("word0 word1"), pool))
    if ranked and ranked[0].keyword == max(r.keyword for r in ranked):
        assert ranking.words_lead(ranked)


def test_meaning_only_breaks_near_ties_when_keyword_matches_hold_the_question() -> None:
    # Both records hold every word; keyword ranks "words" first by a clear margin. Meaning,
    # surer of "top", may not reorder them however much it weighs (fusion.py: on LoCoMo's
    # turns, whose cosines lie close together, the mix buried keyword's answers) ...
    pool = dict(
        [
            found("top", "deploy the gateway to staging", -3.0),
            found("words", "deploy the gateway to staging now", -4.0),
        ]
    )
    nearest = [(("entry", "top"), 0.95), (("entry", "words"), 0.3)]
    ranked = ranking.rank(asked("deploy gateway staging"), pool, nearest, dense_weight=0.7)
    assert [r.key[1] for r in ranked] == ["words", "top"]
    assert ranked[0].score == pytest.approx(1 - ranking.STRONG_DENSE)
    # ... but it breaks a tie of keyword scores.
    tied = dict(
        [
            found("top", "deploy the gateway to staging", -4.0),
            found("words", "deploy the gateway to staging", -4.0),
        ]
    )
    ranked = ranking.rank(asked("deploy gateway staging"), tied, nearest, dense_weight=0.7)
    assert [r.key[1] for r in ranked] == ["top", "words"]
    # When the matches hold less of the question, meaning weighs as much as it did.
    weak = asked("deploy gateway staging friday rollback")
    mixed = ranking.rank(weak, pool, nearest, dense_weight=0.7)
    assert mixed[0].key[1] == "top"


def test_sharpness_is_the_nearest_lead_over_the_next_nine() -> None:
    keys = [("turn", str(i)) for i in range(12)]
    flat = list(
        zip(keys, [0.62, 0.61, 0.61, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.1, 0.1], strict=True)
    )
    assert ranking.sharpness(flat) == pytest.approx(0.62 - (0.61 * 2 + 0.6 * 7) / 9)
    sharp = [(keys[0], 0.9), *[(k, 0.5) for k in keys[1:]]]
    assert ranking.sharpness(sharp) == pytest.approx(0.4)
    assert ranking.sharpness(sharp[:2]) == pytest.approx(0.4)
    assert ranking.sharpness(sharp[:1]) == 1.0  # nothing to stand out from


def test_meaning_is_trusted_where_keyword_is_weak_and_meaning_is_sharp_or_all_there_is() -> None:
    k = ("turn", "k")
    sharp = [(("turn", "m"), 0.9), *[(("turn", f"n{i}"), 0.5) for i in range(9)]]
    flat = [(("turn", "m"), 0.52), *[(("turn", f"n{i}"), 0.5) for i in range(9)]]
    most, half, little = {k: ranking.WEAK_COVER}, {k: ranking.HALF_COVER}, {k: 0.2}
    assert not ranking.meaning_trusted(most, [k], sharp)  # keyword holds the question
    assert ranking.meaning_trusted(half, [k], sharp)
    assert not ranking.meaning_trusted(half, [k], flat)  # no record nearer than the rest
    assert ranking.meaning_trusted(little, [k], flat)  # keyword has little: meaning decides
    assert ranking.trusted_weight(0.4, half, [k], flat) == ranking.STRONG_DENSE
    assert ranking.trusted_weight(0.4, half, [k], sharp) == 0.4
    assert ranking.trusted_weight(0.0, most, [k], sharp) == 0.0  # keyword mode stays keyword


def test_a_flat_list_of_the_nearest_keeps_no_place_and_reorders_nothing() -> None:
    # Keyword matches hold half the question: meaning may help, but its nearest is no nearer
    # than the next nine (LoCoMo's chat turns): keyword's order stands, nothing is kept.
    pool = dict(found(f"kw{i}", "registry credentials rotated", -5.0 + i * 0.3) for i in range(8))
    question = asked("registry credentials vault lease")
    flat = [(("entry", "meaning"), 0.52)]
    flat += [(("entry", f"kw{i}"), 0.5 + 0.001 * i) for i in range(8)]
    ranked = ranking.rank(question, pool, flat, dense_weight=0.5)
    assert [r.key[1] for r in ranked][:8] == [f"kw{i}" for i in range(8)]
    sharp = [(("entry", "meaning"), 0.9), *flat[1:]]
    ranked = ranking.rank(question, pool, sharp, dense_weight=0.5)
    assert [r.key[1] for r in ranked].index("meaning") < 5
