"""The times a text speaks of, without a model. Pure.

`read_time` finds the time expressions of a question ("last week", "in May", "on 2026-05-03",
"three days ago", "the first week of June") and resolves them against a given `now` into
one window, [start, end) in `now`'s time zone; `asks_when` says whether a question's answer
is a time, and `says_when` whether a text says one. question.py takes the words of a time
expression out of a question's query with the spans `read_time` gives.

Invariants:
- A time expression is looked for only in a text holding one of its cue words (most
  questions hold none): a question costs microseconds.
- Only a text's head (_TIME_SCAN characters) is read: a longer text is no question.
- Every regular expression here is linear in its input.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import NamedTuple

from clew.core.pattern import LazyPattern, lazy

__all__ = ["TimeHint", "Window", "asks_when", "read_time", "says_when"]

_PIECE = lazy(r"[^\W_]+")  # what a tokenizer indexes as one token (as question.py reads it)
_HAS_DIGIT = lazy(r"\d")


class TimeHint(NamedTuple):
    """The time a question speaks of, as a window [start, end) in `now`'s time zone."""

    start: datetime
    end: datetime
    exact: bool  # a named day, month or year; False for a span counted back loosely
    text: str  # the words that said it, as written


_DAY = timedelta(days=1)
_MONTHS = {
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
    "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12,
}  # fmt: skip
_WEEKDAYS = {"mon": 0, "tue": 1, "wed": 2, "thu": 3, "fri": 4, "sat": 5, "sun": 6}
_COUNTS = {
    "a": (1, 1),
    "an": (1, 1),
    "one": (1, 1),
    "two": (2, 2),
    "three": (3, 3),
    "four": (4, 4),
    "five": (5, 5),
    "six": (6, 6),
    "seven": (7, 7),
    "eight": (8, 8),
    "nine": (9, 9),
    "ten": (10, 10),
    "eleven": (11, 11),
    "twelve": (12, 12),
    "couple": (1, 3),
    "few": (2, 5),
    "several": (2, 7),
}
# A unit's length, and how far a loose "N of them ago" may be from it either way.
_UNITS = {
    "minute": (timedelta(minutes=1), timedelta(minutes=10)),
    "hour": (timedelta(hours=1), timedelta(hours=1)),
    "day": (_DAY, _DAY),
    "week": (timedelta(days=7), timedelta(days=3)),
    "month": (timedelta(days=30), timedelta(days=10)),
    "year": (timedelta(days=365), timedelta(days=60)),
}
_MONTH = (
    r"(?P<month>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b\.?"
)
_WEEKDAY = r"(?P<weekday>(?:mon|tues|wednes|thurs|fri|satur|sun)day)\b"
_COUNT = (
    r"(?P<count>\d{1,4}|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
    r"|(?:a\s+)?couple(?:\s+of)?|(?:a\s+)?few|several)"
)
_UNIT = r"(?P<unit>minute|hour|day|week|month|year)s?\b"
_YEAR = r"(?P<year>\d{4})\b"
_DATE_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?\b"

Window = tuple[datetime, datetime, bool]
_Rule = Callable[[re.Match[str], datetime], Window | None]


# Times are looked for in a question's head: a text longer than this is no question, and a
# time expression in it costs a resolve each.
_TIME_SCAN = 2000
_DIGIT = "0"  # the cue of rules that need a digit in the text


def _rule(pattern: str, cues: Iterable[str]) -> Callable[[_Rule], _Rule]:
    """Register a time expression; it is looked for only in a text holding one of its cue
    words (most questions hold none, and a question should cost microseconds)."""

    def register(resolve: _Rule) -> _Rule:
        _RULES.append((frozenset(cues), lazy(r"(?<![\w-])" + pattern, re.I), resolve))
        return resolve

    return register


