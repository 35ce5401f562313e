"""Ranking what a search found into one list, best first. Pure.

Each index ranks its own matches by bm25 over the question's content words combined with
OR; this module turns those per-index scores, the nearest records by meaning (when
vectors are on) and what the question says (its exact phrases and identifiers, a speaker,
a tool, a time) into one score per record:

    keyword  = bm25 / best bm25 of the search, times (FLOOR + (1 - FLOOR) * coverage),
               coverage being the share of the question's words the record holds
               (coverage.py): a record that holds every word ranks above one that
               repeats a single word (what AND did, without ever returning fewer hits
               than OR finds)
    boosts   = an exact phrase or identifier as written, the question whole, a turn by
               the speaker or a call of the tool the question names, a time it names
    turns    = a turn also takes NEIGHBOUR of its best neighbour's keyword score: the
               answer is often the reply to the turn whose words match
    fused    = (1 - DENSE) * keyword / best keyword + DENSE * closeness by meaning
    place    = in a hybrid search, the record nearest in meaning (of the time the question
               names, when it names one) is kept among the first MEANING_PLACE (2): the two
               halves fail on different questions, and the fused score lets the keyword
               half's near misses bury the one record meaning is surest of
    trust    = meaning mixes in and keeps that place only where it is trusted
               (meaning_trusted): no keyword match holds most of the question
               (WEAK_COVER), and meaning's nearest stands out from the next nine
               (sharpness >= FLAT) unless keyword holds less than half of it; elsewhere
               it only breaks keyword's near-ties (STRONG_DENSE), and a hybrid top hit
               is `confident` only when it is the keyword half's best too (words_lead)

The weights are measured on the labelled set in benchmarks/retrieval (docs/benchmarks-log.md
has the figures with and without each part).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from datetime import datetime
from typing import NamedTuple

from clew.models import Explain, RecordHit
from clew.search.coverage import (
    Asked,
    Found,
    Key,
    coverage,
    coverages,
    folded_text,
    is_kind,
    looked_for,
    prefix_of,
    prefix_pattern,
    prefixes_held,
    said,
    stem,
    weighted,
    word_weights,
)

FLOOR = 0.25  # the keyword score kept by a record that holds none but the rarest words
NEIGHBOUR = 0.35  # the share of a neighbouring turn's score a turn takes
REPLY = 0.7  # ... the share a turn takes of the turn before it when that one asks a question
ASKS = 0.7  # a turn that only asks a question (its reply is what answers)
DENSE = 0.2  # the weight of meaning in a hybrid score (measured: variants.py)
# The weight for each model that has its own (the static table takes DENSE). Measured for the
# ONNX MiniLM (variants.py --replay --model): 0.2-0.4 are within a question of each other at
# hit@5; more weight trades multi-fact and temporal answers for paraphrases, so it stays 0.2.
DENSE_BY_MODEL: dict[str, float] = {"minilm-onnx-int8": 0.2}
ADAPT = 0.3  # how much more meaning weighs when no record holds the question's words
MAX_DENSE = 0.7
FUSION = "mix"  # or "rrf": reciprocal rank fusion (measured worse: docs/benchmarks-log.md)
RRF_K = 60
NEIGHBOURS = True  # whether turns take their neighbours' scores (measured both ways)
# The place (1-based) the record nearest in meaning is kept at, at worst; 0: none kept.
# Measured (benchmarks/retrieval/dense.py, variants.py): keeping it in the first five adds
# 5 points of hit@5 with the ONNX model and 1 with the static table; any place from 2 to 5
# gives the same hit@5, and 2 the best MRR (0.713 against 0.692 at 5, ONNX). It never
# changes the first hit.
MEANING_PLACE = 2
EXACT_TEXT = 0.5  # the whole question, as written
EXACT_PHRASE = 0.15  # each phrase written in the question (two at most)
EXACT_IDENTIFIER = 1.0  # every identifier of the question, as written
SPEAKER = 1.2  # a turn said by the person the question names
# A turn said by someone else, when the question names a speaker of the turns found: it
# is about the person named less often than their own (it names them to address them).
OTHER_SPEAKER = 0.8
TOOL = 1.2  # a call of the tool the question names
IN_TIME = 1.5  # a record from the time the question names
ASKED_KIND = 1.25  # the kind of record the question asks for (decisions, errors, commands)
OUT_OF_TIME = 0.8  # one from outside an exact date the question names
# A top hit is "confident" when it has the question as written, or holds most of its words
# (or is close in meaning) ...
CONFIDENT_COVERAGE = 0.6
CONFIDENT_COSINE = 0.62
# ... and then only when the runner-up scores at most this share of it. Measured
# (benchmarks/retrieval/locomo.py, run.py): without it a confident top hit was evidence on
# 50-54% of LoCoMo's questions; at 0.4, 82% (on 8% of questions).
CLEAR = 0.4


def boosts(asked: Asked, found: Found) -> tuple[float, float, list[str]]:
    """What a record gets for matching the question exactly: (added, factor, why)."""
    added, factor = 0.0, 1.0
    why: list[str] = []
    text = folded_text(found.text)
    if len(asked.exact_text.split()) >= 2 and asked.exact_text.casefold() in text:
        added += EXACT_TEXT
        why.append(f"the whole question as written +{EXACT_TEXT:.2f}")
    phrases = [p for p in asked.phrases if folded_text(p) in text][:2]
    if phrases:
        added += EXACT_PHRASE * len(phrases)
        why.append(f"phrase {', '.join(phrases)} +{EXACT_PHRASE * len(phrases):.2f}")
    if asked.identifiers:
        held = sum(1 for i in asked.identifiers if i.casefold() in text)
        if held:
            bonus = EXACT_IDENTIFIER * held / len(asked.identifiers)
            added += bonus
            why.append(f"identifier as written +{bonus:.2f}")
    names = asked.speakers_or_tools
    if found.speaker and found.speaker.casefold() in names:
        factor *= SPEAKER
        why.append(f"said by {found.speaker} x{SPEAKER:.2f}")
    if found.tool and found.tool.casefold() in names:
        factor *= TOOL
        why.append(f"tool {found.tool} x{TOOL:.2f}")
    asked_for = next((k for k in asked.kinds if is_kind(k, found.hit)), None)
    if asked_for is not None:
        factor *= ASKED_KIND
        why.append(f"a {asked_for} as asked x{ASKED_KIND:.2f}")
    return added, factor, why


def timing(asked: Asked, created_at: str | None, in_window: bool = False) -> float:
    """A record's factor for the time the question names: up inside it, down outside an
    exact date, 1 when it names none (or the record's time is not known)."""
    if asked.when is None:
        return 1.0
    start, end, exact = asked.when
    at = _when(created_at) if created_at else None
    if in_window or (at is not None and start <= at < end):
        return IN_TIME
    return OUT_OF_TIME if at is not None and exact else 1.0


# A record that says a time ("yesterday", "last Friday", "on the 11th"), for a question whose
# answer is a time ("when did ...?"): the report of an event says when it happened, and later
# mentions of it seldom do.
SAYS_WHEN = 1.5


def time_said(asked: Asked, found: Found | None, why: list[str]) -> float:
    """A record's factor for saying a time when the question asks when (SAYS_WHEN), else 1;
    the reason joins `why`."""
    if found is None or not _asks_when(asked.exact_text):
        return 1.0
    from clew.search.question import says_when

    if not says_when(found.text):
        return 1.0
    why.append(f"says when, as asked x{SAYS_WHEN:.2f}")
    return SAYS_WHEN


@functools.lru_cache(maxsize=64)
def _asks_when(question: str) -> bool:
    from clew.search.question import asks_when

    return asks_when(question)


def _when(stamp: str) -> datetime | None:
    try:
        at = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return at if at.tzinfo is not None else None


class Ranked(NamedTuple):
    key: Key
    score: float
    keyword: float
    explain: Explain
    # Whether the record holds the question's rarest word (of the records found, the one
    # fewest hold): a record missing it is about the rest of the question, not about what
    # it asks ("what is the sentry DSN for the mobile app?" and a record on the mobile app).
    rarest: bool = True


def rank(
    asked: Asked,
    found: Mapping[Key, Found],
    nearest: Sequence[tuple[Key, float]] = (),
    *,
    timely: frozenset[Key] = frozenset(),
    dense_weight: float | None = None,
    neighbours: bool | None = None,
    fusion: str | None = None,
) -> list[Ranked]:
    """Every record found, best first, with why. `found` holds the keyword matches
    (raw bm25 in hit.score, lower is better) and any other record to rank (score 0);
    `nearest` the records closest in meaning, best first, with their cosines; `timely`
    those of them known to be from the time the question names."""
    best = min((f.hit.score for f in found.values()), default=0.0)
    order = sorted(
        (k for k, f in found.items() if f.hit.score < 0), key=lambda k: found[k].hit.score
    )
    keyword_rank = {k: i + 1 for i, k in enumerate(order)}
    keyword, covered, why = _keyword_scores(asked, found, best, neighbours)
    weight = _meaning_weight(dense_weight, dict(nearest), covered, keyword_rank, nearest)
    ranked = _fused(
        asked, found, nearest, timely, best, keyword_rank, keyword, covered, why, weight, fusion
    )
    ranked.sort(key=lambda r: (-r.score, r.key))
    if found and nearest and MEANING_PLACE > 1 and meaning_trusted(covered, keyword_rank, nearest):
        surest = next((k for k, _ in nearest if k in timely), None) if timely else None
        ranked = kept_near(ranked, surest or nearest[0][0], MEANING_PLACE)
    return ranked


def _keyword_scores(
    asked: Asked, found: Mapping[Key, Found], best: float, neighbours: bool | None
) -> tuple[dict[Key, float], dict[Key, float], dict[Key, list[str]]]:
    """Each record's keyword score (its bm25 over the search's best, by its coverage, with
    its boosts, its neighbours' lift and a turn's factors), the share of the question's
    words it holds, and why."""
    plain: dict[Key, float] = {}
    covered: dict[Key, float] = {}
    why: dict[Key, list[str]] = {}
    weights = word_weights(asked, found)
    for key, f in found.items():
        share = f.hit.score / best if best < 0 and f.hit.score < 0 else 0.0
        # The exact share says whether a hit is confident; related words only rank.
        covered[key], cov = coverages(asked, said(f))
        cov = max(weighted(asked, f, cov, weights), f.assumed)
        added, factor, reasons = boosts(asked, f)
        base = share * (FLOOR + (1 - FLOOR) * cov) if share else 0.0
        plain[key] = (base + added) * factor
        why[key] = reasons
    keyword = dict(plain)
    if NEIGHBOURS if neighbours is None else neighbours:
        for key, lift in _neighbour_lifts(found, plain).items():
            keyword[key] += lift
            why[key].append(f"a neighbouring turn matches +{lift:.2f}")
    _weigh_turns(asked, found, keyword, why)
    return keyword, covered, why


def _weigh_turns(
    asked: Asked, found: Mapping[Key, Found], keyword: dict[Key, float], why: dict[Key, list[str]]
) -> None:
    """Weigh each turn's keyword score in place: down for a turn that only asks, for one
    said by another than the person the question names, and for one only addressed to them."""
    named = {f.speaker.casefold() for f in found.values() if f.speaker} & asked.speakers_or_tools
    for key, f in found.items():
        if f.hit.kind != "turn" or keyword[key] <= 0:
            continue
        if ASKS != 1.0 and asks(f.text):
            keyword[key] *= ASKS
            why[key].append(f"asks a question x{ASKS:.2f}")
        if named and f.speaker and f.speaker.casefold() not in named:
            keyword[key] *= OTHER_SPEAKER
            why[key].append(f"said by another than {', '.join(sorted(named))} x{OTHER_SPEAKER:.2f}")
        keyword[key] *= addressed(asked, f, named, why[key])


def _meaning_weight(
    dense_weight: float | None,
    cosines: Mapping[Key, float],
    covered: Mapping[Key, float],
    keyword_rank: Mapping[Key, int],
    nearest: Sequence[tuple[Key, float]],
) -> float:
    """The weight of meaning in the fused score: DENSE (or the model's), more when no
    record holds most of the question's words (ADAPT), and only where it is trusted."""
    weight = (DENSE if dense_weight is None else dense_weight) if cosines else 0.0
    if cosines and ADAPT:
        # Meaning weighs more when no record holds most of the question's words: then the
        # keyword matches are as likely as not to be about something else.
        best_cover = max((covered[k] for k in keyword_rank), default=0.0)
        weight = min(MAX_DENSE, weight + ADAPT * (1 - best_cover))
    return trusted_weight(weight, covered, keyword_rank, nearest)


def _fused(
    asked: Asked,
    found: Mapping[Key, Found],
    nearest: Sequence[tuple[Key, float]],
    timely: frozenset[Key],
    best: float,
    keyword_rank: Mapping[Key, int],
    keyword: Mapping[Key, float],
    covered: Mapping[Key, float],
    why: dict[Key, list[str]],
    weight: float,
    fusion: str | None,
) -> list[Ranked]:
    """Each record's one score, in no order: its keyword score over the best mixed with
    its closeness in meaning at `weight` (or fused by rank, RRF), by the time it is from
    and whether it says when as asked; with why."""
    top_keyword = max(keyword.values(), default=0.0) or 1.0
    cosines = dict(nearest)
    dense_rank = {k: i + 1 for i, (k, _) in enumerate(nearest)}
    closeness = _closeness(cosines)
    by_keyword = sorted((k for k in keyword if keyword[k] > 0), key=lambda k: -keyword[k])
    fused_rank = {k: i + 1 for i, k in enumerate(by_keyword)}
    rrf = (FUSION if fusion is None else fusion) == "rrf"
    holds_rarest = _rarest_holders(asked, found)
    ranked = []
    for key in found.keys() | cosines.keys():
        kw = keyword.get(key, 0.0) / top_keyword
        if rrf:  # reciprocal rank fusion, the comparator the mix is measured against
            score = sum(
                w / (RRF_K + r)
                for w, r in ((1 - weight, fused_rank.get(key)), (weight, dense_rank.get(key)))
                if r is not None
            )
        else:
            score = (1 - weight) * kw + weight * closeness.get(key, 0.0)
        when = timing(asked, found[key].hit.created_at if key in found else None, key in timely)
        if when != 1.0:
            score *= when
            why.setdefault(key, []).append(
                f"{'in' if when > 1 else 'outside'} the time asked about x{when:.2f}"
            )
        score *= time_said(asked, found.get(key), why.setdefault(key, []))
        explain = Explain(
            keyword_rank.get(key),
            round(found[key].hit.score / best, 4)
            if key in found and best < 0 and found[key].hit.score < 0
            else 0.0,
            round(covered.get(key, 0.0), 4),
            dense_rank.get(key),
            None if key not in cosines else round(cosines[key], 4),
            tuple(why.get(key, ())),
            round(score, 4),
        )
        ranked.append(Ranked(key, score, kw, explain, holds_rarest(key)))
    return ranked


def kept_near(ranked: list[Ranked], key: Key, place: int) -> list[Ranked]:
    """`ranked` with the record `key` moved up to `place` (1-based) when it ranks below
    it, at the score of the record it displaces (so the scores stay in order)."""
    at = next((i for i, r in enumerate(ranked) if r.key == key), None)
    if at is None or at < place or ranked[place - 1].score <= 0:
        return ranked
    target = ranked[place - 1].score
    moved = ranked[at]
    why = (*moved.explain.boosts, f"nearest in meaning: kept at place {place} (from {at + 1})")
    raised = moved._replace(
        score=target, explain=moved.explain._replace(boosts=why, score=round(target, 4))
    )
    return [*ranked[: place - 1], raised, *ranked[place - 1 : at], *ranked[at + 1 :]]


# -- fusion: what each half of a hybrid search is trusted with ------------------------------

# The record nearest in meaning keeps its place (MEANING_PLACE) only when the keyword half is
# weak: no record it found holds WEAK_COVER of the question's words. Measured
# (benchmarks/retrieval/fusion.py): when keyword search found records holding most of the
# question, the nearest record it had not found was evidence on about 1% of LoCoMo's
# questions, and the place it took pushed keyword's fifth answer out; the 303-question set's
# paraphrases, which share no word with their answers, keep it.
WEAK_COVER = 0.7
# ... and meaning weighs only this much when the keyword half is not weak: it breaks the
# near-ties of keyword's ranking and reorders nothing else. Measured (fusion.py): the mix
# moved LoCoMo's conversational turns, whose cosines lie close together, above keyword's
# answers (hybrid 70.5 -> 71.0 hit@5, 54.2 -> 54.8 MRR); on the 303-question set meaning
# added nothing to such questions (hit@5 the same, hit@1 63.3 -> 64.5).
STRONG_DENSE = 0.03
# Meaning is not trusted either when its nearest record stands less than FLAT (in cosine)
# above the mean of the next nine and the keyword half holds half the question
# (HALF_COVER): a flat list of the nearest says no record is closer than its look-alikes.
# Measured (fusion.py): LoCoMo hybrid hit@5 71.0 -> 71.7; on the 303-question set the same
# hit@5, the questions keyword matched less than half of (paraphrases) keep their mix.
FLAT = 0.05
HALF_COVER = 0.5


def keyword_weak(covered: Mapping[Key, float], matched: Iterable[Key]) -> bool:
    """Whether no keyword match holds WEAK_COVER of the question's words (`covered`: the
    share each record holds; `matched`: the records keyword search found)."""
    return max((covered.get(k, 0.0) for k in matched), default=0.0) < WEAK_COVER


def meaning_trusted(
    covered: Mapping[Key, float], matched: Iterable[Key], nearest: Sequence[tuple[Key, float]]
) -> bool:
    """Whether meaning may reorder a hybrid ranking and keep its nearest a place: the
    keyword half is weak (keyword_weak), and meaning's nearest stands out from the rest
    (sharpness) unless the keyword matches hold less than HALF_COVER of the question."""
    if not keyword_weak(covered, matched):
        return False
    if max((covered.get(k, 0.0) for k in matched), default=0.0) < HALF_COVER:
        return True
    return sharpness(nearest) >= FLAT


def trusted_weight(
    weight: float,
    covered: Mapping[Key, float],
    matched: Iterable[Key],
    nearest: Sequence[tuple[Key, float]],
) -> float:
    """The weight of meaning in a hybrid score: as given where meaning is trusted
    (meaning_trusted), else at most STRONG_DENSE (it breaks keyword's near-ties)."""
    return weight if meaning_trusted(covered, matched, nearest) else min(weight, STRONG_DENSE)


def sharpness(nearest: Sequence[tuple[Key, float]]) -> float:
    """How far the nearest record's cosine stands above the mean of the next nine (or of
    those there are; 1.0 when there are none: nothing to stand out from)."""
    cosines = sorted((c for _, c in nearest), reverse=True)[:10]
    if len(cosines) < 2:
        return 1.0
    return cosines[0] - sum(cosines[1:]) / (len(cosines) - 1)


def words_lead(ranked: Sequence[Ranked]) -> bool:
    """Whether the first of a hybrid ranking is also the keyword half's best: a hit meaning
    moved above it is not marked confident (the static table's cosines tell the evidence
    from its look-alikes on a fifth of LoCoMo's questions). Measured (fusion.py): a
    confident hybrid top hit is right 80.8% -> 83.1% of the time on LoCoMo, 96.9% -> 100%
    on the 303-question set, for a few fewer marks."""
    return not ranked or ranked[0].keyword >= max(r.keyword for r in ranked)


def dense_weight(model: str | None) -> float:
    """The weight of meaning for an embedding model, named or by its id ("name@hash")."""
    if model is None:
        return DENSE
    return DENSE_BY_MODEL.get(model.partition("@")[0], DENSE)


def _closeness(cosines: Mapping[Key, float]) -> dict[Key, float]:
    """Cosines spread over 0-1 among the records found by meaning: the nearest 1, the
    farthest of them 0 (a cosine means little on its own; its place among them does)."""
    if not cosines:
        return {}
    high, low = max(cosines.values()), min(cosines.values())
    span = high - low
    return {k: (c - low) / span if span > 0 else 1.0 for k, c in cosines.items()}


def _neighbour_lifts(found: Mapping[Key, Found], plain: Mapping[Key, float]) -> dict[Key, float]:
    """What each turn takes from the turns either side of it in its session: NEIGHBOUR of
    the better one's score, or REPLY of the turn before it when that turn asks a question
    (a conversation answers a question in the turn after it, whose own words seldom
    repeat the question's)."""
    place: dict[tuple[str, int], Key] = {}
    for key, f in found.items():
        if f.hit.kind == "turn" and f.hit.session_id is not None and f.hit.turn is not None:
            place[(f.hit.session_id, f.hit.turn)] = key
    lifts: dict[Key, float] = {}
    for (session, number), key in place.items():
        before, after = place.get((session, number - 1)), place.get((session, number + 1))
        sides = [NEIGHBOUR * plain.get(after, 0.0) if after else 0.0]
        if before:
            share = REPLY if asks(found[before].text) else NEIGHBOUR
            sides.append(share * plain.get(before, 0.0))
        best = max(sides)
        if best > 0:
            lifts[key] = best
    return lifts


_ATTACHED = re.compile(r"(\s*\[[^\[\]]*\])+\s*$")  # "[shares a photo: ...]" after the words


def asks(text: str) -> bool:
    """Whether a turn ends by asking a question (what it attaches aside)."""
    return _ATTACHED.sub("", text).rstrip().endswith("?")


def confident(
    ranked: Ranked, runner_up: Ranked | None = None, identifiers: Sequence[str] = ()
) -> bool:
    """Whether the first hit is likely to answer: it has the question as written (the
    whole question, or an identifier that is code, not prose: ERR_CONN_RESET, src/auth.py,
    v2.19.2, not "self-care"), or it holds the question (most of its words and the rarest
    of them, a phrase with the rarest word, or close meaning) and stands clear of the
    runner-up, which scores at most CLEAR of it. Holding the question alone was right
    on about half of LoCoMo's top hits: a conversation says the same words in many turns,
    and only a clear lead tells the one that answers (docs/benchmarks-log.md)."""
    e = ranked.explain
    if any(b.startswith("the whole question") for b in e.boosts):
        return True
    if any(b == f"identifier as written +{EXACT_IDENTIFIER:.2f}" for b in e.boosts) and any(
        code_like(i) for i in identifiers
    ):
        return True
    phrase = ranked.rarest and any(b.startswith("phrase") for b in e.boosts)
    close = e.cosine is not None and e.cosine >= CONFIDENT_COSINE
    covers = e.keyword_rank is not None and e.coverage >= CONFIDENT_COVERAGE and ranked.rarest
    clear = runner_up is None or runner_up.score <= CLEAR * ranked.score
    return (covers or phrase or close) and clear


_CODE = re.compile(r"[\w./:-]*(?:\d|_|[./:](?=\w)|[a-z][A-Z])[\w./:-]*")


def code_like(identifier: str) -> bool:
    """Whether an identifier is code (a digit, an underscore, a path or dotted name, an
    inner capital) rather than a hyphenated word of prose."""
    return _CODE.fullmatch(identifier) is not None


def _rarest_holders(asked: Asked, found: Mapping[Key, Found]) -> Callable[[Key], bool]:
    """Which records hold the question's rarest word: of its words, the one the fewest
    keyword matches hold (none, when the question asks for something nothing recorded
    names). Every record when it has fewer than two words (then coverage says it all)."""
    words = {prefix_of(stem(w)) for w in asked.words}
    if len(words) < 2:
        return lambda key: True
    pattern = prefix_pattern(tuple(sorted(words)))
    held = {k: prefixes_held(pattern, said(f)) for k, f in found.items() if f.hit.score < 0}
    counts = {w: sum(1 for h in held.values() if w in h) for w in words}
    rarest = min(sorted(words), key=lambda w: counts[w])
    return lambda key: rarest in held.get(key, ())


# -- current before history, identifiers before meaning ------------------------------------

HISTORY = 0.5  # the factor of a record replaced by another (superseded, deprecated, disabled)
# ... of a record of history nothing replaced (a resolved error or question): it still
# answers how it was fixed, and a question about what broke is often about one (measured
# on benchmarks/retrieval: at HISTORY, 1-2 points of hit@5 lost).
RESOLVED = 1.0
# What a hit's label ends with when the record is history (models.RecordHit.label).
HISTORY_LABELS = (", superseded", ", resolved", ", deprecated", ", disabled", ", removed")
# What a current record found for its kind alone counts as holding of the question's words
# (Found.assumed): as much as a record holding half of them.
KIND_ASSUMED = 0.5
_ASKS_HISTORY = re.compile(
    r"\b(?:fix\w*|resolv\w*|solv\w*|work(?:ed)? around|used to|before|previous\w*|"
    r"history|earlier|originally|supersed\w*|replac\w*|old|changed?)\b",
    re.IGNORECASE,
)
_IDENTIFIER_WORD = re.compile(r"^(?=.*[^\W\d_])(?=(?:.*\d){2})[^\W_]+$")


def is_history(hit: RecordHit) -> bool:
    """Whether a hit is a record of history: superseded, resolved, deprecated, disabled."""
    return hit.label.endswith(HISTORY_LABELS)


def asks_for_history(text: str) -> bool:
    """Whether a question asks about what was before or how something was fixed: then a
    resolved error or a superseded decision is what it wants, not history to put last."""
    return _ASKS_HISTORY.search(text) is not None


def current_first(
    ranked: list[Ranked], history: Mapping[Key, Key | None], replaced: frozenset[Key] = frozenset()
) -> list[Ranked]:
    """`ranked` with each record of history (`history`: the record that replaced it, when
    known) at HISTORY of its score (RESOLVED when nothing replaced it and it is not
    among `replaced`, the superseded ones: a resolved error, which still holds its fix),
    and below the record that replaced it when both are there, so that what holds now is
    read first."""
    if not history:
        return ranked
    out = []
    for r in ranked:
        if r.key in history:
            factor = HISTORY if r.key in replaced or history[r.key] is not None else RESOLVED
            score = r.score * factor
            why = (*r.explain.boosts, f"history (superseded or resolved) x{factor:.2f}")
            explained = r.explain._replace(boosts=why, score=round(score, 4))
            r = r._replace(score=score, explain=explained)
        out.append(r)
    out.sort(key=lambda r: (-r.score, r.key))
    for old, new in history.items():
        at = {r.key: i for i, r in enumerate(out)}
        if new is None or old not in at or new not in at or at[old] > at[new]:
            continue
        moved = out.pop(at[old])
        below = at[new] - 1  # the replacement moved up one place with the pop
        score = min(moved.score, out[below].score)
        out.insert(below + 1, moved._replace(score=score))
    return out


def identifiers(asked: Asked) -> tuple[str, ...]:
    """The identifiers of a question: those a tokenizer splits (ERR_CONN_RESET, v2.19.2,
    orders_p004) and words of letters with digits (f2000, E1234)."""
    words = [w for w in asked.words if _IDENTIFIER_WORD.match(w)]
    return tuple(dict.fromkeys((*asked.identifiers, *words)))


def identifiers_first(
    ranked: list[Ranked], found: Mapping[Key, Found], names: Sequence[str]
) -> list[Ranked]:
    """`ranked` with the records holding every identifier of the question as written
    above those that do not (a record found by meaning alone holds none): an exact
    identifier names the thing asked about, closeness in meaning only guesses it."""
    if not names:
        return ranked
    folded = [n.casefold() for n in names]

    def holds(key: Key) -> bool:
        f = found.get(key)
        return f is not None and all(n in folded_text(f.text) for n in folded)

    return _raised(ranked, holds, "holds the identifier as written: above meaning alone")


# The kinds of record a question asks for that rank first when one of them fits it.
# Not errors: a failed command and an error entry are both one, and which of them answers
# "what broke...?" is the words' to say (measured on benchmarks/retrieval: 2 questions lost).
FIRST_KINDS = frozenset({"decision", "constraint", "question"})


def asked_kind_first(
    ranked: list[Ranked], found: Mapping[Key, Found], asked: Asked
) -> list[Ranked]:
    """`ranked` with the current records of the kind the question asks for ("which
    registry did we pick?": a decision) that hold at least KIND_ASSUMED of its words (or
    were found for their kind alone) above the records of other kinds: a plan step or a
    message that names the topic says what was to be done, the decision what was chosen."""
    asked_for = next((k for k in asked.kinds if k in FIRST_KINDS), None)
    if asked_for is None:
        return ranked

    def fits(key: Key) -> bool:
        f = found.get(key)
        if f is None or not is_kind(asked_for, f.hit) or is_history(f.hit):
            return False
        return max(coverage(asked, f.text), f.assumed) >= KIND_ASSUMED

    def same(key: Key) -> bool:  # a current one of the kind, if not one that fits
        f = found.get(key)
        return f is not None and is_kind(asked_for, f.hit) and not is_history(f.hit)

    return _raised(ranked, fits, f"a current {asked_for}, as asked: above other kinds", same)


def _raised(
    ranked: list[Ranked],
    first: Callable[[Key], bool],
    reason: str,
    kept: Callable[[Key], bool] = lambda key: False,
) -> list[Ranked]:
    """`ranked` with each record `first` holds for moved up past every record that is
    neither such a record nor one `kept` holds for (those keep their places before it); a
    raised record takes the score of the record above it, so the scores stay in order."""
    if not any(first(r.key) for r in ranked):
        return ranked
    out: list[Ranked] = []
    for r in ranked:
        if not first(r.key):
            out.append(r)
            continue
        at = len(out)
        while at > 0 and not (first(out[at - 1].key) or kept(out[at - 1].key)):
            at -= 1
        if at < len(out):
            top = out[at].score
            why = (*r.explain.boosts, reason)
            if r.score < top:
                explained = r.explain._replace(boosts=why, score=round(top, 4))
                r = r._replace(score=top, explain=explained)
        out.insert(at, r)
    return out


# -- a name said to its owner -----------------------------------------------------------

# Another speaker's turn that holds nothing of the question but the name asked about (off:
# measured at 0.5 and 0.75 in docs/benchmarks-log.md).
ADDRESSED = 1.0


def addressed(asked: Asked, found: Found, named: Collection[str], why: list[str]) -> float:
    """A turn's factor when another speaker says only the name of the person the question
    asks about (`named`) and no other word of it: in a conversation that is someone
    talking *to* them ("Thanks, Melanie!"), not about what they did; their own turns hold
    the answer. 1 otherwise. Says why in `why`."""
    if ADDRESSED == 1.0 or not named or found.speaker is None or found.speaker.casefold() in named:
        return 1.0
    rest = tuple(w for w in asked.words if w.casefold() not in named)
    if not rest or coverage(asked._replace(words=rest, related=()), found.text) > 0:
        return 1.0
    why.append(f"only names {', '.join(sorted(named))}, said to them x{ADDRESSED:.2f}")
    return ADDRESSED


# -- feedback: the words of the first hits, for what the question's own words miss --------

FEEDBACK_TOP = 3  # the best records found whose words are looked for too
FEEDBACK_WORDS = 4  # of their words, at most
FEEDBACK = 0.5  # the share of the best match a record found only by them can reach
FEEDBACK_RARE = 0.1  # a word held by more than this share of the records found is common
FEEDBACK_COMMON = 3  # ... and by more than this many
FEEDBACK_NEAR = 0.5  # a first hit is one scoring at least this share of the best
_FEEDBACK_WORD = re.compile(r"[^\W\d_]{4,}")


def feedback_words(asked: Asked, tops: Sequence[str], others: Sequence[str]) -> tuple[str, ...]:
    """The words of the best records found (`tops`) worth looking for as well: not the
    question's (nor a name it holds), held by few of the records found (`others`; a word
    most of them hold says nothing), those the tops share first, then the rarest. A
    question whose evidence is spread over several sittings ("what does she do to unwind?")
    finds one of them by its own words; the others repeat that one's rarer words ("running"),
    not the question's."""
    mine = {prefix_of(stem(w)) for w in (*asked.words, *asked.speakers_or_tools)}
    seen: dict[str, tuple[int, str]] = {}  # prefix -> (tops holding it, the word)
    from clew.search.question import content_words

    for text in tops:
        held: set[str] = set()
        for word in content_words(_ATTACHED.sub("", text)):
            key = prefix_of(stem(word))
            if key in mine or key in held or not _FEEDBACK_WORD.fullmatch(word):
                continue
            held.add(key)
            count, first = seen.get(key, (0, word))
            seen[key] = (count + 1, first)
    if not seen:
        return ()
    pattern = prefix_pattern(tuple(sorted(seen)))
    holders: dict[str, int] = {}
    for text in others:
        for key in prefixes_held(pattern, text):
            holders[key] = holders.get(key, 0) + 1
    common = max(FEEDBACK_COMMON, int(FEEDBACK_RARE * len(others)))
    rare = [k for k in seen if holders.get(k, 0) <= common]
    rare.sort(key=lambda k: (-seen[k][0], -holders.get(k, 0), k))
    return tuple(seen[k][1] for k in rare[:FEEDBACK_WORDS])


# -- what a speaker says later on the same words comes first -------------------------------

LATER = True  # whether it does (measured both ways: docs/benchmarks-log.md)
LATER_NEAR = 0.6  # of the best turn of a speaker on some words, the least a later one scores
# A question about the past ("what did she say...", "where was he...", "how long ago..."):
# then the earlier statement may be the one asked about.
_ASKS_PAST = re.compile(r"\b(?:did|was|were|had|ago|first)\b", re.IGNORECASE)
# A question that asks what holds now, in so many words; with LATER_ONLY_NOW only those move.
LATER_ONLY_NOW = True
_ASKS_NOW = re.compile(
    r"\b(?:now|current(?:ly)?|still|these days|latest|at the moment|any ?more|today)\b",
    re.IGNORECASE,
)


def later_first(
    ranked: list[Ranked], found: Mapping[Key, Found], asked: Asked, question: str
) -> list[Ranked]:
    """`ranked` with the turns of one speaker that hold the same words of the question in
    time order, the latest first, in the places they hold: what a person says later on the
    same thing ("the rent went up to 1,350") replaces what they said before ("my rent is
    1,200"), as a superseded decision ranks below its replacement; a conversation never
    says which statement replaced which. Only turns scoring at least LATER_NEAR of the best
    of them move, only for a question that asks what holds now in so many words ("now",
    "currently", "still": _ASKS_NOW, with LATER_ONLY_NOW; measured: moving them for every
    question in the present tense cost LoCoMo's multi-hop questions, which ask for all of a
    person's statements, a point of MRR), and not for a question about the past or a time
    (asks_for_history, _ASKS_PAST, asked.when), whose answer may be the earlier one."""
    if not LATER or asked.when is not None or asks_for_history(question):
        return ranked
    if _ASKS_PAST.search(question) or (LATER_ONLY_NOW and not _ASKS_NOW.search(question)):
        return ranked
    wanted, _, pattern = looked_for(asked.words, ())
    if not wanted:
        return ranked
    groups: dict[tuple[str, frozenset[str]], list[int]] = {}
    for i, r in enumerate(ranked):
        f = found.get(r.key)
        if f is None or f.hit.kind != "turn" or f.speaker is None or not f.hit.created_at:
            continue
        # The text's prefixes, not the speaker's name.
        held = prefixes_held(pattern, f.text) & frozenset(wanted)
        if held:
            groups.setdefault((f.speaker.casefold(), held), []).append(i)
    out = list(ranked)
    for places in groups.values():
        places = [p for p in places if ranked[p].score >= LATER_NEAR * ranked[places[0]].score]
        if len(places) < 2:
            continue
        latest = sorted(
            (ranked[p] for p in places),
            key=lambda r: str(found[r.key].hit.created_at),
            reverse=True,
        )
        for place, r in zip(places, latest, strict=True):
            if r.key == ranked[place].key:
                continue
            score = ranked[place].score
            why = (*r.explain.boosts, f"said later on the same words: at place {place + 1}")
            out[place] = r._replace(
                score=score, explain=r.explain._replace(boosts=why, score=round(score, 4))
            )
    return out
