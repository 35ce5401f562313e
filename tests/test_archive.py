"""Layer 2's archive: typed entries with links, exact queries, safe full-text search, and
error fingerprints with the fixes that worked."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import clew
from clew.archive.fingerprint import fingerprint, mask
from clew.core import query as search
from clew.models import EntryStatus, EntryType
from clew.store.sqlite.search import fts5_match
from tests.conftest import FakeClock

SEVEN = ["decision", "error", "tool_result", "user_instruction", "discovery", "artifact", "context"]


def journal(mem: clew.Memory) -> list[tuple[int, str]]:
    return [(e.seq, e.type) for e in mem.journal()]


def test_the_seven_types_with_links_and_supersedes(mem: clew.Memory) -> None:
    task = mem.create_task("Migrate", ["backup", "db", "db-migrate"])
    action = mem.record_action(task.id, command="pg_dump prod > b.sql", exit_code=0)
    message = mem.add_message(task.id, "the user wants CHECK constraints")
    made = {
        kind: mem.add_entry(
            kind,
            f"a {kind}",
            task_id=task.id,
            detail=f"full {kind} text\nverbatim  spacing",
            step=1,
            tags=["migration", kind],
            relevance_to=[2, 3],
            sources=[("action", action.id[:6]), f"message:{message.id}"],
        )
        for kind in SEVEN
    }
    entry = mem.get_entry(made["tool_result"].id)
    assert entry.detail == "full tool_result text\nverbatim  spacing"
    assert entry.sources == (("action", action.id), ("message", message.id))
    plan = mem.get_task(task.id).plan
    assert entry.relevance_to == (plan[1].id, plan[2].id) and entry.subtask_id == plan[0].id
    newer = mem.add_entry(
        "decision", "use CHECK constraints", task_id=task.id, supersedes=made["decision"].id
    )
    assert mem.get_entry(made["decision"].id).status is EntryStatus.SUPERSEDED
    assert newer.supersedes == made["decision"].id and newer.status is EntryStatus.ACTIVE
    with pytest.raises(clew.ValidationError, match="already superseded"):
        mem.add_entry("decision", "again", task_id=task.id, supersedes=made["decision"].id)
    turn = mem.append_turn(mem.start_session().id, role="user", content="we use TypeORM")
    standalone = mem.add_entry("context", "the repo uses TypeORM", sources=[f"turn:{turn.id[:6]}"])
    assert standalone.task_id is None and standalone.sources == (("turn", turn.id),)
    with pytest.raises(clew.NotFoundError, match="no turn matches"):
        mem.add_entry("context", "x", sources=["turn:t123"])
    assert mem.verify().ok


def test_relevance_and_tags_match_exactly(mem: clew.Memory) -> None:
    task = mem.create_task("T", ["db", "db-migrate", "verify"])
    for_db = mem.add_entry("discovery", "about db", task_id=task.id, tags=["db"], relevance_to=[1])
    for_migrate = mem.add_entry(
        "discovery", "about db-migrate", task_id=task.id, tags=["db-migrate"], relevance_to=[2]
    )
    assert [e.id for e in mem.list_entries(task.id, tags=["db"])] == [for_db.id]
    assert [e.id for e in mem.list_entries(task.id, tags=["db-migrate"])] == [for_migrate.id]
    assert mem.list_entries(task.id, tags=["d"]) == []
    assert [e.id for e in mem.query_relevant(task.id, 1)] == [for_db.id]
    assert [e.id for e in mem.query_relevant(task.id, 2)] == [for_migrate.id]


def test_query_relevant_follows_seed_000(mem: clew.Memory, clock: FakeClock) -> None:
    task = mem.create_task("T", ["schema", "data", "verify"])
    made = []
    for kind, step, relevance in (
        ("discovery", 1, ()),  # own step
        ("tool_result", 2, (1,)),  # relevant to step 1
        ("decision", 3, ()),  # decisions always matter
        ("error", None, ()),  # errors always matter
        ("user_instruction", 2, ()),  # so do user instructions
        ("artifact", 2, ()),  # another step's artifact: not relevant
        ("context", 3, ()),  # another step's context: not relevant
    ):
        clock.advance(1)
        made.append(mem.add_entry(kind, kind, task_id=task.id, step=step, relevance_to=relevance))
    found = mem.query_relevant(task.id, 1)
    assert [e.type.value for e in found] == [
        "user_instruction",
        "error",
        "decision",
        "tool_result",
        "discovery",
    ]
    assert len(mem.query_relevant(task.id, 1, limit=2)) == 2


def test_general_query_by_type_step_tags_and_time(mem: clew.Memory, clock: FakeClock) -> None:
    task = mem.create_task("T", ["a", "b"])
    old = mem.add_entry("artifact", "old", task_id=task.id, step=1, tags=["x", "y"])
    clock.advance(3 * 3600)
    new = mem.add_entry("artifact", "new", task_id=task.id, step=2, tags=["x"])
    other = mem.add_entry("context", "elsewhere", tags=["x"])
    assert [e.id for e in mem.list_entries(tags=["x"])] == [other.id, new.id, old.id]
    assert [e.id for e in mem.list_entries(task.id, tags=["x", "y"])] == [old.id]
    assert [e.id for e in mem.list_entries(task.id, step=2)] == [new.id]
    assert [e.id for e in mem.list_entries(since="2h")] == [other.id, new.id]
    assert [e.id for e in mem.list_entries(until=clock() - timedelta(hours=1))] == [old.id]
    assert [e.id for e in mem.list_entries(since="2026-11-22", type="context")] == [other.id]
    with pytest.raises(clew.ValidationError, match="is not a date"):
        mem.list_entries(since="last tuesday")


def test_a_rare_tag_and_a_common_one_list_the_same_entries_by_either_plan(
    mem: clew.Memory, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A tag carried by at most RARE_TAG entries is read through its index; a commoner one
    # by walking the entries. Made small here so that both plans run, each must give what
    # filtering every entry by hand gives, newest first, limits and other filters applied.
    from clew.store.portable import archive as portable_archive

    monkeypatch.setattr(portable_archive, "RARE_TAG", 4)
    task = mem.create_task("T", ["a"])
    for n in range(12):
        tags = ["common"] + (["rare"] if n in (2, 9, 10) else []) + (["mid"] * (n % 2 == 0))
        kind = "context" if n % 3 else "decision"
        mem.add_entry(kind, f"entry {n}", task_id=task.id if n % 4 else None, tags=tags)
        if n % 5 != 4:  # 4 and 5, 9 and 10 written in the same second: order breaks the tie
            clock.advance(60)
    everything = mem.list_entries()
    for tags in (
        [],
        ["rare"],
        ["mid"],
        ["common"],
        ["rare", "common"],
        ["mid", "rare"],
        ["common", "mid"],
        ["absent"],
        ["rare", "absent"],
    ):
        for kind in (None, "context"):
            for task_id in (None, task.id):
                for limit in (None, 1, 2):
                    want = [
                        e.id
                        for e in everything
                        if set(tags) <= set(e.tags)
                        and kind in (None, e.type.value)
                        and task_id in (None, e.task_id)
                    ][:limit]
                    got = mem.list_entries(task_id, type=kind, tags=tags, limit=limit)
                    assert [e.id for e in got] == want, (tags, kind, task_id, limit)


# -- search ---------------------------------------------------------------------------------


@pytest.fixture
def corpus(mem: clew.Memory, clock: FakeClock) -> dict[str, str]:
    task = mem.create_task("Debug", ["repro", "fix"])
    texts = {
        "reset": ("Socket errors", "the client raised ERR_CONN_RESET during the upload"),
        "auth": ("Login bug located", "src/auth.py compares hashes with == instead of hmac"),
        "version": ("Pinned the SDK", "version v1.2.3 of the SDK fixes the retry storm"),
        "running": ("Tests are running slowly", "the suite runs for twelve minutes"),
        "decoy": ("err conn reset in prose", "someone wrote err, then conn, then reset"),
        "title": ("Deploy pipeline", "nothing about deploys in the detail"),
        "detail": ("Unrelated", "the deploy pipeline is mentioned only here"),
    }
    ids = {}
    for key, (summary, detail) in texts.items():
        clock.advance(1)
        ids[key] = mem.add_entry(
            "discovery", summary, task_id=task.id, detail=detail, tags=[key]
        ).id
    return ids


@pytest.mark.search
def test_search_ranks_with_bm25_stems_and_snippets(
    mem: clew.Memory, corpus: dict[str, str]
) -> None:
    hits = mem.search("deploy pipeline")
    assert [h.entry.id for h in hits][:2] == [
        corpus["title"],
        corpus["detail"],
    ]  # summary weighs more
    assert "[" in hits[0].snippet and "]" in hits[0].snippet
    assert [h.entry.id for h in mem.search("run")] == [corpus["running"]]  # stemming
    assert mem.search("deploy", tags=["title"])[0].entry.id == corpus["title"]
    assert mem.search("deploy", type="decision") == []


@pytest.mark.search
@pytest.mark.parametrize(
    ("query", "key"),
    [("ERR_CONN_RESET", "reset"), ("src/auth.py", "auth"), ("v1.2.3", "version")],
)
def test_identifiers_are_found_exactly_first(
    mem: clew.Memory, corpus: dict[str, str], query: str, key: str
) -> None:
    assert mem.search(query)[0].entry.id == corpus[key]


@pytest.mark.search
@pytest.mark.parametrize(
    "query",
    [
        '"unbalanced',
        "(",
        ")(",
        "a AND",
        "OR b",
        "NOT",
        "*",
        "-",
        "--",
        ":",
        "summary:deploy",
        "NEAR(deploy pipeline)",
        "deploy*",
        "-deploy pipeline",
        "'single",
        '""',
        "a\x00b",
        "\\",
        "{}",
        "^deploy",
        "deploy +pipeline",
        "🙂",
        "%_",
        "AND OR NOT",
    ],
)
def test_any_user_text_is_safe(mem: clew.Memory, corpus: dict[str, str], query: str) -> None:
    if any(c.isalnum() for c in query.replace("AND", "").replace("OR", "").replace("NOT", "")):
        mem.search(query)
    else:
        with pytest.raises(clew.ValidationError, match="no words to look for"):
            mem.search(query)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60))
def test_any_text_parses_to_a_query_fts5_accepts(text: str) -> None:
    import sqlite3

    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(a, tokenize='porter unicode61')")
    conn.execute("INSERT INTO t VALUES ('some text to find')")
    for any_terms in (False, True):
        try:
            query = search.parse(text, any_terms=any_terms)
        except clew.ValidationError:
            return
        conn.execute("SELECT * FROM t WHERE t MATCH ?", (fts5_match(query),)).fetchall()


def test_a_query_is_structured_and_compiles_to_fts5_phrases() -> None:
    query = search.parse('ERR_CONN_RESET "connection reset" auth* -flaky OR src/auth.py')
    assert query.include == (
        search.Term("ERR_CONN_RESET", False),
        search.Term("connection reset", False),
        search.Term("auth", True),
        search.Term("src/auth.py", False),
    )
    assert query.exclude == (search.Term("flaky", False),)
    assert not query.any_terms
    assert query.identifiers == ("ERR_CONN_RESET", "src/auth.py")
    assert query.terms == ("ERR_CONN_RESET", "connection reset", "auth", "src/auth.py")
    assert fts5_match(query) == (
        '("ERR_CONN_RESET" AND "connection reset" AND "auth"* AND "src/auth.py") NOT "flaky"'
    )
    assert fts5_match(search.parse('say "hi""', any_terms=True)) == '"say" OR "hi"'


@pytest.mark.search
def test_when_no_entry_has_every_word_any_word_will_do(
    mem: clew.Memory, corpus: dict[str, str]
) -> None:
    assert mem.search("deploy zebra")[0].entry.id in (corpus["title"], corpus["detail"])
    assert mem.search("-deploy pipeline") == []  # an exclusion is never dropped


# -- fingerprints ----------------------------------------------------------------------------


def test_fingerprints_mask_what_varies() -> None:
    one = fingerprint(
        'Traceback:\n  File "/home/a/app.py", line 3\n'
        "ConnectionResetError: [Errno 104] reset at 2026-11-22T09:00:01Z",
        "python /home/a/app.py --port 8080",
    )
    two = fingerprint(
        'Traceback:\n  File "/srv/b/app.py", line 99\n'
        "ConnectionResetError: [Errno 110] reset at 2026-12-01T10:11:12Z",
        "python /srv/b/app.py --port 9000",
    )
    assert one == two and one.kind == "ConnectionResetError"
    assert fingerprint("ModuleNotFoundError: No module named 'foo'") != fingerprint(
        "ModuleNotFoundError: No module named 'bar'"
    )
    assert fingerprint("boom", "make test").key != fingerprint("boom", "make build").key
    assert mask(
        "id 3f9kx2ab7c uuid 123e4567-e89b-12d3-a456-426614174000 sha deadbeef12 in /tmp/x"
    ) == ("id <id> uuid <uuid> sha <hex> in <path>")


@pytest.mark.search
def test_have_i_seen_this_and_what_worked(mem: clew.Memory, clock: FakeClock) -> None:
    first = mem.create_task("Monday", ["install"])
    timeout = "ReadTimeoutError: HTTPSConnectionPool(host='pypi.org', port=443): Read timed out."
    error = mem.add_error(
        first.id,
        "pip failed",
        detail=f"{timeout} (read timeout=15)",
        command="pip install -r requirements.txt",
    )
    mem.record_fix(error.id, "retried as is", worked=False)
    clock.advance(60)
    mem.record_fix(error.id, "set PIP_DEFAULT_TIMEOUT=100", worked=True)
    assert mem.get_entry(error.id).status is EntryStatus.RESOLVED
    second = mem.create_task("Tuesday", ["install"])
    failed = mem.record_action(
        second.id,
        command="pip install -r requirements.txt",
        exit_code=1,
        stderr=f"Collecting x\n{timeout} (read timeout=30)\n",
    )
    assert failed.fingerprint == error.fingerprint
    found = mem.seen_before(
        f"{timeout} (read timeout=60)", command="pip install -r requirements.txt"
    )
    assert found.seen and found.fingerprint.key == error.fingerprint
    assert [e.id for e in found.errors] == [error.id]
    assert [a.id for a in found.failed_commands] == [failed.id]
    assert [(f.description, f.worked) for f in found.fixes] == [
        ("set PIP_DEFAULT_TIMEOUT=100", True),
        ("retried as is", False),
    ]
    assert [f.description for f in found.worked] == ["set PIP_DEFAULT_TIMEOUT=100"]
    assert not mem.seen_before("KeyError: 'name'").seen
    # Resolving an error records its resolution as a fix that worked.
    other = mem.add_error(second.id, "KeyError: 'name'")
    mem.resolve(other.id, "read it with .get()")
    assert [f.worked for f in mem.seen_before("KeyError: 'name'").fixes] == [True]
    assert mem.verify().ok


BAD = {
    "unknown type": (lambda m, t: m.add_entry("rumour", "x"), "not one of"),
    "source kind": (lambda m, t: m.add_entry("context", "x", sources=["file:a"]), "not one of"),
    "source shape": (lambda m, t: m.add_entry("context", "x", sources=["nokind"]), "KIND:ID"),
    "source missing": (
        lambda m, t: m.add_entry("context", "x", sources=["action:zzzz"]),
        "no action",
    ),
    "sources string": (
        lambda m, t: m.add_entry("context", "x", sources="action:a"),
        "must be a list",
    ),
    "supersedes missing": (lambda m, t: m.add_entry("context", "x", supersedes="zzzz"), "no entry"),
    "command on a decision": (lambda m, t: m.add_entry("decision", "x", command="ls"), "goes with"),
    "relevance without task": (
        lambda m, t: m.add_entry("context", "x", relevance_to=[1]),
        "belongs to a task",
    ),
    "relevance out of range": (
        lambda m, t: m.add_entry("context", "x", task_id=t, relevance_to=[9]),
        "out of range",
    ),
    "fix on a decision": (
        lambda m, t: m.record_fix(m.add_decision(t, "d").id, "x", worked=True),
        "not an error",
    ),
    "fix verdict": (
        lambda m, t: m.record_fix(m.add_error(t, "e").id, "x", worked="yes"),
        "true or false",
    ),
    "empty search": (lambda m, t: m.search("  "), "no words"),
    "search limit": (lambda m, t: m.search("x", limit=0), "at least 1"),
    "relevant limit": (lambda m, t: m.query_relevant(t, 1, limit=-1), "at least 1"),
}


@pytest.mark.parametrize("name", BAD)
def test_bad_input_stores_nothing_partial(mem: clew.Memory, name: str) -> None:
    task = mem.create_task("T", ["a", "b"])
    call, says = BAD[name]
    before = len(mem.journal())
    with pytest.raises(clew.ClewError, match=says):
        call(mem, task.id)
    # Calls that made a helper entry first (the decision, the error) add only that.
    assert len(mem.journal()) - before <= 1
    assert mem.verify().ok


def test_entry_types_and_statuses_are_the_documented_ones() -> None:
    assert {t.value for t in EntryType} >= set(SEVEN)
    assert {s.value for s in EntryStatus} == {"active", "superseded", "resolved"}