_RULES: list[tuple[frozenset[str], LazyPattern, _Rule]] = []
_MONTH_WORDS = frozenset(
    {
        "january",
        "february",
        "march",
        "april",
        "june",
        "july",
        "august",
        "sept",
        "september",
        "october",
        "november",
        "december",
        *_MONTHS,
    }
)
_WEEKDAY_WORDS = frozenset(
    f"{d}day" for d in ("mon", "tues", "wednes", "thurs", "fri", "satur", "sun")
)
_UNIT_WORDS = frozenset({*_UNITS, *(f"{u}s" for u in _UNITS)})


def read_time(text: str, now: datetime) -> tuple[TimeHint | None, list[tuple[int, int]]]:
    """The time a text speaks of, and the spans of every time expression in it."""
    found: list[tuple[int, int, Window]] = []
    text = text[:_TIME_SCAN]
    words = set(_PIECE.findall(text.casefold()))
    if _HAS_DIGIT.search(text):
        words.add(_DIGIT)
    cued = words & _CUE_WORDS
    if not cued:
        return None, []  # most questions: no word that could say a time
    for cues, pattern, resolve in _RULES:
        if cues.isdisjoint(cued):
            continue
        for match in pattern.finditer(text):
            try:
                window = resolve(match, now)
            except (ValueError, OverflowError):  # no such date, or out of datetime's range
                window = None
            if window is not None and window[0] < window[1]:
                found.append((match.start(), match.end(), window))
    # Longest first where they overlap ("May 3, 2025" over "May 3"), then in text order.
    found.sort(key=lambda f: (f[0], f[0] - f[1]))
    kept: list[tuple[int, int, Window]] = []
    for start, end, window in found:
        if not kept or start >= kept[-1][1]:
            kept.append((start, end, window))
    if not kept:
        return None, []
    spans: list[tuple[int, int]] = []
    hints: list[TimeHint] = []
    tomorrow = _midnight(now) + _DAY
    for start, end, (first, last, exact) in kept:
        # "since May": from then until now.
        if text[max(0, start - 6) : start].casefold() == "since ":
            start, last = start - 6, tomorrow
        elif text[start : start + 5].casefold() == "since":
            last = tomorrow
        spans.append((start, end))
        if first < min(last, tomorrow):
            hints.append(TimeHint(first, min(last, tomorrow), exact, text[start:end]))
    if not hints:
        return None, spans
    # An exact time says more than a loose one; the first of each kind wins.
    best = min(range(len(hints)), key=lambda i: not hints[i].exact)
    return hints[best], spans


def _midnight(moment: datetime) -> datetime:
    return moment.replace(hour=0, minute=0, second=0, microsecond=0)


def _month_start(year: int, month: int, like: datetime) -> datetime:
    year, month = year + (month - 1) // 12, (month - 1) % 12 + 1
    return like.replace(year=year, month=month, day=1, hour=0, minute=0, second=0, microsecond=0)


def _month(year: int, month: int, now: datetime) -> Window | None:
    start = _month_start(year, month, now)
    return (start, _month_start(year, month + 1, now), True) if start <= now else None


def _day(year: int, month: int, day: int, now: datetime) -> Window:
    start = _midnight(now).replace(year=year, month=month, day=day)
    return start, start + _DAY, True


def _month_number(name: str) -> int:
    return _MONTHS[name[:3].casefold()]


def _last_dated(month: int, day: int, now: datetime) -> Window:
    """The most recent `month` `day` not after today."""
    year = now.year
    if (month, day) > (now.month, now.day):
        year -= 1
    return _day(year, month, day, now)


@_rule(r"(?:on\s+)?(?P<iso>\d{4}-\d{2}-\d{2})(?![\w-])", [_DIGIT])
def _iso(match: re.Match[str], now: datetime) -> Window | None:
    year, month, day = (int(p) for p in match["iso"].split("-"))
    window = _day(year, month, day, now)
    return window if window[0] <= now else None


