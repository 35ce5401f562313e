"""The store conformance suite: the contract's rules, written once, run on every backend.

`StoreConformance` holds tests of a `Store` (store/contract/) driven through the store's
own public methods alone: no facade, no SQL. A backend runs them by subclassing it and
saying how a store is made (eventsourcing's recorder tests work this way):

    class TestMyStore(StoreConformance):
        def make_store(self, space: str) -> Store:
            return MyStore(self.location, space)   # a fresh location per test

Each test method makes its stores through `make_store` (a test instance is one test, so a
location chosen in `setup_method`, or an autouse fixture, is fresh per test); stores made in
one test with different spaces share one storage unless the subclass sets
`shares_storage = False`, in which case the tests that need two spaces in one storage skip.
The tests are plain methods with plain asserts: pytest collects a `Test*` subclass as it is,
and nothing here imports pytest (a skip raises unittest.SkipTest, which pytest and unittest
both understand).

The events written are built here in the current shape of their types, so the suite checks
the journal core and the projection of what it writes (tasks and plans, messages, entries,
actions, sessions and turns, waits), and each subject's reads: a `get_*` of an unknown id
raises NotFoundError, a `find_*`/`latest_*` returns None, a listing of nothing is empty,
newest first is newest first, a limit keeps the first rows. A protocol added to the contract
adds its own test methods here.
"""

from __future__ import annotations

import contextlib
import unittest
from collections.abc import Callable, Iterator
from typing import Any

from clew.core.credentials import ApiKey, RequestLine
from clew.core.ids import new_id
from clew.errors import AmbiguousIdError, NotFoundError, ValidationError
from clew.models import ChainHead, EntryFilter, Event, NewVector, TaskStatus
from clew.store import contract
from clew.store.contract import Store

# Every protocol of the contract (the bases of `Store`): a new one is checked without a change.
PROTOCOLS: tuple[type, ...] = tuple(
    base for base in contract.Store.__bases__ if base.__name__ != "Protocol"
)


def protocol_methods(protocol: type) -> list[str]:
    """The public methods a protocol of the contract names."""
    return [n for n, v in vars(protocol).items() if callable(v) and not n.startswith("_")]


def at(minute: int) -> str:
    """A store timestamp (UTC, microseconds, a Z) `minute` minutes into the suite's day."""
    return f"2026-11-22T09:{minute:02d}:00.000000Z"


def task_data(task_id: str, name: str, steps: tuple[str, ...]) -> dict[str, Any]:
    """The data of a `task.created` event (its current shape) with a plan of `steps`."""
    return {
        "task": {"id": task_id, "name": name, "goal": None, "workspace": None, "metadata": {}},
        "plan": [{"id": new_id(), "title": title} for title in steps],
        "record": {"plan_source": "agent"} if steps else {},
    }


class raises:  # lower case: it reads as pytest.raises reads
    """Assert the block raises `kind` (pytest.raises without pytest)."""

    def __init__(self, kind: type[BaseException] | tuple[type[BaseException], ...]) -> None:
        self.kind = kind

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, *rest: object) -> bool:
        if kind is None:
            raise AssertionError(f"did not raise {self.kind}")
        return issubclass(kind, self.kind)  # anything else goes on up


