"""`recall`, a service of the Memory facade and the conversation_recall tool's engine: a
session's turns found by search, by range, by tool, by the entry they were the source of, or its
summary, each within a token budget and shown with the turns around them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from clew.archive.entries import Archive
from clew.conversations import recall
from clew.conversations.recall import RECALL_ACTIONS, RECALL_BUDGET, Fitted
from clew.conversations.sessions import Sessions
from clew.core import checks
from clew.core.text import clip, counted
from clew.core.tokens import counter
from clew.errors import ValidationError
from clew.kernel import Kernel, Service
from clew.models import EntryFilter, RecordHit, Session, Turn
from clew.search.retrieval import Retrieval

RECALL_LIMIT = 10
MIN_RECALL_BUDGET = 1_000


class Recall(NamedTuple):
    """What conversation_recall returns: `text` for the model, the rest for programs."""

    session_id: str
    action: str
    text: str
    tokens: int
    turns: tuple[Turn, ...]  # shown, in order
    matches: tuple[int, ...]  # turn numbers that matched (search, tool_calls, around, source)
    omitted: tuple[int, ...]  # turn numbers left out for the budget
    clipped: tuple[int, ...]  # turn numbers shown shortened
    # For search: the turns found, best first, with their scores (each names its session:
    # a search with no session named looks through all of the workspace's sessions).
    hits: tuple[RecordHit, ...] = ()


class Recollection(Service):
    """Recall over a session's turns (a service of Memory): it reads sessions through the
    sessions service, finds turns with search's engine and an entry's source turns through
    the archive."""

    def __init__(
        self, kernel: Kernel, sessions: Sessions, archive: Archive, retrieval: Retrieval
    ) -> None:
        super().__init__(kernel)
        self._sessions = sessions
        self._archive = archive
        self._retrieval = retrieval

    # -- recall ---------------------------------------------------------------------------

    def recall(
        self,
        session: str | None = None,
        action: str = "search",
        *,
        workspace: str | None = None,
        query: str | None = None,
        tool_name: str | None = None,
        start_turn: int | None = None,
        end_turn: int | None = None,
        turn: int | None = None,
        entry_id: str | None = None,
        limit: int = RECALL_LIMIT,
        budget: int = RECALL_BUDGET,
    ) -> Recall:
        """conversation_recall: search the archive (the best turns first, each with the turn
        before and after), a `range` of turns, the results of a tool's past calls
        (`tool_calls`), a `summary`, the turns `around` one, or the verbatim turns an
        entry came from (`source`); compact text within `budget` tokens (8,000).

        Search looks through one session, or with none named every session of `workspace`
        (every session of the space without one). The other actions need a session."""
        if action not in RECALL_ACTIONS:
            raise ValidationError(
                f"recall action {action!r} is not one of: {', '.join(RECALL_ACTIONS)}"
            )
        limit = checks.count(limit, "limit")
        budget = checks.integer(budget, "budget")
        if budget < MIN_RECALL_BUDGET:
            raise ValidationError(f"budget must be at least {MIN_RECALL_BUDGET} tokens")
        with self._store.transaction():
            if action == "search" and session is None:
                sessions = self._sessions.list_sessions(workspace)
                if not sessions:
                    where = f"the workspace {workspace}" if workspace else "this store"
                    raise ValidationError(f"no session belongs to {where}: record some turns first")
                return self._recall_search(
                    sessions, _required(query, "query", action), limit, budget, workspace=workspace
                )
            current = self._sessions.get_session(_required(session, "session", action))
            if action == "summary":
                return self._recall_summary(current, budget)
            if action == "search":
                return self._recall_search(
                    [current], _required(query, "query", action), limit, budget
                )
            if action == "range":
                return self._recall_range(current, start_turn, end_turn, budget)
            if action == "tool_calls":
                name = _required(tool_name, "tool_name", action)
                return self._recall_tools(current, name, limit, budget)
            if action == "around":
                number = self._turn_number(current, _required(turn, "turn", action), "turn")
                radius = min(limit, 50)
                groups = [
                    self._store.get_turns(
                        current.id, first=max(1, number - radius), last=number + radius
                    )
                ]
                head = f"Turns around turn {number} of session {current.id}:"
                return self._recall(current, action, groups, {number}, head, budget)
            return self._recall_source(current, _required(entry_id, "entry_id", action), budget)

    def _recall(
        self,
        current: Session,
        action: str,
        groups: Sequence[Sequence[Turn]],
        matches: set[int],
        head: str,
        budget: int,
        *,
        keep_oldest: bool = False,
    ) -> Recall:
        shown = [t for g in groups for t in g]
        calls = recall.call_texts(shown)
        wanted = sorted({t.call_turn for t in shown if t.call_turn} - {t.number for t in shown})
        calls.update(recall.call_texts(self._store.turns_numbered(current.id, wanted)))
        fitted: Fitted = recall.fit(
            current.id,
            groups,
            calls,
            counter(),
            budget=budget,
            matches=frozenset(matches),
            head_text=head,
            keep_oldest=keep_oldest,
        )
        return Recall(
            current.id,
            action,
            fitted.text,
            fitted.tokens,
            fitted.shown,
            tuple(sorted(matches)),
            fitted.omitted,
            fitted.clipped,
        )

    def _recall_search(
        self,
        sessions: Sequence[Session],
        query: str,
        limit: int,
        budget: int,
        *,
        workspace: str | None = None,
    ) -> Recall:
        """The best turns of these sessions for a query, each with its neighbours: one
        section per session, the session of the best hit first."""
        # Every session of the store: no list of them to send to the store.
        ids = None if workspace is None and len(sessions) > 1 else [s.id for s in sessions]
        hits = self._retrieval._search(query, ("turn",), EntryFilter(), ids, "auto", limit, False)
        scope = (
            f"session {sessions[0].id}"
            if len(sessions) == 1 and workspace is None
            else f"the {counted(len(sessions), 'session')} of {workspace or 'this store'}"
        )
        first = sessions[0].id if len(sessions) == 1 else hits[0].session_id if hits else ""
        if not hits:
            text = (
                f"No turn of {scope} matches {query!r}. Try other words, or"
                f" {recall.SUMMARY_HINT} for what a session did.\n"
            )
            return Recall(first or "", "search", text, counter().text(text), (), (), (), ())
        by_session: dict[str, list[RecordHit]] = {}
        for h in hits:
            by_session.setdefault(h.session_id or "", []).append(h)
        places = ", ".join(f"{h.session_id}#{h.turn} ({h.score:.2f})" for h in hits)
        verb = "matches" if len(hits) == 1 else "match"
        parts = [f"{counted(len(hits), 'turn')} of {scope} {verb} {query!r}, best first: {places}."]
        shown: list[Turn] = []
        omitted: list[int] = []
        clipped: list[int] = []
        for sid, found in by_session.items():
            current = self._store.get_session(sid)
            rank = {h.turn: i for i, h in enumerate(found)}
            wanted = sorted(
                {n + d for n in rank for d in (-1, 0, 1) if n is not None and n + d >= 1}
            )
            by_number = {t.number: t for t in self._store.turns_numbered(sid, wanted)}
            runs = _runs([by_number[n] for n in wanted if n in by_number])
            runs.sort(key=lambda run: min(rank.get(t.number, len(rank)) for t in run))
            share = max(MIN_RECALL_BUDGET // 2, budget * len(found) // len(hits))
            title = f" '{clip(current.title, 60)}'" if current.title else ""
            head = f"Session {sid}{title}, {current.started_at[:16]}:"
            part = self._recall(
                current, "search", runs, {n for n in rank if n}, head, share, keep_oldest=True
            )
            parts.append(part.text.rstrip("\n"))
            shown += part.turns
            omitted += part.omitted
            clipped += part.clipped
        text = clip_lines("\n\n".join(parts) + "\n", budget)
        matches = tuple(h.turn for h in hits if h.turn is not None)
        return Recall(
            first or "",
            "search",
            text,
            counter().text(text),
            tuple(shown),
            matches,
            tuple(omitted),
            tuple(clipped),
            tuple(hits),
        )

    def _recall_range(
        self, current: Session, start: int | None, end: int | None, budget: int
    ) -> Recall:
        first = self._turn_number(current, _required(start, "start_turn", "range"), "start_turn")
        last = self._turn_number(current, end if end is not None else first, "end_turn")
        if last < first:
            raise ValidationError(f"end_turn {last} is before start_turn {first}")
        shown = self._store.get_turns(current.id, first=first, last=last)
        head = f"Turns {first}-{last} of session {current.id} ({current.turn_count} in all):"
        return self._recall(
            current, "range", [[t] for t in shown], set(), head, budget, keep_oldest=True
        )

    def _recall_tools(self, current: Session, name: str, limit: int, budget: int) -> Recall:
        results = self._store.tool_turns(current.id, name, limit=limit)
        if not results:
            used = self._store.turn_stats(current.id)["tools"]
            names = ", ".join(list(used)[:20]) or "none yet"
            text = f"No call of tool {name!r} in session {current.id}. Tools called: {names}.\n"
            return Recall(current.id, "tool_calls", text, counter().text(text), (), (), (), ())
        newest = counted(len(results), "newest result")
        head = f"The {newest} of tool {name!r} in session {current.id}:"
        groups = [[t] for t in reversed(results)]
        return self._recall(current, "tool_calls", groups, set(), head, budget)

    def _recall_source(self, current: Session, entry_id: str, budget: int) -> Recall:
        entry = self._archive.get_entry(entry_id)
        ids = [ident for kind, ident in entry.sources if kind == "turn"]
        shown = [t for t in self._store.turns_by_id(ids) if t.session_id == current.id]
        if not shown:
            elsewhere = len(ids) - len(shown)
            where = f" ({elsewhere} in other sessions)" if elsewhere else ""
            text = f"Entry {entry.id} has no source turns in session {current.id}{where}.\n"
            return Recall(current.id, "source", text, counter().text(text), (), (), (), ())
        head = f"The turns entry {entry.id} ({clip(entry.summary, 80)}) came from:"
        return self._recall(
            current, "source", _runs(shown), {t.number for t in shown}, head, budget
        )

    def _recall_summary(self, current: Session, budget: int) -> Recall:
        stats = self._store.turn_stats(current.id)
        state = self._sessions.session_state(current.id)
        roles = ", ".join(f"{n} {r}" for r, n in sorted(stats["roles"].items()))
        tools = ", ".join(f"{name} x{n}" for name, n in list(stats["tools"].items())[:15])
        lines = [
            f"Session {current.id}: {current.turn_count} turns ({roles or 'none'}),"
            f" about {current.total_tokens:,} tokens, {current.started_at} to"
            f" {current.last_active_at}.",
        ]
        if tools:
            lines.append(f"Tools used: {tools}.")
        lines += ["", state.text.rstrip(), "", f"Fetch any turns with {recall.RANGE_HINT}."]
        text = clip_lines("\n".join(lines) + "\n", budget)
        return Recall(current.id, "summary", text, counter().text(text), (), (), (), ())

    def _turn_number(self, current: Session, value: object, field: str) -> int:
        number = checks.integer(value, field)
        if not 1 <= number <= current.turn_count:
            span = f"1-{current.turn_count}" if current.turn_count else "none yet"
            raise ValidationError(
                f"{field} {number} is out of range: session {current.id} has turns {span}"
            )
        return number

    def recall_hint(self, message: str) -> str | None:
        """The note to give the model when a user message refers to earlier conversation
        ("that error", "like we discussed"), or None."""
        from clew.conversations import hints  # lazily: not on the hook path

        return hints.hint(checks.text(message, "message"))


def _required(value: Any, field: str, action: str) -> Any:
    if value is None or (isinstance(value, str) and not value.strip()):
        raise ValidationError(f"recall action {action!r} needs {field}")
    return checks.unicode(value, field) if isinstance(value, str) else value


def _runs(shown: Sequence[Turn]) -> list[list[Turn]]:
    """Turns (in order) split into runs of consecutive numbers."""
    runs: list[list[Turn]] = []
    for t in shown:
        if runs and runs[-1][-1].number == t.number - 1:
            runs[-1].append(t)
        else:
            runs.append([t])
    return runs


def clip_lines(text: str, budget: int) -> str:
    """Text cut at a line so that it stays within `budget` tokens."""
    count = counter()
    if count.text(text) <= budget:
        return text
    lines = text.splitlines()
    while lines and count.text("\n".join(lines) + "\n[… cut to the budget]\n") > budget:
        lines.pop()
    return "\n".join(lines) + "\n[… cut to the budget]\n"