@_rule(
    r"(?:on\s+)?(?:the\s+)?" + _MONTH + r"\s+" + _DATE_DAY + r"(?:,?\s+" + _YEAR + ")?",
    _MONTH_WORDS,
)
def _month_day(match: re.Match[str], now: datetime) -> Window | None:
    month, day = _month_number(match["month"]), int(match["day"])
    if match["year"]:
        window = _day(int(match["year"]), month, day, now)
        return window if window[0] <= now else None
    return _last_dated(month, day, now)


@_rule(
    r"(?:on\s+)?(?:the\s+)?" + _DATE_DAY + r"\s+(?:of\s+)?" + _MONTH + r"(?:,?\s+" + _YEAR + ")?",
    _MONTH_WORDS,
)
def _day_month(match: re.Match[str], now: datetime) -> Window | None:
    return _month_day(match, now)


@_rule(r"(?:(?:in|during|back\s+in|since)\s+)?" + _MONTH + r",?\s+" + _YEAR, _MONTH_WORDS)
def _month_year(match: re.Match[str], now: datetime) -> Window | None:
    return _month(int(match["year"]), _month_number(match["month"]), now)


@_rule(
    r"(?P<which>in|during|back\s+in|early\s+in|late\s+in|last|this|since)\s+"
    + _MONTH
    + r"(?!,?\s+\d)",  # a day or year after the month is another rule's
    _MONTH_WORDS,
)
def _named_month(match: re.Match[str], now: datetime) -> Window | None:
    month = _month_number(match["month"])
    which = match["which"].casefold()
    year = now.year if month <= now.month else now.year - 1
    if which == "last" and month == now.month:
        year -= 1  # "last May", said in May, is a year ago
    if which == "this" and month > now.month:
        return None  # still to come
    return _month(year, month, now)


def _month_of(match: re.Match[str], now: datetime) -> tuple[datetime, datetime] | None:
    """The start and end of the month a match names (its `month`, and its `year` or the
    latest such month up to now)."""
    month = _month_number(match["month"])
    year = (
        int(match["year"]) if match["year"] else (now.year if month <= now.month else now.year - 1)
    )
    whole = _month(year, month, now)
    return None if whole is None else (whole[0], whole[1])


@_rule(
    r"(?:(?:in|during)\s+)?(?:the\s+)?(?P<part>early|mid|late|start\s+of|beginning\s+of"
    r"|middle\s+of|end\s+of)(?:\s+|-)(?:the\s+month\s+of\s+)?"
    + _MONTH
    + r"(?:,?\s+"
    + _YEAR
    + r")?(?!,?\s+\d{1,2}\b)",  # "late May 3" is a day: another rule's
    _MONTH_WORDS,
)
def _part_of_month(match: re.Match[str], now: datetime) -> Window | None:
    """`early May`, `mid-May`, `late May`, `the end of May`: a third of the month, loosely
    (the days either side are not out of it)."""
    whole = _month_of(match, now)
    if whole is None:
        return None
    start, end = whole
    part = match["part"].split()[0].casefold()
    first, last = {
        "early": (1, 11),
        "start": (1, 11),
        "beginning": (1, 11),
        "mid": (11, 21),
        "middle": (11, 21),
    }.get(part, (21, 0))
    return (
        start.replace(day=first),
        end if last == 0 else start.replace(day=last),
        False,
    )


@_rule(
    r"(?:(?:in|during)\s+)?(?:the\s+)?week\s+(?P<from>of|starting|beginning)\s+(?:on\s+)?(?:the\s+)?"
    r"(?:"
    + _MONTH
    + r"\s+"
    + _DATE_DAY
    + r"|(?P<day2>\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?"
    + _MONTH.replace("?P<month>", "?P<month2>")
    + r")(?:,?\s+"
    + _YEAR
    + ")?",
    ["week"],
)
def _week_of(match: re.Match[str], now: datetime) -> Window | None:
    """`the week of May 11`: Monday to Sunday of the week holding that day; `the week
    starting May 14`: seven days from it."""
    month = _month_number(match["month"] or match["month2"])
    day = int(match["day"] or match["day2"])
    if match["year"]:
        start = _day(int(match["year"]), month, day, now)[0]
    else:
        start = _last_dated(month, day, now)[0]
    if start > now:
        return None
    if match["from"].casefold() == "of":
        start -= timedelta(days=start.weekday())
    return start, start + timedelta(days=7), True


