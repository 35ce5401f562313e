"""The labelled retrieval set (benchmarks/retrieval/) is well formed: enough questions of
every category, answers that name records of the set, paraphrases that share no content
word with their answers, and the same set on every build."""

from __future__ import annotations

import collections
from datetime import datetime
from pathlib import Path

import pytest
from benchmarks.retrieval import words
from benchmarks.retrieval.build import floor_index, write
from benchmarks.retrieval.corpus import CATEGORIES, Book
from benchmarks.retrieval.facts_extra import book
from benchmarks.retrieval.run import Floor, rank_of, score


@pytest.fixture(scope="module")
def the_set() -> Book:
    return book()


def test_the_set_has_at_least_300_questions_and_40_of_each_category(the_set: Book) -> None:
    counts = collections.Counter(q.category for q in the_set.questions)
    assert len(the_set.questions) >= 300
    assert set(counts) == set(CATEGORIES)
    assert min(counts.values()) >= 40, counts
    assert len({q.id for q in the_set.questions}) == len(the_set.questions)


def test_every_answer_is_a_labelled_record_of_the_set(the_set: Book) -> None:
    labelled = {r.key for r in the_set.records if r.labelled}
    for q in the_set.questions:
        assert set(q.answers) <= labelled, q.id
        if q.category == "unanswerable":
            assert not q.answers, q.id
        else:
            assert q.answers, q.id
        if q.category == "multi-fact":
            assert len(q.answers) >= 2, q.id
        if q.asked_at is not None:
            datetime.strptime(q.asked_at, "%Y-%m-%dT%H:%M:%SZ")


def test_paraphrases_share_no_content_word_with_their_answers(the_set: Book) -> None:
    text = {r.key: r.text for r in the_set.records}
    overlaps = {
        q.id: words.shared(q.question, text[key])
        for q in the_set.questions
        if q.category == "paraphrase"
        for key in q.answers
    }
    assert {k: v for k, v in overlaps.items() if v} == {}


def test_the_set_is_the_same_on_every_build(the_set: Book) -> None:
    again = book()
    assert [(r.key, r.text, r.at) for r in again.records] == [
        (r.key, r.text, r.at) for r in the_set.records
    ]
    assert again.questions == the_set.questions
    assert 3_000 <= len(the_set.records) <= 10_000


def test_a_built_store_maps_keys_to_the_hits_the_floor_returns(tmp_path: Path) -> None:
    small = Book()
    task = small.task("t", "2026-05-01 09:00", "Tiny task", goal="g", plan=["one"])
    session = small.session("s", "2026-05-01 09:05", "tiny chat")
    small.entry(
        "e",
        task,
        "2026-05-01 09:10",
        "decision",
        "Pick zstd for the archive",
        detail="smaller than gzip",
    )
    small.turn("u", session, "2026-05-02 10:00", "user", "My sister lives in Porto.")
    refs = write(small, tmp_path / "s.db")
    assert refs["e"]["kind"] == "entry" and refs["u"]["kind"] == "turn"
    floor_index(tmp_path / "s.db", tmp_path / "f.db")
    hits = Floor(tmp_path / "f.db").search("where does my sister live?")
    assert rank_of(hits, {(refs["u"]["kind"], refs["u"]["id"])}) == [1]
    result = {"answers": 1, "ranks": [1], "confident": None}
    assert score([result])["hit@1"] == 1.0


def test_content_words_drop_question_words_and_keep_identifiers() -> None:
    assert words.content("What did we decide about ERR_TOKEN_REUSED?") == [
        "decide",
        "err",
        "token",
        "reused",
    ]
    assert words.shared("Which registry did we pick?", "We chose GitHub Packages") == set()
