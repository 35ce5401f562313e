"""Words related in meaning: the packaged table, how a question that its own words do not
answer looks for them too (at a lower weight, on both backends), and what they count for in
the ranking (never for `confident`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

import clew
from clew.search import coverage, question
from clew.search.coverage import Asked


def test_the_table_relates_common_words_and_never_to_themselves() -> None:
    doctor, pet = question.related(["doctor", "pet"])
    assert "physician" in doctor and "doctor" not in doctor
    assert "dog" in pet
    # A word the question holds is no expansion of another of its words.
    _, pet_with_dog = question.related(["dog", "pet"])
    assert "dog" not in pet_with_dog
    assert question.related(["zzqxv"]) == ((),)
    assert question.related([]) == ()


def test_the_table_is_small_plain_text_with_its_source() -> None:
    data = Path(question.RELATED_WORDS).read_bytes()
    assert len(data) < 500_000
    header = data.decode("utf-8").splitlines()[0]
    assert header.startswith("#") and "sha256" in header and "build_related_words" in header


def test_keyword_search_with_related_words_imports_no_numpy() -> None:
    code = (
        "import sys, clew.search.question as q;"
        "print(q.related(['doctor'])[0][:1], 'numpy' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["('physician',)", "False"]


def asked(words: tuple[str, ...], related: tuple[tuple[str, ...], ...] = ()) -> Asked:
    return Asked(words, (), (), " ".join(words), frozenset(), None, (), related)


def test_a_related_word_counts_a_part_of_the_word_and_not_for_the_exact_share() -> None:
    a = asked(("doctor", "pet"), (("physician",), ("dog",)))
    assert coverage.coverages(a, "the doctor saw my pet") == (1.0, 1.0)
    assert coverage.coverages(a, "the physician saw my dog") == (0.0, coverage.RELATED)
    assert coverage.coverages(a, "the doctor saw my dog") == (0.5, 0.5 + coverage.RELATED / 2)
    assert coverage.coverage(a, "the physician saw my dog") == 0.0


@given(st.text(max_size=200), st.lists(st.sampled_from(["doctor", "pet", "car"]), max_size=3))
def test_coverage_is_a_share_and_related_words_only_add(text: str, words: list[str]) -> None:
    unique = tuple(dict.fromkeys(words))
    a = asked(unique, question.related(unique))
    exact, near = coverage.coverages(a, text)
    assert 0.0 <= exact <= near <= 1.0


def test_a_record_in_other_words_is_found_below_one_in_the_same_words(mem: clew.Memory) -> None:
    task = mem.create_task("Family", ["one"])
    other = mem.add_finding(task.id, "The physician moved the checkup to Friday")
    same = mem.add_finding(task.id, "The doctor said the rash is nothing")
    # Half the question's words found in one record: not enough, so related words count.
    hits = mem.search_all("did the doctor call back?", mode="keyword")
    assert [h.id for h in hits][:2] == [same.id, other.id]
    assert not hits[1].confident
    alone = mem.search_all("which doctor moved the checkup?", kinds="entry", mode="keyword")
    assert alone[0].id == other.id  # "checkup" and "moved" are its own words


def test_a_question_its_own_words_answer_looks_no_further(mem: clew.Memory) -> None:
    task = mem.create_task("Family", ["one"])
    mem.add_finding(task.id, "The physician moved the checkup to Friday")
    answer = mem.add_finding(task.id, "The doctor said the rash is nothing")
    hits = mem.search_all("doctor rash", mode="keyword")
    assert [h.id for h in hits] == [answer.id]


def test_a_question_only_related_words_answer_finds_them_unconfident(mem: clew.Memory) -> None:
    task = mem.create_task("Family", ["one"])
    answer = mem.add_finding(task.id, "Took the dog to the vet for her shots")
    mem.add_finding(task.id, "Booked the flights for the trip to Lisbon")
    hits = mem.search_all("who looks after our pet's health?", mode="keyword")
    assert hits and hits[0].id == answer.id
    assert not hits[0].confident


def test_a_top_hit_without_the_rarest_word_asked_for_is_not_confident(mem: clew.Memory) -> None:
    task = mem.create_task("Mobile", ["one"])
    blocked = mem.add_finding(task.id, "gateway: the mobile app was blocked by CORS")
    mem.add_finding(task.id, "the mobile app ships on Fridays")
    mem.add_finding(task.id, "the web app ships on Mondays")
    # Nothing recorded names a DSN: the records on the mobile app hold the rest.
    unknown = mem.search_all("what is the DSN for the mobile app?", mode="keyword")
    assert unknown and not unknown[0].confident
    known = mem.search_all("why was the mobile app blocked?", mode="keyword")
    assert known[0].id == blocked.id and known[0].confident