@_rule(r"(?:in|during|since|back\s+in)\s+" + _YEAR, [_DIGIT])
def _in_year(match: re.Match[str], now: datetime) -> Window | None:
    year = int(match["year"])
    if not 1900 <= year <= now.year:
        return None
    start = _month_start(year, 1, now)
    return start, _month_start(year + 1, 1, now), True


@_rule(r"yesterday(?:\s+(?:morning|afternoon|evening|night))?\b", ["yesterday"])
def _yesterday(match: re.Match[str], now: datetime) -> Window:
    today = _midnight(now)
    return today - _DAY, today, True


@_rule(r"(?:earlier\s+|later\s+)?today\b", ["today"])
def _today(match: re.Match[str], now: datetime) -> Window:
    today = _midnight(now)
    return today, today + _DAY, True


@_rule(
    r"(?:this\s+(?P<part>morning|afternoon|evening)|(?P<tonight>tonight)|last\s+night)\b",
    ["morning", "afternoon", "evening", "tonight", "night"],
)
def _part_of_day(match: re.Match[str], now: datetime) -> Window:
    today = _midnight(now)
    hours = {"morning": (0, 12), "afternoon": (12, 18), "evening": (17, 24)}
    if match["part"] or match["tonight"]:
        first, last = hours[(match["part"] or "evening").casefold()]
        return today + timedelta(hours=first), today + timedelta(hours=last), False
    return today - timedelta(hours=6), today + timedelta(hours=6), False


@_rule(r"(?:earlier\s+)?(?P<which>this|last|previous)\s+(?P<period>week|month|year)\b", _UNIT_WORDS)
def _period(match: re.Match[str], now: datetime) -> Window:
    today = _midnight(now)
    period, current = match["period"].casefold(), match["which"].casefold() == "this"
    if period == "week":
        monday = today - timedelta(days=today.weekday())
        if current:
            return monday, today + _DAY, True
        # "Last week" said on a Monday may mean two days ago: a day of slack each side.
        return monday - timedelta(days=8), monday + _DAY, False
    if period == "month":
        start = _month_start(now.year, now.month - (0 if current else 1), now)
        return start, (today + _DAY if current else _month_start(now.year, now.month, now)), True
    start = _month_start(now.year - (0 if current else 1), 1, now)
    return start, (today + _DAY if current else _month_start(now.year, 1, now)), True


@_rule(
    r"(?:(?:in|over|during|within)\s+)?(?:(?P<the>the)\s+)?(?P<which>last|past)\s+"
    r"(?:" + _COUNT + r"\s+)?" + _UNIT,
    _UNIT_WORDS,
)
def _rolling(match: re.Match[str], now: datetime) -> Window | None:
    """`the past week`, `the last 3 days`: a window back from now (plain `last week` is the
    calendar's, matched by `_period`)."""
    if not (match["the"] or match["count"] or match["which"].casefold() == "past"):
        return None
    low, high = _count(match["count"] or "one")
    length, _ = _UNITS[match["unit"].casefold()]
    today = _midnight(now)
    anchor = now if length < _DAY else today
    return anchor - high * length, today + _DAY, low == high


@_rule(_COUNT + r"\s+" + _UNIT + r"\s+(?:ago|back)\b", ["ago", "back"])
def _ago(match: re.Match[str], now: datetime) -> Window | None:
    low, high = _count(match["count"])
    length, slack = _UNITS[match["unit"].casefold()]
    if high * length > timedelta(days=200 * 365):
        return None
    anchor = now if length < _DAY else _midnight(now)
    day = _DAY if length >= _DAY else timedelta(0)
    return anchor - high * length - slack, anchor - low * length + slack + day, False


