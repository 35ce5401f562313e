"""The conversation archive: sessions whose every message is kept verbatim as a
turn, written through before the call returns; the session state folded from the turns;
`recall`, the conversation_recall tool's engine; token-aware context assembly; resume;
import and export.

Nothing is ever deleted: popping or clearing a session (the Agents SDK's `pop_item`,
`clear_session`) hides turns from the session's view, and recall still finds them.
"""

from __future__ import annotations

import functools
import os
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from clew import checks, hints, recall, search, turns
from clew.archive import Archive
from clew.brief import clip, current_step
from clew.context import TIER_BUDGETS, Context, Section, assemble, tier_caps
from clew.errors import NotFoundError, ValidationError
from clew.ids import new_id
from clew.location import real_path, related
from clew.models import EntryStatus, Session, Turn
from clew.recall import RECALL_ACTIONS, RECALL_BUDGET, Fitted
from clew.semantic import guardrail_lines
from clew.session_state import STATE_BUDGET as SESSION_STATE_BUDGET
from clew.session_state import render as render_session_state
from clew.state import MAX_BUDGET
from clew.tokens import counter
from clew.working import Working

RECALL_LIMIT = 10
CONTEXT_BUDGET = 32_000
MIN_CONTEXT_BUDGET, MAX_CONTEXT_BUDGET = 1_000, 10_000_000
MIN_RECALL_BUDGET = 1_000
ENTRIES_SHOWN = 20
_MEASURED = 50_000  # exact token counts of turns remembered, by turn id
_FIRST_PAGE = 256  # turns loaded for context assembly, then four times more while needed
_SESSION_FIELDS = ("workspace", "model", "system_prompt", "task_id", "title")


class SessionState(NamedTuple):
    """The session state as YAML for the prompt, and the facts it shows."""

    session_id: str
    text: str
    tokens: int
    state: dict[str, Any]


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


class Resumed(NamedTuple):
    """A resumed session and the prompt to go on with."""

    session: Session
    context: Context


