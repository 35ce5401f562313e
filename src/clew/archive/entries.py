"""Layer 2's archive on the Memory facade: typed entries, one fact, one row.

A decision, an error, a finding, a constraint, a pending question, a tool result, a user
instruction, an artifact, a piece of context: each is stored once, in full, in `entries`,
with tags, the step it belongs to, the steps it is relevant to, links to where it came
from (actions, messages, conversation turns, other entries) and, for an error, its
fingerprint. The layer-1 state and the brief show views of the newest ones. Entries are
never edited away: a newer entry supersedes an older one, an error or question is
resolved, and both texts stay. Queries are exact (`query_relevant`, filters
by task, type, step, tags and time); `search` is bm25 full text over any user text.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from datetime import datetime
from typing import Any, NamedTuple

from clew.archive.fingerprint import Fingerprint, fingerprint, telling_line
from clew.core import checks
from clew.core import query as search
from clew.core.ids import new_id
from clew.core.location import DEFAULT_SPACE
from clew.errors import ValidationError
from clew.kernel import Service, reacts
from clew.models import (
    OUTLINE_KINDS,
    SEARCH_KINDS,
    Action,
    ActionStatus,
    Entry,
    EntryFilter,
    EntryStatus,
    EntryType,
    Fix,
    RecordHit,
    SearchHit,
    SourceKind,
)
from clew.privacy.redaction import Found
from clew.tasks import rules as tasks

# Entries that can be resolved, and what their resolution is called.
RESOLVABLE = {EntryType.ERROR: "resolution", EntryType.QUESTION: "answer"}
RELEVANT_LIMIT = 20
LINK_ACTIONS = 50  # the newest commands an error the agent records may be about
SEARCH_LIMIT = 10
MAX_EVIDENCE = 10  # passing runs kept as evidence on one open error (a loop adds no more)
_SOURCE_TABLES = {
    SourceKind.ACTION: "action",
    SourceKind.MESSAGE: "message",
    SourceKind.ENTRY: "entry",
    SourceKind.TURN: "turn",
}


class ErrorHistory(NamedTuple):
    """Everything known about an error's fingerprint: "have I seen this, what worked?".
    `failed_commands` also holds failed commands whose output contains the error's text."""

    fingerprint: Fingerprint
    errors: tuple[Entry, ...]  # error entries with this fingerprint, newest first
    failed_commands: tuple[Action, ...]  # failed commands with this fingerprint
    fixes: tuple[Fix, ...]  # fixes tried, newest first
    # Errors and failed commands like it whose text differs (another fingerprint): found
    # by meaning with the vectors extra, else by the words they share; best first.
    similar: tuple[RecordHit, ...] = ()

    @property
    def seen(self) -> bool:
        return bool(self.errors or self.failed_commands)

    @property
    def worked(self) -> tuple[Fix, ...]:
        """The fixes that worked, newest first."""
        return tuple(f for f in self.fixes if f.worked)