@_rule(r"(?P<which>on|last|this|past)\s+" + _WEEKDAY, _WEEKDAY_WORDS)
def _weekday(match: re.Match[str], now: datetime) -> Window | None:
    today = _midnight(now)
    back = (today.weekday() - _WEEKDAYS[match["weekday"][:3].casefold()]) % 7
    if back == 0 and match["which"].casefold() != "this":
        back = 7  # "on Friday", said on a Friday, is a week ago
    start = today - timedelta(days=back)
    return start, start + _DAY, True


@_rule(
    r"(?:(?P<recent>(?:quite\s+|very\s+|more\s+|most\s+)?recently|lately|of\s+late)"
    r"|(?P<other>the\s+other\s+day)|(?P<while>a\s+(?:little\s+)?while\s+(?:ago|back)))\b",
    ["recently", "lately", "late", "other", "while"],
)
def _loosely(match: re.Match[str], now: datetime) -> Window:
    today = _midnight(now)
    if match["recent"]:
        return today - timedelta(days=30), today + _DAY, False
    if match["other"]:
        return today - timedelta(days=7), today, False
    return today - timedelta(days=180), today - timedelta(days=7), False


def _count(text: str) -> tuple[int, int]:
    words = text.casefold().split()
    if words[-1] == "of":
        words.pop()
    if words[-1].isdigit():
        return int(words[-1]), int(words[-1])
    return _COUNTS[words[-1]]


def _dated(tag: str) -> str:
    """A date written with its month's name ("August 11", "11th of August, 2023", "Aug 11
    2023") or as 2023-08-11, its groups named with `tag`."""
    month = _MONTH.replace("?P<month>", f"?P<m{tag}>")
    month2 = _MONTH.replace("?P<month>", f"?P<n{tag}>")
    year, year2 = (rf"(?:,?\s*(?P<{g}{tag}>\d{{4}})\b)?" for g in "yz")
    return (
        rf"(?:{month}\s+(?P<d{tag}>\d{{1,2}})(?:st|nd|rd|th)?\b{year}"
        rf"|(?P<e{tag}>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{month2}{year2}"
        rf"|(?P<i{tag}>\d{{4}}-\d{{2}}-\d{{2}})(?![\w-]))"
    )


def _date_of(match: re.Match[str], tag: str, now: datetime, year: str | None = None) -> datetime:
    """The day a `_dated(tag)` group names (the most recent such day when no year is
    written, or in `year`)."""
    if match[f"i{tag}"]:
        y, m, d = (int(p) for p in match[f"i{tag}"].split("-"))
        return _day(y, m, d, now)[0]
    month = _month_number(match[f"m{tag}"] or match[f"n{tag}"])
    day = int(match[f"d{tag}"] or match[f"e{tag}"])
    written = match[f"y{tag}"] or match[f"z{tag}"] or year
    if written:
        return _day(int(written), month, day, now)[0]
    return _last_dated(month, day, now)[0]


@_rule(
    r"(?:in\s+|during\s+|over\s+)?(?:the\s+)?(?P<edge>first|last)\s+(?:(?P<count>"
    + _COUNT.removeprefix("(?P<count>")
    + r"\s+)?(?P<unit>days?|weeks?)\s+(?:of|in)\s+(?:the\s+month\s+of\s+)?"
    + _MONTH
    + r"(?:,?\s+"
    + _YEAR
    + r")?",
    _MONTH_WORDS,
)
def _edge_of_month(match: re.Match[str], now: datetime) -> Window | None:
    """`the last week of August 2023`, `the first two weeks of May`: days at the
    start or the end of a named month (not counted back from now, as `the last week` alone
    is); loosely, as `late May` is."""
    whole = _month_of(match, now)
    if whole is None:
        return None
    start, end = whole
    count = _count(match["count"])[1] if match["count"] else 1
    unit = match["unit"].casefold().rstrip("s")
    length = count * (_DAY if unit == "day" else timedelta(days=7))
    if match["edge"].casefold() == "first":
        return start, min(start + length, end), False
    return max(end - length, start), end, False


