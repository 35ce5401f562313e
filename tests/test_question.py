"""Query understanding: questions as agents ask them, reduced to what to look for and when."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clew.core.query import MAX_TERMS
from clew.search.question import STOP_WORDS, Question, TimeHint, content_words, understand
from clew.store.sqlite.search import fts5_match

# A Wednesday afternoon.
NOW = datetime(2026, 5, 20, 15, 30, tzinfo=UTC)
SPEAKERS = ("Melanie", "Caroline", "Jon Snow")
TOOLS = ("bash", "read_file", "Grep")


def ask(text: str) -> Question:
    return understand(text, now=NOW, speakers=SPEAKERS, tools=TOOLS)


def day(month: int, dom: int, year: int = 2026) -> datetime:
    return datetime(year, month, dom, tzinfo=UTC)


@pytest.mark.parametrize(
    ("question", "terms", "words"),
    [
        ("which registry did we pick, and why?", ["registry", "pick"], ["registry", "pick"]),
        ("when did the auth tests last fail?", ["auth", "tests", "fail"], ["auth", "test", "fail"]),
        (
            "what did Melanie say about her pottery class last month?",
            ["Melanie", "pottery", "class"],
            ["melanie", "pottery", "class"],
        ),
        (
            "where is ERR_CONN_RESET handled?",
            ["ERR_CONN_RESET", "handled", "ERR", "CONN", "RESET"],
            ["err", "conn", "reset", "handled"],
        ),
        ("what port does the dev server use", ["port", "dev", "server"], ["port", "dev", "server"]),
        (
            "Tell me again what Caroline's plans were for the summer",
            ["Caroline", "plans", "summer"],
            ["caroline", "plan", "summer"],
        ),
        (
            "Can you remind me which Docker image we settled on?",
            ["Docker", "image", "settled"],
            ["docker", "image", "settled"],
        ),
        (
            "why did the migration fail on PostgreSQL?",
            ["migration", "fail", "PostgreSQL", "Postgre", "SQL"],
            None,
        ),
        (
            "what's the timeout for the CI jobs?",
            ["timeout", "CI", "jobs"],
            ["timeout", "ci", "job"],
        ),
        ("how many retries does the uploader do?", ["many", "retries", "uploader"], None),
        ("What did Jon Snow's sister want?", ["Jon", "Snow", "sister"], None),
    ],
)
def test_a_question_is_reduced_to_its_content_words(
    question: str, terms: list[str], words: list[str] | None
) -> None:
    found = ask(question)
    assert found.query is not None
    assert list(found.query.terms) == terms
    assert found.query.any_terms  # OR: bm25 ranks by how many words a row holds
    assert not found.query.exclude
    if words is not None:
        assert list(found.words) == words
    assert not {w.casefold() for w in found.query.terms} & STOP_WORDS


@pytest.mark.parametrize(
    "question",
    ["what did we do?", "where was I?", "tell me again", "what's that?", "and then?", "", "  "],
)
def test_a_question_with_nothing_to_look_for_has_no_query(question: str) -> None:
    found = ask(question)
    assert found.query is None and found.words == () and found.identifiers == ()


@pytest.mark.parametrize(
    ("question", "identifier", "parts"),
    [
        ("where is ERR_CONN_RESET handled?", "ERR_CONN_RESET", ["ERR", "CONN", "RESET"]),
        ("what changed in src/auth.py?", "src/auth.py", ["src", "auth", "py"]),
        ("which tests broke after v1.2.3?", "v1.2.3", ["v1"]),
        ("what did commit a1b2c3d fix", "a1b2c3d", []),
        ("why did we add `--no-cache` to the build", "--no-cache", ["cache"]),
        ("how does AuthService refresh tokens?", "AuthService", ["Auth", "Service"]),
        ("who calls parse_args", "parse_args", ["parse", "args"]),
        ("where is getHTTPResponse defined", "getHTTPResponse", ["HTTP", "Response"]),
        ("what does sha256 hash here", "sha256", []),
        ("did auth.py's tests pass?", "auth.py", ["auth", "py"]),
    ],
)
def test_an_identifier_is_a_whole_term_and_its_parts_are_terms(
    question: str, identifier: str, parts: list[str]
) -> None:
    found = ask(question)
    assert found.query is not None
    assert identifier in found.identifiers
    assert identifier in found.query.terms
    for part in parts:
        assert part in found.query.terms
    # The whole identifier comes before its parts, so a cap drops parts first.
    terms = list(found.query.terms)
    assert all(terms.index(identifier) < terms.index(p) for p in parts)


def test_identifiers_a_tokenizer_splits_are_the_querys_identifiers() -> None:
    found = ask("is ERR_CONN_RESET raised by AuthService in src/net.py?")
    assert found.query is not None
    # AuthService is one token to FTS5; the others are sequences of pieces.
    assert found.query.identifiers == ("ERR_CONN_RESET", "src/net.py")
    assert found.identifiers == ("ERR_CONN_RESET", "AuthService", "src/net.py")


def test_the_search_syntax_still_works() -> None:
    found = ask('"connection refused" auth* -flaky')
    assert found.query is not None
    assert [(t.text, t.prefix) for t in found.query.include] == [
        ("connection refused", False),
        ("auth", True),
    ]
    assert [t.text for t in found.query.exclude] == ["flaky"]
    assert found.phrases[0] == "connection refused"


def test_a_dash_before_flag_or_option_is_a_flag_not_an_exclusion() -> None:
    found = ask("what does the -verbose flag do, and -v?")
    assert found.query is not None
    assert "-verbose" in found.query.terms and "-v" in found.query.terms
    assert found.query.exclude == ()
    assert ask("tests -slow").query.exclude[0].text == "slow"  # type: ignore[union-attr]


def test_typographic_quotes_read_as_plain_ones() -> None:
    found = ask("what did Caroline\u2019s mum say about \u201cthe big move\u201d?")
    assert found.query is not None
    assert "Caroline" in found.query.terms and "the big move" in found.query.terms
    assert found.speakers == ("Caroline",)


@pytest.mark.parametrize(
    ("question", "phrases"),
    [
        ("what did Melanie say about her pottery class?", ["pottery class"]),
        ("what port does the dev server use", ["dev server"]),
        ("what did Jon Snow say about the Night Watch?", ["Jon Snow", "Night Watch"]),
        ('find "connection refused" in the nginx logs', ["connection refused", "nginx logs"]),
        ("which registry did we pick, and why?", []),
        # A time between words is no phrase across it.
        ("the auth tests yesterday failures", ["auth tests"]),
    ],
)
def test_phrases_are_quoted_text_and_runs_of_content_words(
    question: str, phrases: list[str]
) -> None:
    assert list(ask(question).phrases) == phrases


@pytest.mark.parametrize(
    ("question", "speakers", "tools"),
    [
        ("what did Melanie say about her pottery class?", ("Melanie",), ()),
        ("what did caroline and MELANIE talk about?", ("Caroline", "Melanie"), ()),
        ("what's Caroline's favourite book?", ("Caroline",), ()),
        ("did jon snow's plan work?", ("Jon Snow",), ()),
        ("did Jon say anything?", (), ()),  # a part of a name is not the name
        ("which bash command failed?", (), ("bash",)),
        ("what did read_file return for config.toml?", (), ("read_file",)),
        ("what did the grep find, and what did Melanie think?", ("Melanie",), ("Grep",)),
        ("what did the bashful user say", (), ()),  # whole words only
    ],
)
def test_known_speakers_and_tools_named_in_a_question(
    question: str, speakers: tuple[str, ...], tools: tuple[str, ...]
) -> None:
    found = ask(question)
    assert found.speakers == speakers
    assert found.tools == tools


def test_a_speaker_named_stays_in_the_query() -> None:
    found = ask("what did Melanie paint?")
    assert found.query is not None and "Melanie" in found.query.terms


@pytest.mark.parametrize(
    ("question", "start", "end", "exact"),
    [
        ("what failed yesterday?", day(5, 19), day(5, 20), True),
        ("what did we do today", day(5, 20), day(5, 21), True),
        ("what broke earlier today", day(5, 20), day(5, 21), True),
        ("what did I say this morning", day(5, 20), day(5, 20) + timedelta(hours=12), False),
        ("what did we decide last week?", day(5, 10), day(5, 19), False),
        ("what did we ship this week", day(5, 18), day(5, 21), True),
        ("what did Melanie say last month?", day(4, 1), day(5, 1), True),
        ("what did we plan 3 days ago", day(5, 16), day(5, 19), False),
        ("what changed two weeks ago", day(5, 3), day(5, 10), False),
        ("what did she say a couple of weeks ago?", day(4, 26), day(5, 17), False),
        ("what happened in May?", day(5, 1), day(5, 21), True),
        ("what happened in June?", day(6, 1, 2025), day(7, 1, 2025), True),  # the last June
        ("what about May 2025", day(5, 1, 2025), day(6, 1, 2025), True),
        ("what was decided on May 3", day(5, 3), day(5, 4), True),
        ("what was decided on May 30", day(5, 30, 2025), day(5, 31, 2025), True),
        ("the 3rd of May meeting", day(5, 3), day(5, 4), True),
        ("what did we deploy on 2026-05-03?", day(5, 3), day(5, 4), True),
        ("what did we discuss last Tuesday", day(5, 19), day(5, 20), True),
        ("what did we do on Friday", day(5, 15), day(5, 16), True),
        ("what did we do on Wednesday", day(5, 13), day(5, 14), True),  # today is one
        ("what changed last year", day(1, 1, 2025), day(1, 1), True),
        ("the bugs in 2025", day(1, 1, 2025), day(1, 1), True),
        ("what did Caroline do recently?", day(4, 20), day(5, 21), False),
        ("what did she say the other day", day(5, 13), day(5, 20), False),
        ("what failed in the past week", day(5, 13), day(5, 21), True),
        ("what changed since May 3?", day(5, 3), day(5, 21), True),
        ("which runs failed in the week of May 4?", day(5, 4), day(5, 11), True),
        ("what failed the week of 6 May", day(5, 4), day(5, 11), True),  # Monday to Sunday
        ("what broke in the week starting May 7", day(5, 7), day(5, 14), True),
        ("what happened in early May", day(5, 1), day(5, 11), False),
        ("the plans for mid-April", day(4, 11), day(4, 21), False),
        ("what did we ship in late April?", day(4, 21), day(5, 1), False),
        ("at the end of March 2025", day(3, 21, 2025), day(4, 1, 2025), False),
        ("what was said at the start of February", day(2, 1), day(2, 11), False),
        # Counted within a named month, not back from now; loosely, as "late April" is.
        ("where was she in the last week of April?", day(4, 24), day(5, 1), False),
        ("the last two weeks of April 2026", day(4, 17), day(5, 1), False),
        ("what failed in the first week of May", day(5, 1), day(5, 8), False),
        ("the first 3 days of March", day(3, 1), day(3, 4), False),
        ("where was he between April 11 and April 15 2026?", day(4, 11), day(4, 16), True),
        ("from 3 May to 9 May", day(5, 3), day(5, 10), True),
    ],
)
def test_a_time_is_resolved_against_now(
    question: str, start: datetime, end: datetime, exact: bool
) -> None:
    when = ask(question).when
    assert when is not None
    assert (when.start, when.end, when.exact) == (start, end, exact)


def test_the_words_of_a_time_leave_the_query() -> None:
    found = ask("what did Melanie say about her pottery class last month?")
    assert found.when is not None and found.when.text == "last month"
    assert found.query is not None
    assert not {"last", "month"} & {t.casefold() for t in found.query.terms}
    assert "2026-05-03" not in ask("deploy on 2026-05-03").identifiers
    for question in ("which runs failed in the week of May 4?", "what did we ship in mid-April"):
        found = ask(question)
        assert found.query is not None
        assert not {"week", "mid", "april", "may"} & {t.casefold() for t in found.query.terms}


@pytest.mark.parametrize(
    "question",
    [
        "may I use an ORM?",  # the verb, not the month
        "what did we decide?",
        "what's in the march_release branch",
        "deploy on 2027-01-01",  # still to come
        "what is due next week",
        "what is 12 months",
        "bump to 1.2026",
        "what is planned for late May",  # still to come
        "between 2026-06-01 and 2026-06-03",  # still to come
    ],
)
def test_text_that_names_no_past_time_has_no_time(question: str) -> None:
    assert ask(question).when is None


def test_time_follows_the_time_zone_of_now() -> None:
    tz = timezone(timedelta(hours=-7))
    now = datetime(2026, 5, 20, 1, 0, tzinfo=tz)
    when = understand("what broke yesterday?", now=now).when
    assert when is not None
    assert when.start == datetime(2026, 5, 19, tzinfo=tz) and when.start.tzinfo is tz


def test_exact_text_folds_white_space() -> None:
    assert ask("  where is\n\tERR_X   handled? ").exact_text == "where is ERR_X handled?"


def test_content_words_normalise_a_records_text_as_a_questions_words() -> None:
    record = "Melanie's pottery classes: the AuthService tests failed with ERR_CONN_RESET."
    assert content_words(record) == (
        "melanie",
        "pottery",
        "class",
        "auth",
        "service",
        "authservice",
        "test",
        "failed",
        "err",
        "conn",
        "reset",
    )
    question = ask("what did Melanie say about her pottery class?")
    assert set(question.words) <= set(content_words(record))


@pytest.mark.parametrize(
    ("plural", "singular"),
    [
        ("tests", "test"),
        ("policies", "policy"),
        ("classes", "class"),
        ("boxes", "box"),
        ("matches", "match"),
        ("caches", "cache"),
        ("status", "status"),
        ("analysis", "analysis"),
        ("bus", "bus"),
    ],
)
def test_plurals_are_made_singular_alike_on_both_sides(plural: str, singular: str) -> None:
    assert content_words(plural) == content_words(singular) == (singular,)


def test_the_query_is_capped_dropping_identifier_parts_first() -> None:
    words = [f"word{chr(97 + i)}x" for i in range(20)]
    identifiers = [f"snake_{chr(97 + i)}_case{chr(97 + i)}" for i in range(20)]
    found = ask(" ".join(words + identifiers))
    assert found.query is not None
    assert len(found.query.include) == MAX_TERMS
    # Every identifier that stayed is in the query whole.
    assert set(found.identifiers) <= set(found.query.terms)


# -- properties ---------------------------------------------------------------------------

_FTS = sqlite3.connect(":memory:")
_FTS.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='porter unicode61')")


def _questions() -> st.SearchStrategy[str]:
    pieces = st.sampled_from(
        [
            "what",
            "did",
            "Melanie's",
            "ERR_CONN_RESET",
            "src/auth.py",
            "v1.2.3",
            "`--x`",
            '"a phrase"',
            "-not",
            "pre*",
            "last",
            "week",
            "May",
            "3",
            "2026-05-03",
            "ago",
            "a",
            "couple",
            "of",
            "days",
            "yesterday",
            "on",
            "Friday",
            "in",
            "2025",
            "?",
            ",",
            "'",
            '"',
            "-",
            "*",
            "`",
            "since",
            "the",
            "other",
            "day",
            "AuthService",
            "é",
            "_",
        ]
    )
    return st.one_of(
        st.text(max_size=200),
        st.lists(st.one_of(pieces, st.text(max_size=8)), max_size=30).map(" ".join),
    )


@settings(max_examples=200, deadline=None)
@given(
    _questions(),
    st.datetimes(
        min_value=datetime(1901, 1, 1), max_value=datetime(9000, 1, 1), timezones=st.just(UTC)
    ),
)
def test_any_text_gives_a_question_that_keeps_its_promises(text: str, now: datetime) -> None:
    found = understand(text, now=now, speakers=SPEAKERS, tools=TOOLS)
    if found.query is not None:
        for term in (*found.query.include, *found.query.exclude):
            assert term.text.strip() and any(c.isalnum() for c in term.text)
        assert set(found.identifiers) <= set(found.query.terms)
        _FTS.execute("SELECT count(*) FROM t WHERE t MATCH ?", (fts5_match(found.query),))
    else:
        assert found.identifiers == ()
    if found.when is not None:
        assert found.when.start < found.when.end <= now + timedelta(days=1)
        assert found.when.text and found.when.text in found.exact_text
    assert all(w == w.casefold() and w not in STOP_WORDS for w in found.words)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_content_words_never_raise_and_are_normalised(text: str) -> None:
    for word in content_words(text):
        assert word and word == word.casefold() and word not in STOP_WORDS


def _hostile() -> Iterator[str]:
    size = 100_000
    for unit in ("aA", "-a ", "May 3 ", '"', "x_"):
        yield (unit * (size // len(unit) + 1))[:size]


@pytest.mark.parametrize("text", list(_hostile()), ids=lambda t: repr(t[:6]))
def test_a_long_hostile_text_returns(text: str) -> None:
    assert isinstance(understand(text, now=NOW, speakers=SPEAKERS), Question)
    assert isinstance(content_words(text), tuple)


def test_a_time_hint_is_a_plain_value() -> None:
    hint = TimeHint(day(5, 1), day(5, 2), True, "on May 1")
    assert hint._replace(exact=False).exact is False


def test_a_plural_whose_singular_is_a_stop_word_is_no_word() -> None:
    # One plain word took a shorter road than a sentence: "looks" kept "look" (a stop word).
    for text in ("looks", "it looks fine"):
        assert "look" not in understand(text, now=datetime(2000, 1, 1, tzinfo=UTC)).words