class Archive(Service):
    """The archive: typed entries, their resolutions and fixes, exact queries and the
    entries' full-text search (a service of Memory)."""

    def add_entry(
        self,
        type: str | EntryType,
        summary: str,
        *,
        task_id: str | None = None,
        detail: str | None = None,
        step: int | str | None = None,
        tags: Sequence[str] = (),
        relevance_to: Sequence[int | str] = (),
        resolution: str | None = None,
        supersedes: str | None = None,
        sources: Sequence[tuple[str, str] | str] = (),
        command: str | None = None,
        keep_open: bool = False,
    ) -> Entry:
        """Store one typed entry, in full.

        `step` and `relevance_to` name plan steps of the task (numbers or step ids);
        `supersedes` an older entry (which becomes `superseded`); `sources` what it came
        from, as ("action", id) pairs or "action:ID" texts (action, message, turn, entry);
        `command`, for an error, the command that failed (part of its fingerprint).
        clew never resolves an error recorded here: a later run of its command that passes
        is added to it as evidence, and the agent resolves it. `keep_open` says so outright
        (an error the agent leaves open, such as a flaky test that passed once).
        """
        kind = checks.choice(type, EntryType, "entry type")
        # Secrets out before the fingerprint is taken, as a failed command's is.
        found: Found = {}
        text = self._redacted(
            checks.text(summary, "summary", max_chars=checks.MAX_TEXT_CHARS), "entry.summary", found
        )
        _check_options(kind, resolution, command, keep_open)
        entry: dict[str, Any] = {
            "id": new_id(),
            "type": kind.value,
            "origin": "agent",
            "summary": text,
            "detail": self._redacted(
                None if detail is None else checks.text(detail, "detail"), "entry.detail", found
            ),
            "tags": list(checks.strings(tags, "tags")),
        }
        if keep_open:
            entry["keep_open"] = True
        fix = None
        failed = None
        if kind is EntryType.ERROR:
            failed = self._redacted(checks.optional_text(command, "command"), "command", {})
            entry["fingerprint"] = fingerprint(entry["detail"] or text, failed).key
        if resolution is not None:
            said = self._redacted(
                checks.text(resolution, "resolution", max_chars=checks.MAX_TEXT_CHARS),
                "entry.resolution",
                found,
            )
            entry.update(resolution=said, status=EntryStatus.RESOLVED.value)
            if "fingerprint" in entry:
                fix = _fix(entry["fingerprint"], entry["id"], said, worked=True)
        if task_id is None and (step is not None or relevance_to):
            raise ValidationError(
                "a step belongs to a task: give task_id with step or relevance_to"
            )
        links = [_source(item) for item in checks.sequence(sources, "sources")]
        tid = None if task_id is None else self._task_id(task_id)
        old = None if supersedes is None else self._resolve("entry", supersedes)
        with self._write() as at:
            if tid is not None and (step is not None or relevance_to):
                self._place_in_plan(tid, entry, step, relevance_to)
            previous = None if old is None else self._supersede(old, entry)
            entry["sources"] = [self._check_source(kind, ident) for kind, ident in links]
            if tid is not None and kind is EntryType.DECISION and "status" not in entry:
                self._link_decision(tid, entry, previous)
            elif tid is not None and kind is EntryType.ERROR:
                self._link_error(tid, entry, failed)
            data: dict[str, Any] = {"entry": entry}
            if fix is not None:
                data["fix"] = fix
            self._emit("entry.added", tid, data, at, found)
        return self._store.get_entry(entry["id"])

    def _place_in_plan(
        self,
        tid: str,
        entry: dict[str, Any],
        step: int | str | None,
        relevance_to: Sequence[int | str],
    ) -> None:
        """Inside a write: the plan steps of the task an entry is of and relevant to."""
        plan = self._store.get_plan(tid)
        if step is not None:
            entry["subtask_id"] = tasks.find_step(plan, step, tid).id
        entry["relevance_to"] = list(
            dict.fromkeys(tasks.find_step(plan, r, tid).id for r in relevance_to)
        )

    def _supersede(self, old: str, entry: dict[str, Any]) -> Entry:
        """Inside a write: the active entry `old` that `entry` supersedes (ValidationError
        for one no longer active, saying how to find the active ones)."""
        previous = self._store.get_entry(old)
        if previous.status is not EntryStatus.ACTIVE:
            kind_ = previous.type.value
            raise ValidationError(
                f"entry {old} is already {previous.status.value}; supersede the active"
                f" {kind_} instead (list them: clew entries --task"
                f" {previous.task_id or 'TASK'} --type {kind_} --status active)"
            )
        entry["supersedes"] = old
        return previous

    def _link_decision(self, tid: str, entry: dict[str, Any], previous: Entry | None) -> None:
        """Inside a write: a decision replaces the task's active decisions on its topic (the
        newest of them becomes `supersedes` unless one was named; the others, such as a copy
        extracted from a progress message, `also_supersedes`). Journaled in the event."""
        from clew.archive import linking  # lazily: not on the hook path

        active = self._store.list_entries(
            EntryFilter(tid, (EntryType.DECISION,), (EntryStatus.ACTIVE,))
        )
        tags = entry["tags"]
        same = [
            e
            for e in active
            if (previous is None or e.id != previous.id)
            and (
                linking.same_topic(entry["summary"], e.summary, tags, e.tags)
                or (
                    previous is not None
                    and linking.same_topic(previous.summary, e.summary, previous.tags, e.tags)
                )
            )
        ]
        if not same:
            return
        if previous is None:
            entry["supersedes"], same = same[0].id, same[1:]
            entry["topic_inferred"] = True
        if same:
            entry["also_supersedes"] = [e.id for e in same]

    def _link_error(self, tid: str, entry: dict[str, Any], command: str | None) -> None:
        """Inside a write: an error the agent records is linked to the failed command it
        is about (given as a source, or the newest failed command of the task with the
        same command shape, fingerprint, or telling line), and an active error already
        linked to that command (the copy extraction made) is superseded by it, so one
        failure is one open error."""
        from clew.archive import linking  # lazily: not on the hook path

        linked = {i for k, i in entry["sources"] if k == SourceKind.ACTION.value}
        if not linked and entry.get("status") != EntryStatus.RESOLVED.value:
            text = _folded("\n".join(filter(None, (entry["summary"], entry["detail"]))))
            for action in self._store.list_actions(tid, limit=LINK_ACTIONS):
                if action.status not in (ActionStatus.FAILED, ActionStatus.TIMEOUT):
                    continue
                line = _folded(telling_line(_output(action.stderr) or _output(action.stdout)))
                if (
                    linking.same_command(command, action.command, self.settings.volatile)
                    or (action.fingerprint and action.fingerprint == entry.get("fingerprint"))
                    or (len(line) >= 8 and line in text)
                ):
                    entry["sources"].append([SourceKind.ACTION.value, action.id])
                    linked.add(action.id)
                    break
        if not linked or "supersedes" in entry:
            return
        for other in self._store.list_entries(
            EntryFilter(tid, (EntryType.ERROR,), (EntryStatus.ACTIVE,))
        ):
            if any(k == SourceKind.ACTION.value and i in linked for k, i in other.sources):
                entry["supersedes"] = other.id
                return

    def _same_failure(self, entry: Entry) -> list[Entry]:
        """The task's other active errors that are the same failure as `entry`: linked to
        the same command, or to a run of the same command (numbers aside) that failed with
        the same fingerprint; errors linked to no command, by their fingerprint alone."""
        from clew.archive import linking  # lazily: not on the hook path

        if entry.task_id is None:
            return []

        def runs(error: Entry) -> list[tuple[str | None, str | None, str]]:
            linked = [i for k, i in error.sources if k == SourceKind.ACTION.value]
            if not linked:
                return [(None, error.fingerprint, "")]
            return [(a.command, a.fingerprint, a.id) for a in map(self._store.get_action, linked)]

        def alike(
            a: tuple[str | None, str | None, str], b: tuple[str | None, str | None, str]
        ) -> bool:
            if a[2] and a[2] == b[2]:
                return True  # the same command run
            if a[1] is None or a[1] != b[1]:
                return False
            if a[0] is None or b[0] is None:
                return True
            return linking.same_command(a[0], b[0], self.settings.volatile)

        mine = runs(entry)
        found = []
        for other in self._store.list_entries(
            EntryFilter(entry.task_id, (EntryType.ERROR,), (EntryStatus.ACTIVE,))
        ):
            if other.id != entry.id and any(alike(a, b) for a in mine for b in runs(other)):
                found.append(other)
        return found

    def _check_source(self, kind: SourceKind, ident: str) -> list[str]:
        return [kind.value, self._resolve(_SOURCE_TABLES[kind], ident)]

    def add_decision(
        self,
        task_id: str,
        text: str,
        *,
        detail: str | None = None,
        step: int | str | None = None,
        tags: Sequence[str] = (),
    ) -> Entry:
        """Record a decision the agent made (shown in the state's decisions log)."""
        return self.add_entry(
            EntryType.DECISION, text, task_id=task_id, detail=detail, step=step, tags=tags
        )

    def add_error(
        self,
        task_id: str,
        text: str,
        *,
        resolution: str | None = None,
        detail: str | None = None,
        step: int | str | None = None,
        tags: Sequence[str] = (),
        command: str | None = None,
        keep_open: bool = False,
    ) -> Entry:
        """Record an error met (with the command that failed, if any: both make its
        fingerprint); with a resolution it is recorded as already resolved. It stays open
        until you resolve it: a later run of its command that passes is shown beside it
        as evidence. `keep_open` marks it as one you are leaving open on purpose."""
        return self.add_entry(
            EntryType.ERROR,
            text,
            task_id=task_id,
            detail=detail,
            step=step,
            tags=tags,
            resolution=resolution,
            command=command,
            keep_open=keep_open,
        )

    def add_finding(
        self,
        task_id: str,
        text: str,
        *,
        detail: str | None = None,
        step: int | str | None = None,
        tags: Sequence[str] = (),
    ) -> Entry:
        """Record something learned (a `discovery` entry, shown as a key finding)."""
        return self.add_entry(
            EntryType.DISCOVERY, text, task_id=task_id, detail=detail, step=step, tags=tags
        )

    def add_constraint(
        self,
        task_id: str,
        text: str,
        *,
        detail: str | None = None,
        step: int | str | None = None,
        tags: Sequence[str] = (),
    ) -> Entry:
        """Record a constraint the work must respect (all of it, or one step)."""
        return self.add_entry(
            EntryType.CONSTRAINT, text, task_id=task_id, detail=detail, step=step, tags=tags
        )

    def add_question(
        self,
        task_id: str,
        text: str,
        *,
        detail: str | None = None,
        step: int | str | None = None,
        tags: Sequence[str] = (),
    ) -> Entry:
        """Record a question that needs an answer; `resolve` it with the answer."""
        return self.add_entry(
            EntryType.QUESTION, text, task_id=task_id, detail=detail, step=step, tags=tags
        )

    def resolve(self, entry_id: str, resolution: str, *, task_id: str | None = None) -> Entry:
        """Resolve an open error (with its resolution) or question (with its answer); for an
        error, the resolution is also recorded as a fix that worked for its fingerprint."""
        eid = self._resolve("entry", entry_id)
        text = checks.text(resolution, "resolution", max_chars=checks.MAX_TEXT_CHARS)
        tid = None if task_id is None else self._task_id(task_id)
        with self._write() as at:
            entry = self._open_resolvable(eid, tid)
            data: dict[str, Any] = {"entry_id": eid, "resolution": text}
            if entry.fingerprint:
                data["fix"] = _fix(entry.fingerprint, eid, text, worked=True)
            self._emit("entry.resolved", entry.task_id, data, at)
            if entry.type is EntryType.ERROR:
                # One failure, one open error: its other records close with it, those that
                # are clew's own copies or records of the very same failed run; another
                # error the agent recorded (another partition failing alike, say) is the
                # agent's to resolve.
                mine = {i for k, i in entry.sources if k == SourceKind.ACTION.value}
                for other in self._same_failure(entry):
                    runs = {i for k, i in other.sources if k == SourceKind.ACTION.value}
                    if not (other.resolvable_by_clew or (mine & runs and not other.keep_open)):
                        continue
                    said = {"entry_id": other.id, "resolution": text, "with": eid}
                    self._emit("entry.resolved", other.task_id, said, at)
        return self._store.get_entry(eid)

    def keep_open(self, entry_id: str, *, keep: bool = True, task_id: str | None = None) -> Entry:
        """Keep an open error open until you resolve it: clew never resolves it, however
        its command's later runs go (they are added as evidence). `keep=False` lets clew
        resolve its own extracted copy of a failed command again."""
        eid = self._resolve("entry", entry_id)
        if not isinstance(keep, bool):
            raise ValidationError("keep must be true or false")
        tid = None if task_id is None else self._task_id(task_id)
        with self._write() as at:
            entry = self._open_resolvable(eid, tid)
            if entry.type is not EntryType.ERROR:
                raise ValidationError(
                    f"entry {eid} is a {entry.type.value}; only an error is kept open"
                )
            if entry.keep_open is not keep:
                data = {"entry_id": eid, "keep_open": keep}
                self._emit("entry.kept_open", entry.task_id, data, at)
        return self._store.get_entry(eid)

    @reacts("command.succeeded")
    def _resolve_earlier_failures(self, tid: str, command: str, action_id: str, at: str) -> None:
        """Inside a write: a command that succeeded resolves clew's own extracted copies of
        earlier failed runs of the same command (the same program and arguments, numbers
        included), journaled as such; an active error the agent recorded or keeps open for
        such a run gets the passing run as evidence instead, and stays open for the agent
        to resolve. An error of another command (a neighbouring shard, another partition,
        version or test) is left alone."""
        from clew.archive import linking  # lazily: not on the hook path

        entries = self._store.list_entries(
            EntryFilter(tid, (EntryType.ERROR,), (EntryStatus.ACTIVE,))
        )
        failed_by = {
            entry.id: [
                i for k, i in entry.sources if k == SourceKind.ACTION.value and i != action_id
            ]
            for entry in entries
        }
        # The failed runs' commands in one read, not an action (with its output) per source;
        # only runs that failed (a model's entry is linked to every command of its step).
        commands = self._store.action_commands(
            sorted({i for ids in failed_by.values() for i in ids}), failed=True
        )
        volatile = self.settings.volatile
        for entry in entries:
            failed = [commands[i] for i in failed_by[entry.id] if i in commands]
            if not any(linking.same_command(c, command, volatile) for c in failed):
                continue
            if entry.resolvable_by_clew:
                said = f"a later run of `{command}` succeeded (action {action_id})"
                data = {"entry_id": entry.id, "resolution": said, "by_action": action_id}
                self._emit("entry.resolved", tid, data, at)
            elif len(entry.evidence) < MAX_EVIDENCE:
                data = {"entry_id": entry.id, "action_id": action_id}
                self._emit("entry.evidence_added", tid, data, at)

    def _open_resolvable(self, eid: str, tid: str | None) -> Entry:
        entry = self._store.get_entry(eid)
        if tid is not None and entry.task_id != tid:
            raise ValidationError(f"entry {eid} does not belong to task {tid}")
        if entry.type not in RESOLVABLE:
            raise ValidationError(
                f"entry {eid} is a {entry.type.value}; only errors and questions are resolved"
            )
        if entry.status is not EntryStatus.ACTIVE:
            said = f" ({RESOLVABLE[entry.type]}: {entry.resolution})" if entry.resolution else ""
            raise ValidationError(f"{entry.type.value} {eid} is already {entry.status.value}{said}")
        return entry

    def record_fix(self, error_id: str, description: str, *, worked: bool) -> Fix:
        """Record a fix tried for an error; one that worked also resolves the error."""
        eid = self._resolve("entry", error_id)
        text = checks.text(description, "fix", max_chars=checks.MAX_TEXT_CHARS)
        if not isinstance(worked, bool):
            raise ValidationError("worked must be true or false")
        with self._write() as at:
            entry = self._store.get_entry(eid)
            if entry.type is not EntryType.ERROR or not entry.fingerprint:
                raise ValidationError(f"entry {eid} is a {entry.type.value}, not an error")
            fix = _fix(entry.fingerprint, eid, text, worked=worked)
            if worked and entry.status is EntryStatus.ACTIVE:
                data = {"entry_id": eid, "resolution": text, "fix": fix}
                self._emit("entry.resolved", entry.task_id, data, at)
            else:
                self._emit("fix.recorded", entry.task_id, {"fix": fix}, at)
        return next(f for f in self._store.fixes_for(entry.fingerprint) if f.id == fix["id"])

    def _fingerprinted(self, error: str, command: str | None) -> ErrorHistory:
        """Look an error up by its fingerprint: where it was seen, and which fixes worked
        (`seen_before` adds the similar errors search finds: retrieval.py)."""
        text = checks.text(error, "error", max_chars=checks.MAX_TEXT_CHARS)
        # Fingerprints are taken of redacted text: the query's secrets go the same way.
        text = self._redacted(text, "error", {})
        print_ = fingerprint(text, self._redacted(checks.optional_text(command, "command"), "", {}))
        with self._store.transaction():
            commands = self._store.actions_with_fingerprint(print_.key)
            known = {a.id for a in commands}
            commands += [a for a in self._failed_containing(text) if a.id not in known]
            commands.sort(key=lambda a: a.created_at, reverse=True)
            errors = self._store.entries_with_fingerprint(print_.key)
            keys = [print_.key]
            if print_.command is None:
                # An error asked about without its command (the line pasted from a log) is
                # the error recorded under any command whose telling line is this one: a
                # fingerprint holds the command, so the keys are those of the failed runs
                # and the error entries that say it.
                keys += [a.fingerprint for a in commands if a.fingerprint and _says(a, print_)]
                saying = self._errors_saying(telling_line(text), print_)
                keys += [e.fingerprint for e in saying if e.fingerprint]
                keys = list(dict.fromkeys(keys))
                for key in keys[1:]:
                    errors += self._store.entries_with_fingerprint(key)
            fixes = [f for key in keys for f in self._store.fixes_for(key)]
            return ErrorHistory(
                print_,
                tuple(sorted({e.id: e for e in errors}.values(), key=_newest, reverse=True)),
                tuple(commands),
                tuple(sorted({f.id: f for f in fixes}.values(), key=_newest, reverse=True)),
            )

    def _errors_saying(self, line: str, print_: Fingerprint) -> list[Entry]:
        """Error entries whose telling line is `line` (the fingerprint's kind and masked
        message), whatever command each was recorded with."""
        # Its plain words find the candidates (what masking hides varies between sightings).
        words = [w for w in _WORDS.findall(line) if len(w) > 2][:8]
        try:
            query = search.parse(" ".join(words))
        except ValidationError:
            return []  # no words to look for (only punctuation)
        hits = self._store.search_entries(query, EntryFilter(types=(EntryType.ERROR,)), limit=50)
        return [
            h.entry
            for h in hits
            if _same_error(fingerprint(h.entry.detail or h.entry.summary), print_)
        ]

    def _failed_containing(self, text: str) -> list[Action]:
        """Failed commands whose command line or output holds `text` (or its telling line)
        verbatim, ignoring case and runs of white space."""
        needles = {_folded(text), _folded(telling_line(text) or "")} - {""}
        found: list[Action] = []
        for needle in needles:
            try:
                query = search.parse(needle)
            except ValidationError:
                continue  # no words to look for (only punctuation)
            for action in self._store.failed_actions_matching(query):
                said = (action.command, _output(action.stdout), _output(action.stderr))
                if any(needle in _folded(part or "") for part in said):
                    found.append(action)
        return list({a.id: a for a in found}.values())

    def get_entry(self, entry_id: str) -> Entry:
        """Return one entry, in full."""
        return self._store.get_entry(self._resolve("entry", entry_id))

    def _filter(
        self,
        task_id: str | None,
        type: str | EntryType | Sequence[str | EntryType] | None,
        status: str | EntryStatus | None,
        step: int | str | None,
        tags: Sequence[str],
        since: str | datetime | None,
        until: str | datetime | None,
    ) -> EntryFilter:
        wanted: Sequence[str | EntryType]
        wanted = () if type is None else (type,) if isinstance(type, str) else type
        tid = None if task_id is None else self._task_id(task_id)
        subtask = None
        if step is not None:
            if tid is None:
                raise ValidationError("a step belongs to a task: give task_id with step")
            subtask = tasks.find_step(self._store.get_plan(tid), step, tid).id
        now = self._clock()
        return EntryFilter(
            task_id=tid,
            types=tuple(checks.choice(t, EntryType, "entry type") for t in wanted),
            statuses=()
            if status is None
            else (checks.choice(status, EntryStatus, "entry status"),),
            subtask_id=subtask,
            tags=checks.strings(tags, "tags"),
            since=None if since is None else checks.moment(since, "since", now),
            until=None if until is None else checks.moment(until, "until", now),
        )

    def list_entries(
        self,
        task_id: str | None = None,
        *,
        type: str | EntryType | Sequence[str | EntryType] | None = None,
        status: str | EntryStatus | None = None,
        step: int | str | None = None,
        tags: Sequence[str] = (),
        since: str | datetime | None = None,
        until: str | datetime | None = None,
        limit: int | None = None,
    ) -> list[Entry]:
        """Return entries, newest first, filtered exactly: by task, type, status, step, tags
        (all of them) and time (`since`/`until`: a datetime, an ISO date, or "2h", "7d")."""
        if limit is not None:
            checks.count(limit, "limit")
        filters = self._filter(task_id, type, status, step, tags, since, until)
        return self._store.list_entries(filters, limit=limit)

    def query_relevant(
        self, task_id: str, step: int | str, *, limit: int = RELEVANT_LIMIT
    ) -> list[Entry]:
        """What matters for a step: the entries (its own, those relevant to
        it, and the task's decisions, errors and user instructions), newest first."""
        tid = self._task_id(task_id)
        subtask = tasks.find_step(self._store.get_plan(tid), step, tid).id
        return self._store.relevant_entries(tid, subtask, limit=checks.count(limit, "limit"))

    def search(
        self,
        query: str,
        *,
        task_id: str | None = None,
        type: str | EntryType | Sequence[str | EntryType] | None = None,
        status: str | EntryStatus | None = None,
        tags: Sequence[str] = (),
        since: str | datetime | None = None,
        until: str | datetime | None = None,
        limit: int = SEARCH_LIMIT,
    ) -> list[SearchHit]:
        """Full-text search (bm25, stemmed) over summaries, details, tags and resolutions.

        Any text is a valid query. All words must match; if none does, any word may.
        Exact occurrences of identifiers (ERR_CONN_RESET, src/auth.py, v1.2.3) rank first.
        """
        wanted = checks.count(limit, "limit")
        filters = self._filter(task_id, type, status, None, tags, since, until)
        parsed = search.parse(query)
        fetch = min(max(3 * wanted, 30), 200)
        hits = self._store.search_entries(parsed, filters, limit=fetch)
        if not hits and len(parsed.terms) > 1:
            parsed = search.parse(query, any_terms=True)
            hits = self._store.search_entries(parsed, filters, limit=fetch)
        if parsed.identifiers:
            hits.sort(key=lambda h: not search.contains_all(_text_of(h.entry), parsed.identifiers))
        return hits[:wanted]

    def _open_command(self, hit: RecordHit) -> str:
        """The clew command line that shows a hit in full."""
        if hit.kind == "entry":
            line = f"clew entries {hit.id}"
        elif hit.kind == "message":
            line = f"clew task message {hit.id}"
        elif hit.kind == "action":
            option = {"stderr": " --stderr", "command": " --info"}.get(hit.field, "")
            line = f"clew task output {hit.id}{option}"
        elif hit.kind == "decision":
            line = f"clew trace show {hit.task_id}"
        elif hit.kind in OUTLINE_KINDS:
            from clew.archive.outline import open_command

            line = open_command(hit)
        else:
            line = f"clew recall {hit.session_id} --around {hit.turn}"
        if self.space == DEFAULT_SPACE:
            return line
        return f"{line} --space {shlex.quote(self.space)}"


