"""Search over everything recorded, on the Memory facade: one ranked list of archive
entries, task messages, commands with their output, conversation turns and the decisions
of the episodic trace.

`search_all` is the one engine; `clew search`, the memory_search tool and
conversation_recall's search are views of it. A question in plain words is reduced to its
content words (question.py), each index ranks its matches by bm25 over them combined with
OR, the turns either side of the best turns are fetched, and ranking.py makes one list of
it all: the share of the question's words each record holds, exact phrases and
identifiers, a speaker, tool or time the question names, and, with the `vectors` extra,
closeness in meaning (vectors.py), mixed into one score. Keyword search never waits for
vectors: a hybrid search embeds at most CATCH_UP records first and says how far behind
the index is.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from clew.archive.entries import (
    SEARCH_LIMIT,
    Archive,
    ErrorHistory,
    _kinds,
    _text_of,
    action_hit,
    entry_hit,
)
from clew.archive.fingerprint import telling_line
from clew.core import checks
from clew.core import query as search
from clew.core.query import MAX_TERMS, Term
from clew.errors import NotFoundError, ValidationError
from clew.kernel import Kernel, Service
from clew.models import (
    OUTLINE_KINDS,
    RECORD_KINDS,
    Entry,
    EntryFilter,
    EntryStatus,
    EntryType,
    RecordHit,
)
from clew.search.hits import (
    TEXT_CHARS,
    asked_of,
    decision_hit,
    found_of,
    is_failure,
    message_hit,
    neighbour_places,
    passes_filters,
    per_index,
    turn_hit,
    window_of,
)
from clew.search.vectors import Vectors, embedder_available, load_embedder

if TYPE_CHECKING:
    import numpy as np

    from clew.search.coverage import Asked, Found, Key
    from clew.search.question import Question
    from clew.search.ranking import Ranked

# question.py, ranking.py and summaries.py (~60 KB of source) are imported by the searches
# that use them: Memory holds this service, and every hook would load them for nothing.

MODES = ("auto", "keyword", "dense", "hybrid")
POOL = 60  # keyword matches ranked per index, at least
NEIGHBOURS = 12  # the best turns whose neighbours are fetched
MIN_COSINE = 0.2
# What a record's bm25 for the words related to a question's counts, of its own words'.
EXPANDED = 0.5
RELATED_PER_WORD = 4  # the nearest related words looked for, of each word of the question
FEEDBACK = True  # whether the best records' rarer words are looked for too (measured both ways)
FEEDBACK_KINDS = ("turn",)  # the kinds of record they are looked for in
# Whether a record the question's words found already takes the feedback words' score when
# it is better (measured both ways: docs/benchmarks-log.md).
FEEDBACK_LIFTS = True
EXPAND = True  # whether a weakly matched question looks for related words (measured both ways)
PER_INDEX = True  # whether each index's bm25 is read against its own best (measured both ways)
CATCH_UP = 2000  # records a hybrid search embeds before it ranks (about 0.2 s at most)
# ... of a model that embeds tens, not thousands, of texts per CPU-second: about as long
CATCH_UP_BY_MODEL = {"minilm-onnx-int8": 8}
SIMILAR = 5  # similar errors `seen_before` names
# How close in meaning an outline record (a title, a goal, a pattern) must be to be found
# by meaning, and a pattern to join a task's context without sharing a word: with the
# packaged static table, unrelated texts score about 0.25 and under (MIN_COSINE), but a
# title of a word or two is noisier (a step "one" came within 0.3 of "ORM apply"); a
# pattern its description makes related scores 0.4 and over.
PATTERN_COSINE = 0.4
HISTORY_MARGIN = 10  # records ranked beyond the limit, for history put below them to leave
MAX_CHAIN = 8  # replacements of replacements followed, at most
# A question naming a short time finds that time's records even when none holds its words,
# when the time holds at most TIME_RECORDS of them (more: the words must choose); each joins
# at TIME_ONLY of the best match's score (before the time asked about is counted), the
# newest first.
TIME_RECORDS = 40
TIME_ONLY = 0.3
KIND_TASKS = 3  # the tasks of the best matches whose few current entries of a kind may join
KIND_FALLBACK = 3  # current entries of the kind a question asks for that join its hits
# The entry types of each kind of record a question can ask for (summaries.intent).
KIND_TYPES = {
    "decision": (EntryType.DECISION,),
    "constraint": (EntryType.CONSTRAINT, EntryType.USER_INSTRUCTION),
    "question": (EntryType.QUESTION,),
    "error": (EntryType.ERROR,),
}
SIMILAR_CHARS = 400  # of an error's text they are looked up by


class Retrieval(Service):
    """Search over everything (a service of Memory): the archive's entries and the other
    records by their words, and by meaning through the vector index."""

    def __init__(self, kernel: Kernel, archive: Archive, vectors: Vectors) -> None:
        super().__init__(kernel)
        self._archive = archive
        self._vectors = vectors

    def search_all(
        self,
        query: str,
        *,
        kinds: str | Sequence[str] | None = None,
        task_id: str | None = None,
        session_id: str | None = None,
        step: int | str | None = None,
        type: str | EntryType | Sequence[str | EntryType] | None = None,
        status: str | EntryStatus | None = None,
        tags: Sequence[str] = (),
        since: str | datetime | None = None,
        until: str | datetime | None = None,
        mode: str = "auto",
        limit: int = SEARCH_LIMIT,
        explain: bool = False,
        include_superseded: bool = False,
    ) -> list[RecordHit]:
        """Search everything recorded: archive entries, task messages, commands with their
        output, conversation turns and the trace's decisions; task names, goals and final
        answers, plan steps (their titles and issues), patterns and guardrails; one list,
        best first, each hit with its score (higher is better), whether it is `confident`,
        and the clew command that opens it.

        What holds now comes first: a superseded or resolved entry, a deprecated pattern
        or a disabled guardrail ranks at half its score and below the entry that replaced
        it (found or not; `superseded_by` names it), its label saying so ("decision,
        superseded"); `include_superseded=True` ranks history as it matches, alongside
        (as does a question about what was before or how something was fixed). A record
        holding every identifier the question names as written (f2000, v2.19.2,
        orders_p004) ranks above those that do not.

        A question in plain words works: its content words are searched for, records
        holding more of them rank higher, and exact phrases, identifiers (ERR_CONN_RESET,
        src/auth.py), a speaker, a tool or a time it names count too. `kinds` narrows it
        (entry, message, action, turn, decision, task, goal, step, answer, pattern,
        guardrail); `type`, `status` and `tags` filter
        entries and, without `kinds`, mean entries only; `session_id` means turns of that
        session, `step` (with `task_id`) the entries, commands and decisions of that step.
        `mode`: keyword, dense (by meaning), hybrid, or auto (hybrid when the `vectors`
        extra is installed).
        `explain=True` fills each hit's `explain` with why it ranked there.
        """
        search.bounded(query)
        wanted = checks.count(limit, "limit")
        chosen = _kinds(kinds)
        entry_filters = type is not None or status is not None or bool(tags)
        if entry_filters and kinds is None:
            chosen = ("entry",)
        elif entry_filters and "entry" not in chosen:
            raise ValidationError("type, status and tags filter entries: add the kind entry")
        sessions: list[str] | None = None
        if session_id is not None:
            ident = checks.text(session_id, "session_id")
            named = self._store.find_session(ident)  # an id or a key, else an id's prefix
            sessions = [named.id if named else self._resolve("session", ident)]
            if kinds is None:
                chosen = ("turn",)
        filters = self._archive._filter(task_id, type, status, step, tags, since, until)
        history = bool(include_superseded) or status is not None
        return self._search(query, chosen, filters, sessions, mode, wanted, explain, history)

    def _search(
        self,
        query: str,
        kinds: Sequence[str],
        filters: EntryFilter,
        sessions: Sequence[str] | None,
        mode: str,
        limit: int,
        explain: bool,
        include_superseded: bool = False,
    ) -> list[RecordHit]:
        """The engine: every view of search comes here."""
        from clew.search.question import understand

        if mode not in MODES:
            raise ValidationError(f"search mode {mode!r} is not one of: {', '.join(MODES)}")
        if isinstance(query, str):
            checks.unicode(query, "the search query")
        question = understand(query, now=self._clock())
        dense = self._dense_mode(mode)
        if question.query is None:  # only question words: search for them, as written
            question = question._replace(query=search.parse(query, any_terms=True))
        asked = asked_of(question, query)
        pool = max(POOL, 3 * limit)
        if dense and not (self._store.in_transaction or self._store.read_only):
            self._vectors._catch_up(self._catch_up_size())  # inside a caller's transaction: later
        with self._store.transaction():
            found: dict[Key, Found] = {}
            if mode != "dense":
                found, asked = self._by_words(
                    question, asked, kinds, filters, sessions, pool, dense
                )
            self._kind_fallback(asked, found, kinds, filters, sessions)
            nearest: list[tuple[Key, float]] = []
            timely: frozenset[Key] = frozenset()
            outlined: dict[Key, RecordHit] = {}
            if dense:
                nearest, timely, outlined = self._by_meaning(
                    query, question, kinds, filters, sessions, pool
                )
            if not found and not nearest:
                return []
            ranked, hits_of, replaced = self._ranked(
                query, asked, found, nearest, timely, outlined, dense, limit, include_superseded
            )
        return self._hits(ranked, hits_of, replaced, asked, dense, explain)

    def _by_words(
        self,
        question: Question,
        asked: Asked,
        kinds: Sequence[str],
        filters: EntryFilter,
        sessions: Sequence[str] | None,
        pool: int,
        dense: bool,
    ) -> tuple[dict[Key, Found], Asked]:
        """The records found by the question's words, its related words, the first hits'
        words and the time it names, each index's scores over its own best; and the question
        with the related words looked for."""
        found = self._keyword(question, kinds, filters, sessions, pool)
        asked = self._expand(question, asked, found, kinds, filters, sessions, pool)
        self._feedback(question, asked, found, kinds, filters, sessions, pool)
        found = per_index(found) if PER_INDEX else found
        self._of_the_time(question, found, kinds, filters, sessions, dense)
        return found, asked

    def _by_meaning(
        self,
        query: str,
        question: Question,
        kinds: Sequence[str],
        filters: EntryFilter,
        sessions: Sequence[str] | None,
        pool: int,
    ) -> tuple[list[tuple[Key, float]], frozenset[Key], dict[Key, RecordHit]]:
        """The records nearest the question in meaning, best first, with their cosines (the
        outline's too, outside a session); those of the time it names; and the outline's
        records found, as hits."""
        vector = self._vectors._question_vector(query, question.words)
        nearest = self._nearest(vector, kinds, filters, sessions, pool)
        timely: frozenset[Key] = frozenset()
        outlined: dict[Key, RecordHit] = {}
        if sessions is None:
            close, outlined = self._outline_nearest(vector, kinds, filters, pool)
            nearest = sorted(nearest + close, key=lambda n: -n[1])
        window = window_of(question, filters)
        if window is not None:  # the nearest of the time it names, too
            then = self._nearest(vector, kinds, window, sessions, pool)
            timely = frozenset(k for k, _ in then)
            nearest = sorted(dict(nearest + then).items(), key=lambda n: -n[1])
        return nearest, timely, outlined

    def _ranked(
        self,
        query: str,
        asked: Asked,
        found: dict[Key, Found],
        nearest: list[tuple[Key, float]],
        timely: frozenset[Key],
        outlined: dict[Key, RecordHit],
        dense: bool,
        limit: int,
        include_superseded: bool,
    ) -> tuple[list[Ranked], dict[Key, RecordHit], dict[str, str]]:
        """The first `limit` records ranked, after the kind asked for, identifiers as
        written, what a speaker said later and what holds now have moved them; every hit
        they may name, by key; and each superseded entry's current replacement."""
        from clew.search import ranking

        # A record nothing ranks above zero (the farthest of the nearest) is no hit.
        weight = ranking.dense_weight(self._vectors._embedder().model_id if dense else None)
        ranked = [
            r
            for r in ranking.rank(asked, found, nearest, timely=timely, dense_weight=weight)
            if r.score > 0
        ][: limit + HISTORY_MARGIN]
        missing = [r.key for r in ranked if r.key not in found and r.key not in outlined]
        described = {**outlined, **self._describe(missing)}
        hits_of = {k: f.hit for k, f in found.items()} | described
        replaced: dict[str, str] = {}
        ranked = ranking.asked_kind_first(ranked, found, asked)
        ranked = ranking.identifiers_first(ranked, found, ranking.identifiers(asked))
        ranked = ranking.later_first(ranked, found, asked, query)
        if not (include_superseded or ranking.asks_for_history(query)):
            ranked, replaced = self._current_first(ranked, hits_of)
        return ranked[:limit], hits_of, replaced

    def _hits(
        self,
        ranked: list[Ranked],
        hits_of: dict[Key, RecordHit],
        replaced: dict[str, str],
        asked: Asked,
        dense: bool,
        explain: bool,
    ) -> list[RecordHit]:
        """The ranked records as hits: scored, with the command that opens each, the first
        marked confident when it is likely to answer, and why each ranked there."""
        from clew.search import ranking

        hits = []
        for i, r in enumerate(ranked):
            hit = hits_of.get(r.key)
            if hit is None:
                continue  # embedded, then deleted: the vectors lag behind
            hit = hit._replace(
                score=round(r.score, 4),
                open=self._archive._open_command(hit),
                confident=i == 0
                and ranking.confident(r, ranked[1] if len(ranked) > 1 else None, asked.identifiers)
                and (not dense or ranking.words_lead(ranked)),
                explain=r.explain if explain else None,
                superseded_by=replaced.get(hit.id) if hit.kind == "entry" else None,
            )
            hits.append(hit)
        return hits

    def _current_first(
        self, ranked: list[Ranked], hits: dict[Key, RecordHit]
    ) -> tuple[list[Ranked], dict[str, str]]:
        """The ranking with what holds now first (ranking.current_first): each superseded
        entry found is followed to the current entry that replaced it, which joins the hits
        (into `hits`) when the search did not find it. Returns the ranking and, by each
        superseded entry's id, its current replacement's."""
        from clew.models import Explain
        from clew.search import ranking

        history = {r.key: None for r in ranked if r.key in hits and ranking.is_history(hits[r.key])}
        if not history:
            return ranked, {}
        superseded = [
            k[1] for k in history if k[0] == "entry" and hits[k].label.endswith(", superseded")
        ]
        links = self._store.replacements(superseded)
        chained = dict(links)
        for _ in range(MAX_CHAIN):  # a replacement superseded in turn: its replacement
            later = self._store.replacements([n for n in chained.values() if n not in links])
            if not later:
                break
            links.update(later)
            chained = {old: later.get(new, new) for old, new in chained.items()}
        at = {r.key: r for r in ranked}
        out = list(ranked)
        current: dict[Key, Key | None] = dict(history)
        for old_id, new_id in chained.items():
            old, new = ("entry", old_id), ("entry", new_id)
            if new not in at:
                try:
                    entry = self._store.get_entry(new_id)
                except NotFoundError:
                    continue
                if entry.status is not EntryStatus.ACTIVE:
                    continue
                hits[new] = entry_hit(entry)
                score = at[old].score
                reason = (f"replaces {old_id}, which the search found",)
                why = Explain(None, 0.0, 0.0, None, None, reason, round(score, 4))
                at[new] = ranking.Ranked(new, score, at[old].keyword, why)
                out.append(at[new])
            current[old] = new
        replaced = frozenset(k for k in history if not hits[k].label.endswith(", resolved"))
        return ranking.current_first(out, current, replaced), chained

    def _kind_fallback(
        self,
        asked: Asked,
        found: dict[Key, Found],
        kinds: Sequence[str],
        filters: EntryFilter,
        sessions: Sequence[str] | None,
    ) -> None:
        """A question that asks for a kind of entry ("which registry did we pick?": a
        decision) when no entry of that kind holds half its words and the scope holds at
        most KIND_FALLBACK current ones: they join what was found (as holding half the
        question's words, ranking.KIND_ASSUMED), since the question's other words are often
        ones the record does not use ("registry" for "ghcr.io"); when the store holds more,
        those of the first of the tasks of the best matches (KIND_TASKS) that holds at most
        that many. With more of
        them the newest would be a guess (measured on benchmarks/retrieval: unrelated
        decisions first on 6 questions)."""
        from clew.search import coverage, ranking

        types = KIND_TYPES.get(next(iter(asked.kinds), ""), ())
        if not types or "entry" not in kinds or sessions is not None:
            return
        if filters.types or filters.statuses or filters.tags:
            return
        for f in found.values():
            if (
                coverage.is_kind(asked.kinds[0], f.hit)
                and not ranking.is_history(f.hit)
                and coverage.coverage(asked, f.text) >= ranking.KIND_ASSUMED
            ):
                return  # a current one holds the question's words: no guess needed
        scope = filters._replace(types=types, statuses=(EntryStatus.ACTIVE,))
        current = self._store.list_entries(scope, limit=KIND_FALLBACK + 1)
        if len(current) > KIND_FALLBACK and filters.task_id is None:
            # Many in the store: a task the question's best matches belong to may hold few
            # ("Log in to the registry" is a step of the task that decided on ghcr.io).
            matched = sorted(
                (f for f in found.values() if f.hit.score < 0 and f.hit.task_id),
                key=lambda f: f.hit.score,
            )
            for task in list(dict.fromkeys(f.hit.task_id for f in matched))[:KIND_TASKS]:
                current = self._store.list_entries(
                    scope._replace(task_id=task), limit=KIND_FALLBACK + 1
                )
                if len(current) <= KIND_FALLBACK:
                    break
        if len(current) > KIND_FALLBACK:
            return  # many: the newest are a guess, not an answer (a task's few are all)
        best = min((f.hit.score for f in found.values()), default=-1.0)
        best = min(best, -1.0) if best >= 0 else best
        for i, e in enumerate(current):
            key = ("entry", e.id)
            if key in found:
                found[key] = found[key]._replace(assumed=ranking.KIND_ASSUMED)
            else:
                hit = entry_hit(e, "", best * (1 - 0.01 * i))  # the newest first
                found[key] = found_of(hit, None)._replace(assumed=ranking.KIND_ASSUMED)

    def _patterns_by_meaning(self, text: str, limit: int) -> list[str]:
        """The ids of the current patterns nearest `text` in meaning, at least
        PATTERN_COSINE close, best first: none without the vectors extra (context assembly
        adds them to the patterns that share the task's words)."""
        if limit <= 0 or not text.strip() or not embedder_available():
            return []
        from clew.search import ranking
        from clew.search.question import content_words

        vector = self._vectors._question_vector(text, content_words(text))
        close, hits = self._outline_nearest(vector, ("pattern",), EntryFilter(), 4 * limit)
        return [
            ident
            for (_, ident), cosine in close
            if cosine >= PATTERN_COSINE and not ranking.is_history(hits[("pattern", ident)])
        ][:limit]

    def _outline_nearest(
        self, vector: np.ndarray, kinds: Sequence[str], filters: EntryFilter, pool: int
    ) -> tuple[list[tuple[Key, float]], dict[Key, RecordHit]]:
        """The outline's records (outline.py: tasks, goals, answers, steps, patterns,
        guardrails) nearest the question in meaning, at least PATTERN_COSINE close,
        embedded as the search runs (they are few; at most the model's catch-up size, the
        newest of each kind), with their hits."""
        from clew.archive import outline

        docs = outline.documents(self._store, kinds, filters, limit=self._catch_up_size())
        if not docs:
            return [], {}
        import numpy as np

        matrix = self._vectors._embedder().embed([d.text[:TEXT_CHARS] for d in docs])
        cosines = np.asarray(matrix, dtype=np.float32) @ vector
        close = sorted(
            ((d.hit.kind, d.hit.id), float(c))
            for d, c in zip(docs, cosines, strict=True)
            if c >= PATTERN_COSINE
        )
        close.sort(key=lambda n: -n[1])
        hits = {(d.hit.kind, d.hit.id): d.hit for d in docs}
        return close[:pool], {k: hits[k] for k, _ in close[:pool]}

    def _keyword(
        self,
        question: Question,
        kinds: Sequence[str],
        filters: EntryFilter,
        sessions: Sequence[str] | None,
        pool: int,
    ) -> dict[Key, Found]:
        """The keyword matches of every kind asked for, with the turns next to the best; a
        question that names a time also gets the best matches of that time (a common word
        can bury them among all the others)."""

        found: dict[Key, Found] = {}
        if question.query is None:
            return found
        scopes = [filters]
        window = window_of(question, filters)
        if window is not None:
            scopes.append(window)
        for scope in scopes:
            for key, f in self._matches(question.query, kinds, scope, sessions, pool).items():
                found.setdefault(key, f)
        for session, numbers in neighbour_places(found.values(), NEIGHBOURS).items():
            for t in self._store.turns_numbered(session, sorted(numbers)):
                found.setdefault(("turn", t.id), found_of(turn_hit(t), t))
        return found

    def _of_the_time(
        self,
        question: Question,
        found: dict[Key, Found],
        kinds: Sequence[str],
        filters: EntryFilter,
        sessions: Sequence[str] | None,
        dense: bool,
    ) -> None:
        """The records of the time a question names that its words did not find join
        `found` (at TIME_ONLY, the newest first), when that time holds at most TIME_RECORDS
        records: "what did the user ask for on May 18?" is answered by that day's records,
        whatever words they use. Keyword search only: a hybrid one has the time's nearest
        records by meaning (measured: the time's records by time as well cost the held-out
        set a question, and gained LoCoMo 0.1)."""
        from clew.search.coverage import Found

        window = window_of(question, filters)
        if dense or window is None or window.subtask_id is not None or window.since is None:
            return
        if window.until is None or filters.types or filters.statuses or filters.tags:
            return
        keys: list[Key] = []
        entries: dict[Key, Entry] = {}
        if "entry" in kinds and sessions is None:
            entries = {
                ("entry", e.id): e for e in self._store.list_entries(window, limit=TIME_RECORDS + 1)
            }
            keys += entries
        others = [k for k in kinds if k in ("message", "action", "decision", "turn")]
        if others:
            keys += self._store.records_between(
                others,
                since=window.since,
                until=window.until,
                task_id=window.task_id,
                session_ids=sessions,
                limit=TIME_RECORDS + 1,
            )
        if len(keys) > TIME_RECORDS:
            return  # a long or busy time: its records are no answer by themselves
        new = [k for k in keys if k not in found]
        if not new:
            return
        best = min((f.hit.score for f in found.values()), default=-1.0)
        best = min(best, -1.0) if best >= 0 else best
        hits = self._describe([k for k in new if k not in entries])
        hits.update({k: entry_hit(entries[k]) for k in new if k in entries})
        turns = {t.id: t for t in self._store.turns_by_id([i for k, i in new if k == "turn"])}
        by_time = sorted(
            (k for k in new if k in hits), key=lambda k: hits[k].created_at or "", reverse=True
        )
        for i, key in enumerate(by_time):
            hit = hits[key]._replace(score=TIME_ONLY * best * (1 - 0.01 * i))
            if key in entries:
                found[key] = Found(hit, _text_of(entries[key]))
            else:
                found[key] = found_of(hit, turns.get(key[1]) if key[0] == "turn" else None)

    def _expand(
        self,
        question: Question,
        asked: Asked,
        found: dict[Key, Found],
        kinds: Sequence[str],
        filters: EntryFilter,
        sessions: Sequence[str] | None,
        pool: int,
    ) -> Asked:
        """When no record found holds most of the question's words, look for the words
        related to them in meaning too (question.related), at a lower weight: a record
        found only by them ranks by EXPANDED of its bm25 for them. Returns what the ranking
        needs to count them (coverage counts a related word at coverage.RELATED of the word)."""
        from clew.search import coverage, ranking
        from clew.search.question import related

        if not EXPAND or question.query is None or not asked.words:
            return asked
        matched = (coverage.coverage(asked, f.text) for f in found.values() if f.hit.score < 0)
        if max(matched, default=0.0) >= ranking.CONFIDENT_COVERAGE:
            return asked  # the question's own words found what it asks: nothing to bridge
        near = tuple(words[:RELATED_PER_WORD] for words in related(asked.words))
        extra = list(dict.fromkeys(w for words in near for w in words))[:MAX_TERMS]
        if not extra:
            return asked
        query = search.Query(
            tuple(Term(w, False) for w in extra), question.query.exclude, True, (), tuple(extra)
        )
        # Only the records the question's own words did not find: one they did keeps its
        # own bm25 (adding the related words' to it measured worse: a word's nearest words
        # include its opposites, "fail" and "succeed", which then rank up the records of
        # the other outcome).
        # Not the outline's: a title is found by the question's own words (as the search
        # sets in benchmarks/ were measured; its index would now make this cheap to try).
        within = [k for k in kinds if k not in OUTLINE_KINDS]
        for key, f in self._matches(query, within, filters, sessions, pool).items():
            if key not in found:
                found[key] = f._replace(hit=f.hit._replace(score=EXPANDED * f.hit.score))
        return asked._replace(related=near)

    def _feedback(
        self,
        question: Question,
        asked: Asked,
        found: dict[Key, Found],
        kinds: Sequence[str],
        filters: EntryFilter,
        sessions: Sequence[str] | None,
        pool: int,
    ) -> None:
        """Look for the rarer words of the best records found as well (ranking.feedback_words):
        a question whose evidence is spread over several sittings finds one piece by its own
        words, and the others by that one's. A record found only by them joins at
        ranking.FEEDBACK of the best match at most (its bm25 for them read against the best
        of the records they find besides the first hits), then ranks by what it holds of the
        question like any other; one found already takes that score when it is better
        (FEEDBACK_LIFTS). It costs a second ranking of the matches and a second query of the
        turns (docs/benchmarks-log.md: about a quarter more CPU for a keyword search)."""
        from clew.search import coverage, ranking

        # Turns only: a conversation spreads one matter over sittings, while an entry, a
        # command or a decision is found by its own words; and never for an identifier,
        # which names the one record it wants.
        within = [k for k in kinds if k in FEEDBACK_KINDS]
        if not FEEDBACK or question.query is None or not found or not within:
            return
        if ranking.identifiers(asked):
            return
        first = ranking.rank(asked, found)[: ranking.FEEDBACK_TOP]
        near = ranking.FEEDBACK_NEAR * first[0].score if first else 0.0
        chosen = [r.key for r in first if r.key in found and r.score >= near]
        tops = [found[k].text for k in chosen]
        others = [coverage.said(f) for f in found.values() if f.hit.score < 0]
        words = ranking.feedback_words(asked, tops, others)
        best = min((f.hit.score for f in found.values()), default=0.0)
        if not words or best >= 0:
            return
        query = search.Query(
            tuple(Term(w, False) for w in words), question.query.exclude, True, (), words
        )
        more = self._matches(query, within, filters, sessions, pool)
        # Read against the best record they find besides the first hits, which hold them all.
        more = {k: f for k, f in more.items() if k not in chosen}
        their_best = min((f.hit.score for f in more.values()), default=0.0)
        if their_best >= 0:
            return
        for key, f in more.items():
            score = ranking.FEEDBACK * best * f.hit.score / their_best
            if key not in found:
                found[key] = f._replace(hit=f.hit._replace(score=score))
            elif FEEDBACK_LIFTS and score < found[key].hit.score:
                found[key] = found[key]._replace(hit=found[key].hit._replace(score=score))

    def _matches(
        self,
        query: search.Query,
        kinds: Sequence[str],
        filters: EntryFilter,
        sessions: Sequence[str] | None,
        pool: int,
    ) -> dict[Key, Found]:
        """Each index's best `pool` matches (bm25 in hit.score)."""
        from clew.search.coverage import Found

        found: dict[Key, Found] = {}
        if "entry" in kinds and sessions is None:
            for h in self._store.search_entries(query, filters, limit=pool):
                found[("entry", h.entry.id)] = Found(
                    entry_hit(h.entry, h.snippet, h.score), _text_of(h.entry)
                )
        outlined = [k for k in kinds if k in OUTLINE_KINDS]
        if outlined and sessions is None:
            from clew.archive import outline

            for d in outline.found(self._store, outlined, filters, query, pool):
                found[(d.hit.kind, d.hit.id)] = Found(d.hit, d.hit.title + "\n" + d.text)
        others = [k for k in kinds if k != "entry" and k not in OUTLINE_KINDS]
        if others and not (filters.types or filters.statuses or filters.tags):
            records = self._store.search_records(
                query,
                others,
                task_id=filters.task_id,
                step_id=filters.subtask_id,
                session_ids=sessions,
                since=filters.since,
                until=filters.until,
                limit=pool,
            )
            turn_ids = [r.id for r in records if r.kind == "turn"]
            turns = {t.id: t for t in self._store.turns_by_id(turn_ids)}
            for r in records:
                turn = turns.get(r.id) if r.kind == "turn" else None
                found[(r.kind, r.id)] = found_of(r, turn)
        return found

    def seen_before(self, error: str, *, command: str | None = None) -> ErrorHistory:
        """Look an error up by its fingerprint: where it was seen and which fixes worked;
        and, in `similar`, errors and failed commands like it whose text differs."""
        found = self._archive._fingerprinted(error, command)
        known = {e.id for e in found.errors} | {a.id for a in found.failed_commands}
        probe = telling_line(error) or error[:SIMILAR_CHARS]
        try:
            hits = self._search(
                probe[:SIMILAR_CHARS],
                ("entry", "action"),
                EntryFilter(),
                None,
                "auto",
                3 * SIMILAR,
                False,
            )
        except ValidationError:  # no words to look for
            return found
        alike = [h for h in hits if h.id not in known and is_failure(h)]
        return found._replace(similar=tuple(alike[:SIMILAR]))

    # -- meaning (the vectors extra) ------------------------------------------------------

    def _dense_mode(self, mode: str) -> bool:
        """Whether this search ranks by meaning too: always for dense and hybrid (an error
        without the extra), for auto when the extra is installed."""
        if mode == "keyword":
            return False
        if mode == "auto":
            return embedder_available()
        load_embedder()  # raises VectorsUnavailable, with what to install
        return True

    def _catch_up_size(self) -> int:
        """How many pending records a search embeds before it ranks, for this model."""
        return CATCH_UP_BY_MODEL.get(self._vectors._embedder().model_id.partition("@")[0], CATCH_UP)

    def _nearest(
        self,
        vector: np.ndarray,
        kinds: Sequence[str],
        filters: EntryFilter,
        sessions: Sequence[str] | None,
        pool: int,
    ) -> list[tuple[Key, float]]:
        """The records nearest the question in meaning, best first, of the kinds and in the
        scope asked for (of the records embedded: `_search` catches up on at most CATCH_UP
        first, the rest later, so that keyword search never waits for them)."""
        kinds = [k for k in kinds if (k != "entry" or sessions is None) and k in RECORD_KINDS]
        if filters.types or filters.statuses or filters.tags:
            kinds = [k for k in kinds if k == "entry"]
        if not kinds:
            return []
        found = self._vectors._nearest_to(
            vector,
            kinds=kinds,
            task_id=filters.task_id,
            step_id=filters.subtask_id,
            session_ids=sessions,
            since=filters.since,
            until=filters.until,
            limit=pool if not (filters.types or filters.statuses or filters.tags) else 2 * pool,
        )
        if filters.types or filters.statuses or filters.tags:
            get_entry = self._store.get_entry
            found = [f for f in found if passes_filters(get_entry(f[1]), filters)][:pool]
        # Below MIN_COSINE a record is about something else (a floor measured on the packaged
        # model: unrelated texts score about 0.25 and under, related ones 0.3 and over).
        return [((kind, ident), cosine) for kind, ident, cosine in found if cosine >= MIN_COSINE]

    def _describe(self, keys: Sequence[Key]) -> dict[Key, RecordHit]:
        """Hits for records found by meaning alone."""
        described: dict[Key, RecordHit] = {}
        turn_ids = [ident for kind, ident in keys if kind == "turn"]
        for t in self._store.turns_by_id(turn_ids):
            described[("turn", t.id)] = turn_hit(t)
        for kind, ident in keys:
            try:
                if kind == "entry":
                    described[(kind, ident)] = entry_hit(self._store.get_entry(ident))
                elif kind == "action":
                    described[(kind, ident)] = action_hit(self._store.get_action(ident))
                elif kind == "message":
                    described[(kind, ident)] = message_hit(self._store.get_message(ident))
                elif kind == "decision":
                    described[(kind, ident)] = decision_hit(self._store.get_trace_decision(ident))
            except (ValidationError, NotFoundError):  # embedded, then deleted
                continue
        return described