class Conversations(Archive, Working):
    """Sessions, turns, recall and context assembly (mixed into Memory)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._measured: OrderedDict[str, int] = OrderedDict()  # exact tokens by turn id

    # -- sessions -------------------------------------------------------------------------

    def start_session(
        self,
        *,
        workspace: str | None = None,
        model: str | None = None,
        system_prompt: str | None = None,
        task_id: str | None = None,
        title: str | None = None,
        key: str | None = None,
    ) -> Session:
        """Start a conversation. `key` is the caller's own unique name for it (an Agents
        SDK session_id); `task_id` links it to a task, whose state then joins its prompt."""
        session_id = new_id()
        data = {
            "id": session_id,
            "key": checks.optional_text(key, "session key", max_chars=checks.MAX_NAME_CHARS),
            "workspace": checks.optional_text(workspace, "workspace"),
            "model": checks.optional_text(model, "model", max_chars=checks.MAX_NAME_CHARS),
            "system_prompt": checks.optional_text(system_prompt, "system prompt"),
            "title": checks.optional_text(title, "title", max_chars=checks.MAX_NAME_CHARS),
            "task_id": None,
        }
        with self._write() as at:
            if task_id is not None:
                data["task_id"] = self._task_id(task_id)
            if data["key"] is not None and self._store.session_by_key(data["key"]) is not None:
                raise ValidationError(
                    f"a session with key {data['key']!r} already exists; open it with"
                    f" `clew session show {data['key']}`"
                )
            self._emit("session.started", data["task_id"], {"session": data}, at)
            return self._store.get_session(session_id)

    def open_session(self, key: str, /, **fields: str | None) -> Session:
        """The session with this key, started (with `fields`, as for start_session) if
        there is none, and made active again if it had ended: for adapters whose sessions
        are named by the caller."""
        checks.text(key, "session key")
        with self._write():
            found = self._store.session_by_key(key)
            if found is None:
                return self.start_session(key=key, **fields)
            return found if found.active else self._set_active(found.id, True)

    def get_session(self, session: str) -> Session:
        """A session by its id (or an unambiguous prefix) or its key."""
        return self._session(session)

    def list_sessions(
        self, workspace: str | None = None, *, active_only: bool = False, limit: int | None = None
    ) -> list[Session]:
        """Sessions, the most recently active first; with a workspace, those whose workspace
        is it, holds it or lies within it."""
        if limit is not None:
            limit = checks.count(limit, "limit")
        if workspace is None:  # nothing to filter here: the store limits in SQL
            return self._store.list_sessions(active_only=active_only, limit=limit)
        here = real_path(checks.text(workspace, "workspace"))
        found = self._store.list_sessions(active_only=active_only)
        found = [s for s in found if s.workspace and related(real_path(s.workspace), here)]
        return found[:limit] if limit is not None else found

    def update_session(self, session: str, /, **changes: str | None) -> Session:
        """Change a session's workspace, model, system prompt, task or title."""
        unknown = set(changes) - set(_SESSION_FIELDS)
        if unknown:
            raise ValidationError(
                f"cannot change {', '.join(sorted(unknown))} of a session; one can change:"
                f" {', '.join(_SESSION_FIELDS)}"
            )
        clean = {k: checks.optional_text(v, k.replace("_", " ")) for k, v in changes.items()}
        with self._write() as at:
            sid = self._session_id(session)
            if clean.get("task_id") is not None:
                clean["task_id"] = self._task_id(clean["task_id"])  # type: ignore[arg-type]
            if clean:
                task = self._store.get_session(sid).task_id
                self._emit("session.updated", task, {"session_id": sid, "changes": clean}, at)
            return self._store.get_session(sid)

    def end_session(self, session: str) -> Session:
        """Mark a session inactive; resuming it makes it active again."""
        return self._set_active(session, False)

    def _set_active(self, session: str, active: bool) -> Session:
        with self._write() as at:
            current = self._session(session)
            if current.active != active:
                data = {"session_id": current.id, "changes": {"active": active}}
                self._emit("session.updated", current.task_id, data, at)
            return self._store.get_session(current.id)

    def _session(self, ident: str) -> Session:
        """A session by its exact id or key (one query), else by an id prefix."""
        if not isinstance(ident, str) or not ident.strip():
            raise ValidationError("session must be a session id or key, as text")
        found = self._store.find_session(ident)
        if found is not None:
            return found
        return self._store.get_session(self._resolve("session", ident))

    def _session_id(self, ident: str) -> str:
        return self._session(ident).id

    # -- turns ----------------------------------------------------------------------------

    def append_turn(
        self,
        session: str,
        message: dict[str, Any] | None = None,
        /,
        *,
        role: str | None = None,
        content: Any = None,
        tool_calls: list[dict[str, Any]] | None = None,
        tool_call_id: str | None = None,
        name: str | None = None,
        tool_name: str | None = None,
    ) -> Turn:
        """Archive one message verbatim; it is committed when this returns.

        Give the message as the agent sends it (an OpenAI chat message or a Responses /
        Agents SDK item), or its fields (`role`, `content`, ...). `tool_name` names the
        tool a result came from when the message does not (found from its call if it can
        be)."""
        if message is None:
            fields = {"role": role, "content": content, "tool_calls": tool_calls,
                      "tool_call_id": tool_call_id, "name": name}  # fmt: skip
            message = {k: v for k, v in fields.items() if v is not None or k == "content"}
        elif any(v is not None for v in (role, content, tool_calls, tool_call_id, name)):
            raise ValidationError("give a message, or its fields (role, content...), not both")
        return self.append_turns(session, [message], tool_name=tool_name)[0]

    def append_turns(
        self, session: str, messages: Iterable[dict[str, Any]], *, tool_name: str | None = None
    ) -> list[Turn]:
        """Archive messages in order, all or none, in one transaction."""
        if isinstance(messages, str | bytes | dict):
            raise ValidationError("messages must be a list of messages, not one")
        items = list(messages)
        parsed = [self._checked(m, f"message {n}") for n, m in enumerate(items, 1)]
        tool = checks.optional_text(tool_name, "tool name", max_chars=checks.MAX_NAME_CHARS)
        with self._write() as at:
            current = self._session(session)
            if not current.active:
                raise ValidationError(
                    f"session {current.id} has ended; resume it first with"
                    f" `clew session resume {current.id}`"
                )
            # The calls awaiting results, so that a result knows its tool and its call's turn.
            pending: dict[str, Any] = dict(current.state.get("calls", {}))
            added = []
            for number, (message, parts) in enumerate(parsed, current.turn_count + 1):
                call, name = {}, None
                if parts.role == "tool":
                    call = pending.pop(parts.tool_call_id or "", {})
                    name = tool or parts.tool_name or call.get("name")
                for c in parts.tool_calls:
                    if c.id:
                        pending[c.id] = {"name": c.name, "turn": number}
                made = tuple((c.id, c.name, c.arguments) for c in parts.tool_calls)
                turn = Turn(
                    new_id(), current.space, current.id, number, parts.role, parts.text, message,
                    made, parts.tool_call_id, name, call.get("turn"),
                    turns.estimate_tokens(parts.text, parts.tool_calls), False, at,
                )  # fmt: skip
                data = {"id": turn.id, "number": number, "message": message,
                        "token_count": turn.token_count, "tool_name": name,
                        "call_turn": turn.call_turn}  # fmt: skip
                self._emit(
                    "turn.appended", current.task_id, {"session_id": current.id, "turn": data}, at
                )
                added.append(turn)
            return added

    @staticmethod
    def _checked(message: object, where: str) -> tuple[dict[str, Any], turns.Parts]:
        normalized = checks.json_object(message, where)
        return normalized, turns.parse(normalized, where)

    def list_turns(
        self,
        session: str,
        *,
        first: int | None = None,
        last: int | None = None,
        newest: int | None = None,
        include_hidden: bool = False,
    ) -> list[Turn]:
        """A session's turns in order: numbers `first`..`last`, or the `newest` N; hidden
        turns only when asked for."""
        sid = self._session_id(session)
        if newest is not None:
            newest = checks.count(newest, "newest")
        for value, field in ((first, "first"), (last, "last")):
            if value is not None:
                checks.count(value, f"{field} turn")
        return self._store.get_turns(
            sid, first=first, last=last, newest=newest, include_hidden=include_hidden
        )

    def pop_turn(self, session: str) -> Turn | None:
        """Hide the newest visible turn from the session's view and return it (None if
        there is none); the archive keeps it."""
        with self._write() as at:
            current = self._session(session)
            newest = self._store.get_turns(current.id, newest=1, include_hidden=False)
            if not newest:
                return None
            data = {"session_id": current.id, "turn": newest[0].number}
            self._emit("turns.hidden", current.task_id, data, at)
            return self._store.turns_numbered(current.id, [newest[0].number])[0]

    def clear_session(self, session: str) -> int:
        """Hide every turn from the session's view (the archive keeps them); return how
        many were visible."""
        with self._write() as at:
            current = self._session(session)
            visible = self._store.count_turns(current.id)
            if visible:
                data = {"session_id": current.id, "through": current.turn_count}
                self._emit("turns.hidden", current.task_id, data, at)
            return visible

    # -- session state --------------------------------------------------------------------

    def session_state(self, session: str, *, budget: int = SESSION_STATE_BUDGET) -> SessionState:
        """The session state (files touched, key decisions, errors resolved, current focus)
        as YAML within `budget` tokens."""
        current = self._session(session)
        limit = checks.budget(budget)
        header = {
            "id": current.id,
            "workspace": current.workspace,
            "model": current.model,
            "turn_count": current.turn_count,
            "total_tokens": current.total_tokens,
        }
        text = render_session_state(
            {k: v for k, v in header.items() if v is not None}, current.state, counter(), limit
        )
        public = {k: v for k, v in current.state.items() if k != "calls"}
        return SessionState(current.id, text, counter().text(text), public)

    # -- recall ---------------------------------------------------------------------------

    def recall(
        self,
        session: str,
        action: str = "search",
        *,
        query: str | None = None,
        tool_name: str | None = None,
        start_turn: int | None = None,
        end_turn: int | None = None,
        turn: int | None = None,
        entry_id: str | None = None,
        limit: int = RECALL_LIMIT,
        budget: int = RECALL_BUDGET,
    ) -> Recall:
        """conversation_recall: search the session's archive (each hit with the turn before
        and after, exact matches first), a `range` of turns, the results of a tool's past
        calls (`tool_calls`), a `summary`, the turns `around` one, or the verbatim turns an
        entry came from (`source`); compact text within `budget` tokens (8,000)."""
        if action not in RECALL_ACTIONS:
            raise ValidationError(
                f"recall action {action!r} is not one of: {', '.join(RECALL_ACTIONS)}"
            )
        limit = checks.count(limit, "limit")
        budget = checks.integer(budget, "budget")
        if budget < MIN_RECALL_BUDGET:
            raise ValidationError(f"budget must be at least {MIN_RECALL_BUDGET} tokens")
        with self._store.transaction():
            current = self._session(session)
            if action == "summary":
                return self._recall_summary(current, budget)
            if action == "search":
                return self._recall_search(current, _required(query, "query", action), limit,
                                           budget)  # fmt: skip
            if action == "range":
                return self._recall_range(current, start_turn, end_turn, budget)
            if action == "tool_calls":
                name = _required(tool_name, "tool_name", action)
                return self._recall_tools(current, name, limit, budget)
            if action == "around":
                number = self._turn_number(current, _required(turn, "turn", action), "turn")
                radius = min(limit, 50)
                groups = [self._store.get_turns(current.id, first=max(1, number - radius),
                                                last=number + radius)]  # fmt: skip
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
            current.id, groups, calls, counter(), budget=budget, matches=frozenset(matches),
            head_text=head, keep_oldest=keep_oldest,
        )  # fmt: skip
        return Recall(
            current.id, action, fitted.text, fitted.tokens, fitted.shown,
            tuple(sorted(matches)), fitted.omitted, fitted.clipped,
        )  # fmt: skip

    def _recall_search(self, current: Session, query: str, limit: int, budget: int) -> Recall:
        parsed = search.parse(query)
        fetch = min(max(3 * limit, 30), 200)
        hits = self._store.search_turns(current.id, parsed, limit=fetch)
        if not hits and len(parsed.terms) > 1:
            parsed = search.parse(query, any_terms=True)
            hits = self._store.search_turns(current.id, parsed, limit=fetch)
        # Exact matches first: the whole query as typed, then every identifier in it.
        needle = " ".join(query.split()).casefold()

        def exactness(hit: tuple[Turn, float, str]) -> int:
            text = " ".join((hit[0].text or "").split()).casefold()
            if needle and needle in text:
                return 0
            return 1 if parsed.identifiers and search.contains_all(text, parsed.identifiers) else 2

        hits.sort(key=exactness)  # stable: bm25 order within each kind
        found = sorted(h[0].number for h in hits[:limit])
        if not found:
            text = (
                f"No turn of session {current.id} matches {query!r}. Try other words, or"
                f" {recall.SUMMARY_HINT} for what the session did.\n"
            )
            return Recall(current.id, "search", text, counter().text(text), (), (), (), ())
        wanted = sorted({n + d for n in found for d in (-1, 0, 1) if n + d >= 1})
        by_number = {t.number: t for t in self._store.turns_numbered(current.id, wanted)}
        groups = _runs([by_number[n] for n in wanted if n in by_number])
        head = (
            f"{len(found)} turn(s) of session {current.id} match {query!r}"
            f"{' (the best ' + str(limit) + ')' if len(hits) > limit else ''},"
            " each with the turn before and after:"
        )
        return self._recall(current, "search", groups, set(found), head, budget)

    def _recall_range(
        self, current: Session, start: int | None, end: int | None, budget: int
    ) -> Recall:
        first = self._turn_number(current, _required(start, "start_turn", "range"), "start_turn")
        last = self._turn_number(current, end if end is not None else first, "end_turn")
        if last < first:
            raise ValidationError(f"end_turn {last} is before start_turn {first}")
        shown = self._store.get_turns(current.id, first=first, last=last)
        head = f"Turns {first}-{last} of session {current.id} ({current.turn_count} in all):"
        return self._recall(current, "range", [[t] for t in shown], set(), head, budget,
                            keep_oldest=True)  # fmt: skip

    def _recall_tools(self, current: Session, name: str, limit: int, budget: int) -> Recall:
        results = self._store.tool_turns(current.id, name, limit=limit)
        if not results:
            used = self._store.turn_stats(current.id)["tools"]
            names = ", ".join(list(used)[:20]) or "none yet"
            text = f"No call of tool {name!r} in session {current.id}. Tools called: {names}.\n"
            return Recall(current.id, "tool_calls", text, counter().text(text), (), (), (), ())
        head = f"The {len(results)} newest result(s) of tool {name!r} in session {current.id}:"
        groups = [[t] for t in reversed(results)]
        return self._recall(current, "tool_calls", groups, set(), head, budget)

    def _recall_source(self, current: Session, entry_id: str, budget: int) -> Recall:
        entry = self.get_entry(entry_id)
        ids = [ident for kind, ident in entry.sources if kind == "turn"]
        shown = [t for t in self._store.turns_by_id(ids) if t.session_id == current.id]
        if not shown:
            elsewhere = len(ids) - len(shown)
            where = f" ({elsewhere} in other sessions)" if elsewhere else ""
            text = f"Entry {entry.id} has no source turns in session {current.id}{where}.\n"
            return Recall(current.id, "source", text, counter().text(text), (), (), (), ())
        head = f"The turns entry {entry.id} ({clip(entry.summary, 80)}) came from:"
        return self._recall(current, "source", _runs(shown), {t.number for t in shown}, head,
                            budget)  # fmt: skip

    def _recall_summary(self, current: Session, budget: int) -> Recall:
        stats = self._store.turn_stats(current.id)
        state = self.session_state(current.id)
        roles = ", ".join(f"{n} {r}" for r, n in sorted(stats["roles"].items()))
        tools = ", ".join(f"{name} x{n}" for name, n in list(stats["tools"].items())[:15])
        lines = [
            f"Session {current.id}: {current.turn_count} turns ({roles or 'none'}),"
            f" about {current.total_tokens:,} tokens, {current.started_at} to"
            f" {current.last_active_at}.",
        ]
        if tools:
            lines.append(f"Tools used: {tools}.")
        lines += ["", state.text.rstrip(), "",
                  f"Fetch any turns with {recall.RANGE_HINT}."]  # fmt: skip
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
        return hints.hint(checks.text(message, "message"))

    # -- context assembly -----------------------------------------------------------------

    def assemble_context(
        self,
        session: str,
        *,
        budget: int = CONTEXT_BUDGET,
        system_prompt: str | None = None,
        task_id: str | None = None,
        retrieved: str | None = None,
        tiers: dict[str, int] | None = None,
    ) -> Context:
        """The prompt to send next: the system prompt (given, else the session's), the task
        state (the session's task, or `task_id`), the session state, the guardrails, the
        task's relevant entries, `retrieved` context, and as many recent turns as fit in
        `budget` tokens; each tier within its own budget (`tiers` overrides them: see
        context.TIER_BUDGETS). `Context.tiers` explains what went in and what was left out."""
        budget = checks.integer(budget, "budget")
        if not MIN_CONTEXT_BUDGET <= budget <= MAX_CONTEXT_BUDGET:
            raise ValidationError(
                f"budget {budget} is out of range: use {MIN_CONTEXT_BUDGET}-{MAX_CONTEXT_BUDGET}"
            )
        caps = tier_caps(TIER_BUDGETS, tiers)
        with self._store.transaction():
            current = self._session(session)
            tid = self._task_id(task_id) if task_id is not None else current.task_id
            sections = self._sections(current, tid, retrieved)
            prompt, lead = self._system_prompt(current, system_prompt)
            page = _FIRST_PAGE
            while True:
                loaded, earlier = self._recent(current.id, page)
                if lead:  # the leading system turn is the system prompt: not sent twice
                    loaded = [t for t in loaded if t.number != 1]
                    earlier = max(0, earlier - 1)
                try:
                    context, more = assemble(
                        budget=budget, system_prompt=prompt, sections=sections,
                        turns=loaded, earlier=earlier, measure=self._measure, counter=counter(),
                        tier_budgets=caps, hint=_hint,
                    )  # fmt: skip
                except ValueError as exc:
                    raise ValidationError(f"{exc}; raise the budget") from None
                if not more:
                    return context
                page *= 4

    def _system_prompt(self, current: Session, given: str | None) -> tuple[str, bool]:
        """The system prompt: the one given, else the session's; failing both, a leading
        system turn of the conversation (and whether it is that)."""
        prompt = checks.optional_text(given, "system prompt") or current.system_prompt
        if prompt is not None:
            return prompt, False
        first = self._store.turns_numbered(current.id, [1])
        if first and first[0].role == "system" and not first[0].hidden:
            return first[0].text or "", True
        return "", False

    def _recent(self, session_id: str, page: int) -> tuple[list[Turn], int]:
        """The newest `page` visible turns, reaching back to a user turn so that no tool
        call is cut from its result; and how many visible turns come before them."""
        loaded = self._store.get_turns(session_id, newest=page, include_hidden=False)
        if loaded and loaded[0].role != "user":
            start = self._store.last_user_turn(session_id, at_most=loaded[0].number)
            if start is not None:
                loaded = self._store.get_turns(session_id, first=start, include_hidden=False)
        earlier = self._store.count_turns(session_id, before=loaded[0].number) if loaded else 0
        return loaded, earlier

    def _measure(self, turn: Turn) -> int:
        """A turn's tokens by the real tokenizer, remembered for the next assembly."""
        cache = self._measured
        known = cache.get(turn.id)
        if known is None:
            text = "\n".join(
                [
                    turn.text or "",
                    *(f"{name}({arguments})" for _, name, arguments in turn.tool_calls),
                ]
            )
            known = cache[turn.id] = counter().text(text)
            if len(cache) > _MEASURED:
                cache.popitem(last=False)
        return int(known)

    def _sections(
        self, current: Session, task_id: str | None, retrieved: str | None
    ) -> list[Section]:
        """Every tier of the system message, empty ones too (the explain record lists them)."""
        sections: list[Section] = []
        if task_id is not None:
            state = functools.partial(self._state_text, task_id)
            sections.append(Section("task_state", "Task state", render=state))
        else:
            sections.append(Section("task_state", "Task state"))
        session_text = functools.partial(self._session_state_text, current.id)
        sections.append(Section("session_state", "Session state", render=session_text))
        rules = self._store.list_guardrails(enabled_only=True)
        lines = guardrail_lines(rules).splitlines() if rules else []
        sections.append(Section("guardrails", "Guardrails", tuple(lines)))
        entries = []
        if task_id is not None:
            step = current_step(self._store.get_plan(task_id))
            if step is not None:
                entries = self._store.relevant_entries(task_id, step[1].id, limit=ENTRIES_SHOWN)
        lines = [
            f"- [{e.type.value}] {clip(e.summary, 200)} (entry {e.id[:8]})"
            for e in entries
            if e.status != EntryStatus.SUPERSEDED
        ]
        sections.append(Section("entries", "Relevant memory", tuple(lines)))
        extra = checks.optional_text(retrieved, "retrieved context")
        lines = extra.splitlines() if extra is not None else []
        sections.append(Section("retrieved", "Retrieved from the archive", tuple(lines)))
        return sections

    def _state_text(self, task_id: str, budget: int) -> str:
        return self.state(task_id, budget=min(budget, MAX_BUDGET)).text

    def _session_state_text(self, session_id: str, budget: int) -> str:
        return self.session_state(session_id, budget=min(budget, MAX_BUDGET)).text

    # -- resume, import, export -----------------------------------------------------------

    def resume(
        self,
        session: str | None = None,
        *,
        workspace: str | None = None,
        budget: int = CONTEXT_BUDGET,
        system_prompt: str | None = None,
    ) -> Resumed:
        """Go on with a session: the one named, else the most recently active one of the
        workspace (the current directory if none is given). It becomes active again, and
        its prompt is assembled (a call without its result is repaired there)."""
        if session is None:
            where = workspace if workspace is not None else os.getcwd()
            found = self.list_sessions(where, limit=1)
            if not found:
                raise NotFoundError(
                    "session",
                    where,
                    "list every session with `clew session list --all`",
                    message=f"no session belongs to the workspace {where}",
                )
            session = found[0].id
        current = self._set_active(session, True)
        context = self.assemble_context(current.id, budget=budget, system_prompt=system_prompt)
        return Resumed(current, context)

    def import_session(
        self,
        messages: Sequence[dict[str, Any]],
        *,
        workspace: str | None = None,
        model: str | None = None,
        title: str | None = None,
        task_id: str | None = None,
        system_prompt: str | None = None,
    ) -> Session:
        """A new session holding `messages` (OpenAI chat messages or Responses items) as
        its turns, exactly; all or nothing."""
        items = checks.sequence(messages, "messages")
        with self._write():
            created = self.start_session(
                workspace=workspace, model=model, title=title, task_id=task_id,
                system_prompt=system_prompt,
            )  # fmt: skip
            if items:
                self.append_turns(created.id, items)  # type: ignore[arg-type]
            return self._store.get_session(created.id)

    def export_session(self, session: str, *, include_hidden: bool = True) -> list[dict[str, Any]]:
        """A session's messages exactly as they were given, in order (import_session takes
        them back)."""
        sid = self._session_id(session)
        return [t.message for t in self._store.get_turns(sid, include_hidden=include_hidden)]


def _required(value: Any, field: str, action: str) -> Any:
    if value is None or (isinstance(value, str) and not value.strip()):
        raise ValidationError(f"recall action {action!r} needs {field}")
    return value


def _runs(shown: Sequence[Turn]) -> list[list[Turn]]:
    """Turns (in order) split into runs of consecutive numbers."""
    runs: list[list[Turn]] = []
    for t in shown:
        if runs and runs[-1][-1].number == t.number - 1:
            runs[-1].append(t)
        else:
            runs.append([t])
    return runs


def _hint(turn: Turn) -> str | None:
    return hints.hint(turn.text or "")


def clip_lines(text: str, budget: int) -> str:
    """Text cut at a line so that it stays within `budget` tokens."""
    count = counter()
    if count.text(text) <= budget:
        return text
    lines = text.splitlines()
    while lines and count.text("\n".join(lines) + "\n[… cut to the budget]\n") > budget:
        lines.pop()
    return "\n".join(lines) + "\n[… cut to the budget]\n"