def entry_hit(entry: Entry, snippet: str = "", score: float = 0.0) -> RecordHit:
    """An entry as a hit of search over everything."""
    state = "" if entry.status is EntryStatus.ACTIVE else f", {entry.status.value}"
    return RecordHit(
        "entry",
        entry.id,
        entry.task_id,
        None,
        None,
        entry.created_at,
        entry.type.value + state,
        entry.summary,
        snippet,
        score,
        "entry",
        step_id=entry.subtask_id,
    )


def action_hit(action: Action, snippet: str = "", score: float = 0.0) -> RecordHit:
    """A command (an action) as a hit of search over everything."""
    code = "" if action.exit_code is None else f" exit {action.exit_code}"
    title = (action.command or action.summary).strip().split("\n", 1)[0]
    return RecordHit(
        "action",
        action.id,
        action.task_id,
        None,
        None,
        action.created_at,
        f"{action.status.value}{code}",
        title,
        snippet,
        score,
        "command",
        step_id=action.plan_item_id,
    )


def _kinds(kinds: str | Sequence[str] | None) -> tuple[str, ...]:
    """The kinds asked for: None is all; a text may list several, comma-separated."""
    return checks.kinds(kinds, SEARCH_KINDS)


MIN_TELLING = 16  # characters of a masked message that name an error inside a longer line
_WORDS = re.compile(r"\b[A-Za-z]+\b")