class StoreConformance:
    """The contract's tests, written once; subclass it per backend (see the module text)."""

    # Whether stores made in one test with different spaces share one storage (a file, a
    # database); a `:memory:` store is its own storage.
    shares_storage = True
    # Whether the backend has database roles (RoleAdmin); without, each method refuses.
    has_roles = False

    def make_store(self, space: str) -> Store:
        """A store on `space`, in this test's storage (fresh for each test)."""
        raise NotImplementedError("a backend's subclass says how its store is made")

    # -- helpers --------------------------------------------------------------------------

    @contextlib.contextmanager
    def opened(self, space: str | None = None) -> Iterator[Store]:
        """A store made by the hook on `space` (a fresh one by default), closed after."""
        store = self.make_store(space or f"conf-{new_id()}")
        try:
            yield store
        finally:
            store.close()

    def create_task(self, store: Store, name: str, steps: tuple[str, ...], minute: int) -> str:
        """Journal a `task.created` with a plan of `steps`; return the task's id."""
        task_id = new_id()
        self.journal(store, "task.created", task_id, task_data(task_id, name, steps), minute)
        return task_id

    def add_message(self, store: Store, task_id: str, content: str, minute: int) -> str:
        """Journal a `message.added` to a task; return the message's id."""
        message_id = new_id()
        message = {"id": message_id, "role": "agent", "type": "text", "content": content}
        self.journal(store, "message.added", task_id, {"message": message}, minute)
        return message_id

    @staticmethod
    def journal(store: Store, type: str, task_id: str, data: dict[str, Any], minute: int) -> None:
        """Journal one event of `type` for a task in its own write transaction."""
        with store.transaction(write=True):
            store.append(
                type=type,
                task_id=task_id,
                correlation_id=new_id(),
                data=data,
                created_at=at(minute),
            )

    def add_entry(self, store: Store, task_id: str, summary: str, minute: int) -> str:
        """Journal an `entry.added` (a decision) for a task; return the entry's id."""
        entry_id = new_id()
        entry: dict[str, Any] = {
            "id": entry_id,
            "type": "decision",
            "origin": "agent",
            "summary": summary,
            "detail": None,
            "tags": [],
            "sources": [],
        }
        self.journal(store, "entry.added", task_id, {"entry": entry}, minute)
        return entry_id

    def add_action(self, store: Store, task_id: str, command: str, minute: int) -> str:
        """Journal an `action.recorded` (a command that failed) for a task; its id."""
        action_id = new_id()
        action = {
            "id": action_id,
            "type": "cli",
            "summary": command,
            "status": "failed",
            "input": None,
            "output": None,
            "command": command,
            "cwd": None,
            "exit_code": 1,
            "duration_seconds": None,
            "stdout": None,
            "stderr": "E boom",
            "tool": None,
            "cpu_seconds": None,
            "memory_mb": None,
            "stdout_errors": None,
            "stderr_errors": None,
            "fingerprint": None,
        }
        self.journal(store, "action.recorded", task_id, {"action": action}, minute)
        return action_id

    def start_session(self, store: Store, key: str, texts: tuple[str, ...], minute: int) -> str:
        """Journal a `session.started` and a `turn.appended` per text (user, then assistant
        by turns); return the session's id."""
        session_id = new_id()
        session = {
            "id": session_id,
            "key": key,
            "workspace": None,
            "model": None,
            "system_prompt": None,
            "title": key,
            "task_id": None,
        }
        with store.transaction(write=True):
            store.append(
                type="session.started",
                task_id=None,
                correlation_id=new_id(),
                data={"session": session},
                created_at=at(minute),
            )
            for number, text in enumerate(texts, 1):
                role = "user" if number % 2 else "assistant"
                turn = {
                    "id": new_id(),
                    "number": number,
                    "message": {"role": role, "content": text},
                    "token_count": 5,
                    "tool_name": None,
                    "call_turn": None,
                    "role": role,
                    "tool_calls": None,
                    "tool_call_id": None,
                    "text_from": "content",
                    "state": {},
                }
                store.append(
                    type="turn.appended",
                    task_id=None,
                    correlation_id=new_id(),
                    data={"session_id": session_id, "turn": turn},
                    created_at=at(minute + number),
                )
        return session_id

    def add_wait(self, store: Store, task_id: str, target: str, minute: int) -> str:
        """Journal a `wait.added` (a file to appear) for a task; return the wait's id."""
        wait_id = new_id()
        wait: dict[str, Any] = {
            "id": wait_id,
            "kind": "file",
            "target": target,
            "criteria": {},
            "description": None,
            "cwd": None,
            "poll_seconds": 30.0,
            "timeout_seconds": 3600.0,
            "run_timeout": 30.0,
            "deadline": at(59),
            "seal": "0" * 64,
        }
        self.journal(store, "wait.added", task_id, {"wait": wait}, minute)
        return wait_id

    def skip_without_shared_storage(self) -> None:
        if not self.shares_storage:
            raise unittest.SkipTest("each store of this backend is its own storage")

    # -- the whole contract ---------------------------------------------------------------

    def test_the_store_provides_the_whole_contract(self) -> None:
        with self.opened("conf-a") as store:
            for protocol in PROTOCOLS:
                for name in protocol_methods(protocol):
                    assert callable(getattr(store, name, None)), f"{protocol.__name__}.{name}"
            checkpoints = store.graph_checkpoints  # the CheckpointStore, made on first use
            for name in protocol_methods(contract.CheckpointStore):
                assert callable(getattr(checkpoints, name, None)), f"CheckpointStore.{name}"
            assert store.space == "conf-a"
            assert isinstance(store.path, str) and store.read_only is False

    # -- Journal --------------------------------------------------------------------------

    def test_a_new_store_is_empty_and_verifies(self) -> None:
        with self.opened() as store:
            assert store.count_events() == 0
            assert store.list_events() == []
            assert store.journal_head() == 0
            assert store.list_tasks() == []
            assert store.chain_heads()[store.space] == ChainHead(0, None, None)
            assert store.verify().differences == ()

    def test_a_write_needs_a_write_transaction(self) -> None:
        with self.opened() as store:
            with raises(RuntimeError):
                store.append(
                    type="task.created",
                    task_id=None,
                    correlation_id="c",
                    data={},
                    created_at=at(0),
                )
            with raises(RuntimeError), store.transaction(), store.transaction(write=True):
                pass
            assert store.count_events() == 0

    def test_appended_events_have_increasing_seqs_and_chained_hashes(self) -> None:
        with self.opened() as store:
            first = self.create_task(store, "first", ("a",), 1)
            second = self.create_task(store, "second", (), 2)
            self.add_message(store, first, "hello", 3)
            events = store.list_events()
            assert [e.type for e in events] == ["task.created", "task.created", "message.added"]
            assert [e.seq for e in events] == sorted({e.seq for e in events})
            assert all(e.hash and e.space == store.space for e in events)
            assert len({e.hash for e in events}) == 3
            assert [e.task_id for e in store.list_events(task_id=first)] == [first, first]
            assert [e.task_id for e in store.list_events(after=events[0].seq)] == [second, first]
            assert store.list_events(limit=1) == events[:1]
            assert store.list_events(limit=2, newest=True) == events[1:]
            assert [e.type for e in store.list_events(types=("message.added",))] == [
                "message.added"
            ]
            assert store.count_events() == 3
            assert store.journal_head() == events[-1].seq
            head = store.chain_heads()[store.space]
            assert head == ChainHead(3, events[-1].id, events[-1].hash)
            assert store.event_ids([events[0].id, "nothere000"]) == {events[0].id}

    def test_an_exception_rolls_back_the_events_and_their_rows(self) -> None:
        with self.opened() as store:
            kept = self.create_task(store, "kept", (), 1)
            with raises(KeyError), store.transaction(write=True):
                store.append(
                    type="task.created",
                    task_id="rolledback",
                    correlation_id="c",
                    data=task_data("rolledback", "gone", ()),
                    created_at=at(2),
                )
                raise KeyError("after the append")
            assert [t.id for t in store.list_tasks()] == [kept]
            assert store.count_events() == 1
            with raises(NotFoundError):
                store.get_task("rolledback")
            assert store.verify().differences == ()

    def test_transactions_nest_and_say_when_one_is_open(self) -> None:
        with self.opened() as store:
            seen = [store.in_transaction]
            with store.transaction(write=True):
                seen.append(store.in_transaction)
                with store.transaction(write=True), store.transaction():
                    seen.append(store.in_transaction)
                self.create_task(store, "inside", (), 1)  # its own block joins this one
            seen.append(store.in_transaction)
            assert seen == [False, True, True, False]
            assert store.count_events() == 1

    def test_resolve_finds_a_record_by_id_or_prefix(self) -> None:
        with self.opened() as store:
            task_id = self.create_task(store, "one", (), 1)
            assert store.resolve("task", task_id) == task_id
            assert store.resolve("task", task_id[:6]) == task_id
            with raises(NotFoundError):
                store.resolve("task", "zzzzzzzzzz" if task_id != "zzzzzzzzzz" else "yyyyyyyyyy")
            others = [self.create_task(store, f"t{n}", (), 2) for n in range(40)]
            ids = [task_id, *others]
            # 41 ids over 32 first letters: two share their first one.
            shared = next(i[0] for i in ids if sum(j[0] == i[0] for j in ids) > 1)
            with raises(AmbiguousIdError):
                store.resolve("task", shared)

    def test_adopt_keeps_an_events_identity_and_chains_it_here(self) -> None:
        task_id = new_id()
        recorded = [  # as another store journaled them: its seqs, its space, its hashes
            Event(
                seq=7,
                id=new_id(),
                space="elsewhere",
                task_id=task_id,
                correlation_id="c1",
                type="task.created",
                created_at=at(1),
                hash="0" * 64,
                data=task_data(task_id, "moved", ("a", "b")),
            ),
            Event(
                seq=9,
                id=new_id(),
                space="elsewhere",
                task_id=task_id,
                correlation_id="c2",
                type="message.added",
                created_at=at(2),
                hash="1" * 64,
                data={
                    "message": {"id": new_id(), "role": "agent", "type": "text", "content": "along"}
                },
            ),
        ]
        with self.opened() as store:
            self.create_task(store, "already here", (), 0)
            with store.transaction(write=True):
                adopted = [store.adopt(e) for e in recorded]
            for mine, theirs in zip(adopted, recorded, strict=True):
                assert (mine.id, mine.type, mine.task_id, mine.correlation_id) == (
                    theirs.id,
                    theirs.type,
                    theirs.task_id,
                    theirs.correlation_id,
                )
                assert (mine.data, mine.created_at, mine.space) == (
                    theirs.data,
                    theirs.created_at,
                    store.space,
                )
                assert mine.hash != theirs.hash
            assert adopted[0].seq > store.list_events()[0].seq
            assert adopted[1].seq > adopted[0].seq
            assert [s.title for s in store.get_task(task_id).plan] == ["a", "b"]
            assert store.event_ids([e.id for e in recorded]) == {e.id for e in recorded}
            assert store.verify().differences == ()

    def test_links_and_raw_rows_are_the_events_as_stored(self) -> None:
        with self.opened() as store:
            task_id = self.create_task(store, "linked", (), 1)
            message_id = self.add_message(store, task_id, "said", 2)
            events = store.list_events()
            links = store.stored_links()
            assert [link.id for link in links] == [e.id for e in events]
            assert [link.id for link in store.stored_links(after=events[0].seq)] == [events[1].id]
            assert len(store.stored_links(limit=1)) == 1
            assert events[1].id in {link.id for link in store.record_links("message", message_id)}
            with raises(ValueError):
                store.record_links("nonsense", message_id)
            assert len(store.raw_events([task_id])) == 2
            assert store.raw_events(["nosuchtask"]) == []

    def test_verify_replays_the_journal_to_the_same_rows(self) -> None:
        with self.opened() as store:
            task_id = self.create_task(store, "checked", ("one", "two"), 1)
            self.add_message(store, task_id, "a message", 2)
            report = store.verify()
            assert report.differences == () and report.events == 2
            assert report.rows.get("tasks") == 1

    # -- scope ----------------------------------------------------------------------------

    def test_a_space_reads_only_its_own_rows(self) -> None:
        self.skip_without_shared_storage()
        with self.opened("conf-mine") as mine, self.opened("conf-theirs") as theirs:
            task_id = self.create_task(mine, "private", ("step",), 1)
            self.add_message(mine, task_id, "mine alone", 2)
            assert theirs.list_tasks() == [] and theirs.count_events() == 0
            assert theirs.list_events() == [] and theirs.journal_head() == 0
            assert theirs.event_ids([e.id for e in mine.list_events()]) == set()
            with raises(NotFoundError):
                theirs.get_task(task_id)
            with raises(NotFoundError):
                theirs.resolve("task", task_id)
            assert theirs.list_messages(task_id) == []
            assert mine.chain_heads(all_spaces=True)[mine.space].events == 2

    # -- TaskReads ------------------------------------------------------------------------

    def test_a_task_reads_back_with_its_plan(self) -> None:
        with self.opened() as store:
            task_id = self.create_task(store, "build", ("design", "write"), 1)
            task = store.get_task(task_id)
            assert (task.name, task.status) == ("build", TaskStatus.ACTIVE)
            plan = store.get_plan(task_id)
            assert [s.title for s in plan] == ["design", "write"] == [s.title for s in task.plan]
            assert store.get_step(plan[1].id).title == "write"
            assert store.get_task_status(task_id) == TaskStatus.ACTIVE
            assert store.get_task_steps(task_id) == (TaskStatus.ACTIVE, (plan[0].id, plan[1].id))
            assert store.get_plan("nosuchtask") == ()
            assert store.last_event_at(task_id, "task.created") == at(1)
            assert store.last_event_at(task_id, "message.added") is None

    def test_tasks_list_most_recently_updated_first(self) -> None:
        with self.opened() as store:
            older = self.create_task(store, "older", (), 1)
            newer = self.create_task(store, "newer", (), 2)
            assert [t.id for t in store.list_tasks()] == [newer, older]
            self.add_message(store, older, "touches it", 3)
            assert [t.id for t in store.list_tasks()] == [older, newer]
            assert [t.id for t in store.list_tasks((TaskStatus.ACTIVE,))] == [older, newer]
            assert store.list_tasks((TaskStatus.COMPLETED,)) == []

    def test_messages_list_newest_first_and_a_limit_keeps_the_first(self) -> None:
        with self.opened() as store:
            task_id = self.create_task(store, "talk", (), 1)
            ids = [self.add_message(store, task_id, f"m{n}", 2 + n) for n in range(3)]
            assert [m.id for m in store.list_messages(task_id)] == ids[::-1]
            assert [m.id for m in store.list_messages(task_id, limit=2)] == ids[:0:-1]
            assert store.count_messages(task_id) == 3
            assert store.get_message(ids[0]).content == "m0"
            assert store.last_message_at(task_id, "text") == at(4)

    def test_chain_hashes_and_a_tasks_head_follow_the_journal(self) -> None:
        with self.opened() as store:
            task_id = self.create_task(store, "chained", (), 1)
            self.create_task(store, "another", (), 2)
            events = store.list_events()
            hashes = store.chain_hashes({store.space: [1, 2, 99]})
            assert hashes == {(store.space, 1): events[0].hash, (store.space, 2): events[1].hash}
            assert store.task_head(task_id) == events[0].seq
            with raises(RuntimeError), store.bulk_turns():
                pass  # only inside a write transaction

    # -- ArchiveReads, LedgerReads --------------------------------------------------------

    def test_entries_read_back_newest_first(self) -> None:
        with self.opened() as store:
            task_id = self.create_task(store, "decide", (), 1)
            first = self.add_entry(store, task_id, "use sqlite", 2)
            second = self.add_entry(store, task_id, "use wal", 3)
            assert store.get_entry(first).summary == "use sqlite"
            listed = store.list_entries(EntryFilter(task_id=task_id))
            assert [e.id for e in listed] == [second, first]
            assert [e.id for e in store.list_entries(EntryFilter(), limit=1)] == [second]
            assert sum(store.count_entries(task_id).values()) == 2
            assert store.replacements([first, second]) == {}

    def test_actions_read_back_newest_first(self) -> None:
        with self.opened() as store:
            task_id = self.create_task(store, "run", (), 1)
            first = self.add_action(store, task_id, "pytest -q", 2)
            second = self.add_action(store, task_id, "make", 3)
            action = store.get_action(first)
            assert (action.command, action.exit_code) == ("pytest -q", 1)
            assert [a.id for a in store.list_actions(task_id)] == [second, first]
            assert [a.id for a in store.list_actions(task_id, limit=1)] == [second]
            assert [a.id for a in store.recent_actions(task_id, limit=5)] == [second, first]
            assert store.verify().differences == ()

    # -- ConversationReads, LifecycleReads -----------------------------------------------

    def test_a_session_reads_back_with_its_turns_in_number_order(self) -> None:
        with self.opened() as store:
            session_id = self.start_session(store, "chat-1", ("hello there", "hi", "bye"), 1)
            assert store.get_session(session_id).key == "chat-1"
            found = store.find_session(session_id)
            assert found is not None and found.id == session_id
            by_key = store.session_by_key("chat-1")
            assert by_key is not None and by_key.id == session_id
            turns = store.get_turns(session_id)
            assert [t.number for t in turns] == [1, 2, 3]
            assert [t.number for t in store.get_turns(session_id, first=2, last=3)] == [2, 3]
            assert [t.number for t in store.get_turns(session_id, newest=1)] == [3]
            assert [t.number for t in store.turns_numbered(session_id, [3, 1, 9])] == [1, 3]
            assert store.count_turns(session_id) == 3
            assert store.count_turns(session_id, before=3) == 2
            assert store.last_user_turn(session_id, at_most=2) == 1
            assert [t.id for t in store.turns_by_id([turns[1].id])] == [turns[1].id]
            assert store.get_turns("nosuchid00") == [] and store.count_turns("nosuchid00") == 0
            assert [s.id for s in store.list_sessions()] == [session_id]
            assert store.verify().differences == ()

    def test_sessions_list_most_recently_active_first(self) -> None:
        with self.opened() as store:
            older = self.start_session(store, "older", ("one",), 1)
            newer = self.start_session(store, "newer", ("two",), 5)
            assert [s.id for s in store.list_sessions()] == [newer, older]
            assert [s.id for s in store.list_sessions(limit=1)] == [newer]
            assert [s.id for s in store.list_sessions(limit=1, offset=1)] == [older]

    def test_waits_read_back_newest_first(self) -> None:
        with self.opened() as store:
            task_id = self.create_task(store, "waiting", (), 1)
            first = self.add_wait(store, task_id, "/tmp/a", 2)
            second = self.add_wait(store, task_id, "/tmp/b", 3)
            assert store.get_wait(first).target == "/tmp/a"
            assert [w.id for w in store.list_waits(task_id=task_id)] == [second, first]
            assert [w.id for w in store.list_waits(limit=1)] == [second]
            assert store.waiting_tasks() == {task_id}
            assert store.has_watching()
            assert store.open_waits(task_id) == 2
            assert store.verify().differences == ()

    # -- the rules every read keeps -------------------------------------------------------

    def test_a_get_of_an_unknown_id_raises_not_found(self) -> None:
        with self.opened() as store:
            self.create_task(store, "not this one", ("nor this",), 1)
            gets: list[Callable[[str], Any]] = [
                store.get_task,
                store.get_task_status,
                store.get_task_steps,
                store.get_step,
                store.get_message,
                store.get_entry,
                store.get_action,
                store.get_trace_decision,
                store.get_pattern,
                store.get_guardrail,
                store.get_session,
                store.get_job,
                store.get_wait,
            ]
            for get in gets:
                with raises(NotFoundError):
                    get("nosuchid00")

    def test_a_find_of_nothing_returns_none(self) -> None:
        with self.opened() as store:
            task_id = self.create_task(store, "quiet", (), 1)
            assert store.find_session("nosuchid00") is None
            assert store.session_by_key("no such key") is None
            assert store.session_to_append("nosuchid00") is None
            assert store.latest_summary(task_id) is None
            assert store.last_message_at(task_id, "text") is None
            assert store.find_key("nosuchprefix") is None
            assert store.schedule("never ran") is None

    def test_a_listing_of_nothing_is_empty(self) -> None:
        with self.opened() as store:
            task_id = self.create_task(store, "bare", (), 1)
            assert store.list_messages(task_id) == [] and store.count_messages(task_id) == 0
            assert store.list_entries(EntryFilter()) == []
            assert store.list_entries(EntryFilter(task_id=task_id), limit=5) == []
            assert store.list_actions(task_id) == []
            assert store.recent_actions(task_id, limit=5) == []
            assert store.list_patterns() == [] and store.list_guardrails() == []
            assert store.list_sessions() == []
            assert store.list_jobs() == []
            assert store.list_waits() == [] and store.waiting_tasks() == set()
            assert store.archived_task_ids() == []
            assert store.list_redactions() == []
            assert store.imports_between(0, 10**9) == []
            assert store.vector_count("any model") == 0

    # -- outside the journal: vectors, keys, schedules, the import log, roles -------------

    def test_vectors_are_written_in_a_write_transaction_and_read_in_seq_order(self) -> None:
        with self.opened() as store:
            task_id = self.create_task(store, "embedded", (), 1)
            message_id = self.add_message(store, task_id, "a text to embed", 2)
            vector = NewVector(
                kind="message",
                ref_id=message_id,
                content_hash="h1",
                source_at=at(2),
                task_id=task_id,
                step_id=None,
                session_id=None,
                created_at=at(3),
                dim=2,
                vector=b"\x00<\x00<",  # float16 1.0, 1.0
            )
            with raises(RuntimeError):
                store.put_vectors("m", [vector])
            assert [p.ref_id for p in store.pending_vectors("message", "m", limit=10)] == [
                message_id
            ]
            with store.transaction(write=True):
                store.put_vectors("m", [vector])
            assert store.vector_count("m") == 1 and store.vector_count("m", after=10**9) == 0
            stored = store.vectors_after("m", 0)
            assert [(v.ref_id, v.vector) for v in stored] == [(message_id, vector.vector)]
            assert store.newest_vector("m") == stored[0].seq
            assert store.pending_vectors("message", "m", limit=10) == []
            with store.transaction(write=True):
                store.put_vectors("m", [vector._replace(content_hash="h2")])
            again = store.vectors_after("m", 0)
            assert len(again) == 1 and again[0].seq > stored[0].seq
            with store.transaction(write=True):
                assert store.drop_vectors("m") == 1
            assert store.vector_count("m") == 0 and store.vectors_after("m", 0) == []

    def test_keys_and_requests_are_kept_for_the_server(self) -> None:
        with self.opened() as store:
            prefix = f"k{new_id()}"
            key = ApiKey(prefix, store.space, "write", "ci", at(1), None, None)
            with store.transaction(write=True):
                store.put_key(key, "digest")
            assert store.find_key(prefix) == (key, "digest")
            assert prefix in [k.prefix for k in store.list_keys(store.space)]
            assert store.any_key()
            with store.transaction(write=True):
                store.touch_key(prefix, at(2))
                store.revoke_key(prefix, at(3))
            found = store.find_key(prefix)
            assert found is not None and found[0].last_used_at == at(2)
            assert found[0].revoked_at == at(3)
            line = RequestLine(store.space, prefix, "GET", "/tasks", 200, at(4), 1.5, new_id())
            with store.transaction(write=True):
                store.log_requests([line, line._replace(created_at=at(5), id=new_id())])
                store.log_requests([line])  # the same id again: kept once
            logged = store.list_requests(store.space)
            assert [r.created_at for r in logged] == [at(5), at(4)]
            with store.transaction(write=True):
                assert store.prune_requests(at(5)) >= 1
            assert [r.created_at for r in store.list_requests(store.space)] == [at(5)]

    def test_a_schedule_counts_its_runs(self) -> None:
        with self.opened() as store:
            with store.transaction(write=True):
                store.mark_schedule("nightly", at(1))
                store.mark_schedule("nightly", at(2), "second")
            assert store.schedule("nightly") == (at(2), 2, "second")

    def test_the_import_log_records_who_brought_which_events(self) -> None:
        with self.opened() as store:
            with store.transaction(write=True):
                self.create_task(store, "imported", (), 1)
                head = store.journal_head()
                store.record_import(head, head, 1, "python", None, at(2))
            (record,) = store.imports_between(head, head)
            assert (record.first_seq, record.last_seq, record.door) == (head, head, "python")
            assert store.imports_between(head + 1, head + 5) == []

    def test_roles_are_granted_only_where_the_backend_has_them(self) -> None:
        with self.opened() as store:
            if self.has_roles:
                assert isinstance(store.database_roles(), list)
                return
            with raises(ValidationError):
                store.grant_role("someone", "reader", apply=False)
            with raises(ValidationError):
                store.database_roles()


__all__ = ["PROTOCOLS", "StoreConformance", "at", "protocol_methods", "raises", "task_data"]