@_rule(
    r"(?:from\s+|between\s+)(?:the\s+)?"
    + _dated("a")
    + r"\s+(?:and|to|until|till)\s+(?:the\s+)?"
    + _dated("b"),
    _MONTH_WORDS | {_DIGIT},
)
def _between(match: re.Match[str], now: datetime) -> Window | None:
    """`between August 11 and August 15 2023`, `from 3 May to 9 May`: both days, a year
    written once at the end counting for both."""
    last = _date_of(match, "b", now)
    first = _date_of(match, "a", now, str(last.year) if match["yb"] or match["zb"] else None)
    if first > last or first > now:
        return None
    return first, last + _DAY, True


# Every word that can start looking for a time (made once every rule above is registered).
_CUE_WORDS: frozenset[str] = frozenset().union(*(cues for cues, _, _ in _RULES))


# -- asking for a time, and saying one ------------------------------------------------------

# A question whose answer is a time: "when did ...", "what date ...", "in which year ...",
# "how long ago ...".
_ASKS_WHEN = lazy(
    r"^\W*(?:and\s+|so\s+|but\s+)?when\b"
    r"|\b(?:what|which)\s+(?:date|day|month|year|week|weekend|time\s+of\s+(?:the\s+)?year)\b"
    # "how long has she ...", not "how long should the timeout be": a time, not a length.
    r"|\bhow\s+long\s+(?:ago|since|has|have|had|did|were|was)\b|\bsince\s+when\b"
    r"|\bhow\s+many\s+(?:days|weeks|months|years)\b",
    re.I,
)
_MONTH_NAME = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b"
)
_DAY_NAME = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_COUNTED = (
    r"(?:\d{1,4}|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
    r"|couple(?:\s+of)?|few|several)"
)
# A text that says when something happened or will: a day named relative to it
# ("yesterday", "last Friday", "next month", "three weeks ago"), a date ("May 3", "the
# 11th", "2023-05-03", "in 2019"), a weekday. Vague words ("recently", "just") say no time.
_SAYS_WHEN = lazy(
    r"(?<![\w-])(?:"
    r"yesterday|today|tonight|tomorrow|the\s+other\s+day"
    r"|(?:last|next|this|past|coming)\s+(?:week(?:end)?|month|year|night|morning|afternoon"
    r"|evening|summer|winter|spring|autumn|fall|" + _DAY_NAME + r")"
    r"|" + _COUNTED + r"\s+(?:minute|hour|day|week|month|year)s?\s+(?:ago|back|earlier|before)"
    r"|for\s+(?:the\s+(?:last|past)\s+)?" + _COUNTED + r"\s+(?:day|week|month|year)s?\b"
    r"|(?:in|on|of|since|until|by|last|next|this|early|late|mid-?)\s+"
    + _MONTH_NAME
    + r"|"
    + _MONTH_NAME
    + r"\s+\d{1,2}(?:st|nd|rd|th)?\b"
    r"|\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH_NAME + r"|the\s+\d{1,2}(?:st|nd|rd|th)\b"
    r"|\d{4}-\d{2}-\d{2}"
    r"|(?:in|since|until|by|of)\s+(?:19|20)\d{2}\b"
    r"|(?:on\s+)?" + _DAY_NAME + r"\b"
    r")",
    re.I,
)


def asks_when(text: str) -> bool:
    """Whether a question's answer is a time ("when did we ...?", "what date ...?", "how
    long ago ...?"): then the record that says when answers it, not one that only names
    the event again."""
    return _ASKS_WHEN.search(text[:_TIME_SCAN]) is not None


def says_when(text: str) -> bool:
    """Whether a text says a time: a date, a weekday, or a day named relative to when it
    was said ("yesterday", "last week", "three days ago", "next month"). A record saying
    one can answer "when ...?", with its own date as the anchor."""
    return _SAYS_WHEN.search(text[:_TIME_SCAN]) is not None