def _same_error(one: Fingerprint, other: Fingerprint) -> bool:
    """Whether two fingerprints name one error, whatever command each ran: one kind, and
    one message within the other (a log's line keeps what a tool put before it: pytest's
    "E   ", a timestamp, a logger's name)."""
    if one.kind != other.kind and "error" not in (one.kind, other.kind):  # "error": no kind
        return False
    short, long = sorted((one.message, other.message), key=len)
    return short == long or (len(short) >= MIN_TELLING and short in long)


def _says(action: Action, print_: Fingerprint) -> bool:
    """Whether a failed command's output tells the fingerprint's error (as its own
    fingerprint reads it: the tail of its stderr, else of its stdout)."""
    for stream in (action.stderr, action.stdout):
        text = _output(stream)[-4096:]
        if text.strip():
            return _same_error(fingerprint(text), print_)
    return False


def _newest(record: Entry | Fix) -> tuple[str, str]:
    """Sort key of records by time (reversed: newest first)."""
    return (record.created_at, record.id)


def _folded(text: str) -> str:
    """Text for a verbatim comparison that ignores case and runs of white space."""
    return " ".join(text.split()).casefold()


def _output(value: str | bytes | None) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value or ""


def _text_of(entry: Entry) -> str:
    return "\n".join(filter(None, (entry.summary, entry.detail, entry.resolution, *entry.tags)))


def _check_options(
    kind: EntryType, resolution: str | None, command: str | None, keep_open: bool
) -> None:
    """Refuse the options an entry of this kind does not take: a resolution (errors and
    questions only), a command (errors only), keep_open (open errors only)."""
    if resolution is not None and kind not in RESOLVABLE:
        raise ValidationError(f"only errors and questions have a resolution, not a {kind}")
    if command is not None and kind is not EntryType.ERROR:
        raise ValidationError("command goes with an error entry")
    if not isinstance(keep_open, bool):
        raise ValidationError("keep_open must be true or false")
    if keep_open and (kind is not EntryType.ERROR or resolution is not None):
        raise ValidationError("keep_open goes with an open error (one without a resolution)")


def _fix(key: str, entry_id: str, description: str, *, worked: bool) -> dict[str, Any]:
    return {
        "id": new_id(),
        "fingerprint": key,
        "entry_id": entry_id,
        "description": description,
        "worked": worked,
    }


def _source(item: object) -> tuple[SourceKind, str]:
    """A source given as ("action", id) or "action:ID"."""
    if isinstance(item, str):
        kind, sep, ident = item.partition(":")
        if not sep:
            raise ValidationError(f"source {item!r} is not KIND:ID (action, message, turn, entry)")
    elif isinstance(item, list | tuple) and len(item) == 2:
        kind, ident = item
    else:
        raise ValidationError(f"source {item!r} is not a (kind, id) pair or KIND:ID text")
    return checks.choice(kind, SourceKind, "source kind"), checks.name(ident, "source id")
